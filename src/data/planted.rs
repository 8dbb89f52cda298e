//! A classification task with a planted support: a Gaussian mixture whose class means
//! put a chosen fraction of their energy on a chosen set of s of the D features, so that
//! the gradient energy of a linear (softmax) model sits where the experiment says it
//! does. It is the controlled task of the fewer-coordinates paper's mechanism ("When Do
//! Fewer Coordinates Suffice in DP-SGD?", Prop. 5.1 and Cor. 6.6: restriction helps when
//! the discarded gradient energy is small against the noise energy saved; DESIGN.md 2.3).
//!
//! Model ([`PlantedSpec`]): labels `y ~ U{0..K-1}`, inputs `x = mu_y + noise_sd e`,
//! `e ~ N(0, I_D)`. The class means have squared norm `signal` each, a share `f`
//! (`energy_fraction`) of it on the planted features and `1 - f` spread evenly over the
//! others:
//!
//! ```text
//! mu_{c,j} = sign_{c,j} sqrt(f signal / s)             j planted
//! mu_{c,j} = sign_{c,j} sqrt((1 - f) signal / (D - s))  otherwise
//! ```
//!
//! with independent random signs. For the softmax model at theta = 0 the expected
//! gradient of weight (c, j) is `E[(1/K - 1[y = c]) x_j] = (mean_c' mu_{c',j} - mu_{c,j})/K`,
//! linear in the means: the noiseless gradient energy on the planted weights is about a
//! share f of the total (exactly f in expectation over the signs when K is large), and
//! `f = s/D` spreads it uniformly over the features (the "uniform" regime).
//!
//! Draw order (part of the contract): a permutation of the D features (its first s
//! entries are the planted ones), then K x D signs (class-major, feature order, one
//! `random::<bool>()` each), then for each training example and then each test example
//! its label (`random_range(0..K)`) and its D normals.
use super::digits::permutation;
use ndarray::Array2;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// Errors of the planted-support generator.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlantedError {
    #[error("planted data: {0}")]
    Invalid(String),
}

/// Parameters of the planted-support task (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlantedSpec {
    pub n_train: usize,
    pub n_test: usize,
    /// Ambient dimension D.
    pub features: usize,
    /// Size s of the planted support (features).
    pub support: usize,
    /// Share f in [0, 1] of each class mean's energy on the planted features.
    pub energy_fraction: f64,
    /// Squared norm of each class mean.
    pub signal: f64,
    /// Standard deviation of the isotropic input noise.
    pub noise_sd: f64,
    /// Number of classes K.
    pub classes: usize,
}

impl Default for PlantedSpec {
    /// D = 50 features, s = 5 planted carrying f = 0.9 of the mean energy 4, noise sd 1,
    /// 4 classes, 1000 + 2000 examples: the softmax model has P = 204 parameters.
    fn default() -> Self {
        Self {
            n_train: 1000,
            n_test: 2000,
            features: 50,
            support: 5,
            energy_fraction: 0.9,
            signal: 4.0,
            noise_sd: 1.0,
            classes: 4,
        }
    }
}

/// A drawn planted task.
#[derive(Clone, Debug)]
pub struct Planted {
    pub train_x: Array2<f64>,
    pub train_y: Vec<usize>,
    pub test_x: Array2<f64>,
    pub test_y: Vec<usize>,
    /// The planted features, in increasing order.
    pub support: Vec<usize>,
    /// The K x D class means.
    pub means: Array2<f64>,
}

