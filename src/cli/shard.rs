//! `dpclaims run --shard I/N --partial-out DIR` and `dpclaims merge`: a claim suite run
//! as N independent shards (e.g. a Slurm job array) and merged into the reports an
//! unsharded `dpclaims run` writes, byte for byte. The format and the checks are in
//! [`crate::pipeline::shard`].
use super::conclude::{BaselineArgs, CiArgs};
use crate::pipeline::Shard;
use crate::pipeline::{
    self,
    conclude::{conclude, print_verdicts, Outputs},
};
use crate::report;
use crate::spec::{self, Claim, Profile};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs one shard into `dir/shard-<I>-of-<N>.json`, or skips it when that file is
/// already this shard's complete result ([`pipeline::shard::claim_shard`]).
pub(super) fn run_shard(
    claims: &[Claim],
    profile: Profile,
    seed: u64,
    shard: Shard,
    dir: &Path,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let job = pipeline::shard::claim_shard(claims, profile, seed, shard, dir)?;
    let (mine, total, path, skipped) = (job.units, job.total, &job.path, job.done);
    if !skipped {
        let bar = super::progress::Progress::units(mine)?;
        bar.set_message(format!("shard {shard}"));
        job.run(claims, profile, seed, &|| bar.inc(1))?;
        bar.finish_and_clear();
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "shard": shard.to_string(),
                "file": path.display().to_string(),
                "units": mine,
                "total_units": total,
                "skipped": skipped,
            }))?
        );
    } else if skipped {
        println!(
            "shard {shard}: {} is complete and matches this run ({mine} of {total} units); skipped",
            path.display()
        );
    } else {
        println!(
            "shard {shard}: {mine} of {total} units ({} claims, profile {profile}, seed {seed}) written to {}",
            claims.len(),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Directories of partial files (`shard-*-of-*.json`) or partial files.
    #[arg(required = true, value_name = "DIR")]
    pub partials: Vec<PathBuf>,
    /// The claim files or directories the shards ran (their spec hashes must match the
    /// manifests; claims the shards did not run are ignored).
    #[arg(long, value_name = "PATH", num_args = 1.., default_value = "claims")]
    pub claims: Vec<PathBuf>,
    /// Directory the reports are written to (default: `reports` when the shards ran the
    /// whole `claims/` at the default profile and seed, else `target/dpclaims/merge`
    /// or `merge-<profile>` / `merge-seed-<seed>`: a subset never rewrites the committed
    /// reports).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print exactly one JSON document on stdout (as `run --json`).
    #[arg(long)]
    pub json: bool,
    /// Do not write reports.
    #[arg(long)]
    pub no_reports: bool,
    /// Scorecards, one `<name>.yaml` per paper, written as `scorecard-<name>.md` (and
    /// `.html`) with the reports, as `run --scorecards` writes them. None when DIR does
    /// not exist.
    #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("scorecards"))]
    pub scorecards: PathBuf,
    /// Figure formats written beside each claim's plot (as `run --figures`).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "svg")]
    pub figures: Vec<crate::report::export::FigureFormat>,
    #[command(flatten)]
    pub baseline: BaselineArgs,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
    #[command(flatten)]
    pub ci: CiArgs,
}

/// Validates the partial files, judges, and writes and prints exactly what `dpclaims
/// run` of the same claims, profile and seed would (same exit status).
pub fn merge(a: &MergeArgs) -> anyhow::Result<ExitCode> {
    let partials = pipeline::shard::read_partials(&a.partials)?;
    let specs = spec::load_claims(&a.claims)?;
    let merged = pipeline::shard::merge(&partials, &specs)?;
    // Nothing is simulated here, but every unit's values are held and every fit is
    // bootstrapped: the memory a run of these claims would be refused for is refused too.
    let merged_claims: Vec<crate::spec::Claim> =
        merged.claims.iter().map(|(c, _)| c.clone()).collect();
    a.budget
        .budget()
        .check(&merged_claims, merged.profile, 1.0, 0.0)?;
    let unused: Vec<&str> = specs
        .iter()
        .filter(|s| !merged.claims.iter().any(|(c, _)| c.id == s.id))
        .map(|s| s.id.as_str())
        .collect();
    let out = a.out.clone().unwrap_or_else(|| {
        let subset = if !unused.is_empty() {
            Some("merge".to_string())
        } else if merged.profile != Profile::Quick {
            Some(format!("merge-{}", merged.profile))
        } else if merged.seed != 0 {
            Some(format!("merge-seed-{}", merged.seed))
        } else {
            None
        };
        super::paths::committed_or(super::paths::default_out(&a.claims), subset)
    });
    let files: Vec<PathBuf> = partials.iter().map(|(f, _)| f.clone()).collect();
    guard_merge(a, &out, &files, &specs)?;
    let scorecards = if a.no_reports {
        None
    } else {
        pipeline::conclude::load_scorecards(&a.scorecards, &merged_claims)?
    };
    if !a.no_reports {
        report::prepare_output_dir(&out)?;
    }
    if let Some(junit) = &a.ci.junit {
        report::prepare_output_file(junit)?;
    }
    if !unused.is_empty() && !a.json {
        crate::report::eprint_line(&format!(
            "note: not part of the sharded run, not merged: {}",
            unused.join(", ")
        ));
    }
    let outcomes = pipeline::shard::judge_merged(&merged, &|o| {
        if !a.json {
            print_verdicts(o);
        }
    })?;
    let baseline = a.baseline.baseline();
    let outputs = Outputs {
        out: &out,
        json: a.json,
        no_reports: a.no_reports,
        baseline: &baseline,
        junit: a.ci.junit.as_deref(),
        scorecards: scorecards.as_ref(),
        figures: &a.figures,
    };
    // The shards' wall times are not in the partial files: JUnit times are 0.
    let code = conclude(
        &outcomes,
        merged.profile,
        merged.seed,
        &outputs,
        &Default::default(),
    )?;
    super::conclude::regression_notes(&outcomes, merged.profile, merged.seed, &baseline, a.json);
    Ok(code)
}

/// Before anything is written: no output of the merge is or holds an input — a partial
/// file, any spec the merge was given (merged or not), a registry, a baseline snapshot, a
/// tracked file — and the output
/// directory holds no mount point nor special file ([`super::alias`]).
fn guard_merge(
    a: &MergeArgs,
    out: &Path,
    partials: &[PathBuf],
    claims: &[Claim],
) -> anyhow::Result<()> {
    use super::alias::{self, Input, Output};
    let summary = alias::step_summary()?;
    let mut outs = Vec::new();
    if !a.no_reports {
        outs.push(Output::Dir("--out", out));
        alias::no_mount_inside("--out", out)?;
        alias::no_special_files("--out", out)?;
    }
    if let Some(j) = &a.ci.junit {
        outs.push(Output::File("--junit", j));
    }
    if let Some(s) = &summary {
        outs.push(Output::File("$GITHUB_STEP_SUMMARY", s));
    }
    let baseline = (!a.baseline.no_baseline).then_some(a.baseline.baseline.as_path());
    let scorecards = (!a.no_reports).then_some(a.scorecards.as_path());
    let mut ins: Vec<Input> = partials
        .iter()
        .map(|p| Input::new("the partial file", p.clone()))
        .collect();
    ins.extend(alias::run_inputs(claims, scorecards, baseline));
    alias::guard(&outs, ins)
}
