//! Empirical privacy audit (DESIGN.md section 3): a lower bound on epsilon from a
//! canary attack, to compare with the claimed epsilon.
//!
//! Standard one-run-per-trial membership test (Jagielski, Ullman & Oprea 2020, "Auditing
//! differentially private machine learning: how private is private SGD?"; Nasr et al.
//! 2021, "Adversary instantiation: lower bounds for differentially private machine
//! learning"):
//!
//! 1. build two adjacent data sets D (with a worst-case canary) and D' (the canary
//!    replaced by its mirror image), see [`canary`];
//! 2. run the mechanism `trials` times on each (so `2 trials` runs), each run with its
//!    own noise stream `seed/"audit"/<system>/<world>/<index>`, and score each run
//!    (the canary coordinate of the output);
//! 3. choose a threshold on the first half of each world's runs, measure TPR and FPR on
//!    the second half, and turn them into `eps_LB = ln((TPR_lb - delta)/FPR_ub)` with
//!    Clopper-Pearson bounds ([`stats`]).
//!
//! # Calibration of the DP-GD systems
//!
//! Full-batch DP-GD with noise `sqrt(eta) kappa C sigma / n` per coordinate. Under
//! replace-one adjacency the clipped mean moves by at most `2C/n`, so one step is the
//! Gaussian mechanism with noise multiplier `z = kappa sigma / (2 sqrt(eta))` and T steps
//! are exactly `mu`-GDP with `mu = sqrt(T)/z` (Dong, Roth & Su 2019, Thm 2.7 and
//! Cor. 3.3; DESIGN.md section 3).
//!
//! * `exact` (default): `z` is the smallest noise multiplier whose GDP epsilon at
//!   `delta` is `<= epsilon` ([`calibrate()`](crate::privacy::calibrate()) with the gdp accountant,
//!   i.e. the root of `delta(eps; mu) = delta`, Dong, Roth & Su 2019, Cor. 2.13), and
//!   `sigma = z sqrt(eta)` — the calibration is valid for `kappa = 2`. With the blog's
//!   `kappa = 1` the noise is half what replace-one adjacency needs (the blog's `C_a/n`
//!   is the add/remove sensitivity); the audit measures the consequence.
//! * `prop-2-2`: `sigma = sqrt(eta T) sqrt(8 ln(1/delta))/eps` (privacy-for-free
//!   Prop. 2.2, Eq. 5; the blog's Assumption 4 uses the same formula for `sigma_a`).
//!   It over-noises: reported as `overnoise_ratio = sigma_prop22 / sigma_exact`, and
//!   `epsilon_achieved` is the exact GDP epsilon its sigma actually gives.
//!
//! `--noise-scale` multiplies the calibrated sigma (a negative control: 0.25 must give
//! `eps_LB > epsilon`).
//!
//! # What the trials can resolve
//!
//! With `m = trials - floor(trials/2)` measured runs per world and no false positive,
//! `FPR_ub ~ ln(2/(1-c))/m`, so `eps_LB` can never exceed about
//! `ln(m / ln(2/(1-c)))` (about 7.9 for 20 000 trials at 95%): claims are audited
//! up to that resolution. The delta of the claim enters only as `TPR_lb - delta`; for
//! `delta <= 1e-4` it moves eps_LB by less than 1%, so the audit of `(eps, delta)` is a
//! test of the whole (eps, delta) curve near its high-FPR end. A mu-GDP mechanism
//! exactly calibrated to `(2, 1e-5)` has mu ~ 0.5, and the best threshold test measured
//! with 10 000 runs per world gives eps_LB ~ 0.9 (the optimal test at eps = 2 has
//! FPR ~ 1e-5, which 10 000 runs cannot measure); under-noised by 4 (mu ~ 2) it gives
//! eps_LB ~ 4.
//!
//! # Findings (seed 0, eps = 2, delta = 1e-5, 20 000 trials per data set unless said)
//!
//! | system, setting                               | mu     | exact eps | eps_LB |
//! |-----------------------------------------------|--------|-----------|--------|
//! | rf-dpgd, exact calibration                    | 0.502  | 2.00      | 0.88   |
//! | rf-dpgd, noise scale 0.25                     | 2.006  | 10.04     | 4.09   |
//! | rf-dpgd, prop-2-2 (sigma x 2.407)             | 0.208  | 0.76      | 0.26   |
//! | second layer (ridge 0.1, kappa 2), exact      | 0.502  | 2.00      | 0.90   |
//! | second layer, noise scale 0.25                | 2.006  | 10.04     | 4.09   |
//! | second layer, kappa = 1 (as printed)          | 1.003  | 4.39      | 2.22   |
//! | second layer, kappa = 1, ridge 0, 10^6 trials | 1.003  | 4.39      | 3.05   |
//! | second layer, multiply clip rule (as printed) | (none) | (none)    | 7.65   |
//! | first layer (eps_B = 0)                       | 0.977  | 4.26      | 2.48   |
//! | first layer, 10^6 trials                      | 0.977  | 4.26      | 2.96   |
//!
//! * The blog's first layer (`feature-learning-first-layer`) is `mu_W`-GDP with
//!   `mu_W = 2 sqrt(p)/sigma_W` whatever the claimed epsilon (per-neuron normalisation
//!   bounds its sensitivity; Assumption 4's `sigma_W` does not depend on epsilon), and
//!   the canary attains it (`mu_canary = mu_W` to 1e-12). At the default d = 10,
//!   n = 50, p = 200: `mu_W = 0.977`, exact epsilon 4.26 at delta = 1e-5, and the audit's
//!   lower bound (2.5 at 20 000 trials, 3.0 at 10^6) **exceeds** a claimed epsilon of 2
//!   before the second layer spends anything. Theorem 1's "f_NN is (eps, delta)-DP"
//!   does not follow from the second layer's calibration: the first layer's privacy
//!   cost is not accounted for, and `mu_W = 2 sqrt(p n)/(d^{(1+eps_B)/2} ln^{q+3} d)`
//!   grows with p and n unless eps_B is large.
//! * The blog's second layer with `kappa = 1` (noise `C_a/n`, as printed) under
//!   replace-one adjacency runs at twice the intended mu, and the audit's lower bound
//!   exceeds the claimed epsilon. With the clip line as printed (multiply by
//!   `max(1, ||g||/C)`) the sensitivity is unbounded and the bound sits at the
//!   resolution limit of the trials.
//! * With exact calibration (kappa = 2, divide rule) no audit exceeded the claim, and
//!   a quarter of the noise is always caught.
pub mod canary;
pub mod stats;

