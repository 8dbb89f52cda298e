//! An independent RDP accountant for the Poisson-subsampled Gaussian mechanism: the
//! Rényi divergences computed by direct numerical integration of their definition, not
//! by the series of [`super::rdp`] (nothing of that module is used here; the point is
//! to have a second computation to check the first against).
//!
//! Sources:
//! * Mironov, Talwar & Zhang, "Rényi Differential Privacy of the Sampled Gaussian
//!   Mechanism", arXiv:1908.10530 (2019), Sec. 3: under add/remove-one adjacency with
//!   Poisson sampling at rate `q` and noise multiplier `z`, one step is
//!   `(alpha, eps)`-RDP with `eps = max(D_alpha(mu_1 || mu_0), D_alpha(mu_0 || mu_1))`,
//!   `mu_0 = N(0, z^2)`, `mu_1 = (1 - q) N(0, z^2) + q N(1, z^2)`.
//! * Rényi, "On measures of entropy and information" (1961) / Mironov, "Rényi
//!   Differential Privacy", CSF 2017, Def. 3:
//!   `D_alpha(P || Q) = ln E_Q[(P/Q)^alpha] / (alpha - 1)`; Prop. 1 there: RDP curves of
//!   adaptively composed mechanisms add.
//! * Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
//!   NeurIPS 2020, Prop. 12 (arXiv:2004.00010 v4), equivalently Balle, Barthe, Gaboardi,
//!   Hsu & Sato, "Hypothesis Testing Interpretations and Rényi Differential Privacy",
//!   AISTATS 2020, Thm 21: `(alpha, r)`-RDP implies `(eps, delta)`-DP with
//!   `eps = r + ln((alpha - 1)/alpha) - (ln delta + ln alpha)/(alpha - 1)` — the
//!   conversion the project's accountant uses, re-implemented here.
//! * Trefethen & Weideman, "The exponentially convergent trapezoidal rule", SIAM Review
//!   56 (2014), Thm 5.1: for a function analytic in the strip `|Im x| < d` and decaying
//!   on the real line, the trapezoidal rule of step `h` on the whole line has error
//!   `O(e^{-2 pi d / h})`.
//!
//! # Method
//!
//! With the likelihood ratio `L(x) = mu_1(x)/mu_0(x) = 1 - q + q e^{(2x - 1)/(2 z^2)}`,
//! both divergences are moments of `L` under `mu_0`:
//! `D_alpha(mu_1 || mu_0) = ln E_0[L^alpha] / (alpha - 1)` and
//! `D_alpha(mu_0 || mu_1) = ln E_0[L^{1 - alpha}] / (alpha - 1)`. Since `E_0[L] = 1`,
//! `E_0[L^lambda] = 1 + B_lambda` with `B_lambda = E_0[g_lambda(L)]`,
//! `g_lambda(L) = L^lambda - 1 - lambda (L - 1) >= 0` for `lambda` outside `[0, 1]`
//! (convexity). Integrating the non-negative `g` instead of `L^lambda` avoids the
//! cancellation `E[L^lambda] - 1` when the divergence is tiny (small `q`, orders near 1),
//! and every term is summed in log space (log-sum-exp), so orders up to 256 with
//! `z = 0.5` neither overflow nor lose the result.
//!
//! `B_lambda` is integrated by the trapezoidal rule on a uniform grid of step
//! `h = min(z, z^2)/4` over `[-(40 z + 2), alpha + 40 z + 2]` (`lambda = alpha`) or
//! `[-(alpha + 40 z + 2), 40 z + 2]` (`lambda = 1 - alpha`): the integrand is a
//! Gaussian-like bump of width `z` around the stationary points, which lie in
//! `[0, alpha]` (resp. `[1 - alpha, 1]`), and `L` is analytic in the strip
//! `|Im x| < pi z^2`, so the trapezoidal error is `O(e^{-8 pi^2})` (Trefethen &
//! Weideman). Error control, per order and direction:
//! * step: the same sum on the even points (step `2h`) must agree with the full sum to
//!   [`STEP_REL_TOL`]; otherwise the step is halved (at most [`MAX_REFINEMENTS`] times);
//! * truncation: the log-integrand at both ends of the range must lie at least
//!   [`TAIL_NATS`] below the integral;
//! * skipped points: points whose cheap upper bound on the log-integrand is
//!   [`SKIP_NATS`] below the largest bound are not evaluated; their total is bounded
//!   and must be negligible (below `1e-15` relative), otherwise every point is evaluated.
use super::memo::{memoized, Key, Memo};
use super::PrivacyError;

