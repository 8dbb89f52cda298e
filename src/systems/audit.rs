//! Empirical privacy audit as a claim system: one work unit is one audit
//! ([`crate::privacy::audit::run_audit`]) — many runs of the mechanism on two adjacent
//! data sets that differ in a worst-case canary, turned into a lower bound
//! `eps_LB = ln((TPR_lb - delta)/FPR_ub)` with Clopper–Pearson bounds (DESIGN 3).
//! A correctly calibrated mechanism never gives eps_LB > eps; a broken one should.
use super::*;
use crate::privacy::audit::{self, AuditConfig, AuditSystem, Calibration};

#[derive(Debug)]
pub struct PrivacyAudit;

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "epsilon",
        kind: ParamKind::Positive,
        optional: false,
        doc: "claimed epsilon",
    },
    ParamInfo {
        name: "delta",
        kind: ParamKind::Probability,
        optional: false,
        doc: "claimed delta",
    },
    ParamInfo {
        name: "trials",
        kind: ParamKind::IntAtLeast(2),
        optional: false,
        doc: "runs per data set",
    },
    ParamInfo {
        name: "noise_scale",
        kind: ParamKind::Positive,
        optional: true,
        doc: "multiplies the calibrated sigma (default 1)",
    },
    ParamInfo {
        name: "kappa",
        kind: ParamKind::Positive,
        optional: true,
        doc: "noise constant (default 2)",
    },
    ParamInfo {
        name: "ridge",
        kind: ParamKind::NonNegative,
        optional: true,
        doc: "second-layer ridge lambda (default 0.1)",
    },
    ParamInfo {
        name: "sampling_rate",
        kind: ParamKind::Positive,
        optional: true,
        doc: "white-box tp-topk: Poisson sampling rate q in (0, 1] (default 1)",
    },
    ParamInfo {
        name: "clip_scale",
        kind: ParamKind::Positive,
        optional: true,
        doc: "white-box tp-topk: the step clips at clip_scale C while its noise stays z C (2: the sensitivity off by 2; default 1)",
    },
    ParamInfo {
        name: "steps",
        kind: ParamKind::IntAtLeast(2),
        optional: true,
        doc: "steps T (default 20)",
    },
    ParamInfo {
        name: "n",
        kind: ParamKind::IntAtLeast(3),
        optional: true,
        doc: "records / samples n, the canary included (defaults: 50 for DP-GD, 20 for tp-topk)",
    },
    ParamInfo {
        name: "p",
        kind: ParamKind::IntAtLeast(2),
        optional: true,
        doc: "DP-GD: features p (default 200, p >= n); white-box tp-topk: input features F (default 4)",
    },
    ParamInfo {
        name: "d",
        kind: ParamKind::IntAtLeast(2),
        optional: true,
        doc: "DP-GD: input dimension d (default 10)",
    },
    ParamInfo {
        name: "eps_b",
        kind: ParamKind::Finite,
        optional: true,
        doc: "eps_B of sigma_W (first layer; default 0)",
    },
];

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "mechanism",
        values: &[
            "rf-dpgd",
            "feature-learning-second-layer",
            "feature-learning-first-layer",
            "tp-topk",
        ],
        doc: "the audited mechanism",
    },
    OptionInfo {
        name: "scores",
        values: &["privatized", "pre-noise"],
        doc: "tp-topk: what the warm-up scores read (DpSgdRecipe::scores): the privatised gradients (paper Sec. 3.2) or the clipped sum before the noise (the ranking leaks; negative control)",
    },
    OptionInfo {
        name: "calibration",
        values: &["exact", "prop-2-2"],
        doc: "sigma: exact Gaussian-DP calibration, or Prop. 2.2's formula",
    },
    OptionInfo {
        name: "clip_rule",
        values: &["divide", "multiply"],
        doc: "per-sample clipping rule of the DP-GD mechanisms",
    },
    OptionInfo {
        name: "white_box",
        values: &["no", "yes"],
        doc: "yes: audit the real training step white-box with every estimator (rf-dpgd: the direct engine, dpgd::run, its canary coordinate the sum of the per-step projections; tp-topk: privacy::audit::white_box, the real DP-SGD step with a Dirac gradient canary and the likelihood-ratio statistic)",
    },
    OptionInfo {
        name: "engine",
        values: &["direct", "fast"],
        doc: "with white_box: which engine simulates the runs (direct, the default: the real step; fast: the exact 1-D reduction of the canary coordinate, privacy::audit::canary module docs, which `dpclaims audit` runs by default where it applies)",
    },
    OptionInfo {
        name: "noise_law",
        values: &["paper", "half-std", "double-std"],
        doc: "DP-GD: the noise std as implemented (DpGdRecipe::noise_std): the paper's sqrt(eta) kappa C sigma/n, or half or twice it while the accounting and the canary test's exact mu assume the paper's (negative controls of mu_hat_z, one each way)",
    },
    OptionInfo {
        name: "accountant",
        values: &["rdp", "exact"],
        doc: "white-box tp-topk: z1, z2 from the paper's RDP accountant, or exact (GDP at q = 1, PLD at q < 1: the audit's null)",
    },
    OptionInfo {
        name: "normalise",
        values: &["yes", "no"],
        doc: "first layer: per-neuron normalisation after the gradient step (Algorithm 1, step 3)",
    },
];

const METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "epsilon_lower_bound",
        doc: "audited lower bound eps_LB on the mechanism's epsilon",
    },
    MetricInfo {
        name: "epsilon_achieved",
        doc: "exact GDP epsilon of the mechanism as run (NaN if unknown); tp-topk with pre-noise scores is not DP at all (no finite epsilon), and reports epsilon_accounted here: the audit shows the violation",
    },
    MetricInfo {
        name: "epsilon_accounted",
        doc: "exact GDP epsilon the standard analysis assigns to the configured noise, assuming the sensitivity bound holds (DP-GD: mu = sqrt(T)/z with sensitivity 2C/n; first layer: mu_W = 2 sqrt(p)/sigma_W from the normalised neurons; tp-topk: mu = sqrt(T1/z1^2 + T2/z2^2) at q = 1, the selection taken as post-processing)",
    },
    MetricInfo {
        name: "audit_excess",
        doc: "epsilon_lower_bound - epsilon_accounted (> 0: the audit certifies more than the accounting allows)",
    },
    MetricInfo {
        name: "epsilon_lb_clopper_pearson",
        doc: "the Clopper-Pearson estimator's lower bound alone (threshold on one half, rates on the other); with white_box, at its share of the joint confidence",
    },
    MetricInfo {
        name: "epsilon_lb_gdp",
        doc: "white_box: the Gaussian-DP estimator's lower bound alone (privacy::audit::estimators::gdp_estimate; NaN without white_box)",
    },
    MetricInfo {
        name: "mu_hat",
        doc: "white_box: the Gaussian-DP estimator's point estimate of the canary test's mu, (mean_canary - mean_replaced)/s (NaN without white_box)",
    },
    MetricInfo {
        name: "mu_hat_z",
        doc: "white_box: (mu_hat - mu)/se, the GDP estimator's point estimate against the canary test's exact mu (DP-GD with ridge 0 and the divide rule: the 1-D reduction's 2 T drift/(sqrt(T) noise std); first layer: the projected Gaussian mechanism's), in large-sample standard errors of a standardised mean difference, se^2 = 1/n1 + 1/n0 + mu^2/(2 (n1 + n0 - 2)); NaN where no exact mu is known",
    },
    MetricInfo {
        name: "gdp_fit_p_value",
        doc: "white_box: KS p-value of the standardised scores against N(0, 1), the check of the Gaussian law the GDP estimator assumes (NaN without white_box)",
    },
    MetricInfo {
        name: "overnoise_ratio",
        doc: "DP-GD systems: sigma as calibrated over the exact Gaussian-DP calibration's sigma (1 with calibration exact; Prop. 2.2's over-noising otherwise; NaN for the other mechanisms)",
    },
    MetricInfo {
        name: "ordinary_clipping_share",
        doc: "direct DP-GD engine: share of runs in which some ordinary (non-canary) sample was clipped at some step (NaN for the other engines)",
    },
    MetricInfo {
        name: "tpr",
        doc: "true positive rate on the held-out half",
    },
    MetricInfo {
        name: "fpr",
        doc: "false positive rate on the held-out half",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: "privacy_audit",
    model: "audited_mechanism",
    description:
        "membership audit with a worst-case canary: a lower bound on the mechanism's epsilon",
    needs_target: false,
    params: PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

impl System for PrivacyAudit {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }
    /// The accountant's epsilons of the configured noise; the audit's own numbers
    /// (`epsilon_lower_bound`, `audit_excess`, `tpr`, `fpr`) are sampled.
    fn exact_metrics(&self) -> &'static [&'static str] {
        &["epsilon_accounted", "epsilon_achieved"]
    }

    fn cost(&self, u: &CostInput) -> Cost {
        if u.option("white_box") == "yes" && u.option("mechanism") == "tp-topk" {
            return white_box_cost(
                u.var("trials", 2000.0),
                u.var("steps", 20.0),
                u.var("n", 20.0),
                u.var("p", 4.0),
            );
        }
        let system = u.option("mechanism").parse().unwrap_or(AuditSystem::RfDpgd);
        let defaults = AuditConfig::new(system, 1.0, 0.5);
        audit_cost(
            u.option("mechanism"),
            u.var("trials", defaults.trials as f64),
            u.var("d", defaults.d as f64),
            u.var("n", defaults.n as f64),
            u.var("p", defaults.p as f64),
            u.var("steps", defaults.steps as f64),
            u.var("ridge", defaults.ridge),
            u.option("clip_rule") != "multiply",
        )
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let system: AuditSystem = u
            .option("mechanism")
            .parse()
            .map_err(SystemError::Invalid)?;
        let white_box = u.option("white_box") == "yes";
        let dpgd = matches!(
            system,
            AuditSystem::RfDpgd | AuditSystem::FeatureLearningSecondLayer
        );
        if !matches!(u.option("noise_law"), "" | "paper") && !dpgd {
            return Err(SystemError::Invalid(format!(
                "option noise_law: {} changes DP-GD's noise; mechanism {} has none",
                u.option("noise_law"),
                system.name()
            )));
        }
        if u.option("engine") == "fast" && (!white_box || system == AuditSystem::TpTopk) {
            return Err(SystemError::Invalid(
                "option engine: fast only with white_box: yes and a DP-GD or first-layer mechanism (without white_box the audit takes the fast engine where it is exact, the direct one elsewhere; tp-topk has one engine)".into(),
            ));
        }
        if white_box && system == AuditSystem::TpTopk {
            return run_white_box_tp_topk(u);
        }
        let mut cfg = AuditConfig::new(system, u.var("epsilon")?, u.var("delta")?);
        cfg.trials = u.count("trials")?;
        cfg.d = u.var_or("d", cfg.d as f64) as usize;
        cfg.n = u.var_or("n", cfg.n as f64) as usize;
        cfg.p = u.var_or("p", cfg.p as f64) as usize;
        cfg.steps = u.var_or("steps", cfg.steps as f64) as usize;
        if white_box {
            cfg.engine = match u.option("engine") {
                "fast" => audit::AuditEngine::Fast,
                _ => audit::AuditEngine::Direct,
            };
        }
        cfg.noise_scale = u.var_or("noise_scale", 1.0);
        cfg.kappa = u.var_or("kappa", cfg.kappa);
        cfg.ridge = u.var_or("ridge", cfg.ridge);
        cfg.eps_b = u.var_or("eps_b", cfg.eps_b);
        cfg.calibration = u
            .option("calibration")
            .parse()
            .unwrap_or(Calibration::Exact);
        cfg.clip_rule =
            audit::parse_clip_rule(u.option("clip_rule")).map_err(SystemError::Invalid)?;
        cfg.normalise = u.option("normalise") != "no";
        // tp-topk: the score source is a configuration of the DP-SGD step, the door every
        // negative control uses (Recipe::dpsgd.scores).
        let mut recipe = *u.recipe;
        if u.option("scores") == "pre-noise" {
            recipe.dpsgd.scores = crate::train::dpsgd::ScoreSource::PreNoise;
        }
        match u.option("noise_law") {
            "half-std" => recipe.dpgd.noise_std = half_paper_noise_std,
            "double-std" => recipe.dpgd.noise_std = double_paper_noise_std,
            _ => {}
        }
        // The audit takes a u64 seed: the first 8 bytes of this unit's derived seed.
        let seed_bytes = u.seeds.child("audit").seed();
        let seed = u64::from_le_bytes(seed_bytes[..8].try_into().expect("8 bytes"));
        let (r, est) = if white_box {
            // Every estimator (Clopper-Pearson and Gaussian DP on the real step's
            // scores), the largest at the joint confidence.
            let (r, est) = audit::run_audit_estimates(&cfg, seed, &recipe)
                .map_err(|e| SystemError::Invalid(e.to_string()))?;
            (r, Some(est))
        } else {
            let r = audit::run_audit(&cfg, seed, &recipe)
                .map_err(|e| SystemError::Invalid(e.to_string()))?;
            (r, None)
        };
        let bound = est
            .as_ref()
            .map_or(r.epsilon_lower_bound, |e| e.epsilon_lower_bound);
        let mut out = BTreeMap::new();
        out.insert("epsilon_lower_bound".into(), bound);
        // Each estimator apart, and what the page says of the mechanism (its over-noising,
        // the share of runs that clipped an ordinary sample), measured in the run.
        out.insert("epsilon_lb_clopper_pearson".into(), r.epsilon_lower_bound);
        let gdp = est.as_ref().map(|e| &e.gdp);
        out.insert(
            "epsilon_lb_gdp".into(),
            gdp.map_or(f64::NAN, |g| g.epsilon_lower_bound),
        );
        out.insert("mu_hat".into(), gdp.map_or(f64::NAN, |g| g.mu_hat));
        out.insert(
            "mu_hat_z".into(),
            match (gdp, r.mu_canary) {
                (Some(g), Some(mu)) if mu.is_finite() => {
                    mu_hat_z(g.mu_hat, mu, r.trials as f64, r.trials as f64)
                }
                _ => f64::NAN,
            },
        );
        out.insert(
            "gdp_fit_p_value".into(),
            gdp.map_or(f64::NAN, |g| g.fit_p_value),
        );
        out.insert(
            "overnoise_ratio".into(),
            r.overnoise_ratio.unwrap_or(f64::NAN),
        );
        out.insert(
            "ordinary_clipping_share".into(),
            r.runs_with_ordinary_clipping.unwrap_or(f64::NAN),
        );
        // The accounting of the configured noise, whether or not the sensitivity bound it
        // assumes holds (mu is null in the result when it does not).
        let mu = match (system, &r.tp_topk) {
            (AuditSystem::FeatureLearningFirstLayer, _) => 1.0 / r.noise_multiplier,
            (AuditSystem::TpTopk, Some(tp)) => {
                (tp.t1 as f64 / (tp.z1 * tp.z1) + tp.t2 as f64 / (tp.z2 * tp.z2)).sqrt()
            }
            _ => (cfg.steps as f64).sqrt() / r.noise_multiplier,
        };
        let accounted = crate::privacy::gdp_epsilon(mu, cfg.delta)?;
        out.insert("epsilon_accounted".into(), accounted);
        let achieved = match (system, r.epsilon_achieved) {
            (_, Some(e)) => e,
            // Not DP (the ranking leaks): no finite epsilon exists (metric docs).
            (AuditSystem::TpTopk, None) => accounted,
            (_, None) => f64::NAN,
        };
        out.insert("epsilon_achieved".into(), achieved);
        out.insert("audit_excess".into(), bound - accounted);
        out.insert("tpr".into(), r.tpr);
        out.insert("fpr".into(), r.fpr);
        Ok(out)
    }
}

