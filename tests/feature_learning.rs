//! The rank-one approximant, the control activation and the ridge metrics of blog
//! Algorithm 1 (train::feature_learning; claims rank-one-gradient-step and
//! final-risk-bound-blog).
use dpclaims::data::{Dataset, InputDist, Target};
use dpclaims::rng::SeedPath;
use dpclaims::train::feature_learning::{
    first_layer_gradient, first_step_with_residual, init_network_with, rank_one_approximant,
    ridge_fit, ridge_gd_stability, A0Init, Activation, BiasInit, GradReduction,
};
use ndarray::Array1;

fn data(seed: u64, n: usize, d: usize, coeffs: Vec<f64>) -> Dataset {
    let mut rng = SeedPath::new(seed).rng_for("data");
    let mu = dpclaims::data::unit_vector(d, &mut rng);
    let target = Target::SingleIndex { mu, coeffs };
    Dataset::sample(n, d, InputDist::Gaussian, &target, 0.0, &mut rng)
}

/// For tanh, the gradient with its residual equals the printed gradient (both
/// reductions), and the residual is f_0(X) - y.
#[test]
fn tanh_gradient_with_residual_matches_the_printed_gradient() {
    let (d, p, n) = (6, 9, 40);
    let ds = data(1, n, d, vec![0.0, 1.0, 0.5]);
    let net = init_network_with(
        d,
        p,
        A0Init::OnesOverSqrtP,
        BiasInit::Gaussian,
        &mut SeedPath::new(2).rng(),
    );
    for red in [GradReduction::Mean, GradReduction::Sum] {
        let g = first_layer_gradient(&net, &ds.x.view(), &ds.y.view(), red);
        let (g2, r) =
            first_step_with_residual(&net, &ds.x.view(), &ds.y.view(), red, Activation::Tanh);
        for (a, b) in g.iter().zip(g2.iter()) {
            assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()), "{a} vs {b}");
        }
        let r2 = net.predict(&ds.x.view()) - &ds.y;
        for (a, b) in r.iter().zip(r2.iter()) {
            assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()));
        }
    }
}

/// The control: z^2 - 1 with b = 0 has E sigma'(s z) = 0, so the approximant vanishes
/// (to quadrature rounding) and the residual ratio is 1; with a nonzero bias it does not.
#[test]
fn even_activation_without_bias_has_no_rank_one_term() {
    let (d, p, n) = (8, 8, 60);
    let ds = data(3, n, d, vec![0.0, 1.0, 0.5]);
    let net = init_network_with(
        d,
        p,
        A0Init::OnesOverSqrtP,
        BiasInit::Zero,
        &mut SeedPath::new(4).rng(),
    );
    assert!(net.b.iter().all(|&b| b == 0.0));
    let (_, r) = first_step_with_residual(
        &net,
        &ds.x.view(),
        &ds.y.view(),
        GradReduction::Sum,
        Activation::SquareMinusOne,
    );
    let a = rank_one_approximant(
        &net,
        &ds.x.view(),
        &r.view(),
        GradReduction::Sum,
        Activation::SquareMinusOne,
    )
    .unwrap();
    assert!(
        a.iter().all(|v| v.abs() < 1e-9),
        "max {}",
        a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    );
    let biased = init_network_with(
        d,
        p,
        A0Init::OnesOverSqrtP,
        BiasInit::Gaussian,
        &mut SeedPath::new(4).rng(),
    );
    // Same W0 and a0 draws: only b differs.
    assert_eq!(biased.w, net.w);
    let (_, rb) = first_step_with_residual(
        &biased,
        &ds.x.view(),
        &ds.y.view(),
        GradReduction::Sum,
        Activation::SquareMinusOne,
    );
    let ab = rank_one_approximant(
        &biased,
        &ds.x.view(),
        &rb.view(),
        GradReduction::Sum,
        Activation::SquareMinusOne,
    )
    .unwrap();
    // c_j = 2 b_j exactly (E sigma'(s z + b) = 2b): the row factor is a_j 2 b_j.
    let col = ds.x.t().dot(&rb) * 2.0;
    for j in 0..p {
        for k in 0..d {
            let want = col[k] * biased.a[j] * 2.0 * biased.b[j];
            assert!((ab[[k, j]] - want).abs() < 1e-9 * (1.0 + want.abs()));
        }
    }
}

/// The tanh approximant's row factor is a_j E tanh'(||w_j|| z + b_j): at b = 0 and
/// ||w|| -> 0 it is a_j (tanh'(0) = 1); and the approximant is rank one along X^T r.
#[test]
fn tanh_approximant_is_rank_one_along_the_residual_mean() {
    let (d, p, n) = (5, 7, 30);
    let ds = data(5, n, d, vec![0.0, 1.0, 0.5]);
    let mut net = init_network_with(
        d,
        p,
        A0Init::OnesOverSqrtP,
        BiasInit::Zero,
        &mut SeedPath::new(6).rng(),
    );
    net.w *= 1e-8;
    let (_, r) = first_step_with_residual(
        &net,
        &ds.x.view(),
        &ds.y.view(),
        GradReduction::Mean,
        Activation::Tanh,
    );
    let a = rank_one_approximant(
        &net,
        &ds.x.view(),
        &r.view(),
        GradReduction::Mean,
        Activation::Tanh,
    )
    .unwrap();
    let col = ds.x.t().dot(&r) * (2.0 / n as f64);
    for j in 0..p {
        for k in 0..d {
            let want = col[k] * net.a[j];
            assert!((a[[k, j]] - want).abs() < 1e-8 * (1.0 + want.abs()));
        }
    }
}

/// Ridge: the closed form is the minimiser (the objective grows under perturbation) and
/// the stability factor is 2 eta (lambda + lambda_max(Phi^T Phi / n)) (checked against a
/// diagonal feature matrix whose second moment is known).
#[test]
fn ridge_fit_minimises_and_stability_factor_matches_a_diagonal_case() {
    let ds = data(7, 25, 4, vec![0.0, 1.0, 0.5]);
    let phi = ds.x.mapv(f64::tanh);
    let lambda = 0.3;
    let fit = ridge_fit(&phi.view(), &ds.y.view(), lambda).unwrap();
    let obj = |a: &Array1<f64>| {
        let r = phi.dot(a) - &ds.y;
        r.dot(&r) / 25.0 + lambda * a.dot(a)
    };
    assert!((obj(&fit.a) - fit.objective).abs() < 1e-12);
    assert!((fit.a.dot(&fit.a).sqrt() - fit.norm).abs() < 1e-12);
    for k in 0..4 {
        for s in [-1e-3, 1e-3] {
            let mut b = fit.a.clone();
            b[k] += s;
            assert!(obj(&b) > fit.objective);
        }
    }
    // Phi = diag(3, 1) stacked with zeros: Phi^T Phi / n = diag(9, 1)/4, lambda_max 2.25.
    let mut m = ndarray::Array2::<f64>::zeros((4, 2));
    m[[0, 0]] = 3.0;
    m[[1, 1]] = 1.0;
    let f = ridge_gd_stability(&m.view(), 0.5, 0.1).unwrap();
    assert!((f - 2.0 * 0.5 * (0.1 + 2.25)).abs() < 1e-12, "{f}");
}
