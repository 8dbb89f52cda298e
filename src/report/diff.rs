//! `dpclaims diff OLD NEW`: what changed between two runs, read from their verdicts
//! documents — `verdicts.json` of a report directory (written by every run that writes
//! reports) or a saved `dpclaims run --json` document (the same shape, plus the baseline
//! line, which is ignored).
//!
//! Results are matched by (claim, prediction, variant). A change is: a claim or a result
//! added or removed; a verdict that changed (a negative control's status with it); a
//! result that starts or stops failing the run (its `problem`); an estimate that moved by
//! more than its confidence intervals — the new estimate outside the old interval *and*
//! the old estimate outside the new one, so that neither run's interval covers the other
//! run's value; for kinds without an interval (inequalities: the worst margin), a change
//! visible at the 4 significant digits of the reports.
use super::fmt_num;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A verdicts document that cannot be read: names the file.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("{}: {message}", file.display())]
    Read { file: PathBuf, message: String },
}

/// One judged result as a verdicts document holds it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ResultDoc {
    pub prediction: String,
    pub variant: String,
    #[serde(default)]
    pub negative_control: bool,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub estimate: Option<f64>,
    #[serde(default)]
    pub ci: Option<(f64, f64)>,
    pub verdict: String,
    #[serde(default)]
    pub problem: Option<String>,
}

/// One claim's results.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ClaimDoc {
    pub id: String,
    pub results: Vec<ResultDoc>,
}

/// A verdicts document (`verdicts.json`, `run --json`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct VerdictsDoc {
    pub profile: String,
    pub seed: u64,
    pub claims: Vec<ClaimDoc>,
}

/// The verdicts file of a report directory.
pub const VERDICTS_FILE: &str = "verdicts.json";

impl VerdictsDoc {
    /// Reads a verdicts document: `path/verdicts.json` for a directory, else the file.
    pub fn load(path: &Path) -> Result<(PathBuf, VerdictsDoc), DiffError> {
        let file = if path.is_dir() {
            path.join(VERDICTS_FILE)
        } else {
            path.to_path_buf()
        };
        let err = |message: String| DiffError::Read {
            file: file.clone(),
            message,
        };
        let text =
            crate::fsio::read_string(&file, crate::fsio::InputKind::DiffInput).map_err(|e| {
                err(if path.is_dir() {
                    format!("{e} (a report directory holds it when `dpclaims run` wrote it)")
                } else {
                    e.to_string()
                })
            })?;
        let doc: VerdictsDoc = serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "not a verdicts document (`verdicts.json` or `dpclaims run --json`): {e}"
            ))
        })?;
        let mut seen = std::collections::BTreeSet::new();
        for c in &doc.claims {
            for r in &c.results {
                if !seen.insert((&c.id, &r.prediction, &r.variant)) {
                    return Err(err(format!(
                        "claim `{}` has prediction `{}`, variant `{}` twice",
                        c.id, r.prediction, r.variant
                    )));
                }
            }
        }
        Ok((file, doc))
    }
}

/// What changed for one result (or claim).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `claim added`, `claim removed`, `added`, `removed`, `verdict`, `moved`, `problem`,
    /// or `within`: the verdict is unchanged and the estimate moved inside its intervals
    /// (shown, not a change unless `dpclaims diff --strict`: see [`Change::counts`]).
    pub kind: &'static str,
    pub claim: String,
    /// "prediction/variant"; empty for a whole claim.
    pub case: String,
    pub old: String,
    pub new: String,
}

