//! Privacy-for-free, Fig. 2 (first four panels): random features with tanh, synthetic
//! data `y = sign(u^T x)`, x ~ N(0, I_d), DP-GD (Algorithm 1) calibrated by Prop. 2.2
//! with delta = 1/n, C_clip = c sqrt(p), T = int(c_time d) (paper Sec. 3.2 and the
//! caption of Fig. 2; the authors' scripts `main_RF.py`, `main_RF_time_JAX.py`,
//! `main_RF_grid.py` fix the grids reproduced here).
//!
//! * **Loss vs p** (first panel): for each p, DP-GD at eps = 4 with eta = 1/p over the
//!   grid c_clip in {0.2, 0.5, 1} x c_time in {2, 5, 10} (the authors' grid); the cell with
//!   the lowest mean test loss over the seeds is reported (selected on the test loss, as
//!   the figure does), next to the minimum-norm interpolator pinv(Phi) y (Eq. 9).
//! * **Loss vs T** (second and third panels): eps = 4, C_clip = 0.5 sqrt(p), eta fixed
//!   (3e-5, independent of p), T = int(c_time d/(eta p)) for c_time in logspace(0, 1.2, 20);
//!   plotted against T and against eta T p/d, where the curves should collapse (Eq. 8).
//! * **Heat map** (fourth panel): p = 40 000, eta = 1/p, eps in {1, 2, 4},
//!   c_clip in logspace(-2, 1.5, 20), c_time in logspace(-1.5, 2.5, 20), T = int(c_time d).
//!
//! Every run uses the exact reduced engine ([`crate::train::reduced`]). Per seed the data
//! set is fixed across p (common random numbers along the p axis); the features are
//! drawn per (seed, p). All runs of one panel at one (seed, p) advance as one batch on a
//! shared noise stream: each run has exactly DP-GD's law, runs are coupled (common random
//! numbers across the grid, which makes the heat map smoother, not biased).
use crate::data::{unit_vector, Dataset, InputDist, Target};
use crate::linalg::Kernels;
use crate::models::RandomFeatures;
use crate::rng::SeedPath;
use crate::spec::Profile;
use crate::train::dpgd::{prop22_sigma, ClipRule, DpGdConfig, DpGdRecipe};
use crate::train::reduced::{run_batch, BatchRun, KernelProblem, TestNoise};
use crate::train::TrainError;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeSet;

/// `k` points from 10^a to 10^b, log-uniform (numpy's `logspace(a, b, k)`).
pub fn logspace(a: f64, b: f64, k: usize) -> Vec<f64> {
    if k == 1 {
        return vec![10f64.powf(a)];
    }
    (0..k)
        .map(|i| 10f64.powf(a + (b - a) * i as f64 / (k - 1) as f64))
        .collect()
}

/// Sizes and grids of the reproduction.
#[derive(Clone, Debug, Serialize)]
pub struct Fig2Config {
    pub profile: Profile,
    pub seed: u64,
    pub d: usize,
    pub n: usize,
    pub n_test: usize,
    /// Seeds (independent data sets, features and noise) of panels 1-3.
    pub seeds: usize,
    /// Panel 1: widths.
    pub p_values: Vec<usize>,
    /// Panel 1: privacy budget.
    pub eps_p: f64,
    /// Panel 1: c_clip values searched at every p.
    pub grid_clip: Vec<f64>,
    /// Panel 1: c_time values searched at every p.
    pub grid_time: Vec<f64>,
    /// Panels 2-3: widths.
    pub time_p: Vec<usize>,
    /// Panels 2-3: fixed learning rate.
    pub time_eta: f64,
    /// Panels 2-3: c_clip.
    pub time_clip: f64,
    /// Panels 2-3: c_time values (T = int(c_time d/(eta p))).
    pub time_c: Vec<f64>,
    /// Panel 4: width.
    pub heat_p: usize,
    pub heat_eps: Vec<f64>,
    pub heat_clip: Vec<f64>,
    pub heat_time: Vec<f64>,
}

