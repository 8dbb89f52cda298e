//! The fused per-example pass of logistic regression ([`Model::logreg_clipped_sum`]):
//! the DP-SGD step of the TP-TopK claims without BLAS, in a fixed order of plain `+` and
//! `*` (module docs of [`super::model`] for the formulas).
//!
//! [`Model::logreg_clipped_sum`]: super::model::Model::logreg_clipped_sum
use ndarray::Array1;

/// Offsets of one dense layer in the flat parameter vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerShape {
    pub inputs: usize,
    pub outputs: usize,
    /// Offset of `W` (out x in, row-major); the bias follows at `offset + out * in`.
    pub offset: usize,
}

impl LayerShape {
    pub(super) fn weights(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.outputs * self.inputs
    }
    pub(super) fn bias(&self) -> std::ops::Range<usize> {
        let w = self.offset + self.outputs * self.inputs;
        w..w + self.outputs
    }
}

/// `sum_j a_j b_j` in a fixed order: four interleaved partial sums (j mod 4), added as
/// `(s0 + s1) + (s2 + s3)`, then the tail in order. Plain `+` and `*` (Rust never fuses
/// them), so the bits are the same on every machine and vector width.
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            s[l] += x[l] * y[l];
        }
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for (x, y) in ra.iter().zip(rb) {
        t += x * y;
    }
    t
}

/// The fused logistic-regression pass of [`Model::logreg_clipped_sum`]: the layer's
/// shape and the supports, split by output row.
pub(super) struct LogregPass<'f> {
    layer: LayerShape,
    /// The frozen part of every example's logits in phase 2 ([`FrozenLogits`]), when
    /// the caller keeps it.
    frozen: Option<&'f FrozenLogits>,
    params: usize,
    /// Per output o, the inputs j with (o, j) in the norm support, and whether b_o is in
    /// it; `None`: the whole gradient.
    norm: Option<(Vec<Vec<usize>>, Vec<f64>)>,
    /// Per output o, the inputs j whose sum coordinate is read, and whether b_o's is;
    /// `None`: all.
    sum: Option<(Vec<Vec<usize>>, Vec<bool>)>,
}

impl<'f> LogregPass<'f> {
    pub(super) fn new(
        layer: LayerShape,
        frozen: Option<&'f FrozenLogits>,
        params: usize,
        norm_support: Option<&[usize]>,
        sum_support: Option<&[usize]>,
    ) -> Self {
        let (k, d) = (layer.outputs, layer.inputs);
        let split = |support: &[usize]| {
            let mut rows = vec![Vec::new(); k];
            let mut bias = vec![false; k];
            for &c in support {
                if layer.weights().contains(&c) {
                    let r = c - layer.offset;
                    rows[r / d].push(r % d);
                } else if layer.bias().contains(&c) {
                    bias[c - layer.bias().start] = true;
                }
            }
            for r in &mut rows {
                r.sort_unstable();
            }
            (rows, bias)
        };
        Self {
            layer,
            frozen,
            params,
            norm: norm_support.map(|s| {
                let (rows, bias) = split(s);
                (
                    rows,
                    bias.iter().map(|&b| if b { 1.0 } else { 0.0 }).collect(),
                )
            }),
            sum: sum_support.map(split),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run_avx2(
        &self,
        theta: &[f64],
        x: &[f64],
        y: &[usize],
        rows: &[usize],
        clip: f64,
    ) -> (Array1<f64>, Array1<f64>, f64) {
        self.run_inline(theta, x, y, rows, clip)
    }

    pub(super) fn run(
        &self,
        theta: &[f64],
        x: &[f64],
        y: &[usize],
        rows: &[usize],
        clip: f64,
    ) -> (Array1<f64>, Array1<f64>, f64) {
        self.run_inline(theta, x, y, rows, clip)
    }

    #[inline(always)]
    fn run_inline(
        &self,
        theta: &[f64],
        x: &[f64],
        y: &[usize],
        rows: &[usize],
        clip: f64,
    ) -> (Array1<f64>, Array1<f64>, f64) {
        let l = self.layer;
        let (k, d) = (l.outputs, l.inputs);
        let (w, b) = (&theta[l.weights()], &theta[l.bias()]);
        let mut sum = vec![0.0; self.params];
        let mut factors = Vec::with_capacity(rows.len());
        let mut loss = 0.0;
        let mut z = vec![0.0; k];
        for &r in rows {
            let (xi, label) = (&x[r * d..(r + 1) * d], y[r]);
            match self.frozen {
                None => {
                    for (o, zo) in z.iter_mut().enumerate() {
                        *zo = b[o] + dot(&w[o * d..(o + 1) * d], xi);
                    }
                }
                Some(fz) => {
                    // The frozen part, then the active weights and biases.
                    let base = &fz.values[r * k..(r + 1) * k];
                    for (o, zo) in z.iter_mut().enumerate() {
                        let mut a = base[o];
                        for &j in &fz.rows[o] {
                            a += w[o * d + j] * xi[j];
                        }
                        if fz.bias[o] {
                            a += b[o];
                        }
                        *zo = a;
                    }
                }
            }
            // Softmax (max-shifted; the deterministic exp of `linalg`), loss, output
            // error delta = softmax - e_y.
            let m = z.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v));
            let mut s = 0.0;
            for zo in z.iter_mut() {
                *zo = crate::linalg::exp_det_nonpositive(*zo - m);
                s += *zo;
            }
            for zo in z.iter_mut() {
                *zo /= s;
            }
            loss -= z[label].max(f64::MIN_POSITIVE).ln();
            z[label] -= 1.0;
            let sq = match &self.norm {
                None => {
                    let mut dn = 0.0;
                    for &v in &z {
                        dn += v * v;
                    }
                    dn * (dot(xi, xi) + 1.0)
                }
                Some((rows, bias)) => {
                    let mut sq = 0.0;
                    for (o, &dz) in z.iter().enumerate() {
                        let mut a = 0.0;
                        for &j in &rows[o] {
                            a += xi[j] * xi[j];
                        }
                        sq += dz * dz * (a + bias[o]);
                    }
                    sq
                }
            };
            let norm = sq.sqrt();
            let f = if norm > clip { clip / norm } else { 1.0 };
            factors.push(f);
            let (sw, sb) = sum[l.offset..].split_at_mut(d * k);
            match &self.sum {
                None => {
                    for (o, &dz) in z.iter().enumerate() {
                        let c = f * dz;
                        for (g, &v) in sw[o * d..(o + 1) * d].iter_mut().zip(xi) {
                            *g += c * v;
                        }
                        sb[o] += c;
                    }
                }
                Some((rows, bias)) => {
                    for (o, &dz) in z.iter().enumerate() {
                        let c = f * dz;
                        let row = &mut sw[o * d..(o + 1) * d];
                        for &j in &rows[o] {
                            row[j] += c * xi[j];
                        }
                        if bias[o] {
                            sb[o] += c;
                        }
                    }
                }
            }
        }
        let n = rows.len().max(1) as f64;
        (Array1::from(sum), Array1::from(factors), loss / n)
    }
}

