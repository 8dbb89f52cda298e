//! Canary constructions for the three audited systems, and the two engines that score
//! one run of the mechanism on either adjacent data set.
//!
//! # DP-GD systems (`rf-dpgd`, `feature-learning-second-layer`)
//!
//! The model is linear in the trained parameters, `f(x_i) = phi_i^T theta`. The n - 1
//! ordinary samples are drawn as in the paper (random features `tanh(Vx)` with
//! `y = sign(u^T x)`, privacy-for-free Fig. 2; or the hidden features
//! `tanh(W_1^T x + b)` of the blog's network after its first layer, with single-index
//! labels). The canary is sample n, a *feature-space* canary: `phi_c = s e`, with e a
//! unit vector orthogonal to every ordinary feature vector (it exists since p >= n) and
//! s the mean norm of the ordinary feature vectors. The DP guarantee of DP-GD holds for
//! every data set (its proof only uses the clipping bound, privacy-for-free Prop. 2.2),
//! so a canary chosen directly in feature space is a legitimate, and the strongest,
//! adversary (the "gradient canary" threat model of Nasr et al. 2021, Sec. 3).
//!
//! Adjacent data sets (replace-one): D has the canary label `y_c = +M`, D' the mirror
//! label `-M`. M is large enough that `|r_c| s` exceeds C along the whole run (a bound
//! on the canary coordinate that fails only if some noise draw exceeds 40 standard
//! deviations), so the canary's gradient is always clipped: its clipped gradient is
//! `+C e` in D' and `-C e` in D. The clipped means differ by exactly `2C/n` in the
//! direction e at every step: the worst case of replace-one adjacency. (With the
//! `multiply` and `none` clip rules, whose sensitivity is unbounded, M is instead sized
//! so that the canary's first gradient has norm 4C; see `assemble`.)
//!
//! Score: the canary coordinate `e^T theta_T` of the final iterate.
//!
//! **Exact 1-D reduction (fast engine).** With ridge `lambda = 0` and the divide clip
//! rule, the ordinary samples' gradients `2 r_i phi_i` are orthogonal to e and their
//! residuals `r_i = phi_i^T theta` do not depend on `e^T theta`; the noise is isotropic.
//! Hence `x_t = e^T theta_t` follows exactly
//!
//! ```text
//! x_{t+1} = x_t + b eta C / n + sqrt(eta) (kappa C / n) sigma xi_t,   xi_t ~ N(0, 1) i.i.d.,
//! ```
//!
//! with `b = +1` in D and `-1` in D', and it is independent of the orthogonal part,
//! whose law is the same in D and D'. So `x_T ~ N(x_0 + b T eta C/n, T noise_std^2)`
//! exactly, and `x_T` is a sufficient statistic for D vs D' (the likelihood ratio is
//! monotone in it: the threshold test is Neyman-Pearson optimal). The fast engine draws
//! `x_T` directly (one normal per run). The mean gap over the noise std is
//! `2 sqrt(T) eta C / (sqrt(eta) kappa C sigma) = sqrt(T)/z` with
//! `z = kappa sigma / (2 sqrt(eta))`: exactly the mu of the GDP accountant, so an audit
//! of the exactly calibrated mechanism can be tight.
//!
//! With `lambda > 0` the ridge term `2 lambda theta` sits inside every per-sample
//! gradient before clipping (blog Algorithm 1, [`crate::train::dpgd`]), which couples
//! `x_t` to the rest through the clip factors; no exact 1-D reduction is claimed and
//! the direct engine is used.
//!
//! **Direct engine.** Each run is a full [`crate::train::dpgd::run`] on the n x p
//! problem (the real training code path), and the score is `e^T theta_T`.
//!
//! # First layer (`feature-learning-first-layer`)
//!
//! The blog's first layer (Algorithm 1, steps 2-3): one full-batch gradient step from
//! `(W_0, b, a_0)` without clipping, per-neuron normalisation, then `sigma_W` Gaussian
//! noise. The initialisation is drawn once from the seed and treated as public (the
//! standard white-box audit setting; a DP claim that holds for a random init but not
//! for a fixed one would rely on hiding the init, which nothing in the blog does). The
//! canary is one first-layer sample `x_c = sqrt(d) u` (u a random unit vector) with a
//! huge label `y_c = +M` in D and `-M` in D' (M = 1e9): its unclipped gradient dominates
//! every neuron's update, so after normalisation the neurons point to about `+u` in D
//! and `-u` in D'. Given the public init, the pre-noise output `N(D)` is deterministic,
//! so the mechanism is exactly the Gaussian mechanism `N(D) + sigma_W Xi`; its
//! optimal test projects onto `Delta = N(D) - N(D')`, and the score is
//! `<W_noised, Delta/||Delta||_F>`, distributed as
//! `N(<N(D_world), Delta/||Delta||_F>, sigma_W^2)` (fast engine: one normal per run;
//! direct engine: the full d x p noise matrix is drawn and projected).
//!
//! Normalisation acts as clipping: every normalised neuron is a unit vector, so
//! `||N(D) - N(D')||_F <= 2 sqrt(p)` for every pair of data sets, and the first layer
//! is `mu_W`-GDP with `mu_W = 2 sqrt(p)/sigma_W` (Dong, Roth & Su 2019, Thm 2.7). With
//! Assumption 4's `sigma_W = sqrt(d^{1+eps_B}/n) ln^{q+3} d` this does not depend on the
//! target epsilon at all.
use super::AuditError;
use crate::data::{self, gaussian_matrix, gaussian_vector, Dataset, InputDist, Target};
use crate::models::{RandomFeatures, TwoLayer};
use crate::rng::{SeedPath, StreamRng};
use crate::train::dpgd::{self, ClipRule, DpGdConfig, DpGdRecipe, Problem, RecordPlan};
use crate::train::feature_learning::{
    first_layer_gradient, first_layer_step, A0Init, GradReduction,
};
use crate::train::recipe::FirstLayerRecipe;
use crate::train::Recipe;
use ndarray::{Array1, Array2, ArrayView2};
use rand_distr::{Distribution, StandardNormal};

