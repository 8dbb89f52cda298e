//! Support-quality diagnostics (fewer-coordinates paper Sec. 7.4) and the misranking
//! analysis of Sec. 5 (Prop. 5.3, App. B.1).
//!
//! * Oracle energy capture `Gamma = ||m o g||^2 / ||g||^2` of a support, with g the
//!   noiseless gradient on held-out data at the warm-up checkpoint; a uniformly random
//!   support of size k has expectation k/P ([`super::Mask::energy_capture`]).
//! * DP-visible proxy concentration: with `s+_j = max(s_j, 0)`,
//!   `Gamma_proxy = sum_{j in S} s+_j / sum_j s+_j` (0 when the denominator is 0),
//!   random expectation k/P ([`proxy_concentration`]).
//! * Misranking (Prop. 5.3) under the additive model of Sec. 5
//!   `g~_{t,j} = g_j + sigma xi_{t,j}`, xi i.i.d. N(0, 1), g fixed over the T1 warm-up
//!   steps, `s_j = (1/T1) sum_t g~_{t,j}^2 - sigma^2`. For `g_i^2 > g_j^2`,
//!   App. B.1 Step 1 gives `E s_j = g_j^2`, `Var s_j = (4 g_j^2 sigma^2 + 2 sigma^4)/T1`
//!   (fourth Gaussian moment), and Step 2 applies Chebyshev to `s_j - s_i`:
//!
//!   ```text
//!   P(s_j >= s_i) <= Var(s_j - s_i) / (g_i^2 - g_j^2)^2
//!                  = 4 sigma^2 (g_i^2 + g_j^2 + sigma^2) / (T1 (g_i^2 - g_j^2)^2)
//!   ```
//!
//!   ([`misranking_bound`]); [`misranking_monte_carlo`] simulates the same model.
use super::DpSgdError;
use ndarray::ArrayView1;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

/// DP-visible proxy concentration of a support (Sec. 7.4): the share of the positive
/// part of the scores that the support retains; 0 when no score is positive.
pub fn proxy_concentration(scores: &ArrayView1<f64>, support: &[usize]) -> f64 {
    let pos = |v: f64| if v > 0.0 { v } else { 0.0 };
    let total: f64 = scores.iter().map(|&v| pos(v)).sum();
    if total <= 0.0 {
        return 0.0;
    }
    support.iter().map(|&j| pos(scores[j])).sum::<f64>() / total
}

fn check_misranking_args(g_i: f64, g_j: f64, sigma: f64, t1: usize) -> Result<(), DpSgdError> {
    let bad = |m: String| Err(DpSgdError::InvalidConfig(m));
    if !(g_i.is_finite() && g_j.is_finite()) {
        return bad(format!(
            "signals must be finite, got g_i = {g_i}, g_j = {g_j}"
        ));
    }
    if g_i * g_i <= g_j * g_j {
        return bad(format!(
            "Prop. 5.3 needs g_i^2 > g_j^2, got g_i = {g_i}, g_j = {g_j}"
        ));
    }
    if !(sigma.is_finite() && sigma >= 0.0) {
        return bad(format!(
            "noise sd sigma must be finite and >= 0, got {sigma}"
        ));
    }
    if t1 == 0 {
        return bad("the number of warm-up steps T1 must be at least 1".into());
    }
    Ok(())
}

/// Prop. 5.3 (App. B.1): Chebyshev bound on the misranking probability
/// `P(s_j >= s_i)` for `g_i^2 > g_j^2` under the additive model (module docs):
/// `4 sigma^2 (g_i^2 + g_j^2 + sigma^2) / (T1 (g_i^2 - g_j^2)^2)`.
/// Returned as is (it may exceed 1, in which case it is vacuous).
pub fn misranking_bound(g_i: f64, g_j: f64, sigma: f64, t1: usize) -> Result<f64, DpSgdError> {
    check_misranking_args(g_i, g_j, sigma, t1)?;
    let (a, b, s2) = (g_i * g_i, g_j * g_j, sigma * sigma);
    let gap = a - b;
    Ok(4.0 * s2 * (a + b + s2) / (t1 as f64 * gap * gap))
}

/// A Monte Carlo estimate of a probability.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MisrankingEstimate {
    pub trials: usize,
    /// Trials with `s_j >= s_i`.
    pub misranked: usize,
    /// `misranked / trials`.
    pub probability: f64,
}

