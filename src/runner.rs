//! The claim runner: expands a validated claim into work units, runs them in parallel,
//! groups their values into point records and hands them to [`crate::judge`].
//!
//! A work unit is (sweep, variant, sweep point, replicate). Its randomness comes from
//! the seed path `master / claim id / sweep / point label / rep<r>` — the variant is not
//! part of it, so variants of a claim see the same data, features and noise (common
//! random numbers: differences between variants are the variants' doing). Units run in
//! parallel (rayon) and are collected in a fixed order, so results do not depend on the
//! thread count or on execution order.
//!
//! Every entry point takes the [`Recipe`] of the run (the formulas of the core: the
//! papers' with [`Recipe::PAPER`]) and hands it to the systems in [`UnitInput::recipe`];
//! the runner does not look into it.
use crate::rng::SeedPath;
use crate::spec::{point_label, Claim, Profile};
use crate::systems::UnitInput;
use crate::train::Recipe;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A run that could not complete: names the claim, variant and sweep point.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// `location` reads "claim `c`, variant `v`, sweep `s` point p, replicate r".
    #[error("{location}: {message}")]
    Unit { location: String, message: String },
    #[error("claim `{claim}`: {message}")]
    Claim { claim: String, message: String },
}

fn unit_location(claim: &str, variant: &str, sweep: &str, point: &str, replicate: usize) -> String {
    format!("claim `{claim}`, variant `{variant}`, sweep `{sweep}` point {point}, replicate {replicate}")
}

/// A planned unit's key, variant index and axis values.
type PlannedKey = (UnitKey, usize, Vec<(String, f64)>);

/// Identifies one work unit.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct UnitKey {
    pub sweep: String,
    pub variant: String,
    pub point: usize,
    pub replicate: usize,
}

pub use crate::judge::{
    fit_records, ClaimOutcome, Detail, PointRecord, PredictionResult, ResolvedFit,
};

/// A planned unit with what it must compute.
struct Planned {
    key: UnitKey,
    variant_idx: usize,
    label: String,
    vars: BTreeMap<String, f64>,
    metrics: BTreeSet<String>,
    seeds: SeedPath,
}

/// Number of work units of a claim at a profile (for progress bars).
pub fn unit_count(claim: &Claim, profile: Profile) -> usize {
    plan_keys(claim, profile).len()
}

/// (sweep, variant index) pairs that some prediction judges, with the metrics needed.
/// A negative control identical to a main variant on a sweep is not run there
/// ([`crate::judge::regime::identical_main`]).
fn needs(claim: &Claim, profile: Profile) -> BTreeMap<(String, usize), BTreeSet<String>> {
    let mut m: BTreeMap<(String, usize), BTreeSet<String>> = BTreeMap::new();
    for p in &claim.predictions {
        for (vi, v) in claim.variants.iter().enumerate() {
            if !p.judges(v)
                || (v.negative_control
                    && crate::judge::regime::identical_main(claim, &v.name, &p.sweep, profile)
                        .is_some())
            {
                continue;
            }
            let e = m.entry((p.sweep.clone(), vi)).or_default();
            e.extend(p.metrics_needed(claim.system));
            e.extend(claim.report_metrics.iter().cloned());
        }
    }
    m
}

fn plan_keys(claim: &Claim, profile: Profile) -> Vec<PlannedKey> {
    let mut keys = Vec::new();
    for ((sweep, vi), _) in needs(claim, profile) {
        let prof = claim.sweep(&sweep).profile(profile);
        for (pi, pt) in prof.axis_points().into_iter().enumerate() {
            for r in 0..prof.replicates {
                keys.push((
                    UnitKey {
                        sweep: sweep.clone(),
                        variant: claim.variants[vi].name.clone(),
                        point: pi,
                        replicate: r,
                    },
                    vi,
                    pt.clone(),
                ));
            }
        }
    }
    keys
}

fn plan(claim: &Claim, profile: Profile, seed: u64) -> Result<Vec<Planned>, RunError> {
    let needs = needs(claim, profile);
    let root = SeedPath::new(seed).child(&claim.id);
    let mut out = Vec::new();
    for (key, vi, pt) in plan_keys(claim, profile) {
        let prof = claim.sweep(&key.sweep).profile(profile);
        let label = point_label(&pt);
        let vars = claim
            .resolve(&claim.variants[vi], prof, &pt)
            .map_err(|m| RunError::Unit {
                location: unit_location(&claim.id, &key.variant, &key.sweep, &label, key.replicate),
                message: m,
            })?;
        let seeds = root
            .child(&key.sweep)
            .child(&label)
            .child(format!("rep{}", key.replicate));
        out.push(Planned {
            metrics: needs[&(key.sweep.clone(), vi)].clone(),
            key,
            variant_idx: vi,
            label,
            vars,
            seeds,
        });
    }
    Ok(out)
}

/// One unit's key and metric values.
pub type UnitValue = (UnitKey, BTreeMap<String, f64>);

/// Raw metric values of every unit, in plan order.
pub type UnitValues = Vec<UnitValue>;

/// A unit as a sharded run sees it: key, point label and the metrics [`judge`] reads.
#[derive(Clone, Debug)]
pub struct UnitPlan {
    pub key: UnitKey,
    pub label: String,
    pub metrics: BTreeSet<String>,
}

impl UnitPlan {
    /// "claim `c`, variant `v`, sweep `s` point <label>, replicate r" (as run errors say).
    pub fn location(&self, claim: &str) -> String {
        unit_location(
            claim,
            &self.key.variant,
            &self.key.sweep,
            &self.label,
            self.key.replicate,
        )
    }
}

/// Every unit of a claim in plan order (the order of [`UnitValues`]).
pub fn planned_units(claim: &Claim, profile: Profile) -> Vec<UnitPlan> {
    let needs = needs(claim, profile);
    plan_keys(claim, profile)
        .into_iter()
        .map(|(key, vi, pt)| UnitPlan {
            metrics: needs[&(key.sweep.clone(), vi)].clone(),
            label: point_label(&pt),
            key,
        })
        .collect()
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
    crate::linalg::pin_blas_threads();
    let planned: Vec<Planned> = plan(claim, profile, seed)?
        .into_iter()
        .enumerate()
        .filter(|(i, u)| keep(*i, &u.key))
        .map(|(_, u)| u)
        .collect();
    let results: Vec<Result<UnitValue, RunError>> = planned
        .par_iter()
        .map(|u| {
            let variant = &claim.variants[u.variant_idx];
            let input = UnitInput {
                vars: &u.vars,
                options: &variant.options,
                data: &variant.data,
                metrics: &u.metrics,
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
            let metrics = claim.system.run(&input).map_err(|e| err(e.to_string()))?;
            for m in &u.metrics {
                match metrics.get(m) {
                    None => return Err(err(format!("system did not produce metric `{m}`"))),
                    Some(v) if !v.is_finite() => {
                        return Err(err(format!("run diverged: metric `{m}` = {v}")))
                    }
                    _ => {}
                }
            }
            tick();
            Ok((u.key.clone(), metrics))
        })
        .collect();
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
    let values = run_units(claim, profile, seed, recipe, tick)?;
    judge(claim, profile, seed, &values)
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