/// Hermite coefficients of the single-index link of the feature-learning systems:
/// `sigma_* = He_1 + 0.5 He_2/sqrt(2)` (information exponent 1, degree q = 2; blog
/// Assumption 1).
pub const LINK_COEFFS: [f64; 3] = [0.0, 1.0, 0.5];

/// Degree q of [`LINK_COEFFS`].
pub const LINK_DEGREE: u32 = 2;

/// Label of the first-layer canary (its sign flips between D and D').
pub const FIRST_LAYER_CANARY_LABEL: f64 = 1e9;

/// Bound, in standard deviations, on every noise draw used to size the DP-GD canary
/// label (a violation has probability below `T * 1e-340`).
const NOISE_BOUND_SDS: f64 = 40.0;

/// Which of the two adjacent data sets a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum World {
    /// D: the canary with label +M (the score is pushed up).
    Canary,
    /// D': the canary replaced by its mirror, label -M.
    Replaced,
}

impl World {
    pub const fn name(self) -> &'static str {
        match self {
            World::Canary => "canary",
            World::Replaced => "replaced",
        }
    }

    const fn sign(self) -> f64 {
        match self {
            World::Canary => 1.0,
            World::Replaced => -1.0,
        }
    }
}

/// A unit vector orthogonal to every row of `rows` (modified Gram-Schmidt with
/// re-orthogonalisation, applied to a Gaussian vector from `rng`).
pub fn orthogonal_unit(
    rows: &ArrayView2<f64>,
    rng: &mut StreamRng,
) -> Result<Array1<f64>, AuditError> {
    let p = rows.ncols();
    let mut basis: Vec<Array1<f64>> = Vec::new();
    let project_out = |v: &mut Array1<f64>, basis: &[Array1<f64>]| {
        for _ in 0..2 {
            for q in basis {
                let c = q.dot(v);
                v.scaled_add(-c, q);
            }
        }
    };
    for r in rows.rows() {
        let scale = r.dot(&r).sqrt();
        let mut v = r.to_owned();
        project_out(&mut v, &basis);
        let nv = v.dot(&v).sqrt();
        if nv > 1e-10 * scale {
            basis.push(v / nv);
        }
    }
    if basis.len() >= p {
        return Err(AuditError::Canary(format!(
            "the {} ordinary feature vectors span R^{p}: no direction is orthogonal to them \
             (need p >= n)",
            rows.nrows()
        )));
    }
    let mut g = gaussian_vector(p, rng);
    project_out(&mut g, &basis);
    let ng = g.dot(&g).sqrt();
    if !(ng.is_finite() && ng > 1e-8) {
        return Err(AuditError::Canary(
            "could not find a direction orthogonal to the ordinary features".into(),
        ));
    }
    Ok(g / ng)
}

