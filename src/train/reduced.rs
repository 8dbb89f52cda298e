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
//! ([`RandomFeatures::gram`], in blocks of features).
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
use super::dpgd::{ClipRule, DpGdConfig, LossPoint};
use super::TrainError;
use crate::linalg::{self, Kernels, LinalgError};
use crate::models::RandomFeatures;
use crate::rng::SeedPath;
use ndarray::linalg::general_mat_mul;
use ndarray::{concatenate, s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rand_distr::{Distribution, StandardNormal};

/// Eigenvalues of G below this fraction of the largest are dropped from the noise
/// factor (their total variance is below n * 1e-14 of the largest direction's).
const NOISE_RCOND: f64 = 1e-14;

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

/// A DP-GD problem reduced to kernel space: everything the reduced engine needs.
#[derive(Clone, Debug)]
pub struct KernelProblem {
    p: usize,
    /// K = Phi Phi^T, n x n.
    k: Array2<f64>,
    /// K_tn = Phi_test Phi^T, n_test x n.
    k_tn: Array2<f64>,
    /// Transposed noise factor rows of the training points, r x n.
    l_train_t: Array2<f64>,
    /// Transposed noise factor rows of the test points, r x n_test.
    l_test_t: Array2<f64>,
    y: Array1<f64>,
    y_test: Array1<f64>,
    /// Kernels of the per-step products.
    kernels: Kernels,
    /// `1 / (2 sqrt(K_ii))`: a clipped sample's `c_i r_i` is `sign(r_i) C / (2 sqrt(K_ii))`.
    half_inv_sqrt_k: Array1<f64>,
}

impl KernelProblem {
    /// From the Gram matrix `G` of the n training then n_test test points, the number of
    /// features p (G has rank at most p), and the labels.
    pub fn from_gram(
        g: &ArrayView2<f64>,
        p: usize,
        y: Array1<f64>,
        y_test: Array1<f64>,
        test_noise: TestNoise,
    ) -> Result<Self, TrainError> {
        let (n, m) = (y.len(), y_test.len());
        if n == 0 || g.dim() != (n + m, n + m) {
            return Err(TrainError::InvalidConfig(format!(
                "Gram matrix {:?} does not match n = {n}, n_test = {m}",
                g.dim()
            )));
        }
        let l_t = noise_factor_t(g, p)?;
        Self::with_factor(g, l_t, p, y, y_test, test_noise)
    }

    /// From the Gram matrix and a transposed factor `L^T` (r x (n + n_test)) with
    /// `L L^T = G`.
    fn with_factor(
        g: &ArrayView2<f64>,
        l_t: Array2<f64>,
        p: usize,
        y: Array1<f64>,
        y_test: Array1<f64>,
        test_noise: TestNoise,
    ) -> Result<Self, TrainError> {
        let n = y.len();
        let k = g.slice(s![..n, ..n]).to_owned();
        let k_tn = g.slice(s![n.., ..n]).to_owned();
        let l_train_t = l_t.slice(s![.., ..n]).to_owned();
        let l_test_t = match test_noise {
            TestNoise::Exact => l_t.slice(s![.., n..]).to_owned(),
            // (K_tn K^+ L_train)^T = L_train^T K^+ K_nt.
            TestNoise::SpanOnly => {
                let kplus_knt = pinv_apply_matrix(&k.view(), p, &k_tn.t())?;
                l_train_t.dot(&kplus_knt)
            }
        };
        let half_inv_sqrt_k = k.diag().mapv(|v| 0.5 / v.sqrt());
        Ok(Self {
            p,
            k,
            k_tn,
            l_train_t,
            l_test_t,
            y,
            y_test,
            kernels: Kernels::default(),
            half_inv_sqrt_k,
        })
    }

    /// The same problem with other kernels for the per-step products (the Gram matrix
    /// and its factor are kept: [`Self::random_features_with`] chooses the Gram's).
    pub fn with_kernels(mut self, kernels: Kernels) -> Self {
        self.kernels = kernels;
        self
    }

    /// Kernels of the per-step products.
    pub fn kernels(&self) -> Kernels {
        self.kernels
    }

    /// From explicit feature matrices (small problems and tests).
    pub fn from_features(
        phi: &ArrayView2<f64>,
        phi_test: &ArrayView2<f64>,
        y: Array1<f64>,
        y_test: Array1<f64>,
        test_noise: TestNoise,
    ) -> Result<Self, TrainError> {
        let a = concatenate(Axis(0), &[phi.view(), phi_test.view()])
            .map_err(|e| TrainError::InvalidConfig(format!("feature shapes: {e}")))?;
        let g = a.dot(&a.t());
        Self::from_gram(&g.view(), phi.ncols(), y, y_test, test_noise)
    }

    /// For the random-features model: one blocked Gram computation over the train and
    /// test inputs (the n x p feature matrix is never held), with the default kernels.
    pub fn random_features(
        model: &RandomFeatures,
        x: &ArrayView2<f64>,
        y: Array1<f64>,
        x_test: &ArrayView2<f64>,
        y_test: Array1<f64>,
        test_noise: TestNoise,
    ) -> Result<Self, TrainError> {
        Self::random_features_with(model, x, y, x_test, y_test, test_noise, Kernels::default())
    }

    /// [`Self::random_features`] with the given kernels, for the Gram computation and
    /// for the per-step products. The eigendecomposition of G is LAPACK's `dsyevd`
    /// whatever the kernels: the factor `L` is not unique (signs, rotations within
    /// clusters of eigenvalues), and another eigensolver would change the noise each
    /// run sees — still exactly N(0, s^2 G), but not the same draws.
    pub fn random_features_with(
        model: &RandomFeatures,
        x: &ArrayView2<f64>,
        y: Array1<f64>,
        x_test: &ArrayView2<f64>,
        y_test: Array1<f64>,
        test_noise: TestNoise,
        kernels: Kernels,
    ) -> Result<Self, TrainError> {
        let xa = concatenate(Axis(0), &[x.view(), x_test.view()])
            .map_err(|e| TrainError::InvalidConfig(format!("input shapes: {e}")))?;
        if model.p() <= xa.nrows() {
            // Few features: the feature matrix itself is a factor of G (L = [Phi; Phi_test],
            // r = p), no eigendecomposition needed.
            let a = model.features(&xa.view());
            let g = match kernels {
                Kernels::Blas => a.dot(&a.t()),
                Kernels::Faer => linalg::matmul(kernels, &a.view(), &a.t()),
            };
            let (n, m) = (y.len(), y_test.len());
            if g.dim() != (n + m, n + m) {
                return Err(TrainError::InvalidConfig(format!(
                    "inputs {} do not match n = {n}, n_test = {m}",
                    xa.nrows()
                )));
            }
            return Ok(Self::with_factor(
                &g.view(),
                a.reversed_axes().as_standard_layout().into_owned(),
                model.p(),
                y,
                y_test,
                test_noise,
            )?
            .with_kernels(kernels));
        }
        let g = model.gram_with(&xa.view(), kernels)?;
        Ok(Self::from_gram(&g.view(), model.p(), y, y_test, test_noise)?.with_kernels(kernels))
    }

    /// Training samples n.
    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// Test samples.
    pub fn n_test(&self) -> usize {
        self.y_test.len()
    }

    /// Rank of the noise factor.
    pub fn noise_rank(&self) -> usize {
        self.l_train_t.nrows()
    }

    /// Test MSE of the non-private baseline `theta* = pinv(Phi) y` (privacy-for-free
    /// Eq. 9, the gradient-flow limit from 0): its test predictions are
    /// `Phi_test Phi^T (Phi Phi^T)^+ y = K_tn K^+ y`, with the cut-off of
    /// [`linalg::GRAM_RCOND`] and rank at most min(n, p), as the direct `pinv_solve`.
    pub fn min_norm_test_loss(&self) -> Result<f64, TrainError> {
        let y = self.y.view().insert_axis(Axis(1));
        let alpha = pinv_apply_matrix(&self.k.view(), self.p, &y)?;
        let v = self.k_tn.dot(&alpha.column(0));
        Ok(mse(&v.view(), &self.y_test.view()))
    }

    /// Test MSE of given test predictions.
    fn test_mse(&self, v: &ArrayView1<f64>) -> f64 {
        mse(v, &self.y_test.view())
    }
}

fn mse(v: &ArrayView1<f64>, y: &ArrayView1<f64>) -> f64 {
    let r = v - y;
    r.dot(&r) / y.len() as f64
}

/// `L^T` (r x N) with `L L^T = G`, from the eigendecomposition of G: the largest
/// min(p, N) eigenvalues above [`NOISE_RCOND`] of the largest.
fn noise_factor_t(g: &ArrayView2<f64>, p: usize) -> Result<Array2<f64>, LinalgError> {
    let nn = g.nrows();
    let (lam, q) = linalg::sym_eig(g)?;
    let lmax = lam.iter().copied().fold(0.0f64, f64::max);
    let keep: Vec<usize> = (0..nn)
        .rev()
        .take(p.min(nn))
        .filter(|&i| lam[i] > NOISE_RCOND * lmax)
        .collect();
    let mut l_t = Array2::<f64>::zeros((keep.len(), nn));
    for (row, &i) in keep.iter().enumerate() {
        let sl = lam[i].sqrt();
        Zip::from(l_t.row_mut(row))
            .and(q.column(i))
            .for_each(|o, &v| *o = sl * v);
    }
    Ok(l_t)
}

/// `K^+ B` for symmetric PSD K of rank at most `p`: eigenvalues below
/// [`linalg::GRAM_RCOND`] of the largest, or beyond the p largest, count as zero.
fn pinv_apply_matrix(
    k: &ArrayView2<f64>,
    p: usize,
    b: &ArrayView2<f64>,
) -> Result<Array2<f64>, LinalgError> {
    let n = k.nrows();
    let (lam, q) = linalg::sym_eig(k)?;
    let lmax = lam.iter().copied().fold(0.0f64, f64::max);
    let mut c = q.t().dot(b);
    for (i, mut row) in c.rows_mut().into_iter().enumerate() {
        // Ascending eigenvalues: index i is among the p largest iff i >= n - p.
        let kept = i + p.min(n) >= n && lam[i] > linalg::GRAM_RCOND * lmax;
        if kept {
            row /= lam[i];
        } else {
            row.fill(0.0);
        }
    }
    Ok(q.dot(&c))
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
                g_prev
                    .slice_mut(s![..moving, ..])
                    .assign(&cr.slice(s![..moving, ..]));
            }
        }
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
        for jj in 0..moving {
            let cfg = &runs[order[jj]].cfg;
            let mut uj = u.row_mut(jj);
            uj.scaled_add(-2.0 * cfg.eta / nf, &kcr.row(jj));
            if noise_std[jj] > 0.0 {
                uj.scaled_add(noise_std[jj], &z.row(stream_of[jj]));
            }
            let mut a = acc_cr.row_mut(jj);
            a += &cr.row(jj);
        }
    }
    // Back to the caller's order.
    let mut res: Vec<Option<ReducedRun>> = vec![None; b];
    for (jj, o) in out.into_iter().enumerate() {
        res[order[jj]] = Some(o);
    }
    Ok(res.into_iter().map(|o| o.expect("every run")).collect())
}

