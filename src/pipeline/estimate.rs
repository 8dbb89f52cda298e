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
///
/// With `cache_dir`, a claim whose last run is recorded in that result cache's history
/// ([`crate::execute::cache::history`]) is priced from it: an external core without
/// `cost_s` at its measured seconds per unit (unless `calibrate` times one now), and
/// every claim with the start-up of its core and the accountants its expressions
/// computed. The estimate is of a run that computes every unit (an empty cache).
pub fn estimate(
    claims: &[Claim],
    profile: Profile,
    seed: u64,
    budget: &Budget,
    calibrate: bool,
    cache_dir: Option<&std::path::Path>,
) -> anyhow::Result<Estimated> {
    let limits = budget.limits()?;
    let history =
        |c: &Claim| cache_dir.and_then(|d| crate::execute::cache::history::read(d, &c.id, profile));
    if !calibrate {
        for c in claims.iter().filter(|c| c.system.wants_cost_measurement()) {
            if let Some((s, n)) =
                history(c).and_then(|h| Some((h.seconds_per_unit()?, h.timed_units)))
            {
                c.system
                    .record_measured_cost(s, &format!("the mean of the {n} units of its last run that computed any, from the result cache's history"));
            }
        }
    }
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
        .map(|c| {
            let mut e = estimate_claim(c, profile, limits.threads);
            if let Some(h) = history(c) {
                let extra = h.startup_seconds + h.function_seconds;
                e.cpu_seconds += extra;
                e.wall_seconds += extra;
                e.measured = Some(format!(
                    "last run in the cache: {} units computed{}, core start-up {:.1} s, {} accountant(s) of expressions computed in {:.1} s (added)",
                    h.units_computed,
                    h.seconds_per_unit()
                        .map(|s| format!(" at {s:.3} s each (wall, per thread)"))
                        .unwrap_or_default(),
                    h.startup_seconds,
                    h.functions_computed,
                    h.function_seconds
                ));
            }
            e
        })
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