/// The changes between two verdicts documents, in the new document's order (removed
/// claims and results last).
pub fn diff(old: &VerdictsDoc, new: &VerdictsDoc) -> Vec<Change> {
    let mut out = Vec::new();
    let change = |kind, claim: &str, case: String, old: String, new: String| Change {
        kind,
        claim: claim.to_string(),
        case,
        old,
        new,
    };
    let results = |c: &ClaimDoc| -> String {
        let n = c.results.len();
        format!("{n} result{}", if n == 1 { "" } else { "s" })
    };
    for nc in &new.claims {
        let Some(oc) = old.claims.iter().find(|c| c.id == nc.id) else {
            out.push(change(
                "claim added",
                &nc.id,
                String::new(),
                "—".into(),
                results(nc),
            ));
            continue;
        };
        for nr in &nc.results {
            let case = format!("{}/{}", nr.prediction, nr.variant);
            let Some(or) = oc
                .results
                .iter()
                .find(|r| r.prediction == nr.prediction && r.variant == nr.variant)
            else {
                out.push(change("added", &nc.id, case, "—".into(), describe(nr)));
                continue;
            };
            if or.verdict != nr.verdict {
                out.push(change(
                    "verdict",
                    &nc.id,
                    case.clone(),
                    describe(or),
                    describe(nr),
                ));
            } else if moved(or, nr) {
                out.push(change(
                    "moved",
                    &nc.id,
                    case.clone(),
                    estimate(or),
                    estimate(nr),
                ));
            } else if estimate(or) != estimate(nr) {
                out.push(change(
                    "within",
                    &nc.id,
                    case.clone(),
                    estimate(or),
                    estimate(nr),
                ));
            }
            if or.problem != nr.problem {
                let p = |r: &ResultDoc| {
                    r.problem
                        .clone()
                        .unwrap_or_else(|| "does not fail the run".into())
                };
                out.push(change("problem", &nc.id, case, p(or), p(nr)));
            }
        }
        for or in oc.results.iter().filter(|o| {
            !nc.results
                .iter()
                .any(|n| n.prediction == o.prediction && n.variant == o.variant)
        }) {
            out.push(change(
                "removed",
                &nc.id,
                format!("{}/{}", or.prediction, or.variant),
                describe(or),
                "—".into(),
            ));
        }
    }
    for oc in old
        .claims
        .iter()
        .filter(|o| !new.claims.iter().any(|n| n.id == o.id))
    {
        out.push(change(
            "claim removed",
            &oc.id,
            String::new(),
            results(oc),
            "—".into(),
        ));
    }
    out
}

impl Change {
    /// Whether the change fails `dpclaims diff` (exit 1): every kind but `within`, which
    /// does only with `strict`.
    pub fn counts(&self, strict: bool) -> bool {
        strict || self.kind != "within"
    }

    /// A claim or result present in one run only.
    pub fn one_sided(&self) -> bool {
        matches!(
            self.kind,
            "claim added" | "claim removed" | "added" | "removed"
        )
    }
}

/// "refuted (estimate 0.5 [0.4, 0.6])".
fn describe(r: &ResultDoc) -> String {
    format!("{} ({})", r.verdict, estimate(r))
}

/// "estimate 0.5 [0.4, 0.6]", "estimate —".
fn estimate(r: &ResultDoc) -> String {
    let v = r.estimate.map(fmt_num).unwrap_or_else(|| "—".into());
    match r.ci {
        Some((a, b)) => format!("estimate {v} [{}, {}]", fmt_num(a), fmt_num(b)),
        None => format!("estimate {v}"),
    }
}

/// Did the estimate move by more than the confidence intervals (see the module doc)?
pub fn moved(old: &ResultDoc, new: &ResultDoc) -> bool {
    let outside = |v: f64, (a, b): (f64, f64)| v < a.min(b) || v > a.max(b);
    match (old.estimate, new.estimate) {
        (None, None) => false,
        // Equal to the 6 significant digits a report file keeps: a report directory's
        // rounded verdicts.json and the same run's unrounded `--json` never "move".
        (Some(o), Some(n)) if super::number::data(o) == super::number::data(n) => false,
        (Some(o), Some(n)) => match (old.ci, new.ci) {
            (Some(oc), Some(nc)) => outside(n, oc) && outside(o, nc),
            (Some(oc), None) => outside(n, oc),
            (None, Some(nc)) => outside(o, nc),
            (None, None) => fmt_num(o) != fmt_num(n),
        },
        _ => true,
    }
}

/// The changes as plain text, one line each (a header line first).
pub fn text(old: &Path, new: &Path, changes: &[Change]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} -> {}: {}",
        old.display(),
        new.display(),
        count(changes)
    );
    for c in changes {
        let _ = writeln!(
            s,
            "{:<14} {:<26} {:<40} {} -> {}",
            c.kind, c.claim, c.case, c.old, c.new
        );
    }
    s
}

