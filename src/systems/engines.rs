//! The two DP-GD engines of the random-features model checked against each other:
//! the direct p-dimensional engine ([`crate::train::dpgd`], the reference) and the exact
//! reduced kernel-space engine ([`crate::train::reduced`]).
//!
//! One unit draws one problem (data from stream `data`, features from `features`) and
//! * runs both engines with sigma = 0 and the same hyper-parameters, recording train and
//!   test loss at every step: `sigma0_max_rel_diff` is the largest relative difference;
//! * runs each engine `seeds` times with independent DP noise (direct: streams
//!   `direct/<k>`; reduced: one batch over streams `reduced/<k>`) and compares the final
//!   test losses with a two-sample Kolmogorov-Smirnov test, Welch's test of the means
//!   and the Brown-Forsythe test of the spreads ([`crate::fit::two_sample`]).
//!
//! Options select deliberately wrong reduced engines (negative controls):
//! `test_noise: span_only` drops the part of the noise outside the span of the training
//! features (the test points see too little noise); `kernel_features: redrawn` builds the
//! Gram matrix from a different draw of the features than the direct engine uses.
use super::*;
use crate::fit;
use crate::models::RandomFeatures;
use crate::train::dpgd;
use crate::train::reduced::{self, BatchRun, KernelProblem, TestNoise};
use ndarray::Array1;

#[derive(Debug)]
pub struct RfEngines;

const SEEDS: ParamInfo = ParamInfo {
    name: "seeds",
    kind: ParamKind::IntAtLeast(8),
    optional: false,
    doc: "independent DP-noise seeds per engine (the issue asks for >= 200)",
};

/// The random-features DP-GD parameters plus `seeds`.
const PARAMS: [ParamInfo; 12] = {
    let mut out = [SEEDS; 12];
    let mut i = 0;
    while i < super::rf_dpgd::PARAMS.len() {
        out[i] = super::rf_dpgd::PARAMS[i];
        i += 1;
    }
    out
};

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "test_noise",
        values: &["exact", "span_only"],
        doc: "law of the noise the test points see in the reduced engine: exact, or the span part only (wrong)",
    },
    OptionInfo {
        name: "kernel_features",
        values: &["same", "redrawn"],
        doc: "features of the reduced engine's Gram matrix: the direct engine's, or a fresh draw (wrong)",
    },
];

const METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "sigma0_max_rel_diff",
        doc: "sigma = 0: max over steps of the relative difference of train and test loss",
    },
    MetricInfo {
        name: "ks_p_value",
        doc: "two-sample Kolmogorov-Smirnov p-value, final test loss, direct vs reduced",
    },
    MetricInfo {
        name: "ks_statistic",
        doc: "Kolmogorov-Smirnov statistic D",
    },
    MetricInfo {
        name: "mean_p_value",
        doc: "Welch's test p-value for equal mean final test loss",
    },
    MetricInfo {
        name: "spread_p_value",
        doc: "Brown-Forsythe test p-value for equal spread of the final test loss",
    },
    MetricInfo {
        name: "direct_mean_test_loss",
        doc: "mean final test loss of the direct engine over the seeds",
    },
    MetricInfo {
        name: "reduced_mean_test_loss",
        doc: "mean final test loss of the reduced engine over the seeds",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: "rf_engines",
    model: "random_features_tanh",
    description: "the direct and the reduced (kernel-space) DP-GD engines on the same random-features problem",
    needs_target: true,
    params: &PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

impl System for RfEngines {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn cost(&self, u: &CostInput) -> Cost {
        use super::cost::{dpgd_seconds, features_cost};
        let (d, n, p, nt) = (
            u.var("d", 1.0),
            u.var("n", 2.0),
            u.var("p", 1.0),
            u.var("n_test", 1.0),
        );
        let (steps, seeds) = (u.var("steps", 1.0), u.var("seeds", 8.0));
        let big_n = n + nt;
        let feats = features_cost(big_n, p, d);
        let seconds = 2.0 * feats.seconds
            // sigma = 0: both engines, losses recorded at every step.
            + dpgd_seconds(n, p, steps) + (steps + 1.0) * Cost::stream(nt * p)
            // The reduced engine's Gram matrix (features again, in blocks) and factor.
            + feats.seconds + Cost::gemm(big_n * big_n * p) + Cost::eigen(big_n)
            + (steps + 1.0) * Cost::stream(2.0 * n * big_n)
            // `seeds` noisy runs of each engine.
            + seeds * dpgd_seconds(n, p, steps)
            + seeds * (steps + 1.0) * (Cost::stream(2.0 * n * big_n) + Cost::normals(big_n));
        let bytes = 2.0 * feats.bytes
            + Cost::f64s(p * d + 4.0 * big_n * big_n + 4.0 * seeds * big_n + 6.0 * p + 3.0 * steps);
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (d, n, p, _) = u.sizes()?;
        let steps = u.count("steps")?;
        let seeds = u.count("seeds")?;
        let cfg = super::rf_dpgd::dp_config(u, dpgd::ClipRule::Divide)?;
        let (train, test, model) = super::rf_dpgd::sample_problem(u)?;
        let kernel_model = match u.option("kernel_features") {
            "redrawn" => RandomFeatures::sample(p, d, &mut u.seeds.rng_for("features-redrawn")),
            _ => model.clone(),
        };
        let test_noise = match u.option("test_noise") {
            "span_only" => TestNoise::SpanOnly,
            _ => TestNoise::Exact,
        };
        let phi = model.features(&train.x.view());
        let phi_test = model.features(&test.x.view());
        let problem = dpgd::Problem {
            phi: phi.view(),
            y: train.y.view(),
            test: Some((phi_test.view(), test.y.view())),
        };
        let kp = KernelProblem::random_features(
            &kernel_model,
            &train.x.view(),
            train.y.clone(),
            &test.x.view(),
            test.y.clone(),
            test_noise,
        )?;
        let mut out = BTreeMap::new();

        // sigma = 0: the same trajectory, step by step.
        let cfg0 = dpgd::DpGdConfig {
            sigma: 0.0,
            ..cfg.clone()
        };
        let every: Vec<usize> = (0..=steps).collect();
        // The recipe: the direct engine runs the whole loop with it; the reduced engine, a
        // separate implementation of the paper's loop, only shares the noise formula
        // (`as_paper_config` below) and the calibration (sigma above) with it.
        let direct0 = dpgd::run(
            &problem,
            Array1::zeros(p),
            &cfg0,
            &dpgd::RecordPlan {
                loss_at: every.clone(),
            },
            &mut u.seeds.rng_for("unused"),
            &u.recipe.dpgd,
        )?;
        let reduced0 = reduced::run(&kp, &cfg0, &every, &u.seeds.child("unused"))?;
        let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(f64::MIN_POSITIVE);
        let worst = direct0
            .trajectory
            .losses
            .iter()
            .zip(&reduced0.losses)
            .map(|(a, b)| {
                rel(b.train, a.train).max(rel(b.test.expect("test set"), a.test.expect("test set")))
            })
            .fold(0.0f64, f64::max);
        out.insert("sigma0_max_rel_diff".into(), worst);

        // With noise: `seeds` independent runs per engine.
        let direct: Vec<f64> = (0..seeds)
            .map(|k| -> Result<f64, SystemError> {
                let mut rng = u
                    .recipe
                    .noise_rng(&u.seeds.child("direct").child(k), &u.seeds.child("data"));
                let run = dpgd::run(
                    &problem,
                    Array1::zeros(p),
                    &cfg,
                    &dpgd::RecordPlan {
                        loss_at: vec![steps],
                    },
                    &mut rng,
                    &u.recipe.dpgd,
                )?;
                Ok(run
                    .trajectory
                    .final_loss()
                    .and_then(|l| l.test)
                    .expect("test set"))
            })
            .collect::<Result<_, _>>()?;
        let streams: Vec<_> = (0..seeds)
            .map(|k| u.seeds.child("reduced").child(k))
            .collect();
        let runs: Vec<BatchRun> = (0..seeds)
            .map(|k| BatchRun {
                cfg: u.recipe.dpgd.as_paper_config(&cfg, n),
                loss_at: vec![steps],
                stream: k,
            })
            .collect();
        let reduced: Vec<f64> = reduced::run_batch(&kp, &runs, &streams)?
            .iter()
            .map(|r| r.final_loss().and_then(|l| l.test).expect("test set"))
            .collect();
        let err = |e: fit::FitError| SystemError::Invalid(e.to_string());
        let ks = fit::ks_two_sample(&direct, &reduced).map_err(err)?;
        out.insert("ks_p_value".into(), ks.p_value);
        out.insert("ks_statistic".into(), ks.statistic);
        out.insert(
            "mean_p_value".into(),
            fit::welch_test(&direct, &reduced).map_err(err)?.p_value,
        );
        out.insert(
            "spread_p_value".into(),
            fit::brown_forsythe_test(&direct, &reduced)
                .map_err(err)?
                .p_value,
        );
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        out.insert("direct_mean_test_loss".into(), mean(&direct));
        out.insert("reduced_mean_test_loss".into(), mean(&reduced));
        Ok(out)
    }
}