/// `noise_law: half-std`: half the paper's noise std (Eq. 11's `sqrt(eta) kappa C sigma/n`)
/// in the runs, while the configuration, the accounting and the canary test's exact mu
/// keep the paper's: an implementation slip `mu_hat_z` must catch (mu doubled).
fn half_paper_noise_std(cfg: &crate::train::dpgd::DpGdConfig, n: usize) -> f64 {
    0.5 * cfg.noise_std(n)
}

/// `noise_law: double-std`: twice the paper's noise std in the runs (mu halved), the
/// other way.
fn double_paper_noise_std(cfg: &crate::train::dpgd::DpGdConfig, n: usize) -> f64 {
    2.0 * cfg.noise_std(n)
}

/// `(mu_hat - mu)/se` with the large-sample variance of a standardised mean difference of
/// two normal samples of sizes `n1`, `n0` and pooled standard deviation,
/// `se^2 = 1/n1 + 1/n0 + mu^2/(2 (n1 + n0 - 2))` (Hedges & Olkin 1985, *Statistical
/// Methods for Meta-Analysis*, Ch. 5: the variance of Hedges' d): the GDP estimator's
/// `mu_hat = (mean_1 - mean_0)/s` ([`crate::privacy::audit::estimators`]) is that
/// difference.
pub fn mu_hat_z(mu_hat: f64, mu: f64, n1: f64, n0: f64) -> f64 {
    let se = (1.0 / n1 + 1.0 / n0 + mu * mu / (2.0 * (n1 + n0 - 2.0))).sqrt();
    (mu_hat - mu) / se
}

