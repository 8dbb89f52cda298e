//! Non-private baselines for the linear-in-parameters least-squares problem.
//!
//! * minimum-norm interpolator `pinv(Phi) y`: the limit of gradient flow from 0 when
//!   p > n (privacy-for-free Eq. 9, "non-private baseline theta*");
//! * ridge regression;
//! * plain full-batch gradient descent (the reference DP-GD must reduce to when
//!   sigma = 0 and C = infinity).
use super::TrainError;
use ndarray::{Array1, ArrayView1, ArrayView2};

/// `pinv(Phi) y` (see [`crate::linalg::pinv_solve`]).
pub fn min_norm(phi: &ArrayView2<f64>, y: &ArrayView1<f64>) -> Result<Array1<f64>, TrainError> {
    Ok(crate::linalg::pinv_solve(phi, y)?)
}

/// Minimiser of `(1/n)||Phi theta - y||^2 + lambda ||theta||^2`.
pub fn ridge(
    phi: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    lambda: f64,
) -> Result<Array1<f64>, TrainError> {
    Ok(crate::linalg::ridge_solve(phi, y, lambda)?)
}

/// `steps` steps of plain gradient descent on `(1/n)||Phi theta - y||^2 + lambda||theta||^2`:
/// `theta <- theta - eta ((2/n) Phi^T (Phi theta - y) + 2 lambda theta)`.
pub fn gradient_descent(
    phi: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    theta0: Array1<f64>,
    eta: f64,
    steps: usize,
    lambda: f64,
) -> Array1<f64> {
    let n = y.len() as f64;
    let mut theta = theta0;
    for _ in 0..steps {
        let r = phi.dot(&theta) - y;
        let mut g = phi.t().dot(&r);
        g *= 2.0 / n;
        if lambda > 0.0 {
            g.scaled_add(2.0 * lambda, &theta);
        }
        theta.scaled_add(-eta, &g);
    }
    theta
}
