//! The one DP-SGD mechanism shared by every method: Poisson sampling, per-example
//! gradients, masking, clipping, Gaussian noise on the active coordinates, division by
//! the expected batch size, SGD update of the active coordinates.
//!
//! One step at sampling rate q, clip C, noise multiplier z, mask m with support S
//! (fewer-coordinates paper Sec. 3.1 for the dense step, Sec. 3.2 "Phase 2" for the
//! masked one; DESIGN.md section 2.3):
//!
//! ```text
//! B_t   = { i : u_i < q },  u_i ~ U[0,1) i.i.d.          (Poisson sampling, |B_t| varies)
//! g_i^m = m o grad l_i(theta)                              (mask BEFORE clipping)
//! c_i   = min(1, C / ||g_i^m||)
//! g~    = ( sum_{i in B_t} c_i g_i^m + m o z C xi ) / (q N),   xi ~ N(0, I_P)
//! theta_S <- theta_S - lr g~_S,   theta outside S untouched (frozen, bit-identical)
//! ```
//!
//! A dense method is the all-ones mask. Because masking precedes clipping, the
//! L2 sensitivity of the summed clipped gradients is C whatever S is (paper App. A,
//! proof of Thm 4.1, Phase 2), so every step is one Poisson-subsampled Gaussian
//! mechanism with multiplier z, and [`PrivacyLedger::charge`] — called by
//! [`dp_step`] and nowhere else — records it for the accountant.
//!
//! Order of random draws (part of the contract): first N uniforms for the Poisson
//! sample (example 0 first), then k = |S| standard normals for the active coordinates
//! in increasing index order. Inactive coordinates consume no draws, so changing a
//! gradient outside S changes nothing at all.
//!
//! The structure of the step is the caller's [`DpSgdRecipe`] ([`StepParams::recipe`]);
//! [`DpSgdRecipe::PAPER`] is the step above. Its alternatives are deliberately wrong
//! mechanisms, kept so that tests and the claim suite can show they are caught:
//! * [`ClipOrder::ClipThenMask`] clips the full gradient and masks afterwards: clip
//!   factors then depend on inactive coordinates (the negative control of the masking
//!   tests);
//! * [`NoiseSupport::All`] adds noise on all P coordinates and updates them all, so
//!   inactive coordinates random-walk instead of staying frozen (noise energy
//!   `P (zC/(qN))^2` instead of `k (zC/(qN))^2`);
//! * [`ScoreSource::PreNoise`] lets the support scores read the clipped gradients
//!   before the noise: the support then leaks the data (not DP);
//! * [`ScoreSource::Reversed`] ranks the scores upside down (the k lowest), a flipped
//!   sort order.
use super::fused::StepCache;
use super::model::Model;
use super::DpSgdError;
use crate::privacy::Phase;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Zip};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

/// A coordinate mask: the support S of active coordinates out of P (paper Sec. 3.1:
/// `m_j = 1` for `j in S`).
#[derive(Clone, Debug, PartialEq)]
pub struct Mask {
    active: Vec<bool>,
    weights: Array1<f64>,
    support: Vec<usize>,
}

impl Mask {
    /// The all-ones mask (dense DP-SGD).
    pub fn dense(p: usize) -> Self {
        Self {
            active: vec![true; p],
            weights: Array1::ones(p),
            support: (0..p).collect(),
        }
    }

    /// The mask of a support (indices in `0..p`, any order, no duplicates).
    pub fn from_support(p: usize, support: &[usize]) -> Result<Self, DpSgdError> {
        let mut active = vec![false; p];
        for &j in support {
            if j >= p {
                return Err(DpSgdError::InvalidSupport(format!(
                    "index {j} out of range 0..{p}"
                )));
            }
            if active[j] {
                return Err(DpSgdError::InvalidSupport(format!("index {j} repeated")));
            }
            active[j] = true;
        }
        let weights = active.iter().map(|&a| if a { 1.0 } else { 0.0 }).collect();
        let support = (0..p).filter(|&j| active[j]).collect();
        Ok(Self {
            active,
            weights,
            support,
        })
    }

    /// Number of parameters P.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// Number of active coordinates k.
    pub fn active_count(&self) -> usize {
        self.support.len()
    }

    /// True for the all-ones mask.
    pub fn is_dense(&self) -> bool {
        self.support.len() == self.active.len()
    }

    pub fn is_active(&self, j: usize) -> bool {
        self.active.get(j).copied().unwrap_or(false)
    }

    /// Active coordinates in increasing order.
    pub fn support(&self) -> &[usize] {
        &self.support
    }

