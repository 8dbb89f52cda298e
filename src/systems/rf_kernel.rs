//! The finite ingredients of the proof of privacy-for-free's Theorem 2 (Bombari &
//! Mondelli, PNAS 2025, Sec. 1.2 and Sec. 4), computed from the kernel of the random
//! features rather than by running DP-GD in p dimensions ([`crate::train::rf_kernel`],
//! [`crate::train::rf_em`]): Lemma 4.5's spectral gap (L219-L221), ||theta*|| (L87), Eq.
//! 21's early-stopping term (L215-L217), Eq. 20's noise term of the OU process (L211-L215),
//! Eq. 19's sup of the noise part (L205-L209), and the Euler-Maruyama convergence of
//! Algorithm 1 to Eq. 12 (L175).
//!
//! One unit: the problem of [`super::rf_dpgd::sample_problem`] (the same streams: target,
//! training and test sets, V), the Gram matrix of the stacked train and test features,
//! and the requested metrics. sigma is Prop. 2.2's at `eta T = tau`:
//! `sigma = sqrt(tau) sqrt(8 ln(1/delta))/eps`, and `Sigma = kappa C sigma / n` (Eq. 12).
use super::cost::features_cost;
use super::*;
use crate::train::rf_em::{self, EmProblem, NoiseScaling};
use crate::train::rf_kernel::{self as rk, Activation, Drift, KernelSplit};
use ndarray::{concatenate, Axis};

#[derive(Debug)]
pub struct RfKernel;

/// Hermite constants of tanh for z ~ N(0, 1) (200-point Gauss-Hermite quadrature):
/// mu_1^2 = E[z tanh z]^2 and E tanh^2(z).
pub const MU1_SQ_TANH: f64 = 0.366_879_164_362_410_4;
pub const E_TANH_SQ: f64 = 0.394_294_490_397_840_9;

const fn p(name: &'static str, kind: ParamKind, optional: bool, doc: &'static str) -> ParamInfo {
    ParamInfo {
        name,
        kind,
        optional,
        doc,
    }
}

const PARAMS: [ParamInfo; 12] = [
    p("d", ParamKind::IntAtLeast(1), false, "input dimension"),
    p("n", ParamKind::IntAtLeast(2), false, "training samples"),
    p("p", ParamKind::IntAtLeast(1), false, "random features"),
    p(
        "n_test",
        ParamKind::IntAtLeast(1),
        false,
        "test samples (the E_x of Eq. 20-21)",
    ),
    p(
        "tau",
        ParamKind::Positive,
        true,
        "time tau = eta T of Eq. 8 (Eq. 19-21)",
    ),
    p(
        "clip",
        ParamKind::Positive,
        true,
        "clipping threshold C (Sigma and Algorithm 1)",
    ),
    p(
        "epsilon",
        ParamKind::Positive,
        true,
        "privacy budget (sigma from Prop. 2.2 at eta T = tau)",
    ),
    p(
        "delta",
        ParamKind::Probability,
        true,
        "privacy budget delta",
    ),
    p(
        "kappa",
        ParamKind::Positive,
        true,
        "noise constant: Sigma = kappa C sigma / n (2 in Eq. 11-12)",
    ),
    p(
        "eta",
        ParamKind::Positive,
        true,
        "coarse step of the coupled Euler-Maruyama pair (eta and eta/2)",
    ),
    p(
        "grid",
        ParamKind::IntAtLeast(1),
        true,
        "time steps of the sup in Eq. 19 (default 1000)",
    ),
    p(
        "sigma_scale",
        ParamKind::Positive,
        true,
        "multiplies Sigma in the simulated process only (default 1; negative controls)",
    ),
];

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "activation",
        values: &["tanh", "z2m1"],
        doc: "tanh (the paper's odd example) or z^2 - 1 (mu_1 = 0: a negative control of Lemma 4.5)",
    },
    OptionInfo {
        name: "drift",
        values: &["attractive", "repulsive"],
        doc: "the OU drift -H theta of Eq. 13 (attractive) or +H theta (a control breaking L209's comparison)",
    },
    OptionInfo {
        name: "feature_norm",
        values: &["raw", "unit", "norm_scaled"],
        doc: "features as drawn (||phi|| = Theta(sqrt(p)), L191), normalised to unit length, or scaled by their own norm, phi ||phi|| (||.|| = Theta(p)): the two slips of the normalisation, controls of ||theta*|| = Theta(sqrt(n/p)) from above and from below",
    },
    OptionInfo {
        name: "noise_scaling",
        values: &["sqrt_eta", "constant"],
        doc: "Euler-Maruyama noise sqrt(eta) Sigma xi (Eq. 11) or Sigma xi (a control: the missing sqrt(eta))",
    },
];

