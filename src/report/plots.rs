//! `reports/<id>.svg`: one panel per prediction, the judged variants' points with error
//! bars and their fitted lines (a negative control with hollow markers, a dashed fit and
//! "(control)" in the legend), and the predicted slope drawn through the main variant's
//! points, so a reader compares the prediction with the series it judges.
use super::{fmt_num, mean_sd, svg};
use crate::judge::{fit_records, ClaimOutcome, PointRecord};
use crate::spec::PredictionKind;

/// The colour of predicted lines: black, distinct from every series colour but one the
/// palette keeps for the seventh series (claims have at most six judged variants).
const PREDICTED_COLOUR: &str = "#000000";

/// `reports/<id>.svg`: one panel per prediction, stacked vertically.
pub fn claim_svg(o: &ClaimOutcome) -> String {
    let panels: Vec<svg::LogLogPlot> = o
        .claim
        .predictions
        .iter()
        .map(|p| prediction_plot(o, p))
        .collect();
    stack_svgs(&panels)
}

/// The panel of one prediction.
fn prediction_plot(o: &ClaimOutcome, p: &crate::spec::Prediction) -> svg::LogLogPlot {
    let prof = o.claim.sweep(&p.sweep).profile(o.profile);
    let mut plot = svg::LogLogPlot::new(
        format!("{}: {} ({})", o.claim.id, p.metric, p.kind.name()),
        "",
        &p.metric,
    );
    let fit_spec = match &p.kind {
        PredictionKind::Exponent(f)
        | PredictionKind::RateAtMost(f)
        | PredictionKind::Bound { fit: f, .. } => Some(f),
        _ => None,
    };
    let x_name = fit_spec
        .map(|f| f.x.clone())
        .unwrap_or_else(|| prof.axes[0].0.clone());
    plot.x_label = x_name.clone();
    if let Some(f) = fit_spec.and_then(|f| f.divide_by.as_ref()) {
        plot.y_label = format!("{} / ({f})", p.metric);
    }
    // Main variants first, then the controls: the first series is the one judged, and
    // the colours of the main variants do not depend on how many controls there are.
    let mut judged: Vec<&crate::spec::Variant> =
        o.claim.variants.iter().filter(|v| p.judges(v)).collect();
    judged.sort_by_key(|v| v.negative_control);
    let mut predicted_line = None;
    for (i, var) in judged.iter().enumerate() {
        let recs: Vec<&PointRecord> = o
            .points
            .iter()
            .filter(|r| r.sweep == p.sweep && r.variant == var.name)
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
        let control = var.negative_control;
        let name = if control {
            format!("{} (control)", var.name)
        } else {
            var.name.clone()
        };
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
                    label: format!("{name}: fitted slope {}", fmt_num(fit.slope)),
                    slope: fit.slope,
                    intercept: fit.intercept,
                    dashed: control,
                    colour: Some(svg::series_colour(i)),
                    bold: false,
                });
                if !control && predicted_line.is_none() {
                    predicted_line = anchored(&pts, fit.predicted).map(|intercept| svg::Line {
                        label: format!(
                            "predicted slope {} (through {})",
                            fmt_num(fit.predicted),
                            var.name
                        ),
                        slope: fit.predicted,
                        intercept,
                        dashed: true,
                        colour: Some(PREDICTED_COLOUR),
                        bold: true,
                    });
                }
            }
        }
        plot.series.push(svg::Series {
            label: name,
            points: pts,
            hollow: control,
        });
    }
    plot.lines.extend(predicted_line);
    let pts: Vec<&(f64, f64, f64, f64)> = plot.series.iter().flat_map(|s| &s.points).collect();
    // A power-law fit is straight on log-log axes: keep them whenever they can be drawn.
    // Other panels take a log axis only where the values span a decade or more.
    let fitted = fit_spec.is_some();
    plot.log_x = log_axis(pts.iter().map(|p| p.0), fitted);
    plot.log_y = log_axis(pts.iter().map(|p| p.1), fitted);
    plot
}

/// `ln` of the prefactor of the line of slope `slope` through the centroid of the
/// points' `(ln x, ln y)` (the points with positive x and y): the predicted line drawn
/// through the main variant's own points.
fn anchored(points: &[(f64, f64, f64, f64)], slope: f64) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.0.is_finite() && p.1.is_finite())
        .map(|p| (p.0.ln(), p.1.ln()))
        .collect();
    if logs.is_empty() {
        return None;
    }
    let n = logs.len() as f64;
    let cx = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let cy = logs.iter().map(|p| p.1).sum::<f64>() / n;
    Some(cy - slope * cx)
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
        let a = anchored(&pts, -1.0).expect("positive points");
        assert!((a - 5f64.ln()).abs() < 1e-12);
        assert!(anchored(&[(0.0, 1.0, 1.0, 1.0)], -1.0).is_none());
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
    }
}