impl Fig2Config {
    /// The paper's sizes (full profile) or a coarse version for CI (quick).
    pub fn new(profile: Profile, seed: u64) -> Self {
        match profile {
            Profile::Full => Fig2Config {
                profile,
                seed,
                d: 100,
                n: 2000,
                n_test: 1000,
                seeds: 5,
                p_values: vec![
                    50, 100, 200, 500, 1000, 1500, 2000, 2500, 3000, 4000, 6000, 10_000, 20_000,
                    40_000, 100_000,
                ],
                eps_p: 4.0,
                grid_clip: vec![0.2, 0.5, 1.0],
                grid_time: vec![2.0, 5.0, 10.0],
                time_p: vec![4000, 10_000, 40_000, 100_000],
                time_eta: 3e-5,
                time_clip: 0.5,
                time_c: logspace(0.0, 1.2, 20),
                heat_p: 40_000,
                heat_eps: vec![1.0, 2.0, 4.0],
                heat_clip: logspace(-2.0, 1.5, 20),
                heat_time: logspace(-1.5, 2.5, 20),
            },
            Profile::Quick => Fig2Config {
                profile,
                seed,
                d: 20,
                n: 200,
                n_test: 100,
                seeds: 2,
                p_values: vec![20, 50, 100, 200, 400, 1000, 4000],
                eps_p: 4.0,
                grid_clip: vec![0.2, 0.5, 1.0],
                grid_time: vec![2.0, 5.0, 10.0],
                time_p: vec![400, 1000, 4000],
                time_eta: 2e-3,
                time_clip: 0.5,
                time_c: logspace(0.0, 1.2, 6),
                heat_p: 4000,
                heat_eps: vec![1.0, 2.0, 4.0],
                heat_clip: logspace(-2.0, 1.5, 6),
                heat_time: logspace(-1.5, 2.5, 6),
            },
        }
    }

    fn delta(&self) -> f64 {
        1.0 / self.n as f64
    }

    /// T = int(c_time d / (eta p)) (the authors' `int(tau / eta)`, tau = c_time d/p).
    fn steps(&self, c_time: f64, eta: f64, p: usize) -> usize {
        (c_time * self.d as f64 / (eta * p as f64)).floor() as usize
    }
}

/// A row of `fig2-loss-vs-p.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct LossVsP {
    pub p: usize,
    pub method: &'static str,
    pub seed: usize,
    pub test_loss: f64,
}

/// A run of the panel-1 grid (every searched cell).
#[derive(Clone, Debug, Serialize)]
pub struct GridCell {
    pub p: usize,
    pub c_clip: f64,
    pub c_time: f64,
    pub seed: usize,
    pub test_loss: f64,
}

/// A row of `fig2-loss-vs-T.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct LossVsT {
    pub p: usize,
    pub c_time: f64,
    pub steps: usize,
    pub seed: usize,
    pub test_loss: f64,
}

/// A row of `fig2-heatmap.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct HeatCell {
    pub eps: f64,
    pub c_clip: f64,
    pub c_time: f64,
    pub steps: usize,
    pub test_loss: f64,
}

/// Everything the reproduction computed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Fig2Results {
    /// dp-gd rows at the selected cell and min-norm rows.
    pub loss_vs_p: Vec<LossVsP>,
    /// Selected (c_clip, c_time) per p.
    pub selected: Vec<(usize, f64, f64)>,
    pub grid: Vec<GridCell>,
    pub loss_vs_t: Vec<LossVsT>,
    pub heatmap: Vec<HeatCell>,
    /// The heat map's centre C = sqrt(p), eta T p/d = 1 (Eq. 8's scaling, not a grid
    /// cell), one per eps, on the heat map's noise stream (the ordinal statements of
    /// [`super::fig2_ordinal`]).
    pub heat_centre: Vec<HeatCell>,
}

/// One (seed, p) job: the panels that need this Gram matrix.
#[derive(Clone, Debug)]
struct Job {
    seed: usize,
    p: usize,
    panel1: bool,
    panel2: bool,
    panel4: bool,
}

/// What a job produced.
#[derive(Default)]
struct JobOut {
    min_norm: Option<f64>,
    grid: Vec<GridCell>,
    time: Vec<LossVsT>,
    heat: Vec<HeatCell>,
    centre: Vec<HeatCell>,
}

