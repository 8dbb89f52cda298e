//! `reports/<id>.svg`: one panel per prediction, titled with the prediction's name and
//! verdict, axes labelled in words ([`words`]).
//!
//! A panel shows the judged variants' points with error bars (two standard errors) and
//! what the verdict compares them with:
//! - fitted kinds (`exponent`, `rate_at_most`, `bound`): each variant's fitted line; the
//!   main variant's slope interval as a shaded bow tie through its points; the predicted
//!   line (black, dashed) through the same points, with the slopes the tolerance allows
//!   as a grey band;
//! - `inequality`: the right-hand side at each point (red, dashed);
//! - `event`: the required probability `1 - alpha` (red, dashed).
//!
//! Negative controls are grey, with hollow markers, a dashed fit and "(negative
//! control)" in the legend, so they cannot be taken for the series being judged.
use super::{fmt_num, mean_sd, svg};
use crate::judge::{fit_records, ClaimOutcome, ControlStatus, PointRecord, PredictionResult};
use crate::spec::PredictionKind;

/// The colour of predicted lines: black, distinct from every series colour but one the
/// palette keeps for the seventh series (claims have at most six judged variants).
const PREDICTED_COLOUR: &str = "#000000";
/// Thresholds and right-hand sides: a dark red no series takes.
const THRESHOLD_COLOUR: &str = "#B2182B";
/// Negative controls, in turn.
const CONTROL_GREYS: [&str; 3] = ["#7F7F7F", "#A6A6A6", "#595959"];
/// The band of slopes the tolerance allows.
const TOLERANCE_COLOUR: &str = "#999999";

/// `reports/<id>.svg`: one panel per prediction, stacked vertically.
pub fn claim_svg(o: &ClaimOutcome) -> String {
    let panels: Vec<svg::LogLogPlot> = o
        .claim
        .predictions
        .iter()
        .enumerate()
        .map(|(i, p)| prediction_plot(o, i, p))
        .collect();
    stack_svgs(&panels)
}

