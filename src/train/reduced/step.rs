//! The per-step kernels of the batch loop: the clipped residuals `c o r` of a run, and
//! with [`Kernels::Faer`] the products `K (c o r)` updated through the entries that
//! changed (see the [`super`] docs, "Kernels").
use super::{KernelProblem, REFRESH_STEPS, SPARSE_DIV};
use crate::linalg::{self, Kernels};
use crate::train::dpgd::{ClipRule, DpGdConfig};
use ndarray::{s, Array2, ArrayView1, ArrayViewMut2, Axis, Zip};

/// The per-step products `K g` of the moving runs with [`Kernels::Faer`]: runs whose
/// `g` changed in at most `n / SPARSE_DIV` entries since the last step get
/// `K g_t = K g_{t-1} + sum_i (g_t - g_{t-1})_i K_i` (K symmetric: its rows), the others
/// one matrix product; all of them every [`REFRESH_STEPS`] steps.
#[derive(Default)]
pub(super) struct SparseScratch {
    dense: Vec<usize>,
    rows: Vec<usize>,
    offs: Vec<usize>,
    idx: Vec<usize>,
    delta: Vec<f64>,
    gathered: Array2<f64>,
    product: Array2<f64>,
}

impl SparseScratch {
    /// Rows `..moving` of `kcr` become `K cr` (row by row), given that they hold
    /// `K g_prev`.
    pub(super) fn products(
        &mut self,
        kp: &KernelProblem,
        t: usize,
        moving: usize,
        cr: &Array2<f64>,
        g_prev: &Array2<f64>,
        kcr: &mut Array2<f64>,
    ) {
        let n = kp.n();
        self.dense.clear();
        self.rows.clear();
        self.offs.clear();
        self.idx.clear();
        self.delta.clear();
        self.offs.push(0);
        for jj in 0..moving {
            if t % REFRESH_STEPS == 0 {
                self.dense.push(jj);
                continue;
            }
            let start = self.idx.len();
            for (i, (&g, &gp)) in cr.row(jj).iter().zip(g_prev.row(jj)).enumerate() {
                if g.to_bits() != gp.to_bits() {
                    self.idx.push(i);
                    self.delta.push(g - gp);
                }
            }
            if (self.idx.len() - start) * SPARSE_DIV > n {
                self.idx.truncate(start);
                self.delta.truncate(start);
                self.dense.push(jj);
            } else if self.idx.len() > start {
                self.rows.push(jj);
                self.offs.push(self.idx.len());
            }
        }
        let nd = self.dense.len();
        let k = kp.k.view();
        if nd == moving {
            let a = cr.slice(s![..moving, ..]);
            by_column_halves(kcr.slice_mut(s![..moving, ..]), |c_lo, out| {
                let kc = k.slice(s![.., c_lo..c_lo + out.ncols()]);
                linalg::matmul_into(Kernels::Faer, &a, &kc, out)
            });
        } else if nd > 0 {
            if self.gathered.nrows() < nd {
                self.gathered = Array2::zeros((cr.nrows(), n));
                self.product = Array2::zeros((cr.nrows(), n));
            }
            for (row, &jj) in self.dense.iter().enumerate() {
                self.gathered.row_mut(row).assign(&cr.row(jj));
            }
            let a = self.gathered.slice(s![..nd, ..]);
            by_column_halves(self.product.slice_mut(s![..nd, ..]), |c_lo, out| {
                let kc = k.slice(s![.., c_lo..c_lo + out.ncols()]);
                linalg::matmul_into(Kernels::Faer, &a, &kc, out)
            });
            for (row, &jj) in self.dense.iter().enumerate() {
                kcr.row_mut(jj).assign(&self.product.row(row));
            }
        }
        if !self.rows.is_empty() {
            let (rows, offs, idx, delta) = (&self.rows, &self.offs, &self.idx, &self.delta);
            by_column_halves(kcr.view_mut(), |c_lo, mut out| {
                linalg::add_sparse_combinations_cols(&k, c_lo, rows, offs, idx, delta, &mut out)
            });
        }
    }
}

/// Below this n the per-step products run in one piece: `K` (8 n^2 bytes) is small
/// enough to stay in cache, and a step is too short to share.
pub(super) const SPLIT_MIN_N: usize = 1024;

/// Runs `f(c_lo, columns)` on the columns of `out`: at n >= [`SPLIT_MIN_N`] in two fixed
/// halves in parallel (each reads its half of the columns of `K`, so the two cores share
/// one pass over `K` instead of each making its own), else in one piece. The products
/// compute every entry from its own row and column, so the split changes no bit, and it
/// depends only on n, never on the number of threads.
fn by_column_halves<F>(mut out: ArrayViewMut2<f64>, f: F)
where
    F: Fn(usize, ArrayViewMut2<f64>) + Sync,
{
    let n = out.ncols();
    if n < SPLIT_MIN_N {
        return f(0, out.view_mut());
    }
    let mid = (n / 2).div_ceil(SPLIT_ALIGN) * SPLIT_ALIGN;
    let (left, right) = out.split_at(Axis(1), mid);
    rayon::join(|| f(0, left), || f(mid, right));
}

/// The halves split at a multiple of this many columns (a cache line of f64 is 8).
const SPLIT_ALIGN: usize = 32;

/// What [`clipped_residuals`] saw.
pub(super) struct Seen {
    pub(super) clip_fraction: f64,
    pub(super) max_abs_residual: f64,
    pub(super) train_mse: f64,
}

