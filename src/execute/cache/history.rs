//! What each claim's last run in a cache did, and why a rerun recomputes: one small file
//! per claim and profile (`<cache>/.history/<claim>.<profile>.json`: a dot folder, never
//! taken for a build's folder by `cache stats` or `prune`, and kept across builds so a
//! rerun can say "another build").
//!
//! A unit's key is a hash ([`super::entry`]): a miss says nothing of its cause. So a run
//! also records, per claim, what went into its keys, part by part (the engine build, the
//! machine's kernels, the judged content of the spec, each variant's core identity and
//! each file of an external core by its own SHA-256), with what the run did (units read
//! and computed, their wall seconds, the core's start-up, the accountants of `rhs`
//! computed). The next run compares part by part and names what changed ("core file
//! `train.py` changed") beside the units it recomputed; `dpclaims plan` prices an
//! external core from the measured history instead of a nominal figure.
//!
//! The history explains and prices; it never decides a value. A damaged or foreign file
//! is ignored (the rerun then says "no earlier run recorded").
use super::{CacheCounts, ResultCache};
use crate::spec::{Claim, Profile};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// First field of a history file (bump when its meaning changes).
pub const FORMAT: &str = "dpclaims-history/1";

/// One claim's last run at one profile (module docs).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClaimHistory {
    pub format: String,
    pub claim: String,
    pub profile: String,
    pub seed: u64,
    /// The engine hash of the build.
    pub build: String,
    /// The machine's kernels ([`super::machine_identity`]).
    pub machine: String,
    /// The judged content of the spec ([`Claim::key_hash`]).
    pub spec: String,
    /// Variant -> its core's identity (`None`: a built-in system, or a core that is not
    /// hashable).
    pub cores: BTreeMap<String, Option<String>>,
    /// An external core's files (as the spec's directory reaches them) -> SHA-256 (hex);
    /// `unreadable` for a file that could not be read.
    pub files: BTreeMap<String, String>,
    pub units_read: usize,
    pub units_computed: usize,
    /// Wall seconds of the units the run computed (summed over the units, on their
    /// threads), from the last run that computed any.
    pub unit_seconds: f64,
    /// Units those seconds are of.
    pub timed_units: usize,
    /// Wall seconds of the first start of the claim's external core(s) (0 for a
    /// built-in system).
    pub startup_seconds: f64,
    /// Accountants and calibrations of its expressions computed (not read) and their
    /// seconds.
    pub functions_computed: usize,
    pub function_seconds: f64,
}

impl ClaimHistory {
    /// Measured seconds of one computed unit (wall time on its thread), if any were.
    pub fn seconds_per_unit(&self) -> Option<f64> {
        (self.timed_units > 0).then(|| self.unit_seconds / self.timed_units as f64)
    }
}

/// The folder of the history files in the cache directory `dir`.
pub fn dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join(".history")
}

fn file(cache_dir: &Path, claim: &str, profile: Profile) -> PathBuf {
    // A claim id is lowercase letters, digits and '-' (spec::names): a safe file name.
    dir(cache_dir).join(format!("{claim}.{profile}.json"))
}

/// The history of `claim` at `profile` in the cache directory `cache_dir`, if one is
/// recorded and readable.
pub fn read(cache_dir: &Path, claim: &str, profile: Profile) -> Option<ClaimHistory> {
    let bytes = crate::fsio::read(
        &file(cache_dir, claim, profile),
        crate::fsio::InputKind::CacheEntry,
    )
    .ok()?;
    serde_json::from_slice::<ClaimHistory>(&bytes)
        .ok()
        .filter(|h| h.format == FORMAT && h.claim == claim)
}

/// What went into the keys of `claim`'s units in `cache`, part by part (the counts are
/// left at zero).
pub fn identity(cache: &ResultCache, claim: &Claim, profile: Profile, seed: u64) -> ClaimHistory {
    let dir = claim.file.parent().unwrap_or(Path::new(""));
    let files = claim
        .core_files
        .iter()
        .map(|f| {
            let name = f.strip_prefix(dir).unwrap_or(f).display().to_string();
            let sum = crate::fsio::read(f, crate::fsio::InputKind::CoreFile)
                .map(|b| {
                    Sha256::digest(&b)
                        .iter()
                        .map(|x| format!("{x:02x}"))
                        .collect()
                })
                .unwrap_or_else(|_| "unreadable".to_string());
            (name, sum)
        })
        .collect();
    ClaimHistory {
        format: FORMAT.to_string(),
        claim: claim.id.clone(),
        profile: profile.to_string(),
        seed,
        build: cache.build().to_string(),
        machine: cache.machine().to_string(),
        spec: claim.key_hash.clone(),
        cores: claim
            .variants
            .iter()
            .map(|v| (v.name.clone(), claim.system.cache_identity(&v.name)))
            .collect(),
        files,
        ..Default::default()
    }
}

fn short(h: &str) -> &str {
    &h[..h.len().min(12)]
}

