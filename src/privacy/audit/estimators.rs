//! Three lower bounds on epsilon from one audit, with the confidence split among them so
//! that the largest keeps the joint guarantee (Bonferroni: each estimator at level
//! `1 − α/k` for `k` estimators, `α = 1 − confidence`).
//!
//! * **Clopper–Pearson** ([`super::stats`]): a threshold chosen on one half of each world's
//!   runs, TPR and FPR bounded on the other half. Assumes nothing about the scores.
//! * **Gaussian DP** ([`gdp_estimate`]): for the Gaussian mechanism the canary score is
//!   `N(m₁, s²)` in one world and `N(m₀, s²)` in the other, and the pair is exactly
//!   `μ`-GDP with `μ = (m₁ − m₀)/s` (Dong, Roth & Su 2019, Def. 2.6 and Thm 2.7): a lower
//!   confidence bound on `μ` (a Student-t lower bound on `m₁ − m₀` divided by a
//!   chi-square upper bound on `s`, each at half the estimator's `α`) converts to a lower
//!   bound on epsilon at the claimed delta (Cor. 2.13). **Assumes** Gaussian scores of
//!   equal variance; a one-sample Kolmogorov–Smirnov test of the standardised residuals
//!   against `N(0, 1)` is reported beside it (`fit_p_value`; with estimated parameters
//!   the asymptotic p-value is conservative — Lilliefors — so a small value is real
//!   evidence against the assumption).
//! * **One run** ([`one_run_gaussian`]): Steinke, Nasr & Jagielski 2023, "Privacy
//!   auditing with one (1) training run", Thm 3.1/5.2 and App. D: `m` canaries, each
//!   included independently with probability 1/2 in a single run; the auditor guesses
//!   "in" for the `k` highest scores and "out" for the `k` lowest (`k = ⌈m/20⌉`, fixed
//!   before looking), abstains on the rest, and the number `v` of correct guesses out of
//!   `r = 2k` rejects `(ε, δ)`-DP when `P[Bin(r, e^ε/(1+e^ε)) ≥ v] + α_δ·δ·2m < α`. The
//!   run is simulated by the exact law of the canaries' scores in the white-box
//!   gradient-space setting (each canary on its own coordinate): `N(μ S_i, 1)`
//!   independently, `S_i` the inclusion bit, `μ` the canary test's GDP parameter.
use super::AuditError;
use crate::privacy::gdp_epsilon;
use crate::rng::SeedPath;
use rand::RngExt as _;
use serde::Serialize;
use statrs::distribution::{
    Binomial, ChiSquared, ContinuousCDF, Discrete, DiscreteCDF, Normal, StudentsT,
};

/// The Gaussian-DP estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GdpEstimate {
    pub epsilon_lower_bound: f64,
    /// Point estimate `(x̄₁ − x̄₀)/s`.
    pub mu_hat: f64,
    /// Lower confidence bound on `μ`.
    pub mu_lower: f64,
    /// KS test of the standardised residuals against `N(0, 1)`.
    pub fit_p_value: f64,
    pub confidence: f64,
}

/// The one-run estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OneRunEstimate {
    pub epsilon_lower_bound: f64,
    pub canaries: usize,
    pub guesses: usize,
    pub correct: usize,
    pub confidence: f64,
}

/// The Clopper–Pearson estimate (at its share of the confidence).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClopperPearsonEstimate {
    pub epsilon_lower_bound: f64,
    pub confidence: f64,
}

/// All estimators of one audit; `epsilon_lower_bound` is the largest, valid at the joint
/// `confidence`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimates {
    pub epsilon_lower_bound: f64,
    pub confidence: f64,
    pub clopper_pearson: ClopperPearsonEstimate,
    pub gdp: GdpEstimate,
    pub one_run: Option<OneRunEstimate>,
}

fn fit(e: impl std::fmt::Display) -> AuditError {
    AuditError::Estimator(e.to_string())
}

/// Mean and sum of squared deviations.
fn mean_ss(x: &[f64]) -> (f64, f64) {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    (m, x.iter().map(|v| (v - m) * (v - m)).sum())
}

/// Asymptotic Kolmogorov p-value of the one-sample statistic `d` on `n` points
/// (Stephens' small-sample correction of `λ`).
fn kolmogorov_p(d: f64, n: usize) -> f64 {
    let sn = (n as f64).sqrt();
    let lambda = (sn + 0.12 + 0.11 / sn) * d;
    let mut p = 0.0;
    for k in 1..=100 {
        let term = 2.0 * (-1f64).powi(k - 1) * (-2.0 * (k * k) as f64 * lambda * lambda).exp();
        p += term;
        if term.abs() < 1e-16 {
            break;
        }
    }
    p.clamp(0.0, 1.0)
}

