//! Power before verdicts (issue 31, item 4): what each verdict row could detect — the
//! smallest deviation from the prediction that the sweep and the replicates would
//! reveal at the row's level — and, for an inconclusive row, the replicates that would
//! resolve it (intervals shrink like 1/sqrt(replicates); an approximation, said so), or
//! why none would (an estimate on the edge, a bound that changes less over the sweep
//! than the interval).
use super::PredictionResult;
use crate::fit::Verdict;
use crate::spec::{InequalityOver, Prediction, PredictionKind};

fn g(x: f64) -> String {
    crate::fit::fmt_num(x)
}

/// Replicates per point that would shrink a half-width `half` (at `reps`) to `needed`.
fn resolve(reps: usize, half: f64, needed: f64) -> String {
    if !(needed > 0.0 && half.is_finite()) {
        return "the estimate sits on the edge of the verdict regions: no number of replicates resolves it; a prediction registered with its finite-size form could".into();
    }
    let k = ((half / needed).powi(2) * reps as f64).ceil();
    if k > 1e6 {
        "more than 1e6 replicates per point would be needed: not resolvable at these sizes".into()
    } else {
        format!(
            "about {} replicates per point (now {reps}) would resolve it",
            k as u64
        )
    }
}

/// What a row on an exact metric (`System::exact_metrics`) says in place of a power line.
pub const EXACT: &str = "exact computation: no sampling error";

/// What checking every one of `n` independent runs detects: a violation that occurs in
/// a share f of the runs is seen at least once with probability 1 - (1 - f)^n, which is
/// 0.95 from f = 1 - 0.05^(1/n) (about 3/n for large n).
fn runs_checked(n: u64) -> String {
    let f = 1.0 - 0.05f64.powf(1.0 / n as f64);
    format!(
        "every one of the {n} runs is checked: a violation occurring in a share {} of the runs or more is seen with probability 0.95",
        g(f)
    )
}

