//! `dpclaims audit --system external`: the empirical privacy audit of
//! [`crate::privacy::audit`] (a canary attack, Clopper–Pearson bounds on TPR and FPR,
//! Kairouz, Oh & Viswanath 2015 Thm 2.1) driven through the external protocol.
//!
//! Every trial is one request with `"canary": 1` (the data set with the canary) or
//! `"canary": 0` (the canary replaced), the given parameters and `epsilon`, `delta`; the
//! core answers `{"metrics": {"score": s}}`. The scores go through the same threshold
//! selection and bound as the built-in audit ([`crate::privacy::audit::bound_from_scores`]:
//! threshold on the first half of each world's trials, bound on the second).
//!
//! Trial `i` of world `w` is unit `audit/<w>/trials/<i>/0`, seeded from the path
//! `master / "audit" / "external" / <w> / <i>` ([`super::seed_of`]).
use super::protocol::Request;
use super::worker::CoreCommand;
use super::Pool;
use crate::rng::SeedPath;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// What to audit.
#[derive(Clone, Debug)]
pub struct ExternalAudit {
    pub command: CoreCommand,
    /// Extra parameters of every request (`--param k=v`).
    pub params: BTreeMap<String, f64>,
    /// Options of every request (`--option k=v`).
    pub options: BTreeMap<String, String>,
    pub epsilon: f64,
    pub delta: f64,
    /// Runs per world (>= 2).
    pub trials: usize,
    pub confidence: f64,
}

/// The outcome (the fields of the built-in audit's that an external core determines).
#[derive(Clone, Debug, Serialize)]
pub struct ExternalAuditResult {
    pub command: String,
    pub epsilon_lower_bound: f64,
    pub epsilon_claimed: f64,
    pub delta: f64,
    pub confidence: f64,
    pub trials: usize,
    /// Runs per world the bound is measured on (the second half).
    pub measured: usize,
    pub threshold: f64,
    pub tpr: f64,
    pub fpr: f64,
    pub tpr_lower: f64,
    pub fpr_upper: f64,
    /// The two estimators, each at confidence `1 − (1 − c)/2` (so that
    /// `epsilon_lower_bound`, the larger, holds at `c`): Clopper–Pearson (the threshold
    /// fields above) and the Gaussian-DP estimate, which assumes Gaussian scores of equal
    /// variance and reports a normality check (`privacy::audit::estimators`).
    pub estimators: ExternalEstimators,
}

/// The estimators of an external audit.
#[derive(Clone, Debug, Serialize)]
pub struct ExternalEstimators {
    pub clopper_pearson: crate::privacy::audit::estimators::ClopperPearsonEstimate,
    pub gdp: Option<crate::privacy::audit::estimators::GdpEstimate>,
}

