//! The five methods of the fewer-coordinates paper's controlled comparison (Sec. 7.1,
//! Table 1), all driven through the one mechanism [`super::mechanism::dp_step`] with a
//! method-specific mask schedule:
//!
//! | method  | mask schedule                                                      | accounting |
//! |---------|--------------------------------------------------------------------|------------|
//! | DP-SGD  | all-ones for all T steps                                           | one phase, [`calibrate`] |
//! | TP-TopK | all-ones for T1 steps (z1, C1); then top-k of the warm-up scores   | two phases, [`calibrate_two_phase`] |
//! | TP-Rand | same warm-up; then a uniformly random support of size k            | two phases, [`calibrate_two_phase`] |
//! | ON-TopK | all-ones in epoch 1; then each epoch the top-k of online DP scores | one phase, [`calibrate`] |
//! | ON-Rand | all-ones in epoch 1; then each epoch a fresh random support        | one phase, [`calibrate`] |
//!
//! * k = floor(r P) (Sec. 3.1). Scores: [`super::support`] (Sec. 3.2).
//! * Two-phase budget split: phase 1 alone spends `rho * epsilon`, phase 2 whatever the
//!   composed RDP accountant leaves (rule of [`calibrate_two_phase`]). The default
//!   `rho = 0.3` and the default warm-up of 30% of the epochs are the middle of the
//!   grid {0.2, 0.3, 0.4} of the paper's split ablation (Sec. 7.3, Table 4), whose
//!   interior optimum is not legible in our copy of the paper.
//! * Online methods: the paper describes them only as "epoch-level refresh" from
//!   "online DP score" / "random" (Table 1). Our definition: the first epoch is dense
//!   (there are no scores yet; ON-Rand keeps the same schedule so that the pair
//!   differs only in the support source, as TP-TopK / TP-Rand do). After each epoch,
//!   the score of every coordinate that was active in it is refreshed to the
//!   denoised mean of `g~^2` over the epoch's steps ([`super::support::scores`]);
//!   inactive coordinates keep their last score. Every step uses the same (q, z, C), and
//!   masking precedes clipping, so the whole run is one subsampled Gaussian phase.
//! * Privacy: whatever the schedule, every step passes through
//!   [`super::mechanism::dp_step`], which charges a [`PrivacyLedger`]; the reported
//!   epsilon is the RDP accountant's value for the ledger's phases (Thm 4.1: RDP curves
//!   of the phases added, converted to (eps, delta)), and the run fails if the ledger
//!   differs from the calibrated plan.
//! * Diagnostics (Sec. 7.4) are taken at the first support selection: the end of the
//!   warm-up (two-phase) or of epoch 1 (online), with the noiseless mean gradient of the
//!   held-out (test) set at that checkpoint. Dense DP-SGD selects no support.
//!
//! Streams: `init` (model initialisation), `train` (Poisson sampling and noise, in
//! the order of [`super::mechanism`]), `support` (random supports). TP-TopK and TP-Rand
//! with the same seed therefore have bit-identical warm-ups.
use super::diagnostics::proxy_concentration;
use super::mechanism::{dp_step, Mask, PrivacyLedger, StepParams};
use super::model::{Model, ModelKind};
use super::support::{active_dimension, random_support, top_k, ScoreAccumulator};
use super::{Classification, DpSgdError};
use crate::privacy::{calibrate, calibrate_two_phase, epsilon, Accountant, Phase, PhasePlan};
use crate::rng::SeedPath;
use crate::train::Recipe;
use ndarray::Array1;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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

/// One phase of a run as executed and accounted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseReport {
    /// `dense`, `warm-up`, `support` (two-phase) or `online` (online methods).
    pub name: &'static str,
    pub steps: u64,
    pub sampling_rate: f64,
    pub noise_multiplier: f64,
    pub clip: f64,
    /// Epsilon of this phase alone (RDP accountant, same delta).
    pub epsilon_alone: f64,
}

/// The privacy of a run: per phase and composed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrivacyReport {
    pub target_epsilon: f64,
    pub delta: f64,
    pub phases: Vec<PhaseReport>,
    /// Epsilon of the composition of the ledger's phases (RDP, improved conversion).
    pub epsilon: f64,
    /// Optimal Rényi order of the composition.
    pub order: f64,
}

/// Noise energy of one segment of the run (paper Sec. 3.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NoiseEnergy {
    /// `dense`, `warm-up`, `support`, `online-dense` or `online-sparse`.
    pub segment: &'static str,
    pub steps: usize,
    /// Number of noised coordinates per step.
    pub active: usize,
    /// `active * (z C / (qN))^2`.
    pub expected: f64,
    /// Mean over the segment's steps of the injected `||m o z C xi||^2 / (qN)^2`.
    pub measured: f64,
}

