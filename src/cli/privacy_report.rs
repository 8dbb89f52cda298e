//! `dpclaims privacy-report`: reports/PRIVACY.md and reports/audit-roc.svg — the
//! accountants side by side on standard cases (with their times), the audit of every
//! built-in system with all its estimators, the null calibration of the estimators, and
//! the canary attack's ROC curve against the trade-off curves of mu-GDP.
//!
//! A measurement page like BENCH.md: it holds wall times, so its bytes differ between
//! runs (everything else in it is deterministic for the seed).
use crate::privacy::audit::{self, AuditConfig, AuditSystem};
use crate::privacy::pld::DEFAULT_WIDTH;
use crate::report::svg::{series_colour, Curve, LogLogPlot};
use crate::train::Recipe;
use clap::Args;
use statrs::distribution::{ContinuousCDF, Normal};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct PrivacyReportArgs {
    /// Directory PRIVACY.md and audit-roc.svg are written to.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Master seed of the audits.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Runs per data set of each audit.
    #[arg(long, default_value_t = 20_000)]
    pub trials: usize,
    /// Audits of the null calibration (2 000 trials each).
    #[arg(long, default_value_t = 200)]
    pub null_audits: usize,
    /// Formats of the ROC figure, comma-separated (as `run --figures`): `svg` always,
    /// `png` and `pdf` beside it on request.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "svg")]
    pub figures: Vec<crate::report::export::FigureFormat>,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
    /// Print the report's estimate against the limits and exit (0 admitted, 2 refused):
    /// nothing runs, nothing is written.
    #[arg(long)]
    pub plan: bool,
}

/// Runs per data set of each audit of the null calibration.
const NULL_TRIALS: usize = 2000;
/// CPU seconds of the accountants' table: the PLD brackets of [`CASES`], three times each
/// (about 1.5 s measured; counted twice).
const ACCOUNTANTS_S: f64 = 3.0 * 3.0;

/// The report's cost on one thread before it runs, with the flag that drives it: the
/// audits of the table ([`settings`]), the ROC's two attacks (each audited, then its
/// scores drawn again), the `--null-audits` audits of [`NULL_TRIALS`] runs, and the
/// accountants.
fn estimate(a: &PrivacyReportArgs) -> (crate::systems::Cost, &'static str, String) {
    use crate::systems::audit::config_cost;
    let table = settings(a.trials)
        .iter()
        .map(|(_, cfg, _)| config_cost(cfg))
        .fold((0.0, 0.0f64), |(s, b), c| (s + c.seconds, b.max(c.bytes)));
    let mut roc = AuditConfig::new(AuditSystem::RfDpgd, 2.0, 1e-5);
    roc.trials = a.trials;
    let roc = config_cost(&roc);
    let mut null = AuditConfig::new(AuditSystem::RfDpgd, 2.0, 1e-5);
    null.trials = NULL_TRIALS;
    let null = config_cost(&null);
    let trials_s = table.0 + 4.0 * roc.seconds;
    let null_s = a.null_audits as f64 * null.seconds;
    let cost = crate::systems::Cost {
        seconds: trials_s + null_s + ACCOUNTANTS_S,
        // The bounds of every null audit (three estimators and the joint one) are kept.
        bytes: table.1.max(2.0 * roc.bytes).max(null.bytes) + 32.0 * a.null_audits as f64,
    };
    if null_s > trials_s {
        (
            cost,
            "--null-audits",
            format!(
                "{} audits of {NULL_TRIALS} runs per data set",
                a.null_audits
            ),
        )
    } else {
        (
            cost,
            "--trials",
            format!("{} runs per data set of each of 10 audits", a.trials),
        )
    }
}

/// Standard cases of the accountant table: `(q, z, steps, delta)`.
const CASES: &[(f64, f64, u64, f64)] = &[
    (1.0, 2.0, 1, 1e-5),
    (1.0, 10.0, 100, 1e-5),
    (1.0, 28.2, 200, 1e-5),
    (0.01, 1.0, 10_000, 1e-5),
    (0.045, 1.1, 660, 1e-5),
    (0.001, 0.8, 100_000, 1e-6),
];