use crate::fit::FitError;
use crate::privacy::{calibrate, gdp_epsilon, Accountant, PrivacyError};
use crate::rng::SeedPath;
use crate::train::dpgd::{prop22_sigma, ClipRule, DpGdConfig};
use crate::train::{Recipe, TrainError};
use canary::{DpgdCanaryProblem, FirstLayerCanaryProblem, World};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use stats::ThresholdOutcome;
use std::fmt;
use std::str::FromStr;

/// Errors of an audit: bad parameters, an impossible canary, or a failing run.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A parameter outside its range.
    #[error("{name} must be {expected}, got {value}")]
    Parameter {
        /// The parameter (as on the command line).
        name: &'static str,
        /// What it must be.
        expected: &'static str,
        /// The rejected value.
        value: String,
    },
    /// The fast engine was asked for a configuration it does not simulate exactly.
    #[error(
        "the fast engine is exact only for ridge = 0 and the divide clip rule \
         (got ridge {ridge}, clip rule {clip_rule}); use --engine direct or auto"
    )]
    FastNotExact {
        /// The ridge lambda.
        ridge: f64,
        /// The clip rule.
        clip_rule: &'static str,
    },
    /// The canary could not be built.
    #[error("canary: {0}")]
    Canary(String),
    /// A training run failed.
    #[error("{world} run {trial}: {error}")]
    Run {
        /// `canary` or `replaced`.
        world: &'static str,
        /// Index of the run in its world.
        trial: usize,
        /// The training error (its message is part of this one's).
        error: TrainError,
    },
    /// A run produced a non-finite score.
    #[error("{world} run {trial}: non-finite score {score} (the run diverged)")]
    NonFiniteScore {
        /// `canary` or `replaced`.
        world: &'static str,
        /// Index of the run.
        trial: usize,
        /// The score.
        score: f64,
    },
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
    #[error(transparent)]
    Train(#[from] TrainError),
    #[error(transparent)]
    Fit(#[from] FitError),
}

/// The audited system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditSystem {
    /// Full-batch DP-GD on the random-features model (privacy-for-free, Algorithm 1).
    RfDpgd,
    /// DP-GD on the second layer of the blog's Algorithm 1 (ridge, kappa, clip rule).
    FeatureLearningSecondLayer,
    /// The blog's first layer: one unclipped gradient step, normalisation, sigma_W noise.
    FeatureLearningFirstLayer,
}

