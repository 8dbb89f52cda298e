//! `reports/index.html` and one `reports/<id>.html` per claim, beside the Markdown: static
//! pages (no JavaScript, no external assets; the style sheet is inline, plots are the
//! `<id>.svg` files next to them), templated with `maud`, which escapes every
//! interpolated string.
//!
//! The index holds the tally, the claims in plain words and every verdict, coloured by
//! verdict; a claim page the statement, hypotheses, the verdict table, the plot and then
//! the rest of `<id>.md` (findings, variants, parameters, sweep tables, fits, discussion)
//! rendered from the same Markdown, so the two pages cannot drift apart.
//!
//! Scorecards: every `scorecard-*.md` present in the output directory when the pages are
//! written is rendered to `scorecard-*.html` and linked from the index
//! ([`super::write_reports_with`] writes them, [`super::scorecard`], before calling
//! [`write_html`]).
mod claim;
mod markdown;
mod math;
mod sanitise;

pub use claim::claim_html;

/// Markdown to HTML as every page renders spec prose (raw HTML shown as text, links and
/// images by the policy of the module `markdown`): the entry point of the property tests
/// and the fuzz target.
pub fn render_markdown(md: &str) -> String {
    markdown::render(md)
}

use super::claim_page::verdict_cell;
use super::summary::claim_in_words;
use super::write_atomic;
use crate::judge::{ClaimOutcome, ControlStatus, PredictionResult, Tally};
use markdown::md_inline;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use std::path::Path;

/// The index page's file name.
pub const INDEX: &str = "index.html";

/// The style sheet of every page (inline: the pages need no other file).
const CSS: &str = "body{font-family:sans-serif;max-width:72rem;margin:1.5rem auto;padding:0 1rem;line-height:1.45;color:#222}\
table{border-collapse:collapse;margin:0.8rem 0;font-size:0.92rem}\
th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;vertical-align:top;text-align:left}\
th{background:#f2f2f2}\
code{background:#f4f4f4;padding:0 0.2rem}\
img.plot{width:100%;height:auto;border:1px solid #ddd}\
nav{margin-bottom:1rem}\
.holds{background:#d9f2d9}.refuted{background:#f4a6a0}.inconclusive{background:#fcefc7}\
.out_of_regime{background:#e6e6e6}.caught{background:#d9ecf7}\
.notrepro{background:#f7d9b5}.nottestable{background:#dcdcf4}.notresolved{background:#c9ece6}\
.notcheckable{background:#fff;color:#555;font-style:italic}\
.printed{background:#fff;outline:2px dashed #7fb77f;outline-offset:-3px}\
blockquote{border-left:4px solid #7a9cc6;background:#f5f8fc;margin:0.8rem 0;padding:0.3rem 1rem}\
.missed{background:#d4b3f0;font-weight:bold;outline:2px solid #7b2cbf;outline-offset:-2px}\
.legend span{display:inline-block;padding:0 0.5rem;margin-right:0.3rem;border:1px solid #ccc}\
table.verdicts td:nth-child(-n+2){white-space:nowrap}\
.multiples{display:flex;flex-wrap:wrap;gap:0.5rem}.multiples svg{border:1px solid #ddd;background:#fff}";

/// A whole page: head (title, inline style) and `body`.
fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body { (body) }
        }
    }
    .into_string()
        + "\n"
}

/// The CSS class of a verdict cell: a main variant's outcome in the words of its
/// evidence kind ([`word_class`]: a proxy's "not reproduced" is never an erratum's red),
/// else its verdict; `caught` or `missed` for a negative control (whose refutation is
/// the expected outcome).
fn verdict_class(r: &PredictionResult) -> &'static str {
    match &r.control {
        Some(ControlStatus::Caught) => "caught",
        Some(_) => "missed",
        None => word_class(&r.word).unwrap_or(r.verdict.as_str()),
    }
}

/// The outcome classes from the worst to the best: a claim's row on the index takes the
/// worst class of its main results.
const WORST_FIRST: [&str; 10] = [
    "refuted",
    "notrepro",
    "inconclusive",
    "notresolved",
    "nottestable",
    "out_of_regime",
    "notcheckable",
    "printed",
    "holds",
    "caught",
];

