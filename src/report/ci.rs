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
//!
//! A regression leads (issue 59): a main-variant row that changed against the baseline
//! is a [`Regression`]; a negative control of the same claim whose only reason is that
//! its numbers moved too is grouped under the claim's first regression as a consequence
//! ([`Case::consequences`]) and is no failure of its own (the run exits 1 for the
//! regression all the same). [`failed_in_order`] lists the failures regressions first.
//! A main row that was another verdict on the baseline is not told to add a `finding`:
//! the core or the spec changed, not the paper.
use super::baseline::{Baseline, ClaimChange, ResultChange};
use super::{prediction_text, result_line};
use crate::fit::Verdict;
use crate::judge::{ClaimOutcome, PredictionResult};
use std::path::Path;

/// Why a case fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// `problem` (the judge's) or `baseline_changed`.
    pub kind: &'static str,
    /// One line: the reason (the measurement, the prediction and the report are the
    /// case's [`Case::detail`], said once for all its reasons).
    pub message: String,
}

/// A main-variant row that changed against the baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regression {
    /// Its verdict word on the baseline (None: the row is not in the baseline).
    pub before: Option<String>,
    /// Its verdict word now.
    pub after: String,
    /// It held on the baseline and no longer does: the core (or the spec) regressed.
    pub held_before: bool,
}

/// A negative control whose numbers moved with a regression of its claim's main rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consequence {
    /// "prediction/variant".
    pub name: String,
    /// What changed against the baseline ("estimate 2.3 -> 4.6").
    pub what: String,
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
    /// The verdict, the measurement, the prediction and the report, said once after the
    /// reasons (empty when there is nothing to add).
    pub detail: String,
    /// A main-variant row that changed against the baseline.
    pub regression: Option<Regression>,
    /// The negative controls that moved with this regression (the claim's first), each
    /// no failure of its own.
    pub consequences: Vec<Consequence>,
    /// A negative control grouped as a consequence: the regression's case name.
    pub moved_with: Option<String>,
}

impl Case<'_> {
    /// A case of `outcome` with no failure, regression or consequence yet.
    fn new<'a>(
        outcome: &'a ClaimOutcome,
        result: Option<&'a PredictionResult>,
        name: String,
        prediction: Option<String>,
    ) -> Case<'a> {
        Case {
            outcome,
            result,
            name,
            prediction,
            failures: Vec::new(),
            detail: String::new(),
            regression: None,
            consequences: Vec::new(),
            moved_with: None,
        }
    }

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

    /// The verdict in words with the measurement and the prediction (system-out); for a
    /// consequence, what moved and with which regression.
    pub fn summary(&self) -> String {
        let mut s = match self.result {
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
        };
        if let Some(lead) = &self.moved_with {
            s.push_str(&format!(
                "; moved with the regression of {lead} against the baseline (a consequence, \
                 not a failure of its own)"
            ));
        }
        s
    }

    /// [`Case::summary`] and where the report is.
    pub fn description(&self, report: &str) -> String {
        format!("{}; report {report}", self.summary())
    }

    /// Every reason the case fails, joined on one line, then the consequences grouped
    /// under it and the detail (once): the message of its JUnit failure and of its
    /// annotation.
    pub fn message(&self) -> String {
        self.joined(true)
    }

    /// [`Case::message`] without the consequences (the job summary lists them as
    /// bullets under the case's).
    pub fn reasons(&self) -> String {
        self.joined(false)
    }

    fn joined(&self, consequences: bool) -> String {
        let mut parts: Vec<String> = self.failures.iter().map(|f| f.message.clone()).collect();
        if consequences && !self.consequences.is_empty() {
            parts.push(format!(
                "{} moved with it (each no failure of its own): {}",
                controls(self.consequences.len()),
                self.consequences
                    .iter()
                    .map(|c| format!("{} ({})", c.name, c.what))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.detail.is_empty() {
            parts.push(self.detail.clone());
        }
        parts.join("; ")
    }

    /// A main row that held on the baseline and no longer does.
    pub fn regressed(&self) -> bool {
        self.regression.as_ref().is_some_and(|g| g.held_before)
    }
}

/// "1 negative control", "3 negative controls".
pub fn controls(n: usize) -> String {
    format!("{n} negative control{}", if n == 1 { "" } else { "s" })
}

/// Where a claim's report is, or why there is none.
pub fn report_path(out: Option<&Path>, id: &str) -> String {
    match out {
        Some(dir) => dir.join(format!("{id}.md")).display().to_string(),
        None => "none (--no-reports)".into(),
    }
}

/// The judge's advice to explain a refuted main row by a `finding` (or an `errata`
/// entry): right for a row the paper explains, wrong for one that held on the baseline
/// (issue 59: in CI, an invitation to silence a real bug). (start, end) of each text as
/// [`crate::judge`] words it.
const ADVICE: [(&str, &str); 2] = [
    (
        "; if the paper, not the core, explains it, say so in a `finding`",
        "without a `finding` it fails the run",
    ),
    (
        " and the spec records no erratum; if the paper, not the core, is wrong here",
        "an independent confirmation",
    ),
];

/// `problem` without the advice to add a `finding` or an erratum, which `instead`
/// replaces (unchanged when it holds no such advice).
pub fn without_finding_advice(problem: &str, instead: &str) -> String {
    let mut p = problem.to_string();
    for (start, end) in ADVICE {
        if let Some(i) = p.find(start) {
            if let Some(j) = p[i..].find(end) {
                p.replace_range(i..i + j + end.len(), instead);
            }
        }
    }
    p
}

/// What the baseline comparison says of row `r` of this run, when its claim changed.
fn moved<'c>(change: Option<&'c ClaimChange>, r: &PredictionResult) -> Option<&'c ResultChange> {
    change?
        .results
        .iter()
        .find(|x| x.in_run && x.prediction == r.prediction_name && x.variant == r.variant)
}

