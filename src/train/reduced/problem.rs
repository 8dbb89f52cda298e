//! The DP-GD problem in kernel space: the Gram matrix of the train and test points, the
//! factor of the noise's joint law, the labels (see the [`super`] docs for why this is
//! all the engine needs), and the min-norm baseline computed from them.
use super::TestNoise;
use crate::linalg::{self, Kernels, LinalgError};
use crate::models::RandomFeatures;
use crate::train::TrainError;
use ndarray::{concatenate, s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};

/// Eigenvalues of G below this fraction of the largest are dropped from the noise
/// factor (their total variance is below n * 1e-14 of the largest direction's).
const NOISE_RCOND: f64 = 1e-14;

/// A DP-GD problem reduced to kernel space: everything the reduced engine needs.
#[derive(Clone, Debug)]
pub struct KernelProblem {
    p: usize,
    /// K = Phi Phi^T, n x n.
    pub(super) k: Array2<f64>,
    /// K_tn = Phi_test Phi^T, n_test x n.
    pub(super) k_tn: Array2<f64>,
    /// Transposed noise factor rows of the training points, r x n.
    pub(super) l_train_t: Array2<f64>,
    /// Transposed noise factor rows of the test points, r x n_test.
    pub(super) l_test_t: Array2<f64>,
    pub(super) y: Array1<f64>,
    pub(super) y_test: Array1<f64>,
    /// The first `n_val` of the held-out points are a validation split: their loss is
    /// recorded apart ([`super::ReducedRun::val_losses`]) and the test loss is over the
    /// others. 0 (the default): every held-out point is a test point.
    pub(super) n_val: usize,
    /// Kernels of the per-step products.
    pub(super) kernels: Kernels,
    /// `1 / (2 sqrt(K_ii))`: a clipped sample's `c_i r_i` is `sign(r_i) C / (2 sqrt(K_ii))`.
    pub(super) half_inv_sqrt_k: Array1<f64>,
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
            n_val: 0,
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

    /// The same problem with its first `n_val` held-out points as a validation split
    /// (hyper-parameters are selected on them, never on the test points; privacy-for-free
    /// Sec. 3.2: "chosen to maximize the validation performance"). Errors when no test
    /// point would be left.
    pub fn with_validation(mut self, n_val: usize) -> Result<Self, TrainError> {
        if n_val >= self.y_test.len() {
            return Err(TrainError::InvalidConfig(format!(
                "validation split {n_val} leaves no test point of {}",
                self.y_test.len()
            )));
        }
        self.n_val = n_val;
        Ok(self)
    }

    /// Points of the validation split (the first held-out points).
    pub fn n_val(&self) -> usize {
        self.n_val
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

    /// Held-out samples (validation and test).
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
        Ok(self.test_mse(&v.view()))
    }

    /// Test MSE of given held-out predictions (the points after the validation split).
    pub(super) fn test_mse(&self, v: &ArrayView1<f64>) -> f64 {
        let k = self.n_val;
        mse(&v.slice(s![k..]), &self.y_test.slice(s![k..]))
    }

    /// Validation MSE of given held-out predictions (None without a validation split).
    pub(super) fn val_mse(&self, v: &ArrayView1<f64>) -> Option<f64> {
        let k = self.n_val;
        (k > 0).then(|| mse(&v.slice(s![..k]), &self.y_test.slice(s![..k])))
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

/// The test MSE of theta* = pinv(Phi) y of a random-features problem, as
/// [`KernelProblem::min_norm_test_loss`] defines it (the same pseudo-inverse rule, the
/// held-out points after the first `n_val`), computed end to end by the scalar code of
/// [`linalg::scalar`] (features, K, K_tn, the eigendecomposition, the products), so its
/// bits are the same on every machine. For the interpolation threshold p = n
/// (privacy-for-free Sec. 3.1, L145), where K's condition number is near 1e10 and the
/// BLAS path's last bits show at the 6th digit of the loss; O((n + n_test) p d + n^2 p
/// + n^3) in scalar loops, meant for n and p of a few hundred.
pub fn min_norm_test_loss_scalar(
    model: &RandomFeatures,
    x: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    x_held: &ArrayView2<f64>,
    y_held: &ArrayView1<f64>,
    n_val: usize,
) -> Result<f64, TrainError> {
    if x.nrows() != y.len() || x_held.nrows() != y_held.len() || n_val >= y_held.len() {
        return Err(TrainError::InvalidConfig(format!(
            "min-norm loss: {} inputs for {} labels, {} held-out for {} labels, validation {n_val}",
            x.nrows(),
            y.len(),
            x_held.nrows(),
            y_held.len()
        )));
    }
    let features = |x: &ArrayView2<f64>| {
        let mut phi = linalg::scalar::matmul_nt(x, &model.v.view());
        linalg::tanh_array_in_place(&mut phi);
        phi
    };
    let (phi, phi_held) = (features(x), features(x_held));
    let k = linalg::scalar::matmul_nt(&phi.view(), &phi.view());
    let k_tn = linalg::scalar::matmul_nt(&phi_held.view(), &phi.view());
    let b = y.view().insert_axis(Axis(1));
    let alpha = pinv_apply_matrix_with(&k.view(), model.p(), &b, true)?;
    let alpha = alpha.column(0);
    let v: Array1<f64> = k_tn
        .rows()
        .into_iter()
        .map(|row| {
            row.iter()
                .zip(alpha.iter())
                .fold(0.0, |s, (a, b)| s + a * b)
        })
        .collect();
    let r: Vec<f64> = v
        .iter()
        .zip(y_held.iter())
        .skip(n_val)
        .map(|(v, y)| v - y)
        .collect();
    Ok(r.iter().fold(0.0, |s, r| s + r * r) / r.len() as f64)
}

/// `K^+ B` for symmetric PSD K of rank at most `p`: eigenvalues below
/// [`linalg::GRAM_RCOND`] of the largest, or beyond the p largest, count as zero.
fn pinv_apply_matrix(
    k: &ArrayView2<f64>,
    p: usize,
    b: &ArrayView2<f64>,
) -> Result<Array2<f64>, LinalgError> {
    pinv_apply_matrix_with(k, p, b, false)
}

/// [`pinv_apply_matrix`], by LAPACK and BLAS or (`scalar`) by [`linalg::scalar`]'s
/// eigensolver and products.
fn pinv_apply_matrix_with(
    k: &ArrayView2<f64>,
    p: usize,
    b: &ArrayView2<f64>,
    scalar: bool,
) -> Result<Array2<f64>, LinalgError> {
    let n = k.nrows();
    let (lam, q) = if scalar {
        linalg::scalar::sym_eig(k)?
    } else {
        linalg::sym_eig(k)?
    };
    let lmax = lam.iter().copied().fold(0.0f64, f64::max);
    let mut c = if scalar {
        linalg::scalar::matmul_nt(&q.t(), &b.t())
    } else {
        q.t().dot(b)
    };
    for (i, mut row) in c.rows_mut().into_iter().enumerate() {
        // Ascending eigenvalues: index i is among the p largest iff i >= n - p.
        let kept = i + p.min(n) >= n && lam[i] > linalg::GRAM_RCOND * lmax;
        if kept {
            row /= lam[i];
        } else {
            row.fill(0.0);
        }
    }
    Ok(if scalar {
        linalg::scalar::matmul_nt(&q.view(), &c.t())
    } else {
        q.dot(&c)
    })
}
