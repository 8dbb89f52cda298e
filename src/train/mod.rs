//! Training: full-batch DP-GD ([`dpgd`], the direct p-dimensional engine, and
//! [`reduced`], the exact kernel-space engine for the random-features model),
//! non-private baselines ([`baselines`]), Algorithm 1 of the blog, end to end
//! ([`feature_learning`]), and the exact expectation of the noise term of
//! privacy-for-free Eq. 20 ([`noise_term`]).
//!
//! Every formula a configuration can replace (a noise std, a clip rule, a calibration,
//! the accountant's conversion, ...) is taken from a [`Recipe`] passed in by the caller
//! ([`recipe`]); [`Recipe::PAPER`] is the papers'.
pub mod baselines;
pub mod dpgd;
pub mod dpsgd;
pub mod feature_learning;
pub mod noise_term;
pub mod recipe;
pub mod reduced;
pub mod rf_em;
pub mod rf_kernel;

pub use recipe::Recipe;

/// Errors of a training run.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("invalid training configuration: {0}")]
    InvalidConfig(String),
    #[error("run diverged: non-finite {what} at step {step}")]
    Diverged { step: usize, what: String },
    #[error(transparent)]
    Linalg(#[from] crate::linalg::LinalgError),
}
