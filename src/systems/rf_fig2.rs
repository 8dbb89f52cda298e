//! The cells of privacy-for-free's Fig. 2 that its ordinal statements compare
//! (Bombari & Mondelli, Sec. 3.1-3.2, L145-L149; [`crate::figures::fig2_ordinal`]),
//! computed in one work unit with common random numbers, through the exact reduced
//! engine ([`crate::train::reduced`]) and the setting of `dpclaims fig2`
//! ([`crate::figures::fig2`]): random features tanh(Vx), y = sign(u^T x), x ~ N(0, I_d),
//! DP-GD (Algorithm 1, theta_0 = 0) with sigma from Prop. 2.2 (Eq. 5) at each run's T.
//!
//! One unit draws the direction, the training set (n), the test set (n_test) and the
//! validation set (n_val) from stream `data`, then at each width p in {n/2, n, 2n, 20n}
//! the features (stream `features-p<p>`), and computes
//!
//! * the non-private baseline theta* = pinv(Phi) y (Eq. 9) and DP-GD with eta = 1/p tuned
//!   on the validation split over fig2's panel-1 grid C = c sqrt(p), c in {0.2, 0.5, 1},
//!   T = int(c_time d), c_time in {2, 5, 10} ("chosen to maximize the validation
//!   performance", Sec. 3.2; one noise stream `noise-p<p>` per width);
//! * at p = 20n (the heat map's p = 40 000 at n = 2 000), eta = 1/p, five cells on one
//!   noise stream `noise-heat`: the corners of the paper's grid, C = c sqrt(p) for c in
//!   {10^-2, 10^1.5}, T = max(1, int(c_time d)) for c_time in {10^-1.5, 10^2.5} (the bottom
//!   row times `bottom_steps_scale`, 1 but in a control), and the centre C = sqrt(p),
//!   T = d (eta T p/d = 1, Eq. 8's scaling).
//!
//! Options of the negative controls: `sensitivity: sqrt_p` injects the noise of
//! C = sqrt(p) whatever C (noise not scaled by C_clip), `sigma_width: smallest_p`
//! calibrates sigma once at p = n/2 (eta = 2/n) for every width, `curves: swapped` hands
//! the peak tests each other's curve. The metrics are the statements of
//! [`fig2_ordinal`] (positive: reproduced) and the losses they compare.
use super::cost::features_cost;
use super::*;
use crate::figures::fig2::logspace;
use crate::figures::fig2_ordinal::{self as ordinal, Corners, PSweep};
use crate::train::dpgd;
use crate::train::reduced::{self, BatchRun, KernelProblem};

#[derive(Debug)]
pub struct RfFig2;

const fn param(
    name: &'static str,
    kind: ParamKind,
    optional: bool,
    doc: &'static str,
) -> ParamInfo {
    ParamInfo {
        name,
        kind,
        optional,
        doc,
    }
}

const PARAMS: &[ParamInfo] = &[
    param("d", ParamKind::IntAtLeast(1), false, "input dimension"),
    param(
        "n",
        ParamKind::IntAtLeast(4),
        false,
        "training samples (widths n/2, n, 2n, 20n)",
    ),
    param("n_test", ParamKind::IntAtLeast(1), false, "test samples"),
    param(
        "n_val",
        ParamKind::IntAtLeast(1),
        false,
        "validation samples (the tuning of the p sweep)",
    ),
    param("epsilon", ParamKind::Positive, false, "privacy budget"),
    param("delta", ParamKind::Probability, false, "privacy delta"),
    param(
        "kappa",
        ParamKind::Positive,
        false,
        "sensitivity factor (2: replace-one)",
    ),
    param(
        "sigma_scale",
        ParamKind::NonNegative,
        true,
        "factor on Prop. 2.2's sigma (default 1)",
    ),
    param(
        "bottom_steps_scale",
        ParamKind::Positive,
        true,
        "factor on the heat map's bottom-row T (default 1)",
    ),
];

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "sensitivity",
        values: &["clip", "sqrt_p"],
        doc: "noise std sqrt(eta) kappa C sigma/n (Algorithm 1), or with C replaced by sqrt(p) (a slip)",
    },
    OptionInfo {
        name: "sigma_width",
        values: &["each_p", "smallest_p"],
        doc: "sigma from Prop. 2.2 at each width's eta = 1/p, or once at p = n/2 (a slip)",
    },
    OptionInfo {
        name: "curves",
        values: &["paper", "swapped"],
        doc: "the peak tests on their own curves, or each on the other's (a control)",
    },
];