/// A spec name in words: `_` as spaces, and the Greek letters of the papers' notation
/// spelled as such (`inv_epsilon` → "1/ε", `test_loss` → "test loss"). The specs have
/// no label field; this is the readable default.
pub fn words(name: &str) -> String {
    const GREEK: [(&str, &str); 8] = [
        ("epsilon", "ε"),
        ("delta", "δ"),
        ("sigma", "σ"),
        ("alpha", "α"),
        ("gamma", "γ"),
        ("lambda", "λ"),
        ("eta", "η"),
        ("mu", "μ"),
    ];
    name.split('_')
        .map(|w| {
            GREEK
                .iter()
                .find(|(g, _)| *g == w)
                .map_or(w, |(_, l)| l)
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replace("inv ε", "1/ε")
}

/// An expression of the spec for a label: a lone name in words (`epsilon` → "ε"), any
/// other expression as written, in parentheses.
fn expr_words(e: &crate::spec::expr::Expr) -> String {
    let s = e.to_string();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        words(&s)
    } else {
        format!("({s})")
    }
}

/// A comparison as printed in mathematics (`≤` for `<=`).
fn math_op(op: &str) -> &str {
    match op {
        "<=" => "≤",
        ">=" => "≥",
        o => o,
    }
}

/// The axis label of a metric or sweep variable: the spec's `labels:` entry, else the
/// name in words.
fn label(o: &ClaimOutcome, name: &str) -> String {
    o.claim
        .labels
        .get(name)
        .cloned()
        .unwrap_or_else(|| words(name))
}

/// A verdict in the words of its evidence kind (`holds`, `passed`, `reproduced`,
/// `out of regime`), without the proxy's name the reports add (`(on ...)`).
fn verdict_words(r: &PredictionResult) -> String {
    let w = if r.word.is_empty() {
        r.verdict.as_str().replace('_', " ")
    } else {
        r.word.clone()
    };
    match w.find(" (on ") {
        Some(i) => {
            let rest = &w[i + 5..];
            // Keep what follows the proxy's name, e.g. " (not discriminating)".
            let tail = rest.find(") ").map(|j| &rest[j + 1..]).unwrap_or("");
            format!("{}{tail}", &w[..i])
        }
        None => w,
    }
}

/// The panel's verdict: the main variants' verdicts, then whether the controls were
/// caught (`holds; control caught`).
fn panel_verdict(results: &[&PredictionResult]) -> String {
    // One word when every main variant has the same verdict, else each variant's.
    let mains: Vec<&&PredictionResult> = results.iter().filter(|r| !r.negative_control).collect();
    // An ablation's row says "ablation: holds"; the panel's verdict is the same word.
    let plain = |r: &PredictionResult| {
        let w = verdict_words(r);
        w.strip_prefix("ablation: ")
            .map_or(w.clone(), str::to_string)
    };
    let same = mains.windows(2).all(|w| plain(w[0]) == plain(w[1]));
    let main: Vec<String> = if same {
        mains.first().map(|r| plain(r)).into_iter().collect()
    } else {
        mains
            .iter()
            .map(|r| format!("{} {}", r.variant, verdict_words(r)))
            .collect()
    };
    let controls: Vec<&&PredictionResult> = results.iter().filter(|r| r.negative_control).collect();
    let caught = controls
        .iter()
        .filter(|r| r.control == Some(ControlStatus::Caught))
        .count();
    let mut out = if main.is_empty() {
        "not judged".to_string()
    } else {
        main.join(", ")
    };
    match (controls.len(), caught) {
        (0, _) => {}
        (1, 1) => out.push_str("; control caught"),
        (1, _) => out.push_str("; control NOT caught"),
        (n, c) if c == n => out.push_str(&format!("; {n} controls caught")),
        (n, c) => out.push_str(&format!("; {} of {n} controls NOT caught", n - c)),
    }
    out
}

/// The panel of prediction `idx`.
fn prediction_plot(o: &ClaimOutcome, idx: usize, p: &crate::spec::Prediction) -> svg::LogLogPlot {
    let prof = o.claim.sweep(&p.sweep).profile(o.profile);
    let results: Vec<&PredictionResult> =
        o.results.iter().filter(|r| r.prediction == idx).collect();
    let fit_spec = p.kind.fit_spec();
    let x_name = fit_spec
        .map(|f| f.x.clone())
        .unwrap_or_else(|| prof.axes[0].0.clone());
    // A paired contrast (`minus:`) is judged on the paired difference: the panel shows
    // it, not the variant's own metric against a threshold meant for the difference.
    let metric_label = match &p.minus {
        Some(base) => format!("{} minus {base}'s (paired)", label(o, &p.metric)),
        None => label(o, &p.metric),
    };
    let mut y_label = metric_label.clone();
    if let Some(f) = fit_spec.and_then(|f| f.divide_by.as_ref()) {
        y_label = format!("{y_label} / ({f})");
    }
    let ratio = ratio_panel(o, p, &x_name);
    if let (Some(rhs), PredictionKind::Inequality { .. }) = (ratio, &p.kind) {
        y_label = format!("{y_label} / {}", expr_words(rhs));
    }
    let mut plot = svg::LogLogPlot::new(
        format!("{}: {}", p.name, panel_verdict(&results)),
        label(o, &x_name),
        y_label,
    );
    plot.subtitle = format!(
        "{} · {} of {} against {}",
        o.claim.id,
        p.kind.name().replace('_', " "),
        metric_label,
        label(o, &x_name)
    );
    // Main variants first, then the controls: the first series is the one judged, and
    // the colours of the main variants do not depend on how many controls there are.
    let mut judged: Vec<&crate::spec::Variant> =
        o.claim.variants.iter().filter(|v| p.judges(v)).collect();
    judged.sort_by_key(|v| v.negative_control);
    let mut predicted_line = None;
    let mut guides: Vec<svg::Band> = Vec::new();
    let (mut mains, mut controls) = (0usize, 0usize);
    for var in &judged {
        let recs: Vec<&PointRecord> = o
            .points
            .iter()
            .filter(|r| r.sweep == p.sweep && r.variant == var.name)
            .collect();
        let paired: Vec<PointRecord>;
        let recs: Vec<&PointRecord> = match &p.minus {
            Some(base) => {
                // The judge's own pairing (judge::contrast), every point or none.
                let all: Vec<&PointRecord> = o.points.iter().collect();
                paired = crate::judge::contrast::records(&recs, &all, &p.metric, base)
                    .unwrap_or_default();
                paired.iter().collect()
            }
            None => recs,
        };
        let mut pts = Vec::new();
        for r in &recs {
            let div = fit_spec
                .and_then(|f| f.divide_by.as_ref())
                .or(ratio)
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
        let control = var.negative_control;
        let (name, colour) = if control {
            controls += 1;
            (
                format!("{} (negative control)", var.name),
                CONTROL_GREYS[(controls - 1) % CONTROL_GREYS.len()],
            )
        } else {
            mains += 1;
            (var.name.clone(), svg::series_colour(mains - 1))
        };
        if let Some(f) = fit_spec {
            // The plot needs only the least-squares line: skip the bootstrap (the
            // slope's interval is the judged one, from the result row).
            let line_only = crate::spec::FitSpec {
                bootstrap: 0,
                ..f.clone()
            };
            if let Ok(fit) =
                fit_records(&recs, &p.metric, &line_only, &crate::rng::SeedPath::new(0))
            {
                plot.lines.push(svg::Line {
                    label: format!("{name}: fitted slope {}", fmt_num(fit.slope)),
                    slope: fit.slope,
                    intercept: fit.intercept,
                    dashed: control,
                    colour: Some(colour),
                    bold: false,
                });
                let row = results.iter().find(|r| r.variant == var.name);
                if let (false, Some(cx)) = (control, centroid(&pts)) {
                    if let Some((lo, hi)) = row.and_then(|r| r.ci) {
                        guides.push(svg::Band {
                            label: format!(
                                "{}: slope interval [{}, {}]",
                                var.name,
                                fmt_num(lo),
                                fmt_num(hi)
                            ),
                            edges: [through(cx, lo), through(cx, hi)],
                            colour,
                            opacity: 0.18,
                        });
                    }
                }
                if !control && predicted_line.is_none() {
                    if let Some(cx) = centroid(&pts) {
                        predicted_line = Some(svg::Line {
                            label: format!(
                                "predicted slope {} (through {})",
                                fmt_num(fit.predicted),
                                var.name
                            ),
                            slope: fit.predicted,
                            intercept: through(cx, fit.predicted).1,
                            dashed: true,
                            colour: Some(PREDICTED_COLOUR),
                            bold: true,
                        });
                        let tol = f.tolerance;
                        let pred = fit.predicted;
                        let (a, b, label) = match &p.kind {
                            PredictionKind::Exponent(_) => (
                                pred - tol,
                                pred + tol,
                                format!("predicted ± tolerance {}", fmt_num(tol)),
                            ),
                            PredictionKind::Bound { upper: false, .. } => (
                                pred - tol,
                                pred,
                                format!("allowed: slope at least {}", fmt_num(pred - tol)),
                            ),
                            _ => (
                                pred,
                                pred + tol,
                                format!("allowed: slope at most {}", fmt_num(pred + tol)),
                            ),
                        };
                        if tol > 0.0 {
                            guides.insert(
                                0,
                                svg::Band {
                                    label,
                                    edges: [through(cx, a), through(cx, b)],
                                    colour: TOLERANCE_COLOUR,
                                    opacity: 0.3,
                                },
                            );
                        }
                    }
                }
            }
        }
        if !control {
            threshold_curve(
                &mut plot,
                p,
                &recs,
                (&x_name, &metric_label),
                ratio.is_some(),
            );
        }
        plot.series.push(svg::Series {
            label: name,
            points: pts,
            hollow: control,
            colour: Some(colour),
        });
    }
    plot.lines.extend(predicted_line);
    plot.bands = guides;
    let pts: Vec<&(f64, f64, f64, f64)> = plot.series.iter().flat_map(|s| &s.points).collect();
    let curve_ys: Vec<f64> = plot
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|q| q.1))
        .collect();
    // A power-law fit is straight on log-log axes: keep them whenever they can be drawn.
    // Other panels take a log axis only where the values span a decade or more.
    let fitted = fit_spec.is_some();
    plot.log_x = log_axis(pts.iter().map(|p| p.0), fitted);
    let ys = || pts.iter().map(|p| p.1).chain(curve_ys.iter().copied());
    plot.log_y = log_axis(ys(), fitted);
    // Values over many decades with a few zeros (an exact epsilon of 0 at some points):
    // a log axis still, the zeros said under the title rather than squashing the rest.
    if !plot.log_y {
        let finite: Vec<f64> = ys().filter(|v| v.is_finite()).collect();
        if let Some(zeros) = log_axis_dropping_zeros(&finite) {
            plot.log_y = true;
            plot.subtitle
                .push_str(&format!(" ({zeros} points at 0 not drawn on the log axis)"));
        }
    }
    plot
}

