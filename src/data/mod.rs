//! Synthetic data: Gaussian inputs and the targets of the papers.
//!
//! * Inputs x ~ N(0, I_d) (blog Assumption 1; privacy-for-free Fig. 2), or the same
//!   normalised to ||x|| = sqrt(d) (privacy-for-free Sec. 2.2, assumption ii).
//! * Targets: `sign(u^T x)` with u uniform on the sphere (privacy-for-free Fig. 2), and
//!   the single-index `sigma_*(<x, mu>)` with `sigma_*` given by its Hermite
//!   coefficients (blog Assumption 1), plus optional additive Gaussian label noise.
//!
//! The order of random draws is part of the contract: `sample` draws the n x d inputs
//! row by row, then (only if `label_noise > 0`) n label-noise values.
pub mod digits;
pub mod hermite;
pub mod planted;
pub mod spec;

use ndarray::{Array1, Array2, ArrayView2};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// Distribution of the inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputDist {
    /// x ~ N(0, I_d).
    Gaussian,
    /// x ~ N(0, I_d) rescaled to ||x|| = sqrt(d) (privacy-for-free Sec. 2.2 ii).
    Sphere,
}

/// An n x d matrix of standard normals, drawn row by row.
pub fn gaussian_matrix(rows: usize, cols: usize, rng: &mut impl Rng) -> Array2<f64> {
    let v: Vec<f64> = (0..rows * cols)
        .map(|_| StandardNormal.sample(rng))
        .collect();
    Array2::from_shape_vec((rows, cols), v).expect("shape matches")
}

/// A vector of standard normals.
pub fn gaussian_vector(len: usize, rng: &mut impl Rng) -> Array1<f64> {
    (0..len).map(|_| StandardNormal.sample(rng)).collect()
}

/// A direction uniform on the unit sphere S^{d-1} (normalised Gaussian).
pub fn unit_vector(d: usize, rng: &mut impl Rng) -> Array1<f64> {
    let g = gaussian_vector(d, rng);
    let norm = g.dot(&g).sqrt();
    g / norm
}

/// n inputs in R^d from `dist`.
pub fn inputs(n: usize, d: usize, dist: InputDist, rng: &mut impl Rng) -> Array2<f64> {
    let mut x = gaussian_matrix(n, d, rng);
    if dist == InputDist::Sphere {
        let target = (d as f64).sqrt();
        for mut row in x.rows_mut() {
            let norm = row.dot(&row).sqrt();
            row *= target / norm;
        }
    }
    x
}

/// A target function of the input.
#[derive(Clone, Debug)]
pub enum Target {
    /// y = sign(u^T x) (privacy-for-free Fig. 2); sign(0) = +1.
    Sign { u: Array1<f64> },
    /// y = sigma_*(<x, mu>), sigma_* = sum_k coeffs[k] He_k/sqrt(k!) (blog Assumption 1).
    SingleIndex { mu: Array1<f64>, coeffs: Vec<f64> },
}

impl Target {
    /// Noiseless target values on the rows of `x`.
    pub fn eval(&self, x: &ArrayView2<f64>) -> Array1<f64> {
        match self {
            Target::Sign { u } => x.dot(u).mapv(|z| if z >= 0.0 { 1.0 } else { -1.0 }),
            Target::SingleIndex { mu, coeffs } => {
                x.dot(mu).mapv(|z| hermite::eval_series(coeffs, z))
            }
        }
    }

    /// The direction of the target (u or mu).
    pub fn direction(&self) -> &Array1<f64> {
        match self {
            Target::Sign { u } => u,
            Target::SingleIndex { mu, .. } => mu,
        }
    }
}

/// A data set: inputs (rows) and labels.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub x: Array2<f64>,
    pub y: Array1<f64>,
}

impl Dataset {
    /// n samples: inputs from `dist`, labels `target(x) + label_noise * N(0,1)`.
    pub fn sample(
        n: usize,
        d: usize,
        dist: InputDist,
        target: &Target,
        label_noise: f64,
        rng: &mut impl Rng,
    ) -> Self {
        let x = inputs(n, d, dist, rng);
        let mut y = target.eval(&x.view());
        if label_noise > 0.0 {
            for yi in y.iter_mut() {
                let e: f64 = StandardNormal.sample(rng);
                *yi += label_noise * e;
            }
        }
        Self { x, y }
    }

    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
}
