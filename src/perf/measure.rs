//! One `dpclaims perf` measurement: the kernels side by side, the machine's ceilings and
//! kernels in use, and the reduced engine's step and heat-map rate.
use super::kernels::*;
use crate::data::{Dataset, InputDist, Target};
use crate::models::RandomFeatures;
use crate::rng::{SeedPath, StreamRng};
use crate::train::dpgd::{self, DpGdConfig};
use crate::train::TrainError;
use ndarray::Array1;
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;
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
    /// What ran the reduced engine's products (the Gram computation and the per-step
    /// products, hence the heat map): `"faer <simd level>"` or `"openblas <core>"`
    /// ([`crate::linalg::Kernels::describe`]).
    pub gemm_backend: String,
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
    /// Heat-map cells (DP-GD runs) per second, projected ([`measure_heatmap`]); `None`
    /// if the heat map could not be set up.
    pub heatmap_cells_per_s: Option<f64>,
    /// How the heat map's time was projected (its parts).
    pub heatmap: Option<HeatmapProjection>,
    /// The reduced engine's per-step product (`rows` runs' rows times the n x n K)
    /// with each kernel set, interleaved: GFLOP/s.
    pub reduced_gemm: Vec<GemmRate>,
    /// The privacy accountants on standard cases ([`super::privacy`]): RDP and the
    /// certified PLD bracket, with their times.
    pub accountants: Vec<super::privacy::AccountantTiming>,

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
    let reduced_gemm = measure_reduced_gemm(sizes, seed);
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
        heatmap_cells_per_s: heatmap.as_ref().map(|h| h.runs as f64 / h.projected_s),
        heatmap,
        reduced_gemm,
        accountants: super::privacy::measure_accountants().unwrap_or_default(),
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
            blas_core: crate::linalg::blas_core(),
            gemm_backend: crate::linalg::Kernels::default().describe(),
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

/// GFLOP/s of one product shape with one kernel set.
#[derive(Clone, Debug, Serialize)]
pub struct GemmRate {
    /// [`crate::linalg::Kernels::describe`].
    pub kernels: String,
    /// Rows of the left factor (runs moving at a step of one half of the heat map).
    pub rows: usize,
    /// Side of K.
    pub n: usize,
    pub gflops: f64,
}

/// The reduced engine's per-step product, `(rows x n) (n x n)`, with faer and with
/// OpenBLAS, interleaved round by round (medians of `sizes.reps`): at 600 rows (half of
/// the heat map's 1200 runs, its first steps) and 30 (its last 12 000 steps).
pub fn measure_reduced_gemm(sizes: &PerfSizes, seed: &SeedPath) -> Vec<GemmRate> {
    use crate::linalg::{matmul_into, Kernels};
    let n = sizes.n;
    let mut rng = seed.rng_for("reduced-gemm");
    let a = crate::data::gaussian_matrix(n, n, &mut rng);
    let k = a.dot(&a.t());
    let kinds = [Kernels::Faer, Kernels::Blas];
    let mut out = Vec::new();
    for rows in [n * 3 / 10, n * 3 / 200] {
        let cr = crate::data::gaussian_matrix(rows, n, &mut rng);
        let mut c = ndarray::Array2::<f64>::zeros((rows, n));
        let mut times = vec![vec![]; kinds.len()];
        for round in 0..=sizes.reps {
            for (i, &kern) in kinds.iter().enumerate() {
                let t = seconds(|| matmul_into(kern, &cr.view(), &k.view(), c.view_mut()));
                if round > 0 {
                    times[i].push(t);
                }
            }
        }
        for (i, &kern) in kinds.iter().enumerate() {
            out.push(GemmRate {
                kernels: kern.describe(),
                rows,
                n,
                gflops: 2.0 * (rows * n * n) as f64 / median(std::mem::take(&mut times[i])) / 1e9,
            });
        }
    }
    out
}

/// How [`measure_heatmap`] projected the heat map's wall time.
#[derive(Clone, Debug, Serialize)]
pub struct HeatmapProjection {
    /// Kernels the engine ran ([`crate::linalg::Kernels::describe`]).
    pub kernels: String,
    /// Runs (cells) of the heat map, steps of its longest run, and run-steps (the sum
    /// of every run's T).
    pub runs: usize,
    pub steps: usize,
    pub run_steps: usize,
    /// Seconds of the Gram computation and its factor, timed in full.
    pub gram_s: f64,
    /// The two timed samples: the runs (all their T, in full) of the c_clip values
    /// with these indices, for each eps; their run counts and wall seconds.
    pub sample_clip_indices: [Vec<usize>; 2],
    pub sample_runs: [usize; 2],
    pub sample_s: [f64; 2],
    /// Fitted wall seconds `fixed_s + per_run_s x runs` of the batch (without the Gram).
    pub fixed_s: f64,
    pub per_run_s: f64,
    /// `gram_s + fixed_s + per_run_s x runs`.
    pub projected_s: f64,
}