/// A DP-GD audit problem: n x p features with the canary in the last row, the labels of
/// both worlds, the start, the (noised) configuration, and the parameters of the
/// canary-coordinate recursion.
#[derive(Clone, Debug)]
pub struct DpgdCanaryProblem {
    /// n x p features; row n - 1 is the canary `s e`.
    pub phi: Array2<f64>,
    /// Labels of D (canary label +M in the last entry).
    pub y_canary: Array1<f64>,
    /// Labels of D' (canary label -M).
    pub y_replaced: Array1<f64>,
    /// Start theta_0 (or a_0).
    pub theta0: Array1<f64>,
    /// The canary direction e (unit, orthogonal to the ordinary features).
    pub direction: Array1<f64>,
    /// The DP-GD configuration as run (sigma already calibrated and scaled).
    pub config: DpGdConfig,
    /// Canary label magnitude M.
    pub canary_label: f64,
    /// Canary feature norm s.
    pub canary_norm: f64,
    /// The DP-GD formulas the runs execute ([`DpGdRecipe::PAPER`] normally): the
    /// direct engine runs [`dpgd::run`] with them, the fast engine's noise std is
    /// [`DpGdRecipe::noise_std`].
    pub recipe: DpGdRecipe,
}

impl DpgdCanaryProblem {
    /// Assembles the problem from the ordinary features and labels: finds e, sizes M
    /// (module docs), appends the canary row.
    fn assemble(
        phi_rest: Array2<f64>,
        y_rest: Array1<f64>,
        theta0: Array1<f64>,
        config: DpGdConfig,
        rng: &mut StreamRng,
        recipe: &DpGdRecipe,
    ) -> Result<Self, AuditError> {
        let (m, p) = phi_rest.dim();
        let n = m + 1;
        let e = orthogonal_unit(&phi_rest.view(), rng)?;
        let s = phi_rest
            .rows()
            .into_iter()
            .map(|r| r.dot(&r).sqrt())
            .sum::<f64>()
            / m.max(1) as f64;
        let s = if s > 0.0 && s.is_finite() { s } else { 1.0 };
        // Bound on |x_t| = |e^T theta_t|: |x_{t+1}| <= rho |x_t| + eta C/n + K noise_std,
        // with rho >= the largest |1 - 2 eta lambda S/n| over clip sums S in [0, n].
        let nf = n as f64;
        let c = config.clip;
        let rho = 1f64.max((1.0 - 2.0 * config.eta * config.ridge).abs());
        let step = config.eta * c / nf + NOISE_BOUND_SDS * recipe.noise_std(&config, n);
        let mut bound = theta0.dot(&e).abs();
        for _ in 0..config.steps {
            bound = rho * bound + step;
        }
        // Divide rule: |r_c| s >= C + 2 lambda B + s keeps ||g_c|| > C (module docs); a
        // larger M only brings the clipped canary gradient closer to -+C e when
        // lambda > 0, so it gets a factor 1e3 of head room.
        // Multiply and none rules: the sensitivity is unbounded and any label is a valid
        // canary; M is sized so that the canary's first gradient has norm about 4C
        // (|r_c| = 2C/s at x_0). A huge M makes the multiply rule's amplified step
        // (which grows like r_c^2) overshoot and diverge.
        let canary_label = if config.clip_rule == ClipRule::Divide {
            1e3 * (s * bound + (c + 2.0 * config.ridge * bound) / s + 1.0)
        } else {
            s * theta0.dot(&e).abs() + 2.0 * c / s
        };
        if !canary_label.is_finite() {
            return Err(AuditError::Canary(format!(
                "the canary label needed to keep the canary clipped is not finite \
                 (bound on the canary coordinate {bound:e})"
            )));
        }
        let mut phi = Array2::<f64>::zeros((n, p));
        phi.slice_mut(ndarray::s![..m, ..]).assign(&phi_rest);
        phi.row_mut(m).assign(&(&e * s));
        let mut y_canary = Array1::<f64>::zeros(n);
        y_canary.slice_mut(ndarray::s![..m]).assign(&y_rest);
        let mut y_replaced = y_canary.clone();
        y_canary[m] = canary_label;
        y_replaced[m] = -canary_label;
        Ok(Self {
            phi,
            y_canary,
            y_replaced,
            theta0,
            direction: e,
            config,
            canary_label,
            canary_norm: s,
            recipe: *recipe,
        })
    }

