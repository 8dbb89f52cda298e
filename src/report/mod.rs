//! Reports: Markdown, CSV and SVG written atomically to `reports/`.
//!
//! Every file is rendered to a string first and then written with [`write_atomic`]
//! (temporary file in the same directory, then rename), so a report is never
//! half-written. Output contains no timings and no paths that depend on the machine,
//! so the same spec and seed give the same bytes.
pub mod baseline;
pub mod bench;
pub mod heatmap;
pub mod snapshot;
pub mod stability;
pub mod svg;

use crate::judge::{ControlStatus, Tally};
use crate::runner::{fit_records, ClaimOutcome, PointRecord, PredictionResult};
use crate::spec::{Predicted, Prediction, PredictionKind};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Writes `contents` to `path` atomically (temp file + fsync + rename).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Formats a number for tables: 4 significant digits, scientific when far from 1.
pub fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if (1e-3..1e5).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    } else {
        format!("{v:.3e}")
    }
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "—".into())
}

fn fmt_ci(ci: Option<(f64, f64)>) -> String {
    ci.map(|(a, b)| format!("[{}, {}]", fmt_num(a), fmt_num(b)))
        .unwrap_or_else(|| "—".into())
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (m, sd)
}

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
            Predicted::RateOf(e) => {
                format!("local slope of `{e}` (= {})", fmt_opt(r.predicted))
            }
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
        PredictionKind::Event { alpha, .. } => {
            format!("P({} = 1) >= {}", p.metric, fmt_num(1.0 - alpha))
        }
        PredictionKind::Inequality { op, rhs } => {
            format!("{} {} {rhs} at every point and replicate", p.metric, op.symbol())
        }
    }
}

/// A Markdown table cell: `|` escaped, newlines folded.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Plain words for a verdict of a main variant or a control.
fn verdict_cell(r: &PredictionResult) -> String {
    let mut v = format!("**{}**", r.verdict);
    match &r.control {
        Some(ControlStatus::Caught) => v.push_str(" — caught"),
        Some(ControlStatus::NotCaught) => v.push_str(" — ⚠ NOT caught"),
        Some(ControlStatus::IdenticalTo(m)) => {
            v.push_str(&format!(" — ⚠ identical to `{m}`, cannot be caught"))
        }
        None => {}
    }
    if r.finding.is_some() && r.verdict == crate::fit::Verdict::Refuted {
        v.push_str(" (finding)");
    }
    if r.problem.is_some() && r.control.is_none() {
        v.push_str(" ⚠");
    }
    v
}

