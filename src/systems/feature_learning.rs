//! Algorithm 1 of the blog "Private feature learning for single-index models (part 1)"
//! (Sec. 2.2; Assumption 4 for the hyper-parameters, written in the spec).
//!
//! One unit: draw mu, the first-layer set (n), the second-layer set (n) and a test set
//! (n_test, noiseless labels f_*(x)) from the data stream, in that order; initialise
//! (W0, b, a0) from the init stream; run Algorithm 1 (or only its first-layer gradient
//! when no second-layer metric is requested).
use super::*;
use crate::data::Dataset;
use crate::train::dpgd::{self, DpGdConfig};
use crate::train::feature_learning::{
    self as fl, A0Init, Activation, BiasInit, FeatureLearningConfig, FeatureLearningData,
    GradReduction,
};

#[derive(Debug)]
pub struct FeatureLearning;

const PARAMS: &[ParamInfo] = &[
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
        doc: "samples per data set (two disjoint sets)",
    },
    ParamInfo {
        name: "p",
        kind: ParamKind::IntAtLeast(1),
        optional: false,
        doc: "hidden neurons",
    },
    ParamInfo {
        name: "n_test",
        kind: ParamKind::IntAtLeast(1),
        optional: false,
        doc: "test samples",
    },
    ParamInfo {
        name: "eta_w",
        kind: ParamKind::NonNegative,
        optional: false,
        doc: "first-layer step eta_W",
    },
    ParamInfo {
        name: "sigma_w",
        kind: ParamKind::NonNegative,
        optional: false,
        doc: "first-layer noise sigma_W",
    },
    ParamInfo {
        name: "eta_a",
        kind: ParamKind::Positive,
        optional: true,
        doc: "second-layer step eta_a",
    },
    ParamInfo {
        name: "steps",
        kind: ParamKind::IntAtLeast(1),
        optional: true,
        doc: "second-layer steps T",
    },
    ParamInfo {
        name: "clip",
        kind: ParamKind::Positive,
        optional: true,
        doc: "second-layer clipping C_a",
    },
    ParamInfo {
        name: "lambda",
        kind: ParamKind::NonNegative,
        optional: true,
        doc: "ridge lambda",
    },
    ParamInfo {
        name: "epsilon",
        kind: ParamKind::Positive,
        optional: true,
        doc: "privacy budget (sigma_a from Assumption 4)",
    },
    ParamInfo {
        name: "delta",
        kind: ParamKind::Probability,
        optional: true,
        doc: "privacy budget delta",
    },
    ParamInfo {
        name: "kappa",
        kind: ParamKind::Positive,
        optional: true,
        doc: "noise constant: 1 as printed, 2 replace-one",
    },
    ParamInfo {
        name: "sigma_scale",
        kind: ParamKind::Positive,
        optional: true,
        doc: "multiplies sigma_a (default 1)",
    },
];

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "a0_init",
        values: &["ones_over_sqrt_p", "signs_over_sqrt_p", "signs_over_p"],
        doc: "second-layer initialisation",
    },
    OptionInfo {
        name: "grad_reduction",
        values: &["mean", "sum"],
        doc: "first-layer gradient of the mean loss, or the printed sum",
    },
    OptionInfo {
        name: "clip_rule",
        values: &["divide", "multiply", "none"],
        doc: "second-layer clipping rule",
    },
    OptionInfo {
        name: "activation",
        values: &["tanh", "square_minus_one"],
        doc: "activation of the first-layer gradient metrics (square_minus_one: the rank-one control; gradient metrics only)",
    },
    OptionInfo {
        name: "bias",
        values: &["gaussian", "zero"],
        doc: "first-layer bias at initialisation (zero: the rank-one control; gradient metrics only)",
    },
    OptionInfo {
        name: "normalise",
        values: &["yes", "no"],
        doc: "per-neuron normalisation after the first step",
    },
];

const METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "spike_ratio",
        doc: "sigma_2(G)/sigma_1(G) of the first-layer gradient G",
    },
    MetricInfo {
        name: "misalignment",
        doc: "1 - <u_1(G), mu>^2, u_1 the top left singular vector of G",
    },
    MetricInfo {
        name: "approx_residual",
        doc: "||G - A||_op/||G||_op, A = s (X^T r)(a o c)^T the Ba-type rank-one approximant (c_j = E_z sigma'(||w_j|| z + b_j) by quadrature)",
    },
    MetricInfo {
        name: "spike_content",
        doc: "1 - cos^2(u_1(G), X^T r): how far the spike is from the residual-weighted input mean",
    },
    MetricInfo {
        name: "ridge_risk",
        doc: "test risk of the non-private ridge second layer (lambda) on the printed W_1 features of the second data set (Sec. 2.4 step 3)",
    },
    MetricInfo {
        name: "ridge_objective",
        doc: "min_a (1/n)||Phi a - y||^2 + lambda ||a||^2 on the W_1 features: the best certificate's penalised loss (Sec. 2.4 step 2)",
    },
    MetricInfo {
        name: "ridge_norm",
        doc: "||a|| of the ridge second layer (lambda)",
    },
    MetricInfo {
        name: "stability_factor",
        doc: "2 eta_a (lambda + lambda_max(Phi^T Phi/n)) on the W_1 features: unclipped GD on the second layer contracts iff < 2",
    },
    MetricInfo {
        name: "test_risk",
        doc: "R(f_NN) = E_x[(f_NN(x) - f_*(x))^2] on the test set (Theorem 1)",
    },
    MetricInfo {
        name: "clip_fraction",
        doc: "fraction of (step, sample) pairs clipped in the second layer",
    },
    MetricInfo {
        name: "privacy_risk",
        doc: "test_risk minus the test risk of the same unit (same data, initialisation, first-layer noise and clipping) with sigma_a = 0: the risk the second layer's DP noise adds (Theorem 1's eps^-2 term)",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: "feature_learning",
    model: "two_layer_tanh",
    description: "blog Algorithm 1: one first-layer gradient step, normalisation + noise, then DP-GD on the second layer",
    needs_target: true,
    params: PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

impl System for FeatureLearning {
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
        let second = u.wants(&["test_risk", "clip_fraction", "privacy_risk"]);
        // With privacy_risk the second stage runs twice (with and without its noise).
        let stages = if u.wants(&["privacy_risk"]) { 2.0 } else { 1.0 };
        // First data set, W0 (d x p), the first-layer gradient through its n x p
        // activations.
        let mut seconds =
            Cost::normals(n * d + d * p) + Cost::gemm(4.0 * n * d * p) + Cost::tanh(n * p);
        let mut bytes = Cost::f64s(3.0 * n * d + 3.0 * d * p + n * p);
        let ridge = u.wants(&[
            "ridge_risk",
            "ridge_objective",
            "ridge_norm",
            "stability_factor",
        ]);
        if second || ridge {
            let feats = super::cost::features_cost(n + nt, p, d);
            seconds += feats.seconds + Cost::normals(d * p);
            bytes += feats.bytes + Cost::f64s(2.0 * d * p + 6.0 * p);
        }
        if second {
            let steps = u.var("steps", 1.0);
            seconds += stages * super::cost::dpgd_seconds(n, p, steps)
                + stages * Cost::gemm(2.0 * n * n * p);
            bytes += Cost::f64s(3.0 * steps);
        }
        if ridge {
            // Gram matrix and its eigendecomposition (ridge solve and lambda_max).
            let k = n.min(p);
            seconds += 2.0 * Cost::gemm(2.0 * n * p * k) + 2.0 * Cost::eigen(k);
            bytes += Cost::f64s(2.0 * k * k + 2.0 * n * k);
        }
        if u.wants(&["approx_residual", "spike_content"]) {
            // Two more SVDs of d x p matrices and the approximant.
            seconds += 2.0 * Cost::gemm(8.0 * d * d * p) + 2.0 * Cost::eigen(d.min(p));
            bytes += Cost::f64s(4.0 * d * p + d * d);
        }
        if u.wants(&["spike_ratio", "misalignment"]) {
            // SVD of the d x p gradient.
            seconds += Cost::gemm(8.0 * d * d * p) + Cost::eigen(d.min(p));
            bytes += Cost::f64s(2.0 * d * p + d * d);
        }
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (d, n, p, n_test) = u.sizes()?;
        let a0_init = match u.option("a0_init") {
            "signs_over_sqrt_p" => A0Init::SignsOverSqrtP,
            "signs_over_p" => A0Init::SignsOverP,
            _ => A0Init::OnesOverSqrtP,
        };
        let grad_reduction = if u.option("grad_reduction") == "sum" {
            GradReduction::Sum
        } else {
            GradReduction::Mean
        };
        let activation = if u.option("activation") == "square_minus_one" {
            Activation::SquareMinusOne
        } else {
            Activation::Tanh
        };
        let bias = if u.option("bias") == "zero" {
            BiasInit::Zero
        } else {
            BiasInit::Gaussian
        };
        let mut data_rng = u.seeds.rng_for("data");
        let target = target(u.data, d, &mut data_rng)?;
        let first = Dataset::sample(
            n,
            d,
            u.data.input,
            &target,
            u.data.label_noise,
            &mut data_rng,
        );
        let mut out = BTreeMap::new();
        let second_layer = u.wants(&["test_risk", "clip_fraction", "privacy_risk"]);
        let features = u.wants(&[
            "ridge_risk",
            "ridge_objective",
            "ridge_norm",
            "stability_factor",
        ]);
        let controls = activation != Activation::Tanh || bias != BiasInit::Gaussian;
        if controls && (second_layer || features) {
            return Err(SystemError::Invalid(
                "options activation = square_minus_one and bias = zero are controls of the first-layer gradient metrics (spike_ratio, misalignment, approx_residual, spike_content) only".into(),
            ));
        }
        let gradient = if second_layer || features {
            let second = Dataset::sample(
                n,
                d,
                u.data.input,
                &target,
                u.data.label_noise,
                &mut data_rng,
            );
            let test = Dataset::sample(n_test, d, u.data.input, &target, 0.0, &mut data_rng);
            let cfg = config(u, a0_init, grad_reduction, second_layer)?;
            let data = FeatureLearningData {
                first,
                second,
                test,
            };
            let (net, gradient) = fl::first_layer(
                &data.first,
                p,
                &cfg,
                &mut u.seeds.rng_for("init"),
                &mut u.noise_rng("noise-w"),
                u.recipe,
            )?;
            if features {
                feature_metrics(u, &net, &data, &mut out)?;
            }
            if second_layer {
                let run = fl::second_layer(
                    &data,
                    net,
                    gradient,
                    &cfg,
                    &mut u.noise_rng("noise-a"),
                    u.recipe,
                )?;
                out.insert("test_risk".into(), run.test_risk);
                if u.wants(&["privacy_risk"]) {
                    // The same unit with the second layer's noise off: the same streams, so
                    // everything but sigma_a is shared (common random numbers).
                    let mut quiet = cfg.clone();
                    quiet.second.sigma = 0.0;
                    let q = fl::run(
                        &data,
                        p,
                        &quiet,
                        &mut u.seeds.rng_for("init"),
                        &mut u.noise_rng("noise-w"),
                        &mut u.noise_rng("noise-a"),
                        u.recipe,
                    )?;
                    out.insert("privacy_risk".into(), run.test_risk - q.test_risk);
                }
                out.insert(
                    "clip_fraction".into(),
                    run.second.trajectory.overall_clip_fraction(),
                );
                run.gradient
            } else {
                gradient
            }
        } else {
            crate::linalg::pin_blas_threads();
            let net = fl::init_network_with(d, p, a0_init, bias, &mut u.seeds.rng_for("init"));
            let (g, r) = fl::first_step_with_residual(
                &net,
                &first.x.view(),
                &first.y.view(),
                grad_reduction,
                activation,
            );
            if u.wants(&["approx_residual"]) {
                let a = fl::rank_one_approximant(
                    &net,
                    &first.x.view(),
                    &r.view(),
                    grad_reduction,
                    activation,
                )?;
                let (s1, _, _) = crate::linalg::top_singular(&g.view())?;
                let (e1, _, _) = crate::linalg::top_singular(&(&g - &a).view())?;
                out.insert(
                    "approx_residual".into(),
                    if s1 > 0.0 { e1 / s1 } else { f64::NAN },
                );
            }
            if u.wants(&["spike_content"]) {
                let (_, _, u1) = crate::linalg::top_singular(&g.view())?;
                let m = first.x.t().dot(&r);
                let mm = m.dot(&m);
                let c = u1.dot(&m);
                out.insert(
                    "spike_content".into(),
                    if mm > 0.0 { 1.0 - c * c / mm } else { f64::NAN },
                );
            }
            g
        };
        if u.wants(&["spike_ratio", "misalignment"]) {
            let (s1, s2, u1) = crate::linalg::top_singular(&gradient.view())?;
            out.insert(
                "spike_ratio".into(),
                if s1 > 0.0 { s2 / s1 } else { f64::NAN },
            );
            let c = u1.dot(target.direction());
            out.insert("misalignment".into(), 1.0 - c * c);
        }
        Ok(out)
    }
}