const fn metric(name: &'static str, doc: &'static str) -> MetricInfo {
    MetricInfo { name, doc }
}

const METRICS: &[MetricInfo] = &[
    metric(
        "gd_peak_at_n",
        "ln L*(n) - ln max(L*(n/2), L*(2n)), theta* = pinv(Phi) y (L145)",
    ),
    metric(
        "dpgd_no_peak_at_n",
        "ln max(L(n/2), L(2n)) - ln L(n), DP-GD tuned on validation (L145)",
    ),
    metric("dpgd_improves_with_p", "L(n/2) - L(20n), DP-GD (L145)"),
    metric(
        "dpgd_near_gd_at_20n",
        "|L(20n) - 1| - |L(20n) - L*(20n)| (L145)",
    ),
    metric(
        "top_right_above_centre",
        "L(top-right) - L(centre) at p = 20n (L149, region 1)",
    ),
    metric(
        "bottom_left_near_init",
        "(1 - L(centre))/2 - |L(bottom-left) - 1| (L149, region 2)",
    ),
    metric(
        "bottom_right_above_bottom_left",
        "L(bottom-right) - L(bottom-left) (L149, region 3)",
    ),
    metric(
        "top_left_near_centre",
        "|L(top-left) - 1| - |L(top-left) - L(centre)| (L149, region 4)",
    ),
    metric(
        "loss_centre",
        "test loss at C = sqrt(p), eta T p/d = 1, p = 20n",
    ),
    metric(
        "loss_top_left",
        "test loss at C = 0.01 sqrt(p), T = int(10^2.5 d)",
    ),
    metric(
        "loss_top_right",
        "test loss at C = 10^1.5 sqrt(p), T = int(10^2.5 d)",
    ),
    metric(
        "loss_bottom_left",
        "test loss at C = 0.01 sqrt(p), T = max(1, int(10^-1.5 d))",
    ),
    metric(
        "loss_bottom_right",
        "test loss at C = 10^1.5 sqrt(p), T = max(1, int(10^-1.5 d))",
    ),
    metric("min_norm_at_n", "theta*'s test loss at p = n"),
    metric("min_norm_at_20n", "theta*'s test loss at p = 20n"),
    metric("dpgd_at_half_n", "tuned DP-GD's test loss at p = n/2"),
    metric("dpgd_at_n", "tuned DP-GD's test loss at p = n"),
    metric("dpgd_at_20n", "tuned DP-GD's test loss at p = 20n"),
];

