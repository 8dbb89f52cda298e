//! Estimates of a claim's work and memory before anything runs, and the budget that
//! refuses absurd sizes (a replicate count of 10^9, `p = n^9`, a bootstrap of 10^12
//! resamples) in a fraction of a second instead of running for a year or aborting on an
//! allocation failure.
//!
//! The work of a claim is the sum over its planned units of the system's cost model
//! ([`crate::systems::System::cost`]) plus a fixed overhead per unit, plus the bootstrap
//! of every fit; its wall time divides that by the threads (units run in parallel),
//! but is never less than its costliest unit. Its memory is the costliest unit's peak
//! times the units that run at once, plus the bookkeeping of every unit (plan entries,
//! values, CSV rows) and the bootstrap's resamples. Nothing here allocates in
//! proportion to a replicate count: units are counted, not listed.
//!
//! A refusal names the claim, the field of the spec that drives the estimate (the
//! variable of the costliest unit whose halving saves most, the replicate count, or a
//! prediction's `bootstrap`), the estimate and the limit.
use crate::spec::{Claim, Predicted, PredictionKind, Profile, SweepProfile};
use crate::systems::{cost::UNIT_OVERHEAD_S, Cost, CostInput};
use std::collections::BTreeMap;
use std::fmt;

/// Memory of one unit's bookkeeping besides the system's arrays: its plan entry (key,
/// label, variables, metric names), its values, its CSV rows; per variable or metric.
const BOOKKEEPING_PER_ENTRY: f64 = 160.0;
const BOOKKEEPING_PER_UNIT: f64 = 512.0;
/// Seconds per bootstrap draw (one random index and an addition).
const BOOTSTRAP_DRAW_S: f64 = 2e-8;

/// What drives an estimate: a field of the spec and its value where it matters.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Driver {
    /// Dotted path of the field (`params.p`, `sweeps.vs_n.quick.replicates`, ...).
    pub field: String,
    /// The value and where, e.g. "p = 1.8e16 at sweep `vs_n` point n=64, variant `a`".
    pub detail: String,
}

/// The estimate of one claim at one profile.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClaimEstimate {
    pub claim: String,
    pub profile: Profile,
    /// Planned units (a float: counted, never listed).
    pub units: f64,
    /// CPU seconds on one thread: units and fits.
    pub cpu_seconds: f64,
    /// Wall-clock seconds on `threads` threads.
    pub wall_seconds: f64,
    /// The costliest unit's CPU seconds.
    pub max_unit_seconds: f64,
    /// The largest unit's peak bytes.
    pub max_unit_bytes: f64,
    /// Bytes at the claim's peak: concurrent units, bookkeeping, bootstrap.
    pub memory_bytes: f64,
    /// Of which the bookkeeping of every planned unit (what listing the plan holds).
    pub bookkeeping_bytes: f64,
    pub threads: usize,
    /// Units and CPU seconds when every row decides at its first look (sequential
    /// sweeps draw `min`; the fields above are the worst case, every group at `max`).
    pub first_look_units: f64,
    pub first_look_cpu_seconds: f64,
    /// Each group's share at its worst case, for an expected work from a recorded run.
    pub groups: Vec<GroupWork>,
    /// What drives the work and the memory.
    pub work_driver: Driver,
    pub memory_driver: Driver,
    /// Where the unit cost comes from when it was measured by an earlier run (the
    /// result cache's history, `crate::execute::cache::history`): that run's figures, and
    /// the start-up and accountant seconds added to the times above. `None`: modelled.
    pub measured: Option<String>,
}

/// One group's (sweep, variant) replicates and CPU seconds at `max`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GroupWork {
    pub sweep: String,
    pub variant: String,
    pub points: usize,
    pub min: usize,
    pub max: usize,
    pub cpu_seconds: f64,
}

/// A number as written in a message: shortest form, scientific when large.
fn num(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e7 {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

impl fmt::Display for ClaimEstimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<28} {:>10} units  cpu {:>10}  wall {:>10} on {} threads  memory {:>10} (largest unit {})",
            self.claim,
            num(self.units),
            hours(self.cpu_seconds),
            hours(self.wall_seconds),
            self.threads,
            gb(self.memory_bytes),
            gb(self.max_unit_bytes),
        )
    }
}

