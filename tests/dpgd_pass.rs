//! The direct DP-GD step's one pass over `Phi` (src/train/dpgd/pass.rs) and the runs that
//! share it (`dpgd::run_shared`): the same numbers as the two-GEMV formula of the module
//! docs, and the same bits as the runs one after another.
use dpclaims::rng::SeedPath;
use dpclaims::train::dpgd::{self, ClipRule, DpGdConfig, DpGdRecipe, Problem, RecordPlan};
use dpclaims::train::TrainError;
use ndarray::{Array1, Array2, Axis};
use rand_distr::{Distribution, StandardNormal};

fn gaussian(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut rng = SeedPath::new(seed).rng();
    Array2::from_shape_fn((rows, cols), |_| StandardNormal.sample(&mut rng))
}

/// The module docs' formula with ndarray's products (BLAS GEMVs): `f = Phi theta`,
/// `c_i`, then `(2/n) Phi^T (c o r) + (2 lambda/n)(sum c) theta`.
fn two_gemv_mean(
    phi: &Array2<f64>,
    y: &Array1<f64>,
    theta: &Array1<f64>,
    clip: f64,
    rule: ClipRule,
    ridge: f64,
) -> Array1<f64> {
    let n = y.len() as f64;
    let f = phi.dot(theta);
    let theta_sq = theta.dot(theta);
    let mut sum_c = 0.0;
    let w = Array1::from_shape_fn(y.len(), |i| {
        let r = f[i] - y[i];
        let s = phi.row(i).dot(&phi.row(i));
        let gsq = 4.0 * r * r * s + 8.0 * ridge * r * f[i] + 4.0 * ridge * ridge * theta_sq;
        let ratio = gsq.max(0.0).sqrt() / clip;
        let c = if ratio > 1.0 { rule.scale(ratio) } else { 1.0 };
        sum_c += c;
        c * r
    });
    let mut g = phi.t().dot(&w) * (2.0 / n);
    if ridge > 0.0 {
        g.scaled_add(2.0 * ridge * sum_c / n, theta);
    }
    g
}

fn rel(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let d = a - b;
    (d.dot(&d) / b.dot(b)).sqrt()
}

#[test]
fn one_pass_equals_the_two_gemv_formula() {
    // p = 37 and 301: a tail after the sixteen partial sums, rows longer than a line.
    for (n, p) in [(23, 37), (40, 301)] {
        let phi = gaussian(n, p, 1);
        let y = gaussian(n, 1, 2).column(0).to_owned();
        let theta = gaussian(p, 1, 3).column(0).to_owned() * 0.3;
        let phi_sq = phi.map_axis(Axis(1), |r| r.dot(&r));
        for rule in [ClipRule::Divide, ClipRule::Multiply, ClipRule::None] {
            for ridge in [0.0, 0.7] {
                // A clip between the per-sample norms: both branches taken.
                let clip = 2.0 * (p as f64).sqrt();
                let (g, stats) = dpgd::clipped_mean_gradient(
                    &phi.view(),
                    &phi_sq.view(),
                    &y.view(),
                    &theta.view(),
                    clip,
                    rule,
                    ridge,
                );
                let want = two_gemv_mean(&phi, &y, &theta, clip, rule, ridge);
                let e = rel(&g, &want);
                assert!(e < 1e-13, "{rule:?} ridge {ridge} n {n} p {p}: {e:e}");
                assert!(stats.clip_fraction > 0.0 && stats.clip_fraction < 1.0);
                // Negative control: one example's share left out moves it far beyond.
                let cut = two_gemv_mean(
                    &phi.slice(ndarray::s![..n - 1, ..]).to_owned(),
                    &y.slice(ndarray::s![..n - 1]).to_owned(),
                    &theta,
                    clip,
                    rule,
                    ridge,
                );
                assert!(rel(&g, &cut) > 1e-6);
            }
        }
    }
}

#[test]
fn one_pass_reads_any_layout_of_phi() {
    let phi = gaussian(31, 45, 4);
    let y = gaussian(31, 1, 5).column(0).to_owned();
    let theta = gaussian(45, 1, 6).column(0).to_owned();
    let phi_sq = phi.map_axis(Axis(1), |r| r.dot(&r));
    let grad = |view: ndarray::ArrayView2<f64>| {
        dpgd::clipped_mean_gradient(
            &view,
            &phi_sq.view(),
            &y.view(),
            &theta.view(),
            5.0,
            ClipRule::Divide,
            0.0,
        )
        .0
    };
    let a = grad(phi.view());
    // The same matrix stored column-major: the same bits.
    let f = phi.t().as_standard_layout().into_owned();
    let b = grad(f.t());
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
}

fn cfg(eta: f64, steps: usize, clip: f64, rule: ClipRule, sigma: f64, ridge: f64) -> DpGdConfig {
    DpGdConfig {
        eta,
        steps,
        clip,
        clip_rule: rule,
        sigma,
        kappa: 2.0,
        ridge,
    }
}

fn same_run(a: &dpgd::DpGdRun, b: &dpgd::DpGdRun) -> bool {
    let bits = |v: &[f64], w: &[f64]| {
        v.len() == w.len() && v.iter().zip(w).all(|(x, y)| x.to_bits() == y.to_bits())
    };
    let (ta, tb) = (&a.trajectory, &b.trajectory);
    bits(a.theta.as_slice().unwrap(), b.theta.as_slice().unwrap())
        && bits(&ta.clip_fraction, &tb.clip_fraction)
        && bits(&ta.max_grad_ratio, &tb.max_grad_ratio)
        && bits(&ta.max_abs_residual, &tb.max_abs_residual)
        && ta.losses == tb.losses
}

