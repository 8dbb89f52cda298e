//! Power-law fits `y ≈ C x^slope` in log-log coordinates.
//!
//! The fitted quantity is the ordinary-least-squares slope of `ln(ȳ_i)` on `ln(x_i)`,
//! where `ȳ_i` is the mean of the replicates at `x_i` (the log of the mean, not the mean
//! of the logs, so that a claim about `E[y]` is what is fitted).
//!
//! **What the interval covers.** The estimand is the least-squares slope of `ln E[y]`
//! over the registered sweep points — the *local* log-log slope over that design — a
//! fixed number once the design is fixed, curved or not. The only randomness is the
//! seed, so the interval is the sampling interval of the slope
//! ([`Interval::Sampling`]): with `w_i = (ln x_i - mean ln x) / Sxx` the slope is
//! `Σ w_i ln ȳ_i`, and by the delta method `Var ln ȳ_i ≈ s_i² / (R_i ȳ_i²)` (`s_i²` the
//! replicates' sample variance, `R_i` their number), so
//! `stderr² = Σ w_i² s_i² / (R_i ȳ_i²)` with Welch–Satterthwaite degrees of freedom
//! `(Σ a_i)² / Σ a_i² / (R_i - 1)`, `a_i = w_i² s_i² / (R_i ȳ_i²)` (Welch 1947,
//! *Biometrika* 34; Satterthwaite 1946). The points are treated as independent; replicates
//! that share seeds across points are positively correlated, which makes this
//! conservative for a slope (a common shift cancels since `Σ w_i = 0`).
//! The residual interval of simple regression (`stderr = sqrt(SSE / (points - 2) / Sxx)`,
//! `points - 2` degrees of freedom; Weisberg, *Applied Linear Regression*, 4th ed., §2.6)
//! counts the curvature of a finite-size curve as noise: it does not shrink with
//! replicates, and with 4-6 points its own width varies by a factor of several between
//! seeds, so verdicts near an edge flipped with the seed (reports/STABILITY.md). It is
//! used only when some point has a single replicate ([`Interval::Residual`]).

use super::FitError;
use rand::{Rng, RngExt};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Result of [`fit_power_law`].
#[derive(Debug, Clone, Serialize)]
pub struct PowerLawFit {
    /// OLS slope of `ln(mean y)` on `ln x`: the fitted exponent.
    pub slope: f64,
    /// OLS intercept: `ln C` in `y ≈ C x^slope`.
    pub intercept: f64,
    /// Standard error of the slope, `sqrt(SSE / (points - 2) / Sxx)`.
    pub stderr: f64,
    /// Two-sided Student-t confidence interval of the slope at the requested level.
    pub ci: (f64, f64),
    /// Coefficient of determination `1 - SSE / SST` in log-log coordinates.
    pub r2: f64,
    /// Number of (x, mean y) points fitted.
    pub points: usize,
    /// Percentile bootstrap interval of the slope, when one was computed
    /// ([`bootstrap_slope_ci`]); [`fit_power_law`] leaves it `None`.
    pub bootstrap_ci: Option<(f64, f64)>,
    /// How `stderr` and `ci` were computed.
    pub interval: Interval,
    /// Degrees of freedom of the t quantile (infinite for an exact fit).
    pub dof: f64,
}

/// The source of a slope's confidence interval (see the module documentation).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    /// Sampling variance of the replicate means (every point has >= 2 replicates).
    Sampling,
    /// Residual variance of the fit (some point has a single replicate).
    Residual,
}

impl PowerLawFit {
    /// The fitted curve `exp(intercept) · x^slope` at `x`.
    pub fn predict(&self, x: f64) -> f64 {
        (self.intercept + self.slope * x.ln()).exp()
    }
}

/// Rejects a confidence level outside the open interval (0, 1) (NaN included).
pub(crate) fn check_confidence(confidence: f64) -> Result<(), FitError> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(FitError::Confidence(confidence))
    }
}

/// Validates the data of a fit and returns `ln x_i`.
///
/// Checks, in this order: equal lengths; per point, finite and positive x, non-empty and
/// finite replicates; at least three distinct x values.
fn validate(x: &[f64], y: &[Vec<f64>]) -> Result<Vec<f64>, FitError> {
    if x.len() != y.len() {
        return Err(FitError::LengthMismatch {
            x: x.len(),
            y: y.len(),
        });
    }
    for (index, (&xi, reps)) in x.iter().zip(y).enumerate() {
        if !xi.is_finite() {
            return Err(FitError::NonFiniteX { index, value: xi });
        }
        if xi <= 0.0 {
            return Err(FitError::NonPositiveX { index, value: xi });
        }
        if reps.is_empty() {
            return Err(FitError::EmptyReplicates { index, x: xi });
        }
        if let Some((replicate, &value)) = reps.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(FitError::NonFiniteY {
                index,
                replicate,
                value,
            });
        }
    }
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let distinct = if sorted.is_empty() {
        0
    } else {
        1 + sorted.windows(2).filter(|w| w[0] < w[1]).count()
    };
    if distinct < 3 {
        return Err(FitError::TooFewPoints { distinct });
    }
    Ok(x.iter().map(|v| v.ln()).collect())
}

