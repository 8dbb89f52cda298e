//! The kernel-level ingredients of the proof of privacy-for-free (Bombari & Mondelli,
//! PNAS 2025) Theorem 2, computed exactly from the kernel `K = Phi Phi^T` (n x n), its
//! eigendecomposition and the test-train kernel, never from the p-dimensional iterate.
//!
//! Notation (paper Sec. 2.2 and Sec. 4): features `phi(x) = act(V x)`, V_ij ~ N(0, 1/d);
//! training loss `L(theta) = (1/n) sum_i (phi(x_i)^T theta - y_i)^2` (Eq. 2 with the
//! quadratic loss; Eq. 16 uses `||grad l|| = 2 |r| ||phi||`), so gradient flow is
//! `d theta/dt = -(2/n) Phi^T (Phi theta - y)` and the Hessian is `H = (2/n) Phi^T Phi`,
//! whose nonzero eigenvalues are `lambda_j = 2 mu_j / n` for the eigenvalues `mu_j` of K.
//!
//! * [`gap_ratio`]: `mu_d / mu_{d+1}` (eigenvalues in decreasing order), the spectral gap of
//!   Lemma 4.5 (SI), stated at L219-L221: "there is a spectral gap between the d-th and the
//!   (d+1)-th eigenvalue of the kernel K = Phi Phi^T".
//! * [`theta_star_sq`]: `||theta*||^2 = y^T K^{-1} y` for the min-norm interpolator
//!   `theta* = Phi^T K^{-1} y` (Eq. 9's limit), Sec. 1.2 (L87): `||theta*||_2 = Theta(sqrt(n/p))`.
//! * [`early_stop_term`]: Eq. 21 (Lemma 3.4, L215-L217),
//!   `E_x[(phi(x)^T (theta_hat(tau) - theta*))^2]` with `theta_hat` gradient flow from 0:
//!   `theta_hat(tau) - theta* = -Phi^T K^{-1} exp(-2 K tau / n) y`, so
//!   `phi(x)^T (theta_hat(tau) - theta*) = -k(x)^T K^{-1} exp(-2 K tau/n) y`, `k(x) = Phi phi(x)`.
//! * [`ou_noise_term`]: Eq. 20 (Lemma 3.3, L211-L215) for the OU process of Eq. 13: the
//!   noise part `Theta~(tau)` has covariance `Sigma^2 int_0^tau exp(-2 H s) ds`, so
//!   `E_B[(phi^T Theta~(tau))^2] = Sigma^2 [tau ||phi||^2 + sum_j (g(lambda_j) - tau) (v_j^T phi)^2]`
//!   with `g(lambda) = (1 - exp(-2 lambda tau)) / (2 lambda) <= tau` (the drift-free
//!   comparison of L209: `g <= tau` is where the attractive drift is used) and
//!   `(v_j^T phi)^2 = (u_j^T k(x))^2 / mu_j`. With [`Drift::Repulsive`] (a negative control
//!   breaking that argument) `g(lambda) = (exp(2 lambda tau) - 1) / (2 lambda) >= tau`.
//! * [`sup_noise_eq16`]: Eq. 19 (Lemma 3.2, L205-L209): `phi_i^T Theta~(t)` for the training
//!   points, simulated exactly on a time grid in K's eigenbasis (each mode an independent
//!   1-D OU process), and its sup over the grid.
use super::TrainError;
use crate::linalg::{self, GRAM_RCOND};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// The activation of the random features.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `tanh`: odd, so mu_0 = mu_2 = 0, mu_1 = E[z tanh z] = 0.6057 (the paper's example, L109).
    Tanh,
    /// `z^2 - 1` (He_2): mu_1 = 0, a negative control of Lemma 4.5 (L109 requires mu_1 != 0).
    Hermite2,
}

/// Features per block of [`gram`].
const BLOCK: usize = 512;

/// The Gram matrix `G = F F^T` of the rows of `x` (N x d), `F = act(x V^T)` (N x p),
/// accumulated over blocks of features so F is never held. Sequential, fixed order.
pub fn gram(
    v: &ArrayView2<f64>,
    x: &ArrayView2<f64>,
    act: Activation,
) -> Result<Array2<f64>, TrainError> {
    linalg::pin_blas_threads();
    let (n, p) = (x.nrows(), v.nrows());
    let mut g = Array2::<f64>::zeros((n, n));
    for a in (0..p).step_by(BLOCK) {
        let b = (a + BLOCK).min(p);
        let mut f = x.dot(&v.slice(s![a..b, ..]).t());
        match act {
            Activation::Tanh => linalg::tanh_array_in_place(&mut f),
            Activation::Hermite2 => f.mapv_inplace(|z| z * z - 1.0),
        }
        let f = f.as_standard_layout().to_owned();
        linalg::syrk_lower_accumulate(&f.view(), &mut g)?;
    }
    linalg::fill_upper_from_lower(&mut g);
    Ok(g)
}