/// Where a variable of a unit is set in the spec: an axis or coupled variable of the
/// sweep, a variant's override, a claim parameter, or the system's default.
fn field_of(
    claim: &Claim,
    sweep: &str,
    profile: Profile,
    prof: &SweepProfile,
    variant: usize,
    name: &str,
) -> String {
    if prof.axes.iter().any(|(k, _)| k == name) {
        format!("sweeps.{sweep}.{profile}.axes.{name}")
    } else if prof.coupled.contains_key(name) {
        format!("sweeps.{sweep}.{profile}.coupled.{name}")
    } else if claim.variants[variant].params.contains_key(name) {
        format!("variants[{variant}].params.{name}")
    } else if claim.params.contains_key(name) {
        format!("params.{name}")
    } else {
        format!("{name} (the system's default)")
    }
}

/// The system parameter of a unit whose halving lowers `of(cost)` most (within 10%: the
/// one with the largest value), if halving any lowers it by more than 1%.
fn driver_var(
    claim: &Claim,
    vars: &BTreeMap<String, f64>,
    options: &BTreeMap<String, String>,
    metrics: &std::collections::BTreeSet<String>,
    of: fn(&Cost) -> f64,
) -> Option<(String, f64)> {
    let base = of(&claim.system.cost(&CostInput {
        vars,
        options,
        metrics,
    }));
    let mut halvings: Vec<(f64, f64, String)> = Vec::new();
    for pinfo in claim.system.params() {
        let Some(&v) = vars.get(pinfo.name) else {
            continue;
        };
        let mut halved = vars.clone();
        halved.insert(pinfo.name.to_string(), v * 0.5);
        let c = of(&claim.system.cost(&CostInput {
            vars: &halved,
            options,
            metrics,
        }));
        let ratio = if base > 0.0 && base.is_finite() {
            c / base
        } else if c < base {
            0.0
        } else {
            1.0
        };
        if ratio < 0.99 {
            halvings.push((ratio, v.abs(), pinfo.name.to_string()));
        }
    }
    // Among the variables that save about as much as the best one (a cost linear in
    // n, p and steps saves half with each), the largest value is the absurd one.
    let best = halvings.iter().map(|h| h.0).fold(f64::INFINITY, f64::min);
    halvings
        .into_iter()
        .filter(|h| h.0 <= best * 1.1 + 1e-12)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(_, _, name)| {
            let v = vars[&name];
            (name, v)
        })
}

/// One (sweep, variant) group of a claim's plan with its costliest and largest units.
struct Group {
    sweep: String,
    variant: usize,
    points: usize,
    replicates: usize,
    cpu_seconds: f64,
    max_unit: (f64, usize),
    max_bytes: (f64, usize),
    entries: f64,
}

