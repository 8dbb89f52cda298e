//! The reduced (kernel-space) DP-GD engine against the direct engine.
use dpclaims::data::{Dataset, InputDist, Target};
use dpclaims::models::RandomFeatures;
use dpclaims::rng::SeedPath;
use dpclaims::train::dpgd::{self, ClipRule, DpGdConfig, DpGdRecipe, Problem, RecordPlan};
use dpclaims::train::reduced::{self, BatchRun, KernelProblem, TestNoise};
use dpclaims::train::{baselines, TrainError};
use ndarray::Array1;

struct Small {
    phi: ndarray::Array2<f64>,
    phi_test: ndarray::Array2<f64>,
    y: Array1<f64>,
    y_test: Array1<f64>,
    model: RandomFeatures,
    x: ndarray::Array2<f64>,
    x_test: ndarray::Array2<f64>,
}

impl Small {
    /// The reduced problem of the explicit features (exact noise law).
    fn kernel(&self) -> KernelProblem {
        KernelProblem::from_features(
            &self.phi.view(),
            &self.phi_test.view(),
            self.y.clone(),
            self.y_test.clone(),
            TestNoise::Exact,
        )
        .unwrap()
    }
}

fn small(seed: u64, n: usize, m: usize, p: usize) -> Small {
    small_d(seed, 6, n, m, p)
}

fn small_d(seed: u64, d: usize, n: usize, m: usize, p: usize) -> Small {
    let root = SeedPath::new(seed);
    let mut rng = root.rng_for("data");
    let u = dpclaims::data::unit_vector(d, &mut rng);
    let target = Target::Sign { u };
    let tr = Dataset::sample(n, d, InputDist::Gaussian, &target, 0.0, &mut rng);
    let te = Dataset::sample(m, d, InputDist::Gaussian, &target, 0.0, &mut rng);
    let model = RandomFeatures::sample(p, d, &mut root.rng_for("features"));
    Small {
        phi: model.features(&tr.x.view()),
        phi_test: model.features(&te.x.view()),
        y: tr.y,
        y_test: te.y,
        model,
        x: tr.x,
        x_test: te.x,
    }
}

