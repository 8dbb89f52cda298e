//! Composition of discretised privacy loss distributions by FFT, the tail bounds that
//! make the circular convolution's wrap-around harmless, and `ε` from the composed
//! distribution's hockey-stick divergence.
//!
//! The composed loss `S = Σ_t L̃_t` lives on the grid `kΔ`; a window of `N` grid points
//! `k ∈ [k_lo, k_lo + N)` holds it, computed as the circular convolution of the steps'
//! mass functions (each placed at `i mod N`): the product of their discrete Fourier
//! transforms, each raised to its phase's number of steps (Koskela, Jälkö & Honkela
//! 2020, "Computing tight differential privacy guarantees using FFT", Sec. 4). Mass of
//! `S` outside the window wraps around into it; a Chernoff bound on the exact mass
//! function's moment generating function bounds how much ([`tail_bounds`]).
use super::loss::StepPmf;
use rustfft::num_complex::Complex;
use rustfft::FftPlanner;

/// One phase's step mass function and its number of steps.
pub struct PhasePmf {
    pub pmf: StepPmf,
    pub steps: f64,
}

/// `ln M(λ) = ln Σ_i p_i e^{λ ℓ_i}` of one step's (sub-)mass function, given its
/// positive masses as `(ln p_i, ℓ_i)`.
fn ln_mgf(points: &[(f64, f64)], lambda: f64) -> f64 {
    let best = points
        .iter()
        .map(|(lp, l)| lp + lambda * l)
        .fold(f64::NEG_INFINITY, f64::max);
    if best == f64::NEG_INFINITY {
        return best;
    }
    let s: f64 = points
        .iter()
        .map(|(lp, l)| (lp + lambda * l - best).exp())
        .sum();
    best + s.ln()
}

/// Mean and variance of the composed loss (each step's sub-mass function normalised).
pub fn moments(phases: &[PhasePmf], dl: f64) -> (f64, f64) {
    let (mut mean, mut var) = (0.0, 0.0);
    for ph in phases {
        let total: f64 = ph.pmf.mass.iter().sum();
        let (mut m1, mut m2) = (0.0, 0.0);
        for (k, &m) in ph.pmf.mass.iter().enumerate() {
            let l = (ph.pmf.first + k as i64) as f64 * dl;
            m1 += m * l;
            m2 += m * l * l;
        }
        let mu = m1 / total;
        mean += ph.steps * mu;
        var += ph.steps * (m2 / total - mu * mu).max(0.0);
    }
    (mean, var)
}

/// The cumulant generating function `K(λ) = Σ_phases steps·ln M(λ)` of the composed loss
/// on a fixed set of `λ` (both signs), from which Chernoff bounds
/// `P(S ≥ h) ≤ e^{K(λ) − λh}` (λ > 0) and `P(S ≤ h) ≤ e^{K(λ) − λh}` (λ < 0) follow for
/// any `h`. Any `λ` gives a valid bound; the set only decides how tight.
pub struct Cumulants {
    points: Vec<(f64, f64)>,
}

impl Cumulants {
    pub fn new(phases: &[PhasePmf], dl: f64, sd: f64) -> Self {
        let scale = 1.0 / sd.max(dl);
        let logs: Vec<Vec<(f64, f64)>> = phases
            .iter()
            .map(|ph| {
                ph.pmf
                    .mass
                    .iter()
                    .enumerate()
                    .filter(|(_, &m)| m > 0.0)
                    .map(|(k, &m)| (m.ln(), (ph.pmf.first + k as i64) as f64 * dl))
                    .collect()
            })
            .collect();
        let mut points = Vec::new();
        for j in -10..=10 {
            let mag = scale * 1.8f64.powi(j);
            for lambda in [mag, -mag] {
                let k: f64 = phases
                    .iter()
                    .zip(&logs)
                    .map(|(ph, lg)| ph.steps * ln_mgf(lg, lambda))
                    .sum();
                if k.is_finite() {
                    points.push((lambda, k));
                }
            }
        }
        Self { points }
    }