/// "no change", "1 change", "3 changes" (and how many estimates moved within their
/// intervals under unchanged verdicts).
fn count(changes: &[Change]) -> String {
    let within = changes.iter().filter(|c| c.kind == "within").count();
    let head = match changes.len() - within {
        0 => "no change".to_string(),
        1 => "1 change".into(),
        n => format!("{n} changes"),
    };
    match within {
        0 => head,
        w => format!(
            "{head} ({w} estimate{} moved within {} intervals, verdict{} unchanged)",
            if w == 1 { "" } else { "s" },
            if w == 1 { "its" } else { "their" },
            if w == 1 { "" } else { "s" }
        ),
    }
}

/// The changes as Markdown (a pull-request comment).
pub fn markdown(old: &Path, new: &Path, changes: &[Change], note: Option<&str>) -> String {
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut s = String::new();
    let _ = writeln!(s, "### dpclaims diff: {}\n", count(changes));
    let _ = writeln!(s, "`{}` → `{}`\n", old.display(), new.display());
    if let Some(n) = note {
        let _ = writeln!(s, "{}\n", cell(n));
    }
    if changes.iter().all(|c| c.kind == "within") {
        let _ = writeln!(
            s,
            "Every verdict is the same, no estimate moved beyond its confidence intervals, no claim was added or removed."
        );
        if changes.is_empty() {
            return s;
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "| change | claim | prediction / variant | before | after |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for c in changes {
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} |",
            c.kind,
            c.claim,
            if c.case.is_empty() {
                String::new()
            } else {
                format!("`{}`", cell(&c.case))
            },
            cell(&c.old),
            cell(&c.new)
        );
    }
    s
}

/// A note when the two runs were made at different profiles or seeds (their estimates
/// then differ by sampling alone).
pub fn runs_note(old: &VerdictsDoc, new: &VerdictsDoc) -> Option<String> {
    (old.profile != new.profile || old.seed != new.seed).then(|| {
        format!(
            "note: the runs differ in profile or seed (old: profile {}, seed {}; new: profile {}, seed {})",
            old.profile, old.seed, new.profile, new.seed
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{moved, ResultDoc};

    fn r(estimate: Option<f64>, ci: Option<(f64, f64)>) -> ResultDoc {
        ResultDoc {
            prediction: "p".into(),
            variant: "v".into(),
            negative_control: false,
            kind: "exponent".into(),
            estimate,
            ci,
            verdict: "holds".into(),
            problem: None,
        }
    }

    #[test]
    fn an_estimate_moved_when_neither_interval_covers_the_other_estimate() {
        let old = r(Some(1.0), Some((0.8, 1.2)));
        assert!(!moved(&old, &old));
        // Rounding to a report's 6 significant digits is no move, even with a degenerate
        // interval (a deterministic row) that the unrounded value falls just outside of.
        let exact = r(Some(0.123456789), Some((0.123456789, 0.123456789)));
        let rounded = r(Some(0.123457), Some((0.123457, 0.123457)));
        assert!(!moved(&exact, &rounded));
        assert!(moved(&exact, &r(Some(0.1235), Some((0.1235, 0.1235)))));
        // Inside the old interval: no move.
        assert!(!moved(&old, &r(Some(1.1), Some((0.9, 1.3)))));
        // Outside the old interval but the new (wide) one covers the old estimate.
        assert!(!moved(&old, &r(Some(1.3), Some((0.5, 2.0)))));
        // Each outside the other's interval.
        assert!(moved(&old, &r(Some(1.5), Some((1.3, 1.7)))));
        assert!(moved(&old, &r(Some(0.5), Some((0.4, 0.6)))));
        // Without intervals: a change visible at 4 significant digits.
        assert!(!moved(&r(Some(0.12341), None), &r(Some(0.12342), None)));
        assert!(moved(&r(Some(0.1234), None), &r(Some(0.1236), None)));
        // An estimate that appears or disappears.
        assert!(moved(&r(None, None), &r(Some(0.1), None)));
        assert!(!moved(&r(None, None), &r(None, None)));
    }
}
