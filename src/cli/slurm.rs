//! `dpclaims slurm`: prints a ready Slurm script for a sharded run.
//!
//! The script has three modes, chosen by its environment:
//! * inside a job-array task (`$SLURM_ARRAY_TASK_ID` set) it runs that shard:
//!   `dpclaims run ... --shard $SLURM_ARRAY_TASK_ID/N --partial-out DIR`;
//! * run with `bash` (outside Slurm) it is the driver: it submits itself as the job
//!   array (`sbatch --parsable --array=0-(N-1)`) and then the merge as a job with
//!   `--dependency=afterok:$ARRAY_JOB_ID`, so the reports appear when every shard
//!   succeeded;
//! * submitted with plain `sbatch` its `#SBATCH --array` line makes it the job array
//!   alone, and the user runs `dpclaims merge` afterwards.
//!
//! The shard and merge command lines are fixed when the script is generated (paths are
//! shell-quoted); the binary is `$DPCLAIMS` (default `dpclaims` on `PATH`).
use crate::spec::{self, Profile};
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct SlurmArgs {
    /// Claim files or directories (default: claims/), relative to the directory the
    /// script is submitted from.
    pub paths: Vec<PathBuf>,
    /// Number of shards (array tasks 0..N-1).
    #[arg(long, value_name = "N")]
    pub shards: usize,
    /// Time limit of each shard task and of the merge job (Slurm's format, e.g. HH:MM:SS).
    #[arg(long, default_value = "01:00:00")]
    pub time: String,
    /// CPUs per shard task (the shard's units run in parallel on them).
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub cpus_per_task: usize,
    /// Slurm partition (default: the cluster's default partition).
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Profile: quick (CI scale) or full (paper scale).
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Master seed of every random stream.
    #[arg(long, default_value_t = 0, env = "DPCLAIMS_SEED")]
    pub seed: u64,
    /// Directory of the partial files (shared by all tasks).
    #[arg(long, default_value = "shards", value_name = "DIR")]
    pub dir: PathBuf,
    /// Directory the merged reports are written to (default: the merge's own: `reports`
    /// only for the whole `claims/` at the default profile and seed, else under
    /// `target/dpclaims`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
}

/// Quotes a word for sh/bash: unchanged when it only holds safe characters, otherwise
/// in single quotes.
fn sh_quote(s: &str) -> String {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"_./:=,+-@%".contains(&b);
    if !s.is_empty() && s.bytes().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn check_time(t: &str) -> Result<(), String> {
    let ok = !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || b == b':' || b == b'-')
        && t.starts_with(|c: char| c.is_ascii_digit())
        && t.ends_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--time `{t}`: not a Slurm time limit (HH:MM:SS, D-HH:MM:SS, MM:SS or minutes)"
        ))
    }
}

fn check_partition(p: &str) -> Result<(), String> {
    if !p.is_empty()
        && p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.,-".contains(&b))
    {
        Ok(())
    } else {
        Err(format!(
            "--partition `{p}`: not a partition name (letters, digits, `_`, `.`, `-`; `,` separates several)"
        ))
    }
}

/// Most shards a script may have (Slurm's MaxArraySize is at most 4 000 001).
const MAX_SHARDS: usize = 4_000_000;

