//! The exact expectation of the Eq. 20 noise term (`train::noise_term`, metric
//! `noise_term_exact` of `rf_dpgd`) against a direct p x p computation and against
//! Monte-Carlo averages of the simulated `noise_term`.
use dpclaims::data::{Dataset, InputDist, Target};
use dpclaims::faults::Fault;
use dpclaims::models::RandomFeatures;
use dpclaims::rng::SeedPath;
use dpclaims::spec::{DataSpec, TargetSpec};
use dpclaims::systems::{self, UnitInput};
use dpclaims::train::dpgd::{self, ClipRule, DpGdConfig, DpGdRecipe, Problem, RecordPlan};
use dpclaims::train::noise_term::{expected_noise_term, sum_sq_powers};
use dpclaims::train::Recipe;
use ndarray::{Array1, Array2};
use std::collections::{BTreeMap, BTreeSet};

/// Random-features matrices (train n x p, test m x p) from a fixed seed.
fn features(seed: u64, d: usize, n: usize, m: usize, p: usize) -> (Array2<f64>, Array2<f64>) {
    let root = SeedPath::new(seed).child("noise-exact");
    let mut rng = root.rng_for("data");
    let target = Target::Sign {
        u: dpclaims::data::unit_vector(d, &mut rng),
    };
    let tr = Dataset::sample(n, d, InputDist::Gaussian, &target, 0.0, &mut rng);
    let te = Dataset::sample(m, d, InputDist::Gaussian, &target, 0.0, &mut rng);
    let model = RandomFeatures::sample(p, d, &mut root.rng_for("features"));
    (model.features(&tr.x.view()), model.features(&te.x.view()))
}

