//! Which claims a `dpclaims run` runs (issue 33, item 5), as pytest users expect:
//! paths or claim ids (`dpclaims run tpk-ranking`), `-k PATTERN` over ids, prediction
//! and variant names, `--last-failed` (the claims that failed or stopped the previous run
//! that used the same result cache) and `--fail-fast` (in `run.rs`: stop after the first
//! claim that fails).
//!
//! A claim always runs whole: its negative controls are judged by its own predictions,
//! so `-k` matching a prediction or variant selects the claim that has it.
use crate::spec::{self, Claim};
use clap::Args;
use std::path::{Path, PathBuf};

/// The selection flags of `dpclaims run`.
#[derive(Args, Debug, Default, Clone)]
pub struct SelectArgs {
    /// Run only the claims whose id, or one of whose prediction or variant names,
    /// contains PATTERN (case-insensitive; several -k: any of them). A claim runs whole.
    #[arg(short = 'k', value_name = "PATTERN")]
    pub keyword: Vec<String>,
    /// Run only the claims that failed (exit 1: a failing verdict or a change against the
    /// baseline) or stopped the run (exit 2) in the last run that used the same result
    /// cache; every claim when there were none.
    #[arg(long)]
    pub last_failed: bool,
    /// Stop after the first claim that fails: a failing verdict, or, with a baseline, a
    /// change against it (the report set is left as it was; the other outputs cover the
    /// claims run so far).
    #[arg(long, short = 'x')]
    pub fail_fast: bool,
}

/// A path argument that does not exist and looks like a claim id is the claim of that
/// id in `claims/` (its file `claims/<id>.yaml`, or any spec there with that `id:`).
/// Only the `id:` fields of claims/ are read to find it, so a broken spec elsewhere in
/// claims/ does not stop a run (or a check) of the one asked for.
pub fn resolve(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut catalogue: Option<Vec<(String, PathBuf)>> = None;
    for p in paths {
        if p.exists() || !looks_like_id(p) {
            out.push(p.clone());
            continue;
        }
        let id = p.to_string_lossy().into_owned();
        let direct = crate::project::path("claims").join(format!("{id}.yaml"));
        if direct.is_file() {
            out.push(direct);
            continue;
        }
        if catalogue.is_none() {
            let none = || {
                anyhow::anyhow!(
                    "`{id}` is neither a file nor a claim id: no claims/ here (pass claim files, \
                     directories or the ids of claims in ./claims/)"
                )
            };
            if !crate::project::path("claims").is_dir() {
                return Err(none());
            }
            catalogue = Some(ids_in_claims().map_err(|_| none())?);
        }
        let all = catalogue.as_deref().unwrap_or_default();
        match all.iter().find(|(i, _)| *i == id) {
            Some((_, f)) => out.push(f.clone()),
            None => {
                let near = nearest(&id, all.iter().map(|(i, _)| i.as_str()));
                anyhow::bail!(
                    "`{id}` is neither a file nor the id of a claim in claims/{}",
                    near.map(|n| format!(" (did you mean `{n}`?)"))
                        .unwrap_or_default()
                );
            }
        }
    }
    Ok(out)
}

/// The `id:` of every spec in claims/ with its file (specs whose id cannot be read are
/// left out: they are reported when they are loaded).
fn ids_in_claims() -> Result<Vec<(String, PathBuf)>, spec::SpecError> {
    let mut ids = Vec::new();
    for f in spec::spec_files(&crate::project::path("claims"))? {
        let text = crate::fsio::read(&f, crate::fsio::InputKind::Spec)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default();
        let found = serde_yaml::from_str::<serde_yaml::Value>(&text)
            .ok()
            .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string));
        if let Some(found) = found {
            ids.push((found, f));
        }
    }
    Ok(ids)
}

pub(super) fn looks_like_id(p: &Path) -> bool {
    let s = p.to_string_lossy();
    !s.is_empty()
        && !s.contains('/')
        && !s.ends_with(".yaml")
        && !s.ends_with(".yml")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// The candidate closest to `word` by edit distance, if it is close (at most a third of
/// the word's length).
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(word, c);
        if best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.filter(|(d, _)| *d <= word.chars().count().div_ceil(3).max(1))
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Whether `c` matches one of the `-k` patterns (none: every claim).
pub fn matches(c: &Claim, patterns: &[String]) -> bool {
    if patterns.is_empty() {
        return true;
    }
    let names: Vec<String> = std::iter::once(c.id.clone())
        .chain(c.predictions.iter().map(|p| p.name.clone()))
        .chain(c.variants.iter().map(|v| v.name.clone()))
        .map(|s| s.to_lowercase())
        .collect();
    patterns.iter().any(|k| {
        let k = k.to_lowercase();
        names.iter().any(|n| n.contains(&k))
    })
}

/// Where the ids of the last run's failed claims are kept: beside the result cache's
/// entries, in the cache directory (the tool's own state, marked by its CACHEDIR.TAG).
/// Per project (issue 50, family 5): projects that share a cache directory keep their
/// own lists, `last-failed-<16 hex digits of the SHA-256 of the resolved working
/// directory>.json`.
pub fn last_failed_file(cache_dir: &Path) -> PathBuf {
    use sha2::Digest as _;
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_default();
    let h = sha2::Sha256::digest(cwd.as_os_str().as_encoded_bytes());
    let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
    cache_dir.join(format!("last-failed-{hex}.json"))
}

/// The ids recorded by the last run (empty when there is no record or it cannot be read).
pub fn read_last_failed(cache_dir: &Path) -> Vec<String> {
    let f = last_failed_file(cache_dir);
    let Ok(text) = crate::fsio::read_string(&f, crate::fsio::InputKind::Verdicts) else {
        return Vec::new();
    };
    serde_json::from_str::<Vec<String>>(&text)
        .unwrap_or_default()
        .into_iter()
        .filter(|id| crate::spec::names::claim_id(id).is_ok())
        .collect()
}

/// Records the ids of this run's failed claims (only into an existing cache directory).
pub fn write_last_failed(cache_dir: &Path, ids: &[String]) {
    if !cache_dir.join("CACHEDIR.TAG").is_file() {
        return;
    }
    if let Ok(json) = serde_json::to_string(ids) {
        let _ = crate::report::write_atomic(&last_failed_file(cache_dir), json.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_id_is_suggested_only_when_close() {
        let ids = ["tpk-ranking", "tpk-budget-split", "engine-equivalence"];
        assert_eq!(
            nearest("tpk-rankin", ids.iter().copied()),
            Some("tpk-ranking")
        );
        assert_eq!(nearest("zzzz", ids.iter().copied()), None);
    }

    #[test]
    fn ids_and_paths_are_told_apart() {
        assert!(looks_like_id(Path::new("tpk-ranking")));
        assert!(!looks_like_id(Path::new("claims/tpk-ranking.yaml")));
        assert!(!looks_like_id(Path::new("x.yaml")));
    }
}
