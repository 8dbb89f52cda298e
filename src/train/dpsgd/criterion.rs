//! Prop. 5.1's one-step criterion and Lemma 6.4's clipping-bias bound at a fixed
//! parameter vector (fewer-coordinates paper, "When Do Fewer Coordinates Suffice in
//! DP-SGD?", Sec. 5 and Sec. 6.2; DESIGN.md 2.3), measured through the one DP step
//! every method uses ([`privatize`]) on the full data (q = 1, divisor N).
//!
//! With `gbar = (1/N) sum_i clip(grad l_i(theta), C)` the full-data clipped aggregate,
//! `sigma = z C / N` the per-coordinate noise sd of the averaged step and `u_S` the
//! support-restricted update (dense: S = [P]), Prop. 5.1 states
//!
//! ```text
//! E ||u_S - gbar||^2 = ||P_{S^c} gbar||^2 + k sigma^2,    E ||u_[P] - gbar||^2 = P sigma^2,
//! E ||u_S - gbar||^2 - E ||u_[P] - gbar||^2 = ||P_{S^c} gbar||^2 - (P - k) sigma^2,
//! ```
//!
//! so restriction helps iff the discarded clipped-gradient energy is below the noise
//! energy saved on the P - k inactive coordinates. The decomposition takes the noiseless
//! part of `u_S` to be `P_S gbar`. The step of Sec. 3.2 masks *before* clipping, so its
//! noiseless part is `a_S = (1/N) sum_i clip(m o grad l_i, C)`, and the exact one-step
//! error is `||a_S - gbar||^2 + k sigma^2 = ||P_{S^c} gbar||^2 + ||P_S (a_S - gbar)||^2 +
//! k sigma^2`: the paper's identity plus a clip-order term, which vanishes when no
//! example is clipped ([`OneStep::clip_order_term`]).
//!
//! Lemma 6.4 (App. C.2), with the empirical distribution of the N examples: the clipping
//! bias of the masked step `b = a_S - m o (1/N) sum_i grad l_i` satisfies
//! `||b|| <= (1/N) sum_i (||m o grad l_i|| - C)_+` (triangle inequality:
//! `||clip(v) - v|| = (||v|| - C)_+`). A step that clips before masking breaks it.
//!
//! Draw order (part of the contract): for each trial, the restricted step's noise (k
//! normals, or P with [`super::NoiseSupport::All`]) and then the dense step's P normals.
use super::mechanism::{privatize, Mask, StepParams};
use super::model::Model;
use super::DpSgdError;
use ndarray::{Array1, ArrayView1, ArrayView2};
use rand::Rng;

/// What [`one_step_criterion`] measured (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct OneStep {
    /// Monte Carlo mean of `||u_S - gbar||^2`.
    pub restricted_error: f64,
    /// Monte Carlo mean of `||u_[P] - gbar||^2`.
    pub dense_error: f64,
    /// Mean of the per-trial differences (restricted minus dense).
    pub difference: f64,
    /// Standard error of `difference` (sd of the trials / sqrt(trials)).
    pub difference_se: f64,
    /// `||P_{S^c} gbar||^2`: the discarded clipped-gradient energy (Prop. 5.1, left).
    pub discarded_energy: f64,
    /// `(P - k) sigma^2`: the noise energy saved (Prop. 5.1, right).
    pub noise_saved: f64,
    /// `||P_S (a_S - gbar)||^2`: what masking before clipping adds to the identity.
    pub clip_order_term: f64,
    /// `||b||`, Lemma 6.4's left side.
    pub clip_bias_norm: f64,
    /// `(1/N) sum_i (||m o grad l_i|| - C)_+`, Lemma 6.4's right side.
    pub clip_bias_bound: f64,
    /// Share of examples whose full gradient is clipped.
    pub clipped_fraction: f64,
}

