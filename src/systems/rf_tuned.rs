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
use ndarray::{concatenate, Array1, Axis};

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
const PARAMS: [ParamInfo; 18] = {
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
    ];
    let mut out = [extra[0]; 18];
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
        // Per step and moving run: K (c o r) (n^2), the update; per step the noise draw
        // (r) mapped through L_train (r n); at the end the held-out predictions.
        let steps = t_max
            * (cells * Cost::stream(2.0 * n * n + 4.0 * n)
                + Cost::normals(r)
                + Cost::stream(r * n));
        let seconds = feats.seconds + Cost::normals(p * d) + gram + steps + Cost::eigen(n);
        let bytes = feats.bytes
            + Cost::f64s(
                p * d + 3.0 * big_n * big_n + r * big_n + 6.0 * cells * n + 128.0 * (r + n),
            );
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (d, n, p, n_test) = u.sizes()?;
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
        // Data in a fixed order: direction, train, test, then validation.
        let mut data_rng = u.seeds.rng_for("data");
        let target = target(u.data, d, &mut data_rng)?;
        let draw = |m: usize, noise: f64, rng: &mut _| {
            crate::data::Dataset::sample(m, d, u.data.input, &target, noise, rng)
        };
        let train = draw(n, u.data.label_noise, &mut data_rng);
        let test = draw(n_test, 0.0, &mut data_rng);
        let val = draw(n_val, 0.0, &mut data_rng);
        let model = RandomFeatures::sample(p, d, &mut u.seeds.rng_for("features"));
        let held_x = concatenate(Axis(0), &[val.x.view(), test.x.view()])
            .map_err(|e| SystemError::Invalid(format!("held-out shapes: {e}")))?;
        let held_y: Array1<f64> = val.y.iter().chain(test.y.iter()).copied().collect();
        let kp = KernelProblem::random_features(
            &model,
            &train.x.view(),
            train.y.clone(),
            &held_x.view(),
            held_y,
            TestNoise::Exact,
        )?
        .with_validation(n_val)?;

        let rule = clip_rule(u.option("clip_rule"));
        let runs: Vec<BatchRun> = cells
            .iter()
            .map(|&(clip, steps)| -> Result<BatchRun, SystemError> {
                // Prop. 2.2 (Eq. 5) at this cell's T, through the recipe like rf_dpgd.
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
            .collect::<Result<_, _>>()?;
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
    fn argmin_takes_the_first_of_ties_and_skips_nan() {
        assert_eq!(argmin_first(&[2.0, 1.0, 1.0, 3.0]), Some(1));
        assert_eq!(argmin_first(&[f64::NAN, 4.0, 5.0]), Some(1));
        assert_eq!(argmin_first(&[f64::NAN]), None);
        assert_eq!(argmin_first(&[]), None);
    }
}
