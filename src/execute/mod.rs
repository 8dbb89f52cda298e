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

use crate::judge::{ClaimOutcome, PointRecord, PredictionResult};
pub use crate::plan::RunError;
use crate::plan::{
    groups, plan, plan_ranges, unit_location, Group, Planned, UnitKey, UnitValue, UnitValues,
};
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
fn prepared<T>(claim: &Claim, f: impl FnOnce() -> Result<T, RunError>) -> Result<T, RunError> {
    crate::linalg::pin_blas_threads();
    claim.system.prepare().map_err(|e| RunError::Claim {
        claim: claim.id.clone(),
        message: e.to_string(),
    })?;
    let out = f();
    claim.system.release();
    out
}

/// Runs `planned` (in parallel, collected in their order), reading and filling the
/// result cache when one is active.
fn run_planned(
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
            let ctx = cache::context(c, recipe_id, profile, claim.system.name(), core);
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
/// Units are drawn look by look ([`sequential`]): only the replicates some undecided row
/// still needs.
pub fn run_claim_timed(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    tick: &(dyn Fn() + Sync),
) -> Result<(ClaimOutcome, UnitTimes), RunError> {
    let mut times: UnitTimes = Vec::new();
    let outcome = prepared(claim, || {
        sequential(claim, profile, seed, &mut |range| {
            let planned = plan_ranges(claim, profile, seed, range)?;
            let timed = run_planned(claim, profile, recipe, &planned, tick)?;
            times.extend(timed.iter().map(|((k, _), t)| (k.clone(), *t)));
            Ok(timed.into_iter().map(|(v, _)| v).collect())
        })
    })?;
    Ok((outcome, times))
}

/// Fits and judges from unit values (the part of a run that does no simulation; a
/// sharded run's merge): the same looks as [`run_claim`], reading `values` instead of
/// running units, so the outcome is the unsharded run's, bit for bit. `values` must
/// hold every unit the looks ask for (a shard plan has every unit up to `max`).
pub fn judge(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    values: &UnitValues,
) -> Result<ClaimOutcome, RunError> {
    let by_key: BTreeMap<&UnitKey, &BTreeMap<String, f64>> =
        values.iter().map(|(k, m)| (k, m)).collect();
    sequential(claim, profile, seed, &mut |range| {
        plan_ranges(claim, profile, seed, range)?
            .into_iter()
            .map(|u| match by_key.get(&u.key) {
                Some(m) => Ok((u.key, (*m).clone())),
                None => Err(RunError::Claim {
                    claim: claim.id.clone(),
                    message: format!("no value for unit {:?}", u.key),
                }),
            })
            .collect()
    })
}

/// Units of the replicates `range(group)` of every group, computed or looked up.
type Fetch<'a> =
    dyn FnMut(&dyn Fn(&Group) -> std::ops::Range<usize>) -> Result<UnitValues, RunError> + 'a;

/// The looks of a claim ([`crate::judge::sequential`]): every group (sweep, variant)
/// starts at its sweep's `replicates.min`; after each look every row is judged on the
/// replicates drawn so far, a row that is decided (or whose group is at `max`) keeps that
/// look's result, and a group with an undecided row draws up to its next look. A fixed
/// count is one look. Which units are drawn depends only on their values, so the
/// outcome does not depend on the thread count, on the order of units or on sharding.
fn sequential(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    fetch: &mut Fetch,
) -> Result<ClaimOutcome, RunError> {
    let schedule = |g: &Group| claim.sweep(&g.0).profile(profile).replicates;
    let mut have: BTreeMap<Group, usize> =
        groups(claim, profile).into_iter().map(|g| (g, 0)).collect();
    let mut want: BTreeMap<Group, usize> =
        have.keys().map(|g| (g.clone(), schedule(g).min)).collect();
    let mut values: BTreeMap<UnitKey, BTreeMap<String, f64>> = BTreeMap::new();
    let mut kept: Vec<Option<PredictionResult>> = Vec::new();
    let variant_index = |name: &str| claim.variants.iter().position(|v| v.name == name);
    loop {
        for (k, m) in fetch(&|g| have[g]..want[g])? {
            values.insert(k, m);
        }
        have.clone_from(&want);
        let outcome = judge_records(
            claim,
            profile,
            seed,
            records(claim, profile, seed, &values, &have)?,
        )?;
        kept.resize(outcome.results.len(), None);
        let mut grow: std::collections::BTreeSet<Group> = Default::default();
        for (slot, r) in kept.iter_mut().zip(&outcome.results) {
            if slot.is_some() {
                continue;
            }
            let p = &claim.predictions[r.prediction];
            let group = variant_index(&r.variant).map(|vi| (r.sweep.clone(), vi));
            let at = |g: &Group| have.get(g).copied().unwrap_or(0);
            let open = group.as_ref().filter(|g| {
                have.get(*g).is_some_and(|&n| n < schedule(g).max)
                    && !crate::judge::sequential::decided(p, r)
            });
            match open {
                Some(g) if crate::judge::sequential::futile(p, r, at(g), &schedule(g).looks()) => {
                    let mut r = r.clone();
                    r.power.push_str(&format!(
                        "; stopped at {} of at most {} replicates a point: the last look would decide it with probability below {} (futility rule, docs/design/sequential-verdicts.md)",
                        at(g),
                        schedule(g).max,
                        crate::judge::sequential::FUTILITY
                    ));
                    *slot = Some(r);
                }
                Some(g) => {
                    grow.insert(g.clone());
                }
                None => *slot = Some(r.clone()),
            }
        }
        if grow.is_empty() {
            let mut results: Vec<PredictionResult> = kept.into_iter().flatten().collect();
            crate::judge::finish(claim, &mut results);
            return Ok(ClaimOutcome { results, ..outcome });
        }
        for g in grow {
            if let Some(n) = schedule(&g).next_look(have[&g]) {
                want.insert(g, n);
            }
        }
    }
}

/// The point records of every group, at the replicates `have` of each.
fn records(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    values: &BTreeMap<UnitKey, BTreeMap<String, f64>>,
    have: &BTreeMap<Group, usize>,
) -> Result<Vec<PointRecord>, RunError> {
    let planned = plan_ranges(claim, profile, seed, &|g| 0..have[g])?;
    let mut points: BTreeMap<(String, String, usize), PointRecord> = BTreeMap::new();
    for u in &planned {
        let key = &u.key;
        let Some(metrics) = values.get(key) else {
            return Err(RunError::Claim {
                claim: claim.id.clone(),
                message: format!("no value for unit {key:?}"),
            });
        };
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
    Ok(points.into_values().collect())
}

fn judge_records(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    points: Vec<PointRecord>,
) -> Result<ClaimOutcome, RunError> {
    crate::judge::judge(claim, profile, seed, points).map_err(|message| RunError::Claim {
        claim: claim.id.clone(),
        message,
    })
}
