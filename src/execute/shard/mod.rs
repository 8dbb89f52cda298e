//! Sharded runs: the work units of a claim suite split over N processes (e.g. a Slurm
//! job array), each shard's raw metric values written to a partial file, and the partial
//! files merged back into exactly the values an unsharded run would judge.
//!
//! **Assignment.** The units of a claim, in plan order `u_0, u_1, …`
//! ([`plan::planned_units`]), are dealt round robin to the shards, starting at an
//! offset derived from the claim id:
//! `shard(u_j) = (offset(id) + j) mod N`, `offset(id)` = the first 8 bytes of
//! SHA-256(id) read big-endian, mod N. A unit's shard depends only on its own claim (id,
//! spec, profile) and N: adding, removing or reordering other claims moves no unit. Each
//! claim is spread evenly (shard sizes differ by at most one unit per claim), consecutive
//! replicates and sweep points — whose costs differ — land on different shards, and the
//! offset keeps the remainders of many small claims from all falling on shard 0.
//! Shards are numbered from 0, as `sbatch --array=0-(N-1)` numbers
//! `$SLURM_ARRAY_TASK_ID`. The assignment cannot change a number: every unit draws from
//! its own seed path (`master / claim / sweep / point / rep`), whatever else runs.
//!
//! **Partial file** (`shard-<I>-of-<N>.json`, [`Partial`]): a manifest (format, dpclaims
//! version, the build's engine hash and commit, assignment, profile, seed, shard I/N, and
//! per claim its id, file, spec hash and unit count), one entry per unit of the shard,
//! and a SHA-256 checksum of both (a reader also requires the exact bytes the writer
//! produces, so any flipped bit is refused). A unit entry holds its key (claim, sweep,
//! variant, point index, replicate) and every metric the system returned, each stored as
//! the 16 hex digits of the f64's IEEE-754 bit pattern ([`Bits`]) — exact for every value,
//! including NaN, infinities, −0 and subnormals, whatever the JSON parser does with
//! decimals.
//!
//! **Merge** ([`merge()`]) checks each file's checksum, that every file was computed by
//! an engine with this build's engine hash ([`crate::build_id::ENGINE_HASH`]: builds with
//! the same engine hash compute the same bits, so their partial files are
//! interchangeable; the commit is recorded only to say which build to use), that the
//! files are shards of one N with no shard twice, that they have the same format,
//! version, assignment, profile, seed and claims (ids and spec hashes), that the specs
//! given to it have those hashes, that every unit belongs to the shard its file says, and that every
//! unit of every claim is present exactly once; it returns the values in plan order,
//! ready for the driver ([`crate::pipeline::judge`]).
//!
//! Where things are: this file holds the assignment and runs a shard; `partial.rs` the
//! partial file format (manifest, units, [`Bits`]); `merge.rs` the checks and
//! the assembly of the values.
mod merge;
mod partial;

pub use merge::{merge, partial_files, Merged};
pub use partial::{Bits, Manifest, ManifestClaim, Partial, PartialUnit, ASSIGNMENT, FORMAT};

use crate::execute::{self, RunError};
use crate::plan::{self, UnitKey};
use crate::spec::{Claim, Profile};
use crate::train::Recipe;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A sharded run that cannot proceed: names the file, shard or unit.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// A partial file that cannot be read, parsed or used.
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// Partial files that do not fit together or do not cover the run.
    #[error("{0}")]
    Merge(String),
    #[error(transparent)]
    Run(#[from] RunError),
}