fn jobs(cfg: &Fig2Config) -> Vec<Job> {
    let ps: BTreeSet<usize> = cfg
        .p_values
        .iter()
        .chain(&cfg.time_p)
        .copied()
        .chain([cfg.heat_p])
        .collect();
    let mut out = Vec::new();
    for seed in 0..cfg.seeds {
        for &p in &ps {
            let job = Job {
                seed,
                p,
                panel1: cfg.p_values.contains(&p),
                panel2: cfg.time_p.contains(&p),
                panel4: seed == 0 && p == cfg.heat_p,
            };
            if job.panel1 || job.panel2 || job.panel4 {
                out.push(job);
            }
        }
    }
    // Largest first: better load balance across threads.
    out.sort_by_key(|j| std::cmp::Reverse(j.p));
    out
}

/// Number of (seed, p) jobs (for progress bars).
pub fn job_count(cfg: &Fig2Config) -> usize {
    jobs(cfg).len()
}

fn dp_cfg(
    eta: f64,
    steps: usize,
    clip: f64,
    eps: f64,
    delta: f64,
) -> Result<DpGdConfig, TrainError> {
    Ok(DpGdConfig {
        eta,
        steps,
        clip,
        clip_rule: ClipRule::Divide,
        sigma: prop22_sigma(eta, steps.max(1), eps, delta, &DpGdRecipe::PAPER)?,
        kappa: 2.0,
        ridge: 0.0,
    })
}

/// A heat-map cell's `(eps, c_clip, c_time, T)`.
pub type HeatKey = (f64, f64, f64, usize);

/// The heat map's runs (eps-major, then c_clip, then c_time) and their cells
/// `(eps, c_clip, c_time, T)`.
pub fn heatmap_runs(cfg: &Fig2Config) -> Result<(Vec<BatchRun>, Vec<HeatKey>), TrainError> {
    let p = cfg.heat_p;
    let eta = 1.0 / p as f64;
    let sqrt_p = (p as f64).sqrt();
    let mut runs = Vec::new();
    let mut cells = Vec::new();
    for &eps in &cfg.heat_eps {
        for &c in &cfg.heat_clip {
            for &ct in &cfg.heat_time {
                let steps = cfg.steps(ct, eta, p);
                runs.push(BatchRun {
                    cfg: dp_cfg(eta, steps, c * sqrt_p, eps, cfg.delta())?,
                    loss_at: vec![steps],
                    stream: 0,
                });
                cells.push((eps, c, ct, steps));
            }
        }
    }
    Ok((runs, cells))
}

/// The problem of a (seed, p) job: the seed's data set and the features at p.
pub fn kernel_problem(
    cfg: &Fig2Config,
    seed: usize,
    p: usize,
) -> Result<KernelProblem, TrainError> {
    kernel_problem_with(cfg, seed, p, Kernels::default())
}

/// [`kernel_problem`] with the given kernels for the Gram computation and the steps.
pub fn kernel_problem_with(
    cfg: &Fig2Config,
    seed: usize,
    p: usize,
    kernels: Kernels,
) -> Result<KernelProblem, TrainError> {
    let root = SeedPath::new(cfg.seed)
        .child("fig2")
        .child(format!("seed{seed}"));
    let mut data_rng = root.rng_for("data");
    let u = unit_vector(cfg.d, &mut data_rng);
    let target = Target::Sign { u };
    let train = Dataset::sample(
        cfg.n,
        cfg.d,
        InputDist::Gaussian,
        &target,
        0.0,
        &mut data_rng,
    );
    let test = Dataset::sample(
        cfg.n_test,
        cfg.d,
        InputDist::Gaussian,
        &target,
        0.0,
        &mut data_rng,
    );
    let model = RandomFeatures::sample(
        p,
        cfg.d,
        &mut root.child(format!("p{p}")).rng_for("features"),
    );
    KernelProblem::random_features_with(
        &model,
        &train.x.view(),
        train.y,
        &test.x.view(),
        test.y,
        TestNoise::Exact,
        kernels,
    )
}

