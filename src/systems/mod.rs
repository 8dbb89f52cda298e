//! Systems: the simulations a claim can ask for, each with its parameters, options and
//! a registry of named metrics.
//!
//! * [`rf_dpgd`] — DP-GD on the random-features model (privacy-for-free).
//! * [`rf_fig2`] — the cells of privacy-for-free Fig. 2 that its ordinal statements
//!   compare, in one unit.
//! * [`rf_tuned`] — the same through the reduced engine, hyper-parameters selected on a
//!   validation split over a grid.
//! * [`feature_learning`] — Algorithm 1 of the blog (first-layer step + DP second layer).
//! * [`calibration`] — exact privacy of a sigma calibration (Gaussian DP).
//! * [`gaussian_mechanism`] — the Gaussian mechanism calibrated to (epsilon, delta):
//!   sigma (analytic or classic) and its exact privacy.
//! * [`audit`] — empirical privacy audit (a lower bound on epsilon).
//! * [`engines`] — the direct and the reduced DP-GD engines checked against each other.
//! * [`tp_topk`] — DP-SGD and the TP-TopK family (fewer-coordinates paper).
//! * [`external`] — anyone's training core, a program speaking JSON Lines
//!   (`dpclaims-external/2`); built per claim from its spec, so not in [`all`].
//!
//! A system receives one work unit (a sweep point of a variant, one replicate) with its
//! resolved variables, its own seed path and the [`Recipe`] of the run, and returns the
//! requested metrics. Systems build the core's calls from the unit and hand the recipe to
//! every core entry point they call.
pub mod audit;
pub mod calibration;
pub mod cost;
pub mod engines;
pub mod external;
pub mod feature_learning;
pub mod gaussian_mechanism;
pub mod rf_dpgd;
pub mod rf_fig2;
pub mod rf_kernel;
pub mod rf_tuned;
pub mod shared;
pub mod tp_topk;
mod tp_topk_metrics;
mod tp_topk_planted;
mod tp_topk_stationarity;
mod tp_topk_tables;
mod tp_topk_tuning;

pub use cost::{Cost, CostInput};
pub use shared::SharedWork;

use crate::rng::SeedPath;
use crate::spec::DataSpec;
use crate::train::Recipe;
use std::collections::{BTreeMap, BTreeSet};

/// Constraint on a parameter's resolved value (checked at every sweep point when the
/// spec is loaded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    Positive,
    NonNegative,
    Probability,
    IntAtLeast(u64),
    PositiveOrInfinite,
    Finite,
}

/// A parameter a system reads.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub kind: ParamKind,
    pub optional: bool,
    pub doc: &'static str,
}

/// A named option with its allowed values (the first is the default).
#[derive(Clone, Copy, Debug)]
pub struct OptionInfo {
    pub name: &'static str,
    pub values: &'static [&'static str],
    pub doc: &'static str,
}

/// A metric in a system's registry.
#[derive(Clone, Copy, Debug)]
pub struct MetricInfo {
    pub name: &'static str,
    pub doc: &'static str,
}

