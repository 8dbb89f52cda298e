//! White-box audit of TP-TopK through the real DP-SGD step (`dpclaims audit --system
//! tp-topk --white-box`; fewer-coordinates paper, "When Do Fewer Coordinates Suffice in
//! DP-SGD?", Sec. 3.2 and Theorem 4.1, L59-L60; App. A, L231-L237).
//!
//! # The mechanism is the training code
//!
//! Every run is the TP-TopK training loop of [`crate::train::dpsgd::methods`]: the real
//! [`dp_step_cached`] (Poisson sample at rate q, per-example gradients of the
//! multinomial logistic regression, mask before clip, Gaussian noise on the support,
//! division by qN), the real warm-up scores ([`ScoreAccumulator`]), the real top-k and
//! [`Mask`], with (z1, z2) from [`calibrate_two_phase`] exactly as
//! [`crate::train::dpsgd::plan`] calibrates them (rho = 0.3, T1 = round(0.3 T)). The loop
//! here repeats the training loop's 20 lines so that the auditor can read every step's
//! released noisy gradient `g~_t` (equivalently the iterate difference
//! `(theta_t - theta_{t+1})/lr` on the support); test `white_box_loop_is_the_training_loop`
//! (tests/audit_white_box.rs) checks that its final iterate is bit-identical to
//! [`crate::train::dpsgd::run_method`]'s on the same streams. Nothing in it knows mu.
//!
//! # Canary and adjacency
//!
//! A Dirac gradient canary (Nasr et al. 2021, "Adversary instantiation", Sec. 3; Nasr et
//! al. 2023, "Tight auditing of DP machine learning"): the logistic regression has F
//! features and 2 classes (P = 2F + 2 parameters); the N - 1 ordinary records (features
//! [`ORDINARY_SCALE`] N(0, 1), labels alternating) have a zero
//! last feature, the canary is `x_c = M e_{F-1}` (M = [`CANARY_SCALE`]) with label 0. Its
//! gradient on the weights of feature F-1 is `M p1 (-1, +1)` (p1 its predicted
//! probability of class 1), a fixed direction that no other record touches, and its norm
//! `p1 sqrt(2 (M^2 + 1))` exceeds C at every step (the learning rate is set so that
//! the canary's logits move by less than 0.3 over the run; the result counts the steps
//! where the sampled canary was not clipped: 0 in every audit measured). In the other
//! world the canary is replaced by a record with `x = 0` (its gradient lives on the bias
//! only): the normaliser qN stays public, and every statistic below is a function of the
//! canary weights' coordinates, where that record and the ordinary ones contribute exactly
//! 0, so the statistic has the same law as with the canary removed (add/remove
//! adjacency, sensitivity C: the accountant's).
//!
//! The support keeps k = P - 1 coordinates (the one dropped is the lowest score), so at
//! least one of the canary's two weight coordinates is always in phase 2's support and
//! the canary's masked, clipped gradient has norm C along a direction the auditor knows
//! (`u_t`: the masked `(-1, +1)` normalised; the support is visible in the transcript).
//!
//! # The statistic
//!
//! Per step, `x_t = <g~_t, u_t> qN / (z_t C)` with the *nominal* (claimed) multiplier
//! z_t; under the claimed mechanism `x_t ~ N(b_t/z_t, 1)` given the past, `b_t` = the
//! canary was sampled. The per-step log-likelihood ratio is
//! `l_t = ln(1 - q + q exp(x_t/z_t - 1/(2 z_t^2)))` (at q = 1: `x_t/z_t - 1/(2 z_t^2)`,
//! the canary-direction projection of the update), and the score is `L = sum_t l_t`, the
//! Neyman-Pearson statistic of the whole transcript's canary direction. At q = 1, L is
//! exactly `N(+-mu^2/2, mu^2)` with `mu = sqrt(T1/z1^2 + T2/z2^2)` (Dong, Roth & Su
//! 2019, Cor. 3.3), so the audit is tight; at q < 1 it is the sum of T i.i.d. mixture
//! log-likelihood ratios.
//!
//! A second statistic reads the support: `L + BONUS [the dropped coordinate is not one
//! of the canary's]` (selection is post-processing of the warm-up for the paper's
//! mechanism; with scores read before the noise it is the leak).
//!
//! # Estimators
//!
//! Three, each at confidence `1 - (1 - c)/3` (Bonferroni), the reported bound the
//! largest: the Gaussian-DP estimator on L ([`estimators::gdp_estimate`]), Clopper-Pearson
//! on L and Clopper-Pearson on the support statistic (threshold chosen on the first
//! half of each world, measured on the second, [`stats`]).
use super::estimators::{ClopperPearsonEstimate, GdpEstimate};
use super::AuditError;
use crate::privacy::{calibrate_two_phase, Accountant, PhasePlan};
use crate::rng::SeedPath;
use crate::train::dpsgd::fused::StepCache;
use crate::train::dpsgd::support::{active_dimension, top_k, ScoreAccumulator};
use crate::train::dpsgd::{
    dp_step_cached, Classification, Mask, Model, ModelKind, PrivacyLedger, ScoreSource, StepParams,
};
use crate::train::Recipe;
use ndarray::{Array1, Array2};
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