/// Prints the script on stdout.
pub fn slurm(a: &SlurmArgs) -> anyhow::Result<ExitCode> {
    if a.shards == 0 {
        anyhow::bail!("--shards: the number of shards must be at least 1");
    }
    if a.shards > MAX_SHARDS {
        anyhow::bail!(
            "--shards {}: more than {MAX_SHARDS} (a Slurm job array has at most MaxArraySize - 1 tasks, 4 000 000 at most)",
            a.shards
        );
    }
    if a.cpus_per_task == 0 {
        anyhow::bail!("--cpus-per-task: must be at least 1");
    }
    check_time(&a.time).map_err(anyhow::Error::msg)?;
    if let Some(p) = &a.partition {
        check_partition(p).map_err(anyhow::Error::msg)?;
    }
    let paths = super::paths::default_paths(&a.paths)?;
    // Every path is shell-quoted in commands, but also printed in `#` comment lines,
    // where a newline would end the comment and start a command: refused outright.
    for (what, p) in paths
        .iter()
        .map(|p| ("claim path", p))
        .chain([("--dir", &a.dir)])
        .chain(a.out.iter().map(|o| ("--out", o)))
    {
        let text = p.to_string_lossy();
        if let Some(c) = text.chars().find(|c| c.is_control()) {
            anyhow::bail!(
                "{what} {}: contains the control character {c:?}; a Slurm script cannot carry it safely (rename the file or directory)",
                crate::spec::echo::clip_echoes(&format!("{text:?}"))
            );
        }
    }
    // Load the claims now, so a bad spec fails here and not on the cluster.
    let claims = spec::load_claims(&paths)?;
    // Each shard runs about 1/N of the work, all of a unit's memory.
    a.budget
        .budget()
        .check(&claims, a.profile, 1.0, 1.0 / a.shards as f64)?;
    let n = a.shards;
    let per_shard = crate::pipeline::units_per_shard(&claims, a.profile, n);
    let total: usize = per_shard.iter().sum();
    let (lo, hi) = (
        per_shard.iter().min().copied().unwrap_or(0),
        per_shard.iter().max().copied().unwrap_or(0),
    );
    if lo == 0 {
        eprintln!("note: {total} units in {n} shards: some shards have no unit (they write an empty partial file)");
    }

    let q = |p: &PathBuf| sh_quote(&p.display().to_string());
    let claim_args: Vec<String> = paths.iter().map(q).collect();
    let dir = q(&a.dir);
    // The merge's own default (`merge --out`), written out in the script.
    let out = a.out.clone().unwrap_or_else(|| {
        let subset = if a.profile != crate::spec::Profile::Quick {
            Some(format!("merge-{}", a.profile))
        } else if a.seed != 0 {
            Some(format!("merge-seed-{}", a.seed))
        } else {
            None
        };
        super::paths::committed_or(super::paths::default_out(&paths), subset)
    });
    let out = q(&out);
    let last = n - 1;
    let partition_opt = a
        .partition
        .as_ref()
        .map(|p| format!(" --partition={p}"))
        .unwrap_or_default();
    let merge_claims: String = claim_args
        .iter()
        .map(|c| format!(" --claims {c}"))
        .collect();
    let merge_cmd =
        format!("exec \"${{DPCLAIMS:-dpclaims}}\" merge {dir}{merge_claims} --out {out}",);
    let manual_merge = format!("dpclaims merge {dir}{merge_claims} --out {out}");

    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# dpclaims {} on a Slurm job array, generated by `dpclaims slurm`.",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(
        s,
        "# {} claims ({}), profile {}, seed {}: {total} work units in {n} shards of {}.",
        claims.len(),
        claim_args.join(" "),
        a.profile,
        a.seed,
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        }
    );
    let _ = writeln!(s, "#");
    let _ = writeln!(
        s,
        "# Submit from the directory the claim paths are relative to (dpclaims on PATH, or"
    );
    let _ = writeln!(s, "# DPCLAIMS=/path/to/dpclaims):");
    let _ = writeln!(
        s,
        "#   bash THIS_SCRIPT     submits the shard array and then the merge, as a job that"
    );
    let _ = writeln!(
        s,
        "#                        starts when every shard succeeded (afterok); reports go to {out}/"
    );
    let _ = writeln!(
        s,
        "#   sbatch THIS_SCRIPT   submits the shard array only; when it has finished, run"
    );
    let _ = writeln!(s, "#                        {manual_merge}");
    let _ = writeln!(
        s,
        "# Shards are resumable: a shard whose partial file in {dir}/ is complete is skipped,"
    );
    let _ = writeln!(
        s,
        "# so re-submitting re-runs only what is missing (`sbatch --array=I THIS_SCRIPT`: shard I)."
    );
    let _ = writeln!(s, "#SBATCH --job-name=dpclaims-shards");
    let _ = writeln!(s, "#SBATCH --array=0-{last}");
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", a.cpus_per_task);
    let _ = writeln!(s, "#SBATCH --time={}", a.time);
    if let Some(p) = &a.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    let _ = writeln!(s, "#SBATCH --output=dpclaims-shard-%A_%a.out");
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(s, "export DPCLAIMS=\"${{DPCLAIMS:-dpclaims}}\"");
    let _ = writeln!(s, "SHARDS={n}");
    let _ = writeln!(s);
    let _ = writeln!(s, "if [ -n \"${{SLURM_ARRAY_TASK_ID:-}}\" ]; then");
    let _ = writeln!(
        s,
        "  # One array task: shard $SLURM_ARRAY_TASK_ID of $SHARDS (numbered from 0)."
    );
    let _ = writeln!(
        s,
        "  export RAYON_NUM_THREADS=\"${{SLURM_CPUS_PER_TASK:-1}}\""
    );
    let _ = writeln!(
        s,
        "  exec \"$DPCLAIMS\" run {} --profile {} --seed {} \\",
        claim_args.join(" "),
        a.profile,
        a.seed
    );
    let _ = writeln!(
        s,
        "    --shard \"$SLURM_ARRAY_TASK_ID/$SHARDS\" --partial-out {dir}"
    );
    let _ = writeln!(s, "fi");
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "# Driver (outside Slurm): the array, then the merge once every shard succeeded."
    );
    let _ = writeln!(s, "if ! command -v sbatch >/dev/null 2>&1; then");
    let _ = writeln!(
        s,
        "  echo \"sbatch not found: run this on a Slurm login node\" >&2"
    );
    let _ = writeln!(s, "  exit 2");
    let _ = writeln!(s, "fi");
    let _ = writeln!(
        s,
        "ARRAY_JOB_ID=$(sbatch --parsable --array=0-{last} \"$0\")"
    );
    let _ = writeln!(
        s,
        "ARRAY_JOB_ID=\"${{ARRAY_JOB_ID%%;*}}\"  # --parsable prints id[;cluster]"
    );
    let _ = writeln!(
        s,
        "MERGE_JOB_ID=$(sbatch --parsable --job-name=dpclaims-merge --ntasks=1 --cpus-per-task=1 \\"
    );
    let _ = writeln!(
        s,
        "  --time={}{partition_opt} --output=dpclaims-merge-%j.out \\",
        a.time
    );
    let _ = writeln!(s, "  --dependency=afterok:$ARRAY_JOB_ID \\");
    let _ = writeln!(s, "  --wrap={})", sh_quote(&merge_cmd));
    let _ = writeln!(s, "MERGE_JOB_ID=\"${{MERGE_JOB_ID%%;*}}\"");
    let _ = writeln!(
        s,
        "echo \"submitted shard array $ARRAY_JOB_ID ($SHARDS tasks) and merge job $MERGE_JOB_ID (afterok:$ARRAY_JOB_ID)\""
    );
    print!("{s}");
    Ok(ExitCode::SUCCESS)
}
