//! From scores to a lower bound on epsilon: threshold selection on one half of the
//! trials, rates and Clopper-Pearson bounds on the other half.
//!
//! The test is "declare the canary present when the score is strictly above the
//! threshold t". With `TP` of `N1` canary runs and `FP` of `N0` replaced runs above t,
//! an (epsilon, delta)-DP mechanism satisfies `TPR <= e^eps FPR + delta`
//! (Kairouz, Oh & Viswanath 2015, Thm 2.1; the hypothesis-testing view of DP), hence
//!
//! ```text
//! eps >= ln((TPR - delta) / FPR) >= ln((TPR_lb - delta) / FPR_ub) =: eps_LB
//! ```
//!
//! with `TPR_lb` a one-sided Clopper-Pearson lower bound on TPR and `FPR_ub` an upper
//! bound on FPR (Jagielski, Ullman & Oprea 2020, Sec. 4; Nasr et al. 2021, Sec. 3).
//! Each bound is taken at level `(1 + c)/2`, so by the union bound both hold together
//! with probability at least `c` (the `--confidence`); eps_LB is reported as 0 when the
//! logarithm is not positive.
//!
//! The threshold must not depend on the trials the rates are measured on (otherwise
//! the bound is biased upwards): it is chosen on the first half of each world's trials
//! ([`select_threshold`]), then frozen and evaluated on the second half. Any rule that
//! only looks at the first half keeps the bound valid; the rule only decides its power.
//! Maximising the empirical bound of the first half over thresholds (the obvious rule,
//! [`select_threshold_empirical`]) over-fits in the far tail, where the best thresholds
//! sit and the counts are a handful: at mu = 0.5 it picked a threshold with 24 canary
//! hits against an expected 15 and gave eps_LB = 0.16 on the second half instead of
//! about 0.9. [`select_threshold`] therefore fits a Gaussian to each world's first half
//! (the scores of the audited mechanisms are Gaussian, see [`super::canary`]) and
//! maximises the bound *predicted* for the second half's sizes.
use super::AuditError;
use crate::fit::{clopper_pearson_lower_one_sided, clopper_pearson_upper_one_sided};
use serde::Serialize;

/// The outcome of one threshold test on a set of trials.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ThresholdOutcome {
    /// The threshold t (canary declared present when score > t).
    pub threshold: f64,
    /// Canary runs above t.
    pub true_positives: u64,
    /// Canary runs.
    pub positives: u64,
    /// Replaced runs above t.
    pub false_positives: u64,
    /// Replaced runs.
    pub negatives: u64,
    /// Empirical TPR.
    pub tpr: f64,
    /// Empirical FPR.
    pub fpr: f64,
    /// Clopper-Pearson lower bound on TPR at level (1 + c)/2.
    pub tpr_lower: f64,
    /// Clopper-Pearson upper bound on FPR at level (1 + c)/2.
    pub fpr_upper: f64,
    /// `ln((tpr_lower - delta)/fpr_upper)`, `-inf` when `tpr_lower <= delta`.
    pub log_ratio: f64,
}

impl ThresholdOutcome {
    /// `max(0, log_ratio)`: the reported lower bound on epsilon.
    pub fn epsilon_lower_bound(&self) -> f64 {
        self.log_ratio.max(0.0)
    }
}

/// The bound of the module docs from counts: `(tpr_lower, fpr_upper, log_ratio)`.
pub fn bound_from_counts(
    true_positives: u64,
    positives: u64,
    false_positives: u64,
    negatives: u64,
    delta: f64,
    confidence: f64,
) -> Result<(f64, f64, f64), AuditError> {
    let level = 0.5 * (1.0 + confidence);
    let tpr_lower = clopper_pearson_lower_one_sided(true_positives, positives, level)?;
    let fpr_upper = clopper_pearson_upper_one_sided(false_positives, negatives, level)?;
    let num = tpr_lower - delta;
    let log_ratio = if num > 0.0 && fpr_upper > 0.0 {
        (num / fpr_upper).ln()
    } else {
        f64::NEG_INFINITY
    };
    Ok((tpr_lower, fpr_upper, log_ratio))
}

