//! A certified privacy-loss-distribution (PLD) accountant for the Poisson-subsampled
//! Gaussian mechanism: `ε(δ)` of a composition of phases as a bracket
//! `[ε_lower, ε_upper]` that contains the exact value of the composition of the
//! mechanism's tight dominating pairs (the quantity dp_accounting's and Opacus' PLD and
//! PRV accountants approximate).
//!
//! How (module [`loss`] for one step, [`compose`] for the composition):
//! 1. Each step's privacy loss `L`, in each direction of add/remove adjacency, is
//!    discretised on the grid `ℓ_i = iΔ` by the pessimistic "connect-the-dots" split
//!    (Doroshenko et al. 2022, Sec. 3): a mean-preserving spread of `e^{−L}`, so the
//!    discretised composition's `δ(ε)` is an upper bound of the true one (Jensen:
//!    `(1 − e^ε·Π_t e^{−L_t})_+` is convex in each `e^{−L_t}`).
//! 2. The steps are composed by FFT (Koskela, Jälkö & Honkela 2020, Sec. 4): the
//!    transforms multiplied, each raised to its phase's number of steps.
//! 3. The bracket: `ε_upper` solves `δ̂(ε) + slack_up = δ` with `δ̂` the composed
//!    hockey-stick divergence. For `ε_lower`: the spread moves each step's loss by
//!    `D_t ∈ [−Δ, Δ]` with `0 ≤ E[D_t | L_t] ≤ b(Δ) ≈ Δ²/8` ([`loss::spread_bias`]), so by
//!    the Azuma–Hoeffding inequality the composed discretised loss exceeds the true one by
//!    more than `T·b + a`, `a = Δ·sqrt(T ln(1/η)/2)`, with probability at most `η`;
//!    hence `δ(ε) ≥ δ̂(ε + T·b + a) − η − slack_low`, and `ε_lower` solves
//!    `δ̂(ε') = δ + η + slack_low`, minus `T·b + a`.
//!    The slacks: the tails cut from each step (at most `δ·10⁻⁶` in all per side,
//!    charged in full), the composed mass outside the FFT window that wraps around
//!    (bounded by Chernoff on the exact moment generating function, at most `δ·10⁻⁶`),
//!    and the FFT's rounding noise (ten times the negative mass it produced). `η = δ·10⁻⁵`.
//! 4. `Δ` is chosen so that `a ≈ 0.8·width` for the requested `width`; the FFT length is
//!    the window over `Δ`, capped at [`MAX_POINTS`] (then `Δ` grows and the bracket is
//!    wider than asked: [`PldBracket::width`] says how wide it is).
//!
//! The bracket is exact mathematics up to floating-point rounding of the masses (a
//! relative error below about `1e-6` of each cell's split, far inside the width).
//! Adjacency: add/remove-one; `δ(ε)` is the larger of the two directions' composed
//! divergences (both directions compose with themselves: the same sample is added or
//! removed at every step).
pub mod compose;
pub mod loss;

use super::{validate_delta, validate_phases, Phase, PrivacyError};
use compose::{compose, epsilon_for, moments, Cumulants, PhasePmf};
use loss::{spread_bias, Direction, StepLoss};
use serde::Serialize;

/// Default target width of the bracket (`--width`).
pub const DEFAULT_WIDTH: f64 = 0.01;
/// Largest FFT length (2²², 64 MiB per complex buffer).
pub const MAX_POINTS: usize = 1 << 22;

/// How the answer was computed (the `discretisation` object of `--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Discretisation {
    /// Grid spacing `Δ` of the privacy loss.
    pub interval: f64,
    /// FFT length (grid points of the composed loss's window).
    pub points: usize,
    /// The window of the composed loss `[lo, hi]` (of the direction that decided `ε`).
    pub window: [f64; 2],
    /// `T·b(Δ) + a`: the lower end's allowance for the discretisation.
    pub shift: f64,
    /// `η` of the Azuma–Hoeffding bound.
    pub eta: f64,
    /// The method's name.
    pub method: &'static str,
}

/// `ε(δ)` as a certified bracket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PldBracket {
    pub epsilon_lower: f64,
    pub epsilon_upper: f64,
    pub discretisation: Discretisation,
}

impl PldBracket {
    /// `ε_upper − ε_lower`.
    pub fn width(&self) -> f64 {
        self.epsilon_upper - self.epsilon_lower
    }
}

/// One direction's bracket.
struct Side {
    lower: f64,
    upper: f64,
    window: [f64; 2],
    points: usize,
}

/// The certified bracket of `ε(δ)` for the composition of `phases`, of width about
/// `width` (module docs).
pub fn pld_epsilon(phases: &[Phase], delta: f64, width: f64) -> Result<PldBracket, PrivacyError> {
    validate_phases(phases)?;
    validate_delta(delta)?;
    if !(width > 0.0 && width.is_finite()) {
        return Err(PrivacyError::Width(width));
    }
    let total_steps: f64 = phases.iter().map(|p| p.steps as f64).sum();
    let eta = 1e-5 * delta;
    let root = (total_steps * (1.0 / eta).ln() / 2.0).sqrt();
    // The window of the composed loss hardly depends on Δ: measure it on a coarse grid
    // first, so that a window too long for MAX_POINTS at the asked-for Δ is never
    // discretised finely.
    let probe = probe_window(phases, delta)?;
    let mut dl = (0.8 * width / root).max(probe * 1.1 / MAX_POINTS as f64);
    // At most three rounds: a grid that needs more than MAX_POINTS is coarsened.
    for _ in 0..4 {
        match sides(phases, delta, eta, dl)? {
            Ok((remove, add)) => {
                let shift = total_steps * spread_bias(dl) + dl * root;
                let decide = if remove.upper >= add.upper {
                    &remove
                } else {
                    &add
                };
                let lower = (remove.lower.max(add.lower) - shift).max(0.0);
                let upper = remove.upper.max(add.upper).max(0.0);
                return Ok(PldBracket {
                    epsilon_lower: lower.min(upper),
                    epsilon_upper: upper,
                    discretisation: Discretisation {
                        interval: dl,
                        points: decide.points,
                        window: decide.window,
                        shift,
                        eta,
                        method: "connect-the-dots (pessimistic), FFT, Azuma-Hoeffding lower end",
                    },
                });
            }
            Err(needed) => dl *= needed as f64 / MAX_POINTS as f64 * 1.05,
        }
    }
    Err(PrivacyError::Unbounded)
}