fn cfg(p: usize, steps: usize, clip: f64, sigma: f64) -> DpGdConfig {
    DpGdConfig {
        eta: 1.0 / p as f64,
        steps,
        clip,
        clip_rule: ClipRule::Divide,
        sigma,
        kappa: 2.0,
        ridge: 0.0,
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// With sigma = 0 the engines compute the same trajectory: every recorded train and test
/// loss agrees to 1e-9 relative, with clipping active (p > n and p < n).
#[test]
fn noiseless_trajectories_agree() {
    for &(n, p) in &[(30usize, 200usize), (40, 25)] {
        let s = small(3, n, 15, p);
        let steps = 60;
        let c = cfg(p, steps, 0.3 * (p as f64).sqrt(), 0.0);
        let plan = RecordPlan {
            loss_at: (0..=steps).collect(),
        };
        let problem = Problem {
            phi: s.phi.view(),
            y: s.y.view(),
            test: Some((s.phi_test.view(), s.y_test.view())),
        };
        let direct = dpgd::run(
            &problem,
            Array1::zeros(p),
            &c,
            &plan,
            &mut SeedPath::new(0).rng(),
            &DpGdRecipe::PAPER,
        )
        .unwrap();
        let kp = KernelProblem::random_features(
            &s.model,
            &s.x.view(),
            s.y.clone(),
            &s.x_test.view(),
            s.y_test.clone(),
            TestNoise::Exact,
        )
        .unwrap();
        let red = reduced::run(&kp, &c, &plan.loss_at, &SeedPath::new(1)).unwrap();
        assert!(
            direct.trajectory.overall_clip_fraction() > 0.05,
            "clipping active"
        );
        assert_eq!(
            direct.trajectory.overall_clip_fraction(),
            red.overall_clip_fraction()
        );
        assert_eq!(direct.trajectory.losses.len(), red.losses.len());
        for (a, b) in direct.trajectory.losses.iter().zip(&red.losses) {
            assert_eq!(a.step, b.step);
            assert!(rel(b.train, a.train) < 1e-9, "train {a:?} vs {b:?}");
            assert!(
                rel(b.test.unwrap(), a.test.unwrap()) < 1e-9,
                "test {a:?} vs {b:?}"
            );
        }
        let sup = direct.trajectory.sup_abs_residual();
        assert!(rel(red.sup_abs_residual, sup) < 1e-9);
    }
}

/// The blocked Gram equals the explicit feature Gram (p not a multiple of the block).
#[test]
fn blocked_gram_matches_features() {
    let s = small(5, 20, 7, 1300);
    let xa = ndarray::concatenate(ndarray::Axis(0), &[s.x.view(), s.x_test.view()]).unwrap();
    let g = s.model.gram(&xa.view()).unwrap();
    let a = s.model.features(&xa.view());
    let g2 = a.dot(&a.t());
    let scale = g2.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (x, y) in g.iter().zip(g2.iter()) {
        assert!((x - y).abs() < 1e-11 * scale);
    }
    for i in 0..g.nrows() {
        for j in 0..i {
            assert_eq!(g[(i, j)], g[(j, i)], "symmetric");
        }
    }
}

/// The minimum-norm baseline in kernel space equals the direct pinv(Phi) y, both shapes.
#[test]
fn min_norm_matches_direct() {
    for &(n, p) in &[(30usize, 200usize), (40, 25)] {
        let s = small(7, n, 15, p);
        let theta = baselines::min_norm(&s.phi.view(), &s.y.view()).unwrap();
        let r = s.phi_test.dot(&theta) - &s.y_test;
        let direct = r.dot(&r) / s.y_test.len() as f64;
        let kp = s.kernel();
        let red = kp.min_norm_test_loss().unwrap();
        assert!(rel(red, direct) < 1e-8, "p={p}: {red} vs {direct}");
    }
}

/// A run inside a batch (other runs, other lengths, a shared stream) gives the same
/// losses as alone on the same stream; runs on one stream are coupled, on two are not.
#[test]
fn batch_matches_single_runs() {
    let s = small(9, 30, 10, 150);
    let kp = s.kernel();
    let streams = [SeedPath::new(11), SeedPath::new(12)];
    let mk = |steps: usize, clip: f64, stream: usize| BatchRun {
        cfg: cfg(150, steps, clip, 3.0),
        loss_at: vec![steps / 2, steps],
        stream,
    };
    let runs = vec![
        mk(20, 2.0, 0),
        mk(50, 5.0, 0),
        mk(35, 1.0, 1),
        mk(50, 5.0, 1),
    ];
    let batch = reduced::run_batch(&kp, &runs, &streams).unwrap();
    for (r, b) in runs.iter().zip(&batch) {
        let single = reduced::run(&kp, &r.cfg, &r.loss_at, &streams[r.stream]).unwrap();
        assert_eq!(single.losses.len(), b.losses.len());
        for (a, c) in single.losses.iter().zip(&b.losses) {
            assert!(rel(c.test.unwrap(), a.test.unwrap()) < 1e-12);
            assert!(rel(c.train, a.train) < 1e-12);
        }
    }
    // Same configuration on two streams: different noise.
    let t1 = batch[1].final_loss().unwrap().test.unwrap();
    let t3 = batch[3].final_loss().unwrap().test.unwrap();
    assert!(rel(t1, t3) > 1e-6);
}

/// The noise law: after one step from theta_0 = 0 with clip rule `none` and labels 0,
/// the test predictions are exactly N(0, s^2 K_tt) — null-space part included — and
/// their mean square over many streams matches s^2 mean(diag K_tt); dropping the
/// null-space noise (the negative control) visibly loses variance.
#[test]
fn one_step_noise_variance() {
    let (n, m, p) = (10usize, 6usize, 120usize);
    // d = 40: inputs in general position, so the test features are far from the span
    // of the ten training features and the null-space part carries most of the noise.
    let s = small_d(13, 40, n, m, p);
    let zeros = Array1::<f64>::zeros(n);
    let zeros_t = Array1::<f64>::zeros(m);
    let mut c = cfg(p, 1, 1.0, 1.0);
    c.clip_rule = ClipRule::None;
    let sd = c.noise_std(n);
    let expected: f64 = s
        .phi_test
        .rows()
        .into_iter()
        .map(|r| r.dot(&r))
        .sum::<f64>()
        / m as f64
        * sd
        * sd;
    let mean_sq = |noise: TestNoise| {
        let kp = KernelProblem::from_features(
            &s.phi.view(),
            &s.phi_test.view(),
            zeros.clone(),
            zeros_t.clone(),
            noise,
        )
        .unwrap();
        let reps = 4000;
        let streams: Vec<SeedPath> = (0..reps).map(|i| SeedPath::new(100).child(i)).collect();
        let runs: Vec<BatchRun> = (0..reps)
            .map(|i| BatchRun {
                cfg: c.clone(),
                loss_at: vec![1],
                stream: i,
            })
            .collect();
        let out = reduced::run_batch(&kp, &runs, &streams).unwrap();
        out.iter()
            .map(|r| r.final_loss().unwrap().test.unwrap())
            .sum::<f64>()
            / reps as f64
    };
    let exact = mean_sq(TestNoise::Exact);
    // Each run's test MSE is a mean of m correlated chi-square terms; 4000 runs give a
    // relative standard error of at most sqrt(2/4000) ~ 2.2%: allow 4 of them.
    assert!(rel(exact, expected) < 0.09, "{exact} vs {expected}");
    let span = mean_sq(TestNoise::SpanOnly);
    assert!(
        span < 0.7 * expected,
        "span-only keeps {span} of {expected}"
    );
}

#[test]
fn ridge_is_rejected_with_a_clear_error() {
    let s = small(1, 10, 5, 40);
    let kp = s.kernel();
    let mut c = cfg(40, 3, 1.0, 0.0);
    c.ridge = 0.1;
    let e = reduced::run(&kp, &c, &[3], &SeedPath::new(0)).unwrap_err();
    assert!(
        matches!(e, TrainError::InvalidConfig(ref m) if m.contains("ridge = 0")),
        "{e}"
    );
}

/// The faer kernels (the engine's default: Gram by blocked SYRK, per-step products,
/// noise mapped through the factor in blocks of `NOISE_BLOCK` steps) agree with the
/// OpenBLAS ones (the engine before faer) to 1e-10 relative on a batch with clipping,
/// noise on two streams and lengths on both sides of a noise block; and give the same
/// bytes with 1 and 2 threads (the Gram's two halves and the batch's two parts run in
/// parallel, each product sequentially).
#[test]
fn faer_kernels_agree_with_blas_and_ignore_thread_count() {
    use dpclaims::figures::fig2::batch_final_losses;
    use dpclaims::linalg::Kernels;
    let s = small_d(21, 20, 150, 75, 1500);
    let kp = |kernels| {
        KernelProblem::random_features_with(
            &s.model,
            &s.x.view(),
            s.y.clone(),
            &s.x_test.view(),
            s.y_test.clone(),
            TestNoise::Exact,
            kernels,
        )
        .unwrap()
    };
    let p = 1500;
    let mut runs = Vec::new();
    for (k, &steps) in [5usize, 63, 64, 65, 200].iter().enumerate() {
        for &(clip, eps) in &[(0.05, 1.0), (0.5, 4.0), (3.0, 2.0)] {
            let c = (p as f64).sqrt() * clip;
            let sigma =
                dpgd::prop22_sigma(1.0 / p as f64, steps, eps, 1.0 / 150.0, &DpGdRecipe::PAPER)
                    .unwrap();
            runs.push(BatchRun {
                cfg: cfg(p, steps, c, sigma),
                loss_at: vec![steps / 2, steps],
                stream: k % 2,
            });
        }
    }
    let streams = [SeedPath::new(31), SeedPath::new(32)];
    let (faer, blas) = (kp(Kernels::Faer), kp(Kernels::Blas));
    assert_eq!(faer.kernels(), Kernels::Faer);
    let a = reduced::run_batch(&faer, &runs, &streams).unwrap();
    let b = reduced::run_batch(&blas, &runs, &streams).unwrap();
    let mut worst = 0.0f64;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.losses.len(), y.losses.len());
        for (lx, ly) in x.losses.iter().zip(&y.losses) {
            assert_eq!(lx.step, ly.step);
            worst = worst
                .max(rel(lx.train, ly.train))
                .max(rel(lx.test.unwrap(), ly.test.unwrap()));
        }
        worst = worst.max(rel(x.sup_abs_residual, y.sup_abs_residual));
        assert_eq!(x.clip_fraction_sum, y.clip_fraction_sum);
    }
    eprintln!("faer vs BLAS: worst relative difference {worst:e}");
    assert!(worst < 1e-10, "faer vs BLAS: {worst:e}");
    assert!(
        a.iter().any(|r| r.clip_fraction_sum > 0.0),
        "clipping active"
    );

    let one_stream: Vec<BatchRun> = runs
        .iter()
        .map(|r| BatchRun {
            stream: 0,
            ..r.clone()
        })
        .collect();
    let bits = |threads: usize| -> Vec<u64> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let kp = kp(Kernels::Faer);
                batch_final_losses(&kp, &one_stream, &streams[0], 2)
                    .unwrap()
                    .iter()
                    .chain(&[kp.min_norm_test_loss().unwrap()])
                    .map(|v| v.to_bits())
                    .collect()
            })
    };
    assert_eq!(bits(1), bits(2));
}

