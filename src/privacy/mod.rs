//! Privacy accounting: exact Gaussian DP, zCDP, RDP (Gaussian and Poisson-subsampled
//! Gaussian), conversion to (epsilon, delta), noise calibration, empirical auditing.
//!
//! Where to find things:
//! * [`gdp`] — exact mu-GDP of full-batch Gaussian composition (the oracle).
//! * [`zcdp`] — rho-zCDP and its conversions.
//! * [`rdp`] — RDP of the (subsampled) Gaussian, composition, RDP → (eps, delta).
//! * [`pld`] — a certified bracket `[ε_lower, ε_upper]` from the privacy loss
//!   distribution of the Poisson-subsampled Gaussian, composed by FFT.
//! * [`rdp_quadrature`] — an independent RDP accountant for the subsampled Gaussian:
//!   the Rényi divergences by numerical integration of their definition.
//! * [`calibrate`](mod@calibrate) — smallest noise multiplier meeting a target
//!   epsilon, one phase or two phases (TP-TopK).
//! * [`epsilon`] — the single entry point: a list of [`Phase`]s, an [`Accountant`],
//!   a delta and the accountant's formulas ([`AccountantRecipe`], the paper's by
//!   default) → an [`Accounted`] epsilon.
//!
//! Adjacency: add/remove-one (Poisson sampling, DESIGN.md section 2.3); the noise
//! multiplier `z` is the noise standard deviation divided by the L2 sensitivity of
//! the summed clipped gradients. For full-batch DP-GD under replace-one adjacency,
//! pass the multiplier relative to the replace-one sensitivity (2C for the sum).
//! The empirical audit (DESIGN.md section 3) comes later, after the training core.
pub mod audit;
pub mod calibrate;
mod error;
pub mod gdp;
mod memo;
pub mod pld;
pub mod rdp;
pub mod rdp_quadrature;
mod special;
pub mod zcdp;

pub use calibrate::{
    calibrate, calibrate_two_phase, Calibrated, PhasePlan, TwoPhaseCalibrated, CALIBRATION_REL_TOL,
};
pub use error::PrivacyError;
pub use gdp::{gdp_delta, gdp_epsilon, gdp_mu};
pub use rdp::{
    classic_conversion, default_orders, improved_conversion, moments_accountant_epsilon,
    rdp_classic_epsilon, rdp_curve, rdp_epsilon_with_orders, rdp_gaussian, rdp_sampled_gaussian,
    AccountantRecipe,
};
pub use zcdp::{zcdp_epsilon, zcdp_epsilon_standard, zcdp_rho};

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One phase of training: `steps` steps of the Poisson-subsampled Gaussian mechanism
/// with sampling rate `q` and noise multiplier `z` (DESIGN.md section 2.3; `q = 1` is
/// full-batch DP-GD).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Poisson sampling rate `q` in (0, 1].
    pub sampling_rate: f64,
    /// Noise multiplier `z > 0` (noise std / L2 sensitivity).
    pub noise_multiplier: f64,
    /// Number of steps, at least 1.
    pub steps: u64,
}

impl Phase {
    /// A phase (not validated here: every accountant validates its input).
    pub const fn new(sampling_rate: f64, noise_multiplier: f64, steps: u64) -> Self {
        Self {
            sampling_rate,
            noise_multiplier,
            steps,
        }
    }

    /// A full-batch phase (`q = 1`).
    pub const fn full_batch(noise_multiplier: f64, steps: u64) -> Self {
        Self::new(1.0, noise_multiplier, steps)
    }
}

/// Which accountant turns a list of phases into an epsilon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accountant {
    /// Exact Gaussian DP (full batch only).
    Gdp,
    /// Rényi DP with the improved conversion on [`default_orders`].
    Rdp,
    /// zCDP (full batch only).
    Zcdp,
    /// Privacy loss distribution, Poisson-subsampled Gaussian: the upper end of the
    /// certified bracket of [`pld::pld_epsilon`] at [`pld::DEFAULT_WIDTH`].
    Pld,
}

impl Accountant {
    /// Lower-case name, as on the command line and in JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            Accountant::Gdp => "gdp",
            Accountant::Rdp => "rdp",
            Accountant::Zcdp => "zcdp",
            Accountant::Pld => "pld",
        }
    }
}

impl fmt::Display for Accountant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Accountant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "gdp" => Ok(Accountant::Gdp),
            "rdp" => Ok(Accountant::Rdp),
            "zcdp" => Ok(Accountant::Zcdp),
            "pld" => Ok(Accountant::Pld),
            other => Err(format!(
                "unknown accountant `{other}` (expected gdp, rdp, zcdp or pld)"
            )),
        }
    }
}