    /// Bound on `P(S ≥ h)`.
    pub fn upper_tail(&self, h: f64) -> f64 {
        self.points
            .iter()
            .filter(|(l, _)| *l > 0.0)
            .map(|(l, k)| (k - l * h).exp())
            .fold(1.0, f64::min)
    }

    /// Bound on `P(S ≤ h)`.
    pub fn lower_tail(&self, h: f64) -> f64 {
        self.points
            .iter()
            .filter(|(l, _)| *l < 0.0)
            .map(|(l, k)| (k - l * h).exp())
            .fold(1.0, f64::min)
    }
}

/// The composed mass function on the window `k_lo .. k_lo + n` (length `n`), with the
/// wrapped-around mass included (bounded by the caller) and negative rounding noise of
/// the FFT set to zero; also returns the magnitude of that noise (the sum of the
/// negative parts), which the caller adds to its floating-point slack.
pub fn compose(phases: &[PhasePmf], n: usize, k_lo: i64) -> (Vec<f64>, f64) {
    let mut planner = FftPlanner::<f64>::new();
    let fwd = planner.plan_fft_forward(n);
    let inv = planner.plan_fft_inverse(n);
    let mut total = vec![Complex::new(1.0, 0.0); n];
    let nn = n as i64;
    for ph in phases {
        let mut buf = vec![Complex::new(0.0, 0.0); n];
        for (k, &m) in ph.pmf.mass.iter().enumerate() {
            let idx = (ph.pmf.first + k as i64).rem_euclid(nn) as usize;
            buf[idx].re += m;
        }
        fwd.process(&mut buf);
        let steps = ph.steps as u64;
        for (t, b) in total.iter_mut().zip(&buf) {
            *t *= powu(*b, steps);
        }
    }
    inv.process(&mut total);
    let scale = 1.0 / n as f64;
    // Position p holds the grid index k ≡ p (mod n) inside the window: rotate so that
    // out[j] is grid index k_lo + j.
    let shift = k_lo.rem_euclid(nn) as usize;
    let mut out = vec![0.0; n];
    let mut negative = 0.0;
    for (j, o) in out.iter_mut().enumerate() {
        let v = total[(shift + j) % n].re * scale;
        if v < 0.0 {
            negative -= v;
        } else {
            *o = v;
        }
    }
    (out, negative)
}

/// `c^e` by binary exponentiation (about `2 log2 e` complex products, so rounding grows
/// with `log e`, not `e`).
fn powu(mut c: Complex<f64>, mut e: u64) -> Complex<f64> {
    let mut r = Complex::new(1.0, 0.0);
    while e > 0 {
        if e & 1 == 1 {
            r *= c;
        }
        e >>= 1;
        if e > 0 {
            c *= c;
        }
    }
    r
}

/// The smallest `ε` with `δ(ε) ≤ target`, where `δ(ε) = Σ_k m_k (1 − e^{ε − s_k})_+` is the
/// hockey-stick divergence of the mass function `m` on the points `s_k = (k_lo + k)Δ`
/// (continuous and decreasing in `ε`). `None` when `δ` at the window's lower end is
/// already below `target` (the root lies below the window).
pub fn epsilon_for(m: &[f64], k_lo: i64, dl: f64, target: f64) -> Option<f64> {
    let n = m.len();
    let e = (-dl).exp();
    // Backward: SP_k = Σ_{j≥k} m_j, SE_k = Σ_{j≥k} m_j e^{−(s_j − s_k)}.
    let mut sp = 0.0;
    let mut se = 0.0;
    // Walk down from the top; at each k, δ(s_{k−1}) = SP_k − e^{−Δ} SE_k.
    for k in (0..n).rev() {
        sp += m[k];
        se = m[k] + e * se;
        let at_below = sp - e * se; // δ at s_{k−1}
        if at_below >= target {
            // The root lies in [s_{k−1}, s_k): δ(ε) = SP_k − e^{ε − s_k} SE_k there.
            let s_k = (k_lo + k as i64) as f64 * dl;
            if se <= 0.0 {
                return Some(s_k);
            }
            let x = ((sp - target) / se).max(f64::MIN_POSITIVE);
            return Some((s_k + x.ln()).min(s_k));
        }
    }
    None
}
