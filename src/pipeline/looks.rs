//! The loop of a claim's run: the looks of the sequential design
//! ([`crate::judge::sequential`]). Each look, [`crate::plan`] names the units the
//! undecided groups still need, [`crate::execute`] measures them (here, from the cache,
//! or read back from a sharded run's values), [`crate::judge`] judges every row on the
//! replicates drawn so far and says which rows are decided; the loop stops when all are.
//! No stage calls another: the values pass through here.
use crate::execute::{self, UnitTimes};
use crate::judge::{self, sequential, ClaimOutcome, PointRecord, PredictionResult};
use crate::plan::{groups, plan_ranges, Group, RunError, UnitKey, UnitValues};
use crate::spec::{Claim, Profile};
use crate::train::Recipe;
use std::collections::BTreeMap;

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
/// Units are drawn look by look ([`looks`]): only the replicates some undecided row still
/// needs.
pub fn run_claim_timed(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    recipe: &Recipe,
    tick: &(dyn Fn() + Sync),
) -> Result<(ClaimOutcome, UnitTimes), RunError> {
    let mut times: UnitTimes = Vec::new();
    let outcome = execute::prepared(claim, || {
        looks(claim, profile, seed, &mut |range| {
            let planned = plan_ranges(claim, profile, seed, range)?;
            let timed = execute::run_planned(claim, profile, recipe, &planned, tick)?;
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
    looks(claim, profile, seed, &mut |range| {
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
fn looks(
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
                have.get(*g).is_some_and(|&n| n < schedule(g).max) && !sequential::decided(p, r)
            });
            match open {
                Some(g) if sequential::futile(p, r, at(g), &schedule(g).looks()) => {
                    let mut r = r.clone();
                    r.power.push_str(&format!(
                        "; stopped at {} of at most {} replicates a point: the last look would decide it with probability below {} (futility rule, docs/design/sequential-verdicts.md)",
                        at(g),
                        schedule(g).max,
                        sequential::FUTILITY
                    ));
                    *slot = Some(r);
                }
                Some(g) => {
                    grow.insert(g.clone());
                    // A contrast's pairs need the subtracted variant's replicates too.
                    if let Some(mi) = p.minus.as_deref().and_then(variant_index) {
                        grow.insert((r.sweep.clone(), mi));
                    }
                }
                None => *slot = Some(r.clone()),
            }
        }
        if grow.is_empty() {
            // Every row is judged on every replicate drawn for its group: a row decided
            // (or stopped for futility) at an earlier look while its group went on for
            // other rows keeps no replicates hidden. Each look's interval is at the
            // per-look level, so the last look's verdict keeps the row's error rate as
            // the deciding look's does (`sequential`, the union bound over the looks).
            let mut results: Vec<PredictionResult> = outcome
                .results
                .iter()
                .zip(&kept)
                .map(|(last, at_look)| match at_look {
                    Some(k) if k.replicates < last.replicates => {
                        let mut r = last.clone();
                        let why = if k.power.contains("futility rule") {
                            format!(
                                "; the futility rule stopped this row at {} replicates a point, \
                                 and its group drew {} for other rows: judged on all {}",
                                k.replicates, last.replicates, last.replicates
                            )
                        } else {
                            format!(
                                "; first decided ({}) at {} replicates a point, judged on all \
                                 {} drawn for its group",
                                k.word, k.replicates, last.replicates
                            )
                        };
                        r.power.push_str(&why);
                        r
                    }
                    Some(k) => k.clone(),
                    None => last.clone(),
                })
                .collect();
            judge::finish(claim, &mut results);
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
    judge::judge(claim, profile, seed, points).map_err(|message| RunError::Claim {
        claim: claim.id.clone(),
        message,
    })
}