impl AuditSystem {
    /// Name on the command line and in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            AuditSystem::RfDpgd => "rf-dpgd",
            AuditSystem::FeatureLearningSecondLayer => "feature-learning-second-layer",
            AuditSystem::FeatureLearningFirstLayer => "feature-learning-first-layer",
        }
    }
}

impl fmt::Display for AuditSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AuditSystem {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            AuditSystem::RfDpgd,
            AuditSystem::FeatureLearningSecondLayer,
            AuditSystem::FeatureLearningFirstLayer,
        ]
        .into_iter()
        .find(|v| v.name() == s)
        .ok_or_else(|| {
            format!(
                "unknown system `{s}` (expected rf-dpgd, feature-learning-second-layer or \
                 feature-learning-first-layer)"
            )
        })
    }
}

/// How sigma is calibrated to (epsilon, delta) (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Calibration {
    /// Exact Gaussian DP.
    #[serde(rename = "exact")]
    Exact,
    /// privacy-for-free Prop. 2.2.
    #[serde(rename = "prop-2-2")]
    Prop22,
}

impl Calibration {
    pub const fn name(self) -> &'static str {
        match self {
            Calibration::Exact => "exact",
            Calibration::Prop22 => "prop-2-2",
        }
    }
}

impl FromStr for Calibration {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "exact" => Ok(Calibration::Exact),
            "prop-2-2" => Ok(Calibration::Prop22),
            other => Err(format!(
                "unknown calibration `{other}` (expected exact or prop-2-2)"
            )),
        }
    }
}

/// Which engine simulates the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditEngine {
    /// Fast when it is exact for the configuration, direct otherwise.
    Auto,
    /// The exact law of the score, one normal per run ([`canary`] docs).
    Fast,
    /// The real training code path, one full run per trial.
    Direct,
}

impl AuditEngine {
    pub const fn name(self) -> &'static str {
        match self {
            AuditEngine::Auto => "auto",
            AuditEngine::Fast => "fast",
            AuditEngine::Direct => "direct",
        }
    }
}

impl FromStr for AuditEngine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(AuditEngine::Auto),
            "fast" => Ok(AuditEngine::Fast),
            "direct" => Ok(AuditEngine::Direct),
            other => Err(format!(
                "unknown engine `{other}` (expected auto, fast or direct)"
            )),
        }
    }
}

/// Name of a clip rule (as on the command line).
pub const fn clip_rule_name(rule: ClipRule) -> &'static str {
    match rule {
        ClipRule::Divide => "divide",
        ClipRule::Multiply => "multiply",
        ClipRule::None => "none",
    }
}

/// Parses `divide`, `multiply` or `none`.
pub fn parse_clip_rule(s: &str) -> Result<ClipRule, String> {
    match s {
        "divide" => Ok(ClipRule::Divide),
        "multiply" => Ok(ClipRule::Multiply),
        "none" => Ok(ClipRule::None),
        other => Err(format!(
            "unknown clip rule `{other}` (expected divide, multiply or none)"
        )),
    }
}

/// Everything an audit needs. Build with [`AuditConfig::new`] (defaults below), adjust
/// fields, then [`run_audit`] validates it.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditConfig {
    pub system: AuditSystem,
    /// Claimed epsilon (> 0).
    pub epsilon: f64,
    /// delta of the claim, in (0, 1).
    pub delta: f64,
    /// Runs per data set (>= 2); the mechanism runs `2 trials` times.
    pub trials: usize,
    /// Multiplier of the calibrated noise (> 0; 1 = as calibrated).
    pub noise_scale: f64,
    /// Joint confidence of the Clopper-Pearson bounds, in (0, 1).
    pub confidence: f64,
    /// DP-GD systems: how sigma is calibrated. Ignored by the first layer.
    pub calibration: Calibration,
    pub engine: AuditEngine,
    /// Input dimension d (default 10).
    pub d: usize,
    /// Samples n, canary included (default 50).
    pub n: usize,
    /// Features / neurons p (default 200; p >= n).
    pub p: usize,
    /// DP-GD steps T (default 20; ignored by the first layer).
    pub steps: usize,
    /// Noise constant kappa of `sqrt(eta) kappa C sigma / n` (default 2).
    pub kappa: f64,
    /// Clip rule (default divide).
    pub clip_rule: ClipRule,
    /// Ridge lambda of the second layer (default 0.1; rf-dpgd always uses 0).
    pub ridge: f64,
    /// eps_B of Assumption 4's sigma_W (default 0).
    pub eps_b: f64,
    /// First layer: normalise the neurons after the gradient step (Algorithm 1, step 3;
    /// default true). Without it the sensitivity is unbounded.
    pub normalise: bool,
}