/// The white-box TP-TopK audit as a unit (privacy::audit::white_box): metrics as the
/// other mechanisms', `epsilon_accounted` the exact epsilon of the noise as run for the
/// sensitivity C the accountant assumes, `epsilon_achieved` with the sensitivity as run
/// (`clip_scale` C), `tpr`/`fpr` NaN (three estimators, no single threshold).
fn run_white_box_tp_topk(u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
    use crate::privacy::audit::white_box::{self, WhiteBoxCalibration, WhiteBoxConfig};
    let mut cfg = WhiteBoxConfig::new(u.var("epsilon")?, u.var("delta")?);
    cfg.trials = u.count("trials")?;
    cfg.noise_scale = u.var_or("noise_scale", 1.0);
    cfg.clip_scale = u.var_or("clip_scale", 1.0);
    cfg.sampling_rate = u.var_or("sampling_rate", 1.0);
    cfg.steps = u.var_or("steps", cfg.steps as f64) as usize;
    cfg.records = u.var_or("n", cfg.records as f64) as usize;
    cfg.features = u.var_or("p", cfg.features as f64) as usize;
    if u.option("accountant") == "exact" {
        cfg.calibration = WhiteBoxCalibration::Exact;
    }
    let mut recipe = *u.recipe;
    if u.option("scores") == "pre-noise" {
        recipe.dpsgd.scores = crate::train::dpsgd::ScoreSource::PreNoise;
    }
    let seed_bytes = u.seeds.child("audit").seed();
    let seed = u64::from_le_bytes(seed_bytes[..8].try_into().expect("8 bytes"));
    let r = white_box::run_white_box(&cfg, seed, &recipe)
        .map_err(|e| SystemError::Invalid(e.to_string()))?;
    let mut out = BTreeMap::new();
    out.insert("epsilon_lower_bound".into(), r.epsilon_lower_bound);
    out.insert("epsilon_accounted".into(), r.epsilon_exact_accounted);
    out.insert(
        "epsilon_achieved".into(),
        r.epsilon_exact_as_run.unwrap_or(r.epsilon_exact_accounted),
    );
    out.insert(
        "audit_excess".into(),
        r.epsilon_lower_bound - r.epsilon_exact_accounted,
    );
    out.insert(
        "epsilon_lb_clopper_pearson".into(),
        r.clopper_pearson.epsilon_lower_bound,
    );
    out.insert("epsilon_lb_gdp".into(), r.gdp.epsilon_lower_bound);
    out.insert("mu_hat".into(), r.gdp.mu_hat);
    out.insert("mu_hat_z".into(), f64::NAN);
    out.insert("gdp_fit_p_value".into(), r.gdp.fit_p_value);
    out.insert("overnoise_ratio".into(), f64::NAN);
    out.insert("ordinary_clipping_share".into(), f64::NAN);
    out.insert("tpr".into(), f64::NAN);
    out.insert("fpr".into(), f64::NAN);
    Ok(out)
}

