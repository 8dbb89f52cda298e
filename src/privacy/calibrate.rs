//! Noise calibration: the smallest noise multiplier meeting a target epsilon, for one
//! phase and for the two-phase TP-TopK schedule.
//!
//! The accounted epsilon is non-increasing in the noise multiplier `z` for every
//! accountant (each RDP order, `mu` and `rho` decrease in `z`), so bisection applies
//! (DESIGN.md section 2.3: "Calibration of z for a target eps by bisection").
//! The search is one-sided: the invariant `eps(hi) <= target` holds throughout and `hi`
//! is returned, so a calibrated `z` never over-spends the budget.
//!
//! A calibration is a pure function of its arguments, and the same plan is calibrated
//! many times (TP-TopK's tuner calibrates it once for each of its (learning rate, clip)
//! cells, and every replicate of a sweep point has the same plan): [`calibrate`] and
//! [`calibrate_two_phase`] keep the calibrations of this process in a memo
//! ([`super::memo`]) and return the stored result, the same bits, when asked again. The
//! bisections call the accountant without its memo (each `z` is asked once).
use super::memo::{memoized, Key, Memo};
use super::{epsilon_once as epsilon, Accountant, AccountantRecipe, Phase, PrivacyError};
use serde::Serialize;

/// Relative precision of the bisection on `z`.
pub const CALIBRATION_REL_TOL: f64 = 1e-10;
/// Search range for `z`: outside, the target is reported as unreachable.
const Z_MIN: f64 = 1e-6;
const Z_MAX: f64 = 1e8;

/// Result of a calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Calibrated {
    /// The calibrated noise multiplier (upper end of the final bracket).
    pub noise_multiplier: f64,
    /// The accounted epsilon at that noise multiplier (`<=` the target).
    pub epsilon: f64,
}

/// Sampling rate and number of steps of a phase whose noise is to be calibrated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhasePlan {
    /// Poisson sampling rate `q` in (0, 1].
    pub sampling_rate: f64,
    /// Number of steps.
    pub steps: u64,
}

/// Result of a two-phase calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TwoPhaseCalibrated {
    /// Noise multiplier of phase 1 (warm-up).
    pub noise_multiplier_1: f64,
    /// Noise multiplier of phase 2 (support-restricted).
    pub noise_multiplier_2: f64,
    /// Epsilon of phase 1 alone (`<= rho * target`).
    pub epsilon_phase1: f64,
    /// Epsilon of the composition of both phases (`<= target`).
    pub epsilon: f64,
}

fn check_target(target: f64) -> Result<(), PrivacyError> {
    if target > 0.0 && target.is_finite() {
        Ok(())
    } else {
        Err(PrivacyError::TargetEpsilon(target))
    }
}

