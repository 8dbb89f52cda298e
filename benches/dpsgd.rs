//! DP-SGD step vs a plain batched forward/backward of the same model and batch.
//!
//! * `plain`: forward, backward, one GEMM per layer (the mean gradient).
//! * `dp-dense`: per-example squared norms from the outer-product structure, clip
//!   factors, clipped sum by one GEMM with rescaled errors, Gaussian noise on all P
//!   coordinates, division by qN ([`privatize`] with the all-ones mask).
//! * `dp-masked`: the same with a 10% support (mask before clipping: one extra GEMM
//!   per layer for the masked norms; noise on k coordinates).
//!
//! Constant seeds; data and parameters built outside the timed closures.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use dpclaims::rng::SeedPath;
use dpclaims::train::dpsgd::{
    privatize, support::random_support, Activation, Classification, DpSgdRecipe, Mask, Model,
    ModelKind, StepParams,
};
use ndarray::s;
use std::hint::black_box;

fn dp_step_vs_plain(c: &mut Criterion) {
    dpclaims::linalg::pin_blas_threads();
    let data = Classification::digits(0.2, &mut SeedPath::new(0).rng_for("data")).unwrap();
    let mut group = c.benchmark_group("dpsgd-step");
    let kinds = [
        ("logreg", ModelKind::Logreg),
        (
            "mlp32",
            ModelKind::Mlp {
                hidden: 32,
                activation: Activation::Tanh,
            },
        ),
        (
            "mlp256",
            ModelKind::Mlp {
                hidden: 256,
                activation: Activation::Relu,
            },
        ),
    ];
    for (name, kind) in kinds {
        for batch in [64usize, 256] {
            let model = Model::new(kind, data.features(), data.classes);
            let p = model.num_params();
            let theta = model.init(&mut SeedPath::new(1).rng());
            let x = data.train_x.slice(s![..batch, ..]).to_owned();
            let y = data.train_y[..batch].to_vec();
            let dense = Mask::dense(p);
            let masked = Mask::from_support(
                p,
                &random_support(p, p / 10, &mut SeedPath::new(2).rng()).unwrap(),
            )
            .unwrap();
            let params = StepParams {
                sampling_rate: batch as f64 / data.train_y.len() as f64,
                clip: 1.0,
                noise_multiplier: 1.0,
                lr: 0.5,
                recipe: DpSgdRecipe::PAPER,
            };
            let id = format!("{name}/B={batch}/P={p}");
            group.bench_function(BenchmarkId::new("plain", &id), |b| {
                b.iter(|| black_box(model.batch_gradient(&theta.view(), &x.view(), &y)))
            });
            let mut rng = SeedPath::new(3).rng();
            group.bench_function(BenchmarkId::new("dp-dense", &id), |b| {
                b.iter(|| {
                    black_box(privatize(
                        &model,
                        &theta.view(),
                        &x.view(),
                        &y,
                        batch as f64,
                        &dense,
                        &params,
                        &mut rng,
                    ))
                })
            });
            group.bench_function(BenchmarkId::new("dp-masked", &id), |b| {
                b.iter(|| {
                    black_box(privatize(
                        &model,
                        &theta.view(),
                        &x.view(),
                        &y,
                        batch as f64,
                        &masked,
                        &params,
                        &mut rng,
                    ))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, dp_step_vs_plain);
criterion_main!(benches);