/// At n >= 1024 the per-step products run in two column halves of K, one per core
/// (`reduced::step`): the batch still agrees with the OpenBLAS engine (one product in
/// one piece) to 1e-10 relative, with runs on the dense path (nothing clipped) and on
/// the sparse one (most samples clipped), lengths past a refresh (128 steps); and its
/// bytes are the same with 1 and 2 threads.
#[test]
fn column_halves_at_large_n_agree_with_blas_and_ignore_thread_count() {
    use dpclaims::linalg::Kernels;
    let (n, m, p) = (1040, 40, 60);
    let s = small(23, n, m, p);
    let kp = |kernels| s.kernel().with_kernels(kernels);
    let runs: Vec<BatchRun> = [(0.02, 130usize), (0.05, 129), (50.0, 130), (50.0, 70)]
        .iter()
        .enumerate()
        .map(|(k, &(clip, steps))| BatchRun {
            cfg: cfg(p, steps, (p as f64).sqrt() * clip, 0.5),
            loss_at: vec![steps / 2, steps],
            stream: k % 2,
        })
        .collect();
    let streams = [SeedPath::new(41), SeedPath::new(42)];
    let go = |kernels, threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| reduced::run_batch(&kp(kernels), &runs, &streams).unwrap())
    };
    let (a, b) = (go(Kernels::Faer, 2), go(Kernels::Blas, 1));
    let mut worst = 0.0f64;
    for (x, y) in a.iter().zip(&b) {
        for (lx, ly) in x.losses.iter().zip(&y.losses) {
            worst = worst
                .max(rel(lx.train, ly.train))
                .max(rel(lx.test.unwrap(), ly.test.unwrap()));
        }
        assert_eq!(x.clip_fraction_sum, y.clip_fraction_sum);
    }
    assert!(worst < 1e-10, "faer vs BLAS at n = {n}: {worst:e}");
    let frac: Vec<f64> = a.iter().map(|r| r.overall_clip_fraction()).collect();
    assert!(
        frac[0] > 0.5 && frac[2] == 0.0,
        "sparse and dense paths: {frac:?}"
    );
    let bits = |r: &[reduced::ReducedRun]| -> Vec<u64> {
        r.iter()
            .flat_map(|x| x.losses.iter().map(|l| l.test.unwrap().to_bits()))
            .collect()
    };
    assert_eq!(bits(&a), bits(&go(Kernels::Faer, 1)));
}