    /// The mask as 0/1 floats.
    pub fn weights(&self) -> ArrayView1<'_, f64> {
        self.weights.view()
    }

    /// Energy capture `||m o g||^2 / ||g||^2` (paper Sec. 7.4; 0 when `g = 0`).
    pub fn energy_capture(&self, g: &ArrayView1<f64>) -> f64 {
        let total: f64 = g.iter().map(|v| v * v).sum();
        if total <= 0.0 {
            return 0.0;
        }
        let kept: f64 = self.support.iter().map(|&j| g[j] * g[j]).sum();
        kept / total
    }
}

/// Order of masking and clipping; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ClipOrder {
    /// Mask, then clip (paper Sec. 3.2; what every method uses).
    MaskThenClip,
    /// Clip, then mask: wrong, a negative control.
    ClipThenMask,
}

/// The coordinates a masked step adds noise to and updates; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum NoiseSupport {
    /// The active coordinates only; inactive ones are frozen (paper Sec. 3.2, Phase 2).
    Active,
    /// All P coordinates (wrong: inactive coordinates random-walk).
    All,
}

/// What the support scores of a method read; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ScoreSource {
    /// The privatised gradients `g~` (paper Sec. 3.2: selection is post-processing).
    Privatized,
    /// The averaged clipped gradients before the noise (wrong: not DP).
    PreNoise,
    /// The privatised gradients, ranked in reverse: the support is the k *lowest*
    /// scores (wrong: a flipped sort order; a negative control of support quality).
    Reversed,
}

/// The structure of the DP-SGD step that a configuration can replace;
/// [`DpSgdRecipe::PAPER`] (the [`Default`]) is the paper's (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DpSgdRecipe {
    /// Order of masking and clipping. Paper: mask, then clip.
    pub clip_order: ClipOrder,
    /// Coordinates a masked step adds noise to and updates. Paper: the active ones.
    pub noise_support: NoiseSupport,
    /// What the methods' support scores read. Paper: the privatised gradients.
    pub scores: ScoreSource,
}

impl DpSgdRecipe {
    /// The fewer-coordinates paper's step (Sec. 3.1-3.2).
    pub const PAPER: DpSgdRecipe = DpSgdRecipe {
        clip_order: ClipOrder::MaskThenClip,
        noise_support: NoiseSupport::Active,
        scores: ScoreSource::Privatized,
    };
}

impl Default for DpSgdRecipe {
    fn default() -> Self {
        Self::PAPER
    }
}

/// Hyper-parameters of one step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StepParams {
    /// Poisson sampling rate q in (0, 1].
    pub sampling_rate: f64,
    /// Clipping norm C > 0.
    pub clip: f64,
    /// Noise multiplier z >= 0 (0: no noise, not private; for tests).
    pub noise_multiplier: f64,
    /// Learning rate.
    pub lr: f64,
    /// The structure of the step ([`DpSgdRecipe::PAPER`]: the module docs).
    pub recipe: DpSgdRecipe,
}

/// What one privatised gradient computation produced (the recorder's input).
#[derive(Clone, Debug)]
pub struct Privatized {
    /// `g~`: the noisy averaged gradient (zero outside the support).
    pub gradient: Array1<f64>,
    /// Per-example clip factors `c_i = min(1, C/||g_i^m||)` of the batch.
    pub clip_factors: Array1<f64>,
    /// Number of examples with `c_i < 1`.
    pub clipped: usize,
    /// `||m o z C xi||^2 / (qN)^2`: the noise energy injected in `g~` (paper Sec. 3.2).
    pub noise_energy: f64,
    /// Mean loss of the batch (before the update).
    pub batch_loss: f64,
    /// The averaged clipped gradient before the noise, `(sum_i c_i g_i^m)/(qN)`: only
    /// computed when the recipe's scores read it ([`ScoreSource::PreNoise`]; a DP method
    /// must never use it).
    pub pre_noise: Option<Array1<f64>>,
}

/// Outcome of one [`dp_step`].
#[derive(Clone, Debug)]
pub struct StepOutcome {
    pub privatized: Privatized,
    /// Size of the Poisson batch.
    pub batch_size: usize,
}