impl PlantedSpec {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), PlantedError> {
        let bad = |m: String| Err(PlantedError::Invalid(m));
        if self.n_train == 0 || self.n_test == 0 {
            return bad("n_train and n_test must be at least 1".into());
        }
        if self.support == 0 || self.support > self.features {
            return bad(format!(
                "the support size s must be in 1..={} (the features), got {}",
                self.features, self.support
            ));
        }
        if !(0.0..=1.0).contains(&self.energy_fraction) {
            return bad(format!(
                "energy_fraction must be in [0, 1], got {}",
                self.energy_fraction
            ));
        }
        if self.support == self.features && self.energy_fraction < 1.0 {
            return bad("with s = D all the energy is planted: energy_fraction must be 1".into());
        }
        if !(self.signal.is_finite() && self.signal >= 0.0) {
            return bad(format!(
                "signal must be finite and >= 0, got {}",
                self.signal
            ));
        }
        if !(self.noise_sd.is_finite() && self.noise_sd > 0.0) {
            return bad(format!(
                "noise_sd must be finite and > 0, got {}",
                self.noise_sd
            ));
        }
        if self.classes < 2 {
            return bad(format!("need at least 2 classes, got {}", self.classes));
        }
        Ok(())
    }

    /// Draws the task (module docs, including the draw order).
    pub fn generate(&self, rng: &mut impl Rng) -> Result<Planted, PlantedError> {
        self.validate()?;
        let (d, s, k) = (self.features, self.support, self.classes);
        let perm = permutation(d, rng);
        let mut planted = vec![false; d];
        for &j in &perm[..s] {
            planted[j] = true;
        }
        let on = (self.energy_fraction * self.signal / s as f64).sqrt();
        let off = if d > s {
            ((1.0 - self.energy_fraction) * self.signal / (d - s) as f64).sqrt()
        } else {
            0.0
        };
        let mut means = Array2::<f64>::zeros((k, d));
        for c in 0..k {
            for j in 0..d {
                let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
                means[[c, j]] = sign * if planted[j] { on } else { off };
            }
        }
        let sd = self.noise_sd;
        let mut sample = |n: usize| {
            let mut x = Array2::<f64>::zeros((n, d));
            let mut y = Vec::with_capacity(n);
            for mut row in x.rows_mut() {
                let c = rng.random_range(0..k);
                y.push(c);
                for (j, v) in row.iter_mut().enumerate() {
                    let e: f64 = StandardNormal.sample(rng);
                    *v = means[[c, j]] + sd * e;
                }
            }
            (x, y)
        };
        let (train_x, train_y) = sample(self.n_train);
        let (test_x, test_y) = sample(self.n_test);
        Ok(Planted {
            train_x,
            train_y,
            test_x,
            test_y,
            support: (0..d).filter(|&j| planted[j]).collect(),
            means,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn spec() -> PlantedSpec {
        PlantedSpec {
            n_train: 50,
            n_test: 20,
            ..PlantedSpec::default()
        }
    }

    #[test]
    fn means_split_their_energy_as_asked() {
        let p = spec().generate(&mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert_eq!(p.support.len(), 5);
        for c in 0..4 {
            let row = p.means.row(c);
            let total: f64 = row.iter().map(|v| v * v).sum();
            let on: f64 = p.support.iter().map(|&j| row[j] * row[j]).sum();
            assert!((total - 4.0).abs() < 1e-12);
            assert!((on / total - 0.9).abs() < 1e-12);
        }
    }

    #[test]
    fn same_seed_same_task_and_uniform_regime_is_flat() {
        let a = spec().generate(&mut ChaCha8Rng::seed_from_u64(7)).unwrap();
        let b = spec().generate(&mut ChaCha8Rng::seed_from_u64(7)).unwrap();
        assert_eq!(a.train_x, b.train_x);
        assert_eq!(a.test_y, b.test_y);
        let flat = PlantedSpec {
            energy_fraction: 0.1,
            ..spec()
        }
        .generate(&mut ChaCha8Rng::seed_from_u64(7))
        .unwrap();
        let first = flat.means[[0, 0]].abs();
        assert!(flat.means.iter().all(|v| (v.abs() - first).abs() < 1e-12));
    }

    #[test]
    fn bad_specs_are_errors_not_panics() {
        let bad = [
            PlantedSpec {
                support: 0,
                ..spec()
            },
            PlantedSpec {
                support: 51,
                ..spec()
            },
            PlantedSpec {
                energy_fraction: 1.5,
                ..spec()
            },
            PlantedSpec {
                noise_sd: 0.0,
                ..spec()
            },
            PlantedSpec {
                classes: 1,
                ..spec()
            },
            PlantedSpec {
                n_test: 0,
                ..spec()
            },
        ];
        for s in bad {
            assert!(
                s.generate(&mut ChaCha8Rng::seed_from_u64(0)).is_err(),
                "{s:?}"
            );
        }
    }
}
