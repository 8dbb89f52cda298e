//! DP-GD on the random-features model through the exact reduced (kernel-space) engine
//! ([`crate::train::reduced`]), with hyper-parameters selected on a validation split:
//! "the hyperparameters in DP-GD are chosen to maximize the validation performance"
//! (Bombari & Mondelli, "Privacy for free in the overparameterized regime", Sec. 3.2,
//! for Fig. 1 and the first panel of Fig. 2).
//!
//! One unit draws the target direction, the training set (n), the test set (n_test) and
//! the validation set (n_val) from stream `data` — in that order, so that n, n_test and
//! the draws of the first two do not depend on n_val — and the features (p x d) from
//! stream `features`. It then runs DP-GD (Algorithm 1, theta_0 = 0) at every cell of the
//! grid
//!
//! ```text
//! C_ab = clip * f_a,   f_a = grid_clip_lo (grid_clip_hi/grid_clip_lo)^(a/(grid_clip_k-1)),
//! T_ab = max(1, round(steps * g_b)),   g_b likewise over grid_steps_{lo,hi,k},
//! sigma_ab = sigma_scale * sqrt(eta T_ab) sqrt(8 ln(1/delta)) / eps   (Prop. 2.2, Eq. 5)
//! ```
//!
//! (log-spaced factors; a grid of one cell, the default, is the spec's own `clip` and
//! `steps`), all on one noise stream (common random numbers across the grid: each run has
//! exactly DP-GD's law), selects the cell with the lowest validation loss (the first one
//! on ties, grid order clip-major) and reports its test loss. A grid of more than one
//! cell without a validation split is an error: hyper-parameters are never chosen on the
//! test set. The non-private baseline theta* is the minimum-norm interpolator
//! `pinv(Phi) y`, the gradient-flow limit from 0 (Eq. 9), on the same test points.
use super::cost::features_cost;
use super::*;
use crate::models::RandomFeatures;
use crate::train::dpgd;
use crate::train::reduced::{self, BatchRun, KernelProblem, TestNoise};
use ndarray::{concatenate, Array1, Array2, Axis};

#[derive(Debug)]
pub struct RfTuned;

const fn param(name: &'static str, kind: ParamKind, doc: &'static str) -> ParamInfo {
    ParamInfo {
        name,
        kind,
        optional: true,
        doc,
    }
}

/// The random-features DP-GD parameters plus the validation split and the grid.
const PARAMS: [ParamInfo; 20] = {
    let extra = [
        param(
            "n_val",
            ParamKind::IntAtLeast(0),
            "validation samples (default 0; needed by a grid of more than one cell)",
        ),
        param(
            "grid_clip_lo",
            ParamKind::Positive,
            "smallest factor on clip (default 1)",
        ),
        param(
            "grid_clip_hi",
            ParamKind::Positive,
            "largest factor on clip (default 1)",
        ),
        param(
            "grid_clip_k",
            ParamKind::IntAtLeast(1),
            "log-spaced clip factors (default 1)",
        ),
        param(
            "grid_steps_lo",
            ParamKind::Positive,
            "smallest factor on steps (default 1)",
        ),
        param(
            "grid_steps_hi",
            ParamKind::Positive,
            "largest factor on steps (default 1)",
        ),
        param(
            "grid_steps_k",
            ParamKind::IntAtLeast(1),
            "log-spaced steps factors (default 1)",
        ),
        param(
            "p_ref",
            ParamKind::IntAtLeast(1),
            "reference width of the collapse metrics (the same steps grid is run at p_ref)",
        ),
        param(
            "clip_ref",
            ParamKind::Positive,
            "clipping threshold at p_ref (the collapse metrics)",
        ),
    ];
    let mut out = [extra[0]; 20];
    let mut i = 0;
    while i < super::rf_dpgd::PARAMS.len() {
        out[i] = super::rf_dpgd::PARAMS[i];
        i += 1;
    }
    let mut j = 0;
    while j < extra.len() {
        out[i + j] = extra[j];
        j += 1;
    }
    out
};