const fn m(name: &'static str, doc: &'static str) -> MetricInfo {
    MetricInfo { name, doc }
}

const METRICS: &[MetricInfo] = &[
    m("input_norm_dev", "max over the unit's inputs of | ||x||/sqrt(d) - 1 |"),
    m("gap_ratio", "mu_d / mu_{d+1} of K = Phi Phi^T (Lemma 4.5, L219-L221)"),
    m("spectral_gap", "mu_d / mu_{d+1} - 1"),
    m("gap_ratio_hermite", "the Hermite-expansion prediction 1 + mu_1^2 (n/d)(1 - sqrt(d/n))^2 / (E tanh^2 - mu_1^2) for tanh (theory, no simulation)"),
    m("theta_star_sq", "||theta*||^2 = y^T K^+ y (min-norm interpolator)"),
    m("theta_star_sq_scaled", "||theta*||^2 p / n (Sec. 1.2, L87: ||theta*|| = Theta(sqrt(n/p)))"),
    m("early_stop_term", "E_x[(phi(x)^T (theta_hat(tau) - theta*))^2] on the test set (Eq. 21)"),
    m("ou_noise_term", "E_B E_x[(phi(x)^T Theta~(tau))^2] of the OU process, exact given the features (Eq. 20)"),
    m("drift_free_bound", "Sigma^2 tau mean_test ||phi||^2 (the drift-free process of L209)"),
    m("ou_noise_over_bound", "ou_noise_term / drift_free_bound"),
    m("sup_noise_ratio", "mean_i sup_t |phi_i^T Theta~(t)| / (sqrt(pi/2) Sigma sqrt(tau) ||phi_i||) (Eq. 19, reflection bound)"),
    m("sup_noise_log_ratio", "ln(sup_noise_ratio): E <= 0 follows from Eq. 19's bound by Jensen (E ln R <= ln E R <= 0)"),
    m("eq16_violations", "(i, t) pairs of the OU path (grid of Eq. 19) where Eq. 16's condition holds and the gradient exceeds C (Eq. 16 => Eq. 15: 0; an identity check)"),
    m("eq16_condition_fraction", "fraction of (i, t) pairs where Eq. 16's condition holds (how much the identity check exercises)"),
    m("eq16_clip_fraction", "fraction of (i, t) pairs of the OU path whose gradient exceeds C (outside the set C of Eq. 14)"),
    m("eq10_identity_err", "max over 3 random theta of ||engine clipped mean gradient (Algorithm 1's clip line) - Eq. 10's surrogate gradient|| / ||Eq. 10's||, tanh features (an identity check)"),
    m("eq10_clip_fraction", "fraction of the per-sample gradients clipped at those theta"),
    m("sup_noise_residual", "max_i sup_t |phi_i^T Theta~(t)| (noise part at the training points)"),
    m("sup_noise_bound", "max_i sqrt(pi/2) Sigma sqrt(tau) ||phi_i||"),
    m("em_diff", "||theta^(eta) - theta^(eta/2)||_2 at tau, coupled Brownian increments (Eq. 11-12)"),
    m("em_loss_coarse", "test MSE of Algorithm 1 with step eta"),
    m("em_loss_fine", "test MSE of Algorithm 1 with step eta/2"),
    m("em_loss_diff", "|test MSE(eta) - test MSE(eta/2)|"),
    m("em_clip_fraction", "fraction of (step, sample) pairs clipped in the eta/2 run"),
];

