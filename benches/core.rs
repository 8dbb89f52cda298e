//! Criterion benches of the training core's kernels (constant seeds, data built outside
//! the timed closures). Compare `dpgd_step` with `gemv_floor` — the two matrix-vector
//! passes over Phi that any DP-GD step must make — as a ratio measured in the same run.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use dpclaims::rng::SeedPath;
use dpclaims::train::dpgd::{self, ClipRule};
use std::hint::black_box;

fn dpgd_kernels(c: &mut Criterion) {
    dpclaims::linalg::pin_blas_threads();
    let mut g = c.benchmark_group("dpgd");
    g.sample_size(20);
    for &(n, p) in &[(500usize, 4000usize), (2000, 4000)] {
        let mut rng = SeedPath::new(1).rng();
        let phi = dpclaims::data::gaussian_matrix(n, p, &mut rng).mapv(f64::tanh);
        let y = dpclaims::data::gaussian_vector(n, &mut rng);
        let theta = dpclaims::data::gaussian_vector(p, &mut rng) * 0.01;
        let phi_sq = dpclaims::linalg::row_norms_sq(&phi.view());
        let id = format!("n{n}_p{p}");
        g.bench_with_input(BenchmarkId::new("gemv_floor", &id), &(), |b, _| {
            b.iter(|| {
                let f = phi.dot(&theta);
                black_box(phi.t().dot(&f))
            })
        });
        g.bench_with_input(
            BenchmarkId::new("clipped_mean_gradient", &id),
            &(),
            |b, _| {
                b.iter(|| {
                    black_box(dpgd::clipped_mean_gradient(
                        &phi.view(),
                        &phi_sq.view(),
                        &y.view(),
                        &theta.view(),
                        1.0,
                        ClipRule::Divide,
                        0.0,
                    ))
                })
            },
        );
    }
    g.finish();
}

fn features(c: &mut Criterion) {
    dpclaims::linalg::pin_blas_threads();
    let mut rng = SeedPath::new(2).rng();
    let x = dpclaims::data::gaussian_matrix(2000, 100, &mut rng);
    let model = dpclaims::models::RandomFeatures::sample(4000, 100, &mut rng);
    c.bench_function("rf_features_n2000_d100_p4000", |b| {
        b.iter(|| black_box(model.features(&x.view())))
    });
}

/// The certified PLD accountant and RDP on the standard case (q = 0.01, z = 1,
/// 10 000 steps, delta = 1e-5; target: bracket at most 0.01 wide in under 0.5 s).
fn accountants(c: &mut Criterion) {
    use dpclaims::privacy::{self, pld, Accountant, AccountantRecipe, Phase};
    let phases = [Phase::new(0.01, 1.0, 10_000)];
    let mut g = c.benchmark_group("accountants");
    g.sample_size(10);
    g.bench_function("pld_q0.01_z1_T10000", |b| {
        b.iter(|| black_box(pld::pld_epsilon(&phases, 1e-5, pld::DEFAULT_WIDTH).unwrap()))
    });
    g.bench_function("rdp_q0.01_z1_T10000", |b| {
        b.iter(|| {
            black_box(
                privacy::epsilon(Accountant::Rdp, &phases, 1e-5, &AccountantRecipe::PAPER).unwrap(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, dpgd_kernels, features, accountants);
criterion_main!(benches);
