//! The part of `reports/<id>.md` a referee reads first: the paper's sentence (each
//! distinct quote once), what was run (system, sweep ranges, the path, replicates), the
//! verdict table with each row's number and the control it caught, the controls, what
//! fails the run, the errata and the findings; then the details ([`super::details`]).
use super::{cell, judged, prose, quote_md, result_line, verdict_cell};
use crate::judge::{ClaimOutcome, ControlStatus, PredictionResult};
use crate::report::margin;
use crate::report::scorecard::keynum::sig;
use crate::spec::{Claim, Quote};
use std::fmt::Write as _;

/// The heading of the verdict table (the HTML page draws the table itself, coloured).
pub(crate) const VERDICTS: &str = "## Verdicts";
/// The heading of the negative controls' table (drawn by the HTML page too).
pub(crate) const CONTROLS: &str = "## Negative controls";
/// The first section of the details (the HTML page puts its plot before it).
pub(crate) const DETAILS: &str = "## The claim in full";

/// Words of a statement at the top of a page without a quote (in full in the details).
const MAX_HEAD_STATEMENT: usize = 80;

/// Whether the head shows the whole statement (a page without a quote, a short statement).
pub(super) fn statement_in_head(c: &Claim) -> bool {
    distinct_quotes(c).is_empty() && c.statement.split_whitespace().count() <= MAX_HEAD_STATEMENT
}

fn same_quote(a: &Quote, b: &Quote) -> bool {
    a.text.trim() == b.text.trim() && a.location.trim() == b.location.trim()
}

/// The distinct quotes of the claim's predictions, in order of first use.
pub(super) fn distinct_quotes(c: &Claim) -> Vec<&Quote> {
    let mut out: Vec<&Quote> = vec![];
    for q in c.predictions.iter().filter_map(|p| p.quote.as_ref()) {
        if !out.iter().any(|o| same_quote(o, q)) {
            out.push(q);
        }
    }
    out
}

/// How the details name a prediction's quote: `Q2`, or "the paper's sentence" when the
/// page has one quote.
pub(super) fn quote_ref(c: &Claim, q: &Quote) -> String {
    let qs = distinct_quotes(c);
    match qs.iter().position(|o| same_quote(o, q)) {
        Some(_) if qs.len() == 1 => "the quote at the top".into(),
        Some(i) => format!("Q{}", i + 1),
        None => quote_md(q),
    }
}

