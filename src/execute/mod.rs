//! Execution: the planned units of a claim run in parallel on this machine (rayon,
//! collected in plan order, so results do not depend on the thread count or on
//! execution order), or a shard of them ([`shard`]: Slurm job arrays, merged back into
//! exactly the same values). The driver ([`crate::pipeline`]) asks for the units of each
//! look and hands their values to [`crate::judge`]; execution knows nothing of verdicts.
//!
//! Every entry point takes the [`Recipe`] of the run (the formulas of the core: the
//! papers' with [`Recipe::PAPER`]) and hands it to the systems in [`UnitInput::recipe`];
//! execution does not look into it.
//!
//! A caller may cache unit results ([`cache`]): a unit whose key is found is not run, its
//! values are the stored bits; every other unit runs and is stored.
pub mod cache;
pub mod shard;

pub use crate::plan::RunError;
use crate::plan::{plan, unit_location, Planned, UnitKey, UnitValue, UnitValues};
use crate::spec::{Claim, Profile};
use crate::systems::{SharedWork, UnitInput};
use crate::train::Recipe;
use rayon::prelude::*;
use std::collections::BTreeMap;

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

/// [`run_units_where`], with each unit's wall time: every unit of the claim at its
/// groups' maximum replicates (a shard or a replay: no sequential stopping).
fn run_timed(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    keep: &(dyn Fn(usize, &UnitKey) -> bool + Sync),
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<(UnitValue, f64)>, RunError> {
    let planned: Vec<Planned> = plan(claim, profile, seed)?
        .into_iter()
        .enumerate()
        .filter(|(i, u)| keep(*i, &u.key))
        .map(|(_, u)| u)
        .collect();
    prepared(claim, || {
        run_planned(claim, profile, recipe, &planned, tick)
    })
}

/// The CPU seconds of one unit of `claim`, timed on its calibration unit (`dpclaims
/// plan` for a system whose cost is not modelled, an external core): replicate 0 of the
/// first variant at its largest point (the largest sum of ln(1 + |v|) over the unit's
/// variables: a core's cost grows with its sizes, so the figure is an upper bound per
/// unit), run uncached. Returns the seconds and the unit's id.
pub fn measure_unit_cost(
    claim: &Claim,
    profile: Profile,
    seed: u64,
) -> Result<(f64, String), RunError> {
    let planned = plan(claim, profile, seed)?;
    let size = |u: &Planned| -> f64 { u.vars.values().map(|v| (1.0 + v.abs()).ln()).sum() };
    let Some(u) = planned
        .iter()
        .filter(|u| u.variant_idx == 0 && u.key.replicate == 0)
        .fold(None::<&Planned>, |best, u| match best {
            Some(b) if size(b) >= size(u) => Some(b),
            _ => Some(u),
        })
    else {
        return Err(RunError::Claim {
            claim: claim.id.clone(),
            message: "no unit to time".into(),
        });
    };
    let variant = &claim.variants[u.variant_idx];
    let id = format!(
        "{}/{}/{}/{}/{}",
        claim.id, variant.name, u.key.sweep, u.label, u.key.replicate
    );
    prepared(claim, || {
        cache::uncached(|| {
            let shared = SharedWork::new();
            let input = unit_input(claim, u, &Recipe::PAPER, &shared);
            let start = std::time::Instant::now();
            claim
                .system
                .run(&input)
                .map_err(|e| unit_error(claim, u, e.to_string()))?;
            Ok((start.elapsed().as_secs_f64(), id.clone()))
        })
    })
}

/// The system's input for planned unit `u` of `claim`.
fn unit_input<'a>(
    claim: &'a Claim,
    u: &'a Planned,
    recipe: &'a Recipe,
    shared: &'a SharedWork,
) -> UnitInput<'a> {
    let variant = &claim.variants[u.variant_idx];
    UnitInput {
        vars: &u.vars,
        options: &variant.options,
        data: &variant.data,
        metrics: &u.metrics,
        variant: &variant.name,
        seeds: u.seeds.clone(),
        recipe,
        shared: Some(shared),
    }
}

/// A failure of planned unit `u` of `claim`, located by its unit id.
fn unit_error(claim: &Claim, u: &Planned, message: String) -> RunError {
    RunError::Unit {
        location: unit_location(
            &claim.id,
            &claim.variants[u.variant_idx].name,
            &u.key.sweep,
            &u.label,
            u.key.replicate,
        ),
        message,
    }
}

/// Runs `f` between the system's `prepare` and `release` (an external core's workers
/// live that long).
pub fn prepared<T>(claim: &Claim, f: impl FnOnce() -> Result<T, RunError>) -> Result<T, RunError> {
    crate::linalg::pin_blas_threads();
    claim.system.prepare().map_err(|e| RunError::Claim {
        claim: claim.id.clone(),
        message: e.to_string(),
    })?;
    let out = f();
    claim.system.release();
    out
}

