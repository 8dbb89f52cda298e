//! The non-private ceiling of dense DP-SGD: the same Poisson-sampled minibatch SGD with
//! no clipping and no noise. The fewer-coordinates paper argues that "coordinate
//! sparsification is most beneficial when dense DP-SGD remains far from ceiling
//! accuracy" (Sec. 7.2); this run measures that ceiling on the same data and streams.
//!
//! Streams: `init` (model initialisation, as [`super::run_method`]) and `train` (the
//! Poisson samples, N uniforms per step, example 0 first). With no noise the step draws
//! no normals, so from the second step on the batches differ from a private run's on
//! the same stream: the streams are common, not the batches. Every step goes through
//! [`super::mechanism::dp_step`] with the clipping norm `f64::MAX` (every clip factor of
//! a finite gradient is 1; not infinity, whose product with z = 0 is NaN) and noise
//! multiplier 0; its ledger is dropped: nothing here is private, nothing is
//! accounted.
use super::config::MethodConfig;
use super::mechanism::{dp_step, DpSgdRecipe, Mask, PrivacyLedger, StepParams};
use super::model::Model;
use super::{Classification, DpSgdError};
use crate::rng::SeedPath;
use ndarray::Array1;

/// What a non-private run produced.
#[derive(Clone, Debug)]
pub struct NonPrivateRun {
    pub test_accuracy: f64,
    pub train_accuracy: f64,
    /// The final parameters.
    pub theta: Array1<f64>,
}

/// Dense minibatch SGD with `cfg`'s model, epochs, expected batch and learning rate,
/// without clipping or noise (module docs). The privacy fields of `cfg` (epsilon, delta,
/// clipping norms, the split) are ignored; `cfg` must still pass
/// [`MethodConfig::validate`].
pub fn run_non_private(
    data: &Classification,
    cfg: &MethodConfig,
    seed_path: &SeedPath,
) -> Result<NonPrivateRun, DpSgdError> {
    crate::linalg::pin_blas_threads();
    data.validate()?;
    let n = data.train_y.len();
    let (q, spe) = cfg.validate(n)?;
    let model = Model::new(cfg.model, data.features(), data.classes);
    let p = model.num_params();
    let mut theta = model.init(&mut seed_path.rng_for("init"));
    let mut rng = seed_path.rng_for("train");
    let params = StepParams {
        sampling_rate: q,
        clip: f64::MAX,
        noise_multiplier: 0.0,
        lr: cfg.lr,
        recipe: DpSgdRecipe::PAPER,
    };
    let mask = Mask::dense(p);
    let mut ledger = PrivacyLedger::new();
    let (x, y) = (data.train_x.view(), &data.train_y[..]);
    for step in 1..=cfg.epochs * spe {
        let out = dp_step(
            &model,
            &mut theta,
            &x,
            y,
            &mask,
            &params,
            &mut ledger,
            &mut rng,
        );
        if !out.privatized.batch_loss.is_finite() || theta.iter().any(|v| !v.is_finite()) {
            return Err(DpSgdError::Diverged { step });
        }
    }
    Ok(NonPrivateRun {
        test_accuracy: model.accuracy(&theta.view(), &data.test_x.view(), &data.test_y),
        train_accuracy: model.accuracy(&theta.view(), &data.train_x.view(), &data.train_y),
        theta,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::dpsgd::{Method, ModelKind, SyntheticSpec};

    #[test]
    fn the_ceiling_learns_and_repeats_bit_for_bit() {
        let spec = SyntheticSpec {
            n_train: 300,
            n_test: 300,
            features: 20,
            informative: 4,
            ..SyntheticSpec::default()
        };
        let data = Classification::synthetic(&spec, &mut SeedPath::new(1).rng_for("d")).unwrap();
        let mut cfg = MethodConfig::new(Method::DpSgd, ModelKind::Logreg, 1.0);
        cfg.epochs = 3;
        cfg.batch_size = 32.0;
        let seeds = SeedPath::new(2).child("run");
        let a = run_non_private(&data, &cfg, &seeds).unwrap();
        let b = run_non_private(&data, &cfg, &seeds).unwrap();
        assert_eq!(
            a.theta.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            b.theta.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        // 4 classes: chance is 0.25; the separated informative features are learnable.
        assert!(a.test_accuracy > 0.5, "accuracy {}", a.test_accuracy);
    }
}
