//! A run as test cases, for CI tools (JUnit XML, GitHub annotations): one case per
//! verdict, failed for exactly the reasons that make `dpclaims run` exit 1.
//!
//! The reasons are not re-derived here: a case fails when its result carries a
//! `problem` (the judge's: an uncaught negative control, a main variant refuted without
//! a finding, a vacuous tolerance — what [`crate::judge::Tally::problems`] collects) or
//! when the regression baseline ([`super::baseline::compare`]) names it as changed. A
//! baseline change that is no verdict of this run (a result the baseline has and the run
//! no longer produces, an unreadable snapshot) becomes a case of its own, so the cases
//! fail if and only if the run exits 1.
use super::baseline::Baseline;
use super::{prediction_text, result_line};
use crate::fit::Verdict;
use crate::judge::{ClaimOutcome, PredictionResult};
use std::path::Path;

/// Why a case fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// `problem` (the judge's) or `baseline_changed`.
    pub kind: &'static str,
    /// One line: the reason, the measurement, the prediction, the report.
    pub message: String,
}

/// One verdict of the run (or one baseline change that is no verdict of it).
#[derive(Clone, Debug)]
pub struct Case<'a> {
    pub outcome: &'a ClaimOutcome,
    /// None for a baseline change that is not a result of this run.
    pub result: Option<&'a PredictionResult>,
    /// "prediction/variant", or "baseline" for a change of the whole claim.
    pub name: String,
    /// The prediction's name in the spec, when the case has one (annotations point at it).
    pub prediction: Option<String>,
    pub failures: Vec<Failure>,
}

impl Case<'_> {
    /// Inconclusive or out of regime and not failed: neither confirmed nor refuted.
    /// JUnit marks these `<skipped>`, GitHub as warnings.
    pub fn undecided(&self) -> Option<String> {
        let r = self.result?;
        if !self.failures.is_empty() {
            return None;
        }
        match r.verdict {
            Verdict::Inconclusive | Verdict::OutOfRegime => Some(format!(
                "{}: {}; {}",
                r.verdict,
                result_line(r),
                super::regime_line(r)
            )),
            _ => None,
        }
    }

    /// The verdict in words with the measurement and the prediction (system-out).
    pub fn summary(&self) -> String {
        match self.result {
            Some(r) => format!(
                "verdict {}{}; measured {}; predicted {}",
                r.verdict,
                match (&r.control, &r.finding) {
                    (Some(crate::judge::ControlStatus::Caught), _) => " (negative control caught)",
                    (_, Some(_)) if r.verdict == Verdict::Refuted => " (a finding of the spec)",
                    _ => "",
                },
                result_line(r),
                prediction_text(&self.outcome.claim.predictions[r.prediction], r),
            ),
            None => "no verdict of this run".into(),
        }
    }

    /// [`Case::summary`] and where the report is.
    pub fn description(&self, report: &str) -> String {
        format!("{}; report {report}", self.summary())
    }
}

/// Where a claim's report is, or why there is none.
pub fn report_path(out: Option<&Path>, id: &str) -> String {
    match out {
        Some(dir) => dir.join(format!("{id}.md")).display().to_string(),
        None => "none (--no-reports)".into(),
    }
}

/// The cases of a run, claim by claim in run order, each claim's results in their
/// order, then the claim's baseline changes that are no result of this run.
/// `reports` is the report directory, None when no reports were written.
pub fn cases<'a>(
    outcomes: &'a [ClaimOutcome],
    baseline: &Baseline,
    reports: Option<&Path>,
) -> Vec<Case<'a>> {
    let changes = match baseline {
        Baseline::Changed(v) => v.as_slice(),
        _ => &[],
    };
    let mut out = Vec::new();
    for o in outcomes {
        let report = report_path(reports, &o.claim.id);
        let change = changes.iter().find(|c| c.claim == o.claim.id);
        for r in &o.results {
            let mut case = Case {
                outcome: o,
                result: Some(r),
                name: format!("{}/{}", r.prediction_name, r.variant),
                prediction: Some(r.prediction_name.clone()),
                failures: Vec::new(),
            };
            let detail = case.description(&report);
            if let Some(p) = &r.problem {
                case.failures.push(Failure {
                    kind: "problem",
                    message: format!("{p}; {detail}"),
                });
            }
            if let Some(rc) = change.and_then(|c| {
                c.results.iter().find(|x| {
                    x.in_run && x.prediction == r.prediction_name && x.variant == r.variant
                })
            }) {
                case.failures.push(Failure {
                    kind: "baseline_changed",
                    message: format!(
                        "changed against the baseline ({}): {}; {detail}",
                        change.map(|c| c.what.as_str()).unwrap_or_default(),
                        rc.what
                    ),
                });
            }
            out.push(case);
        }
        let Some(c) = change else { continue };
        for rc in c.results.iter().filter(|x| !x.in_run) {
            out.push(Case {
                outcome: o,
                result: None,
                name: format!("{}/{}", rc.prediction, rc.variant),
                prediction: Some(rc.prediction.clone()),
                failures: vec![Failure {
                    kind: "baseline_changed",
                    message: format!(
                        "changed against the baseline ({}): {}; report {report}",
                        c.what, rc.what
                    ),
                }],
            });
        }
        if c.results.is_empty() {
            out.push(Case {
                outcome: o,
                result: None,
                name: "baseline".into(),
                prediction: None,
                failures: vec![Failure {
                    kind: "baseline_changed",
                    message: format!("changed against the baseline: {}; report {report}", c.what),
                }],
            });
        }
    }
    out
}