impl AuditConfig {
    /// Defaults: 20 000 trials per data set, noise scale 1, confidence 0.95, exact
    /// calibration, auto engine, d = 10, n = 50, p = 200, T = 20, kappa = 2, divide
    /// rule, ridge 0.1 (second layer only), eps_B = 0.
    pub fn new(system: AuditSystem, epsilon: f64, delta: f64) -> Self {
        Self {
            system,
            epsilon,
            delta,
            trials: 20_000,
            noise_scale: 1.0,
            confidence: 0.95,
            calibration: Calibration::Exact,
            engine: AuditEngine::Auto,
            d: 10,
            n: 50,
            p: 200,
            steps: 20,
            kappa: 2.0,
            clip_rule: ClipRule::Divide,
            ridge: 0.1,
            eps_b: 0.0,
            normalise: true,
        }
    }

    /// Range checks; every error names the parameter and the rejected value.
    pub fn validate(&self) -> Result<(), AuditError> {
        let bad = |name, expected, value: String| {
            Err(AuditError::Parameter {
                name,
                expected,
                value,
            })
        };
        if !(self.epsilon > 0.0 && self.epsilon.is_finite()) {
            return bad("epsilon", "positive and finite", self.epsilon.to_string());
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return bad("delta", "in (0, 1)", self.delta.to_string());
        }
        if self.trials < 2 {
            return bad("trials", "at least 2", self.trials.to_string());
        }
        if !(self.noise_scale > 0.0 && self.noise_scale.is_finite()) {
            return bad(
                "noise-scale",
                "positive and finite",
                self.noise_scale.to_string(),
            );
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return bad("confidence", "in (0, 1)", self.confidence.to_string());
        }
        if self.d < 2 {
            return bad("d", "at least 2", self.d.to_string());
        }
        if self.n < 2 {
            return bad(
                "n",
                "at least 2 (the canary and one ordinary sample)",
                self.n.to_string(),
            );
        }
        if self.p < self.n {
            return bad(
                "p",
                "at least n (the canary direction must be orthogonal to the other features)",
                format!("p = {} with n = {}", self.p, self.n),
            );
        }
        if self.steps == 0 {
            return bad("steps", "at least 1", "0".into());
        }
        if !(self.kappa > 0.0 && self.kappa.is_finite()) {
            return bad("kappa", "positive and finite", self.kappa.to_string());
        }
        if !(self.ridge >= 0.0 && self.ridge.is_finite()) {
            return bad("ridge", "non-negative and finite", self.ridge.to_string());
        }
        if !self.eps_b.is_finite() {
            return bad("eps-b", "finite", self.eps_b.to_string());
        }
        Ok(())
    }
}

/// What an audit found (serialised as the `--json` document).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditResult {
    pub system: AuditSystem,
    /// Engine actually used (`fast` or `direct`).
    pub engine: AuditEngine,
    /// `null` for the first layer (no calibration to epsilon).
    pub calibration: Option<Calibration>,
    /// `max(0, ln((TPR_lb - delta)/FPR_ub))` on the measurement half.
    pub epsilon_lower_bound: f64,
    pub epsilon_claimed: f64,
    pub delta: f64,
    pub confidence: f64,
    /// Runs per data set.
    pub trials: usize,
    /// Runs per data set in the measurement half.
    pub measured: usize,
    /// TPR and FPR on the measurement half, at `threshold`.
    pub tpr: f64,
    pub fpr: f64,
    pub tpr_lower: f64,
    pub fpr_upper: f64,
    /// Threshold chosen on the selection half (canary declared when score > threshold).
    pub threshold: f64,
    /// Noise level as run (sigma of DP-GD, or sigma_W), after `noise_scale`.
    pub sigma: f64,
    pub noise_scale: f64,
    /// Noise std / replace-one sensitivity per step, as run (first layer: sigma_W /
    /// (2 sqrt p)).
    pub noise_multiplier: f64,
    /// GDP mu of the mechanism as run: `sqrt(T)/noise_multiplier` (exact for the
    /// transcript; an upper bound for what the final iterate reveals). `null` when the
    /// clip rule does not bound the sensitivity (multiply, none).
    pub mu: Option<f64>,
    /// Exact GDP epsilon at `delta` of the mechanism as run (Dong, Roth & Su 2019,
    /// Cor. 2.13): an upper bound the audit must not exceed. `null` with `mu`.
    pub epsilon_achieved: Option<f64>,
    /// mu of the canary test itself when known in closed form (`null` otherwise).
    pub mu_canary: Option<f64>,
    /// `sigma_prop22 / sigma_exact` for the DP-GD systems (1 with exact calibration).
    pub overnoise_ratio: Option<f64>,
    /// Direct engine on DP-GD systems: fraction of runs in which some ordinary
    /// (non-canary) sample was clipped at some step.
    pub runs_with_ordinary_clipping: Option<f64>,
}

