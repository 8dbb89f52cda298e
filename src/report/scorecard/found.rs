//! What a scorecard page reads from the verdicts: each check's recorded result
//! ([`Found`]), the combined verdict of a numbered result ([`combine`]), and the short
//! texts of a result (its first sentence, what was measured). Shared by the page
//! ([`super::render`]) and its sections ([`super::sections`]), which import it and not
//! each other.
use super::Check;
use crate::report::fmt_num;
use crate::report::kept::Provenance;
use serde_json::Value;
use std::collections::BTreeMap;

/// The verdict of a numbered result, from the verdicts of its checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combined {
    Holds,
    Refuted,
    Inconclusive,
    OutOfRegime,
    /// It has checks, but none of their claims is in this report set.
    NotRun,
    /// Only `planned` claims: nothing written yet checks it.
    NotYetChecked,
    NotCheckable,
}

impl Combined {
    pub fn as_str(self) -> &'static str {
        match self {
            Combined::Holds => "holds",
            Combined::Refuted => "refuted",
            Combined::Inconclusive => "inconclusive",
            Combined::OutOfRegime => "out_of_regime",
            Combined::NotRun => "not run",
            Combined::NotYetChecked => "not yet checked",
            Combined::NotCheckable => "not checkable in simulation",
        }
    }
}

/// The rule, in `claims/README.md` ("Scorecards") too: `not_checkable` results are not
/// checkable; results with no `checked_by` (only `planned`) are not yet checked; among
/// the checks whose claim is in the report set, **refuted** if any is refuted, else
/// **inconclusive** if any is inconclusive, else **holds** if any holds (checks out of
/// regime are shown but neither confirm nor refute), else **out_of_regime** (all are);
/// **not run** if no check's claim is in the set. `verdicts` are the checks' verdict
/// strings (`None`: not in the set).
pub fn combine(verdicts: &[Option<&str>], not_checkable: bool) -> Combined {
    if not_checkable {
        return Combined::NotCheckable;
    }
    if verdicts.is_empty() {
        return Combined::NotYetChecked;
    }
    let known: Vec<&str> = verdicts.iter().flatten().copied().collect();
    let any = |v: &str| known.contains(&v);
    if known.is_empty() {
        Combined::NotRun
    } else if any("refuted") {
        Combined::Refuted
    } else if any("inconclusive") {
        Combined::Inconclusive
    } else if any("holds") {
        Combined::Holds
    } else {
        Combined::OutOfRegime
    }
}

/// One check's result as recorded in a verdicts document, and where it came from.
pub(super) struct Found<'a> {
    pub(super) r: &'a Value,
    pub(super) from: Option<&'a Provenance>,
    pub(super) profile: String,
}

pub(super) type FoundMap<'a> = BTreeMap<(String, String, String), Found<'a>>;

pub(super) fn lookup<'a>(
    found: &'a BTreeMap<(String, String, String), Found<'a>>,
    c: &Check,
) -> Option<&'a Found<'a>> {
    found.get(&(c.claim.clone(), c.prediction.clone(), c.variant.clone()))
}

/// The first sentence of a finding (up to 240 characters).
pub(super) fn text(v: &Value) -> String {
    v.as_str().unwrap_or("?").to_string()
}

/// The first sentence of a finding (abbreviations such as `Sec.` or `Cor.` do not end it),
/// at most 240 characters.
pub(super) fn first_sentence(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    // A full stop after an abbreviation ("Ba et al. 2022", "e.g. n") ends no sentence.
    let abbreviation = |i: usize| {
        let word = s[..i].rsplit([' ', '(', '[']).next().unwrap_or("");
        [
            "al", "e.g", "i.e", "cf", "Eq", "Eqs", "Sec", "Secs", "Fig", "Figs", "Prop", "Props",
            "Thm", "Cor", "Lem", "Def", "Tab", "Alg", "App", "Assump", "resp", "approx", "No",
            "vs",
        ]
        .contains(&word)
    };
    let end = s
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|&i| !abbreviation(i))
        .map(|i| i + 1)
        .unwrap_or(s.len());
    let mut out: String = s[..end].chars().take(240).collect();
    if out.len() < end {
        out.push('…');
    }
    out
}

/// What was measured against what was predicted, from a result of `verdicts.json`.
pub(super) fn measured(r: &Value) -> String {
    let num = |v: &Value| v.as_f64().map(fmt_num).unwrap_or_else(|| "—".into());
    let ci = match r["ci"].as_array() {
        Some(a) if a.len() == 2 => format!("[{}, {}]", num(&a[0]), num(&a[1])),
        _ => "—".into(),
    };
    match r["kind"].as_str().unwrap_or("") {
        "bound" => format!(
            "implied constant {}; slope of measured/bound vs {} = {} (CI {ci}), allowed <= {}",
            r["implied_constant"]
                .as_array()
                .map(|a| {
                    let f = |i: usize| a.get(i).and_then(Value::as_f64);
                    match (f(0), f(1), f(2)) {
                        (Some(c), Some(lo), Some(hi)) => {
                            format!("{} [{}, {}]", fmt_num(c), fmt_num(lo), fmt_num(hi))
                        }
                        _ => format!(
                            "{} [{}, {}]",
                            num(&a[0]),
                            num(&a.get(1).cloned().unwrap_or(Value::Null)),
                            num(&a.get(2).cloned().unwrap_or(Value::Null))
                        ),
                    }
                })
                .unwrap_or_else(|| "—".into()),
            r["x"].as_str().unwrap_or("?"),
            num(&r["estimate"]),
            num(&r["tolerance"])
        ),
        k @ ("exponent" | "rate_at_most") => format!(
            "slope vs {} = {} (CI {ci}), predicted {} {}{}",
            r["x"].as_str().unwrap_or("?"),
            num(&r["estimate"]),
            if k == "exponent" { "=" } else { "<=" },
            num(&r["predicted"]),
            r["tolerance"]
                .as_f64()
                .map(|t| format!(
                    " {} {}",
                    if k == "exponent" { "±" } else { "+" },
                    fmt_num(t)
                ))
                .unwrap_or_default()
        ),
        "event" => format!(
            "frequency {} (CP interval {ci}), required >= {}",
            num(&r["estimate"]),
            num(&r["predicted"])
        ),
        _ => format!(
            "worst margin {}{}",
            num(&r["estimate"]),
            if ci == "—" {
                String::new()
            } else {
                format!(", interval {ci}")
            }
        ),
    }
}
