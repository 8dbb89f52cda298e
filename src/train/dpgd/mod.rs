//! Full-batch DP-GD for models linear in their trained parameters.
//!
//! Given a feature matrix `Phi` (n x p, rows `phi_i`) and labels `y`, the model is
//! `f(x_i) = phi_i^T theta`; the loss is the squared loss with optional ridge term,
//! `(1/n) sum_i (phi_i^T theta - y_i)^2 + lambda ||theta||^2`. One step is
//!
//! ```text
//! g_i     = 2 r_i phi_i + 2 lambda theta,            r_i = phi_i^T theta - y_i
//! g_i^C   = g_i / max(1, ||g_i||/C)                   (clip rule `divide`)
//! theta  <- theta - eta (1/n) sum_i g_i^C + sqrt(eta) (kappa C / n) sigma xi,  xi ~ N(0, I_p)
//! ```
//!
//! * privacy-for-free (Bombari & Mondelli 2025), Algorithm 1 and Eq. 11: lambda = 0,
//!   kappa = 2 (replace-one adjacency: the clipped mean moves by at most 2C/n);
//! * blog Algorithm 1, second layer: ridge lambda > 0, noise `sqrt(eta_a) (C_a/n) sigma_a`,
//!   i.e. kappa = 1 as printed, and a clip line that *multiplies* by max(1, ||g||/C)
//!   (selectable as [`ClipRule::Multiply`]; the standard rule divides).
//!
//! Per-sample gradients are never materialised: with `s_i = ||phi_i||^2` and
//! `f_i = phi_i^T theta`,
//! `||g_i||^2 = 4 r_i^2 s_i + 8 lambda r_i f_i + 4 lambda^2 ||theta||^2`, and the clipped
//! mean is `(2/n) Phi^T (c o r) + (2 lambda/n)(sum_i c_i) theta` with per-sample scales
//! `c_i`. A step reads `Phi` once ([`pass`]: each row's product with `theta`, its clip
//! factor, then its share of the sum, in a fixed order without BLAS); runs that share
//! `Phi` ([`run_shared`]) read it once between them.
//!
//! Calibration (privacy-for-free Prop. 2.2, Eq. 5): `sigma = sqrt(eta T) sqrt(8 ln(1/delta))/eps`,
//! valid for `0 < eps < 8 ln(1/delta)`; see [`prop22_sigma`].
//!
//! The step does no I/O; a [`Trajectory`] collects what metrics need.
//!
//! The formulas above that an implementation could get wrong — the calibration, the noise
//! std, the clip rule, the clipped mean, the ridge term inside the per-sample gradients,
//! the step count and the noise draws — are taken from a [`DpGdRecipe`] passed by the
//! caller ([`run`], [`prop22_sigma`]); [`DpGdRecipe::PAPER`] is the code path documented
//! above, bit for bit.
use super::TrainError;
use ndarray::{Array1, ArrayView1, ArrayView2};
use std::borrow::Cow;

mod lanes;
mod pass;

pub use lanes::{run, run_shared};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// How a per-sample gradient is clipped at threshold C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipRule {
    /// Standard rule `g / max(1, ||g||/C)` (privacy-for-free Algorithm 1; Abadi et al. 2016).
    Divide,
    /// As printed in the blog's Algorithm 1: `g * max(1, ||g||/C)` — does not bound the
    /// sensitivity; kept to measure its effect.
    Multiply,
    /// No clipping (the noise is still scaled by C). Used for the noise-only recursion
    /// of privacy-for-free Eq. 20, whose analysis assumes no clipping.
    None,
}

impl ClipRule {
    /// The factor applied to a per-sample gradient whose norm is `ratio` times the
    /// threshold, for `ratio > 1` (below the threshold every rule leaves it unchanged).
    /// Shared by the direct and the reduced engine.
    #[inline]
    pub fn scale(self, ratio: f64) -> f64 {
        match self {
            ClipRule::Divide => 1.0 / ratio,
            ClipRule::Multiply => ratio,
            ClipRule::None => 1.0,
        }
    }
}

/// Hyper-parameters of one DP-GD run.
#[derive(Clone, Debug)]
pub struct DpGdConfig {
    /// Step size eta.
    pub eta: f64,
    /// Number of steps T.
    pub steps: usize,
    /// Clipping threshold C (may be +infinity when sigma = 0).
    pub clip: f64,
    pub clip_rule: ClipRule,
    /// Noise level sigma (0: no noise).
    pub sigma: f64,
    /// Noise constant kappa in `sqrt(eta) (kappa C/n) sigma`: 2 for replace-one
    /// adjacency (privacy-for-free Eq. 11), 1 as printed in the blog's Algorithm 1.
    pub kappa: f64,
    /// Ridge lambda (0 for privacy-for-free).
    pub ridge: f64,
}

