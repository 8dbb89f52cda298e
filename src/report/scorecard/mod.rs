//! Scorecards: one page per paper (`scorecard-<name>.md`), listing every numbered result
//! of the paper — theorems, propositions, corollaries, testable equations, figures,
//! tables — with its verdict, the regime it was checked in, a one-line reason and a link
//! to its claim's page; results that cannot be checked in simulation are listed with why,
//! results whose claim is still to be written as "not yet checked".
//!
//! The pages come from `scorecards/<name>.yaml` (format in `claims/README.md`), validated
//! when loaded ([`load_dir`], [`Scorecard::validate`]): an unknown claim, prediction or
//! variant is an error naming the file and the entry. They are rendered ([`render`]) from
//! this run's outcomes and, for claims the run did not judge, the kept verdicts of the
//! previous `verdicts.json` ([`super::kept`]), into the run's report set.
mod could_fail;
mod found;
pub mod keynum;
mod page;
mod plots;
mod render;
mod sections;
mod validate;

pub use could_fail::CouldFail;
pub use found::{combine, Combined};
pub use keynum::{Key, ValueKind};
pub use page::{
    check_page, details_page, key_plots_html, scorecard_page, MAX_CLAIM_WORDS, MAX_ROW_CHARS,
    MAX_SUMMARY_LINES,
};
pub use render::scorecard_markdown;

use crate::spec::{Claim, Quote};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A scorecard file that cannot be used: the file, the entry and what is wrong.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}: {entry}: {message}")]
pub struct ScorecardError {
    pub file: String,
    /// `results[3] (Theorem 2)`, or `(file)` for the whole file.
    pub entry: String,
    pub message: String,
}

/// The raw shape of a scorecard file (unknown fields are errors).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScorecard {
    paper: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    intro: String,
    /// The page's box: at most 8 lines with placeholders ([`keynum`]).
    #[serde(default)]
    summary: Vec<String>,
    /// The paper's hypothesis registry ([`crate::spec::registry`]).
    #[serde(default)]
    hypotheses: Vec<crate::spec::registry::RawHypothesis>,
    results: Vec<RawResult>,
    /// Remarks for the authors: textual slips and internal tensions, never errata.
    #[serde(default)]
    remarks: Vec<Remark>,
}

/// A remark for the authors (a slip or a tension that is not an erratum): where it
/// stands, the slip in one sentence, and the one-line derivation that shows it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remark {
    #[serde(rename = "where")]
    pub location: String,
    pub text: String,
    pub derivation: String,
    /// The remark in at most [`page::MAX_REMARK_WORDS`] words, for the short page, when
    /// the first sentence of `text` is longer (the short page never cuts a sentence).
    #[serde(default)]
    pub short: Option<String>,
}

/// Why a result cannot be judged at feasible sizes, quantitatively: the quantity that
/// makes it so, its measured (or computed) value, and the size at which it would change.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotTestable {
    pub quantity: String,
    pub measured: String,
    pub changes_at: String,
}

