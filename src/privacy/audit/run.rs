//! Running an audit (module docs of [`super`]): the mechanism is built and calibrated
//! from an [`AuditConfig`], run `trials` times in each world ([`super::canary`]), and
//! its scores turned into a lower bound on epsilon ([`super::stats`]).
use super::canary::{self, DpgdCanaryProblem, FirstLayerCanaryProblem, World};
use super::config::{clip_rule_name, AuditConfig, AuditEngine, AuditSystem, Calibration};
use super::estimators::{self, Estimates};
use super::stats::{self, ThresholdOutcome};
use super::tp_topk::{TpTopkCanaryProblem, TpTopkRun, CLIP};
use super::{AuditError, AuditResult};
use crate::privacy::{calibrate, gdp_epsilon, Accountant};
use crate::rng::SeedPath;
use crate::train::dpgd::{prop22_sigma, ClipRule, DpGdConfig};
use crate::train::dpsgd::ScoreSource;
use crate::train::Recipe;
use rayon::prelude::*;

/// Noise level of a DP-GD system: `(sigma as run, sigma_calibrated / sigma_exact)`.
fn calibrate_dpgd(cfg: &AuditConfig, eta: f64, recipe: &Recipe) -> Result<(f64, f64), AuditError> {
    let cal = calibrate(
        Accountant::Gdp,
        cfg.epsilon,
        cfg.delta,
        1.0,
        cfg.steps as u64,
        &recipe.accounting,
    )?;
    // z = sigma / sqrt(eta) for kappa = 2 (module docs).
    let sigma_exact = cal.noise_multiplier * eta.sqrt();
    let sigma_cal = match cfg.calibration {
        Calibration::Exact => sigma_exact,
        Calibration::Prop22 => prop22_sigma(eta, cfg.steps, cfg.epsilon, cfg.delta, &recipe.dpgd)?,
    };
    Ok((sigma_cal * cfg.noise_scale, sigma_cal / sigma_exact))
}

/// The seed path of the audited problem (its data, features, canary).
fn problem_path(seed: u64, system: AuditSystem) -> SeedPath {
    SeedPath::new(seed)
        .child("audit")
        .child(system.name())
        .child("problem")
}

/// The per-run noise stream of an audit.
fn trial_path(seed: u64, system: AuditSystem, world: World, trial: usize) -> SeedPath {
    SeedPath::new(seed)
        .child("audit")
        .child(system.name())
        .child(world.name())
        .child(trial)
}

/// Scores of both worlds (index order), plus, for the direct DP-GD engine, the
/// fraction of runs in which an ordinary sample was clipped.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditScores {
    pub canary: Vec<f64>,
    pub replaced: Vec<f64>,
    pub engine: AuditEngine,
    pub runs_with_ordinary_clipping: Option<f64>,
    /// TP-TopK: the warm-up's log-likelihood ratio per run (canary world, other world),
    /// the Gaussian statistic the GDP estimator reads ([`super::tp_topk`] docs).
    pub warmup: Option<(Vec<f64>, Vec<f64>)>,
    /// TP-TopK: share of runs with the canary coordinate in the support, per world.
    pub in_support: Option<(f64, f64)>,
}

/// The mechanism as configured: the built problem and its noise level.
enum Mechanism {
    Dpgd {
        problem: Box<DpgdCanaryProblem>,
        overnoise_ratio: f64,
    },
    FirstLayer(Box<FirstLayerCanaryProblem>),
    TpTopk(Box<TpTopkCanaryProblem>),
}