/// The kernel blocks of a unit: `K = Phi Phi^T` (n x n), its eigendecomposition (decreasing
/// eigenvalues, eigenvectors in the columns of `u`), the test-train kernel
/// `Phi_test Phi^T` (m x n) and the test-test kernel (m x m).
pub struct KernelSplit {
    pub k: Array2<f64>,
    pub mu: Array1<f64>,
    pub u: Array2<f64>,
    pub cross: Array2<f64>,
    pub test: Array2<f64>,
}

impl KernelSplit {
    /// Splits the Gram matrix of the stacked rows `[X; X_test]` (n + m rows).
    pub fn new(g: &Array2<f64>, n: usize) -> Result<Self, TrainError> {
        let k = g.slice(s![..n, ..n]).to_owned();
        let cross = g.slice(s![n.., ..n]).to_owned();
        let test = g.slice(s![n.., n..]).to_owned();
        let (w, q) = linalg::sym_eig(&k.view())?;
        // Decreasing order.
        let mu = Array1::from_iter(w.iter().rev().copied());
        let mut u = Array2::<f64>::zeros((n, n));
        for j in 0..n {
            u.column_mut(j).assign(&q.column(n - 1 - j));
        }
        Ok(Self {
            k,
            mu,
            u,
            cross,
            test,
        })
    }

    fn n(&self) -> usize {
        self.k.nrows()
    }

    /// Eigenvalues above the numerical rank cut ([`GRAM_RCOND`] times the largest).
    fn kept(&self) -> usize {
        let cut = GRAM_RCOND * self.mu[0].max(0.0);
        self.mu.iter().take_while(|m| **m > cut).count()
    }
}

/// Lemma 4.5: `mu_d / mu_{d+1}` of K (eigenvalues decreasing, 1-indexed).
pub fn gap_ratio(ks: &KernelSplit, d: usize) -> Result<f64, TrainError> {
    if d == 0 || d >= ks.n() {
        return Err(TrainError::InvalidConfig(format!(
            "gap_ratio: need 1 <= d < n, got d = {d}, n = {}",
            ks.n()
        )));
    }
    Ok(ks.mu[d - 1] / ks.mu[d])
}

/// `||theta*||^2 = y^T K^{-1} y` (min-norm interpolator, eigenvalues below the rank cut
/// dropped: the pseudo-inverse).
pub fn theta_star_sq(ks: &KernelSplit, y: &ArrayView1<f64>) -> f64 {
    let uy = ks.u.t().dot(y);
    (0..ks.kept()).map(|j| uy[j] * uy[j] / ks.mu[j]).sum()
}

/// Eq. 21: `(1/m) sum_test (k(x)^T K^{-1} exp(-2 K tau / n) y)^2` (module docs).
pub fn early_stop_term(ks: &KernelSplit, y: &ArrayView1<f64>, tau: f64) -> f64 {
    let n = ks.n() as f64;
    let uy = ks.u.t().dot(y);
    let mut coef = Array1::<f64>::zeros(ks.n());
    for j in 0..ks.kept() {
        coef[j] = uy[j] * (-2.0 * ks.mu[j] * tau / n).exp() / ks.mu[j];
    }
    let a = ks.u.dot(&coef);
    let pred = ks.cross.dot(&a);
    pred.dot(&pred) / ks.cross.nrows() as f64
}

/// The drift of the OU process of Eq. 13.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drift {
    /// `-grad L = -H theta` (the paper's, attractive: L209).
    Attractive,
    /// `+H theta`: a negative control that breaks the drift-free comparison of L209.
    Repulsive,
}

/// `int_0^tau exp(-+2 lambda s) ds`, accurate for small `lambda tau` (expm1).
fn g_int(lambda: f64, tau: f64, drift: Drift) -> f64 {
    if lambda <= 0.0 {
        return tau;
    }
    match drift {
        Drift::Attractive => -(-2.0 * lambda * tau).exp_m1() / (2.0 * lambda),
        Drift::Repulsive => (2.0 * lambda * tau).exp_m1() / (2.0 * lambda),
    }
}

/// Eq. 20 for the OU process: `(Sigma^2 / m) sum_test [tau ||phi||^2 + sum_j (g_j - tau)
/// (u_j^T k(x))^2 / mu_j]` (module docs); returns `(noise term, drift-free bound
/// Sigma^2 tau mean_test ||phi||^2)`.
pub fn ou_noise_term(ks: &KernelSplit, tau: f64, big_sigma: f64, drift: Drift) -> (f64, f64) {
    let n = ks.n() as f64;
    let m = ks.cross.nrows() as f64;
    let fro: f64 = ks.test.diag().sum();
    let w = ks.cross.dot(&ks.u);
    let mut tr = tau * fro;
    for (j, col) in w.axis_iter(Axis(1)).enumerate().take(ks.kept()) {
        let lambda = 2.0 * ks.mu[j] / n;
        tr += (g_int(lambda, tau, drift) - tau) * col.dot(&col) / ks.mu[j];
    }
    let s2 = big_sigma * big_sigma;
    (s2 * tr.max(0.0) / m, s2 * tau * fro / m)
}

