//! Verdict rules: how a fitted exponent, a count of events or a list of checked
//! inequalities becomes `holds`, `refuted` or `inconclusive`.
//!
//! Both verdicts need statistically clear evidence: a claim *holds* when the confidence
//! interval lies inside what the prediction allows and is *refuted* when it lies
//! outside; an interval that straddles the edge gives `inconclusive`, never a verdict.
//! Input that cannot be judged (NaN, an invalid count or level) is also `inconclusive`.
//! The intervals' level is the suite's family-wise level ([`super::DEFAULT_CONFIDENCE`])
//! unless a spec sets its own.

use super::binomial::clopper_pearson;
use super::FitError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Outcome of checking one claim.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The evidence agrees with the claim.
    Holds,
    /// The evidence contradicts the claim beyond its stated tolerance.
    Refuted,
    /// The evidence is too imprecise to decide (or could not be computed).
    Inconclusive,
    /// Too few sweep points satisfy the theorem's hypotheses (the spec's `assumptions`):
    /// a theorem can be neither confirmed nor refuted outside them.
    OutOfRegime,
}

impl Verdict {
    /// The lowercase name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive",
            Verdict::OutOfRegime => "out_of_regime",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A claim "the exponent equals `predicted`" (within `tolerance`): an equivalence test
/// on the confidence interval, so that both verdicts need statistically clear evidence.
///
/// With `fit_ci = (lo, hi)` and the band `[predicted - tolerance, predicted + tolerance]`:
/// 1. `inconclusive` if any argument is NaN;
/// 2. `holds` if the whole interval lies inside the band;
/// 3. `refuted` if the whole interval lies outside it (`hi < predicted - tolerance` or
///    `lo > predicted + tolerance`), however wide the interval is;
/// 4. `inconclusive` otherwise (the interval straddles an edge of the band, or is wider
///    than the band). A true exponent at the edge of the band therefore gives
///    `inconclusive`, never a verdict that flips between `holds` and `refuted` with the
///    seed. The point estimate is reported, not used.
pub fn judge_exponent(
    fit_ci: (f64, f64),
    estimate: f64,
    predicted: f64,
    tolerance: f64,
) -> Verdict {
    let (lo, hi) = fit_ci;
    if [lo, hi, estimate, predicted, tolerance]
        .iter()
        .any(|v| v.is_nan())
    {
        return Verdict::Inconclusive;
    }
    let (band_lo, band_hi) = (predicted - tolerance, predicted + tolerance);
    if lo >= band_lo && hi <= band_hi {
        Verdict::Holds
    } else if hi < band_lo || lo > band_hi {
        Verdict::Refuted
    } else {
        Verdict::Inconclusive
    }
}

/// A claim "the rate exponent is at most `predicted`" (an upper bound such as an O()
/// or O~() statement, e.g. an excess risk decaying at least as fast as `n^predicted`).
/// Judged on the confidence interval, never on the point estimate alone.
///
/// With `fit_ci = (lo, hi)` and `bound = predicted + tolerance`, in this order:
/// 1. `inconclusive` if any argument is NaN;
/// 2. `holds` if `hi <= bound` (the whole interval respects the bound);
/// 3. `refuted` if `lo > bound` (the whole interval lies above it);
/// 4. `inconclusive` otherwise (the interval straddles the bound).
pub fn judge_rate_at_most(fit_ci: (f64, f64), predicted: f64, tolerance: f64) -> Verdict {
    let (lo, hi) = fit_ci;
    if [lo, hi, predicted, tolerance].iter().any(|v| v.is_nan()) {
        return Verdict::Inconclusive;
    }
    let bound = predicted + tolerance;
    if hi <= bound {
        Verdict::Holds
    } else if lo > bound {
        Verdict::Refuted
    } else {
        Verdict::Inconclusive
    }
}

/// Absolute slack when comparing the observed frequency with `1 - alpha`, so that e.g.
/// 9 of 10 satisfies `1 - 0.1` whatever the rounding of `1 - alpha`.
const FREQUENCY_SLACK: f64 = 1e-12;

/// A claim "P(event) >= 1 - alpha", judged from `successes` events in `trials`.
///
/// Let `(lo, hi)` be the two-sided Clopper-Pearson interval at `confidence`
/// ([`clopper_pearson`]). Applied in this order:
/// 1. `refuted` if `hi < 1 - alpha` (the probability is significantly below the claim);
/// 2. `holds` if `lo >= 1 - alpha - 1e-12` (significantly at or above it: a holds needs
///    the same strength of evidence as a refutation, not an observed frequency whose
///    interval reaches below the claim);
/// 3. `inconclusive` otherwise.
///
/// Returns the verdict and the interval. Errors: those of [`clopper_pearson`], and
/// `alpha` outside `[0, 1]` (reported as [`FitError::Confidence`] of `1 - alpha`).
pub fn try_judge_event(
    successes: u64,
    trials: u64,
    alpha: f64,
    confidence: f64,
) -> Result<(Verdict, (f64, f64)), FitError> {
    if !(0.0..=1.0).contains(&alpha) {
        return Err(FitError::Confidence(1.0 - alpha));
    }
    let interval = clopper_pearson(successes, trials, confidence)?;
    let target = 1.0 - alpha;
    let verdict = if interval.1 < target {
        Verdict::Refuted
    } else if interval.0 >= target - FREQUENCY_SLACK {
        Verdict::Holds
    } else {
        Verdict::Inconclusive
    };
    Ok((verdict, interval))
}

/// [`try_judge_event`] for callers that need a verdict in every case: invalid input
/// (zero trials, more successes than trials, `alpha` outside `[0, 1]`, `confidence`
/// outside (0, 1)) gives `inconclusive` with the vacuous interval `(0, 1)`.
pub fn judge_event(
    successes: u64,
    trials: u64,
    alpha: f64,
    confidence: f64,
) -> (Verdict, (f64, f64)) {
    try_judge_event(successes, trials, alpha, confidence)
        .unwrap_or((Verdict::Inconclusive, (0.0, 1.0)))
}

/// A claim that a deterministic inequality holds at every checked point.
///
/// `holds` if `satisfied` is non-empty and every entry is true; `refuted` if any entry is
/// false (one counter-example suffices); `inconclusive` if `satisfied` is empty (nothing
/// was checked, so there is no evidence either way).
pub fn judge_inequality(satisfied: &[bool]) -> Verdict {
    if satisfied.is_empty() {
        Verdict::Inconclusive
    } else if satisfied.iter().all(|&s| s) {
        Verdict::Holds
    } else {
        Verdict::Refuted
    }
}
