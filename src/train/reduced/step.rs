//! The per-step kernels of the batch loop: the clipped residuals `c o r` of a run, and
//! with [`Kernels::Faer`] the products `K (c o r)` updated through the entries that
//! changed (see the [`super`] docs, "Kernels").
use super::{KernelProblem, REFRESH_STEPS, SPARSE_DIV};
use crate::linalg::{self, Kernels};
use crate::train::dpgd::{ClipRule, DpGdConfig};
use ndarray::{s, Array2, ArrayView1, Zip};

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
        if nd == moving {
            linalg::matmul_into(
                Kernels::Faer,
                &cr.slice(s![..moving, ..]),
                &kp.k.view(),
                kcr.slice_mut(s![..moving, ..]),
            );
        } else if nd > 0 {
            if self.gathered.nrows() < nd {
                self.gathered = Array2::zeros((cr.nrows(), n));
                self.product = Array2::zeros((cr.nrows(), n));
            }
            for (row, &jj) in self.dense.iter().enumerate() {
                self.gathered.row_mut(row).assign(&cr.row(jj));
            }
            linalg::matmul_into(
                Kernels::Faer,
                &self.gathered.slice(s![..nd, ..]),
                &kp.k.view(),
                self.product.slice_mut(s![..nd, ..]),
            );
            for (row, &jj) in self.dense.iter().enumerate() {
                kcr.row_mut(jj).assign(&self.product.row(row));
            }
        }
        if !self.rows.is_empty() {
            linalg::add_sparse_combinations(
                &kp.k.view(),
                &self.rows,
                &self.offs,
                &self.idx,
                &self.delta,
                &mut kcr.view_mut(),
            );
        }
    }
}

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