/// `ln` of the replicate means, with the non-positive-mean check.
fn log_means(x: &[f64], y: &[Vec<f64>]) -> Result<Vec<f64>, FitError> {
    y.iter()
        .enumerate()
        .map(|(index, reps)| {
            let mean = reps.iter().sum::<f64>() / reps.len() as f64;
            if mean > 0.0 {
                Ok(mean.ln())
            } else {
                Err(FitError::NonPositiveMean {
                    index,
                    x: x[index],
                    value: mean,
                })
            }
        })
        .collect()
}

/// Centred sums of simple linear regression: `(x̄, ȳ, Sxx, Sxy)`.
fn centred_sums(lx: &[f64], ly: &[f64]) -> (f64, f64, f64, f64) {
    let n = lx.len() as f64;
    let mx = lx.iter().sum::<f64>() / n;
    let my = ly.iter().sum::<f64>() / n;
    let mut sxx = 0.0;
    let mut sxy = 0.0;
    for (a, b) in lx.iter().zip(ly) {
        sxx += (a - mx) * (a - mx);
        sxy += (a - mx) * (b - my);
    }
    (mx, my, sxx, sxy)
}

/// The quantile `t_{p, dof}` of Student's t distribution (statrs' inverse CDF).
pub fn student_t_quantile(p: f64, dof: f64) -> Result<f64, FitError> {
    if !(p > 0.0 && p < 1.0) {
        return Err(FitError::Confidence(p));
    }
    let t = StudentsT::new(0.0, 1.0, dof).map_err(|e| FitError::Distribution(e.to_string()))?;
    Ok(t.inverse_cdf(p))
}

/// Fits `y ≈ C x^slope` by ordinary least squares of `ln(mean y_i)` on `ln x_i`.
///
/// `y[i]` holds the replicates measured at `x[i]`. With `n = points`:
/// * `slope = Sxy / Sxx`, `intercept = ȳ - slope · x̄` (centred sums of the logs);
/// * when every point has at least 2 replicates, the sampling interval of the module
///   documentation: `stderr² = Σ w_i² s_i² / (R_i ȳ_i²)`, Welch–Satterthwaite degrees of
///   freedom; otherwise `stderr = sqrt(SSE / (n - 2) / Sxx)` with `n - 2` degrees of
///   freedom, `SSE` the residual sum of squares;
/// * `ci = slope ± t · stderr`, `t` the `1 - (1 - confidence)/2` quantile of Student's t;
/// * `r2 = 1 - SSE / SST` (1 when all means are equal and the fit is exact).
///
/// Residuals at rounding level are treated as exactly zero: when
/// `max |residual| <= 64 ε · max(1, |intercept|, max |ln ȳ_i|, max |slope · ln x_i|)`
/// (ε the machine epsilon), the fit is exact, `stderr = 0` and `ci = (slope, slope)`, unless
/// replicates vary (then the sampling interval applies). Replicates that are all equal
/// (a deterministic metric) give a zero-width sampling interval.
///
/// Errors: lengths differ, fewer than 3 distinct x, an x or replicate that is not
/// finite, a non-positive x, an empty replicate list, a non-positive mean (the index and
/// value are named), or `confidence` outside (0, 1).
pub fn fit_power_law(x: &[f64], y: &[Vec<f64>], confidence: f64) -> Result<PowerLawFit, FitError> {
    check_confidence(confidence)?;
    let lx = validate(x, y)?;
    let ly = log_means(x, y)?;
    let n = lx.len();
    let (mx, my, sxx, sxy) = centred_sums(&lx, &ly);
    let slope = sxy / sxx;
    let intercept = my - slope * mx;

    let residuals: Vec<f64> = lx
        .iter()
        .zip(&ly)
        .map(|(a, b)| b - (intercept + slope * a))
        .collect();
    // Rounding scale: the largest magnitude entering a residual.
    let scale = lx
        .iter()
        .zip(&ly)
        .fold(intercept.abs().max(1.0), |m, (a, b)| {
            m.max(b.abs()).max((slope * a).abs())
        });
    let exact = residuals
        .iter()
        .all(|r| r.abs() <= 64.0 * f64::EPSILON * scale);
    let sse = if exact {
        0.0
    } else {
        residuals.iter().map(|r| r * r).sum::<f64>()
    };
    let sst = ly.iter().map(|b| (b - my) * (b - my)).sum::<f64>();
    let r2 = if sst > 0.0 { 1.0 - sse / sst } else { 1.0 };
    let half_tail = 1.0 - (1.0 - confidence) / 2.0;

    let (stderr, ci, interval, dof) = if y.iter().all(|r| r.len() >= 2) {
        // Sampling interval: a_i = w_i² Var(ln ȳ_i), delta method.
        let mut var = 0.0;
        let mut ws_den = 0.0;
        for ((a, reps), b) in lx.iter().zip(y).zip(&ly) {
            let r = reps.len() as f64;
            let m = reps.iter().sum::<f64>() / r;
            let s2 = reps.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (r - 1.0);
            let w = (a - mx) / sxx;
            let ai = w * w * s2 / (r * b.exp() * b.exp());
            var += ai;
            ws_den += ai * ai / (r - 1.0);
        }
        if var > 0.0 && var.is_finite() {
            let dof = var * var / ws_den;
            let stderr = var.sqrt();
            let t = student_t_quantile(half_tail, dof)?;
            (
                stderr,
                (slope - t * stderr, slope + t * stderr),
                Interval::Sampling,
                dof,
            )
        } else {
            (0.0, (slope, slope), Interval::Sampling, f64::INFINITY)
        }
    } else if exact {
        (0.0, (slope, slope), Interval::Residual, f64::INFINITY)
    } else {
        let dof = (n - 2) as f64;
        let stderr = (sse / dof / sxx).sqrt();
        let t = student_t_quantile(half_tail, dof)?;
        (
            stderr,
            (slope - t * stderr, slope + t * stderr),
            Interval::Residual,
            dof,
        )
    };
    Ok(PowerLawFit {
        slope,
        intercept,
        stderr,
        ci,
        r2,
        points: n,
        bootstrap_ci: None,
        interval,
        dof,
    })
}