/// Feature scale M of the canary (module docs).
pub const CANARY_SCALE: f64 = 1000.0;

/// Scale of the ordinary records' features: their clipped gradients are small beside the
/// canary's on every weight coordinate, so that scores read before the noise rank the
/// canary's coordinates first when it is present (the selection-before-noise control)
/// even at q < 1, where the canary is in a quarter of the warm-up batches.
pub const ORDINARY_SCALE: f64 = 0.1;

/// Bonus of the support statistic: far above any |L| of the audited configurations.
pub const SUPPORT_BONUS: f64 = 1.0e4;

/// Clipping norm C.
pub const CLIP: f64 = 1.0;

/// Warm-up share rho of the budget and of the steps (the tp-topk system's defaults).
pub const BUDGET_SPLIT: f64 = 0.3;

/// Which accountant calibrates (z1, z2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WhiteBoxCalibration {
    /// The paper's: the composed Poisson-subsampled RDP accountant (Theorem 4.1).
    Rdp,
    /// The exact one (the null of the audit): Gaussian DP at q = 1, the PLD accountant
    /// (upper end of its certified bracket) at q < 1.
    Exact,
}

/// An audit of TP-TopK's real step (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct WhiteBoxConfig {
    pub epsilon: f64,
    pub delta: f64,
    /// Poisson sampling rate q in (0, 1].
    pub sampling_rate: f64,
    /// Total steps T (T1 = round(0.3 T) warm-up).
    pub steps: usize,
    /// Records N, the canary's slot included.
    pub records: usize,
    /// Features F, the canary's included (P = 2F + 2).
    pub features: usize,
    /// Runs per world.
    pub trials: usize,
    /// Multiplier of both calibrated noise multipliers (negative controls: 0.5).
    pub noise_scale: f64,
    /// The step clips at `clip_scale C` while its noise stays `z C` (the sensitivity
    /// slip: 2 is noise calibrated to half the sensitivity).
    pub clip_scale: f64,
    pub calibration: WhiteBoxCalibration,
    /// Joint confidence of the reported bound.
    pub confidence: f64,
}

impl WhiteBoxConfig {
    /// Defaults: q = 1, T = 20, N = 20, F = 4, 2000 runs per world, calibrated (RDP),
    /// confidence 0.95.
    pub fn new(epsilon: f64, delta: f64) -> Self {
        Self {
            epsilon,
            delta,
            sampling_rate: 1.0,
            steps: 20,
            records: 20,
            features: 4,
            trials: 2000,
            noise_scale: 1.0,
            clip_scale: 1.0,
            calibration: WhiteBoxCalibration::Rdp,
            confidence: 0.95,
        }
    }