    /// Random-features problem (privacy-for-free Sec. 2.2 and Fig. 2): x ~ N(0, I_d),
    /// `phi = tanh(Vx)`, `y = sign(u^T x)`, `theta_0 = 0`. Draws, in order, from
    /// `path/"data"`: u (d), the n - 1 inputs; from `path/"features"`: V; from
    /// `path/"canary"`: the direction e. The runs use the DP-GD formulas of `recipe`.
    pub fn random_features(
        d: usize,
        n: usize,
        p: usize,
        config: DpGdConfig,
        path: &SeedPath,
        recipe: &DpGdRecipe,
    ) -> Result<Self, AuditError> {
        let mut rng = path.rng_for("data");
        let u = data::unit_vector(d, &mut rng);
        let ds = Dataset::sample(
            n - 1,
            d,
            InputDist::Gaussian,
            &Target::Sign { u },
            0.0,
            &mut rng,
        );
        let model = RandomFeatures::sample(p, d, &mut path.rng_for("features"));
        let phi_rest = model.features(&ds.x.view());
        Self::assemble(
            phi_rest,
            ds.y,
            Array1::zeros(p),
            config,
            &mut path.rng_for("canary"),
            recipe,
        )
    }

    /// Second layer of the blog's Algorithm 1: the first layer is built once (public to
    /// the second-layer audit: it is computed on a disjoint data set), by
    /// [`first_layer_network`]; the ordinary second-layer samples are x ~ N(0, I_d) with
    /// single-index labels; `a_0 = (1/sqrt p) 1`. Draws: `path/"first-layer"` (see
    /// [`first_layer_network`]), `path/"data"`: the n - 1 inputs, `path/"canary"`: e.
    /// The first layer and the runs use the formulas of `recipe`.
    pub fn second_layer(
        d: usize,
        n: usize,
        p: usize,
        sigma_w: f64,
        config: DpGdConfig,
        path: &SeedPath,
        recipe: &Recipe,
    ) -> Result<Self, AuditError> {
        let (net, target) = first_layer_network(
            d,
            n,
            p,
            sigma_w,
            &path.child("first-layer"),
            &recipe.first_layer,
        )?;
        let ds = Dataset::sample(
            n - 1,
            d,
            InputDist::Gaussian,
            &target,
            0.0,
            &mut path.rng_for("data"),
        );
        let phi_rest = net.features(&ds.x.view());
        Self::assemble(
            phi_rest,
            ds.y,
            net.a.clone(),
            config,
            &mut path.rng_for("canary"),
            &recipe.dpgd,
        )
    }

    /// Number of samples n (canary included).
    pub fn n(&self) -> usize {
        self.y_canary.len()
    }

    /// True when the fast engine's 1-D reduction is exact (module docs): ridge 0 and
    /// the divide rule.
    pub fn fast_is_exact(&self) -> bool {
        self.config.ridge == 0.0 && self.config.clip_rule == ClipRule::Divide
    }

    /// Drift per step of the canary coordinate in D: `eta C / n`.
    pub fn drift(&self) -> f64 {
        self.config.eta * self.config.clip / self.n() as f64
    }

    /// The exact mu of the canary test under the 1-D reduction:
    /// `2 T drift / (sqrt(T) noise_std)`; `None` when the reduction does not apply.
    pub fn canary_mu(&self) -> Option<f64> {
        if !self.fast_is_exact() {
            return None;
        }
        let t = self.config.steps as f64;
        let sd = self.config.noise_std(self.n()) * t.sqrt();
        Some(if sd > 0.0 {
            2.0 * t * self.drift() / sd
        } else {
            f64::INFINITY
        })
    }

    /// Fast engine: one draw of `x_T` (module docs). One standard normal from `rng`.
    pub fn fast_score(&self, world: World, rng: &mut StreamRng) -> f64 {
        let t = self.config.steps as f64;
        let z: f64 = StandardNormal.sample(rng);
        self.theta0.dot(&self.direction)
            + world.sign() * t * self.drift()
            + self.recipe.noise_std(&self.config, self.n()) * t.sqrt() * z
    }