/// The one-line description of a prediction result (used in Markdown and SUMMARY).
pub fn result_line(r: &PredictionResult) -> String {
    match r.kind {
        "exponent" | "rate_at_most" => format!(
            "slope vs {} = {} (CI {}), predicted {} {} {}",
            r.x.as_deref().unwrap_or("?"),
            fmt_opt(r.estimate),
            fmt_ci(r.ci),
            if r.kind == "exponent" { "=" } else { "<=" },
            fmt_opt(r.predicted),
            r.tolerance
                .map(|t| format!("{} {}", if r.kind == "exponent" { "±" } else { "+" }, fmt_num(t)))
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
        _ => format!(
            "{}/{} points satisfy it; worst margin {}",
            r.detail.successes.unwrap_or(0),
            r.detail.trials.unwrap_or(0),
            fmt_opt(r.estimate)
        ),
    }
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
    let _ = writeln!(s, "**Statement.** {}\n", c.statement);
    let _ = writeln!(
        s,
        "**System.** `{}` ({}); model `{}`; adjacency `{}`.\n",
        c.system.name(),
        c.system.description(),
        c.model,
        c.adjacency
    );
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
            result_line(r),
            r.regime.summary(),
            verdict_cell(r)
        );
    }
    let problems = o.problems();
    if !problems.is_empty() {
        let _ = writeln!(s, "\n**This claim fails the run:**\n");
        for p in &problems {
            let _ = writeln!(s, "* {p}");
        }
    }
    let findings: Vec<&PredictionResult> = o
        .results
        .iter()
        .filter(|r| r.finding.is_some())
        .collect();
    if !findings.is_empty() {
        let _ = writeln!(s, "\n## Findings\n");
        for r in findings {
            let _ = writeln!(
                s,
                "* `{}` / `{}` ({}): {}",
                r.prediction_name,
                r.variant,
                if r.verdict == crate::fit::Verdict::Refuted {
                    "refuted at this run".to_string()
                } else {
                    format!("registered for a refutation; this run says {}", r.verdict)
                },
                r.finding.as_deref().unwrap_or("").trim()
            );
        }
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
                    let (mu, sd) = mean_sd(&r.metrics[m]);
                    if r.metrics[m].len() > 1 {
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
            result_line(r),
            r.verdict,
            r.regime.summary()
        );
        if let (Some(se), Some(r2)) = (r.detail.stderr, r.detail.r2) {
            let _ = writeln!(
                s,
                "  Standard error {}, R² {}, bootstrap CI {}.",
                fmt_num(se),
                fmt_num(r2),
                fmt_ci(r.detail.bootstrap_ci)
            );
        }
        if let Some(PredictionKind::Exponent(f) | PredictionKind::RateAtMost(f)) =
            c.predictions.get(r.prediction).map(|p| &p.kind)
        {
            if let Some(e) = &f.divide_by {
                let _ = writeln!(s, "  The metric is divided by `{e}` before fitting.");
            }
            if let Some(e) = f.predicted.expr() {
                let _ = writeln!(s, "  Predicted exponent = least-squares log-log slope of `{e}` over the judged sweep points.");
            }
            let _ = writeln!(s, "  Tolerance {}: {}.", fmt_num(f.tolerance), f.tolerance_reason);
        }
        for v in r.detail.violations.iter().take(200) {
            let _ = writeln!(s, "  - {v}");
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
        "At the `{}` profile with master seed {}, {} simulation units ({} sweep points across {} variants) were run; every number above comes from them (raw values in `{}.csv`, plot in `{}.svg`). {}.",
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
        let _ = writeln!(s, "\n{}", c.discussion);
    }
    s
}

/// `reports/<id>.csv`: one row per (sweep, variant, point, replicate, metric).
pub fn claim_csv(o: &ClaimOutcome) -> String {
    let mut s = String::from("claim,sweep,variant,point,vars,replicate,metric,value\n");
    for p in &o.points {
        let vars = p
            .vars
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";");
        for (m, vals) in &p.metrics {
            for (r, v) in vals.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "{},{},{},{},\"{}\",{},{},{}",
                    o.claim.id, p.sweep, p.variant, p.label, vars, r, m, v
                );
            }
        }
    }
    s
}

