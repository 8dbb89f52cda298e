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
pub mod kinds;
pub mod regime;

use crate::fit::Verdict;
use crate::rng::SeedPath;
use crate::spec::{Claim, Profile};
use regime::RegimeCheck;
use serde::Serialize;
use std::collections::BTreeMap;

pub use kinds::{fit_records, ResolvedFit};

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
            let recs: Vec<&PointRecord> = all
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
            if variant.negative_control {
                if let Some(m) = regime::identical_main(claim, &variant.name, &p.sweep, profile) {
                    results.push(identical_control(p, pi, variant, m));
                    continue;
                }
            }
            let (inside, regime) = regime::filter(&p.assumptions, &recs).map_err(err)?;
            let in_regime = inside.len() >= p.min_points();
            let used = if in_regime { &inside } else { &recs };
            let boot_seed = SeedPath::new(seed)
                .child(&claim.id)
                .child("bootstrap")
                .child(pi)
                .child(&variant.name);
            let mut res = kinds::evaluate(p, used, &boot_seed).map_err(err)?;
            res.prediction = pi;
            res.variant = variant.name.clone();
            res.negative_control = variant.negative_control;
            res.regime = regime;
            if !in_regime {
                res.verdict = Verdict::OutOfRegime;
            }
            if let (Some(pred), Some(tol)) = (res.predicted, res.tolerance) {
                if crate::spec::vacuous(res.kind == "rate_at_most", pred, tol) {
                    res.problem = Some(format!(
                        "tolerance {tol} is vacuous: it admits a zero slope as well as the predicted {pred:.4}"
                    ));
                }
            }
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
                res.finding = variant.findings.get(&p.name).cloned();
                if res.verdict == Verdict::Refuted && res.finding.is_none() {
                    res.problem.get_or_insert(
                        "main variant refuted without a `finding` in the spec (what the paper says, what was measured, why)".into(),
                    );
                }
            }
            results.push(res);
        }
    }
    Ok(ClaimOutcome {
        claim: claim.clone(),
        profile,
        seed,
        points,
        results,
    })
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
            detail: Detail::default(),
            prediction: pi,
        }
    }
}

/// Counts over a run: main variants' verdicts, negative controls caught, problems.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Tally {
    pub holds: usize,
    /// Refuted main verdicts that carry a finding.
    pub refuted_with_findings: usize,
    /// Refuted main verdicts without a finding (each fails the run).
    pub refuted_without_findings: usize,
    pub inconclusive: usize,
    pub out_of_regime: usize,
    pub controls: usize,
    pub controls_caught: usize,
    /// Every reason the run fails, one line each.
    pub problems: Vec<String>,
}

impl Tally {
    pub fn of(outcomes: &[ClaimOutcome]) -> Tally {
        let mut t = Tally::default();
        for o in outcomes {
            for r in &o.results {
                if r.negative_control {
                    t.controls += 1;
                    if r.control == Some(ControlStatus::Caught) {
                        t.controls_caught += 1;
                    }
                    continue;
                }
                match r.verdict {
                    Verdict::Holds => t.holds += 1,
                    Verdict::Refuted if r.finding.is_some() => t.refuted_with_findings += 1,
                    Verdict::Refuted => t.refuted_without_findings += 1,
                    Verdict::Inconclusive => t.inconclusive += 1,
                    Verdict::OutOfRegime => t.out_of_regime += 1,
                }
            }
            t.problems.extend(o.problems());
        }
        t
    }

    /// True when nothing fails the run on the verdicts' side (the baseline is separate).
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// "claims: X hold, Y refuted (with findings), Z inconclusive, W out of regime;
    /// negative controls k/k caught".
    pub fn line(&self) -> String {
        let mut s = format!(
            "claims: {} hold, {} refuted (with findings), ",
            self.holds, self.refuted_with_findings
        );
        if self.refuted_without_findings > 0 {
            s.push_str(&format!(
                "{} refuted WITHOUT a finding, ",
                self.refuted_without_findings
            ));
        }
        s.push_str(&format!(
            "{} inconclusive, {} out of regime; negative controls {}/{} caught",
            self.inconclusive, self.out_of_regime, self.controls_caught, self.controls
        ));
        s
    }
}