/// The per-step products `K g` of the moving runs with [`Kernels::Faer`]: runs whose
/// `g` changed in at most `n / SPARSE_DIV` entries since the last step get
/// `K g_t = K g_{t-1} + sum_i (g_t - g_{t-1})_i K_i` (K symmetric: its rows), the others
/// one matrix product; all of them every [`REFRESH_STEPS`] steps.
#[derive(Default)]
struct SparseScratch {
    dense: Vec<usize>,
    rows: Vec<usize>,
    offs: Vec<usize>,
    idx: Vec<usize>,
    delta: Vec<f64>,
    gathered: Array2<f64>,
    product: Array2<f64>,
}

impl SparseScratch {
    /// Rows `..moving` of `kcr` become `K cr` (row by row), given that they hold
    /// `K g_prev`.
    fn products(
        &mut self,
        kp: &KernelProblem,
        t: usize,
        moving: usize,
        cr: &Array2<f64>,
        g_prev: &Array2<f64>,
        kcr: &mut Array2<f64>,
    ) {
        let n = kp.n();
        self.dense.clear();
        self.rows.clear();
        self.offs.clear();
        self.idx.clear();
        self.delta.clear();
        self.offs.push(0);
        for jj in 0..moving {
            if t % REFRESH_STEPS == 0 {
                self.dense.push(jj);
                continue;
            }
            let start = self.idx.len();
            for (i, (&g, &gp)) in cr.row(jj).iter().zip(g_prev.row(jj)).enumerate() {
                if g.to_bits() != gp.to_bits() {
                    self.idx.push(i);
                    self.delta.push(g - gp);
                }
            }
            if (self.idx.len() - start) * SPARSE_DIV > n {
                self.idx.truncate(start);
                self.delta.truncate(start);
                self.dense.push(jj);
            } else if self.idx.len() > start {
                self.rows.push(jj);
                self.offs.push(self.idx.len());
            }
        }
        let nd = self.dense.len();
        if nd == moving {
            linalg::matmul_into(
                Kernels::Faer,
                &cr.slice(s![..moving, ..]),
                &kp.k.view(),
                kcr.slice_mut(s![..moving, ..]),
            );
        } else if nd > 0 {
            if self.gathered.nrows() < nd {
                self.gathered = Array2::zeros((cr.nrows(), n));
                self.product = Array2::zeros((cr.nrows(), n));
            }
            for (row, &jj) in self.dense.iter().enumerate() {
                self.gathered.row_mut(row).assign(&cr.row(jj));
            }
            linalg::matmul_into(
                Kernels::Faer,
                &self.gathered.slice(s![..nd, ..]),
                &kp.k.view(),
                self.product.slice_mut(s![..nd, ..]),
            );
            for (row, &jj) in self.dense.iter().enumerate() {
                kcr.row_mut(jj).assign(&self.product.row(row));
            }
        }
        if !self.rows.is_empty() {
            linalg::add_sparse_combinations(
                &kp.k.view(),
                &self.rows,
                &self.offs,
                &self.idx,
                &self.delta,
                &mut kcr.view_mut(),
            );
        }
    }
}

