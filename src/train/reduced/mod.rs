//! The exact reduced (kernel-space) DP-GD engine for the random-features model.
//!
//! DP-GD on `f(x) = phi(x)^T theta` with the squared loss, no ridge and `theta_0 = 0`
//! (privacy-for-free, Algorithm 1 and Eq. 11; see [`super::dpgd`]) is
//!
//! ```text
//! theta_{t+1} = theta_t - eta (2/n) Phi^T (c_t o r_t) + s xi_t,   xi_t ~ N(0, I_p),
//! r_t = Phi theta_t - y,   c_{t,i} = clip scale of ||g_i|| = 2 |r_{t,i}| sqrt(K_ii),
//! s = sqrt(eta) kappa C sigma / n.
//! ```
//!
//! The losses depend on theta only through the predictions `u_t = Phi theta_t` (train)
//! and `v_t = Phi_test theta_t` (test), and the clipping only through `r_t` and the
//! diagonal of `K = Phi Phi^T`. Multiplying the update by `Phi` and `Phi_test`:
//!
//! ```text
//! u_{t+1} = u_t - (2 eta/n) K (c_t o r_t)      + s Phi xi_t
//! v_{t+1} = v_t - (2 eta/n) K_tn (c_t o r_t)   + s Phi_test xi_t
//! ```
//!
//! and `(Phi xi_t, Phi_test xi_t) ~ N(0, G)` with `G` the Gram matrix of the n + n_test
//! points (train first). With any factor `L L^T = G` (here `L = Q diag(sqrt(lambda))`
//! from the eigendecomposition of G, rank r <= min(p, n + n_test)) the pair is exactly
//! `(L_train w_t, L_test w_t)`, `w_t ~ N(0, I_r)`. This contains both parts of the noise
//! the issue names: its projection onto the span of the training features (seen by the
//! training points, and by the test points through `K_tn K^+`), and the part outside
//! that span, which only the test points see, with covariance
//! `s^2 (K_tt - K_tn K^+ K_nt)` (the Schur complement). The recursion above is
//! therefore equal in distribution to the direct p-dimensional engine, and a step costs
//! O(n (n + r)) whatever p is, after one Gram computation
//! ([`crate::models::RandomFeatures::gram`], in blocks of features).
//!
//! The test predictions are linear in the history, so they are never advanced step by
//! step: `v_t = -(2 eta/n) K_tn sum_{tau<t} (c o r)_tau + s L_test sum_{tau<t} w_tau`,
//! evaluated only at recorded steps.
//!
//! **Batching.** Runs that share the features (replicates, grid cells with the same p)
//! advance together: the train predictions of B runs form a B x n matrix and a step is
//! one matrix-matrix product with K. Runs name a noise *stream* (a seed path); runs on
//! the same stream see the same draws `w_t` (common random numbers: each run's law is
//! exact, runs are coupled), runs on different streams are independent.
//!
//! **Kernels.** With [`Kernels::Faer`] (the default) the Gram computation and the
//! per-step products run on faer, whose speed does not depend on whether the system
//! OpenBLAS recognises the CPU, and a step does less work:
//!
//! * *sparse product updates*: a clipped sample contributes `c_i r_i = sign(r_i) C /
//!   (2 sqrt(K_ii))` (written exactly so), which does not change while the sample stays
//!   clipped on the same side. Once the noise has grown, most samples of most runs
//!   are (the longest runs of the Fig. 2 heat map, which make most of its steps, keep
//!   about 95% of the entries of `c o r` from one step to the next), so a run whose `c o r` changed in at most n/[`SPARSE_DIV`]
//!   entries gets `K (c o r)_t = K (c o r)_{t-1} + sum_i delta_i K_i` over the changed
//!   entries i (K is symmetric: its rows), in `|changed| n` instead of `n^2` flops; the
//!   other runs share one matrix product, and every run is recomputed in full every
//!   [`REFRESH_STEPS`] steps, so rounding does not accumulate;
//! * *blocked noise*: each stream draws [`NOISE_BLOCK`] steps of `w` at once and maps
//!   them through `L_train` in one matrix product instead of one matrix-vector pass over
//!   the factor per step (same draws in the same order; the last block's unused draws
//!   are discarded).
//!
//! Both are exact rewritings: the same recursion, with other rounding.
//! [`Kernels::Blas`] is the engine as it was before, step for step (OpenBLAS: one
//! product of every moving run per step, one matrix-vector product per stream and step,
//! `c_i r_i` as `r_i C / ||g_i||`), kept as the reference: the two agree to 1e-10 and
//! better (tests/reduced.rs).
//!
//! [`TestNoise::SpanOnly`] drops the null-space part of the test noise: a deliberately
//! wrong engine, the negative control of the `engine-equivalence` claim.
//!
//! Where things are: this file holds the runs and the batch loop ([`run_batch`]);
//! `problem.rs` the kernel-space problem (Gram matrix, noise factor, min-norm baseline);
//! `step.rs` the per-step kernels (clipped residuals, sparse product updates, and at
//! n >= 1024 the products in two column halves of K, one per core, with the bits of the
//! whole).
mod problem;
mod step;

