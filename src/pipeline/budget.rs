//! The work and memory budget of a run: estimates above it are refused before anything
//! runs ([`crate::plan::estimate`], [`crate::plan::budget`]).
use crate::plan::budget::{self, BudgetError, Estimate, Limits};
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

    /// Estimates `claims` at `profile` and refuses them when over budget, claim `i` run
    /// `runs[i]` times.
    pub fn check_runs(
        &self,
        claims: &[Claim],
        profile: Profile,
        runs: &[f64],
    ) -> Result<(), BudgetError> {
        let limits = self.limits()?;
        let est: Vec<_> = claims
            .iter()
            .map(|c| crate::plan::estimate::estimate_claim(c, profile, limits.threads))
            .collect();
        budget::check_runs(&est, runs, &limits)
    }

    /// What [`Budget::check_runs`] admits or refuses: the estimate of `runs[i]` runs of
    /// each claim (for a `--plan` line).
    pub fn runs_estimate(
        &self,
        claims: &[Claim],
        profile: Profile,
        runs: &[f64],
    ) -> Result<Estimate, BudgetError> {
        let limits = self.limits()?;
        let est: Vec<_> = claims
            .iter()
            .map(|c| crate::plan::estimate::estimate_claim(c, profile, limits.threads))
            .collect();
        Ok(budget::of_claim_runs(&est, runs))
    }

    /// The gate every path passes before it computes ([`budget::admit`]).
    pub fn admit(&self, e: &Estimate) -> Result<(), BudgetError> {
        budget::admit(e, &self.limits()?)
    }

    /// Refuses `dpclaims run --unit <id>` when its one unit, or listing its claim's plan
    /// to find it, is over budget ([`crate::plan::estimate::ClaimEstimate::one_unit`]);
    /// an id naming no claim passes (the replay says what is wrong with it).
    pub fn check_unit(
        &self,
        claims: &[Claim],
        id: &str,
        profile: Profile,
    ) -> Result<(), BudgetError> {
        let limits = self.limits()?;
        let cid = super::replay::claim_of(id);
        match claims.iter().find(|c| c.id == cid) {
            Some(c) => budget::admit(
                &crate::plan::estimate::estimate_claim(c, profile, limits.threads)
                    .one_unit("`dpclaims run --unit`"),
                &limits,
            ),
            None => Ok(()),
        }
    }
}