/// What [`clipped_residuals`] saw.
struct Seen {
    clip_fraction: f64,
    max_abs_residual: f64,
    train_mse: f64,
}

/// Writes `c_i r_i` (clip scale times residual) into `out` and returns the step's
/// statistics; `||g_i|| = 2 |r_i| sqrt(K_ii)` (ridge 0), the clip rule as in
/// [`super::dpgd::clipped_mean_gradient`]. With `clipped_value` (`1 / (2 sqrt(K_ii))`)
/// and the rule [`ClipRule::Divide`], a clipped sample's `c_i r_i = r_i C / ||g_i||` is
/// written as `sign(r_i) C / (2 sqrt(K_ii))`: equal up to rounding, and the same bits at
/// every step the sample stays clipped on the same side (which the sparse product
/// updates of [`SparseScratch`] rely on).
fn clipped_residuals(
    u: &ArrayView1<f64>,
    y: &ArrayView1<f64>,
    k_diag: &ArrayView1<f64>,
    clipped_value: Option<&ArrayView1<f64>>,
    cfg: &DpGdConfig,
    mut out: ndarray::ArrayViewMut1<f64>,
) -> Seen {
    if let (Some(half_inv_sqrt_k), ClipRule::Divide) = (clipped_value, cfg.clip_rule) {
        let mut clipped = 0usize;
        let mut max_r = 0.0f64;
        let mut sse = 0.0f64;
        Zip::from(&mut out)
            .and(u)
            .and(y)
            .and(k_diag)
            .and(half_inv_sqrt_k)
            .for_each(|o, &ui, &yi, &kii, &h| {
                let r = ui - yi;
                sse += r * r;
                max_r = max_r.max(r.abs());
                let gnorm = (4.0 * r * r * kii).max(0.0).sqrt();
                *o = if gnorm / cfg.clip > 1.0 {
                    clipped += 1;
                    (cfg.clip * h).copysign(r)
                } else {
                    r
                };
            });
        let nf = y.len() as f64;
        return Seen {
            clip_fraction: clipped as f64 / nf,
            max_abs_residual: max_r,
            train_mse: sse / nf,
        };
    }
    let mut clipped = 0usize;
    let mut max_r = 0.0f64;
    let mut sse = 0.0f64;
    Zip::from(&mut out)
        .and(u)
        .and(y)
        .and(k_diag)
        .for_each(|o, &ui, &yi, &kii| {
            let r = ui - yi;
            sse += r * r;
            max_r = max_r.max(r.abs());
            let gnorm = (4.0 * r * r * kii).max(0.0).sqrt();
            let ratio = gnorm / cfg.clip;
            let c = if ratio > 1.0 {
                clipped += 1;
                cfg.clip_rule.scale(ratio)
            } else {
                1.0
            };
            *o = c * r;
        });
    let nf = y.len() as f64;
    Seen {
        clip_fraction: clipped as f64 / nf,
        max_abs_residual: max_r,
        train_mse: sse / nf,
    }
}