/// Runs a batch in `parts` fixed parts in parallel, each on its own copy of the shared
/// stream (same draws), and returns the final test losses in the order of `runs`. The
/// parts are dealt round-robin from the runs sorted by length (longest first, ties in
/// input order), so that they carry about the same work at every step: in the heat map
/// each part gets half of the runs of every length, alternating along c_clip within
/// each eps. The split depends only on `runs` and `parts`, so the bits do not depend on
/// the number of threads.
pub fn batch_final_losses(
    kp: &KernelProblem,
    runs: &[BatchRun],
    stream: &SeedPath,
    parts: usize,
) -> Result<Vec<f64>, TrainError> {
    let parts = parts.clamp(1, runs.len().max(1));
    let mut by_length: Vec<usize> = (0..runs.len()).collect();
    by_length.sort_by_key(|&i| std::cmp::Reverse(runs[i].cfg.steps));
    let members: Vec<Vec<usize>> = (0..parts)
        .map(|k| by_length.iter().skip(k).step_by(parts).copied().collect())
        .collect();
    let outs: Vec<Result<Vec<f64>, TrainError>> = members
        .par_iter()
        .map(|m| {
            let part: Vec<BatchRun> = m.iter().map(|&i| runs[i].clone()).collect();
            Ok(run_batch(kp, &part, std::slice::from_ref(stream))?
                .iter()
                .map(|r| r.final_loss().and_then(|l| l.test).expect("loss at T"))
                .collect())
        })
        .collect();
    let mut v = vec![f64::NAN; runs.len()];
    for (m, o) in members.iter().zip(outs) {
        for (&i, l) in m.iter().zip(o?) {
            v[i] = l;
        }
    }
    Ok(v)
}

fn run_job(cfg: &Fig2Config, job: &Job) -> Result<JobOut, TrainError> {
    let at_p = SeedPath::new(cfg.seed)
        .child("fig2")
        .child(format!("seed{}", job.seed))
        .child(format!("p{}", job.p));
    let kp = kernel_problem(cfg, job.seed, job.p)?;
    let delta = cfg.delta();
    let p = job.p;
    let sqrt_p = (p as f64).sqrt();
    let mut out = JobOut::default();
    if job.panel1 {
        out.min_norm = Some(kp.min_norm_test_loss()?);
        let eta = 1.0 / p as f64;
        let mut cells = Vec::new();
        let mut runs = Vec::new();
        for &c in &cfg.grid_clip {
            for &ct in &cfg.grid_time {
                let steps = cfg.steps(ct, eta, p);
                runs.push(BatchRun {
                    cfg: dp_cfg(eta, steps, c * sqrt_p, cfg.eps_p, delta)?,
                    loss_at: vec![steps],
                    stream: 0,
                });
                cells.push((c, ct));
            }
        }
        // One part: 9 short runs whose steps are the products with K; the engine shares
        // each product between the cores (two halves of K's columns), so two parts would
        // only read K twice a step.
        let losses = batch_final_losses(&kp, &runs, &at_p.child("noise-loss-vs-p"), 1)?;
        for ((c, ct), l) in cells.into_iter().zip(losses) {
            out.grid.push(GridCell {
                p,
                c_clip: c,
                c_time: ct,
                seed: job.seed,
                test_loss: l,
            });
        }
    }
    if job.panel2 {
        let eta = cfg.time_eta;
        let runs: Vec<BatchRun> = cfg
            .time_c
            .iter()
            .map(|&ct| {
                let steps = cfg.steps(ct, eta, p);
                Ok(BatchRun {
                    cfg: dp_cfg(eta, steps, cfg.time_clip * sqrt_p, cfg.eps_p, delta)?,
                    loss_at: vec![steps],
                    stream: 0,
                })
            })
            .collect::<Result<_, TrainError>>()?;
        // One part, as panel 1 (seed 0, p = 4000: 27.2 s in two parts before the column
        // halves, 17.6-20.4 s in one part with them).
        let losses = batch_final_losses(&kp, &runs, &at_p.child("noise-loss-vs-T"), 1)?;
        for ((&ct, r), l) in cfg.time_c.iter().zip(&runs).zip(losses) {
            out.time.push(LossVsT {
                p,
                c_time: ct,
                steps: r.cfg.steps,
                seed: job.seed,
                test_loss: l,
            });
        }
    }
    if job.panel4 {
        let (runs, cells) = heatmap_runs(cfg)?;
        // Two parts, each with half of the runs of every length: 1 200 runs, whose
        // per-run work (clipped residuals, sparse updates) is shared by the cores only
        // this way (one part: 308 s, two: 161 s at paper scale).
        let losses = batch_final_losses(&kp, &runs, &at_p.child("noise-heatmap"), 2)?;
        for ((eps, c, ct, steps), l) in cells.into_iter().zip(losses) {
            out.heat.push(HeatCell {
                eps,
                c_clip: c,
                c_time: ct,
                steps,
                test_loss: l,
            });
        }
        // The centre, on the same stream (the same draws: common random numbers with
        // every cell of the map).
        let eta = 1.0 / p as f64;
        let steps = cfg.d; // eta T p/d = 1 with eta = 1/p
        let runs = cfg
            .heat_eps
            .iter()
            .map(|&eps| {
                Ok(BatchRun {
                    cfg: dp_cfg(eta, steps, sqrt_p, eps, delta)?,
                    loss_at: vec![steps],
                    stream: 0,
                })
            })
            .collect::<Result<Vec<_>, TrainError>>()?;
        let losses = batch_final_losses(&kp, &runs, &at_p.child("noise-heatmap"), 1)?;
        for (&eps, l) in cfg.heat_eps.iter().zip(losses) {
            out.centre.push(HeatCell {
                eps,
                c_clip: 1.0,
                c_time: 1.0,
                steps,
                test_loss: l,
            });
        }
    }
    Ok(out)
}