/// Support-quality diagnostics (Sec. 7.4) and noise energies.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostics {
    /// k (P for dense DP-SGD).
    pub active: usize,
    pub params: usize,
    /// k / P: the expectation of both Gammas for a uniformly random support.
    pub random_expectation: f64,
    /// Step after which the support was first selected (None for dense DP-SGD).
    pub checkpoint_step: Option<usize>,
    /// Oracle energy capture of the selected support at the checkpoint.
    pub gamma: Option<f64>,
    /// Oracle energy capture of the best support of size k (top-k of `g^2`): the
    /// ceiling of `gamma`.
    pub gamma_best: Option<f64>,
    /// DP-visible proxy concentration of the selected support.
    pub proxy_concentration: Option<f64>,
    pub noise_energy: Vec<NoiseEnergy>,
}

/// Per-step record (the recorder's trace; the step itself does no I/O).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StepRecord {
    pub batch_size: usize,
    pub clipped: usize,
    pub active: usize,
    pub noise_energy: f64,
    pub batch_loss: f64,
}

/// Everything a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct MethodRun {
    pub method: Method,
    pub test_accuracy: f64,
    pub train_accuracy: f64,
    pub privacy: PrivacyReport,
    /// Noise multipliers, one per phase ([z] or [z1, z2]).
    pub noise_multipliers: Vec<f64>,
    /// The final support (increasing indices; all of `0..P` for dense DP-SGD).
    pub support: Vec<usize>,
    pub diagnostics: Diagnostics,
    pub steps: usize,
    /// Fingerprint of the final parameters' bits ([`crate::rng::digest_f64s`]).
    pub theta_digest: String,
    #[serde(skip)]
    pub theta: Array1<f64>,
    #[serde(skip)]
    pub trace: Vec<StepRecord>,
}

/// The plan of a run: the privacy segments and their step parameters.
struct Plan {
    phases: Vec<(PhaseReport, StepParams)>,
}

fn plan(cfg: &MethodConfig, q: f64, spe: usize, recipe: &Recipe) -> Result<Plan, DpSgdError> {
    let total = (cfg.epochs * spe) as u64;
    let step = |z: f64, clip: f64| StepParams {
        sampling_rate: q,
        clip,
        noise_multiplier: z,
        lr: cfg.lr,
        recipe: recipe.dpsgd,
    };
    let report = |name, steps, z, clip| PhaseReport {
        name,
        steps,
        sampling_rate: q,
        noise_multiplier: z,
        clip,
        epsilon_alone: f64::NAN,
    };
    let phases = if cfg.method.is_two_phase() {
        let t1 = (cfg.phase1_epochs * spe) as u64;
        let t2 = total - t1;
        let cal = calibrate_two_phase(
            Accountant::Rdp,
            cfg.epsilon,
            cfg.delta,
            cfg.budget_split,
            PhasePlan {
                sampling_rate: q,
                steps: t1,
            },
            PhasePlan {
                sampling_rate: q,
                steps: t2,
            },
            &recipe.accounting,
        )?;
        let (z1, z2) = (cal.noise_multiplier_1, cal.noise_multiplier_2);
        vec![
            (report("warm-up", t1, z1, cfg.clip), step(z1, cfg.clip)),
            (
                report("support", t2, z2, cfg.clip_phase2),
                step(z2, cfg.clip_phase2),
            ),
        ]
    } else {
        let cal = calibrate(
            Accountant::Rdp,
            cfg.epsilon,
            cfg.delta,
            q,
            total,
            &recipe.accounting,
        )?;
        let z = cal.noise_multiplier;
        let name = if cfg.method.is_online() {
            "online"
        } else {
            "dense"
        };
        vec![(report(name, total, z, cfg.clip), step(z, cfg.clip))]
    };
    Ok(Plan { phases })
}

/// Accumulates the per-segment noise energies and the trace.
struct Recorder {
    trace: Vec<StepRecord>,
    segments: Vec<NoiseEnergy>,
}

impl Recorder {
    fn record(&mut self, segment: &'static str, expected: f64, rec: StepRecord) {
        match self.segments.last_mut() {
            Some(s) if s.segment == segment => {
                s.steps += 1;
                s.measured += rec.noise_energy;
            }
            _ => self.segments.push(NoiseEnergy {
                segment,
                steps: 1,
                active: rec.active,
                expected,
                measured: rec.noise_energy,
            }),
        }
        self.trace.push(rec);
    }

    fn finish(mut self) -> (Vec<StepRecord>, Vec<NoiseEnergy>) {
        for s in &mut self.segments {
            s.measured /= s.steps as f64;
        }
        (self.trace, self.segments)
    }
}