/// The part of every training example's logits that a masked step cannot change: with
/// the support S fixed and the coordinates outside it frozen (phase 2, and each epoch of
/// an online method), `z_io = F_io + sum_{(o,j) in S} W_oj x_ij + [b_o in S] b_o` with
/// `F_io = sum_{(o,j) not in S} W_oj x_ij + [b_o not in S] b_o` the same at every step.
/// Computed once for all N examples, it turns a step's forward pass from K D to about k
/// terms an example (k = 0.1 P in the claims). Valid only while S and every coordinate
/// outside it are what it was computed from, bit for bit: [`StepCache`] checks that at
/// every step and computes it again otherwise (the wrong recipe that updates every
/// coordinate, `NoiseSupport::All`, therefore never uses a stale one).
#[derive(Debug)]
pub struct FrozenLogits {
    support: Vec<usize>,
    /// theta as it was, to check the frozen coordinates against.
    theta: Vec<f64>,
    /// N x K, row-major.
    values: Vec<f64>,
    /// Per output o, the active inputs j; whether b_o is active.
    rows: Vec<Vec<usize>>,
    bias: Vec<bool>,
}

impl FrozenLogits {
    fn new(layer: LayerShape, theta: &[f64], x: &[f64], n: usize, support: &[usize]) -> Self {
        let (k, d) = (layer.outputs, layer.inputs);
        let mut rows = vec![Vec::new(); k];
        let mut bias = vec![false; k];
        let mut active_w = vec![false; k * d];
        for &c in support {
            if layer.weights().contains(&c) {
                let r = c - layer.offset;
                rows[r / d].push(r % d);
                active_w[r] = true;
            } else if layer.bias().contains(&c) {
                bias[c - layer.bias().start] = true;
            }
        }
        for r in &mut rows {
            r.sort_unstable();
        }
        // The frozen weights, with the active ones set to 0, so that a frozen part is one
        // fixed-order dot product.
        let (w, b) = (&theta[layer.weights()], &theta[layer.bias()]);
        let w_frozen: Vec<f64> = w
            .iter()
            .zip(&active_w)
            .map(|(&v, &a)| if a { 0.0 } else { v })
            .collect();
        let mut values = vec![0.0; n * k];
        for i in 0..n {
            let xi = &x[i * d..(i + 1) * d];
            for o in 0..k {
                let b_o = if bias[o] { 0.0 } else { b[o] };
                values[i * k + o] = b_o + dot(&w_frozen[o * d..(o + 1) * d], xi);
            }
        }
        Self {
            support: support.to_vec(),
            theta: theta.to_vec(),
            values,
            rows,
            bias,
        }
    }

    /// True when `support` is the one this was computed for and every coordinate outside
    /// it has the bits it had.
    fn valid_for(&self, theta: &[f64], support: &[usize]) -> bool {
        if self.support != support || self.theta.len() != theta.len() {
            return false;
        }
        let mut next = support.iter().peekable();
        theta
            .iter()
            .zip(&self.theta)
            .enumerate()
            .all(|(c, (a, b))| {
                if next.peek() == Some(&&c) {
                    next.next();
                    true
                } else {
                    a.to_bits() == b.to_bits()
                }
            })
    }
}

/// What a training loop keeps from one step to the next for the fused pass: the frozen
/// logits of its current support ([`FrozenLogits`]).
#[derive(Debug, Default)]
pub struct StepCache {
    frozen: Option<FrozenLogits>,
}

impl StepCache {
    /// The frozen logits of `support` at `theta` over the `n` rows of `x` (row-major,
    /// `layer.inputs` columns), computed again when the held ones are not valid for them.
    pub(super) fn frozen(
        &mut self,
        layer: LayerShape,
        theta: &[f64],
        x: &[f64],
        n: usize,
        support: &[usize],
    ) -> &FrozenLogits {
        let stale = !matches!(&self.frozen, Some(f) if f.valid_for(theta, support));
        if stale {
            self.frozen = Some(FrozenLogits::new(layer, theta, x, n, support));
        }
        self.frozen.as_ref().expect("just set")
    }
}