/// Noise level of a DP-GD system: `(sigma as run, sigma_calibrated / sigma_exact)`.
fn calibrate_dpgd(cfg: &AuditConfig, eta: f64, recipe: &Recipe) -> Result<(f64, f64), AuditError> {
    let cal = calibrate(
        Accountant::Gdp,
        cfg.epsilon,
        cfg.delta,
        1.0,
        cfg.steps as u64,
        &recipe.accounting,
    )?;
    // z = sigma / sqrt(eta) for kappa = 2 (module docs).
    let sigma_exact = cal.noise_multiplier * eta.sqrt();
    let sigma_cal = match cfg.calibration {
        Calibration::Exact => sigma_exact,
        Calibration::Prop22 => prop22_sigma(eta, cfg.steps, cfg.epsilon, cfg.delta, &recipe.dpgd)?,
    };
    Ok((sigma_cal * cfg.noise_scale, sigma_cal / sigma_exact))
}

/// The seed path of the audited problem (its data, features, canary).
fn problem_path(seed: u64, system: AuditSystem) -> SeedPath {
    SeedPath::new(seed)
        .child("audit")
        .child(system.name())
        .child("problem")
}

/// The per-run noise stream of an audit.
fn trial_path(seed: u64, system: AuditSystem, world: World, trial: usize) -> SeedPath {
    SeedPath::new(seed)
        .child("audit")
        .child(system.name())
        .child(world.name())
        .child(trial)
}

/// Scores of both worlds (index order), plus, for the direct DP-GD engine, the
/// fraction of runs in which an ordinary sample was clipped.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditScores {
    pub canary: Vec<f64>,
    pub replaced: Vec<f64>,
    pub engine: AuditEngine,
    pub runs_with_ordinary_clipping: Option<f64>,
}

/// The mechanism as configured: the built problem and its noise level.
enum Mechanism {
    Dpgd {
        problem: Box<DpgdCanaryProblem>,
        overnoise_ratio: f64,
    },
    FirstLayer(Box<FirstLayerCanaryProblem>),
}

fn build(cfg: &AuditConfig, seed: u64, recipe: &Recipe) -> Result<Mechanism, AuditError> {
    cfg.validate()?;
    crate::linalg::pin_blas_threads();
    let path = problem_path(seed, cfg.system);
    let (d, n, p) = (cfg.d, cfg.n, cfg.p);
    let pf = p as f64;
    match cfg.system {
        AuditSystem::RfDpgd | AuditSystem::FeatureLearningSecondLayer => {
            // privacy-for-free Sec. 4 (Fig. 2): eta = 1/p, C = c sqrt(p) with c = 1.
            // Blog second layer: eta_a = 1/p (Assumption 4's eta_a = ln^2 d / p makes
            // the ridge step unstable at small d), C_a per Assumption 4 (eps_n = 0).
            let eta = 1.0 / pf;
            let (sigma, overnoise_ratio) = calibrate_dpgd(cfg, eta, recipe)?;
            let rf = cfg.system == AuditSystem::RfDpgd;
            let config = DpGdConfig {
                eta,
                steps: cfg.steps,
                clip: if rf {
                    pf.sqrt()
                } else {
                    canary::assumption4_clip(d, p)
                },
                clip_rule: cfg.clip_rule,
                sigma,
                kappa: cfg.kappa,
                ridge: if rf { 0.0 } else { cfg.ridge },
            };
            config.validate()?;
            let problem = if rf {
                DpgdCanaryProblem::random_features(d, n, p, config, &path, &recipe.dpgd)?
            } else {
                let sigma_w = canary::assumption4_sigma_w(d, n, cfg.eps_b);
                DpgdCanaryProblem::second_layer(d, n, p, sigma_w, config, &path, recipe)?
            };
            Ok(Mechanism::Dpgd {
                problem: Box::new(problem),
                overnoise_ratio,
            })
        }
        AuditSystem::FeatureLearningFirstLayer => {
            let sigma_w = canary::assumption4_sigma_w(d, n, cfg.eps_b) * cfg.noise_scale;
            if !(sigma_w.is_finite() && sigma_w > 0.0) {
                return Err(AuditError::Parameter {
                    name: "eps-b",
                    expected: "such that sigma_W is positive and finite",
                    value: format!("{} (sigma_W = {sigma_w})", cfg.eps_b),
                });
            }
            Ok(Mechanism::FirstLayer(Box::new(
                FirstLayerCanaryProblem::new(
                    d,
                    n,
                    p,
                    sigma_w,
                    cfg.normalise,
                    &path,
                    &recipe.first_layer,
                )?,
            )))
        }
    }
}