/// The step mass functions of `phases` in `direction` on the grid `dl`, with the
/// per-step tails cut at `tail`.
fn step_pmfs(phases: &[Phase], direction: Direction, dl: f64, tail: f64) -> Vec<PhasePmf> {
    phases
        .iter()
        .map(|p| PhasePmf {
            pmf: StepLoss {
                q: p.sampling_rate,
                sigma: p.noise_multiplier,
                direction,
            }
            .discretise(dl, tail),
            steps: p.steps as f64,
        })
        .collect()
}

/// The composed loss's window `[lo, hi]`: mean ± k·sd, widened until the Chernoff bound
/// of the mass outside is at most `budget` on each side.
fn window(pmfs: &[PhasePmf], dl: f64, budget: f64) -> (f64, f64, Cumulants) {
    let (mean, var) = moments(pmfs, dl);
    let sd = var.sqrt().max(dl);
    let cum = Cumulants::new(pmfs, dl, sd);
    let mut k = 4.0;
    let (mut lo, mut hi) = (mean - k * sd, mean + k * sd);
    while (cum.upper_tail(hi) > budget || cum.lower_tail(lo) > budget) && k < 1e6 {
        k *= 1.25;
        if cum.upper_tail(hi) > budget {
            hi = mean + k * sd;
        }
        if cum.lower_tail(lo) > budget {
            lo = mean - k * sd;
        }
    }
    (lo, hi, cum)
}

/// The longest window (in loss units) of the two directions, measured on a grid of
/// about 2 000 points per step.
fn probe_window(phases: &[Phase], delta: f64) -> Result<f64, PrivacyError> {
    let total_steps: f64 = phases.iter().map(|p| p.steps as f64).sum();
    let tail = 1e-6 * delta / total_steps;
    let mut longest: f64 = 0.0;
    for direction in [Direction::Remove, Direction::Add] {
        let range = phases
            .iter()
            .map(|p| {
                let s = StepLoss {
                    q: p.sampling_rate,
                    sigma: p.noise_multiplier,
                    direction,
                };
                s.upper_end(tail) - s.lower_end(tail)
            })
            .fold(0.0, f64::max);
        if !(range.is_finite() && range > 0.0) {
            return Err(PrivacyError::Unbounded);
        }
        let dl = range / 2048.0;
        let pmfs = step_pmfs(phases, direction, dl, tail);
        let (lo, hi, _) = window(&pmfs, dl, 1e-6 * delta);
        longest = longest.max(hi - lo);
    }
    Ok(longest)
}

/// Both directions at grid spacing `dl`; `Err(points needed)` when the window needs more
/// than [`MAX_POINTS`].
#[allow(clippy::type_complexity)]
fn sides(
    phases: &[Phase],
    delta: f64,
    eta: f64,
    dl: f64,
) -> Result<Result<(Side, Side), usize>, PrivacyError> {
    let total_steps: f64 = phases.iter().map(|p| p.steps as f64).sum();
    let tail = 1e-6 * delta / total_steps;
    let mut out = Vec::new();
    for direction in [Direction::Remove, Direction::Add] {
        let pmfs = step_pmfs(phases, direction, dl, tail);
        let cut_above: f64 = pmfs.iter().map(|p| p.steps * p.pmf.beyond).sum();
        let cut_below: f64 = pmfs.iter().map(|p| p.steps * p.pmf.below).sum();
        // The mass outside the window is at most δ·1e-6 on each side.
        let (lo, hi, cum) = window(&pmfs, dl, 1e-6 * delta);
        let needed = ((hi - lo) / dl).ceil() as usize + 2;
        if needed > MAX_POINTS {
            return Ok(Err(needed));
        }
        let n = needed.next_power_of_two().max(64);
        let k_lo = (lo / dl).floor() as i64;
        let w_lo = k_lo as f64 * dl;
        let w_hi = (k_lo + n as i64 - 1) as f64 * dl;
        let alias_above = cum.upper_tail(w_hi + dl);
        let alias_below = cum.lower_tail(w_lo - dl);
        let (m, negative) = compose(&pmfs, n, k_lo);
        let fp = 10.0 * negative + n as f64 * f64::EPSILON * 1e-3;
        let up_target = delta - (alias_above + cut_above + fp);
        let low_target = delta + alias_below + fp + eta + cut_below;
        if up_target.is_nan() || up_target <= 0.0 {
            return Err(PrivacyError::Unbounded);
        }
        let upper = epsilon_for(&m, k_lo, dl, up_target).unwrap_or(w_lo);
        let lower = epsilon_for(&m, k_lo, dl, low_target).unwrap_or(f64::NEG_INFINITY);
        out.push(Side {
            lower,
            upper,
            window: [w_lo, w_hi],
            points: n,
        });
    }
    let add = out.pop().expect("two directions");
    let remove = out.pop().expect("two directions");
    Ok(Ok((remove, add)))
}
