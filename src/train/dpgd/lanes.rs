//! The DP-GD loop of [`super`]: [`run`], and [`run_shared`] for runs that share `Phi`
//! and step together in one [`pass`] over it a step.
use super::{
    contiguous, mean_from_sum, pass, ClipRule, DpGdConfig, DpGdRecipe, DpGdRun, LossPoint, Problem,
    RecordPlan, StepStats, Trajectory,
};
use crate::train::TrainError;
use ndarray::Array1;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use std::borrow::Cow;

/// Runs T steps of full-batch DP-GD from `theta0` with the formulas of `recipe`
/// ([`DpGdRecipe::PAPER`]: the module docs). Noise draws come from `noise_rng`: p
/// standard normals per fresh draw, in coordinate order, only when sigma > 0.
///
/// When the recipe runs another number of updates than the configured T, the plan's
/// final step T is recorded after the last update run.
///
/// Errors: an invalid configuration, or a non-finite parameter or loss (the step at
/// which it happened is named; callers add the claim and sweep point).
pub fn run(
    problem: &Problem<'_>,
    theta0: Array1<f64>,
    cfg: &DpGdConfig,
    plan: &RecordPlan,
    noise_rng: &mut impl Rng,
    recipe: &DpGdRecipe,
) -> Result<DpGdRun, TrainError> {
    let mut runs = run_lanes(
        std::slice::from_ref(problem),
        vec![theta0],
        std::slice::from_ref(cfg),
        plan,
        noise_rng,
        recipe,
    )?;
    Ok(runs.pop().expect("one run"))
}

