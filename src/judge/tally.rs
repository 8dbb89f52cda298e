//! Counts of a run's verdicts by evidence kind, and the run's last line.
use super::{ClaimOutcome, ControlStatus, PredictionResult};
use crate::fit::Verdict;
use crate::spec::Evidence;
use serde::Serialize;

/// Counts of one evidence kind's main-variant verdicts.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    /// holds / consistent / reproduced / passed (for statements, consequences and
    /// proxies: only those whose prediction catches a control).
    pub positive: usize,
    /// A `holds` whose prediction catches no control: it could not have failed.
    pub not_discriminating: usize,
    /// refuted / inconsistent / not reproduced / failed.
    pub negative: usize,
    pub inconclusive: usize,
    pub out_of_regime: usize,
}

impl Counts {
    fn add(&mut self, r: &PredictionResult) {
        match r.verdict {
            Verdict::Holds if r.discriminating == Some(false) => self.not_discriminating += 1,
            Verdict::Holds => self.positive += 1,
            Verdict::Refuted => self.negative += 1,
            Verdict::Inconclusive => self.inconclusive += 1,
            Verdict::OutOfRegime => self.out_of_regime += 1,
        }
    }
}

/// Counts over a run, by evidence kind (only statements are verdicts about the paper),
/// ablations apart, negative controls caught, and every problem.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Tally {
    /// Statements of the paper on the printed algorithm.
    pub statements: Counts,
    /// Refuted statements whose erratum is confirmed (among `statements.negative`).
    pub errata_confirmed: usize,
    pub consequences: Counts,
    pub proxies: Counts,
    /// Sentences read on the paper's own printed numbers (never a holds).
    pub printed: Counts,
    pub self_checks: Counts,
    /// Rows of variants that change the printed algorithm (shown, not counted).
    pub ablations: usize,
    /// Rows of exploratory variants (`exploratory: true`; shown, not counted).
    pub exploratory: usize,
    /// Rows of draft claims (statement or quote a TODO placeholder; shown, not counted).
    pub drafts: usize,
    pub controls: usize,
    pub controls_caught: usize,
    /// Every reason the run fails, one line each.
    pub problems: Vec<String>,
}

impl Tally {
    pub fn of(outcomes: &[ClaimOutcome]) -> Tally {
        let mut t = Tally::default();
        for o in outcomes {
            let draft = o.claim.draft().is_some();
            for r in &o.results {
                if r.negative_control {
                    t.controls += 1;
                    if r.control == Some(ControlStatus::Caught) {
                        t.controls_caught += 1;
                    }
                    continue;
                }
                if draft {
                    t.drafts += 1;
                    continue;
                }
                if r.exploratory {
                    t.exploratory += 1;
                    continue;
                }
                if r.ablation {
                    t.ablations += 1;
                    continue;
                }
                match r.evidence {
                    Evidence::Statement => {
                        t.statements.add(r);
                        if r.erratum.as_ref().is_some_and(|e| e.confirmed) {
                            t.errata_confirmed += 1;
                        }
                    }
                    Evidence::Consequence => t.consequences.add(r),
                    Evidence::Proxy => t.proxies.add(r),
                    Evidence::Printed => t.printed.add(r),
                    Evidence::SelfCheck => t.self_checks.add(r),
                }
            }
            t.problems.extend(o.problems());
        }
        t
    }

    /// True when nothing fails the run on the verdicts' side (the baseline is separate).
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// "paper: 3 hold, 1 refuted (1 erratum confirmed), ...; consequences: ...; proxies:
    /// ...; self-checks: k/n passed; ablations: m rows; negative controls k/k caught".
    pub fn line(&self) -> String {
        let st = &self.statements;
        let mut s = format!("paper: {} hold", st.positive);
        if st.not_discriminating > 0 {
            s.push_str(&format!(" (+{} not discriminating)", st.not_discriminating));
        }
        s.push_str(&format!(", {} refuted", st.negative));
        if st.negative > 0 {
            let unconfirmed = st.negative - self.errata_confirmed;
            s.push_str(&format!(" ({} errata confirmed", self.errata_confirmed));
            if unconfirmed > 0 {
                s.push_str(&format!(", {unconfirmed} UNCONFIRMED"));
            }
            s.push(')');
        }
        s.push_str(&format!(
            ", {} inconclusive, {} out of regime",
            st.inconclusive, st.out_of_regime
        ));
        let part = |name: &str, c: &Counts, pos: &str, neg: &str| {
            let mut p = format!("; {name}: {} {pos}", c.positive);
            if c.not_discriminating > 0 {
                p.push_str(&format!(" (+{} not discriminating)", c.not_discriminating));
            }
            p.push_str(&format!(
                ", {} {neg}, {} inconclusive, {} out of regime",
                c.negative, c.inconclusive, c.out_of_regime
            ));
            p
        };
        s.push_str(&part(
            "consequences",
            &self.consequences,
            "consistent",
            "inconsistent",
        ));
        s.push_str(&part(
            "proxies",
            &self.proxies,
            "reproduced",
            "not reproduced",
        ));
        if self.printed != Counts::default() {
            s.push_str(&part(
                "on the paper's printed numbers",
                &self.printed,
                "consistent",
                "inconsistent",
            ));
        }
        let sc = &self.self_checks;
        // A self-check out of regime or inconclusive is not decided, never a failure.
        let passed = sc.positive + sc.not_discriminating;
        s.push_str(&format!("; self-checks: {passed} passed"));
        if sc.negative > 0 {
            s.push_str(&format!(", {} FAILED", sc.negative));
        }
        let undecided = sc.inconclusive + sc.out_of_regime;
        if undecided > 0 {
            s.push_str(&format!(", {undecided} not decided"));
        }
        if self.ablations > 0 {
            s.push_str(&format!(
                "; ablations: {} rows (not counted)",
                self.ablations
            ));
        }
        if self.exploratory > 0 {
            s.push_str(&format!(
                "; exploratory: {} rows (not counted)",
                self.exploratory
            ));
        }
        if self.drafts > 0 {
            s.push_str(&format!(
                "; drafts: {} rows (TODO placeholders; not counted)",
                self.drafts
            ));
        }
        s.push_str(&format!(
            "; negative controls {}/{} caught",
            self.controls_caught, self.controls
        ));
        s
    }
}
