//! `dpclaims audit --null-audits K`: the null calibration of the audit's estimators
//! (reports/AUDIT.md). K independent audits of the configured mechanism (master seeds
//! `seed .. seed + K`); for an exactly calibrated mechanism each estimator's bound may
//! exceed the claimed epsilon in at most its share `(1 − c)/k` of the audits. The share
//! is judged with a one-sided Clopper–Pearson interval: the calibration fails only when
//! even the interval's lower end is above the allowed share.
use crate::fit::clopper_pearson_lower_one_sided;
use crate::privacy::audit::{self, AuditConfig};
use crate::train::Recipe;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// One estimator's tally over the audits.
pub(super) struct Tally {
    pub name: &'static str,
    pub bounds: Vec<f64>,
    pub confidence: f64,
}

/// The bounds of `audits` independent audits (master seeds `seed ..`), per estimator.
pub(super) struct NullAudits {
    /// The estimators that produced a bound (one-run only on the fast engine).
    pub tallies: Vec<Tally>,
    /// The reported (largest) bound of each audit.
    pub joint: Vec<f64>,
    /// Exact epsilon of the mechanism as run.
    pub achieved: Option<f64>,
    pub engine: audit::AuditEngine,
}

/// Runs the audits of a null calibration (also used by `privacy-report`).
pub(super) fn null_audits(
    cfg: &AuditConfig,
    seed: u64,
    audits: usize,
    recipe: &Recipe,
) -> anyhow::Result<NullAudits> {
    let mut tallies = vec![
        Tally {
            name: "clopper_pearson",
            bounds: Vec::new(),
            confidence: 0.0,
        },
        Tally {
            name: "gdp",
            bounds: Vec::new(),
            confidence: 0.0,
        },
        Tally {
            name: "one_run",
            bounds: Vec::new(),
            confidence: 0.0,
        },
    ];
    let mut joint = Vec::new();
    let mut achieved = None;
    let mut engine = cfg.engine;
    for k in 0..audits as u64 {
        let (r, est) = audit::run_audit_estimates(cfg, seed + k, recipe)?;
        achieved = r.epsilon_achieved;
        engine = r.engine;
        joint.push(est.epsilon_lower_bound);
        tallies[0]
            .bounds
            .push(est.clopper_pearson.epsilon_lower_bound);
        tallies[0].confidence = est.clopper_pearson.confidence;
        tallies[1].bounds.push(est.gdp.epsilon_lower_bound);
        tallies[1].confidence = est.gdp.confidence;
        if let Some(o) = est.one_run {
            tallies[2].bounds.push(o.epsilon_lower_bound);
            tallies[2].confidence = o.confidence;
        }
    }
    tallies.retain(|t| !t.bounds.is_empty());
    Ok(NullAudits {
        tallies,
        joint,
        achieved,
        engine,
    })
}

fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

pub fn null_calibration(
    cfg: &AuditConfig,
    seed: u64,
    audits: usize,
    markdown: Option<&Path>,
    json: bool,
    recipe: &Recipe,
) -> anyhow::Result<ExitCode> {
    if !(1..=100_000).contains(&audits) {
        anyhow::bail!("--null-audits must be in 1..=100000, got {audits}");
    }
    if let Some(f) = markdown {
        crate::report::prepare_output_file(f)?;
    }
    let NullAudits {
        tallies,
        joint,
        achieved,
        engine,
    } = null_audits(cfg, seed, audits, recipe)?;
    let eps = cfg.epsilon;
    let mut rows = Vec::new();
    let mut all_ok = true;
    let joint_t = Tally {
        name: "reported (largest)",
        bounds: joint,
        confidence: cfg.confidence,
    };
    for t in tallies.iter().chain(std::iter::once(&joint_t)) {
        let exceed = t.bounds.iter().filter(|&&b| b > eps).count();
        let allowed = 1.0 - t.confidence;
        let lower = clopper_pearson_lower_one_sided(exceed as u64, t.bounds.len() as u64, 0.95)?;
        let ok = lower <= allowed;
        all_ok &= ok;
        let mut sorted = t.bounds.clone();
        sorted.sort_by(f64::total_cmp);
        rows.push((
            t.name,
            t.confidence,
            exceed,
            allowed,
            lower,
            ok,
            quantile(&sorted, 0.1),
            quantile(&sorted, 0.5),
            quantile(&sorted, 0.9),
        ));
    }
    let mut md = String::new();
    writeln!(
        md,
        "## {} audits of {} ({} engine), epsilon = {eps}, delta = {}, {} trials per data set\n",
        audits,
        cfg.system,
        engine.name(),
        cfg.delta,
        cfg.trials
    )?;
    writeln!(
        md,
        "Noise scale {}, calibration {}; exact epsilon of the mechanism as run: {}. Master seeds {seed}..{}. \
         Joint confidence {}.\n",
        cfg.noise_scale,
        cfg.calibration.name(),
        achieved.map(|a| format!("{a:.4}")).unwrap_or_else(|| "none (sensitivity unbounded)".into()),
        seed + audits as u64 - 1,
        cfg.confidence
    )?;
    writeln!(md, "| estimator | confidence | bound > epsilon | allowed share | CP 95% lower end of the share | calibrated | bound: 10% / median / 90% |")?;
    writeln!(md, "|---|---|---|---|---|---|---|")?;
    for (name, conf, exceed, allowed, lower, ok, q1, q5, q9) in &rows {
        writeln!(
            md,
            "| {name} | {conf:.4} | {exceed}/{audits} | {allowed:.4} | {lower:.4} | {} | {q1:.3} / {q5:.3} / {q9:.3} |",
            if *ok { "yes" } else { "**no**" }
        )?;
    }
    writeln!(md)?;
    if json {
        let doc: Vec<_> = rows
            .iter()
            .map(|(name, conf, exceed, allowed, lower, ok, q1, q5, q9)| {
                serde_json::json!({"estimator": name, "confidence": conf, "exceed": exceed,
                    "audits": audits, "allowed_share": allowed, "share_lower": lower,
                    "calibrated": ok, "bound_q10": q1, "bound_median": q5, "bound_q90": q9})
            })
            .collect();
        println!("{}", serde_json::to_string(&doc)?);
    } else {
        print!("{md}");
    }
    if let Some(f) = markdown {
        crate::report::write_atomic(f, md.as_bytes())?;
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
