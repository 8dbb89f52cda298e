//! The rules of a `bound` row beyond its fit ([`bound_rules`]): never refuted on a main
//! variant, withheld where it cannot tell the bound from a constant, judged against a
//! registered constant.
use super::PredictionResult;
use crate::fit::Verdict;

/// A bound (O(), Omega()) on a main variant is never refuted by finite data: a ratio
/// that grows significantly is a trend, stated, and the row is inconclusive; for a
/// negative control the same growth is what catching it means. A holds whose interval
/// of the ratio's slope contains the slope a constant metric would give (minus the
/// bound's own slope) cannot tell the bound from a constant: not judged (inconclusive).
/// One whose interval excludes it can: the data would have shown a metric that does not
/// follow the bound. (Until 2026-12-02 the rule compared the interval's width with the
/// bound's change, which withheld rows whose interval lay far from both readings.)
pub(super) fn bound_rules(res: &mut PredictionResult, control: bool) {
    let x = res.x.clone().unwrap_or_default();
    if res.verdict == Verdict::Refuted && !control {
        let (lo, hi) = res.ci.unwrap_or((f64::NAN, f64::NAN));
        res.trend = Some(format!(
            "the ratio to the bound changes like {x}^{} (interval [{}, {}]) along the sweep: \
             at these sizes the implied constant is not yet settled; an asymptotic bound is \
             not refuted by finite data",
            crate::fit::fmt_num(res.estimate.unwrap_or(f64::NAN)),
            crate::fit::fmt_num(lo),
            crate::fit::fmt_num(hi)
        ));
        res.verdict = Verdict::Inconclusive;
    }
    if let (Some(s0), Some((lo, hi))) = (res.detail.constant_term_slope, res.ci) {
        if res.verdict == Verdict::Holds && lo <= s0 && s0 <= hi {
            res.verdict = Verdict::Inconclusive;
        }
    }
    // A registered constant (from the paper or its proof, at every size) is a finite
    // statement: exceeding it refutes, on a main variant too; the trend alone on one
    // instance cannot see a rate error whose ratio stays flat over the sweep.
    if let (Some((c, v)), true) = (
        res.detail.constant_judged,
        res.verdict != Verdict::OutOfRegime,
    ) {
        match v {
            Verdict::Refuted => {
                let (m, (lo, _)) = res
                    .detail
                    .implied_constant
                    .unwrap_or((f64::NAN, (f64::NAN, f64::NAN)));
                res.trend = Some(format!(
                    "the implied constant {} (interval lower end {}) exceeds the registered {}",
                    crate::fit::fmt_num(m),
                    crate::fit::fmt_num(lo),
                    crate::fit::fmt_num(c)
                ));
                res.verdict = Verdict::Refuted;
            }
            Verdict::Inconclusive if res.verdict == Verdict::Holds => {
                res.verdict = Verdict::Inconclusive;
            }
            _ => {}
        }
    }
}
