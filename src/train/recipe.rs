//! The formulas of a run that a configuration can replace: one [`Recipe`], passed in by
//! whoever builds the run (a system of [`crate::systems`], the CLI, a test, a user of the
//! library) and handed by the core to the code that applies each formula.
//!
//! The core implements every formula once, behind a hook of its recipe, and
//! [`Recipe::PAPER`] (the [`Default`]) is the papers' formulas: a run with it is the
//! published algorithm, bit for bit. The core never asks *why* a recipe differs from
//! the paper's — a user's variant, a deliberately wrong implementation kept to measure
//! what the claim suite catches — so that anything the core can be asked to do goes
//! through the same door.
//!
//! | part | where it applies | hooks |
//! |------|------------------|-------|
//! | [`Recipe::dpgd`] ([`DpGdRecipe`]) | [`super::dpgd::run`], [`super::dpgd::prop22_sigma`], the DP-GD audits | sigma of Prop. 2.2, noise std, clip rule, clipped mean, ridge in the per-sample gradients, step count, fresh noise per step |
//! | [`Recipe::first_layer`] ([`FirstLayerRecipe`]) | [`super::feature_learning::first_layer_step`] | normalisation of the neurons |
//! | [`Recipe::dpsgd`] ([`DpSgdRecipe`]) | [`super::dpsgd::dp_step`] via [`super::dpsgd::StepParams`], the methods' support scores | order of masking and clipping, noised coordinates, score source |
//! | [`Recipe::accounting`] ([`AccountantRecipe`]) | [`crate::privacy::epsilon`], [`crate::privacy::calibrate()`], [`crate::privacy::rdp_curve`] | per-step RDP, composition of phases, RDP → (eps, delta) conversion |
//! | [`Recipe::noise_stream`] | [`Recipe::noise_rng`]: the DP noise generators of the systems and the audit | which seed path the DP noise is drawn from |
//!
//! Hooks are plain function pointers or small enums, so a recipe is `Copy`, `Sync` and
//! `const`-constructible: `Recipe { dpgd: DpGdRecipe { noise_std: my_std, ..DpGdRecipe::PAPER }, ..Recipe::PAPER }`.
use super::dpgd::DpGdRecipe;
use super::dpsgd::DpSgdRecipe;
use crate::privacy::AccountantRecipe;
use crate::rng::{SeedPath, StreamRng};

/// Every formula of a run that a configuration can replace (module docs).
#[derive(Clone, Copy, Debug)]
pub struct Recipe {
    /// Full-batch DP-GD (direct engine, second layer of the blog, DP-GD audits).
    pub dpgd: DpGdRecipe,
    /// The first layer of the blog's Algorithm 1 (training and audit).
    pub first_layer: FirstLayerRecipe,
    /// The DP-SGD step of the TP-TopK family.
    pub dpsgd: DpSgdRecipe,
    /// The RDP accountant (DP-SGD calibration and reports).
    pub accounting: AccountantRecipe,
    /// The seed path of the DP noise, given the path of a noise stream and the path of
    /// the data stream of the same unit. Paper: the noise stream, independent of the
    /// data and of everything else (privacy-for-free Algorithm 1: xi_t independent;
    /// DESIGN 4: one stream per purpose).
    pub noise_stream: for<'a> fn(noise: &'a SeedPath, data: &'a SeedPath) -> &'a SeedPath,
}

impl Recipe {
    /// The papers' formulas.
    pub const PAPER: Recipe = Recipe {
        dpgd: DpGdRecipe::PAPER,
        first_layer: FirstLayerRecipe::PAPER,
        dpsgd: DpSgdRecipe::PAPER,
        accounting: AccountantRecipe::PAPER,
        noise_stream: own_stream,
    };

    /// The DP noise generator of a stream whose own path is `noise`, in a unit whose data
    /// are drawn from `data` ([`Recipe::noise_stream`]).
    pub fn noise_rng(&self, noise: &SeedPath, data: &SeedPath) -> StreamRng {
        (self.noise_stream)(noise, data).rng()
    }
}

impl Default for Recipe {
    fn default() -> Self {
        Self::PAPER
    }
}

fn own_stream<'a>(noise: &'a SeedPath, _data: &'a SeedPath) -> &'a SeedPath {
    noise
}

/// The formulas of the first layer of Algorithm 1 that a configuration can replace;
/// [`FirstLayerRecipe::PAPER`] (the [`Default`]) is Algorithm 1 as printed.
#[derive(Clone, Copy, Debug)]
pub struct FirstLayerRecipe {
    /// Whether the neurons are normalised after the gradient step when the
    /// configuration asks for it (`normalise`). Paper: as asked (step 3, `w_j/||w_j||`,
    /// which bounds the first layer's sensitivity).
    pub normalise: fn(normalise: bool) -> bool,
}

impl FirstLayerRecipe {
    /// Algorithm 1 as printed.
    pub const PAPER: FirstLayerRecipe = FirstLayerRecipe {
        normalise: as_asked,
    };
}

impl Default for FirstLayerRecipe {
    fn default() -> Self {
        Self::PAPER
    }
}

fn as_asked(normalise: bool) -> bool {
    normalise
}
