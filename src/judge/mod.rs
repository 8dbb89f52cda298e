//! Judging: from the measured unit values of a claim to its verdicts.
//!
//! Two questions are kept apart. The *claim verdict* (this module) comes only from a
//! prediction registered from the paper and the measurement: `holds`, `refuted`,
//! `inconclusive`, or `out_of_regime` when too few sweep points satisfy the theorem's
//! hypotheses. Whether *anything changed* since the verdicts were recorded is the
//! regression baseline's question ([`crate::report::snapshot`]), never answered here.
//!
//! Rules applied to every (prediction, variant) pair a prediction judges
//! ([`crate::spec::Prediction::judges`]: every main variant, and the negative controls
//! that name it in `caught_by`):
//! 1. the points outside the hypotheses are dropped ([`regime`]); fewer than the
//!    prediction's minimum left gives `out_of_regime` (the fit over all points is still
//!    reported, marked as outside);
//! 2. the kind's rule gives the verdict ([`kinds`], [`crate::fit::verdict`]);
//! 3. a prediction whose tolerance admits a zero slope as well as the predicted one is
//!    vacuous: a failure of the run, whatever the verdict;
//! 4. a negative control must be *caught* (refuted); inconclusive or out of regime is not
//!    caught, and a control identical to a main variant on the sweep cannot be caught;
//! 5. a refuted main variant needs a `finding` in the spec, else the run fails.
mod bounds;
pub(crate) mod contrast;
pub mod evidence;
pub mod kinds;
pub mod power;
pub mod regime;
pub mod sequential;
mod tally;

use crate::fit::Verdict;
use crate::rng::SeedPath;
use crate::spec::{Claim, Evidence, PredictionKind, Profile};
pub use evidence::ErratumStatus;
use regime::RegimeCheck;
use serde::Serialize;
use std::collections::BTreeMap;

pub use kinds::{fit_records, ResolvedFit};
pub use tally::{Counts, Tally};

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
    /// `bound`: the implied constant (largest mean ratio, or smallest for Omega) and its
    /// interval.
    pub implied_constant: Option<(f64, (f64, f64))>,
    /// `bound` with a registered constant: the ceiling (upper) or floor (lower) and the
    /// verdict of the implied constant's interval against it (holds: wholly on the
    /// right side; refuted: wholly on the wrong side).
    pub constant_judged: Option<(f64, Verdict)>,
    /// `bound`: max/min of the bound over the judged points.
    pub bound_change: Option<f64>,
    /// `bound`: exp(width of the slope interval x ln(x range)): the change of the ratio
    /// the interval cannot tell from none.
    pub ratio_interval_change: Option<f64>,
    /// `bound`: the slope along x the ratio metric / bound would have if the metric
    /// stayed constant (minus the bound's own least-squares log-log slope over the judged
    /// points): a holds whose interval contains it cannot tell the bound from a constant.
    pub constant_term_slope: Option<f64>,
    /// `inequality` over means: each judged point's mean margin (> 0 violates), its
    /// standard error and the upper tail probability its t quantile is taken at (the
    /// futility rule reads them: [`sequential::futile`]).
    #[serde(skip)]
    pub point_margins: Vec<(f64, f64, f64)>,
}

/// What became of a negative control under one of its `caught_by` predictions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlStatus {
    /// Refuted by the prediction: the bug is caught.
    Caught,
    /// Holds, inconclusive or out of regime: the bug would go unnoticed.
    NotCaught,
    /// Same options, data and variables as this main variant at every point of the
    /// sweep: it cannot differ from it, so it is not judged.
    IdenticalTo(String),
}

/// The judgement of one prediction for one variant.
#[derive(Clone, Debug, Serialize)]
pub struct PredictionResult {
    /// The prediction's name in the spec.
    pub prediction_name: String,
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
    /// Points judged (inside the hypotheses), or all points when out of regime.
    pub points: usize,
    pub regime: RegimeCheck,
    /// Negative controls only.
    pub control: Option<ControlStatus>,
    /// Main variants: the spec's finding for this prediction, if it has one.
    pub finding: Option<String>,
    /// Why this result fails the run (uncaught control, refutation without finding,
    /// vacuous tolerance), if it does.
    pub problem: Option<String>,
    pub note: String,
    /// What the prediction is evidence of.
    pub evidence: Evidence,
    /// The verdict in the words of its evidence kind ([`evidence::word`]).
    pub word: String,
    /// The variant changes the printed algorithm: shown, never counted for the paper.
    pub ablation: bool,
    /// The variant is exploratory (`exploratory: true`): reported apart, never counted,
    /// never a regression of the core, never compared with the baseline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exploratory: bool,
    /// A main `holds` (not a self-check): whether the same prediction catches a negative
    /// control, i.e. whether it could have failed.
    pub discriminating: Option<bool>,
    /// A refuted statement: its erratum's confirmation in this run.
    pub erratum: Option<ErratumStatus>,
    /// What the row could detect, and what would resolve it ([`power`]).
    pub power: String,
    /// Replicates a point the row was judged on (its stopping look, for a sequential
    /// sweep: [`sequential`]).
    pub replicates: usize,
    /// A bound whose ratio grows significantly on a main variant: the trend, stated
    /// instead of a refutation.
    pub trend: Option<String>,
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
    /// Every reason this claim fails the run (empty when it does not).
    pub fn problems(&self) -> Vec<String> {
        self.results
            .iter()
            .filter_map(|r| {
                r.problem
                    .as_ref()
                    .map(|p| problem_line(&self.claim.id, &r.prediction_name, &r.variant, p))
            })
            .collect()
    }
}