/// Cost of a white-box TP-TopK audit: `2 trials` runs of `steps` real DP-SGD steps on
/// N records and P = 2F + 2 parameters (measured about 5 microseconds a step at N = 20,
/// F = 4 on one core).
pub fn white_box_cost(trials: f64, steps: f64, n: f64, features: f64) -> Cost {
    let p = 2.0 * features + 2.0;
    let per_step = 2e-6 + Cost::normals(p) + Cost::stream(6.0 * n * p);
    Cost {
        seconds: 2.0 * trials * (steps * per_step + 5e-6),
        bytes: Cost::f64s(4.0 * trials * p + 3.0 * n * features),
    }
}

/// Cost of an audit of `mechanism` (as the option names it) with `trials` runs per data
/// set on a problem of sizes d, n, p and `steps` DP-GD steps: the fast engine draws one
/// normal per run, the direct one (second layer with a ridge, or another clip rule
/// than divide) trains; both derive a seed per run. Also used by `dpclaims audit`.
#[allow(clippy::too_many_arguments)]
pub fn audit_cost(
    mechanism: &str,
    trials: f64,
    d: f64,
    n: f64,
    p: f64,
    steps: f64,
    ridge: f64,
    divide: bool,
) -> Cost {
    use super::cost::{dpgd_seconds, features_cost};
    if mechanism == "tp-topk" {
        // Per run: P normals per warm-up step (0.3 T), one per phase-2 step, the scores
        // and a sort of P for the top-k; n and d do not enter.
        let per_run = 5e-6
            + Cost::normals(0.3 * steps * p + steps)
            + Cost::stream(3.0 * p * (0.3 * steps) + 10.0 * p * p.max(2.0).log2());
        let _ = (d, n);
        return Cost {
            seconds: 2.0 * trials * per_run + 2.0 * trials * 1e-7 * (trials.max(2.0)).log2(),
            bytes: Cost::f64s(8.0 * trials + 8.0 * p),
        };
    }
    let first_layer = mechanism == "feature-learning-first-layer";
    let fast =
        first_layer || (divide && (mechanism != "feature-learning-second-layer" || ridge == 0.0));
    let per_run = 5e-6
        + if fast {
            Cost::normals(1.0)
        } else {
            dpgd_seconds(n, p, steps)
        };
    let setup = features_cost(n, p, d);
    Cost {
        // Two worlds, then sorting the scores for the threshold.
        seconds: 2.0 * trials * per_run
            + setup.seconds
            + 2.0 * trials * 1e-7 * (trials.max(2.0)).log2(),
        // Scores of both worlds (with their clip flags), the problem, and each
        // training run's vectors (one per thread at a time).
        bytes: Cost::f64s(6.0 * trials)
            + setup.bytes
            + Cost::f64s(3.0 * d * p + 6.0 * p + 3.0 * steps),
    }
}