/// Half-width of the integration range beyond the stationary points, in units of `z`.
pub const TAIL_SD: f64 = 40.0;
/// Relative agreement required between the step-`2h` and step-`h` trapezoidal sums.
/// Their difference estimates the error of the step-`2h` sum; the trapezoidal error
/// decays like `e^{-c/h}`, so the error of the step-`h` sum (the one returned) is about
/// its square, here ~1e-14 relative.
pub const STEP_REL_TOL: f64 = 1e-7;
/// How many times the step may be halved when [`STEP_REL_TOL`] is not met.
pub const MAX_REFINEMENTS: usize = 4;
/// The integrand at the ends of the range must be this many nats below the integral.
pub const TAIL_NATS: f64 = 60.0;
/// Points whose upper bound lies this many nats below the largest bound are skipped.
pub const SKIP_NATS: f64 = 60.0;

/// The order grid of the independent accountant: `1.01, 1.02, ..., 10.00` (900 orders,
/// step 0.01), then the integers `11..=256` (1146 orders). Finer than the project's
/// default grid below 10, so the minimum over orders is at least as tight there.
pub fn quadrature_orders() -> Vec<f64> {
    (101..=1000)
        .map(|k| f64::from(k) / 100.0)
        .chain((11..=256).map(f64::from))
        .collect()
}

/// `ln(e^a + e^b)`, with `-inf` as the log of zero.
fn ln_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// `e^x`, with the underflow to 0 short-circuited (libm's underflow path is slow).
fn exp_or_zero(x: f64) -> f64 {
    if x < -746.0 {
        0.0
    } else {
        x.exp()
    }
}

/// `ln L(x)`, `L(x) = 1 - q + q e^u`, `u = (2x - 1)/(2 z^2)`; accurate near `u = 0`
/// (where `ln L` is small) through `ln_1p(q expm1(u))`.
fn ln_likelihood_ratio(q: f64, u: f64) -> f64 {
    if q >= 1.0 {
        u
    } else if u.abs() <= 1.0 {
        (q * u.exp_m1()).ln_1p()
    } else {
        ln_add_exp((-q).ln_1p(), q.ln() + u)
    }
}

/// `ln g_lambda(L)` with `ell = ln L`, `g_lambda(L) = L^lambda - 1 - lambda (L - 1)`
/// (`lambda > 1` or `lambda < 0`, so `g >= 0` with equality only at `L = 1`).
fn ln_g(lambda: f64, ell: f64) -> f64 {
    if ell == 0.0 {
        return f64::NEG_INFINITY;
    }
    let t = lambda * ell;
    if t.abs() <= 1.0 && ell.abs() <= 1.0 {
        // Taylor series in ell: g = sum_{k >= 2} (lambda^k - lambda) ell^k / k!
        // (no cancellation of the leading terms). d = lambda^{k-1} - 1 by the recurrence
        // d_k = lambda d_{k-1} + (lambda - 1), exact in sign, no subtraction of near-equal
        // numbers for lambda > 1.
        // The loop stops once the bound |t|^k/k! + |lambda| |ell|^k/k! on every later
        // term is negligible (a single term may vanish, e.g. lambda = -1, k odd).
        let mut d = lambda - 1.0; // lambda^1 - 1
        let mut pow = ell; // ell^k / k!, k = 1
        let mut t_pow = t.abs(); // |t|^k / k!, k = 1
        let mut sum = 0.0;
        for k in 2..=60 {
            pow *= ell / f64::from(k);
            t_pow *= t.abs() / f64::from(k);
            sum += lambda * d * pow;
            if t_pow + (lambda * pow).abs() <= 1e-18 * sum.abs() {
                break;
            }
            d = lambda * d + (lambda - 1.0);
        }
        return if sum > 0.0 {
            sum.ln()
        } else {
            f64::NEG_INFINITY
        };
    }
    // g = e^t - lambda e^ell + (lambda - 1), scaled by e^{-m} (m: the largest log-term).
    let c = lambda - 1.0;
    let lb = ell + lambda.abs().ln();
    let m = t.max(lb).max(c.abs().ln());
    let s = exp_or_zero(t - m) - lambda.signum() * exp_or_zero(lb - m) + c * exp_or_zero(-m);
    if s > 0.0 {
        m + s.ln()
    } else {
        f64::NEG_INFINITY
    }
}