fn build(cfg: &AuditConfig, seed: u64, recipe: &Recipe) -> Result<Mechanism, AuditError> {
    cfg.validate()?;
    crate::linalg::pin_blas_threads();
    let path = problem_path(seed, cfg.system);
    let (d, n, p) = (cfg.d, cfg.n, cfg.p);
    let pf = p as f64;
    match cfg.system {
        AuditSystem::TpTopk => {
            if cfg.calibration != Calibration::Exact {
                return Err(AuditError::Parameter {
                    name: "calibration",
                    expected:
                        "exact for tp-topk (the RDP two-phase calibration of the tp-topk system)",
                    value: cfg.calibration.name().into(),
                });
            }
            Ok(Mechanism::TpTopk(Box::new(TpTopkCanaryProblem::new(
                n,
                p,
                cfg.steps,
                cfg.epsilon,
                cfg.delta,
                cfg.noise_scale,
                recipe,
            )?)))
        }
        AuditSystem::RfDpgd | AuditSystem::FeatureLearningSecondLayer => {
            // privacy-for-free Sec. 4 (Fig. 2): eta = 1/p, C = c sqrt(p) with c = 1.
            // Blog second layer: eta_a = 1/p (Assumption 4's eta_a = ln^2 d / p makes
            // the ridge step unstable at small d), C_a per Assumption 4 (eps_n = 0).
            let eta = 1.0 / pf;
            let (sigma, overnoise_ratio) = calibrate_dpgd(cfg, eta, recipe)?;
            let rf = cfg.system == AuditSystem::RfDpgd;
            let config = DpGdConfig {
                eta,
                steps: cfg.steps,
                clip: if rf {
                    pf.sqrt()
                } else {
                    canary::assumption4_clip(d, p)
                },
                clip_rule: cfg.clip_rule,
                sigma,
                kappa: cfg.kappa,
                ridge: if rf { 0.0 } else { cfg.ridge },
            };
            config.validate()?;
            let problem = if rf {
                DpgdCanaryProblem::random_features(d, n, p, config, &path, &recipe.dpgd)?
            } else {
                let sigma_w = canary::assumption4_sigma_w(d, n, cfg.eps_b);
                DpgdCanaryProblem::second_layer(d, n, p, sigma_w, config, &path, recipe)?
            };
            Ok(Mechanism::Dpgd {
                problem: Box::new(problem),
                overnoise_ratio,
            })
        }
        AuditSystem::FeatureLearningFirstLayer => {
            let sigma_w = canary::assumption4_sigma_w(d, n, cfg.eps_b) * cfg.noise_scale;
            if !(sigma_w.is_finite() && sigma_w > 0.0) {
                return Err(AuditError::Parameter {
                    name: "eps-b",
                    expected: "such that sigma_W is positive and finite",
                    value: format!("{} (sigma_W = {sigma_w})", cfg.eps_b),
                });
            }
            Ok(Mechanism::FirstLayer(Box::new(
                FirstLayerCanaryProblem::new(
                    d,
                    n,
                    p,
                    sigma_w,
                    cfg.normalise,
                    &path,
                    &recipe.first_layer,
                )?,
            )))
        }
    }
}

fn resolve_engine(cfg: &AuditConfig, mech: &Mechanism) -> Result<AuditEngine, AuditError> {
    let exact = match mech {
        Mechanism::Dpgd { problem, .. } => problem.fast_is_exact(),
        Mechanism::FirstLayer(_) => true,
        Mechanism::TpTopk(_) => {
            if cfg.engine == AuditEngine::Fast {
                return Err(AuditError::Parameter {
                    name: "engine",
                    expected: "auto or direct for tp-topk (the support has no closed-form law)",
                    value: "fast".into(),
                });
            }
            false
        }
    };
    match (cfg.engine, exact) {
        (AuditEngine::Auto, true) | (AuditEngine::Fast, true) => Ok(AuditEngine::Fast),
        (AuditEngine::Auto, false) | (AuditEngine::Direct, _) => Ok(AuditEngine::Direct),
        (AuditEngine::Fast, false) => Err(AuditError::FastNotExact {
            ridge: cfg.ridge,
            clip_rule: clip_rule_name(cfg.clip_rule),
        }),
    }
}

/// One run: its score, a flag (DP-GD direct: an ordinary sample was clipped; TP-TopK:
/// the canary coordinate was in the support) and TP-TopK's warm-up statistic.
type RunOutcome = (f64, bool, f64);

