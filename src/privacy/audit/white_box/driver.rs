//! The runs of a white-box audit and its estimators ([`super`] module docs): the per-run
//! streams, the two worlds, the three estimators and the result.
use super::{
    active_ratio, build, Problem, WhiteBoxConfig, WhiteBoxResult, WhiteBoxRun, BUDGET_SPLIT,
    SUPPORT_BONUS,
};
use crate::privacy::audit::estimators::{self, ClopperPearsonEstimate};
use crate::privacy::audit::stats;
use crate::privacy::audit::AuditError;
use crate::privacy::{epsilon, gdp_epsilon, Accountant, Phase};
use crate::rng::SeedPath;
use crate::train::dpsgd::{Classification, ModelKind, ScoreSource};
use crate::train::Recipe;
use rayon::prelude::*;

/// The per-run noise streams of a white-box audit: `seed/audit/tp-topk-white-box/<world>/<i>`,
/// whose `train` child feeds the run (as [`crate::train::dpsgd::run_method`] reads
/// `seed_path/train`).
pub fn trial_path(seed: u64, world: &str, trial: usize) -> SeedPath {
    SeedPath::new(seed)
        .child("audit")
        .child("tp-topk-white-box")
        .child(world)
        .child(trial)
}

fn problem_path(seed: u64) -> SeedPath {
    SeedPath::new(seed)
        .child("audit")
        .child("tp-topk-white-box")
        .child("problem")
}

/// The data set with the canary, the configuration [`crate::train::dpsgd::run_method`]
/// needs to run the same TP-TopK, for the test that the audit's loop is the training
/// loop: `(data, MethodConfig)`.
pub fn as_method(
    cfg: &WhiteBoxConfig,
    seed: u64,
    recipe: &Recipe,
) -> Result<(Classification, crate::train::dpsgd::MethodConfig), AuditError> {
    let pr = build(cfg, &problem_path(seed), recipe)?;
    let mut mc = crate::train::dpsgd::MethodConfig::new(
        crate::train::dpsgd::Method::TpTopK,
        ModelKind::Logreg,
        cfg.epsilon,
    );
    mc.delta = cfg.delta;
    mc.active_ratio = active_ratio(pr.model.num_params());
    // run_method counts epochs of round(1/q) steps.
    let spe = ((1.0 / cfg.sampling_rate).round() as usize).max(1);
    if cfg.steps % spe != 0 || pr.t1 % spe != 0 {
        return Err(AuditError::Parameter {
            name: "steps",
            expected: "T and T1 multiples of round(1/q) to compare with run_method",
            value: format!("T = {}, T1 = {}, round(1/q) = {spe}", cfg.steps, pr.t1),
        });
    }
    mc.epochs = cfg.steps / spe;
    mc.phase1_epochs = pr.t1 / spe;
    mc.budget_split = BUDGET_SPLIT;
    mc.batch_size = cfg.sampling_rate * cfg.records as f64;
    mc.clip = pr.sp1.clip;
    mc.clip_phase2 = pr.sp2.clip;
    mc.lr = pr.sp1.lr;
    Ok((pr.canary, mc))
}

/// The runs of one world, in index order (parallel; each run's stream depends only on
/// its index).
pub fn world_runs(
    cfg: &WhiteBoxConfig,
    seed: u64,
    present: bool,
    recipe: &Recipe,
) -> Result<Vec<WhiteBoxRun>, AuditError> {
    let pr = build(cfg, &problem_path(seed), recipe)?;
    runs_of(&pr, cfg, seed, present, recipe)
}

fn runs_of(
    pr: &Problem,
    cfg: &WhiteBoxConfig,
    seed: u64,
    present: bool,
    recipe: &Recipe,
) -> Result<Vec<WhiteBoxRun>, AuditError> {
    let world = if present { "canary" } else { "replaced" };
    let data = if present { &pr.canary } else { &pr.replaced };
    (0..cfg.trials)
        .into_par_iter()
        .map(|i| {
            let mut rng = trial_path(seed, world, i).rng_for("train");
            let r = pr.run(data, cfg.sampling_rate, &mut rng, recipe)?;
            if !r.llr.is_finite() {
                return Err(AuditError::NonFiniteScore {
                    world: if present { "canary" } else { "replaced" },
                    trial: i,
                    score: r.llr,
                });
            }
            Ok(r)
        })
        .collect()
}