/// Percentile-bootstrap interval of the log-log slope.
///
/// Each resample draws, for every point `i` in order and then for every replicate slot
/// `j` in order, one replicate of `y[i]` uniformly with replacement
/// (`rng.random_range(0..y[i].len())`), recomputes the means and refits the OLS slope of
/// `ln(mean)` on `ln x` (the x values are fixed). This order of draws is part of the
/// contract: the same rng state gives the same interval.
///
/// The interval is the pair of empirical quantiles at `(1 - confidence)/2` and
/// `1 - (1 - confidence)/2` of the sorted resampled slopes, with linear interpolation
/// between order statistics (Hyndman-Fan type 7; Efron & Tibshirani, *An Introduction to
/// the Bootstrap*, §13.3).
///
/// A resample in which some point's mean is not positive cannot be fitted and is
/// dropped (its draws are still consumed); if fewer than half of the resamples remain,
/// the result is [`FitError::BootstrapDegenerate`]. Other errors are those of
/// [`fit_power_law`], plus [`FitError::NoResamples`] for `resamples == 0`.
pub fn bootstrap_slope_ci(
    x: &[f64],
    y: &[Vec<f64>],
    confidence: f64,
    resamples: usize,
    rng: &mut impl Rng,
) -> Result<(f64, f64), FitError> {
    check_confidence(confidence)?;
    let lx = validate(x, y)?;
    // The original data must be fittable too, so errors match fit_power_law's.
    log_means(x, y)?;
    if resamples == 0 {
        return Err(FitError::NoResamples);
    }
    let mut slopes = Vec::with_capacity(resamples);
    let mut ly = vec![0.0; lx.len()];
    for _ in 0..resamples {
        let mut valid = true;
        for (target, reps) in ly.iter_mut().zip(y) {
            let k = reps.len();
            let mut sum = 0.0;
            for _ in 0..k {
                sum += reps[rng.random_range(0..k)];
            }
            let mean = sum / k as f64;
            if mean > 0.0 {
                *target = mean.ln();
            } else {
                valid = false;
            }
        }
        if valid {
            let (_, _, sxx, sxy) = centred_sums(&lx, &ly);
            slopes.push(sxy / sxx);
        }
    }
    if 2 * slopes.len() < resamples {
        return Err(FitError::BootstrapDegenerate {
            valid: slopes.len(),
            resamples,
        });
    }
    slopes.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Ok((
        quantile_sorted(&slopes, tail),
        quantile_sorted(&slopes, 1.0 - tail),
    ))
}

/// Type-7 quantile of sorted, non-empty data: linear interpolation at `(n - 1) p`.
fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let frac = h - lo as f64;
    sorted[lo] + frac * (sorted[hi] - sorted[lo])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_interpolates() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert!((quantile_sorted(&v, 0.5) - 3.0).abs() < 1e-15);
        assert!((quantile_sorted(&v, 0.125) - 1.5).abs() < 1e-15);
        assert!((quantile_sorted(&v, 1.0) - 5.0).abs() < 1e-15);
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn duplicate_x_counts_once() {
        let x = [1.0, 1.0, 2.0, 2.0];
        let y = vec![vec![1.0]; 4];
        assert_eq!(
            fit_power_law(&x, &y, 0.95).unwrap_err(),
            FitError::TooFewPoints { distinct: 2 }
        );
    }
}
