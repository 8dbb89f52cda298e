//! What an audit is asked: the audited system ([`AuditSystem`]), how sigma is
//! calibrated ([`Calibration`]), which engine simulates the runs ([`AuditEngine`]), and
//! the whole configuration with its defaults and range checks ([`AuditConfig`]). The
//! names here are the command line's and the JSON's.
use super::AuditError;
use crate::train::dpgd::ClipRule;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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
    /// TP-TopK (fewer-coordinates paper): a gradient canary through the warm-up and the
    /// support-restricted phase ([`super::tp_topk`]).
    TpTopk,
}

impl AuditSystem {
    /// Name on the command line and in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            AuditSystem::RfDpgd => "rf-dpgd",
            AuditSystem::FeatureLearningSecondLayer => "feature-learning-second-layer",
            AuditSystem::FeatureLearningFirstLayer => "feature-learning-first-layer",
            AuditSystem::TpTopk => "tp-topk",
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
            AuditSystem::TpTopk,
        ]
        .into_iter()
        .find(|v| v.name() == s)
        .ok_or_else(|| {
            format!(
                "unknown system `{s}` (expected rf-dpgd, feature-learning-second-layer, \
                 feature-learning-first-layer or tp-topk)"
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
    /// rule, ridge 0.1 (second layer only), eps_B = 0. TP-TopK: n = 20 records and
    /// p = 20 coordinates ([`super::tp_topk`]).
    pub fn new(system: AuditSystem, epsilon: f64, delta: f64) -> Self {
        let tp = system == AuditSystem::TpTopk;
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
            n: if tp { 20 } else { 50 },
            p: if tp { 20 } else { 200 },
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
        if self.system == AuditSystem::TpTopk {
            if self.p < 2 {
                return bad(
                    "p",
                    "at least 2 for tp-topk (the canary's coordinate and an ordinary one)",
                    self.p.to_string(),
                );
            }
        } else if self.p < self.n {
            return bad(
                "p",
                "at least n (the canary direction must be orthogonal to the other features)",
                format!("p = {} with n = {}", self.p, self.n),
            );
        }
        if self.steps == 0 {
            return bad("steps", "at least 1", "0".into());
        }
        if self.system == AuditSystem::TpTopk && self.steps < 2 {
            return bad(
                "steps",
                "at least 2 for tp-topk (a warm-up step and a support step)",
                self.steps.to_string(),
            );
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