pub use problem::{min_norm_test_loss_scalar, KernelProblem};

use self::step::{clipped_residuals, SparseScratch};
use super::dpgd::{DpGdConfig, LossPoint};
use super::TrainError;
use crate::linalg::{self, Kernels};
use crate::rng::SeedPath;
use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array2, Zip};
use rand_distr::{Distribution, StandardNormal};

/// Steps of noise drawn and mapped through `L_train` at once per stream with
/// [`Kernels::Faer`] (a 64 x r by r x n product; always whole blocks, so the bits of a
/// step's noise do not depend on how long the stream runs).
pub const NOISE_BLOCK: usize = 64;

/// With [`Kernels::Faer`], a run's product `K g_t` is updated from `K g_{t-1}` through
/// the entries of `g` that changed when at most `n / SPARSE_DIV` did (see the module
/// docs)...
pub const SPARSE_DIV: usize = 4;

/// ... and recomputed in full at every step that is a multiple of this (and at step 0),
/// so rounding never accumulates over more than this many steps.
pub const REFRESH_STEPS: usize = 128;

/// Which law the noise seen by the test points follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestNoise {
    /// The exact joint law `N(0, s^2 G)` (the engine).
    Exact,
    /// Only the projection onto the span of the training features,
    /// `Phi_test P xi = K_tn K^+ Phi xi`: the null-space part is dropped. Wrong on
    /// purpose (negative control).
    SpanOnly,
}

/// One run of a batch: its configuration (ridge must be 0), the steps at which to
/// record train and test loss, and its noise stream (an index into the streams).
#[derive(Clone, Debug)]
pub struct BatchRun {
    pub cfg: DpGdConfig,
    pub loss_at: Vec<usize>,
    pub stream: usize,
}

/// What one reduced run recorded.
#[derive(Clone, Debug, Default)]
pub struct ReducedRun {
    /// Losses at the requested steps, in step order.
    pub losses: Vec<LossPoint>,
    /// Validation losses at the same steps (empty without a validation split,
    /// [`KernelProblem::with_validation`]).
    pub val_losses: Vec<f64>,
    /// Sum over steps t = 1..=T (at theta_{t-1}) of the fraction of clipped samples.
    pub clip_fraction_sum: f64,
    /// Number of steps T.
    pub steps: usize,
    /// sup over t = 0..=T of max_i |phi_i^T theta_t - y_i|.
    pub sup_abs_residual: f64,
}

impl ReducedRun {
    /// Fraction of all (step, sample) pairs that were clipped.
    pub fn overall_clip_fraction(&self) -> f64 {
        if self.steps == 0 {
            0.0
        } else {
            self.clip_fraction_sum / self.steps as f64
        }
    }

    /// True when no per-sample gradient was clipped at any step.
    pub fn never_clipped(&self) -> bool {
        self.clip_fraction_sum == 0.0
    }

    /// The last recorded loss point.
    pub fn final_loss(&self) -> Option<&LossPoint> {
        self.losses.last()
    }
}

/// One reduced DP-GD run with its own noise stream.
pub fn run(
    kp: &KernelProblem,
    cfg: &DpGdConfig,
    loss_at: &[usize],
    noise: &SeedPath,
) -> Result<ReducedRun, TrainError> {
    let runs = [BatchRun {
        cfg: cfg.clone(),
        loss_at: loss_at.to_vec(),
        stream: 0,
    }];
    Ok(run_batch(kp, &runs, std::slice::from_ref(noise))?.remove(0))
}