/// An upper bound on `ln g_lambda(L)` without transcendental functions of `ell`:
/// `g <= e^t + (lambda - 1)` for `lambda > 1`, `g <= e^t + |lambda| e^ell` for
/// `lambda < 0`, and `a + b <= 2 max(a, b)`.
fn ln_g_upper(lambda: f64, ell: f64, ln_other: f64) -> f64 {
    let t = lambda * ell;
    let other = if lambda > 1.0 {
        ln_other
    } else {
        ell + ln_other
    };
    std::f64::consts::LN_2 + t.max(other)
}

/// The grid of one `(q, z)` pair: `x_i = (i - i0) h`, with `ln mu_0(x_i)` and `ln L(x_i)`.
struct Grid {
    h: f64,
    i0: i64,
    ln_phi: Vec<f64>,
    ln_l: Vec<f64>,
}

impl Grid {
    /// Grid of step `h` covering `[-half_width, half_width]`.
    fn new(q: f64, z: f64, h: f64, half_width: f64) -> Self {
        let i0 = (half_width / h).ceil() as i64;
        let n = 2 * i0 + 1;
        let two_z2 = 2.0 * z * z;
        let ln_norm = (z * (2.0 * std::f64::consts::PI).sqrt()).ln();
        let mut ln_phi = Vec::with_capacity(n as usize);
        let mut ln_l = Vec::with_capacity(n as usize);
        for i in 0..n {
            let x = (i - i0) as f64 * h;
            ln_phi.push(-x * x / two_z2 - ln_norm);
            ln_l.push(ln_likelihood_ratio(q, (2.0 * x - 1.0) / two_z2));
        }
        Self {
            h,
            i0,
            ln_phi,
            ln_l,
        }
    }

    /// `ln B_lambda` by the trapezoidal rule over `[lo, hi]`: `(step h, step 2h)`.
    fn ln_b(&self, lambda: f64, lo: f64, hi: f64) -> Result<(f64, f64), PrivacyError> {
        let n = self.ln_phi.len() as i64;
        let a = (self.i0 + (lo / self.h).floor() as i64).max(0) as usize;
        let b = (self.i0 + (hi / self.h).ceil() as i64).min(n - 1) as usize;
        let ln_other = if lambda > 1.0 {
            (lambda - 1.0).ln()
        } else {
            lambda.abs().ln()
        };
        let upper = |i: usize| self.ln_phi[i] + ln_g_upper(lambda, self.ln_l[i], ln_other);
        let ub_max = (a..=b).map(upper).fold(f64::NEG_INFINITY, f64::max);
        let mut threshold = ub_max - SKIP_NATS;
        loop {
            let (mut v_max, mut skipped) = (f64::NEG_INFINITY, 0usize);
            let mut values = Vec::with_capacity(256);
            for i in a..=b {
                if upper(i) < threshold {
                    skipped += 1;
                    continue;
                }
                let v = self.ln_phi[i] + ln_g(lambda, self.ln_l[i]);
                v_max = v_max.max(v);
                values.push((i, v));
            }
            if v_max == f64::NEG_INFINITY {
                return Ok((f64::NEG_INFINITY, f64::NEG_INFINITY));
            }
            let (mut even, mut all) = (0.0, 0.0);
            for &(i, v) in &values {
                let w = exp_or_zero(v - v_max);
                all += w;
                if (i as i64 - self.i0) % 2 == 0 {
                    even += w;
                }
            }
            let fine = v_max + (self.h * all).ln();
            let coarse = v_max + (2.0 * self.h * even).ln();
            // Skipped points: each below e^threshold, so their share of the sum is at
            // most skipped * h * e^threshold.
            let skipped_bound = (skipped as f64 * self.h).ln() + threshold;
            if skipped > 0 && skipped_bound > fine - 35.0 {
                threshold = f64::NEG_INFINITY;
                continue;
            }
            // Truncation of the range: the integrand at both ends must be negligible
            // (it decreases like a Gaussian of width z beyond them).
            for end in [a, b] {
                if upper(end) > fine - TAIL_NATS {
                    return Err(PrivacyError::Quadrature(format!(
                        "integration range too short: lambda {lambda}, end value {:.3} vs integral {fine:.3}",
                        upper(end)
                    )));
                }
            }
            return Ok((fine, coarse));
        }
    }
}

/// `ln(1 + e^{ln_b})`.
fn ln_1p_exp(ln_b: f64) -> f64 {
    ln_add_exp(0.0, ln_b)
}

/// The grids of one `(q, z)` pair: the first of step [`base_step`], then (built only
/// when the step control asks for them) grids of half the previous step.
struct Grids {
    q: f64,
    z: f64,
    half_width: f64,
    levels: Vec<Grid>,
}

