//! Classification data for the DP-SGD experiments: the shipped 8x8 digits
//! ([`crate::data::digits`]) and a synthetic Gaussian mixture whose gradient energy is
//! concentrated on few coordinates.
//!
//! Synthetic model ([`SyntheticSpec`]): D features of which only s are informative
//! (positions drawn at random, so that the lower-index tie-break of top-k cannot
//! favour them by accident). Class c has mean `mu_c = separation * sign_{c,j}` on the
//! informative features (independent random signs) and 0 elsewhere; an example is
//! `y ~ U{0..K-1}`, `x_j = mu_{y,j} + sd_j e_j`, e ~ N(0, I_D), with `sd_j = 1` on the
//! informative features and `nuisance_sd` (default 0.3) elsewhere, so that the
//! per-example norm (hence clipping) is not dominated by the nuisance features and
//! noise picked up by their weights is pulled back only weakly. For logistic regression at theta = 0 the
//! expected gradient of the weights of feature j is `E[(softmax - e_y) x_j]`, which is
//! zero for non-informative features (x_j independent of y, mean 0), so the noiseless
//! gradient energy sits on the s*K informative weights (and the biases): a support of
//! size k ~ s K captures most of it, a random support only k/P.
//!
//! Draw order of [`Classification::synthetic`]: a [`permutation`] of the D features
//! (its first s entries are informative), then K x s signs (class-major, one
//! `random::<bool>()` each), then for each training example and then each test example:
//! its label (`random_range(0..K)`) and its D normals.
use super::DpSgdError;
use crate::data::digits::{self, permutation};
use ndarray::Array2;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// A labelled train/test classification problem (labels in `0..classes`).
#[derive(Clone, Debug)]
pub struct Classification {
    pub train_x: Array2<f64>,
    pub train_y: Vec<usize>,
    pub test_x: Array2<f64>,
    pub test_y: Vec<usize>,
    pub classes: usize,
}

/// Parameters of the synthetic Gaussian mixture (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticSpec {
    pub n_train: usize,
    pub n_test: usize,
    /// Ambient dimension D.
    pub features: usize,
    /// Number s of informative features.
    pub informative: usize,
    /// Number of classes K.
    pub classes: usize,
    /// Scale of the class means on the informative features.
    pub separation: f64,
    /// Standard deviation of the non-informative (nuisance) features; informative
    /// features have unit noise.
    pub nuisance_sd: f64,
}

impl Default for SyntheticSpec {
    /// D = 200 features of which s = 8 informative, 4 classes, 2000 + 4000 examples
    /// (the large test set keeps the sampling noise of the held-out oracle gradient
    /// small), nuisance sd 0.3: logistic regression has P = 804 parameters, 36 of them
    /// (informative weights and biases) carry the signal.
    fn default() -> Self {
        Self {
            n_train: 2000,
            n_test: 4000,
            features: 200,
            informative: 8,
            classes: 4,
            separation: 1.0,
            nuisance_sd: 0.3,
        }
    }
}

impl Classification {
    /// Number of features D.
    pub fn features(&self) -> usize {
        self.train_x.ncols()
    }

    /// Checks shapes and labels.
    pub fn validate(&self) -> Result<(), DpSgdError> {
        let bad = |m: String| Err(DpSgdError::InvalidData(m));
        if self.train_y.is_empty() || self.test_y.is_empty() {
            return bad("train and test sets must be non-empty".into());
        }
        if self.train_x.nrows() != self.train_y.len() || self.test_x.nrows() != self.test_y.len() {
            return bad("row counts of inputs and labels differ".into());
        }
        if self.train_x.ncols() == 0 || self.train_x.ncols() != self.test_x.ncols() {
            return bad("train and test inputs need the same positive number of columns".into());
        }
        if self.classes < 2 {
            return bad(format!("need at least 2 classes, got {}", self.classes));
        }
        if let Some(&l) = self
            .train_y
            .iter()
            .chain(&self.test_y)
            .find(|&&l| l >= self.classes)
        {
            return bad(format!("label {l} not in 0..{}", self.classes));
        }
        if self
            .train_x
            .iter()
            .chain(&self.test_x)
            .any(|v| !v.is_finite())
        {
            return bad("inputs must be finite".into());
        }
        Ok(())
    }

    /// The digits data set, split into train/test with [`digits::Digits::split`].
    pub fn digits(test_fraction: f64, rng: &mut impl Rng) -> Result<Self, DpSgdError> {
        let d = digits::load()?;
        let s = d.split(test_fraction, rng)?;
        Ok(Self {
            train_x: s.train_x,
            train_y: s.train_labels,
            test_x: s.test_x,
            test_y: s.test_labels,
            classes: digits::N_CLASSES,
        })
    }

    /// The planted-support task ([`crate::data::planted`], its draw order).
    pub fn planted(
        spec: &crate::data::planted::PlantedSpec,
        rng: &mut impl Rng,
    ) -> Result<Self, DpSgdError> {
        let p = spec
            .generate(rng)
            .map_err(|e| DpSgdError::InvalidData(e.to_string()))?;
        Ok(Self {
            train_x: p.train_x,
            train_y: p.train_y,
            test_x: p.test_x,
            test_y: p.test_y,
            classes: spec.classes,
        })
    }

    /// The synthetic Gaussian mixture (module docs, including the draw order).
    pub fn synthetic(spec: &SyntheticSpec, rng: &mut impl Rng) -> Result<Self, DpSgdError> {
        let bad = |m: String| Err(DpSgdError::InvalidData(m));
        if spec.n_train == 0 || spec.n_test == 0 {
            return bad("synthetic data needs n_train, n_test >= 1".into());
        }
        if spec.informative == 0 || spec.informative > spec.features {
            return bad(format!(
                "informative features must be in 1..={}, got {}",
                spec.features, spec.informative
            ));
        }
        if spec.classes < 2 {
            return bad(format!("need at least 2 classes, got {}", spec.classes));
        }
        if !(spec.separation.is_finite() && spec.separation >= 0.0) {
            return bad(format!(
                "separation must be finite and >= 0, got {}",
                spec.separation
            ));
        }
        if !(spec.nuisance_sd.is_finite() && spec.nuisance_sd > 0.0) {
            return bad(format!(
                "nuisance sd must be finite and > 0, got {}",
                spec.nuisance_sd
            ));
        }
        let (d, s, k) = (spec.features, spec.informative, spec.classes);
        let informative: Vec<usize> = permutation(d, rng).into_iter().take(s).collect();
        let mut means = Array2::<f64>::zeros((k, d));
        let mut sd = vec![spec.nuisance_sd; d];
        for &j in &informative {
            sd[j] = 1.0;
        }
        for c in 0..k {
            for &j in &informative {
                let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
                means[[c, j]] = spec.separation * sign;
            }
        }
        let mut sample = |n: usize| {
            let mut x = Array2::<f64>::zeros((n, d));
            let mut y = Vec::with_capacity(n);
            for mut row in x.rows_mut() {
                let c = rng.random_range(0..k);
                y.push(c);
                for (j, v) in row.iter_mut().enumerate() {
                    let e: f64 = StandardNormal.sample(rng);
                    *v = means[[c, j]] + sd[j] * e;
                }
            }
            (x, y)
        };
        let (train_x, train_y) = sample(spec.n_train);
        let (test_x, test_y) = sample(spec.n_test);
        Ok(Self {
            train_x,
            train_y,
            test_x,
            test_y,
            classes: k,
        })
    }
}