/// Poisson sampling (Sec. 3.1; DESIGN.md 2.3): each of the `n` examples is in the batch
/// independently with probability `q`; draws `n` uniforms, example 0 first.
///
/// The uniform of example i is rand's `u_i = (w_i >> 11) 2^-53` of the stream's i-th
/// 64-bit word `w_i`, so `u_i < q` exactly when the integer `w_i >> 11` is below
/// `ceil(q 2^53)` (both sides are exact). The n words are read in one `fill_bytes`
/// (the same words in the same order as n `next_u64`) and compared as integers: the
/// same batch, bit for bit, as `(0..n).filter(|_| rng.random::<f64>() < q)` (test
/// `poisson_sample_is_the_uniform_comparison`), in a fraction of its time.
pub fn poisson_sample(n: usize, q: f64, rng: &mut impl Rng) -> Vec<usize> {
    let threshold = if q >= 1.0 {
        u64::MAX
    } else if q > 0.0 {
        (q * (1u64 << 53) as f64).ceil() as u64
    } else {
        0
    };
    let mut words = vec![0u8; 8 * n];
    rng.fill_bytes(&mut words);
    words
        .chunks_exact(8)
        .enumerate()
        .filter(|(_, w)| (u64::from_le_bytes((*w).try_into().expect("8 bytes")) >> 11) < threshold)
        .map(|(i, _)| i)
        .collect()
}

/// The privatised averaged gradient `g~` of a given batch (module docs), without the
/// update. Draws k normals (active coordinates in increasing order) when `z > 0`; with
/// [`NoiseSupport::All`] on a sparse mask, P normals (every coordinate, increasing
/// index), keeping the noise of the inactive coordinates in `g~`.
#[allow(clippy::too_many_arguments)]
pub fn privatize(
    model: &Model,
    theta: &ArrayView1<f64>,
    x: &ArrayView2<f64>,
    y: &[usize],
    expected_batch: f64,
    mask: &Mask,
    params: &StepParams,
    rng: &mut impl Rng,
) -> Privatized {
    privatize_rows(
        model,
        theta,
        x,
        y,
        None,
        expected_batch,
        mask,
        params,
        rng,
        None,
    )
}

/// [`privatize`] on the batch `rows` of `(x, y)` (`None`: all of them), read in place by
/// the fused logistic-regression pass, gathered for the GEMM path.
#[allow(clippy::too_many_arguments)]
fn privatize_rows(
    model: &Model,
    theta: &ArrayView1<f64>,
    x: &ArrayView2<f64>,
    y: &[usize],
    rows: Option<&[usize]>,
    expected_batch: f64,
    mask: &Mask,
    params: &StepParams,
    rng: &mut impl Rng,
    cache: Option<&mut StepCache>,
) -> Privatized {
    let m = mask.weights();
    let masked_norms = params.recipe.clip_order == ClipOrder::MaskThenClip && !mask.is_dense();
    let norm_mask = masked_norms.then_some(&m);
    let c = params.clip;
    // Logistic regression: the fused per-example pass; otherwise the GEMM path. Every
    // branch below reads the sum on the support only (the dense mask: everywhere).
    let support = (!mask.is_dense()).then(|| mask.support());
    let fused = model.logreg_clipped_sum(
        theta,
        x,
        y,
        rows,
        masked_norms.then(|| mask.support()),
        support,
        c,
        // The frozen logits only where the step updates the support alone.
        cache.filter(|_| params.recipe.noise_support == NoiseSupport::Active),
    );
    let (mut sum, factors, batch_loss) = match fused {
        Some(fused) => fused,
        None => {
            let gathered: Option<(Array2<f64>, Vec<usize>)> =
                rows.map(|r| (gather_rows(x, r), r.iter().map(|&i| y[i]).collect()));
            let (x, y): (ArrayView2<f64>, &[usize]) = match &gathered {
                Some((bx, by)) => (bx.view(), by.as_slice()),
                None => (x.view(), y),
            };
            let bw = model.backward(theta, &x, y);
            let factors = model.per_example_sq_norms(&bw, norm_mask).mapv(|s| {
                let norm = s.sqrt();
                if norm > c {
                    c / norm
                } else {
                    1.0
                }
            });
            let sum = model.weighted_gradient_sum(&bw, &factors.view());
            (sum, factors, bw.loss)
        }
    };
    let clipped = factors.iter().filter(|&&f| f < 1.0).count();
    let scale = 1.0 / expected_batch;
    let sd = params.noise_multiplier * params.clip;
    let mut noise_sq = 0.0;
    let pre_noise = (params.recipe.scores == ScoreSource::PreNoise).then(|| {
        let mut g = Array1::zeros(sum.len());
        for &j in mask.support() {
            g[j] = sum[j] * scale;
        }
        g
    });
    if params.recipe.noise_support == NoiseSupport::All && !mask.is_dense() {
        for (j, v) in sum.iter_mut().enumerate() {
            if !mask.is_active(j) {
                *v = 0.0;
            }
            if sd > 0.0 {
                let xi: f64 = StandardNormal.sample(rng);
                let e = sd * xi;
                noise_sq += e * e;
                *v += e;
            }
        }
        sum *= scale;
    } else if mask.is_dense() {
        if sd > 0.0 {
            for v in sum.iter_mut() {
                let xi: f64 = StandardNormal.sample(rng);
                let e = sd * xi;
                noise_sq += e * e;
                *v += e;
            }
        }
        sum *= scale;
    } else {
        let mut g = Array1::zeros(sum.len());
        for &j in mask.support() {
            let mut v = sum[j];
            if sd > 0.0 {
                let xi: f64 = StandardNormal.sample(rng);
                let e = sd * xi;
                noise_sq += e * e;
                v += e;
            }
            g[j] = v * scale;
        }
        sum = g;
    }
    Privatized {
        gradient: sum,
        clip_factors: factors,
        clipped,
        noise_energy: noise_sq * scale * scale,
        batch_loss,
        pre_noise,
    }
}

