//! The exact expectation, over the DP noise, of the noise term of privacy-for-free
//! (Bombari & Mondelli 2025) Sec. 4.3, Eq. 20.
//!
//! With the quadratic loss, ridge 0 and no clipping, DP-GD (Algorithm 1, Eq. 11) is
//! linear, and the noise part of the iterate, `Theta~_t = theta_t - E_xi[theta_t]`, is
//! exactly the iterate of the noise-only recursion
//!
//! ```text
//! Theta~_t = (I - eta H) Theta~_{t-1} + sqrt(eta) s xi_t,   Theta~_0 = 0,   t = 1..T,
//! H = (2/n) Phi^T Phi,   s = kappa C sigma / n,   xi_t ~ N(0, I_p) i.i.d.
//! ```
//!
//! (`H` is the Hessian of the training loss `(1/n) ||Phi theta - y||^2` of
//! [`super::dpgd`]; one noise draw per step, T steps.) Unrolling,
//! `Theta~_T = sqrt(eta) s sum_{t=1}^T (I - eta H)^{T-t} xi_t`, a centred Gaussian with
//!
//! ```text
//! Cov(Theta~_T) = eta s^2 A,   A = sum_{k=0}^{T-1} (I - eta H)^{2k}.
//! ```
//!
//! The simulated metric is the test MSE of `Theta~_T` against zero labels,
//! `(1/n_test) sum_j (phi(x_j)^T Theta~_T)^2 = (1/n_test) ||Phi_test Theta~_T||^2`, so
//!
//! ```text
//! E_xi[noise term] = (eta s^2 / n_test) tr(Phi_test A Phi_test^T).
//! ```
//!
//! **Spectral evaluation.** With the eigendecomposition of the n x n Gram matrix
//! `K = Phi Phi^T = sum_j mu_j u_j u_j^T`, the nonzero eigenvalues of `H` are
//! `lambda_j = 2 mu_j / n` (mu_j > 0) with unit eigenvectors `v_j = Phi^T u_j / sqrt(mu_j)`,
//! and `H` vanishes on the orthogonal complement of their span (the null space of
//! `Phi`), where `A` acts as `T I`. Hence, with `g(lambda) = sum_{k<T} (1 - eta lambda)^{2k}`
//! ([`sum_sq_powers`]) and `a_j = ||Phi_test v_j||^2 = ||Phi_test Phi^T u_j||^2 / mu_j`,
//!
//! ```text
//! tr(Phi_test A Phi_test^T) = sum_j g(lambda_j) a_j + T (||Phi_test||_F^2 - sum_j a_j)
//!                           = T ||Phi_test||_F^2 + sum_j (g(lambda_j) - T) a_j.
//! ```
//!
//! The second form is how it is evaluated: eigenvalues `mu_j <= GRAM_RCOND * max mu`
//! (numerically zero, e.g. the `n - p` zero eigenvalues of `K` when `p < n`) are treated
//! as null space and skipped, which is where they belong (`g(lambda) - T -> 0` as
//! `lambda -> 0`), so their unreliable eigenvectors never enter. Cost: one n x n
//! eigendecomposition and O((n + n_test) n p) flops, whatever T is.
use super::TrainError;
use crate::linalg::{self, GRAM_RCOND};
use ndarray::{ArrayView2, Axis};

/// `g = sum_{k=0}^{T-1} (1 - x)^{2k}` for `x = eta lambda >= 0`, in closed form
/// `(1 - (1 - x)^{2T}) / (1 - (1 - x)^2)` (and `T` when `(1 - x)^2 = 1`), evaluated with
/// `ln_1p`/`exp_m1` so that it stays accurate when `x` is tiny (where the closed form
/// cancels) and when `x > 1` (`1 - x < 0`). `T = 0` gives 0.
pub fn sum_sq_powers(x: f64, steps: usize) -> f64 {
    if steps == 0 {
        return 0.0;
    }
    let t = steps as f64;
    // 1 - (1 - x)^2, exactly factored.
    let denom = x * (2.0 - x);
    if denom == 0.0 {
        return t;
    }
    // ln |1 - x|: ln(1 - x) for x < 1, ln(x - 1) = ln_1p(x - 2) otherwise (-inf at x = 1).
    let ln_abs_r = if x < 1.0 {
        (-x).ln_1p()
    } else {
        (x - 2.0).ln_1p()
    };
    // 1 - (1 - x)^{2T} = -expm1(2T ln|1 - x|).
    let num = -(2.0 * t * ln_abs_r).exp_m1();
    num / denom
}

/// `E_xi[(1/n_test) ||Phi_test Theta~_T||^2]`: the exact expectation over the DP noise,
/// conditional on the features, of the noise term of privacy-for-free Eq. 20 (Sec. 4.3)
/// for the noise-only recursion of Algorithm 1 / Eq. 11 (see the module docs for the
/// recursion and the derivation):
///
/// ```text
/// (eta s^2 / n_test) [ T ||Phi_test||_F^2 + sum_{j: mu_j > 0} (g(2 mu_j/n) - T) ||Phi_test Phi^T u_j||^2 / mu_j ]
/// ```
///
/// with `K = Phi Phi^T = sum_j mu_j u_j u_j^T` and `g` = [`sum_sq_powers`].
///
/// * `phi`: training features, n x p (rows `phi(x_i)`); `phi_test`: n_test x p.
/// * `eta`: step size; `s`: the noise factor after `sqrt(eta)`, i.e. each step adds
///   `sqrt(eta) s xi`; in Algorithm 1, `s = kappa C sigma / n` (kappa = 2).
/// * `steps`: T, the number of noisy steps.
pub fn expected_noise_term(
    phi: &ArrayView2<f64>,
    phi_test: &ArrayView2<f64>,
    eta: f64,
    s: f64,
    steps: usize,
) -> Result<f64, TrainError> {
    let (n, p) = phi.dim();
    let m = phi_test.nrows();
    if n == 0 || m == 0 || phi_test.ncols() != p {
        return Err(TrainError::InvalidConfig(format!(
            "expected_noise_term: shapes Phi {n}x{p}, Phi_test {m}x{}",
            phi_test.ncols()
        )));
    }
    if !(eta.is_finite() && eta > 0.0) {
        return Err(TrainError::InvalidConfig(format!(
            "expected_noise_term: eta must be finite and > 0, got {eta}"
        )));
    }
    if !(s.is_finite() && s >= 0.0) {
        return Err(TrainError::InvalidConfig(format!(
            "expected_noise_term: s must be finite and >= 0, got {s}"
        )));
    }
    linalg::pin_blas_threads();
    let t = steps as f64;
    let k = phi.dot(&phi.t());
    let (mu, u) = linalg::sym_eig(&k.view())?;
    // Column j: Phi_test Phi^T u_j = sqrt(mu_j) Phi_test v_j.
    let w = phi_test.dot(&phi.t()).dot(&u);
    let fro: f64 = phi_test.iter().map(|v| v * v).sum();
    let mu_max = mu.iter().copied().fold(0.0f64, f64::max);
    let cut = GRAM_RCOND * mu_max;
    let mut tr = t * fro;
    for (j, col) in w.axis_iter(Axis(1)).enumerate() {
        let mu_j = mu[j];
        if mu_j > cut {
            let a_j = col.dot(&col) / mu_j;
            let lambda = 2.0 * mu_j / n as f64;
            tr += (sum_sq_powers(eta * lambda, steps) - t) * a_j;
        }
    }
    // The trace is >= 0; only rounding could take it below.
    Ok(eta * s * s * tr.max(0.0) / m as f64)
}
