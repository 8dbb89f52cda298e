//! The judged parts of a spec, field by field: what decides a verdict, as opposed to the
//! prose that explains it.
//!
//! One list, [`PROSE_KEYS`], says which keys decide nothing (at any depth of the spec):
//! everything else is judged. Two mechanisms read it:
//! * the registration ledger (`crate::spec::ledger`): a change to a judged field of a
//!   claim with accepted results is an amendment, refused until recorded with a reason;
//! * keys that must change whenever a result could (the result cache): a key built from
//!   [`judged_fields`] covers every field not declared prose here, with no hand-kept list
//!   of the fields that matter.
//!
//! [`judged_fields`] flattens the spec's YAML into `path -> value` pairs: mappings by key
//! (`sweeps.grid.quick.replicates.max`), lists of named items by name
//! (`predictions[interior-optimum].under`, `variants[digits].params.epsilon`), other lists
//! of mappings by index (`assumptions[0].require`), and lists of plain values as one value
//! (`[0.2, 0.3, 0.4]`), so that an old -> new reads as the spec reads.
use serde_yaml::Value;
use std::collections::BTreeMap;

/// Keys that decide no verdict, wherever they appear in a spec: explanations, quotes and
/// findings written for the reader. Editing them needs no amendment and keeps every key.
/// Everything not listed is judged (the safe default: a new field is judged until it is
/// declared prose here).
pub const PROSE_KEYS: &[&str] = &[
    "discussion",
    "labels",
    "title",
    "statement",
    "source",
    "note",
    "quote",
    "description",
    "proxy",
    "findings",
    "tolerance_reason",
];

/// Whether `key` is declared prose ([`PROSE_KEYS`]).
pub fn is_prose(key: &str) -> bool {
    PROSE_KEYS.contains(&key)
}

/// The judged content of a spec's text as one SHA-256 (64 hex digits): the YAML value
/// with every key of [`PROSE_KEYS`] removed at any depth, serialised back (a faithful,
/// injective encoding: a string with a comma or a trailing space stays itself). What the
/// result cache keys a claim's units by ([`crate::spec::Claim::key_hash`]): every field
/// not declared prose decides the key, with no list of the fields that matter. Text that
/// is not YAML hashes as its bytes.
pub fn key_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let body = match serde_yaml::from_str::<Value>(text) {
        Ok(mut v) => {
            drop_prose(&mut v);
            serde_yaml::to_string(&v).unwrap_or_else(|_| text.to_string())
        }
        Err(_) => text.to_string(),
    };
    let mut h = Sha256::new();
    h.update(b"dpclaims/judged-spec/v1\n");
    h.update(body.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Removes every prose key ([`PROSE_KEYS`]) from `v`, at any depth.
fn drop_prose(v: &mut Value) {
    match v {
        Value::Mapping(m) => {
            m.retain(|k, _| !k.as_str().is_some_and(is_prose));
            for (_, val) in m.iter_mut() {
                drop_prose(val);
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(drop_prose),
        Value::Tagged(t) => drop_prose(&mut t.value),
        _ => {}
    }
}

/// Keys whose lists are keyed by this field instead of by position.
const NAME_KEYS: &[&str] = &["name", "result"];

/// The judged fields of a spec's text: `path -> value`, prose removed ([`PROSE_KEYS`]).
/// `Err` when the text is not YAML.
pub fn judged_fields(text: &str) -> Result<BTreeMap<String, String>, String> {
    let v: Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    flatten("", &v, &mut out);
    Ok(out)
}

/// The value of a scalar or of a list of scalars, as the spec would write it.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some("null".into()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.trim_end().to_string()),
        Value::Sequence(items) => {
            let parts: Option<Vec<String>> = items
                .iter()
                .map(|i| match i {
                    Value::Sequence(_) => None,
                    other => scalar(other),
                })
                .collect();
            parts.map(|p| format!("[{}]", p.join(", ")))
        }
        Value::Mapping(_) => None,
        Value::Tagged(t) => scalar(&t.value),
    }
}

fn key_text(k: &Value) -> String {
    scalar(k).unwrap_or_else(|| "?".into())
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn flatten(path: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    if let Some(s) = scalar(v) {
        out.insert(path.to_string(), s);
        return;
    }
    match v {
        Value::Mapping(m) => {
            if m.is_empty() {
                out.insert(path.to_string(), "{}".into());
            }
            for (k, val) in m {
                let k = key_text(k);
                if is_prose(&k) {
                    continue;
                }
                flatten(&join(path, &k), val, out);
            }
        }
        Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                let label = item
                    .as_mapping()
                    .and_then(|m| {
                        NAME_KEYS
                            .iter()
                            .find_map(|n| m.get(Value::String((*n).into())))
                    })
                    .and_then(scalar)
                    .unwrap_or_else(|| i.to_string());
                flatten(&format!("{path}[{label}]"), item, out);
            }
        }
        Value::Tagged(t) => flatten(path, &t.value, out),
        _ => {}
    }
}