/// What the first support selection saw.
struct Checkpoint {
    step: usize,
    gamma: f64,
    gamma_best: f64,
    proxy: f64,
}

fn checkpoint(
    model: &Model,
    theta: &Array1<f64>,
    data: &Classification,
    scores: &Array1<f64>,
    mask: &Mask,
    step: usize,
) -> Result<Checkpoint, DpSgdError> {
    let g = model.mean_gradient(&theta.view(), &data.test_x.view(), &data.test_y);
    let best = Mask::from_support(
        g.len(),
        &top_k(&g.mapv(|v| v * v).view(), mask.active_count())?,
    )?;
    Ok(Checkpoint {
        step,
        gamma: mask.energy_capture(&g.view()),
        gamma_best: best.energy_capture(&g.view()),
        proxy: proxy_concentration(&scores.view(), mask.support()),
    })
}

/// Runs `cfg.method` on `data` with the streams under `seed_path` (module docs) and the
/// formulas of `recipe`: the step's structure ([`super::mechanism::DpSgdRecipe`]) and
/// the RDP accountant of the calibration and of the final report
/// ([`crate::privacy::AccountantRecipe`]).
pub fn run_method(
    data: &Classification,
    cfg: &MethodConfig,
    seed_path: &SeedPath,
    recipe: &Recipe,
) -> Result<MethodRun, DpSgdError> {
    run_method_observed(data, cfg, seed_path, &mut |_, _| {}, recipe)
}

