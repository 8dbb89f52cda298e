//! `dpclaims run --shard I/N --partial-out DIR` and `dpclaims merge`: a claim suite run
//! as N independent shards (e.g. a Slurm job array) and merged into the reports an
//! unsharded `dpclaims run` writes, byte for byte. The format and the checks are in
//! [`crate::execute::shard`].
use super::conclude::{conclude, print_verdicts, BaselineArgs, CiArgs, Outputs};
use crate::execute::shard::{self, Manifest, Partial, Shard};
use crate::report;
use crate::spec::{self, Claim, Profile};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs one shard into `dir/shard-<I>-of-<N>.json`, or skips it when that file is
/// already this shard's complete result. A file from another run (seed, profile, specs,
/// version) is an error: it is neither reused nor overwritten.
pub(super) fn run_shard(
    claims: &[Claim],
    profile: Profile,
    seed: u64,
    shard: Shard,
    dir: &Path,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let path = dir.join(shard.file_name());
    let expected = Manifest::new(claims, profile, seed, shard);
    let mine = shard::shard_units(claims, profile, shard).len();
    let total: usize = expected.claims.iter().map(|c| c.units).sum();
    // The shard's partial file is claimed for the whole run (issue 50, family 5): a second
    // run of the same shard into the same directory is refused while the first runs,
    // instead of both computing and one file silently replacing the other.
    let _claim = claim_partial(&path, shard)?;
    let skipped = if path.exists() {
        let existing = Partial::read(&path).map_err(|e| {
            anyhow::anyhow!("{e}; refusing to overwrite it: delete it to recompute shard {shard}")
        })?;
        shard::check_existing(&path, &existing, &expected, claims, profile).map_err(|e| {
            anyhow::anyhow!(
                "{e}; refusing to reuse or overwrite it: delete it, or use another --partial-out"
            )
        })?;
        true
    } else {
        let bar = super::progress::Progress::units(mine)?;
        bar.set_message(format!("shard {shard}"));
        let tick = || bar.inc(1);
        let partial = shard::run_shard(claims, profile, seed, shard, &tick)?;
        bar.finish_and_clear();
        report::write_atomic(&path, partial.to_json().as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        false
    };
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
    let mut files = Vec::new();
    for p in &a.partials {
        if p.is_dir() {
            let v = shard::partial_files(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            if v.is_empty() {
                anyhow::bail!("{}: no partial files (shard-*-of-*.json)", p.display());
            }
            files.extend(v);
        } else {
            files.push(p.clone());
        }
    }
    let partials = files
        .into_iter()
        .map(|f| Partial::read(&f).map(|p| (f, p)))
        .collect::<Result<Vec<_>, _>>()?;
    let specs = spec::load_claims(&a.claims)?;
    let merged = shard::merge(&partials, &specs)?;
    // Nothing is simulated here, but every unit's values are held and every fit is
    // bootstrapped: the memory a run of these claims would be refused for is refused too.
    let merged_claims: Vec<crate::spec::Claim> =
        merged.claims.iter().map(|(c, _)| c.clone()).collect();
    a.budget.check(&merged_claims, merged.profile, 1.0, 0.0)?;
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
        super::run::committed_or(super::run::default_out(&a.claims), subset)
    });
    let files: Vec<PathBuf> = partials.iter().map(|(f, _)| f.clone()).collect();
    guard_merge(a, &out, &files, &merged_claims)?;
    let scorecards = if a.no_reports {
        None
    } else {
        super::conclude::load_scorecards(&a.scorecards, &merged_claims)?
    };
    if !a.no_reports {
        report::prepare_output_dir(&out)?;
    }
    if let Some(junit) = &a.ci.junit {
        report::prepare_output_file(junit)?;
    }
    if !unused.is_empty() && !a.json {
        eprintln!(
            "note: not part of the sharded run, not merged: {}",
            unused.join(", ")
        );
    }
    let mut outcomes = Vec::new();
    for (c, values) in &merged.claims {
        let o = crate::pipeline::judge(c, merged.profile, merged.seed, values)?;
        if !a.json {
            print_verdicts(&o);
        }
        outcomes.push(o);
    }
    let outputs = Outputs {
        out: &out,
        json: a.json,
        no_reports: a.no_reports,
        baseline: &a.baseline,
        ci: &a.ci,
        scorecards: scorecards.as_ref(),
        figures: &a.figures,
    };
    // The shards' wall times are not in the partial files: JUnit times are 0.
    conclude(
        &outcomes,
        merged.profile,
        merged.seed,
        &outputs,
        &Default::default(),
    )
}

/// Before anything is written: no output of the merge is or holds an input — a partial
/// file, a spec, a registry, a baseline snapshot, a tracked file — and the output
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

/// The claim of a shard's partial file: the lock file is removed, then unlocked, when
/// the run ends (and by the signal handler's cleanup: it is registered as a temporary).
/// A run that opened it before the removal fails to lock it (`LOCK_NB`) while this run
/// holds it; one that comes after creates a fresh one.
struct ShardClaim {
    _file: std::fs::File,
    path: PathBuf,
}

impl Drop for ShardClaim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        crate::fsio::temps::unregister(&self.path);
    }
}

/// An exclusive, non-blocking `flock` of `.<partial>.lock` beside the partial file, held
/// until the returned claim is dropped (the end of the run, or of the process).
fn claim_partial(path: &Path, shard: Shard) -> anyhow::Result<ShardClaim> {
    use std::os::unix::fs::OpenOptionsExt as _;
    use std::os::unix::io::AsRawFd as _;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let lock = path.with_file_name(format!(".{name}.lock"));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&lock)
        .map_err(|e| anyhow::anyhow!("claiming {}: {e}", lock.display()))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        anyhow::bail!(
            "shard {shard} is being computed by another run into {} (it holds {}): wait for \
             it, or use another --partial-out",
            path.display(),
            lock.display()
        );
    }
    crate::fsio::temps::register(&lock, false);
    Ok(ShardClaim {
        _file: f,
        path: lock,
    })
}