/// Cost of the audit `cfg` ([`audit_cost`] at its sizes, engine and clip rule): the
/// estimate of `dpclaims audit` and of each audit of `dpclaims privacy-report`.
pub fn config_cost(cfg: &AuditConfig) -> Cost {
    let direct = cfg.engine == audit::AuditEngine::Direct;
    audit_cost(
        cfg.system.name(),
        cfg.trials as f64,
        cfg.d as f64,
        cfg.n as f64,
        cfg.p as f64,
        cfg.steps as f64,
        if direct { 1.0 } else { cfg.ridge },
        cfg.clip_rule == crate::train::dpgd::ClipRule::Divide && !direct,
    )
}

#[cfg(test)]
mod tests {
    use super::mu_hat_z;

    /// The standard error of a standardised mean difference: at 4000 runs a world and
    /// mu = 0.92 (the exactly calibrated DP-GD audit at eps = 4), se^2 = 2/4000 +
    /// 0.92^2/15996 = 5.529e-4, so a mu_hat 0.1 above mu is 4.25 standard errors.
    #[test]
    fn mu_hat_z_is_the_gap_in_standard_errors_of_a_standardised_difference() {
        assert_eq!(mu_hat_z(0.92, 0.92, 4000.0, 4000.0), 0.0);
        let se = (2.0f64 / 4000.0 + 0.92 * 0.92 / 15996.0).sqrt();
        let z = mu_hat_z(1.02, 0.92, 4000.0, 4000.0);
        assert!((z - 0.1 / se).abs() < 1e-12, "{z}");
        assert!((z - 4.2527).abs() < 1e-3, "{z}");
        // Symmetric in the sign of the gap; unequal worlds weigh each size.
        let down = mu_hat_z(0.82, 0.92, 4000.0, 4000.0);
        assert!((down + z).abs() < 1e-12, "{down} {z}");
        let uneven = (1.0f64 / 1000.0 + 1.0 / 3000.0 + 0.25 / 7996.0).sqrt();
        assert!((mu_hat_z(0.6, 0.5, 1000.0, 3000.0) - 0.1 / uneven).abs() < 1e-12);
    }
}
