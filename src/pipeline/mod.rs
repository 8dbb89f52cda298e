//! The driver of a run: a claim flows spec → plan → execute → judge → report through
//! the loop of this module, and only here. Each stage takes values and returns values
//! (planned units, measured values, judged rows, a report set); none calls another. The
//! command line, the sharded run and its merge, the stability run and the fault matrix
//! all go through this driver (a stability seed is the driver at another seed; a fault
//! is the driver with another [`crate::train::Recipe`]).
//!
//! * [`looks`] — one claim: the looks of the sequential design until every row is
//!   decided, from units measured here ([`run_claim`]) or read from a sharded run's
//!   values ([`judge`]).
pub mod budget;
pub mod cache;
pub mod conclude;
pub mod estimate;
mod looks;
pub mod replay;
pub mod run;
pub mod shard;

pub use looks::{judge, run_claim, run_claim_timed};

/// The types of the values the driver hands to its callers, named here so that a caller
/// (the command line) names no stage: a claim's judged outcome, a shard `I/N` of a run,
/// a claim's estimate, a planned unit.
pub type ClaimOutcome = crate::judge::ClaimOutcome;
pub type Shard = crate::execute::shard::Shard;
pub type ClaimEstimate = crate::plan::estimate::ClaimEstimate;
pub type UnitPlan = crate::plan::UnitPlan;

/// The units `claim` plans at `profile` at most (every sweep at its maximum replicates).
pub fn unit_count(claim: &crate::spec::Claim, profile: crate::spec::Profile) -> usize {
    crate::plan::unit_count(claim, profile)
}

/// The units `claim` plans at `profile`, in plan order, with their ids' parts.
pub fn planned_units(claim: &crate::spec::Claim, profile: crate::spec::Profile) -> Vec<UnitPlan> {
    crate::plan::planned_units(claim, profile)
}

/// How many of `claims`' units each of `count` shards runs.
pub fn units_per_shard(
    claims: &[crate::spec::Claim],
    profile: crate::spec::Profile,
    count: usize,
) -> Vec<usize> {
    let mut per = vec![0; count];
    for c in claims {
        for j in 0..crate::plan::unit_count(c, profile) {
            per[crate::execute::shard::shard_of(&c.id, j, count)] += 1;
        }
    }
    per
}