const INFO: SystemInfo = SystemInfo {
    name: "rf_kernel",
    model: "random_features_tanh",
    description: "kernel-level ingredients of privacy-for-free's proof (Lemma 4.5, Eq. 19-21, ||theta*||, Euler-Maruyama in eta) on phi(Vx), exact from K = Phi Phi^T",
    needs_target: true,
    params: &PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

const KERNEL_METRICS: [&str; 17] = [
    "eq16_violations",
    "eq16_condition_fraction",
    "eq16_clip_fraction",
    "sup_noise_log_ratio",
    "gap_ratio",
    "spectral_gap",
    "theta_star_sq",
    "theta_star_sq_scaled",
    "early_stop_term",
    "ou_noise_term",
    "drift_free_bound",
    "ou_noise_over_bound",
    "sup_noise_ratio",
    "sup_noise_residual",
    "sup_noise_bound",
    "input_norm_dev",
    "gap_ratio_hermite",
];
const EM_METRICS: [&str; 5] = [
    "em_diff",
    "em_loss_coarse",
    "em_loss_fine",
    "em_loss_diff",
    "em_clip_fraction",
];

/// `Sigma = kappa C sigma / n` with Prop. 2.2's sigma at `eta T = tau`.
fn big_sigma(u: &UnitInput, n: usize) -> Result<f64, SystemError> {
    let (tau, eps, delta) = (u.var("tau")?, u.var("epsilon")?, u.var("delta")?);
    let sigma = tau.sqrt() * (8.0 * (1.0 / delta).ln()).sqrt() / eps;
    Ok(u.var("kappa")? * u.var("clip")? * sigma / n as f64)
}

impl System for RfKernel {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn cost(&self, u: &CostInput) -> Cost {
        let (d, n, p, nt) = (
            u.var("d", 1.0),
            u.var("n", 2.0),
            u.var("p", 1.0),
            u.var("n_test", 1.0),
        );
        let nm = n + nt;
        let feats = features_cost(nm, p, d);
        let mut seconds = feats.seconds + Cost::normals(p * d) + Cost::gemm(nm * nm * p);
        let mut bytes = Cost::f64s(p * d + 4.0 * nm * nm + 512.0 * nm);
        seconds += 2.0 * Cost::eigen(n) + Cost::gemm(2.0 * nt * n * n);
        if u.wants(&[
            "sup_noise_ratio",
            "sup_noise_log_ratio",
            "sup_noise_residual",
            "sup_noise_bound",
        ]) {
            let grid = u.var("grid", 1000.0);
            seconds += Cost::normals(grid * n) + Cost::stream(grid * n * n);
        }
        if u.wants(&["eq10_identity_err", "eq10_clip_fraction"]) {
            seconds += Cost::gemm(2.0 * n * p * d) + Cost::tanh(n * p) + Cost::stream(12.0 * n * p);
        }
        if u.wants(&EM_METRICS) {
            let tau = u.var("tau", 1.0);
            let eta = u.var("eta", 1.0);
            let steps = 2.0 * (tau / eta).ceil();
            seconds += Cost::eigen(nm)
                + steps * (Cost::stream(nm * nm + 2.0 * nm * n) + Cost::normals(nm));
            bytes += Cost::f64s(3.0 * nm * nm);
        }
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (d, n, p, _) = u.sizes()?;
        let act = match u.option("activation") {
            "z2m1" => Activation::Hermite2,
            _ => Activation::Tanh,
        };
        let drift = match u.option("drift") {
            "repulsive" => Drift::Repulsive,
            _ => Drift::Attractive,
        };
        let (train, test, model) = super::rf_dpgd::sample_problem(u)?;
        let xs = concatenate(Axis(0), &[train.x.view(), test.x.view()])
            .map_err(|e| SystemError::Invalid(e.to_string()))?;
        let mut g = rk::gram(&model.v.view(), &xs.view(), act)?;
        let norm = u.option("feature_norm");
        if norm == "unit" || norm == "norm_scaled" {
            // phi / ||phi||: G_ij / sqrt(G_ii G_jj); phi ||phi||: G_ij sqrt(G_ii G_jj).
            let diag: Vec<f64> = g
                .diag()
                .iter()
                .map(|v| v.max(f64::MIN_POSITIVE).sqrt())
                .collect();
            for ((i, j), v) in g.indexed_iter_mut() {
                if norm == "unit" {
                    *v /= diag[i] * diag[j];
                } else {
                    *v *= diag[i] * diag[j];
                }
            }
        }
        let mut out = BTreeMap::new();
        if u.wants(&["input_norm_dev"]) {
            let dev = xs
                .rows()
                .into_iter()
                .map(|r| (r.dot(&r).sqrt() / (d as f64).sqrt() - 1.0).abs())
                .fold(0.0_f64, f64::max);
            out.insert("input_norm_dev".into(), dev);
        }
        if u.wants(&KERNEL_METRICS) {
            let ks = KernelSplit::new(&g, n)?;
            if u.wants(&["gap_ratio", "spectral_gap"]) {
                let r = rk::gap_ratio(&ks, d)?;
                out.insert("gap_ratio".into(), r);
                out.insert("spectral_gap".into(), r - 1.0);
            }
            if u.wants(&["gap_ratio_hermite"]) {
                let (nf, df) = (n as f64, d as f64);
                let lin = MU1_SQ_TANH * (nf / df) * (1.0 - (df / nf).sqrt()).powi(2);
                out.insert(
                    "gap_ratio_hermite".into(),
                    1.0 + lin / (E_TANH_SQ - MU1_SQ_TANH),
                );
            }
            if u.wants(&["theta_star_sq", "theta_star_sq_scaled"]) {
                let t = rk::theta_star_sq(&ks, &train.y.view());
                out.insert("theta_star_sq".into(), t);
                out.insert("theta_star_sq_scaled".into(), t * p as f64 / n as f64);
            }
            if u.wants(&["early_stop_term"]) {
                let v = rk::early_stop_term(&ks, &train.y.view(), u.var("tau")?);
                out.insert("early_stop_term".into(), v);
            }
            if u.wants(&["ou_noise_term", "drift_free_bound", "ou_noise_over_bound"]) {
                let s = big_sigma(u, n)? * u.var_or("sigma_scale", 1.0);
                let (v, b) = rk::ou_noise_term(&ks, u.var("tau")?, s, drift);
                // The bound with Prop. 2.2's Sigma (never sigma_scale).
                let b = b * (1.0 / u.var_or("sigma_scale", 1.0)).powi(2);
                out.insert("ou_noise_term".into(), v);
                out.insert("drift_free_bound".into(), b);
                out.insert("ou_noise_over_bound".into(), v / b);
            }
            if u.wants(&[
                "eq16_violations",
                "eq16_condition_fraction",
                "eq16_clip_fraction",
                "sup_noise_ratio",
                "sup_noise_log_ratio",
                "sup_noise_residual",
                "sup_noise_bound",
            ]) {
                let s = big_sigma(u, n)?;
                let tau = u.var("tau")?;
                let grid = u.var_or("grid", 1000.0) as usize;
                let eq16 = if u.wants(&[
                    "eq16_violations",
                    "eq16_condition_fraction",
                    "eq16_clip_fraction",
                ]) {
                    Some((train.y.view(), u.var("clip")?))
                } else {
                    None
                };
                let (sup, c16) = rk::sup_noise_eq16(
                    &ks,
                    tau,
                    s * u.var_or("sigma_scale", 1.0),
                    drift,
                    grid,
                    eq16,
                    &mut u.seeds.rng_for("noise"),
                )?;
                if c16.pairs > 0 {
                    let pairs = c16.pairs as f64;
                    out.insert("eq16_violations".into(), c16.violations as f64);
                    out.insert(
                        "eq16_condition_fraction".into(),
                        c16.condition as f64 / pairs,
                    );
                    out.insert("eq16_clip_fraction".into(), c16.clipped as f64 / pairs);
                }
                let c = (std::f64::consts::PI / 2.0).sqrt() * s * tau.sqrt();
                let bounds: Vec<f64> = (0..n).map(|i| c * ks.k[[i, i]].max(0.0).sqrt()).collect();
                let ratio = sup.iter().zip(&bounds).map(|(a, b)| a / b).sum::<f64>() / n as f64;
                out.insert("sup_noise_ratio".into(), ratio);
                out.insert("sup_noise_log_ratio".into(), ratio.ln());
                out.insert(
                    "sup_noise_residual".into(),
                    sup.iter().copied().fold(0.0, f64::max),
                );
                out.insert(
                    "sup_noise_bound".into(),
                    bounds.iter().copied().fold(0.0, f64::max),
                );
            }
        }
        if u.wants(&["eq10_identity_err", "eq10_clip_fraction"]) {
            let (e, f) = eq10_identity(u, &train, &model)?;
            // Round-off below the reports' floor (1e-12) is written as the floor: its last
            // digits are the BLAS kernel's, and the check's margin against its rhs must not
            // depend on them (reports are byte-identical across kernels).
            out.insert("eq10_identity_err".into(), e.max(1e-12));
            out.insert("eq10_clip_fraction".into(), f);
        }
        if u.wants(&EM_METRICS) {
            let (tau, eta) = (u.var("tau")?, u.var("eta")?);
            let steps = (tau / eta).round().max(1.0) as usize;
            let scaling = match u.option("noise_scaling") {
                "constant" => NoiseScaling::Constant,
                _ => NoiseScaling::SqrtEta,
            };
            let pb = EmProblem {
                g: &g,
                y: train.y.view(),
                y_test: test.y.view(),
                clip: u.var("clip")?,
                big_sigma: big_sigma(u, n)? * u.var_or("sigma_scale", 1.0),
                scaling,
            };
            let r = rf_em::coupled_pair(&pb, eta, steps, &mut u.seeds.rng_for("em"))?;
            out.insert("em_diff".into(), r.diff);
            out.insert("em_loss_coarse".into(), r.loss_coarse);
            out.insert("em_loss_fine".into(), r.loss_fine);
            out.insert("em_loss_diff".into(), (r.loss_coarse - r.loss_fine).abs());
            out.insert("em_clip_fraction".into(), r.clip_fraction);
        }
        Ok(out)
    }
}

/// Eq. 10 (L163-L165) on random instances: the engine's clipped mean gradient
/// ([`crate::train::dpgd::clipped_mean_gradient`], Algorithm 1's clip line
/// `g_i min(1, C/||g_i||)`) against Eq. 10's surrogate gradient
/// `(1/n) sum_i l'_clip(r_i) phi_i`, `l'_clip(z) = l'(z) min(1, C/(|l'(z)| ||phi_i||))`,
/// `l'(z) = 2 z`, written out here, at 3 random theta ~ N(0, a^2 I) with
/// `a = s C / (2 E tanh^2 p)`, s = 0.5, 1, 2 (so that part of the samples clip).
/// Returns (max relative difference, fraction clipped).
fn eq10_identity(
    u: &UnitInput,
    train: &crate::data::Dataset,
    model: &crate::models::RandomFeatures,
) -> Result<(f64, f64), SystemError> {
    use crate::train::dpgd;
    use rand_distr::{Distribution, StandardNormal};
    let phi = model.features(&train.x.view());
    let (n, p) = phi.dim();
    let clip = u.var("clip")?;
    let phi_sq = crate::linalg::row_norms_sq(&phi.view());
    let mut rng = u.seeds.rng_for("eq10");
    let (mut worst, mut clipped, mut total) = (0.0_f64, 0usize, 0usize);
    for s in [0.5, 1.0, 2.0] {
        let a = s * clip / (2.0 * E_TANH_SQ * p as f64);
        let theta = ndarray::Array1::from_iter(
            (0..p).map(|_| a * Distribution::<f64>::sample(&StandardNormal, &mut rng)),
        );
        let (g, _) = dpgd::clipped_mean_gradient(
            &phi.view(),
            &phi_sq.view(),
            &train.y.view(),
            &theta.view(),
            clip,
            dpgd::ClipRule::Divide,
            0.0,
        );
        let r = phi.dot(&theta) - &train.y;
        let mut h = ndarray::Array1::<f64>::zeros(p);
        for i in 0..n {
            let lp = 2.0 * r[i];
            let norm = phi_sq[i].sqrt();
            let factor = if lp == 0.0 {
                1.0
            } else {
                (clip / (lp.abs() * norm)).min(1.0)
            };
            clipped += usize::from(factor < 1.0);
            total += 1;
            h.scaled_add(lp * factor / n as f64, &phi.row(i));
        }
        let diff = (&g - &h).mapv(|v| v * v).sum().sqrt();
        worst = worst.max(diff / h.mapv(|v| v * v).sum().sqrt());
    }
    Ok((worst, clipped as f64 / total as f64))
}