/// Clopper-Pearson with the threshold chosen on the first half (empirical ranks),
/// measured on the second.
fn clopper_pearson(
    a: &[f64],
    b: &[f64],
    delta: f64,
    confidence: f64,
) -> Result<ClopperPearsonEstimate, AuditError> {
    let (ha, hb) = (a.len() / 2, b.len() / 2);
    let t = stats::select_threshold_empirical(&a[..ha], &b[..hb], delta, confidence)?.threshold;
    let out = stats::evaluate(&a[ha..], &b[hb..], t, delta, confidence)?;
    Ok(ClopperPearsonEstimate {
        epsilon_lower_bound: out.epsilon_lower_bound(),
        confidence,
    })
}

/// Runs the white-box audit of `cfg` from `seed` with the step of `recipe` (module
/// docs). Deterministic whatever the thread count.
pub fn run_white_box(
    cfg: &WhiteBoxConfig,
    seed: u64,
    recipe: &Recipe,
) -> Result<WhiteBoxResult, AuditError> {
    let pr = build(cfg, &problem_path(seed), recipe)?;
    let a = runs_of(&pr, cfg, seed, true, recipe)?;
    let b = runs_of(&pr, cfg, seed, false, recipe)?;
    let each = 1.0 - (1.0 - cfg.confidence) / 3.0;
    let la: Vec<f64> = a.iter().map(|r| r.llr).collect();
    let lb: Vec<f64> = b.iter().map(|r| r.llr).collect();
    let sup = |rs: &[WhiteBoxRun]| -> Vec<f64> {
        rs.iter()
            .map(|r| r.llr + if r.kept_whole { SUPPORT_BONUS } else { 0.0 })
            .collect()
    };
    let gdp = estimators::gdp_estimate(&la, &lb, cfg.delta, each)?;
    let cp = clopper_pearson(&la, &lb, cfg.delta, each)?;
    let cps = clopper_pearson(&sup(&a), &sup(&b), cfg.delta, each)?;
    let best = gdp
        .epsilon_lower_bound
        .max(cp.epsilon_lower_bound)
        .max(cps.epsilon_lower_bound);
    let q = cfg.sampling_rate;
    // The schedule as run: noise sd z C noise_scale per clip clip_scale C.
    let (r1, r2) = (pr.sp1.noise_multiplier, pr.sp2.noise_multiplier);
    let phases = [
        Phase::new(q, r1, pr.t1 as u64),
        Phase::new(q, r2, pr.t2 as u64),
    ];
    let epsilon_rdp_as_run =
        epsilon(Accountant::Rdp, &phases, cfg.delta, &recipe.accounting)?.epsilon;
    let dp = recipe.dpsgd.scores != ScoreSource::PreNoise;
    let exact = |z1: f64, z2: f64| -> Result<f64, AuditError> {
        Ok(if q >= 1.0 {
            gdp_epsilon(
                crate::privacy::gdp_mu([(pr.t1 as u64, z1), (pr.t2 as u64, z2)]),
                cfg.delta,
            )?
        } else {
            let ph = [
                Phase::new(q, z1, pr.t1 as u64),
                Phase::new(q, z2, pr.t2 as u64),
            ];
            epsilon(Accountant::Pld, &ph, cfg.delta, &recipe.accounting)?.epsilon
        })
    };
    let epsilon_exact_as_run = if dp { Some(exact(r1, r2)?) } else { None };
    let epsilon_exact_accounted = exact(pr.z1 * cfg.noise_scale, pr.z2 * cfg.noise_scale)?;
    let share =
        |rs: &[WhiteBoxRun]| rs.iter().filter(|r| r.kept_whole).count() as f64 / rs.len() as f64;
    Ok(WhiteBoxResult {
        system: "tp-topk-white-box",
        epsilon_lower_bound: best,
        epsilon_claimed: cfg.epsilon,
        delta: cfg.delta,
        confidence: cfg.confidence,
        sampling_rate: q,
        trials: cfg.trials,
        t1: pr.t1,
        t2: pr.t2,
        params: pr.model.num_params(),
        k: pr.k,
        records: cfg.records,
        lr: pr.sp1.lr,
        calibration: cfg.calibration,
        z1_nominal: pr.z1,
        z2_nominal: pr.z2,
        noise_scale: cfg.noise_scale,
        clip_scale: cfg.clip_scale,
        epsilon_rdp_as_run,
        epsilon_exact_as_run,
        epsilon_exact_accounted,
        gdp,
        clopper_pearson: cp,
        clopper_pearson_support: cps,
        canary_kept_whole: (share(&a), share(&b)),
        canary_unclipped_steps: a.iter().map(|r| r.unclipped).sum(),
        scores: match recipe.dpsgd.scores {
            ScoreSource::PreNoise => "pre-noise",
            ScoreSource::Reversed => "reversed",
            ScoreSource::Privatized => "privatized",
        },
    })
}