/// [`run_method`] with a progress callback `observer(steps_done, steps_total)` called
/// after every step (the CLI drives a progress bar with it; the library does no I/O).
pub fn run_method_observed(
    data: &Classification,
    cfg: &MethodConfig,
    seed_path: &SeedPath,
    observer: &mut dyn FnMut(usize, usize),
    recipe: &Recipe,
) -> Result<MethodRun, DpSgdError> {
    crate::linalg::pin_blas_threads();
    data.validate()?;
    let n = data.train_y.len();
    let (q, spe) = cfg.validate(n)?;
    let model = Model::new(cfg.model, data.features(), data.classes);
    let p = model.num_params();
    let k = if cfg.method == Method::DpSgd {
        p
    } else {
        active_dimension(cfg.active_ratio, p)?
    };
    let mut plan = plan(cfg, q, spe, recipe)?;
    let total_steps = cfg.epochs * spe;
    let expected_batch = q * n as f64;
    let noise_sd = |sp: &StepParams| sp.noise_multiplier * sp.clip / expected_batch;

    let mut theta = model.init(&mut seed_path.rng_for("init"));
    let mut train_rng = seed_path.rng_for("train");
    let mut support_rng = seed_path.rng_for("support");
    let mut ledger = PrivacyLedger::new();
    let mut rec = Recorder {
        trace: Vec::with_capacity(total_steps),
        segments: Vec::new(),
    };
    let (x, y) = (data.train_x.view(), &data.train_y[..]);
    let mut done = 0usize;
    let mut cp: Option<Checkpoint> = None;
    let mut mask = Mask::dense(p);

    // One step through the shared mechanism, recorded.
    let mut step = |theta: &mut Array1<f64>,
                    mask: &Mask,
                    sp: &StepParams,
                    segment: &'static str,
                    acc: Option<&mut ScoreAccumulator>,
                    ledger: &mut PrivacyLedger,
                    done: &mut usize|
     -> Result<(), DpSgdError> {
        let out = dp_step(&model, theta, &x, y, mask, sp, ledger, &mut train_rng);
        if let Some(acc) = acc {
            match &out.privatized.pre_noise {
                Some(pre) => acc.add(&pre.view()),
                None => acc.add(&out.privatized.gradient.view()),
            }
        }
        let sd = noise_sd(sp);
        rec.record(
            segment,
            mask.active_count() as f64 * sd * sd,
            StepRecord {
                batch_size: out.batch_size,
                clipped: out.privatized.clipped,
                active: mask.active_count(),
                noise_energy: out.privatized.noise_energy,
                batch_loss: out.privatized.batch_loss,
            },
        );
        *done += 1;
        if !out.privatized.batch_loss.is_finite() || theta.iter().any(|v| !v.is_finite()) {
            return Err(DpSgdError::Diverged { step: *done });
        }
        observer(*done, total_steps);
        Ok(())
    };

    match cfg.method {
        Method::DpSgd => {
            let sp = plan.phases[0].1;
            for _ in 0..total_steps {
                step(
                    &mut theta,
                    &mask,
                    &sp,
                    "dense",
                    None,
                    &mut ledger,
                    &mut done,
                )?;
            }
        }
        Method::TpTopK | Method::TpRand => {
            let sp1 = plan.phases[0].1;
            let sp2 = plan.phases[1].1;
            let t1 = plan.phases[0].0.steps as usize;
            let mut acc = ScoreAccumulator::new(p);
            for _ in 0..t1 {
                step(
                    &mut theta,
                    &mask,
                    &sp1,
                    "warm-up",
                    Some(&mut acc),
                    &mut ledger,
                    &mut done,
                )?;
            }
            // Post-processing of the warm-up transcript (Sec. 3.2; Thm 4.1).
            let scores = acc.scores(noise_sd(&sp1))?;
            let support = if cfg.method == Method::TpTopK {
                top_k(&scores.view(), k)?
            } else {
                random_support(p, k, &mut support_rng)?
            };
            mask = Mask::from_support(p, &support)?;
            cp = Some(checkpoint(&model, &theta, data, &scores, &mask, done)?);
            for _ in t1..total_steps {
                step(
                    &mut theta,
                    &mask,
                    &sp2,
                    "support",
                    None,
                    &mut ledger,
                    &mut done,
                )?;
            }
        }
        Method::OnTopK | Method::OnRand => {
            let sp = plan.phases[0].1;
            let mut scores = Array1::<f64>::zeros(p);
            for epoch in 0..cfg.epochs {
                let segment = if epoch == 0 {
                    "online-dense"
                } else {
                    "online-sparse"
                };
                let mut acc = ScoreAccumulator::new(p);
                for _ in 0..spe {
                    step(
                        &mut theta,
                        &mask,
                        &sp,
                        segment,
                        Some(&mut acc),
                        &mut ledger,
                        &mut done,
                    )?;
                }
                if epoch + 1 == cfg.epochs {
                    break;
                }
                // Refresh the scores of the coordinates active in this epoch.
                let fresh = acc.scores(noise_sd(&sp))?;
                for &j in mask.support() {
                    scores[j] = fresh[j];
                }
                let support = if cfg.method == Method::OnTopK {
                    top_k(&scores.view(), k)?
                } else {
                    random_support(p, k, &mut support_rng)?
                };
                mask = Mask::from_support(p, &support)?;
                if cp.is_none() {
                    cp = Some(checkpoint(&model, &theta, data, &scores, &mask, done)?);
                }
            }
        }
    }

    // Account for what was run, and check it against the calibrated plan.
    let planned: Vec<Phase> = plan
        .phases
        .iter()
        .map(|(r, _)| Phase::new(r.sampling_rate, r.noise_multiplier, r.steps))
        .collect();
    if ledger.phases() != planned.as_slice() {
        return Err(DpSgdError::Ledger(format!(
            "ran {:?}, planned {:?}",
            ledger.phases(),
            planned
        )));
    }
    let composed = epsilon(
        Accountant::Rdp,
        ledger.phases(),
        cfg.delta,
        &recipe.accounting,
    )?;
    for (r, _) in &mut plan.phases {
        r.epsilon_alone = epsilon(
            Accountant::Rdp,
            &[Phase::new(r.sampling_rate, r.noise_multiplier, r.steps)],
            cfg.delta,
            &recipe.accounting,
        )?
        .epsilon;
    }
    let (trace, noise_energy) = rec.finish();
    let test_accuracy = model.accuracy(&theta.view(), &data.test_x.view(), &data.test_y);
    let train_accuracy = model.accuracy(&theta.view(), &data.train_x.view(), &data.train_y);
    Ok(MethodRun {
        method: cfg.method,
        test_accuracy,
        train_accuracy,
        noise_multipliers: plan
            .phases
            .iter()
            .map(|(r, _)| r.noise_multiplier)
            .collect(),
        privacy: PrivacyReport {
            target_epsilon: cfg.epsilon,
            delta: cfg.delta,
            phases: plan.phases.into_iter().map(|(r, _)| r).collect(),
            epsilon: composed.epsilon,
            order: composed.order.unwrap_or(f64::NAN),
        },
        support: mask.support().to_vec(),
        diagnostics: Diagnostics {
            active: k,
            params: p,
            random_expectation: k as f64 / p as f64,
            checkpoint_step: cp.as_ref().map(|c| c.step),
            gamma: cp.as_ref().map(|c| c.gamma),
            gamma_best: cp.as_ref().map(|c| c.gamma_best),
            proxy_concentration: cp.as_ref().map(|c| c.proxy),
            noise_energy,
        },
        steps: done,
        theta_digest: crate::rng::digest_f64s(theta.iter().copied()),
        theta,
        trace,
    })
}
