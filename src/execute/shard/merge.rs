//! Merging partial files: every check that they belong to one run and cover it exactly
//! once, then the unit values of each claim in plan order.
use super::partial::{short, Partial, PartialUnit};
use super::{shard_of, Shard, ShardError};
use crate::plan::{self, UnitKey, UnitPlan, UnitValues};
use crate::spec::{Claim, Profile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What [`merge()`] returns: the run's profile and seed, and per claim (in run order) the
/// unit values in plan order, ready for [`crate::pipeline::judge`].
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

/// Validates partial files against each other, against this build and against the claim
/// specs, and assembles every claim's unit values. Errors name the files, the claim or
/// the unit: a file computed by another engine, two files of one shard, files of
/// shardings into different N, manifests that differ, a spec whose hash is not the
/// manifest's, a unit in the wrong shard or unknown to the plan, a unit present twice,
/// units missing (with the shards that should have had them), a metric missing or not
/// finite. (Each file's checksum was checked by [`Partial::read`].)
pub fn merge(partials: &[(PathBuf, Partial)], specs: &[Claim]) -> Result<Merged, ShardError> {
    let Some((first_file, first)) = partials.first() else {
        return Err(ShardError::Merge("no partial files to merge".into()));
    };
    let manifest = &first.manifest;
    // Each file's integrity (checksum) was checked when it was read; here, that it was
    // computed by this engine, and that the files are one sharding, each shard once.
    for (f, p) in partials {
        let m = &p.manifest;
        if m.engine_hash != crate::build_id::ENGINE_HASH {
            return Err(ShardError::File {
                file: f.display().to_string(),
                message: format!(
                    "computed by another build: engine hash {} (commit {}), this dpclaims is \
                     engine {} (commit {}); results are interchangeable only between builds \
                     with the same engine hash: merge with the build that ran the shards, or \
                     rerun this shard",
                    short(&m.engine_hash),
                    short(&m.git_commit),
                    short(crate::build_id::ENGINE_HASH),
                    short(crate::build_id::GIT_COMMIT)
                ),
            });
        }
    }
    let mut seen: BTreeMap<usize, &Path> = BTreeMap::new();
    for (f, p) in partials {
        let (s, s0) = (p.manifest.shard, manifest.shard);
        if s.count != s0.count {
            return Err(ShardError::Merge(format!(
                "{} is shard {s} but {} is shard {s0}: shardings into different numbers of \
                 shards overlap (their units would be counted twice); merge the files of one \
                 sharding",
                f.display(),
                first_file.display()
            )));
        }
        if let Some(g) = seen.insert(s.index, f) {
            return Err(ShardError::Merge(format!(
                "{} and {} are both shard {s}: a duplicated shard (a copy, or one file given \
                 twice); give each shard once",
                f.display(),
                g.display()
            )));
        }
    }
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