impl DpGdConfig {
    /// Checks the configuration; the engine only runs validated configurations.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |m: String| Err(TrainError::InvalidConfig(m));
        if !(self.eta.is_finite() && self.eta > 0.0) {
            return bad(format!("eta must be finite and > 0, got {}", self.eta));
        }
        if self.clip.is_nan() || self.clip <= 0.0 {
            return bad(format!("clip threshold C must be > 0, got {}", self.clip));
        }
        if !(self.sigma.is_finite() && self.sigma >= 0.0) {
            return bad(format!("sigma must be finite and >= 0, got {}", self.sigma));
        }
        if self.sigma > 0.0 && !self.clip.is_finite() {
            return bad("noise with an infinite clipping threshold is infinite".into());
        }
        if !(self.kappa.is_finite() && self.kappa > 0.0) {
            return bad(format!("kappa must be > 0, got {}", self.kappa));
        }
        if !(self.ridge.is_finite() && self.ridge >= 0.0) {
            return bad(format!("ridge lambda must be >= 0, got {}", self.ridge));
        }
        Ok(())
    }

    /// Standard deviation of each noise coordinate: `sqrt(eta) kappa C sigma / n`
    /// (0 without noise). The paper's [`DpGdRecipe::noise_std`].
    pub fn noise_std(&self, n: usize) -> f64 {
        if self.sigma == 0.0 {
            return 0.0;
        }
        self.eta.sqrt() * self.kappa * self.clip * self.sigma / n as f64
    }
}

/// The formulas of DP-GD that a configuration can replace (module docs). Every field is
/// a plain function (so a recipe is `Copy` and `const`); [`DpGdRecipe::PAPER`] (the
/// [`Default`]) is privacy-for-free Algorithm 1 / Prop. 2.2 and the blog's second layer
/// as specified.
#[derive(Clone, Copy, Debug)]
pub struct DpGdRecipe {
    /// Noise level sigma for `(eta, T, eps, delta)`, after [`prop22_sigma`] has checked
    /// `0 < eps < 8 ln(1/delta)`. Paper: [`prop22_formula`] (Prop. 2.2, Eq. 5).
    pub sigma: fn(eta: f64, steps: usize, eps: f64, delta: f64) -> f64,
    /// Standard deviation of each noise coordinate at n samples, for `sigma > 0`.
    /// Paper: [`DpGdConfig::noise_std`], `sqrt(eta) kappa C sigma / n` (Eq. 11).
    pub noise_std: fn(cfg: &DpGdConfig, n: usize) -> f64,
    /// The per-sample clip rule applied when the configuration asks for `rule`.
    /// Paper: `rule` itself.
    pub clip_rule: fn(rule: ClipRule) -> ClipRule,
    /// Applied to the mean of the (clipped) per-sample gradients and the step's stats
    /// before the update. Paper: nothing (clipping is per sample only).
    pub clipped_mean: fn(cfg: &DpGdConfig, mean: &mut Array1<f64>, stats: &mut StepStats),
    /// The ridge lambda inside the per-sample gradients for the configured lambda.
    /// Paper: lambda (the ridge term is part of every per-sample gradient, so of the
    /// clipping).
    pub per_sample_ridge: fn(lambda: f64) -> f64,
    /// Number of noisy updates run for the configured T. Paper: T.
    pub steps: fn(steps: usize) -> usize,
    /// Whether update `t` (0-based) draws a fresh xi; when not, the last xi drawn is
    /// added again (the first update always draws). Paper: always (xi_t i.i.d.).
    pub fresh_noise: fn(t: usize) -> bool,
}

impl DpGdRecipe {
    /// DP-GD as published.
    pub const PAPER: DpGdRecipe = DpGdRecipe {
        sigma: prop22_formula,
        noise_std: DpGdConfig::noise_std,
        clip_rule: same_rule,
        clipped_mean: per_sample_only,
        per_sample_ridge: same_value,
        steps: same_steps,
        fresh_noise: always,
    };

    /// Standard deviation of each noise coordinate under this recipe (0 without noise).
    pub fn noise_std(&self, cfg: &DpGdConfig, n: usize) -> f64 {
        if cfg.sigma == 0.0 {
            return 0.0;
        }
        (self.noise_std)(cfg, n)
    }

    /// A configuration whose paper noise std ([`DpGdConfig::noise_std`]) at n samples
    /// equals this recipe's (sigma rescaled): how the recipe's noise formula reaches an
    /// engine that implements only the paper's (the reduced engine,
    /// [`crate::train::reduced`]). The configuration itself when the two agree.
    pub fn as_paper_config(&self, cfg: &DpGdConfig, n: usize) -> DpGdConfig {
        let (paper, own) = (cfg.noise_std(n), self.noise_std(cfg, n));
        if paper.to_bits() == own.to_bits() || paper == 0.0 {
            return cfg.clone();
        }
        DpGdConfig {
            sigma: cfg.sigma * (own / paper),
            ..cfg.clone()
        }
    }
}