/// Shard `index` of `count`, numbered from 0 (`--shard I/N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Checks `index < count` and `count >= 1`.
    pub fn new(index: usize, count: usize) -> Result<Self, String> {
        if count == 0 {
            return Err("the number of shards N must be at least 1".into());
        }
        if index >= count {
            return Err(format!(
                "shard index {index} is out of range: shards are numbered from 0, so {} for \
                 {count} shards (as `sbatch --array=0-{}` numbers $SLURM_ARRAY_TASK_ID)",
                if count == 1 {
                    "only 0".to_string()
                } else {
                    format!("0 to {}", count - 1)
                },
                count - 1
            ));
        }
        Ok(Self { index, count })
    }

    /// The partial file's name: `shard-<I>-of-<N>.json`.
    pub fn file_name(&self) -> String {
        format!("shard-{}-of-{}.json", self.index, self.count)
    }

    /// True when the unit at `position` (plan order) of claim `claim_id` is this shard's.
    pub fn owns(&self, claim_id: &str, position: usize) -> bool {
        shard_of(claim_id, position, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;
    /// Parses `I/N`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not I/N (shard I of N, numbered from 0 like $SLURM_ARRAY_TASK_ID, e.g. 0/4)"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let i: usize = i.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        Shard::new(i, n)
    }
}

/// The assignment's per-claim offset: first 8 bytes of SHA-256(claim id), big-endian,
/// mod `count`.
pub fn claim_offset(claim_id: &str, count: usize) -> usize {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(claim_id.as_bytes());
    let v = u64::from_be_bytes(d[..8].try_into().expect("SHA-256 has 32 bytes"));
    (v % count as u64) as usize
}

/// The shard (of `count`) of the unit at `position` in claim `claim_id`'s plan order.
pub fn shard_of(claim_id: &str, position: usize, count: usize) -> usize {
    (claim_offset(claim_id, count) + position % count) % count
}

/// The units shard `shard` owns, as (claim id, key), in run order.
pub fn shard_units(claims: &[Claim], profile: Profile, shard: Shard) -> Vec<(String, UnitKey)> {
    claims
        .iter()
        .flat_map(|c| {
            plan::planned_units(c, profile)
                .into_iter()
                .enumerate()
                .filter(|(j, _)| shard.owns(&c.id, *j))
                .map(|(_, u)| (c.id.clone(), u.key))
        })
        .collect()
}

/// Runs the units of shard `shard` of `claims` (`tick` once per finished unit).
pub fn run_shard(
    claims: &[Claim],
    profile: Profile,
    seed: u64,
    shard: Shard,
    tick: &(dyn Fn() + Sync),
) -> Result<Partial, RunError> {
    let mut units = Vec::new();
    for c in claims {
        let keep = |j: usize, _: &UnitKey| shard.owns(&c.id, j);
        for (key, metrics) in
            execute::run_units_where(c, profile, seed, &Recipe::PAPER, &keep, tick)?
        {
            units.push(PartialUnit {
                claim: c.id.clone(),
                sweep: key.sweep,
                variant: key.variant,
                point: key.point,
                replicate: key.replicate,
                metrics: metrics.into_iter().map(|(k, v)| (k, Bits(v))).collect(),
            });
        }
    }
    Ok(Partial {
        manifest: Manifest::new(claims, profile, seed, shard),
        units,
    })
}

/// Checks that an existing partial file is this shard's complete result (same
/// manifest, exactly the shard's units), so a re-run can skip it. An error names the
/// file and what differs; the caller must then neither reuse nor overwrite it.
pub fn check_existing(
    file: &Path,
    existing: &Partial,
    expected: &Manifest,
    claims: &[Claim],
    profile: Profile,
) -> Result<(), ShardError> {
    let err = |message: String| ShardError::File {
        file: file.display().to_string(),
        message,
    };
    if let Some((field, there, here)) = existing.manifest.difference(expected, true) {
        return Err(err(format!(
            "written by another run ({field} {there}, this run has {here})"
        )));
    }
    let want = shard_units(claims, profile, expected.shard);
    if existing.keys() != want {
        return Err(err(format!(
            "holds {} units, but shard {} has {} (same manifest, different units: edited?)",
            existing.units.len(),
            expected.shard,
            want.len()
        )));
    }
    Ok(())
}