impl NotTestable {
    /// One sentence for the page.
    pub fn sentence(&self) -> String {
        let mut q = self.quantity.trim().to_string();
        if let Some(c) = q.get(..1) {
            q = c.to_uppercase() + &q[1..];
        }
        format!(
            "{q}: {}. Would change: {}.",
            self.measured.trim().trim_end_matches('.'),
            self.changes_at.trim().trim_end_matches('.')
        )
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResult {
    result: String,
    title: String,
    /// The claim in at most 15 words, for the page's table.
    #[serde(default)]
    claim: Option<String>,
    /// The result's key number ([`keynum`]).
    #[serde(default)]
    key: Option<Key>,
    /// Why it is not judged, in one sentence, for the short page.
    #[serde(default)]
    why: Option<String>,
    #[serde(default)]
    quote: Option<Quote>,
    /// The statement's hypotheses (registry names): every check inherits them.
    #[serde(default)]
    hypotheses: Vec<String>,
    #[serde(default)]
    checked_by: Vec<Check>,
    #[serde(default)]
    planned: Vec<String>,
    not_checkable: Option<String>,
    #[serde(default)]
    not_testable: Option<NotTestable>,
    /// What could make its checks fail ([`CouldFail`]); required with `checked_by`.
    #[serde(default)]
    could_fail: Option<String>,
    /// With `could_fail: data`: the control that must be caught ([`CouldFail::Data`]).
    #[serde(default)]
    control: Option<String>,
}

/// One check of a result: a main variant's verdict on one prediction of a claim.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub claim: String,
    pub prediction: String,
    pub variant: String,
}

/// One numbered result of the paper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaperResult {
    /// How the paper numbers it: `Theorem 1`, `Eq. 8`, `Fig. 2 (panel 1)`.
    pub result: String,
    pub title: String,
    /// The claim in at most 15 words ([`MAX_CLAIM_WORDS`]).
    pub claim: Option<String>,
    /// The key number on the page's table.
    pub key: Option<Key>,
    /// Why it is not judged, in one sentence (else cut from `not_checkable`/`not_testable`).
    pub why: Option<String>,
    /// The paper's words (required when the result is checked).
    pub quote: Option<Quote>,
    /// Registry names of the statement's hypotheses.
    pub hypotheses: Vec<String>,
    pub checked_by: Vec<Check>,
    /// Claim files still to be written that will check it (`claims/pff-steps.yaml`).
    pub planned: Vec<String>,
    /// Why it cannot be checked in simulation.
    pub not_checkable: Option<String>,
    /// Why it cannot be judged at feasible sizes (with the numbers); its checks, if any,
    /// are then shown as diagnostics.
    pub not_testable: Option<NotTestable>,
    /// What could make its checks fail (`None` only without `checked_by`).
    pub could_fail: Option<CouldFail>,
    /// The control a `data` holds must catch to count.
    pub control: Option<String>,
}

/// A validated scorecard file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scorecard {
    pub file: PathBuf,
    /// The page's stem: `scorecard-<file stem>`.
    pub page: String,
    pub paper: String,
    pub source: String,
    pub intro: String,
    /// The box's lines, placeholders unresolved.
    pub summary: Vec<String>,
    /// The paper's hypothesis registry, for the page (name, where, feasible from).
    pub hypotheses: Vec<HypothesisInfo>,
    pub results: Vec<PaperResult>,
    pub remarks: Vec<Remark>,
    /// Its registration ledger (how it counts results, and every change to that since),
    /// attached by the driver that read the baseline; `None` outside the ledger.
    pub ledger: Option<Box<crate::spec::ledger::Entry>>,
}

/// What a scorecard page shows of a registry hypothesis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HypothesisInfo {
    pub name: String,
    pub quote: Quote,
    pub require: String,
    /// Met by every system by construction: listed, never a gate, so the checks of a
    /// result need not name it in `under`.
    pub by_construction: bool,
    pub reading: String,
    pub feasible_from: String,
}

/// What a scorecard needs to know of a claim: its predictions (name → sweep) and
/// variants (name → negative control?), and enough of the spec to describe a sweep.
pub type Catalogue<'a> = BTreeMap<String, &'a Claim>;