/// An axis's values: all of them when few, else the range and the count.
fn values(v: &[f64]) -> String {
    if v.len() <= 4 {
        let all: Vec<String> = v.iter().map(|x| sig(*x)).collect();
        return format!("{{{}}}", all.join(", "));
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{}–{} ({} values)", sig(lo), sig(hi), v.len())
}

/// One sentence: the system, each sweep's axes (ranges), its path (the coupled
/// parameters) and replicates, the main variants and the controls.
fn what_was_run(o: &ClaimOutcome) -> String {
    let c = &o.claim;
    let sweeps: Vec<String> = c
        .sweeps
        .iter()
        .map(|sw| {
            let prof = sw.profile(o.profile);
            let axes: Vec<String> = prof
                .axes
                .iter()
                .map(|(k, v)| format!("`{k}` {}", values(v)))
                .collect();
            let path = if prof.coupled.is_empty() {
                String::new()
            } else {
                let p: Vec<String> = prof
                    .coupled
                    .iter()
                    .map(|(k, e)| format!("`{k} = {e}`"))
                    .collect();
                format!(" along {}", p.join(", "))
            };
            format!(
                "sweep `{}`: {}{path}; replicates a point: {}",
                sw.name,
                if axes.is_empty() {
                    "one point".to_string()
                } else {
                    axes.join(" × ")
                },
                prof.replicates
            )
        })
        .collect();
    let names = |control: bool| -> Vec<String> {
        c.variants
            .iter()
            .filter(|v| v.negative_control == control)
            .map(|v| format!("`{}`", v.name))
            .collect()
    };
    let controls = names(true).len();
    format!(
        "**What was run.** System `{}`; {}. Variants {}{}.",
        c.system.name(),
        sweeps.join("; "),
        names(false).join(", "),
        match controls {
            0 => String::new(),
            1 => "; 1 negative control".to_string(),
            n => format!("; {n} negative controls"),
        }
    )
}

/// Points judged of a row: inside the hypotheses / all points of its sweep.
pub(crate) fn points_cell(r: &PredictionResult) -> String {
    if r.regime.total == 0 {
        "—".into()
    } else {
        format!("{}/{}", r.regime.inside, r.regime.total)
    }
}

/// The negative controls a main row's prediction caught (or did not).
pub(crate) fn control_cell(o: &ClaimOutcome, r: &PredictionResult) -> String {
    let cs: Vec<String> = o
        .results
        .iter()
        .filter(|x| x.negative_control && x.prediction == r.prediction)
        .map(|x| match &x.control {
            Some(ControlStatus::Caught) => format!("`{}` caught", x.variant),
            Some(ControlStatus::NotCaught) => format!("`{}` ⚠ NOT caught", x.variant),
            Some(ControlStatus::IdenticalTo(_)) => {
                format!("`{}` ⚠ cannot be caught", x.variant)
            }
            None => format!("`{}`", x.variant),
        })
        .collect();
    if cs.is_empty() {
        "none".into()
    } else {
        cs.join(", ")
    }
}

/// The head of the page: title, the paper's sentence(s), what was run.
fn head(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
    let _ = writeln!(s, "# {} — {}\n", c.id, c.title);
    let _ = writeln!(
        s,
        "*Generated by `dpclaims run` (profile `{}`, seed {}). Do not edit.*\n",
        o.profile, o.seed
    );
    let quotes = distinct_quotes(c);
    match quotes.len() {
        0 => {
            // The statement in full opens the details; a long one is cut here.
            let w: Vec<&str> = c.statement.split_whitespace().collect();
            let text = if w.len() <= MAX_HEAD_STATEMENT {
                w.join(" ")
            } else {
                format!(
                    "{} … (in full under \"The claim in full\")",
                    w[..MAX_HEAD_STATEMENT].join(" ")
                )
            };
            let _ = writeln!(s, "**The claim.** {}\n", prose(&text));
        }
        1 => {
            let _ = writeln!(s, "**The paper.**\n\n> {}\n", quote_md(quotes[0]));
        }
        _ => {
            let _ = writeln!(s, "**The paper.**\n");
            for (i, q) in quotes.iter().enumerate() {
                let _ = writeln!(s, "> **Q{}.** {}\n", i + 1, quote_md(q));
            }
        }
    }
    let _ = writeln!(s, "{}\n", what_was_run(o));
}

/// Findings with the same text, written once with every row they concern.
fn findings(o: &ClaimOutcome, s: &mut String) {
    let mut groups: Vec<(Vec<String>, String)> = vec![];
    for r in o.results.iter().filter(|r| r.finding.is_some()) {
        let text = judged(r.finding.as_deref().unwrap_or("").trim()).into_owned();
        let row = format!("`{}` / `{}`", r.prediction_name, r.variant);
        match groups.iter_mut().find(|(_, t)| *t == text) {
            Some((rows, _)) => rows.push(row),
            None => groups.push((vec![row], text)),
        }
    }
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n## Findings\n");
    for (rows, text) in groups {
        let _ = writeln!(s, "* {}: {}", rows.join("; "), text);
    }
}

/// The errata this claim claims, with the paper's sentence and the counterexample.
fn errata(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
    let errata: Vec<&PredictionResult> = o.results.iter().filter(|r| r.erratum.is_some()).collect();
    if errata.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n## Errata claimed\n");
    for r in errata {
        let v = c.variant(&r.variant);
        if let (Some(e), Some(st)) = (v.and_then(|v| v.errata.get(&r.prediction_name)), &r.erratum)
        {
            let _ = writeln!(
                s,
                "* `{}` / `{}` — **{}**. The paper: {}. Counterexample: {}{} Confirmation: {}",
                r.prediction_name,
                r.variant,
                if st.confirmed {
                    "confirmed"
                } else {
                    "UNCONFIRMED"
                },
                quote_md(&e.sentence),
                crate::report::sentence(&e.counterexample),
                if e.reading.is_empty() {
                    String::new()
                } else {
                    format!(" Reading needed: {}", crate::report::sentence(&e.reading))
                },
                crate::report::sentence(&judged(&st.how))
            );
        }
    }
}

/// `reports/<id>.md`.
pub fn claim_markdown(o: &ClaimOutcome) -> String {
    let mut s = String::new();
    head(o, &mut s);
    let _ = writeln!(s, "{VERDICTS}\n");
    if o.results.iter().any(|r| margin::says(&result_line(r))) {
        let _ = writeln!(s, "*{}*\n", margin::NOTE);
    }
    let _ = writeln!(
        s,
        "| prediction | variant | verdict | measured | points judged | negative control |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for r in o.results.iter().filter(|r| !r.negative_control) {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} |",
            r.prediction_name,
            r.variant,
            verdict_cell(r),
            cell(&margin::cell(result_line(r))),
            points_cell(r),
            control_cell(o, r)
        );
    }
    if o.results.iter().any(|r| r.negative_control) {
        let _ = writeln!(
            s,
            "\n{CONTROLS}\n\nEach control breaks the statement on purpose (how: Variants, \
             below); a prediction that holds counts only if it catches its control.\n"
        );
        let _ = writeln!(s, "| prediction | control | measured | verdict |");
        let _ = writeln!(s, "|---|---|---|---|");
        for r in o.results.iter().filter(|r| r.negative_control) {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} |",
                r.prediction_name,
                r.variant,
                cell(&margin::cell(result_line(r))),
                verdict_cell(r)
            );
        }
    }
    let problems = o.problems();
    if !problems.is_empty() {
        let _ = writeln!(s, "\n**This claim fails the run:**\n");
        for p in &problems {
            let _ = writeln!(s, "* {}", judged(p));
        }
    }
    errata(o, &mut s);
    findings(o, &mut s);
    super::details::write(o, &mut s);
    s
}