    /// Direct engine: a full DP-GD run ([`crate::train::dpgd::run`], with the problem's
    /// recipe) on the world's data
    /// set, noise from `rng`; returns `(e^T theta_T, max over steps of the clip
    /// fraction of the ordinary samples)`.
    pub fn direct_score(
        &self,
        world: World,
        rng: &mut StreamRng,
    ) -> Result<(f64, f64), crate::train::TrainError> {
        let y = match world {
            World::Canary => &self.y_canary,
            World::Replaced => &self.y_replaced,
        };
        let problem = Problem {
            phi: self.phi.view(),
            y: y.view(),
            test: None,
        };
        let plan = RecordPlan { loss_at: vec![] };
        let run = dpgd::run(
            &problem,
            self.theta0.clone(),
            &self.config,
            &plan,
            rng,
            &self.recipe,
        )?;
        let nf = self.n() as f64;
        // The canary is always clipped (1/n of the fraction); the rest are ordinary.
        let others = run
            .trajectory
            .clip_fraction
            .iter()
            .map(|&f| ((f * nf - 1.0) / (nf - 1.0)).max(0.0))
            .fold(0.0, f64::max);
        Ok((run.theta.dot(&self.direction), others))
    }
}

/// First-layer noise of the blog's Assumption 4 (with `eps_n = 0` elsewhere):
/// `sigma_W = sqrt(d^{1+eps_B}/n) ln^{q+3} d`.
pub fn assumption4_sigma_w(d: usize, n: usize, eps_b: f64) -> f64 {
    let df = d as f64;
    (df.powf(1.0 + eps_b) / n as f64).sqrt() * df.ln().powi(LINK_DEGREE as i32 + 3)
}

/// Clipping constant of the blog's Assumption 4 with `eps_n = 0`:
/// `C_a = sqrt(p) ln^{q+1} d`.
pub fn assumption4_clip(d: usize, p: usize) -> f64 {
    (p as f64).sqrt() * (d as f64).ln().powi(LINK_DEGREE as i32 + 1)
}

/// The public part of the first layer: init `W_0 ~ N(0, 1/d)`, `b ~ N(0, I_p)`,
/// `a_0 = (1/sqrt p) 1` (as printed), and the single-index target. Draws from
/// `path/"target"`: mu (d); `path/"init"`: W_0 (d x p, row by row), b (p).
fn public_init(d: usize, p: usize, path: &SeedPath) -> (TwoLayer, Target) {
    let mu = data::unit_vector(d, &mut path.rng_for("target"));
    let target = Target::SingleIndex {
        mu,
        coeffs: LINK_COEFFS.to_vec(),
    };
    let mut rng = path.rng_for("init");
    let w = gaussian_matrix(d, p, &mut rng) / (d as f64).sqrt();
    let b = gaussian_vector(p, &mut rng);
    let a = A0Init::OnesOverSqrtP.sample(p, &mut rng);
    (TwoLayer { w, b, a }, target)
}

/// First-layer step of Algorithm 1 before the noise: `W_1 = W_0 - eta_W G` with the
/// mean reduction, `eta_W = sqrt(p)` (Assumption 4, `eps_n = 0`), then per-neuron
/// normalisation — the training core's [`first_layer_step`].
fn normalised_first_step(
    net: &TwoLayer,
    x: &ArrayView2<f64>,
    y: &Array1<f64>,
    normalise: bool,
    recipe: &FirstLayerRecipe,
) -> Array2<f64> {
    let g = first_layer_gradient(net, x, &y.view(), GradReduction::Mean);
    let mut w = net.w.clone();
    first_layer_step(&mut w, &g, (net.p() as f64).sqrt(), normalise, recipe);
    w
}

/// The blog's first layer run once on n ordinary samples (steps 1-3 of Algorithm 1),
/// giving the network whose hidden features the second-layer audit uses. Draws: see
/// `public_init`, then `path/"data"`: the n inputs, `path/"noise"`: the d x p noise.
/// The step follows `recipe`.
pub fn first_layer_network(
    d: usize,
    n: usize,
    p: usize,
    sigma_w: f64,
    path: &SeedPath,
    recipe: &FirstLayerRecipe,
) -> Result<(TwoLayer, Target), AuditError> {
    let (mut net, target) = public_init(d, p, path);
    let ds = Dataset::sample(
        n,
        d,
        InputDist::Gaussian,
        &target,
        0.0,
        &mut path.rng_for("data"),
    );
    net.w = normalised_first_step(&net, &ds.x.view(), &ds.y, true, recipe);
    if sigma_w > 0.0 {
        net.w
            .scaled_add(sigma_w, &gaussian_matrix(d, p, &mut path.rng_for("noise")));
    }
    if !net.w.iter().all(|v| v.is_finite()) {
        return Err(AuditError::Canary(
            "the first layer has non-finite weights".into(),
        ));
    }
    Ok((net, target))
}