/// The 1200-run heat map of privacy-for-free Fig. 2 (p = 40 000 with the full sizes;
/// the quick profile's 108 runs when `sizes.n` < 2000), **projected** with the engine's
/// default kernels; see [`measure_heatmap_with`].
pub fn measure_heatmap(sizes: &PerfSizes, seed: &SeedPath) -> Option<HeatmapProjection> {
    measure_heatmap_with(sizes, seed, crate::linalg::Kernels::default())
}

/// Times the heat map's Gram computation in full, then two samples of its runs in full
/// through `dpclaims fig2`'s own batch function (two parallel parts): for each eps,
/// all 20 T of the c_clip values with indices 2, 6, 10, 14, 18 (a quarter of the runs)
/// and of 6, 14 (a tenth). A run's cost per step changes along the run (the reduced
/// engine's product updates become sparse as samples get clipped, which depends on
/// eps, c_clip and the step), so the samples run the real schedule over a spread of
/// c_clip rather than a prefix of steps. The batch's wall time is fitted as
/// `fixed + per_run x runs` through the two samples (the fixed part: the noise draws
/// and the memory traffic of K that a step costs whatever the number of runs) and
/// evaluated at all the runs. `dpclaims fig2 --profile full` runs the real thing.
pub fn measure_heatmap_with(
    sizes: &PerfSizes,
    seed: &SeedPath,
    kernels: crate::linalg::Kernels,
) -> Option<HeatmapProjection> {
    use crate::figures::fig2;
    let profile = if sizes.n < 2000 {
        crate::spec::Profile::Quick
    } else {
        crate::spec::Profile::Full
    };
    let cfg = fig2::Fig2Config::new(profile, seed.master());
    let (runs, cells) = fig2::heatmap_runs(&cfg).ok()?;
    let mut kp = None;
    let gram_s = seconds(|| kp = fig2::kernel_problem_with(&cfg, 0, cfg.heat_p, kernels).ok());
    let kp = kp?;
    let nc = cfg.heat_clip.len();
    let indices: [Vec<usize>; 2] = [(2..nc).step_by(4).collect(), (6..nc).step_by(8).collect()];
    let mut sample_runs = [0usize; 2];
    let mut sample_s = [0.0f64; 2];
    for (k, idx) in indices.iter().enumerate() {
        let sample: Vec<_> = runs
            .iter()
            .zip(&cells)
            .filter(|(_, cell)| {
                let c = cfg.heat_clip.iter().position(|&c| c == cell.1);
                c.is_some_and(|c| idx.contains(&c))
            })
            .map(|(r, _)| r.clone())
            .collect();
        if sample.is_empty() {
            // The quick profile's 6 c_clip values have no second sample: scale the first.
            continue;
        }
        let mut ok = true;
        sample_s[k] = seconds(|| {
            ok = fig2::batch_final_losses(&kp, &sample, &seed.child("heatmap-noise"), 2).is_ok();
        });
        if !ok {
            return None;
        }
        sample_runs[k] = sample.len();
    }
    if sample_runs[0] == 0 {
        return None;
    }
    let (ra, rb) = (sample_runs[0] as f64, sample_runs[1] as f64);
    let (ta, tb) = (sample_s[0], sample_s[1]);
    let mut per_run_s = if ra != rb { (ta - tb) / (ra - rb) } else { 0.0 };
    let mut fixed_s = tb - per_run_s * rb;
    if !(per_run_s > 0.0 && fixed_s >= 0.0) {
        // Timing noise (or too small a problem): scale the larger sample instead.
        (fixed_s, per_run_s) = (0.0, ta / ra);
    }
    Some(HeatmapProjection {
        kernels: kernels.describe(),
        runs: runs.len(),
        steps: runs.iter().map(|r| r.cfg.steps).max().unwrap_or(0),
        run_steps: runs.iter().map(|r| r.cfg.steps).sum(),
        gram_s,
        sample_clip_indices: indices,
        sample_runs,
        sample_s,
        fixed_s,
        per_run_s,
        projected_s: gram_s + fixed_s + per_run_s * runs.len() as f64,
    })
}
// ---- end of the reduced engine's measurements --------------------------------------