/// Writes `c_i r_i` (clip scale times residual) into `out` and returns the step's
/// statistics; `||g_i|| = 2 |r_i| sqrt(K_ii)` (ridge 0), the clip rule as in
/// [`crate::train::dpgd::clipped_mean_gradient`]. With `clipped_value` (`1 / (2 sqrt(K_ii))`)
/// and the rule [`ClipRule::Divide`], a clipped sample's `c_i r_i = r_i C / ||g_i||` is
/// written as `sign(r_i) C / (2 sqrt(K_ii))`: equal up to rounding, and the same bits at
/// every step the sample stays clipped on the same side (which the sparse product
/// updates of [`SparseScratch`] rely on).
pub(super) fn clipped_residuals(
    u: &ArrayView1<f64>,
    y: &ArrayView1<f64>,
    k_diag: &ArrayView1<f64>,
    clipped_value: Option<&ArrayView1<f64>>,
    cfg: &DpGdConfig,
    mut out: ndarray::ArrayViewMut1<f64>,
) -> Seen {
    if let (Some(half_inv_sqrt_k), ClipRule::Divide) = (clipped_value, cfg.clip_rule) {
        let mut clipped = 0usize;
        let mut max_r = 0.0f64;
        let mut sse = 0.0f64;
        Zip::from(&mut out)
            .and(u)
            .and(y)
            .and(k_diag)
            .and(half_inv_sqrt_k)
            .for_each(|o, &ui, &yi, &kii, &h| {
                let r = ui - yi;
                sse += r * r;
                max_r = max_r.max(r.abs());
                let gnorm = (4.0 * r * r * kii).max(0.0).sqrt();
                *o = if gnorm / cfg.clip > 1.0 {
                    clipped += 1;
                    (cfg.clip * h).copysign(r)
                } else {
                    r
                };
            });
        let nf = y.len() as f64;
        return Seen {
            clip_fraction: clipped as f64 / nf,
            max_abs_residual: max_r,
            train_mse: sse / nf,
        };
    }
    let mut clipped = 0usize;
    let mut max_r = 0.0f64;
    let mut sse = 0.0f64;
    Zip::from(&mut out)
        .and(u)
        .and(y)
        .and(k_diag)
        .for_each(|o, &ui, &yi, &kii| {
            let r = ui - yi;
            sse += r * r;
            max_r = max_r.max(r.abs());
            let gnorm = (4.0 * r * r * kii).max(0.0).sqrt();
            let ratio = gnorm / cfg.clip;
            let c = if ratio > 1.0 {
                clipped += 1;
                cfg.clip_rule.scale(ratio)
            } else {
                1.0
            };
            *o = c * r;
        });
    let nf = y.len() as f64;
    Seen {
        clip_fraction: clipped as f64 / nf,
        max_abs_residual: max_r,
        train_mse: sse / nf,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric n x n matrix and rows of coefficients with a fixed pattern.
    fn inputs(n: usize, rows: usize) -> (Array2<f64>, Array2<f64>) {
        let k = Array2::from_shape_fn((n, n), |(i, j)| {
            let (a, b) = (i.min(j), i.max(j));
            ((a * 31 + b * 17) % 101) as f64 / 37.0 - 1.3
        });
        let g = Array2::from_shape_fn((rows, n), |(r, i)| {
            ((r * 7 + i * 13) % 29) as f64 / 11.0 - 1.1
        });
        (k, g)
    }

    /// The products in two column halves (n >= SPLIT_MIN_N) are bit for bit the products
    /// in one piece: faer's dense product for 1 and 5 rows, and the sparse combinations.
    /// Negative control: a product with one coefficient changed differs.
    #[test]
    fn column_halves_give_the_bits_of_the_whole() {
        let n = SPLIT_MIN_N + 77;
        let (k, g) = inputs(n, 5);
        for rows in [1, 5] {
            let a = g.slice(s![..rows, ..]);
            let mut whole = Array2::<f64>::zeros((rows, n));
            linalg::matmul_into(Kernels::Faer, &a, &k.view(), whole.view_mut());
            let mut halves = Array2::<f64>::from_elem((rows, n), f64::NAN);
            by_column_halves(halves.view_mut(), |c_lo, out| {
                let kc = k.slice(s![.., c_lo..c_lo + out.ncols()]);
                linalg::matmul_into(Kernels::Faer, &a, &kc, out)
            });
            assert!(whole
                .iter()
                .zip(&halves)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            let mut other = g.slice(s![..rows, ..]).to_owned();
            other[(0, 3)] += 1e-3;
            let mut moved = Array2::<f64>::zeros((rows, n));
            linalg::matmul_into(Kernels::Faer, &other.view(), &k.view(), moved.view_mut());
            assert!(moved.iter().zip(&whole).any(|(x, y)| x != y));
        }
        let (rows, offs) = ([3usize, 0], [0usize, 3, 5]);
        let (idx, delta) = ([5usize, n - 1, 700, 2, 1100], [0.5, -1.25, 3.0, 1e-3, 7.0]);
        let mut whole = g.clone();
        linalg::add_sparse_combinations(
            &k.view(),
            &rows,
            &offs,
            &idx,
            &delta,
            &mut whole.view_mut(),
        );
        let mut halves = g.clone();
        by_column_halves(halves.view_mut(), |c_lo, mut out| {
            linalg::add_sparse_combinations_cols(
                &k.view(),
                c_lo,
                &rows,
                &offs,
                &idx,
                &delta,
                &mut out,
            )
        });
        assert!(whole
            .iter()
            .zip(&halves)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(
            whole.iter().zip(&g).any(|(x, y)| x != y),
            "the terms were added"
        );
    }
}