/// The result-cache key of a unit of `claim` (`input`, of a variant whose core identity
/// is `core`) for the build `build` on the machine `machine` and the recipe `recipe_id`:
/// the one place a unit's key is made ([`cache::entry::key`]; the claim's judged content,
/// [`Claim::key_hash`], is part of it).
fn unit_key(
    build: &str,
    machine: &str,
    recipe_id: &str,
    profile: Profile,
    claim: &Claim,
    core: &str,
    input: &UnitInput<'_>,
) -> cache::entry::CacheKey {
    let ctx = cache::entry::KeyContext {
        build,
        machine,
        recipe: recipe_id,
        profile,
        system: claim.system.name(),
        spec: &claim.key_hash,
        core,
    };
    cache::entry::key(&ctx, input)
}

/// The result-cache key of every unit of `claim` at `profile` and `seed`, in plan order,
/// as a run on this machine would look it up in a cache of the build `build` for the
/// recipe `recipe_id` (`None`: a unit whose core is not hashable). The system is
/// prepared first (an external core is started, greeted and its files hashed), then
/// released. What tests/hardening4_cache.rs checks the key with: the keys of a run, not
/// a copy of their recipe.
pub fn planned_keys(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    build: &str,
    recipe_id: &str,
) -> Result<Vec<Option<cache::entry::CacheKey>>, RunError> {
    let planned = plan(claim, profile, seed)?;
    let machine = cache::machine_identity();
    prepared(claim, || {
        let identities: Vec<Option<String>> = claim
            .variants
            .iter()
            .map(|v| claim.system.cache_identity(&v.name))
            .collect();
        let shared = SharedWork::new();
        Ok(planned
            .iter()
            .map(|u| {
                let input = unit_input(claim, u, &Recipe::PAPER, &shared);
                identities[u.variant_idx]
                    .as_deref()
                    .map(|core| unit_key(build, &machine, recipe_id, profile, claim, core, &input))
            })
            .collect())
    })
}

/// Runs `planned` (in parallel, collected in their order), reading and filling the
/// result cache when one is active: the values of one look of the driver
/// ([`crate::pipeline`]), each with its wall time in seconds.
pub(crate) fn run_planned(
    claim: &Claim,
    profile: Profile,
    recipe: &Recipe,
    planned: &[Planned],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<(UnitValue, f64)>, RunError> {
    let cached = cache::active();
    // Each variant's core identity (`None`: not hashable, its units run uncached; said
    // once by the cache's owner).
    let identities: Vec<Option<String>> = claim
        .variants
        .iter()
        .map(|v| claim.system.cache_identity(&v.name))
        .collect();
    if let Some((c, _)) = &cached {
        for (v, id) in claim.variants.iter().zip(&identities) {
            if id.is_none() {
                c.note_unhashable(format!(
                    "claim `{}`: core `{}`",
                    claim.id,
                    claim.system.variant_tag(&v.name)
                ));
            }
        }
    }
    // The units of one (sweep, point, replicate) share their seed path whatever their
    // variant: they run one after the other on one thread with one SharedWork
    // (systems::shared), the groups in parallel; results go back in plan order.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of: BTreeMap<(&str, usize, usize), usize> = BTreeMap::new();
    for (i, u) in planned.iter().enumerate() {
        let k = (u.key.sweep.as_str(), u.key.point, u.key.replicate);
        let g = *group_of.entry(k).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    let run_one = |u: &Planned, shared: &SharedWork| -> Result<(UnitValue, f64), RunError> {
        let start = std::time::Instant::now();
        let input = unit_input(claim, u, recipe, shared);
        let err = |message: String| unit_error(claim, u, message);
        let core = identities[u.variant_idx].as_deref();
        let key = cached.as_ref().zip(core).map(|((c, recipe_id), core)| {
            unit_key(
                c.build(),
                c.machine(),
                recipe_id,
                profile,
                claim,
                core,
                &input,
            )
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
    };
    type Ran = Result<(UnitValue, f64), RunError>;
    let done: Vec<Vec<(usize, Ran)>> = groups
        .par_iter()
        .map(|g| {
            let shared = SharedWork::new();
            g.iter()
                .map(|&i| (i, run_one(&planned[i], &shared)))
                .collect()
        })
        .collect();
    let mut results: Vec<Option<Ran>> = (0..planned.len()).map(|_| None).collect();
    for (i, r) in done.into_iter().flatten() {
        results[i] = Some(r);
    }
    results
        .into_iter()
        .map(|r| r.expect("every unit ran"))
        .collect()
}
