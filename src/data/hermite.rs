//! Probabilists' Hermite polynomials and Hermite coefficients by Gauss-Hermite quadrature.
//!
//! Convention (blog "Private feature learning for single-index models", Sec. 2.5 and
//! Assumption 1): `He_k` is the probabilists' Hermite polynomial,
//! `He_k(z) = (-1)^k e^{z^2/2} d^k/dz^k e^{-z^2/2}`, and the k-th Hermite coefficient of
//! `f` is `alpha_k = E_{Z~N(0,1)}[ f(Z) He_k(Z) / sqrt(k!) ]`, so that
//! `f = sum_k alpha_k He_k / sqrt(k!)` with the normalised basis orthonormal in
//! L^2(N(0,1)).
use crate::linalg::{sym_eig, LinalgError};
use ndarray::Array2;

/// `He_0(z), ..., He_kmax(z)` by the three-term recurrence
/// `He_{k+1}(z) = z He_k(z) - k He_{k-1}(z)`.
pub fn he_all(kmax: usize, z: f64) -> Vec<f64> {
    let mut h = Vec::with_capacity(kmax + 1);
    h.push(1.0);
    if kmax >= 1 {
        h.push(z);
    }
    for k in 1..kmax {
        let next = z * h[k] - k as f64 * h[k - 1];
        h.push(next);
    }
    h
}

/// `He_k(z)`.
pub fn he(k: usize, z: f64) -> f64 {
    he_all(k, z)[k]
}

/// Normalised `h_k(z) = He_k(z)/sqrt(k!)` for k = 0..=kmax, by the stable recurrence
/// `h_{k+1} = (z h_k - sqrt(k) h_{k-1}) / sqrt(k+1)` (no factorial overflow).
pub fn he_normalised_all(kmax: usize, z: f64) -> Vec<f64> {
    let mut h = Vec::with_capacity(kmax + 1);
    h.push(1.0);
    if kmax >= 1 {
        h.push(z);
    }
    for k in 1..kmax {
        let next = (z * h[k] - (k as f64).sqrt() * h[k - 1]) / ((k + 1) as f64).sqrt();
        h.push(next);
    }
    h
}

/// `sum_k coeffs[k] * He_k(z)/sqrt(k!)` — a function given by its Hermite coefficients.
pub fn eval_series(coeffs: &[f64], z: f64) -> f64 {
    if coeffs.is_empty() {
        return 0.0;
    }
    let h = he_normalised_all(coeffs.len() - 1, z);
    coeffs.iter().zip(h.iter()).map(|(c, hk)| c * hk).sum()
}

/// Gauss-Hermite rule for the standard normal weight: nodes `z_i` and weights `w_i`
/// (summing to 1) such that `E[f(Z)] ~ sum_i w_i f(z_i)`, exact for polynomials of degree
/// up to `2m - 1`. Nodes: eigenvalues of the symmetric Jacobi matrix of the `He_k`
/// recurrence (off-diagonal `sqrt(k)`, Golub-Welsch), polished by Newton steps on
/// `h_m`. Weights: Christoffel numbers `w_i = 1 / sum_{k<m} h_k(z_i)^2` of the
/// orthonormal basis — accurate in *relative* terms even at the extreme nodes, where
/// the Golub-Welsch eigenvector weights (~1e-60) carry only absolute accuracy and
/// high-degree coefficients would be ruined.
#[derive(Clone, Debug)]
pub struct GaussHermite {
    pub nodes: Vec<f64>,
    pub weights: Vec<f64>,
}

impl GaussHermite {
    pub fn new(m: usize) -> Result<Self, LinalgError> {
        let mut j = Array2::<f64>::zeros((m, m));
        for k in 1..m {
            let b = (k as f64).sqrt();
            j[[k, k - 1]] = b;
            j[[k - 1, k]] = b;
        }
        let (w, _) = sym_eig(&j.view())?;
        let mut nodes = w.to_vec();
        let sqrt_m = (m as f64).sqrt();
        for z in nodes.iter_mut() {
            for _ in 0..3 {
                // h_m'(z) = sqrt(m) h_{m-1}(z).
                let h = he_normalised_all(m, *z);
                let step = h[m] / (sqrt_m * h[m - 1]);
                if step.is_finite() {
                    *z -= step;
                }
            }
        }
        let weights = nodes
            .iter()
            .map(|&z| {
                1.0 / he_normalised_all(m - 1, z)
                    .iter()
                    .map(|h| h * h)
                    .sum::<f64>()
            })
            .collect();
        Ok(Self { nodes, weights })
    }

    /// `E[f(Z)]`, Z ~ N(0,1), by the rule.
    pub fn expect(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(&z, &w)| w * f(z))
            .sum()
    }

    /// Hermite coefficients `alpha_0..=alpha_kmax` of `f` (normalised basis, see module docs).
    pub fn coefficients(&self, f: impl Fn(f64) -> f64, kmax: usize) -> Vec<f64> {
        let mut a = vec![0.0; kmax + 1];
        for (&z, &w) in self.nodes.iter().zip(&self.weights) {
            let fz = w * f(z);
            for (ak, hk) in a.iter_mut().zip(he_normalised_all(kmax, z)) {
                *ak += fz * hk;
            }
        }
        a
    }
}

/// Hermite coefficients of `f` with a 160-point rule (exact for polynomials of degree up
/// to 319; geometric convergence for functions analytic in a strip such as tanh(z + b)).
pub fn hermite_coefficients(f: impl Fn(f64) -> f64, kmax: usize) -> Result<Vec<f64>, LinalgError> {
    Ok(GaussHermite::new(160)?.coefficients(f, kmax))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recurrence_matches_closed_forms() {
        let z = 0.7;
        let h = he_all(4, z);
        assert!((h[2] - (z * z - 1.0)).abs() < 1e-15);
        assert!((h[3] - (z * z * z - 3.0 * z)).abs() < 1e-15);
        assert!((h[4] - (z.powi(4) - 6.0 * z * z + 3.0)).abs() < 1e-14);
        let hn = he_normalised_all(4, z);
        assert!((hn[4] - h[4] / 24f64.sqrt()).abs() < 1e-15);
    }
}