/// The keys of a scorecard that decide how the paper's results are counted: which checks
/// a result reads (`checked_by`), what could make it fail and the control a holds must
/// catch (`could_fail`, `control`), its key number (`key`; its `meaning` is prose), the
/// hypotheses it inherits, a registry hypothesis's requirement and reading (`require`,
/// `asymptotic`, `reading`, `by_construction`), and a result declared outside the checks (`not_checkable`,
/// `not_testable`: only that it is declared, its explanation is prose). Everything else of
/// a scorecard (intro, summary, titles, quotes, remarks, reasons) is written for the reader.
pub const SCORECARD_JUDGED: &[&str] = &[
    "checked_by",
    "could_fail",
    "control",
    "key",
    "hypotheses",
    "require",
    "asymptotic",
    "reading",
    "by_construction",
    "not_checkable",
    "not_testable",
];

/// The judged fields of a scorecard's text (see [`SCORECARD_JUDGED`]), flattened as
/// [`judged_fields`] flattens a spec: results by their `result` name, hypotheses by their
/// `name`. `Err` when the text is not YAML.
pub fn scorecard_fields(text: &str) -> Result<BTreeMap<String, String>, String> {
    let all = judged_fields(text)?;
    let seg = |p: &str| -> Vec<String> {
        // Split on the dots outside brackets (a result's name may hold a dot: "Eq. 20").
        let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0usize);
        for ch in p.chars() {
            match ch {
                '[' => {
                    depth += 1;
                    cur.push(ch)
                }
                ']' => {
                    depth = depth.saturating_sub(1);
                    cur.push(ch)
                }
                '.' if depth == 0 => out.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        out.push(cur);
        out.into_iter()
            .map(|s| s.split('[').next().unwrap_or("").to_string())
            .collect()
    };
    let mut out = BTreeMap::new();
    for (path, value) in all {
        let parts = seg(&path);
        let top = parts.first().map(String::as_str);
        if !matches!(top, Some("results") | Some("hypotheses")) {
            continue;
        }
        let Some(k) = parts[1..]
            .iter()
            .find(|p| SCORECARD_JUDGED.contains(&p.as_str()))
        else {
            continue;
        };
        if k == "key" && path.ends_with(".meaning") {
            // What the key number is called on the page: prose (the number itself is
            // `from` and `value`).
            continue;
        }
        if k == "not_checkable" || k == "not_testable" {
            // Declared (its explanation is prose): one field per result.
            let at = path
                .find(&format!(".{k}"))
                .map_or(path.len(), |i| i + k.len() + 1);
            out.insert(path[..at].to_string(), "declared".into());
            continue;
        }
        out.insert(path, value);
    }
    Ok(out)
}

/// One judged field that differs between two states: `old`/`new` is `None` where the
/// field is absent on that side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    pub field: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The fields that differ between `old` and `new`, in field order; a named item added or
/// removed whole (`variants[x]`) is one change, `added`/`removed` with its field count.
pub fn diff(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Vec<FieldChange> {
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    // The item of a field: its path up to the first `]` (`variants[x]`), if any.
    let item = |k: &str| k.find(']').map(|i| k[..=i].to_string());
    let on = |m: &BTreeMap<String, String>, it: &str| m.keys().any(|k| k.starts_with(it));
    let mut out: Vec<FieldChange> = Vec::new();
    for k in keys {
        if old.get(k) == new.get(k) {
            continue;
        }
        if let Some(it) = item(k) {
            let (was, is) = (on(old, &it), on(new, &it));
            let side = if was { old } else { new };
            let many = side.keys().filter(|k| k.starts_with(&it)).count() > 1;
            if was != is && many {
                if out.last().is_some_and(|c| c.field == it) {
                    continue;
                }
                let side = if was { old } else { new };
                let n = side.keys().filter(|k| k.starts_with(&it)).count();
                let what = Some(format!(
                    "{} ({n} fields)",
                    if was { "present" } else { "added" }
                ));
                out.push(FieldChange {
                    field: it,
                    old: if was { what.clone() } else { None },
                    new: if was { None } else { what },
                });
                continue;
            }
        }
        out.push(FieldChange {
            field: k.clone(),
            old: old.get(k).cloned(),
            new: new.get(k).cloned(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "id: a\ntitle: T\ndiscussion: why\npredictions:\n  - name: p\n    note: prose\n    rhs: \"0\"\n    tolerance: 0.25\n    under: [x, y]\nsweeps:\n  s:\n    quick: {axes: {n: [1, 2]}, replicates: {min: 8, max: 64}}\nassumptions:\n  - {require: \"n > 1\", source: text}\n";

    #[test]
    fn prose_is_dropped_and_named_items_are_keyed_by_name() {
        let f = judged_fields(SPEC).unwrap();
        assert_eq!(f["predictions[p].tolerance"], "0.25");
        assert_eq!(f["predictions[p].under"], "[x, y]");
        assert_eq!(f["sweeps.s.quick.axes.n"], "[1, 2]");
        assert_eq!(f["sweeps.s.quick.replicates.max"], "64");
        assert_eq!(f["assumptions[0].require"], "n > 1");
        assert!(f.keys().all(|k| !k.contains("note")
            && !k.contains("title")
            && !k.contains("discussion")
            && !k.contains("source")));
    }

    #[test]
    fn the_key_hash_ignores_prose_and_tells_every_judged_value_apart() {
        let base = key_hash(SPEC);
        let prose = SPEC
            .replace("why", "because")
            .replace("note: prose", "note: other");
        assert_eq!(base, key_hash(&prose));
        assert_ne!(base, key_hash(&SPEC.replace("0.25", "0.5")));
        assert_ne!(base, key_hash(&SPEC.replace("max: 64", "max: 65")));
        // One string with a comma is not two strings (the flattened fields read alike).
        assert_ne!(key_hash("a: [x, y]\n"), key_hash("a: ['x, y']\n"));
        assert_ne!(key_hash("a: 'x '\n"), key_hash("a: x\n"));
    }

    #[test]
    fn a_changed_tolerance_is_one_change_and_prose_none() {
        let old = judged_fields(SPEC).unwrap();
        let new = judged_fields(&SPEC.replace("0.25", "0").replace("why", "because")).unwrap();
        let d = diff(&old, &new);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].field, "predictions[p].tolerance");
        assert_eq!(d[0].old.as_deref(), Some("0.25"));
        assert_eq!(d[0].new.as_deref(), Some("0"));
    }

    const CARD: &str = "paper: x\nsummary: [\"box\"]\nhypotheses:\n  - name: h\n    quote: q\n    require: \"n > d\"\nresults:\n  - result: \"Eq. 20\"\n    title: t\n    claim: c\n    quote: q\n    could_fail: data\n    control: half-noise\n    checked_by:\n      - {claim: a, prediction: p, variant: v}\n    key: {claim: a, prediction: p, variant: v, field: estimate}\n  - result: \"Thm 1\"\n    title: t\n    not_checkable: \"a reason\"\nremarks:\n  - {where: L1, text: r}\n";

    #[test]
    fn a_scorecard_judges_counting_not_prose() {
        let f = scorecard_fields(CARD).unwrap();
        assert_eq!(f["results[Eq. 20].could_fail"], "data");
        assert_eq!(f["results[Eq. 20].control"], "half-noise");
        assert_eq!(f["results[Eq. 20].checked_by[0].prediction"], "p");
        assert_eq!(f["results[Eq. 20].key.field"], "estimate");
        assert_eq!(f["results[Thm 1].not_checkable"], "declared");
        assert_eq!(f["hypotheses[h].require"], "n > d");
        assert!(
            f.keys().all(|k| !k.contains("title")
                && k != "results[Eq. 20].claim"
                && !k.starts_with("remarks")
                && !k.starts_with("summary")),
            "{f:?}"
        );
        // A reworded reason or box is no change; a control or a declaration is.
        let same =
            scorecard_fields(&CARD.replace("a reason", "another").replace("box", "b")).unwrap();
        assert!(diff(&f, &same).is_empty());
        let other = scorecard_fields(&CARD.replace("half-noise", "clip-2c")).unwrap();
        assert_eq!(diff(&f, &other).len(), 1);
    }
}
