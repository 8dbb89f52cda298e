//! Paired contrasts (`minus:` of an inequality over means, an `exponent` or a
//! `rate_at_most`, [`crate::spec::Prediction::minus`]): the records a contrast is judged
//! on.
use super::PointRecord;
use crate::spec::Prediction;

/// A fitted contrast (`exponent`, `rate_at_most` with `minus:`) is a log-log fit of the
/// mean paired difference, defined only where that mean is positive. A raw metric is
/// positive by its nature and a non-positive mean is an error of the run; a difference
/// can close or reverse, which is an outcome, not an error: the row is inconclusive, and
/// says at which point and by how much (`None`: every mean is positive, or the prediction
/// is not a fitted contrast).
pub(super) fn undefined_log_fit(p: &Prediction, recs: &[&PointRecord]) -> Option<String> {
    p.minus.as_ref()?;
    p.kind.fit_spec()?;
    recs.iter().find_map(|r| {
        let v = r.metrics.get(&p.metric)?;
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (v.is_empty() || mean.is_nan() || mean <= 0.0).then(|| {
            format!(
                "Not fitted: the mean paired difference at {} is {} (not positive), so its log-log slope is undefined: the gap has closed or reversed there.",
                r.label,
                crate::fit::fmt_exact(mean)
            )
        })
    })
}

/// A contrast's records (`minus:`): at each point of `own`, the metric minus the
/// subtracted variant's at the same point, replicate by replicate (the first `k` of each,
/// `k` the smaller count: the run draws the subtracted variant's replicates whenever it
/// draws the judged one's, so `k` is every replicate of the judged variant). Other
/// metrics (a hypothesis's) are the judged variant's own.
pub(crate) fn records(
    own: &[&PointRecord],
    all: &[&PointRecord],
    metric: &str,
    minus: &str,
) -> Result<Vec<PointRecord>, String> {
    own.iter()
        .map(|r| {
            let other = all
                .iter()
                .find(|x| x.sweep == r.sweep && x.variant == minus && x.index == r.index)
                .ok_or_else(|| {
                    format!(
                        "point {}: no replicate of variant `{minus}` to subtract",
                        r.label
                    )
                })?;
            let (a, b) = match (r.metrics.get(metric), other.metrics.get(metric)) {
                (Some(a), Some(b)) => (a, b),
                _ => return Err(format!("point {}: metric `{metric}` missing", r.label)),
            };
            let mut d = (*r).clone();
            d.metrics.insert(
                metric.to_string(),
                a.iter().zip(b).map(|(x, y)| x - y).collect(),
            );
            Ok(d)
        })
        .collect()
}