/// `reports/<id>.svg`: one panel per prediction, stacked vertically.
pub fn claim_svg(o: &ClaimOutcome) -> String {
    let mut panels = Vec::new();
    for (pi, p) in o.claim.predictions.iter().enumerate() {
        let prof = o.claim.sweep(&p.sweep).profile(o.profile);
        let mut plot = svg::LogLogPlot::new(
            format!("{}: {} ({})", o.claim.id, p.metric, p.kind.name()),
            "",
            &p.metric,
        );
        let fit_spec = match &p.kind {
            PredictionKind::Exponent(f) | PredictionKind::RateAtMost(f) => Some(f),
            _ => None,
        };
        let x_name = fit_spec
            .map(|f| f.x.clone())
            .unwrap_or_else(|| prof.axes[0].0.clone());
        plot.x_label = x_name.clone();
        if let Some(f) = fit_spec.and_then(|f| f.divide_by.as_ref()) {
            plot.y_label = format!("{} / ({f})", p.metric);
        }
        let judged: Vec<&crate::spec::Variant> =
            o.claim.variants.iter().filter(|v| p.judges(v)).collect();
        let anchor = judged
            .iter()
            .find(|v| !v.negative_control)
            .map(|v| v.name.clone());
        for var in &judged {
            let vname = &var.name;
            let recs: Vec<&PointRecord> = o
                .points
                .iter()
                .filter(|r| r.sweep == p.sweep && &r.variant == vname)
                .collect();
            let mut pts = Vec::new();
            for r in &recs {
                let div = fit_spec
                    .and_then(|f| f.divide_by.as_ref())
                    .and_then(|e| e.eval_map(&r.vars).ok())
                    .unwrap_or(1.0);
                let vals: Vec<f64> = r.metrics[&p.metric].iter().map(|v| v / div).collect();
                let (m, sd) = mean_sd(&vals);
                let se = sd / (vals.len() as f64).sqrt();
                pts.push((
                    r.vars.get(&x_name).copied().unwrap_or(f64::NAN),
                    m,
                    m - 2.0 * se,
                    m + 2.0 * se,
                ));
            }
            plot.series.push(svg::Series {
                label: if var.negative_control {
                    format!("{vname} (control)")
                } else {
                    vname.clone()
                },
                points: pts,
            });
            if let Some(f) = fit_spec {
                // The plot needs only the least-squares line: skip the bootstrap.
                let line_only = crate::spec::FitSpec {
                    bootstrap: 0,
                    ..f.clone()
                };
                if let Ok(fit) =
                    fit_records(&recs, &p.metric, &line_only, &crate::rng::SeedPath::new(0))
                {
                    plot.lines.push(svg::Line {
                        label: format!("{vname}: fitted slope {}", fmt_num(fit.slope)),
                        slope: fit.slope,
                        intercept: fit.intercept,
                        dashed: false,
                    });
                    if Some(vname) == anchor.as_ref() {
                        plot.lines.push(svg::Line {
                            label: format!("predicted slope {}", fmt_num(fit.predicted)),
                            slope: fit.predicted,
                            intercept: fit.predicted_intercept,
                            dashed: true,
                        });
                    }
                }
            }
        }
        let all_pos = plot
            .series
            .iter()
            .flat_map(|s| &s.points)
            .all(|p| p.0 > 0.0);
        plot.log_x = all_pos;
        let all_pos_y = plot
            .series
            .iter()
            .flat_map(|s| &s.points)
            .all(|p| p.1 > 0.0);
        plot.log_y = all_pos_y;
        let _ = pi;
        panels.push(plot.render());
    }
    stack_svgs(&panels)
}

/// Stacks standalone SVG documents vertically into one.
fn stack_svgs(panels: &[String]) -> String {
    let (w, h) = (640, 420);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\" viewBox=\"0 0 {w} {}\">\n",
        h * panels.len().max(1),
        h * panels.len().max(1)
    );
    for (i, p) in panels.iter().enumerate() {
        // Nested <svg> elements are positioned by their x/y attributes.
        let inner = p.replacen("<svg ", &format!("<svg x=\"0\" y=\"{}\" ", i * h), 1);
        s.push_str(&inner);
        s.push('\n');
    }
    s.push_str("</svg>\n");
    s
}

/// Plain words for a claim: the overall picture, then each main variant's verdicts.
pub fn claim_in_words(o: &ClaimOutcome) -> String {
    use crate::fit::Verdict::{self, *};
    let main: Vec<&PredictionResult> = o.results.iter().filter(|r| !r.negative_control).collect();
    let all = |v: Verdict| main.iter().all(|r| r.verdict == v);
    let head = if all(Holds) {
        "**holds**"
    } else if all(OutOfRegime) {
        "**out of regime**"
    } else if main.iter().any(|r| r.verdict == Refuted) {
        "**refuted in part** (findings)"
    } else if main.iter().any(|r| r.verdict == Holds) {
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
            let mine: Vec<&&PredictionResult> = main.iter().filter(|r| r.variant == v.name).collect();
            let counts: Vec<String> = [Holds, Refuted, Inconclusive, OutOfRegime]
                .iter()
                .filter_map(|k| {
                    let n = mine.iter().filter(|r| r.verdict == *k).count();
                    (n > 0).then(|| {
                        if n == mine.len() {
                            k.to_string()
                        } else {
                            format!("{n} {k}")
                        }
                    })
                })
                .collect();
            format!("`{}` {}", v.name, counts.join(", "))
        })
        .collect();
    let ctrl: Vec<&PredictionResult> = o.results.iter().filter(|r| r.negative_control).collect();
    let caught = ctrl.iter().filter(|r| r.control == Some(ControlStatus::Caught)).count();
    format!(
        "{head}: {}; negative controls {caught}/{} caught",
        per_variant.join("; "),
        ctrl.len()
    )
}

