//! `dpclaims account`, `dpclaims calibrate`, `dpclaims audit`.
//!
//! Thin wrappers: parse the arguments, call [`crate::privacy`], print one line (or
//! one JSON document with `--json`). Library errors (bad q, delta, z, steps) come back
//! as `Err` and are printed by `cli::main` as `error: ...` with exit status 2; a
//! malformed `--phase` is rejected by clap (also exit status 2).
pub use super::audit_args::AuditArgs;
use super::audit_args::AuditTarget;
use crate::privacy::{self, Accountant, AccountantRecipe, Phase};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::process::ExitCode;

/// Accountant choice on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AccountantArg {
    /// Exact Gaussian DP (full batch only: q = 1).
    Gdp,
    /// Rényi DP, Poisson-subsampled Gaussian, improved conversion.
    Rdp,
    /// Zero-concentrated DP (full batch only: q = 1).
    Zcdp,
    /// Privacy loss distribution of the Poisson-subsampled Gaussian: a certified
    /// bracket [lower, upper] (the upper end is the answer).
    Pld,
    /// The moments accountant of Abadi et al. 2016 (integer lambda = 1..32, their tail
    /// bound): a paper's own method, looser than rdp (account only, one phase).
    Moments,
    /// Rényi DP on TF Privacy's default orders with the classic conversion (Mironov
    /// 2017, Prop. 3), as papers of 2017-2020 report it (account only, one phase).
    RdpClassic,
}

impl AccountantArg {
    /// The older accountants `account` prints beside the current ones (one phase): their
    /// function and name; `None` for the accountants of [`Accountant`].
    fn older(self) -> Option<(OlderAccountant, &'static str)> {
        match self {
            AccountantArg::Moments => Some((privacy::moments_accountant_epsilon, "moments")),
            AccountantArg::RdpClassic => Some((privacy::rdp_classic_epsilon, "rdp-classic")),
            _ => None,
        }
    }
}

/// The older accountants ([`AccountantArg::older`]) are handled before this conversion
/// (`account` prints them, `calibrate` refuses them); they never reach it as themselves.
impl From<AccountantArg> for Accountant {
    fn from(a: AccountantArg) -> Self {
        match a {
            AccountantArg::Gdp => Accountant::Gdp,
            AccountantArg::Rdp | AccountantArg::Moments | AccountantArg::RdpClassic => {
                Accountant::Rdp
            }
            AccountantArg::Zcdp => Accountant::Zcdp,
            AccountantArg::Pld => Accountant::Pld,
        }
    }
}

/// An older accountant of one phase: `(q, z, steps, delta)` to epsilon.
type OlderAccountant = fn(f64, f64, u64, f64) -> Result<f64, privacy::PrivacyError>;

/// `dpclaims account --accountant moments|rdp-classic`: an older accountant's epsilon of
/// one phase.
fn account_older(
    args: &AccountArgs,
    (f, name): (OlderAccountant, &str),
) -> anyhow::Result<ExitCode> {
    let [phase] = args.phases.as_slice() else {
        anyhow::bail!(
            "--accountant moments and rdp-classic take one --phase (got {})",
            args.phases.len()
        );
    };
    let eps = f(
        phase.sampling_rate,
        phase.noise_multiplier,
        phase.steps,
        args.delta,
    )?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({"epsilon": eps, "accountant": name, "order": null})
        );
    } else {
        println!("epsilon = {eps} at delta = {} ({name})", args.delta);
    }
    Ok(ExitCode::SUCCESS)
}

/// Parse `Q,Z,STEPS` (e.g. `0.01,1.1,6000`). Values are range-checked by the library.
fn parse_phase(s: &str) -> Result<Phase, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(format!(
            "expected Q,Z,STEPS (three comma-separated values), got `{s}`"
        ));
    }
    let q: f64 = parts[0]
        .parse()
        .map_err(|_| format!("sampling rate Q `{}` is not a number", parts[0]))?;
    let z: f64 = parts[1]
        .parse()
        .map_err(|_| format!("noise multiplier Z `{}` is not a number", parts[1]))?;
    let steps: u64 = parts[2]
        .parse()
        .map_err(|_| format!("STEPS `{}` is not a non-negative integer", parts[2]))?;
    Ok(Phase::new(q, z, steps))
}

