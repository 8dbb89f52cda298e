//! `dpclaims audit --system tp-topk --white-box`: the white-box audit of TP-TopK's real
//! step ([`crate::privacy::audit::white_box`]), with `--sampling-rate`, `--clip-scale`
//! (the sensitivity slip), `--null` (exact calibration: the audit's null) and
//! `--null-audits K` (the false-positive rate of the certified bound over K audits of
//! the exactly calibrated mechanism). Exit status 1 when the certified lower bound
//! exceeds the claimed epsilon.
use super::audit_args::AuditArgs;
use crate::privacy::audit::white_box::{run_white_box, WhiteBoxCalibration, WhiteBoxConfig};
use crate::train::Recipe;
use std::process::ExitCode;

/// The configuration the arguments describe.
pub(super) fn config(args: &AuditArgs) -> WhiteBoxConfig {
    let mut cfg = WhiteBoxConfig::new(args.epsilon, args.delta);
    cfg.trials = args.trials;
    cfg.noise_scale = args.noise_scale;
    cfg.confidence = args.confidence;
    cfg.sampling_rate = args.sampling_rate.unwrap_or(cfg.sampling_rate);
    cfg.clip_scale = args.clip_scale.unwrap_or(cfg.clip_scale);
    cfg.steps = args.steps.unwrap_or(cfg.steps);
    cfg.records = args.n.unwrap_or(cfg.records);
    cfg.features = args.p.unwrap_or(cfg.features);
    if args.null {
        cfg.calibration = WhiteBoxCalibration::Exact;
    }
    cfg
}

pub(super) fn run(args: &AuditArgs, recipe: &Recipe) -> anyhow::Result<ExitCode> {
    let cfg = config(args);
    if let Some(k) = args.null_audits {
        return null(&cfg, args.seed, k, args.json, recipe);
    }
    let r = run_white_box(&cfg, args.seed, recipe)?;
    let exceeds = r.epsilon_lower_bound > r.epsilon_claimed;
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "white-box audit of tp-topk (the real DP-SGD step, q = {}): epsilon_lower_bound = \
             {:.4} vs claimed epsilon = {} (delta = {}, confidence {})",
            r.sampling_rate, r.epsilon_lower_bound, r.epsilon_claimed, r.delta, r.confidence
        );
        println!(
            "  estimators (each at confidence {:.4}): gdp {:.4} (mu >= {:.4}, mu_hat {:.4}, \
             normality KS p = {:.3}); clopper-pearson {:.4}; clopper-pearson with the support \
             {:.4}",
            r.gdp.confidence,
            r.gdp.epsilon_lower_bound,
            r.gdp.mu_lower,
            r.gdp.mu_hat,
            r.gdp.fit_p_value,
            r.clopper_pearson.epsilon_lower_bound,
            r.clopper_pearson_support.epsilon_lower_bound
        );
        println!(
            "  mechanism: T1 = {}, T2 = {}, P = {}, k = {}, N = {}, lr = {:.3e}, z1 = {:.4}, \
             z2 = {:.4} ({:?} calibration) x noise scale {}, clip scale {}, {} scores; \
             epsilon as run: RDP {:.4}, exact {}",
            r.t1,
            r.t2,
            r.params,
            r.k,
            r.records,
            r.lr,
            r.z1_nominal,
            r.z2_nominal,
            r.calibration,
            r.noise_scale,
            r.clip_scale,
            r.scores,
            r.epsilon_rdp_as_run,
            r.epsilon_exact_as_run
                .map_or("none (not DP)".into(), |e| format!("{e:.4}"))
        );
        println!(
            "  {} runs per world; canary coordinates both kept in {:.1}% / {:.1}% of the runs; \
             steps where the canary would not be clipped: {}",
            r.trials,
            100.0 * r.canary_kept_whole.0,
            100.0 * r.canary_kept_whole.1,
            r.canary_unclipped_steps
        );
        if exceeds {
            println!("  the lower bound EXCEEDS the claimed epsilon");
        }
    }
    Ok(if exceeds {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// K audits (master seeds `seed .. seed + K`) of the configured mechanism: how often each
/// estimator's bound, and the reported one, exceeds the claimed epsilon.
fn null(
    cfg: &WhiteBoxConfig,
    seed: u64,
    audits: usize,
    json: bool,
    recipe: &Recipe,
) -> anyhow::Result<ExitCode> {
    let mut counts = [0usize; 4];
    let mut worst = 0.0f64;
    let mut exact = None;
    for s in seed..seed + audits as u64 {
        let r = run_white_box(cfg, s, recipe)?;
        exact = r.epsilon_exact_as_run;
        for (c, b) in counts.iter_mut().zip([
            r.epsilon_lower_bound,
            r.gdp.epsilon_lower_bound,
            r.clopper_pearson.epsilon_lower_bound,
            r.clopper_pearson_support.epsilon_lower_bound,
        ]) {
            *c += usize::from(b > cfg.epsilon);
        }
        worst = worst.max(r.epsilon_lower_bound);
    }
    if json {
        println!(
            "{}",
            serde_json::json!({
                "audits": audits, "epsilon_claimed": cfg.epsilon, "sampling_rate": cfg.sampling_rate,
                "epsilon_exact_as_run": exact, "exceed_reported": counts[0], "exceed_gdp": counts[1],
                "exceed_clopper_pearson": counts[2], "exceed_clopper_pearson_support": counts[3],
                "largest_bound": worst, "confidence": cfg.confidence,
            })
        );
    } else {
        println!(
            "null calibration of the white-box tp-topk audit (q = {}, eps = {}, exact epsilon \
             as run {}): the reported bound exceeded the claim in {} of {} audits (gdp {}, \
             clopper-pearson {}, with the support {}); largest bound {:.4}; allowed share \
             {:.3}",
            cfg.sampling_rate,
            cfg.epsilon,
            exact.map_or("none".into(), |e: f64| format!("{e:.4}")),
            counts[0],
            audits,
            counts[1],
            counts[2],
            counts[3],
            worst,
            1.0 - cfg.confidence
        );
    }
    Ok(ExitCode::SUCCESS)
}
