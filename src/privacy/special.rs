//! Log-space special functions shared by the accountants: `ln erfc`, `ln Phi`,
//! log-sum-exp of two terms.
//!
//! Everything here works on logarithms so that the accountants never form
//! `exp` of a large number (orders up to 1024, noise multipliers down to 0.5).
use statrs::function::erf::erfc;

/// `ln(e^a + e^b)` without overflow; `-inf` is the log of zero.
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// `ln erfc(x)`, accurate in the far right tail.
///
/// For `x <= 25` statrs' `erfc` (Boost's rational approximations, relative accuracy
/// near machine precision, no underflow before `x ~ 26.5`) is used directly. Beyond,
/// the asymptotic series of Abramowitz & Stegun 7.1.23,
/// `erfc x ~ e^{-x^2}/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + 105/(16x^8))`,
/// whose truncation error at `x = 25` is below `1e-12` relative (the same expansion
/// as TF Privacy's `_log_erfc` fallback).
pub(crate) fn ln_erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x <= 25.0 {
        return erfc(x).ln();
    }
    let x2 = x * x;
    let inv = 1.0 / x2;
    let series = 1.0 - 0.5 * inv + 0.75 * inv * inv - 1.875 * inv.powi(3) + 6.5625 * inv.powi(4);
    -x2 - x.ln() - 0.5 * std::f64::consts::PI.ln() + series.ln()
}

/// `ln Phi(x)`, the log of the standard normal CDF, via
/// `Phi(x) = erfc(-x / sqrt 2) / 2` (exact identity), accurate for very negative `x`.
pub(crate) fn ln_phi(x: f64) -> f64 {
    ln_erfc(-x / std::f64::consts::SQRT_2) - std::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_erfc_is_continuous_at_the_switch() {
        let below = ln_erfc(25.0);
        let above = ln_erfc(25.0 + 1e-9);
        assert!((below - above).abs() < 1e-6, "{below} vs {above}");
        // ln erfc(30) = -903.974117110644 (mpmath); erfc(30) itself underflows.
        let l30 = ln_erfc(30.0);
        assert!((l30 - (-903.974_117_110_644)).abs() < 1e-9, "{l30}");
    }

    #[test]
    fn log_add_handles_zero_and_large_values() {
        assert!((log_add(f64::NEG_INFINITY, 3.0) - 3.0).abs() < 1e-15);
        assert!((log_add(1000.0, 1000.0) - (1000.0 + std::f64::consts::LN_2)).abs() < 1e-12);
        assert!((ln_phi(0.0) - 0.5f64.ln()).abs() < 1e-15);
    }
}