/// Number of scores in the ascending slice `sorted` strictly above `t`.
fn count_above(sorted: &[f64], t: f64) -> u64 {
    (sorted.len() - sorted.partition_point(|&s| s <= t)) as u64
}

fn sorted(scores: &[f64]) -> Vec<f64> {
    let mut v = scores.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Evaluates the test "score > threshold" on the given canary (`pos`) and replaced
/// (`neg`) scores.
pub fn evaluate(
    pos: &[f64],
    neg: &[f64],
    threshold: f64,
    delta: f64,
    confidence: f64,
) -> Result<ThresholdOutcome, AuditError> {
    let (pos, neg) = (sorted(pos), sorted(neg));
    evaluate_sorted(&pos, &neg, threshold, delta, confidence)
}

fn evaluate_sorted(
    pos: &[f64],
    neg: &[f64],
    threshold: f64,
    delta: f64,
    confidence: f64,
) -> Result<ThresholdOutcome, AuditError> {
    let tp = count_above(pos, threshold);
    let fp = count_above(neg, threshold);
    let (np, nn) = (pos.len() as u64, neg.len() as u64);
    let (tpr_lower, fpr_upper, log_ratio) = bound_from_counts(tp, np, fp, nn, delta, confidence)?;
    Ok(ThresholdOutcome {
        threshold,
        true_positives: tp,
        positives: np,
        false_positives: fp,
        negatives: nn,
        tpr: tp as f64 / np as f64,
        fpr: fp as f64 / nn as f64,
        tpr_lower,
        fpr_upper,
        log_ratio,
    })
}

/// The candidate numbers k of replaced-world exceedances: every k up to 20, then a
/// geometric grid (ratio 1.1) up to `m - 1`. The best bound sits in the upper tail of
/// the replaced scores (small FPR), where the grid is dense; the grid keeps the
/// number of Clopper-Pearson evaluations at O(log m).
fn candidate_ranks(m: usize) -> Vec<usize> {
    let mut ks: Vec<usize> = (0..m.min(21)).collect();
    let mut x = 20.0_f64;
    loop {
        x *= 1.1;
        let k = x.ceil() as usize;
        if k >= m {
            break;
        }
        if ks.last() != Some(&k) {
            ks.push(k);
        }
    }
    ks
}

/// Mean and sample standard deviation.
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, var.sqrt())
}

/// Upper tail of the standard normal, `P(Z > x) = erfc(x/sqrt 2)/2`.
fn normal_sf(x: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(x / std::f64::consts::SQRT_2)
}

/// Chooses the threshold from the selection half (`pos`, `neg`) for a measurement half
/// of `measured_pos` canary and `measured_neg` replaced runs (module docs): fit
/// `N(m1, s1^2)` to `pos` and `N(m0, s0^2)` to `neg`; on the grid
/// `t = m0 + s0 q`, `q = 0, 0.02, ..., 8`, predict the counts
/// `round(measured * P(score > t))` and keep the t with the largest predicted bound
/// ([`bound_from_counts`]; ties keep the smallest t). Falls back to
/// [`select_threshold_empirical`] when a fit is degenerate (a world with one run or
/// constant scores).
pub fn select_threshold(
    pos: &[f64],
    neg: &[f64],
    measured_pos: usize,
    measured_neg: usize,
    delta: f64,
    confidence: f64,
) -> Result<f64, AuditError> {
    let fallback = || select_threshold_empirical(pos, neg, delta, confidence).map(|o| o.threshold);
    if pos.len() < 2 || neg.len() < 2 || measured_pos == 0 || measured_neg == 0 {
        return fallback();
    }
    let (m1, s1) = mean_sd(pos);
    let (m0, s0) = mean_sd(neg);
    if !(s1 > 0.0
        && s0 > 0.0
        && s1.is_finite()
        && s0.is_finite()
        && m1.is_finite()
        && m0.is_finite())
    {
        return fallback();
    }
    let mut best: Option<(f64, f64)> = None;
    for j in 0..=400 {
        let t = m0 + s0 * (j as f64 * 0.02);
        let tp = (measured_pos as f64 * normal_sf((t - m1) / s1)).round() as u64;
        let fp = (measured_neg as f64 * normal_sf((t - m0) / s0)).round() as u64;
        let (_, _, lr) = bound_from_counts(
            tp.min(measured_pos as u64),
            measured_pos as u64,
            fp.min(measured_neg as u64),
            measured_neg as u64,
            delta,
            confidence,
        )?;
        if best.is_none_or(|(_, b)| lr > b) {
            best = Some((t, lr));
        }
    }
    match best {
        Some((t, lr)) if lr > f64::NEG_INFINITY => Ok(t),
        _ => fallback(),
    }
}