fn every_other(t: usize) -> bool {
    t % 2 == 0
}

#[test]
fn shared_runs_are_the_runs_one_after_another_bit_for_bit() {
    let (n, p) = (30, 80);
    let phi = gaussian(n, p, 7);
    let phi_test = gaussian(12, p, 8);
    let y = gaussian(n, 1, 9).column(0).to_owned();
    let y_test = gaussian(12, 1, 10).column(0).to_owned();
    let zeros = Array1::<f64>::zeros(n);
    let zeros_test = Array1::<f64>::zeros(12);
    let main = Problem {
        phi: phi.view(),
        y: y.view(),
        test: Some((phi_test.view(), y_test.view())),
    };
    let noise = Problem {
        phi: phi.view(),
        y: zeros.view(),
        test: Some((phi_test.view(), zeros_test.view())),
    };
    let clip = 1.5 * (p as f64).sqrt();
    let recipes = [
        DpGdRecipe::PAPER,
        DpGdRecipe {
            fresh_noise: every_other,
            ..DpGdRecipe::PAPER
        },
    ];
    for recipe in &recipes {
        for (c_main, c_noise) in [
            (
                cfg(0.01, 25, clip, ClipRule::Divide, 0.8, 0.0),
                cfg(0.01, 25, clip, ClipRule::None, 0.8, 0.0),
            ),
            // Different step sizes, a ridge, one run without noise.
            (
                cfg(0.02, 25, clip, ClipRule::Multiply, 0.5, 0.3),
                cfg(0.005, 25, clip, ClipRule::None, 0.0, 0.0),
            ),
        ] {
            let plan = RecordPlan {
                loss_at: vec![0, 7, 25],
            };
            let stream = SeedPath::new(11).child("noise");
            let shared = dpgd::run_shared(
                &[main, noise],
                &[c_main.clone(), c_noise.clone()],
                &plan,
                &mut stream.rng(),
                recipe,
            )
            .unwrap();
            let alone = |pr: &Problem, c: &DpGdConfig| {
                dpgd::run(pr, Array1::zeros(p), c, &plan, &mut stream.rng(), recipe).unwrap()
            };
            assert!(same_run(&shared[0], &alone(&main, &c_main)));
            assert!(same_run(&shared[1], &alone(&noise, &c_noise)));
            // Negative control: the two runs differ, and another stream differs.
            assert!(!same_run(&shared[0], &shared[1]));
            let other = dpgd::run(
                &main,
                Array1::zeros(p),
                &c_main,
                &plan,
                &mut SeedPath::new(12).rng(),
                recipe,
            )
            .unwrap();
            assert!(!same_run(&shared[0], &other));
        }
    }
}

#[test]
fn shared_runs_report_the_first_failing_run_as_one_after_another_would() {
    let (n, p) = (20, 40);
    let phi = gaussian(n, p, 13);
    let y = gaussian(n, 1, 14).column(0).to_owned();
    let pr = Problem {
        phi: phi.view(),
        y: y.view(),
        test: None,
    };
    // Unclipped GD with eta lambda_max far above 2 overflows: the larger eta, the sooner.
    let stable = cfg(1e-3, 300, f64::INFINITY, ClipRule::Divide, 0.0, 0.0);
    let fast = cfg(1e6, 300, f64::INFINITY, ClipRule::Divide, 0.0, 0.0);
    let slow = cfg(40.0, 300, f64::INFINITY, ClipRule::Divide, 0.0, 0.0);
    let plan = RecordPlan::ends(300);
    let run = |cs: &[DpGdConfig]| {
        let prs = vec![pr; cs.len()];
        dpgd::run_shared(
            &prs,
            cs,
            &plan,
            &mut SeedPath::new(1).rng(),
            &DpGdRecipe::PAPER,
        )
    };
    let step = |r: Result<Vec<dpgd::DpGdRun>, TrainError>| match r {
        Err(TrainError::Diverged { step, .. }) => step,
        other => panic!("expected a divergence, got {:?}", other.map(|v| v.len())),
    };
    let alone = |c: &DpGdConfig| step(run(std::slice::from_ref(c)));
    let (s_fast, s_slow) = (alone(&fast), alone(&slow));
    assert!(s_fast < s_slow, "fast {s_fast}, slow {s_slow}");
    // The slow run fails later, but it is first: its error is the one returned.
    assert_eq!(step(run(&[slow.clone(), fast.clone()])), s_slow);
    assert_eq!(step(run(&[fast.clone(), slow.clone()])), s_fast);
    assert_eq!(step(run(&[stable.clone(), slow.clone()])), s_slow);
    assert!(run(&[stable.clone(), stable]).is_ok());
    // Runs on another Phi, or of another length, are refused.
    let other = phi.clone();
    let pr2 = Problem {
        phi: other.view(),
        ..pr
    };
    let c = cfg(1e-3, 300, 1.0, ClipRule::Divide, 0.0, 0.0);
    let refused = dpgd::run_shared(
        &[pr, pr2],
        &[c.clone(), c.clone()],
        &plan,
        &mut SeedPath::new(1).rng(),
        &DpGdRecipe::PAPER,
    );
    assert!(matches!(refused, Err(TrainError::InvalidConfig(_))));
    let shorter = cfg(1e-3, 299, 1.0, ClipRule::Divide, 0.0, 0.0);
    let refused = dpgd::run_shared(
        &[pr, pr],
        &[c, shorter],
        &plan,
        &mut SeedPath::new(1).rng(),
        &DpGdRecipe::PAPER,
    );
    assert!(matches!(refused, Err(TrainError::InvalidConfig(_))));
}