/// One world's scores, in index order (parallel over runs; each run's stream depends
/// only on its index, so the result does not depend on the thread count).
fn world_scores(
    cfg: &AuditConfig,
    mech: &Mechanism,
    engine: AuditEngine,
    world: World,
    seed: u64,
    recipe: &Recipe,
) -> Result<Vec<RunOutcome>, AuditError> {
    let data = problem_path(seed, cfg.system).child("data");
    let one = |i: usize| -> Result<RunOutcome, AuditError> {
        let mut rng = recipe.noise_rng(&trial_path(seed, cfg.system, world, i), &data);
        let mut aux = 0.0;
        let (score, clipped) = match (mech, engine) {
            (Mechanism::Dpgd { problem, .. }, AuditEngine::Direct) => {
                let (s, others) =
                    problem
                        .direct_score(world, &mut rng)
                        .map_err(|error| AuditError::Run {
                            world: world.name(),
                            trial: i,
                            error,
                        })?;
                (s, others > 0.0)
            }
            (Mechanism::Dpgd { problem, .. }, _) => (problem.fast_score(world, &mut rng), false),
            (Mechanism::FirstLayer(fl), AuditEngine::Direct) => {
                (fl.direct_score(world, &mut rng), false)
            }
            (Mechanism::FirstLayer(fl), _) => (fl.fast_score(world, &mut rng), false),
            (Mechanism::TpTopk(tp), _) => {
                let o = tp.run(world == World::Canary, &mut rng)?;
                if !o.warmup_llr.is_finite() {
                    return Err(AuditError::NonFiniteScore {
                        world: world.name(),
                        trial: i,
                        score: o.warmup_llr,
                    });
                }
                aux = o.warmup_llr;
                (o.score, o.in_support)
            }
        };
        if !score.is_finite() {
            return Err(AuditError::NonFiniteScore {
                world: world.name(),
                trial: i,
                score,
            });
        }
        Ok((score, clipped, aux))
    };
    (0..cfg.trials)
        .into_par_iter()
        .map(one)
        .collect::<Result<_, _>>()
}

fn scores_of(
    cfg: &AuditConfig,
    mech: &Mechanism,
    seed: u64,
    recipe: &Recipe,
) -> Result<AuditScores, AuditError> {
    let engine = resolve_engine(cfg, mech)?;
    let a = world_scores(cfg, mech, engine, World::Canary, seed, recipe)?;
    let b = world_scores(cfg, mech, engine, World::Replaced, seed, recipe)?;
    let flags = |w: &[RunOutcome]| w.iter().filter(|o| o.1).count();
    let (c1, c2) = (flags(&a), flags(&b));
    let runs_with_ordinary_clipping = match (mech, engine) {
        (Mechanism::Dpgd { .. }, AuditEngine::Direct) => {
            Some((c1 + c2) as f64 / (2 * cfg.trials) as f64)
        }
        _ => None,
    };
    let tp = matches!(mech, Mechanism::TpTopk(_));
    let col = |w: &[RunOutcome], f: fn(&RunOutcome) -> f64| w.iter().map(f).collect::<Vec<_>>();
    Ok(AuditScores {
        canary: col(&a, |o| o.0),
        replaced: col(&b, |o| o.0),
        engine,
        runs_with_ordinary_clipping,
        warmup: tp.then(|| (col(&a, |o| o.2), col(&b, |o| o.2))),
        in_support: tp.then(|| (c1 as f64 / cfg.trials as f64, c2 as f64 / cfg.trials as f64)),
    })
}

/// The raw scores of an audit (both worlds, index order) of the mechanism with the
/// formulas of `recipe`, for cross-checks between engines. Same seed, same scores.
pub fn audit_scores(
    cfg: &AuditConfig,
    seed: u64,
    recipe: &Recipe,
) -> Result<AuditScores, AuditError> {
    let mech = build(cfg, seed, recipe)?;
    scores_of(cfg, &mech, seed, recipe)
}

/// Threshold on the first `floor(trials/2)` runs of each world, bound on the rest
/// ([`stats`]). Returns the outcome on the measurement half.
pub fn bound_from_scores(
    canary: &[f64],
    replaced: &[f64],
    delta: f64,
    confidence: f64,
) -> Result<ThresholdOutcome, AuditError> {
    let (hc, hr) = (canary.len() / 2, replaced.len() / 2);
    let t = stats::select_threshold(
        &canary[..hc],
        &replaced[..hr],
        canary.len() - hc,
        replaced.len() - hr,
        delta,
        confidence,
    )?;
    stats::evaluate(&canary[hc..], &replaced[hr..], t, delta, confidence)
}

