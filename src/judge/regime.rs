//! Which sweep points a prediction may be judged on: the theorem's hypotheses
//! (the registry's, named in `under`, and any inline design conditions) at each point,
//! over parameters and measured quantities alike, and whether a negative control differs from every
//! main variant there at all.
use super::PointRecord;
use crate::spec::{Assumption, Violation};
use serde::Serialize;
use std::collections::BTreeMap;

/// How a prediction's sweep points stand against its hypotheses.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RegimeCheck {
    /// Points inside every hypothesis (the ones judged).
    pub inside: usize,
    /// All points of the sweep.
    pub total: usize,
    /// Per violated hypothesis: how many points fail it and the worst of them.
    pub violated: Vec<ViolatedAssumption>,
}

/// One hypothesis that some points of the sweep fail.
#[derive(Clone, Debug, Serialize)]
pub struct ViolatedAssumption {
    pub assumption: String,
    pub source: String,
    pub failing_points: usize,
    /// The failing point farthest from the hypothesis, with both sides' values.
    pub worst: String,
}

impl RegimeCheck {
    /// "all 6 points inside", or "2/6 points inside; `n >= d` fails at 4 (worst ...)".
    pub fn summary(&self) -> String {
        if self.violated.is_empty() {
            return if self.total == 0 {
                "no hypotheses declared".into()
            } else {
                format!("all {} points inside the hypotheses", self.total)
            };
        }
        let v: Vec<String> = self
            .violated
            .iter()
            .map(|v| {
                format!(
                    "{} at {}/{} points (worst: {})",
                    v.assumption, v.failing_points, self.total, v.worst
                )
            })
            .collect();
        format!(
            "{}/{} points inside; fails: {}",
            self.inside,
            self.total,
            v.join("; ")
        )
    }
}

/// Per assumption: how many points fail it, and the farthest (distance, violation, label).
type PerAssumption = (usize, Option<(f64, Violation, String)>);

/// A point's variables and, for measured hypotheses, each metric's mean over the point's
/// replicates (a metric named like a variable does not shadow it).
pub fn point_values(r: &PointRecord) -> BTreeMap<String, f64> {
    let mut vars = r.vars.clone();
    for (m, ys) in &r.metrics {
        if !vars.contains_key(m) && !ys.is_empty() {
            vars.insert(m.clone(), ys.iter().sum::<f64>() / ys.len() as f64);
        }
    }
    vars
}

/// Splits `recs` into the points inside every assumption and the regime summary. A
/// hypothesis may name metrics (a measured hypothesis): their replicate means are used.
/// An asymptotic hypothesis ([`crate::spec::Trend`]) is checked along the sweep, its
/// points taken in the order of `x` (the prediction's x variable; sweep order without
/// one): a sweep that does not move its ratio the way the statement needs has no point
/// inside it.
pub fn filter<'a>(
    assumptions: &[Assumption],
    recs: &[&'a PointRecord],
    x: Option<&str>,
) -> Result<(Vec<&'a PointRecord>, RegimeCheck), String> {
    let mut inside = Vec::new();
    let mut per: Vec<PerAssumption> = vec![(0, None); assumptions.len()];
    let mut off_path: Vec<ViolatedAssumption> = Vec::new();
    for a in assumptions {
        if let Some(trend) = a.trend {
            if let Some(v) = along(a, trend, recs, x)? {
                off_path.push(v);
            }
        }
    }
    for r in recs {
        let mut ok = true;
        let vars = point_values(r);
        for (i, a) in assumptions.iter().enumerate() {
            if let Some(v) = a
                .check(&vars)
                .map_err(|e| format!("assumption `{}` at {}: {e}", a.text, r.label))?
            {
                ok = false;
                // Distance from the hypothesis: |ln(lhs/rhs)| when both are positive.
                let dist = if v.lhs > 0.0 && v.rhs > 0.0 {
                    (v.lhs / v.rhs).ln().abs()
                } else {
                    (v.lhs - v.rhs).abs()
                };
                let e = &mut per[i];
                e.0 += 1;
                if e.1.as_ref().is_none_or(|(d, _, _)| dist > *d) {
                    e.1 = Some((dist, v, r.label.clone()));
                }
            }
        }
        if ok && off_path.is_empty() {
            inside.push(*r);
        }
    }
    let violated = off_path
        .into_iter()
        .chain(
            assumptions
                .iter()
                .zip(per)
                .filter_map(|(a, (count, worst))| {
                    worst.map(|(_, v, label)| ViolatedAssumption {
                        assumption: a.text.clone(),
                        source: a.source.clone(),
                        failing_points: count,
                        worst: format!("{label}: {:.4} vs {:.4}, {}", v.lhs, v.rhs, v.margin()),
                    })
                }),
        )
        .collect();
    let check = RegimeCheck {
        inside: inside.len(),
        total: recs.len(),
        violated,
    };
    Ok((inside, check))
}

/// The along-the-sweep check of one asymptotic hypothesis: `None` when the sweep moves
/// its ratio as needed, else the violation (every point counts as failing it; `worst`
/// names the ratio at the first and last points).
fn along(
    a: &Assumption,
    trend: crate::spec::Trend,
    recs: &[&PointRecord],
    x: Option<&str>,
) -> Result<Option<ViolatedAssumption>, String> {
    let mut pts: Vec<(f64, f64, &str)> = Vec::with_capacity(recs.len());
    for (i, r) in recs.iter().enumerate() {
        let vars = point_values(r);
        let ratio = a
            .lhs
            .eval_map(&vars)
            .map_err(|e| format!("assumption `{}` at {}: {e}", a.text, r.label))?;
        let key = x.and_then(|x| vars.get(x).copied()).unwrap_or(i as f64);
        pts.push((key, ratio, r.label.as_str()));
    }
    // Stable: points with one x keep their sweep order.
    pts.sort_by(|p, q| p.0.total_cmp(&q.0));
    let ratios: Vec<f64> = pts.iter().map(|p| p.1).collect();
    Ok(trend.check(&ratios).map(|why| {
        let (first, last) = (pts.first(), pts.last());
        let ends = match (first, last) {
            (Some(f), Some(l)) => format!(
                "ratio {} at {} -> {} at {}: {why}",
                crate::fit::fmt_num(f.1),
                f.2,
                crate::fit::fmt_num(l.1),
                l.2
            ),
            _ => why,
        };
        ViolatedAssumption {
            assumption: a.text.clone(),
            source: a.source.clone(),
            failing_points: recs.len(),
            worst: ends,
        }
    }))
}
