//! Criterion benches of the kernels `dpclaims perf` measures, at the sizes
//! (n = 2000, d = 100, p = 40 000; Phi is 640 MB), through the same public functions of
//! `dpclaims::perf`: the GEMV floor, the direct DP-GD step (and its gradient and noise
//! parts), the reference-style per-sample loop, and the machine's ceilings (GEMM 2000³,
//! memory read). Constant seeds; data built once, outside the timed closures; one
//! OpenBLAS thread, as in the engine.
//!
//! The table in `reports/BENCH.md` (ratios to the floor) comes from one
//! `dpclaims perf` process (`make bench`), so that every ratio is measured on the same
//! machine state; these benches give criterion's statistics for the same kernels.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use dpclaims::perf::{self, PerfProblem, PerfSizes};
use dpclaims::rng::SeedPath;
use ndarray::Array1;
use std::hint::black_box;
use std::time::Duration;

fn dpgd_step_kernels(c: &mut Criterion) {
    dpclaims::linalg::pin_blas_threads();
    let sizes = PerfSizes::full();
    let seed = SeedPath::new(0).child("perf");
    let problem = PerfProblem::build(&sizes, &seed).expect("valid problem");
    let id = format!("n{}_p{}", sizes.n, sizes.p);
    let mut rng = seed.rng_for("noise");
    let mut g = c.benchmark_group("perf");
    // Each iteration takes 0.1-1 s: a few flat samples are enough.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    g.bench_function(BenchmarkId::new("gemv_floor", &id), |b| {
        b.iter(|| black_box(perf::gemv_floor(&problem.phi.view(), &problem.theta.view())))
    });
    let mut theta = problem.theta.clone();
    let mut xi = Array1::<f64>::zeros(sizes.p);
    g.bench_function(BenchmarkId::new("direct_step", &id), |b| {
        b.iter(|| black_box(perf::direct_step(&problem, &mut theta, &mut xi, &mut rng)))
    });
    g.bench_function(BenchmarkId::new("direct_gradient", &id), |b| {
        b.iter(|| {
            black_box(dpclaims::train::dpgd::clipped_mean_gradient(
                &problem.phi.view(),
                &problem.phi_sq.view(),
                &problem.y.view(),
                &problem.theta.view(),
                problem.cfg.clip,
                problem.cfg.clip_rule,
                problem.cfg.ridge,
            ))
        })
    });
    g.bench_function(
        BenchmarkId::new("noise_draws", format!("p{}", sizes.p)),
        |b| b.iter(|| perf::noise_draws(black_box(&mut xi), &mut rng)),
    );
    let mut theta_ref = problem.theta.clone();
    g.bench_function(BenchmarkId::new("reference_loop_step", &id), |b| {
        b.iter(|| perf::reference_step(&problem, black_box(&mut theta_ref), &mut rng))
    });
    g.bench_function(BenchmarkId::new("mem_read", &id), |b| {
        b.iter(|| black_box(perf::read_sum(&problem.phi.view())))
    });
    drop(problem);
    let m = sizes.gemm_n;
    let mut gemm_rng = seed.rng_for("gemm");
    let a = dpclaims::data::gaussian_matrix(m, m, &mut gemm_rng);
    let bm = dpclaims::data::gaussian_matrix(m, m, &mut gemm_rng);
    g.bench_function(BenchmarkId::new("gemm", format!("{m}x{m}x{m}")), |b| {
        b.iter(|| black_box(a.dot(&bm)))
    });
    g.finish();
}

/// The reduced engine: 40-step runs at p = 4000 and p = 40 000 (the Gram computation is
/// done once, outside the timed closure; per step divide by 40), and one reduced run of
/// a 64-run batch on shared features (the heat map's matrix-matrix step).
fn reduced_kernels(c: &mut Criterion) {
    use dpclaims::data::{unit_vector, Dataset, InputDist, Target};
    use dpclaims::models::RandomFeatures;
    use dpclaims::train::dpgd::{prop22_sigma, ClipRule, DpGdConfig, DpGdRecipe};
    use dpclaims::train::reduced::{self, BatchRun, KernelProblem, TestNoise};
    dpclaims::linalg::pin_blas_threads();
    let seed = SeedPath::new(0).child("bench-reduced");
    let (n, m, d) = (2000, 1000, 100);
    let mut rng = seed.rng_for("data");
    let target = Target::Sign {
        u: unit_vector(d, &mut rng),
    };
    let train = Dataset::sample(n, d, InputDist::Gaussian, &target, 0.0, &mut rng);
    let test = Dataset::sample(m, d, InputDist::Gaussian, &target, 0.0, &mut rng);
    let mut g = c.benchmark_group("reduced");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for p in [4000usize, 40_000] {
        let model = RandomFeatures::sample(p, d, &mut seed.child(p).rng_for("features"));
        let kp = KernelProblem::random_features(
            &model,
            &train.x.view(),
            train.y.clone(),
            &test.x.view(),
            test.y.clone(),
            TestNoise::Exact,
        )
        .expect("kernel problem");
        let eta = 1.0 / p as f64;
        let cfg = DpGdConfig {
            eta,
            steps: 40,
            clip: 0.5 * (p as f64).sqrt(),
            clip_rule: ClipRule::Divide,
            sigma: prop22_sigma(eta, 40, 4.0, 1.0 / n as f64, &DpGdRecipe::PAPER).expect("sigma"),
            kappa: 2.0,
            ridge: 0.0,
        };
        let noise = seed.child("noise");
        g.bench_function(
            BenchmarkId::new("run_40_steps", format!("n{n}_p{p}")),
            |b| b.iter(|| black_box(reduced::run(&kp, &cfg, &[40], &noise).expect("run"))),
        );
        if p == 40_000 {
            let runs: Vec<BatchRun> = (0..64)
                .map(|_| BatchRun {
                    cfg: cfg.clone(),
                    loss_at: vec![40],
                    stream: 0,
                })
                .collect();
            g.bench_function(
                BenchmarkId::new("batch64_40_steps", format!("n{n}_p{p}")),
                |b| {
                    b.iter(|| {
                        black_box(
                            reduced::run_batch(&kp, &runs, std::slice::from_ref(&noise))
                                .expect("batch"),
                        )
                    })
                },
            );
        }
    }
    g.finish();
}

criterion_group!(benches, dpgd_step_kernels, reduced_kernels);
criterion_main!(benches);