/// The CSS class of a claim's row on the index: the class of its verdict in plain words,
/// else of its worst main result.
fn claim_class(o: &ClaimOutcome) -> &'static str {
    let main = || o.results.iter().filter(|r| !r.negative_control);
    let missed = o
        .results
        .iter()
        .any(|r| r.negative_control && r.control != Some(ControlStatus::Caught));
    if missed {
        return "missed";
    }
    // The colour of the claim's word in plain words (`not resolved`, `holds`, an
    // erratum), so that the cell and the words beside it agree; a claim without a
    // statement of the paper takes its worst result's colour.
    let words = claim_in_words(o);
    let word = words
        .strip_prefix("**")
        .and_then(|w| w.split("**").next())
        .unwrap_or("");
    if let Some(c) = word_class(word) {
        return c;
    }
    let classes: Vec<&str> = main().map(verdict_class).collect();
    WORST_FIRST
        .into_iter()
        .find(|c| classes.contains(c))
        .unwrap_or("out_of_regime")
}

/// The colour key shown above verdict tables.
fn legend() -> Markup {
    html! {
        p.legend {
            "Colours: "
            span.holds { "holds" }
            span.refuted { "refuted (erratum)" }
            span.notrepro { "not reproduced / inconsistent" }
            span.inconclusive { "inconclusive" }
            span.notresolved { "not resolved" }
            span.nottestable { "not testable" }
            span.out_of_regime { "out of regime" }
            span.notcheckable { "not checkable in simulation" }
            span.printed { "consistent with its printed numbers (not a holds)" }
            span.caught { "control caught" }
            span.missed { "control NOT caught" }
        }
    }
}

/// A verdict cell, coloured.
fn verdict_td(r: &PredictionResult) -> Markup {
    html! { td class=(verdict_class(r)) { (md_inline(&verdict_cell(r))) } }
}

/// `index.html`: the tally, the claims in plain words, every verdict, the scorecards.
/// `scorecards` are the file stems of the scorecard pages (`scorecard-…`), sorted.
pub fn index_html(
    outcomes: &[ClaimOutcome],
    kept: &[super::kept::Kept],
    scorecards: &[String],
) -> String {
    let first = outcomes.first();
    let profile = first.map(|o| o.profile.to_string()).unwrap_or_default();
    let seed = first.map(|o| o.seed).unwrap_or(0);
    let body = html! {
        h1 { "dpclaims — summary" }
        p { em { "Generated by " code { "dpclaims run" } " (profile " code { (profile) } ", seed " (seed) "). Do not edit." } }
        p {
            "A verdict comes from a prediction registered from the paper and the measurement only. "
            "Each claim has its page (statement, predictions, regime, tables, plots); the same reports as Markdown: "
            a href="SUMMARY.md" { "SUMMARY.md" }
            // verdicts.json is written only when there is an outcome.
            @if first.is_some() { "; machine-readable: " a href="verdicts.json" { "verdicts.json" } }
            "."
        }
        @if !kept.is_empty() {
            p {
                "This run judged " (outcomes.len()) " of the " (outcomes.len() + kept.len())
                " claims listed. The rows marked " em { "kept" } " come from earlier runs (their \
                profile, seed and engine are given), whose pages are still in this directory. \
                The tally below counts this run only."
            }
        }
        p { strong { (Tally::of(outcomes).line()) } }
        @if !scorecards.is_empty() {
            h2 { "Scorecards" }
            p { "One page per paper: each numbered result with its combined verdict, then every check behind it." }
            ul {
                @for s in scorecards.iter().filter(|s| !s.ends_with("-details")) {
                    li { a href={ (s) ".html" } { (s) } " (" a href={ (s) ".md" } { "Markdown" } ")" }
                }
            }
        }
        h2 { "Claims" }
        table {
            thead { tr { th { "claim" } th { "title" } th { "source" } th { "in plain words" } } }
            tbody {
                @for o in outcomes {
                    tr {
                        td class=(claim_class(o)) { a href={ (o.claim.id) ".html" } { (o.claim.id) } }
                        td { (o.claim.title) }
                        td { (o.claim.source.section) ", " (o.claim.source.equation) }
                        td { (md_inline(&claim_in_words(o))) }
                    }
                }
                @for k in kept {
                    tr {
                        td { a href={ (k.id) ".html" } { (k.id) } }
                        td { em { "kept" } }
                        td { "earlier run: " (k.from.to_string()) }
                        td { "see its page" }
                    }
                }
            }
        }
        h2 { "Every verdict" }
        (legend())
        @if outcomes.iter().any(|o| o.results.iter().any(|r| super::margin::says(&crate::report::result_line(r)))) { p { em { (super::margin::NOTE) } } }
        table {
            thead { tr { th { "claim" } th { "prediction" } th { "variant" } th { "measured" } th { "regime" } th { "verdict" } } }
            tbody {
                @for o in outcomes {
                    @for r in &o.results {
                        tr {
                            td { a href={ (o.claim.id) ".html" } { (o.claim.id) } }
                            td { code { (r.prediction_name) } " (" (r.kind) " " (r.metric) ")" }
                            td { (r.variant) @if r.negative_control { " (negative control)" } }
                            td { (super::margin::cell(crate::report::result_line(r))) }
                            td { (super::regime_line(r)) }
                            (verdict_td(r))
                        }
                    }
                }
            }
        }
    };
    page("dpclaims — summary", body)
}

