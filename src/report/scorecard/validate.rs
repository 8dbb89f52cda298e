//! Checks a loaded scorecard against the claims: every `checked_by` names a main
//! variant's prediction of a claim about this paper, self-checks are declared
//! `could_fail: construction`, hypotheses are inherited, and every number of the page
//! names a check.

use super::{keynum, Catalogue, CouldFail, PaperResult, Scorecard, ScorecardError};
use crate::spec::Evidence;

impl Scorecard {
    /// Checks every `checked_by` entry against the claims: the claim exists, the
    /// prediction is one of its predictions, the variant one of its main variants (a
    /// negative control's verdict says nothing about the paper). `planned` entries are
    /// not checked: their claim may not exist yet.
    pub fn validate(&self, claims: &Catalogue) -> Result<(), ScorecardError> {
        self.validate_numbers(claims)?;
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
                    Some(v) if v.exploratory => {
                        return Err(bad(format!(
                            "variant `{}` of `{}` is exploratory: shown in its claim's \
                             report, never counted for a result",
                            c.variant, c.claim
                        )))
                    }
                    Some(v) if v.is_ablation() => {
                        return Err(bad(format!(
                            "variant `{}` of `{}` changes the printed algorithm ({}): an \
                             ablation is shown in its claim's report, never counted for a result",
                            c.variant,
                            c.claim,
                            v.deviations
                                .iter()
                                .filter(|d| !d.typo_fix)
                                .map(|d| d.change.as_str())
                                .collect::<Vec<_>>()
                                .join("; ")
                        )))
                    }
                    Some(_) => {}
                }
                let stem = self.page.trim_start_matches("scorecard-");
                if claim.paper != stem {
                    return Err(bad(format!(
                        "claim `{}` is about paper `{}` (its `paper:`), not `{stem}`",
                        c.claim, claim.paper
                    )));
                }
                let p = claim
                    .predictions
                    .iter()
                    .find(|p| p.name == c.prediction)
                    .expect("checked above");
                if p.evidence == Evidence::SelfCheck
                    && r.could_fail != Some(CouldFail::Construction)
                {
                    return Err(bad(format!(
                        "`{}` is a self-check of the tool: it is listed in the page's self-check \
                         section, never as evidence for a result",
                        c.prediction
                    )));
                }
                // The claim's own word follows what the scorecard counts: a result on the
                // paper's printed numbers is read by `printed` predictions, and one true by
                // construction by self-checks, so that no claim page or verdicts.json row
                // says "holds" where the scorecard says otherwise.
                let wants = match r.could_fail {
                    Some(CouldFail::Printed) => Some(Evidence::Printed),
                    Some(CouldFail::Construction) => Some(Evidence::SelfCheck),
                    _ => None,
                };
                if let Some(e) = wants.filter(|e| *e != p.evidence) {
                    return Err(bad(format!(
                        "`{}` / `{}` checks a `could_fail: {}` result: its evidence must be \
                         `{e}` (it is `{}`), so that its own page words it as the scorecard \
                         counts it",
                        c.claim,
                        c.prediction,
                        r.could_fail.map(CouldFail::as_str).unwrap_or_default(),
                        p.evidence
                    )));
                }
                if p.evidence == Evidence::Printed && r.could_fail != Some(CouldFail::Printed) {
                    return Err(bad(format!(
                        "`{}` / `{}` reads the paper's printed numbers (`evidence: printed`): the \
                         result it checks declares `could_fail: printed`",
                        c.claim, c.prediction
                    )));
                }
                let gate = |h: &&String| {
                    !self
                        .hypotheses
                        .iter()
                        .any(|x| &x.name == *h && x.by_construction)
                };
                if let Some(h) = r
                    .hypotheses
                    .iter()
                    .filter(gate)
                    .find(|h| !p.under.contains(h))
                {
                    return Err(bad(format!(
                        "prediction `{}` omits the result's hypothesis `{h}`: a check of a \
                         statement inherits every hypothesis of it (add it to `under`)",
                        c.prediction
                    )));
                }
                // A check counts once: listed by one result, and besides only by results
                // whose verdict follows from that one's (`could_fail: follows`).
                let follows = |q: &PaperResult| q.could_fail == Some(CouldFail::Follows);
                let counted = |upto: usize| {
                    self.results[..upto]
                        .iter()
                        .filter(|q| !follows(q))
                        .map(|q| q.checked_by.iter().filter(|x| *x == c).count())
                        .sum::<usize>()
                };
                let twice_here = r.checked_by.iter().filter(|x| *x == c).count() > 1;
                if twice_here || counted(i + 1) > 1 {
                    return Err(bad(
                        "the same check is listed twice: one measurement counts once".into(),
                    ));
                }
                if follows(r) && counted(self.results.len()) != 1 {
                    return Err(bad(
                        "`could_fail: follows`: each check must also be listed by exactly one \
                         result that does not follow (the result its verdict follows from)"
                            .into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Scorecard {
    /// Every number of the page (box placeholders, keys) names a check of the claims.
    fn validate_numbers(&self, claims: &Catalogue) -> Result<(), ScorecardError> {
        let bad = |entry: String, message: String| ScorecardError {
            file: self.file.display().to_string(),
            entry,
            message,
        };
        for (i, l) in self.summary.iter().enumerate() {
            for r in keynum::placeholders(l).map_err(|m| bad(format!("summary[{i}]"), m))? {
                keynum::check_ref(&r, claims).map_err(|m| bad(format!("summary[{i}]"), m))?;
            }
        }
        for (i, r) in self.results.iter().enumerate() {
            let entry = || format!("results[{i}] ({}).key", r.result);
            if let Some(k) = &r.key {
                keynum::check_ref(&k.num_ref(), claims).map_err(|m| bad(entry(), m))?;
                for p in keynum::placeholders(&k.meaning).map_err(|m| bad(entry(), m))? {
                    keynum::check_ref(&p, claims).map_err(|m| bad(entry(), m))?;
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
