//! The training core: clipping, DP-GD, baselines, Algorithm 1, Hermite, determinism.
use dpclaims::data::hermite::{he, hermite_coefficients};
use dpclaims::data::{Dataset, InputDist, Target};
use dpclaims::models::{RandomFeatures, TwoLayer};
use dpclaims::rng::SeedPath;
use dpclaims::train::dpgd::{self, ClipRule, DpGdConfig, DpGdRecipe, Problem, RecordPlan};
use dpclaims::train::feature_learning::{
    self, first_layer_gradient, A0Init, FeatureLearningConfig, GradReduction,
};
use dpclaims::train::{baselines, Recipe, TrainError};
use ndarray::{Array1, Array2};

/// A small random-features problem (d = 8, n = 12, p = 30 unless given).
fn rf_problem(seed: u64, n: usize, p: usize) -> (Array2<f64>, Array1<f64>) {
    let root = SeedPath::new(seed);
    let mut rng = root.rng_for("data");
    let d = 8;
    let u = dpclaims::data::unit_vector(d, &mut rng);
    let ds = Dataset::sample(
        n,
        d,
        InputDist::Gaussian,
        &Target::Sign { u },
        0.1,
        &mut rng,
    );
    let model = RandomFeatures::sample(p, d, &mut root.rng_for("features"));
    (model.features(&ds.x.view()), ds.y)
}

/// DP-GD on (phi, y) without a test set, recording nothing but the per-step stats.
fn run_without_test(
    phi: &Array2<f64>,
    y: &Array1<f64>,
    theta0: Array1<f64>,
    cfg: &DpGdConfig,
    rng: &mut dpclaims::rng::StreamRng,
) -> Result<dpgd::DpGdRun, TrainError> {
    let problem = Problem {
        phi: phi.view(),
        y: y.view(),
        test: None,
    };
    dpgd::run(
        &problem,
        theta0,
        cfg,
        &RecordPlan::default(),
        rng,
        &DpGdRecipe::PAPER,
    )
}

fn rel_err(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let diff = a - b;
    diff.dot(&diff).sqrt() / b.dot(b).sqrt().max(1e-300)
}

/// Brute force: materialise every per-sample gradient, clip it, average.
fn brute_force_clipped_mean(
    phi: &Array2<f64>,
    y: &Array1<f64>,
    theta: &Array1<f64>,
    clip: f64,
    rule: ClipRule,
    ridge: f64,
) -> (Array1<f64>, f64) {
    let n = y.len();
    let mut sum = Array1::<f64>::zeros(theta.len());
    let mut clipped = 0;
    for i in 0..n {
        let phi_i = phi.row(i);
        let r = phi_i.dot(theta) - y[i];
        let g: Array1<f64> = &phi_i * (2.0 * r) + &(theta * (2.0 * ridge));
        let norm = g.dot(&g).sqrt();
        let factor = (norm / clip).max(1.0);
        if norm > clip {
            clipped += 1;
        }
        let gc = match rule {
            ClipRule::Divide => &g / factor,
            ClipRule::Multiply => &g * factor,
            ClipRule::None => g.clone(),
        };
        sum += &gc;
    }
    (sum / n as f64, clipped as f64 / n as f64)
}

#[test]
fn analytic_clipping_equals_brute_force_per_sample_gradients() {
    let (phi, y) = rf_problem(1, 12, 30);
    let phi_sq = dpclaims::linalg::row_norms_sq(&phi.view());
    let theta = dpclaims::data::gaussian_vector(30, &mut SeedPath::new(2).rng()) * 0.3;
    for rule in [ClipRule::Divide, ClipRule::Multiply, ClipRule::None] {
        for ridge in [0.0, 0.05] {
            for clip in [0.5, 2.0, 5.0, f64::INFINITY] {
                let (g, stats) = dpgd::clipped_mean_gradient(
                    &phi.view(),
                    &phi_sq.view(),
                    &y.view(),
                    &theta.view(),
                    clip,
                    rule,
                    ridge,
                );
                let (g_bf, frac) = brute_force_clipped_mean(&phi, &y, &theta, clip, rule, ridge);
                let e = rel_err(&g, &g_bf);
                assert!(e < 1e-12, "{rule:?} ridge {ridge} C {clip}: rel err {e:e}");
                assert!((stats.clip_fraction - frac).abs() < 1e-15);
            }
        }
    }
}

