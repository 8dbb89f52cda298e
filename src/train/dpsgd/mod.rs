//! DP-SGD with Poisson sampling and coordinate masks, and the five methods of the
//! fewer-coordinates paper ("When Do Fewer Coordinates Suffice in DP-SGD?", TP-TopK;
//! DESIGN.md section 2.3).
//!
//! Where to find things:
//! * [`model`] — logistic regression and the two-layer MLP; per-example gradients from
//!   the outer-product structure (norms without materialising, clipped sum by GEMM).
//! * [`mechanism`] — the ONE DP step every method uses (Poisson sample, mask, clip,
//!   noise on the active coordinates, divide by qN, update) and the privacy ledger.
//! * [`support`] — warm-up scores, top-k and random supports (paper Sec. 3.2).
//! * [`methods`] — DP-SGD, TP-TopK, TP-Rand, ON-TopK, ON-Rand: their schedules of
//!   masks and the training loop, [`run_method`].
//! * [`ceiling`] — the non-private ceiling of dense DP-SGD (no clipping, no noise),
//!   [`run_non_private`].
//! * [`criterion`] — Prop. 5.1's one-step criterion and Lemma 6.4's clipping-bias
//!   bound at a fixed parameter vector, measured through the DP step.
//! * [`config`] — [`MethodConfig`], a run's configuration and its checks.
//! * [`stationarity`] — Theorem 6.3, Lemma 6.4 and Corollary 6.6 along a
//!   support-restricted trajectory on problems with known constants.
//! * [`plan`] — the privacy plan: each phase's calibrated noise multiplier and step
//!   parameters.
//! * [`outcome`] — [`MethodRun`], what a run produced (privacy report, diagnostics).
//! * [`diagnostics`] — energy capture, proxy concentration, Prop. 5.3's misranking
//!   bound and its Monte Carlo estimate.
//! * [`data`](mod@data) — [`Classification`] data: digits, a synthetic mixture, and
//!   the planted-support task ([`crate::data::planted`]).
pub mod ceiling;
pub mod config;
pub mod criterion;
pub mod data;
pub mod diagnostics;
pub mod fused;
pub mod mechanism;
pub mod methods;
pub mod model;
pub mod outcome;
pub mod plan;
pub mod stationarity;
pub mod support;

pub use ceiling::{run_non_private, NonPrivateRun};
pub use config::{Method, MethodConfig};
pub use criterion::{one_step_criterion, OneStep};
pub use data::{Classification, SyntheticSpec};
pub use diagnostics::{
    misranking_bound, misranking_monte_carlo, proxy_concentration, score_mean_monte_carlo,
    support_miss_monte_carlo, MisrankingEstimate,
};
pub use mechanism::{
    dp_step, dp_step_cached, poisson_sample, privatize, ClipOrder, DpSgdRecipe, Mask, NoiseSupport,
    PrivacyLedger, ScoreSource, StepParams,
};
pub use methods::{run_method, run_method_deferred, run_method_observed, run_method_on_tape};
pub use model::{Activation, Model, ModelKind};
pub use outcome::{
    Diagnostics, HeldOutIterates, MethodRun, NoiseEnergy, PhaseReport, PrivacyReport, StepRecord,
};

/// Errors of the DP-SGD family.
#[derive(Debug, thiserror::Error)]
pub enum DpSgdError {
    #[error("invalid DP-SGD configuration: {0}")]
    InvalidConfig(String),
    #[error("invalid data: {0}")]
    InvalidData(String),
    #[error("invalid support: {0}")]
    InvalidSupport(String),
    #[error(
        "training diverged: non-finite loss or parameters at step {step} (lower the learning rate)"
    )]
    Diverged { step: usize },
    #[error("privacy ledger does not match the calibrated plan: {0}")]
    Ledger(String),
    #[error(transparent)]
    Privacy(#[from] crate::privacy::PrivacyError),
    #[error(transparent)]
    Digits(#[from] crate::data::digits::DigitsError),
}
