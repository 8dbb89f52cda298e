//! The registration ledger: what a claim judged when its first results were accepted,
//! and every change to it since, with its reason.
//!
//! A claim's judged parts — predictions, tolerances, hypotheses and premises, controls,
//! replicate schedules, everything of the spec that is not prose
//! ([`super::judged::PROSE_KEYS`]), and the text of each registry premise it is judged
//! under (`premise[<name>]`) — are registered when its first results enter the baseline
//! (`dpclaims accept`). From then on a run compares the spec with the ledger: a changed
//! judged field is an **amendment**, and the run refuses it (exit 2, naming the fields)
//! until `dpclaims accept --amend "why" <claim>` records it with its reason. The amendment
//! learns whether a verdict moved when the new results are accepted. Pages show every
//! amendment (the claim page lists them; a scorecard marks the rows whose verdict moved
//! with one and counts them in its box; `verdicts.json` carries them).
//!
//! One file per claim, `<baseline>/ledger/<id>.yaml`, committed beside the baseline
//! snapshots. The entries of the claims that existed before the ledger were back-filled
//! once from git history (`dpclaims ledger backfill`), each amendment naming its commit;
//! where history cannot say whether a verdict moved, the entry says so.
use super::judged::{self, FieldChange};
use super::Claim;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The ledger file of claim `id` in a baseline directory.
pub fn file(baseline: &Path, id: &str) -> PathBuf {
    baseline.join("ledger").join(format!("{id}.yaml"))
}

/// One claim's ledger.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub claim: String,
    pub registered: Registration,
    /// Every change to a judged field after registration, oldest first.
    #[serde(default)]
    pub amendments: Vec<Amendment>,
    /// The judged fields as registered with every amendment applied: the state a run's
    /// spec must match.
    pub judged: BTreeMap<String, String>,
}

/// When the claim's judged parts were registered.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    /// The commit of the first accepted results (`uncommitted` when recorded by
    /// `accept` before a commit).
    pub commit: String,
    /// YYYY-MM-DD.
    pub date: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// One change after results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Amendment {
    pub date: String,
    pub commit: String,
    pub reason: String,
    pub changes: Vec<Change>,
    /// The rows whose verdict moved when the amended claim's results were accepted;
    /// `None` until they are (or when history cannot say: see `verdicts_note`).
    #[serde(default)]
    pub moved: Option<Vec<Move>>,
    /// How `moved` was found, or why it is unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub verdicts_note: String,
}

impl Amendment {
    /// Whether it waits for the amended claim's next accepted results to learn which
    /// verdicts it moved (recorded in this working tree, not yet settled).
    pub fn waits_for_results(&self) -> bool {
        self.moved.is_none() && self.commit.starts_with("uncommitted")
    }
}

/// Whether the claim's last amendment waits for its next accepted results: its run keeps
/// a pending snapshot even when the snapshot equals the baseline, so that accepting it
/// records that no verdict moved.
pub fn awaits_results(entry: Option<&Entry>) -> bool {
    entry
        .and_then(|e| e.amendments.last())
        .is_some_and(Amendment::waits_for_results)
}

/// One judged field, old -> new (`None`: absent on that side).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub field: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// One row whose verdict moved with an amendment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Move {
    pub prediction: String,
    pub variant: String,
    pub before: String,
    pub after: String,
}

impl From<FieldChange> for Change {
    fn from(c: FieldChange) -> Change {
        Change {
            field: c.field,
            old: c.old,
            new: c.new,
        }
    }
}

impl Change {
    /// `field: old -> new`, values cut to `max` characters.
    pub fn line(&self, max: usize) -> String {
        let show = |v: &Option<String>| match v {
            None => "(absent)".to_string(),
            Some(s) => cut(s, max),
        };
        format!("{}: {} -> {}", self.field, show(&self.old), show(&self.new))
    }
}

impl Amendment {
    /// Whether a verdict moved with it (`None`: not known).
    pub fn verdict_moved(&self) -> Option<bool> {
        self.moved.as_ref().map(|m| !m.is_empty())
    }
}