/// `reports/SUMMARY.md`: a table of claims in plain words, then one row per verdict.
pub fn summary_markdown(outcomes: &[ClaimOutcome]) -> String {
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
         few sweep points inside the theorem's hypotheses). Whether any number changed since \
         the last recorded run is a separate question, answered by the regression baseline \
         (insta snapshots in `tests/snapshots`).\n"
    );
    let _ = writeln!(s, "{}\n", Tally::of(outcomes).line());
    let _ = writeln!(s, "| claim | source | in plain words |");
    let _ = writeln!(s, "|---|---|---|");
    for o in outcomes {
        let _ = writeln!(
            s,
            "| [{}]({}.md) | {} | {} |",
            o.claim.id,
            o.claim.id,
            cell(&format!("{}, {}", o.claim.source.section, o.claim.source.equation)),
            claim_in_words(o)
        );
    }
    let _ = writeln!(s, "\n## Every verdict\n");
    let _ = writeln!(
        s,
        "| claim | prediction | source | variant | measured | regime | verdict |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for o in outcomes {
        for r in &o.results {
            let _ = writeln!(
                s,
                "| [{}]({}.md) | `{}` ({} {}) | {} | {}{} | {} | {} | {} |",
                o.claim.id,
                o.claim.id,
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
                r.regime.summary(),
                verdict_cell(r)
            );
        }
    }
    s
}

/// The `--json` document of `dpclaims run`.
pub fn run_json(
    profile: crate::spec::Profile,
    seed: u64,
    outcomes: &[ClaimOutcome],
) -> serde_json::Value {
    let claims: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "id": o.claim.id,
                "source": o.claim.source.to_string(),
                "results": o.results.iter().map(|r| serde_json::json!({
                    "prediction": r.prediction_name,
                    "variant": r.variant,
                    "negative_control": r.negative_control,
                    "metric": r.metric,
                    "kind": r.kind,
                    "x": r.x,
                    "estimate": r.estimate,
                    "ci": r.ci.map(|(a, b)| vec![a, b]),
                    "predicted": r.predicted,
                    "tolerance": r.tolerance,
                    "verdict": r.verdict,
                    "regime": r.regime,
                    "control": r.control,
                    "finding": r.finding,
                    "problem": r.problem,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({"profile": profile, "seed": seed, "claims": claims, "tally": Tally::of(outcomes)})
}

/// Writes `<id>.md`, `<id>.csv`, `<id>.svg` of every outcome and `SUMMARY.md`.
pub fn write_reports(dir: &Path, outcomes: &[ClaimOutcome]) -> std::io::Result<()> {
    for o in outcomes {
        write_atomic(
            &dir.join(format!("{}.md", o.claim.id)),
            claim_markdown(o).as_bytes(),
        )?;
        write_atomic(
            &dir.join(format!("{}.csv", o.claim.id)),
            claim_csv(o).as_bytes(),
        )?;
        write_atomic(
            &dir.join(format!("{}.svg", o.claim.id)),
            claim_svg(o).as_bytes(),
        )?;
    }
    write_atomic(
        &dir.join("SUMMARY.md"),
        summary_markdown(outcomes).as_bytes(),
    )
}