/// Replicates a claim's run drew, against its worst case (every group at `max`).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Spent {
    /// Units drawn (point x replicate, summed over the groups).
    pub units: usize,
    /// Units at every group's `max`.
    pub max_units: usize,
    /// "prediction / variant" of each row of a sequential sweep still undecided at its
    /// `max` (it spent all it could).
    pub at_max: Vec<String>,
    /// "prediction / variant" of each row of a sequential sweep that stopped undecided
    /// before its `max` (the futility rule: [`sequential::futile`]).
    pub undecidable: Vec<String>,
}

impl Spent {
    /// "sequential: drew 1234 of 4560 units (27%); rows at their maximum: a / b".
    pub fn words(&self) -> String {
        let mut w = format!(
            "sequential: drew {} of {} units ({}%)",
            self.units,
            self.max_units,
            (100 * self.units)
                .checked_div(self.max_units)
                .unwrap_or(100)
        );
        if !self.at_max.is_empty() {
            w.push_str(&format!(
                "; rows at their maximum: {}",
                self.at_max.join(", ")
            ));
        }
        if !self.undecidable.is_empty() {
            w.push_str(&format!(
                "; rows stopped as undecidable: {}",
                self.undecidable.join(", ")
            ));
        }
        w
    }
}

impl ClaimOutcome {
    /// What this run drew ([`Spent`]).
    pub fn spent(&self) -> Spent {
        let mut s = Spent::default();
        for r in &self.points {
            let reps = r.metrics.values().map(Vec::len).max().unwrap_or(0);
            s.units += reps;
            s.max_units += self
                .claim
                .sweep(&r.sweep)
                .profile(self.profile)
                .replicates
                .max;
        }
        for r in &self.results {
            let sched = self.claim.sweep(&r.sweep).profile(self.profile).replicates;
            if sched.min < sched.max && r.verdict == Verdict::Inconclusive {
                let row = format!("{} / {}", r.prediction_name, r.variant);
                if r.replicates >= sched.max {
                    s.at_max.push(row);
                } else {
                    s.undecidable.push(row);
                }
            }
        }
        s
    }
}

/// How a problem of one verdict row is named in a run's output and in STABILITY.md.
pub fn problem_line(claim: &str, prediction: &str, variant: &str, problem: &str) -> String {
    format!("{claim}: prediction `{prediction}`, variant `{variant}`: {problem}")
}

