//! Exact Gaussian differential privacy (mu-GDP) of full-batch Gaussian composition.
//!
//! Source: Dong, Roth & Su, "Gaussian Differential Privacy" (2019, JRSS-B 2022).
//! * Theorem 2.7: the Gaussian mechanism with noise multiplier `z` (noise standard
//!   deviation `z` times the L2 sensitivity) is `1/z`-GDP.
//! * Corollary 3.3 (composition): `mu_1`-GDP, ..., `mu_T`-GDP compose to
//!   `sqrt(sum_t mu_t^2)`-GDP, so `T` steps at noise multipliers `z_t` give
//!   `mu = sqrt(sum_t 1/z_t^2)` (DESIGN.md section 3: `mu = sqrt(T)/z`).
//! * Corollary 2.13 (conversion): a mechanism is `mu`-GDP iff it is `(eps, delta(eps))`-DP
//!   for every `eps >= 0`, with
//!   `delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`.
//!
//! This is exact (not an upper bound) for full-batch Gaussian composition, hence the
//! oracle the RDP and zCDP bounds are checked against.
use super::special::ln_phi;
use super::PrivacyError;

/// `mu` of the composition of full-batch Gaussian steps with the given
/// `(noise multiplier, steps)` pairs: `mu = sqrt(sum_t 1/z_t^2)`
/// (Dong, Roth & Su 2019, Thm 2.7 and Cor. 3.3).
///
/// The inputs are assumed validated (positive finite `z`).
pub fn gdp_mu<I>(steps_and_z: I) -> f64
where
    I: IntoIterator<Item = (u64, f64)>,
{
    steps_and_z
        .into_iter()
        .map(|(steps, z)| steps as f64 / (z * z))
        .sum::<f64>()
        .sqrt()
}

/// `delta(eps)` of a `mu`-GDP mechanism (Dong, Roth & Su 2019, Cor. 2.13):
/// `delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`.
///
/// Computed in log space: with `a = ln Phi(-eps/mu + mu/2)` and
/// `b = eps + ln Phi(-eps/mu - mu/2)` (`b < a` always), `delta = e^a (1 - e^{b - a})`,
/// evaluated with `expm1`, so large `eps` neither overflows `e^eps` nor cancels.
///
/// Returns 0 for `mu = 0` and 1 for `mu = +inf`; `NaN` inputs give `NaN`.
pub fn gdp_delta(mu: f64, eps: f64) -> f64 {
    if mu.is_nan() || eps.is_nan() {
        return f64::NAN;
    }
    if mu <= 0.0 {
        return 0.0;
    }
    if mu == f64::INFINITY {
        return 1.0;
    }
    let a = ln_phi(-eps / mu + mu / 2.0);
    let b = eps + ln_phi(-eps / mu - mu / 2.0);
    if a == f64::NEG_INFINITY {
        return 0.0;
    }
    let d = a.exp() * -(b - a).exp_m1();
    d.clamp(0.0, 1.0)
}

/// The largest `mu` whose mechanism is `(eps, delta)`-DP: the inverse of
/// [`gdp_epsilon`] in `mu` (`gdp_mu_of(gdp_epsilon(mu, delta), delta) = mu`), the root
/// of `gdp_delta(mu, eps) = delta` (Dong, Roth & Su 2019, Cor. 2.13, whose `delta(eps)`
/// is strictly increasing in `mu`). What an audit's `(eps, delta)` lower bound is in
/// GDP terms, and the `mu` an `(eps, delta)` budget allows.
///
/// Bisection to a relative width of `1e-13` on a bracket grown from `[0, 1]`; the lower
/// end is returned (never over-states the `mu` the budget allows). `eps = 0` gives the
/// `mu` with `delta(0) = delta` (`2 Phi(mu/2) - 1 = delta`).
pub fn gdp_mu_of(eps: f64, delta: f64) -> Result<f64, PrivacyError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(PrivacyError::Delta(delta));
    }
    if !(eps.is_finite() && eps >= 0.0) {
        return Err(PrivacyError::Unbounded);
    }
    let mut lo = 0.0_f64;
    let mut hi = 1.0_f64;
    while gdp_delta(hi, eps) < delta {
        lo = hi;
        hi *= 2.0;
        if hi > 1e150 {
            return Err(PrivacyError::Unbounded);
        }
    }
    for _ in 0..300 {
        if hi - lo <= 1e-13 * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if gdp_delta(mid, eps) < delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Smallest `eps >= 0` such that a `mu`-GDP mechanism is `(eps, delta)`-DP, i.e. the
/// root of `gdp_delta(mu, eps) = delta` (Dong, Roth & Su 2019, Cor. 2.13).
///
/// `delta(eps)` is strictly decreasing in `eps`, so the root is bracketed by growing
/// an upper end (doubling from 1) until `delta(hi) <= delta`, then bisected to a
/// relative width of `1e-13`; the upper end of the bracket is returned, so the result
/// never under-states epsilon. Returns 0 when `delta(0) <= delta`.
pub fn gdp_epsilon(mu: f64, delta: f64) -> Result<f64, PrivacyError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(PrivacyError::Delta(delta));
    }
    if !(mu.is_finite() && mu >= 0.0) {
        return Err(PrivacyError::Unbounded);
    }
    if gdp_delta(mu, 0.0) <= delta {
        return Ok(0.0);
    }
    let mut lo = 0.0_f64;
    let mut hi = 1.0_f64;
    while gdp_delta(mu, hi) > delta {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() || hi > 1e300 {
            return Err(PrivacyError::Unbounded);
        }
    }
    for _ in 0..200 {
        if hi - lo <= 1e-13 * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if gdp_delta(mu, mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mu_one_delta_at_eps_one() {
        // Phi(-1/2) - e Phi(-3/2) = 0.126936737506644 (mpmath, 30 digits).
        let d = gdp_delta(1.0, 1.0);
        assert!((d - 0.126_936_737_506_644).abs() < 1e-9, "{d}");
    }

    #[test]
    fn epsilon_inverts_delta() {
        for &mu in &[0.1, 0.5, 1.0, 3.0, 10.0] {
            for &delta in &[1e-2, 1e-5, 1e-10] {
                let eps = gdp_epsilon(mu, delta).unwrap();
                let d = gdp_delta(mu, eps);
                assert!(d <= delta * (1.0 + 1e-9), "mu {mu} delta {delta}: {d}");
                if eps > 0.0 {
                    assert!(gdp_delta(mu, eps * (1.0 - 1e-9)) > delta);
                }
            }
        }
    }

    #[test]
    fn large_eps_does_not_overflow() {
        let d = gdp_delta(50.0, 800.0);
        assert!(d.is_finite() && (0.0..=1.0).contains(&d), "{d}");
        let e = gdp_epsilon(200.0, 1e-5).unwrap();
        assert!(e.is_finite() && e > 0.0);
    }
}