/// The cases `--require-baseline` fails (the run exits 1 for each): a claim without a
/// snapshot in the baseline (its snapshot is only pending), or every claim when the
/// baseline was not checked at all. One case named `baseline` per claim, so that JUnit,
/// the annotations and the job summary carry the reason as they carry a verdict's.
pub fn unrecorded<'a>(
    outcomes: &'a [ClaimOutcome],
    baseline: &Baseline,
    dir: &Path,
) -> Vec<Case<'a>> {
    let why = |o: &ClaimOutcome| -> Option<String> {
        match baseline {
            Baseline::Unchanged { new, .. } if new.contains(&o.claim.id) => Some(format!(
                "--require-baseline: {} has no snapshot in {} (its snapshot is pending: record \
                 it from this run with `dpclaims accept {}`)",
                o.claim.id,
                dir.display(),
                o.claim.id
            )),
            Baseline::NotChecked(why) => Some(format!(
                "--require-baseline: the baseline was not checked ({why})"
            )),
            _ => None,
        }
    };
    outcomes
        .iter()
        .filter_map(|o| {
            let message = why(o)?;
            Some(Case {
                outcome: o,
                result: None,
                name: "baseline".into(),
                prediction: None,
                failures: vec![Failure {
                    kind: "baseline_missing",
                    message,
                }],
            })
        })
        .collect()
}

/// The 1-based line of a spec where prediction `name` is named (`name: <name>`, in
/// block or flow style, quoted or not), looked up in the `predictions:` section first,
/// then anywhere; 1 when it is not found (CI annotations then point at the file).
pub fn prediction_line(spec_text: &str, name: &str) -> usize {
    let names = |line: &str| -> bool {
        let mut rest = line;
        while let Some(i) = rest.find("name:") {
            let before = rest[..i].chars().next_back();
            let after = &rest[i + "name:".len()..];
            rest = after;
            // `name:` must be a key, not the end of `rhs_name:`.
            if before.is_some_and(|c| !matches!(c, ' ' | '-' | '{' | ',' | '\t')) {
                continue;
            }
            let value = after
                .split([',', '}', '#'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(|c| c == '"' || c == '\'');
            if value == name {
                return true;
            }
        }
        false
    };
    let lines: Vec<&str> = spec_text.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("predictions:"));
    if let Some(s) = start {
        // The section ends at the next top-level key.
        for (i, l) in lines.iter().enumerate().skip(s) {
            let top_level =
                i > s && !l.is_empty() && !l.starts_with([' ', '\t', '-', '#']) && l.contains(':');
            if top_level {
                break;
            }
            if names(l) {
                return i + 1;
            }
        }
    }
    lines.iter().position(|l| names(l)).map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::prediction_line;

    const SPEC: &str = "\
id: x
variants:
  - name: eps-bound
    findings:
      eps-bound: >
        a finding, not the prediction
predictions:
  - kind: inequality
    name: eps-bound
    metric: m
  - {kind: event, name: \"quoted\", metric: m}
  - kind: exponent
    rhs_name: late
    name: 'late'   # a comment
discussion: >
  name: not-a-prediction
";

    #[test]
    fn the_line_naming_a_prediction_is_found_in_the_predictions_section() {
        // The variant of the same name (line 3) comes first in the file: not it.
        assert_eq!(prediction_line(SPEC, "eps-bound"), 9);
        assert_eq!(prediction_line(SPEC, "quoted"), 11);
        // `rhs_name: late` is not a `name:` key.
        assert_eq!(prediction_line(SPEC, "late"), 14);
    }

    #[test]
    fn a_prediction_not_found_falls_back_to_anywhere_then_line_1() {
        assert_eq!(prediction_line(SPEC, "not-a-prediction"), 16);
        assert_eq!(prediction_line(SPEC, "absent"), 1);
        assert_eq!(prediction_line("", "absent"), 1);
        let flow = "id: y\npredictions: [{kind: event, name: a}, {kind: event, name: b}]\n";
        assert_eq!(prediction_line(flow, "b"), 2);
    }
}
