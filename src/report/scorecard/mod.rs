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
mod render;

pub use render::{combine, scorecard_markdown, Combined};

use crate::spec::Claim;
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
    results: Vec<RawResult>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResult {
    result: String,
    title: String,
    #[serde(default)]
    checked_by: Vec<Check>,
    #[serde(default)]
    planned: Vec<String>,
    not_checkable: Option<String>,
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
    pub checked_by: Vec<Check>,
    /// Claim files still to be written that will check it (`claims/pff-steps.yaml`).
    pub planned: Vec<String>,
    /// Why it cannot be checked in simulation.
    pub not_checkable: Option<String>,
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
    pub results: Vec<PaperResult>,
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
    let text = std::fs::read_to_string(path).map_err(|e| at("(file)".into(), e.to_string()))?;
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
            None if r.checked_by.is_empty() && r.planned.is_empty() => {
                return Err(at(
                    entry,
                    "needs `checked_by`, `planned` or `not_checkable`".into(),
                ))
            }
            _ => {}
        }
        results.push(PaperResult {
            result: r.result,
            title: r.title,
            checked_by: r.checked_by,
            planned: r.planned,
            not_checkable: r.not_checkable,
        });
    }
    if results.is_empty() {
        return Err(at("results".into(), "lists no result".into()));
    }
    Ok(Scorecard {
        file: path.to_path_buf(),
        page: format!("scorecard-{stem}"),
        paper: raw.paper,
        source: raw.source,
        intro: raw.intro,
        results,
    })
}

impl Scorecard {
    /// Checks every `checked_by` entry against the claims: the claim exists, the
    /// prediction is one of its predictions, the variant one of its main variants (a
    /// negative control's verdict says nothing about the paper). `planned` entries are
    /// not checked: their claim may not exist yet.
    pub fn validate(&self, claims: &Catalogue) -> Result<(), ScorecardError> {
        for (i, r) in self.results.iter().enumerate() {
            for (j, c) in r.checked_by.iter().enumerate() {
                let bad = |message: String| ScorecardError {
                    file: self.file.display().to_string(),
                    entry: format!("results[{i}] ({}).checked_by[{j}]", r.result),
                    message,
                };
                let Some(claim) = claims.get(&c.claim) else {
                    return Err(bad(format!(
                        "unknown claim `{}` (not a claim id in the claims directory; a claim \
                         still to be written goes under `planned`)",
                        c.claim
                    )));
                };
                if !claim.predictions.iter().any(|p| p.name == c.prediction) {
                    return Err(bad(format!(
                        "claim `{}` has no prediction `{}` (it has: {})",
                        c.claim,
                        c.prediction,
                        names(claim.predictions.iter().map(|p| p.name.as_str()))
                    )));
                }
                match claim.variants.iter().find(|v| v.name == c.variant) {
                    None => {
                        return Err(bad(format!(
                            "claim `{}` has no variant `{}` (main variants: {})",
                            c.claim,
                            c.variant,
                            names(
                                claim
                                    .variants
                                    .iter()
                                    .filter(|v| !v.negative_control)
                                    .map(|v| v.name.as_str())
                            )
                        )))
                    }
                    Some(v) if v.negative_control => {
                        return Err(bad(format!(
                            "variant `{}` of `{}` is a negative control: its verdict is not \
                             the paper's",
                            c.variant, c.claim
                        )))
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<String> = it.map(|n| format!("`{n}`")).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
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
