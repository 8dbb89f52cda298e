//! The regression baseline: did any rounded number or verdict change since the
//! snapshots were recorded? This is a different question from "does the claim hold"
//! ([`crate::judge`]), and the run answers both on separate lines.
//!
//! The baseline *is* the insta snapshots of `tests/claims.rs`
//! (`tests/snapshots/tests__claims__every_claim_at_the_quick_profile@<id>.yaml.snap`):
//! one source of truth for CI and for `dpclaims run`. A run compares its
//! [`super::snapshot::snapshot`] of each claim with the snapshot's body when the
//! snapshot's header records the same profile and seed; numbers compare as numbers
//! (insta writes `0` where the rendering holds `0.0`).
use super::snapshot::snapshot;
use crate::judge::ClaimOutcome;
use crate::spec::Profile;
use std::path::Path;

/// The snapshot file of a claim in a baseline directory.
pub fn snapshot_file(dir: &Path, id: &str) -> std::path::PathBuf {
    dir.join(format!(
        "tests__claims__every_claim_at_the_quick_profile@{id}.yaml.snap"
    ))
}

/// What the comparison found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Not compared (why: no baseline directory, or it records another profile/seed).
    NotChecked(String),
    /// Every claim that has a snapshot equals it; the others (new claims) are listed.
    Unchanged { compared: usize, new: Vec<String> },
    /// One line per claim that differs or has no snapshot.
    Changed(Vec<String>),
}

impl Baseline {
    pub fn ok(&self) -> bool {
        !matches!(self, Baseline::Changed(_))
    }
    /// "baseline unchanged", "baseline CHANGED (2 claims: ...)", "baseline not checked (...)".
    pub fn line(&self) -> String {
        match self {
            Baseline::NotChecked(why) => format!("baseline not checked ({why})"),
            Baseline::Unchanged { new, .. } if new.is_empty() => "baseline unchanged".into(),
            Baseline::Unchanged { new, .. } => format!(
                "baseline unchanged ({} not in the baseline yet: {})",
                new.len(),
                new.join(", ")
            ),
            Baseline::Changed(v) => format!(
                "baseline CHANGED ({} claim{}: {})",
                v.len(),
                if v.len() == 1 { "" } else { "s" },
                v.join("; ")
            ),
        }
    }
}

/// Compares every outcome with its snapshot in `dir`.
pub fn compare(dir: &Path, outcomes: &[ClaimOutcome], profile: Profile, seed: u64) -> Baseline {
    if !dir.is_dir() {
        return Baseline::NotChecked(format!("no baseline directory {}", dir.display()));
    }
    let mut changed = Vec::new();
    let mut new = Vec::new();
    let mut compared = 0;
    for o in outcomes {
        let file = snapshot_file(dir, &o.claim.id);
        let Ok(text) = std::fs::read_to_string(&file) else {
            new.push(o.claim.id.clone());
            continue;
        };
        let Some((header, body)) = split(&text) else {
            changed.push(format!(
                "{}: unreadable snapshot {}",
                o.claim.id,
                file.display()
            ));
            continue;
        };
        let info = |key: &str| header.get("info").and_then(|i| i.get(key)).cloned();
        let same_run = info("profile") == Some(serde_yaml::Value::from(profile.to_string()))
            && info("seed").and_then(|s| s.as_u64()) == Some(seed);
        if !same_run {
            continue;
        }
        compared += 1;
        let mine = serde_yaml::to_value(snapshot(o)).map(normalise);
        if mine.ok() != Some(normalise(body)) {
            changed.push(format!("{}: differs from {}", o.claim.id, file.display()));
        }
    }
    if !changed.is_empty() {
        Baseline::Changed(changed)
    } else if compared == 0 && new.len() < outcomes.len() {
        Baseline::NotChecked(format!(
            "the baseline in {} records another profile or seed than {profile}/{seed}",
            dir.display()
        ))
    } else {
        Baseline::Unchanged { compared, new }
    }
}

/// (header, body) of an insta snapshot file: `---\n<header>---\n<body>`.
fn split(text: &str) -> Option<(serde_yaml::Value, serde_yaml::Value)> {
    let rest = text.strip_prefix("---\n")?;
    let (header, body) = rest.split_once("\n---\n")?;
    Some((
        serde_yaml::from_str(header).ok()?,
        serde_yaml::from_str(body).ok()?,
    ))
}

/// Every number as an f64, so `0` and `0.0` compare equal.
fn normalise(v: serde_yaml::Value) -> serde_yaml::Value {
    use serde_yaml::Value;
    match v {
        Value::Number(n) => Value::from(n.as_f64().unwrap_or(f64::NAN)),
        Value::Sequence(s) => Value::Sequence(s.into_iter().map(normalise).collect()),
        Value::Mapping(m) => Value::Mapping(
            m.into_iter()
                .map(|(k, v)| (normalise(k), normalise(v)))
                .collect(),
        ),
        other => other,
    }
}