fn resolve_engine(cfg: &AuditConfig, mech: &Mechanism) -> Result<AuditEngine, AuditError> {
    let exact = match mech {
        Mechanism::Dpgd { problem, .. } => problem.fast_is_exact(),
        Mechanism::FirstLayer(_) => true,
    };
    match (cfg.engine, exact) {
        (AuditEngine::Auto, true) | (AuditEngine::Fast, true) => Ok(AuditEngine::Fast),
        (AuditEngine::Auto, false) | (AuditEngine::Direct, _) => Ok(AuditEngine::Direct),
        (AuditEngine::Fast, false) => Err(AuditError::FastNotExact {
            ridge: cfg.ridge,
            clip_rule: clip_rule_name(cfg.clip_rule),
        }),
    }
}

/// One world's scores, in index order (parallel over runs; each run's stream depends
/// only on its index, so the result does not depend on the thread count).
fn world_scores(
    cfg: &AuditConfig,
    mech: &Mechanism,
    engine: AuditEngine,
    world: World,
    seed: u64,
    recipe: &Recipe,
) -> Result<(Vec<f64>, usize), AuditError> {
    let data = problem_path(seed, cfg.system).child("data");
    let one = |i: usize| -> Result<(f64, bool), AuditError> {
        let mut rng = recipe.noise_rng(&trial_path(seed, cfg.system, world, i), &data);
        let (score, clipped) = match (mech, engine) {
            (Mechanism::Dpgd { problem, .. }, AuditEngine::Direct) => {
                let (s, others) =
                    problem
                        .direct_score(world, &mut rng)
                        .map_err(|error| AuditError::Run {
                            world: world.name(),
                            trial: i,
                            error,
                        })?;
                (s, others > 0.0)
            }
            (Mechanism::Dpgd { problem, .. }, _) => (problem.fast_score(world, &mut rng), false),
            (Mechanism::FirstLayer(fl), AuditEngine::Direct) => {
                (fl.direct_score(world, &mut rng), false)
            }
            (Mechanism::FirstLayer(fl), _) => (fl.fast_score(world, &mut rng), false),
        };
        if !score.is_finite() {
            return Err(AuditError::NonFiniteScore {
                world: world.name(),
                trial: i,
                score,
            });
        }
        Ok((score, clipped))
    };
    let out: Vec<(f64, bool)> = (0..cfg.trials)
        .into_par_iter()
        .map(one)
        .collect::<Result<_, _>>()?;
    let clipped = out.iter().filter(|(_, c)| *c).count();
    Ok((out.into_iter().map(|(s, _)| s).collect(), clipped))
}

fn scores_of(
    cfg: &AuditConfig,
    mech: &Mechanism,
    seed: u64,
    recipe: &Recipe,
) -> Result<AuditScores, AuditError> {
    let engine = resolve_engine(cfg, mech)?;
    let (canary, c1) = world_scores(cfg, mech, engine, World::Canary, seed, recipe)?;
    let (replaced, c2) = world_scores(cfg, mech, engine, World::Replaced, seed, recipe)?;
    let runs_with_ordinary_clipping = match (mech, engine) {
        (Mechanism::Dpgd { .. }, AuditEngine::Direct) => {
            Some((c1 + c2) as f64 / (2 * cfg.trials) as f64)
        }
        _ => None,
    };
    Ok(AuditScores {
        canary,
        replaced,
        engine,
        runs_with_ordinary_clipping,
    })
}

