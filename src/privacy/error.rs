//! Errors of the privacy accountants and of the noise calibration.
//!
//! Every message names the offending quantity and its value, so the CLI can print it
//! as a one-line diagnostic (`error: ...`, exit status 2).
use thiserror::Error;

/// What can go wrong when accounting for, or calibrating, a Gaussian mechanism.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PrivacyError {
    /// No phase was given: there is nothing to account for.
    #[error("no phases given: at least one phase (q, z, steps) is required")]
    NoPhases,
    /// A sampling rate outside (0, 1] (or NaN).
    #[error("phase {phase}: sampling rate q must be in (0, 1], got {value}")]
    SamplingRate {
        /// 1-based index of the phase.
        phase: usize,
        /// The rejected value.
        value: f64,
    },
    /// A noise multiplier that is not a positive finite number.
    #[error("phase {phase}: noise multiplier z must be positive and finite, got {value}")]
    NoiseMultiplier {
        /// 1-based index of the phase.
        phase: usize,
        /// The rejected value.
        value: f64,
    },
    /// A phase with zero steps.
    #[error("phase {phase}: the number of steps must be at least 1, got 0")]
    ZeroSteps {
        /// 1-based index of the phase.
        phase: usize,
    },
    /// A delta outside (0, 1) (or NaN).
    #[error("delta must be in (0, 1), got {0}")]
    Delta(f64),
    /// A target epsilon that is not a positive finite number.
    #[error("target epsilon must be positive and finite, got {0}")]
    TargetEpsilon(f64),
    /// A Rényi order that is not a finite number > 1.
    #[error("Renyi order alpha must be finite and > 1, got {0}")]
    Order(f64),
    /// An empty grid of Rényi orders.
    #[error("the grid of Renyi orders is empty")]
    NoOrders,
    /// The RDP curve and the order grid have different lengths.
    #[error("{orders} Renyi orders but {values} RDP values")]
    CurveLength {
        /// Number of orders.
        orders: usize,
        /// Number of RDP values.
        values: usize,
    },
    /// A phase-1 budget fraction outside (0, 1) (or NaN).
    #[error("phase-1 budget fraction rho must be in (0, 1), got {0}")]
    BudgetFraction(f64),
    /// A full-batch accountant (GDP, zCDP) was given a subsampled phase.
    #[error(
        "phase {phase}: the {accountant} accountant requires full-batch phases (q = 1), \
         got q = {q}; use the rdp accountant for subsampling"
    )]
    SubsampledPhase {
        /// Name of the accountant (`gdp`, `zcdp`).
        accountant: &'static str,
        /// 1-based index of the phase.
        phase: usize,
        /// The sampling rate of that phase.
        q: f64,
    },
    /// The accounted epsilon is not finite (the mechanism gives no useful guarantee
    /// at any order of the grid).
    #[error("the accounted epsilon is not finite (noise too small for any useful guarantee)")]
    Unbounded,
    /// A PLD bracket width that is not a positive finite number.
    #[error("the PLD bracket width must be positive and finite, got {0}")]
    Width(f64),
    /// The independent quadrature accountant ([`super::rdp_quadrature`]) could not
    /// meet its error control.
    #[error("RDP quadrature failed: {0}")]
    Quadrature(String),
    /// Bisection could not bracket a noise multiplier meeting the target.
    #[error("calibration failed: {0}")]
    Calibration(String),
}