fn sq_dist(a: &ArrayView1<f64>, b: &ArrayView1<f64>) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Prop. 5.1's one-step errors over `trials` noise draws and Lemma 6.4's two sides, at
/// `theta` on the data `(x, y)` with support `mask` and the step `params` (its recipe
/// decides the clip order and where the noise goes; its sampling rate is ignored: the
/// step is the full-data one, divisor N).
#[allow(clippy::too_many_arguments)]
pub fn one_step_criterion(
    model: &Model,
    theta: &ArrayView1<f64>,
    x: &ArrayView2<f64>,
    y: &[usize],
    mask: &Mask,
    params: &StepParams,
    trials: usize,
    rng: &mut impl Rng,
) -> Result<OneStep, DpSgdError> {
    let n = y.len();
    if n == 0 || trials < 2 {
        return Err(DpSgdError::InvalidConfig(format!(
            "the one-step criterion needs data and at least 2 trials, got N = {n}, trials = {trials}"
        )));
    }
    let p = model.num_params();
    if mask.len() != p {
        return Err(DpSgdError::InvalidSupport(format!(
            "mask of {} coordinates for {p} parameters",
            mask.len()
        )));
    }
    let nf = n as f64;
    let dense = Mask::dense(p);
    let quiet = StepParams {
        noise_multiplier: 0.0,
        ..*params
    };
    // Without noise `privatize` draws nothing, so `rng` is not advanced here.
    let gbar = privatize(model, theta, x, y, nf, &dense, &quiet, rng);
    let a_s = privatize(model, theta, x, y, nf, mask, &quiet, rng).gradient;
    let gbar_v = gbar.gradient.view();
    let mut discarded = 0.0;
    let mut order_term = 0.0;
    for j in 0..p {
        if mask.is_active(j) {
            order_term += (a_s[j] - gbar_v[j]).powi(2);
        } else {
            discarded += gbar_v[j] * gbar_v[j];
        }
    }
    // Lemma 6.4: the bias of the masked step against the masked unclipped mean gradient.
    let raw = model.mean_gradient(theta, x, y);
    let bias: f64 = (0..p)
        .map(|j| {
            let target = if mask.is_active(j) { raw[j] } else { 0.0 };
            (a_s[j] - target).powi(2)
        })
        .sum::<f64>()
        .sqrt();
    let bw = model.backward(theta, x, y);
    let m = mask.weights();
    let masked_sq = model.per_example_sq_norms(&bw, if mask.is_dense() { None } else { Some(&m) });
    let bound = masked_sq
        .iter()
        .map(|s| (s.sqrt() - params.clip).max(0.0))
        .sum::<f64>()
        / nf;
    let sigma = params.noise_multiplier * params.clip / nf;
    let k = mask.active_count();
    let mut diffs = Array1::<f64>::zeros(trials);
    let (mut er, mut ed) = (0.0, 0.0);
    for d in diffs.iter_mut() {
        let us = privatize(model, theta, x, y, nf, mask, params, rng).gradient;
        let ud = privatize(model, theta, x, y, nf, &dense, params, rng).gradient;
        let (a, b) = (sq_dist(&us.view(), &gbar_v), sq_dist(&ud.view(), &gbar_v));
        er += a;
        ed += b;
        *d = a - b;
    }
    let t = trials as f64;
    let mean = diffs.sum() / t;
    let var = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (t - 1.0);
    Ok(OneStep {
        restricted_error: er / t,
        dense_error: ed / t,
        difference: mean,
        difference_se: (var / t).sqrt(),
        discarded_energy: discarded,
        noise_saved: (p - k) as f64 * sigma * sigma,
        clip_order_term: order_term,
        clip_bias_norm: bias,
        clip_bias_bound: bound,
        clipped_fraction: gbar.clipped as f64 / nf,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::planted::PlantedSpec;
    use crate::train::dpsgd::mechanism::{ClipOrder, DpSgdRecipe};
    use crate::train::dpsgd::model::ModelKind;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn setup() -> (Model, ndarray::Array2<f64>, Vec<usize>, Mask) {
        let spec = PlantedSpec {
            n_train: 200,
            n_test: 1,
            features: 10,
            support: 2,
            classes: 3,
            ..PlantedSpec::default()
        };
        let d = spec.generate(&mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        let model = Model::new(ModelKind::Logreg, 10, 3);
        let mask = Mask::from_support(model.num_params(), &[0, 1, 5, 12, 20, 31]).unwrap();
        (model, d.train_x, d.train_y, mask)
    }

    fn run(clip: f64, order: ClipOrder, seed: u64) -> OneStep {
        let (model, x, y, mask) = setup();
        let theta = ndarray::Array1::zeros(model.num_params());
        let params = StepParams {
            sampling_rate: 1.0,
            clip,
            noise_multiplier: 2.0 / clip,
            lr: 0.0,
            recipe: DpSgdRecipe {
                clip_order: order,
                ..DpSgdRecipe::PAPER
            },
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        one_step_criterion(
            &model,
            &theta.view(),
            &x.view(),
            &y,
            &mask,
            &params,
            400,
            &mut rng,
        )
        .unwrap()
    }

    #[test]
    fn identity_holds_to_monte_carlo_error_without_clipping() {
        let r = run(1e3, ClipOrder::MaskThenClip, 1);
        assert_eq!(r.clipped_fraction, 0.0);
        assert!(r.clip_order_term < 1e-20, "{}", r.clip_order_term);
        let margin = r.discarded_energy - r.noise_saved;
        assert!(
            (r.difference - margin).abs() < 5.0 * r.difference_se,
            "{r:?}"
        );
    }

    #[test]
    fn masking_after_clipping_is_the_update_prop_5_1_writes() {
        // Clip, then mask: the noiseless part is exactly P_S gbar.
        let r = run(0.5, ClipOrder::ClipThenMask, 2);
        assert_eq!(r.clipped_fraction, 1.0);
        assert!(r.clip_order_term < 1e-24, "{}", r.clip_order_term);
        // Mask, then clip: a longer step on S, the identity gains a term.
        let p = run(0.5, ClipOrder::MaskThenClip, 2);
        assert!(p.clip_order_term > 1e-6, "{}", p.clip_order_term);
    }

    #[test]
    fn lemma_6_4_holds_for_the_paper_step_at_every_clip() {
        for clip in [0.1, 0.5, 1.0, 2.0, 4.0, 100.0] {
            let r = run(clip, ClipOrder::MaskThenClip, 3);
            assert!(
                r.clip_bias_norm <= r.clip_bias_bound + 1e-12,
                "C = {clip}: {r:?}"
            );
        }
    }

    #[test]
    fn same_seed_same_numbers() {
        assert_eq!(
            run(1.0, ClipOrder::MaskThenClip, 9),
            run(1.0, ClipOrder::MaskThenClip, 9)
        );
    }
}
