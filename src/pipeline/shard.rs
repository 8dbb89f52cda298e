//! A claim suite run as N independent shards (e.g. a Slurm job array) and merged into
//! the reports an unsharded run writes, byte for byte: each shard runs its units into a
//! partial file ([`crate::execute::shard`]: the format and its checks); the merge reads
//! them back and judges every claim through the same looks ([`super::judge`]).
use crate::execute::shard::{self, Manifest, Partial, Shard};
use crate::judge::ClaimOutcome;
use crate::plan::UnitValues;
use crate::spec::{Claim, Profile};
use std::path::{Path, PathBuf};

/// One shard of a run, claimed for this process: its partial file, its units, and
/// whether that file already holds this shard's complete result.
pub struct ShardJob {
    pub shard: Shard,
    /// `dir/shard-<I>-of-<N>.json`.
    pub path: PathBuf,
    /// The shard's units, and the run's.
    pub units: usize,
    pub total: usize,
    /// The file is already this shard's complete result: nothing to run.
    pub done: bool,
    _claim: ShardClaim,
}

/// Claims shard `shard` of `claims` in `dir`, checking a partial file already there: one
/// from another run (seed, profile, specs, version) is an error, neither reused nor
/// overwritten.
pub fn claim_shard(
    claims: &[Claim],
    profile: Profile,
    seed: u64,
    shard: Shard,
    dir: &Path,
) -> anyhow::Result<ShardJob> {
    let path = dir.join(shard.file_name());
    let expected = Manifest::new(claims, profile, seed, shard);
    let units = shard::shard_units(claims, profile, shard).len();
    let total: usize = expected.claims.iter().map(|c| c.units).sum();
    // The shard's partial file is claimed for the whole run: a second run of the same
    // shard into the same directory is refused while the first runs, instead of both
    // computing and one file silently replacing the other.
    let claim = claim_partial(&path, shard)?;
    let done = if path.exists() {
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
        false
    };
    Ok(ShardJob {
        shard,
        path,
        units,
        total,
        done,
        _claim: claim,
    })
}

impl ShardJob {
    /// Runs the shard's units (`tick` once per unit) and writes its partial file.
    pub fn run(
        &self,
        claims: &[Claim],
        profile: Profile,
        seed: u64,
        tick: &(dyn Fn() + Sync),
    ) -> anyhow::Result<()> {
        let partial = shard::run_shard(claims, profile, seed, self.shard, tick)?;
        crate::report::write_atomic(&self.path, partial.to_json().as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", self.path.display()))
    }
}

/// The partial files of a merge: each directory's `shard-*-of-*.json`, each file as
/// given, read and checked.
pub fn read_partials(paths: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, Partial)>> {
    let mut files = Vec::new();
    for p in paths {
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
    Ok(files
        .into_iter()
        .map(|f| Partial::read(&f).map(|p| (f, p)))
        .collect::<Result<Vec<_>, _>>()?)
}

/// The values of a sharded run, merged: its profile and seed, and each claim it ran with
/// every unit's values.
pub struct Merged {
    pub profile: Profile,
    pub seed: u64,
    pub claims: Vec<(Claim, UnitValues)>,
}

/// Merges `partials` (one sharding, each shard once, computed by this engine) against
/// the specs `specs` (their hashes must match the manifests).
pub fn merge(partials: &[(PathBuf, Partial)], specs: &[Claim]) -> anyhow::Result<Merged> {
    let m = shard::merge(partials, specs)?;
    Ok(Merged {
        profile: m.profile,
        seed: m.seed,
        claims: m.claims,
    })
}

/// Judges every claim of `merged` from its values (the same looks as an unsharded run,
/// so the same outcome bit for bit); `judged` is told of each.
pub fn judge_merged(
    merged: &Merged,
    judged: &dyn Fn(&ClaimOutcome),
) -> anyhow::Result<Vec<ClaimOutcome>> {
    let mut outcomes = Vec::new();
    for (c, values) in &merged.claims {
        let o = super::judge(c, merged.profile, merged.seed, values)?;
        judged(&o);
        outcomes.push(o);
    }
    Ok(outcomes)
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
