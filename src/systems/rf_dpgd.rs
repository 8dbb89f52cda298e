//! DP-GD on the random-features model (Bombari & Mondelli, "Privacy for free in the
//! overparameterized regime", Sec. 2.2, Algorithm 1, Eq. 8, Prop. 2.2).
//!
//! One unit: draw u (the target direction), the training set (n), the test set
//! (n_test), then V (p x d) — each from its own stream — run DP-GD from theta_0 = 0 with
//! `sigma = sigma_scale * sqrt(eta T) sqrt(8 ln(1/delta))/eps` (Prop. 2.2), and compute
//! the requested metrics. `noise_term_exact` is computed, not simulated: the exact
//! expectation of `noise_term` over the DP noise ([`crate::train::noise_term`]), with
//! Prop. 2.2's sigma (no `sigma_scale`).
use super::cost::{dpgd_seconds, features_cost};
use super::*;
use crate::data::Dataset;
use crate::models::RandomFeatures;
use crate::train::{baselines, dpgd, noise_term};
use ndarray::{Array1, Array2};

#[derive(Debug)]
pub struct RfDpGd;

/// The random-features DP-GD parameters (shared with [`super::engines`]).
pub(super) const PARAMS: [ParamInfo; 11] = [
    ParamInfo {
        name: "d",
        kind: ParamKind::IntAtLeast(1),
        optional: false,
        doc: "input dimension",
    },
    ParamInfo {
        name: "n",
        kind: ParamKind::IntAtLeast(2),
        optional: false,
        doc: "training samples",
    },
    ParamInfo {
        name: "p",
        kind: ParamKind::IntAtLeast(1),
        optional: false,
        doc: "random features",
    },
    ParamInfo {
        name: "n_test",
        kind: ParamKind::IntAtLeast(1),
        optional: false,
        doc: "test samples",
    },
    ParamInfo {
        name: "eta",
        kind: ParamKind::Positive,
        optional: false,
        doc: "step size",
    },
    ParamInfo {
        name: "steps",
        kind: ParamKind::IntAtLeast(1),
        optional: false,
        doc: "number of DP-GD steps T",
    },
    ParamInfo {
        name: "clip",
        kind: ParamKind::Positive,
        optional: false,
        doc: "clipping threshold C",
    },
    ParamInfo {
        name: "epsilon",
        kind: ParamKind::Positive,
        optional: false,
        doc: "privacy budget (sigma from Prop. 2.2)",
    },
    ParamInfo {
        name: "delta",
        kind: ParamKind::Probability,
        optional: false,
        doc: "privacy budget delta",
    },
    ParamInfo {
        name: "kappa",
        kind: ParamKind::Positive,
        optional: false,
        doc: "noise constant: 2 replace-one (Eq. 11), 1 as printed in the blog",
    },
    ParamInfo {
        name: "sigma_scale",
        kind: ParamKind::NonNegative,
        optional: true,
        doc: "multiplies the Prop. 2.2 sigma (default 1; negative controls; 0: no noise, the same protocol without privacy)",
    },
];

const OPTIONS: &[OptionInfo] = &[OptionInfo {
    name: "clip_rule",
    values: &["divide", "multiply", "none"],
    doc: "per-sample clipping: divide by max(1, ||g||/C) (standard), multiply (blog as printed), none",
}];

const METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "test_loss",
        doc: "test MSE of theta_T",
    },
    MetricInfo {
        name: "train_loss",
        doc: "training MSE of theta_T",
    },
    MetricInfo {
        name: "min_norm_test_loss",
        doc: "test MSE of the non-private baseline pinv(Phi) y (Eq. 9)",
    },
    MetricInfo {
        name: "excess_risk",
        doc: "R_P = test loss(theta_T) - test loss(theta*) (Eq. 1, Theorem 2)",
    },
    MetricInfo {
        name: "abs_excess_risk",
        doc: "|R_P| (Theorem 2 bounds it)",
    },
    MetricInfo {
        name: "clip_fraction",
        doc: "fraction of (step, sample) pairs clipped",
    },
    MetricInfo {
        name: "input_norm_dev",
        doc: "max over the unit's training and test inputs of | ||x||_2 / sqrt(d) - 1 | (0 on the sphere: the hypothesis ||x|| = sqrt(d) of Sec. 2.2 (ii))",
    },
    MetricInfo {
        name: "no_clip",
        doc: "1 if no per-sample gradient was clipped at any step (event of Eq. 15), else 0",
    },
    MetricInfo {
        name: "sup_residual",
        doc: "sup_t max_i |phi_i^T theta_t - y_i| (Eq. 17-19)",
    },
    MetricInfo {
        name: "sup_residual_over_ln_n",
        doc: "sup_t max_i |residual| / ln n",
    },
    MetricInfo {
        name: "noise_term",
        doc: "E_x[(phi(x)^T Theta~_T)^2] on the test set, Theta~ the noise-only recursion (Eq. 20)",
    },
    MetricInfo {
        name: "noise_term_exact",
        doc: "exact E_xi[noise_term] given the drawn features (prediction from theory): \
              (eta s^2/n_test) tr(Phi_test A Phi_test^T), A = sum_{k<T} (I - eta H)^{2k}, \
              H = (2/n) Phi^T Phi, s = kappa C sigma/n with Prop. 2.2's \
              sigma = sqrt(eta T) sqrt(8 ln(1/delta))/eps written out: ignores sigma_scale \
              and the engine's noise code (train::noise_term)",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: "rf_dpgd",
    model: "random_features_tanh",
    description: "full-batch DP-GD on f(x) = tanh(Vx)^T theta, squared loss, theta_0 = 0 (privacy-for-free Algorithm 1)",
    needs_target: true,
    params: &PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

/// The DP-GD configuration of a unit: eta, T, C, kappa, and sigma from Prop. 2.2
/// (times `sigma_scale`); ridge 0. Shared with [`super::engines`].
pub(super) fn dp_config(
    u: &UnitInput,
    clip_rule: dpgd::ClipRule,
) -> Result<dpgd::DpGdConfig, SystemError> {
    let steps = u.count("steps")?;
    let eta = u.var("eta")?;
    let sigma = dpgd::prop22_sigma(
        eta,
        steps,
        u.var("epsilon")?,
        u.var("delta")?,
        &u.recipe.dpgd,
    )? * u.var_or("sigma_scale", 1.0);
    Ok(dpgd::DpGdConfig {
        eta,
        steps,
        clip: u.var("clip")?,
        clip_rule,
        sigma,
        kappa: u.var("kappa")?,
        ridge: 0.0,
    })
}

/// A unit's training set (n), test set (n_test, no label noise) — both from stream
/// `data`, after the target direction — and features V (p x d) from stream `features`.
pub(super) fn sample_problem(
    u: &UnitInput,
) -> Result<(Dataset, Dataset, RandomFeatures), SystemError> {
    let (d, n, p, n_test) = u.sizes()?;
    let mut data_rng = u.seeds.rng_for("data");
    let target = target(u.data, d, &mut data_rng)?;
    let train = Dataset::sample(
        n,
        d,
        u.data.input,
        &target,
        u.data.label_noise,
        &mut data_rng,
    );
    let test = Dataset::sample(n_test, d, u.data.input, &target, 0.0, &mut data_rng);
    let model = RandomFeatures::sample(p, d, &mut u.seeds.rng_for("features"));
    Ok((train, test, model))
}

/// A unit's data sets and their random features `Phi = tanh(X V^T)` (train and test).
pub(super) struct Featurised {
    pub train: Dataset,
    pub test: Dataset,
    pub phi: Array2<f64>,
    pub phi_test: Array2<f64>,
}

/// What [`featurised`] reads besides the unit's seed path.
fn features_key(u: &UnitInput) -> Result<String, SystemError> {
    let (d, n, p, n_test) = u.sizes()?;
    Ok(format!(
        "rf_dpgd::features d={d} n={n} p={p} n_test={n_test} data={:?}",
        u.data
    ))
}

/// [`sample_problem`] and the features, shared by the units of a sweep point and
/// replicate ([`super::shared`]): the variants of a claim differ in budgets, clip rules
/// and noise scales, which the data and the features do not read. The `tanh` of the
/// features is most of a small unit's time.
pub(super) fn featurised(u: &UnitInput) -> Result<std::sync::Arc<Featurised>, SystemError> {
    u.shared(&features_key(u)?, || {
        let (train, test, model) = sample_problem(u)?;
        let phi = model.features(&train.x.view());
        let phi_test = model.features(&test.x.view());
        Ok(Featurised {
            train,
            test,
            phi,
            phi_test,
        })
    })
}

impl System for RfDpGd {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn cost(&self, u: &CostInput) -> Cost {
        let (d, n, p, nt) = (
            u.var("d", 1.0),
            u.var("n", 2.0),
            u.var("p", 1.0),
            u.var("n_test", 1.0),
        );
        let steps = u.var("steps", 1.0);
        // Data, features V (p x d), Phi (n x p) and Phi_test (n_test x p).
        let feats = features_cost(n + nt, p, d);
        let mut seconds = feats.seconds + Cost::normals(p * d);
        let mut bytes = feats.bytes + Cost::f64s(p * d + 6.0 * p + 3.0 * steps);
        let main = u.wants(&[
            "test_loss",
            "train_loss",
            "excess_risk",
            "abs_excess_risk",
            "clip_fraction",
            "no_clip",
            "sup_residual",
            "sup_residual_over_ln_n",
        ]);
        if main {
            seconds += dpgd_seconds(n, p, steps) + Cost::stream(2.0 * (n + nt) * p);
        }
        if u.wants(&["excess_risk", "abs_excess_risk", "min_norm_test_loss"]) {
            // Through the n x n Gram matrix: Phi Phi^T, a solve, Phi^T.
            seconds += Cost::gemm(2.0 * n * n * p) + Cost::eigen(n);
            bytes += Cost::f64s(2.0 * n * n + p);
        }
        if u.wants(&["noise_term"]) {
            seconds += dpgd_seconds(n, p, steps);
        }
        if u.wants(&["noise_term_exact"]) {
            // K = Phi Phi^T, its eigendecomposition, Phi_test Phi^T U.
            seconds += Cost::gemm(2.0 * n * n * p + 2.0 * nt * n * p) + Cost::eigen(n);
            bytes += Cost::f64s(3.0 * n * n + 2.0 * nt * n);
        }
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (_, n, p, n_test) = u.sizes()?;
        let steps = u.count("steps")?;
        let cfg = dp_config(u, clip_rule(u.option("clip_rule")))?;
        let shared = featurised(u)?;
        let Featurised {
            train,
            test,
            phi,
            phi_test,
        } = &*shared;
        let mut out = BTreeMap::new();
        if u.wants(&["input_norm_dev"]) {
            let d = train.x.ncols() as f64;
            let dev = train
                .x
                .rows()
                .into_iter()
                .chain(test.x.rows())
                .map(|r| (r.dot(&r).sqrt() / d.sqrt() - 1.0).abs())
                .fold(0.0_f64, f64::max);
            out.insert("input_norm_dev".into(), dev);
        }
        let problem = dpgd::Problem {
            phi: phi.view(),
            y: train.y.view(),
            test: Some((phi_test.view(), test.y.view())),
        };
        let main = [
            "test_loss",
            "train_loss",
            "excess_risk",
            "abs_excess_risk",
            "clip_fraction",
            "no_clip",
            "sup_residual",
            "sup_residual_over_ln_n",
        ];
        // Eq. 20: with quadratic loss and no clipping the dynamics are linear, so the
        // noise part Theta~ = Theta - E_B[Theta] is exactly the iterate of the noise-only
        // recursion Theta~_t = (I - eta H) Theta~_{t-1} + sqrt(eta)(kappa C/n) sigma xi_t:
        // DP-GD with labels 0, no clipping, the same noise stream (`noise_term`). When both
        // runs are wanted they step together, one pass over Phi a step (the same bits as
        // one after the other).
        let zeros = Array1::<f64>::zeros(n);
        let zeros_test = Array1::<f64>::zeros(n_test);
        let noise_problem = dpgd::Problem {
            phi: phi.view(),
            y: zeros.view(),
            test: Some((phi_test.view(), zeros_test.view())),
        };
        let cfg0 = dpgd::DpGdConfig {
            clip_rule: dpgd::ClipRule::None,
            ..cfg.clone()
        };
        let plan = dpgd::RecordPlan::ends(steps);
        let recipe = &u.recipe.dpgd;
        let (main_run, noise_run) = match (u.wants(&main), u.wants(&["noise_term"])) {
            (true, true) => {
                let mut runs = dpgd::run_shared(
                    &[problem, noise_problem],
                    &[cfg.clone(), cfg0],
                    &plan,
                    &mut u.noise_rng("noise"),
                    recipe,
                )?;
                let noise = runs.pop();
                (runs.pop(), noise)
            }
            (true, false) => {
                let rng = &mut u.noise_rng("noise");
                let run = dpgd::run(&problem, Array1::zeros(p), &cfg, &plan, rng, recipe)?;
                (Some(run), None)
            }
            (false, true) => {
                let rng = &mut u.noise_rng("noise");
                let run = dpgd::run(&noise_problem, Array1::zeros(p), &cfg0, &plan, rng, recipe)?;
                (None, Some(run))
            }
            (false, false) => (None, None),
        };
        if let Some(run) = main_run {
            let last = run.trajectory.final_loss().expect("final loss recorded");
            let test_loss = last.test.expect("test set");
            out.insert("test_loss".into(), test_loss);
            out.insert("train_loss".into(), last.train);
            out.insert(
                "clip_fraction".into(),
                run.trajectory.overall_clip_fraction(),
            );
            out.insert(
                "no_clip".into(),
                f64::from(u8::from(run.trajectory.never_clipped())),
            );
            let sup = run.trajectory.sup_abs_residual();
            out.insert("sup_residual".into(), sup);
            out.insert("sup_residual_over_ln_n".into(), sup / (n as f64).ln());
            if u.wants(&["excess_risk", "abs_excess_risk", "min_norm_test_loss"]) {
                let star = baselines::min_norm(&phi.view(), &train.y.view())?;
                let star_loss = problem.test_mse(&star.view()).expect("test set");
                out.insert("min_norm_test_loss".into(), star_loss);
                out.insert("excess_risk".into(), test_loss - star_loss);
                out.insert("abs_excess_risk".into(), (test_loss - star_loss).abs());
            }
        } else if u.wants(&["min_norm_test_loss"]) {
            let star = baselines::min_norm(&phi.view(), &train.y.view())?;
            out.insert(
                "min_norm_test_loss".into(),
                problem.test_mse(&star.view()).expect("test set"),
            );
        }
        if let Some(run) = noise_run {
            let v = run
                .trajectory
                .final_loss()
                .and_then(|l| l.test)
                .expect("test set");
            out.insert("noise_term".into(), v);
        }
        if u.wants(&["noise_term_exact"]) {
            // The theory's prediction for `noise_term`: its exact expectation over the
            // DP noise given the features (train::noise_term). sigma is Prop. 2.2's,
            // written out from the unit's variables — deliberately neither the engine's
            // sigma (`dp_config`, which applies `sigma_scale`, the negative controls'
            // wrong noise scale) nor its noise-std code, so that neither the recipe nor a
            // control of the engine's noise reaches the prediction.
            let eta = u.var("eta")?;
            let (eps, delta) = (u.var("epsilon")?, u.var("delta")?);
            let sigma = (eta * steps as f64).sqrt() * (8.0 * (1.0 / delta).ln()).sqrt() / eps;
            let s = u.var("kappa")? * u.var("clip")? * sigma / n as f64;
            // Shared by the variants (their negative controls change the engine's noise
            // scale, which this prediction deliberately does not read).
            let key = format!(
                "rf_dpgd::noise_term_exact {} eta={:x} s={:x} steps={steps}",
                features_key(u)?,
                eta.to_bits(),
                s.to_bits()
            );
            let v = *u.shared(&key, || {
                noise_term::expected_noise_term(&phi.view(), &phi_test.view(), eta, s, steps)
            })?;
            out.insert("noise_term_exact".into(), v);
        }
        Ok(out)
    }
}