/// `theta_j -= lr g_j` on the support only; coordinates outside it are not written.
pub fn masked_update(theta: &mut Array1<f64>, g: &ArrayView1<f64>, lr: f64, mask: &Mask) {
    if mask.is_dense() {
        Zip::from(theta).and(g).for_each(|t, &gj| *t -= lr * gj);
    } else {
        for &j in mask.support() {
            theta[j] -= lr * g[j];
        }
    }
}

/// Records every application of the subsampled Gaussian mechanism, merging runs of
/// identical (q, z) into phases: what the accountant charges is what was run (STYLE,
/// "counting wrapper").
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PrivacyLedger {
    phases: Vec<Phase>,
}

impl PrivacyLedger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Charge one step at sampling rate `q` and noise multiplier `z`.
    pub fn charge(&mut self, q: f64, z: f64) {
        match self.phases.last_mut() {
            Some(p)
                if p.sampling_rate.to_bits() == q.to_bits()
                    && p.noise_multiplier.to_bits() == z.to_bits() =>
            {
                p.steps += 1
            }
            _ => self.phases.push(Phase::new(q, z, 1)),
        }
    }

    /// The charged phases, in order.
    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }
}

/// The rows `idx` of `x`, in that order (what `x.select(Axis(0), idx)` returns, the
/// same values, copied a row at a time rather than through ndarray's general `select`).
fn gather_rows(x: &ArrayView2<f64>, idx: &[usize]) -> Array2<f64> {
    let d = x.ncols();
    let mut v = Vec::with_capacity(idx.len() * d);
    for &i in idx {
        let row = x.row(i);
        match row.as_slice() {
            Some(r) => v.extend_from_slice(r),
            None => v.extend(row.iter().copied()),
        }
    }
    Array2::from_shape_vec((idx.len(), d), v).expect("idx.len() rows of d")
}

/// One DP-SGD step on the training set `(x, y)` (module docs): Poisson sample, privatise
/// (mask, clip, sum, noise, divide by qN), update the active coordinates (all of them
/// with [`NoiseSupport::All`]), charge the ledger.
#[allow(clippy::too_many_arguments)]
pub fn dp_step(
    model: &Model,
    theta: &mut Array1<f64>,
    x: &ArrayView2<f64>,
    y: &[usize],
    mask: &Mask,
    params: &StepParams,
    ledger: &mut PrivacyLedger,
    rng: &mut impl Rng,
) -> StepOutcome {
    dp_step_cached(model, theta, x, y, mask, params, ledger, rng, None)
}

/// [`dp_step`] keeping what the next step can reuse in `cache` (a training loop's
/// [`StepCache`]: the frozen logits of a masked logistic-regression step). The same
/// mechanism and draws; the logits summed in another order.
#[allow(clippy::too_many_arguments)]
pub fn dp_step_cached(
    model: &Model,
    theta: &mut Array1<f64>,
    x: &ArrayView2<f64>,
    y: &[usize],
    mask: &Mask,
    params: &StepParams,
    ledger: &mut PrivacyLedger,
    rng: &mut impl Rng,
    cache: Option<&mut StepCache>,
) -> StepOutcome {
    let n = y.len();
    let q = params.sampling_rate;
    let idx = poisson_sample(n, q, rng);
    let expected = q * n as f64;
    let privatized = privatize_rows(
        model,
        &theta.view(),
        x,
        y,
        Some(&idx),
        expected,
        mask,
        params,
        rng,
        cache,
    );
    if params.recipe.noise_support == NoiseSupport::All {
        masked_update(
            theta,
            &privatized.gradient.view(),
            params.lr,
            &Mask::dense(mask.len()),
        );
    } else {
        masked_update(theta, &privatized.gradient.view(), params.lr, mask);
    }
    ledger.charge(q, params.noise_multiplier);
    StepOutcome {
        privatized,
        batch_size: idx.len(),
    }
}
