//! The partial file of a shard (`shard-<I>-of-<N>.json`): its manifest (what the file
//! was computed from — profile, seed, spec hashes, the build's engine hash — compared
//! before any merge), its units, every metric stored as the bit pattern of its f64
//! ([`Bits`]), and the SHA-256 checksum of the two.
//!
//! **Integrity.** `checksum` is the SHA-256 (hex) of the pretty JSON of
//! `{"manifest": …, "units": …}`, exactly as written before it. A reader recomputes it
//! from what it parsed, and also requires the file to be byte for byte what this
//! format writes (the writer is deterministic): a flipped bit is either invalid JSON, a
//! changed value (checksum), or a change the parser would forgive — a letter's case in a
//! hex digit, whitespace — caught by the byte comparison. A truncated file is invalid
//! JSON.
use super::{Shard, ShardError};
use crate::plan::{self, UnitKey};
use crate::spec::{Claim, Profile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// Version tag of the partial file format.
pub const FORMAT: &str = "dpclaims-partial/2";
/// Name of the unit-to-shard assignment (see the module docs); part of the manifest so
/// files written under another assignment are never mixed.
pub const ASSIGNMENT: &str = "claim-offset-round-robin/1";

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
    /// [`crate::build_id::ENGINE_HASH`] of the build that computed the units: results of
    /// builds with the same engine hash are interchangeable, so it must match between
    /// files and with the merging build.
    pub engine_hash: String,
    /// [`crate::build_id::GIT_COMMIT`] of that build (informational: not compared).
    pub git_commit: String,
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
            engine_hash: crate::build_id::ENGINE_HASH.into(),
            git_commit: crate::build_id::GIT_COMMIT.into(),
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
        if self.engine_hash != other.engine_hash {
            return Some((
                "engine hash",
                format!(
                    "{} (commit {})",
                    short(&self.engine_hash),
                    short(&self.git_commit)
                ),
                format!(
                    "{} (commit {})",
                    short(&other.engine_hash),
                    short(&other.git_commit)
                ),
            ));
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

/// The first 12 hex digits of a hash, for messages.
pub(super) fn short(hash: &str) -> &str {
    // By characters: a hash read from an edited file may hold any text.
    hash.char_indices()
        .nth(12)
        .map_or(hash, |(i, _)| &hash[..i])
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

    pub(super) fn describe(&self) -> String {
        format!(
            "claim `{}`, variant `{}`, sweep `{}` point #{}, replicate {}",
            self.claim, self.variant, self.sweep, self.point, self.replicate
        )
    }
}

/// A partial result file: the manifest and the units of one shard, in run order (the
/// checksum is computed when written and checked when read).
#[derive(Clone, Debug)]
pub struct Partial {
    pub manifest: Manifest,
    pub units: Vec<PartialUnit>,
}

/// What the checksum covers, in file order.
#[derive(Serialize)]
struct Body<'a> {
    manifest: &'a Manifest,
    units: &'a [PartialUnit],
}

/// The file: the body and its checksum.
#[derive(Serialize)]
struct Sealed<'a> {
    manifest: &'a Manifest,
    units: &'a [PartialUnit],
    checksum: String,
}

/// The file as read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SealedOwned {
    manifest: Manifest,
    units: Vec<PartialUnit>,
    checksum: String,
}

impl Partial {
    /// SHA-256 (hex) of the pretty JSON of the manifest and the units.
    pub fn checksum(&self) -> String {
        use sha2::{Digest, Sha256};
        let body = serde_json::to_string_pretty(&Body {
            manifest: &self.manifest,
            units: &self.units,
        })
        .expect("a partial file serialises");
        Sha256::digest(body.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The file's JSON text (pretty, one trailing newline; same run ⇒ same bytes).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&Sealed {
            manifest: &self.manifest,
            units: &self.units,
            checksum: self.checksum(),
        })
        .expect("a partial file serialises");
        s.push('\n');
        s
    }

    /// Parses a partial file's text and checks its integrity (module docs); `file` names
    /// it in errors.
    pub fn from_json(file: &Path, text: &str) -> Result<Self, ShardError> {
        let err = |message: String| ShardError::File {
            file: file.display().to_string(),
            message,
        };
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            err(format!(
                "not a dpclaims partial file (truncated or corrupted?): {e}"
            ))
        })?;
        // The format first: a file of another format is named as such, whatever its fields.
        if let Some(f) = v["manifest"]["format"].as_str().filter(|f| *f != FORMAT) {
            return Err(err(format!(
                "manifest.format: `{f}`, this dpclaims reads `{FORMAT}` (rerun the shard)"
            )));
        }
        let s: SealedOwned = serde_json::from_value(v)
            .map_err(|e| err(format!("not a dpclaims partial file: {e}")))?;
        let p = Partial {
            manifest: s.manifest,
            units: s.units,
        };
        let sum = p.checksum();
        if sum != s.checksum {
            return Err(err(format!(
                "checksum mismatch: the content hashes to {}, the file records {} — it was \
                 corrupted or edited after it was written; rerun the shard",
                short(&sum),
                short(&s.checksum)
            )));
        }
        if p.to_json() != text {
            return Err(err(
                "not byte for byte as dpclaims wrote it (whitespace or the case of a hex \
                 digit changed): corrupted or edited; rerun the shard"
                    .into(),
            ));
        }
        p.manifest.profile().map_err(err)?;
        Shard::new(p.manifest.shard.index, p.manifest.shard.count)
            .map_err(|m| err(format!("manifest.shard: {m}")))?;
        Ok(p)
    }
    /// Reads and parses a partial file.
    pub fn read(file: &Path) -> Result<Self, ShardError> {
        let text =
            crate::fsio::read_string(file, crate::fsio::InputKind::Partial).map_err(|e| {
                ShardError::File {
                    file: file.display().to_string(),
                    message: e.to_string(),
                }
            })?;
        Self::from_json(file, &text)
    }

    /// The keys of the file's units, as (claim id, key).
    pub(super) fn keys(&self) -> Vec<(String, UnitKey)> {
        self.units
            .iter()
            .map(|u| (u.claim.clone(), u.key()))
            .collect()
    }
}