/// A scorecard page: its Markdown rendered, verdict cells coloured, with a link back to
/// the index.
fn scorecard_html(stem: &str, md: &str, plots: &str) -> String {
    let body = html! {
        nav { a href=(INDEX) { "← all claims" } " · " a href={ (stem) ".md" } { "Markdown" } }
        // The colour key under the page's title.
        @let page = colour_verdict_cells(&markdown::render(md));
        @let cut = page.find("</h1>").map_or(0, |i| i + "</h1>".len());
        // The small multiples after the page's first table (one row per result).
        @let after = page[cut..].find("</table>").map_or(page.len(), |i| cut + i + "</table>".len());
        (PreEscaped(&page[..cut]))
        (legend())
        (PreEscaped(&page[cut..after]))
        (PreEscaped(plots))
        (PreEscaped(&page[after..]))
    };
    page(stem, body)
}

/// The CSS class of a scorecard's verdict word (the bold text that opens its cell): a
/// verdict in the words of its evidence kind (`reproduced`, `consistent`, ...).
fn word_class(word: &str) -> Option<&'static str> {
    let w = word
        .trim_start_matches("exploratory: ")
        .trim_start_matches("ablation: ");
    // One colour per outcome, the same on the index, the scorecards and the claim pages:
    // an erratum (a refuted statement) red; a proxy not reproduced or a consequence
    // inconsistent orange (never an erratum's red); inconclusive yellow; not resolved
    // teal; not testable lavender; not checkable in simulation uncoloured; consistent with
    // the paper's printed numbers white in a dashed green frame (never a holds's fill);
    // the rest grey.
    if w.starts_with("consistent with its printed numbers") {
        Some("printed")
    } else if w.starts_with("refuted") || w.starts_with("erratum") {
        Some("refuted")
    } else if w.starts_with("not reproduced") || w.starts_with("inconsistent") {
        Some("notrepro")
    } else if w.starts_with("holds") || w.starts_with("consistent") || w.starts_with("reproduced") {
        Some("holds")
    } else if w.starts_with("inconclusive") {
        Some("inconclusive")
    } else if w.starts_with("not resolved") {
        Some("notresolved")
    } else if w.starts_with("not testable") {
        Some("nottestable")
    } else if w.starts_with("not checkable") {
        Some("notcheckable")
    } else if w.starts_with("out of regime") || w.starts_with("not ") {
        Some("out_of_regime")
    } else {
        None
    }
}

/// Rendered scorecard HTML with each table cell that opens with a bold verdict word
/// (`<td><strong>holds</strong>`) given that verdict's class, as the index colours its
/// cells.
fn colour_verdict_cells(html: &str) -> String {
    const OPEN: &str = "<td><strong>";
    let mut out = String::with_capacity(html.len() + 256);
    let mut rest = html;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + OPEN.len()..];
        let word = after.split("</strong>").next().unwrap_or("");
        match word_class(word) {
            Some(class) => out.push_str(&format!("<td class=\"{class}\"><strong>")),
            None => out.push_str(OPEN),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The stems of the `scorecard-*.md` files in `dir`, sorted (none if it cannot be read).
fn scorecards_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| {
            n.strip_prefix("scorecard-")
                .and_then(|rest| rest.strip_suffix(".md"))
                .map(|rest| format!("scorecard-{rest}"))
        })
        .collect();
    v.sort();
    v
}

