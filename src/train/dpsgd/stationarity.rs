//! Theorem 6.3 (projected stationarity of support-restricted DP-SGD), Lemma 6.4 (the
//! clipping-bias residual) and Corollary 6.6 (full-gradient stationarity via the energy
//! capture Gamma) of the fewer-coordinates paper ("When Do Fewer Coordinates Suffice in
//! DP-SGD?", Sec. 6, L92-L123; proofs App. C.1-C.3, L256-L283), measured along a
//! support-restricted DP-SGD trajectory on problems whose constants are known.
//!
//! The update (Sec. 6.1, L96-L98): `theta_{t+1} = theta_t - eta (ghat_t + xi_t)`, with
//! `ghat_t` the mini-batch aggregate of the masked-then-clipped per-example gradients,
//! `E[ghat_t | F_t] = P_S grad F(theta_t) + b_t` (b_t the clipping bias, supported on S)
//! and `xi_t ~ N(0, sigma^2 I_k)` on the k active coordinates.
//!
//! Display (1) of Theorem 6.3 is lost in the paper file's text extraction; it is
//! **derived** here from App. C.1 Steps 1-6 as the file words them (L260-L276): Step 1
//! (L-smoothness), Step 2 (`E<grad F, ghat> = <a, a + b>` with `a = P_S grad F`, since b
//! is supported on S), Step 3's inequality (3) "for eta_t <= 1/(4L)":
//! `eta <a, a + b> - L eta^2 (||a||^2 + ||b||^2) >= eta/4 ||a||^2 - 3 eta/4 ||b||^2`
//! (from `<a, a + b> >= ||a||^2/2 - ||b||^2/2` and `L eta^2 <= eta/4`), Step 4
//! (`E||ghat + xi||^2 <= G^2 + 2||a||^2 + 2||b||^2 + k sigma^2`, Assumption 6.2 and
//! `||a + b||^2 <= 2||a||^2 + 2||b||^2`), Steps 5-6 (telescoping):
//!
//! ```text
//! sum_t eta_t E||P_S grad F(theta_t)||^2 / sum_t eta_t
//!   <= [ 4 (F(theta_0) - F*) + 3 sum_t eta_t E||b_t||^2
//!        + 2 L sum_t eta_t^2 (G^2 + k sigma^2) ] / sum_t eta_t,     eta_t <= 1/(4L).
//! ```
//!
//! The run returns the sums of both sides; the system forms the sides (the bound uses the
//! nominal sigma, `noise_scale` only changes the noise the run injects, and the step is
//! `step_factor * eta_l / L`: both are negative controls of the system).
//!
//! Problems (all with a support S fixed before phase 2, as the theorem allows):
//! * `Quadratic`: `F = 1/2 sum_j lambda_j theta_j^2`, lambda log-spaced from L down to
//!   `L / spread` (spread 1: isotropic), F* = 0, exact gradients (G = 0, b = 0), S the
//!   first k coordinates (the largest curvatures);
//! * `Cosine`: `F = sum_j (theta_j^2/2 - a cos theta_j)`, nonconvex for a > 1, L = 1 + a,
//!   F* = -a P (at 0), exact gradients, S the first k coordinates;
//! * logistic regression on a classification data set: F the mean cross-entropy of the
//!   training set (what Poisson sampling from it targets), theta_0 = 0 so
//!   F(theta_0) = ln K, F* >= 0 (0 is used), L = lambda_max(X~^T X~ / N)/2 with X~ the
//!   inputs with a constant column (the softmax Hessian is at most 1/2 in operator norm,
//!   Gershgorin: 2 p_c (1 - p_c) <= 1/2), Poisson sampling at rate q with divisor qN, so
//!   `E[ghat | F_t] = (1/N) sum_i clip_C(P_S g_i)` exactly and
//!   `Var(ghat | F_t) = (1 - q)/(q N^2) sum_i ||clip_C(P_S g_i)||^2 <= (1 - q) C^2/(qN) = G^2`;
//!   b_t computed exactly from the N per-example gradients, with Lemma 6.4's bound
//!   `mean_i (||P_S g_i|| - C)_+` (App. C.2, L277-L282) and the Jensen-reversed
//!   `(mean_i ||P_S g_i|| - C)_+` beside it.
use super::{Classification, DpSgdError, Model, ModelKind};
use ndarray::{Array1, Array2, Axis};
use rand::{Rng, RngExt};
use rand_distr::{Distribution, StandardNormal};

/// A problem with known constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Problem {
    Quadratic { spread: f64 },
    Cosine { a: f64 },
}