fn ms(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

fn accountants(o: &mut String) -> anyhow::Result<()> {
    writeln!(o, "## Accountants on standard cases\n")?;
    writeln!(
        o,
        "Poisson-subsampled Gaussian, add/remove adjacency (q = 1: full batch, where Gaussian DP \
         is exact). GDP and zCDP apply only at q = 1. PLD: the certified bracket of \
         `dpclaims account --accountant pld` (target width {DEFAULT_WIDTH}). Wall times on this \
         machine, medians of 3 (`perf::privacy`, the same timing as BENCH.md).\n"
    )?;
    writeln!(
        o,
        "| q | z | steps | delta | GDP (exact) | zCDP | RDP | PLD bracket | RDP / PLD upper |"
    )?;
    writeln!(o, "|---|---|---|---|---|---|---|---|---|")?;
    let cell = |v: Option<f64>, t: Option<f64>| match (v, t) {
        (Some(v), Some(t)) => format!("{v:.4} ({})", ms(t)),
        _ => "—".into(),
    };
    for a in crate::perf::privacy::measure_accountants_on(CASES)? {
        writeln!(
            o,
            "| {} | {} | {} | {:e} | {} | {} | {:.4} ({}) | [{:.4}, {:.4}] ({}) | {:.3} |",
            a.q,
            a.z,
            a.steps,
            a.delta,
            cell(a.gdp_epsilon, a.gdp_s),
            cell(a.zcdp_epsilon, a.zcdp_s),
            a.rdp_epsilon,
            ms(a.rdp_s),
            a.pld_lower,
            a.pld_upper,
            ms(a.pld_s),
            a.rdp_epsilon / a.pld_upper
        )?;
    }
    writeln!(o)?;
    Ok(())
}

/// `(label, config, recipe)` of the audited settings.
fn settings(trials: usize) -> Vec<(&'static str, AuditConfig, Recipe)> {
    let base = |s| {
        let mut c = AuditConfig::new(s, 2.0, 1e-5);
        c.trials = trials;
        c
    };
    let mut quarter = base(AuditSystem::RfDpgd);
    quarter.noise_scale = 0.25;
    let mut kappa1 = base(AuditSystem::FeatureLearningSecondLayer);
    kappa1.kappa = 1.0;
    let mut tp_quarter = base(AuditSystem::TpTopk);
    tp_quarter.noise_scale = 0.25;
    // The fault topk-scores-pre-noise, through the recipe's door.
    let mut pre_noise = Recipe::PAPER;
    pre_noise.dpsgd.scores = crate::train::dpsgd::ScoreSource::PreNoise;
    let paper = |(label, cfg)| (label, cfg, Recipe::PAPER);
    let mut v: Vec<_> = [
        ("rf-dpgd, exact calibration", base(AuditSystem::RfDpgd)),
        ("rf-dpgd, a quarter of the noise (control)", quarter),
        (
            "second layer, exact (kappa 2)",
            base(AuditSystem::FeatureLearningSecondLayer),
        ),
        ("second layer, kappa 1 (as printed)", kappa1),
        (
            "first layer (eps_B = 0)",
            base(AuditSystem::FeatureLearningFirstLayer),
        ),
        (
            "tp-topk, RDP two-phase calibration",
            base(AuditSystem::TpTopk),
        ),
        ("tp-topk, a quarter of the noise (control)", tp_quarter),
    ]
    .into_iter()
    .map(paper)
    .collect();
    v.push((
        "tp-topk, warm-up scores before the noise (control)",
        base(AuditSystem::TpTopk),
        pre_noise,
    ));
    v
}

fn audits(o: &mut String, seed: u64, trials: usize) -> anyhow::Result<()> {
    writeln!(o, "## Audits of the built-in systems (claimed epsilon 2, delta 1e-5, {trials} runs per data set, seed {seed})\n")?;
    writeln!(
        o,
        "Each estimator at confidence 1 - 0.05/k (k estimators), so the reported bound (the \
         largest) holds at 0.95. The one-run estimator needs the exact law of the scores (fast \
         engine). A bound above the mechanism's exact epsilon would be a bug of the audit; a \
         bound above the claimed 2 refutes the claim. TP-TopK (`privacy::audit::tp_topk`): a \
         gradient canary through both phases, z1 and z2 from the RDP two-phase calibration, \
         direct engine; its GDP estimator reads the warm-up statistic (exactly Gaussian), its \
         exact epsilon is that of a canary in the support every time, and with pre-noise \
         scores the mechanism is not DP (none).\n"
    )?;
    writeln!(o, "| setting | engine | exact epsilon as run | Clopper-Pearson | GDP (mu >= , KS p) | one run | reported |")?;
    writeln!(o, "|---|---|---|---|---|---|---|")?;
    for (label, cfg, recipe) in settings(trials) {
        let (r, e) = audit::run_audit_estimates(&cfg, seed, &recipe)?;
        writeln!(
            o,
            "| {label} | {} | {} | {:.3} | {:.3} ({:.3}, {:.2}) | {} | **{:.3}** |",
            r.engine.name(),
            r.epsilon_achieved
                .map_or("none".into(), |v| format!("{v:.3}")),
            e.clopper_pearson.epsilon_lower_bound,
            e.gdp.epsilon_lower_bound,
            e.gdp.mu_lower,
            e.gdp.fit_p_value,
            e.one_run
                .as_ref()
                .map_or("—".into(), |x| format!("{:.3}", x.epsilon_lower_bound)),
            e.epsilon_lower_bound
        )?;
    }
    writeln!(o)?;
    Ok(())
}

fn null_calibration(o: &mut String, seed: u64, audits: usize) -> anyhow::Result<()> {
    let mut cfg = AuditConfig::new(AuditSystem::RfDpgd, 2.0, 1e-5);
    cfg.trials = 2000;
    let runs = super::audit_null::null_audits(&cfg, seed, audits, &crate::train::Recipe::PAPER)?;
    let above = |name: &str| {
        runs.tallies
            .iter()
            .find(|t| t.name == name)
            .map_or(0, |t| t.bounds.iter().filter(|&&b| b > cfg.epsilon).count())
    };
    let (cp, gdp, one) = (above("clopper_pearson"), above("gdp"), above("one_run"));
    writeln!(o, "## Null calibration\n")?;
    writeln!(
        o,
        "{audits} audits of rf-dpgd calibrated exactly to epsilon 2 (2 000 runs per data set, \
         seeds {seed}..{}): bounds above epsilon — Clopper-Pearson {cp}, GDP {gdp}, one run \
         {one} (each may exceed in at most its share 0.0167 of the audits). The full tables, \
         with 20 000 runs and the negative control, are in AUDIT.md (`make audit-report`).\n",
        seed + audits as u64 - 1
    )?;
    Ok(())
}

/// The empirical ROC of the canary attack (all runs of both worlds, thresholds at the
/// canary world's quantiles) against `TPR = Phi(Phi^-1(FPR) + mu)`, the trade-off curve of
/// mu-GDP (Dong, Roth & Su 2019, Eq. 2.2), at the accounted mu and at the audited mu.
fn roc_svg(seed: u64, trials: usize) -> anyhow::Result<(String, String)> {
    let std = Normal::standard();
    let mut plot = LogLogPlot::new(
        "Canary attack on rf-dpgd (ε = 2, δ = 1e-5) against μ-GDP trade-off curves",
        "false positive rate",
        "true positive rate",
    );
    plot.subtitle = "empirical ROC (solid) against the trade-off curves of mu-GDP (dashed: \
        accounted mu, dotted: audited lower bound)"
        .into();
    let mut note = String::new();
    // Drawn as lines: an ROC is a curve, and 60 markers per attack hid the GDP curves.
    for (i, (label, scale)) in [("exact calibration", 1.0), ("a quarter of the noise", 0.25)]
        .into_iter()
        .enumerate()
    {
        let colour = series_colour(i);
        let mut cfg = AuditConfig::new(AuditSystem::RfDpgd, 2.0, 1e-5);
        cfg.trials = trials;
        cfg.noise_scale = scale;
        let (r, e) = audit::run_audit_estimates(&cfg, seed, &Recipe::PAPER)?;
        let s = audit::audit_scores(&cfg, seed, &Recipe::PAPER)?;
        let mut replaced = s.replaced.clone();
        replaced.sort_by(f64::total_cmp);
        let n0 = replaced.len() as f64;
        let mut pts = Vec::new();
        for k in 1..=60 {
            // FPR from 1e-4 to 0.5, log-spaced.
            let fpr_target = 1e-4 * (0.5f64 / 1e-4).powf((k - 1) as f64 / 59.0);
            let idx = ((1.0 - fpr_target) * n0).floor() as usize;
            let t = replaced[idx.min(replaced.len() - 1)];
            let fpr = s.replaced.iter().filter(|&&v| v > t).count() as f64 / n0;
            let tpr = s.canary.iter().filter(|&&v| v > t).count() as f64 / s.canary.len() as f64;
            if fpr > 0.0 && tpr > 0.0 {
                pts.push((fpr, tpr));
            }
        }
        plot.curves.push(Curve {
            label: format!("attack, {label}"),
            points: pts,
            colour,
            dash: None,
            width: 2.0,
        });
        let curve = |mu: f64| -> Vec<(f64, f64)> {
            (0..40)
                .map(|k| {
                    let fpr = 1e-4 * (0.5f64 / 1e-4).powf(k as f64 / 39.0);
                    (fpr, std.cdf(std.inverse_cdf(fpr) + mu))
                })
                .collect()
        };
        if let Some(mu) = r.mu {
            plot.curves.push(Curve {
                label: format!("{mu:.2}-GDP (accounted, {label})"),
                points: curve(mu),
                colour,
                dash: Some("6 3"),
                width: 1.5,
            });
        }
        plot.curves.push(Curve {
            label: format!("{:.2}-GDP (audited lower bound, {label})", e.gdp.mu_lower),
            points: curve(e.gdp.mu_lower),
            colour,
            dash: Some("2 3"),
            width: 1.5,
        });
        let _ = write!(
            note,
            "{label}: accounted mu {}, audited mu >= {:.3} (point estimate {:.3}); ",
            r.mu.map_or("none".into(), |m| format!("{m:.3}")),
            e.gdp.mu_lower,
            e.gdp.mu_hat
        );
    }
    plot.curves.push(Curve {
        label: "random guess (TPR = FPR)".into(),
        points: vec![(1e-4, 1e-4), (0.5, 0.5)],
        colour: "#BBBBBB",
        dash: None,
        width: 1.0,
    });
    Ok((plot.render(), note))
}

pub fn run(a: &PrivacyReportArgs) -> anyhow::Result<ExitCode> {
    super::alias::guard(&[super::alias::Output::Dir("--out", &a.out)], Vec::new())?;
    // Through the planner before anything runs or is written (each audit's runs are
    // parallel).
    let (cost, field, detail) = estimate(a);
    let budget = a.budget.budget();
    let admitted = budget.check_command("privacy-report", cost, f64::INFINITY, field, detail);
    if a.plan {
        let limits = budget.limits()?;
        println!(
            "`dpclaims privacy-report`: estimated work {:.1} s of cpu, {:.1} s on {} threads, \
             memory {}, at most; {}",
            cost.seconds,
            cost.seconds / limits.threads as f64,
            limits.threads,
            crate::pipeline::estimate::gb(cost.bytes),
            if admitted.is_ok() {
                "admitted"
            } else {
                "refused"
            }
        );
    }
    admitted?;
    if a.plan {
        return Ok(ExitCode::SUCCESS);
    }
    crate::report::prepare_output_dir(&a.out)?;
    let mut o = String::new();
    writeln!(o, "# Privacy: accountants and audits\n")?;
    writeln!(
        o,
        "*Generated by `dpclaims privacy-report` (`make privacy-report`). Holds wall times: \
         a measurement page like BENCH.md. Do not edit.*\n"
    )?;
    accountants(&mut o)?;
    audits(&mut o, a.seed, a.trials)?;
    null_calibration(&mut o, a.seed, a.null_audits)?;
    let (svg, note) = roc_svg(a.seed, a.trials)?;
    writeln!(o, "## ROC of the canary attack\n")?;
    writeln!(
        o,
        "![ROC](audit-roc.svg)\n\nEmpirical ROC of the threshold attack on rf-dpgd ({} runs per \
         data set, log axes; solid: the attack, dashed: the accounted mu, dotted: the audited \
         lower bound) against the trade-off curves TPR = Phi(Phi^-1(FPR) + mu) of mu-GDP. \
         {note}\n",
        a.trials
    )?;
    crate::report::write_atomic(&a.out.join("audit-roc.svg"), svg.as_bytes())?;
    for (name, bytes) in crate::report::export::exports("audit-roc", &svg, &a.figures)? {
        crate::report::write_atomic(&a.out.join(name), &bytes)?;
    }
    crate::report::write_atomic(&a.out.join("PRIVACY.md"), o.as_bytes())?;
    println!("written {}", a.out.join("PRIVACY.md").display());
    Ok(ExitCode::SUCCESS)
}