/// The analytic clipping must actually clip: a negative control where the brute force
/// is compared with the *unclipped* gradient must differ.
#[test]
fn clipping_changes_the_gradient_when_norms_exceed_c() {
    let (phi, y) = rf_problem(1, 12, 30);
    let phi_sq = dpclaims::linalg::row_norms_sq(&phi.view());
    let theta = Array1::zeros(30);
    let (g, stats) = dpgd::clipped_mean_gradient(
        &phi.view(),
        &phi_sq.view(),
        &y.view(),
        &theta.view(),
        0.5,
        ClipRule::Divide,
        0.0,
    );
    let (g_none, _) = brute_force_clipped_mean(&phi, &y, &theta, 0.5, ClipRule::None, 0.0);
    assert!(stats.clip_fraction > 0.5);
    assert!(rel_err(&g, &g_none) > 0.1);
}

/// Plain GD (`baselines`, BLAS GEMVs) and DP-GD without noise or clipping agree to
/// rounding: bit for bit while both used the GEMVs, to 1e-12 since the DP-GD step sums in
/// its own fixed order (src/train/dpgd/pass.rs). A finite clip threshold (negative
/// control) moves it by far more.
#[test]
fn dpgd_without_noise_or_clipping_is_plain_gd() {
    let (phi, y) = rf_problem(3, 12, 30);
    for ridge in [0.0, 0.01] {
        let cfg = DpGdConfig {
            eta: 0.05,
            steps: 200,
            clip: f64::INFINITY,
            clip_rule: ClipRule::Divide,
            sigma: 0.0,
            kappa: 2.0,
            ridge,
        };
        let run = run_without_test(
            &phi,
            &y,
            Array1::zeros(30),
            &cfg,
            &mut SeedPath::new(0).rng(),
        )
        .unwrap();
        let gd = baselines::gradient_descent(
            &phi.view(),
            &y.view(),
            Array1::zeros(30),
            0.05,
            200,
            ridge,
        );
        let e = rel_err(&run.theta, &gd);
        assert!(e < 1e-12, "ridge {ridge}: relative difference {e:e}");
        let clipped = DpGdConfig { clip: 0.5, ..cfg };
        let run = run_without_test(
            &phi,
            &y,
            Array1::zeros(30),
            &clipped,
            &mut SeedPath::new(0).rng(),
        )
        .unwrap();
        assert!(
            rel_err(&run.theta, &gd) > 1e-3,
            "ridge {ridge}: clipping changes nothing"
        );
    }
}

#[test]
fn gd_from_zero_converges_to_the_min_norm_interpolator_when_p_exceeds_n() {
    let (phi, y) = rf_problem(4, 10, 60);
    let star = baselines::min_norm(&phi.view(), &y.view()).unwrap();
    // Interpolates.
    let fit = phi.dot(&star);
    assert!(rel_err(&fit, &y) < 1e-10);
    // eta below 2/lambda_max of the Hessian (2/n) Phi^T Phi.
    let h = phi.t().dot(&phi) * (2.0 / 10.0);
    let (lam, _) = dpclaims::linalg::sym_eig(&h.view()).unwrap();
    let eta = 1.0 / lam[lam.len() - 1];
    let gd =
        baselines::gradient_descent(&phi.view(), &y.view(), Array1::zeros(60), eta, 200_000, 0.0);
    let e = rel_err(&gd, &star);
    assert!(e < 1e-8, "GD vs pinv: rel err {e:e}");
    // Ridge with a tiny lambda is close to it too; with a big lambda it is not.
    let r = baselines::ridge(&phi.view(), &y.view(), 1e-10).unwrap();
    assert!(rel_err(&r, &star) < 1e-6);
    let r = baselines::ridge(&phi.view(), &y.view(), 1.0).unwrap();
    assert!(rel_err(&r, &star) > 0.1);
}

fn small_net(seed: u64, d: usize, p: usize) -> TwoLayer {
    let mut rng = SeedPath::new(seed).rng();
    TwoLayer {
        w: dpclaims::data::gaussian_matrix(d, p, &mut rng) / (d as f64).sqrt(),
        b: dpclaims::data::gaussian_vector(p, &mut rng),
        a: A0Init::SignsOverSqrtP.sample(p, &mut rng),
    }
}

