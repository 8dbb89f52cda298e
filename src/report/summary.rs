//! `reports/SUMMARY.md`: the claims in plain words, then every verdict.
use super::claim_page::{cell, result_line, verdict_cell};
use super::kept::Listed;
use super::rows::SummaryRows;
use crate::judge::{ClaimOutcome, ControlStatus, PredictionResult, Tally};
use std::fmt::Write as _;

/// Plain words for a claim: what its statements of the paper say (only statements are
/// verdicts about the paper), then each main variant's rows in their evidence's words.
pub fn claim_in_words(o: &ClaimOutcome) -> String {
    use crate::fit::Verdict::*;
    use crate::spec::Evidence;
    let main: Vec<&PredictionResult> = o.results.iter().filter(|r| !r.negative_control).collect();
    let stmts: Vec<&&PredictionResult> = main
        .iter()
        .filter(|r| r.evidence == Evidence::Statement && !r.ablation && !r.exploratory)
        .collect();
    let head = if stmts.is_empty() && main.iter().any(|r| r.evidence == Evidence::Printed) {
        // A sentence of the paper, read on its own printed numbers: never a verdict on
        // the result itself.
        "**read on the paper's printed numbers**"
    } else if stmts.is_empty() {
        "**no statement of the paper**"
    } else if stmts.iter().any(|r| r.verdict == Refuted) {
        if stmts
            .iter()
            .filter(|r| r.verdict == Refuted)
            .all(|r| r.erratum.as_ref().is_some_and(|e| e.confirmed))
        {
            "**erratum** (confirmed)"
        } else {
            "**refuted, unconfirmed**"
        }
    } else if stmts
        .iter()
        .all(|r| r.verdict == Holds && r.discriminating != Some(false))
    {
        "**holds**"
    } else if stmts.iter().all(|r| r.verdict == OutOfRegime) {
        "**out of regime**"
    } else if stmts
        .iter()
        .any(|r| r.verdict == Holds && r.discriminating != Some(false))
    {
        "**holds in part**"
    } else {
        "**not resolved**"
    };
    let per_variant: Vec<String> = o
        .claim
        .variants
        .iter()
        .filter(|v| !v.negative_control)
        .map(|v| {
            let mine: Vec<&&PredictionResult> =
                main.iter().filter(|r| r.variant == v.name).collect();
            let mut counts: Vec<(String, usize)> = Vec::new();
            for r in &mine {
                let w = r.word.clone();
                match counts.iter_mut().find(|(k, _)| *k == w) {
                    Some(e) => e.1 += 1,
                    None => counts.push((w, 1)),
                }
            }
            let words: Vec<String> = counts
                .into_iter()
                .map(|(w, n)| {
                    if n == mine.len() {
                        w
                    } else {
                        format!("{n} {w}")
                    }
                })
                .collect();
            format!("`{}` {}", v.name, words.join(", "))
        })
        .collect();
    let ctrl: Vec<&PredictionResult> = o.results.iter().filter(|r| r.negative_control).collect();
    let caught = ctrl
        .iter()
        .filter(|r| r.control == Some(ControlStatus::Caught))
        .count();
    format!(
        "{head}: {}; negative controls {caught}/{} caught",
        per_variant.join("; "),
        ctrl.len()
    )
}

impl SummaryRows {
    /// The rows of `o`.
    pub fn of(o: &ClaimOutcome) -> Self {
        Self {
            source: cell(&format!(
                "{}, {}",
                o.claim.source.section, o.claim.source.equation
            )),
            words: claim_in_words(o),
            verdicts: o
                .results
                .iter()
                .map(|r| {
                    format!(
                        "`{}` ({} {}) | {} | {}{} | {} | {} | {} |",
                        r.prediction_name,
                        r.kind,
                        r.metric,
                        cell(&o.claim.predictions[r.prediction].source),
                        r.variant,
                        if r.negative_control {
                            " (neg. control)"
                        } else {
                            ""
                        },
                        result_line(r),
                        super::claim_page::regime_line(r),
                        verdict_cell(r)
                    )
                })
                .collect(),
        }
    }
}

/// `reports/SUMMARY.md`: a table of claims in plain words, then one row per verdict.
pub fn summary_markdown(outcomes: &[ClaimOutcome]) -> String {
    let listed: Vec<Listed> = outcomes.iter().map(Listed::Run).collect();
    summary_markdown_listed(outcomes, &listed)
}