    fn validate(&self) -> Result<(), AuditError> {
        let bad = |name, expected, value: String| {
            Err(AuditError::Parameter {
                name,
                expected,
                value,
            })
        };
        let pos = |v: f64| v > 0.0 && v.is_finite();
        if !pos(self.epsilon) {
            return bad("epsilon", "positive and finite", self.epsilon.to_string());
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return bad("delta", "in (0, 1)", self.delta.to_string());
        }
        if !(self.sampling_rate > 0.0 && self.sampling_rate <= 1.0) {
            return bad("sampling-rate", "in (0, 1]", self.sampling_rate.to_string());
        }
        if self.steps < 2 {
            return bad("steps", "at least 2", self.steps.to_string());
        }
        if self.records < 3 {
            return bad("n", "at least 3", self.records.to_string());
        }
        if self.features < 2 {
            return bad("p", "at least 2 features", self.features.to_string());
        }
        if self.trials < 4 {
            return bad("trials", "at least 4", self.trials.to_string());
        }
        if !pos(self.noise_scale) {
            return bad(
                "noise-scale",
                "positive and finite",
                self.noise_scale.to_string(),
            );
        }
        if !pos(self.clip_scale) {
            return bad(
                "clip-scale",
                "positive and finite",
                self.clip_scale.to_string(),
            );
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return bad("confidence", "in (0, 1)", self.confidence.to_string());
        }
        Ok(())
    }
}

/// What a white-box audit found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhiteBoxResult {
    pub system: &'static str,
    /// The largest estimator's bound, valid at `confidence`.
    pub epsilon_lower_bound: f64,
    pub epsilon_claimed: f64,
    pub delta: f64,
    pub confidence: f64,
    pub sampling_rate: f64,
    pub trials: usize,
    pub t1: usize,
    pub t2: usize,
    pub params: usize,
    pub k: usize,
    pub records: usize,
    pub lr: f64,
    pub calibration: WhiteBoxCalibration,
    /// Nominal (calibrated) multipliers: the auditor's statistic uses these.
    pub z1_nominal: f64,
    pub z2_nominal: f64,
    /// Multipliers of the noise as run, per clip as run (after noise and clip scales).
    pub noise_scale: f64,
    pub clip_scale: f64,
    /// Epsilon of the schedule as run by the paper's accountant (RDP), with the
    /// sensitivity as run (noise sd / clip as run).
    pub epsilon_rdp_as_run: f64,
    /// The exact epsilon of the mechanism as run (GDP at q = 1, PLD at q < 1; `null`
    /// with pre-noise scores: not DP).
    pub epsilon_exact_as_run: Option<f64>,
    /// The same for the noise as run with the sensitivity C the accountant assumes
    /// (noise multiplier `z noise_scale`): what the analysis assigns to the run.
    pub epsilon_exact_accounted: f64,
    pub gdp: GdpEstimate,
    pub clopper_pearson: ClopperPearsonEstimate,
    pub clopper_pearson_support: ClopperPearsonEstimate,
    /// Share of runs whose dropped coordinate is not a canary coordinate, per world.
    pub canary_kept_whole: (f64, f64),
    /// Steps (over all runs of the canary world) where the sampled canary was not
    /// clipped (0: the nominal shift C held at every step).
    pub canary_unclipped_steps: usize,
    /// Scores read by the warm-up (`privatized` or `pre-noise`).
    pub scores: &'static str,
}

/// The built problem.
pub(crate) struct Problem {
    model: Model,
    /// World with the canary, and the world with the `x = 0` record.
    canary: Classification,
    replaced: Classification,
    sp1: StepParams,
    sp2: StepParams,
    z1: f64,
    z2: f64,
    t1: usize,
    t2: usize,
    k: usize,
    /// The canary's two weight coordinates (class 0, class 1).
    coords: [usize; 2],
}

/// One run's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct WhiteBoxRun {
    /// `L = sum_t l_t` (module docs).
    pub llr: f64,
    /// The dropped coordinate is not one of the canary's.
    pub kept_whole: bool,
    /// Steps where the canary was sampled and not clipped.
    pub unclipped: usize,
    /// The final iterate.
    pub theta: Array1<f64>,
}

