//! Models of the DP-SGD experiments: a stack of dense layers with softmax
//! cross-entropy — multinomial logistic regression (one layer) and a two-layer MLP
//! (tanh or ReLU hidden layer).
//!
//! Parameters live in one flat vector theta of length P (the coordinates that TP-TopK
//! ranks and masks, fewer-coordinates paper Sec. 3.1). Layout, layer after layer:
//! the weight matrix `W_l` (out x in, row-major), then the bias `b_l` (out).
//!
//! Per-example gradients use the outer-product structure of a dense layer
//! (Goodfellow 2015, "Efficient per-example gradient computations"): with the layer
//! input `a_i` and the back-propagated output error `delta_i` of example i,
//!
//! ```text
//! dL_i/dW_l = delta_i a_i^T,   dL_i/db_l = delta_i,
//! ||m o g_i||^2 = sum_l [ (delta_i^2)^T M_l (a_i^2) + (delta_i^2)^T m_{b,l} ]   (mask m)
//!               = sum_l ||delta_i||^2 (||a_i||^2 + 1)                          (m = 1)
//! sum_i c_i (m o g_i) = m o [ (c o Delta)^T A ,  (c o Delta)^T 1 ]   (one GEMM per layer)
//! ```
//!
//! so clipping factors never need the B x P matrix of per-example gradients, and the
//! clipped sum is one GEMM with rescaled errors. The B x P matrix is still available
//! ([`Model::per_example_gradients`]) for tests, and a loop over examples with explicit
//! scalar formulas ([`Model::example_gradient_reference`]) is the brute-force reference.
//!
//! Loss of example i: `-ln softmax(z_i)_{y_i}`, whose output error is
//! `delta_L = softmax(z_i) - e_{y_i}`; hidden errors
//! `delta_{l-1} = (delta_l W_l) o act'(z_{l-1})`.
pub use super::fused::LayerShape;
use super::fused::StepCache;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// Hidden-layer activation of the MLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    Tanh,
    Relu,
}

impl Activation {
    fn apply(self, z: f64) -> f64 {
        match self {
            Activation::Tanh => z.tanh(),
            Activation::Relu => z.max(0.0),
        }
    }

    /// Derivative from the pre-activation `z` and the activation `a = act(z)`
    /// (ReLU'(0) = 0 by convention).
    fn derivative(self, z: f64, a: f64) -> f64 {
        match self {
            Activation::Tanh => 1.0 - a * a,
            Activation::Relu => {
                if z > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }
}

/// Which model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ModelKind {
    /// Multinomial logistic regression: logits `W x + b`.
    Logreg,
    /// Two-layer MLP: logits `W2 act(W1 x + b1) + b2`.
    Mlp {
        hidden: usize,
        activation: Activation,
    },
}

/// A model architecture: a stack of dense layers (validated dimensions).
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    kind: ModelKind,
    layers: Vec<LayerShape>,
    params: usize,
}

/// The forward pass of a batch, kept for the backward pass.
struct Forward {
    /// Layer inputs `A_0 = X, A_1, ...` (one per layer).
    inputs: Vec<Array2<f64>>,
    /// Pre-activations of the hidden layers.
    pre: Vec<Array2<f64>>,
    /// Output logits (B x K).
    logits: Array2<f64>,
}

/// Per-example output errors of every layer (B x out_l), from the backward pass.
pub struct Backward {
    inputs: Vec<Array2<f64>>,
    deltas: Vec<Array2<f64>>,
    /// Mean cross-entropy loss of the batch.
    pub loss: f64,
}

/// Row-wise softmax in place (max-shifted for stability).
fn softmax_rows(z: &mut Array2<f64>) {
    for mut row in z.rows_mut() {
        let m = row.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        row.mapv_inplace(|v| (v - m).exp());
        let s = row.sum();
        row /= s;
    }
}

impl Model {
    /// The architecture for `features` inputs and `classes` outputs.
    /// Dimensions must be positive (checked by the caller's config validation; zero
    /// dimensions give an empty model, which [`super::MethodConfig`] rejects).
    pub fn new(kind: ModelKind, features: usize, classes: usize) -> Self {
        let dims: Vec<usize> = match kind {
            ModelKind::Logreg => vec![features, classes],
            ModelKind::Mlp { hidden, .. } => vec![features, hidden, classes],
        };
        let mut layers = Vec::with_capacity(dims.len() - 1);
        let mut offset = 0;
        for w in dims.windows(2) {
            layers.push(LayerShape {
                inputs: w[0],
                outputs: w[1],
                offset,
            });
            offset += w[1] * w[0] + w[1];
        }
        Self {
            kind,
            layers,
            params: offset,
        }
    }

    pub fn kind(&self) -> ModelKind {
        self.kind
    }