fn cut(s: &str, max: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut t: String = one_line.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

impl Entry {
    /// The amendments whose moved rows include (prediction, variant).
    pub fn moved_row(&self, prediction: &str, variant: &str) -> Vec<&Amendment> {
        self.amendments
            .iter()
            .filter(|a| {
                a.moved.as_ref().is_some_and(|m| {
                    m.iter()
                        .any(|m| m.prediction == prediction && m.variant == variant)
                })
            })
            .collect()
    }
}

/// The judged fields of a spec text, with the registry premises its predictions are
/// judged under (`premise[<name>]`: the hypothesis's text, and its direction when
/// asymptotic).
pub fn fields_of_text(
    text: &str,
    premises: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let mut f = judged::judged_fields(text)?;
    for (name, t) in premises {
        f.insert(format!("premise[{name}]"), t.clone());
    }
    Ok(f)
}

/// The premises (registry hypotheses named in `under`) of a claim, as text.
pub fn premises(claim: &Claim) -> BTreeMap<String, String> {
    let names: Vec<String> = claim
        .predictions
        .iter()
        .flat_map(|p| p.under.iter().cloned())
        .collect();
    if names.is_empty() || claim.paper.is_empty() {
        return BTreeMap::new();
    }
    match super::registry::find(&claim.file, &claim.paper) {
        Ok(reg) => premise_text(&reg, &names),
        Err(_) => BTreeMap::new(),
    }
}

/// The text of each hypothesis of `reg` named in `names`: its comparison, and its
/// direction when asymptotic; how it is met when by construction.
pub fn premise_text(reg: &super::registry::Registry, names: &[String]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for n in names {
        if let Some(h) = reg.hypotheses.iter().find(|h| &h.name == n) {
            let t = match &h.assumption {
                None => format!("by construction: {}", h.by_construction.trim()),
                Some(a) => match &a.trend {
                    Some(t) => format!("{} ({:?})", a.text, t),
                    None => a.text.clone(),
                },
            };
            out.insert(n.clone(), t);
        }
    }
    out
}

/// The registry names a spec's judged fields put its predictions under.
pub fn under_names(fields: &BTreeMap<String, String>) -> Vec<String> {
    let mut out: Vec<String> = fields
        .iter()
        .filter(|(k, _)| k.starts_with("predictions[") && k.ends_with("].under"))
        .flat_map(|(_, v)| {
            v.trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The judged fields of a loaded claim (its file re-read).
pub fn fields(claim: &Claim) -> Result<BTreeMap<String, String>, String> {
    let text = crate::fsio::read_string(&claim.file, crate::fsio::InputKind::Spec)
        .map_err(|e| format!("{}: {e}", claim.file.display()))?;
    fields_of_text(
        text.strip_prefix('\u{feff}').unwrap_or(&text),
        &premises(claim),
    )
}

/// Reads a claim's ledger entry; `Ok(None)` when it has none (no accepted results yet).
pub fn load(baseline: &Path, id: &str) -> Result<Option<Entry>, String> {
    let f = file(baseline, id);
    match crate::fsio::read_string(&f, crate::fsio::InputKind::Snapshot) {
        Ok(t) => serde_yaml::from_str::<Entry>(&t)
            .map(Some)
            .map_err(|e| format!("ledger {}: {e}", f.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("ledger {}: {e}", f.display())),
    }
}

/// The ledger file's text.
pub fn to_text(e: &Entry) -> String {
    format!(
        "# Registration ledger of claim `{}` (dpclaims; format: src/spec/ledger.rs).\n\
         # `judged` is the state a run's spec must match; a change to it after results is an\n\
         # amendment: `dpclaims accept --amend \"why\" {}` records it. Written by dpclaims.\n{}",
        e.claim,
        e.claim,
        serde_yaml::to_string(e).unwrap_or_default()
    )
}

/// What a run must refuse: the judged fields of `claim` that differ from its ledger.
pub fn unrecorded(claim: &Claim, entry: &Entry) -> Result<Vec<FieldChange>, String> {
    Ok(judged::diff(&entry.judged, &fields(claim)?))
}

/// The error of a run refused for unrecorded changes (one claim).
pub fn refusal(claim: &str, changes: &[FieldChange]) -> String {
    let list = changes
        .iter()
        .take(12)
        .map(|c| format!("\n  {}", Change::from(c.clone()).line(60)))
        .collect::<String>();
    let more = if changes.len() > 12 {
        format!("\n  ... and {} more", changes.len() - 12)
    } else {
        String::new()
    };
    // A scorecard's ledger id is `scorecard-<paper>` (how it counts results is judged too).
    let what = if claim.starts_with("scorecard-") {
        "scorecard"
    } else {
        "claim"
    };
    format!(
        "{what} `{claim}` has accepted results, and {} of its judged fields changed since \
         they were registered (the ledger):{list}{more}\na change after results is an \
         amendment: record it with its reason, `dpclaims accept --amend \"<why>\" {claim}`, \
         and it is shown on the {what}'s page and scorecard (or undo the change)",
        changes.len()
    )
}

/// Today's date, YYYY-MM-DD (UTC; `SOURCE_DATE_EPOCH` when set, for reproducible files).
pub fn today() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    civil(secs.div_euclid(86_400))
}

/// Days since 1970-01-01 -> YYYY-MM-DD (H. Hinnant's `civil_from_days`).
fn civil(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil(0), "1970-01-01");
        assert_eq!(civil(20_789), "2026-12-02");
        assert_eq!(civil(11_016), "2000-02-29");
    }

    #[test]
    fn an_entry_round_trips_through_its_text() {
        let e = Entry {
            claim: "c".into(),
            registered: Registration {
                commit: "abc".into(),
                date: "2026-12-01".into(),
                note: String::new(),
            },
            amendments: vec![Amendment {
                date: "2026-12-02".into(),
                commit: "def".into(),
                reason: "a: b\n\"quoted\"".into(),
                changes: vec![Change {
                    field: "predictions[p].tolerance".into(),
                    old: Some("0".into()),
                    new: Some("0.25".into()),
                }],
                moved: Some(vec![]),
                verdicts_note: String::new(),
            }],
            judged: [("a".to_string(), "1".to_string())].into(),
        };
        let t = to_text(&e);
        let back: Entry = serde_yaml::from_str(&t).unwrap();
        assert_eq!(back, e);
    }
}
