//! Measured speed of the DP-GD kernels, side by side in one process (issue 6, part 5).
//!
//! [`measure`] builds one random-features problem (privacy-for-free Fig. 2 at
//! n = 2000, d = 100, p = 40 000: Phi is 640 MB of f64) and times, interleaved round by
//! round so that every kernel sees the same machine state:
//!
//! * `gemv_floor_s` — the two matrix-vector passes over Phi that any direct DP-GD step
//!   must make: `f = Phi theta`, then `Phi^T w` (ndarray `dot`, i.e. the BLAS GEMV the
//!   engine uses, one OpenBLAS thread as pinned by [`crate::linalg::pin_blas_threads`]);
//! * `direct_step_s` — one step of [`dpgd::run`]'s loop: [`dpgd::clipped_mean_gradient`]
//!   then [`dpgd::apply_update`] (update and p Gaussian noise draws), the very functions
//!   `run` calls; split into its gradient (`direct_gradient_s`) and noise
//!   (`noise_draw_s`) parts;
//! * `reference_loop_step_s` — a full step (all n samples, nothing scaled) of a
//!   per-sample loop in the style of the paper's public reference implementation
//!   ([`reference_clipped_mean_gradient`]: every per-sample gradient materialised as a
//!   p-vector, its norm taken, clipped, stored in an n x p matrix, then averaged). The
//!   reference also evaluates train and test loss at every step; that is recording, not
//!   the step, and is left out here as it is for the direct step;
//! * machine ceilings, in the same process: GEMM GFLOP/s (`gemm_n`³ by ndarray `dot`, one
//!   BLAS thread) and memory read GB/s (a sum over Phi).
//!
//! Times are medians over `reps` rounds after one discarded warm-up round; ratios are of
//! medians measured in the same run. Speed is measured here and in `benches/`, never
//! asserted in tests. The kernels are public so that the criterion benches
//! (`benches/perf.rs`) time exactly the same code.
//!
//! `reduced_step_s` and `heatmap_cells_per_s` come from the reduced (kernel-space)
//! engine: see [`measure_reduced`] and [`measure_heatmap`].
use crate::data::{Dataset, InputDist, Target};
use crate::models::RandomFeatures;
use crate::rng::{SeedPath, StreamRng};
use crate::train::dpgd::{self, ClipRule, DpGdConfig, StepStats};
use crate::train::TrainError;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

/// Problem sizes and repetitions of one measurement.
#[derive(Clone, Debug, Serialize)]
pub struct PerfSizes {
    /// Training samples n.
    pub n: usize,
    /// Random features p.
    pub p: usize,
    /// Input dimension d.
    pub d: usize,
    /// Side of the square GEMM used for the GFLOP/s ceiling.
    pub gemm_n: usize,
    /// Timed rounds (after one warm-up round) of the floor, the direct step and the
    /// memory read; median reported.
    pub reps: usize,
    /// Timed rounds of the reference loop and the GEMM (each takes ~0.5 s at full size).
    pub slow_reps: usize,
    /// The p values of the reduced engine's `reduced_step_s` (the issue asks for
    /// p = 4000 and p = 40 000, with n fixed).
    pub reduced_ps: Vec<usize>,
}

impl PerfSizes {
    /// The sizes: n = 2000, d = 100, p = 40 000 (Phi is 640 MB), GEMM 2000³.
    pub fn full() -> Self {
        Self {
            n: 2000,
            p: 40_000,
            d: 100,
            gemm_n: 2000,
            reps: 7,
            slow_reps: 3,
            reduced_ps: vec![4000, 40_000],
        }
    }

    /// Small sizes for tests (everything in cache: the ratios mean little).
    pub fn quick() -> Self {
        Self {
            n: 200,
            p: 2000,
            d: 20,
            gemm_n: 300,
            reps: 3,
            slow_reps: 2,
            reduced_ps: vec![200, 2000],
        }
    }

    /// Bytes of Phi (n x p f64).
    pub fn phi_bytes(&self) -> f64 {
        (self.n * self.p * std::mem::size_of::<f64>()) as f64
    }
}

