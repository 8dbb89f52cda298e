//! The configuration of one run of a method ([`MethodConfig`]): the privacy target,
//! the support size, the two-phase split, batch, clipping and learning rate, with the
//! digits defaults and the checks every run passes before anything runs.
use super::model::ModelKind;
use super::DpSgdError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Configuration of one run (validated by [`MethodConfig::validate`] before anything
/// runs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodConfig {
    pub method: Method,
    pub model: ModelKind,
    /// Target epsilon of the whole run.
    pub epsilon: f64,
    pub delta: f64,
    /// Active ratio r in (0, 1]: k = floor(r P) (ignored by dense DP-SGD).
    pub active_ratio: f64,
    /// Total epochs (the same training budget for every method).
    pub epochs: usize,
    /// Warm-up epochs of the two-phase methods (1 <= phase1_epochs < epochs).
    pub phase1_epochs: usize,
    /// Nominal share rho of the budget for the warm-up (two-phase methods).
    pub budget_split: f64,
    /// Expected batch size qN.
    pub batch_size: f64,
    /// Clipping norm C (dense, online, and two-phase phase 1: C1).
    pub clip: f64,
    /// Clipping norm C2 of phase 2 (two-phase methods).
    pub clip_phase2: f64,
    /// Constant learning rate.
    pub lr: f64,
}

impl MethodConfig {
    /// Defaults for the digits experiments: 30 epochs (9 of warm-up), rho = 0.3, expected
    /// batch 64, C = 1, learning rate 0.5, r = 0.1, delta = 1e-5.
    pub fn new(method: Method, model: ModelKind, epsilon: f64) -> Self {
        Self {
            method,
            model,
            epsilon,
            delta: 1e-5,
            active_ratio: 0.1,
            epochs: 30,
            phase1_epochs: 9,
            budget_split: 0.3,
            batch_size: 64.0,
            clip: 1.0,
            clip_phase2: 1.0,
            lr: 0.5,
        }
    }

    /// Checks every field against a training set of `n` examples; returns the
    /// sampling rate q and the steps per epoch.
    pub fn validate(&self, n: usize) -> Result<(f64, usize), DpSgdError> {
        let bad = |m: String| Err(DpSgdError::InvalidConfig(m));
        let pos = |v: f64| v.is_finite() && v > 0.0;
        if !pos(self.epsilon) {
            return bad(format!(
                "epsilon must be positive and finite, got {}",
                self.epsilon
            ));
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return bad(format!("delta must be in (0, 1), got {}", self.delta));
        }
        if !(self.active_ratio > 0.0 && self.active_ratio <= 1.0) {
            return bad(format!(
                "active ratio must be in (0, 1], got {}",
                self.active_ratio
            ));
        }
        if self.epochs == 0 {
            return bad("epochs must be at least 1".into());
        }
        if self.method.is_two_phase()
            && !(self.phase1_epochs >= 1 && self.phase1_epochs < self.epochs)
        {
            return bad(format!(
                "two-phase methods need 1 <= phase1 epochs < epochs, got {} and {}",
                self.phase1_epochs, self.epochs
            ));
        }
        if self.method.is_online() && self.epochs < 2 {
            return bad("online methods need at least 2 epochs (the first is dense)".into());
        }
        if !(self.budget_split > 0.0 && self.budget_split < 1.0) {
            return bad(format!(
                "budget split rho must be in (0, 1), got {}",
                self.budget_split
            ));
        }
        if !(pos(self.clip) && pos(self.clip_phase2)) {
            return bad(format!(
                "clipping norms must be positive and finite, got {} and {}",
                self.clip, self.clip_phase2
            ));
        }
        if !pos(self.lr) {
            return bad(format!(
                "learning rate must be positive and finite, got {}",
                self.lr
            ));
        }
        if let ModelKind::Mlp { hidden: 0, .. } = self.model {
            return bad("the MLP needs at least one hidden unit".into());
        }
        if n == 0 {
            return bad("empty training set".into());
        }
        if !(self.batch_size >= 1.0 && self.batch_size <= n as f64) {
            return bad(format!(
                "expected batch size must be in [1, {n}] (the training set size), got {}",
                self.batch_size
            ));
        }
        let q = self.batch_size / n as f64;
        let steps_per_epoch = ((n as f64 / self.batch_size).round() as usize).max(1);
        Ok((q, steps_per_epoch))
    }
}

/// One of the five methods (Sec. 7.1, Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Method {
    #[serde(rename = "dp-sgd")]
    DpSgd,
    #[serde(rename = "tp-topk")]
    TpTopK,
    #[serde(rename = "tp-rand")]
    TpRand,
    #[serde(rename = "on-topk")]
    OnTopK,
    #[serde(rename = "on-rand")]
    OnRand,
}

impl Method {
    /// All five, in the paper's table order.
    pub const ALL: [Method; 5] = [
        Method::DpSgd,
        Method::TpRand,
        Method::TpTopK,
        Method::OnRand,
        Method::OnTopK,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Method::DpSgd => "dp-sgd",
            Method::TpTopK => "tp-topk",
            Method::TpRand => "tp-rand",
            Method::OnTopK => "on-topk",
            Method::OnRand => "on-rand",
        }
    }

    /// Two-phase methods (warm-up, then a fixed support).
    pub const fn is_two_phase(self) -> bool {
        matches!(self, Method::TpTopK | Method::TpRand)
    }

    /// Online methods (support refreshed every epoch).
    pub const fn is_online(self) -> bool {
        matches!(self, Method::OnTopK | Method::OnRand)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = DpSgdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Method::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                DpSgdError::InvalidConfig(format!(
                    "unknown method `{s}` (expected dp-sgd, tp-topk, tp-rand, on-topk or on-rand)"
                ))
            })
    }
}