const INFO: SystemInfo = SystemInfo {
    name: "rf_fig2",
    model: "random_features_tanh",
    description: "the cells of privacy-for-free Fig. 2 compared by its ordinal statements (p = n/2, n, \
                  2n, 20n; the heat map's corners and centre at p = 20n), one unit, common random numbers",
    needs_target: true,
    params: PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

/// The widths of the p sweep, in the order of [`PSweep`].
pub fn widths(n: usize) -> [usize; 4] {
    [(n / 2).max(1), n, 2 * n, 20 * n]
}

/// The heat map's cells `(c_clip, T)` in the order centre, top-left, top-right,
/// bottom-left, bottom-right (eta = 1/p, so T = c_time d).
pub fn heat_cells(d: usize, bottom_scale: f64) -> [(f64, usize); 5] {
    let c = logspace(-2.0, 1.5, 2);
    let t = logspace(-1.5, 2.5, 2);
    let steps = |ct: f64| ((ct * d as f64).floor() as usize).max(1);
    let bottom = ((steps(t[0]) as f64 * bottom_scale).round() as usize).max(1);
    let top = steps(t[1]);
    [
        (1.0, d),
        (c[0], top),
        (c[1], top),
        (c[0], bottom),
        (c[1], bottom),
    ]
}

/// The panel-1 grid of `dpclaims fig2` (c_clip, c_time).
const GRID_CLIP: [f64; 3] = [0.2, 0.5, 1.0];
const GRID_TIME: [f64; 3] = [2.0, 5.0, 10.0];

fn problem(u: &UnitInput, p: usize) -> Result<std::sync::Arc<KernelProblem>, SystemError> {
    let (d, n) = (u.count("d")?, u.count("n")?);
    let (n_test, n_val) = (u.count("n_test")?, u.count("n_val")?);
    let key = format!(
        "rf_fig2::problem d={d} n={n} n_test={n_test} n_val={n_val} p={p} data={:?}",
        u.data
    );
    u.shared(&key, || {
        super::rf_tuned::kernel_problem(u, (d, n, n_test, n_val), p, &format!("features-p{p}"))
    })
}

/// One run at width `p`, eta = 1/p: sigma from Prop. 2.2 at T through the recipe, times
/// `sigma_scale` and the controls' slips.
fn run_cfg(u: &UnitInput, p: usize, clip: f64, steps: usize) -> Result<BatchRun, SystemError> {
    let n = u.count("n")?;
    let eta = 1.0 / p as f64;
    let eta_sigma = match u.option("sigma_width") {
        "smallest_p" => 1.0 / widths(n)[0] as f64,
        _ => eta,
    };
    let mut sigma = dpgd::prop22_sigma(
        eta_sigma,
        steps,
        u.var("epsilon")?,
        u.var("delta")?,
        &u.recipe.dpgd,
    )? * u.var_or("sigma_scale", 1.0);
    if u.option("sensitivity") == "sqrt_p" {
        sigma *= (p as f64).sqrt() / clip;
    }
    let cfg = dpgd::DpGdConfig {
        eta,
        steps,
        clip,
        clip_rule: dpgd::ClipRule::Divide,
        sigma,
        kappa: u.var("kappa")?,
        ridge: 0.0,
    };
    Ok(BatchRun {
        cfg: u.recipe.dpgd.as_paper_config(&cfg, n),
        loss_at: vec![steps],
        stream: 0,
    })
}

fn test_of(r: &reduced::ReducedRun) -> f64 {
    r.final_loss().and_then(|l| l.test).unwrap_or(f64::NAN)
}

/// `(theta*'s test loss, tuned DP-GD's test loss)` at width `p`.
fn at_width(u: &UnitInput, p: usize) -> Result<(f64, f64), SystemError> {
    let d = u.count("d")?;
    let kp = problem(u, p)?;
    let sqrt_p = (p as f64).sqrt();
    let mut runs = Vec::new();
    for c in GRID_CLIP {
        for ct in GRID_TIME {
            runs.push(run_cfg(
                u,
                p,
                c * sqrt_p,
                ((ct * d as f64).floor() as usize).max(1),
            )?);
        }
    }
    let res = reduced::run_batch(&kp, &runs, &[u.noise_seed(&format!("noise-p{p}"))])?;
    let val: Vec<f64> = res
        .iter()
        .map(|r| r.val_losses.last().copied().unwrap_or(f64::NAN))
        .collect();
    let best = super::rf_tuned::argmin_first(&val)
        .ok_or_else(|| SystemError::Invalid(format!("no finite validation loss at p = {p}")))?;
    // theta* at the interpolation threshold: K's condition number is near 1e10 there,
    // so the loss is computed by scalar code whose bits do not depend on the machine's
    // BLAS kernels (train::reduced::min_norm_test_loss_scalar); elsewhere K is well
    // conditioned and the BLAS path's last bits stay below the reports' 6 digits.
    let star = if p == u.count("n")? {
        let dims = (d, u.count("n")?, u.count("n_test")?, u.count("n_val")?);
        let k = super::rf_tuned::kernel_inputs(u, dims, p, &format!("features-p{p}"))?;
        reduced::min_norm_test_loss_scalar(
            &k.model,
            &k.x.view(),
            &k.y.view(),
            &k.x_held.view(),
            &k.y_held.view(),
            k.n_val,
        )?
    } else {
        kp.min_norm_test_loss()?
    };
    Ok((star, test_of(&res[best])))
}

impl System for RfFig2 {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn cost(&self, u: &CostInput) -> Cost {
        let (d, n) = (u.var("d", 1.0), u.var("n", 4.0));
        let big_n = n + u.var("n_test", 1.0) + u.var("n_val", 1.0);
        let per_step = Cost::stream(2.0 * n * n + 4.0 * n);
        let mut seconds = 0.0;
        let mut bytes: f64 = 0.0;
        for p in [n / 2.0, n, 2.0 * n, 20.0 * n] {
            let feats = features_cost(big_n, p, d);
            let r = p.min(big_n);
            // Features, Gram matrix, its eigendecomposition, the pseudo-inverse; the 9
            // tuning runs (T <= 10 d) and their noise draws.
            seconds += feats.seconds
                + Cost::normals(p * d)
                + Cost::gemm(2.0 * big_n * big_n * p)
                + 2.0 * Cost::eigen(big_n)
                + 11.0 * d * (9.0 * per_step + Cost::normals(r) + Cost::stream(r * n));
            bytes = bytes.max(
                feats.bytes + Cost::f64s(p * d + 3.0 * big_n * big_n + r * big_n + 128.0 * (r + n)),
            );
        }
        // The heat cells at 20n: two runs of int(10^2.5 d) steps, one of d, two of the
        // bottom row's T.
        let r = (20.0 * n).min(big_n);
        let bottom = u.var("bottom_steps_scale", 1.0) * (0.0317 * d).max(1.0);
        let steps = 316.3 * d + 1.0;
        seconds += steps * (2.0 * per_step + Cost::normals(r) + Cost::stream(r * n))
            + (d + 2.0 * bottom) * per_step;
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (d, n) = (u.count("d")?, u.count("n")?);
        let ws = widths(n);
        let mut s = PSweep {
            min_norm: [0.0; 4],
            dpgd: [0.0; 4],
        };
        for (i, &p) in ws.iter().enumerate() {
            (s.min_norm[i], s.dpgd[i]) = at_width(u, p)?;
        }
        if u.option("curves") == "swapped" {
            std::mem::swap(&mut s.min_norm, &mut s.dpgd);
        }
        let p = ws[3];
        let kp = problem(u, p)?;
        let sqrt_p = (p as f64).sqrt();
        let cells = heat_cells(d, u.var_or("bottom_steps_scale", 1.0));
        let runs = cells
            .iter()
            .map(|&(c, t)| run_cfg(u, p, c * sqrt_p, t))
            .collect::<Result<Vec<_>, _>>()?;
        let res = reduced::run_batch(&kp, &runs, &[u.noise_seed("noise-heat")])?;
        let l: Vec<f64> = res.iter().map(test_of).collect();
        let c = Corners {
            centre: l[0],
            top_left: l[1],
            top_right: l[2],
            bottom_left: l[3],
            bottom_right: l[4],
        };
        let mut out = BTreeMap::new();
        for o in ordinal::p_sweep(&s)
            .into_iter()
            .chain(ordinal::heat_map(&c))
        {
            out.insert(o.name.to_string(), o.value);
        }
        for (name, v) in [
            ("loss_centre", c.centre),
            ("loss_top_left", c.top_left),
            ("loss_top_right", c.top_right),
            ("loss_bottom_left", c.bottom_left),
            ("loss_bottom_right", c.bottom_right),
            ("min_norm_at_n", s.min_norm[1]),
            ("min_norm_at_20n", s.min_norm[3]),
            ("dpgd_at_half_n", s.dpgd[0]),
            ("dpgd_at_n", s.dpgd[1]),
            ("dpgd_at_20n", s.dpgd[3]),
        ] {
            out.insert(name.into(), v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registered_cells_are_the_grid_corners_and_the_centre() {
        // d = 20: the bottom row's int(10^-1.5 * 20) = 0 steps is raised to 1.
        let c = heat_cells(20, 1.0);
        assert_eq!(c[0], (1.0, 20));
        assert_eq!((c[1].1, c[3].1), (6324, 1));
        assert!((c[1].0 - 0.01).abs() < 1e-15 && (c[2].0 - 10f64.powf(1.5)).abs() < 1e-12);
        // d = 100: as `dpclaims fig2 --profile full` (T = 3 and 31 622).
        let c = heat_cells(100, 1.0);
        assert_eq!((c[2].1, c[4].1), (31622, 3));
        assert_eq!(heat_cells(100, 1000.0)[3].1, 3000);
        assert_eq!(widths(2000), [1000, 2000, 4000, 40_000]);
    }
}