fn data(cfg: &WhiteBoxConfig, path: &SeedPath) -> (Classification, Classification) {
    let (n, f) = (cfg.records, cfg.features);
    let mut rng = path.rng_for("data");
    let mut x = Array2::<f64>::zeros((n, f));
    for i in 0..n - 1 {
        for j in 0..f - 1 {
            let v: f64 = StandardNormal.sample(&mut rng);
            x[[i, j]] = ORDINARY_SCALE * v;
        }
    }
    let y: Vec<usize> = (0..n).map(|i| if i == n - 1 { 0 } else { i % 2 }).collect();
    let replaced = x.clone();
    x[[n - 1, f - 1]] = CANARY_SCALE;
    let mk = |x: Array2<f64>| Classification {
        test_x: x.slice(ndarray::s![..1, ..]).to_owned(),
        test_y: vec![0],
        train_x: x,
        train_y: y.clone(),
        classes: 2,
    };
    (mk(x), mk(replaced))
}

/// Active ratio giving k = P - 1 (module docs).
pub fn active_ratio(params: usize) -> f64 {
    (params as f64 - 0.5) / params as f64
}

/// Learning rate such that the canary's logits move by at most about 0.3 over the run
/// (module docs): `lr = 0.15 qN / (M T (1 + 6 z_max) clip_scale C)`.
pub fn learning_rate(cfg: &WhiteBoxConfig, z_max: f64) -> f64 {
    let qn = cfg.sampling_rate * cfg.records as f64;
    0.15 * qn / (CANARY_SCALE * cfg.steps as f64 * (1.0 + 6.0 * z_max) * cfg.clip_scale * CLIP)
}

pub(crate) fn build(
    cfg: &WhiteBoxConfig,
    path: &SeedPath,
    recipe: &Recipe,
) -> Result<Problem, AuditError> {
    cfg.validate()?;
    let t1 = ((BUDGET_SPLIT * cfg.steps as f64).round() as usize).clamp(1, cfg.steps - 1);
    let t2 = cfg.steps - t1;
    let q = cfg.sampling_rate;
    let acc = match cfg.calibration {
        WhiteBoxCalibration::Rdp => Accountant::Rdp,
        WhiteBoxCalibration::Exact if q >= 1.0 => Accountant::Gdp,
        WhiteBoxCalibration::Exact => Accountant::Pld,
    };
    let cal = calibrate_two_phase(
        acc,
        cfg.epsilon,
        cfg.delta,
        BUDGET_SPLIT,
        PhasePlan {
            sampling_rate: q,
            steps: t1 as u64,
        },
        PhasePlan {
            sampling_rate: q,
            steps: t2 as u64,
        },
        &recipe.accounting,
    )?;
    let (z1, z2) = (cal.noise_multiplier_1, cal.noise_multiplier_2);
    let model = Model::new(ModelKind::Logreg, cfg.features, 2);
    let p = model.num_params();
    let k = active_dimension(active_ratio(p), p).map_err(|e| AuditError::Canary(e.to_string()))?;
    let lr = learning_rate(cfg, z1.max(z2) * cfg.noise_scale);
    let clip = cfg.clip_scale * CLIP;
    // Noise sd z C (as calibrated, times the noise scale) whatever the clip as run.
    let step = |z: f64| StepParams {
        sampling_rate: q,
        clip,
        noise_multiplier: z * cfg.noise_scale / cfg.clip_scale,
        lr,
        recipe: recipe.dpsgd,
    };
    let (canary, replaced) = data(cfg, path);
    let f = cfg.features;
    Ok(Problem {
        model,
        canary,
        replaced,
        sp1: step(z1),
        sp2: step(z2),
        z1,
        z2,
        t1,
        t2,
        k,
        coords: [f - 1, f + f - 1],
    })
}