/// For an `inequality` whose right-hand side takes several values at one x (a sweep over
/// more variables than the x axis), all positive: the right-hand side, so the panel
/// shows `metric / rhs` against the threshold 1 instead of a zigzag.
fn ratio_panel<'a>(
    o: &ClaimOutcome,
    p: &'a crate::spec::Prediction,
    x_name: &str,
) -> Option<&'a crate::spec::expr::Expr> {
    let PredictionKind::Inequality { rhs, .. } = &p.kind else {
        return None;
    };
    let mut at: Vec<(f64, f64)> = Vec::new();
    for r in o.points.iter().filter(|r| r.sweep == p.sweep) {
        let (Some(&x), Ok(b)) = (r.vars.get(x_name), rhs.eval_map(&r.vars)) else {
            return None;
        };
        if !(b > 0.0 && b.is_finite()) {
            return None;
        }
        at.push((x, b));
    }
    let several = at.iter().any(|&(x, b)| {
        at.iter()
            .any(|&(x2, b2)| x2.to_bits() == x.to_bits() && (b2 - b).abs() > 1e-9 * b.abs())
    });
    several.then_some(rhs)
}

/// The threshold an `event` or `inequality` compares the main variant with, once per
/// panel: `1 - alpha`, or the right-hand side at each sweep point (sorted by x).
fn threshold_curve(
    plot: &mut svg::LogLogPlot,
    p: &crate::spec::Prediction,
    recs: &[&PointRecord],
    (x_name, metric_label): (&str, &str),
    ratio: bool,
) {
    if !plot.curves.is_empty() {
        return;
    }
    let xs = || recs.iter().filter_map(|r| r.vars.get(x_name).copied());
    let (lo, hi) = xs().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let (label, mut points) = match &p.kind {
        PredictionKind::Event { alpha, .. } => (
            format!(
                "required: probability at least 1 − α = {}",
                fmt_num(1.0 - alpha)
            ),
            vec![(lo, 1.0 - alpha), (hi, 1.0 - alpha)],
        ),
        PredictionKind::Inequality { op, rhs, .. } if ratio => (
            format!(
                "{} / {} {} 1",
                metric_label,
                expr_words(rhs),
                math_op(op.symbol())
            ),
            vec![(lo, 1.0), (hi, 1.0)],
        ),
        PredictionKind::Inequality { op, rhs, .. } => (
            format!(
                "{} {} {}",
                metric_label,
                math_op(op.symbol()),
                if expr_words(rhs).starts_with('(') {
                    rhs.to_string()
                } else {
                    expr_words(rhs)
                }
            ),
            recs.iter()
                .filter_map(|r| Some((*r.vars.get(x_name)?, rhs.eval_map(&r.vars).ok()?)))
                .collect(),
        ),
        _ => return,
    };
    points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    points.dedup_by(|a, b| a.0.to_bits() == b.0.to_bits() && a.1.to_bits() == b.1.to_bits());
    // A sweep of one point: a short level segment across it, so the threshold the
    // legend names is drawn (a curve of one point is not).
    if let [(x, y)] = points[..] {
        let w = if x > 0.0 { 0.08 * x } else { 1.0 };
        points = vec![(x - w, y), (x + w, y)];
    }
    if points.iter().all(|q| q.0.is_finite() && q.1.is_finite()) {
        plot.curves.push(svg::Curve {
            label,
            points,
            colour: THRESHOLD_COLOUR,
            dash: Some("6 3"),
            width: 2.0,
        });
    }
}