/// Errors of one work unit.
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    #[error(transparent)]
    Train(#[from] crate::train::TrainError),
    #[error(transparent)]
    Privacy(#[from] crate::privacy::PrivacyError),
    #[error(transparent)]
    Linalg(#[from] crate::linalg::LinalgError),
    #[error("{0}")]
    Invalid(String),
}

/// One work unit's input.
pub struct UnitInput<'a> {
    pub vars: &'a BTreeMap<String, f64>,
    pub options: &'a BTreeMap<String, String>,
    pub data: &'a DataSpec,
    pub metrics: &'a BTreeSet<String>,
    /// The unit's variant (its seed path does not name it: variants share their seeds).
    pub variant: &'a str,
    pub seeds: SeedPath,
    /// The formulas of the run ([`Recipe::PAPER`] unless the caller of the runner
    /// chose others). Systems pass it to every core entry point they call.
    pub recipe: &'a Recipe,
    /// The work shared with the other units of the same sweep point and replicate
    /// ([`shared`]); `None`: nothing is shared (a unit run alone).
    pub shared: Option<&'a SharedWork>,
}

impl UnitInput<'_> {
    /// The part `key` of the unit's group ([`shared`]), or `compute` run for this unit
    /// alone when nothing is shared. `key` must name everything `compute` reads; the
    /// unit's seed path (which names its sweep, point and replicate) is prepended.
    pub fn shared<T, E>(
        &self,
        key: &str,
        compute: impl FnOnce() -> Result<T, E>,
    ) -> Result<std::sync::Arc<T>, E>
    where
        T: std::any::Any + Send + Sync,
    {
        match self.shared {
            Some(w) => w.get_or_try(&format!("{}|{key}", self.seeds), compute),
            None => compute().map(std::sync::Arc::new),
        }
    }
    /// The DP noise generator `label` of this unit: its stream `label`, unless the
    /// recipe seeds the noise otherwise ([`Recipe::noise_stream`], given the unit's data
    /// stream `data`).
    pub fn noise_rng(&self, label: &str) -> crate::rng::StreamRng {
        self.recipe
            .noise_rng(&self.seeds.child(label), &self.seeds.child("data"))
    }
    /// The seed path of the DP noise stream `label` (for engines that take a path, the
    /// reduced engine): [`Self::noise_rng`]'s stream, chosen by the recipe the same way.
    pub fn noise_seed(&self, label: &str) -> SeedPath {
        let (noise, data) = (self.seeds.child(label), self.seeds.child("data"));
        (self.recipe.noise_stream)(&noise, &data).clone()
    }
    /// A resolved variable (validated to exist for required parameters).
    pub fn var(&self, name: &str) -> Result<f64, SystemError> {
        self.vars
            .get(name)
            .copied()
            .ok_or_else(|| SystemError::Invalid(format!("missing parameter `{name}`")))
    }
    /// An optional variable with a default.
    pub fn var_or(&self, name: &str, default: f64) -> f64 {
        self.vars.get(name).copied().unwrap_or(default)
    }
    /// A variable used as a count.
    pub fn count(&self, name: &str) -> Result<usize, SystemError> {
        Ok(self.var(name)? as usize)
    }
    /// The sizes `(d, n, p, n_test)` most systems read.
    pub fn sizes(&self) -> Result<(usize, usize, usize, usize), SystemError> {
        Ok((
            self.count("d")?,
            self.count("n")?,
            self.count("p")?,
            self.count("n_test")?,
        ))
    }
    /// An option's value (defaults are filled in by validation).
    pub fn option(&self, name: &str) -> &str {
        self.options.get(name).map(String::as_str).unwrap_or("")
    }
    /// Whether any of these metrics is requested.
    pub fn wants(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.metrics.contains(*n))
    }
}

/// What a system declares: its name, model, parameters, options and metric registry.
#[derive(Debug)]
pub struct SystemInfo {
    pub name: &'static str,
    /// The model it simulates (the spec's `model` field must say the same).
    pub model: &'static str,
    pub description: &'static str,
    pub needs_target: bool,
    pub params: &'static [ParamInfo],
    pub options: &'static [OptionInfo],
    pub metrics: &'static [MetricInfo],
}