impl Problem {
    /// `M p1` at `theta`: the smallest norm of the canary's masked gradient (one weight
    /// coordinate active); the canary is clipped when it exceeds the clip as run.
    fn canary_grad_floor(&self, theta: &Array1<f64>, f: usize) -> f64 {
        let mut xc = Array2::<f64>::zeros((1, f));
        xc[[0, f - 1]] = CANARY_SCALE;
        let z = self.model.logits(&theta.view(), &xc.view());
        let p1 = 1.0 / (1.0 + (z[[0, 0]] - z[[0, 1]]).exp());
        CANARY_SCALE * p1
    }

    /// One run of TP-TopK on `data` with the noise of `rng` (module docs), read by the
    /// auditor step by step. The loop is [`crate::train::dpsgd::run_method`]'s for
    /// TP-TopK (logistic regression starts at 0 and draws nothing at its init).
    fn run(
        &self,
        data: &Classification,
        q: f64,
        rng: &mut impl rand::Rng,
        recipe: &Recipe,
    ) -> Result<WhiteBoxRun, AuditError> {
        let p = self.model.num_params();
        let f = data.train_x.ncols();
        let n = data.train_y.len();
        let qn = q * n as f64;
        let (x, y) = (data.train_x.view(), &data.train_y[..]);
        let mut theta = Array1::<f64>::zeros(p);
        let mut ledger = PrivacyLedger::new();
        let mut cache = StepCache::default();
        let mut acc = ScoreAccumulator::new(p);
        let [c0, c1] = self.coords;
        let mut llr = 0.0;
        let mut unclipped = 0;
        let present = data.train_x[[n - 1, f - 1]] != 0.0;
        // The auditor's reading of one released gradient (module docs).
        let mut observe = |g: &Array1<f64>, mask: &Mask, z: f64| {
            let (a0, a1) = (mask.is_active(c0), mask.is_active(c1));
            let norm = ((a0 as u8 + a1 as u8) as f64).sqrt();
            let proj = (if a1 { g[c1] } else { 0.0 } - if a0 { g[c0] } else { 0.0 }) / norm;
            let x_t = proj * qn / (z * CLIP);
            let a = x_t / z - 0.5 / (z * z);
            llr += if q >= 1.0 {
                a
            } else {
                (q * a.exp_m1()).ln_1p()
            };
        };
        let dense = Mask::dense(p);
        for _ in 0..self.t1 {
            if present && self.canary_grad_floor(&theta, f) <= self.sp1.clip {
                unclipped += 1;
            }
            let out = dp_step_cached(
                &self.model,
                &mut theta,
                &x,
                y,
                &dense,
                &self.sp1,
                &mut ledger,
                rng,
                Some(&mut cache),
            );
            match &out.privatized.pre_noise {
                Some(pre) => acc.add(&pre.view()),
                None => acc.add(&out.privatized.gradient.view()),
            }
            observe(&out.privatized.gradient, &dense, self.z1);
        }
        let noise_sd = self.sp1.noise_multiplier * self.sp1.clip / qn;
        let mut scores = acc
            .scores(noise_sd)
            .map_err(|e| AuditError::Canary(e.to_string()))?;
        if recipe.dpsgd.scores == ScoreSource::Reversed {
            scores.mapv_inplace(|v| -v);
        }
        let support =
            top_k(&scores.view(), self.k).map_err(|e| AuditError::Canary(e.to_string()))?;
        let mask =
            Mask::from_support(p, &support).map_err(|e| AuditError::Canary(e.to_string()))?;
        let kept_whole = mask.is_active(c0) && mask.is_active(c1);
        for _ in 0..self.t2 {
            if present && self.canary_grad_floor(&theta, f) <= self.sp2.clip {
                unclipped += 1;
            }
            let out = dp_step_cached(
                &self.model,
                &mut theta,
                &x,
                y,
                &mask,
                &self.sp2,
                &mut ledger,
                rng,
                Some(&mut cache),
            );
            observe(&out.privatized.gradient, &mask, self.z2);
        }
        Ok(WhiteBoxRun {
            llr,
            kept_whole,
            unclipped,
            theta,
        })
    }
}

mod driver;
pub use driver::{as_method, run_white_box, trial_path, world_runs};