/// `(eta s^2 / m) tr(Phi_test A Phi_test^T)` with `A = sum_{k<T} (I - eta H)^{2k}` summed
/// as matrix powers in dimension p.
fn direct(phi: &Array2<f64>, phi_test: &Array2<f64>, eta: f64, s: f64, steps: usize) -> f64 {
    let (n, p) = phi.dim();
    let h = phi.t().dot(phi) * (2.0 / n as f64);
    let m = Array2::<f64>::eye(p) - &h * eta;
    let m2 = m.dot(&m);
    let mut pow = Array2::<f64>::eye(p);
    let mut a = Array2::<f64>::zeros((p, p));
    for _ in 0..steps {
        a += &pow;
        pow = pow.dot(&m2);
    }
    let tr = (phi_test.dot(&a) * phi_test).sum();
    eta * s * s * tr / phi_test.nrows() as f64
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn closed_form_of_the_geometric_sum() {
    for &steps in &[1usize, 2, 7, 50] {
        for &x in &[
            0.0, 1e-13, 1e-6, 0.01, 0.5, 0.999, 1.0, 1.3, 1.999, 2.0, 2.5,
        ] {
            let r2: f64 = (1.0 - x) * (1.0 - x);
            let want: f64 = (0..steps).map(|k| r2.powi(k as i32)).sum();
            let got = sum_sq_powers(x, steps);
            assert!(
                rel(got, want) < 1e-10,
                "x = {x}, T = {steps}: {got} vs {want}"
            );
        }
    }
    assert_eq!(sum_sq_powers(0.3, 0), 0.0);
}

/// The spectral formula equals the direct p x p sum of matrix powers, with p < n (the
/// Gram matrix K is singular) and p > n (H has a null space), for step sizes with
/// eta lambda_max below and above 1.
#[test]
fn spectral_formula_matches_direct_matrix_powers() {
    let (n, m, steps, s) = (6usize, 5usize, 7usize, 0.37);
    for &p in &[4usize, 15] {
        let (phi, phi_test) = features(11, 3, n, m, p);
        let h_max = {
            let k = phi.dot(&phi.t());
            let (mu, _) = dpclaims::linalg::sym_eig(&k.view()).unwrap();
            2.0 * mu[mu.len() - 1] / n as f64
        };
        for &eta in &[1.0 / p as f64, 0.5 / h_max, 1.5 / h_max] {
            let want = direct(&phi, &phi_test, eta, s, steps);
            let got = expected_noise_term(&phi.view(), &phi_test.view(), eta, s, steps).unwrap();
            assert!(
                rel(got, want) < 1e-10,
                "p = {p}, eta = {eta}: spectral {got} vs direct {want}"
            );
        }
    }
}

/// The noise-only recursion exactly as `rf_dpgd` simulates `noise_term` (DP-GD with
/// labels 0, no clipping): its final test MSE.
fn simulated_noise_term(
    phi: &Array2<f64>,
    phi_test: &Array2<f64>,
    cfg: &DpGdConfig,
    noise: &SeedPath,
) -> f64 {
    let (n, p) = phi.dim();
    let zeros = Array1::<f64>::zeros(n);
    let zeros_test = Array1::<f64>::zeros(phi_test.nrows());
    let problem = Problem {
        phi: phi.view(),
        y: zeros.view(),
        test: Some((phi_test.view(), zeros_test.view())),
    };
    let run = dpgd::run(
        &problem,
        Array1::zeros(p),
        cfg,
        &RecordPlan::ends(cfg.steps),
        &mut noise.rng(),
        &DpGdRecipe::PAPER,
    )
    .unwrap();
    run.trajectory.final_loss().unwrap().test.unwrap()
}

/// Mean and standard error.
fn mean_se(v: &[f64]) -> (f64, f64) {
    let k = v.len() as f64;
    let mean = v.iter().sum::<f64>() / k;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (mean, (var / k).sqrt())
}

/// Same features, 400 noise seeds: the mean of the simulated noise term is within 4
/// standard errors of the exact expectation (p > n and p < n).
#[test]
fn monte_carlo_mean_matches_the_exact_expectation_same_features() {
    let (d, n, m, steps) = (5usize, 20usize, 20usize, 12usize);
    for &p in &[40usize, 12] {
        let (phi, phi_test) = features(5, d, n, m, p);
        let cfg = DpGdConfig {
            eta: 1.0 / p as f64,
            steps,
            clip: 0.5 * (p as f64).sqrt(),
            clip_rule: ClipRule::None,
            sigma: 1.7,
            kappa: 2.0,
            ridge: 0.0,
        };
        let s = cfg.kappa * cfg.clip * cfg.sigma / n as f64;
        let exact = expected_noise_term(&phi.view(), &phi_test.view(), cfg.eta, s, steps).unwrap();
        let noise = SeedPath::new(7).child("noise-exact-mc").child(p);
        let draws: Vec<f64> = (0..400)
            .map(|i| simulated_noise_term(&phi, &phi_test, &cfg, &noise.child(i)))
            .collect();
        let (mean, se) = mean_se(&draws);
        eprintln!(
            "p = {p}: MC mean {mean:.6e} ± {se:.2e}, exact {exact:.6e}, ratio {:.4}",
            mean / exact
        );
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "p = {p}: MC mean {mean} (se {se}) vs exact {exact}"
        );
    }
}

/// One small `rf_dpgd` unit with the two noise metrics.
fn rf_unit(seeds: SeedPath, extra: &[(&str, f64)], recipe: &Recipe) -> BTreeMap<String, f64> {
    let p = 40.0;
    let mut vars: BTreeMap<String, f64> = [
        ("d", 5.0),
        ("n", 20.0),
        ("p", p),
        ("n_test", 20.0),
        ("eta", 1.0 / p),
        ("steps", 12.0),
        ("clip", 0.5 * f64::sqrt(p)),
        ("epsilon", 2.0),
        ("delta", 1e-3),
        ("kappa", 2.0),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), *v))
    .collect();
    for (k, v) in extra {
        vars.insert(k.to_string(), *v);
    }
    let options: BTreeMap<String, String> =
        [("clip_rule".to_string(), "divide".to_string())].into();
    let data = DataSpec {
        input: InputDist::Gaussian,
        target: TargetSpec::Sign,
        label_noise: 0.0,
    };
    let metrics: BTreeSet<String> = ["noise_term", "noise_term_exact"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let input = UnitInput {
        vars: &vars,
        options: &options,
        data: &data,
        metrics: &metrics,
        variant: "main",
        seeds,
        recipe,
        shared: None,
    };
    systems::by_name("rf_dpgd").unwrap().run(&input).unwrap()
}