impl Default for DpGdRecipe {
    fn default() -> Self {
        Self::PAPER
    }
}

fn same_rule(rule: ClipRule) -> ClipRule {
    rule
}

fn per_sample_only(_: &DpGdConfig, _: &mut Array1<f64>, _: &mut StepStats) {}

fn same_value(lambda: f64) -> f64 {
    lambda
}

fn same_steps(steps: usize) -> usize {
    steps
}

fn always(_: usize) -> bool {
    true
}

/// Noise level of privacy-for-free Prop. 2.2 (Eq. 5):
/// `sigma = sqrt(eta T) sqrt(8 ln(1/delta)) / eps`, valid for `0 < eps < 8 ln(1/delta)`
/// (checked here), by the recipe's formula ([`DpGdRecipe::sigma`]; paper:
/// [`prop22_formula`]).
pub fn prop22_sigma(
    eta: f64,
    steps: usize,
    eps: f64,
    delta: f64,
    recipe: &DpGdRecipe,
) -> Result<f64, TrainError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(TrainError::InvalidConfig(format!(
            "delta must be in (0, 1), got {delta}"
        )));
    }
    let l = (1.0 / delta).ln();
    if !(eps > 0.0 && eps < 8.0 * l) {
        return Err(TrainError::InvalidConfig(format!(
            "Prop. 2.2 needs 0 < eps < 8 ln(1/delta) = {:.4}, got {eps}",
            8.0 * l
        )));
    }
    Ok((recipe.sigma)(eta, steps, eps, delta))
}

/// The formula of privacy-for-free Prop. 2.2 (Eq. 5), unchecked:
/// `sigma = sqrt(eta T) sqrt(8 ln(1/delta)) / eps`. The paper's [`DpGdRecipe::sigma`].
pub fn prop22_formula(eta: f64, steps: usize, eps: f64, delta: f64) -> f64 {
    let l = (1.0 / delta).ln();
    (eta * steps as f64).sqrt() * (8.0 * l).sqrt() / eps
}

/// What one step saw at the current parameters (before its update).
#[derive(Clone, Debug, Default)]
pub struct StepStats {
    /// Fraction of samples whose gradient norm exceeded C.
    pub clip_fraction: f64,
    /// max_i |r_i|.
    pub max_abs_residual: f64,
    /// max_i ||g_i|| / C.
    pub max_grad_ratio: f64,
    /// Training MSE (1/n) sum r_i^2.
    pub train_mse: f64,
}

/// The clipped mean gradient at `theta` and what it saw, without materialising the
/// per-sample gradients (see the module docs), in one pass over `Phi`
/// ([`pass`]: the order of its sums is fixed, so the bits do not depend on the BLAS).
/// `phi_sq` holds `||phi_i||^2`.
pub fn clipped_mean_gradient(
    phi: &ArrayView2<f64>,
    phi_sq: &ArrayView1<f64>,
    y: &ArrayView1<f64>,
    theta: &ArrayView1<f64>,
    clip: f64,
    rule: ClipRule,
    ridge: f64,
) -> (Array1<f64>, StepStats) {
    let p = phi.ncols();
    let rows = phi.as_standard_layout();
    let (y, theta_s, phi_sq) = (contiguous(y), contiguous(theta), contiguous(phi_sq));
    let lane = pass::Lane {
        y: &y,
        theta: &theta_s,
        clip,
        rule,
        ridge,
    };
    let theta_sq = if ridge > 0.0 {
        pass::norm_sq(&theta_s)
    } else {
        0.0
    };
    let mut sums = vec![Vec::new()];
    let rows = rows.as_slice().expect("standard layout");
    let (stats, sum_c) = pass::clipped_sums(rows, p, &phi_sq, &[lane], &[theta_sq], &mut sums)
        .pop()
        .expect("one lane");
    let sum = Array1::from_vec(sums.pop().expect("one lane"));
    let g = mean_from_sum(sum, ridge, sum_c, theta, y.len());
    (g, stats)
}

/// `v` as a slice, copied only when it is not contiguous.
fn contiguous<'a>(v: &'a ArrayView1<f64>) -> Cow<'a, [f64]> {
    match v.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(v.to_vec()),
    }
}