/// Fits and judges a claim from its point records (the part of a run that does no
/// simulation). `points` must hold every (sweep, variant) pair some prediction judges.
pub fn judge(
    claim: &Claim,
    profile: Profile,
    seed: u64,
    points: Vec<PointRecord>,
) -> Result<ClaimOutcome, String> {
    let all: Vec<&PointRecord> = points.iter().collect();
    let mut results = Vec::new();
    for (pi, p) in claim.predictions.iter().enumerate() {
        for variant in claim.variants.iter().filter(|v| p.judges(v)) {
            let own: Vec<&PointRecord> = all
                .iter()
                .copied()
                .filter(|r| r.sweep == p.sweep && r.variant == variant.name)
                .collect();
            let err = |m: String| {
                format!(
                    "prediction `{}` ({}), variant `{}`: {m}",
                    p.name, p.metric, variant.name
                )
            };
            let paired = match &p.minus {
                Some(m) => Some(contrast::records(&own, &all, &p.metric, m).map_err(err)?),
                None => None,
            };
            let recs: Vec<&PointRecord> = match &paired {
                Some(d) => d.iter().collect(),
                None => own,
            };
            if variant.negative_control {
                if let Some(m) =
                    crate::spec::identical_main(claim, &variant.name, &p.sweep, profile)
                {
                    results.push(identical_control(p, pi, variant, m));
                    continue;
                }
            }
            let x = p.kind.fit_spec().map(|f| f.x.as_str());
            let (inside, regime) = regime::filter(&p.assumptions, &recs, x).map_err(err)?;
            let in_regime = inside.len() >= p.min_points();
            let used = if in_regime { &inside } else { &recs };
            let boot_seed = SeedPath::new(seed)
                .child(&claim.id)
                .child("bootstrap")
                .child(pi)
                .child(&variant.name);
            // A sequential sweep's looks share the row's level ([`sequential`]).
            let looks = claim
                .sweep(&p.sweep)
                .profile(profile)
                .replicates
                .looks()
                .len();
            let judged_as = sequential::at_looks(p, looks);
            // A fitted contrast whose mean difference is not positive somewhere is not
            // fitted: inconclusive, and its power line says where and why.
            let unfitted = contrast::undefined_log_fit(p, used);
            let mut res = match unfitted {
                Some(_) => {
                    let mut r = PredictionResult::unjudged(p, pi, used.len());
                    r.x = p.kind.fit_spec().map(|f| f.x.clone());
                    r
                }
                None => kinds::evaluate(&judged_as, used, &boot_seed, claim.is_exact(&p.metric))
                    .map_err(err)?,
            };
            res.prediction = pi;
            res.variant = variant.name.clone();
            res.negative_control = variant.negative_control;
            res.regime = regime;
            res.evidence = p.evidence;
            res.ablation = variant.is_ablation();
            res.exploratory = variant.exploratory;
            if !in_regime {
                res.verdict = Verdict::OutOfRegime;
            }
            if let PredictionKind::Bound { .. } = p.kind {
                bounds::bound_rules(&mut res, variant.negative_control);
            }
            if let (Some(pred), Some(tol)) = (res.predicted, res.tolerance) {
                if crate::spec::vacuous(res.kind == "rate_at_most", pred, tol) {
                    res.problem = Some(format!(
                        "tolerance {tol} is vacuous: it admits a zero slope as well as the predicted {pred:.4}"
                    ));
                }
            }
            let reps = used
                .iter()
                .filter_map(|r| r.metrics.get(&p.metric).map(Vec::len))
                .min()
                .unwrap_or(0);
            res.power = unfitted.unwrap_or_else(|| power::describe(p, &res, reps));
            // An exact computation has no sampling error: no power line, and its
            // replicates must agree to the bit (else the declaration is wrong).
            if claim.is_exact(&p.metric) {
                res.power.clear();
                if let Some(why) = power::replicates_differ(&p.metric, used) {
                    res.problem.get_or_insert(why);
                }
            }
            res.replicates = reps;
            if variant.negative_control {
                if res.verdict == Verdict::Refuted {
                    res.control = Some(ControlStatus::Caught);
                } else {
                    res.problem.get_or_insert(format!(
                        "negative control not caught: verdict {} (caught means refuted)",
                        res.verdict
                    ));
                    res.control = Some(ControlStatus::NotCaught);
                }
            } else {
                main_rules(&mut res, p, variant, &recs, used);
            }
            res.word = evidence::word(&res, variant.proxy_of(p));
            results.push(res);
        }
    }
    finish(claim, &mut results);
    Ok(ClaimOutcome {
        claim: claim.clone(),
        profile,
        seed,
        points,
        results,
    })
}

/// What depends on several rows of a claim: whether a holds could have failed (its
/// prediction catches a control) and the verdict words. Run again on the rows a
/// sequential run kept, each from its own stopping look.
pub fn finish(claim: &Claim, results: &mut [PredictionResult]) {
    for r in results.iter_mut() {
        r.discriminating = None;
    }
    evidence::mark_discriminating(results);
    for r in results.iter_mut() {
        let p = &claim.predictions[r.prediction];
        let proxy = claim
            .variants
            .iter()
            .find(|v| v.name == r.variant)
            .map_or(p.proxy.as_str(), |v| v.proxy_of(p));
        r.word = evidence::word(r, proxy);
    }
}