#[test]
fn first_layer_gradient_equals_central_finite_differences() {
    let (d, p, n) = (5, 7, 9);
    let net = small_net(5, d, p);
    let mut rng = SeedPath::new(6).rng();
    let mu = dpclaims::data::unit_vector(d, &mut rng);
    let target = Target::SingleIndex {
        mu,
        coeffs: vec![0.0, 1.0, 0.5],
    };
    let ds = Dataset::sample(n, d, InputDist::Gaussian, &target, 0.0, &mut rng);
    let loss = |w: &Array2<f64>| {
        let net2 = TwoLayer {
            w: w.clone(),
            ..net.clone()
        };
        let r = net2.predict(&ds.x.view()) - &ds.y;
        r.dot(&r) / n as f64
    };
    let g = first_layer_gradient(&net, &ds.x.view(), &ds.y.view(), GradReduction::Mean);
    let g_sum = first_layer_gradient(&net, &ds.x.view(), &ds.y.view(), GradReduction::Sum);
    let h = 1e-6;
    for k in 0..d {
        for j in 0..p {
            let mut wp = net.w.clone();
            wp[[k, j]] += h;
            let mut wm = net.w.clone();
            wm[[k, j]] -= h;
            let fd = (loss(&wp) - loss(&wm)) / (2.0 * h);
            assert!(
                (fd - g[[k, j]]).abs() < 1e-7 * (1.0 + fd.abs()),
                "({k},{j}): fd {fd} vs analytic {}",
                g[[k, j]]
            );
            assert!(
                (g_sum[[k, j]] - n as f64 * g[[k, j]]).abs() < 1e-12 * (1.0 + g_sum[[k, j]].abs())
            );
        }
    }
}

fn fl_config(steps: usize) -> FeatureLearningConfig {
    FeatureLearningConfig {
        eta_w: 1.0,
        sigma_w: 0.01,
        a0_init: A0Init::OnesOverSqrtP,
        grad_reduction: GradReduction::Mean,
        normalise: true,
        second: DpGdConfig {
            eta: 0.05,
            steps,
            clip: 5.0,
            clip_rule: ClipRule::Divide,
            sigma: 0.5,
            kappa: 1.0,
            ridge: 1e-3,
        },
    }
}

fn fl_run(seed: u64) -> feature_learning::FeatureLearningRun {
    let root = SeedPath::new(seed);
    let mut rng = root.rng_for("data");
    let d = 10;
    let mu = dpclaims::data::unit_vector(d, &mut rng);
    let target = Target::SingleIndex {
        mu,
        coeffs: vec![0.0, 1.0, 0.5],
    };
    let data = feature_learning::FeatureLearningData {
        first: Dataset::sample(200, d, InputDist::Gaussian, &target, 0.0, &mut rng),
        second: Dataset::sample(200, d, InputDist::Gaussian, &target, 0.0, &mut rng),
        test: Dataset::sample(300, d, InputDist::Gaussian, &target, 0.0, &mut rng),
    };
    feature_learning::run(
        &data,
        40,
        &fl_config(100),
        &mut root.rng_for("init"),
        &mut root.rng_for("noise-w"),
        &mut root.rng_for("noise-a"),
        &Recipe::PAPER,
    )
    .unwrap()
}

#[test]
fn algorithm1_end_to_end_normalises_neurons_and_learns() {
    let run = fl_run(7);
    assert_eq!(run.gradient.dim(), (10, 40));
    // After normalisation + small noise, every neuron has norm close to 1.
    for col in run.net.w.columns() {
        let norm = col.dot(&col).sqrt();
        assert!((norm - 1.0).abs() < 0.1, "neuron norm {norm}");
    }
    let first = run.second.trajectory.losses.first().unwrap();
    let last = run.second.trajectory.final_loss().unwrap();
    assert!(last.train < first.train, "{first:?} -> {last:?}");
    assert!(run.test_risk.is_finite());
}

#[test]
fn same_seed_same_bits_different_seed_different_bits() {
    let a = fl_run(11);
    let b = fl_run(11);
    let c = fl_run(12);
    let bits = |r: &feature_learning::FeatureLearningRun| {
        dpclaims::rng::digest_f64s(r.net.a.iter().chain(r.net.w.iter()).copied())
    };
    assert_eq!(bits(&a), bits(&b));
    assert_ne!(bits(&a), bits(&c));
}

/// A full DP-GD run (the demo, min-norm baseline included) gives identical output bytes
/// whatever `OPENBLAS_NUM_THREADS` says: OpenBLAS rounds differently with 2 threads, so
/// dpclaims pins it to one (`linalg::pin_blas_threads`). OpenBLAS reads the variable at
/// start-up, so each run is its own process.
#[test]
fn openblas_thread_count_does_not_change_a_dpgd_run() {
    let run = |threads: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            .args([
                "demo", "--json", "--d", "20", "--n", "300", "--p", "1500", "--n-test", "200",
            ])
            .env("OPENBLAS_NUM_THREADS", threads)
            .output()
            .expect("run dpclaims demo");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(one, two);
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert!(v["test_loss"].as_f64().unwrap().is_finite());
}

