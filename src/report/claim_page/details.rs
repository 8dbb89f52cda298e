//! The details of `reports/<id>.md`, after the verdicts ([`super::layout`]): the claim in
//! full, each prediction as registered (its quote named, not repeated), the hypotheses
//! and the points inside them per row, what each row could detect, the variants, the
//! parameters, the sweep tables, the fits and what was measured. A text shared by
//! several rows (a regime, a power line, a tolerance) is written once with the rows it
//! concerns.
use super::quotes::{quote_ref, statement_in_head, DETAILS};
use super::{has_sequential_sweep, judged, prediction_text, prose, quote_md, regime_line};
use crate::judge::{ClaimOutcome, PointRecord, Tally};
use crate::report::{fmt_ci, fmt_num, internal_refs, mean_sd, number};
use crate::spec::Prediction;
use std::fmt::Write as _;

/// `(rows, text)` pairs with the same text merged, in order of first appearance.
fn grouped(items: impl IntoIterator<Item = (String, String)>) -> Vec<(Vec<String>, String)> {
    let mut out: Vec<(Vec<String>, String)> = vec![];
    for (row, text) in items {
        match out.iter_mut().find(|(_, t)| *t == text) {
            Some((rows, _)) => rows.push(row),
            None => out.push((vec![row], text)),
        }
    }
    out
}

/// `text`, or "as `owner`" when an earlier prediction (`seen`) has the same text.
fn once(seen: &mut Vec<(String, String)>, owner: &str, text: &str) -> String {
    match seen.iter().find(|(_, t)| t == text) {
        Some((first, _)) => format!("as `{first}`"),
        None => {
            seen.push((owner.to_string(), text.to_string()));
            text.to_string()
        }
    }
}

fn claim_in_full(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
    let _ = writeln!(s, "\n{DETAILS}\n");
    let _ = writeln!(s, "**Source.** {}\n", c.source);
    if !statement_in_head(c) {
        let _ = writeln!(s, "**Statement.** {}\n", prose(&c.statement));
    }
    let _ = writeln!(
        s,
        "**System.** `{}` ({}); model `{}`; adjacency `{}`.",
        c.system.name(),
        c.system.description(),
        c.model,
        c.adjacency
    );
}

