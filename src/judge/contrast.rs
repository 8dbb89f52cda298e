//! Paired contrasts (`minus:` of an inequality over means, [`crate::spec::Prediction::minus`]):
//! the records a contrast is judged on.
use super::PointRecord;

/// A contrast's records (`minus:`): at each point of `own`, the metric minus the
/// subtracted variant's at the same point, replicate by replicate (the first `k` of each,
/// `k` the smaller count: the run draws the subtracted variant's replicates whenever it
/// draws the judged one's, so `k` is every replicate of the judged variant). Other
/// metrics (a hypothesis's) are the judged variant's own.
pub(super) fn records(
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