/// The problem every kernel is timed on: privacy-for-free Fig. 2 (y = sign(u.x),
/// Gaussian inputs, tanh random features) with its DP-GD hyper-parameters.
#[derive(Clone, Debug)]
pub struct PerfProblem {
    /// n x p features tanh(X V^T).
    pub phi: Array2<f64>,
    /// ||phi_i||^2 (the engine computes it once per run).
    pub phi_sq: Array1<f64>,
    pub y: Array1<f64>,
    /// Parameters the gradients are evaluated at: N(0, I_p/p), so that residuals are of
    /// order one and some, not all, per-sample gradients are clipped.
    pub theta: Array1<f64>,
    /// eta = 1/p, C = 0.5 sqrt(p), T = 5d, eps = 4, delta = 1/n, sigma from Prop. 2.2,
    /// kappa = 2 (privacy-for-free Fig. 2 parametrisation).
    pub cfg: DpGdConfig,
}

impl PerfProblem {
    /// Draws the problem from `seed` (streams `data`, `features`, `theta`).
    pub fn build(sizes: &PerfSizes, seed: &SeedPath) -> Result<Self, TrainError> {
        crate::linalg::pin_blas_threads();
        let (n, p, d) = (sizes.n, sizes.p, sizes.d);
        let mut data_rng = seed.rng_for("data");
        let u = crate::data::unit_vector(d, &mut data_rng);
        let train = Dataset::sample(
            n,
            d,
            InputDist::Gaussian,
            &Target::Sign { u },
            0.0,
            &mut data_rng,
        );
        let model = RandomFeatures::sample(p, d, &mut seed.rng_for("features"));
        let phi = model.features(&train.x.view());
        let phi_sq = crate::linalg::row_norms_sq(&phi.view());
        let theta = crate::data::gaussian_vector(p, &mut seed.rng_for("theta")) / (p as f64).sqrt();
        let eta = 1.0 / p as f64;
        let steps = 5 * d;
        let cfg = DpGdConfig {
            eta,
            steps,
            clip: 0.5 * (p as f64).sqrt(),
            clip_rule: ClipRule::Divide,
            sigma: dpgd::prop22_sigma(eta, steps, 4.0, 1.0 / n as f64, &dpgd::DpGdRecipe::PAPER)?,
            kappa: 2.0,
            ridge: 0.0,
        };
        Ok(Self {
            phi,
            phi_sq,
            y: train.y,
            theta,
            cfg,
        })
    }
}

/// The floor: the two GEMVs of a step, `f = Phi theta` and `Phi^T f`, through the same
/// `ndarray::dot` (BLAS) calls as [`dpgd::clipped_mean_gradient`].
pub fn gemv_floor(phi: &ArrayView2<f64>, theta: &ArrayView1<f64>) -> Array1<f64> {
    let f = phi.dot(theta);
    phi.t().dot(&f)
}

/// One direct DP-GD step, exactly as [`dpgd::run`]'s loop makes it:
/// [`dpgd::clipped_mean_gradient`] at `theta`, then [`dpgd::apply_update`] (p normals
/// drawn into `xi`). Returns what the step saw.
pub fn direct_step(
    problem: &PerfProblem,
    theta: &mut Array1<f64>,
    xi: &mut Array1<f64>,
    rng: &mut impl Rng,
) -> StepStats {
    let cfg = &problem.cfg;
    let (g, stats) = dpgd::clipped_mean_gradient(
        &problem.phi.view(),
        &problem.phi_sq.view(),
        &problem.y.view(),
        &theta.view(),
        cfg.clip,
        cfg.clip_rule,
        cfg.ridge,
    );
    let noise_std = cfg.noise_std(problem.y.len());
    dpgd::apply_update(theta, &g, cfg.eta, noise_std, xi, rng);
    stats
}

/// The clipped mean gradient computed the way the paper's public reference
/// implementation does (a per-sample loop, privacy-for-free repository `main_RF.py`):
/// for each sample i, `g_i = 2 phi_i (phi_i^T theta - y_i)` materialised as a new
/// p-vector, `||g_i||` computed from it, `g_i` rescaled to norm `clip` if longer; the
/// clipped gradients are stored as the rows of an n x p matrix, whose row mean is
/// returned. Standard clip rule, no ridge (privacy-for-free Algorithm 1).
///
/// Computes the same vector as [`dpgd::clipped_mean_gradient`] with
/// [`ClipRule::Divide`] and ridge 0, up to rounding (tests check 1e-10 relative).
pub fn reference_clipped_mean_gradient(
    phi: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    theta: &ArrayView1<f64>,
    clip: f64,
) -> Array1<f64> {
    let (n, p) = phi.dim();
    let mut gradients = Array2::<f64>::zeros((n, p));
    for (i, mut out) in gradients.axis_iter_mut(Axis(0)).enumerate() {
        let phi_i = phi.row(i);
        let r = phi_i.dot(theta) - y[i];
        let mut g_i: Array1<f64> = &phi_i * (2.0 * r);
        let norm = g_i.dot(&g_i).sqrt();
        if norm > clip {
            g_i *= clip / norm;
        }
        out.assign(&g_i);
    }
    gradients.mean_axis(Axis(0)).expect("n >= 1")
}

