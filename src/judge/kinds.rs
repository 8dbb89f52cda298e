//! The measurement of each prediction kind over the judged points, and its verdict:
//! `exponent` (equality of a log-log slope within a tolerance), `rate_at_most` (an upper
//! bound, O() or O~(): judged on the slope's confidence interval), `event` (probability
//! with a Clopper-Pearson interval) and `inequality` (at every point and replicate, or on
//! the mean at every point with simultaneous t intervals).
use super::{PointRecord, PredictionResult};
use crate::fit;
use crate::rng::SeedPath;
use crate::spec::expr::Expr;
use crate::spec::{CmpOp, FitSpec, InequalityOver, Predicted, Prediction, PredictionKind};
use std::collections::BTreeMap;

/// The right side of an inequality at each of the `n` replicates of `r`. An `rhs` of the
/// point's variables has one value for all; one that names metrics (an accountant's
/// output compared with the epsilon a core used: `rhs: "epsilon_reported"`) is evaluated
/// per replicate, with that replicate's metrics beside the point's variables, so each
/// run is compared with itself. Second: whether it names a metric.
fn rhs_values(rhs: &Expr, r: &PointRecord, n: usize) -> Result<(Vec<f64>, bool), String> {
    let metrics: Vec<String> = rhs
        .variables()
        .into_iter()
        .filter(|s| !r.vars.contains_key(s) && r.metrics.contains_key(s))
        .collect();
    if metrics.is_empty() {
        let b = rhs.eval_map(&r.vars).map_err(|e| e.to_string())?;
        return Ok((vec![b; n], false));
    }
    let mut vars = r.vars.clone();
    let values = (0..n)
        .map(|k| {
            for m in &metrics {
                let v = r.metrics[m].get(k).copied().ok_or_else(|| {
                    format!("{}: metric `{m}` of `rhs` has no replicate {k}", r.label)
                })?;
                vars.insert(m.clone(), v);
            }
            rhs.eval_map(&vars).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<f64>, String>>()?;
    Ok((values, true))
}

/// Every input of `p` at every point of `recs` is a finite number: the metric's
/// replicate values, the inequality's right-hand side, the bound a fit divides by and a
/// predicted slope's expression. A NaN or an infinity is an error naming the point and
/// the input (the run exits 2), never a verdict: a NaN compares false with everything,
/// so a control whose right-hand side is NaN would read as "caught", and a main variant
/// with NaN at some points as "refuted" without the word NaN ever being said (issue 32).
pub fn inputs_finite(p: &Prediction, recs: &[&PointRecord]) -> Result<(), String> {
    let bad = |label: &str, what: String, v: f64| {
        Err(format!(
            "point {label}: {what} is {v}, not a finite number; a prediction's inputs must be finite (fix the spec, or the metric's computation)"
        ))
    };
    let exprs: Vec<(&str, &crate::spec::expr::Expr)> = match &p.kind {
        PredictionKind::Inequality { rhs, .. } => vec![("the right-hand side", rhs)],
        PredictionKind::Exponent(f)
        | PredictionKind::RateAtMost(f)
        | PredictionKind::Bound { fit: f, .. } => {
            let mut v: Vec<(&str, &crate::spec::expr::Expr)> = Vec::new();
            if let Some(e) = &f.divide_by {
                v.push(("the bound it divides by", e));
            }
            if let Some(e) = f.predicted.expr() {
                v.push(("the predicted expression", e));
            }
            v
        }
        PredictionKind::Event { .. } => vec![],
    };
    for r in recs {
        if let Some(vals) = r.metrics.get(&p.metric) {
            if let Some((i, v)) = vals.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return bad(
                    &r.label,
                    format!("metric `{}` at replicate {i}", p.metric),
                    *v,
                );
            }
        }
        for (what, e) in &exprs {
            if let Ok(v) = e.eval_map(&r.vars) {
                if !v.is_finite() {
                    return bad(&r.label, format!("{what} `{}`", e), v);
                }
            }
        }
    }
    Ok(())
}

/// Measures and judges one prediction over `recs` (variant fields are set by the caller).
/// `exact`: the metric is an exact computation ([`crate::spec::Claim::is_exact`]), so a
/// mean over a point's replicates has no sampling error (`over: means` takes the value
/// itself as its interval, and one replicate suffices; the caller checks that the
/// replicates agree to the bit).
pub fn evaluate(
    p: &Prediction,
    recs: &[&PointRecord],
    boot_seed: &SeedPath,
    exact: bool,
) -> Result<PredictionResult, String> {
    inputs_finite(p, recs)?;
    let mut res = PredictionResult::unjudged(p, 0, recs.len());
    match &p.kind {
        PredictionKind::Exponent(f) | PredictionKind::RateAtMost(f) => {
            let fit = fit_records(recs, &p.metric, f, boot_seed)?;
            res.x = Some(f.x.clone());
            res.estimate = Some(fit.slope);
            res.ci = Some(fit.ci);
            res.predicted = Some(fit.predicted);
            res.tolerance = Some(f.tolerance);
            res.verdict = match p.kind {
                PredictionKind::Exponent(_) => {
                    fit::judge_exponent(fit.ci, fit.slope, fit.predicted, f.tolerance)
                }
                _ => fit::judge_rate_at_most(fit.ci, fit.predicted, f.tolerance),
            };
            res.detail.stderr = Some(fit.stderr);
            res.detail.r2 = Some(fit.r2);
            res.detail.intercept = Some(fit.intercept);
            res.detail.bootstrap_ci = fit.bootstrap_ci;
        }
        PredictionKind::Bound {
            fit: f,
            upper,
            constant,
        } => {
            let fit = fit_records(recs, &p.metric, f, boot_seed)?;
            res.x = Some(f.x.clone());
            res.estimate = Some(fit.slope);
            res.ci = Some(fit.ci);
            res.predicted = Some(0.0);
            res.tolerance = Some(f.tolerance);
            res.verdict = if *upper {
                fit::judge_rate_at_most(fit.ci, 0.0, f.tolerance)
            } else {
                // Omega(): the ratio must not shrink, i.e. -slope at most the tolerance.
                fit::judge_rate_at_most((-fit.ci.1, -fit.ci.0), 0.0, f.tolerance)
            };
            res.detail.stderr = Some(fit.stderr);
            res.detail.r2 = Some(fit.r2);
            res.detail.intercept = Some(fit.intercept);
            // A registered constant is judged on each point's t interval, which needs 2
            // replicates, unless the metric is exact (as `over: means`).
            if let (Some(_), false) = (constant, exact) {
                if let Some((x, ys)) = fit.data.iter().find(|(_, ys)| ys.len() < 2) {
                    return Err(format!(
                        "{}: a registered constant needs at least 2 replicates per point, got \
                         {} at {} = {} (one suffices for an exact metric: `external.exact`)",
                        p.name,
                        ys.len(),
                        f.x,
                        fit::fmt_exact(*x)
                    ));
                }
            }
            res.detail.implied_constant = implied_constant(&fit.data, *upper, f.confidence, exact);
            // A registered constant is a finite statement (at every size of the sweep):
            // the implied constant's interval against it.
            if let (Some(c), Some((_, (lo, hi)))) = (constant, res.detail.implied_constant) {
                let v = if *upper {
                    if lo > c.value {
                        crate::fit::Verdict::Refuted
                    } else if hi <= c.value {
                        crate::fit::Verdict::Holds
                    } else {
                        crate::fit::Verdict::Inconclusive
                    }
                } else if hi < c.value {
                    crate::fit::Verdict::Refuted
                } else if lo >= c.value {
                    crate::fit::Verdict::Holds
                } else {
                    crate::fit::Verdict::Inconclusive
                };
                res.detail.constant_judged = Some((c.value, v));
            }
            // The bound's own change over the judged points, and the ratio's slope
            // were the metric constant: a holds whose interval contains that slope
            // cannot tell the bound from a constant (issue 31, item 4; `bound_rules`).
            let bvals: Vec<f64> = recs
                .iter()
                .filter_map(|r| f.divide_by.as_ref()?.eval_map(&r.vars).ok())
                .collect();
            let xs: Vec<f64> = fit.data.iter().map(|(x, _)| *x).collect();
            let (bmin, bmax) = minmax(&bvals);
            let (xmin, xmax) = minmax(&xs);
            if bmin > 0.0 && xmin > 0.0 {
                res.detail.bound_change = Some(bmax / bmin);
                res.detail.ratio_interval_change =
                    Some(((fit.ci.1 - fit.ci.0) * (xmax / xmin).ln()).exp());
            }
            res.detail.constant_term_slope = log_slope(
                &recs
                    .iter()
                    .filter_map(|r| {
                        let b = f.divide_by.as_ref()?.eval_map(&r.vars).ok()?;
                        let x = *r.vars.get(&f.x)?;
                        (b > 0.0 && x > 0.0).then(|| (x.ln(), b.ln()))
                    })
                    .collect::<Vec<_>>(),
            )
            .map(|s| -s);
        }
        PredictionKind::Event { alpha, confidence } => {
            let vals: Vec<f64> = recs
                .iter()
                .flat_map(|r| r.metrics[&p.metric].iter().copied())
                .collect();
            let successes = vals.iter().filter(|v| **v >= 0.5).count() as u64;
            let trials = vals.len() as u64;
            let (verdict, ci) = fit::try_judge_event(successes, trials, *alpha, *confidence)
                .map_err(|e| e.to_string())?;
            res.estimate = Some(successes as f64 / trials as f64);
            res.ci = Some(ci);
            res.predicted = Some(1.0 - alpha);
            res.verdict = verdict;
            res.detail.successes = Some(successes);
            res.detail.trials = Some(trials);
            for r in recs {
                let fails = r.metrics[&p.metric].iter().filter(|v| **v < 0.5).count();
                if fails > 0 {
                    res.detail.violations.push(format!(
                        "{}: {fails}/{} replicates without the event",
                        r.label,
                        r.metrics[&p.metric].len()
                    ));
                }
            }
        }
        PredictionKind::Inequality {
            op,
            rhs,
            over: InequalityOver::Runs,
        } => {
            let mut satisfied = Vec::new();
            let mut worst: Option<f64> = None;
            for r in recs {
                let ys = &r.metrics[&p.metric];
                let (bs, _) = rhs_values(rhs, r, ys.len())?;
                for (&a, &b) in ys.iter().zip(&bs) {
                    let ok = op.holds(a, b);
                    satisfied.push(ok);
                    let margin = violation_margin(*op, a, b);
                    worst = Some(worst.map_or(margin, |w: f64| w.max(margin)));
                    if !ok {
                        res.detail.violations.push(format!(
                            "{}: {} = {} not {} {}",
                            r.label,
                            p.metric,
                            fit::fmt_exact(a),
                            op.symbol(),
                            fit::fmt_exact(b)
                        ));
                    }
                }
            }
            res.estimate = worst;
            res.predicted = Some(0.0);
            res.verdict = fit::judge_inequality(&satisfied);
            res.detail.successes = Some(satisfied.iter().filter(|s| **s).count() as u64);
            res.detail.trials = Some(satisfied.len() as u64);
        }
        PredictionKind::Inequality {
            op,
            rhs,
            over: InequalityOver::Means { confidence },
        } => {
            // Simultaneous intervals: Bonferroni over the points, two-sided at each.
            let per_point = 1.0 - (1.0 - confidence) / recs.len().max(1) as f64;
            let (mut holds, mut violated) = (0u64, false);
            let mut worst: Option<(f64, (f64, f64))> = None;
            // The point whose interval lies furthest on the violating side (its best end
            // largest): the one a refutation is shown with, so that a refuted row never
            // shows an interval that straddles the bound.
            let mut most: Option<(f64, (f64, f64))> = None;
            for r in recs {
                let raw = &r.metrics[&p.metric];
                let (bs, per_run) = rhs_values(rhs, r, raw.len())?;
                // An rhs of metrics: the mean of each run's difference metric - rhs,
                // against 0 (paired, replicate by replicate).
                let (ys, b): (Vec<f64>, f64) = if per_run {
                    (raw.iter().zip(&bs).map(|(y, b)| y - b).collect(), 0.0)
                } else {
                    (raw.clone(), bs.first().copied().unwrap_or(f64::NAN))
                };
                if ys.len() < 2 && !exact {
                    return Err(format!(
                        "{}: `over: means` needs at least 2 replicates per point, got {} (one \
                         suffices for an exact metric: `external.exact`)",
                        r.label,
                        ys.len()
                    ));
                }
                let m = ys.len() as f64;
                let mean = ys.iter().sum::<f64>() / m;
                // An exact metric has no sampling error: its interval is its value.
                let (var, half) = if exact {
                    (0.0, 0.0)
                } else {
                    let var = ys.iter().map(|y| (y - mean) * (y - mean)).sum::<f64>() / (m - 1.0);
                    let t = fit::student_t_quantile(1.0 - (1.0 - per_point) / 2.0, m - 1.0)
                        .map_err(|e| e.to_string())?;
                    (var, t * (var / m).sqrt())
                };
                res.detail.point_margins.push((
                    violation_margin(*op, mean, b),
                    (var / m).sqrt(),
                    1.0 - (1.0 - per_point) / 2.0,
                ));
                // Margins in the direction of a violation (> 0 violates) at both ends.
                let (lo, hi) = (mean - half, mean + half);
                let (m_best, m_worst) = match op {
                    CmpOp::Le | CmpOp::Lt => (lo - b, hi - b),
                    CmpOp::Ge | CmpOp::Gt => (b - hi, b - lo),
                };
                let ok = op.holds(
                    if matches!(op, CmpOp::Le | CmpOp::Lt) {
                        hi
                    } else {
                        lo
                    },
                    b,
                );
                let wrong_side = m_best > 0.0;
                if ok {
                    holds += 1;
                } else {
                    let what = if per_run {
                        format!("{} - ({rhs})", p.metric)
                    } else {
                        p.metric.clone()
                    };
                    res.detail.violations.push(format!(
                        "{}: mean {} = {}, interval [{}, {}] {} {} {}",
                        r.label,
                        what,
                        fit::fmt_exact(mean),
                        fit::fmt_exact(lo),
                        fit::fmt_exact(hi),
                        if wrong_side {
                            "wholly not"
                        } else {
                            "not wholly"
                        },
                        op.symbol(),
                        fit::fmt_exact(b)
                    ));
                }
                violated |= wrong_side;
                // The point closest to failing: the largest violating end of its interval.
                let margin = violation_margin(*op, mean, b);
                if worst.is_none_or(|(_, (_, w))| m_worst > w) {
                    worst = Some((margin, (m_best, m_worst)));
                }
                if most.is_none_or(|(_, (b, _))| m_best > b) {
                    most = Some((margin, (m_best, m_worst)));
                }
            }
            // Refuted: the point violating most clearly; otherwise the point closest to
            // failing. Its mean margin and interval (> 0 violates).
            let shown = if violated { most } else { worst };
            res.estimate = shown.map(|w| w.0);
            res.ci = shown.map(|w| w.1);
            res.predicted = Some(0.0);
            res.verdict = if recs.is_empty() {
                fit::Verdict::Inconclusive
            } else if violated {
                fit::Verdict::Refuted
            } else if holds == recs.len() as u64 {
                fit::Verdict::Holds
            } else {
                fit::Verdict::Inconclusive
            };
            res.detail.successes = Some(holds);
            res.detail.trials = Some(recs.len() as u64);
        }
    }
    Ok(res)
}

/// Least-squares slope of `(ln x, ln y)` pairs; `None` with fewer than two distinct x.
fn log_slope(pts: &[(f64, f64)]) -> Option<f64> {
    let n = pts.len() as f64;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let sxx: f64 = pts.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    (pts.len() >= 2 && sxx > 0.0).then(|| sxy / sxx)
}

fn minmax(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// The implied constant of a bound: the largest (upper) or smallest (lower) mean of
/// metric / bound over the points, with that point's t interval at `confidence`
/// (Bonferroni over the points). `data` holds the replicate ratios per point. None when
/// a point has fewer than 2 replicates of a metric that is not `exact` (no interval);
/// an exact metric's interval is its value.
fn implied_constant(
    data: &[(f64, Vec<f64>)],
    upper: bool,
    confidence: f64,
    exact: bool,
) -> Option<(f64, (f64, f64))> {
    let per_point = 1.0 - (1.0 - confidence) / data.len().max(1) as f64;
    let mut best: Option<(f64, (f64, f64))> = None;
    for (_, ys) in data {
        let m = ys.len() as f64;
        if m < 1.0 {
            continue;
        }
        let mean = ys.iter().sum::<f64>() / m;
        let half = if exact {
            0.0
        } else if m >= 2.0 {
            let var = ys.iter().map(|y| (y - mean) * (y - mean)).sum::<f64>() / (m - 1.0);
            fit::student_t_quantile(1.0 - (1.0 - per_point) / 2.0, m - 1.0).ok()? * (var / m).sqrt()
        } else {
            return None;
        };
        let better = match best {
            None => true,
            Some((b, _)) => (upper && mean > b) || (!upper && mean < b),
        };
        if better {
            best = Some((mean, (mean - half, mean + half)));
        }
    }
    best
}

/// How far `a` is from satisfying `a <op> b`, signed so that > 0 violates.
fn violation_margin(op: CmpOp, a: f64, b: f64) -> f64 {
    match op {
        CmpOp::Le | CmpOp::Lt => a - b,
        CmpOp::Ge | CmpOp::Gt => b - a,
    }
}

/// A fit with its prediction resolved.
pub struct ResolvedFit {
    pub slope: f64,
    pub intercept: f64,
    pub stderr: f64,
    pub ci: (f64, f64),
    pub r2: f64,
    pub predicted: f64,
    pub bootstrap_ci: Option<(f64, f64)>,
    /// (x, replicate values after division) per point, for plots.
    pub data: Vec<(f64, Vec<f64>)>,
    /// Intercept of the predicted line through the data's centre of mass (for plots).
    pub predicted_intercept: f64,
}

/// Fits `metric / divide_by` against `x` over the records (one record per point).
///
/// The predicted exponent is `predicted`, or the least-squares log-log slope over the
/// same points of `predicted_rate_of` (a bound) or `predicted_value_of` (an exact value;
/// metric names in it stand for the metric's mean over the point's replicates).
pub fn fit_records(
    recs: &[&PointRecord],
    metric: &str,
    f: &FitSpec,
    boot_seed: &SeedPath,
) -> Result<ResolvedFit, String> {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut pred_vals = Vec::new();
    for r in recs {
        let x = *r
            .vars
            .get(&f.x)
            .ok_or_else(|| format!("sweep variable `{}` missing", f.x))?;
        let div = match &f.divide_by {
            Some(e) => e.eval_map(&r.vars).map_err(|e| e.to_string())?,
            None => 1.0,
        };
        xs.push(x);
        ys.push(
            r.metrics[metric]
                .iter()
                .map(|v| v / div)
                .collect::<Vec<f64>>(),
        );
        if let Some(e) = f.predicted.expr() {
            let mut vars: BTreeMap<String, f64> = r.vars.clone();
            if matches!(f.predicted, Predicted::ValueOf(_)) {
                for (m, v) in &r.metrics {
                    vars.insert(m.clone(), v.iter().sum::<f64>() / v.len() as f64);
                }
            }
            let v = e.eval_map(&vars).map_err(|e| e.to_string())?;
            pred_vals.push(vec![v / div]);
        }
    }
    let mut fit = fit::fit_power_law(&xs, &ys, f.confidence).map_err(|e| e.to_string())?;
    let predicted = match &f.predicted {
        Predicted::Value(v) => *v,
        Predicted::ValueOf(_) => {
            fit::fit_power_law(&xs, &pred_vals, f.confidence)
                .map_err(|e| format!("predicted exponent: {e}"))?
                .slope
        }
    };
    if matches!(f.predicted, Predicted::ValueOf(_)) {
        // An exact finite-size prediction is curved in log-log, and so is the measurement
        // it predicts: the slopes of both are least-squares slopes over the same points,
        // so slope(y) - slope(exact) is the slope of ln(mean y / exact). Its interval comes
        // from the residuals of that ratio; the curvature both share is predicted, not
        // uncertain, and counting it (as the fit of y alone does) gives an interval that
        // does not shrink with replicates.
        let ratios: Vec<Vec<f64>> = ys
            .iter()
            .zip(&pred_vals)
            .map(|(y, e)| y.iter().map(|v| v / e[0]).collect())
            .collect();
        let rf = fit::fit_power_law(&xs, &ratios, f.confidence)
            .map_err(|e| format!("measured / predicted: {e}"))?;
        let shift = fit.slope - rf.slope;
        fit.ci = (rf.ci.0 + shift, rf.ci.1 + shift);
        fit.stderr = rf.stderr;
    }
    let bootstrap_ci = if f.bootstrap > 0 && ys.iter().all(|y| y.len() > 1) {
        fit::bootstrap_slope_ci(
            &xs,
            &ys,
            fit::BOOTSTRAP_REPORT_CONFIDENCE,
            f.bootstrap,
            &mut boot_seed.rng(),
        )
        .ok()
    } else {
        None
    };
    // Line of the predicted slope through the centroid of (ln x, ln mean y).
    let lx: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let ly: Vec<f64> = ys
        .iter()
        .map(|y| (y.iter().sum::<f64>() / y.len() as f64).ln())
        .collect();
    let cx = lx.iter().sum::<f64>() / lx.len() as f64;
    let cy = ly.iter().sum::<f64>() / ly.len() as f64;
    Ok(ResolvedFit {
        slope: fit.slope,
        intercept: fit.intercept,
        stderr: fit.stderr,
        ci: fit.ci,
        r2: fit.r2,
        predicted,
        bootstrap_ci,
        data: xs.into_iter().zip(ys).collect(),
        predicted_intercept: cy - predicted * cx,
    })
}