/// Through the system: over 400 units (each its own features and noise), the ratio
/// noise_term / noise_term_exact averages to 1 within 4 standard errors (its conditional
/// mean given the features is exactly 1).
#[test]
fn system_noise_term_over_exact_averages_to_one() {
    let root = SeedPath::new(2024).child("noise-exact-system");
    let ratios: Vec<f64> = (0..400)
        .map(|i| {
            let out = rf_unit(root.child(i), &[], &Recipe::PAPER);
            out["noise_term"] / out["noise_term_exact"]
        })
        .collect();
    let (mean, se) = mean_se(&ratios);
    eprintln!("system: mean noise_term / noise_term_exact = {mean:.4} ± {se:.4}");
    assert!((mean - 1.0).abs() < 4.0 * se, "mean ratio {mean} (se {se})");
}

/// `noise_term_exact` is the paper's prediction: `sigma_scale` and faults of the
/// engine's noise formula change `noise_term` (by sigma_scale^2, on the same draws) but
/// not `noise_term_exact`.
#[test]
fn exact_metric_ignores_sigma_scale_and_noise_faults() {
    let seeds = SeedPath::new(9).child("noise-exact-scale");
    let base = rf_unit(seeds.clone(), &[], &Recipe::PAPER);
    let scaled = rf_unit(seeds.clone(), &[("sigma_scale", 3.0)], &Recipe::PAPER);
    assert_eq!(
        base["noise_term_exact"].to_bits(),
        scaled["noise_term_exact"].to_bits()
    );
    assert!(rel(scaled["noise_term"], 9.0 * base["noise_term"]) < 1e-10);
    for f in [Fault::NoiseMissingSqrtEta, Fault::SigmaInverseEpsilon] {
        let faulty = rf_unit(seeds.clone(), &[], &f.recipe());
        assert_eq!(
            base["noise_term_exact"].to_bits(),
            faulty["noise_term_exact"].to_bits(),
            "{f:?}"
        );
        assert_ne!(
            base["noise_term"].to_bits(),
            faulty["noise_term"].to_bits(),
            "{f:?}"
        );
    }
}

/// Bad inputs are refused as `InvalidConfig`, never answered: a negative or infinite noise
/// factor s (a negative s squares to a valid-looking term), eta outside (0, inf), and
/// shapes that do not match. s = 0 is allowed and gives no noise term.
#[test]
fn bad_noise_factors_step_sizes_and_shapes_are_refused() {
    use dpclaims::train::TrainError;
    let (phi, phi_test) = features(5, 3, 6, 4, 5);
    let (phi, te) = (phi.view(), phi_test.view());
    let refused = |r: Result<f64, TrainError>, what: &str| {
        assert!(
            matches!(r, Err(TrainError::InvalidConfig(_))),
            "{what}: expected InvalidConfig, got {r:?}"
        );
    };
    for s in [-1.0, -1e-300, f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
        refused(
            expected_noise_term(&phi, &te, 0.1, s, 3),
            &format!("s = {s}"),
        );
    }
    for eta in [0.0, -0.1, f64::INFINITY, f64::NAN] {
        refused(
            expected_noise_term(&phi, &te, eta, 0.5, 3),
            &format!("eta = {eta}"),
        );
    }
    let wrong = Array2::<f64>::zeros((4, 6));
    refused(
        expected_noise_term(&phi, &wrong.view(), 0.1, 0.5, 3),
        "p differs",
    );
    let none = Array2::<f64>::zeros((0, 5));
    refused(expected_noise_term(&none.view(), &te, 0.1, 0.5, 3), "n = 0");
    refused(
        expected_noise_term(&phi, &none.view(), 0.1, 0.5, 3),
        "m = 0",
    );
    assert_eq!(expected_noise_term(&phi, &te, 0.1, 0.0, 3).unwrap(), 0.0);
}