/// The Gaussian-DP estimate at `confidence` (module docs).
pub fn gdp_estimate(
    canary: &[f64],
    replaced: &[f64],
    delta: f64,
    confidence: f64,
) -> Result<GdpEstimate, AuditError> {
    let (n1, n0) = (canary.len(), replaced.len());
    if n1 < 2 || n0 < 2 {
        return Err(fit("the GDP estimate needs at least 2 runs per data set"));
    }
    let (m1, ss1) = mean_ss(canary);
    let (m0, ss0) = mean_ss(replaced);
    let df = (n1 + n0 - 2) as f64;
    let s = ((ss1 + ss0) / df).sqrt();
    if !(s > 0.0 && s.is_finite()) {
        return Err(fit("the scores have no spread"));
    }
    let half = (1.0 - confidence) / 2.0;
    let t = StudentsT::new(0.0, 1.0, df)
        .map_err(fit)?
        .inverse_cdf(1.0 - half);
    let chi = ChiSquared::new(df).map_err(fit)?.inverse_cdf(half);
    let diff_lower = (m1 - m0) - t * s * (1.0 / n1 as f64 + 1.0 / n0 as f64).sqrt();
    let s_upper = s * (df / chi).sqrt();
    let mu_lower = (diff_lower / s_upper).max(0.0);
    // KS of the pooled standardised residuals against N(0, 1).
    let mut z: Vec<f64> = canary
        .iter()
        .map(|x| (x - m1) / s)
        .chain(replaced.iter().map(|x| (x - m0) / s))
        .collect();
    z.sort_by(f64::total_cmp);
    let std = Normal::standard();
    let n = z.len() as f64;
    let d = z
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = std.cdf(v);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max);
    Ok(GdpEstimate {
        epsilon_lower_bound: gdp_epsilon(mu_lower, delta)?,
        mu_hat: (m1 - m0) / s,
        mu_lower,
        fit_p_value: kolmogorov_p(d, z.len()),
        confidence,
    })
}

/// Steinke, Nasr & Jagielski (2023), App. D: the p-value of `v` or more correct guesses
/// out of `r` under `(ε, δ)`-DP with `m` canaries.
pub fn one_run_p_value(m: usize, r: usize, v: usize, eps: f64, delta: f64) -> f64 {
    if r == 0 {
        return 1.0;
    }
    let q = 1.0 / (1.0 + (-eps).exp());
    let bin = Binomial::new(q, r as u64).expect("q in (0, 1)");
    let beta = if v == 0 { 1.0 } else { bin.sf(v as u64 - 1) };
    let mut alpha: f64 = 0.0;
    let mut sum = 0.0;
    for i in 1..=v {
        sum += bin.pmf((v - i) as u64);
        if sum > i as f64 * alpha {
            alpha = sum / i as f64;
        }
    }
    (beta + alpha * delta * 2.0 * m as f64).min(1.0)
}

/// The largest `ε` (bisection to 1e-6) whose p-value is below `1 − confidence`; 0 when
/// none is.
pub fn one_run_bound(m: usize, r: usize, v: usize, delta: f64, confidence: f64) -> f64 {
    let alpha = 1.0 - confidence;
    if one_run_p_value(m, r, v, 0.0, delta) >= alpha {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while one_run_p_value(m, r, v, hi, delta) < alpha && hi < 100.0 {
        lo = hi;
        hi *= 2.0;
    }
    while hi - lo > 1e-6 {
        let mid = 0.5 * (lo + hi);
        if one_run_p_value(m, r, v, mid, delta) < alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One simulated run with `m` canaries of a mechanism whose canary test is `mu`-GDP
/// (module docs), from the stream `seed`.
pub fn one_run_gaussian(
    mu: f64,
    m: usize,
    seed: &SeedPath,
    delta: f64,
    confidence: f64,
) -> OneRunEstimate {
    let mut rng = seed.rng();
    let mut scored: Vec<(f64, bool)> = (0..m)
        .map(|_| {
            let included = rng.random::<bool>();
            let z: f64 = rand_distr::Distribution::sample(&rand_distr::StandardNormal, &mut rng);
            (if included { mu } else { 0.0 } + z, included)
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    let k = m.div_ceil(20).min(m / 2);
    let correct = scored[..k].iter().filter(|s| !s.1).count()
        + scored[m - k..].iter().filter(|s| s.1).count();
    OneRunEstimate {
        epsilon_lower_bound: one_run_bound(m, 2 * k, correct, delta, confidence),
        canaries: m,
        guesses: 2 * k,
        correct,
        confidence,
    }
}