/// A validation split (`with_validation`): with sigma = 0 the test loss over the points
/// after the split, and the validation loss over those before it, equal the losses of
/// problems holding only those points; the min-norm baseline likewise; a split that
/// leaves no test point is an error; no split records no validation loss.
#[test]
fn validation_split_separates_the_held_out_losses() {
    let s = small(5, 30, 20, 120);
    let (k_val, steps) = (8usize, 25usize);
    let part = |lo: usize, hi: usize| {
        KernelProblem::from_features(
            &s.phi.view(),
            &s.phi_test.slice(ndarray::s![lo..hi, ..]),
            s.y.clone(),
            s.y_test.slice(ndarray::s![lo..hi]).to_owned(),
            TestNoise::Exact,
        )
        .unwrap()
    };
    let c = cfg(120, steps, 2.0, 0.0);
    let split = s.kernel().with_validation(k_val).unwrap();
    assert_eq!(split.n_val(), k_val);
    let run = reduced::run(&split, &c, &[steps], &SeedPath::new(1)).unwrap();
    let test_only = reduced::run(&part(k_val, 20), &c, &[steps], &SeedPath::new(1)).unwrap();
    let val_only = reduced::run(&part(0, k_val), &c, &[steps], &SeedPath::new(1)).unwrap();
    let t = run.final_loss().unwrap().test.unwrap();
    assert!(rel(t, test_only.final_loss().unwrap().test.unwrap()) < 1e-10);
    assert_eq!(run.val_losses.len(), 1);
    assert!(
        rel(
            run.val_losses[0],
            val_only.final_loss().unwrap().test.unwrap()
        ) < 1e-10
    );
    let mn = split.min_norm_test_loss().unwrap();
    assert!(rel(mn, part(k_val, 20).min_norm_test_loss().unwrap()) < 1e-8);
    assert!(s.kernel().with_validation(20).is_err());
    let plain = reduced::run(&s.kernel(), &c, &[steps], &SeedPath::new(1)).unwrap();
    assert!(plain.val_losses.is_empty());
}