/// The rules of a main variant by evidence kind: a refuted statement needs an erratum
/// confirmed by an independent computation; an inconsistent consequence or a proxy not
/// reproduced needs a finding; a failed self-check is a failure of the tool; numbers
/// quoted by findings and errata must agree with the run. Ablations are shown and
/// counted apart, with no requirement.
fn main_rules(
    res: &mut PredictionResult,
    p: &crate::spec::Prediction,
    variant: &crate::spec::Variant,
    recs: &[&PointRecord],
    judged: &[&PointRecord],
) {
    let finding = variant.findings.get(&p.name);
    res.finding = finding.map(|f| f.text.clone());
    let mut problems: Vec<String> = Vec::new();
    if let Some(f) = finding {
        for q in &f.quotes {
            if let Err(m) = evidence::check_quote(q, recs) {
                problems.push(format!("the finding contradicts its run: {m}"));
            }
        }
    }
    let erratum = variant.errata.get(&p.name);
    if let Some(e) = erratum {
        for q in &e.quotes {
            if let Err(m) = evidence::check_quote(q, recs) {
                problems.push(format!("the erratum contradicts its run: {m}"));
            }
        }
        if res.verdict != Verdict::Refuted {
            problems.push(format!(
                "the spec claims an erratum but the statement is {} in this run",
                res.verdict
            ));
        }
    }
    let refuted = res.verdict == Verdict::Refuted;
    match (p.evidence, refuted, res.ablation || res.exploratory) {
        (_, false, _) => {}
        (Evidence::SelfCheck, true, _) => problems.push(
            "self-check failed: a failure of the tool (its two sides should agree by construction), not a finding about the paper".into(),
        ),
        (_, true, true) => {}
        (Evidence::Statement, true, false) => match erratum {
            None => problems.push(format!(
                "regression of the core: refuted on a main variant ({}) and the spec records \
                 no erratum; if the paper, not the core, is wrong here: refuted, unconfirmed \
                 until an `errata` entry gives the paper's sentence, the counterexample and an \
                 independent confirmation",
                measured(res)
            )),
            Some(e) => {
                let status = evidence::confirm(e, judged);
                if !status.confirmed {
                    problems.push(format!("refuted, unconfirmed: {}", status.how));
                }
                res.erratum = Some(status);
            }
        },
        (_, true, false) if finding.is_none() => problems.push(format!(
            "regression of the core: {} on a main variant ({}); if the paper, not the core, \
             explains it, say so in a `finding` (what the paper says, what was measured, why): \
             without a `finding` it fails the run",
            p.evidence.word(Verdict::Refuted, &p.proxy),
            measured(res)
        )),
        _ => {}
    }
    if !problems.is_empty() && res.problem.is_none() {
        res.problem = Some(problems.join("; "));
    }
}

/// The numbers of a verdict row in words, for a problem line: "measured 1.32, interval
/// [1.21, 1.43], predicted 2 ± 0.25" (what is known), else the row's note.
fn measured(res: &PredictionResult) -> String {
    use crate::fit::fmt_num as num;
    let mut parts = Vec::new();
    if let Some(e) = res.estimate {
        parts.push(format!("measured {}", num(e)));
    }
    if let Some((lo, hi)) = res.ci {
        parts.push(format!("interval [{}, {}]", num(lo), num(hi)));
    }
    if let Some(p) = res.predicted {
        parts.push(match res.tolerance {
            Some(t) => format!("predicted {} ± {}", num(p), num(t)),
            None => format!("predicted {}", num(p)),
        });
    }
    if parts.is_empty() {
        if res.note.is_empty() {
            return format!("over {} points", res.points);
        }
        return res.note.clone();
    }
    parts.join(", ")
}

/// The result of a negative control that equals main variant `main` on the
/// prediction's sweep: not judged, and a failure of the run.
fn identical_control(
    p: &crate::spec::Prediction,
    pi: usize,
    variant: &crate::spec::Variant,
    main: String,
) -> PredictionResult {
    let mut r = PredictionResult::unjudged(p, pi, 0);
    r.variant = variant.name.clone();
    r.negative_control = true;
    r.problem = Some(format!(
        "negative control is identical to main variant `{main}` on sweep `{}` (same options, data and variables at every point): it cannot be caught",
        p.sweep
    ));
    r.control = Some(ControlStatus::IdenticalTo(main));
    r
}

impl PredictionResult {
    /// A result of prediction `p` (index `pi`) over `points` points, before any
    /// measurement: inconclusive, no estimate, no variant yet.
    pub fn unjudged(p: &crate::spec::Prediction, pi: usize, points: usize) -> PredictionResult {
        PredictionResult {
            prediction_name: p.name.clone(),
            variant: String::new(),
            negative_control: false,
            metric: p.metric.clone(),
            kind: p.kind.name(),
            sweep: p.sweep.clone(),
            x: None,
            estimate: None,
            ci: None,
            predicted: None,
            tolerance: None,
            verdict: Verdict::Inconclusive,
            points,
            regime: RegimeCheck::default(),
            control: None,
            finding: None,
            problem: None,
            note: p.note.clone(),
            evidence: p.evidence,
            word: String::new(),
            ablation: false,
            exploratory: false,
            discriminating: None,
            erratum: None,
            power: String::new(),
            replicates: 0,
            trend: None,
            detail: Detail::default(),
            prediction: pi,
        }
    }
}
