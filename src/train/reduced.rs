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
//! [`TestNoise::SpanOnly`] drops the null-space part of the test noise: a deliberately
//! wrong engine, the negative control of the `engine-equivalence` claim.
use super::dpgd::{DpGdConfig, LossPoint};
use super::TrainError;
use crate::linalg::{self, LinalgError};
use crate::models::RandomFeatures;
use crate::rng::SeedPath;
use ndarray::linalg::general_mat_mul;
use ndarray::{concatenate, s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rand_distr::{Distribution, StandardNormal};

/// Eigenvalues of G below this fraction of the largest are dropped from the noise
/// factor (their total variance is below n * 1e-14 of the largest direction's).
const NOISE_RCOND: f64 = 1e-14;

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
        Ok(Self {
            p,
            k,
            k_tn,
            l_train_t,
            l_test_t,
            y,
            y_test,
        })
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
    /// test inputs (the n x p feature matrix is never held).
    pub fn random_features(
        model: &RandomFeatures,
        x: &ArrayView2<f64>,
        y: Array1<f64>,
        x_test: &ArrayView2<f64>,
        y_test: Array1<f64>,
        test_noise: TestNoise,
    ) -> Result<Self, TrainError> {
        let xa = concatenate(Axis(0), &[x.view(), x_test.view()])
            .map_err(|e| TrainError::InvalidConfig(format!("input shapes: {e}")))?;
        if model.p() <= xa.nrows() {
            // Few features: the feature matrix itself is a factor of G (L = [Phi; Phi_test],
            // r = p), no eigendecomposition needed.
            let a = model.features(&xa.view());
            let g = a.dot(&a.t());
            let (n, m) = (y.len(), y_test.len());
            if g.dim() != (n + m, n + m) {
                return Err(TrainError::InvalidConfig(format!(
                    "inputs {} do not match n = {n}, n_test = {m}",
                    xa.nrows()
                )));
            }
            return Self::with_factor(
                &g.view(),
                a.reversed_axes().as_standard_layout().into_owned(),
                model.p(),
                y,
                y_test,
                test_noise,
            );
        }
        let g = model.gram(&xa.view())?;
        Self::from_gram(&g.view(), model.p(), y, y_test, test_noise)
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
    let mut u = Array2::<f64>::zeros((b, n));
    let mut cr = Array2::<f64>::zeros((b, n));
    let mut acc_cr = Array2::<f64>::zeros((b, n));
    let mut kcr = Array2::<f64>::zeros((b, n));
    let mut w_sum = Array2::<f64>::zeros((streams.len(), r_rank));
    let mut w = Array2::<f64>::zeros((streams.len(), r_rank));
    // L_train w per stream; rows of streams that stopped drawing are never read (a
    // moving noisy run's stream always draws).
    let mut z = Array2::<f64>::zeros((streams.len(), n));
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
            let stats =
                clipped_residuals(&u.row(jj), &kp.y.view(), &kp.k.diag(), cfg, cr.row_mut(jj));
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
        if moving == 1 {
            kcr.row_mut(0).assign(&kp.k.dot(&cr.row(0)));
        } else {
            general_mat_mul(
                1.0,
                &cr.slice(s![..moving, ..]),
                &kp.k,
                0.0,
                &mut kcr.slice_mut(s![..moving, ..]),
            );
        }
        // Noise draws of the streams still in use, and their train-side images L_train w.
        let drawing: Vec<usize> = (0..streams.len())
            .filter(|&s| stream_until[s] > t)
            .collect();
        for &s in &drawing {
            for v in w.row_mut(s).iter_mut() {
                *v = StandardNormal.sample(&mut rngs[s]);
            }
            let mut ws = w_sum.row_mut(s);
            ws += &w.row(s);
            z.row_mut(s).assign(&kp.l_train_t.t().dot(&w.row(s)));
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

/// What [`clipped_residuals`] saw.
struct Seen {
    clip_fraction: f64,
    max_abs_residual: f64,
    train_mse: f64,
}

/// Writes `c_i r_i` (clip scale times residual) into `out` and returns the step's
/// statistics; `||g_i|| = 2 |r_i| sqrt(K_ii)` (ridge 0), the clip rule as in
/// [`super::dpgd::clipped_mean_gradient`].
fn clipped_residuals(
    u: &ArrayView1<f64>,
    y: &ArrayView1<f64>,
    k_diag: &ArrayView1<f64>,
    cfg: &DpGdConfig,
    mut out: ndarray::ArrayViewMut1<f64>,
) -> Seen {
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
