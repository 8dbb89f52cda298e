//! `reports/<id>.md`: a claim's page in the order a referee reads it ([`layout`]): the
//! paper's sentence, what was run, the verdicts with their numbers and the controls they
//! caught; then the details ([`details`]): the claim in full, each prediction as
//! registered, the hypotheses per point, power, variants, parameters, sweep tables, fits
//! and what was measured. This file holds the texts of a row both parts share.
mod details;
mod layout;
mod quotes;

pub use layout::claim_markdown;
pub(crate) use layout::{
    amendments_table, changes_since, control_cell, points_cell, CONTROLS, VERDICTS,
};
pub(crate) use quotes::DETAILS;

use super::{fmt_ci, fmt_num, fmt_opt};
use crate::judge::{ClaimOutcome, ControlStatus, PredictionResult};
use crate::spec::{InequalityOver, Predicted, Prediction, PredictionKind};

/// The prediction as registered: what the theory says, before measuring.
pub fn prediction_text(p: &Prediction, r: &PredictionResult) -> String {
    let fitted = |f: &crate::spec::FitSpec, op: &str| {
        let div = f
            .divide_by
            .as_ref()
            .map(|e| format!(" / ({e})"))
            .unwrap_or_default();
        let rhs = match &f.predicted {
            Predicted::Value(v) => fmt_num(*v),
            Predicted::ValueOf(e) => {
                format!("local slope of exact `{e}` (= {})", fmt_opt(r.predicted))
            }
        };
        // A fitted contrast (`minus:`): the slope of the mean paired difference.
        let of = match &p.minus {
            Some(m) => format!(
                "the mean paired difference {metric}(variant) - {metric}(`{m}`) (same seeds, replicate by replicate)",
                metric = p.metric
            ),
            None => p.metric.clone(),
        };
        format!(
            "slope of {of}{div} vs {} {op} {rhs} + {} ({})",
            f.x,
            fmt_num(f.tolerance),
            f.tolerance_reason
        )
    };
    match &p.kind {
        PredictionKind::Exponent(f) => fitted(f, "=").replacen(" + ", " ± ", 1),
        PredictionKind::RateAtMost(f) => fitted(f, "<="),
        PredictionKind::Bound {
            fit,
            upper,
            constant,
        } => {
            let bound = fit
                .divide_by
                .as_ref()
                .map(|e| e.to_string())
                .unwrap_or_default();
            let judged = match constant {
                Some(c) => format!(
                    "; the implied constant is at {} {} ({})",
                    if *upper { "most" } else { "least" },
                    fmt_num(c.value),
                    c.source
                ),
                None => "; the implied constant is reported".into(),
            };
            format!(
                "{m} = {o}({bound}): {m} / ({bound}) does not {g} along {x} faster than {x}^{t} ({why}){judged}",
                m = p.metric,
                o = if *upper { "O" } else { "Omega" },
                g = if *upper { "grow" } else { "shrink" },
                x = fit.x,
                t = if *upper { fmt_num(fit.tolerance) } else { fmt_num(-fit.tolerance) },
                why = fit.tolerance_reason,
            )
        }
        PredictionKind::Event { alpha, .. } => {
            format!("P({} = 1) >= {}", p.metric, fmt_num(1.0 - alpha))
        }
        PredictionKind::Inequality {
            op,
            rhs,
            over: InequalityOver::Runs,
        } => {
            format!(
                "{} {} {rhs} at every point and replicate",
                p.metric,
                op.symbol()
            )
        }
        PredictionKind::Inequality {
            op,
            rhs,
            over: InequalityOver::Means { confidence },
        } => match &p.minus {
            Some(m) => format!(
                "mean paired difference {metric}(variant) - {metric}(`{m}`) {} {rhs} at every point (same seeds, replicate by replicate; simultaneous {} t intervals)",
                op.symbol(),
                fmt_num(*confidence),
                metric = p.metric,
            ),
            None => format!(
                "mean {} {} {rhs} at every point (simultaneous {} t intervals)",
                p.metric,
                op.symbol(),
                fmt_num(*confidence)
            ),
        },
    }
}

