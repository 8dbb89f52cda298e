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
//! version, assignment, profile, seed, shard I/N, and per claim its id, file, spec hash
//! and unit count) and one entry per unit of the shard: its key (claim, sweep, variant,
//! point index, replicate) and every metric the system returned, each stored as the 16
//! hex digits of the f64's IEEE-754 bit pattern ([`Bits`]) — exact for every value,
//! including NaN, infinities, −0 and subnormals, whatever the JSON parser does with
//! decimals.
//!
//! **Merge** ([`merge`]) checks that every file has the same format, version,
//! assignment, profile, seed and claims (ids and spec hashes), that the specs given to it
//! have those hashes, that every unit belongs to the shard its file says, and that every
//! unit of every claim is present exactly once; it returns the values in plan order,
//! ready for [`execute::judge`].
use crate::execute::{self, RunError};
use crate::plan::{self, UnitKey, UnitPlan, UnitValues};
use crate::spec::{Claim, Profile};
use crate::train::Recipe;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Version tag of the partial file format.
pub const FORMAT: &str = "dpclaims-partial/1";
/// Name of the unit-to-shard assignment (see the module docs); part of the manifest so
/// files written under another assignment are never mixed.
pub const ASSIGNMENT: &str = "claim-offset-round-robin/1";

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

/// An f64 stored as the 16 lowercase hex digits of its IEEE-754 bit pattern: exact for
/// every value (decimal JSON numbers round-trip only with a correctly rounding parser,
/// and cannot hold NaN or infinities).
#[derive(Clone, Copy, Debug)]
pub struct Bits(pub f64);

impl Serialize for Bits {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{:016x}", self.0.to_bits()))
    }
}

impl<'de> Deserialize<'de> for Bits {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(serde::de::Error::custom(format!(
                "metric value `{s}` is not 16 hex digits (an f64's bit pattern)"
            )));
        }
        let bits = u64::from_str_radix(&s, 16).map_err(serde::de::Error::custom)?;
        Ok(Bits(f64::from_bits(bits)))
    }
}

/// One claim of a manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestClaim {
    pub id: String,
    /// The path the claim was loaded from (informational: not compared).
    pub file: String,
    /// SHA-256 of the spec file's bytes.
    pub spec_hash: String,
    /// Units of the claim over all shards.
    pub units: usize,
}

/// What a partial file was computed from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: String,
    pub dpclaims_version: String,
    pub assignment: String,
    /// `quick` or `full`.
    pub profile: String,
    pub seed: u64,
    pub shard: Shard,
    /// The claims of the run, in run order (the order of the merged reports).
    pub claims: Vec<ManifestClaim>,
}

impl Manifest {
    /// The manifest of shard `shard` of a run of `claims`.
    pub fn new(claims: &[Claim], profile: Profile, seed: u64, shard: Shard) -> Self {
        Self {
            format: FORMAT.into(),
            dpclaims_version: env!("CARGO_PKG_VERSION").into(),
            assignment: ASSIGNMENT.into(),
            profile: profile.to_string(),
            seed,
            shard,
            claims: claims
                .iter()
                .map(|c| ManifestClaim {
                    id: c.id.clone(),
                    file: c.file.display().to_string(),
                    spec_hash: c.spec_hash.clone(),
                    units: plan::unit_count(c, profile),
                })
                .collect(),
        }
    }

    /// The profile, parsed.
    pub fn profile(&self) -> Result<Profile, String> {
        match self.profile.as_str() {
            "quick" => Ok(Profile::Quick),
            "full" => Ok(Profile::Full),
            p => Err(format!("manifest.profile: `{p}` is neither quick nor full")),
        }
    }

    /// The first field in which two manifests of the same run could differ, as
    /// `(field, value here, value there)`; the shard is compared only if `with_shard`.
    pub fn difference(
        &self,
        other: &Manifest,
        with_shard: bool,
    ) -> Option<(&'static str, String, String)> {
        let d = |f: &'static str, a: &dyn fmt::Display, b: &dyn fmt::Display| {
            Some((f, a.to_string(), b.to_string()))
        };
        if self.format != other.format {
            return d("format", &self.format, &other.format);
        }
        if self.dpclaims_version != other.dpclaims_version {
            return d(
                "dpclaims version",
                &self.dpclaims_version,
                &other.dpclaims_version,
            );
        }
        if self.assignment != other.assignment {
            return d("assignment", &self.assignment, &other.assignment);
        }
        if self.profile != other.profile {
            return d("profile", &self.profile, &other.profile);
        }
        if self.seed != other.seed {
            return d("seed", &self.seed, &other.seed);
        }
        if with_shard && self.shard != other.shard {
            return d("shard", &self.shard, &other.shard);
        }
        let ids = |m: &Manifest| m.claims.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        if ids(self) != ids(other) {
            return d("claims", &ids(self).join(", "), &ids(other).join(", "));
        }
        for (a, b) in self.claims.iter().zip(&other.claims) {
            if a.spec_hash != b.spec_hash {
                return Some((
                    "spec hash",
                    format!("{} of claim `{}`", short(&a.spec_hash), a.id),
                    short(&b.spec_hash).to_string(),
                ));
            }
            if a.units != b.units {
                return Some((
                    "unit count",
                    format!("{} of claim `{}`", a.units, a.id),
                    b.units.to_string(),
                ));
            }
        }
        None
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// One unit of a partial file: its key and every metric the system returned.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialUnit {
    pub claim: String,
    pub sweep: String,
    pub variant: String,
    pub point: usize,
    pub replicate: usize,
    pub metrics: BTreeMap<String, Bits>,
}