/// The clipped mean `(2/n) sum_i (c_i r_i) phi_i + (2 lambda/n)(sum_i c_i) theta` from the
/// pass's sum (module docs).
fn mean_from_sum(
    mut g: Array1<f64>,
    ridge: f64,
    sum_c: f64,
    theta: &ArrayView1<f64>,
    n: usize,
) -> Array1<f64> {
    let nf = n as f64;
    g *= 2.0 / nf;
    if ridge > 0.0 {
        // (sum_c / n) is exactly 1 when nothing is clipped, so this is exactly plain
        // ridge GD's formula (tests/core.rs: equal to `baselines`' GD to 1e-12, which
        // sums in BLAS's order).
        g.scaled_add(2.0 * ridge * (sum_c / nf), theta);
    }
    g
}

/// The update of one DP-GD step: `theta <- theta - eta g + noise_std xi`,
/// `xi ~ N(0, I_p)`. `xi` is scratch space of length p; the p normals are drawn from
/// `noise_rng` in coordinate order, and only when `noise_std > 0` (the order of draws is
/// part of the contract: it fixes every run's bits). A step of [`run`] does the same
/// operations as [`clipped_mean_gradient`] then this (the same bits: tests/perf.rs);
/// `crate::perf` times the pair as one direct step.
pub fn apply_update(
    theta: &mut Array1<f64>,
    g: &Array1<f64>,
    eta: f64,
    noise_std: f64,
    xi: &mut Array1<f64>,
    noise_rng: &mut impl Rng,
) {
    theta.scaled_add(-eta, g);
    if noise_std > 0.0 {
        for v in xi.iter_mut() {
            *v = StandardNormal.sample(noise_rng);
        }
        theta.scaled_add(noise_std, xi);
    }
}

/// At which steps to evaluate train/test loss (step 0 is the initial point, T the end).
#[derive(Clone, Debug, Default)]
pub struct RecordPlan {
    pub loss_at: Vec<usize>,
}

impl RecordPlan {
    /// Losses at the start and the end only.
    pub fn ends(steps: usize) -> Self {
        Self {
            loss_at: vec![0, steps],
        }
    }
}

/// Loss at one recorded step.
#[derive(Clone, Debug, PartialEq)]
pub struct LossPoint {
    pub step: usize,
    pub train: f64,
    pub test: Option<f64>,
}

/// What a run recorded along its trajectory.
#[derive(Clone, Debug, Default)]
pub struct Trajectory {
    /// Per step t = 1..=T, at theta_{t-1}: fraction of clipped samples.
    pub clip_fraction: Vec<f64>,
    /// Per step t = 1..=T, at theta_{t-1}: max_i ||g_i||/C.
    pub max_grad_ratio: Vec<f64>,
    /// For t = 0..=T: max_i |phi_i^T theta_t - y_i|.
    pub max_abs_residual: Vec<f64>,
    /// Losses at the steps of the [`RecordPlan`].
    pub losses: Vec<LossPoint>,
}

impl Trajectory {
    /// Fraction of all (step, sample) pairs that were clipped.
    pub fn overall_clip_fraction(&self) -> f64 {
        if self.clip_fraction.is_empty() {
            0.0
        } else {
            self.clip_fraction.iter().sum::<f64>() / self.clip_fraction.len() as f64
        }
    }

    /// True when no per-sample gradient was clipped at any step.
    pub fn never_clipped(&self) -> bool {
        self.clip_fraction.iter().all(|&c| c == 0.0)
    }

    /// sup over the trajectory of max_i |residual|.
    pub fn sup_abs_residual(&self) -> f64 {
        self.max_abs_residual.iter().copied().fold(0.0, f64::max)
    }

    /// The last recorded loss point.
    pub fn final_loss(&self) -> Option<&LossPoint> {
        self.losses.last()
    }
}

/// A linear-in-parameters least-squares problem: training features/labels and an
/// optional test set.
#[derive(Clone, Copy, Debug)]
pub struct Problem<'a> {
    pub phi: ArrayView2<'a, f64>,
    pub y: ArrayView1<'a, f64>,
    pub test: Option<(ArrayView2<'a, f64>, ArrayView1<'a, f64>)>,
}

impl Problem<'_> {
    /// Test MSE of `theta`, if there is a test set.
    pub fn test_mse(&self, theta: &ArrayView1<f64>) -> Option<f64> {
        self.test.map(|(pt, yt)| {
            let r = pt.dot(theta) - yt;
            r.dot(&r) / yt.len() as f64
        })
    }

    /// Training MSE of `theta`.
    pub fn train_mse(&self, theta: &ArrayView1<f64>) -> f64 {
        let r = self.phi.dot(theta) - self.y;
        r.dot(&r) / self.y.len() as f64
    }
}

/// Result of a DP-GD run.
#[derive(Clone, Debug)]
pub struct DpGdRun {
    pub theta: Array1<f64>,
    pub trajectory: Trajectory,
}