/// Chooses the threshold on the selection half: among the thresholds
/// `t_k` = (k+1)-th largest replaced score (exactly k replaced scores above it, ties
/// aside, and the largest canary count for that k), the one maximising the bound of
/// [`bound_from_counts`] on these trials. Returns the chosen outcome on the selection
/// half. Ties keep the smallest k.
pub fn select_threshold_empirical(
    pos: &[f64],
    neg: &[f64],
    delta: f64,
    confidence: f64,
) -> Result<ThresholdOutcome, AuditError> {
    if pos.is_empty() || neg.is_empty() {
        return Err(AuditError::Parameter {
            name: "trials",
            expected: "at least 2 (one per half and world)",
            value: format!("{} canary and {} replaced runs", pos.len(), neg.len()),
        });
    }
    let (pos, neg) = (sorted(pos), sorted(neg));
    let m = neg.len();
    let mut best: Option<ThresholdOutcome> = None;
    for k in candidate_ranks(m) {
        let t = neg[m - 1 - k];
        let out = evaluate_sorted(&pos, &neg, t, delta, confidence)?;
        if best.is_none_or(|b| out.log_ratio > b.log_ratio) {
            best = Some(out);
        }
    }
    // `candidate_ranks(m)` always contains k = 0, so `best` is set.
    best.ok_or(AuditError::Parameter {
        name: "trials",
        expected: "at least 2",
        value: "0".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_ranks_are_increasing_and_bounded() {
        for m in [1, 2, 5, 21, 22, 100, 10_000] {
            let ks = candidate_ranks(m);
            assert_eq!(ks[0], 0);
            assert!(ks.windows(2).all(|w| w[0] < w[1]));
            assert!(*ks.last().unwrap() < m);
        }
        assert!(candidate_ranks(10_000).len() < 100);
    }

    #[test]
    fn perfect_separation_gives_the_resolution_limit() {
        let pos: Vec<f64> = (0..1000).map(|i| 10.0 + i as f64).collect();
        let neg: Vec<f64> = (0..1000).map(|i| -(i as f64)).collect();
        let sel = select_threshold_empirical(&pos, &neg, 1e-5, 0.95).unwrap();
        assert_eq!(sel.true_positives, 1000);
        assert_eq!(sel.false_positives, 0);
        // TPR_lb = (0.025)^(1/1000), FPR_ub = 1 - 0.025^(1/1000).
        let fpr_ub = 1.0 - 0.025f64.powf(1.0 / 1000.0);
        assert!((sel.fpr_upper - fpr_ub).abs() < 1e-9, "{}", sel.fpr_upper);
        assert!(sel.epsilon_lower_bound() > 5.0);
    }

    #[test]
    fn identical_worlds_give_zero() {
        let s: Vec<f64> = (0..500).map(|i| (i as f64 * 0.37).sin()).collect();
        let t = select_threshold(&s, &s, 500, 500, 1e-5, 0.95).unwrap();
        let out = evaluate(&s, &s, t, 1e-5, 0.95).unwrap();
        assert!(out.epsilon_lower_bound() <= 0.0, "{out:?}");
    }
}
