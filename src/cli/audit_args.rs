//! The arguments of `dpclaims audit` ([`AuditArgs`]), with the audited system
//! ([`AuditTarget`]) and the options of an external core ([`ExternalAuditArgs`]): read by
//! the built-in audit ([`super::privacy`]), the white-box audit
//! ([`super::audit_white_box`]) and the external one ([`super::external`]), which import
//! this file and not each other.
use crate::privacy::{self, audit::AuditSystem};
use clap::Args;

/// The audited system: built in, or an external core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditTarget {
    Builtin(AuditSystem),
    External,
}

/// `--system` of `audit`.
pub fn parse_audit_target(s: &str) -> Result<AuditTarget, String> {
    if s == "external" {
        return Ok(AuditTarget::External);
    }
    s.parse::<AuditSystem>()
        .map(AuditTarget::Builtin)
        .map_err(|e| format!("{e}, or external"))
}

/// The options of `audit --system external`.
#[derive(Args, Debug, Default)]
pub struct ExternalAuditArgs {
    /// The external core's command line (split at whitespace), run in the current
    /// directory; with --system external.
    #[arg(long)]
    pub command: Option<String>,
    /// A parameter of every request, `name=number` (repeatable); with --system external.
    #[arg(long = "param", value_name = "NAME=NUMBER")]
    pub params: Vec<String>,
    /// An option of every request, `name=value` (repeatable); with --system external.
    #[arg(long = "option", value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// Time limit of one answer of the external core, in seconds.
    #[arg(long, default_value_t = 60.0)]
    pub timeout_s: f64,
}

/// Arguments of `dpclaims audit` (see [`crate::privacy::audit`] for the construction).
#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 when the certified lower bound is at most the claimed \
epsilon (no violation found; an audit never proves privacy); 1 when it exceeds the claimed \
epsilon (the claim is refuted at the audit's confidence; with --null-audits, when a null \
audit's check fails; the white-box null calibration only reports its counts, exit 0); 2 on \
an error (bad arguments, a core that fails)."
)]
pub struct AuditArgs {
    /// Audited system: rf-dpgd, feature-learning-second-layer,
    /// feature-learning-first-layer, tp-topk, or external (a core speaking dpclaims-external/2,
    /// started with --command).
    #[arg(long, value_parser = parse_audit_target)]
    pub system: AuditTarget,
    /// Claimed epsilon (> 0).
    #[arg(long, allow_negative_numbers = true)]
    pub epsilon: f64,
    /// delta of the claim, in (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    pub delta: f64,
    /// Runs per data set (>= 2); the mechanism runs twice as many times in all.
    #[arg(long, default_value_t = 20_000)]
    pub trials: usize,
    /// Multiplier of the calibrated noise (> 0); 0.25 is a negative control.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub noise_scale: f64,
    /// Joint confidence of the Clopper-Pearson bounds, in (0, 1).
    #[arg(long, default_value_t = 0.95, allow_negative_numbers = true)]
    pub confidence: f64,
    /// Master seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Calibration of sigma. `paper` (the default): the audited paper's own — rf-dpgd:
    /// Prop. 2.2 of privacy-for-free (kappa 2); feature-learning-second-layer: the blog's
    /// sigma_a (Prop. 2.2's formula with the printed kappa 1 unless --kappa is given);
    /// the first layer's sigma_W and tp-topk's RDP two-phase calibration are fixed by their
    /// papers. `exact`: the tool's exact Gaussian-DP calibration (kappa 2), the tightest
    /// mechanism a claim allows (the default of --null-audits, whose null it is).
    /// `prop-2-2`: Prop. 2.2 at the given kappa.
    #[arg(long, default_value = "paper", value_parser = ["paper", "exact", "prop-2-2"])]
    pub calibration: String,
    /// Engine: auto, fast (exact law of the score) or direct (real training runs).
    #[arg(long, default_value = "auto", value_parser = <privacy::audit::AuditEngine as std::str::FromStr>::from_str)]
    pub engine: privacy::audit::AuditEngine,
    /// Input dimension d.
    #[arg(long)]
    pub d: Option<usize>,
    /// Samples n (canary included).
    #[arg(long)]
    pub n: Option<usize>,
    /// Features / neurons p (>= n).
    #[arg(long)]
    pub p: Option<usize>,
    /// DP-GD steps T.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Noise constant kappa in sqrt(eta) kappa C sigma / n (2: replace-one; the blog prints 1).
    #[arg(long, allow_negative_numbers = true)]
    pub kappa: Option<f64>,
    /// Clip rule of the DP-GD systems: divide, multiply (as printed in the blog) or none.
    #[arg(long, value_parser = privacy::audit::parse_clip_rule)]
    pub clip_rule: Option<crate::train::dpgd::ClipRule>,
    /// Ridge lambda of the second layer.
    #[arg(long, allow_negative_numbers = true)]
    pub ridge: Option<f64>,
    /// eps_B of Assumption 4's sigma_W.
    #[arg(long, allow_negative_numbers = true)]
    pub eps_b: Option<f64>,
    /// tp-topk: what the warm-up scores read: privatized (the paper, Sec. 3.2) or
    /// pre-noise (the clipped sum before the noise: the ranking leaks; a negative
    /// control, the fault topk-scores-pre-noise).
    #[arg(long, default_value = "privatized", value_parser = ["privatized", "pre-noise"])]
    pub scores: String,
    /// Null calibration: run K independent audits (master seeds seed..seed+K) and count
    /// how often each estimator's bound exceeds the claimed epsilon (for an exactly
    /// calibrated mechanism, at most its share of 1 - confidence).
    #[arg(long, value_name = "K")]
    pub null_audits: Option<usize>,
    /// With --null-audits: write the table as Markdown to this file (reports/AUDIT.md).
    #[arg(long, value_name = "FILE", requires = "null_audits")]
    pub markdown: Option<std::path::PathBuf>,
    /// tp-topk: audit the real DP-SGD step white-box (every released noisy gradient,
    /// a Dirac gradient canary, the likelihood-ratio statistic; privacy::audit::white_box).
    /// The default for tp-topk (the audit its scorecard relies on); the flag is kept.
    #[arg(long)]
    pub white_box: bool,
    /// tp-topk: the black-box canary audit of the final model instead of the white-box
    /// one. Weaker: it misses half the calibrated noise at eps <= 4.
    #[arg(long, conflicts_with_all = ["white_box", "sampling_rate", "clip_scale", "null"])]
    pub black_box: bool,
    /// White-box tp-topk audit: Poisson sampling rate q in (0, 1] (default 1).
    #[arg(long, allow_negative_numbers = true)]
    pub sampling_rate: Option<f64>,
    /// White-box tp-topk audit: the step clips at this multiple of C while its noise stays
    /// z C (2: the sensitivity off by 2; default 1).
    #[arg(long, allow_negative_numbers = true)]
    pub clip_scale: Option<f64>,
    /// White-box tp-topk audit: calibrate the noise exactly (Gaussian DP at q = 1, PLD at
    /// q < 1) instead of with the paper's RDP accountant: the audit's null.
    #[arg(long)]
    pub null: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
    #[command(flatten)]
    pub external: ExternalAuditArgs,
}