/// A simulation a claim can run.
pub trait System: Sync + Send + std::fmt::Debug {
    /// The system's declaration.
    fn info(&self) -> &'static SystemInfo;
    /// Runs one unit and returns the requested metrics (at least those).
    fn run(&self, input: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError>;
    /// The estimated CPU time and peak memory of one unit ([`cost`]), computed before
    /// anything runs: every size a unit allocates from its variables must be counted
    /// here, so that an absurd spec is refused instead of reaching an allocation failure.
    fn cost(&self, input: &cost::CostInput) -> cost::Cost;

    fn name(&self) -> &'static str {
        self.info().name
    }
    fn model(&self) -> &'static str {
        self.info().model
    }
    fn description(&self) -> &'static str {
        self.info().description
    }
    fn needs_target(&self) -> bool {
        self.info().needs_target
    }
    fn params(&self) -> &'static [ParamInfo] {
        self.info().params
    }
    fn options(&self) -> &'static [OptionInfo] {
        self.info().options
    }
    fn metrics(&self) -> &'static [MetricInfo] {
        self.info().metrics
    }
    /// Metrics computed by the same code as the quantity a spec would compare them with
    /// (e.g. the epsilon an accountant reports for the noise it calibrated itself): a
    /// check on them cannot fail, so specs may tabulate them but not judge them.
    fn self_checks(&self) -> &'static [&'static str] {
        &[]
    }
    /// Metrics that are exact computations: deterministic functions of the unit's
    /// variables and options that draw nothing from its seed (accountant outputs, a
    /// printed table's arithmetic). A row judged on one has no sampling error, so it
    /// carries no power line (`judge::power`); the judge checks that its replicates
    /// agree to the bit, and `tests/exact_metrics.rs` that two seeds give the same bits.
    fn exact_metrics(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether any option name and value is valid (an external core reads its own).
    fn accepts_any_option(&self) -> bool {
        false
    }
    /// Called once before a claim's units run: an external core is started and greeted
    /// here, so a wrong protocol or a missing metric fails before any unit runs.
    fn prepare(&self) -> Result<(), SystemError> {
        Ok(())
    }
    /// Called when a claim's units have run (an external core's workers are stopped).
    fn release(&self) {}
    /// What else makes a variant run differently besides its options, data and
    /// variables (an external variant's own command): variants with different tags are
    /// never identical.
    fn variant_tag(&self, _variant: &str) -> String {
        String::new()
    }
    /// What, besides this build and the unit's inputs, decides the result of a unit of
    /// `variant`, for the result cache's key (`execute::cache`): `Some("")` for a built-in
    /// system (the engine hash covers it), the hash of an external core's declared files
    /// and version, or `None` when it cannot be known (an external core that declares no
    /// files: editing it must never be answered from the cache, so its units always run).
    fn cache_identity(&self, _variant: &str) -> Option<String> {
        Some(String::new())
    }
    /// How [`System::cost`] is known, when it is not this build's cost model (an external
    /// core: declared, measured by `plan`, or nominal), for `dpclaims plan`.
    fn cost_basis(&self) -> Option<String> {
        None
    }
    /// The spec field outside a unit's variables that sizes its cost, with its value (an
    /// external core's `external.audit.trials`): what a refusal names when no variable
    /// drives the estimate.
    fn cost_field(&self) -> Option<(String, String)> {
        None
    }
    /// Whether `plan` should time one unit to know [`System::cost`] (an external core
    /// without a declared `cost_s`).
    fn wants_cost_measurement(&self) -> bool {
        false
    }
    /// Records the CPU seconds one unit took (measured by `plan` on the unit named
    /// `unit`): [`System::cost`] answers it from then on.
    fn record_measured_cost(&self, _seconds: f64, _unit: &str) {}
}

/// Every registered system.
pub fn all() -> &'static [&'static dyn System] {
    &[
        &rf_dpgd::RfDpGd,
        &feature_learning::FeatureLearning,
        &calibration::Calibration,
        &audit::PrivacyAudit,
        &tp_topk::TpTopK,
        &engines::RfEngines,
        &rf_tuned::RfTuned,
        &gaussian_mechanism::GaussianMechanism,
        &rf_kernel::RfKernel,
        &rf_fig2::RfFig2,
    ]
}

/// A system by name.
pub fn by_name(name: &str) -> Option<&'static dyn System> {
    all().iter().copied().find(|s| s.name() == name)
}

/// Builds the target of a data spec with a direction drawn from `rng`.
pub fn target(
    spec: &DataSpec,
    d: usize,
    rng: &mut impl rand::Rng,
) -> Result<crate::data::Target, SystemError> {
    use crate::spec::TargetSpec;
    let dir = crate::data::unit_vector(d, rng);
    match &spec.target {
        TargetSpec::Sign => Ok(crate::data::Target::Sign { u: dir }),
        TargetSpec::SingleIndex(c) => Ok(crate::data::Target::SingleIndex {
            mu: dir,
            coeffs: c.clone(),
        }),
        TargetSpec::None => Err(SystemError::Invalid("this system needs a target".into())),
    }
}

/// Parses a clip-rule option.
pub fn clip_rule(s: &str) -> crate::train::dpgd::ClipRule {
    use crate::train::dpgd::ClipRule;
    match s {
        "multiply" => ClipRule::Multiply,
        "none" => ClipRule::None,
        _ => ClipRule::Divide,
    }
}