#[test]
fn diverging_run_is_an_error_naming_the_step() {
    let (phi, y) = rf_problem(8, 12, 30);
    let cfg = DpGdConfig {
        eta: 1e3,
        steps: 1000,
        clip: f64::INFINITY,
        clip_rule: ClipRule::Divide,
        sigma: 0.0,
        kappa: 2.0,
        ridge: 0.0,
    };
    let err = run_without_test(
        &phi,
        &y,
        Array1::zeros(30),
        &cfg,
        &mut SeedPath::new(0).rng(),
    )
    .unwrap_err();
    assert!(matches!(err, TrainError::Diverged { .. }), "{err}");
    assert!(err.to_string().contains("step"));
}

#[test]
fn invalid_configs_are_rejected() {
    let base = DpGdConfig {
        eta: 0.1,
        steps: 1,
        clip: 1.0,
        clip_rule: ClipRule::Divide,
        sigma: 1.0,
        kappa: 2.0,
        ridge: 0.0,
    };
    for bad in [
        DpGdConfig {
            eta: 0.0,
            ..base.clone()
        },
        DpGdConfig {
            clip: f64::INFINITY,
            ..base.clone()
        },
        DpGdConfig {
            sigma: -1.0,
            ..base.clone()
        },
        DpGdConfig {
            kappa: f64::NAN,
            ..base.clone()
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
    assert!(base.validate().is_ok());
    assert!(dpgd::prop22_sigma(0.1, 10, 100.0, 1e-3, &DpGdRecipe::PAPER).is_err()); // eps >= 8 ln(1/delta)
    assert!(dpgd::prop22_sigma(0.1, 10, 1.0, 1.5, &DpGdRecipe::PAPER).is_err());
    let s = dpgd::prop22_sigma(0.01, 100, 2.0, 1e-5, &DpGdRecipe::PAPER).unwrap();
    assert!((s - (8.0 * 1e5f64.ln()).sqrt() / 2.0).abs() < 1e-12);
}

/// Noise has the scale sqrt(eta) kappa C sigma / n: with Phi = 0 (no gradient), theta_T
/// is a sum of T Gaussian vectors, so its empirical variance per coordinate must be
/// T (sqrt(eta) kappa C sigma/n)^2.
#[test]
fn injected_noise_has_the_stated_scale() {
    let (n, p) = (10, 4000);
    let phi = Array2::<f64>::zeros((n, p));
    let y = Array1::<f64>::zeros(n);
    let cfg = DpGdConfig {
        eta: 0.04,
        steps: 25,
        clip: 3.0,
        clip_rule: ClipRule::Divide,
        sigma: 2.0,
        kappa: 2.0,
        ridge: 0.0,
    };
    let run = run_without_test(
        &phi,
        &y,
        Array1::zeros(p),
        &cfg,
        &mut SeedPath::new(9).rng(),
    )
    .unwrap();
    let var = run.theta.dot(&run.theta) / p as f64;
    let expected = 25.0 * (0.2 * 2.0 * 3.0 * 2.0 / 10.0f64).powi(2);
    // Relative sd of a chi-square mean over 4000 coordinates is sqrt(2/4000) ~ 2.2%.
    assert!(
        (var / expected - 1.0).abs() < 0.1,
        "var {var} vs {expected}"
    );
    // Negative control: kappa = 1 halves the std (quarter of the variance) — caught.
    assert!((var / (expected / 4.0) - 1.0).abs() > 0.5);
}

#[test]
fn hermite_coefficients_of_known_functions() {
    // He_k itself: alpha_k = sqrt(k!), others 0.
    for k in 0..6usize {
        let a = hermite_coefficients(|z| he(k, z), 8).unwrap();
        let kfact: f64 = (1..=k).map(|i| i as f64).product();
        for (j, &aj) in a.iter().enumerate() {
            let want = if j == k { kfact.sqrt() } else { 0.0 };
            assert!(
                (aj - want).abs() < 1e-10,
                "He_{k}: alpha_{j} = {aj}, want {want}"
            );
        }
    }
    // tanh is odd: even coefficients vanish; alpha_1 = E[tanh'(Z)] = E[1 - tanh^2(Z)].
    let a = hermite_coefficients(f64::tanh, 9).unwrap();
    for j in (0..=9).step_by(2) {
        assert!(a[j].abs() < 1e-10, "tanh alpha_{j} = {}", a[j]);
    }
    let dtanh = dpclaims::data::hermite::GaussHermite::new(160)
        .unwrap()
        .expect(|z| 1.0 - z.tanh().powi(2));
    assert!((a[1] - dtanh).abs() < 1e-10);
    assert!(a[1] > 0.5 && a[1] < 0.7, "alpha_1(tanh) = {}", a[1]);
    // tanh(z + b) with b != 0 has a non-zero even part.
    let ab = hermite_coefficients(|z| (z + 0.7).tanh(), 4).unwrap();
    assert!(ab[0].abs() > 0.1 && ab[2].abs() > 1e-3);
    // Parseval: sum alpha_k^2 = E[f^2].
    let a = hermite_coefficients(|z| (z + 0.7).tanh(), 60).unwrap();
    let e2 = dpclaims::data::hermite::GaussHermite::new(160)
        .unwrap()
        .expect(|z| (z + 0.7).tanh().powi(2));
    let s: f64 = a.iter().map(|v| v * v).sum();
    assert!((s - e2).abs() < 1e-8, "Parseval {s} vs {e2}");
}

#[test]
fn single_index_target_matches_its_hermite_series() {
    let mut rng = SeedPath::new(13).rng();
    let mu = dpclaims::data::unit_vector(6, &mut rng);
    let coeffs = vec![0.0, 1.0, 0.0, 0.5];
    let t = Target::SingleIndex {
        mu: mu.clone(),
        coeffs,
    };
    let x = dpclaims::data::gaussian_matrix(5, 6, &mut rng);
    let y = t.eval(&x.view());
    for i in 0..5 {
        let z = x.row(i).dot(&mu);
        let want = z + 0.5 * (z * z * z - 3.0 * z) / 6f64.sqrt();
        assert!((y[i] - want).abs() < 1e-12);
    }
    // Normalised inputs have norm sqrt(d).
    let xs = dpclaims::data::inputs(4, 9, InputDist::Sphere, &mut rng);
    for r in xs.rows() {
        assert!((r.dot(&r) - 9.0).abs() < 1e-12);
    }
}

/// ndarray's `dot` must call BLAS: its product equals a direct `cblas_dgemm` call on the
/// same data bit for bit (ndarray's pure-Rust fallback, matrixmultiply, blocks and
/// rounds differently), and it differs from a naive triple loop's rounding somewhere.
#[test]
fn ndarray_dot_goes_through_blas() {
    let mut rng = SeedPath::new(14).rng();
    let (m, k, n) = (96, 257, 80);
    let a = dpclaims::data::gaussian_matrix(m, k, &mut rng);
    let b = dpclaims::data::gaussian_matrix(k, n, &mut rng);
    let c = a.dot(&b);
    let mut c_blas = vec![0.0f64; m * n];
    unsafe {
        cblas_sys::cblas_dgemm(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            m as i32,
            n as i32,
            k as i32,
            1.0,
            a.as_ptr(),
            k as i32,
            b.as_ptr(),
            n as i32,
            0.0,
            c_blas.as_mut_ptr(),
            n as i32,
        );
    }
    let same = c
        .iter()
        .zip(&c_blas)
        .all(|(x, y)| x.to_bits() == y.to_bits());
    assert!(
        same,
        "ndarray::dot differs from cblas_dgemm: not using BLAS"
    );
    let mut naive_differs = false;
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k).map(|l| a[[i, l]] * b[[l, j]]).sum();
            naive_differs |= s.to_bits() != c[[i, j]].to_bits();
        }
    }
    assert!(
        naive_differs,
        "the bitwise comparison cannot tell implementations apart"
    );
}

/// `Dataset::len` and `Dataset::is_empty` (public, and what a caller checks before
/// training on a sample): an empty sample is empty, a sample of one or more is not.
#[test]
fn a_dataset_says_whether_it_is_empty() {
    let mut rng = SeedPath::new(3).rng_for("data");
    let u = dpclaims::data::unit_vector(4, &mut rng);
    let target = Target::Sign { u };
    for n in [0usize, 1, 5] {
        let ds = Dataset::sample(n, 4, InputDist::Gaussian, &target, 0.1, &mut rng);
        assert_eq!((ds.len(), ds.x.nrows()), (n, n));
        assert_eq!(ds.is_empty(), n == 0, "a sample of {n}");
    }
}