/// The run's settings (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StationarityConfig {
    pub steps: usize,
    pub k: usize,
    /// Declared eta L (the theorem's hypothesis: at most 1/4).
    pub eta_l: f64,
    /// Multiplies the step the run takes (1: as declared; a negative control otherwise).
    pub step_factor: f64,
    /// Multiplies the noise sd the run injects (1: as the bound's sigma).
    pub noise_scale: f64,
}

/// Sums along one trajectory (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StationarityRun {
    pub p: usize,
    pub k: usize,
    pub smoothness: f64,
    pub f0_minus_fstar: f64,
    /// G^2 of Assumption 6.2 (0 for exact gradients).
    pub g2: f64,
    /// Nominal per-coordinate noise variance sigma^2 of the bound.
    pub sigma2: f64,
    pub sum_eta: f64,
    pub sum_eta2: f64,
    /// sum_t eta_t ||P_S grad F(theta_t)||^2.
    pub projected: f64,
    /// sum_t eta_t ||grad F(theta_t)||^2.
    pub full: f64,
    /// sum_t eta_t ||b_t||^2.
    pub bias: f64,
    /// max_t (||b_t|| - Lemma 6.4's bound) and with the Jensen-reversed bound.
    pub lemma64_excess: f64,
    pub lemma64_reversed_excess: f64,
    /// Share of (step, example) pairs with ||P_S g_i|| > C.
    pub clipped_fraction: f64,
    pub final_loss: f64,
}

impl StationarityRun {
    /// Display (1)'s left side: the eta-weighted mean of ||P_S grad F||^2.
    pub fn lhs(&self) -> f64 {
        self.projected / self.sum_eta
    }
    /// Display (1)'s right side (module docs), with `dp_factor` on the DP term k sigma^2.
    pub fn rhs(&self) -> f64 {
        (4.0 * self.f0_minus_fstar
            + 3.0 * self.bias
            + 2.0 * self.smoothness * self.sum_eta2 * (self.g2 + self.k as f64 * self.sigma2))
            / self.sum_eta
    }
    /// Definition 6.5's Gamma along this trajectory (eta-weighted energy capture).
    pub fn gamma(&self) -> f64 {
        if self.full > 0.0 {
            self.projected / self.full
        } else {
            1.0
        }
    }
}

fn check(cfg: &StationarityConfig, p: usize) -> Result<(), DpSgdError> {
    let bad = |m: String| Err(DpSgdError::InvalidConfig(m));
    if cfg.k == 0 || cfg.k > p {
        return bad(format!("stationarity: k = {} must be in 1..={p}", cfg.k));
    }
    if cfg.steps == 0 {
        return bad("stationarity: steps must be at least 1".into());
    }
    let pos = |v: f64| v.is_finite() && v > 0.0;
    if !(pos(cfg.eta_l)
        && pos(cfg.step_factor)
        && cfg.noise_scale.is_finite()
        && cfg.noise_scale >= 0.0)
    {
        return bad("stationarity: eta_l and step_factor must be > 0, noise_scale >= 0".into());
    }
    Ok(())
}

