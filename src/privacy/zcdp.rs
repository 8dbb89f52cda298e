//! Zero-concentrated differential privacy (zCDP) of full-batch Gaussian composition.
//!
//! Sources:
//! * Bun & Steinke, "Concentrated Differential Privacy: Simplifications, Extensions,
//!   and Lower Bounds", TCC 2016: Prop. 1.6 (the Gaussian mechanism with noise
//!   multiplier `z` is `1/(2 z^2)`-zCDP), Lemma 2.3 / Prop. 1.7 (composition adds
//!   `rho`), Prop. 1.3 (conversion `eps = rho + 2 sqrt(rho ln(1/delta))`).
//! * Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
//!   NeurIPS 2020, Cor. 13 (arXiv:2004.00010 v4): `rho`-zCDP implies
//!   `(eps, delta)`-DP for every `alpha > 1` with
//!   `eps = alpha rho + ln(1 - 1/alpha) - (ln delta + ln alpha)/(alpha - 1)`.
//!
//! [`zcdp_epsilon`] returns the minimum of the two conversions. Each is a valid upper
//! bound for *every* `alpha`, so the minimum is valid whether or not the numerical
//! search over `alpha` finds the exact optimum.
use super::PrivacyError;

/// `rho` of the composition of full-batch Gaussian steps with the given
/// `(steps, noise multiplier)` pairs: `rho = sum_t 1/(2 z_t^2)`
/// (Bun & Steinke 2016, Prop. 1.6 and Lemma 2.3).
pub fn zcdp_rho<I>(steps_and_z: I) -> f64
where
    I: IntoIterator<Item = (u64, f64)>,
{
    steps_and_z
        .into_iter()
        .map(|(steps, z)| steps as f64 / (2.0 * z * z))
        .sum()
}

/// Standard conversion (Bun & Steinke 2016, Prop. 1.3):
/// `eps = rho + 2 sqrt(rho ln(1/delta))`.
pub fn zcdp_epsilon_standard(rho: f64, delta: f64) -> f64 {
    rho + 2.0 * (rho * -delta.ln()).sqrt()
}

/// The conversion of Canonne, Kamath & Steinke 2020, Cor. 13 at one order `alpha > 1`.
fn cks_at(rho: f64, delta: f64, alpha: f64) -> f64 {
    alpha * rho + (-1.0 / alpha).ln_1p() - (delta.ln() + alpha.ln()) / (alpha - 1.0)
}

/// `eps` such that a `rho`-zCDP mechanism is `(eps, delta)`-DP: the minimum of the
/// standard conversion (Bun & Steinke 2016, Prop. 1.3) and of the conversion of
/// Canonne, Kamath & Steinke 2020, Cor. 13, minimised over `alpha` numerically
/// (log-spaced scan of `alpha - 1` over `[e^-12, e^16]`, then golden-section
/// refinement around the best point). Clamped at 0; 0 as well when
/// `delta^2 >= 1 - e^{-rho}` (Bretagnolle–Huber, `KL <= rho`).
pub fn zcdp_epsilon(rho: f64, delta: f64) -> Result<f64, PrivacyError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(PrivacyError::Delta(delta));
    }
    if !(rho.is_finite() && rho >= 0.0) {
        return Err(PrivacyError::Unbounded);
    }
    if rho <= 0.0 || delta * delta + (-rho).exp_m1() > 0.0 {
        return Ok(0.0);
    }
    let f = |t: f64| cks_at(rho, delta, 1.0 + t.exp());
    // Scan t = ln(alpha - 1).
    let (t_min, t_max, n) = (-12.0_f64, 16.0_f64, 561usize);
    let step = (t_max - t_min) / (n - 1) as f64;
    let mut best_k = 0;
    let mut best = f64::INFINITY;
    for k in 0..n {
        let v = f(t_min + k as f64 * step);
        if v < best {
            best = v;
            best_k = k;
        }
    }
    // Golden-section refinement on [t_k - step, t_k + step].
    let centre = t_min + best_k as f64 * step;
    let (mut a, mut b) = (centre - step, centre + step);
    let g = 0.5 * (5.0_f64.sqrt() - 1.0);
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..80 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    let eps = best.min(fc).min(fd).min(zcdp_epsilon_standard(rho, delta));
    if eps.is_nan() {
        return Err(PrivacyError::Unbounded);
    }
    Ok(eps.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tight_conversion_beats_standard() {
        for &rho in &[0.01, 0.5, 2.0, 50.0] {
            let tight = zcdp_epsilon(rho, 1e-5).unwrap();
            let std = zcdp_epsilon_standard(rho, 1e-5);
            assert!(tight <= std);
            assert!(tight > 0.0);
        }
    }
}
