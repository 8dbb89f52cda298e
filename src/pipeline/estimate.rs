//! What a run would cost, before it runs (`dpclaims plan`): each claim's estimated work
//! and memory ([`crate::plan::estimate`]), checked against the budget
//! ([`crate::plan::budget`]); with `calibrate`, a core whose cost is not modelled is
//! timed on one unit first ([`crate::execute::measure_unit_cost`]).
use super::budget::Budget;
use crate::plan::budget::{self, Limits};
use crate::plan::estimate::{estimate_claim, ClaimEstimate};
use crate::spec::{Claim, Profile};

/// The estimates of a set of claims and the budget's answer.
pub struct Estimated {
    pub limits: Limits,
    pub claims: Vec<ClaimEstimate>,
    /// Why a run of them would be refused, if it would.
    pub refused: Option<String>,
}

/// Estimates `claims` at `profile` against `budget`; with `calibrate`, each claim whose
/// system wants a measured cost (and declares none) has one unit timed first, and its
/// cost basis records it.
pub fn estimate(
    claims: &[Claim],
    profile: Profile,
    seed: u64,
    budget: &Budget,
    calibrate: bool,
) -> anyhow::Result<Estimated> {
    let limits = budget.limits()?;
    if calibrate {
        for c in claims.iter().filter(|c| c.system.wants_cost_measurement()) {
            // The calibration unit passes the gate at the uncalibrated estimate first.
            budget::admit(
                &estimate_claim(c, profile, limits.threads).one_unit("the calibration unit"),
                &limits,
            )?;
            let (s, unit) = crate::execute::measure_unit_cost(c, profile, seed)?;
            c.system.record_measured_cost(s, &unit);
        }
    }
    let est: Vec<ClaimEstimate> = claims
        .iter()
        .map(|c| estimate_claim(c, profile, limits.threads))
        .collect();
    let refused = budget::check(&est, &limits, 1.0, 1.0)
        .err()
        .map(|e| e.to_string());
    Ok(Estimated {
        limits,
        claims: est,
        refused,
    })
}

/// Gigabytes, as the estimates print them ("12.4 GB").
pub fn gb(bytes: f64) -> String {
    crate::plan::estimate::gb(bytes)
}

/// Hours, as the estimates print them ("3.200 h").
pub fn hours(seconds: f64) -> String {
    crate::plan::estimate::hours(seconds)
}