/// Masked noisy gradient descent on a synthetic problem (exact gradients, no clipping):
/// `theta_0 = theta_scale` on every coordinate, per-coordinate noise sd `sigma`.
pub fn synthetic_run(
    problem: Problem,
    p: usize,
    smoothness: f64,
    theta_scale: f64,
    sigma: f64,
    cfg: &StationarityConfig,
    rng: &mut impl Rng,
) -> Result<StationarityRun, DpSgdError> {
    check(cfg, p)?;
    if !(smoothness.is_finite()
        && smoothness > 0.0
        && theta_scale.is_finite()
        && sigma.is_finite()
        && sigma >= 0.0)
    {
        return Err(DpSgdError::InvalidConfig(
            "stationarity: L > 0, finite theta_scale and sigma >= 0 needed".into(),
        ));
    }
    let (lambdas, l, fstar, cos_a) = match problem {
        Problem::Quadratic { spread } => {
            if !(spread.is_finite() && spread >= 1.0) {
                return Err(DpSgdError::InvalidConfig(
                    "stationarity: spread must be >= 1".into(),
                ));
            }
            let lam: Vec<f64> = (0..p)
                .map(|j| smoothness * spread.powf(-(j as f64) / ((p.max(2) - 1) as f64)))
                .collect();
            (lam, smoothness, 0.0, 0.0)
        }
        Problem::Cosine { a } => {
            if !(a.is_finite() && a >= 0.0) {
                return Err(DpSgdError::InvalidConfig(
                    "stationarity: cos_a must be >= 0".into(),
                ));
            }
            (vec![1.0; p], 1.0 + a, -a * p as f64, a)
        }
    };
    // Quadratic: lambda_j theta^2/2 (cos_a = 0); cosine: theta^2/2 - a cos theta.
    let f = |theta: &[f64]| -> f64 {
        theta
            .iter()
            .zip(&lambdas)
            .map(|(&t, &lj)| 0.5 * lj * t * t - cos_a * t.cos())
            .sum()
    };
    let g = |j: usize, t: f64| -> f64 { lambdas[j] * t + cos_a * t.sin() };
    let mut theta = vec![theta_scale; p];
    let eta = cfg.step_factor * cfg.eta_l / l;
    let mut run = StationarityRun {
        p,
        k: cfg.k,
        smoothness: l,
        f0_minus_fstar: f(&theta) - fstar,
        sigma2: sigma * sigma,
        ..Default::default()
    };
    let sd = cfg.noise_scale * sigma;
    for _ in 0..cfg.steps {
        let (mut proj, mut full) = (0.0, 0.0);
        for (j, th) in theta.iter_mut().enumerate() {
            let gj = g(j, *th);
            full += gj * gj;
            if j < cfg.k {
                proj += gj * gj;
                let xi: f64 = StandardNormal.sample(rng);
                *th -= eta * (gj + sd * xi);
            }
        }
        run.sum_eta += eta;
        run.sum_eta2 += eta * eta;
        run.projected += eta * proj;
        run.full += eta * full;
    }
    run.final_loss = f(&theta) - fstar;
    if !run.final_loss.is_finite() {
        return Err(DpSgdError::Diverged { step: cfg.steps });
    }
    Ok(run)
}

/// lambda_max(X~^T X~ / N) / 2 (module docs).
pub fn logreg_smoothness(x: &Array2<f64>) -> Result<f64, DpSgdError> {
    let n = x.nrows().max(1) as f64;
    let ones = Array2::from_elem((x.nrows(), 1), 1.0);
    let xt = ndarray::concatenate(Axis(1), &[x.view(), ones.view()])
        .map_err(|e| DpSgdError::InvalidData(e.to_string()))?;
    let gram = xt.t().dot(&xt) / n;
    let (w, _) = crate::linalg::sym_eig(&gram.view())
        .map_err(|e| DpSgdError::InvalidData(format!("eigenvalues of X^T X/N: {e}")))?;
    Ok(w.iter().fold(0.0f64, |m, &v| m.max(v)) / 2.0)
}