/// Algorithm 1's configuration at the point; the second layer's parameters (eta_a, T,
/// C_a, eps, delta, kappa) are read only when the second layer runs.
fn config(
    u: &UnitInput,
    a0_init: A0Init,
    grad_reduction: GradReduction,
    second_layer: bool,
) -> Result<FeatureLearningConfig, SystemError> {
    let second = if second_layer {
        let steps = u.count("steps")?;
        let eta_a = u.var("eta_a")?;
        // sigma_a = sqrt(eta_a T) sqrt(8 ln(1/delta))/eps (Assumption 4 = Prop. 2.2 of
        // privacy-for-free).
        let sigma = dpgd::prop22_sigma(
            eta_a,
            steps,
            u.var("epsilon")?,
            u.var("delta")?,
            &u.recipe.dpgd,
        )? * u.var_or("sigma_scale", 1.0);
        DpGdConfig {
            eta: eta_a,
            steps,
            clip: u.var("clip")?,
            clip_rule: clip_rule(u.option("clip_rule")),
            sigma,
            kappa: u.var("kappa")?,
            ridge: u.var("lambda")?,
        }
    } else {
        // Only the first layer runs: the second layer's settings are unused.
        DpGdConfig {
            eta: 0.0,
            steps: 0,
            clip: 0.0,
            clip_rule: clip_rule("none"),
            sigma: 0.0,
            kappa: 1.0,
            ridge: 0.0,
        }
    };
    Ok(FeatureLearningConfig {
        eta_w: u.var("eta_w")?,
        sigma_w: u.var("sigma_w")?,
        a0_init,
        grad_reduction,
        normalise: u.option("normalise") != "no",
        second,
    })
}

/// The non-private ridge metrics on the printed W_1 features (blog Sec. 2.4, steps 2-3,
/// l. 239-240) and the stability factor of Assumption 4's eta_a (l. 191).
fn feature_metrics(
    u: &UnitInput,
    net: &crate::models::TwoLayer,
    data: &FeatureLearningData,
    out: &mut BTreeMap<String, f64>,
) -> Result<(), SystemError> {
    let lambda = u.var("lambda")?;
    let phi = net.features(&data.second.x.view());
    if u.wants(&["ridge_risk", "ridge_objective", "ridge_norm"]) {
        let fit = fl::ridge_fit(&phi.view(), &data.second.y.view(), lambda)?;
        let pt = net.features(&data.test.x.view());
        let e = pt.dot(&fit.a) - &data.test.y;
        out.insert("ridge_risk".into(), e.dot(&e) / e.len() as f64);
        out.insert("ridge_objective".into(), fit.objective);
        out.insert("ridge_norm".into(), fit.norm);
    }
    if u.wants(&["stability_factor"]) {
        let f = fl::ridge_gd_stability(&phi.view(), u.var("eta_a")?, lambda)?;
        out.insert("stability_factor".into(), f);
    }
    Ok(())
}