/// A number in a message: as written when moderate, else in scientific notation (an
/// epsilon of 1e300 is not 301 digits).
fn show(x: f64) -> String {
    if x == 0.0 || (1e-4..1e7).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Epsilon as a function of `z`, with "no finite guarantee" mapped to `+inf`.
fn eps_or_inf(result: Result<f64, PrivacyError>) -> Result<f64, PrivacyError> {
    match result {
        Ok(e) => Ok(e),
        Err(PrivacyError::Unbounded) => Ok(f64::INFINITY),
        Err(e) => Err(e),
    }
}

/// One-sided bisection for the smallest `z` with `eps(z) <= target`, `eps`
/// non-increasing. Brackets by doubling / halving from `z = 1`, then bisects until
/// `hi - lo <= CALIBRATION_REL_TOL * hi`; returns `(hi, eps(hi))`.
fn bisect<F>(target: f64, eps: F) -> Result<(f64, f64), PrivacyError>
where
    F: Fn(f64) -> Result<f64, PrivacyError>,
{
    let mut hi = 1.0_f64;
    let mut eps_hi = eps(hi)?;
    let mut lo;
    if eps_hi > target {
        loop {
            lo = hi;
            hi *= 2.0;
            if hi > Z_MAX {
                return Err(PrivacyError::Calibration(format!(
                    "the target is unreachable: no noise multiplier up to the search bound \
                     z = {Z_MAX:e} reaches epsilon <= {} (z = {} gives epsilon = {})",
                    show(target),
                    show(lo),
                    show(eps_hi)
                )));
            }
            eps_hi = eps(hi)?;
            if eps_hi <= target {
                break;
            }
        }
    } else {
        lo = hi;
        loop {
            lo *= 0.5;
            if lo < Z_MIN {
                return Err(PrivacyError::Calibration(format!(
                    "even the search bound z = {Z_MIN:e} gives epsilon <= {}; \
                     the target is too loose to calibrate",
                    show(target)
                )));
            }
            let e = eps(lo)?;
            if e > target {
                break;
            }
            hi = lo;
            eps_hi = e;
        }
    }
    // Invariant: eps(lo) > target >= eps(hi).
    while hi - lo > CALIBRATION_REL_TOL * hi {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        let e = eps(mid)?;
        if e <= target {
            hi = mid;
            eps_hi = e;
        } else {
            lo = mid;
        }
    }
    Ok((hi, eps_hi))
}

/// Smallest noise multiplier `z` (to relative precision [`CALIBRATION_REL_TOL`]) such
/// that `steps` steps at sampling rate `q` are `(target, delta)`-DP under `acc` with the
/// formulas of `recipe`; never returns a `z` whose accounted epsilon exceeds the target.
pub fn calibrate(
    acc: Accountant,
    target_epsilon: f64,
    delta: f64,
    sampling_rate: f64,
    steps: u64,
    recipe: &AccountantRecipe,
) -> Result<Calibrated, PrivacyError> {
    static MEMO: Memo<Calibrated> = Memo::new();
    let key = Key::new(
        acc,
        &[target_epsilon, delta, sampling_rate],
        &[steps],
        recipe,
    );
    memoized(&MEMO, key, || {
        calibrate_once(acc, target_epsilon, delta, sampling_rate, steps, recipe)
    })
}

/// [`calibrate`] without the memo.
fn calibrate_once(
    acc: Accountant,
    target_epsilon: f64,
    delta: f64,
    sampling_rate: f64,
    steps: u64,
    recipe: &AccountantRecipe,
) -> Result<Calibrated, PrivacyError> {
    let epsilon = |acc, phases: &[Phase], delta| epsilon(acc, phases, delta, recipe);
    check_target(target_epsilon)?;
    // Validate everything once, at a placeholder z, so errors name the real problem.
    epsilon(acc, &[Phase::new(sampling_rate, 1.0, steps)], delta)?;
    let (z, eps) = bisect(target_epsilon, |z| {
        eps_or_inf(epsilon(acc, &[Phase::new(sampling_rate, z, steps)], delta).map(|a| a.epsilon))
    })?;
    Ok(Calibrated {
        noise_multiplier: z,
        epsilon: eps,
    })
}

/// Two-phase calibration for TP-TopK (fewer-coordinates paper, Sec. 7.3 "Phase and
/// privacy-budget split", and Theorem 4.1 / App. A: the reported cost is that of the
/// composed RDP of both phases, not a sum of standalone epsilons).
///
/// The paper allocates a *nominal* fraction `rho` of the budget to phase 1 and
/// computes the final cost with the composed accountant; the exact allocation rule is
/// not stated, so we fix it as follows and document it:
/// 1. `z1` is the smallest noise multiplier such that phase 1 *alone*
///    (`q1`, `T1` steps) is `(rho * target, delta)`-DP;
/// 2. `z2` is the smallest noise multiplier such that the *composition* of phase 1
///    (at `z1`) and phase 2 (`q2`, `T2` steps, `z2`) is `(target, delta)`-DP.
///
/// Both searches are one-sided, so the composed epsilon never exceeds the target.
/// Phase 2 spends whatever the composed accountant leaves, which under RDP is more
/// than `(1 - rho) * target` (composition in RDP is sub-additive in epsilon).
pub fn calibrate_two_phase(
    acc: Accountant,
    target_epsilon: f64,
    delta: f64,
    rho: f64,
    phase1: PhasePlan,
    phase2: PhasePlan,
    recipe: &AccountantRecipe,
) -> Result<TwoPhaseCalibrated, PrivacyError> {
    static MEMO: Memo<TwoPhaseCalibrated> = Memo::new();
    let key = Key::new(
        acc,
        &[
            target_epsilon,
            delta,
            rho,
            phase1.sampling_rate,
            phase2.sampling_rate,
        ],
        &[phase1.steps, phase2.steps],
        recipe,
    );
    memoized(&MEMO, key, || {
        calibrate_two_phase_once(acc, target_epsilon, delta, rho, phase1, phase2, recipe)
    })
}

/// [`calibrate_two_phase`] without the memo.
fn calibrate_two_phase_once(
    acc: Accountant,
    target_epsilon: f64,
    delta: f64,
    rho: f64,
    phase1: PhasePlan,
    phase2: PhasePlan,
    recipe: &AccountantRecipe,
) -> Result<TwoPhaseCalibrated, PrivacyError> {
    let epsilon = |acc, phases: &[Phase], delta| epsilon(acc, phases, delta, recipe);
    check_target(target_epsilon)?;
    if !(rho > 0.0 && rho < 1.0) {
        return Err(PrivacyError::BudgetFraction(rho));
    }
    let p1 = |z| Phase::new(phase1.sampling_rate, z, phase1.steps);
    let p2 = |z| Phase::new(phase2.sampling_rate, z, phase2.steps);
    epsilon(acc, &[p1(1.0), p2(1.0)], delta)?;
    let first = calibrate(
        acc,
        rho * target_epsilon,
        delta,
        phase1.sampling_rate,
        phase1.steps,
        recipe,
    )?;
    let z1 = first.noise_multiplier;
    let (z2, eps) = bisect(target_epsilon, |z| {
        eps_or_inf(epsilon(acc, &[p1(z1), p2(z)], delta).map(|a| a.epsilon))
    })?;
    Ok(TwoPhaseCalibrated {
        noise_multiplier_1: z1,
        noise_multiplier_2: z2,
        epsilon_phase1: first.epsilon,
        epsilon: eps,
    })
}