/// `reports/SUMMARY.md` of a run of `outcomes` listing `listed` (this run's claims and
/// those kept from earlier runs, in table order). The tally counts this run only.
pub fn summary_markdown_listed(outcomes: &[ClaimOutcome], listed: &[Listed]) -> String {
    let mut s = String::new();
    let profile = outcomes
        .first()
        .map(|o| o.profile.to_string())
        .unwrap_or_default();
    let seed = outcomes.first().map(|o| o.seed).unwrap_or(0);
    let _ = writeln!(s, "# dpclaims — summary\n");
    let _ = writeln!(
        s,
        "*Generated by `dpclaims run` (profile `{profile}`, seed {seed}). Do not edit.*\n"
    );
    let _ = writeln!(
        s,
        "A verdict comes from a prediction registered from the paper and the measurement only \
         (never from a recorded outcome): **holds**, **refuted** (a main variant refuted is a \
         finding, explained in its claim page), **inconclusive**, or **out_of_regime** (too \
         few sweep points inside the theorem's hypotheses). Each is judged on an interval at \
         the family-wise level {:.3}% (Bonferroni over {} rows at {}%: a miss anywhere in the \
         suite has probability at most {}%) unless its spec says otherwise; a slope's interval \
         comes from the replicates' sampling variance. Whether any number changed since \
         the last recorded run is a separate question, answered by the regression baseline \
         (insta snapshots in `tests/snapshots`).\n",
        100.0 * crate::fit::DEFAULT_CONFIDENCE,
        crate::fit::FAMILY_ROWS,
        100.0 * crate::fit::FAMILY_WISE_ERROR,
        100.0 * crate::fit::FAMILY_WISE_ERROR,
    );
    let kept: Vec<&str> = listed
        .iter()
        .filter(|l| matches!(l, Listed::Kept(_)))
        .map(Listed::id)
        .collect();
    if !kept.is_empty() {
        let _ = writeln!(
            s,
            "This run judged {} of the {} claims listed. The rows marked *kept* come from \
             earlier runs (their profile, seed and engine are given), whose pages are still in \
             this directory: {}. The tally below counts this run only.\n",
            outcomes.len(),
            listed.len(),
            kept.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(s, "{}\n", Tally::of(outcomes).line());
    s.push_str(&spent_paragraph(outcomes));
    s.push_str(&listed_claims_table(listed, true, &Default::default()));
    let _ = writeln!(s, "\n## Every verdict\n");
    s.push_str(&super::margin::once_above(&listed_verdicts_table(
        listed, true,
    )));
    s
}

/// The replicates this run drew under sequential stopping, per claim with a sequential
/// sweep (empty when none has one).
fn spent_paragraph(outcomes: &[ClaimOutcome]) -> String {
    let rows: Vec<String> = outcomes
        .iter()
        .filter(|o| super::claim_page::has_sequential_sweep(o))
        .map(|o| format!("* `{}`: {}", o.claim.id, o.spent().words()))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let (units, max): (usize, usize) = outcomes.iter().fold((0, 0), |(u, m), o| {
        let s = o.spent();
        (u + s.units, m + s.max_units)
    });
    format!(
        "Replicates: a sweep with `replicates: {{min, max}}` draws them look by look and a row \
         stops at the first look that decides it (docs/design/sequential-verdicts.md). This \
         run drew {units} of at most {max} units.\n\n{}\n\n",
        rows.join("\n")
    )
}

/// A claim id as a table cell: a link to its page when `links` (SUMMARY.md sits next to
/// the pages), plain code otherwise (e.g. a CI job summary, where the pages are not).
fn claim_cell(id: &str, links: bool) -> String {
    if links {
        format!("[{id}]({id}.md)")
    } else {
        format!("`{id}`")
    }
}

/// The table of claims in plain words (Markdown).
pub fn claims_table(outcomes: &[ClaimOutcome], links: bool) -> String {
    claims_table_marked(outcomes, links, &Default::default())
}

/// [`claims_table`] with `marks` (Markdown, by claim id) in front of a claim's words:
/// the job summary's "regressed against the baseline".
pub fn claims_table_marked(
    outcomes: &[ClaimOutcome],
    links: bool,
    marks: &std::collections::BTreeMap<String, String>,
) -> String {
    let listed: Vec<Listed> = outcomes.iter().map(Listed::Run).collect();
    listed_claims_table(&listed, links, marks)
}

/// The table of every verdict (Markdown).
pub fn verdicts_table(outcomes: &[ClaimOutcome], links: bool) -> String {
    let listed: Vec<Listed> = outcomes.iter().map(Listed::Run).collect();
    listed_verdicts_table(&listed, links)
}

/// The rows of a listed claim and, for a kept one, its mark.
fn rows_of(l: &Listed) -> (SummaryRows, Option<String>) {
    match l {
        Listed::Run(o) => (SummaryRows::of(o), None),
        Listed::Kept(k) => (k.rows.clone(), Some(k.from.to_string())),
    }
}

fn listed_claims_table(
    listed: &[Listed],
    links: bool,
    marks: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| claim | source | in plain words |");
    let _ = writeln!(s, "|---|---|---|");
    for l in listed {
        let (rows, from) = rows_of(l);
        let _ = writeln!(
            s,
            "| {}{} | {} | {}{}{} |",
            claim_cell(l.id(), links),
            if from.is_some() { " (kept)" } else { "" },
            super::escape_controls(&rows.source),
            super::escape_controls(marks.get(l.id()).map_or("", String::as_str)),
            super::escape_controls(&rows.words),
            from.map(|f| format!(" — *kept from an earlier run: {f}*"))
                .unwrap_or_default()
        );
    }
    s
}

fn listed_verdicts_table(listed: &[Listed], links: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| claim | prediction | source | variant | measured | regime | verdict |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for l in listed {
        let (rows, from) = rows_of(l);
        for r in &rows.verdicts {
            // Spec text in a row stays on it (a newline would end the table and forge
            // lines of the summary: issue 58).
            let _ = writeln!(
                s,
                "| {}{} | {}",
                claim_cell(l.id(), links),
                if from.is_some() { " (kept)" } else { "" },
                super::escape_controls(r)
            );
        }
    }
    s
}
