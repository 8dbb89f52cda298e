//! `reports/<id>.html`: a claim's page — the head of `<id>.md` (the paper's sentence,
//! what was run), the verdict and control tables coloured by verdict, what fails the run,
//! the errata and findings, then the plot and the details, rendered from `<id>.md`.
use super::markdown::{md_block, md_inline};
use super::{legend, page, verdict_td, INDEX};
use crate::judge::ClaimOutcome;
use crate::report::claim_page::{
    claim_markdown, control_cell, points_cell, CONTROLS, DETAILS, VERDICTS,
};
use crate::report::{margin, result_line};
use maud::html;

/// `<id>.md` split at its `## ` headings: the part before the first, then each section
/// (heading included).
fn sections(md: &str) -> (String, Vec<String>) {
    let mut head = String::new();
    let mut rest: Vec<String> = Vec::new();
    for line in md.split_inclusive('\n') {
        if line.starts_with("## ") {
            rest.push(String::new());
        }
        match rest.last_mut() {
            Some(s) => s.push_str(line),
            None => head.push_str(line),
        }
    }
    (head, rest)
}

/// `<id>.html`.
pub fn claim_html(o: &ClaimOutcome) -> String {
    let c = &o.claim;
    let (head, rest) = sections(&claim_markdown(o));
    // The two tables this page draws itself (coloured); the rest from the Markdown, the
    // plot placed where the details start.
    let drawn = |s: &&String| {
        [VERDICTS, CONTROLS]
            .iter()
            .any(|h| s.starts_with(&format!("{h}\n")))
    };
    let rest: Vec<&String> = rest.iter().filter(|s| !drawn(s)).collect();
    let (before, after): (Vec<&String>, Vec<&String>) =
        match rest.iter().position(|s| s.starts_with(DETAILS)) {
            Some(i) => (rest[..i].to_vec(), rest[i..].to_vec()),
            None => (rest.clone(), vec![]),
        };
    let main: Vec<_> = o.results.iter().filter(|r| !r.negative_control).collect();
    let controls: Vec<_> = o.results.iter().filter(|r| r.negative_control).collect();
    let problems = o.problems();
    let body = html! {
        nav {
            a href=(INDEX) { "← all claims" } " · as Markdown: "
            a href={ (c.id) ".md" } { (c.id) ".md" } " · values: "
            a href={ (c.id) ".csv" } { (c.id) ".csv" } " · plot: "
            a href={ (c.id) ".svg" } { (c.id) ".svg" }
        }
        (md_block(&head))
        h2 { "Verdicts" }
        (legend())
        @if o.results.iter().any(|r| margin::says(&result_line(r))) { p { em { (margin::NOTE) } } }
        table.verdicts {
            thead { tr {
                th { "prediction" } th { "variant" } th { "verdict" } th { "measured" }
                th { "points judged" } th { "negative control" }
            } }
            tbody {
                @for r in &main {
                    tr {
                        td { code { (r.prediction_name) } }
                        td { (r.variant) }
                        (verdict_td(r))
                        td { (margin::cell(result_line(r))) }
                        td { (points_cell(r)) }
                        td { (md_inline(&control_cell(o, r))) }
                    }
                }
            }
        }
        @if !controls.is_empty() {
            h2 { "Negative controls" }
            p { "Each control breaks the statement on purpose (how: Variants, below); a prediction that holds counts only if it catches its control." }
            table.verdicts {
                thead { tr { th { "prediction" } th { "control" } th { "measured" } th { "verdict" } } }
                tbody {
                    @for r in &controls {
                        tr {
                            td { code { (r.prediction_name) } }
                            td { (r.variant) }
                            td { (margin::cell(result_line(r))) }
                            (verdict_td(r))
                        }
                    }
                }
            }
        }
        @if !problems.is_empty() {
            p { strong { "This claim fails the run:" } }
            ul { @for p in &problems { li { (crate::report::number::in_text(p)) } } }
        }
        @for s in &before { (md_block(s)) }
        h2 { "Plot" }
        p {
            "One panel per prediction, titled with its name and verdict. Error bars are two "
            "standard errors of each point's mean, narrower than the simultaneous intervals the "
            "verdicts use (the table's). A paired contrast shows the paired difference. Fitted predictions show each variant's fitted line, the main "
            "variant's slope interval (shaded), the predicted slope (black, dashed) through its "
            "points and the slopes the tolerance allows (grey band); inequalities and events "
            "their right-hand side or required probability (red, dashed). Negative controls are "
            "grey, with hollow markers, a dashed fit and “(negative control)” in the legend."
        }
        img.plot src={ (c.id) ".svg" } alt={ "plots of " (c.id) };
        @for s in &after { (md_block(s)) }
    };
    page(&format!("{} — {}", c.id, c.title), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_split_at_second_level_headings_only() {
        let (head, rest) = sections("# t\n\nintro\n## A\na\n### sub\nx\n## B\nb\n");
        assert_eq!(head, "# t\n\nintro\n");
        assert_eq!(rest, vec!["## A\na\n### sub\nx\n", "## B\nb\n"]);
    }
}
