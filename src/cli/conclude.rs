//! The flags a run's conclusion and budget take (`run`, `merge`, `stability`), mapped to
//! the driver's values ([`crate::pipeline::conclude`], [`crate::pipeline::budget`]).
use crate::pipeline::budget::Budget;
use crate::pipeline::conclude::Baseline;
use clap::Args;
use std::path::PathBuf;

/// Where the regression baseline is (the insta snapshots), or none.
#[derive(Args, Debug, Clone)]
pub struct BaselineArgs {
    /// The regression baseline: the insta snapshots of `tests/claims.rs` (compared when
    /// they record this run's profile and seed).
    #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("tests/snapshots"))]
    pub baseline: PathBuf,
    /// Do not compare with the regression baseline.
    #[arg(long)]
    pub no_baseline: bool,
    /// A claim that has no snapshot in the baseline fails the run (exit 1), as insta
    /// fails a missing snapshot under CI: `make run` in CI (`.ci/run`) passes it, so a
    /// new claim enters the baseline in the commit that adds it.
    #[arg(long, conflicts_with = "no_baseline")]
    pub require_baseline: bool,
}

/// The work and memory budget of a run: estimates above it are refused before anything
/// runs ([`crate::plan::estimate`]).
#[derive(Args, Debug, Clone, Default)]
pub struct BudgetArgs {
    /// Refuse to start when the estimated wall time exceeds this many hours (default 24).
    #[arg(
        long,
        value_name = "H",
        env = "DPCLAIMS_MAX_HOURS",
        allow_negative_numbers = true
    )]
    pub max_hours: Option<f64>,
    /// Refuse to start when a claim's estimated memory exceeds this many GB (default
    /// half of this machine's memory, from /proc/meminfo, or the cgroup memory limit or
    /// `ulimit -v` when smaller).
    #[arg(
        long,
        value_name = "GB",
        env = "DPCLAIMS_MAX_MEMORY_GB",
        allow_negative_numbers = true
    )]
    pub max_memory_gb: Option<f64>,
}

impl BudgetArgs {
    /// The budget these flags set.
    pub fn budget(&self) -> Budget {
        Budget {
            max_hours: self.max_hours,
            max_memory_gb: self.max_memory_gb,
        }
    }
}

impl BaselineArgs {
    /// The baseline these flags name.
    pub fn baseline(&self) -> Baseline {
        Baseline {
            baseline: self.baseline.clone(),
            no_baseline: self.no_baseline,
            require_baseline: self.require_baseline,
        }
    }
}

/// Outputs for CI tools.
#[derive(Args, Debug, Clone, Default)]
pub struct CiArgs {
    /// Also write the verdicts as JUnit XML to FILE (one testcase per verdict; a failure
    /// for each reason the run exits 1; inconclusive and out of regime are skipped).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// After a run's conclusion, on stderr (not with `--json`): each main row that held on
/// the baseline and no longer does ([`crate::report::ci::regression_notes`]), so that
/// the plain failure list ends with the regression, not with the judge's advice to add
/// a `finding`. The baseline is compared again (the snapshots are read only).
pub fn regression_notes(
    outcomes: &[crate::pipeline::ClaimOutcome],
    profile: crate::spec::Profile,
    seed: u64,
    base: &Baseline,
    json: bool,
) {
    if json || base.no_baseline {
        return;
    }
    let baseline = crate::report::baseline::compare(&base.baseline, outcomes, profile, seed);
    let cases = crate::report::ci::cases(outcomes, &baseline, None);
    for line in crate::report::ci::regression_notes(&cases) {
        crate::report::eprint_line(&line);
    }
}
