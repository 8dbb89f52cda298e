//! Exact (Clopper-Pearson) confidence bounds for a binomial success probability.
//!
//! With `s` successes in `n` trials, the Clopper-Pearson bounds (Clopper & Pearson,
//! *Biometrika* 26(4), 1934) are quantiles of Beta distributions:
//!
//! ```text
//! lower(a) = Beta(s, n - s + 1).quantile(a)       (0 when s = 0)
//! upper(a) = Beta(s + 1, n - s).quantile(1 - a)   (1 when s = n)
//! ```
//!
//! The two-sided interval at level `c` uses `a = (1 - c)/2` on each side; a one-sided
//! bound at level `c` uses `a = 1 - c`. The Beta quantiles are statrs'
//! `Beta::inverse_cdf`. The coverage is at least the nominal level for every `p`.

use super::power_law::check_confidence;
use super::FitError;
use statrs::distribution::{Beta, ContinuousCDF};

fn check_counts(successes: u64, trials: u64) -> Result<(), FitError> {
    if trials == 0 {
        return Err(FitError::NoTrials);
    }
    if successes > trials {
        return Err(FitError::SuccessesExceedTrials { successes, trials });
    }
    Ok(())
}

/// `Beta(a, b).quantile(p)` with statrs' errors mapped to [`FitError`].
fn beta_quantile(a: f64, b: f64, p: f64) -> Result<f64, FitError> {
    let beta = Beta::new(a, b).map_err(|e| FitError::Distribution(e.to_string()))?;
    beta.try_inverse_cdf(p)
        .map_err(|e| FitError::Distribution(e.to_string()))
}

/// Lower bound with tail probability `tail` (already validated counts).
fn lower(successes: u64, trials: u64, tail: f64) -> Result<f64, FitError> {
    if successes == 0 {
        return Ok(0.0);
    }
    beta_quantile(successes as f64, (trials - successes + 1) as f64, tail)
}

/// Upper bound with tail probability `tail` (already validated counts).
fn upper(successes: u64, trials: u64, tail: f64) -> Result<f64, FitError> {
    if successes == trials {
        return Ok(1.0);
    }
    beta_quantile(
        (successes + 1) as f64,
        (trials - successes) as f64,
        1.0 - tail,
    )
}

/// Two-sided Clopper-Pearson interval at level `confidence`: `(lower, upper)` with
/// `(1 - confidence)/2` in each tail; lower is 0 when `successes = 0` and upper is 1
/// when `successes = trials`.
///
/// Errors: zero trials, more successes than trials, confidence outside (0, 1).
pub fn clopper_pearson(
    successes: u64,
    trials: u64,
    confidence: f64,
) -> Result<(f64, f64), FitError> {
    check_confidence(confidence)?;
    check_counts(successes, trials)?;
    let tail = (1.0 - confidence) / 2.0;
    Ok((
        lower(successes, trials, tail)?,
        upper(successes, trials, tail)?,
    ))
}

/// One-sided Clopper-Pearson lower bound `L` with `P(p >= L) >= confidence`:
/// `Beta(s, n - s + 1).quantile(1 - confidence)`, 0 when `successes = 0`.
pub fn clopper_pearson_lower_one_sided(
    successes: u64,
    trials: u64,
    confidence: f64,
) -> Result<f64, FitError> {
    check_confidence(confidence)?;
    check_counts(successes, trials)?;
    lower(successes, trials, 1.0 - confidence)
}

/// One-sided Clopper-Pearson upper bound `U` with `P(p <= U) >= confidence`:
/// `Beta(s + 1, n - s).quantile(confidence)`, 1 when `successes = trials`.
pub fn clopper_pearson_upper_one_sided(
    successes: u64,
    trials: u64,
    confidence: f64,
) -> Result<f64, FitError> {
    check_confidence(confidence)?;
    check_counts(successes, trials)?;
    upper(successes, trials, 1.0 - confidence)
}