/// The centroid of the points' `(ln x, ln y)` (the points with positive, finite x and
/// y), if there is one.
fn centroid(points: &[(f64, f64, f64, f64)]) -> Option<(f64, f64)> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.0.is_finite() && p.1.is_finite())
        .map(|p| (p.0.ln(), p.1.ln()))
        .collect();
    if logs.is_empty() {
        return None;
    }
    let n = logs.len() as f64;
    Some((
        logs.iter().map(|p| p.0).sum::<f64>() / n,
        logs.iter().map(|p| p.1).sum::<f64>() / n,
    ))
}

/// `(slope, intercept)` of the power law of exponent `slope` through the log-space point
/// `c`.
fn through(c: (f64, f64), slope: f64) -> (f64, f64) {
    (slope, c.1 - slope * c.0)
}

/// Whether an axis over `values` is logarithmic: every value positive, and either a
/// power-law panel or a span of at least one decade.
fn log_axis(values: impl Iterator<Item = f64> + Clone, power_law: bool) -> bool {
    let finite = values.filter(|v| v.is_finite());
    if !finite.clone().all(|v| v > 0.0) {
        return false;
    }
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    power_law || hi >= 10.0 * lo
}

/// A log axis for values over two decades or more with a few exact zeros (at most half):
/// the number of zeros it leaves out, or `None`. Never when a value is negative: a signed
/// quantity (a z-score) keeps a linear axis, so that no variant's points vanish.
fn log_axis_dropping_zeros(finite: &[f64]) -> Option<usize> {
    let zeros = finite.iter().filter(|v| **v == 0.0).count();
    if zeros == 0 || 2 * zeros > finite.len() || finite.iter().any(|v| *v < 0.0) {
        return None;
    }
    let (lo, hi) = finite
        .iter()
        .filter(|v| **v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    (hi >= 100.0 * lo).then_some(zeros)
}

/// Stacks the panels vertically into one SVG document, as wide as the widest panel.
fn stack_svgs(panels: &[svg::LogLogPlot]) -> String {
    let h = svg::HEIGHT;
    let w = panels.iter().map(|p| p.width()).fold(svg::WIDTH, f64::max);
    let total = h * panels.len().max(1) as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{total}\" viewBox=\"0 0 {w} {total}\">\n<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{total}\" fill=\"white\"/>\n"
    );
    for (i, p) in panels.iter().enumerate() {
        // Nested <svg> elements are positioned by their x/y attributes.
        let inner =
            p.render()
                .replacen("<svg ", &format!("<svg x=\"0\" y=\"{}\" ", i as f64 * h), 1);
        s.push_str(&inner);
        s.push('\n');
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_predicted_line_goes_through_the_given_points_centroid() {
        // y = 5 x^-1 exactly: the line of slope -1 through them has prefactor 5.
        let pts: Vec<(f64, f64, f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&x| (x, 5.0 / x, 5.0 / x, 5.0 / x))
            .collect();
        let c = centroid(&pts).expect("positive points");
        assert!((through(c, -1.0).1 - 5f64.ln()).abs() < 1e-12);
        assert!(centroid(&[(0.0, 1.0, 1.0, 1.0)]).is_none());
    }

    #[test]
    fn names_read_as_words() {
        assert_eq!(words("test_loss"), "test loss");
        assert_eq!(words("inv_epsilon"), "1/ε");
        assert_eq!(words("epsilon_lower_bound"), "ε lower bound");
        assert_eq!(words("sigma0_max_rel_diff"), "sigma0 max rel diff");
        assert_eq!(math_op("<="), "≤");
    }

    #[test]
    fn log_axes_only_where_they_help() {
        fn v(s: &[f64]) -> impl Iterator<Item = f64> + Clone + '_ {
            s.iter().copied()
        }
        assert!(log_axis(v(&[1.0, 3.0, 20.0]), false));
        assert!(!log_axis(v(&[0.7, 0.8, 0.9]), false), "less than a decade");
        assert!(log_axis(v(&[0.7, 0.8, 0.9]), true), "power-law panel");
        assert!(!log_axis(v(&[0.0, 1.0, 100.0]), true), "a zero");
        assert!(!log_axis(v(&[-1.0, 1.0]), false));
        // A few exact zeros among values over decades: log, the zeros counted.
        assert_eq!(log_axis_dropping_zeros(&[0.0, 0.01, 1.0, 5.0]), Some(1));
        assert_eq!(
            log_axis_dropping_zeros(&[0.0, 0.0, 0.0, 1.0]),
            None,
            "mostly zeros"
        );
        assert_eq!(
            log_axis_dropping_zeros(&[0.0, 1.0, 2.0]),
            None,
            "one decade"
        );
        // A signed quantity: z-scores from -4.5 to 35 stay on a linear axis.
        assert_eq!(log_axis_dropping_zeros(&[-4.5, -0.6, 0.1, 0.4, 35.7]), None);
    }
}