/// An accounted privacy guarantee: the composition is `(epsilon, delta)`-DP.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Accounted {
    /// The epsilon (an upper bound for RDP and zCDP, exact for GDP).
    pub epsilon: f64,
    /// The optimal Rényi order (RDP only).
    pub order: Option<f64>,
}

/// Validate a list of phases: non-empty, `q` in (0, 1], `z` positive finite,
/// `steps >= 1`. Errors name the 1-based phase index.
pub fn validate_phases(phases: &[Phase]) -> Result<(), PrivacyError> {
    if phases.is_empty() {
        return Err(PrivacyError::NoPhases);
    }
    for (k, p) in phases.iter().enumerate() {
        let phase = k + 1;
        if !(p.sampling_rate > 0.0 && p.sampling_rate <= 1.0) {
            return Err(PrivacyError::SamplingRate {
                phase,
                value: p.sampling_rate,
            });
        }
        if !(p.noise_multiplier > 0.0 && p.noise_multiplier.is_finite()) {
            return Err(PrivacyError::NoiseMultiplier {
                phase,
                value: p.noise_multiplier,
            });
        }
        if p.steps == 0 {
            return Err(PrivacyError::ZeroSteps { phase });
        }
    }
    Ok(())
}

fn validate_delta(delta: f64) -> Result<(), PrivacyError> {
    if delta > 0.0 && delta < 1.0 {
        Ok(())
    } else {
        Err(PrivacyError::Delta(delta))
    }
}

fn require_full_batch(acc: Accountant, phases: &[Phase]) -> Result<(), PrivacyError> {
    match phases.iter().position(|p| p.sampling_rate < 1.0) {
        Some(k) => Err(PrivacyError::SubsampledPhase {
            accountant: acc.name(),
            phase: k + 1,
            q: phases[k].sampling_rate,
        }),
        None => Ok(()),
    }
}

/// The `(epsilon, delta)` guarantee of the composition of `phases` under `acc`.
///
/// * [`Accountant::Gdp`]: exact, `mu = sqrt(sum steps / z^2)` (Dong, Roth & Su 2019,
///   Cor. 3.3) converted by Cor. 2.13 ([`gdp_epsilon`]); requires `q = 1`.
/// * [`Accountant::Zcdp`]: `rho = sum steps / (2 z^2)` (Bun & Steinke 2016) converted
///   by [`zcdp_epsilon`]; requires `q = 1`.
/// * [`Accountant::Rdp`]: RDP curves of the phases added (Mironov 2017, Prop. 1),
///   improved conversion (Canonne, Kamath & Steinke 2020, Prop. 12) minimised over
///   [`default_orders`]; reports the optimal order. Per-step RDP, composition and
///   conversion are `recipe`'s ([`AccountantRecipe::PAPER`]: the ones just cited).
///
/// Results are kept in a memo ([`memo`]): asked again with the same arguments, the stored
/// bits are returned.
pub fn epsilon(
    acc: Accountant,
    phases: &[Phase],
    delta: f64,
    recipe: &AccountantRecipe,
) -> Result<Accounted, PrivacyError> {
    static MEMO: memo::Memo<Accounted> = memo::Memo::new();
    let mut floats = vec![delta];
    let mut steps = Vec::with_capacity(phases.len());
    for p in phases {
        floats.extend([p.sampling_rate, p.noise_multiplier]);
        steps.push(p.steps);
    }
    let key = memo::Key::new(acc, &floats, &steps, recipe);
    memo::memoized(&MEMO, key, || epsilon_once(acc, phases, delta, recipe))
}

/// [`epsilon`] without the memo (calibration's bisections: each `z` is asked once).
fn epsilon_once(
    acc: Accountant,
    phases: &[Phase],
    delta: f64,
    recipe: &AccountantRecipe,
) -> Result<Accounted, PrivacyError> {
    validate_phases(phases)?;
    validate_delta(delta)?;
    let pairs = || phases.iter().map(|p| (p.steps, p.noise_multiplier));
    match acc {
        Accountant::Gdp => {
            require_full_batch(acc, phases)?;
            let eps = gdp_epsilon(gdp_mu(pairs()), delta)?;
            Ok(Accounted {
                epsilon: eps,
                order: None,
            })
        }
        Accountant::Zcdp => {
            require_full_batch(acc, phases)?;
            let eps = zcdp_epsilon(zcdp_rho(pairs()), delta)?;
            Ok(Accounted {
                epsilon: eps,
                order: None,
            })
        }
        Accountant::Rdp => {
            let (eps, order) =
                rdp::rdp_epsilon_with_orders(phases, delta, &default_orders(), recipe)?;
            Ok(Accounted {
                epsilon: eps,
                order: Some(order),
            })
        }
        Accountant::Pld => {
            let b = pld::pld_epsilon(phases, delta, pld::DEFAULT_WIDTH)?;
            Ok(Accounted {
                epsilon: b.epsilon_upper,
                order: None,
            })
        }
    }
}