/// The raw scores of an audit (both worlds, index order) of the mechanism with the
/// formulas of `recipe`, for cross-checks between engines. Same seed, same scores.
pub fn audit_scores(
    cfg: &AuditConfig,
    seed: u64,
    recipe: &Recipe,
) -> Result<AuditScores, AuditError> {
    let mech = build(cfg, seed, recipe)?;
    scores_of(cfg, &mech, seed, recipe)
}

/// Threshold on the first `floor(trials/2)` runs of each world, bound on the rest
/// ([`stats`]). Returns the outcome on the measurement half.
pub fn bound_from_scores(
    canary: &[f64],
    replaced: &[f64],
    delta: f64,
    confidence: f64,
) -> Result<ThresholdOutcome, AuditError> {
    let (hc, hr) = (canary.len() / 2, replaced.len() / 2);
    let t = stats::select_threshold(
        &canary[..hc],
        &replaced[..hr],
        canary.len() - hc,
        replaced.len() - hr,
        delta,
        confidence,
    )?;
    stats::evaluate(&canary[hc..], &replaced[hr..], t, delta, confidence)
}

/// Runs the audit described by `cfg` from the master seed `seed` (module docs), of the
/// mechanism with the formulas of `recipe` ([`Recipe::PAPER`]: as published): the
/// problem, the calibration and every run go through them. The fast engine is a
/// closed-form model of the paper's training loop: of the recipe it only sees the
/// noise std; pass [`AuditEngine::Direct`] to audit the real loop. The reported `mu`
/// and `epsilon_achieved` are what the configuration claims, not what another recipe
/// does.
///
/// Deterministic: the same `(cfg, seed, recipe)` gives the same result, bit for bit,
/// whatever the number of threads.
pub fn run_audit(cfg: &AuditConfig, seed: u64, recipe: &Recipe) -> Result<AuditResult, AuditError> {
    let mech = build(cfg, seed, recipe)?;
    let scores = scores_of(cfg, &mech, seed, recipe)?;
    let out = bound_from_scores(&scores.canary, &scores.replaced, cfg.delta, cfg.confidence)?;
    let (sigma, noise_multiplier, mu, mu_canary, overnoise_ratio, calibration) = match &mech {
        Mechanism::Dpgd {
            problem,
            overnoise_ratio,
        } => {
            let c = &problem.config;
            let z = c.kappa * c.sigma / (2.0 * c.eta.sqrt());
            (
                c.sigma,
                z,
                (c.steps as f64).sqrt() / z,
                problem.canary_mu(),
                Some(*overnoise_ratio),
                Some(cfg.calibration),
            )
        }
        Mechanism::FirstLayer(fl) => {
            let z = fl.sigma_w / (2.0 * (cfg.p as f64).sqrt());
            (fl.sigma_w, z, 1.0 / z, Some(fl.canary_mu()), None, None)
        }
    };
    // Multiply and none, and an unnormalised first layer, do not bound the
    // sensitivity: no accounted guarantee.
    let bounded = match cfg.system {
        AuditSystem::FeatureLearningFirstLayer => cfg.normalise,
        _ => cfg.clip_rule == ClipRule::Divide,
    };
    let mu = bounded.then_some(mu);
    let epsilon_achieved = mu.map(|m| gdp_epsilon(m, cfg.delta)).transpose()?;
    Ok(AuditResult {
        system: cfg.system,
        engine: scores.engine,
        calibration,
        epsilon_lower_bound: out.epsilon_lower_bound(),
        epsilon_claimed: cfg.epsilon,
        delta: cfg.delta,
        confidence: cfg.confidence,
        trials: cfg.trials,
        measured: out.positives as usize,
        tpr: out.tpr,
        fpr: out.fpr,
        tpr_lower: out.tpr_lower,
        fpr_upper: out.fpr_upper,
        threshold: out.threshold,
        sigma,
        noise_scale: cfg.noise_scale,
        noise_multiplier,
        mu,
        epsilon_achieved,
        mu_canary,
        overnoise_ratio,
        runs_with_ordinary_clipping: scores.runs_with_ordinary_clipping,
    })
}
