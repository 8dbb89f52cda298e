//! `dpclaims list` and `dpclaims run` (`run --shard` continues in `shard.rs`).
use super::conclude::{conclude, print_verdicts, BaselineArgs, BudgetArgs, CiArgs, Outputs};
use crate::execute::shard::Shard;
use crate::report::junit::ClaimTime;
use crate::spec::{self, Profile};
use crate::train::Recipe;
use crate::{execute, plan, report};
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Claim files or directories (default: claims/).
    pub paths: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Claim files or directories (default: claims/).
    pub paths: Vec<PathBuf>,
    /// Profile: quick (CI scale) or full (paper scale).
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Master seed of every random stream.
    #[arg(long, default_value_t = 0, env = "DPCLAIMS_SEED")]
    pub seed: u64,
    /// Directory the reports are written to.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Print exactly one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Do not write reports.
    #[arg(long)]
    pub no_reports: bool,
    /// Run only shard I of N (numbered from 0, like $SLURM_ARRAY_TASK_ID) and write its
    /// raw unit values to --partial-out; `dpclaims merge` judges and writes the reports.
    #[arg(long, value_name = "I/N", requires = "partial_out", conflicts_with_all = ["out", "no_reports", "junit"])]
    pub shard: Option<Shard>,
    /// Directory of a sharded run's partial files (`shard-<I>-of-<N>.json`).
    #[arg(long, value_name = "DIR", requires = "shard")]
    pub partial_out: Option<PathBuf>,
    /// External cores (`system: external`) answer a sample of their units twice; a core
    /// whose answers differ is an error (exit 2).
    #[arg(long)]
    pub check_determinism: bool,
    /// Scorecards, one `<name>.yaml` per paper, written as `scorecard-<name>.md` (and
    /// `.html`) with the reports; validated against the claims of the run and of the
    /// `claims/` directory beside DIR. None when DIR does not exist.
    #[arg(long, value_name = "DIR", default_value = "scorecards")]
    pub scorecards: PathBuf,
    #[command(flatten)]
    pub baseline: BaselineArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    #[command(flatten)]
    pub ci: CiArgs,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

pub(super) fn default_paths(p: &[PathBuf]) -> Vec<PathBuf> {
    if p.is_empty() {
        vec![PathBuf::from("claims")]
    } else {
        p.to_vec()
    }
}

pub fn list(a: &ListArgs) -> anyhow::Result<ExitCode> {
    let claims = spec::load_claims(&default_paths(&a.paths))?;
    for c in &claims {
        println!("{:<28} {}\n{:<28} source: {}", c.id, c.title, "", c.source);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    a.cache.with(|| run_claims(a))?
}

/// The files a run reads only after simulating — the previous `verdicts.json` of the
/// report set, the baseline snapshots — checked before it (a FIFO or device there is an
/// error now, not after an hour of work); and how the report set will be replaced.
fn preflight(a: &RunArgs, claims: &[spec::Claim]) -> anyhow::Result<()> {
    use crate::fsio::{precheck, InputKind};
    // An `--out` that is not a directory yet is checked (and created) later, by
    // `prepare_output_dir`, which names what is in the way.
    if !a.no_reports && a.out.is_dir() {
        let v = a.out.join(report::diff::VERDICTS_FILE);
        precheck(&v, InputKind::Verdicts).map_err(|e| anyhow::anyhow!("{}: {e}", v.display()))?;
        if let Some(why) = report::set::swap_impossible(&a.out) {
            eprintln!(
                "note: {why}; the report set will be written file by file (each file atomic, \
                 the set not)"
            );
        }
    }
    if !a.baseline.no_baseline {
        for c in claims {
            let f = report::baseline::snapshot_file(&a.baseline.baseline, &c.id);
            precheck(&f, InputKind::Snapshot)
                .map_err(|e| anyhow::anyhow!("baseline snapshot {}: {e}", f.display()))?;
        }
    }
    Ok(())
}

fn run_claims(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let claims = spec::load_claims(&default_paths(&a.paths))?;
    if let (Some(shard), Some(dir)) = (a.shard, &a.partial_out) {
        a.budget
            .check(&claims, a.profile, 1.0, 1.0 / shard.count.max(1) as f64)?;
        report::prepare_output_dir(dir)?;
        return super::shard::run_shard(&claims, a.profile, a.seed, shard, dir, a.json);
    }
    a.budget.check(&claims, a.profile, 1.0, 1.0)?;
    preflight(a, &claims)?;
    let scorecards = if a.no_reports {
        None
    } else {
        super::conclude::load_scorecards(&a.scorecards, &claims)?
    };
    crate::systems::external::set_check_determinism(a.check_determinism);
    // External cores are started and greeted before any unit of any claim runs.
    for c in &claims {
        c.system
            .prepare()
            .map_err(|e| anyhow::anyhow!("claim `{}`: {e}", c.id))?;
    }
    if !a.no_reports {
        report::prepare_output_dir(&a.out)?;
    }
    if let Some(junit) = &a.ci.junit {
        report::prepare_output_file(junit)?;
    }
    let total: usize = claims.iter().map(|c| plan::unit_count(c, a.profile)).sum();
    let bar = super::progress::Progress::units(total)?;
    let mut outcomes = Vec::new();
    let mut times = BTreeMap::new();
    for c in &claims {
        bar.set_message(c.id.clone());
        let tick = || bar.inc(1);
        let start = std::time::Instant::now();
        let (o, units) = execute::run_claim_timed(c, a.profile, a.seed, &Recipe::PAPER, &tick)?;
        let wall = start.elapsed().as_secs_f64();
        let mut by_pair = BTreeMap::new();
        for (k, t) in units {
            *by_pair.entry((k.sweep, k.variant)).or_insert(0.0) += t;
        }
        times.insert(
            c.id.clone(),
            ClaimTime {
                wall,
                units: by_pair,
            },
        );
        if !a.json {
            bar.suspend(|| print_verdicts(&o));
        }
        outcomes.push(o);
    }
    bar.finish_and_clear();
    let outputs = Outputs {
        out: &a.out,
        json: a.json,
        no_reports: a.no_reports,
        baseline: &a.baseline,
        ci: &a.ci,
        scorecards: scorecards.as_ref(),
    };
    conclude(&outcomes, a.profile, a.seed, &outputs, &times)
}
