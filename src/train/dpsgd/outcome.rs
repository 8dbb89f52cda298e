//! What a run of a method produced ([`MethodRun`]): accuracies, the privacy report per
//! phase and composed, the final support, the support-quality diagnostics and noise
//! energies (Sec. 7.4), and the per-step trace.
use super::config::Method;
use super::diagnostics::proxy_concentration;
use super::mechanism::Mask;
use super::model::ModelKind;
use ndarray::Array1;
use serde::Serialize;

/// One phase of a run as executed and accounted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseReport {
    /// `dense`, `warm-up`, `support` (two-phase) or `online` (online methods).
    pub name: &'static str,
    pub steps: u64,
    pub sampling_rate: f64,
    pub noise_multiplier: f64,
    pub clip: f64,
    /// Epsilon of this phase alone (RDP accountant, same delta).
    pub epsilon_alone: f64,
}

/// The privacy of a run: per phase and composed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrivacyReport {
    pub target_epsilon: f64,
    pub delta: f64,
    pub phases: Vec<PhaseReport>,
    /// Epsilon of the composition of the ledger's phases (RDP, improved conversion).
    pub epsilon: f64,
    /// Optimal Rényi order of the composition.
    pub order: f64,
}

/// Noise energy of one segment of the run (paper Sec. 3.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NoiseEnergy {
    /// `dense`, `warm-up`, `support`, `online-dense` or `online-sparse`.
    pub segment: &'static str,
    pub steps: usize,
    /// Number of noised coordinates per step.
    pub active: usize,
    /// `active * (z C / (qN))^2`.
    pub expected: f64,
    /// Mean over the segment's steps of the injected `||m o z C xi||^2 / (qN)^2`.
    pub measured: f64,
}

/// Support-quality diagnostics (Sec. 7.4) and noise energies.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostics {
    /// k (P for dense DP-SGD).
    pub active: usize,
    pub params: usize,
    /// k / P: the expectation of both Gammas for a uniformly random support.
    pub random_expectation: f64,
    /// Step after which the support was first selected (None for dense DP-SGD).
    pub checkpoint_step: Option<usize>,
    /// Oracle energy capture of the selected support at the checkpoint.
    pub gamma: Option<f64>,
    /// Oracle energy capture of the best support of size k (top-k of `g^2`): the
    /// ceiling of `gamma`.
    pub gamma_best: Option<f64>,
    /// DP-visible proxy concentration of the selected support.
    pub proxy_concentration: Option<f64>,
    /// Trajectory-level energy capture over phase 2 (Definition 6.5; two-phase methods).
    pub gamma_trajectory: Option<f64>,
    pub noise_energy: Vec<NoiseEnergy>,
}

/// Per-step record (the recorder's trace; the step itself does no I/O).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StepRecord {
    pub batch_size: usize,
    pub clipped: usize,
    pub active: usize,
    pub noise_energy: f64,
    pub batch_loss: f64,
}

/// Everything a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct MethodRun {
    pub method: Method,
    pub test_accuracy: f64,
    pub train_accuracy: f64,
    pub privacy: PrivacyReport,
    /// Noise multipliers, one per phase ([z] or [z1, z2]).
    pub noise_multipliers: Vec<f64>,
    /// The final support (increasing indices; all of `0..P` for dense DP-SGD).
    pub support: Vec<usize>,
    pub diagnostics: Diagnostics,
    pub steps: usize,
    /// Fingerprint of the final parameters' bits ([`crate::rng::digest_f64s`]).
    pub theta_digest: String,
    #[serde(skip)]
    pub theta: Array1<f64>,
    #[serde(skip)]
    pub trace: Vec<StepRecord>,
    /// The model the run trained (what [`MethodRun::diagnose`] rebuilds).
    #[serde(skip)]
    pub model: ModelKind,
    /// The iterates the held-out diagnostics read, until [`MethodRun::diagnose`]
    /// computes them (`None` after).
    #[serde(skip)]
    pub held_out: Option<HeldOutIterates>,
}

/// What the first support selection saw: the parameters there and the selected mask
/// (the held-out gradient is taken later, by [`MethodRun::diagnose`]), and the
/// DP-visible proxy concentration, computed at once (it reads the scores only).
#[derive(Clone, Debug)]
pub(super) struct Checkpoint {
    pub(super) step: usize,
    pub(super) theta: Array1<f64>,
    pub(super) mask: Mask,
    pub(super) proxy: f64,
}

pub(super) fn checkpoint(
    theta: &Array1<f64>,
    scores: &Array1<f64>,
    mask: &Mask,
    step: usize,
) -> Checkpoint {
    Checkpoint {
        step,
        theta: theta.clone(),
        mask: mask.clone(),
        proxy: proxy_concentration(&scores.view(), mask.support()),
    }
}

/// The iterates that the held-out diagnostics read (Sec. 7.4, Def. 6.5), kept by the
/// training loop so that the diagnostics can be computed after the run, and only for the
/// runs whose diagnostics are reported (a tuned unit reports those of its selected cell
/// only: [`super::run_method_deferred`]). Computing them later gives the same bits: they are
/// noiseless functions of the stored parameters, summed in the same order.
#[derive(Clone, Debug, Default)]
pub struct HeldOutIterates {
    pub(super) checkpoint: Option<Checkpoint>,
    /// The parameters at the end of every phase-2 epoch (two-phase methods), in order.
    pub(super) trajectory: Vec<Array1<f64>>,
}
