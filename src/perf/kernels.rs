//! The DP-GD kernels `dpclaims perf` and the criterion benches time: the GEMV floor,
//! the direct step, a reference-style per-sample loop, noise draws and a plain read.
use crate::data::{Dataset, InputDist, Target};
use crate::models::RandomFeatures;
use crate::rng::SeedPath;
use crate::train::dpgd::{self, ClipRule, DpGdConfig, StepStats};
use crate::train::TrainError;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
/// Problem sizes and repetitions of one measurement.
#[derive(Clone, Debug, Serialize)]
pub struct PerfSizes {
    /// Training samples n.
    pub n: usize,
    /// Random features p.
    pub p: usize,
    /// Input dimension d.
    pub d: usize,
    /// Side of the square GEMM used for the GFLOP/s ceiling.
    pub gemm_n: usize,
    /// Timed rounds (after one warm-up round) of the floor, the direct step and the
    /// memory read; median reported.
    pub reps: usize,
    /// Timed rounds of the reference loop and the GEMM (each takes ~0.5 s at full size).
    pub slow_reps: usize,
    /// The p values of the reduced engine's `reduced_step_s` (the issue asks for
    /// p = 4000 and p = 40 000, with n fixed).
    pub reduced_ps: Vec<usize>,
}

impl PerfSizes {
    /// The sizes: n = 2000, d = 100, p = 40 000 (Phi is 640 MB), GEMM 2000³.
    pub fn full() -> Self {
        Self {
            n: 2000,
            p: 40_000,
            d: 100,
            gemm_n: 2000,
            reps: 7,
            slow_reps: 3,
            reduced_ps: vec![4000, 40_000],
        }
    }

    /// Small sizes for tests (everything in cache: the ratios mean little).
    pub fn quick() -> Self {
        Self {
            n: 200,
            p: 2000,
            d: 20,
            gemm_n: 300,
            reps: 3,
            slow_reps: 2,
            reduced_ps: vec![200, 2000],
        }
    }

    /// Bytes of Phi (n x p f64).
    pub fn phi_bytes(&self) -> f64 {
        (self.n * self.p * std::mem::size_of::<f64>()) as f64
    }
}

/// The problem every kernel is timed on: privacy-for-free Fig. 2 (y = sign(u.x),
/// Gaussian inputs, tanh random features) with its DP-GD hyper-parameters.
#[derive(Clone, Debug)]
pub struct PerfProblem {
    /// n x p features tanh(X V^T).
    pub phi: Array2<f64>,
    /// ||phi_i||^2 (the engine computes it once per run).
    pub phi_sq: Array1<f64>,
    pub y: Array1<f64>,
    /// Parameters the gradients are evaluated at: N(0, I_p/p), so that residuals are of
    /// order one and some, not all, per-sample gradients are clipped.
    pub theta: Array1<f64>,
    /// eta = 1/p, C = 0.5 sqrt(p), T = 5d, eps = 4, delta = 1/n, sigma from Prop. 2.2,
    /// kappa = 2 (privacy-for-free Fig. 2 parametrisation).
    pub cfg: DpGdConfig,
}

impl PerfProblem {
    /// Draws the problem from `seed` (streams `data`, `features`, `theta`).
    pub fn build(sizes: &PerfSizes, seed: &SeedPath) -> Result<Self, TrainError> {
        crate::linalg::pin_blas_threads();
        let (n, p, d) = (sizes.n, sizes.p, sizes.d);
        let mut data_rng = seed.rng_for("data");
        let u = crate::data::unit_vector(d, &mut data_rng);
        let train = Dataset::sample(
            n,
            d,
            InputDist::Gaussian,
            &Target::Sign { u },
            0.0,
            &mut data_rng,
        );
        let model = RandomFeatures::sample(p, d, &mut seed.rng_for("features"));
        let phi = model.features(&train.x.view());
        let phi_sq = crate::linalg::row_norms_sq(&phi.view());
        let theta = crate::data::gaussian_vector(p, &mut seed.rng_for("theta")) / (p as f64).sqrt();
        let eta = 1.0 / p as f64;
        let steps = 5 * d;
        let cfg = DpGdConfig {
            eta,
            steps,
            clip: 0.5 * (p as f64).sqrt(),
            clip_rule: ClipRule::Divide,
            sigma: dpgd::prop22_sigma(eta, steps, 4.0, 1.0 / n as f64, &dpgd::DpGdRecipe::PAPER)?,
            kappa: 2.0,
            ridge: 0.0,
        };
        Ok(Self {
            phi,
            phi_sq,
            y: train.y,
            theta,
            cfg,
        })
    }
}

/// The floor: the two GEMVs of a step, `f = Phi theta` and `Phi^T f`, through the same
/// `ndarray::dot` (BLAS) calls as [`dpgd::clipped_mean_gradient`].
pub fn gemv_floor(phi: &ArrayView2<f64>, theta: &ArrayView1<f64>) -> Array1<f64> {
    let f = phi.dot(theta);
    phi.t().dot(&f)
}