/// Each prediction once: its evidence kind, the prediction as registered, its quote (by
/// reference), source, proxy, hypotheses, fit and note. A text every prediction shares
/// is written once above the list; one shared by some is written at its first
/// prediction and named by it at the others.
fn predictions(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
    let _ = writeln!(
        s,
        "\n## Predictions as registered\n\nOnly a statement is a verdict about the paper.\n"
    );
    type Field = (&'static str, fn(&Prediction) -> String);
    let fields: [Field; 3] = [
        ("Source", |p| p.source.trim().to_string()),
        ("Proxy", |p| p.proxy.trim().to_string()),
        ("Under the paper's hypotheses", |p| {
            let u: Vec<String> = p.under.iter().map(|u| format!("`{u}`")).collect();
            u.join(", ")
        }),
    ];
    // Each value of these fields once, above the list, with the predictions it concerns.
    for (name, get) in &fields {
        let rows = c
            .predictions
            .iter()
            .map(|p| (format!("`{}`", p.name), get(p).replace('\n', " ")))
            .filter(|(_, v)| !v.is_empty());
        let groups = grouped(rows);
        let all = groups.len() == 1 && groups[0].0.len() == c.predictions.len();
        for (rows, v) in groups {
            if all {
                let _ = writeln!(s, "* {name}, every prediction: {v}.");
            } else {
                let _ = writeln!(s, "* {name}, {}: {v}.", rows.join(", "));
            }
        }
    }
    let mut seen: [Vec<(String, String)>; 2] = Default::default();
    for (i, p) in c.predictions.iter().enumerate() {
        let mut line = format!("* `{}` — {}", p.name, p.evidence);
        if let Some(r) = o.results.iter().find(|r| r.prediction == i) {
            let mut text = prediction_text(p, r);
            // A tolerance's reason, shared by several predictions: written once.
            if let Some(f) = p.kind.fit_spec() {
                let why = f.tolerance_reason.trim();
                if !why.is_empty() {
                    let shown = once(&mut seen[0], &p.name, why);
                    text = text.replacen(&format!("({why})"), &format!("({shown})"), 1);
                }
            }
            line.push_str(&format!(": {text}"));
        }
        line.push('.');
        if let Some(q) = &p.quote {
            // One quote shared by more than two predictions: said once, on the first
            // (the same sentence under every row would read as filler).
            let sharing = c.predictions.iter().filter(|o| o.quote.is_some()).count();
            let single = super::quotes::distinct_quotes(c).len() == 1;
            if !(single && sharing > 2) {
                line.push_str(&format!(" Paper: {}.", quote_ref(c, q)));
            } else if c.predictions.iter().position(|o| o.quote.is_some()) == Some(i) {
                line.push_str(&format!(
                    " Paper: {}, the same for all {sharing} predictions that quote it.",
                    quote_ref(c, q)
                ));
            }
        }
        if let Some(f) = p.kind.fit_spec() {
            let mut fit = vec![];
            if let Some(e) = &f.divide_by {
                fit.push(format!("the metric is divided by `{e}` before fitting"));
            }
            if let Some(e) = f.predicted.expr() {
                fit.push(format!("the predicted exponent is the least-squares log-log slope of `{e}` over the judged sweep points"));
            }
            if !fit.is_empty() {
                line.push_str(&format!(
                    " Fit: {}.",
                    once(&mut seen[1], &p.name, &fit.join("; "))
                ));
            }
        }
        if !p.note.trim().is_empty() {
            let note = crate::report::sentence(p.note.trim());
            line.push_str(&format!(" Note: {}", once(&mut seen[1], &p.name, &note)));
        }
        let _ = writeln!(s, "{}", line.replace('\n', " "));
    }
}

/// The hypotheses, then which points of each row are inside them (rows with the same
/// regime together).
fn hypotheses(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
    let _ = writeln!(s, "\n## Hypotheses per point\n");
    if !c.assumptions.is_empty() {
        let _ = writeln!(s, "A point outside them is not judged.\n");
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
    let rows = o.results.iter().map(|r| {
        (
            format!("`{}` / `{}`", r.prediction_name, r.variant),
            regime_line(r),
        )
    });
    for (rows, text) in grouped(rows) {
        let _ = writeln!(s, "* {}: {text}", rows.join(", "));
    }
}

/// What each row could detect; rows of exact computations (no sampling error, so no
/// power line: `System::exact_metrics`) are named once instead.
fn power(o: &ClaimOutcome, s: &mut String) {
    let main = || o.results.iter().filter(|r| !r.negative_control);
    let exact: std::collections::BTreeSet<&str> = main()
        .filter(|r| r.power.is_empty())
        .map(|r| r.metric.as_str())
        .collect();
    // The deviations a row is shown to catch: its prediction's caught controls.
    let caught = |name: &str| -> String {
        let c: Vec<String> = o
            .results
            .iter()
            .filter(|c| {
                c.negative_control
                    && c.prediction_name == name
                    && c.control == Some(crate::judge::ControlStatus::Caught)
            })
            .map(|c| format!("`{}`", c.variant))
            .collect();
        if c.is_empty() {
            String::new()
        } else {
            format!("; measured power: it caught {}", c.join(", "))
        }
    };
    let rows = main().filter(|r| !r.power.is_empty()).map(|r| {
        (
            format!("`{}` / `{}`", r.prediction_name, r.variant),
            format!("{}{}", judged(&r.power), caught(&r.prediction_name)),
        )
    });
    let grouped = grouped(rows);
    if grouped.is_empty() && exact.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n## What each row could detect\n");
    let some_random = !grouped.is_empty();
    for (rows, text) in grouped {
        let _ = writeln!(s, "* {}: {text}", rows.join(", "));
    }
    if !exact.is_empty() {
        let names: Vec<String> = exact.iter().map(|m| format!("`{m}`")).collect();
        let _ = writeln!(
            s,
            "{}{} {}: the same bits at every seed and replicate, so {} no sampling error and no power statement; each is decided at the points computed, and a violation between them is not seen.",
            if some_random { "\n" } else { "" },
            names.join(", "),
            if names.len() == 1 { "is an exact computation" } else { "are exact computations" },
            if names.len() == 1 { "its rows have" } else { "their rows have" },
        );
    }
}

fn variants(o: &ClaimOutcome, s: &mut String) {
    let _ = writeln!(s, "\n## Variants\n");
    let mut devs: Vec<String> = vec![];
    for v in &o.claim.variants {
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
        if v.deviations.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "  Deviations{}:",
            if v.is_ablation() {
                " (ablation, not counted)"
            } else {
                " (typo fixes only)"
            }
        );
        for d in &v.deviations {
            let text = format!(
                "{}{} — changes {}",
                d.change,
                if d.typo_fix { " (typo fix)" } else { "" },
                quote_md(&d.sentence)
            );
            match devs.iter().position(|x| *x == text) {
                Some(i) => {
                    let _ = writeln!(s, "  - D{}", i + 1);
                }
                None => {
                    devs.push(text);
                    let _ = writeln!(s, "  - **D{}.** {}", devs.len(), devs[devs.len() - 1]);
                }
            }
        }
    }
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

fn parameters(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
    let _ = writeln!(s, "\n## Parameters\n");
    for (k, e) in &c.params {
        let _ = writeln!(s, "* `{k} = {e}`");
    }
    for sw in &c.sweeps {
        let prof = sw.profile(o.profile);
        let axes: Vec<String> = prof
            .axes
            .iter()
            .map(|(k, v)| {
                let v: Vec<String> = v.iter().map(|x| fmt_num(*x)).collect();
                format!("`{k}` ∈ {{{}}}", v.join(", "))
            })
            .collect();
        let coupled: Vec<String> = prof
            .coupled
            .iter()
            .map(|(k, e)| format!("`{k} = {e}`"))
            .collect();
        let _ = writeln!(
            s,
            "* sweep `{}` ({}): axes {}; coupled {}; {} replicates",
            sw.name,
            o.profile,
            axes.join(", "),
            if coupled.is_empty() {
                "none".to_string()
            } else {
                coupled.join(", ")
            },
            prof.replicates
        );
    }
    s.push_str(&stopping_looks(o));
}

fn sweep_tables(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
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
}

/// The violations of a row, each distinct text once with its count (a prediction over
/// every replicate repeats a point's text once per failing replicate).
fn violations(v: &[String]) -> Vec<String> {
    let mut counted: Vec<(String, usize)> = vec![];
    for x in v {
        let x = judged(x).into_owned();
        match counted.iter_mut().find(|(t, _)| *t == x) {
            Some((_, n)) => *n += 1,
            None => counted.push((x, 1)),
        }
    }
    let mut out: Vec<String> = counted
        .iter()
        .take(200)
        .map(|(t, n)| {
            if *n > 1 {
                format!("  - {t} (×{n})")
            } else {
                format!("  - {t}")
            }
        })
        .collect();
    if counted.len() > 200 {
        out.push(format!("  - … and {} more", counted.len() - 200));
    }
    out
}

/// Per row, what the verdict table does not say: a fit's standard error, R² and
/// bootstrap interval, and the points that violate the prediction (rows with the same
/// details together).
fn fits(o: &ClaimOutcome, s: &mut String) {
    let _ = writeln!(s, "## Fits and checks\n");
    let rows = o.results.iter().map(|r| {
        let mut more = vec![];
        if let (Some(se), Some(r2)) = (r.detail.stderr, r.detail.r2) {
            more.push(format!(
                "  Standard error {}, R² {}, bootstrap 95% CI {} (reported, not judged).",
                fmt_num(se),
                fmt_num(r2),
                fmt_ci(r.detail.bootstrap_ci)
            ));
        }
        more.extend(violations(&r.detail.violations));
        (
            format!(
                "**{}** `{}` ({}) / `{}` → **{}**",
                r.kind, r.prediction_name, r.metric, r.variant, r.verdict
            ),
            more.join("\n"),
        )
    });
    for (rows, more) in grouped(rows) {
        if more.is_empty() {
            let _ = writeln!(s, "* {}.", rows.join("; "));
        } else {
            let _ = writeln!(s, "* {}:\n{more}", rows.join("; "));
        }
    }
}

fn measured(o: &ClaimOutcome, s: &mut String) {
    let c = &o.claim;
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
        let _ = writeln!(s, "\n{}", internal_refs::without_issue_refs(&c.discussion));
    }
}

/// Every detail section, in order, appended to `s`.
pub(super) fn write(o: &ClaimOutcome, s: &mut String) {
    claim_in_full(o, s);
    predictions(o, s);
    hypotheses(o, s);
    power(o, s);
    variants(o, s);
    parameters(o, s);
    sweep_tables(o, s);
    fits(o, s);
    measured(o, s);
}