/// Estimates a claim's work and memory at `profile` on `threads` threads, without
/// running or listing its units.
pub fn estimate_claim(claim: &Claim, profile: Profile, threads: usize) -> ClaimEstimate {
    let needs = super::needs(claim, profile);
    let mut groups = Vec::new();
    for ((sweep, vi), metrics) in &needs {
        let prof = claim.sweep(sweep).profile(profile);
        let variant = &claim.variants[*vi];
        let reps = prof.replicates.max as f64;
        let mut g = Group {
            sweep: sweep.clone(),
            variant: *vi,
            points: 0,
            replicates: prof.replicates.max,
            cpu_seconds: 0.0,
            max_unit: (f64::NEG_INFINITY, 0),
            max_bytes: (f64::NEG_INFINITY, 0),
            entries: 0.0,
        };
        for (pi, pt) in prof.axis_points().iter().enumerate() {
            g.points += 1;
            // Validated at load: every point resolves (an error here costs nothing).
            let Ok(vars) = claim.resolve(variant, prof, pt) else {
                continue;
            };
            let c = claim.system.cost(&CostInput {
                vars: &vars,
                options: &variant.options,
                metrics,
            });
            let unit = c.seconds + UNIT_OVERHEAD_S;
            g.cpu_seconds += reps * unit;
            if unit.total_cmp(&g.max_unit.0).is_gt() {
                g.max_unit = (unit, pi);
            }
            if c.bytes.total_cmp(&g.max_bytes.0).is_gt() {
                g.max_bytes = (c.bytes, pi);
            }
            g.entries = (vars.len() + 2 * metrics.len()) as f64;
        }
        groups.push(g);
    }
    // Fits: the bootstrap of every fitted prediction, per variant it judges.
    let mut fits: Vec<(usize, f64, f64)> = Vec::new(); // (prediction, seconds, bytes)
    for (i, p) in claim.predictions.iter().enumerate() {
        let Some(f) = p.kind.fit_spec() else {
            continue;
        };
        let prof = claim.sweep(&p.sweep).profile(profile);
        let points: f64 = prof.axes.iter().map(|(_, v)| v.len() as f64).product();
        let judged = claim.variants.iter().filter(|v| p.judges(v)).count() as f64;
        let draws = f.bootstrap as f64 * points * prof.replicates.max as f64;
        let extra = match f.predicted {
            Predicted::Value(_) => 0.0,
            _ => points * 1e-5,
        };
        fits.push((
            i,
            judged * (draws * BOOTSTRAP_DRAW_S + f.bootstrap as f64 * 1e-7 + extra),
            8.0 * f.bootstrap as f64,
        ));
    }
    let units: f64 = groups
        .iter()
        .map(|g| g.points as f64 * g.replicates as f64)
        .sum();
    let unit_cpu: f64 = groups.iter().map(|g| g.cpu_seconds).sum();
    let fit_cpu: f64 = fits.iter().map(|f| f.1).sum();
    let cpu_seconds = unit_cpu + fit_cpu;
    let max_unit_seconds = groups.iter().map(|g| g.max_unit.0).fold(0.0, f64::max);
    let threads = threads.max(1);
    let wall_seconds = (unit_cpu / threads as f64).max(max_unit_seconds) + fit_cpu;
    let max_unit_bytes = groups.iter().map(|g| g.max_bytes.0).fold(0.0, f64::max);
    let concurrent = units.min(threads as f64).max(1.0);
    let bookkeeping: f64 = groups
        .iter()
        .map(|g| {
            g.points as f64
                * g.replicates as f64
                * (BOOKKEEPING_PER_UNIT + BOOKKEEPING_PER_ENTRY * g.entries)
        })
        .sum();
    let fit_bytes = fits.iter().map(|f| f.2).fold(0.0, f64::max);
    let memory_bytes = max_unit_bytes * concurrent + bookkeeping + fit_bytes;

    // What drives the work: a fit, or a group's replicates, points or costliest unit.
    let group_driver = |g: &Group, by_bytes: bool| -> Driver {
        let prof = claim.sweep(&g.sweep).profile(profile);
        let variant = &claim.variants[g.variant];
        let (unit_value, pi) = if by_bytes { g.max_bytes } else { g.max_unit };
        let reps_field = || Driver {
            field: format!("sweeps.{}.{profile}.replicates", g.sweep),
            detail: format!(
                "{} replicates x {} points, variant `{}`",
                num(g.replicates as f64),
                g.points,
                variant.name
            ),
        };
        // Which factor is furthest from a usual claim: replicates (tens), points
        // (tens), or one unit (up to a minute; for memory, a GB)?
        let unit_score = if by_bytes {
            unit_value / 1e9
        } else {
            unit_value / 60.0
        };
        let rep_score = g.replicates as f64 / 100.0;
        if rep_score >= unit_score {
            return reps_field();
        }
        let pt = prof.axis_points().into_iter().nth(pi).unwrap_or_default();
        let label = crate::spec::point_label(&pt);
        let Ok(vars) = claim.resolve(variant, prof, &pt) else {
            return reps_field();
        };
        let needs_metrics = &needs[&(g.sweep.clone(), g.variant)];
        let of: fn(&Cost) -> f64 = if by_bytes { |c| c.bytes } else { |c| c.seconds };
        let what = if by_bytes {
            format!("one unit holds {}", gb(unit_value))
        } else {
            format!("one unit takes {}", hours(unit_value))
        };
        match driver_var(claim, &vars, &variant.options, needs_metrics, of) {
            Some((name, v)) => Driver {
                field: field_of(claim, &g.sweep, profile, prof, g.variant, &name),
                detail: format!(
                    "{name} = {} at sweep `{}` {profile} point {label}, variant `{}` ({what})",
                    num(v),
                    g.sweep,
                    variant.name
                ),
            },
            None => match claim.system.cost_field() {
                Some((field, value)) => Driver {
                    field,
                    detail: format!(
                        "{value}, at sweep `{}` {profile} point {label}, variant `{}` ({what})",
                        g.sweep, variant.name
                    ),
                },
                None => Driver {
                    field: format!("sweeps.{}.{profile}", g.sweep),
                    detail: format!("point {label}, variant `{}` ({what})", variant.name),
                },
            },
        }
    };
    let fit_driver = |i: usize| {
        let b = match &claim.predictions[i].kind {
            PredictionKind::Exponent(f)
            | PredictionKind::RateAtMost(f)
            | PredictionKind::Bound { fit: f, .. } => f.bootstrap,
            _ => 0,
        };
        Driver {
            field: format!("predictions[{i}].bootstrap"),
            detail: format!(
                "{} resamples (prediction `{}`)",
                num(b as f64),
                claim.predictions[i].name
            ),
        }
    };
    let top_group = |key: &dyn Fn(&Group) -> f64| {
        groups
            .iter()
            .max_by(|a, b| key(a).total_cmp(&key(b)))
            .map(|g| (g, key(g)))
    };
    let top_fit = |k: usize| {
        fits.iter()
            .max_by(|a, b| {
                let (x, y) = if k == 1 { (a.1, b.1) } else { (a.2, b.2) };
                x.total_cmp(&y)
            })
            .map(|f| (f.0, if k == 1 { f.1 } else { f.2 }))
    };
    let none = || Driver {
        field: "(none)".into(),
        detail: "nothing to run".into(),
    };
    let work_driver = match (top_group(&|g| g.cpu_seconds), top_fit(1)) {
        (Some((_, gs)), Some((i, fs))) if fs > gs => fit_driver(i),
        (Some((g, _)), _) => group_driver(g, false),
        (None, Some((i, _))) => fit_driver(i),
        (None, None) => none(),
    };
    let units_of = |g: &Group| g.points as f64 * g.replicates as f64;
    let memory_driver = {
        let unit_part = max_unit_bytes * concurrent;
        let fit = top_fit(2);
        let booked = top_group(&units_of);
        if fit.is_some_and(|(_, b)| b > unit_part && b > bookkeeping) {
            fit_driver(fit.expect("checked").0)
        } else if bookkeeping > unit_part {
            match booked {
                Some((g, _)) => Driver {
                    field: format!("sweeps.{}.{profile}.replicates", g.sweep),
                    detail: format!(
                        "{} replicates x {} points, variant `{}`: {} of bookkeeping",
                        num(g.replicates as f64),
                        g.points,
                        claim.variants[g.variant].name,
                        gb(bookkeeping)
                    ),
                },
                None => none(),
            }
        } else {
            match top_group(&|g| g.max_bytes.0) {
                Some((g, _)) => group_driver(g, true),
                None => none(),
            }
        }
    };
    let first = |g: &Group| {
        let r = claim.sweep(&g.sweep).profile(profile).replicates;
        r.min as f64 / r.max.max(1) as f64
    };
    let first_look_units = groups.iter().map(|g| units_of(g) * first(g)).sum();
    let first_look_cpu_seconds =
        groups.iter().map(|g| g.cpu_seconds * first(g)).sum::<f64>() + fit_cpu;
    let group_work = groups
        .iter()
        .map(|g| {
            let r = claim.sweep(&g.sweep).profile(profile).replicates;
            GroupWork {
                sweep: g.sweep.clone(),
                variant: claim.variants[g.variant].name.clone(),
                points: g.points,
                min: r.min,
                max: r.max,
                cpu_seconds: g.cpu_seconds,
            }
        })
        .collect();
    ClaimEstimate {
        claim: claim.id.clone(),
        profile,
        first_look_units,
        first_look_cpu_seconds,
        groups: group_work,
        units,
        cpu_seconds,
        wall_seconds,
        max_unit_seconds,
        max_unit_bytes,
        memory_bytes,
        bookkeeping_bytes: bookkeeping,
        threads,
        work_driver,
        memory_driver,
        measured: None,
    }
}

/// `x` followed by `unit`: three decimals below 1e4, else scientific ("3.200 h",
/// "1.20e7 h").
fn scaled(x: f64, unit: &str) -> String {
    if x.is_finite() && x < 1e4 {
        format!("{x:.3} {unit}")
    } else {
        format!("{x:.2e} {unit}")
    }
}

/// Hours, as "3.2 h" or "1.2e+07 h".
pub fn hours(seconds: f64) -> String {
    scaled(seconds / 3600.0, "h")
}

/// Gigabytes, as "12.4 GB" or "1.5e+11 GB".
pub fn gb(bytes: f64) -> String {
    scaled(bytes / 1e9, "GB")
}
