//! The quotes of a claim page: each distinct quote of its predictions is written once at
//! the top ([`super::layout`]) and named by the details ([`super::details`]).
use super::quote_md;
use crate::spec::{Claim, Quote};

/// The first section of the details (the HTML page puts its plot before it).
pub(crate) const DETAILS: &str = "## The claim in full";

/// Words of a statement at the top of a page without a quote (in full in the details).
pub(super) const MAX_HEAD_STATEMENT: usize = 80;

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