/// Runs the audit (errors: a core failure naming the trial, or an invalid setting).
pub fn run(cfg: &ExternalAudit, seed: u64) -> Result<ExternalAuditResult, String> {
    if cfg.trials < 2 {
        return Err(format!("--trials must be at least 2, got {}", cfg.trials));
    }
    if !(cfg.epsilon.is_finite() && cfg.epsilon > 0.0) {
        return Err(format!(
            "--epsilon must be finite and > 0, got {}",
            cfg.epsilon
        ));
    }
    if !(cfg.delta > 0.0 && cfg.delta < 1.0) {
        return Err(format!("--delta must be in (0, 1), got {}", cfg.delta));
    }
    if !(cfg.confidence > 0.0 && cfg.confidence < 1.0) {
        return Err(format!(
            "--confidence must be in (0, 1), got {}",
            cfg.confidence
        ));
    }
    for reserved in ["canary", "epsilon", "delta"] {
        if cfg.params.contains_key(reserved) {
            return Err(format!(
                "--param {reserved}=... is set by the audit itself (canary per trial, epsilon and delta from --epsilon and --delta)"
            ));
        }
    }
    let pool = Pool::new(cfg.command.clone(), vec!["score".to_string()]);
    pool.prepare()?;
    let root = SeedPath::new(seed).child("audit").child("external");
    let world = |name: &str, canary: f64| -> Result<Vec<f64>, String> {
        let mut params = cfg.params.clone();
        params.insert("canary".into(), canary);
        params.insert("epsilon".into(), cfg.epsilon);
        params.insert("delta".into(), cfg.delta);
        (0..cfg.trials)
            .into_par_iter()
            .map(|i| {
                let unit = format!("audit/{name}/trials/{i}/0");
                let req = Request {
                    unit: &unit,
                    seed: super::seed_of(&root.child(name).child(i)),
                    params: &params,
                    options: &cfg.options,
                };
                pool.call(&req, &["score"], false)
                    .map(|m| m["score"])
                    .map_err(|e| format!("trial {i} of the {name} world (unit `{unit}`): {e}"))
            })
            .collect()
    };
    let canary = world("canary", 1.0);
    let replaced = canary.as_ref().ok().map(|_| world("replaced", 0.0));
    pool.release();
    let canary = canary?;
    let replaced = replaced.expect("ran after the canary world")?;
    let each = 1.0 - (1.0 - cfg.confidence) / 2.0;
    let out = crate::privacy::audit::bound_from_scores(&canary, &replaced, cfg.delta, each)
        .map_err(|e| e.to_string())?;
    // Scores without spread (a constant core) have no Gaussian estimate.
    let gdp =
        crate::privacy::audit::estimators::gdp_estimate(&canary, &replaced, cfg.delta, each).ok();
    let cp = out.epsilon_lower_bound();
    Ok(ExternalAuditResult {
        command: cfg.command.display(),
        epsilon_lower_bound: gdp.as_ref().map_or(cp, |g| g.epsilon_lower_bound.max(cp)),
        epsilon_claimed: cfg.epsilon,
        delta: cfg.delta,
        confidence: cfg.confidence,
        trials: cfg.trials,
        measured: out.positives as usize,
        threshold: out.threshold,
        tpr: out.tpr,
        fpr: out.fpr,
        tpr_lower: out.tpr_lower,
        fpr_upper: out.fpr_upper,
        estimators: ExternalEstimators {
            clopper_pearson: crate::privacy::audit::estimators::ClopperPearsonEstimate {
                epsilon_lower_bound: cp,
                confidence: each,
            },
            gdp,
        },
    })
}

/// The estimator whose bound a spec's audit reports as `epsilon_lower_bound`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimator {
    /// Clopper–Pearson bounds on TPR and FPR at a threshold chosen on the first half
    /// (Kairouz, Oh & Viswanath 2015, Thm 2.1): assumes nothing about the scores.
    ClopperPearson,
    /// The Gaussian-DP estimate (Dong, Roth & Su 2019, Cor. 2.13 on a lower confidence
    /// bound of mu): assumes Gaussian scores of equal variance (a KS check is reported).
    Gdp,
    /// The larger of the two, each at half the error probability.
    Best,
}

impl Estimator {
    pub fn name(self) -> &'static str {
        match self {
            Estimator::ClopperPearson => "clopper_pearson",
            Estimator::Gdp => "gdp",
            Estimator::Best => "best",
        }
    }
}

/// `external.audit` of a spec: every unit is one audit of the core in canary mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpecAudit {
    /// Runs per world.
    pub trials: usize,
    /// Joint confidence of `epsilon_lower_bound`.
    pub confidence: f64,
    pub estimator: Estimator,
}

/// The metrics of a unit of a spec's audit, with their docs.
pub const SPEC_AUDIT_METRICS: &[(&str, &str)] = &[
    ("epsilon_lower_bound", "the audit's certified lower bound on epsilon, by external.audit.estimator at external.audit.confidence"),
    ("epsilon_lower_bound_clopper_pearson", "the Clopper-Pearson estimator's bound (at the estimator's share of the confidence)"),
    ("epsilon_lower_bound_gdp", "the Gaussian-DP estimator's bound (at its share of the confidence; 0 for scores without spread)"),
    ("audit_mu_hat", "the GDP estimate of the mechanism's mu from the scores"),
    ("audit_mu_lower", "the GDP estimator's lower confidence bound on mu"),
    ("audit_normality_p", "the KS p-value of the GDP estimator's Gaussian-scores assumption"),
    ("tpr", "true positive rate on the measurement half"),
    ("fpr", "false positive rate on the measurement half"),
    ("epsilon_certifiable_max", "power: the largest bound Clopper-Pearson can certify with these trials (every canary run above the threshold, none of the others)"),
    ("smallest_caught_noise_scale", "power: under the GDP estimator's model, the audit certifies more than the claimed epsilon (param `epsilon`) when the noise is scaled by less than this (mu_claim / (mu_claim + mu_hat - mu_lower), mu_claim = gdp_mu(epsilon, delta))"),
];