/// Why the replicates of an exact metric (`System::exact_metrics`) at some point of
/// `recs` are not all the same bits, if they are not: an exact computation draws
/// nothing from its seed, so different values mean the declaration is wrong.
pub fn replicates_differ(metric: &str, recs: &[&super::PointRecord]) -> Option<String> {
    recs.iter().find_map(|r| {
        let v = r.metrics.get(metric)?;
        let first = v.first()?;
        let same = |x: &f64| x.to_bits() == first.to_bits() || (x.is_nan() && first.is_nan());
        (!v.iter().all(same)).then(|| {
            format!(
                "`{metric}` is declared an exact computation (no draw from the seed) but its {} replicates differ at {} (from {} to {})",
                v.len(),
                r.label,
                g(v.iter().copied().fold(f64::INFINITY, f64::min)),
                g(v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            )
        })
    })
}

/// The power statement of one judged row; `reps` is the replicates per point.
pub fn describe(p: &Prediction, r: &PredictionResult, reps: usize) -> String {
    let inconclusive = r.verdict == Verdict::Inconclusive;
    let Some((lo, hi)) = r.ci else {
        return match &p.kind {
            PredictionKind::Inequality {
                over: InequalityOver::Runs,
                ..
            } => {
                let n = r.detail.trials.unwrap_or(0).max(1);
                runs_checked(n)
            }
            _ => "no interval (nothing judged)".into(),
        };
    };
    let (w, half) = (hi - lo, (hi - lo) / 2.0);
    // A bound whose ratio clearly grows (its interval wholly beyond the tolerance, the
    // row inconclusive only because finite data cannot refute an asymptotic rate):
    // replicates narrow an interval that already excludes the bound's trend, so no
    // number of them resolves the row; a registered constant can.
    if let (PredictionKind::Bound { constant, .. }, true, Some(_)) =
        (&p.kind, inconclusive, &r.trend)
    {
        let c = r.detail.constant_judged;
        return format!(
            "the ratio's change is resolved (interval [{}, {}] at {reps} replicates, beyond the tolerance): more replicates do not resolve the row; {}",
            g(lo),
            g(hi),
            match (constant, c) {
                (Some(_), Some((c, v))) => format!(
                    "its registered constant {} is judged apart ({}): a finite statement, which the growing trend does not settle",
                    g(c),
                    format!("{v:?}").to_lowercase()
                ),
                _ => "an asymptotic bound is judged by a registered implied constant (`constant: {at_most: ..., source: ...}`) or at larger sizes".into(),
            }
        );
    }
    let est = r.estimate.unwrap_or(f64::NAN);
    let pred = r.predicted.unwrap_or(0.0);
    let tol = r.tolerance.unwrap_or(0.0);
    let mut s = match &p.kind {
        PredictionKind::Exponent(_) => {
            let mut s = format!(
                "detects an exponent off {} by more than {} (interval width {} at {reps} replicates)",
                g(pred),
                g(tol + w),
                g(w)
            );
            if inconclusive {
                let d = ((est - (pred - tol)).abs()).min((est - (pred + tol)).abs());
                s.push_str("; ");
                s.push_str(&resolve(reps, half, d));
            }
            s
        }
        PredictionKind::RateAtMost(_) => {
            let mut s = format!(
                "detects a slope above {} + {} by more than {} (interval width at {reps} replicates)",
                g(pred),
                g(tol),
                g(w)
            );
            if inconclusive {
                s.push_str("; ");
                s.push_str(&resolve(reps, half, (est - (pred + tol)).abs()));
            }
            s
        }
        PredictionKind::Bound { fit, upper, .. } => {
            let mut s = format!(
                "detects the ratio {} along {} faster than {}^{} (interval width {} at {reps} replicates)",
                if *upper { "growing" } else { "shrinking" },
                fit.x,
                fit.x,
                g(tol + w),
                g(w)
            );
            if let (Some(b), Some(c)) = (r.detail.bound_change, r.detail.ratio_interval_change) {
                s.push_str(&format!(
                    "; the bound changes by a factor {} over the judged points, the interval of the ratio's change spans a factor {}",
                    g(b),
                    g(c)
                ));
            }
            // Where a constant metric would put the ratio's slope (`bound_rules`).
            let s0 = r.detail.constant_term_slope;
            let cannot_tell = s0.is_some_and(|s0| lo <= s0 && s0 <= hi);
            if let Some(s0) = s0 {
                s.push_str(&format!(
                    "; a constant {} would give the ratio a slope of {}: {}",
                    p.metric,
                    g(s0),
                    if cannot_tell {
                        "inside the interval, so the row cannot tell the bound from a constant and is not judged"
                    } else {
                        "outside the interval"
                    }
                ));
            }
            if inconclusive {
                s.push_str("; ");
                match s0 {
                    // Not judged because the interval contains the constant's slope:
                    // replicates shrink its half-width like 1/sqrt(reps), so the row
                    // resolves once it is narrower than the distance to that slope.
                    Some(s0) if cannot_tell && est != s0 => {
                        s.push_str(&resolve(reps, half, (est - s0).abs()))
                    }
                    _ => {
                        let edge = if *upper { tol } else { -tol };
                        s.push_str(&resolve(reps, half, (est - edge).abs()));
                    }
                }
            }
            s
        }
        PredictionKind::Event { alpha, .. } => {
            let target = 1.0 - alpha;
            let mut s = format!(
                "detects P(event) below {} (interval width {} over {} runs)",
                g((target - w).max(0.0)),
                g(w),
                r.detail.trials.unwrap_or(0)
            );
            if inconclusive {
                let d = (est - target).abs();
                let n = r.detail.trials.unwrap_or(0) as f64;
                if d > 0.0 && n > 0.0 {
                    let k = ((half / d).powi(2) * n).ceil();
                    s.push_str(&format!(
                        "; about {} runs (now {}) would resolve it",
                        k as u64, n as u64
                    ));
                } else {
                    s.push_str("; the frequency equals 1 - alpha: no number of runs resolves it");
                }
            }
            s
        }
        PredictionKind::Inequality { .. } => {
            let mut s = format!(
                "detects a mean beyond the bound by more than {} at the point closest to it (interval width at {reps} replicates)",
                g(w)
            );
            if inconclusive {
                s.push_str("; ");
                s.push_str(&resolve(reps, half, est.abs()));
            }
            s
        }
    };
    if s.is_empty() {
        s = "—".into();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{replicates_differ, runs_checked};
    use crate::judge::PointRecord;

    fn rec(values: &[f64]) -> PointRecord {
        PointRecord {
            sweep: "s".into(),
            variant: "v".into(),
            index: 0,
            label: "n=8".into(),
            vars: Default::default(),
            metrics: [("eps".to_string(), values.to_vec())].into(),
        }
    }

    /// 1 - (1 - f)^n = 0.95: one run sees only a violation in 95 % of the runs, 60 runs
    /// one in 4.9 % (the rule of three's 3/n is 5 %).
    #[test]
    fn the_share_of_runs_seen_is_exact() {
        assert!(
            runs_checked(1).contains("share 0.9500 "),
            "{}",
            runs_checked(1)
        );
        assert!(
            runs_checked(60).contains("share 0.04870 "),
            "{}",
            runs_checked(60)
        );
    }

    /// Replicates of an exact metric that differ in the last bit are reported; equal
    /// ones (NaN included) are not.
    #[test]
    fn replicates_of_an_exact_metric_must_be_the_same_bits() {
        let same = rec(&[0.5, 0.5, 0.5]);
        let nan = rec(&[f64::NAN, f64::NAN]);
        assert_eq!(replicates_differ("eps", &[&same, &nan]), None);
        let off = rec(&[0.5, f64::from_bits(0.5f64.to_bits() + 1)]);
        let why = replicates_differ("eps", &[&same, &off]).unwrap();
        assert!(why.contains("differ at n=8"), "{why}");
    }
}