/// One direct DP-GD step, exactly as [`dpgd::run`]'s loop makes it:
/// [`dpgd::clipped_mean_gradient`] at `theta`, then [`dpgd::apply_update`] (p normals
/// drawn into `xi`). Returns what the step saw.
pub fn direct_step(
    problem: &PerfProblem,
    theta: &mut Array1<f64>,
    xi: &mut Array1<f64>,
    rng: &mut impl Rng,
) -> StepStats {
    let cfg = &problem.cfg;
    let (g, stats) = dpgd::clipped_mean_gradient(
        &problem.phi.view(),
        &problem.phi_sq.view(),
        &problem.y.view(),
        &theta.view(),
        cfg.clip,
        cfg.clip_rule,
        cfg.ridge,
    );
    let noise_std = cfg.noise_std(problem.y.len());
    dpgd::apply_update(theta, &g, cfg.eta, noise_std, xi, rng);
    stats
}

/// The clipped mean gradient computed the way the paper's public reference
/// implementation does (a per-sample loop, privacy-for-free repository `main_RF.py`):
/// for each sample i, `g_i = 2 phi_i (phi_i^T theta - y_i)` materialised as a new
/// p-vector, `||g_i||` computed from it, `g_i` rescaled to norm `clip` if longer; the
/// clipped gradients are stored as the rows of an n x p matrix, whose row mean is
/// returned. Standard clip rule, no ridge (privacy-for-free Algorithm 1).
///
/// Computes the same vector as [`dpgd::clipped_mean_gradient`] with
/// [`ClipRule::Divide`] and ridge 0, up to rounding (tests check 1e-10 relative).
pub fn reference_clipped_mean_gradient(
    phi: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    theta: &ArrayView1<f64>,
    clip: f64,
) -> Array1<f64> {
    let (n, p) = phi.dim();
    let mut gradients = Array2::<f64>::zeros((n, p));
    for (i, mut out) in gradients.axis_iter_mut(Axis(0)).enumerate() {
        let phi_i = phi.row(i);
        let r = phi_i.dot(theta) - y[i];
        let mut g_i: Array1<f64> = &phi_i * (2.0 * r);
        let norm = g_i.dot(&g_i).sqrt();
        if norm > clip {
            g_i *= clip / norm;
        }
        out.assign(&g_i);
    }
    gradients.mean_axis(Axis(0)).expect("n >= 1")
}

/// One reference-style step: [`reference_clipped_mean_gradient`], then
/// `theta <- theta - eta g + noise`, the noise a fresh p-vector of `N(0, noise_std^2)`.
pub fn reference_step(problem: &PerfProblem, theta: &mut Array1<f64>, rng: &mut impl Rng) {
    let cfg = &problem.cfg;
    let g = reference_clipped_mean_gradient(
        &problem.phi.view(),
        &problem.y.view(),
        &theta.view(),
        cfg.clip,
    );
    let noise_std = cfg.noise_std(problem.y.len());
    let noise: Array1<f64> = (0..theta.len())
        .map(|_| noise_std * Distribution::<f64>::sample(&StandardNormal, rng))
        .collect::<Vec<f64>>()
        .into();
    *theta = &*theta - &(g * cfg.eta) + noise;
}

/// p standard normals into `xi`: the noise part of a direct step alone.
pub fn noise_draws(xi: &mut Array1<f64>, rng: &mut impl Rng) {
    for v in xi.iter_mut() {
        *v = StandardNormal.sample(rng);
    }
}

/// A plain read of every element of `a` (their sum): the memory-read ceiling.
///
/// Rows are read eight at a time, interleaved in chunks of 8 columns, with 8 independent
/// accumulators. Why: one sequential stream is limited by the hardware prefetcher
/// (measured here: ndarray's `sum` over 640 MB reads at ~11 GB/s, eight interleaved row
/// streams at ~13.5 GB/s), and OpenBLAS's GEMV kernels also read several rows at once;
/// a single-stream "ceiling" would sit below the GEMV it is meant to bound.
pub fn read_sum(a: &ArrayView2<f64>) -> f64 {
    const ROWS: usize = 8;
    const LANES: usize = 8;
    let Some(data) = a.as_slice() else {
        return a.sum();
    };
    let cols = a.ncols();
    if cols == 0 {
        return 0.0;
    }
    let mut acc = [0.0f64; LANES];
    let mut tail = 0.0f64;
    for block in data.chunks(ROWS * cols) {
        let rows: Vec<&[f64]> = block.chunks_exact(cols).collect();
        let full = cols / LANES * LANES;
        for j in (0..full).step_by(LANES) {
            for row in &rows {
                let c = &row[j..j + LANES];
                for q in 0..LANES {
                    acc[q] += c[q];
                }
            }
        }
        for row in &rows {
            tail += row[full..].iter().sum::<f64>();
        }
    }
    acc.iter().sum::<f64>() + tail
}