impl PartialUnit {
    /// The runner's key of this unit.
    pub fn key(&self) -> UnitKey {
        UnitKey {
            sweep: self.sweep.clone(),
            variant: self.variant.clone(),
            point: self.point,
            replicate: self.replicate,
        }
    }

    fn describe(&self) -> String {
        format!(
            "claim `{}`, variant `{}`, sweep `{}` point #{}, replicate {}",
            self.claim, self.variant, self.sweep, self.point, self.replicate
        )
    }
}

/// A partial result file: the manifest and the units of one shard, in run order.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    pub manifest: Manifest,
    pub units: Vec<PartialUnit>,
}

impl Partial {
    /// The file's JSON text (pretty, one trailing newline; same run ⇒ same bytes).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a partial file serialises");
        s.push('\n');
        s
    }

    /// Parses a partial file's text; `file` names it in errors.
    pub fn from_json(file: &Path, text: &str) -> Result<Self, ShardError> {
        let err = |message: String| ShardError::File {
            file: file.display().to_string(),
            message,
        };
        let p: Partial = serde_json::from_str(text)
            .map_err(|e| err(format!("not a dpclaims partial file: {e}")))?;
        if p.manifest.format != FORMAT {
            return Err(err(format!(
                "manifest.format: `{}`, this dpclaims reads `{FORMAT}`",
                p.manifest.format
            )));
        }
        p.manifest.profile().map_err(err)?;
        Shard::new(p.manifest.shard.index, p.manifest.shard.count)
            .map_err(|m| err(format!("manifest.shard: {m}")))?;
        Ok(p)
    }

    /// Reads and parses a partial file.
    pub fn read(file: &Path) -> Result<Self, ShardError> {
        let text = std::fs::read_to_string(file).map_err(|e| ShardError::File {
            file: file.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_json(file, &text)
    }

    /// The keys of the file's units, as (claim id, key).
    fn keys(&self) -> Vec<(String, UnitKey)> {
        self.units
            .iter()
            .map(|u| (u.claim.clone(), u.key()))
            .collect()
    }
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

/// What [`merge`] returns: the run's profile and seed, and per claim (in run order) the
/// unit values in plan order, ready for [`execute::judge`].
pub struct Merged {
    pub profile: Profile,
    pub seed: u64,
    pub claims: Vec<(Claim, UnitValues)>,
}

/// The partial files of a directory: `shard-*-of-*.json`, sorted by name (a temporary
/// file of an interrupted write is hidden and named `.….tmp-<pid>`, so never matched).
pub fn partial_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Validates partial files against each other and against the claim specs, and
/// assembles every claim's unit values. Errors name the files, the claim or the unit:
/// manifests that differ, a spec whose hash is not the manifest's, a unit in the wrong
/// shard or unknown to the plan, a unit present twice, units missing (with the shards
/// that should have had them), a metric missing or not finite.
pub fn merge(partials: &[(PathBuf, Partial)], specs: &[Claim]) -> Result<Merged, ShardError> {
    let Some((first_file, first)) = partials.first() else {
        return Err(ShardError::Merge("no partial files to merge".into()));
    };
    let manifest = &first.manifest;
    for (f, p) in &partials[1..] {
        if let Some((field, here, there)) = p.manifest.difference(manifest, false) {
            return Err(ShardError::Merge(format!(
                "{} has {field} {here}, but {} has {field} {there}: partial files of different runs cannot be merged",
                f.display(),
                first_file.display()
            )));
        }
    }
    let profile = manifest.profile().map_err(|m| ShardError::File {
        file: first_file.display().to_string(),
        message: m,
    })?;
    // The specs, in the run's order, with the hashes the shards ran.
    let mut claims = Vec::new();
    for mc in &manifest.claims {
        let c = specs.iter().find(|c| c.id == mc.id).ok_or_else(|| {
            ShardError::Merge(format!(
                "claim `{}` (of the sharded run, from {}) is not among the claim specs given to merge",
                mc.id, mc.file
            ))
        })?;
        if c.spec_hash != mc.spec_hash {
            return Err(ShardError::Merge(format!(
                "{}: claim `{}` has spec hash {}, but the shards ran spec {} (the file changed since)",
                c.file.display(),
                c.id,
                short(&c.spec_hash),
                short(&mc.spec_hash)
            )));
        }
        claims.push(c);
    }
    let plans: BTreeMap<&str, Vec<UnitPlan>> = claims
        .iter()
        .map(|c| (c.id.as_str(), plan::planned_units(c, profile)))
        .collect();
    let positions: BTreeMap<(&str, UnitKey), usize> = plans
        .iter()
        .flat_map(|(id, units)| {
            units
                .iter()
                .enumerate()
                .map(|(j, u)| ((*id, u.key.clone()), j))
        })
        .collect();
    // (claim, key) -> (file, metrics)
    let mut found: BTreeMap<(String, UnitKey), (&Path, &PartialUnit)> = BTreeMap::new();
    for (f, p) in partials {
        let shard = p.manifest.shard;
        for u in &p.units {
            let key = u.key();
            let Some(&j) = positions.get(&(u.claim.as_str(), key.clone())) else {
                return Err(ShardError::File {
                    file: f.display().to_string(),
                    message: format!("unit {} is not a unit of the run", u.describe()),
                });
            };
            let owner = shard_of(&u.claim, j, shard.count);
            if owner != shard.index {
                return Err(ShardError::File {
                    file: f.display().to_string(),
                    message: format!(
                        "unit {} belongs to shard {owner}/{}, not to this file's shard {shard}",
                        plans[u.claim.as_str()][j].location(&u.claim),
                        shard.count
                    ),
                });
            }
            if let Some((other, _)) = found.insert((u.claim.clone(), key), (f, u)) {
                return Err(ShardError::Merge(format!(
                    "unit {} is present twice: in {} and in {}",
                    plans[u.claim.as_str()][j].location(&u.claim),
                    other.display(),
                    f.display()
                )));
            }
        }
    }
    let mut missing = Vec::new();
    let mut out = Vec::new();
    for c in claims {
        let mut values = UnitValues::new();
        for (j, plan) in plans[c.id.as_str()].iter().enumerate() {
            let Some((f, u)) = found.get(&(c.id.clone(), plan.key.clone())) else {
                missing.push((c.id.as_str(), j, plan));
                continue;
            };
            let metrics: BTreeMap<String, f64> =
                u.metrics.iter().map(|(k, v)| (k.clone(), v.0)).collect();
            for m in &plan.metrics {
                let bad = match metrics.get(m) {
                    None => Some("missing".to_string()),
                    Some(v) if !v.is_finite() => Some(format!("not finite ({v})")),
                    _ => None,
                };
                if let Some(why) = bad {
                    return Err(ShardError::File {
                        file: f.display().to_string(),
                        message: format!("unit {}: metric `{m}` is {why}", plan.location(&c.id)),
                    });
                }
            }
            values.push((plan.key.clone(), metrics));
        }
        out.push((c.clone(), values));
    }
    if !missing.is_empty() {
        return Err(ShardError::Merge(missing_message(partials, &missing)));
    }
    Ok(Merged {
        profile,
        seed: manifest.seed,
        claims: out,
    })
}

/// "N units missing: <first few>; shards ... have no partial file among the inputs".
fn missing_message(
    partials: &[(PathBuf, Partial)],
    missing: &[(&str, usize, &UnitPlan)],
) -> String {
    let mut s = format!(
        "{} unit{} missing: ",
        missing.len(),
        if missing.len() == 1 { " is" } else { "s are" }
    );
    s.push_str(
        &missing
            .iter()
            .take(3)
            .map(|(id, _, u)| u.location(id))
            .collect::<Vec<_>>()
            .join("; "),
    );
    if missing.len() > 3 {
        s.push_str(&format!("; and {} more", missing.len() - 3));
    }
    let counts: BTreeSet<usize> = partials
        .iter()
        .map(|(_, p)| p.manifest.shard.count)
        .collect();
    if let [n] = counts.into_iter().collect::<Vec<_>>()[..] {
        let have: BTreeSet<usize> = partials
            .iter()
            .map(|(_, p)| p.manifest.shard.index)
            .collect();
        let lacking: BTreeSet<usize> = missing
            .iter()
            .map(|(id, j, _)| shard_of(id, *j, n))
            .collect();
        let absent: Vec<String> = lacking
            .iter()
            .filter(|i| !have.contains(i))
            .map(|i| {
                Shard {
                    index: *i,
                    count: n,
                }
                .file_name()
            })
            .collect();
        if !absent.is_empty() {
            s.push_str(&format!(
                " (no partial file {} among the inputs: did that shard run?)",
                absent.join(", ")
            ));
        }
    }
    s
}