/// Reads and parses every `*.yaml` of `dir` (sorted by name); a missing directory is no
/// scorecard. Each is checked for shape here and against the claims by
/// [`Scorecard::validate`].
pub fn load_dir(dir: &Path) -> Result<Vec<Scorecard>, ScorecardError> {
    if !dir.is_dir() {
        return Ok(vec![]);
    }
    let err = |file: &Path, m: String| ScorecardError {
        file: file.display().to_string(),
        entry: "(file)".into(),
        message: m,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| err(dir, e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    files.iter().map(|f| load_file(f)).collect()
}

/// Parses one scorecard file and checks its shape (every result has a name, a title and
/// at least one of `checked_by`, `planned`, `not_checkable`; `not_checkable` stands
/// alone; result names are unique).
pub fn load_file(path: &Path) -> Result<Scorecard, ScorecardError> {
    let file = path.display().to_string();
    let at = |entry: String, message: String| ScorecardError {
        file: file.clone(),
        entry,
        message,
    };
    let text = crate::fsio::read_string(path, crate::fsio::InputKind::Registry)
        .map_err(|e| at("(file)".into(), e.to_string()))?;
    crate::fsio::yaml::alias_budget(&text).map_err(|m| at("(top level)".into(), m))?;
    let raw: RawScorecard = crate::spec::raw::from_yaml(&text)
        .map_err(|(field, message)| at(field, format!("not a scorecard: {message}")))?;
    if raw.paper.trim().is_empty() {
        return Err(at("paper".into(), "is empty".into()));
    }
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
        .ok_or_else(|| {
            at(
                "(file name)".into(),
                "must be lowercase letters, digits and '-' (it names the page)".into(),
            )
        })?;
    let hypotheses: Vec<HypothesisInfo> = crate::spec::registry::validate(&raw.hypotheses)
        .map_err(|m| at("hypotheses".into(), m))?
        .into_iter()
        .map(|h| HypothesisInfo {
            name: h.name,
            quote: h.quote,
            require: match h.assumption {
                Some(a) if a.trend.is_some() => format!("asymptotic: {}", a.text),
                Some(a) => a.text,
                None => format!("by construction: {}", h.by_construction),
            },
            by_construction: !h.by_construction.is_empty(),
            reading: h.reading,
            feasible_from: h.feasible_from,
        })
        .collect();
    let mut results = Vec::new();
    for (i, r) in raw.results.into_iter().enumerate() {
        let entry = format!("results[{i}] ({})", r.result);
        if r.result.trim().is_empty() || r.title.trim().is_empty() {
            return Err(at(entry, "`result` and `title` must not be empty".into()));
        }
        if results.iter().any(|p: &PaperResult| p.result == r.result) {
            return Err(at(entry, "the same result is listed twice".into()));
        }
        match &r.not_checkable {
            Some(why) if why.trim().is_empty() => {
                return Err(at(entry, "`not_checkable` must say why".into()))
            }
            Some(_) if !r.checked_by.is_empty() || !r.planned.is_empty() => {
                return Err(at(
                    entry,
                    "`not_checkable` cannot be combined with `checked_by` or `planned`".into(),
                ))
            }
            None if r.checked_by.is_empty() && r.planned.is_empty() && r.not_testable.is_none() => {
                return Err(at(
                    entry,
                    "needs `checked_by`, `planned`, `not_testable` or `not_checkable`".into(),
                ))
            }
            _ => {}
        }
        if let Some(nt) = &r.not_testable {
            if r.not_checkable.is_some() {
                return Err(at(
                    entry,
                    "`not_testable` (too large to simulate) and `not_checkable` (nothing to \
                     simulate) exclude each other"
                        .into(),
                ));
            }
            if [&nt.quantity, &nt.measured, &nt.changes_at]
                .iter()
                .any(|t| t.trim().is_empty())
            {
                return Err(at(
                    entry,
                    "`not_testable` names the quantity, its measured value and the size at \
                     which it would change (`quantity`, `measured`, `changes_at`, none empty)"
                        .into(),
                ));
            }
        }
        if !r.checked_by.is_empty()
            && r.quote
                .as_ref()
                .is_none_or(|q| q.text.trim().is_empty() || q.location.trim().is_empty())
        {
            return Err(at(
                entry,
                "a checked result quotes the paper: quote: {text: \"...\", where: \"Sec. 2, Theorem 1\"}".into(),
            ));
        }
        for h in &r.hypotheses {
            if !hypotheses.iter().any(|x| &x.name == h) {
                return Err(at(
                    entry,
                    format!("unknown hypothesis `{h}` (not in this file's `hypotheses`)"),
                ));
            }
        }
        if let Some(c) = &r.claim {
            let n = c.split_whitespace().count();
            if n == 0 || n > MAX_CLAIM_WORDS {
                return Err(at(
                    entry,
                    format!("`claim` has {n} words: say the claim in 1 to {MAX_CLAIM_WORDS}"),
                ));
            }
        }
        if let Some(k) = &r.key {
            if !k.scale.is_finite() || k.scale == 0.0 || !k.offset.is_finite() {
                return Err(at(
                    entry,
                    "`key`: scale finite and non-zero, offset finite".into(),
                ));
            }
            if !k.meaning.contains("{v}") {
                return Err(at(
                    entry,
                    "`key.meaning` says where the number goes: `{v}`".into(),
                ));
            }
            keynum::placeholders(&k.meaning).map_err(|m| at(entry.clone(), m))?;
        }
        let could_fail = could_fail::declared(&r.could_fail, &r.control, !r.checked_by.is_empty())
            .map_err(|m| at(entry.clone(), m))?;
        results.push(PaperResult {
            could_fail,
            control: r.control,
            result: r.result,
            title: r.title,
            claim: r.claim,
            key: r.key,
            why: r.why,
            quote: r.quote,
            hypotheses: r.hypotheses,
            checked_by: r.checked_by,
            planned: r.planned,
            not_checkable: r.not_checkable,
            not_testable: r.not_testable,
        });
    }
    if results.is_empty() {
        return Err(at("results".into(), "lists no result".into()));
    }
    if raw.summary.len() > MAX_SUMMARY_LINES {
        return Err(at(
            "summary".into(),
            format!(
                "{} lines: the box has at most {MAX_SUMMARY_LINES}",
                raw.summary.len()
            ),
        ));
    }
    for (i, l) in raw.summary.iter().enumerate() {
        keynum::placeholders(l).map_err(|m| at(format!("summary[{i}]"), m))?;
    }
    Ok(Scorecard {
        file: path.to_path_buf(),
        page: format!("scorecard-{stem}"),
        paper: raw.paper,
        source: raw.source,
        intro: raw.intro,
        summary: raw.summary,
        hypotheses,
        results,
        remarks: {
            for (i, m) in raw.remarks.iter().enumerate() {
                if [&m.location, &m.text, &m.derivation]
                    .iter()
                    .any(|t| t.trim().is_empty())
                {
                    return Err(at(
                        format!("remarks[{i}]"),
                        "a remark says where, what and its one-line derivation (`where`, \
                         `text`, `derivation`, none empty)"
                            .into(),
                    ));
                }
                let first = found::first_sentence(m.text.trim());
                let n = first.split_whitespace().count();
                match &m.short {
                    Some(sh) if sh.split_whitespace().count() > page::MAX_REMARK_WORDS => {
                        return Err(at(
                            format!("remarks[{i}].short"),
                            format!(
                                "`short` is {} words: the short page shows at most {}",
                                sh.split_whitespace().count(),
                                page::MAX_REMARK_WORDS
                            ),
                        ))
                    }
                    None if n > page::MAX_REMARK_WORDS => {
                        return Err(at(
                            format!("remarks[{i}]"),
                            format!(
                                "the remark's first sentence is {n} words and the short page \
                                 shows at most {}: add `short:`, the remark in at most {} words \
                                 (the page never cuts a sentence; the details page has it in full)",
                                page::MAX_REMARK_WORDS,
                                page::MAX_REMARK_WORDS
                            ),
                        ))
                    }
                    _ => {}
                }
            }
            raw.remarks
        },
        ledger: None,
    })
}

/// Loads the scorecards of `dir` and validates them against `claims` (the claims of the
/// claims directory and of the run).
pub fn load_and_validate(dir: &Path, claims: &Catalogue) -> Result<Vec<Scorecard>, ScorecardError> {
    let cards = load_dir(dir)?;
    for c in &cards {
        c.validate(claims)?;
    }
    Ok(cards)
}