/// What [`sup_noise_eq16`] counts of Eq. 16 (L191-L193) along the OU path
/// `Theta_hat(t) = theta_hat(t) + Theta~(t)` at the grid times: `(i, t)` pairs where
/// Eq. 16's condition `|phi_i^T Theta~| + |phi_i^T theta_hat - y_i| <= C/(2 ||phi_i||)`
/// holds, pairs where the gradient `2 |phi_i^T Theta_hat - y_i| ||phi_i||` exceeds C,
/// and pairs where both happen (Eq. 16 => Eq. 15 says: none).
#[derive(Clone, Copy, Debug, Default)]
pub struct Eq16Counts {
    pub pairs: usize,
    pub condition: usize,
    pub clipped: usize,
    pub violations: usize,
}

/// Eq. 19: the noise part at the training points, `z_i(t) = phi_i^T Theta~(t)`, simulated
/// exactly on `grid` equal steps of `[0, tau]`: in K's eigenbasis `w_j = u_j^T z` is a 1-D OU
/// process `dw_j = -+lambda_j w_j dt + Sigma sqrt(mu_j) dB_j` (`Phi dB` has covariance
/// `K`), advanced by its exact transition. Returns, per training point, `sup_t |z_i(t)|`
/// over the grid (a lower bound on the continuous sup, short of it by about
/// `0.58 Sigma ||phi_i|| sqrt(tau/grid)` for a Wiener process).
///
/// With `eq16 = Some((y, C))` also the counts of [`Eq16Counts`]; the
/// noise-free path's residual is `phi_i^T theta_hat(t) - y_i = -(U exp(-2 K t/n) U^T y)_i`
/// (gradient flow from 0), evaluated at the same grid times.
pub fn sup_noise_eq16(
    ks: &KernelSplit,
    tau: f64,
    big_sigma: f64,
    drift: Drift,
    grid: usize,
    eq16: Option<(ArrayView1<f64>, f64)>,
    rng: &mut impl Rng,
) -> Result<(Array1<f64>, Eq16Counts), TrainError> {
    if grid == 0 {
        return Err(TrainError::InvalidConfig(
            "sup_noise: grid must be >= 1".into(),
        ));
    }
    let n = ks.n();
    let r = ks.kept();
    let dt = tau / grid as f64;
    let (decay, sd): (Vec<f64>, Vec<f64>) = (0..r)
        .map(|j| {
            let lambda = 2.0 * ks.mu[j] / n as f64;
            let dec = match drift {
                Drift::Attractive => (-lambda * dt).exp(),
                Drift::Repulsive => (lambda * dt).exp(),
            };
            (
                dec,
                big_sigma * (ks.mu[j] * g_int(lambda, dt, drift)).sqrt(),
            )
        })
        .unzip();
    let ur = ks.u.slice(s![.., ..r]);
    let mut w = Array1::<f64>::zeros(r);
    let mut sup = Array1::<f64>::zeros(n);
    let mut counts = Eq16Counts::default();
    let uy = eq16.as_ref().map(|(y, _)| ks.u.t().dot(y));
    let norms: Vec<f64> = (0..n).map(|i| ks.k[[i, i]].max(0.0).sqrt()).collect();
    for step in 0..grid {
        for j in 0..r {
            let g: f64 = StandardNormal.sample(rng);
            w[j] = decay[j] * w[j] + sd[j] * g;
        }
        let z = ur.dot(&w);
        for (s, v) in sup.iter_mut().zip(z.iter()) {
            *s = s.max(v.abs());
        }
        if let (Some((_, clip)), Some(uy)) = (eq16.as_ref(), uy.as_ref()) {
            let t = (step + 1) as f64 * dt;
            let decayed = Array1::from_iter((0..ks.n()).map(|j| {
                if j < r {
                    -uy[j] * (-2.0 * ks.mu[j] * t / n as f64).exp()
                } else {
                    -uy[j]
                }
            }));
            let free = ks.u.dot(&decayed);
            for i in 0..n {
                let cond = z[i].abs() + free[i].abs() <= clip / (2.0 * norms[i]);
                let clipped = 2.0 * (z[i] + free[i]).abs() * norms[i] > *clip;
                counts.pairs += 1;
                counts.condition += usize::from(cond);
                counts.clipped += usize::from(clipped);
                counts.violations += usize::from(cond && clipped);
            }
        }
        if !w.iter().all(|v| v.is_finite()) {
            return Err(TrainError::Diverged {
                step,
                what: "noise process".into(),
            });
        }
    }
    Ok((sup, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_int_matches_quadrature_and_limits() {
        let (l, t) = (0.7, 1.3);
        let steps = 200_000;
        let h = t / steps as f64;
        let q: f64 = (0..steps)
            .map(|k| (-2.0 * l * (k as f64 + 0.5) * h).exp() * h)
            .sum();
        assert!((g_int(l, t, Drift::Attractive) - q).abs() < 1e-9);
        assert!(g_int(l, t, Drift::Attractive) <= t);
        assert!(g_int(l, t, Drift::Repulsive) >= t);
        assert_eq!(g_int(0.0, t, Drift::Attractive), t);
    }
}
