//! The claim runner: expands a validated claim into work units, runs them in parallel,
//! fits, and judges every prediction for every variant it names.
//!
//! A work unit is (sweep, variant, sweep point, replicate). Its randomness comes from
//! the seed path `master / claim id / sweep / point label / rep<r>` — the variant is not
//! part of it, so variants of a claim see the same data, features and noise (common
//! random numbers: differences between variants are the variants' doing). Units run in
//! parallel (rayon) and are collected in a fixed order, so results do not depend on the
//! thread count or on execution order.
use crate::faults::Fault;
use crate::fit::{self, Verdict};
use crate::rng::SeedPath;
use crate::spec::{point_label, Claim, CmpOp, FitSpec, Predicted, PredictionKind, Profile};
use crate::systems::UnitInput;
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

/// One sweep point of one variant: its label and every resolved variable.
#[derive(Clone, Debug, Serialize)]
pub struct PointRecord {
    pub sweep: String,
    pub variant: String,
    pub index: usize,
    pub label: String,
    pub vars: BTreeMap<String, f64>,
    /// metric -> value per replicate.
    pub metrics: BTreeMap<String, Vec<f64>>,
}

/// Extra numbers of a judged prediction, for reports.
#[derive(Clone, Debug, Serialize, Default)]
pub struct Detail {
    pub stderr: Option<f64>,
    pub r2: Option<f64>,
    pub intercept: Option<f64>,
    pub bootstrap_ci: Option<(f64, f64)>,
    pub successes: Option<u64>,
    pub trials: Option<u64>,
    pub violations: Vec<String>,
}

/// The judgement of one prediction for one variant.
#[derive(Clone, Debug, Serialize)]
pub struct PredictionResult {
    pub variant: String,
    pub negative_control: bool,
    pub metric: String,
    pub kind: &'static str,
    pub sweep: String,
    pub x: Option<String>,
    pub estimate: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub predicted: Option<f64>,
    pub tolerance: Option<f64>,
    pub verdict: Verdict,
    pub expected: Verdict,
    pub points: usize,
    pub note: String,
    #[serde(skip)]
    pub detail: Detail,
    /// Index of the prediction in the spec.
    #[serde(skip)]
    pub prediction: usize,
}

/// Everything a claim run produced.
#[derive(Clone, Debug)]
pub struct ClaimOutcome {
    pub claim: Claim,
    pub profile: Profile,
    pub seed: u64,
    pub points: Vec<PointRecord>,
    pub results: Vec<PredictionResult>,
}

impl ClaimOutcome {
    /// True when every verdict equals its expected verdict.
    pub fn as_expected(&self) -> bool {
        self.results.iter().all(|r| r.verdict == r.expected)
    }
}

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
fn needs(claim: &Claim) -> BTreeMap<(String, usize), BTreeSet<String>> {
    let mut m: BTreeMap<(String, usize), BTreeSet<String>> = BTreeMap::new();
    for p in &claim.predictions {
        for v in p.expected.keys() {
            let vi = claim
                .variants
                .iter()
                .position(|x| &x.name == v)
                .expect("validated");
            let e = m.entry((p.sweep.clone(), vi)).or_default();
            e.insert(p.metric.clone());
            e.extend(claim.report_metrics.iter().cloned());
        }
    }
    m
}

