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

criterion_group!(benches, dpgd_step_kernels);
criterion_main!(benches);
