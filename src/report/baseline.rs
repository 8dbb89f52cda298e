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
    /// Every claim whose rendering differs from its snapshot.
    Changed(Vec<ClaimChange>),
}

/// A claim that differs from its snapshot, and which of its results do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimChange {
    pub claim: String,
    /// "differs from <file>" or "unreadable snapshot <file>".
    pub what: String,
    /// The results whose rounded rendering changed, appeared or disappeared. Empty when
    /// the difference is not one result's (an unreadable snapshot, a reordering).
    pub results: Vec<ResultChange>,
}

/// One (prediction, variant) of a changed claim and what changed, in words
/// ("verdict holds -> refuted; estimate 0.5 -> 0.7"; "not in the baseline"; "in the
/// baseline, no longer produced").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultChange {
    pub prediction: String,
    pub variant: String,
    pub what: String,
    /// False when the result is in the baseline only (no verdict of this run).
    pub in_run: bool,
    /// The row's verdict word on the baseline (None: not in the baseline, or no verdict
    /// recorded), so that CI outputs can tell a row that held there and no longer does.
    pub before: Option<String>,
}

impl ClaimChange {
    /// "<claim>: <what>".
    pub fn line(&self) -> String {
        format!("{}: {}", self.claim, self.what)
    }
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
                v.iter()
                    .map(ClaimChange::line)
                    .collect::<Vec<_>>()
                    .join("; ")
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
        let text = match crate::fsio::read_string(&file, crate::fsio::InputKind::Snapshot) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                new.push(o.claim.id.clone());
                continue;
            }
            Err(e) => {
                changed.push(ClaimChange {
                    claim: o.claim.id.clone(),
                    what: format!("unreadable snapshot {}: {e}", file.display()),
                    results: Vec::new(),
                });
                continue;
            }
        };
        let Some((header, body)) = split(&text) else {
            changed.push(ClaimChange {
                claim: o.claim.id.clone(),
                what: format!("unreadable snapshot {}", file.display()),
                results: Vec::new(),
            });
            continue;
        };
        let info = |key: &str| header.get("info").and_then(|i| i.get(key)).cloned();
        let same_run = info("profile") == Some(serde_yaml::Value::from(profile.to_string()))
            && info("seed").and_then(|s| s.as_u64()) == Some(seed);
        if !same_run {
            continue;
        }
        compared += 1;
        let mine = serde_yaml::to_value(snapshot(o)).map(normalise).ok();
        let body = normalise(body);
        if mine.as_ref() != Some(&body) {
            changed.push(ClaimChange {
                claim: o.claim.id.clone(),
                what: format!("differs from {}", file.display()),
                results: mine.map(|m| result_changes(&body, &m)).unwrap_or_default(),
            });
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

/// The results that differ between two snapshot files' texts (see [`result_changes`]);
/// one change naming the file when either cannot be read.
pub fn text_changes(old: &str, new: &str) -> Vec<ResultChange> {
    match (split(old), split(new)) {
        (Some((_, o)), Some((_, n))) => result_changes(&normalise(o), &normalise(n)),
        _ => vec![ResultChange {
            prediction: "(snapshot)".into(),
            variant: "-".into(),
            what: "unreadable snapshot".into(),
            in_run: false,
            before: None,
        }],
    }
}

/// A verdict word without the task it was reached on: "reproduced (on random features)"
/// -> "reproduced". The task is the spec's `proxy` wording (prose, not a judged part), so
/// rewording it moves no verdict; every other part of the word (the outcome, "(not
/// discriminating)", "(control caught)") is kept.
fn outcome_of(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(i) = rest.find(" (on ") {
        out.push_str(&rest[..i]);
        // Skip to the parenthesis that closes " (on ", counting nested ones.
        let mut depth = 0usize;
        let mut end = rest.len();
        for (j, c) in rest[i + 1..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1 + j + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The rows whose verdict differs between two snapshot texts, in the order of `new`
/// then the rows only in `old`: (prediction, variant, before, after), `(absent)` for a row
/// on one side only. `None` when either text is not a snapshot. A verdict whose words
/// differ only in the task a proxy was reached on ([`outcome_of`]) has not moved.
pub fn verdict_moves(old: &str, new: &str) -> Option<Vec<(String, String, String, String)>> {
    let rows = |text: &str| -> Option<Vec<(String, String, String)>> {
        let (_, body) = split(text)?;
        let results = body.get("results")?.as_sequence()?.clone();
        Some(
            results
                .iter()
                .map(|r| {
                    let f = |k: &str| r.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                    (f("prediction"), f("variant"), f("verdict"))
                })
                .collect(),
        )
    };
    let (o, n) = (rows(old)?, rows(new)?);
    let absent = || "(absent)".to_string();
    let mut out = Vec::new();
    for (p, v, after) in &n {
        let before = o
            .iter()
            .find(|(op, ov, _)| op == p && ov == v)
            .map(|r| r.2.clone())
            .unwrap_or_else(absent);
        if outcome_of(&before) != outcome_of(after) {
            out.push((p.clone(), v.clone(), before, after.clone()));
        }
    }
    for (p, v, before) in &o {
        if !n.iter().any(|(np, nv, _)| np == p && nv == v) {
            out.push((p.clone(), v.clone(), before.clone(), absent()));
        }
    }
    Some(out)
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

/// The results of two normalised snapshot bodies (`results:` lists of
/// [`super::snapshot::SnapResult`]) that differ, matched by (prediction, variant).
fn result_changes(old: &serde_yaml::Value, new: &serde_yaml::Value) -> Vec<ResultChange> {
    use serde_yaml::Value;
    let key = |r: &Value| {
        let f = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("?").to_string();
        (f("prediction"), f("variant"))
    };
    let list = |v: &serde_yaml::Value| -> Vec<Value> {
        v.get("results")
            .and_then(Value::as_sequence)
            .cloned()
            .unwrap_or_default()
    };
    let (old, new) = (list(old), list(new));
    let mut out = Vec::new();
    for n in &new {
        let (prediction, variant) = key(n);
        let before = old.iter().find(|o| key(o) == key(n));
        let what = match before {
            None => "not in the baseline".to_string(),
            Some(o) if o == n => continue,
            Some(o) => field_changes(o, n),
        };
        out.push(ResultChange {
            prediction,
            variant,
            what,
            in_run: true,
            before: before
                .and_then(|o| o.get("verdict"))
                .and_then(Value::as_str)
                .map(str::to_string),
        });
    }
    for o in old.iter().filter(|o| !new.iter().any(|n| key(n) == key(o))) {
        let (prediction, variant) = key(o);
        out.push(ResultChange {
            prediction,
            variant,
            what: "in the baseline, no longer produced".into(),
            in_run: false,
            before: o.get("verdict").and_then(Value::as_str).map(str::to_string),
        });
    }
    out
}

/// "verdict holds -> refuted; estimate 0.5 -> 0.7": the fields of two snapshot results
/// that differ, verdict first.
fn field_changes(old: &serde_yaml::Value, new: &serde_yaml::Value) -> String {
    let show = |v: Option<&serde_yaml::Value>| match v {
        None | Some(serde_yaml::Value::Null) => "none".to_string(),
        Some(v) => serde_yaml::to_string(v)
            .map(|s| s.trim().replace('\n', " "))
            .unwrap_or_default(),
    };
    let mut keys = vec!["verdict".to_string(), "control".to_string()];
    for m in [old, new].into_iter().filter_map(|v| v.as_mapping()) {
        for k in m.keys().filter_map(|k| k.as_str()) {
            if !keys.iter().any(|x| x == k) {
                keys.push(k.to_string());
            }
        }
    }
    keys.iter()
        .filter(|k| old.get(k.as_str()) != new.get(k.as_str()))
        .map(|k| {
            format!(
                "{k} {} -> {}",
                show(old.get(k.as_str())),
                show(new.get(k.as_str()))
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reworded_proxy_task_moves_no_verdict_and_another_outcome_does() {
        use super::outcome_of;
        assert_eq!(
            outcome_of("reproduced (on Eq. 8 with its (log) factors and the...)"),
            "reproduced"
        );
        assert_eq!(
            outcome_of("not reproduced (on the 8x8 digits) (control caught)"),
            "not reproduced (control caught)"
        );
        assert_eq!(
            outcome_of("holds (not discriminating)"),
            "holds (not discriminating)"
        );
        assert_ne!(
            outcome_of("reproduced (on a)"),
            outcome_of("not reproduced (on a)")
        );
        assert_eq!(outcome_of("inconclusive"), "inconclusive");
    }

    use super::result_changes;

    fn body(results: &str) -> serde_yaml::Value {
        serde_yaml::from_str(&format!("id: c\nresults:\n{results}")).unwrap()
    }

    #[test]
    fn the_results_that_changed_are_named_with_what_changed() {
        let a = "  - {prediction: p, variant: v, verdict: holds, estimate: 0.5}\n";
        let b = "  - {prediction: p, variant: w, verdict: holds, estimate: 0.5}\n";
        let old = body(&format!("{a}{b}"));
        assert!(result_changes(&old, &old).is_empty());
        let new = body(&format!(
            "{}{}",
            "  - {prediction: p, variant: v, verdict: refuted, estimate: 0.7}\n",
            "  - {prediction: q, variant: v, verdict: holds, estimate: 0.1}\n"
        ));
        let ch = result_changes(&old, &new);
        let befores: Vec<Option<&str>> = ch.iter().map(|c| c.before.as_deref()).collect();
        assert_eq!(befores, vec![Some("holds"), None, Some("holds")]);
        let lines: Vec<(String, String, String, bool)> = ch
            .into_iter()
            .map(|c| (c.prediction, c.variant, c.what, c.in_run))
            .collect();
        assert_eq!(
            lines,
            vec![
                (
                    "p".into(),
                    "v".into(),
                    "verdict holds -> refuted; estimate 0.5 -> 0.7".into(),
                    true
                ),
                ("q".into(), "v".into(), "not in the baseline".into(), true),
                (
                    "p".into(),
                    "w".into(),
                    "in the baseline, no longer produced".into(),
                    false
                ),
            ]
        );
    }
}
