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
//!
//! # TP-TopK ([`tp_topk`])
//!
//! A gradient canary (Nasr et al. 2021) through both phases of TP-TopK (fewer-coordinates
//! paper Sec. 3.2): its coordinate's warm-up score decides whether it enters the top-k
//! support, and in the support its phase-2 updates are observed; z1, z2 come from the
//! tp-topk system's RDP two-phase calibration, adjacency is add/remove (the accountant's).
//! The score is the log-likelihood ratio of the canary coordinate's noisy updates plus a
//! bonus when it is in the support; Clopper–Pearson reads it (empirical threshold), the
//! GDP estimator reads the warm-up part, exactly Gaussian; direct engine only. The
//! recipe's [`crate::train::dpsgd::ScoreSource::PreNoise`] (the negative
//! control `topk-scores-pre-noise`) makes the support leak membership. At eps = 2, seed 0:
//!
//! | setting                         | mu (in support) | exact eps | eps_LB |
//! |---------------------------------|-----------------|-----------|--------|
//! | tp-topk, RDP calibration        | 0.465           | 1.84      | 0.78   |
//! | tp-topk, noise scale 0.25       | 1.861           | 9.15      | 3.45   |
//! | tp-topk, pre-noise scores       | (not DP)        | (none)    | 6.38   |
//!
//! # Where things are
//!
//! * [`config`] — what an audit is asked: the audited system, the calibration, the
//!   engine and the problem's sizes ([`AuditConfig`], with its range checks).
//! * [`canary`] — the adjacent data sets and the two engines' scores of one run.
//! * [`tp_topk`] — the TP-TopK mechanism with its canary through both phases.
//! * [`mod@run`] — the audit itself: calibration, the runs of both worlds, the bound
//!   ([`run_audit`], [`audit_scores`], [`bound_from_scores`]).
//! * [`stats`] — threshold selection and Clopper-Pearson bounds.
//! * [`estimators`] — the Gaussian-DP and one-run estimators beside Clopper-Pearson,
//!   with the confidence split among them ([`run::run_audit_estimates`]).
//! * This file: the errors and the result every part shares.
pub mod canary;
pub mod config;
pub mod estimators;
pub mod run;
pub mod stats;
pub mod tp_topk;
pub mod white_box;

pub use config::{
    clip_rule_name, parse_clip_rule, AuditConfig, AuditEngine, AuditSystem, Calibration,
};
pub use run::{audit_scores, bound_from_scores, run_audit, run_audit_estimates, AuditScores};

use crate::fit::FitError;
use crate::privacy::PrivacyError;
use crate::train::TrainError;
use serde::Serialize;

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
    /// An estimator could not be computed from the scores.
    #[error("audit estimator: {0}")]
    Estimator(String),
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
    #[error(transparent)]
    Train(#[from] TrainError),
    #[error(transparent)]
    Fit(#[from] FitError),
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
    /// Noise level as run (sigma of DP-GD, or sigma_W; TP-TopK: phase 2's noise sd
    /// `z2 C/N` of the averaged gradient), after `noise_scale`.
    pub sigma: f64,
    pub noise_scale: f64,
    /// Noise std / replace-one sensitivity per step, as run (first layer: sigma_W /
    /// (2 sqrt p); TP-TopK: z2, per add/remove sensitivity C; z1 is in `tp_topk`).
    pub noise_multiplier: f64,
    /// GDP mu of the mechanism as run: `sqrt(T)/noise_multiplier` (exact for the
    /// transcript; an upper bound for what the final iterate reveals). `null` when the
    /// clip rule does not bound the sensitivity (multiply, none). TP-TopK:
    /// `sqrt(T1/z1^2 + T2/z2^2)`, a canary in the support every time; `null` with
    /// pre-noise scores (not DP).
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
    /// TP-TopK: the schedule as run and the support shares ([`tp_topk`]); absent for
    /// the other systems.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp_topk: Option<tp_topk::TpTopkRun>,
}