/// The judge's `problem` of a main row that was `before` on the baseline and is `after`
/// now, without the advice to add a `finding`: the core or the spec changed, not the
/// paper, and a `finding` would silence a regression.
fn regression_problem(problem: &str, before: &str, after: &str) -> String {
    without_finding_advice(
        problem,
        &format!(
            "; it was {before} on the baseline and is {after} now: the core or the spec \
             changed since the baseline, not the paper"
        ),
    )
}

/// Rewrites the problem of every main row that changed against the baseline as the CI
/// outputs word it ([`regression_problem`]), so the plain output's FAIL lines, the
/// pages and `verdicts.json` do not advise a `finding` for a regression either (issue
/// 59). A run without a changed baseline is left as it is.
pub fn drop_finding_advice_of_regressions(outcomes: &mut [ClaimOutcome], baseline: &Baseline) {
    let Baseline::Changed(changes) = baseline else {
        return;
    };
    for o in outcomes.iter_mut() {
        let Some(change) = changes.iter().find(|c| c.claim == o.claim.id) else {
            continue;
        };
        for r in o.results.iter_mut().filter(|r| !r.negative_control) {
            let before = moved(Some(change), r).and_then(|x| x.before.as_deref());
            if let (Some(b), Some(p)) = (before, &r.problem) {
                if b != r.word {
                    r.problem = Some(regression_problem(p, b, &r.word));
                }
            }
        }
    }
}

/// The word a row would have had holding ("holds", "consistent", "passed", "reproduced
/// (on ...)"), without "(not discriminating)".
fn held_word(o: &ClaimOutcome, r: &PredictionResult) -> String {
    let p = &o.claim.predictions[r.prediction];
    let proxy = o
        .claim
        .variants
        .iter()
        .find(|v| v.name == r.variant)
        .map_or(p.proxy.as_str(), |v| v.proxy_of(p));
    let mut held = r.clone();
    held.verdict = Verdict::Holds;
    held.erratum = None;
    held.discriminating = None;
    crate::judge::evidence::word(&held, proxy)
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
        let first = out.len();
        for r in &o.results {
            let mut case = Case::new(
                o,
                Some(r),
                format!("{}/{}", r.prediction_name, r.variant),
                Some(r.prediction_name.clone()),
            );
            case.detail = case.description(&report);
            let moved = moved(change, r);
            if let Some(rc) = moved.filter(|_| !r.negative_control) {
                let held = held_word(o, r);
                let held_before = rc
                    .before
                    .as_deref()
                    .is_some_and(|b| b.trim_end_matches(" (not discriminating)") == held)
                    && r.verdict != Verdict::Holds;
                case.regression = Some(Regression {
                    before: rc.before.clone(),
                    after: r.word.clone(),
                    held_before,
                });
            }
            if let Some(p) = &r.problem {
                // A main row that was another verdict on the baseline: the core or the
                // spec changed since, and a `finding` would silence it.
                let message = match case.regression.as_ref() {
                    Some(Regression {
                        before: Some(b),
                        after,
                        ..
                    }) if b != after => regression_problem(p, b, after),
                    _ => p.clone(),
                };
                case.failures.push(Failure {
                    kind: "problem",
                    message,
                });
            }
            if let Some(rc) = moved {
                case.failures.push(Failure {
                    kind: "baseline_changed",
                    message: format!(
                        "changed against the baseline ({}): {}",
                        change.map(|c| c.what.as_str()).unwrap_or_default(),
                        rc.what
                    ),
                });
            }
            out.push(case);
        }
        group_consequences(&mut out[first..], change);
        let Some(c) = change else { continue };
        for rc in c.results.iter().filter(|x| !x.in_run) {
            let mut case = Case::new(
                o,
                None,
                format!("{}/{}", rc.prediction, rc.variant),
                Some(rc.prediction.clone()),
            );
            case.failures.push(Failure {
                kind: "baseline_changed",
                message: format!("changed against the baseline ({}): {}", c.what, rc.what),
            });
            case.detail = format!("report {report}");
            out.push(case);
        }
        if c.results.is_empty() {
            let mut case = Case::new(o, None, "baseline".into(), None);
            case.failures.push(Failure {
                kind: "baseline_changed",
                message: format!("changed against the baseline: {}", c.what),
            });
            case.detail = format!("report {report}");
            out.push(case);
        }
    }
    out
}