/// Arguments of `dpclaims account`.
#[derive(Args, Debug)]
pub struct AccountArgs {
    /// Accountant: gdp (exact, q = 1 only), rdp, zcdp (q = 1 only).
    #[arg(long, value_enum)]
    pub accountant: AccountantArg,
    /// Target delta, in (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    pub delta: f64,
    /// A phase `Q,Z,STEPS`: sampling rate, noise multiplier, number of steps.
    /// Repeat for a composition of phases.
    #[arg(
        long = "phase",
        value_name = "Q,Z,STEPS",
        value_parser = parse_phase,
        required = true,
        allow_hyphen_values = true
    )]
    pub phases: Vec<Phase>,
    /// Target width of the PLD bracket (pld only; the achieved width is printed).
    #[arg(long, default_value_t = privacy::pld::DEFAULT_WIDTH, allow_negative_numbers = true)]
    pub width: f64,
    /// Print one JSON document `{"epsilon", "accountant", "order"}` on stdout (pld:
    /// `{"epsilon", "epsilon_lower", "epsilon_upper", "accountant", "discretisation"}`).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `dpclaims calibrate`.
#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Accountant: gdp (exact, q = 1 only), rdp, zcdp (q = 1 only).
    #[arg(long, value_enum)]
    pub accountant: AccountantArg,
    /// Target delta, in (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    pub delta: f64,
    /// Target epsilon (> 0).
    #[arg(long, allow_negative_numbers = true)]
    pub target_epsilon: f64,
    /// Poisson sampling rate q, in (0, 1].
    #[arg(long, allow_negative_numbers = true)]
    pub sampling_rate: f64,
    /// Number of steps.
    #[arg(long)]
    pub steps: u64,
    /// Print one JSON document `{"noise_multiplier", "epsilon"}` on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct AccountOutput {
    epsilon: f64,
    accountant: &'static str,
    order: Option<f64>,
}

#[derive(Serialize)]
struct PldOutput<'a> {
    epsilon: f64,
    epsilon_lower: f64,
    epsilon_upper: f64,
    accountant: &'static str,
    discretisation: &'a privacy::pld::Discretisation,
}

