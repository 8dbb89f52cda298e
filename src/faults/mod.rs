//! The fault catalogue: named, documented deviations of the training core and of the
//! privacy accounting that a real implementation could plausibly contain, run to
//! measure whether the claim suite catches them (`dpclaims faults`,
//! `reports/FAULTS.md`).
//!
//! A fault is a [`Recipe`]: the papers' formulas ([`Recipe::PAPER`]) with the one hook
//! the bug would live in replaced by the wrong code ([`recipes`]). The core knows no
//! faults: it takes its formulas from the recipe its caller passes, and the matrix runs
//! the claims with [`Fault::recipe`] through the same door as every other run
//! ([`crate::pipeline::run_claim`], [`crate::privacy::audit::run_audit`]). The correct
//! core is [`Fault::None`], whose recipe is [`Recipe::PAPER`].
//!
//! Each fault declares the systems whose code paths it can reach ([`FaultInfo::systems`]);
//! the matrix skips claims of other systems (their results are the fault-free ones).
//! `tests/faults.rs` checks the declaration: a fault leaves one unit of every system it
//! does not declare bit-for-bit unchanged.
//!
//! Injection is faithful to where the code is shared: the audit's fast engine is a
//! closed-form model of DP-GD that uses the recipe's noise std
//! ([`crate::train::dpgd::DpGdRecipe::noise_std`], so it sees faults of the noise
//! formula) but not the training loop (so it does not see clipping, reuse or step-count
//! faults) — as a real regression would behave.
//!
//! To add a fault: write the wrong formula in [`recipes`], add a variant to [`Fault`]
//! and its entry to [`CATALOGUE`] (name, description, what it violates, the systems it
//! reaches, and its recipe), then run `dpclaims faults --only <name>` and add the
//! cheapest detecting claim to the sentinel table of `tests/faults.rs`. A bug of a kind
//! no hook can express needs a new hook in the core's recipe, whose paper default keeps
//! every result bit-identical.
pub mod matrix;
pub mod recipes;

use crate::privacy::rdp::classic_conversion;
use crate::privacy::AccountantRecipe;
use crate::train::dpgd::DpGdRecipe;
use crate::train::dpsgd::{ClipOrder, DpSgdRecipe, NoiseSupport, ScoreSource};
use crate::train::recipe::FirstLayerRecipe;
use crate::train::Recipe;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// One injectable deviation (see [`CATALOGUE`] for what each does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "&'static str")]
pub enum Fault {
    /// The correct core.
    #[default]
    None,
    NoiseMissingSqrtEta,
    NoiseCOverN,
    Noise2COverN,
    ClipMultiply,
    ClipSkipped,
    ClipMean,
    NoiseReused,
    SigmaInverseEpsilon,
    StepsOffByOne,
    RidgeLeftOut,
    FirstLayerNotNormalised,
    SharedRng,
    TopkMaskAfterClip,
    TopkNoiseOnInactive,
    TopkScoresPreNoise,
    RdpPoissonAtQOne,
    ClassicConversion,
    ComposeByMax,
}

/// System names (as in [`crate::systems`]) a fault can reach.
const RF: &str = "rf_dpgd";
const ENG: &str = "rf_engines";
const FL: &str = "feature_learning";
const CAL: &str = "gaussian_calibration";
const AUDIT: &str = "privacy_audit";
const TP: &str = "tp_topk";
/// Reached only through the sigma and noise-std hooks and the noise stream: the reduced
/// engine it runs implements the paper's loop alone (clip rule, steps, fresh noise).
const TUNED: &str = "rf_tuned";
/// Reached as [`TUNED`]: the same hooks, the same reduced engine.
const FIG2: &str = "rf_fig2";

/// The documentation of one fault.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FaultInfo {
    pub fault: Fault,
    /// Kebab-case name (`--only`, JSON, FAULTS.md).
    pub name: &'static str,
    /// What the faulty code does.
    pub description: &'static str,
    /// The paper, section and equation (or reference) the fault violates.
    pub violates: &'static str,
    /// Whether the fault breaks the privacy guarantee (false: utility or reporting only).
    pub breaks_privacy: bool,
    /// Systems whose code paths the fault reaches; claims of other systems are skipped.
    pub systems: &'static [&'static str],
    /// The core's formulas with the fault in them.
    #[serde(skip)]
    pub recipe: Recipe,
}