/// Writes `index.html`, `<id>.html` of every outcome and `scorecard-*.html` of every
/// `scorecard-*.md` in `dir` or `previous` (the output directory the set replaces), each
/// atomically, into `dir`. `plots` holds the small multiples of each scorecard written
/// by this run (page stem -> HTML); a page carried over from `previous` has none.
pub fn write_html(
    dir: &Path,
    previous: &Path,
    outcomes: &[ClaimOutcome],
    kept: &[super::kept::Kept],
    plots: &std::collections::BTreeMap<String, String>,
) -> std::io::Result<()> {
    for o in outcomes {
        write_atomic(
            &dir.join(format!("{}.html", o.claim.id)),
            claim_html(o).as_bytes(),
        )?;
    }
    // Scorecards written into this set, or carried over from the previous one (the
    // report set's staging directory is filled before the previous files are linked in).
    let mut scorecards = scorecards_in(dir);
    for s in scorecards_in(previous) {
        if !scorecards.contains(&s) {
            scorecards.push(s);
        }
    }
    scorecards.sort();
    for s in &scorecards {
        let own = dir.join(format!("{s}.md"));
        let src = if own.exists() {
            own
        } else {
            previous.join(format!("{s}.md"))
        };
        let md = crate::fsio::read_string(&src, crate::fsio::InputKind::Report)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", src.display())))?;
        write_atomic(
            &dir.join(format!("{s}.html")),
            scorecard_html(s, &md, plots.get(s).map_or("", String::as_str)).as_bytes(),
        )?;
    }
    write_atomic(
        &dir.join(INDEX),
        index_html(outcomes, kept, &scorecards).as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The background colour of a class in the style sheet.
    fn background(class: &str) -> &'static str {
        let rule = CSS
            .split('.')
            .find(|r| r.starts_with(&format!("{class}{{")))
            .unwrap_or_else(|| panic!("no rule for .{class}"));
        let start = rule.find("background:").expect("a background") + "background:".len();
        let end = rule[start..].find([';', '}']).expect("end") + start;
        &rule[start..end]
    }

    #[test]
    fn a_refuted_row_and_an_uncaught_control_have_clearly_different_colours() {
        let (refuted, missed) = (background("refuted"), background("missed"));
        assert_ne!(refuted, missed);
        // Not two shades of one hue: red against purple.
        let rgb = |c: &str| {
            let v = u32::from_str_radix(c.trim_start_matches('#'), 16).expect("hex colour");
            [(v >> 16) & 255, (v >> 8) & 255, v & 255].map(|x| x as i32)
        };
        let (r, m) = (rgb(refuted), rgb(missed));
        assert!(r[0] > r[2] + 60, "refuted is red: {refuted}");
        assert!(m[2] > m[1] + 40, "missed is purple: {missed}");
    }

    #[test]
    fn scorecard_verdict_cells_are_coloured_by_verdict() {
        let md = "| result | verdict |\n|---|---|\n| a | **holds** |\n| b | **not reproduced (on x)** |\n\
                  | c | **reproduced (on y) (not discriminating)** |\n| d | **out of regime** |\n\
                  | e | **inconclusive** |\n| f | **not run** |\n| g | plain |\n\
                  | h | **not resolved** |\n| i | **not checkable** |\n";
        let html = scorecard_html("scorecard-x", md, "");
        for (class, word) in [
            ("holds", "holds"),
            ("notrepro", "not reproduced (on x)"),
            ("holds", "reproduced (on y) (not discriminating)"),
            ("out_of_regime", "out of regime"),
            ("inconclusive", "inconclusive"),
            ("out_of_regime", "not run"),
            ("notresolved", "not resolved"),
            ("notcheckable", "not checkable"),
        ] {
            assert!(
                html.contains(&format!(r#"<td class="{class}"><strong>{word}</strong>"#)),
                "{word}: {html}"
            );
        }
        assert!(html.contains("<td>plain</td>"));
        assert!(html.contains(r#"class="legend""#));
    }

    #[test]
    fn scorecards_are_listed_before_the_claims_on_the_index() {
        let html = index_html(&[], &[], &["scorecard-a".to_string()]);
        let cards = html
            .find("<h2>Scorecards</h2>")
            .expect("scorecards section");
        let claims = html.find("<h2>Claims</h2>").expect("claims section");
        assert!(cards < claims);
    }
}
