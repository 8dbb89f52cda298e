//! The two models of the papers.
//!
//! * [`RandomFeatures`]: `f(x) = tanh(Vx)^T theta`, V in R^{p x d}, V_ij ~ N(0, 1/d)
//!   (privacy-for-free Sec. 2.2, "Problem Setup"; DESIGN 2.1).
//! * [`TwoLayer`]: `f(x) = a^T tanh(W^T x + b)`, W in R^{d x p}, b in R^p, a in R^p
//!   (blog Sec. 2.2, Eq. "model"; DESIGN 2.2).
//!
//! Both are linear in their trained (last-layer) parameters given the features, which
//! is what the full-batch DP-GD engine in [`crate::train::dpgd`] exploits.
use crate::data::gaussian_matrix;
use crate::linalg::{tanh_array_in_place, Kernels, LinalgError};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::Rng;

/// Features per block in [`RandomFeatures::gram`].
pub const GRAM_BLOCK: usize = 512;

/// Random-features model with tanh activation.
#[derive(Clone, Debug)]
pub struct RandomFeatures {
    /// p x d feature matrix, entries N(0, 1/d).
    pub v: Array2<f64>,
}

impl RandomFeatures {
    /// Draw V (p x d, row by row) with entries N(0, 1/d).
    pub fn sample(p: usize, d: usize, rng: &mut impl Rng) -> Self {
        let v = gaussian_matrix(p, d, rng) / (d as f64).sqrt();
        Self { v }
    }

    pub fn p(&self) -> usize {
        self.v.nrows()
    }

    /// Feature matrix `Phi = tanh(X V^T)`, n x p (one GEMM, then tanh).
    ///
    /// The tanh is [`tanh_array_in_place`] (vectorised, the same bits on every x86-64
    /// machine), not glibc's scalar `f64::tanh`, which was about 20-33 % of the
    /// random-features claims' time.
    pub fn features(&self, x: &ArrayView2<f64>) -> Array2<f64> {
        let mut phi = x.dot(&self.v.t());
        tanh_array_in_place(&mut phi);
        phi
    }

    /// Gram matrix `Phi Phi^T` (N x N) of the rows of `x` (N x d), computed in blocks
    /// of [`GRAM_BLOCK`] features so the N x p feature matrix is never held: for each
    /// block, `F = tanh(X V_b^T)` (N x block) and `G += F F^T` (a SYRK), with the
    /// default [`Kernels`] (faer). The tanh is [`tanh_array_in_place`], as in
    /// [`Self::features`].
    ///
    /// The blocks are split into two fixed halves accumulated in parallel and added in
    /// a fixed order, so the bits do not depend on the thread count.
    pub fn gram(&self, x: &ArrayView2<f64>) -> Result<Array2<f64>, LinalgError> {
        self.gram_with(x, Kernels::default())
    }

    /// [`Self::gram`] with the given kernels for both products of a block.
    pub fn gram_with(
        &self,
        x: &ArrayView2<f64>,
        kernels: Kernels,
    ) -> Result<Array2<f64>, LinalgError> {
        let n = x.nrows();
        let blocks: Vec<(usize, usize)> = (0..self.p())
            .step_by(GRAM_BLOCK)
            .map(|j| (j, (j + GRAM_BLOCK).min(self.p())))
            .collect();
        let half = blocks.len().div_ceil(2);
        let accumulate = |part: &[(usize, usize)]| -> Result<Array2<f64>, LinalgError> {
            let mut g = Array2::<f64>::zeros((n, n));
            for &(a, b) in part {
                let vb = self.v.slice(ndarray::s![a..b, ..]);
                let mut f = match kernels {
                    Kernels::Blas => x.dot(&vb.t()),
                    Kernels::Faer => crate::linalg::matmul(kernels, x, &vb.t()),
                };
                tanh_array_in_place(&mut f);
                crate::linalg::syrk_lower_accumulate_with(kernels, &f.view(), &mut g)?;
            }
            Ok(g)
        };
        let (g1, g2) = rayon::join(
            || accumulate(&blocks[..half]),
            || accumulate(&blocks[half..]),
        );
        let mut g = g1?;
        g += &g2?;
        crate::linalg::fill_upper_from_lower(&mut g);
        Ok(g)
    }

    /// Predictions `Phi theta`.
    pub fn predict(&self, x: &ArrayView2<f64>, theta: &ArrayView1<f64>) -> Array1<f64> {
        self.features(x).dot(theta)
    }
}

/// Two-layer network `f(x) = a^T tanh(W^T x + b)`.
#[derive(Clone, Debug)]
pub struct TwoLayer {
    /// d x p first layer; column j is neuron w_j.
    pub w: Array2<f64>,
    /// p biases.
    pub b: Array1<f64>,
    /// p second-layer weights.
    pub a: Array1<f64>,
}

impl TwoLayer {
    pub fn p(&self) -> usize {
        self.w.ncols()
    }

    /// Pre-activations `Z = X W + 1 b^T`, n x p.
    pub fn preactivations(&self, x: &ArrayView2<f64>) -> Array2<f64> {
        let mut z = x.dot(&self.w);
        z += &self.b.view().insert_axis(Axis(0));
        z
    }

    /// Hidden features `tanh(X W + 1 b^T)`, n x p, with [`tanh_array_in_place`] (as in
    /// [`RandomFeatures::features`]: vectorised and the same bits on every x86-64 machine).
    pub fn features(&self, x: &ArrayView2<f64>) -> Array2<f64> {
        let mut h = self.preactivations(x);
        tanh_array_in_place(&mut h);
        h
    }

    /// Predictions `tanh(X W + 1 b^T) a`.
    pub fn predict(&self, x: &ArrayView2<f64>) -> Array1<f64> {
        self.features(x).dot(&self.a)
    }
}