fn plan_keys(claim: &Claim, profile: Profile) -> Vec<PlannedKey> {
    let mut keys = Vec::new();
    for ((sweep, vi), _) in needs(claim) {
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
    let needs = needs(claim);
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
    let needs = needs(claim);
    plan_keys(claim, profile)
        .into_iter()
        .map(|(key, vi, pt)| UnitPlan {
            metrics: needs[&(key.sweep.clone(), vi)].clone(),
            label: point_label(&pt),
            key,
        })
        .collect()
}

/// Runs every unit of a claim (in parallel; `tick` is called once per finished unit).
pub fn run_units(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    tick: &(dyn Fn() + Sync),
) -> Result<UnitValues, RunError> {
    run_units_where(claim, profile, seed, &|_, _| true, tick)
}

/// Runs the units of a claim for which `keep(index in plan order, key)` is true, in
/// plan order (a shard of a sharded run). A unit's numbers do not depend on which other
/// units run: each draws from its own seed path.
pub fn run_units_where(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    keep: &(dyn Fn(usize, &UnitKey) -> bool + Sync),
    tick: &(dyn Fn() + Sync),
) -> Result<UnitValues, RunError> {
    run_units_where_with_fault(claim, profile, seed, Fault::None, keep, tick)
}

/// [`run_units`] on a core with `fault` injected ([`crate::faults`]).
pub fn run_units_with_fault(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    fault: Fault,
    tick: &(dyn Fn() + Sync),
) -> Result<UnitValues, RunError> {
    run_units_where_with_fault(claim, profile, seed, fault, &|_, _| true, tick)
}

/// [`run_units_where`] on a core with `fault` injected ([`crate::faults`]).
pub fn run_units_where_with_fault(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    fault: Fault,
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
                fault,
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

/// Runs a claim and judges it.
pub fn run_claim(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    tick: &(dyn Fn() + Sync),
) -> Result<ClaimOutcome, RunError> {
    run_claim_with_fault(claim, profile, seed, Fault::None, tick)
}

/// [`run_claim`] on a core with `fault` injected ([`crate::faults`]).
pub fn run_claim_with_fault(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    fault: Fault,
    tick: &(dyn Fn() + Sync),
) -> Result<ClaimOutcome, RunError> {
    let values = run_units_with_fault(claim, profile, seed, fault, tick)?;
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
    let mut results = Vec::new();
    for (pi, p) in claim.predictions.iter().enumerate() {
        for (vname, _) in p.expected.iter() {
            let variant = claim
                .variants
                .iter()
                .find(|v| &v.name == vname)
                .expect("validated");
            let recs: Vec<&PointRecord> = points
                .values()
                .filter(|r| r.sweep == p.sweep && &r.variant == vname)
                .collect();
            let err = |message: String| RunError::Claim {
                claim: claim.id.clone(),
                message: format!(
                    "prediction {pi} ({}), variant `{vname}`: {message}",
                    p.metric
                ),
            };
            let mut res = PredictionResult {
                variant: vname.clone(),
                negative_control: variant.negative_control,
                metric: p.metric.clone(),
                kind: p.kind.name(),
                sweep: p.sweep.clone(),
                x: None,
                estimate: None,
                ci: None,
                predicted: None,
                tolerance: None,
                verdict: Verdict::Inconclusive,
                expected: p.expected_for(vname, profile),
                points: recs.len(),
                note: p.note.clone(),
                detail: Detail::default(),
                prediction: pi,
            };
            match &p.kind {
                PredictionKind::Exponent(f) | PredictionKind::RateAtMost(f) => {
                    let boot_seed = SeedPath::new(seed)
                        .child(&claim.id)
                        .child("bootstrap")
                        .child(pi)
                        .child(vname);
                    let fit = fit_records(&recs, &p.metric, f, &boot_seed).map_err(err)?;
                    res.x = Some(f.x.clone());
                    res.estimate = Some(fit.slope);
                    res.ci = Some(fit.ci);
                    res.predicted = Some(fit.predicted);
                    res.tolerance = Some(f.tolerance);
                    res.verdict = match p.kind {
                        PredictionKind::Exponent(_) => {
                            fit::judge_exponent(fit.ci, fit.slope, fit.predicted, f.tolerance)
                        }
                        _ => fit::judge_rate_at_most(fit.ci, fit.slope, fit.predicted, f.tolerance),
                    };
                    res.detail.stderr = Some(fit.stderr);
                    res.detail.r2 = Some(fit.r2);
                    res.detail.intercept = Some(fit.intercept);
                    res.detail.bootstrap_ci = fit.bootstrap_ci;
                }
                PredictionKind::Event { alpha, confidence } => {
                    let vals: Vec<f64> = recs
                        .iter()
                        .flat_map(|r| r.metrics[&p.metric].iter().copied())
                        .collect();
                    let successes = vals.iter().filter(|v| **v >= 0.5).count() as u64;
                    let trials = vals.len() as u64;
                    let (verdict, ci) =
                        fit::try_judge_event(successes, trials, *alpha, *confidence)
                            .map_err(|e| err(e.to_string()))?;
                    res.estimate = Some(successes as f64 / trials as f64);
                    res.ci = Some(ci);
                    res.predicted = Some(1.0 - alpha);
                    res.verdict = verdict;
                    res.detail.successes = Some(successes);
                    res.detail.trials = Some(trials);
                    for r in &recs {
                        let fails = r.metrics[&p.metric].iter().filter(|v| **v < 0.5).count();
                        if fails > 0 {
                            res.detail.violations.push(format!(
                                "{}: {fails}/{} replicates without the event",
                                r.label,
                                r.metrics[&p.metric].len()
                            ));
                        }
                    }
                }
                PredictionKind::Inequality { op, rhs } => {
                    let mut satisfied = Vec::new();
                    let mut worst: Option<f64> = None;
                    for r in &recs {
                        let b = rhs.eval_map(&r.vars).map_err(|e| err(e.to_string()))?;
                        for &a in &r.metrics[&p.metric] {
                            let ok = op.holds(a, b);
                            satisfied.push(ok);
                            // Margin in the direction of a violation (> 0 violates).
                            let margin = match op {
                                CmpOp::Le | CmpOp::Lt => a - b,
                                CmpOp::Ge | CmpOp::Gt => b - a,
                            };
                            worst = Some(worst.map_or(margin, |w: f64| w.max(margin)));
                            if !ok {
                                res.detail.violations.push(format!(
                                    "{}: {} = {a:.6} not {} {b:.6}",
                                    r.label,
                                    p.metric,
                                    op.symbol()
                                ));
                            }
                        }
                    }
                    res.estimate = worst;
                    res.predicted = Some(0.0);
                    res.verdict = fit::judge_inequality(&satisfied);
                    res.detail.successes = Some(satisfied.iter().filter(|s| **s).count() as u64);
                    res.detail.trials = Some(satisfied.len() as u64);
                }
            }
            results.push(res);
        }
    }
    Ok(ClaimOutcome {
        claim: claim.clone(),
        profile,
        seed,
        points: points.into_values().collect(),
        results,
    })
}

/// A fit with its prediction resolved.
pub struct ResolvedFit {
    pub slope: f64,
    pub intercept: f64,
    pub stderr: f64,
    pub ci: (f64, f64),
    pub r2: f64,
    pub predicted: f64,
    pub bootstrap_ci: Option<(f64, f64)>,
    /// (x, replicate values after division) per point, for plots.
    pub data: Vec<(f64, Vec<f64>)>,
    /// Intercept of the predicted line through the data's centre of mass (for plots).
    pub predicted_intercept: f64,
}

/// Fits `metric / divide_by` against `x` over the records (one record per point).
pub fn fit_records(
    recs: &[&PointRecord],
    metric: &str,
    f: &FitSpec,
    boot_seed: &SeedPath,
) -> Result<ResolvedFit, String> {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut pred_vals = Vec::new();
    for r in recs {
        let x = *r
            .vars
            .get(&f.x)
            .ok_or_else(|| format!("sweep variable `{}` missing", f.x))?;
        let div = match &f.divide_by {
            Some(e) => e.eval_map(&r.vars).map_err(|e| e.to_string())?,
            None => 1.0,
        };
        xs.push(x);
        ys.push(
            r.metrics[metric]
                .iter()
                .map(|v| v / div)
                .collect::<Vec<f64>>(),
        );
        if let Predicted::RateOf(e) = &f.predicted {
            pred_vals.push(vec![e.eval_map(&r.vars).map_err(|e| e.to_string())?]);
        }
    }
    let fit = fit::fit_power_law(&xs, &ys, f.confidence).map_err(|e| e.to_string())?;
    let predicted = match &f.predicted {
        Predicted::Value(v) => *v,
        Predicted::RateOf(_) => {
            fit::fit_power_law(&xs, &pred_vals, f.confidence)
                .map_err(|e| format!("predicted_rate_of: {e}"))?
                .slope
        }
    };
    let bootstrap_ci = if f.bootstrap > 0 && ys.iter().all(|y| y.len() > 1) {
        fit::bootstrap_slope_ci(&xs, &ys, f.confidence, f.bootstrap, &mut boot_seed.rng()).ok()
    } else {
        None
    };
    // Line of the predicted slope through the centroid of (ln x, ln mean y).
    let lx: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let ly: Vec<f64> = ys
        .iter()
        .map(|y| (y.iter().sum::<f64>() / y.len() as f64).ln())
        .collect();
    let cx = lx.iter().sum::<f64>() / lx.len() as f64;
    let cy = ly.iter().sum::<f64>() / ly.len() as f64;
    Ok(ResolvedFit {
        slope: fit.slope,
        intercept: fit.intercept,
        stderr: fit.stderr,
        ci: fit.ci,
        r2: fit.r2,
        predicted,
        bootstrap_ci,
        data: xs.into_iter().zip(ys).collect(),
        predicted_intercept: cy - predicted * cx,
    })
}