impl Grids {
    /// Grids for orders up to `alpha_max`.
    fn new(q: f64, z: f64, alpha_max: f64) -> Self {
        let half_width = alpha_max + TAIL_SD * z + 2.0;
        Self {
            q,
            z,
            half_width,
            levels: vec![Grid::new(q, z, base_step(z), half_width)],
        }
    }

    fn level(&mut self, k: usize) -> &Grid {
        while self.levels.len() <= k {
            let h = self.levels.last().expect("level 0").h / 2.0;
            self.levels
                .push(Grid::new(self.q, self.z, h, self.half_width));
        }
        &self.levels[k]
    }

    /// The two one-step divergences `(D_alpha(mu_1 || mu_0), D_alpha(mu_0 || mu_1))`
    /// at `alpha <= alpha_max`, halving the step until the step control passes.
    fn divergences(&mut self, alpha: f64) -> Result<(f64, f64), PrivacyError> {
        let (q, z) = (self.q, self.z);
        let reach = TAIL_SD * z + 2.0;
        debug_assert!(alpha + reach <= self.half_width);
        let ranges = [
            (alpha, -reach, alpha + reach),
            (1.0 - alpha, -(alpha + reach), reach),
        ];
        let mut out = [0.0; 2];
        for (slot, &(lambda, lo, hi)) in out.iter_mut().zip(&ranges) {
            let mut level = 0;
            let ln_b = loop {
                let grid = self.level(level);
                let (fine, coarse) = grid.ln_b(lambda, lo, hi)?;
                if fine == coarse || (fine - coarse).abs() <= STEP_REL_TOL {
                    break fine;
                }
                if level == MAX_REFINEMENTS {
                    return Err(PrivacyError::Quadrature(format!(
                        "trapezoidal sums do not converge at q {q}, z {z}, alpha {alpha}: \
                         ln B {fine} (step {}) vs {coarse}",
                        grid.h
                    )));
                }
                level += 1;
            };
            *slot = ln_1p_exp(ln_b) / (alpha - 1.0);
        }
        Ok((out[0], out[1]))
    }
}

/// The trapezoidal step of the first grid: `min(z, z^2)/4` (module docs).
fn base_step(z: f64) -> f64 {
    z.min(z * z) / 4.0
}

fn check_qz(q: f64, z: f64, phase: usize) -> Result<(), PrivacyError> {
    if !(q > 0.0 && q <= 1.0) {
        return Err(PrivacyError::SamplingRate { phase, value: q });
    }
    if !(z > 0.0 && z.is_finite()) {
        return Err(PrivacyError::NoiseMultiplier { phase, value: z });
    }
    Ok(())
}

/// The one-step divergences of the Poisson-subsampled Gaussian mechanism at order
/// `alpha > 1`: `(D_alpha(mu_1 || mu_0), D_alpha(mu_0 || mu_1))` by quadrature
/// (module docs).
pub fn subsampled_gaussian_divergences(
    q: f64,
    z: f64,
    alpha: f64,
) -> Result<(f64, f64), PrivacyError> {
    check_qz(q, z, 1)?;
    if !(alpha > 1.0 && alpha.is_finite()) {
        return Err(PrivacyError::Order(alpha));
    }
    Grids::new(q, z, alpha).divergences(alpha)
}

/// RDP at order `alpha > 1` of one step of the Poisson-subsampled Gaussian mechanism
/// (add/remove-one adjacency, Mironov, Talwar & Zhang 2019, Sec. 3): the larger of the
/// two divergences of [`subsampled_gaussian_divergences`].
pub fn rdp_subsampled_gaussian_quadrature(q: f64, z: f64, alpha: f64) -> Result<f64, PrivacyError> {
    let (up, down) = subsampled_gaussian_divergences(q, z, alpha)?;
    Ok(up.max(down))
}

/// RDP curve of a composition of phases `(q, z, steps)` on a grid of orders:
/// `sum_phases steps * rdp(q, z, alpha)` (Mironov 2017, Prop. 1), by quadrature.
pub fn rdp_curve_quadrature(
    phases: &[(f64, f64, u64)],
    orders: &[f64],
) -> Result<Vec<f64>, PrivacyError> {
    if phases.is_empty() {
        return Err(PrivacyError::NoPhases);
    }
    if orders.is_empty() {
        return Err(PrivacyError::NoOrders);
    }
    if let Some(&bad) = orders.iter().find(|a| !(**a > 1.0 && a.is_finite())) {
        return Err(PrivacyError::Order(bad));
    }
    let alpha_max = orders.iter().copied().fold(1.0, f64::max);
    let mut curve = vec![0.0; orders.len()];
    for (k, &(q, z, steps)) in phases.iter().enumerate() {
        check_qz(q, z, k + 1)?;
        if steps == 0 {
            return Err(PrivacyError::ZeroSteps { phase: k + 1 });
        }
        let mut grids = Grids::new(q, z, alpha_max);
        for (c, &alpha) in curve.iter_mut().zip(orders) {
            let (up, down) = grids.divergences(alpha)?;
            *c += steps as f64 * up.max(down);
        }
    }
    Ok(curve)
}