/// The first-layer audit problem (module docs).
#[derive(Clone, Debug)]
pub struct FirstLayerCanaryProblem {
    /// Normalised first-layer weights (d x p) before noise, in D.
    pub mean_canary: Array2<f64>,
    /// The same in D'.
    pub mean_replaced: Array2<f64>,
    /// `Delta / ||Delta||_F`, `Delta = mean_canary - mean_replaced`.
    pub direction: Array2<f64>,
    /// `||Delta||_F`.
    pub gap: f64,
    /// sigma_W as run.
    pub sigma_w: f64,
}

impl FirstLayerCanaryProblem {
    /// Builds the problem with the first layer of `recipe`, without the per-neuron
    /// normalisation if `normalise` is false (the sensitivity is then unbounded: a
    /// negative control). Draws: `public_init` at `path`, `path/"data"`: the n - 1
    /// ordinary inputs, `path/"canary"`: the canary direction u (d).
    pub fn new(
        d: usize,
        n: usize,
        p: usize,
        sigma_w: f64,
        normalise: bool,
        path: &SeedPath,
        recipe: &FirstLayerRecipe,
    ) -> Result<Self, AuditError> {
        let (net, target) = public_init(d, p, path);
        let ds = Dataset::sample(
            n - 1,
            d,
            InputDist::Gaussian,
            &target,
            0.0,
            &mut path.rng_for("data"),
        );
        let u = data::unit_vector(d, &mut path.rng_for("canary"));
        let mut x = Array2::<f64>::zeros((n, d));
        x.slice_mut(ndarray::s![..n - 1, ..]).assign(&ds.x);
        x.row_mut(n - 1).assign(&(&u * (d as f64).sqrt()));
        let mut y = Array1::<f64>::zeros(n);
        y.slice_mut(ndarray::s![..n - 1]).assign(&ds.y);
        y[n - 1] = FIRST_LAYER_CANARY_LABEL;
        let mean_canary = normalised_first_step(&net, &x.view(), &y, normalise, recipe);
        y[n - 1] = -FIRST_LAYER_CANARY_LABEL;
        let mean_replaced = normalised_first_step(&net, &x.view(), &y, normalise, recipe);
        let delta = &mean_canary - &mean_replaced;
        let gap = delta.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(gap.is_finite() && gap > 0.0) {
            return Err(AuditError::Canary(format!(
                "the canary does not move the first layer (||Delta||_F = {gap})"
            )));
        }
        Ok(Self {
            mean_canary,
            mean_replaced,
            direction: delta / gap,
            gap,
            sigma_w,
        })
    }

    fn projection(&self, world: World) -> f64 {
        let m = match world {
            World::Canary => &self.mean_canary,
            World::Replaced => &self.mean_replaced,
        };
        (m * &self.direction).sum()
    }

    /// Exact mu of the canary test: `||Delta||_F / sigma_W`.
    pub fn canary_mu(&self) -> f64 {
        self.gap / self.sigma_w
    }

    /// Fast engine: `<N(D_world), Delta-hat> + sigma_W Z` (one normal from `rng`).
    pub fn fast_score(&self, world: World, rng: &mut StreamRng) -> f64 {
        let z: f64 = StandardNormal.sample(rng);
        self.projection(world) + self.sigma_w * z
    }

    /// Direct engine: draws the d x p noise matrix (row by row) and projects the noised
    /// weights on `Delta-hat`.
    pub fn direct_score(&self, world: World, rng: &mut StreamRng) -> f64 {
        let (d, p) = self.direction.dim();
        let m = match world {
            World::Canary => &self.mean_canary,
            World::Replaced => &self.mean_replaced,
        };
        let mut w = gaussian_matrix(d, p, rng);
        w *= self.sigma_w;
        w += m;
        (&w * &self.direction).sum()
    }
}
