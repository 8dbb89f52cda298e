//! `reports/<id>.svg`: one log-log panel per prediction, the judged variants' points
//! with error bars, their fitted lines and the predicted slope through the main variant.
use super::{fmt_num, mean_sd, svg};
use crate::judge::{fit_records, ClaimOutcome, PointRecord};
use crate::spec::PredictionKind;

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