/// The negative controls of one claim's cases whose only reason is a baseline change,
/// when a main row of the claim changed too: each grouped under the changed main row of
/// its prediction, else under the claim's first main row that held on the baseline and
/// no longer does, else its first changed main row (as [`Case::consequences`]); no
/// failure of their own.
fn group_consequences(claim: &mut [Case], change: Option<&super::baseline::ClaimChange>) {
    let Some(lead) = claim
        .iter()
        .position(Case::regressed)
        .or_else(|| claim.iter().position(|c| c.regression.is_some()))
    else {
        return;
    };
    for i in 0..claim.len() {
        let c = &claim[i];
        let Some(r) = c.result.filter(|r| r.negative_control) else {
            continue;
        };
        let only_moved =
            !c.failures.is_empty() && c.failures.iter().all(|f| f.kind == "baseline_changed");
        if !only_moved {
            continue;
        }
        let under = claim
            .iter()
            .position(|m| m.regression.is_some() && m.prediction == c.prediction)
            .unwrap_or(lead);
        let what = moved(change, r).map(|x| x.what.clone()).unwrap_or_default();
        let name = c.name.clone();
        let lead_name = claim[under].name.clone();
        claim[i].failures.clear();
        claim[i].moved_with = Some(lead_name);
        claim[under].consequences.push(Consequence { name, what });
    }
}

/// The failed cases, regressions first — the main rows that held on the baseline and
/// no longer do, then the other main rows that changed — then every other failure, each
/// group in case order (claim by claim in run order).
pub fn failed_in_order<'c, 'a>(cases: &'c [Case<'a>]) -> Vec<&'c Case<'a>> {
    let rank = |c: &Case| match &c.regression {
        Some(g) if g.held_before => 0,
        Some(_) => 1,
        None => 2,
    };
    let mut failed: Vec<&Case> = cases.iter().filter(|c| !c.failures.is_empty()).collect();
    failed.sort_by_key(|c| rank(c));
    failed
}

/// The plain lines `dpclaims run` ends with on stderr when a main row that held on the
/// baseline no longer does (issue 59): each such row, the negative controls that moved
/// with it, and that the judge's advice to explain a refuted row by a `finding` is not
/// for it. Empty when no row regressed.
pub fn regression_notes(cases: &[Case]) -> Vec<String> {
    cases
        .iter()
        .filter(|c| c.regressed())
        .filter_map(|c| {
            let g = c.regression.as_ref()?;
            let moved = if c.consequences.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} moved with it ({})",
                    controls(c.consequences.len()),
                    c.consequences
                        .iter()
                        .map(|q| q.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Some(format!(
                "REGRESSION of the core: {} {} was {} on the baseline and is {} now{moved}. The \
                 core or the spec changed since the baseline; the advice to explain the row by \
                 a `finding` is for what the paper explains, not for this",
                c.outcome.claim.id,
                c.name,
                g.before.as_deref().unwrap_or_default(),
                g.after,
            ))
        })
        .collect()
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
            let mut case = Case::new(o, None, "baseline".into(), None);
            case.failures.push(Failure {
                kind: "baseline_missing",
                message,
            });
            Some(case)
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
    use super::{prediction_line, without_finding_advice};

    #[test]
    fn the_advice_to_add_a_finding_or_an_erratum_is_replaced() {
        // The judge's two texts (src/judge/mod.rs, `main_rules`), then another problem.
        let finding = "regression of the core: inconsistent on a main variant (measured 1.4, \
                       predicted <= 1); if the paper, not the core, explains it, say so in a \
                       `finding` (what the paper says, what was measured, why): without a \
                       `finding` it fails the run; tolerance is vacuous";
        assert_eq!(
            without_finding_advice(finding, "; X"),
            "regression of the core: inconsistent on a main variant (measured 1.4, predicted \
             <= 1); X; tolerance is vacuous"
        );
        let erratum = "regression of the core: refuted on a main variant (measured 2) and the \
                       spec records no erratum; if the paper, not the core, is wrong here: \
                       refuted, unconfirmed until an `errata` entry gives the paper's sentence, \
                       the counterexample and an independent confirmation";
        assert_eq!(
            without_finding_advice(erratum, "; X"),
            "regression of the core: refuted on a main variant (measured 2); X"
        );
        // Anything else is left as it is.
        let other = "negative control is identical to main variant";
        assert_eq!(without_finding_advice(other, "; X"), other);
    }

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
