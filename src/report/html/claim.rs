//! `reports/<id>.html`: a claim's page — the head of `<id>.md` (statement, source,
//! system, hypotheses), the verdict table coloured by verdict, the plot, then the other
//! sections of `<id>.md` rendered from its Markdown.
use super::markdown::{md_block, md_inline};
use super::{legend, page, verdict_td, INDEX};
use crate::judge::ClaimOutcome;
use crate::report::claim_page::{cell, claim_markdown, prediction_text};
use maud::html;

/// The heading of the section of `<id>.md` this page draws itself (coloured).
const VERDICTS: &str = "## Verdicts";

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
    let rest: Vec<&String> = rest.iter().filter(|s| !s.starts_with(VERDICTS)).collect();
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
        @if o.results.iter().any(|r| crate::report::margin::says(&crate::report::result_line(r))) { p { em { (crate::report::margin::NOTE) } } }
        table {
            thead { tr {
                th { "prediction" } th { "source" } th { "registered prediction" } th { "variant" }
                th { "measured" } th { "regime" } th { "verdict" }
            } }
            tbody {
                @for r in &o.results {
                    tr {
                        td { code { (r.prediction_name) } }
                        td { (c.predictions[r.prediction].source) }
                        td { (md_inline(&cell(&prediction_text(&c.predictions[r.prediction], r)))) }
                        td { (r.variant) @if r.negative_control { " (negative control)" } }
                        td { (crate::report::margin::cell(crate::report::result_line(r))) }
                        td { (crate::report::regime_line(r)) }
                        (verdict_td(r))
                    }
                }
            }
        }
        @if !problems.is_empty() {
            p { strong { "This claim fails the run:" } }
            ul { @for p in &problems { li { (crate::report::number::in_text(p)) } } }
        }
        h2 { "Plot" }
        p {
            "One panel per prediction, titled with its name and verdict. Error bars are two "
            "standard errors. Fitted predictions show each variant's fitted line, the main "
            "variant's slope interval (shaded), the predicted slope (black, dashed) through its "
            "points and the slopes the tolerance allows (grey band); inequalities and events "
            "their right-hand side or required probability (red, dashed). Negative controls are "
            "grey, with hollow markers, a dashed fit and “(negative control)” in the legend."
        }
        img.plot src={ (c.id) ".svg" } alt={ "plots of " (c.id) };
        @for s in &rest { (md_block(s)) }
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