const OPTIONS: &[OptionInfo] = &[OptionInfo {
    name: "clip_rule",
    values: &["divide", "none"],
    doc: "per-sample clipping: divide by max(1, ||g||/C) (Algorithm 1), or none",
}];

const METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "test_loss",
        doc: "test MSE of theta_T at the cell selected on validation",
    },
    MetricInfo {
        name: "val_loss",
        doc: "validation MSE of the selected cell (the selection criterion)",
    },
    MetricInfo {
        name: "min_norm_test_loss",
        doc: "test MSE of the non-private baseline pinv(Phi) y (Eq. 9) on the same test points",
    },
    MetricInfo {
        name: "excess_risk",
        doc: "R_P = test_loss - min_norm_test_loss (Eq. 1) at the selected cell",
    },
    MetricInfo {
        name: "abs_excess_risk",
        doc: "|R_P| at the selected cell",
    },
    MetricInfo {
        name: "relative_excess_risk",
        doc: "R_P / min_norm_test_loss: the gap relative to the non-private error",
    },
    MetricInfo {
        name: "best_steps",
        doc: "T of the selected cell (T* of Fig. 2, panel 2, chosen on validation)",
    },
    MetricInfo {
        name: "best_time_scaled",
        doc: "eta T* p / d of the selected cell (the collapsed coordinate of Fig. 2, panel 3)",
    },
    MetricInfo {
        name: "best_clip_over_sqrt_p",
        doc: "C* / sqrt(p) of the selected cell",
    },
    MetricInfo {
        name: "best_on_steps_edge",
        doc: "1 if the selected T is the smallest or largest of the grid (the optimum may lie outside), else 0",
    },
    MetricInfo {
        name: "clip_fraction",
        doc: "fraction of (step, sample) pairs clipped in the selected run",
    },
    MetricInfo {
        name: "spread_steps",
        doc: "RMS over the steps grid of ln L_p(T) - ln L_ref(T): the test-loss curves at p and \
              p_ref (clip_ref) compared at equal T (Fig. 2, panel 2)",
    },
    MetricInfo {
        name: "spread_collapsed",
        doc: "the same at equal eta T p / d: L_p(T) against L_ref(T p / p_ref), interpolated \
              linearly in ln T, over the grid points where T p / p_ref is inside the grid (panel 3)",
    },
    MetricInfo {
        name: "collapse_ratio",
        doc: "spread_steps / spread_collapsed: > 1 when the curves collapse against eta T p / d (Eq. 8)",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: "rf_tuned",
    model: "random_features_tanh",
    description: "DP-GD on f(x) = tanh(Vx)^T theta through the exact reduced engine, hyper-parameters \
                  selected on a validation split over a (clip, steps) grid (privacy-for-free Sec. 3.2)",
    needs_target: true,
    params: &PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

/// `k` log-spaced factors from `lo` to `hi` (`lo` alone when k = 1).
pub fn log_factors(lo: f64, hi: f64, k: usize) -> Vec<f64> {
    if k <= 1 {
        return vec![lo];
    }
    (0..k)
        .map(|i| lo * (hi / lo).powf(i as f64 / (k - 1) as f64))
        .collect()
}

/// The grid of a unit: `(clip, steps)` per cell, clip-major.
fn grid(u: &UnitInput) -> Result<Vec<(f64, usize)>, SystemError> {
    let clip = u.var("clip")?;
    let steps = u.var("steps")?;
    let fc = log_factors(
        u.var_or("grid_clip_lo", 1.0),
        u.var_or("grid_clip_hi", 1.0),
        u.var_or("grid_clip_k", 1.0) as usize,
    );
    let fs = log_factors(
        u.var_or("grid_steps_lo", 1.0),
        u.var_or("grid_steps_hi", 1.0),
        u.var_or("grid_steps_k", 1.0) as usize,
    );
    let mut cells = Vec::with_capacity(fc.len() * fs.len());
    for &a in &fc {
        for &b in &fs {
            cells.push((clip * a, ((steps * b).round() as usize).max(1)));
        }
    }
    Ok(cells)
}

/// The index of the smallest value (the first on ties; NaN never wins).
pub fn argmin_first(v: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in v.iter().enumerate() {
        if x.is_nan() {
            continue;
        }
        match best {
            Some(b) if v[b] <= x => {}
            _ => best = Some(i),
        }
    }
    best
}

/// The kernel problem of a unit at width `p`: data in a fixed order from stream `data`
/// (direction, train, test, then validation), features from stream `features_label`;
/// the held-out points are the validation split followed by the test set.
/// Shared by the units of a sweep point and replicate whose variants agree on what it
/// reads ([`super::shared`]): the variants of a claim differ in privacy budgets, grids,
/// noise scales, never in these sizes, so the features, the Gram matrix and its
/// eigendecomposition are computed once for all of them.
fn problem(
    u: &UnitInput,
    p: usize,
    features_label: &str,
) -> Result<std::sync::Arc<KernelProblem>, SystemError> {
    let (d, n, _, n_test) = u.sizes()?;
    let n_val = u.var_or("n_val", 0.0) as usize;
    let key = format!(
        "rf_tuned::problem d={d} n={n} n_test={n_test} n_val={n_val} p={p} \
         features={features_label} data={:?}",
        u.data
    );
    u.shared(&key, || {
        kernel_problem(u, (d, n, n_test, n_val), p, features_label)
    })
}

/// [`problem`], computed (also `rf_fig2`'s, with its own features label).
pub(super) fn kernel_problem(
    u: &UnitInput,
    dims: (usize, usize, usize, usize),
    p: usize,
    features_label: &str,
) -> Result<KernelProblem, SystemError> {
    let k = kernel_inputs(u, dims, p, features_label)?;
    Ok(KernelProblem::random_features(
        &k.model,
        &k.x.view(),
        k.y,
        &k.x_held.view(),
        k.y_held,
        TestNoise::Exact,
    )?
    .with_validation(k.n_val)?)
}

/// What [`kernel_problem`] is built from: the model, the training set and the held-out
/// points (validation first, then test), drawn from the unit's streams.
pub(super) struct KernelInputs {
    pub model: RandomFeatures,
    pub x: Array2<f64>,
    pub y: Array1<f64>,
    pub x_held: Array2<f64>,
    pub y_held: Array1<f64>,
    pub n_val: usize,
}

/// [`KernelInputs`] of `kernel_problem(u, dims, p, features_label)`: the same streams,
/// the same draws.
pub(super) fn kernel_inputs(
    u: &UnitInput,
    (d, n, n_test, n_val): (usize, usize, usize, usize),
    p: usize,
    features_label: &str,
) -> Result<KernelInputs, SystemError> {
    let mut data_rng = u.seeds.rng_for("data");
    let target = target(u.data, d, &mut data_rng)?;
    let mut draw = |m: usize, noise: f64| {
        crate::data::Dataset::sample(m, d, u.data.input, &target, noise, &mut data_rng)
    };
    let train = draw(n, u.data.label_noise);
    let test = draw(n_test, 0.0);
    let val = draw(n_val, 0.0);
    let model = RandomFeatures::sample(p, d, &mut u.seeds.rng_for(features_label));
    let held_x = concatenate(Axis(0), &[val.x.view(), test.x.view()])
        .map_err(|e| SystemError::Invalid(format!("held-out shapes: {e}")))?;
    let held_y: Array1<f64> = val.y.iter().chain(test.y.iter()).copied().collect();
    Ok(KernelInputs {
        model,
        x: train.x,
        y: train.y,
        x_held: held_x,
        y_held: held_y,
        n_val,
    })
}

/// One run per grid cell `(clip, steps)`, all on noise stream 0, sigma from Prop. 2.2
/// (Eq. 5) at the cell's T through the recipe (as [`super::rf_dpgd`]), times `sigma_scale`.
fn batch(u: &UnitInput, cells: &[(f64, usize)]) -> Result<Vec<BatchRun>, SystemError> {
    let n = u.count("n")?;
    let eta = u.var("eta")?;
    let rule = clip_rule(u.option("clip_rule"));
    cells
        .iter()
        .map(|&(clip, steps)| {
            let sigma = dpgd::prop22_sigma(
                eta,
                steps,
                u.var("epsilon")?,
                u.var("delta")?,
                &u.recipe.dpgd,
            )? * u.var_or("sigma_scale", 1.0);
            let cfg = dpgd::DpGdConfig {
                eta,
                steps,
                clip,
                clip_rule: rule,
                sigma,
                kappa: u.var("kappa")?,
                ridge: 0.0,
            };
            Ok(BatchRun {
                cfg: u.recipe.dpgd.as_paper_config(&cfg, n),
                loss_at: vec![steps],
                stream: 0,
            })
        })
        .collect()
}

/// `(spread_steps, spread_collapsed)` of the unit's test-loss curve over the steps grid
/// against the same grid run at `p_ref` with `clip_ref` (features from stream
/// `features-ref`, noise from `noise-ref`; same data). Fig. 2, panels 2-3: the curves
/// should collapse when plotted against eta T p / d (Eq. 8: eta T ~ d / p).
fn collapse(
    u: &UnitInput,
    cells: &[(f64, usize)],
    res: &[reduced::ReducedRun],
) -> Result<(f64, f64), SystemError> {
    if cells.iter().any(|c| c.0 != cells[0].0) {
        return Err(SystemError::Invalid(
            "the collapse metrics compare curves over steps: the grid must have one clip (grid_clip_k = 1)".into(),
        ));
    }
    let p = u.count("p")? as f64;
    let p_ref = u.count("p_ref")?;
    let clip_ref = u.var("clip_ref")?;
    let kp_ref = problem(u, p_ref, "features-ref")?;
    let ref_cells: Vec<(f64, usize)> = cells.iter().map(|&(_, t)| (clip_ref, t)).collect();
    let res_ref = reduced::run_batch(
        &kp_ref,
        &batch(u, &ref_cells)?,
        &[u.noise_seed("noise-ref")],
    )?;
    let ln_loss = |r: &reduced::ReducedRun| {
        r.final_loss()
            .and_then(|l| l.test)
            .map_or(f64::NAN, f64::ln)
    };
    let ln_t: Vec<f64> = cells.iter().map(|&(_, t)| (t as f64).ln()).collect();
    let a: Vec<f64> = res.iter().map(ln_loss).collect();
    let b: Vec<f64> = res_ref.iter().map(ln_loss).collect();
    curve_spreads(&ln_t, &a, &b, (p / p_ref as f64).ln()).ok_or_else(|| {
        SystemError::Invalid("collapse: fewer than 2 grid points overlap after the shift".into())
    })
}

/// RMS of `a_j - b_j` (equal abscissa), and RMS of `a_j - b(x_j + shift)` with b
/// interpolated linearly on `(x, b)` over the j where `x_j + shift` lies within the
/// grid; `x` ascending (duplicates allowed). None when fewer than 2 points overlap.
pub fn curve_spreads(x: &[f64], a: &[f64], b: &[f64], shift: f64) -> Option<(f64, f64)> {
    let rms = |d: &[f64]| (d.iter().map(|v| v * v).sum::<f64>() / d.len() as f64).sqrt();
    let same: Vec<f64> = a.iter().zip(b).map(|(a, b)| a - b).collect();
    let (lo, hi) = (*x.first()?, *x.last()?);
    let mut shifted = Vec::new();
    for (j, &xj) in x.iter().enumerate() {
        let t = xj + shift;
        if t < lo || t > hi {
            continue;
        }
        // The interval [x_i, x_{i+1}] holding t (the last one with x_i <= t).
        let i = x.iter().rposition(|&v| v <= t)?;
        let bt = if i + 1 >= x.len() || x[i + 1] == x[i] {
            b[i]
        } else {
            let w = (t - x[i]) / (x[i + 1] - x[i]);
            b[i] + w * (b[i + 1] - b[i])
        };
        shifted.push(a[j] - bt);
    }
    (shifted.len() >= 2).then(|| (rms(&same), rms(&shifted)))
}

impl System for RfTuned {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn cost(&self, u: &CostInput) -> Cost {
        let (d, n, p) = (u.var("d", 1.0), u.var("n", 2.0), u.var("p", 1.0));
        let big_n = n + u.var("n_val", 0.0) + u.var("n_test", 1.0);
        let r = p.min(big_n);
        let cells = u.var("grid_clip_k", 1.0) * u.var("grid_steps_k", 1.0);
        let t_max = u.var("steps", 1.0)
            * u.var("grid_steps_lo", 1.0).max(u.var("grid_steps_hi", 1.0))
            + 1.0;
        let feats = features_cost(big_n, p, d);
        // Gram matrix of all points (in blocks of features) and its eigendecomposition.
        let gram = Cost::gemm(2.0 * big_n * big_n * p) + Cost::eigen(big_n);
        // Per step and moving run: K (c o r) (n^2), the update; every cell runs its own
        // T ([`batch`]), so the runs' steps add up to clip_k * sum over the steps grid of
        // T (not cells * the largest T: 3.6x fewer on a grid of 6 from 1 to 100). Per step
        // the noise draw (r) mapped through L_train (r n), shared by the moving runs (one
        // stream); at the end the held-out predictions.
        let run_steps = u.var("grid_clip_k", 1.0).max(1.0)
            * log_factors(
                u.var("grid_steps_lo", 1.0),
                u.var("grid_steps_hi", 1.0),
                u.var("grid_steps_k", 1.0).max(1.0) as usize,
            )
            .iter()
            .map(|b| (u.var("steps", 1.0) * b).round().max(1.0))
            .sum::<f64>();
        let steps = run_steps * Cost::stream(2.0 * n * n + 4.0 * n)
            + t_max * (Cost::normals(r) + Cost::stream(r * n));
        let mut seconds = feats.seconds + Cost::normals(p * d) + gram + steps + Cost::eigen(n);
        if u.wants(&["spread_steps", "spread_collapsed", "collapse_ratio"]) {
            // The same grid again at p_ref (its features, Gram matrix and runs).
            let p_ref = u.var("p_ref", p);
            seconds += features_cost(big_n, p_ref, d).seconds
                + Cost::gemm(2.0 * big_n * big_n * p_ref)
                + Cost::eigen(big_n)
                + steps;
        }
        let bytes = feats.bytes
            + Cost::f64s(
                p * d + 3.0 * big_n * big_n + r * big_n + 6.0 * cells * n + 128.0 * (r + n),
            );
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (d, _, p, _) = u.sizes()?;
        let n_val = u.var_or("n_val", 0.0) as usize;
        let eta = u.var("eta")?;
        let cells = grid(u)?;
        if cells.len() > 1 && n_val == 0 {
            return Err(SystemError::Invalid(format!(
                "a grid of {} cells needs a validation split (n_val > 0): hyper-parameters \
                 are never selected on the test set",
                cells.len()
            )));
        }
        let kp = problem(u, p, "features")?;
        let runs = batch(u, &cells)?;
        let res = reduced::run_batch(&kp, &runs, &[u.noise_seed("noise")])?;
        let test_of =
            |r: &reduced::ReducedRun| r.final_loss().and_then(|l| l.test).unwrap_or(f64::NAN);
        let best = if cells.len() == 1 {
            0
        } else {
            let vals: Vec<f64> = res
                .iter()
                .map(|r| r.val_losses.last().copied().unwrap_or(f64::NAN))
                .collect();
            argmin_first(&vals).ok_or_else(|| {
                SystemError::Invalid("no finite validation loss on the grid".into())
            })?
        };
        let (clip, steps) = cells[best];
        let test_loss = test_of(&res[best]);
        let mut out = BTreeMap::new();
        out.insert("test_loss".into(), test_loss);
        out.insert(
            "val_loss".into(),
            res[best].val_losses.last().copied().unwrap_or(f64::NAN),
        );
        out.insert("clip_fraction".into(), res[best].overall_clip_fraction());
        out.insert("best_steps".into(), steps as f64);
        out.insert(
            "best_time_scaled".into(),
            eta * steps as f64 * p as f64 / d as f64,
        );
        out.insert("best_clip_over_sqrt_p".into(), clip / (p as f64).sqrt());
        let (t_lo, t_hi) = cells
            .iter()
            .fold((usize::MAX, 0), |(lo, hi), &(_, t)| (lo.min(t), hi.max(t)));
        let edge = t_lo < t_hi && (steps == t_lo || steps == t_hi);
        out.insert("best_on_steps_edge".into(), f64::from(u8::from(edge)));
        if u.wants(&[
            "min_norm_test_loss",
            "excess_risk",
            "abs_excess_risk",
            "relative_excess_risk",
        ]) {
            let star = kp.min_norm_test_loss()?;
            out.insert("min_norm_test_loss".into(), star);
            out.insert("excess_risk".into(), test_loss - star);
            out.insert("abs_excess_risk".into(), (test_loss - star).abs());
            out.insert("relative_excess_risk".into(), (test_loss - star) / star);
        }
        if u.wants(&["spread_steps", "spread_collapsed", "collapse_ratio"]) {
            let spreads = collapse(u, &cells, &res)?;
            out.insert("spread_steps".into(), spreads.0);
            out.insert("spread_collapsed".into(), spreads.1);
            out.insert("collapse_ratio".into(), spreads.0 / spreads.1);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_factors_span_the_range_and_one_cell_is_lo() {
        let f = log_factors(0.5, 8.0, 5);
        assert_eq!(f.len(), 5);
        assert!((f[0] - 0.5).abs() < 1e-12 && (f[4] - 8.0).abs() < 1e-12);
        assert!((f[2] - 2.0).abs() < 1e-12, "geometric midpoint");
        assert_eq!(log_factors(3.0, 9.0, 1), vec![3.0]);
    }

    #[test]
    fn curves_shifted_by_the_scaling_collapse_exactly() {
        // b(x) = f(x), a(x) = f(x + s): at equal x they differ, after the shift not at all.
        let x: Vec<f64> = (0..11).map(|i| i as f64 * 0.5).collect();
        let f = |v: f64| (v - 2.0).powi(2);
        let s = 1.0;
        let b: Vec<f64> = x.iter().map(|&v| f(v)).collect();
        let a: Vec<f64> = x.iter().map(|&v| f(v + s)).collect();
        let (same, shifted) = curve_spreads(&x, &a, &b, s).unwrap();
        assert!(same > 1.0, "{same}");
        // Linear interpolation of a parabola on a grid that the shift hits exactly: exact.
        assert!(shifted < 1e-12, "{shifted}");
        // Identical curves: no spread at equal x; a shift beyond the grid overlaps nowhere.
        assert_eq!(curve_spreads(&x, &b, &b, 0.0).unwrap().0, 0.0);
        assert!(curve_spreads(&x, &a, &b, 10.0).is_none());
    }

    #[test]
    fn interpolation_between_grid_points_is_linear() {
        let x = [0.0, 1.0, 2.0];
        let b = [0.0, 10.0, 20.0];
        let a = [5.0, 15.0, 25.0];
        // a(x) = b(x + 0.5) exactly, b linear.
        let (_, shifted) = curve_spreads(&x, &a, &b, 0.5).unwrap();
        assert!(shifted < 1e-12);
    }

    #[test]
    fn argmin_takes_the_first_of_ties_and_skips_nan() {
        assert_eq!(argmin_first(&[2.0, 1.0, 1.0, 3.0]), Some(1));
        assert_eq!(argmin_first(&[f64::NAN, 4.0, 5.0]), Some(1));
        assert_eq!(argmin_first(&[f64::NAN]), None);
        assert_eq!(argmin_first(&[]), None);
    }
}
