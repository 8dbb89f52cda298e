//! `reports/<id>.md`: a claim's page — statement, hypotheses, every verdict with its
//! registered prediction, source, measurement and regime check, findings, sweep tables,
//! fits, and what was measured.
use super::{fmt_ci, fmt_num, fmt_opt, mean_sd, number};
use crate::judge::{ClaimOutcome, ControlStatus, PointRecord, PredictionResult, Tally};
use crate::spec::{InequalityOver, Predicted, Prediction, PredictionKind};
use std::fmt::Write as _;

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
        format!(
            "slope of {}{div} vs {} {op} {rhs} + {} ({})",
            p.metric,
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
        } => {
            format!(
                "mean {} {} {rhs} at every point (simultaneous {} t intervals)",
                p.metric,
                op.symbol(),
                fmt_num(*confidence)
            )
        }
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
                .map(|(c, ci)| format!("implied constant {} (interval {})", fmt_num(c), fmt_ci(Some(ci))))
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

/// For a claim with a sequential sweep: what it drew and the replicates a point each
/// row was judged on (its stopping look).
fn stopping_looks(o: &ClaimOutcome) -> String {
    if !has_sequential_sweep(o) {
        return String::new();
    }
    let rows: Vec<String> = o
        .results
        .iter()
        .filter(|r| r.replicates > 0)
        .map(|r| format!("`{}` / `{}` {}", r.prediction_name, r.variant, r.replicates))
        .collect();
    format!(
        "* {}. Replicates a point each row was judged on (its first deciding look): {}.\n",
        o.spent().words(),
        rows.join(", ")
    )
}

/// A text the judge wrote (a violation, a finding, a problem), its long decimals
/// rounded to 6 significant digits ([`super::number::in_text`]): their last digits are
/// the machine's.
pub(super) fn judged(s: &str) -> std::borrow::Cow<'_, str> {
    super::number::in_text(s)
}