/// Why units of a claim whose identity is now `now` were computed, when its previous
/// run was `prev`: every part that differs, in the order a reader fixes them.
pub fn reasons(prev: Option<&ClaimHistory>, now: &ClaimHistory) -> Vec<String> {
    let Some(p) = prev else {
        return vec!["no earlier run of this claim is recorded in this cache".to_string()];
    };
    let mut out = Vec::new();
    if p.build != now.build {
        out.push(format!(
            "another build of the engine ({} -> {}): every unit is new",
            short(&p.build),
            short(&now.build)
        ));
    }
    if p.machine != now.machine {
        out.push(format!(
            "another machine's kernels ({} -> {})",
            p.machine, now.machine
        ));
    }
    if p.spec != now.spec {
        out.push(
            "the spec's judged content changed (a field other than prose: every unit of the claim is new)"
                .to_string(),
        );
    }
    let mut file_changes = Vec::new();
    for (name, sum) in &now.files {
        match p.files.get(name) {
            None => file_changes.push(format!("core file `{name}` is new to the cache")),
            Some(old) if old != sum => file_changes.push(format!("core file `{name}` changed")),
            _ => {}
        }
    }
    for name in p.files.keys().filter(|n| !now.files.contains_key(*n)) {
        file_changes.push(format!("core file `{name}` is no longer declared"));
    }
    let cores_changed = p.cores != now.cores;
    if file_changes.is_empty() && cores_changed {
        out.push("the core's command or `external.version` changed".to_string());
    }
    out.extend(file_changes);
    if p.seed != now.seed {
        out.push(format!("another master seed ({} -> {})", p.seed, now.seed));
    }
    if out.is_empty() {
        out.push(
            "units not in the cache (more replicates drawn than before, or entries pruned)"
                .to_string(),
        );
    }
    out
}

/// Records the run of `claim` that did `done` in `cache` (its units' wall seconds
/// summed: `unit_seconds`), and returns the line a rerun prints when it computed units:
/// how many, and why ([`reasons`]). A history that cannot be written is skipped (it
/// explains, it decides nothing).
pub fn after_claim(
    cache: &ResultCache,
    claim: &Claim,
    profile: Profile,
    seed: u64,
    done: &CacheCounts,
    unit_seconds: f64,
) -> Option<String> {
    let prev = read(cache.dir(), &claim.id, profile);
    let mut now = identity(cache, claim, profile, seed);
    now.units_read = done.hits;
    now.units_computed = done.misses;
    now.startup_seconds = cache.startup_of(&claim.id);
    now.functions_computed = done.functions_computed;
    now.function_seconds = done.function_micros as f64 * 1e-6;
    if done.misses > 0 {
        now.unit_seconds = unit_seconds;
        now.timed_units = done.misses;
    } else if let Some(p) = &prev {
        // A run that computed nothing keeps the measurements of the last that did.
        now.unit_seconds = p.unit_seconds;
        now.timed_units = p.timed_units;
        if now.startup_seconds == 0.0 {
            now.startup_seconds = p.startup_seconds;
        }
    }
    if done.functions_computed == 0 {
        if let Some(p) = &prev {
            now.functions_computed = p.functions_computed;
            now.function_seconds = p.function_seconds;
        }
    }
    let line = (done.misses > 0).then(|| {
        format!(
            "claim `{}`: {} of {} units computed: {}",
            claim.id,
            done.misses,
            done.misses + done.hits,
            reasons(prev.as_ref(), &now).join("; ")
        )
    });
    if let Ok(text) = serde_json::to_vec_pretty(&now) {
        let path = file(cache.dir(), &claim.id, profile);
        let _ = std::fs::create_dir_all(dir(cache.dir()));
        let _ = super::write_atomic(&path, &text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ClaimHistory {
        ClaimHistory {
            format: FORMAT.into(),
            claim: "c".into(),
            profile: "quick".into(),
            build: "b1".into(),
            machine: "m".into(),
            spec: "s".into(),
            cores: BTreeMap::from([("main".to_string(), Some("id1".to_string()))]),
            files: BTreeMap::from([
                ("core.py".to_string(), "aa".to_string()),
                ("train.py".to_string(), "bb".to_string()),
            ]),
            ..Default::default()
        }
    }

    #[test]
    fn a_rerun_names_the_file_that_changed_and_nothing_else() {
        let p = base();
        let mut n = base();
        n.files.insert("train.py".into(), "cc".into());
        n.cores.insert("main".into(), Some("id2".into()));
        assert_eq!(reasons(Some(&p), &n), vec!["core file `train.py` changed"]);
    }

    #[test]
    fn every_part_that_differs_is_said_and_an_unchanged_one_is_not() {
        let p = base();
        assert_eq!(
            reasons(None, &p),
            vec!["no earlier run of this claim is recorded in this cache"]
        );
        assert_eq!(
            reasons(Some(&p), &p),
            vec!["units not in the cache (more replicates drawn than before, or entries pruned)"]
        );
        let mut n = base();
        n.build = "b2".into();
        n.spec = "t".into();
        n.seed = 3;
        n.cores.insert("main".into(), Some("id2".into()));
        let r = reasons(Some(&p), &n).join("; ");
        for part in [
            "another build",
            "judged content",
            "command or `external.version`",
            "seed (0 -> 3)",
        ] {
            assert!(r.contains(part), "{part}: {r}");
        }
        let mut gone = base();
        gone.files.remove("train.py");
        gone.files.insert("model.py".into(), "dd".into());
        let r = reasons(Some(&p), &gone).join("; ");
        assert!(
            r.contains("`model.py` is new") && r.contains("`train.py` is no longer declared"),
            "{r}"
        );
    }

    #[test]
    fn seconds_per_unit_needs_timed_units() {
        let mut h = base();
        assert_eq!(h.seconds_per_unit(), None);
        h.unit_seconds = 3.0;
        h.timed_units = 6;
        assert_eq!(h.seconds_per_unit(), Some(0.5));
    }
}