/// One reference-style step: [`reference_clipped_mean_gradient`], then
/// `theta <- theta - eta g + noise`, the noise a fresh p-vector of `N(0, noise_std^2)`.
pub fn reference_step(problem: &PerfProblem, theta: &mut Array1<f64>, rng: &mut impl Rng) {
    let cfg = &problem.cfg;
    let g = reference_clipped_mean_gradient(
        &problem.phi.view(),
        &problem.y.view(),
        &theta.view(),
        cfg.clip,
    );
    let noise_std = cfg.noise_std(problem.y.len());
    let noise: Array1<f64> = (0..theta.len())
        .map(|_| noise_std * Distribution::<f64>::sample(&StandardNormal, rng))
        .collect::<Vec<f64>>()
        .into();
    *theta = &*theta - &(g * cfg.eta) + noise;
}

/// p standard normals into `xi`: the noise part of a direct step alone.
pub fn noise_draws(xi: &mut Array1<f64>, rng: &mut impl Rng) {
    for v in xi.iter_mut() {
        *v = StandardNormal.sample(rng);
    }
}

/// A plain read of every element of `a` (their sum): the memory-read ceiling.
///
/// Rows are read eight at a time, interleaved in chunks of 8 columns, with 8 independent
/// accumulators. Why: one sequential stream is limited by the hardware prefetcher
/// (measured here: ndarray's `sum` over 640 MB reads at ~11 GB/s, eight interleaved row
/// streams at ~13.5 GB/s), and OpenBLAS's GEMV kernels also read several rows at once;
/// a single-stream "ceiling" would sit below the GEMV it is meant to bound.
pub fn read_sum(a: &ArrayView2<f64>) -> f64 {
    const ROWS: usize = 8;
    const LANES: usize = 8;
    let Some(data) = a.as_slice() else {
        return a.sum();
    };
    let cols = a.ncols();
    if cols == 0 {
        return 0.0;
    }
    let mut acc = [0.0f64; LANES];
    let mut tail = 0.0f64;
    for block in data.chunks(ROWS * cols) {
        let rows: Vec<&[f64]> = block.chunks_exact(cols).collect();
        let full = cols / LANES * LANES;
        for j in (0..full).step_by(LANES) {
            for row in &rows {
                let c = &row[j..j + LANES];
                for q in 0..LANES {
                    acc[q] += c[q];
                }
            }
        }
        for row in &rows {
            tail += row[full..].iter().sum::<f64>();
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// Machine and load context of a measurement.
#[derive(Clone, Debug, Serialize)]
pub struct MachineInfo {
    /// CPU model name (Linux `/proc/cpuinfo`), if known.
    pub cpu: Option<String>,
    /// Cores available to this process.
    pub available_parallelism: usize,
    /// OpenBLAS threads during every measurement (pinned, as in the engine).
    pub blas_threads: usize,
    /// OpenBLAS's kernel set (`openblas_get_corename`).
    pub blas_core: Option<String>,
    /// Fraction of the machine's CPU time used by *other* processes while this
    /// measurement ran (Linux `/proc/stat` minus this process's own time): 0 on an idle
    /// machine, 0.5 when one of two cores was busy elsewhere.
    pub other_cpu_fraction: Option<f64>,
}

/// Everything `dpclaims perf` reports. The first five fields are the keys.
#[derive(Clone, Debug, Serialize)]
pub struct PerfReport {
    /// Seconds per direct DP-GD step (median).
    pub direct_step_s: f64,
    /// Seconds for the two GEMVs over Phi (median).
    pub gemv_floor_s: f64,
    /// Seconds per reduced (kernel-space) step, keyed by p; empty until the reduced
    /// engine fills [`measure_reduced`].
    pub reduced_step_s: BTreeMap<String, f64>,
    /// Seconds per reference-style step (median, all n samples).
    pub reference_loop_step_s: f64,
    /// Heat-map cells (DP-GD runs) per second; `None` until [`measure_heatmap`] is filled.
    pub heatmap_cells_per_s: Option<f64>,

    /// direct_step_s / gemv_floor_s (target: at most 1.5).
    pub direct_over_floor: f64,
    /// reference_loop_step_s / direct_step_s.
    pub reference_over_direct: f64,
    /// reduced step time at the largest over the smallest p of `reduced_ps` (target at
    /// full size, p = 40 000 over p = 4000: at most 1.3); `None` without reduced times.
    pub reduced_large_over_small_p: Option<f64>,

    /// The direct step's gradient part alone ([`dpgd::clipped_mean_gradient`]).
    pub direct_gradient_s: f64,
    /// The direct step's p noise draws alone (ChaCha8, `StandardNormal`).
    pub noise_draw_s: f64,
    /// Samples of the reference loop timed per step (all n: nothing is extrapolated).
    pub reference_samples_timed: usize,
    /// ||reference gradient - direct gradient|| / ||direct gradient|| at the problem's
    /// theta, computed in this run: the two loops compute the same thing.
    pub reference_gradient_rel_diff: f64,
    /// Fraction of samples clipped at that theta.
    pub clip_fraction: f64,

    /// GEMM GFLOP/s, `2 gemm_n³ / t`, one BLAS thread.
    pub gemm_gflops: f64,
    /// Memory read GB/s: bytes of Phi / time of a sum over Phi.
    pub mem_read_gb_s: f64,
    /// Effective bandwidth of the floor: 2 x bytes of Phi / gemv_floor_s.
    pub gemv_gb_s: f64,

    pub sizes: PerfSizes,
    pub machine: MachineInfo,
    pub quick: bool,
}

fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

fn seconds(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// CPU time counters, in the kernel's clock ticks (Linux): (busy ticks of the whole
/// machine, all ticks of the whole machine, ticks used by this process).
fn cpu_ticks() -> Option<(u64, u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user]
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14, 15.
    let rest = own.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let own_ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some((total - idle, total, own_ticks))
}

/// Fraction of all CPU time between two [`cpu_ticks`] readings used by other processes.
fn other_cpu_fraction(before: (u64, u64, u64), after: (u64, u64, u64)) -> Option<f64> {
    let busy = after.0.checked_sub(before.0)? as f64;
    let total = after.1.checked_sub(before.1)? as f64;
    let own = after.2.checked_sub(before.2)? as f64;
    (total > 0.0).then(|| ((busy - own) / total).clamp(0.0, 1.0))
}

extern "C" {
    // Provided by the system OpenBLAS (see `crate::linalg`).
    fn openblas_get_corename() -> *const std::ffi::c_char;
}

/// The kernel set OpenBLAS chose for this CPU (e.g. `Haswell`, `SkylakeX`, or
/// `Prescott` when its detection does not know the CPU); `OPENBLAS_CORETYPE` overrides it.
pub fn blas_core() -> Option<String> {
    // SAFETY: OpenBLAS returns a pointer to a static NUL-terminated string.
    let p = unsafe { openblas_get_corename() };
    (!p.is_null()).then(|| {
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .trim()
            .to_string()
    })
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// Measures everything at `sizes` on a problem drawn from `seed`.
pub fn measure(sizes: &PerfSizes, seed: &SeedPath, quick: bool) -> Result<PerfReport, TrainError> {
    crate::linalg::pin_blas_threads();
    let ticks_before = cpu_ticks();
    let problem = PerfProblem::build(sizes, seed)?;
    let (n, p) = problem.phi.dim();
    let phi = problem.phi.view();

    // Same computation, two implementations: record their agreement.
    let (g_direct, stats) = dpgd::clipped_mean_gradient(
        &phi,
        &problem.phi_sq.view(),
        &problem.y.view(),
        &problem.theta.view(),
        problem.cfg.clip,
        problem.cfg.clip_rule,
        problem.cfg.ridge,
    );
    let g_ref = reference_clipped_mean_gradient(
        &phi,
        &problem.y.view(),
        &problem.theta.view(),
        problem.cfg.clip,
    );
    let diff = &g_ref - &g_direct;
    let rel_diff = (diff.dot(&diff) / g_direct.dot(&g_direct)).sqrt();

    // Floor, direct step (and its parts) and memory read, interleaved round by round;
    // round 0 is the warm-up.
    let mut rng: StreamRng = seed.rng_for("noise");
    let mut theta = problem.theta.clone();
    let mut xi = Array1::<f64>::zeros(p);
    let (mut floor, mut direct, mut grad, mut noise, mut read) =
        (vec![], vec![], vec![], vec![], vec![]);
    for round in 0..=sizes.reps {
        let t_floor = seconds(|| {
            black_box(gemv_floor(&phi, &problem.theta.view()));
        });
        let t_direct = seconds(|| {
            black_box(direct_step(&problem, &mut theta, &mut xi, &mut rng));
        });
        let t_grad = seconds(|| {
            black_box(dpgd::clipped_mean_gradient(
                &phi,
                &problem.phi_sq.view(),
                &problem.y.view(),
                &problem.theta.view(),
                problem.cfg.clip,
                problem.cfg.clip_rule,
                problem.cfg.ridge,
            ));
        });
        let t_noise = seconds(|| noise_draws(&mut xi, &mut rng));
        let t_read = seconds(|| {
            black_box(read_sum(&phi));
        });
        if round > 0 {
            floor.push(t_floor);
            direct.push(t_direct);
            grad.push(t_grad);
            noise.push(t_noise);
            read.push(t_read);
        }
    }
    let (floor, direct, grad, noise, read) = (
        median(floor),
        median(direct),
        median(grad),
        median(noise),
        median(read),
    );

    // Reference loop: whole steps (all n samples), one warm-up.
    let mut theta_ref = problem.theta.clone();
    let mut reference = vec![];
    for round in 0..=sizes.slow_reps {
        let t = seconds(|| reference_step(&problem, &mut theta_ref, &mut rng));
        if round > 0 {
            reference.push(t);
        }
    }
    let reference = median(reference);
    drop(theta_ref);

    // GEMM ceiling, one BLAS thread.
    let m = sizes.gemm_n;
    let mut gemm_rng = seed.rng_for("gemm");
    let a = crate::data::gaussian_matrix(m, m, &mut gemm_rng);
    let b = crate::data::gaussian_matrix(m, m, &mut gemm_rng);
    let mut gemm = vec![];
    for round in 0..=sizes.slow_reps {
        let t = seconds(|| {
            black_box(a.dot(&b));
        });
        if round > 0 {
            gemm.push(t);
        }
    }
    let gemm = median(gemm);

    let reduced = measure_reduced(sizes, seed);
    let heatmap = measure_heatmap(sizes, seed);
    let reduced_ratio = match (sizes.reduced_ps.first(), sizes.reduced_ps.last()) {
        (Some(lo), Some(hi)) if lo != hi => reduced
            .get(&lo.to_string())
            .zip(reduced.get(&hi.to_string()))
            .map(|(l, h)| h / l),
        _ => None,
    };

    Ok(PerfReport {
        direct_step_s: direct,
        gemv_floor_s: floor,
        reduced_step_s: reduced,
        reference_loop_step_s: reference,
        heatmap_cells_per_s: heatmap,
        direct_over_floor: direct / floor,
        reference_over_direct: reference / direct,
        reduced_large_over_small_p: reduced_ratio,
        direct_gradient_s: grad,
        noise_draw_s: noise,
        reference_samples_timed: n,
        reference_gradient_rel_diff: rel_diff,
        clip_fraction: stats.clip_fraction,
        gemm_gflops: 2.0 * (m as f64).powi(3) / gemm / 1e9,
        mem_read_gb_s: sizes.phi_bytes() / read / 1e9,
        gemv_gb_s: 2.0 * sizes.phi_bytes() / floor / 1e9,
        sizes: sizes.clone(),
        machine: MachineInfo {
            cpu: cpu_model(),
            available_parallelism: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            blas_threads: 1,
            blas_core: blas_core(),
            other_cpu_fraction: ticks_before
                .zip(cpu_ticks())
                .and_then(|(b, a)| other_cpu_fraction(b, a)),
        },
        quick,
    })
}

// ---- the reduced engine's measurements ----------------------------------------------

/// Steps timed per reduced run in [`measure_reduced`].
const REDUCED_STEPS: usize = 40;

/// Seconds per reduced DP-GD step at each p of `sizes.reduced_ps` (n = `sizes.n`,
/// n_test = n/2, one run with noise; the one-off Gram computation is not part of a
/// step), keyed by p as a decimal string. A step costs O(n (n + r)) with r <= n + n_test
/// the rank of the noise factor, so it should not grow with p.
pub fn measure_reduced(sizes: &PerfSizes, seed: &SeedPath) -> BTreeMap<String, f64> {
    use crate::train::reduced::{self, KernelProblem, TestNoise};
    let mut out = BTreeMap::new();
    let (n, m, d) = (sizes.n, sizes.n / 2, sizes.d);
    let mut data_rng = seed.rng_for("reduced-data");
    let u = crate::data::unit_vector(d, &mut data_rng);
    let target = Target::Sign { u };
    let train = Dataset::sample(n, d, InputDist::Gaussian, &target, 0.0, &mut data_rng);
    let test = Dataset::sample(m, d, InputDist::Gaussian, &target, 0.0, &mut data_rng);
    for &p in &sizes.reduced_ps {
        let model = RandomFeatures::sample(p, d, &mut seed.child(p).rng_for("reduced-features"));
        let Ok(kp) = KernelProblem::random_features(
            &model,
            &train.x.view(),
            train.y.clone(),
            &test.x.view(),
            test.y.clone(),
            TestNoise::Exact,
        ) else {
            continue;
        };
        let eta = 1.0 / p as f64;
        let Ok(sigma) = dpgd::prop22_sigma(
            eta,
            REDUCED_STEPS,
            4.0,
            1.0 / n as f64,
            &dpgd::DpGdRecipe::PAPER,
        ) else {
            continue;
        };
        let cfg = DpGdConfig {
            eta,
            steps: REDUCED_STEPS,
            clip: 0.5 * (p as f64).sqrt(),
            clip_rule: dpgd::ClipRule::Divide,
            sigma,
            kappa: 2.0,
            ridge: 0.0,
        };
        let mut times = Vec::new();
        for round in 0..=sizes.slow_reps {
            let t = seconds(|| {
                black_box(
                    reduced::run(&kp, &cfg, &[REDUCED_STEPS], &seed.child("reduced-noise")).ok(),
                );
            });
            if round > 0 {
                times.push(t / REDUCED_STEPS as f64);
            }
        }
        out.insert(p.to_string(), median(times));
    }
    out
}

/// Steps of the heat map executed by [`measure_heatmap`] before extrapolating.
const HEATMAP_PREFIX_STEPS: usize = 300;

/// Heat-map cells per second for privacy-for-free Fig. 2's heat map (1200 runs at
/// p = 40 000 with the full sizes; the quick profile's 108 runs with `--quick`),
/// **projected**: the Gram computation is timed in full, then the whole batch of runs
/// is timed for its first [`HEATMAP_PREFIX_STEPS`] steps (every run truncated there,
/// the same two parallel halves as `dpclaims fig2`), and the rest is extrapolated at the
/// measured run-steps per second. `dpclaims fig2 --profile full` runs the real thing.
pub fn measure_heatmap(sizes: &PerfSizes, seed: &SeedPath) -> Option<f64> {
    use crate::figures::fig2;
    let profile = if sizes.n < 2000 {
        crate::spec::Profile::Quick
    } else {
        crate::spec::Profile::Full
    };
    let cfg = fig2::Fig2Config::new(profile, seed.master());
    let (runs, _) = fig2::heatmap_runs(&cfg).ok()?;
    let mut kp = None;
    let t_gram = seconds(|| kp = fig2::kernel_problem(&cfg, 0, cfg.heat_p).ok());
    let kp = kp?;
    let total: usize = runs.iter().map(|r| r.cfg.steps).sum();
    let prefix: Vec<_> = runs
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.cfg.steps = r.cfg.steps.min(HEATMAP_PREFIX_STEPS);
            r.loss_at = vec![r.cfg.steps];
            r
        })
        .collect();
    let done: usize = prefix.iter().map(|r| r.cfg.steps).sum();
    let mut ok = true;
    let t_prefix = seconds(|| {
        ok = fig2::batch_final_losses(&kp, &prefix, &seed.child("heatmap-noise"), 2).is_ok();
    });
    if !ok || done == 0 {
        return None;
    }
    let projected = t_gram + t_prefix * total as f64 / done as f64;
    Some(runs.len() as f64 / projected)
}
// ---- end of the reduced engine's measurements --------------------------------------

/// One benchmark's result as criterion saved it (`<dir>/<id>/new/estimates.json`).
#[derive(Clone, Debug, PartialEq)]
pub struct CriterionEstimate {
    /// Criterion's id, e.g. `perf/gemv_floor/n2000_p40000`.
    pub id: String,
    /// Median time per iteration, seconds.
    pub median_s: f64,
    /// 95% confidence interval of the median, seconds.
    pub ci_s: (f64, f64),
}

/// The medians criterion saved for the benches of `group` under `dir` (criterion's
/// output directory, `<target dir>/criterion`), sorted by id. Missing or unreadable
/// entries are skipped: an empty list means no saved results.
pub fn criterion_estimates(dir: &std::path::Path, group: &str) -> Vec<CriterionEstimate> {
    fn walk(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "new") {
                    out.push(path);
                } else {
                    walk(&path, out);
                }
            }
        }
    }
    let read = |new: &std::path::Path| -> Option<CriterionEstimate> {
        let bench: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(new.join("benchmark.json")).ok()?)
                .ok()?;
        let est: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(new.join("estimates.json")).ok()?)
                .ok()?;
        let med = &est["median"];
        let ci = &med["confidence_interval"];
        Some(CriterionEstimate {
            id: bench["full_id"].as_str()?.to_string(),
            median_s: med["point_estimate"].as_f64()? * 1e-9,
            ci_s: (
                ci["lower_bound"].as_f64()? * 1e-9,
                ci["upper_bound"].as_f64()? * 1e-9,
            ),
        })
    };
    let mut dirs = vec![];
    walk(&dir.join(group), &mut dirs);
    let mut out: Vec<CriterionEstimate> = dirs.iter().filter_map(|d| read(d)).collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// A Markdown table of criterion's medians, with each time's ratio to the criterion