/// Masked-then-clipped DP-SGD on multinomial logistic regression from theta_0 = 0
/// (module docs). `support`: the k active coordinates (fixed); per step one Poisson
/// sample (N uniforms), then k normals.
#[allow(clippy::too_many_arguments)]
pub fn logreg_run(
    data: &Classification,
    support: &[usize],
    batch: f64,
    clip: f64,
    noise_multiplier: f64,
    cfg: &StationarityConfig,
    rng: &mut impl Rng,
) -> Result<StationarityRun, DpSgdError> {
    let model = Model::new(ModelKind::Logreg, data.features(), data.classes);
    let p = model.num_params();
    check(cfg, p)?;
    let n = data.train_y.len();
    let q = batch / n as f64;
    if !(q > 0.0 && q <= 1.0 && clip > 0.0 && clip.is_finite() && noise_multiplier >= 0.0) {
        return Err(DpSgdError::InvalidConfig(format!(
            "stationarity: need 0 < batch <= N = {n}, C > 0, z >= 0"
        )));
    }
    if support.len() != cfg.k || support.iter().any(|&j| j >= p) {
        return Err(DpSgdError::InvalidSupport(
            "support must hold k coordinates below P".into(),
        ));
    }
    let mut mask = Array1::<f64>::zeros(p);
    for &j in support {
        mask[j] = 1.0;
    }
    let l = logreg_smoothness(&data.train_x)?;
    let (x, y) = (data.train_x.view(), &data.train_y[..]);
    let mut theta = Array1::<f64>::zeros(p);
    let nf = n as f64;
    let sigma = noise_multiplier * clip / (q * nf);
    let eta = cfg.step_factor * cfg.eta_l / l;
    let mut run = StationarityRun {
        p,
        k: cfg.k,
        smoothness: l,
        f0_minus_fstar: (data.classes as f64).ln(),
        g2: (1.0 - q) * clip * clip / (q * nf),
        sigma2: sigma * sigma,
        lemma64_excess: f64::NEG_INFINITY,
        lemma64_reversed_excess: f64::NEG_INFINITY,
        ..Default::default()
    };
    let mut clipped = 0usize;
    for step in 0..cfg.steps {
        let bw = model.backward(&theta.view(), &x, y);
        let norms = model
            .per_example_sq_norms(&bw, Some(&mask.view()))
            .mapv(f64::sqrt);
        let factors = norms.mapv(|v| if v > clip { clip / v } else { 1.0 });
        clipped += norms.iter().filter(|&&v| v > clip).count();
        let full = model.weighted_gradient_sum(&bw, &Array1::from_elem(n, 1.0 / nf).view());
        let expected = model.weighted_gradient_sum(&bw, &(&factors / nf).view()) * &mask;
        let projected = &full * &mask;
        let b = &expected - &projected;
        let b_norm = b.dot(&b).sqrt();
        let lemma = norms.iter().map(|&v| (v - clip).max(0.0)).sum::<f64>() / nf;
        let reversed = (norms.sum() / nf - clip).max(0.0);
        run.lemma64_excess = run.lemma64_excess.max(b_norm - lemma);
        run.lemma64_reversed_excess = run.lemma64_reversed_excess.max(b_norm - reversed);
        let sampled: Array1<f64> = factors
            .iter()
            .map(|&c| {
                if rng.random::<f64>() < q {
                    c / (q * nf)
                } else {
                    0.0
                }
            })
            .collect();
        let mut ghat = model.weighted_gradient_sum(&bw, &sampled.view()) * &mask;
        for &j in support {
            let xi: f64 = StandardNormal.sample(rng);
            ghat[j] += cfg.noise_scale * sigma * xi;
        }
        run.sum_eta += eta;
        run.sum_eta2 += eta * eta;
        run.projected += eta * projected.dot(&projected);
        run.full += eta * full.dot(&full);
        run.bias += eta * b_norm * b_norm;
        theta.scaled_add(-eta, &ghat);
        if !theta.iter().all(|v| v.is_finite()) {
            return Err(DpSgdError::Diverged { step });
        }
    }
    run.clipped_fraction = clipped as f64 / (cfg.steps * n) as f64;
    run.final_loss = model.backward(&theta.view(), &x, y).loss;
    Ok(run)
}

/// The top-k coordinates of |grad F(0)| on the training set (a support fixed before the
/// run; ties: lower index), for [`logreg_run`].
pub fn initial_gradient_support(data: &Classification, k: usize) -> Result<Vec<usize>, DpSgdError> {
    let model = Model::new(ModelKind::Logreg, data.features(), data.classes);
    let theta = Array1::<f64>::zeros(model.num_params());
    let g = model.mean_gradient(&theta.view(), &data.train_x.view(), &data.train_y);
    super::support::top_k(&g.mapv(|v| v * v).view(), k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedPath;

    fn cfg(k: usize, steps: usize) -> StationarityConfig {
        StationarityConfig {
            steps,
            k,
            eta_l: 0.25,
            step_factor: 1.0,
            noise_scale: 1.0,
        }
    }

    #[test]
    fn quadratic_at_its_minimum_gives_the_stationary_ratio() {
        // Per coordinate the stationary E||grad||^2 is L eta sigma^2/(2 - eta L) against
        // the bound's 2 L eta sigma^2: ratio 1/(2 (2 - 1/4)) = 0.2857.
        let mut rng = SeedPath::new(7).rng_for("t");
        let r = synthetic_run(
            Problem::Quadratic { spread: 1.0 },
            200,
            1.0,
            0.0,
            1.0,
            &cfg(200, 4000),
            &mut rng,
        )
        .unwrap();
        let ratio = r.lhs() / r.rhs();
        assert!((ratio - 0.2857).abs() < 0.01, "ratio {ratio}");
        assert_eq!(r.gamma(), 1.0);
    }

    #[test]
    fn smoothness_of_a_constant_column_is_one_half() {
        let x = Array2::<f64>::zeros((10, 1));
        assert!((logreg_smoothness(&x).unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bad_settings_are_errors() {
        let mut rng = SeedPath::new(1).rng_for("t");
        let q = Problem::Quadratic { spread: 1.0 };
        assert!(synthetic_run(q, 10, 1.0, 0.0, 1.0, &cfg(0, 10), &mut rng).is_err());
        assert!(synthetic_run(q, 10, 1.0, 0.0, 1.0, &cfg(11, 10), &mut rng).is_err());
        assert!(synthetic_run(q, 10, -1.0, 0.0, 1.0, &cfg(5, 10), &mut rng).is_err());
    }
}