/// Runs DP-GD on problems that share one `Phi` (the same view; their labels, test sets
/// and configurations may differ, their number of updates may not), each from zero, in
/// one pass over `Phi` a step ([`pass`]). Every run's bits are those of [`run`] with its
/// own copy of `noise_rng`'s stream: each run draws the same normals, so they are drawn
/// once. The error, if any, is the first run's in order that fails, as [`run`] one after
/// another would return it. Used by `rf_dpgd` for a main run and its noise-only run.
pub fn run_shared(
    problems: &[Problem<'_>],
    cfgs: &[DpGdConfig],
    plan: &RecordPlan,
    noise_rng: &mut impl Rng,
    recipe: &DpGdRecipe,
) -> Result<Vec<DpGdRun>, TrainError> {
    let theta0 = problems
        .iter()
        .map(|pr| Array1::zeros(pr.phi.ncols()))
        .collect();
    run_lanes(problems, theta0, cfgs, plan, noise_rng, recipe)
}

/// One run of [`run_lanes`].
struct LaneRun<'a, 'p> {
    problem: &'a Problem<'p>,
    cfg: &'a DpGdConfig,
    y: Cow<'a, [f64]>,
    noise_std: f64,
    rule: ClipRule,
    ridge: f64,
    theta: Array1<f64>,
    traj: Trajectory,
    failed: Option<TrainError>,
}

fn run_lanes<'a, 'p>(
    problems: &'a [Problem<'p>],
    theta0: Vec<Array1<f64>>,
    cfgs: &'a [DpGdConfig],
    plan: &RecordPlan,
    noise_rng: &mut impl Rng,
    recipe: &DpGdRecipe,
) -> Result<Vec<DpGdRun>, TrainError> {
    let Some(first) = problems.first() else {
        return Ok(Vec::new());
    };
    if cfgs.len() != problems.len() || theta0.len() != problems.len() {
        return Err(TrainError::InvalidConfig(format!(
            "{} problems, {} configurations",
            problems.len(),
            cfgs.len()
        )));
    }
    for cfg in cfgs {
        cfg.validate()?;
    }
    let phi = first.phi;
    let (n, p) = phi.dim();
    for (pr, th) in problems.iter().zip(&theta0) {
        if pr.phi.dim() != (n, p)
            || pr.phi.as_ptr() != phi.as_ptr()
            || pr.phi.strides() != phi.strides()
        {
            return Err(TrainError::InvalidConfig(
                "runs on one pass must share Phi".into(),
            ));
        }
        if n == 0 || pr.y.len() != n || th.len() != p {
            return Err(TrainError::InvalidConfig(format!(
                "shapes: Phi {n}x{p}, y {}, theta0 {}",
                pr.y.len(),
                th.len()
            )));
        }
    }
    let steps = (recipe.steps)(cfgs[0].steps);
    if cfgs.iter().any(|c| (recipe.steps)(c.steps) != steps) {
        return Err(TrainError::InvalidConfig(
            "runs on one pass must run the same number of updates".into(),
        ));
    }
    crate::linalg::pin_blas_threads();
    let rows = phi.as_standard_layout();
    let rows = rows.as_slice().expect("standard layout");
    let phi_sq = crate::linalg::row_norms_sq(&phi);
    let phi_sq = phi_sq.as_slice().expect("owned");
    let mut lanes: Vec<LaneRun<'a, 'p>> = problems
        .iter()
        .zip(cfgs)
        .zip(theta0)
        .map(|((problem, cfg), theta)| LaneRun {
            problem,
            cfg,
            y: contiguous(&problem.y),
            noise_std: recipe.noise_std(cfg, n),
            rule: (recipe.clip_rule)(cfg.clip_rule),
            ridge: (recipe.per_sample_ridge)(cfg.ridge),
            theta,
            traj: Trajectory {
                clip_fraction: Vec::with_capacity(steps),
                max_grad_ratio: Vec::with_capacity(steps),
                max_abs_residual: Vec::with_capacity(steps + 1),
                losses: Vec::new(),
            },
            failed: None,
        })
        .collect();
    let mut sums: Vec<Vec<f64>> = vec![Vec::new(); lanes.len()];
    let mut xi = Array1::<f64>::zeros(p);
    let mut drawn = false;
    for t in 0..=steps {
        let live: Vec<usize> = (0..lanes.len())
            .filter(|&b| lanes[b].failed.is_none())
            .collect();
        if live.is_empty() {
            break;
        }
        let theta_sq: Vec<f64> = live
            .iter()
            .map(|&b| {
                let l = &lanes[b];
                if l.ridge > 0.0 {
                    pass::norm_sq(l.theta.as_slice().expect("owned"))
                } else {
                    0.0
                }
            })
            .collect();
        let pass_lanes: Vec<pass::Lane<'_>> = live
            .iter()
            .map(|&b| {
                let l = &lanes[b];
                pass::Lane {
                    y: &l.y,
                    theta: l.theta.as_slice().expect("owned"),
                    clip: l.cfg.clip,
                    rule: l.rule,
                    ridge: l.ridge,
                }
            })
            .collect();
        let seen = pass::clipped_sums(
            rows,
            p,
            phi_sq,
            &pass_lanes,
            &theta_sq,
            &mut sums[..live.len()],
        );
        drop(pass_lanes);
        let mut means: Vec<(usize, Array1<f64>)> = Vec::with_capacity(live.len());
        for ((k, &b), (mut stats, sum_c)) in live.iter().enumerate().zip(seen) {
            let l = &mut lanes[b];
            let sum = Array1::from_vec(std::mem::take(&mut sums[k]));
            let mut g = mean_from_sum(sum, l.ridge, sum_c, &l.theta.view(), n);
            (recipe.clipped_mean)(l.cfg, &mut g, &mut stats);
            if let Err(e) = l.record_step(t, steps, &stats, plan) {
                l.failed = Some(e);
                continue;
            }
            means.push((b, g));
        }
        if t == steps {
            break;
        }
        if !drawn || (recipe.fresh_noise)(t) {
            // A fresh xi for the runs with noise (the last one again otherwise).
            if means.iter().any(|(b, _)| lanes[*b].noise_std > 0.0) {
                for v in xi.iter_mut() {
                    *v = StandardNormal.sample(noise_rng);
                }
            }
            drawn = true;
        }
        for (b, g) in means {
            let l = &mut lanes[b];
            l.theta.scaled_add(-l.cfg.eta, &g);
            if l.noise_std > 0.0 {
                l.theta.scaled_add(l.noise_std, &xi);
            }
        }
    }
    let mut out = Vec::with_capacity(lanes.len());
    for l in lanes {
        if let Some(e) = l.failed {
            return Err(e);
        }
        out.push(DpGdRun {
            theta: l.theta,
            trajectory: l.traj,
        });
    }
    Ok(out)
}

impl LaneRun<'_, '_> {
    /// What step `t` of `steps` saw, into the trajectory; the losses at the plan's steps
    /// (the configured T is recorded after the last update run).
    fn record_step(
        &mut self,
        t: usize,
        steps: usize,
        stats: &StepStats,
        plan: &RecordPlan,
    ) -> Result<(), TrainError> {
        if !stats.train_mse.is_finite() {
            return Err(TrainError::Diverged {
                step: t,
                what: "training loss".into(),
            });
        }
        self.traj.max_abs_residual.push(stats.max_abs_residual);
        let record = plan.loss_at.iter().any(|&s| {
            if s == self.cfg.steps {
                steps == t
            } else {
                s == t
            }
        });
        if record {
            let test = self.problem.test_mse(&self.theta.view());
            if test.is_some_and(|v| !v.is_finite()) {
                return Err(TrainError::Diverged {
                    step: t,
                    what: "test loss".into(),
                });
            }
            self.traj.losses.push(LossPoint {
                step: t,
                train: stats.train_mse,
                test,
            });
        }
        if t < steps {
            self.traj.clip_fraction.push(stats.clip_fraction);
            self.traj.max_grad_ratio.push(stats.max_grad_ratio);
        }
        Ok(())
    }
}