/// Spec prose (a statement, the paper's words) as Markdown text: the characters Markdown
/// would read as markup (`*`, `_`, `[`, `]`, `<`, `>`, `~`, `\`) backslash-escaped outside
/// backtick code spans, so `theta* ... f_*(x)` or `sigma_a * sqrt(n)` shows as written
/// instead of turning into emphasis, and `[a > b]` into a link.
pub(crate) fn prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for (i, part) in s.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        // Odd parts are inside a code span, unless the last backtick has no partner.
        let in_code = i % 2 == 1 && s.matches('`').count() % 2 == 0;
        if in_code {
            out.push_str(part);
            continue;
        }
        for c in part.chars() {
            if matches!(c, '*' | '_' | '[' | ']' | '<' | '>' | '~' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// The paper's words as Markdown: `"text" (where)`, both escaped by [`prose`].
pub(crate) fn quote_md(q: &crate::spec::Quote) -> String {
    format!(
        "\"{}\" ({})",
        prose(q.text.trim()),
        prose(q.location.trim())
    )
}

/// The commit column of a ledger entry in words: `accept` records the parent commit of a
/// change it records before that change is committed (`uncommitted (after X)`, kept so in
/// the ledger), which the page says as "committed after X".
pub(crate) fn commit_words(c: &str) -> String {
    match c
        .strip_prefix("uncommitted (after ")
        .and_then(|r| r.strip_suffix(')'))
    {
        Some(parent) => format!("committed after {parent}"),
        None if c == "uncommitted" => "recorded outside a git history".into(),
        None => c.to_string(),
    }
}

/// A Markdown table cell: `|` escaped, newlines folded.
pub(super) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Plain words for a verdict of a main variant or a control.
pub(super) fn verdict_cell(r: &PredictionResult) -> String {
    let mut v = format!("**{}**", r.word);
    match &r.control {
        Some(ControlStatus::Caught) => v.push_str(" — caught"),
        Some(ControlStatus::NotCaught) => v.push_str(" — ⚠ NOT caught"),
        Some(ControlStatus::IdenticalTo(m)) => {
            v.push_str(&format!(" — ⚠ identical to `{m}`, cannot be caught"))
        }
        None => {}
    }
    if r.finding.is_some() && r.verdict == crate::fit::Verdict::Refuted && r.erratum.is_none() {
        v.push_str(" (finding)");
    }
    if r.problem.is_some() && r.control.is_none() {
        v.push_str(" ⚠");
    }
    v
}

/// The one-line description of a prediction result (used in Markdown and SUMMARY).
pub fn result_line(r: &PredictionResult) -> String {
    // The judge's texts (a trend, a regime's worst case) carry fixed decimals: rounded.
    super::number::in_text(&result_line_raw(r)).into_owned()
}

/// The regime cell of a result: which points were inside the hypotheses (the judge's
/// words, long decimals rounded by [`judged`]).
pub fn regime_line(r: &PredictionResult) -> String {
    judged(&r.regime.summary()).into_owned()
}

fn result_line_raw(r: &PredictionResult) -> String {
    match r.kind {
        "bound" => {
            let c = r
                .detail
                .implied_constant
                .map(|(c, ci)| {
                    // The interval the judge decided on (verdicts.json carries the same).
                    format!("implied constant {} (interval {})", fmt_num(c), fmt_ci(Some(ci)))
                })
                .unwrap_or_else(|| "implied constant —".into());
            format!(
                "{c}; slope of the ratio vs {} = {} (CI {}), allowed {} {}{}",
                r.x.as_deref().unwrap_or("?"),
                fmt_opt(r.estimate),
                fmt_ci(r.ci),
                "<=",
                fmt_opt(r.tolerance),
                r.trend.as_ref().map(|t| format!("; {t}")).unwrap_or_default()
            )
        }
        "exponent" | "rate_at_most" => format!(
            "slope vs {} = {} (CI {}), predicted {} {} {}",
            r.x.as_deref().unwrap_or("?"),
            fmt_opt(r.estimate),
            fmt_ci(r.ci),
            if r.kind == "exponent" { "=" } else { "<=" },
            fmt_opt(r.predicted),
            r.tolerance
                .map(|t| format!(
                    "{} {}",
                    if r.kind == "exponent" { "±" } else { "+" },
                    fmt_num(t)
                ))
                .unwrap_or_default()
        ),
        "event" => format!(
            "frequency {} ({}/{}), CP interval {}, required >= {}",
            fmt_opt(r.estimate),
            r.detail.successes.unwrap_or(0),
            r.detail.trials.unwrap_or(0),
            fmt_ci(r.ci),
            fmt_opt(r.predicted)
        ),
        _ if r.ci.is_some() => format!(
            "{}/{} points' intervals satisfy it; closest point's mean margin {} (interval {}; > 0 violates)",
            r.detail.successes.unwrap_or(0),
            r.detail.trials.unwrap_or(0),
            fmt_opt(r.estimate),
            fmt_ci(r.ci)
        ),
        _ => format!(
            "{}/{} points satisfy it; worst margin {}",
            r.detail.successes.unwrap_or(0),
            r.detail.trials.unwrap_or(0),
            fmt_opt(r.estimate)
        ),
    }
}

/// Whether a sweep of the claim draws its replicates look by look at the run's profile.
pub(super) fn has_sequential_sweep(o: &ClaimOutcome) -> bool {
    o.claim
        .sweeps
        .iter()
        .any(|sw| sw.profile(o.profile).replicates.looks().len() > 1)
}

/// A text the judge wrote (a violation, a finding, a problem), its long decimals
/// rounded to 6 significant digits ([`super::number::in_text`]): their last digits are
/// the machine's.
pub(super) fn judged(s: &str) -> std::borrow::Cow<'_, str> {
    super::number::in_text(s)
}

#[cfg(test)]
mod prose_tests {
    use super::prose;

    #[test]
    fn math_in_prose_is_not_read_as_markdown() {
        assert_eq!(prose("sigma_a * sqrt(n)"), r"sigma\_a \* sqrt(n)");
        assert_eq!(
            prose("x_i^2 and [g_i^2 > g_j^2]"),
            r"x\_i^2 and \[g\_i^2 \> g\_j^2\]"
        );
        // Code spans are kept as written; an unpaired backtick is text.
        assert_eq!(prose("run `a_b*c` then d_e"), r"run `a_b*c` then d\_e");
        assert_eq!(prose("a ` b_c"), r"a ` b\_c");
        for md in [
            "theta* and f_*(x) = sigma_a * sqrt(n)",
            "E_{x~P}[(phi(x)^T Theta)^2]",
        ] {
            let html = crate::report::html::render_markdown(&prose(md));
            assert!(
                !html.contains("<em>") && !html.contains("<strong>") && !html.contains("<del>"),
                "{html}"
            );
            assert!(
                html.contains("f_*(x)") || html.contains("E_{x~P}"),
                "{html}"
            );
        }
    }
}