/// One unit of a spec's audit (module docs of the CLI audit above; the same threshold
/// selection and estimators): `trials` requests with `"canary": 1` and `trials` with
/// `"canary": 0`, the unit's variables (which must hold `epsilon` and `delta`) and
/// options sent with each; trial `i` of world `w` is request `<unit>/<w>/<i>`, seeded from
/// the unit's seed path `/ "audit" / w / i`.
pub fn spec_unit(
    pool: &Pool,
    a: &SpecAudit,
    unit: &str,
    seeds: &SeedPath,
    vars: &BTreeMap<String, f64>,
    options: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, f64>, String> {
    let (Some(&epsilon), Some(&delta)) = (vars.get("epsilon"), vars.get("delta")) else {
        return Err(
            "an audit needs the parameters `epsilon` (the claimed epsilon) and `delta`".into(),
        );
    };
    if !(delta > 0.0 && delta < 1.0 && epsilon.is_finite() && epsilon > 0.0) {
        return Err(format!(
            "an audit needs epsilon > 0 and delta in (0, 1), got {epsilon} and {delta}"
        ));
    }
    let root = seeds.child("audit");
    let world = |name: &str, canary: f64| -> Result<Vec<f64>, String> {
        let mut params = vars.clone();
        params.insert("canary".into(), canary);
        (0..a.trials)
            .map(|i| {
                let id = format!("{unit}/{name}/{i}");
                let req = Request {
                    unit: &id,
                    seed: super::seed_of(&root.child(name).child(i)),
                    params: &params,
                    options,
                };
                pool.call(&req, &["score"], false)
                    .map(|m| m["score"])
                    .map_err(|e| format!("trial {i} of the {name} world: {e}"))
            })
            .collect()
    };
    let canary = world("canary", 1.0)?;
    let replaced = world("replaced", 0.0)?;
    let each = match a.estimator {
        Estimator::Best => 1.0 - (1.0 - a.confidence) / 2.0,
        _ => a.confidence,
    };
    use crate::privacy::audit::estimators::gdp_estimate;
    let cp = crate::privacy::audit::bound_from_scores(&canary, &replaced, delta, each)
        .map_err(|e| e.to_string())?;
    let gdp = gdp_estimate(&canary, &replaced, delta, each).ok();
    let cp_bound = cp.epsilon_lower_bound();
    let gdp_bound = gdp.as_ref().map_or(0.0, |g| g.epsilon_lower_bound);
    let bound = match a.estimator {
        Estimator::ClopperPearson => cp_bound,
        Estimator::Gdp => gdp_bound,
        Estimator::Best => cp_bound.max(gdp_bound),
    };
    let (m1, m0) = (cp.positives, cp.negatives);
    let (_, _, ceiling) =
        crate::privacy::audit::stats::bound_from_counts(m1, m1, 0, m0, delta, each)
            .map_err(|e| e.to_string())?;
    let mu_claim = crate::privacy::gdp::gdp_mu_of(epsilon, delta).unwrap_or(f64::NAN);
    let (mu_hat, mu_lower, normal_p) = gdp
        .as_ref()
        .map_or((0.0, 0.0, 0.0), |g| (g.mu_hat, g.mu_lower, g.fit_p_value));
    let margin = (mu_hat - mu_lower).max(0.0);
    let out = [
        ("epsilon_lower_bound", bound),
        ("epsilon_lower_bound_clopper_pearson", cp_bound),
        ("epsilon_lower_bound_gdp", gdp_bound),
        ("audit_mu_hat", mu_hat),
        ("audit_mu_lower", mu_lower),
        ("audit_normality_p", normal_p),
        ("tpr", cp.tpr),
        ("fpr", cp.fpr),
        ("epsilon_certifiable_max", ceiling.max(0.0)),
        (
            "smallest_caught_noise_scale",
            mu_claim / (mu_claim + margin),
        ),
    ];
    Ok(out.iter().map(|(k, v)| (k.to_string(), *v)).collect())
}