/// Runs the audit described by `cfg` from the master seed `seed` (module docs), of the
/// mechanism with the formulas of `recipe` ([`Recipe::PAPER`]: as published): the
/// problem, the calibration and every run go through them. The fast engine is a
/// closed-form model of the paper's training loop: of the recipe it only sees the
/// noise std; pass [`AuditEngine::Direct`] to audit the real loop. The reported `mu`
/// and `epsilon_achieved` are what the configuration claims, not what another recipe
/// does.
///
/// Deterministic: the same `(cfg, seed, recipe)` gives the same result, bit for bit,
/// whatever the number of threads.
pub fn run_audit(cfg: &AuditConfig, seed: u64, recipe: &Recipe) -> Result<AuditResult, AuditError> {
    Ok(audit_inner(cfg, seed, recipe, false)?.0)
}

/// [`run_audit`] with every estimator ([`super::estimators`]): Clopper–Pearson,
/// Gaussian DP and, on the fast engine (the exact law of the scores), the one-run audit,
/// each at confidence `1 − (1 − c)/k` for `k` estimators, so that the largest bound
/// (`Estimates::epsilon_lower_bound`) holds with confidence `c`. The result's
/// Clopper–Pearson fields are at that split confidence.
pub fn run_audit_estimates(
    cfg: &AuditConfig,
    seed: u64,
    recipe: &Recipe,
) -> Result<(AuditResult, Estimates), AuditError> {
    let (result, scores, k) = audit_inner(cfg, seed, recipe, true)?;
    let each = 1.0 - (1.0 - cfg.confidence) / k as f64;
    // TP-TopK: the GDP estimator reads the warm-up statistic, the part of the score
    // whose Gaussian law is exact (tp_topk module docs).
    let (gc, gr) = match &scores.warmup {
        Some((c, r)) => (c.as_slice(), r.as_slice()),
        None => (scores.canary.as_slice(), scores.replaced.as_slice()),
    };
    let gdp = estimators::gdp_estimate(gc, gr, cfg.delta, each)?;
    let one_run = match (scores.engine, result.mu_canary) {
        (AuditEngine::Fast, Some(mu)) if k == 3 => Some(estimators::one_run_gaussian(
            mu,
            cfg.trials,
            &SeedPath::new(seed)
                .child("audit")
                .child(cfg.system.name())
                .child("one-run"),
            cfg.delta,
            each,
        )),
        _ => None,
    };
    let cp = result.epsilon_lower_bound;
    let best = [
        Some(cp),
        Some(gdp.epsilon_lower_bound),
        one_run.as_ref().map(|o| o.epsilon_lower_bound),
    ]
    .into_iter()
    .flatten()
    .fold(0.0, f64::max);
    Ok((
        result,
        Estimates {
            epsilon_lower_bound: best,
            confidence: cfg.confidence,
            clopper_pearson: estimators::ClopperPearsonEstimate {
                epsilon_lower_bound: cp,
                confidence: each,
            },
            gdp,
            one_run,
        },
    ))
}

