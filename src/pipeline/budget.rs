//! The work and memory budget of a run: estimates above it are refused before anything
//! runs ([`crate::plan::estimate`], [`crate::plan::budget`]).
use crate::plan::budget::{self, BudgetError, Limits};
use crate::plan::estimate::Driver;
use crate::spec::{Claim, Profile};

/// The limits a command was given (`--max-hours`, `--max-memory-gb`; `None`: the
/// default).
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    pub max_hours: Option<f64>,
    pub max_memory_gb: Option<f64>,
}

impl Budget {
    /// The limits these values set.
    pub fn limits(&self) -> Result<Limits, BudgetError> {
        Limits::new(self.max_hours, self.max_memory_gb)
    }

    /// Refuses a command whose estimated `cost` (one thread; wall = seconds / `parallel`)
    /// is over budget, naming the flag `field` that drives it.
    pub fn check_command(
        &self,
        command: &str,
        cost: crate::systems::Cost,
        parallel: f64,
        field: &str,
        detail: String,
    ) -> Result<(), BudgetError> {
        let limits = self.limits()?;
        budget::check_command(
            command,
            cost.seconds / parallel.clamp(1.0, limits.threads as f64),
            cost.bytes,
            Driver {
                field: field.to_string(),
                detail,
            },
            &limits,
        )
    }

    /// Estimates `claims` at `profile` and refuses them when over budget (`repeat` times
    /// the claims; `share` of them for one shard).
    pub fn check(
        &self,
        claims: &[Claim],
        profile: Profile,
        repeat: f64,
        share: f64,
    ) -> Result<(), BudgetError> {
        budget::check_claims(claims, profile, &self.limits()?, repeat, share).map(|_| ())
    }
}