/// Monte Carlo estimate of `P(s_j >= s_i)` under the additive model of Sec. 5. Each
/// trial draws, for t = 1..T1, `xi_{t,i}` then `xi_{t,j}` (that order), and forms both
/// scores exactly as [`super::support::scores`] does.
pub fn misranking_monte_carlo(
    g_i: f64,
    g_j: f64,
    sigma: f64,
    t1: usize,
    trials: usize,
    rng: &mut impl Rng,
) -> Result<MisrankingEstimate, DpSgdError> {
    check_misranking_args(g_i, g_j, sigma, t1)?;
    if trials == 0 {
        return Err(DpSgdError::InvalidConfig(
            "Monte Carlo needs at least one trial".into(),
        ));
    }
    let t = t1 as f64;
    let floor = sigma * sigma;
    let mut misranked = 0;
    for _ in 0..trials {
        let (mut si, mut sj) = (0.0, 0.0);
        for _ in 0..t1 {
            let xi: f64 = StandardNormal.sample(rng);
            let xj: f64 = StandardNormal.sample(rng);
            let (a, b) = (g_i + sigma * xi, g_j + sigma * xj);
            si += a * a;
            sj += b * b;
        }
        if sj / t - floor >= si / t - floor {
            misranked += 1;
        }
    }
    Ok(MisrankingEstimate {
        trials,
        misranked,
        probability: misranked as f64 / trials as f64,
    })
}

/// Lemma 5.2 (L81-L86) by Monte Carlo under the additive model of Sec. 5: the mean and
/// the standard error of the mean of `trials` draws of the score
/// `s = (1/T1) sum_t (g + sigma xi_t)^2 - floor_scale sigma^2` (`floor_scale` 1: the
/// paper's noise-floor correction, so `E s = g^2`; 0: none, a negative control with
/// bias sigma^2).
pub fn score_mean_monte_carlo(
    g: f64,
    sigma: f64,
    t1: usize,
    trials: usize,
    floor_scale: f64,
    rng: &mut impl Rng,
) -> Result<(f64, f64), DpSgdError> {
    if !(g.is_finite() && sigma.is_finite() && sigma >= 0.0 && floor_scale.is_finite())
        || t1 == 0
        || trials < 2
    {
        return Err(DpSgdError::InvalidConfig(format!(
            "Lemma 5.2 Monte Carlo needs finite g, sigma >= 0, T1 >= 1 and >= 2 trials (g = {g}, sigma = {sigma}, T1 = {t1}, trials = {trials})"
        )));
    }
    let (mut sum, mut sum2) = (0.0, 0.0);
    for _ in 0..trials {
        let mut s = 0.0;
        for _ in 0..t1 {
            let xi: f64 = StandardNormal.sample(rng);
            let v = g + sigma * xi;
            s += v * v;
        }
        let s = s / t1 as f64 - floor_scale * sigma * sigma;
        sum += s;
        sum2 += s * s;
    }
    let n = trials as f64;
    let mean = sum / n;
    let var = ((sum2 - n * mean * mean) / (n - 1.0)).max(0.0);
    Ok((mean, (var / n).sqrt()))
}

/// The union bound after Prop. 5.3 (Sec. 5, L90-L91) by Monte Carlo under the additive
/// noise model: `p` coordinates, the first `k` (the oracle support S*) with signal `g_i`
/// and the other `p - k` with `g_j`, each scored as in [`misranking_monte_carlo`]
/// (`s = (1/T1) sum_t (g + sigma xi_t)^2 - sigma^2`); returns the share of `trials` in
/// which the top-k of the scores is not S* (some coordinate of S* scores at most some
/// coordinate outside it). The paper: "When every boundary pair satisfies [P(s_j >= s_i)
/// <= delta'/(k(P-k))], a union bound over the at most [k(P-k)] boundary pairs gives
/// that [S_hat = S*] with high probability" — i.e. P(S_hat != S*) <= k(P-k) times the
/// largest pair probability, each bounded by Prop. 5.3.
#[allow(clippy::too_many_arguments)]
pub fn support_miss_monte_carlo(
    g_i: f64,
    g_j: f64,
    sigma: f64,
    t1: usize,
    k: usize,
    p: usize,
    trials: usize,
    rng: &mut impl Rng,
) -> Result<MisrankingEstimate, DpSgdError> {
    check_misranking_args(g_i, g_j, sigma, t1)?;
    if trials == 0 || k == 0 || k >= p {
        return Err(DpSgdError::InvalidConfig(format!(
            "the union bound needs 1 <= k < P and at least one trial (k = {k}, P = {p}, trials = {trials})"
        )));
    }
    let t = t1 as f64;
    let mut misranked = 0;
    for _ in 0..trials {
        let (mut lowest_in, mut highest_out) = (f64::INFINITY, f64::NEG_INFINITY);
        for c in 0..p {
            let g = if c < k { g_i } else { g_j };
            let mut s = 0.0;
            for _ in 0..t1 {
                let x: f64 = StandardNormal.sample(rng);
                let a = g + sigma * x;
                s += a * a;
            }
            let score = s / t - sigma * sigma;
            if c < k {
                lowest_in = lowest_in.min(score);
            } else {
                highest_out = highest_out.max(score);
            }
        }
        if highest_out >= lowest_in {
            misranked += 1;
        }
    }
    Ok(MisrankingEstimate {
        trials,
        misranked,
        probability: misranked as f64 / trials as f64,
    })
}