/// `reports/<id>.md`.
pub fn claim_markdown(o: &ClaimOutcome) -> String {
    let c = &o.claim;
    let mut s = String::new();
    let _ = writeln!(s, "# {} — {}\n", c.id, c.title);
    let _ = writeln!(
        s,
        "*Generated by `dpclaims run` (profile `{}`, seed {}). Do not edit.*\n",
        o.profile, o.seed
    );
    let _ = writeln!(s, "**Source.** {}\n", c.source);
    let _ = writeln!(s, "**Statement.** {}\n", prose(&c.statement));
    let _ = writeln!(
        s,
        "**System.** `{}` ({}); model `{}`; adjacency `{}`.\n",
        c.system.name(),
        c.system.description(),
        c.model,
        c.adjacency
    );
    let _ = writeln!(s, "**What each prediction is evidence of** (only a statement is a verdict about the paper):\n");
    for p in &c.predictions {
        let mut line = format!("* `{}` — {}", p.name, p.evidence);
        if let Some(q) = &p.quote {
            line.push_str(&format!(": {}", quote_md(q)));
        }
        if !p.proxy.is_empty() {
            line.push_str(&format!("; proxy: {}", p.proxy));
        }
        if !p.under.is_empty() {
            line.push_str(&format!(
                "; under the paper's hypotheses {}",
                p.under
                    .iter()
                    .map(|u| format!("`{u}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let _ = writeln!(s, "{}", cell(&line));
    }
    let _ = writeln!(s);
    for v in c.variants.iter().filter(|v| !v.deviations.is_empty()) {
        let _ = writeln!(
            s,
            "**Variant `{}` deviates from the printed algorithm{}:**\n",
            v.name,
            if v.is_ablation() {
                " (an ablation: not counted for the paper)"
            } else {
                " (declared typo fixes only)"
            }
        );
        for d in &v.deviations {
            let _ = writeln!(
                s,
                "* {}{} — changes {}",
                d.change,
                if d.typo_fix { " (typo fix)" } else { "" },
                quote_md(&d.sentence)
            );
        }
        let _ = writeln!(s);
    }
    if !c.assumptions.is_empty() {
        let _ = writeln!(s, "**Hypotheses** (a point outside them is not judged):\n");
        for a in &c.assumptions {
            let _ = writeln!(
                s,
                "* `{}`{}",
                a.text,
                if a.source.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", a.source)
                }
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Verdicts\n");
    if o.results
        .iter()
        .any(|r| super::margin::says(&result_line(r)))
    {
        let _ = writeln!(s, "*{}*\n", super::margin::NOTE);
    }
    let _ = writeln!(
        s,
        "| prediction | source | registered prediction | variant | measured | regime | verdict |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for r in &o.results {
        let p = &c.predictions[r.prediction];
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {}{} | {} | {} | {} |",
            r.prediction_name,
            cell(&p.source),
            cell(&prediction_text(p, r)),
            r.variant,
            if r.negative_control {
                " (negative control)"
            } else {
                ""
            },
            super::margin::cell(result_line(r)),
            regime_line(r),
            verdict_cell(r)
        );
    }
    let problems = o.problems();
    if !problems.is_empty() {
        let _ = writeln!(s, "\n**This claim fails the run:**\n");
        for p in &problems {
            let _ = writeln!(s, "* {}", judged(p));
        }
    }
    let errata: Vec<&PredictionResult> = o.results.iter().filter(|r| r.erratum.is_some()).collect();
    if !errata.is_empty() {
        let _ = writeln!(s, "\n## Errata claimed\n");
        for r in errata {
            let v = c.variant(&r.variant);
            if let (Some(e), Some(st)) =
                (v.and_then(|v| v.errata.get(&r.prediction_name)), &r.erratum)
            {
                let _ =
                    writeln!(
                    s,
                    "* `{}` / `{}` — **{}**. The paper: {}. Counterexample: {}{} Confirmation: {}",
                    r.prediction_name,
                    r.variant,
                    if st.confirmed { "confirmed" } else { "UNCONFIRMED" },
                    quote_md(&e.sentence),
                    super::sentence(&e.counterexample),
                    if e.reading.is_empty() {
                        String::new()
                    } else {
                        format!(" Reading needed: {}", super::sentence(&e.reading))
                    },
                    super::sentence(&judged(&st.how))
                );
            }
        }
    }
    let findings: Vec<&PredictionResult> =
        o.results.iter().filter(|r| r.finding.is_some()).collect();
    if !findings.is_empty() {
        let _ = writeln!(s, "\n## Findings\n");
        for r in findings {
            let _ = writeln!(
                s,
                "* `{}` / `{}` ({}): {}",
                r.prediction_name,
                r.variant,
                r.word,
                judged(r.finding.as_deref().unwrap_or("").trim())
            );
        }
    }
    let _ = writeln!(s, "\n## What each row could detect\n");
    for r in o.results.iter().filter(|r| !r.negative_control) {
        let _ = writeln!(
            s,
            "* `{}` / `{}` ({}, {}): {}",
            r.prediction_name,
            r.variant,
            r.evidence,
            r.word,
            judged(&r.power)
        );
    }
    let _ = writeln!(s, "\n## Variants\n");
    for v in &c.variants {
        let _ = writeln!(
            s,
            "* `{}`{}: {}",
            v.name,
            if v.negative_control {
                " — negative control"
            } else {
                ""
            },
            if v.description.is_empty() {
                "(base settings)"
            } else {
                v.description.trim()
            }
        );
    }
    let _ = writeln!(s, "\n## Parameters\n");
    for (k, e) in &c.params {
        let _ = writeln!(s, "* `{k} = {e}`");
    }
    for sw in &c.sweeps {
        let prof = sw.profile(o.profile);
        let _ = writeln!(
            s,
            "* sweep `{}` ({}): axes {}; coupled {}; {} replicates",
            sw.name,
            o.profile,
            prof.axes
                .iter()
                .map(|(k, v)| format!(
                    "`{k}` ∈ {{{}}}",
                    v.iter().map(|x| fmt_num(*x)).collect::<Vec<_>>().join(", ")
                ))
                .collect::<Vec<_>>()
                .join(", "),
            if prof.coupled.is_empty() {
                "none".to_string()
            } else {
                prof.coupled
                    .iter()
                    .map(|(k, e)| format!("`{k} = {e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            prof.replicates
        );
    }
    s.push_str(&stopping_looks(o));
    let _ = writeln!(s, "\n## Sweep tables (mean ± sd over replicates)\n");
    let mut groups: Vec<(String, String)> = o
        .points
        .iter()
        .map(|p| (p.sweep.clone(), p.variant.clone()))
        .collect();
    groups.dedup();
    for (sweep, variant) in groups {
        let recs: Vec<&PointRecord> = o
            .points
            .iter()
            .filter(|p| p.sweep == sweep && p.variant == variant)
            .collect();
        let Some(first) = recs.first() else { continue };
        let prof = c.sweep(&sweep).profile(o.profile);
        let mut cols: Vec<String> = prof.axes.iter().map(|(k, _)| k.clone()).collect();
        cols.extend(prof.coupled.keys().cloned());
        let metrics: Vec<String> = first.metrics.keys().cloned().collect();
        let _ = writeln!(s, "### sweep `{sweep}`, variant `{variant}`\n");
        let _ = writeln!(s, "| {} | {} |", cols.join(" | "), metrics.join(" | "));
        let _ = writeln!(s, "|{}|", vec!["---"; cols.len() + metrics.len()].join("|"));
        for r in recs {
            let a: Vec<String> = cols.iter().map(|k| fmt_num(r.vars[k])).collect();
            let b: Vec<String> = metrics
                .iter()
                .map(|m| {
                    // From the values as a report keeps them (6 significant digits, round-off
                    // below 1e-12 at the floor), and rounded again: a quantity that is 0 or 1 up
                    // to round-off reads the same whichever BLAS kernels computed it.
                    let kept: Vec<f64> = r.metrics[m].iter().map(|v| number::round(*v)).collect();
                    let (mu, sd) = mean_sd(&kept);
                    let (mu, sd) = (number::round(mu), number::round(sd));
                    if kept.len() > 1 {
                        format!("{} ± {}", fmt_num(mu), fmt_num(sd))
                    } else {
                        fmt_num(mu)
                    }
                })
                .collect();
            let _ = writeln!(s, "| {} | {} |", a.join(" | "), b.join(" | "));
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Fits and checks\n");
    for r in &o.results {
        let _ = writeln!(
            s,
            "* **{}** `{}` ({}) / `{}`: {} → **{}**. Regime: {}.",
            r.kind,
            r.prediction_name,
            r.metric,
            r.variant,
            super::margin::cell(result_line(r)),
            r.verdict,
            regime_line(r)
        );
        if let (Some(se), Some(r2)) = (r.detail.stderr, r.detail.r2) {
            let _ = writeln!(
                s,
                "  Standard error {}, R² {}, bootstrap 95% CI {} (reported, not judged).",
                fmt_num(se),
                fmt_num(r2),
                fmt_ci(r.detail.bootstrap_ci)
            );
        }
        if let Some(
            PredictionKind::Exponent(f)
            | PredictionKind::RateAtMost(f)
            | PredictionKind::Bound { fit: f, .. },
        ) = c.predictions.get(r.prediction).map(|p| &p.kind)
        {
            if let Some(e) = &f.divide_by {
                let _ = writeln!(s, "  The metric is divided by `{e}` before fitting.");
            }
            if let Some(e) = f.predicted.expr() {
                let _ = writeln!(s, "  Predicted exponent = least-squares log-log slope of `{e}` over the judged sweep points.");
            }
            let _ = writeln!(
                s,
                "  Tolerance {}: {}.",
                fmt_num(f.tolerance),
                f.tolerance_reason
            );
        }
        for v in r.detail.violations.iter().take(200) {
            let _ = writeln!(s, "  - {}", judged(v));
        }
        if r.detail.violations.len() > 200 {
            let _ = writeln!(s, "  - … and {} more", r.detail.violations.len() - 200);
        }
        if !r.note.is_empty() {
            let _ = writeln!(s, "  Note: {}", r.note.trim());
        }
    }
    let units: usize = o
        .points
        .iter()
        .map(|p| p.metrics.values().next().map_or(0, Vec::len))
        .sum();
    let _ = writeln!(s, "\n## What was measured\n");
    let _ = writeln!(
        s,
        "At the `{}` profile with master seed {}, {} simulation units ({} sweep points across {} variants) were run; every number above comes from them (every replicate's value in `{}.csv`, to 6 significant digits, below 1e-12 written 1e-12; plot in `{}.svg`). {}.",
        o.profile,
        o.seed,
        units,
        o.points.len(),
        c.variants.len(),
        c.id,
        c.id,
        Tally::of(std::slice::from_ref(o)).line()
    );
    if !c.discussion.is_empty() {
        let _ = writeln!(
            s,
            "\n{}",
            super::internal_refs::without_issue_refs(&c.discussion)
        );
    }
    s
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