/// The improved RDP-to-DP conversion at one order (Canonne, Kamath & Steinke 2020,
/// Prop. 12; Balle et al. 2020, Thm 21):
/// `eps = r + ln((alpha - 1)/alpha) - (ln delta + ln alpha)/(alpha - 1)`, clamped at 0;
/// and `0` when `delta^2 >= 1 - e^{-r}` (then the total variation distance, at most
/// `sqrt(1 - e^{-KL})` by Bretagnolle–Huber with `KL <= r`, is at most `delta`), as
/// in dp_accounting.
pub fn improved_conversion_at(alpha: f64, r: f64, delta: f64) -> f64 {
    if r.is_nan() || r == f64::INFINITY {
        return f64::INFINITY;
    }
    if r <= 0.0 || delta * delta >= -(-r).exp_m1() {
        return 0.0;
    }
    let eps = r + ((alpha - 1.0) / alpha).ln() - (delta.ln() + alpha.ln()) / (alpha - 1.0);
    eps.max(0.0)
}

/// `(eps, optimal order)` of the composition of `phases` `(q, z, steps)` at `delta`:
/// the quadrature RDP curve on `orders`, the improved conversion, minimised.
pub fn epsilon_subsampled_gaussian_with_orders(
    phases: &[(f64, f64, u64)],
    delta: f64,
    orders: &[f64],
) -> Result<(f64, f64), PrivacyError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(PrivacyError::Delta(delta));
    }
    let curve = rdp_curve_quadrature(phases, orders)?;
    let mut best = (f64::INFINITY, orders[0]);
    for (&alpha, &r) in orders.iter().zip(&curve) {
        let eps = improved_conversion_at(alpha, r, delta);
        if eps < best.0 {
            best = (eps, alpha);
        }
    }
    if best.0.is_finite() {
        Ok(best)
    } else {
        Err(PrivacyError::Unbounded)
    }
}

/// The `(eps, delta)` guarantee of the composition of `phases` `(q, z, steps)`
/// (Poisson-subsampled Gaussian steps, add/remove-one adjacency): the independent
/// counterpart of the project's RDP accountant (module docs), minimised over
/// [`quadrature_orders`].
///
/// Results are kept in a memo ([`super::memo`]): asked again with the same arguments,
/// the stored bits are returned.
pub fn epsilon_subsampled_gaussian(
    phases: &[(f64, f64, u64)],
    delta: f64,
) -> Result<f64, PrivacyError> {
    static MEMO: Memo<f64> = Memo::new();
    let mut floats = vec![delta];
    let mut steps = Vec::with_capacity(phases.len());
    for &(q, z, t) in phases {
        floats.extend([q, z]);
        steps.push(t);
    }
    memoized(&MEMO, Key::plain(&floats, &steps), || {
        epsilon_subsampled_gaussian_with_orders(phases, delta, &quadrature_orders()).map(|(e, _)| e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_series_and_closed_form_meet() {
        for lambda in [1.01, 1.5, 2.0, 7.3, 256.0, -0.01, -1.0, -4.5, -255.0] {
            for ell in [1e-9, -1e-9, 1e-3, -1e-3, 0.5 / lambda, -0.9 / lambda] {
                let l: f64 = ell;
                let series = ln_g(lambda, l);
                // the closed form, only where it has no cancellation problem
                let direct = (l * lambda).exp_m1() - lambda * l.exp_m1();
                if direct > 1e-6 {
                    assert!(
                        (series - direct.ln()).abs() < 1e-9,
                        "lambda {lambda} ell {l}: {series} vs {}",
                        direct.ln()
                    );
                }
            }
        }
    }

    #[test]
    fn upper_bound_bounds() {
        for lambda in [1.01, 3.0, 256.0, -0.01, -63.0] {
            let other = if lambda > 1.0 {
                (lambda - 1.0_f64).ln()
            } else {
                lambda.abs().ln()
            };
            for ell in [-30.0, -1.0, -1e-3, 1e-3, 0.7, 5.0, 40.0] {
                assert!(ln_g(lambda, ell) <= ln_g_upper(lambda, ell, other) + 1e-12);
            }
        }
    }
}
