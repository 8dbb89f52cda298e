//! The five methods of the fewer-coordinates paper's controlled comparison (Sec. 7.1,
//! Table 1), all driven through the one mechanism [`super::mechanism::dp_step`] with a
//! method-specific mask schedule:
//!
//! | method  | mask schedule                                                      | accounting |
//! |---------|--------------------------------------------------------------------|------------|
//! | DP-SGD  | all-ones for all T steps                                           | one phase, [`calibrate`](crate::privacy::calibrate()) |
//! | TP-TopK | all-ones for T1 steps (z1, C1); then top-k of the warm-up scores   | two phases, [`calibrate_two_phase`](crate::privacy::calibrate_two_phase) |
//! | TP-Rand | same warm-up; then a uniformly random support of size k            | two phases, [`calibrate_two_phase`](crate::privacy::calibrate_two_phase) |
//! | ON-TopK | all-ones in epoch 1; then each epoch the top-k of online DP scores | one phase, [`calibrate`](crate::privacy::calibrate()) |
//! | ON-Rand | all-ones in epoch 1; then each epoch a fresh random support        | one phase, [`calibrate`](crate::privacy::calibrate()) |
//!
//! * k = floor(r P) (Sec. 3.1). Scores: [`super::support`] (Sec. 3.2).
//! * Two-phase budget split: phase 1 alone spends `rho * epsilon`, phase 2 whatever the
//!   composed RDP accountant leaves (rule of
//!   [`calibrate_two_phase`](crate::privacy::calibrate_two_phase)). The default
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
//! * Diagnostics (Sec. 7.4) are of the first support selection: the end of the
//!   warm-up (two-phase) or of epoch 1 (online), with the noiseless mean gradient of the
//!   held-out (test) set at that checkpoint. Dense DP-SGD selects no support. The
//!   two-phase methods also report the trajectory-level capture of Definition 6.5 over
//!   phase 2 ([`TrajectoryCapture`]). The training loop keeps the parameters they read;
//!   [`MethodRun::diagnose`] computes them after the run (a tuned unit: for its
//!   selected cell only).
//!
//! Streams: `init` (model initialisation), `train` (Poisson sampling and noise, in
//! the order of [`super::mechanism`]), `support` (random supports). TP-TopK and TP-Rand
//! with the same seed therefore have bit-identical warm-ups.
//!
//! This file holds the [`Method`]s and the training loop ([`run_method`]); the
//! configuration is in [`super::config`], the privacy plan in [`super::plan`], what a
//! run returns in [`super::outcome`].
use super::config::{Method, MethodConfig};
use super::fused::StepCache;
use super::mechanism::{dp_step_cached, Mask, PrivacyLedger, ScoreSource, StepParams};
use super::model::Model;
use super::outcome::{
    checkpoint, Checkpoint, Diagnostics, HeldOutIterates, MethodRun, NoiseEnergy, PrivacyReport,
    StepRecord,
};
use super::plan::plan;
use super::support::{active_dimension, random_support, top_k, ScoreAccumulator};
use super::{Classification, DpSgdError};
use crate::privacy::{epsilon, Accountant, Phase};
use crate::rng::{SeedPath, Tape, TapeRng};
use crate::train::Recipe;
use ndarray::Array1;
use rand::Rng;
use std::cell::RefCell;

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

impl MethodRun {
    /// Computes the held-out diagnostics of the run from its kept iterates (the oracle
    /// energy captures at the checkpoint and the trajectory-level capture of Def. 6.5)
    /// and drops the iterates; a no-op once done. `data` must be the data set the run
    /// trained on (its test split is the held-out set). [`run_method`] calls it before
    /// returning; [`run_method_deferred`] and [`run_method_on_tape`] leave it to the
    /// caller.
    pub fn diagnose(&mut self, data: &Classification) -> Result<(), DpSgdError> {
        let Some(it) = self.held_out.take() else {
            return Ok(());
        };
        let model = Model::new(self.model, data.features(), data.classes);
        let gradient = |theta: &Array1<f64>| {
            model.mean_gradient(&theta.view(), &data.test_x.view(), &data.test_y)
        };
        if let Some(cp) = &it.checkpoint {
            let g = gradient(&cp.theta);
            let best = Mask::from_support(
                g.len(),
                &top_k(&g.mapv(|v| v * v).view(), cp.mask.active_count())?,
            )?;
            self.diagnostics.gamma = Some(cp.mask.energy_capture(&g.view()));
            self.diagnostics.gamma_best = Some(best.energy_capture(&g.view()));
        }
        if self.method.is_two_phase() {
            // Phase 2 runs on one mask: the run's final support.
            let mask = Mask::from_support(model.num_params(), &self.support)?;
            let mut capture = TrajectoryCapture::default();
            for theta in &it.trajectory {
                capture.sample(&gradient(theta), &mask);
            }
            self.diagnostics.gamma_trajectory = capture.gamma();
        }
        Ok(())
    }
}

/// The top-k of the scores (Sec. 3.2), or the bottom-k under the recipe's
/// [`ScoreSource::Reversed`] (a wrong sort order).
fn ranked(scores: &Array1<f64>, k: usize, recipe: &Recipe) -> Result<Vec<usize>, DpSgdError> {
    if recipe.dpsgd.scores == ScoreSource::Reversed {
        top_k(&scores.mapv(|v| -v).view(), k)
    } else {
        top_k(&scores.view(), k)
    }
}