/// `dpclaims account --accountant pld`: the certified bracket.
fn account_pld(args: &AccountArgs) -> anyhow::Result<ExitCode> {
    let b = privacy::pld::pld_epsilon(&args.phases, args.delta, args.width)?;
    if args.json {
        let doc = PldOutput {
            epsilon: b.epsilon_upper,
            epsilon_lower: b.epsilon_lower,
            epsilon_upper: b.epsilon_upper,
            accountant: "pld",
            discretisation: &b.discretisation,
        };
        println!("{}", serde_json::to_string(&doc)?);
    } else {
        println!(
            "ε ∈ [{}, {}] at delta = {} (pld, width {:.2e}, grid interval {:.3e}, {} points)",
            b.epsilon_lower,
            b.epsilon_upper,
            args.delta,
            b.width(),
            b.discretisation.interval,
            b.discretisation.points
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn account(args: &AccountArgs) -> anyhow::Result<ExitCode> {
    if args.accountant == AccountantArg::Pld {
        return account_pld(args);
    }
    if let Some(older) = args.accountant.older() {
        return account_older(args, older);
    }
    let acc = Accountant::from(args.accountant);
    let out = privacy::epsilon(acc, &args.phases, args.delta, &AccountantRecipe::PAPER)?;
    if args.json {
        let doc = AccountOutput {
            epsilon: out.epsilon,
            accountant: acc.name(),
            order: out.order,
        };
        println!("{}", serde_json::to_string(&doc)?);
    } else {
        match out.order {
            Some(order) => println!(
                "epsilon = {} at delta = {} ({acc}, optimal order {order})",
                out.epsilon, args.delta
            ),
            None => println!(
                "epsilon = {} at delta = {} ({acc})",
                out.epsilon, args.delta
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn calibrate(args: &CalibrateArgs) -> anyhow::Result<ExitCode> {
    if args.accountant.older().is_some() {
        anyhow::bail!(
            "--accountant moments and rdp-classic are for `account` (a paper's own numbers); \
             calibrate with rdp or pld"
        );
    }
    let acc = Accountant::from(args.accountant);
    let out = privacy::calibrate(
        acc,
        args.target_epsilon,
        args.delta,
        args.sampling_rate,
        args.steps,
        &AccountantRecipe::PAPER,
    )?;
    if args.json {
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!(
            "noise multiplier = {} (epsilon = {} <= {} at delta = {}, {acc})",
            out.noise_multiplier, out.epsilon, args.target_epsilon, args.delta
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn audit(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    use privacy::audit;
    use std::fmt::Write as _;
    if let Some(m) = &args.markdown {
        super::alias::guard(&[super::alias::Output::File("--markdown", m)], Vec::new())?;
    }
    let system = match args.system {
        AuditTarget::External => return super::external::audit(args),
        AuditTarget::Builtin(s) => s,
    };
    // tp-topk is audited white-box unless --black-box asks for the weaker audit.
    let white_box = args.white_box || (system == audit::AuditSystem::TpTopk && !args.black_box);
    if !white_box && (args.sampling_rate.is_some() || args.clip_scale.is_some() || args.null) {
        anyhow::bail!(
            "--sampling-rate, --clip-scale and --null apply to the white-box tp-topk audit \
             (--system tp-topk)"
        );
    }
    if args.black_box && system != audit::AuditSystem::TpTopk {
        anyhow::bail!(
            "--black-box applies to --system tp-topk (the other systems' audits are one kind)"
        );
    }
    if white_box {
        if system != audit::AuditSystem::TpTopk {
            anyhow::bail!("--white-box applies to --system tp-topk (rf-dpgd: --engine direct)");
        }
        let mut recipe = crate::train::Recipe::PAPER;
        if args.scores == "pre-noise" {
            recipe.dpsgd.scores = crate::train::dpsgd::ScoreSource::PreNoise;
        }
        return super::audit_white_box::run(args, &recipe);
    }
    let mut cfg = audit::AuditConfig::new(system, args.epsilon, args.delta);
    cfg.trials = args.trials;
    cfg.noise_scale = args.noise_scale;
    cfg.confidence = args.confidence;
    // The paper's calibration unless asked otherwise (a null calibration's default is the
    // exact one: its mechanism must be exactly calibrated).
    let paper = args.calibration == "paper";
    cfg.calibration = match args.calibration.as_str() {
        "prop-2-2" => audit::Calibration::Prop22,
        "paper" if args.null_audits.is_none() => match system {
            audit::AuditSystem::RfDpgd | audit::AuditSystem::FeatureLearningSecondLayer => {
                audit::Calibration::Prop22
            }
            _ => audit::Calibration::Exact,
        },
        _ => audit::Calibration::Exact,
    };
    cfg.engine = args.engine;
    cfg.d = args.d.unwrap_or(cfg.d);
    cfg.n = args.n.unwrap_or(cfg.n);
    cfg.p = args.p.unwrap_or(cfg.p);
    cfg.steps = args.steps.unwrap_or(cfg.steps);
    cfg.kappa = args.kappa.unwrap_or(
        if paper
            && args.null_audits.is_none()
            && system == audit::AuditSystem::FeatureLearningSecondLayer
        {
            1.0 // the blog's sigma_a prints C_a/n: kappa 1
        } else {
            cfg.kappa
        },
    );
    cfg.clip_rule = args.clip_rule.unwrap_or(cfg.clip_rule);
    cfg.ridge = args.ridge.unwrap_or(cfg.ridge);
    cfg.eps_b = args.eps_b.unwrap_or(cfg.eps_b);
    cfg.validate()?;
    let mut recipe = crate::train::Recipe::PAPER;
    if args.scores == "pre-noise" {
        if system != audit::AuditSystem::TpTopk {
            anyhow::bail!("--scores pre-noise applies to --system tp-topk only");
        }
        recipe.dpsgd.scores = crate::train::dpsgd::ScoreSource::PreNoise;
    }
    // A null calibration runs `--null-audits` audits, one after the other.
    let audits = args.null_audits.unwrap_or(1).max(1) as f64;
    let one = crate::systems::audit::config_cost(&cfg);
    let cost = crate::systems::Cost {
        seconds: one.seconds * audits,
        bytes: one.bytes + 32.0 * audits,
    };
    args.budget.budget().check_command(
        "audit",
        cost,
        cfg.trials as f64,
        "--trials, --d, --n, --p, --steps, --null-audits",
        format!(
            "trials = {}, d = {}, n = {}, p = {}, steps = {}, audits = {audits}",
            cfg.trials, cfg.d, cfg.n, cfg.p, cfg.steps
        ),
    )?;
    if let Some(k) = args.null_audits {
        return super::audit_null::null_calibration(
            &cfg,
            args.seed,
            k,
            args.markdown.as_deref(),
            args.json,
            &recipe,
        );
    }
    let (r, est) = audit::run_audit_estimates(&cfg, args.seed, &recipe)?;
    if args.json {
        // The reported bound is the largest estimator's, at the joint confidence; the
        // Clopper-Pearson fields (tpr, fpr, threshold, ...) are at its share of it.
        let mut doc = serde_json::to_value(&r)?;
        doc["epsilon_lower_bound"] = serde_json::json!(est.epsilon_lower_bound);
        doc["confidence"] = serde_json::json!(est.confidence);
        doc["estimators"] = serde_json::json!({
            "clopper_pearson": est.clopper_pearson,
            "gdp": est.gdp,
            "one_run": est.one_run,
        });
        println!("{}", serde_json::to_string(&doc)?);
        return Ok(exceeds(est.epsilon_lower_bound, r.epsilon_claimed));
    }
    let mut s = String::new();
    writeln!(
        s,
        "audit of {} ({} engine{}): epsilon_lower_bound = {:.4} vs claimed epsilon = {} \
         (delta = {}, confidence {})",
        r.system,
        r.engine.name(),
        r.calibration
            .map(|c| format!(", {} calibration", c.name()))
            .unwrap_or_default(),
        est.epsilon_lower_bound,
        r.epsilon_claimed,
        r.delta,
        est.confidence
    )?;
    writeln!(
        s,
        "  estimators (each at confidence {:.4}): clopper-pearson {:.4}; gdp {:.4} \
         (mu >= {:.4}, mu_hat {:.4}, normality KS p = {:.3}){}",
        est.clopper_pearson.confidence,
        est.clopper_pearson.epsilon_lower_bound,
        est.gdp.epsilon_lower_bound,
        est.gdp.mu_lower,
        est.gdp.mu_hat,
        est.gdp.fit_p_value,
        est.one_run
            .as_ref()
            .map(|o| format!(
                "; one-run {:.4} ({} canaries, {} of {} guesses right)",
                o.epsilon_lower_bound, o.canaries, o.correct, o.guesses
            ))
            .unwrap_or_default()
    )?;
    writeln!(
        s,
        "  {} runs per data set, {} measured: threshold {:.6}, TPR = {:.5} (>= {:.5}), \
         FPR = {:.5} (<= {:.5})",
        r.trials, r.measured, r.threshold, r.tpr, r.tpr_lower, r.fpr, r.fpr_upper
    )?;
    match (r.mu, r.epsilon_achieved) {
        (Some(mu), Some(e)) => writeln!(
            s,
            "  mechanism as run: sigma = {:.6} (noise scale {}), noise multiplier {:.4}, \
             mu = {mu:.4}, exact epsilon = {e:.4}",
            r.sigma, r.noise_scale, r.noise_multiplier
        )?,
        _ => writeln!(
            s,
            "  mechanism as run: sigma = {:.6} (noise scale {}); the clip rule does not \
             bound the sensitivity, so no epsilon is accounted",
            r.sigma, r.noise_scale
        )?,
    }
    if let Some(tp) = &r.tp_topk {
        writeln!(
            s,
            "  tp-topk: T1 = {}, T2 = {}, P = {}, k = {}, N = {}, z1 = {:.4}, z2 = {:.4} ({} \
             scores), RDP epsilon of the schedule {:.4}, warm-up mu {:.4}; canary coordinate \
             in the support in {:.1}% (canary) / {:.1}% (replaced) of the runs",
            tp.t1,
            tp.t2,
            tp.p,
            tp.k,
            tp.n,
            tp.z1,
            tp.z2,
            tp.scores,
            tp.epsilon_rdp,
            tp.mu_warmup,
            100.0 * tp.in_support_canary,
            100.0 * tp.in_support_replaced
        )?;
    }
    if let Some(o) = r.overnoise_ratio {
        writeln!(s, "  sigma / exactly calibrated sigma = {o:.4}")?;
    }
    if est.epsilon_lower_bound > r.epsilon_claimed {
        writeln!(s, "  the lower bound EXCEEDS the claimed epsilon")?;
    }
    print!("{s}");
    Ok(exceeds(est.epsilon_lower_bound, r.epsilon_claimed))
}

/// Exit status of an audit: 1 when the certified lower bound exceeds the claimed epsilon
/// (the claim is refuted at the audit's confidence), 0 otherwise.
fn exceeds(bound: f64, claimed: f64) -> ExitCode {
    if bound > claimed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