/// The audit; with `split`, the Clopper–Pearson bound at its share `1 − (1 − c)/k` of
/// the confidence, `k` the number of estimators [`run_audit_estimates`] will use (also
/// returned, with the scores).
fn audit_inner(
    cfg: &AuditConfig,
    seed: u64,
    recipe: &Recipe,
    split: bool,
) -> Result<(AuditResult, AuditScores, usize), AuditError> {
    let mech = build(cfg, seed, recipe)?;
    let scores = scores_of(cfg, &mech, seed, recipe)?;
    let k = match (split, scores.engine) {
        (false, _) => 1,
        (true, AuditEngine::Fast) => 3,
        (true, _) => 2,
    };
    let confidence = 1.0 - (1.0 - cfg.confidence) / k as f64;
    let out = match &mech {
        // The TP-TopK score is a mixture (support in or out): the threshold is chosen
        // among the empirical ranks, not from a Gaussian fit of the selection half.
        Mechanism::TpTopk(_) => {
            let (c, r) = (&scores.canary, &scores.replaced);
            let (hc, hr) = (c.len() / 2, r.len() / 2);
            let t = stats::select_threshold_empirical(&c[..hc], &r[..hr], cfg.delta, confidence)?
                .threshold;
            stats::evaluate(&c[hc..], &r[hr..], t, cfg.delta, confidence)?
        }
        _ => bound_from_scores(&scores.canary, &scores.replaced, cfg.delta, confidence)?,
    };
    let (sigma, noise_multiplier, mu, mu_canary, overnoise_ratio, calibration) = match &mech {
        Mechanism::Dpgd {
            problem,
            overnoise_ratio,
        } => {
            let c = &problem.config;
            let z = c.kappa * c.sigma / (2.0 * c.eta.sqrt());
            (
                c.sigma,
                z,
                (c.steps as f64).sqrt() / z,
                problem.canary_mu(),
                Some(*overnoise_ratio),
                Some(cfg.calibration),
            )
        }
        Mechanism::FirstLayer(fl) => {
            let z = fl.sigma_w / (2.0 * (cfg.p as f64).sqrt());
            (fl.sigma_w, z, 1.0 / z, Some(fl.canary_mu()), None, None)
        }
        // Phase 2's noise sd of the averaged gradient and multiplier; mu of a canary in
        // the support every time (tp_topk module docs).
        Mechanism::TpTopk(tp) => (tp.z2 * CLIP / tp.n as f64, tp.z2, tp.mu(), None, None, None),
    };
    // Multiply and none, and an unnormalised first layer, do not bound the
    // sensitivity: no accounted guarantee.
    let bounded = match cfg.system {
        AuditSystem::FeatureLearningFirstLayer => cfg.normalise,
        // Pre-noise scores make the support a non-private function of the data.
        AuditSystem::TpTopk => recipe.dpsgd.scores == ScoreSource::Privatized,
        _ => cfg.clip_rule == ClipRule::Divide,
    };
    let mu = bounded.then_some(mu);
    let epsilon_achieved = mu.map(|m| gdp_epsilon(m, cfg.delta)).transpose()?;
    let result = AuditResult {
        system: cfg.system,
        engine: scores.engine,
        calibration,
        epsilon_lower_bound: out.epsilon_lower_bound(),
        epsilon_claimed: cfg.epsilon,
        delta: cfg.delta,
        confidence,
        trials: cfg.trials,
        measured: out.positives as usize,
        tpr: out.tpr,
        fpr: out.fpr,
        tpr_lower: out.tpr_lower,
        fpr_upper: out.fpr_upper,
        threshold: out.threshold,
        sigma,
        noise_scale: cfg.noise_scale,
        noise_multiplier,
        mu,
        epsilon_achieved,
        mu_canary,
        overnoise_ratio,
        runs_with_ordinary_clipping: scores.runs_with_ordinary_clipping,
        tp_topk: match &mech {
            Mechanism::TpTopk(tp) => {
                let (ic, ir) = scores.in_support.unwrap_or((f64::NAN, f64::NAN));
                Some(TpTopkRun {
                    t1: tp.t1,
                    t2: tp.t2,
                    p: tp.p,
                    k: tp.k,
                    n: tp.n,
                    z1: tp.z1,
                    z2: tp.z2,
                    scores: match tp.scores {
                        ScoreSource::Privatized => "privatized",
                        ScoreSource::PreNoise => "pre-noise",
                        ScoreSource::Reversed => "reversed",
                    },
                    epsilon_rdp: crate::privacy::epsilon(
                        Accountant::Rdp,
                        &tp.phases(),
                        cfg.delta,
                        &recipe.accounting,
                    )?
                    .epsilon,
                    mu_warmup: (tp.t1 as f64).sqrt() / tp.z1,
                    in_support_canary: ic,
                    in_support_replaced: ir,
                })
            }
            _ => None,
        },
    };
    // The fast engine needs the canary's closed-form mu for the one-run estimator.
    let k = if k == 3 && result.mu_canary.is_none() {
        2
    } else {
        k
    };
    Ok((result, scores, k))
}