    /// Number of parameters P.
    pub fn num_params(&self) -> usize {
        self.params
    }

    pub fn layers(&self) -> &[LayerShape] {
        &self.layers
    }

    fn activation(&self) -> Activation {
        match self.kind {
            ModelKind::Logreg => Activation::Tanh, // unused: no hidden layer
            ModelKind::Mlp { activation, .. } => activation,
        }
    }

    /// Initial parameters: logistic regression starts at 0; the MLP draws
    /// `W_l ~ N(0, 1/in_l)` entry by entry in layout order (biases 0).
    pub fn init(&self, rng: &mut impl Rng) -> Array1<f64> {
        let mut theta = Array1::zeros(self.params);
        if let ModelKind::Mlp { .. } = self.kind {
            for l in &self.layers {
                let sd = 1.0 / (l.inputs as f64).sqrt();
                for v in theta.slice_mut(s![l.weights()]).iter_mut() {
                    let g: f64 = StandardNormal.sample(rng);
                    *v = sd * g;
                }
            }
        }
        theta
    }

    fn weight<'a>(&self, theta: &'a ArrayView1<f64>, l: &LayerShape) -> ArrayView2<'a, f64> {
        theta
            .slice_move(s![l.weights()])
            .into_shape_with_order((l.outputs, l.inputs))
            .expect("layout matches")
    }

    fn forward(&self, theta: &ArrayView1<f64>, x: &ArrayView2<f64>) -> Forward {
        let act = self.activation();
        let mut inputs = vec![x.to_owned()];
        let mut pre = Vec::new();
        let last = self.layers.len() - 1;
        let mut logits = Array2::zeros((0, 0));
        for (k, l) in self.layers.iter().enumerate() {
            let w = self.weight(theta, l);
            let b = theta.slice(s![l.bias()]);
            let mut z = inputs[k].dot(&w.t());
            z += &b;
            if k == last {
                logits = z;
            } else {
                let a = z.mapv(|v| act.apply(v));
                pre.push(z);
                inputs.push(a);
            }
        }
        Forward {
            inputs,
            pre,
            logits,
        }
    }

    /// Output logits of a batch.
    pub fn logits(&self, theta: &ArrayView1<f64>, x: &ArrayView2<f64>) -> Array2<f64> {
        self.forward(theta, x).logits
    }

    /// Fraction of rows whose arg-max logit (ties: lowest class) equals the label.
    pub fn accuracy(&self, theta: &ArrayView1<f64>, x: &ArrayView2<f64>, y: &[usize]) -> f64 {
        if y.is_empty() {
            return 0.0;
        }
        let z = self.logits(theta, x);
        let correct = z
            .rows()
            .into_iter()
            .zip(y)
            .filter(|(row, &label)| {
                let mut best = 0;
                for (c, &v) in row.iter().enumerate() {
                    if v > row[best] {
                        best = c;
                    }
                }
                best == label
            })
            .count();
        correct as f64 / y.len() as f64
    }

    /// Forward and backward pass of a batch: per-example errors of every layer.
    pub fn backward(&self, theta: &ArrayView1<f64>, x: &ArrayView2<f64>, y: &[usize]) -> Backward {
        let act = self.activation();
        let f = self.forward(theta, x);
        let mut delta = f.logits;
        softmax_rows(&mut delta);
        let mut loss = 0.0;
        for (mut row, &label) in delta.rows_mut().into_iter().zip(y) {
            loss -= row[label].max(f64::MIN_POSITIVE).ln();
            row[label] -= 1.0;
        }
        let b = y.len().max(1) as f64;
        let mut deltas = vec![Array2::zeros((0, 0)); self.layers.len()];
        for k in (0..self.layers.len()).rev() {
            if k > 0 {
                let w = self.weight(theta, &self.layers[k]);
                let mut prev = delta.dot(&w);
                Zip::from(&mut prev)
                    .and(&f.pre[k - 1])
                    .and(&f.inputs[k])
                    .for_each(|d, &z, &a| *d *= act.derivative(z, a));
                deltas[k] = std::mem::replace(&mut delta, prev);
            } else {
                deltas[k] = std::mem::replace(&mut delta, Array2::zeros((0, 0)));
            }
        }
        Backward {
            inputs: f.inputs,
            deltas,
            loss: loss / b,
        }
    }

    /// Per-example squared norms of the masked gradients, `||m o g_i||^2`, without
    /// materialising the gradients (module docs). `mask = None` is the all-ones mask
    /// (cheap path: `||delta_i||^2 (||a_i||^2 + 1)` per layer).
    pub fn per_example_sq_norms(
        &self,
        bw: &Backward,
        mask: Option<&ArrayView1<f64>>,
    ) -> Array1<f64> {
        let b = bw.deltas.first().map_or(0, |d| d.nrows());
        let mut norms = Array1::zeros(b);
        for (k, l) in self.layers.iter().enumerate() {
            let d2 = bw.deltas[k].mapv(|v| v * v);
            let a2 = bw.inputs[k].mapv(|v| v * v);
            match mask {
                None => {
                    let dn = d2.sum_axis(Axis(1));
                    let an = a2.sum_axis(Axis(1));
                    Zip::from(&mut norms)
                        .and(&dn)
                        .and(&an)
                        .for_each(|n, &d, &a| *n += d * (a + 1.0));
                }
                Some(m) => {
                    let mw = m
                        .slice(s![l.weights()])
                        .into_shape_with_order((l.outputs, l.inputs))
                        .expect("layout matches");
                    let mb = m.slice(s![l.bias()]);
                    // (Delta^2 M) o A^2 summed over inputs, plus Delta^2 m_b.
                    let dm = d2.dot(&mw);
                    let w_part = (&dm * &a2).sum_axis(Axis(1));
                    let b_part = d2.dot(&mb);
                    norms += &w_part;
                    norms += &b_part;
                }
            }
        }
        norms
    }

    /// `sum_i c_i g_i` (flat, unmasked): one GEMM per layer with rescaled errors.
    /// The caller applies the mask.
    pub fn weighted_gradient_sum(&self, bw: &Backward, c: &ArrayView1<f64>) -> Array1<f64> {
        let mut out = Array1::zeros(self.params);
        for (k, l) in self.layers.iter().enumerate() {
            let mut d = bw.deltas[k].clone();
            for (mut row, &ci) in d.rows_mut().into_iter().zip(c) {
                row *= ci;
            }
            let gw = d.t().dot(&bw.inputs[k]);
            out.slice_mut(s![l.weights()])
                .assign(&Array1::from_iter(gw.iter().copied()));
            out.slice_mut(s![l.bias()]).assign(&d.sum_axis(Axis(0)));
        }
        out
    }

    /// The clipped sum of one batch for logistic regression, fused (module docs): per
    /// example (the `rows` of `(x, y)` in that order, or all of them), the logits
    /// `W x_i + b`, the softmax error `delta_i`, the squared norm of
    /// the gradient, the clip factor `c_i = min(1, C / ||g_i||)` and `c_i delta_i
    /// (x_i, 1)` added to the sum, in one pass over the example, without BLAS and
    /// without allocation per example. Returns the sum, the clip factors and the mean
    /// loss.
    ///
    /// * `norm_support`: the support S the norms are taken on, `||m o g_i||^2 = sum_o
    ///   delta_io^2 (sum_{(o,j) in S} x_ij^2 + [b_o in S])` (`None`: the whole gradient,
    ///   `||delta_i||^2 (||x_i||^2 + 1)`).
    /// * `sum_support`: the coordinates of the sum the caller reads (`None`: all); the
    ///   others are left at 0. A masked step reads only its support (module docs of
    ///   `mechanism`), so in phase 2 a step adds k coordinates, not P.
    ///
    /// The same arithmetic as [`Self::backward`], [`Self::per_example_sq_norms`] and
    /// [`Self::weighted_gradient_sum`] (tests/dpsgd.rs holds the fused pass to the
    /// brute-force loop over examples to 1e-12), in a fixed order of plain `+` and `*`:
    /// its bits do not depend on the machine's BLAS kernels, as the GEMM path's do, nor
    /// on its vector width (with AVX2 the same operations run four lanes at a time; Rust
    /// never fuses a multiply and an add). Written because the batches of the TP-TopK
    /// claims (about 64 x 50 x 4) are too small for BLAS, and a support of k = 0.1 P
    /// makes most of a phase-2 step's GEMMs wasted work (reports/BENCH.md, stop 43).
    /// `None` for an MLP.
    ///
    /// `frozen`: with a cache and a support (`sum_support`), the logits are the frozen
    /// part outside the support, computed once for every row of `x` and kept while the
    /// support and the coordinates outside it stay as they were
    /// ([`super::fused::FrozenLogits`]), plus the active terms. Only for a step that
    /// updates the support alone (the caller's promise; the cache checks it anyway).
    #[allow(clippy::too_many_arguments)]
    pub fn logreg_clipped_sum(
        &self,
        theta: &ArrayView1<f64>,
        x: &ArrayView2<f64>,
        y: &[usize],
        rows: Option<&[usize]>,
        norm_support: Option<&[usize]>,
        sum_support: Option<&[usize]>,
        clip: f64,
        frozen: Option<&mut StepCache>,
    ) -> Option<(Array1<f64>, Array1<f64>, f64)> {
        if self.kind != ModelKind::Logreg {
            return None;
        }
        let theta = theta.to_vec();
        let x = x.as_standard_layout();
        let xs = x.as_slice().expect("standard layout");
        let frozen = match (frozen, sum_support) {
            (Some(cache), Some(support)) => {
                Some(cache.frozen(self.layers[0], &theta, xs, x.nrows(), support))
            }
            _ => None,
        };
        let pass = super::fused::LogregPass::new(
            self.layers[0],
            frozen,
            self.params,
            norm_support,
            sum_support,
        );
        let all: Vec<usize>;
        let rows = match rows {
            Some(r) => r,
            None => {
                all = (0..y.len()).collect();
                &all
            }
        };
        #[cfg(target_arch = "x86_64")]
        if crate::linalg::simd::vector_allowed() && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked on the line above).
            return Some(unsafe { pass.run_avx2(&theta, xs, y, rows, clip) });
        }
        crate::linalg::simd::note_fallback();
        Some(pass.run(&theta, xs, y, rows, clip))
    }

    /// Mean (unclipped, noiseless) gradient of the loss over a data set.
    pub fn mean_gradient(
        &self,
        theta: &ArrayView1<f64>,
        x: &ArrayView2<f64>,
        y: &[usize],
    ) -> Array1<f64> {
        let bw = self.backward(theta, x, y);
        let ones = Array1::from_elem(y.len(), 1.0 / y.len().max(1) as f64);
        self.weighted_gradient_sum(&bw, &ones.view())
    }

    /// The B x P matrix of per-example gradients (row i = g_i), from the outer products.
    /// For tests and diagnostics; the training step never builds it.
    pub fn per_example_gradients(&self, bw: &Backward) -> Array2<f64> {
        let b = bw.deltas.first().map_or(0, |d| d.nrows());
        let mut g = Array2::zeros((b, self.params));
        for (k, l) in self.layers.iter().enumerate() {
            for i in 0..b {
                let d = bw.deltas[k].row(i);
                let a = bw.inputs[k].row(i);
                let mut row = g.row_mut(i);
                let mut w = row.slice_mut(s![l.weights()]);
                for o in 0..l.outputs {
                    let mut seg = w.slice_mut(s![o * l.inputs..(o + 1) * l.inputs]);
                    seg.assign(&(&a * d[o]));
                }
                row.slice_mut(s![l.bias()]).assign(&d);
            }
        }
        g
    }

    /// Brute-force reference: the gradient of one example's loss by explicit scalar
    /// loops (no BLAS, no batching), written directly from the chain rule.
    pub fn example_gradient_reference(
        &self,
        theta: &ArrayView1<f64>,
        x: &ArrayView1<f64>,
        y: usize,
    ) -> Array1<f64> {
        let act = self.activation();
        let nl = self.layers.len();
        // Forward.
        let mut acts: Vec<Vec<f64>> = vec![x.to_vec()];
        let mut pres: Vec<Vec<f64>> = Vec::new();
        for (k, l) in self.layers.iter().enumerate() {
            let wr = l.weights();
            let br = l.bias();
            let mut z = vec![0.0; l.outputs];
            for (o, zo) in z.iter_mut().enumerate() {
                let mut sum = theta[br.start + o];
                for j in 0..l.inputs {
                    sum += theta[wr.start + o * l.inputs + j] * acts[k][j];
                }
                *zo = sum;
            }
            if k + 1 < nl {
                acts.push(z.iter().map(|&v| act.apply(v)).collect());
            }
            pres.push(z);
        }
        // Output error: softmax - onehot.
        let z = &pres[nl - 1];
        let m = z.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        let mut delta: Vec<f64> = e.iter().map(|v| v / s).collect();
        delta[y] -= 1.0;
        let mut g = Array1::zeros(self.params);
        for k in (0..nl).rev() {
            let l = &self.layers[k];
            let wr = l.weights();
            for o in 0..l.outputs {
                for j in 0..l.inputs {
                    g[wr.start + o * l.inputs + j] = delta[o] * acts[k][j];
                }
                g[l.bias().start + o] = delta[o];
            }
            if k > 0 {
                let mut prev = vec![0.0; l.inputs];
                for (j, pj) in prev.iter_mut().enumerate() {
                    let mut sum = 0.0;
                    for (o, d) in delta.iter().enumerate() {
                        sum += d * theta[wr.start + o * l.inputs + j];
                    }
                    *pj = sum * act.derivative(pres[k - 1][j], acts[k][j]);
                }
                delta = prev;
            }
        }
        g
    }

    /// Plain (non-private) batched gradient of the mean loss: forward, backward and
    /// one GEMM per layer. The reference cost of the DP step in `benches/dpsgd.rs`.
    pub fn batch_gradient(
        &self,
        theta: &ArrayView1<f64>,
        x: &ArrayView2<f64>,
        y: &[usize],
    ) -> Array1<f64> {
        self.mean_gradient(theta, x, y)
    }
}