/// Trajectory-level energy capture (Definition 6.5, Cor. 6.6):
/// `Gamma = sum_t ||m o grad F(theta_t)||^2 / sum_t ||grad F(theta_t)||^2` over the
/// phase-2 iterates, the ratio of sums by which Cor. 6.6 converts the projected bound of
/// Theorem 6.3 into a full-gradient one; `grad F` is the noiseless mean gradient of the
/// held-out set, sampled at the end of every phase-2 epoch (not every step: a cost
/// choice).
#[derive(Default)]
struct TrajectoryCapture {
    kept: f64,
    total: f64,
}

impl TrajectoryCapture {
    /// Adds one iterate's held-out mean gradient `g`.
    fn sample(&mut self, g: &Array1<f64>, mask: &Mask) {
        self.total += g.iter().map(|v| v * v).sum::<f64>();
        self.kept += mask.support().iter().map(|&j| g[j] * g[j]).sum::<f64>();
    }

    fn gamma(&self) -> Option<f64> {
        (self.total > 0.0).then(|| self.kept / self.total)
    }
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
    let mut run = train(
        data,
        cfg,
        seed_path,
        observer,
        recipe,
        &mut seed_path.rng_for("train"),
    )?;
    run.diagnose(data)?;
    Ok(run)
}

/// [`run_method`] without the held-out diagnostics: the run keeps the iterates they read
/// and [`MethodRun::diagnose`] computes them, with the same bits, when the caller asks.
/// Until then `diagnostics.gamma`, `gamma_best` and `gamma_trajectory` are `None`. A
/// tuned unit runs every cell of its grid this way and diagnoses the selected cell only
/// (the held-out gradients of a planted-task run cost more than its training: 2000
/// test examples at every phase-2 epoch against 800 training examples an epoch).
pub fn run_method_deferred(
    data: &Classification,
    cfg: &MethodConfig,
    seed_path: &SeedPath,
    recipe: &Recipe,
) -> Result<MethodRun, DpSgdError> {
    let mut rng = seed_path.rng_for("train");
    train(data, cfg, seed_path, &mut |_, _| {}, recipe, &mut rng)
}

/// [`run_method_deferred`] reading its `train` stream from `tape` when the tape holds
/// that stream (`seed_path/train`; otherwise from a tape of its own): the same bits,
/// with the stream generated once for all the runs that read it (a tuned unit's cells
/// and methods all train on the one stream, [`crate::rng::Tape`]).
pub fn run_method_on_tape(
    data: &Classification,
    cfg: &MethodConfig,
    seed_path: &SeedPath,
    recipe: &Recipe,
    tape: &RefCell<Tape>,
) -> Result<MethodRun, DpSgdError> {
    let train_path = seed_path.child("train");
    if tape.borrow().path() == &train_path {
        train(
            data,
            cfg,
            seed_path,
            &mut |_, _| {},
            recipe,
            &mut TapeRng::new(tape),
        )
    } else {
        let mut rng = train_path.rng();
        train(data, cfg, seed_path, &mut |_, _| {}, recipe, &mut rng)
    }
}

/// The training loop of every method (module docs), drawing the Poisson samples and the
/// noise from `train_rng` (the `train` stream of `seed_path`, from the generator or a
/// tape); the held-out diagnostics are left to [`MethodRun::diagnose`].
fn train(
    data: &Classification,
    cfg: &MethodConfig,
    seed_path: &SeedPath,
    observer: &mut dyn FnMut(usize, usize),
    recipe: &Recipe,
    train_rng: &mut impl Rng,
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
    let mut trajectory: Vec<Array1<f64>> = Vec::new();
    let mut cache = StepCache::default();

    // One step through the shared mechanism, recorded.
    let mut step = |theta: &mut Array1<f64>,
                    mask: &Mask,
                    sp: &StepParams,
                    segment: &'static str,
                    acc: Option<&mut ScoreAccumulator>,
                    ledger: &mut PrivacyLedger,
                    done: &mut usize|
     -> Result<(), DpSgdError> {
        let out = dp_step_cached(
            &model,
            theta,
            &x,
            y,
            mask,
            sp,
            ledger,
            train_rng,
            Some(&mut cache),
        );
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
                ranked(&scores, k, recipe)?
            } else {
                random_support(p, k, &mut support_rng)?
            };
            mask = Mask::from_support(p, &support)?;
            cp = Some(checkpoint(&theta, &scores, &mask, done));
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
                if (done - t1) % spe == 0 {
                    trajectory.push(theta.clone());
                }
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
                    ranked(&scores, k, recipe)?
                } else {
                    random_support(p, k, &mut support_rng)?
                };
                mask = Mask::from_support(p, &support)?;
                if cp.is_none() {
                    cp = Some(checkpoint(&theta, &scores, &mask, done));
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
            gamma: None,
            gamma_best: None,
            proxy_concentration: cp.as_ref().map(|c| c.proxy),
            gamma_trajectory: None,
            noise_energy,
        },
        model: cfg.model,
        held_out: Some(HeldOutIterates {
            checkpoint: cp,
            trajectory,
        }),
        steps: done,
        theta_digest: crate::rng::digest_f64s(theta.iter().copied()),
        theta,
        trace,
    })
}
