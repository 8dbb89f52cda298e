//! The wrong formulas of the catalogue: each function replaces one hook of the core's
//! [`Recipe`](crate::train::Recipe), with the code a plausible bug would run in its place.
//! [`super::CATALOGUE`] assembles them into one recipe per fault; everything else of a
//! faulty recipe is the paper's.
use crate::privacy::rdp::rdp_sampled_gaussian_unchecked;
use crate::rng::SeedPath;
use crate::train::dpgd::{ClipRule, DpGdConfig, StepStats};
use ndarray::Array1;

/// `noise-missing-sqrt-eta`: `kappa C sigma / n`, the `sqrt(eta)` of Eq. 11 dropped.
pub fn noise_without_sqrt_eta(cfg: &DpGdConfig, n: usize) -> f64 {
    cfg.kappa * cfg.clip * cfg.sigma / n as f64
}

/// `noise-c-over-n`: the noise constant hard-coded to 1 (`sqrt(eta) C sigma / n`),
/// whatever kappa the configuration asks for.
pub fn noise_c_over_n(cfg: &DpGdConfig, n: usize) -> f64 {
    cfg.eta.sqrt() * cfg.clip * cfg.sigma / n as f64
}

/// `noise-2c-over-n`: the noise constant hard-coded to 2 (`sqrt(eta) 2C sigma / n`).
pub fn noise_2c_over_n(cfg: &DpGdConfig, n: usize) -> f64 {
    cfg.eta.sqrt() * 2.0 * cfg.clip * cfg.sigma / n as f64
}

/// `sigma-inverse-epsilon`: `sigma = sqrt(eta T)/eps`, the `sqrt(8 ln(1/delta))` of
/// Prop. 2.2 dropped.
pub fn sigma_inverse_epsilon(eta: f64, steps: usize, eps: f64, _delta: f64) -> f64 {
    (eta * steps as f64).sqrt() / eps
}

/// `clip-multiply`: the standard division replaced by the blog's printed
/// multiplication by `max(1, ||g||/C)`.
pub fn clip_multiply(rule: ClipRule) -> ClipRule {
    match rule {
        ClipRule::Divide => ClipRule::Multiply,
        rule => rule,
    }
}

/// `clip-skipped` (and the per-sample half of `clip-mean`): no per-sample clipping
/// where the standard division is asked for.
pub fn clip_skipped(rule: ClipRule) -> ClipRule {
    match rule {
        ClipRule::Divide => ClipRule::None,
        rule => rule,
    }
}

/// `clip-mean`: where the standard division is asked for, the mean of the unclipped
/// per-sample gradients ([`clip_skipped`]) is clipped at C instead; the step's
/// recorded clip fraction is then 1 when the mean was clipped, else 0.
pub fn clip_the_mean(cfg: &DpGdConfig, mean: &mut Array1<f64>, stats: &mut StepStats) {
    if cfg.clip_rule != ClipRule::Divide {
        return;
    }
    let ratio = mean.dot(&*mean).sqrt() / cfg.clip;
    stats.clip_fraction = if ratio > 1.0 {
        *mean /= ratio;
        1.0
    } else {
        0.0
    };
}

/// `noise-reused`: xi drawn at the first update only, then added again at every step.
pub fn first_draw_only(t: usize) -> bool {
    t == 0
}

/// `steps-off-by-one`: the loop bound `0..=T` (T + 1 updates while T are accounted).
pub fn one_step_more(steps: usize) -> usize {
    steps + 1
}

/// `ridge-left-out`: lambda = 0 in the per-sample gradients (so out of the clipping
/// and of the update).
pub fn no_ridge(_lambda: f64) -> f64 {
    0.0
}

/// `first-layer-not-normalised`: the normalisation of step 3 never runs.
pub fn never_normalise(_normalise: bool) -> bool {
    false
}

/// `shared-rng`: the DP noise generator seeded like the data generator, so the noise
/// replays the normals that drew the data.
pub fn data_stream<'a>(_noise: &'a SeedPath, data: &'a SeedPath) -> &'a SeedPath {
    data
}

/// `rdp-poisson-at-q1`: the subsampled Gaussian's RDP evaluated at `q = 1`.
pub fn rdp_at_q_one(_q: f64, z: f64, alpha: f64) -> f64 {
    rdp_sampled_gaussian_unchecked(1.0, z, alpha)
}

/// `compose-by-max`: the phases' RDP composed by their maximum instead of their sum.
pub fn compose_by_max(phases: &[f64]) -> f64 {
    phases.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}
