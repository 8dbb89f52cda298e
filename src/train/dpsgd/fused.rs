//! The fused per-example pass of logistic regression ([`Model::logreg_clipped_sum`]):
//! the DP-SGD step of the TP-TopK claims without BLAS, in a fixed order of plain `+` and
//! `*` (module docs of [`super::model`] for the formulas).
//!
//! [`Model::logreg_clipped_sum`]: super::model::Model::logreg_clipped_sum
use super::model::LayerShape;
use ndarray::Array1;

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
pub(super) struct LogregPass {
    layer: LayerShape,
    params: usize,
    /// Per output o, the inputs j with (o, j) in the norm support, and whether b_o is in
    /// it; `None`: the whole gradient.
    norm: Option<(Vec<Vec<usize>>, Vec<f64>)>,
    /// Per output o, the inputs j whose sum coordinate is read, and whether b_o's is;
    /// `None`: all.
    sum: Option<(Vec<Vec<usize>>, Vec<bool>)>,
}

impl LogregPass {
    pub(super) fn new(
        layer: LayerShape,
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
            for (o, zo) in z.iter_mut().enumerate() {
                *zo = b[o] + dot(&w[o * d..(o + 1) * d], xi);
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