/// The paper's recipe with other DP-GD formulas.
const fn dpgd(dpgd: DpGdRecipe) -> Recipe {
    Recipe {
        dpgd,
        ..Recipe::PAPER
    }
}

/// The paper's recipe with another DP-SGD step.
const fn dpsgd(dpsgd: DpSgdRecipe) -> Recipe {
    Recipe {
        dpsgd,
        ..Recipe::PAPER
    }
}

/// The paper's recipe with another RDP accountant.
const fn accounting(accounting: AccountantRecipe) -> Recipe {
    Recipe {
        accounting,
        ..Recipe::PAPER
    }
}

const DPGD: DpGdRecipe = DpGdRecipe::PAPER;
const DPSGD: DpSgdRecipe = DpSgdRecipe::PAPER;
const RDP: AccountantRecipe = AccountantRecipe::PAPER;

/// Every fault, in matrix order.
pub const CATALOGUE: &[FaultInfo] = &[
    FaultInfo {
        fault: Fault::NoiseMissingSqrtEta,
        name: "noise-missing-sqrt-eta",
        description: "DP-GD noise std (kappa C/n) sigma without the sqrt(eta) factor (over-noised by 1/sqrt(eta) when eta < 1, as in every claim; under-noised when eta > 1)",
        violates: "privacy-for-free Algorithm 1, Eq. 11 (theta <- theta - eta g + sqrt(eta) (2C/n) sigma xi); blog Algorithm 1 (second layer)",
        breaks_privacy: false,
        systems: &[RF, ENG, FL, AUDIT, TUNED, FIG2],
        recipe: dpgd(DpGdRecipe {
            noise_std: recipes::noise_without_sqrt_eta,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::NoiseCOverN,
        name: "noise-c-over-n",
        description: "DP-GD noise constant hard-coded to C/n (add/remove sensitivity) where the spec asks for 2C/n (kappa = 2, replace-one): half the noise",
        violates: "privacy-for-free Eq. 11 and Prop. 2.2 (replace-one sensitivity 2C/n of the clipped mean)",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, AUDIT, TUNED, FIG2],
        recipe: dpgd(DpGdRecipe {
            noise_std: recipes::noise_c_over_n,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::Noise2COverN,
        name: "noise-2c-over-n",
        description: "DP-GD noise constant hard-coded to 2C/n where the spec asks for C/n (kappa = 1, the blog's printed C_a/n): twice the noise",
        violates: "blog Algorithm 1, second-layer update a <- a - eta_a g + sqrt(eta_a) (C_a/n) sigma_a xi",
        breaks_privacy: false,
        systems: &[RF, ENG, FL, AUDIT, TUNED, FIG2],
        recipe: dpgd(DpGdRecipe {
            noise_std: recipes::noise_2c_over_n,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::ClipMultiply,
        name: "clip-multiply",
        description: "per-sample clipping multiplies by max(1, ||g||/C) as printed in the blog, where the spec asks for the standard division",
        violates: "privacy-for-free Algorithm 1 (g_i / max(1, ||g_i||/C)); Abadi et al. 2016",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, AUDIT],
        recipe: dpgd(DpGdRecipe {
            clip_rule: recipes::clip_multiply,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::ClipSkipped,
        name: "clip-skipped",
        description: "per-sample clipping skipped: gradients enter the mean unclipped (the noise is still scaled by C)",
        violates: "privacy-for-free Algorithm 1 and Prop. 2.2 (the sensitivity bound needs clipping)",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, AUDIT],
        recipe: dpgd(DpGdRecipe {
            clip_rule: recipes::clip_skipped,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::ClipMean,
        name: "clip-mean",
        description: "clipping applied once to the mean gradient (g / max(1, ||g||/C)) instead of to every per-sample gradient",
        violates: "privacy-for-free Algorithm 1 (per-sample clipping bounds the sensitivity of the mean by 2C/n)",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, AUDIT],
        recipe: dpgd(DpGdRecipe {
            clip_rule: recipes::clip_skipped,
            clipped_mean: recipes::clip_the_mean,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::NoiseReused,
        name: "noise-reused",
        description: "one noise vector xi drawn at the first step and reused at every step (perfectly correlated noise over time)",
        violates: "privacy-for-free Algorithm 1 and Eq. 20 (xi_t i.i.d. N(0, I_p)); composition in Prop. 2.2",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, AUDIT],
        recipe: dpgd(DpGdRecipe {
            fresh_noise: recipes::first_draw_only,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::SigmaInverseEpsilon,
        name: "sigma-inverse-epsilon",
        description: "sigma calibrated as sqrt(eta T)/eps instead of sqrt(eta T) sqrt(8 ln(1/delta))/eps",
        violates: "privacy-for-free Prop. 2.2 (Eq. 5); blog Assumption 4 (sigma_a)",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, CAL, AUDIT, TUNED, FIG2],
        recipe: dpgd(DpGdRecipe {
            sigma: recipes::sigma_inverse_epsilon,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::StepsOffByOne,
        name: "steps-off-by-one",
        description: "DP-GD runs T + 1 noisy steps (loop bound 0..=T) while T are accounted",
        violates: "privacy-for-free Algorithm 1 and Prop. 2.2 (sigma is calibrated for T steps)",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, AUDIT],
        recipe: dpgd(DpGdRecipe {
            steps: recipes::one_step_more,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::RidgeLeftOut,
        name: "ridge-left-out",
        description: "the ridge term 2 lambda a left out of the per-sample gradients (so out of the clipping and of the update)",
        violates: "blog Algorithm 1, second layer: DP-GD on (1/n) sum (f(x_i) - y_i)^2 + lambda ||a||^2",
        breaks_privacy: false,
        systems: &[FL, AUDIT],
        recipe: dpgd(DpGdRecipe {
            per_sample_ridge: recipes::no_ridge,
            ..DPGD
        }),
    },
    FaultInfo {
        fault: Fault::FirstLayerNotNormalised,
        name: "first-layer-not-normalised",
        description: "first-layer neurons not normalised after the gradient step (w_j kept as is before the sigma_W noise)",
        violates: "blog Algorithm 1, step 3 (w_j <- w_j/||w_j|| + sigma_W N(0, I_d)); the normalisation bounds the first layer's sensitivity",
        breaks_privacy: true,
        systems: &[FL, AUDIT],
        recipe: Recipe {
            first_layer: FirstLayerRecipe {
                normalise: recipes::never_normalise,
            },
            ..Recipe::PAPER
        },
    },
    FaultInfo {
        fault: Fault::SharedRng,
        name: "shared-rng",
        description: "the DP noise generator is seeded like the data generator: the noise replays the normals that drew the data (correlated with it, identical across runs on the same data)",
        violates: "privacy-for-free Algorithm 1 (xi_t independent of the data and of everything else); DESIGN 4 (one stream per purpose)",
        breaks_privacy: true,
        systems: &[RF, ENG, FL, AUDIT, TUNED, FIG2],
        recipe: Recipe {
            noise_stream: recipes::data_stream,
            ..Recipe::PAPER
        },
    },
    FaultInfo {
        fault: Fault::TopkMaskAfterClip,
        name: "topk-mask-after-clip",
        description: "TP-TopK phase 2 clips the full per-example gradient and masks afterwards (clip factors depend on the inactive coordinates)",
        violates: "fewer-coordinates paper Sec. 3.2, Phase 2 (per-example gradients masked to S before clipping)",
        breaks_privacy: false,
        systems: &[TP],
        recipe: dpsgd(DpSgdRecipe {
            clip_order: ClipOrder::ClipThenMask,
            ..DPSGD
        }),
    },
    FaultInfo {
        fault: Fault::TopkNoiseOnInactive,
        name: "topk-noise-on-inactive",
        description: "TP-TopK phase 2 adds noise on all P coordinates and updates them all (inactive coordinates random-walk instead of staying frozen)",
        violates: "fewer-coordinates paper Sec. 3.2, Phase 2 (noise on the k active coordinates only; noise energy k (z2 C2/(qN))^2)",
        breaks_privacy: false,
        systems: &[TP],
        recipe: dpsgd(DpSgdRecipe {
            noise_support: NoiseSupport::All,
            ..DPSGD
        }),
    },
    FaultInfo {
        fault: Fault::TopkScoresPreNoise,
        name: "topk-scores-pre-noise",
        description: "TP-TopK warm-up scores computed from the clipped gradients before the noise (the support leaks the data)",
        violates: "fewer-coordinates paper Sec. 3.2 and Theorem 4.1 (support selection is post-processing of the privatised g~ only)",
        breaks_privacy: true,
        systems: &[TP, AUDIT],
        recipe: dpsgd(DpSgdRecipe {
            scores: ScoreSource::PreNoise,
            ..DPSGD
        }),
    },
    FaultInfo {
        fault: Fault::RdpPoissonAtQOne,
        name: "rdp-poisson-at-q1",
        description: "the Poisson-subsampled Gaussian RDP evaluated at q = 1 (no amplification by subsampling): sound, but the calibrated noise is far too large",
        violates: "Mironov, Talwar & Zhang 2019, Sec. 3 (RDP of the sampled Gaussian mechanism); fewer-coordinates paper Sec. 4",
        breaks_privacy: false,
        systems: &[TP],
        recipe: accounting(AccountantRecipe {
            step_rdp: recipes::rdp_at_q_one,
            ..RDP
        }),
    },
    FaultInfo {
        fault: Fault::ClassicConversion,
        name: "classic-conversion",
        description: "RDP converted to (eps, delta) with the classic bound r + ln(1/delta)/(alpha - 1) instead of the improved one: sound, a little more noise",
        violates: "Canonne, Kamath & Steinke 2020, Prop. 12 (improved conversion) vs Mironov 2017, Prop. 3",
        breaks_privacy: false,
        systems: &[TP, AUDIT, CAL],
        recipe: accounting(AccountantRecipe {
            conversion: classic_conversion,
            ..RDP
        }),
    },
    FaultInfo {
        fault: Fault::ComposeByMax,
        name: "compose-by-max",
        description: "the RDP curves of the phases composed by their order-wise maximum instead of their sum",
        violates: "Mironov 2017, Prop. 1 (RDP curves of composed mechanisms add); fewer-coordinates paper Theorem 4.1",
        breaks_privacy: true,
        systems: &[TP, AUDIT],
        recipe: accounting(AccountantRecipe {
            compose: recipes::compose_by_max,
            ..RDP
        }),
    },
];

impl Fault {
    /// Every fault of the catalogue (not [`Fault::None`]), in matrix order.
    pub fn all() -> impl Iterator<Item = Fault> {
        CATALOGUE.iter().map(|i| i.fault)
    }

    /// The catalogue entry (`None` for [`Fault::None`]).
    pub fn info(self) -> Option<&'static FaultInfo> {
        CATALOGUE.iter().find(|i| i.fault == self)
    }

    /// The kebab-case name (`none` for the correct core).
    pub fn name(self) -> &'static str {
        self.info().map_or("none", |i| i.name)
    }

    /// The core's formulas with this fault ([`Recipe::PAPER`] for [`Fault::None`]).
    pub fn recipe(self) -> Recipe {
        self.info().map_or(Recipe::PAPER, |i| i.recipe)
    }

    /// True for the correct core.
    pub fn is_none(self) -> bool {
        self == Fault::None
    }

    /// Whether the fault can reach the code paths of `system` (always true for
    /// [`Fault::None`]).
    pub fn affects(self, system: &str) -> bool {
        self.info().is_none_or(|i| i.systems.contains(&system))
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<Fault> for &'static str {
    fn from(f: Fault) -> Self {
        f.name()
    }
}

impl FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "none" {
            return Ok(Fault::None);
        }
        CATALOGUE
            .iter()
            .find(|i| i.name == s)
            .map(|i| i.fault)
            .ok_or_else(|| {
                format!(
                    "unknown fault `{s}` (expected one of: {})",
                    CATALOGUE
                        .iter()
                        .map(|i| i.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}
