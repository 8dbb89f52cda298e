//! Planning: a validated claim expanded into work units, in a fixed order.
//!
//! A work unit is (sweep, variant, sweep point, replicate): every (prediction, variant)
//! pair a prediction judges (every main variant, and the negative controls that name it
//! in `caught_by`, unless such a control is identical to a main variant on the sweep),
//! at every point of the sweep's profile, `replicates` times. Its randomness comes from
//! the seed path `master / claim id / sweep / point label / rep<r>` — the variant is not
//! part of it, so variants of a claim see the same data, features and noise (common
//! random numbers: differences between variants are the variants' doing). The plan
//! order is the order of [`UnitValues`], which [`crate::execute`] fills and
//! [`crate::judge`] reads.
pub mod budget;
pub mod estimate;

use crate::rng::SeedPath;
use crate::spec::echo::{clip, clip_echoes};
use crate::spec::{point_label, Claim, Profile};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

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

/// "claim `c`, variant `v`, sweep `s` point <label>, replicate r".
pub fn unit_location(
    claim: &str,
    variant: &str,
    sweep: &str,
    point: &str,
    replicate: usize,
) -> String {
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

/// A planned unit with what it must compute.
pub(crate) struct Planned {
    pub key: UnitKey,
    pub variant_idx: usize,
    pub label: String,
    pub vars: BTreeMap<String, f64>,
    pub metrics: BTreeSet<String>,
    pub seeds: SeedPath,
}

/// Number of work units of a claim at a profile (for progress bars), counted without
/// listing them (saturating).
pub fn unit_count(claim: &Claim, profile: Profile) -> usize {
    needs(claim, profile)
        .keys()
        .map(|(sweep, _)| {
            let prof = claim.sweep(sweep).profile(profile);
            prof.axes
                .iter()
                .fold(prof.replicates.max, |n, (_, v)| n.saturating_mul(v.len()))
        })
        .fold(0usize, usize::saturating_add)
}

/// (sweep, variant index) pairs that some prediction judges or subtracts (`minus`), with
/// the metrics needed.
/// A negative control identical to a main variant on a sweep is not run there
/// ([`crate::spec::identical_main`]).
fn needs(claim: &Claim, profile: Profile) -> BTreeMap<(String, usize), BTreeSet<String>> {
    let mut m: BTreeMap<(String, usize), BTreeSet<String>> = BTreeMap::new();
    for p in &claim.predictions {
        for (vi, v) in claim.variants.iter().enumerate() {
            if !p.judges(v)
                || (v.negative_control
                    && crate::spec::identical_main(claim, &v.name, &p.sweep, profile).is_some())
            {
                continue;
            }
            let e = m.entry((p.sweep.clone(), vi)).or_default();
            e.extend(p.metrics_needed(claim.system));
            e.extend(claim.report_metrics.iter().cloned());
        }
        // A contrast reads the variant it subtracts at the same points.
        if let Some(mi) = p
            .minus
            .as_ref()
            .and_then(|name| claim.variants.iter().position(|v| &v.name == name))
        {
            let e = m.entry((p.sweep.clone(), mi)).or_default();
            e.extend(p.metrics_needed(claim.system));
            e.extend(claim.report_metrics.iter().cloned());
        }
    }
    m
}

/// A group of units: a sweep and a variant (index) that some prediction judges. Its
/// points run the same number of replicates; a sequential run grows it look by look.
pub type Group = (String, usize);

/// Every group of a claim at a profile, in plan order.
pub fn groups(claim: &Claim, profile: Profile) -> Vec<Group> {
    needs(claim, profile).into_keys().collect()
}

/// The replicates `range(group)` of every group's points.
type Ranges<'a> = &'a dyn Fn(&Group) -> std::ops::Range<usize>;

fn plan_keys(claim: &Claim, profile: Profile, range: Ranges) -> Vec<PlannedKey> {
    let mut keys = Vec::new();
    for (group, _) in needs(claim, profile) {
        let (sweep, vi) = group.clone();
        let prof = claim.sweep(&sweep).profile(profile);
        for (pi, pt) in prof.axis_points().into_iter().enumerate() {
            for r in range(&group) {
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

/// Every unit of a claim at its groups' maximum replicates, in plan order.
pub(crate) fn plan(claim: &Claim, profile: Profile, seed: u64) -> Result<Vec<Planned>, RunError> {
    plan_ranges(claim, profile, seed, &|g| {
        0..max_replicates(claim, profile, g)
    })
}

/// The most replicates of a group (its sweep's `replicates.max` at the profile).
pub fn max_replicates(claim: &Claim, profile: Profile, g: &Group) -> usize {
    claim.sweep(&g.0).profile(profile).replicates.max
}

/// The units of replicates `range(group)` of every group, in plan order (a sequential
/// run's next batch: [`crate::execute`]).
pub(crate) fn plan_ranges(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    range: Ranges,
) -> Result<Vec<Planned>, RunError> {
    let needs = needs(claim, profile);
    let root = SeedPath::new(seed).child(&claim.id);
    let mut out = Vec::new();
    for (key, vi, pt) in plan_keys(claim, profile, range) {
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
    plan_keys(claim, profile, &|g| 0..max_replicates(claim, profile, g))
        .into_iter()
        .map(|(key, vi, pt)| UnitPlan {
            metrics: needs[&(key.sweep.clone(), vi)].clone(),
            label: point_label(&pt),
            key,
        })
        .collect()
}