/// Runs the reproduction; `tick(label)` is called after every (seed, p) job.
pub fn run(cfg: &Fig2Config, tick: &(dyn Fn(&str) + Sync)) -> Result<Fig2Results, TrainError> {
    crate::linalg::pin_blas_threads();
    let jobs = jobs(cfg);
    let outs: Vec<Result<JobOut, TrainError>> = jobs
        .par_iter()
        .map(|j| {
            let o = run_job(cfg, j).map_err(|e| match e {
                TrainError::Diverged { step, what } => TrainError::Diverged {
                    step,
                    what: format!("{what} (fig2, seed {}, p = {})", j.seed, j.p),
                },
                other => other,
            });
            tick(&format!("seed {} p {}", j.seed, j.p));
            o
        })
        .collect();
    let mut res = Fig2Results::default();
    let mut min_norm = Vec::new();
    for (j, o) in jobs.iter().zip(outs) {
        let o = o?;
        if let Some(m) = o.min_norm {
            min_norm.push(LossVsP {
                p: j.p,
                method: "min-norm",
                seed: j.seed,
                test_loss: m,
            });
        }
        res.grid.extend(o.grid);
        res.loss_vs_t.extend(o.time);
        res.heatmap.extend(o.heat);
        res.heat_centre.extend(o.centre);
    }
    // Deterministic order whatever the job order.
    let key = |a: f64| a.to_bits();
    res.grid
        .sort_by_key(|c| (c.p, key(c.c_clip), key(c.c_time), c.seed));
    res.loss_vs_t.sort_by_key(|c| (c.p, key(c.c_time), c.seed));
    min_norm.sort_by_key(|r| (r.p, r.seed));
    // Panel 1: the grid cell with the lowest mean test loss at each p.
    for &p in &cfg.p_values {
        let mut best: Option<(f64, f64, f64)> = None;
        for &c in &cfg.grid_clip {
            for &ct in &cfg.grid_time {
                let v: Vec<f64> = res
                    .grid
                    .iter()
                    .filter(|g| g.p == p && g.c_clip == c && g.c_time == ct)
                    .map(|g| g.test_loss)
                    .collect();
                let m = v.iter().sum::<f64>() / v.len() as f64;
                if best.is_none_or(|b| m < b.0) {
                    best = Some((m, c, ct));
                }
            }
        }
        let (_, c, ct) = best.expect("non-empty grid");
        res.selected.push((p, c, ct));
        for g in res
            .grid
            .iter()
            .filter(|g| g.p == p && g.c_clip == c && g.c_time == ct)
        {
            res.loss_vs_p.push(LossVsP {
                p,
                method: "dp-gd",
                seed: g.seed,
                test_loss: g.test_loss,
            });
        }
        res.loss_vs_p
            .extend(min_norm.iter().filter(|r| r.p == p).cloned());
    }
    Ok(res)
}