/// bench whose id contains `gemv_floor` (if any).
pub fn criterion_markdown(rows: &[CriterionEstimate]) -> String {
    let mut o = String::new();
    if rows.is_empty() {
        return o;
    }
    let floor = rows
        .iter()
        .find(|r| r.id.contains("/gemv_floor/"))
        .map(|r| r.median_s);
    let _ = writeln!(
        o,
        "\n## Criterion (`cargo bench --bench perf`, same kernels, run just before)\n"
    );
    let _ = writeln!(
        o,
        "Criterion's median per iteration and its 95% interval. These ran at another \
         moment than the table above, so compare ratios within one table.\n"
    );
    let _ = writeln!(o, "| bench | median | 95% interval | ratio to floor |");
    let _ = writeln!(o, "|---|---|---|---|");
    for r in rows {
        let ratio = floor.map_or("—".to_string(), |f| format!("{:.2}", r.median_s / f));
        let _ = writeln!(
            o,
            "| `{}` | {} | {} – {} | {ratio} |",
            r.id,
            ms(r.median_s),
            ms(r.ci_s.0),
            ms(r.ci_s.1)
        );
    }
    o
}

fn ms(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

/// The report as a Markdown page (for `reports/BENCH.md`): one table of kernels with
/// their ratio to the floor, the machine's ceilings next to it, and the context.
pub fn markdown(r: &PerfReport) -> String {
    let s = &r.sizes;
    let size = format!("n = {}, p = {}", s.n, s.p);
    let mut o = String::new();
    let _ = writeln!(o, "# Measured speed of the DP-GD kernels\n");
    let _ = writeln!(
        o,
        "Generated by `dpclaims perf --markdown` (`make bench`), all numbers from one process. \
         Medians of {} rounds (reference loop and GEMM: {}) after one warm-up round; \
         the kernels are interleaved round by round. f64, OpenBLAS pinned to {} thread \
         as in the engine.\n",
        s.reps, s.slow_reps, r.machine.blas_threads
    );
    let _ = writeln!(o, "| kernel | size | time | ratio to floor |");
    let _ = writeln!(o, "|---|---|---|---|");
    let row = |o: &mut String, k: &str, sz: &str, t: f64| {
        let _ = writeln!(o, "| {k} | {sz} | {} | {:.2} |", ms(t), t / r.gemv_floor_s);
    };
    row(
        &mut o,
        "GEMV floor: `Phi theta`, then `Phi^T w`",
        &size,
        r.gemv_floor_s,
    );
    row(
        &mut o,
        "direct DP-GD step (`clipped_mean_gradient` + `apply_update`)",
        &size,
        r.direct_step_s,
    );
    row(
        &mut o,
        "&nbsp;&nbsp;of which the clipped mean gradient",
        &size,
        r.direct_gradient_s,
    );
    row(
        &mut o,
        "&nbsp;&nbsp;of which the p noise draws (ChaCha8)",
        &format!("p = {}", s.p),
        r.noise_draw_s,
    );
    row(
        &mut o,
        "reference-style per-sample loop, one step (all n samples)",
        &size,
        r.reference_loop_step_s,
    );
    if r.reduced_step_s.is_empty() {
        let _ = writeln!(
            o,
            "| reduced (kernel-space) step | — | not measured yet | — |"
        );
    }
    for (p, t) in &r.reduced_step_s {
        row(
            &mut o,
            "reduced (kernel-space) step",
            &format!("n = {}, p = {p}", s.n),
            *t,
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "| ratio | value | target |");
    let _ = writeln!(o, "|---|---|---|");
    let _ = writeln!(
        o,
        "| direct step / floor | {:.3} | ≤ 1.5 |",
        r.direct_over_floor
    );
    let _ = writeln!(
        o,
        "| reference loop / direct step | {:.1} | — |",
        r.reference_over_direct
    );
    match r.reduced_large_over_small_p {
        Some(v) => {
            let _ = writeln!(
                o,
                "| reduced step, p = {} / p = {} | {v:.3} | ≤ 1.3 |",
                s.reduced_ps.last().unwrap_or(&0),
                s.reduced_ps.first().unwrap_or(&0)
            );
        }
        None => {
            let _ = writeln!(
                o,
                "| reduced step, largest / smallest p | not measured yet | ≤ 1.3 |"
            );
        }
    }
    match r.heatmap_cells_per_s {
        Some(v) => {
            let _ = writeln!(
                o,
                "| heat map: cells/s (1200 cells take {:.1} min) | {v:.3} | ≤ 30 min |",
                1200.0 / v / 60.0
            );
        }
        None => {
            let _ = writeln!(
                o,
                "| heat map: cells/s | not measured yet | 1200 cells ≤ 30 min |"
            );
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "Machine ceilings, measured in the same process:\n");
    let _ = writeln!(o, "| ceiling | value |");
    let _ = writeln!(o, "|---|---|");
    let _ = writeln!(
        o,
        "| GEMM {0}x{0}x{0} (ndarray `dot`, {1} BLAS thread) | {2:.1} GFLOP/s |",
        s.gemm_n, r.machine.blas_threads, r.gemm_gflops
    );
    let _ = writeln!(
        o,
        "| memory read (sum over Phi, {:.0} MB, 1 thread) | {:.1} GB/s |",
        s.phi_bytes() / 1e6,
        r.mem_read_gb_s
    );
    let _ = writeln!(
        o,
        "| GEMV floor's effective bandwidth (2 x {:.0} MB / floor) | {:.1} GB/s |",
        s.phi_bytes() / 1e6,
        r.gemv_gb_s
    );
    let _ = writeln!(o);
    let core = r.machine.blas_core.as_deref().unwrap_or("unknown");
    let _ = writeln!(o, "OpenBLAS kernel set: {core}.");
    if core == "Prescott" {
        let _ = writeln!(
            o,
            "OpenBLAS did not recognise this CPU and fell back to its generic SSE3 \
             (Prescott) kernels. `OPENBLAS_CORETYPE=SkylakeX` (AVX-512) or `Haswell` (AVX2) \
             selects faster GEMM kernels where the CPU has them (measured here: GEMM \
             2000³ about 3x faster with SkylakeX); the GEMVs of the direct step are \
             memory-bound and barely change. Results computed with other kernels may \
             differ in the last bits."
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Context: {} ({} cores available); d = {}; privacy-for-free Fig. 2 \
         hyper-parameters (eta = 1/p, C = 0.5 sqrt(p), eps = 4), clip fraction {:.3} at the \
         timed theta. The reference loop materialises every per-sample gradient and \
         computes the same gradient as the direct step (relative difference {:.1e} in \
         this run); its time is one full step, not extrapolated.",
        r.machine.cpu.as_deref().unwrap_or("unknown CPU"),
        r.machine.available_parallelism,
        s.d,
        r.clip_fraction,
        r.reference_gradient_rel_diff
    );
    if let Some(f) = r.machine.other_cpu_fraction {
        let _ = writeln!(
            o,
            "\nOther processes used {:.0}% of the machine's CPU time during this measurement{}",
            100.0 * f,
            if f > 0.05 {
                " (other jobs were running): absolute times are noisy; the ratios, \
                 measured in the same process with the kernels interleaved, less so."
            } else {
                "."
            }
        );
    }
    if r.quick {
        let _ = writeln!(
            o,
            "\n**Quick sizes** (`--quick`): everything fits in cache; not a measurement of \
             the issue's targets."
        );
    }
    o
}