/// Runs a batch of DP-GD runs on the same features together (see the module docs).
/// Results come back in the order of `runs`. Errors name the run (its index) and step.
pub fn run_batch(
    kp: &KernelProblem,
    runs: &[BatchRun],
    streams: &[SeedPath],
) -> Result<Vec<ReducedRun>, TrainError> {
    crate::linalg::pin_blas_threads();
    for (j, r) in runs.iter().enumerate() {
        r.cfg
            .validate()
            .map_err(|e| TrainError::InvalidConfig(format!("batch run {j}: {e}")))?;
        if r.cfg.ridge != 0.0 {
            return Err(TrainError::InvalidConfig(format!(
                "batch run {j}: the reduced engine needs ridge = 0 (the gradient norm would \
                 need ||theta||)"
            )));
        }
        if r.stream >= streams.len() {
            return Err(TrainError::InvalidConfig(format!(
                "batch run {j}: noise stream {} of {}",
                r.stream,
                streams.len()
            )));
        }
    }
    let (n, r_rank) = (kp.n(), kp.noise_rank());
    let nf = n as f64;
    // Longest runs first: the runs still moving at step t are a prefix.
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&j| std::cmp::Reverse(runs[j].cfg.steps));
    let b = runs.len();
    let steps: Vec<usize> = order.iter().map(|&j| runs[j].cfg.steps).collect();
    let noise_std: Vec<f64> = order.iter().map(|&j| runs[j].cfg.noise_std(n)).collect();
    let stream_of: Vec<usize> = order.iter().map(|&j| runs[j].stream).collect();
    // Last step at which each stream must draw (exclusive), over its noisy runs.
    let mut stream_until = vec![0usize; streams.len()];
    for jj in 0..b {
        if noise_std[jj] > 0.0 {
            let s = stream_of[jj];
            stream_until[s] = stream_until[s].max(steps[jj]);
        }
    }
    let mut rngs: Vec<_> = streams.iter().map(SeedPath::rng).collect();
    let kernels = kp.kernels;
    // Faer: per stream, the current block of draws and their images L_train w (allocated
    // when the stream first draws).
    let mut w_block: Vec<Option<Array2<f64>>> = vec![None; streams.len()];
    let mut z_block: Vec<Option<Array2<f64>>> = vec![None; streams.len()];
    let mut u = Array2::<f64>::zeros((b, n));
    let mut cr = Array2::<f64>::zeros((b, n));
    let mut acc_cr = Array2::<f64>::zeros((b, n));
    let mut kcr = Array2::<f64>::zeros((b, n));
    let mut w_sum = Array2::<f64>::zeros((streams.len(), r_rank));
    let mut w = Array2::<f64>::zeros((streams.len(), r_rank));
    // L_train w per stream; rows of streams that stopped drawing are never read (a
    // moving noisy run's stream always draws).
    let mut z = Array2::<f64>::zeros((streams.len(), n));
    // Faer: the g (= c o r) each run's row of kcr was computed from, and the sparse
    // updates' scratch.
    let mut g_prev = match kernels {
        Kernels::Faer => Array2::<f64>::zeros((b, n)),
        Kernels::Blas => Array2::<f64>::zeros((0, n)),
    };
    let clipped_value = (kernels == Kernels::Faer).then(|| kp.half_inv_sqrt_k.view());
    let mut sparse = SparseScratch::default();
    let mut out: Vec<ReducedRun> = order
        .iter()
        .map(|&j| ReducedRun {
            steps: runs[j].cfg.steps,
            ..ReducedRun::default()
        })
        .collect();
    let tmax = steps.first().copied().unwrap_or(0);
    for t in 0..=tmax {
        // Runs alive at step t (steps >= t) and runs that still update (steps > t).
        let alive = steps.iter().take_while(|&&s| s >= t).count();
        let moving = steps.iter().take_while(|&&s| s > t).count();
        for jj in 0..alive {
            let cfg = &runs[order[jj]].cfg;
            let stats = clipped_residuals(
                &u.row(jj),
                &kp.y.view(),
                &kp.k.diag(),
                clipped_value.as_ref(),
                cfg,
                cr.row_mut(jj),
            );
            if !stats.train_mse.is_finite() {
                return Err(TrainError::Diverged {
                    step: t,
                    what: format!("training loss of batch run {}", order[jj]),
                });
            }
            let o = &mut out[jj];
            o.sup_abs_residual = o.sup_abs_residual.max(stats.max_abs_residual);
            if t < steps[jj] {
                o.clip_fraction_sum += stats.clip_fraction;
            }
            if runs[order[jj]].loss_at.contains(&t) {
                // v_t = -(2 eta/n) K_tn sum (c o r) + s L_test sum w.
                let mut v = kp.k_tn.dot(&acc_cr.row(jj));
                v *= -2.0 * cfg.eta / nf;
                if noise_std[jj] > 0.0 {
                    v.scaled_add(
                        noise_std[jj],
                        &kp.l_test_t.t().dot(&w_sum.row(stream_of[jj])),
                    );
                }
                let test = kp.test_mse(&v.view());
                if !test.is_finite() {
                    return Err(TrainError::Diverged {
                        step: t,
                        what: format!("test loss of batch run {}", order[jj]),
                    });
                }
                if let Some(val) = kp.val_mse(&v.view()) {
                    o.val_losses.push(val);
                }
                o.losses.push(LossPoint {
                    step: t,
                    train: stats.train_mse,
                    test: Some(test),
                });
            }
        }
        if moving == 0 {
            break;
        }
        // K (c o r) for every moving run: one GEMM (K is symmetric).
        match kernels {
            Kernels::Blas if moving == 1 => kcr.row_mut(0).assign(&kp.k.dot(&cr.row(0))),
            Kernels::Blas => general_mat_mul(
                1.0,
                &cr.slice(s![..moving, ..]),
                &kp.k,
                0.0,
                &mut kcr.slice_mut(s![..moving, ..]),
            ),
            Kernels::Faer => {
                sparse.products(kp, t, moving, &cr, &g_prev, &mut kcr);
                // g_prev takes this step's c o r (rows past `moving` never move again).
                std::mem::swap(&mut g_prev, &mut cr);
            }
        }
        // This step's c o r (Faer: in g_prev since the swap).
        let g_now = match kernels {
            Kernels::Faer => &g_prev,
            Kernels::Blas => &cr,
        };
        // Noise draws of the streams still in use, and their train-side images L_train w.
        let drawing: Vec<usize> = (0..streams.len())
            .filter(|&s| stream_until[s] > t)
            .collect();
        for &s in &drawing {
            match kernels {
                Kernels::Blas => {
                    for v in w.row_mut(s).iter_mut() {
                        *v = StandardNormal.sample(&mut rngs[s]);
                    }
                    z.row_mut(s).assign(&kp.l_train_t.t().dot(&w.row(s)));
                }
                Kernels::Faer => {
                    // Streams draw from step 0 on, so blocks start at multiples of
                    // NOISE_BLOCK; within a block, row i holds step t's draws.
                    let i = t % NOISE_BLOCK;
                    let wb = w_block[s].get_or_insert_with(|| Array2::zeros((NOISE_BLOCK, r_rank)));
                    let zb = z_block[s].get_or_insert_with(|| Array2::zeros((NOISE_BLOCK, n)));
                    if i == 0 {
                        // Row by row: the same draws, in the same order, as step by step.
                        for v in wb.iter_mut() {
                            *v = StandardNormal.sample(&mut rngs[s]);
                        }
                        linalg::matmul_into(
                            kernels,
                            &wb.view(),
                            &kp.l_train_t.view(),
                            zb.view_mut(),
                        );
                    }
                    w.row_mut(s).assign(&wb.row(i));
                    z.row_mut(s).assign(&zb.row(i));
                }
            }
            let mut ws = w_sum.row_mut(s);
            ws += &w.row(s);
        }
        // u += -(2 eta/n) K (c o r) + s L_train w and the sum of c o r, in one pass per
        // run (the same operations, in the same order, as one pass for each).
        for jj in 0..moving {
            let cfg = &runs[order[jj]].cfg;
            let a = -2.0 * cfg.eta / nf;
            let sd = noise_std[jj];
            let zip = Zip::from(u.row_mut(jj))
                .and(acc_cr.row_mut(jj))
                .and(kcr.row(jj))
                .and(g_now.row(jj));
            if sd > 0.0 {
                zip.and(z.row(stream_of[jj]))
                    .for_each(|ui, acc, &k, &g, &zi| {
                        *ui = (*ui + a * k) + sd * zi;
                        *acc += g;
                    });
            } else {
                zip.for_each(|ui, acc, &k, &g| {
                    *ui += a * k;
                    *acc += g;
                });
            }
        }
    }
    // Back to the caller's order.
    let mut res: Vec<Option<ReducedRun>> = vec![None; b];
    for (jj, o) in out.into_iter().enumerate() {
        res[order[jj]] = Some(o);
    }
    Ok(res.into_iter().map(|o| o.expect("every run")).collect())
}
