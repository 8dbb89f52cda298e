//! Execution: the planned units of a claim run in parallel on this machine (rayon,
//! collected in plan order, so results do not depend on the thread count or on
//! execution order), or a shard of them ([`shard`]: Slurm job arrays, merged back into
//! exactly the same values). The values are grouped into point records and handed to
//! [`crate::judge`].
//!
//! Every entry point takes the [`Recipe`] of the run (the formulas of the core: the
//! papers' with [`Recipe::PAPER`]) and hands it to the systems in [`UnitInput::recipe`];
//! execution does not look into it.
//!
//! A caller may cache unit results ([`cache`]): a unit whose key is found is not run, its
//! values are the stored bits; every other unit runs and is stored.
pub mod cache;
pub mod shard;

use crate::judge::{ClaimOutcome, PointRecord};
use crate::plan::{plan, unit_location, Planned, UnitKey, UnitValue, UnitValues};
use crate::spec::echo::{clip, clip_echoes};
use crate::spec::{Claim, Profile};
use crate::systems::UnitInput;
use crate::train::Recipe;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// A run that could not complete: names the claim, variant and sweep point (spec input
/// in them clipped when displayed, [`crate::spec::echo`]).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// `location` reads "claim `c`, variant `v`, sweep `s` point p, replicate r".
    #[error("{}: {}", clip_echoes(.location), clip_echoes(.message))]
    Unit { location: String, message: String },
    #[error("claim `{}`: {}", clip(.claim), clip_echoes(.message))]
    Claim { claim: String, message: String },
}

/// Runs every unit of a claim with `recipe` (in parallel; `tick` is called once per
/// finished unit).
pub fn run_units(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    tick: &(dyn Fn() + Sync),
) -> Result<UnitValues, RunError> {
    run_units_where(claim, profile, seed, recipe, &|_, _| true, tick)
}

/// Runs the units of a claim for which `keep(index in plan order, key)` is true, in
/// plan order (a shard of a sharded run), with `recipe`. A unit's numbers do not depend
/// on which other units run: each draws from its own seed path.
pub fn run_units_where(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    keep: &(dyn Fn(usize, &UnitKey) -> bool + Sync),
    tick: &(dyn Fn() + Sync),
) -> Result<UnitValues, RunError> {
    let timed = run_timed(claim, profile, seed, recipe, keep, tick)?;
    Ok(timed.into_iter().map(|(v, _)| v).collect())
}

/// Wall time of each unit of a run, in plan order, in seconds: for CI reports (JUnit
/// `time`) only. It never enters reports, snapshots or any judged value, which must be
/// the same bytes on every machine.
pub type UnitTimes = Vec<(UnitKey, f64)>;

/// [`run_units_where`], with each unit's wall time.
fn run_timed(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    keep: &(dyn Fn(usize, &UnitKey) -> bool + Sync),
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<(UnitValue, f64)>, RunError> {
    crate::linalg::pin_blas_threads();
    let cached = if claim.system.cacheable() {
        cache::active()
    } else {
        None
    };
    let planned: Vec<Planned> = plan(claim, profile, seed)?
        .into_iter()
        .enumerate()
        .filter(|(i, u)| keep(*i, &u.key))
        .map(|(_, u)| u)
        .collect();
    claim.system.prepare().map_err(|e| RunError::Claim {
        claim: claim.id.clone(),
        message: e.to_string(),
    })?;
    let results: Vec<Result<(UnitValue, f64), RunError>> = planned
        .par_iter()
        .map(|u| {
            let start = std::time::Instant::now();
            let variant = &claim.variants[u.variant_idx];
            let input = UnitInput {
                vars: &u.vars,
                options: &variant.options,
                data: &variant.data,
                metrics: &u.metrics,
                variant: &variant.name,
                seeds: u.seeds.clone(),
                recipe,
            };
            let err = |message: String| RunError::Unit {
                location: unit_location(
                    &claim.id,
                    &variant.name,
                    &u.key.sweep,
                    &u.label,
                    u.key.replicate,
                ),
                message,
            };
            let key = cached.as_ref().map(|(c, recipe_id)| {
                let ctx = cache::context(c, recipe_id, profile, claim.system.name());
                cache::entry::key(&ctx, &input)
            });
            // Stored only after the checks below, so an entry has every metric the
            // unit's key asks for, each finite (and the checks run again on a hit).
            let hit = cached
                .as_ref()
                .zip(key.as_ref())
                .and_then(|((c, _), k)| c.lookup(k, &u.metrics));
            let computed = hit.is_none();
            let metrics = match hit {
                Some(m) => m,
                None => claim.system.run(&input).map_err(|e| err(e.to_string()))?,
            };
            for m in &u.metrics {
                match metrics.get(m) {
                    None => return Err(err(format!("system did not produce metric `{m}`"))),
                    Some(v) if !v.is_finite() => {
                        return Err(err(format!("run diverged: metric `{m}` = {v}")))
                    }
                    _ => {}
                }
            }
            if let (true, Some((c, _)), Some(k)) = (computed, &cached, &key) {
                c.store(k, &metrics);
            }
            tick();
            Ok(((u.key.clone(), metrics), start.elapsed().as_secs_f64()))
        })
        .collect();
    claim.system.release();
    results.into_iter().collect()
}

/// Runs a claim with `recipe` and judges it.
pub fn run_claim(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    tick: &(dyn Fn() + Sync),
) -> Result<ClaimOutcome, RunError> {
    Ok(run_claim_timed(claim, profile, seed, recipe, tick)?.0)
}

/// [`run_claim`], with the wall time of every unit (the same outcome, bit for bit).
pub fn run_claim_timed(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    tick: &(dyn Fn() + Sync),
) -> Result<(ClaimOutcome, UnitTimes), RunError> {
    let timed = run_timed(claim, profile, seed, recipe, &|_, _| true, tick)?;
    let times = timed.iter().map(|((k, _), t)| (k.clone(), *t)).collect();
    let values: UnitValues = timed.into_iter().map(|(v, _)| v).collect();
    Ok((judge(claim, profile, seed, &values)?, times))
}

/// Fits and judges from unit values (the part of a run that does no simulation).
pub fn judge(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    values: &UnitValues,
) -> Result<ClaimOutcome, RunError> {
    let planned = plan(claim, profile, seed)?;
    // Group into point records.
    let mut points: BTreeMap<(String, String, usize), PointRecord> = BTreeMap::new();
    for (u, (key, metrics)) in planned.iter().zip(values) {
        if &u.key != key {
            return Err(RunError::Claim {
                claim: claim.id.clone(),
                message: format!("unit values out of order at {key:?}"),
            });
        }
        let rec = points
            .entry((key.sweep.clone(), key.variant.clone(), key.point))
            .or_insert_with(|| PointRecord {
                sweep: key.sweep.clone(),
                variant: key.variant.clone(),
                index: key.point,
                label: u.label.clone(),
                vars: u.vars.clone(),
                metrics: BTreeMap::new(),
            });
        for m in &u.metrics {
            rec.metrics.entry(m.clone()).or_default().push(metrics[m]);
        }
    }
    crate::judge::judge(claim, profile, seed, points.into_values().collect()).map_err(|message| {
        RunError::Claim {
            claim: claim.id.clone(),
            message,
        }
    })
}
