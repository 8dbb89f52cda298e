//! Coordinate scores and support selection (fewer-coordinates paper Sec. 3.2, "Phase 1:
//! DP warm-up guided support discovery").
//!
//! * Score (Sec. 3.2; Lemma 5.2 for its unbiasedness under the additive model):
//!   `s_j = (1/T1) sum_t g~_{t,j}^2 - sigma^2`, `sigma = z1 C1 / (q N)` the per-coordinate
//!   standard deviation of the noise in the averaged privatised gradient.
//! * Support: the k largest scores, `k = floor(r P)`; ties broken by the lower index
//!   first (deterministic).
//! * Random support (TP-Rand / ON-Rand): k indices uniformly without replacement.
//!
//! Everything here is post-processing of DP outputs: no privacy cost (Thm 4.1).
use super::DpSgdError;
use crate::data::digits::permutation;
use ndarray::{Array1, ArrayView1};
use rand::Rng;

/// Accumulates `sum_t g~_{t,j}^2` over the steps of a phase (or an epoch).
#[derive(Clone, Debug)]
pub struct ScoreAccumulator {
    sum_sq: Array1<f64>,
    steps: usize,
}

impl ScoreAccumulator {
    pub fn new(p: usize) -> Self {
        Self {
            sum_sq: Array1::zeros(p),
            steps: 0,
        }
    }

    /// Add one privatised averaged gradient `g~_t`.
    pub fn add(&mut self, g: &ArrayView1<f64>) {
        self.sum_sq.zip_mut_with(g, |s, &v| *s += v * v);
        self.steps += 1;
    }

    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The scores `s_j = sum_sq_j / T - noise_sd^2` (see [`scores`]).
    pub fn scores(&self, noise_sd: f64) -> Result<Array1<f64>, DpSgdError> {
        scores(&self.sum_sq.view(), self.steps, noise_sd)
    }
}

/// Denoised warm-up scores (Sec. 3.2): `s_j = sum_sq_j / steps - noise_sd^2`, where
/// `sum_sq_j = sum_t g~_{t,j}^2` and `noise_sd = z C / (q N)`.
pub fn scores(
    sum_sq: &ArrayView1<f64>,
    steps: usize,
    noise_sd: f64,
) -> Result<Array1<f64>, DpSgdError> {
    if steps == 0 {
        return Err(DpSgdError::InvalidConfig(
            "scores need at least one warm-up step".into(),
        ));
    }
    let floor = noise_sd * noise_sd;
    let t = steps as f64;
    Ok(sum_sq.mapv(|s| s / t - floor))
}

/// Indices of the k largest scores, ties broken by the lower index; returned in
/// increasing index order. NaN scores rank last.
pub fn top_k(scores: &ArrayView1<f64>, k: usize) -> Result<Vec<usize>, DpSgdError> {
    let p = scores.len();
    if k > p {
        return Err(DpSgdError::InvalidSupport(format!(
            "k = {k} exceeds the number of coordinates {p}"
        )));
    }
    let key = |j: usize| {
        let v = scores[j];
        if v.is_nan() {
            f64::NEG_INFINITY
        } else {
            v
        }
    };
    let mut idx: Vec<usize> = (0..p).collect();
    // Descending score, then ascending index: a total order, so the result is unique.
    idx.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    let mut s: Vec<usize> = idx.into_iter().take(k).collect();
    s.sort_unstable();
    Ok(s)
}

/// k of the P indices uniformly at random without replacement (the first k entries of
/// a [`permutation`] of `0..p`), in increasing order.
pub fn random_support(p: usize, k: usize, rng: &mut impl Rng) -> Result<Vec<usize>, DpSgdError> {
    if k > p {
        return Err(DpSgdError::InvalidSupport(format!(
            "k = {k} exceeds the number of coordinates {p}"
        )));
    }
    let mut s: Vec<usize> = permutation(p, rng).into_iter().take(k).collect();
    s.sort_unstable();
    Ok(s)
}

/// Active dimension `k = floor(r P)` (Sec. 3.1).
pub fn active_dimension(ratio: f64, p: usize) -> Result<usize, DpSgdError> {
    if !(ratio > 0.0 && ratio <= 1.0) {
        return Err(DpSgdError::InvalidConfig(format!(
            "active ratio r must be in (0, 1], got {ratio}"
        )));
    }
    let k = (ratio * p as f64).floor() as usize;
    if k == 0 {
        return Err(DpSgdError::InvalidConfig(format!(
            "active ratio {ratio} of {p} parameters gives k = floor(r P) = 0"
        )));
    }
    Ok(k.min(p))
}
