//! Claim specs: raw serde structs (deny unknown fields) turned into validated claims.
//!
//! A claim file in `claims/` is YAML; its format is documented in `claims/README.md`.
//! [`load_claim`] reads one file, deserialises it strictly ([`raw`]), and validates it
//! into a [`Claim`]: every expression parses, every symbol is defined, definitions have
//! no cycle, every sweep point of both profiles evaluates to values the system accepts,
//! metrics and options exist, every hypothesis in `assumptions` parses, every negative
//! control names the predictions that must catch it (`caught_by`), and no tolerance is
//! vacuous. There is no expected verdict: a verdict comes from the prediction and the
//! measurement only. The engine only ever sees a validated [`Claim`].
pub mod assumption;
pub mod check;
mod ctx;
pub mod echo;
pub mod evidence;
pub mod expr;
mod external;
mod identical;
pub mod judged;
pub mod ledger;
mod load;
pub mod locate;
pub mod names;
mod points;
mod predictions;
mod provenance;
pub mod raw;
pub mod raw_parts;
pub mod raw_variant;
mod read;
pub mod registry;
pub mod replicates;
pub mod schema;

pub use assumption::{Assumption, Direction, Trend, Violation};
pub use evidence::{Deviation, Erratum, Evidence, Finding, Quote, QuotedNumber};
pub use external::MAX_TIMEOUT_S as EXTERNAL_MAX_TIMEOUT_S;
pub use identical::identical_main;
pub use load::MAX_SWEEP_POINTS;
pub use read::{claim_from_bytes, load_claim, load_claims, spec_files};
pub use replicates::Replicates;

pub use crate::data::spec::{DataSpec, TargetSpec};
use crate::systems::{ParamKind, System};
use expr::Expr;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

/// A spec problem: the file, the field (a dotted path) and what is wrong. Spec input
/// quoted in the field or the message is clipped when displayed ([`echo`]).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {}: {}", echo::escape_controls(.file), echo::clip_echoes(.field), echo::clip_echoes(.message))]
pub struct SpecError {
    pub file: String,
    pub field: String,
    pub message: String,
}

/// Execution profile: `quick` (CI) or `full` (paper scale).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Quick,
    Full,
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
        })
    }
}

/// Where a claim comes from.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Source {
    pub paper: String,
    pub section: String,
    pub equation: String,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}, {}", self.paper, self.section, self.equation)
    }
}

/// One sweep at one profile: axes (cartesian product), coupled variables, replicates.
#[derive(Clone, Debug)]
pub struct SweepProfile {
    pub axes: Vec<(String, Vec<f64>)>,
    pub coupled: BTreeMap<String, Expr>,
    pub replicates: Replicates,
}

impl SweepProfile {
    /// All points of the cartesian product of the axes, first axis slowest.
    pub fn axis_points(&self) -> Vec<Vec<(String, f64)>> {
        let mut pts: Vec<Vec<(String, f64)>> = vec![Vec::new()];
        for (name, values) in &self.axes {
            let mut next = Vec::with_capacity(pts.len() * values.len());
            for p in &pts {
                for &v in values {
                    let mut q = p.clone();
                    q.push((name.clone(), v));
                    next.push(q);
                }
            }
            pts = next;
        }
        pts
    }
}

/// A named sweep with its two profiles.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    pub quick: SweepProfile,
    pub full: SweepProfile,
}

impl Sweep {
    pub fn profile(&self, p: Profile) -> &SweepProfile {
        match p {
            Profile::Quick => &self.quick,
            Profile::Full => &self.full,
        }
    }
}

/// A named variant: overrides of parameters, options and data.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub description: String,
    pub negative_control: bool,
    /// Outside the statement's hypotheses on purpose (`exploratory: true`): judged and
    /// reported apart, never counted for the paper, never a regression of the core,
    /// never compared with the regression baseline.
    pub exploratory: bool,
    /// The task of this variant's proxy rows (overrides the prediction's `proxy`).
    pub proxy: Option<String>,
    pub params: BTreeMap<String, Expr>,
    pub options: BTreeMap<String, String>,
    pub data: DataSpec,
    /// Negative controls: the predictions (by name) that must refute this variant.
    pub caught_by: Vec<String>,
    /// Main variants: prediction name -> the finding that explains its refutation (an
    /// inconsistent consequence, a proxy not reproduced).
    pub findings: BTreeMap<String, Finding>,
    /// Main variants: prediction name -> the erratum a refuted statement claims.
    pub errata: BTreeMap<String, Erratum>,
    /// How this variant differs from the algorithm as printed (one change each).
    pub deviations: Vec<Deviation>,
}

impl Variant {
    /// The name of the task a proxy row of `prediction` on this variant runs.
    pub fn proxy_of<'a>(&'a self, prediction: &'a Prediction) -> &'a str {
        self.proxy.as_deref().unwrap_or(&prediction.proxy)
    }
    /// A variant with a change other than a declared typo fix: shown in the report, never
    /// counted for a result of the paper.
    pub fn is_ablation(&self) -> bool {
        self.deviations.iter().any(|d| !d.typo_fix)
    }
}

/// What a prediction asserts.
#[derive(Clone, Debug)]
pub enum PredictionKind {
    /// The log-log slope of the metric against `x` equals the prediction.
    Exponent(FitSpec),
    /// The log-log slope of the metric against `x` is at most the prediction.
    RateAtMost(FitSpec),
    /// The event (metric = 1) has probability at least `1 - alpha`.
    Event { alpha: f64, confidence: f64 },
    /// `metric <op> rhs`, checked as [`InequalityOver`] says.
    Inequality {
        op: CmpOp,
        rhs: Expr,
        over: InequalityOver,
    },
    /// An O()/O~() (`upper`) or Omega() bound with unknown constant: the ratio
    /// metric / bound (the fit's `divide_by`, predicted slope 0) must not grow (upper) or
    /// shrink (lower) along `x` by more than the tolerance; the implied constant is
    /// reported. Never refuted on a main variant: finite data cannot refute an asymptotic
    /// rate ([`crate::judge::kinds`]).
    /// `constant`: a registered implied-constant ceiling (upper) or floor (lower), with
    /// its source: judged too, a finite statement ([`crate::judge`]'s bound rules).
    Bound {
        fit: FitSpec,
        upper: bool,
        constant: Option<RegisteredConstant>,
    },
}

/// An implied constant registered from the paper or its proof (`constant:` of a bound).
#[derive(Clone, Debug, PartialEq)]
pub struct RegisteredConstant {
    /// The ceiling (upper bound) or floor (lower bound).
    pub value: f64,
    pub source: String,
}

/// What an `inequality` is checked on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InequalityOver {
    /// Every replicate at every point (for deterministic quantities such as an
    /// accountant's epsilon, or a bound that must hold per run).
    Runs,
    /// The mean over replicates at every point, judged on simultaneous t intervals
    /// (Bonferroni over the points at `confidence`): holds if every interval lies on
    /// the right side, refuted if one lies wholly on the wrong side, else inconclusive.
    /// For a stochastic quantity the paper states on average: a per-run minimum is a
    /// seed-dependent statistic whose verdict flips as replicates are added.
    Means { confidence: f64 },
}

impl PredictionKind {
    pub fn name(&self) -> &'static str {
        match self {
            PredictionKind::Exponent(_) => "exponent",
            PredictionKind::RateAtMost(_) => "rate_at_most",
            PredictionKind::Event { .. } => "event",
            PredictionKind::Inequality { .. } => "inequality",
            PredictionKind::Bound { .. } => "bound",
        }
    }

    /// The fit settings of a fitted kind (`exponent`, `rate_at_most`, `bound`).
    pub fn fit_spec(&self) -> Option<&FitSpec> {
        match self {
            PredictionKind::Exponent(f) | PredictionKind::RateAtMost(f) => Some(f),
            PredictionKind::Bound { fit, .. } => Some(fit),
            _ => None,
        }
    }
}

/// The predicted exponent: a number, or the local log-log slope over the sweep points
/// of an exact finite-size value (`ValueOf`, which may also name metrics the system computes
/// from theory, e.g. an exact expectation; their mean over replicates is used).
#[derive(Clone, Debug)]
pub enum Predicted {
    Value(f64),
    ValueOf(Expr),
}

impl Predicted {
    /// The expression whose local slope is the prediction, if any.
    pub fn expr(&self) -> Option<&Expr> {
        match self {
            Predicted::Value(_) => None,
            Predicted::ValueOf(e) => Some(e),
        }
    }
}

/// True when a tolerance makes the prediction vacuous: it admits a zero slope although
/// the predicted slope is not zero (an `exponent` with `|predicted| <= tolerance`, or a
/// decay `rate_at_most` with `predicted < 0 <= predicted + tolerance`).
pub fn vacuous(rate_at_most: bool, predicted: f64, tolerance: f64) -> bool {
    if rate_at_most {
        predicted < 0.0 && predicted + tolerance >= 0.0
    } else {
        predicted != 0.0 && tolerance >= predicted.abs()
    }
}

/// Settings of a fitted prediction.
#[derive(Clone, Debug)]
pub struct FitSpec {
    pub x: String,
    pub predicted: Predicted,
    pub tolerance: f64,
    pub divide_by: Option<Expr>,
    pub confidence: f64,
    pub bootstrap: usize,
    /// Why this tolerance (one line, printed in the report).
    pub tolerance_reason: String,
}

/// Comparison operator of an inequality prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Le,
    Lt,
    Ge,
    Gt,
}

impl CmpOp {
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Le => a <= b,
            CmpOp::Lt => a < b,
            CmpOp::Ge => a >= b,
            CmpOp::Gt => a > b,
        }
    }
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Le => "<=",
            CmpOp::Lt => "<",
            CmpOp::Ge => ">=",
            CmpOp::Gt => ">",
        }
    }
}

/// One validated prediction.
#[derive(Clone, Debug)]
pub struct Prediction {
    /// Unique in the claim; referenced by `caught_by` and `findings`.
    pub name: String,
    pub metric: String,
    pub sweep: String,
    pub kind: PredictionKind,
    /// The claim's hypotheses followed by this prediction's own.
    pub assumptions: Vec<Assumption>,
    /// Where the paper states it (the claim's equation unless the spec says otherwise).
    pub source: String,
    pub note: String,
    /// What this prediction is evidence of.
    pub evidence: Evidence,
    /// The paper's words (required for a statement).
    pub quote: Option<Quote>,
    /// The task or model standing in for the paper's (a proxy only).
    pub proxy: String,
    /// Names of the registry hypotheses it is judged under (their checks are in
    /// `assumptions`).
    pub under: Vec<String>,
    /// Metrics read by measured hypotheses, errata checks and quoted numbers.
    pub extra_metrics: BTreeSet<String>,
    /// A paired contrast (`minus:` of an inequality over means): the variant whose metric
    /// is subtracted, replicate by replicate at each point, from each judged variant's.
    /// The variants share their seed paths ([`crate::plan`]), so a pair sees the same
    /// data and streams: the difference is the methods', not the draws'.
    pub minus: Option<String>,
    /// The one main variant judged (`variant:` of an inequality); `None`: every one.
    pub only: Option<String>,
}

impl Prediction {
    /// Whether this prediction judges `variant`: every main variant, and the negative
    /// controls that name it in `caught_by`.
    /// A contrast does not judge the variant it subtracts; `variant:` restricts the main
    /// variants to one.
    pub fn judges(&self, variant: &Variant) -> bool {
        if variant.negative_control {
            return variant.caught_by.contains(&self.name);
        }
        self.minus.as_deref() != Some(variant.name.as_str())
            && self.only.as_ref().is_none_or(|o| o == &variant.name)
    }

    /// Metrics a judged unit must compute: the metric and those `predicted_value_of` names.
    pub fn metrics_needed(&self, system: &dyn System) -> BTreeSet<String> {
        let mut m = BTreeSet::from([self.metric.clone()]);
        m.extend(self.extra_metrics.iter().cloned());
        if let Some(f) = self.kind.fit_spec() {
            if let Predicted::ValueOf(e) = &f.predicted {
                m.extend(
                    e.variables()
                        .into_iter()
                        .filter(|v| system.metrics().iter().any(|x| x.name == v.as_str())),
                );
            }
        }
        m
    }

    /// Sweep points a fit needs at least; fewer inside the hypotheses is out of regime.
    pub fn min_points(&self) -> usize {
        match self.kind {
            PredictionKind::Exponent(_)
            | PredictionKind::RateAtMost(_)
            | PredictionKind::Bound { .. } => 3,
            _ => 1,
        }
    }
}

/// A validated claim.
#[derive(Clone, Debug)]
pub struct Claim {
    pub file: PathBuf,
    pub id: String,
    pub title: String,
    pub source: Source,
    pub statement: String,
    pub system: &'static dyn System,
    /// The paper (stem of `scorecards/<paper>.yaml`), empty for a claim about the tool.
    pub paper: String,
    pub model: String,
    pub adjacency: String,
    pub params: BTreeMap<String, Expr>,
    /// The theorem's hypotheses (also copied into every prediction's `assumptions`).
    pub assumptions: Vec<Assumption>,
    pub sweeps: Vec<Sweep>,
    pub variants: Vec<Variant>,
    pub predictions: Vec<Prediction>,
    /// Extra metrics computed at every judged unit and tabulated (no verdict).
    pub report_metrics: Vec<String>,
    /// The metrics that are exact computations: the system's
    /// ([`crate::systems::System::exact_metrics`]) and, for an external core, those its
    /// spec declares (`external.exact`). See [`Claim::is_exact`].
    pub exact_metrics: BTreeSet<String>,
    /// Axis labels of the plots, by metric or sweep variable (each key checked to name
    /// one); a name without a label is shown in words.
    pub labels: BTreeMap<String, String>,
    pub discussion: String,
    /// SHA-256 of the file's bytes (hex), for manifests and report headers.
    pub spec_hash: String,
    /// SHA-256 (hex) of the spec without its `discussion` and `labels`: everything that
    /// decides the claim's verdicts. A discussion revised after measuring, or axis words
    /// added, keep it, so the stored verdict rows of `dpclaims stability` stay usable;
    /// any other edit changes it.
    pub judged_hash: String,
    /// Its registration ledger ([`ledger`]), attached by the driver that read the
    /// baseline (`None`: no accepted results yet, or not read). Pages show its amendments.
    pub ledger: Option<Box<ledger::Entry>>,
    /// SHA-256 (hex) of every field of the spec not declared prose
    /// ([`judged::key_hash`], [`judged::PROSE_KEYS`]): part of every result-cache key of
    /// the claim's units, so an edit to anything but prose (an audit's `trials`, a
    /// tolerance, a replicate count) never re-serves values computed for the old spec.
    pub key_hash: String,
    /// An external core's files as the result cache hashes them (every `external.files`
    /// of the claim and its variants, and every argument of a command that names a file,
    /// as the spec's directory reaches it): what a rerun names when it says which file's
    /// edit recomputed the units (`crate::execute::history`). Empty for a built-in system.
    pub core_files: Vec<PathBuf>,
}

impl Claim {
    /// Why this claim is a draft, when it is one: its statement or a prediction's quote
    /// is still a placeholder (`TODO...`, as `dpclaims new` and `dpclaims init` scaffold
    /// them). A draft's rows are shown but never counted for the paper.
    pub fn draft(&self) -> Option<String> {
        let placeholder = |t: &str| t.trim_start().starts_with("TODO");
        if placeholder(&self.statement) {
            return Some("its statement is a TODO placeholder".into());
        }
        self.predictions
            .iter()
            .find(|p| p.quote.as_ref().is_some_and(|q| placeholder(&q.text)))
            .map(|p| format!("the quote of prediction `{}` is a TODO placeholder", p.name))
    }

    /// Whether `metric` is an exact computation (no sampling error): a row on it has no
    /// power line, its replicates must agree to the bit, and a mean over its replicates
    /// is judged as the value itself (one replicate a point suffices).
    pub fn is_exact(&self, metric: &str) -> bool {
        self.exact_metrics.contains(metric)
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    pub fn sweep(&self, name: &str) -> &Sweep {
        self.sweeps
            .iter()
            .find(|s| s.name == name)
            .expect("validated sweep name")
    }

    /// Resolves every variable of one sweep point for one variant: parameters, coupled
    /// variables, the variant's overrides of either (a control may fix a variable the
    /// sweep couples, e.g. `p: "4"` along `p = d`), and axis values, evaluated in
    /// dependency order.
    pub fn resolve(
        &self,
        variant: &Variant,
        profile: &SweepProfile,
        axis_values: &[(String, f64)],
    ) -> Result<BTreeMap<String, f64>, String> {
        let mut defs: BTreeMap<String, &Expr> = BTreeMap::new();
        for (k, e) in &self.params {
            defs.insert(k.clone(), e);
        }
        for (k, e) in &profile.coupled {
            defs.insert(k.clone(), e);
        }
        for (k, e) in &variant.params {
            defs.insert(k.clone(), e);
        }
        let mut values: BTreeMap<String, f64> = BTreeMap::new();
        for (k, v) in axis_values {
            defs.remove(k);
            values.insert(k.clone(), *v);
        }
        let order = topo_order(&defs).map_err(|c| format!("cyclic definitions: {c}"))?;
        for name in order {
            let e = defs[&name];
            let v = e
                .eval_map(&values)
                .map_err(|err| format!("`{name}`: {err}"))?;
            values.insert(name, v);
        }
        Ok(values)
    }
}

/// Dependency order of definitions (names defined outside `defs` are taken as given).
fn topo_order(defs: &BTreeMap<String, &Expr>) -> Result<Vec<String>, String> {
    let mut order = Vec::new();
    let mut state: BTreeMap<&str, u8> = BTreeMap::new(); // 1 = visiting, 2 = done
    fn visit<'a>(
        n: &'a str,
        defs: &'a BTreeMap<String, &Expr>,
        state: &mut BTreeMap<&'a str, u8>,
        order: &mut Vec<String>,
        stack: &mut Vec<&'a str>,
    ) -> Result<(), String> {
        match state.get(n) {
            Some(2) => return Ok(()),
            Some(1) => {
                stack.push(n);
                return Err(stack.join(" -> "));
            }
            _ => {}
        }
        state.insert(n, 1);
        stack.push(n);
        if let Some((key, e)) = defs.get_key_value(n) {
            for v in e.variables() {
                if let Some((k2, _)) = defs.get_key_value(v.as_str()) {
                    visit(k2.as_str(), defs, state, order, stack)?;
                }
            }
            order.push(key.clone());
        }
        stack.pop();
        state.insert(n, 2);
        Ok(())
    }
    for k in defs.keys() {
        let mut stack = Vec::new();
        visit(k.as_str(), defs, &mut state, &mut order, &mut stack)?;
    }
    Ok(order)
}

/// Canonical label of a sweep point, e.g. `d=20 n=400` (shortest round-trip floats).
pub fn point_label(pt: &[(String, f64)]) -> String {
    pt.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// 2^53: the largest count an f64 holds exactly.
pub const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

impl ParamKind {
    /// Checks a resolved value against the constraint.
    pub fn check(self, x: f64) -> Result<(), String> {
        let ok = match self {
            ParamKind::Positive => x.is_finite() && x > 0.0,
            ParamKind::NonNegative => x.is_finite() && x >= 0.0,
            ParamKind::Probability => x > 0.0 && x < 1.0,
            // Counts above 2^53 are not exact in f64 and saturate when converted to a
            // size; none is meaningful (the work estimate refuses far smaller ones).
            ParamKind::IntAtLeast(k) => {
                x.is_finite() && x >= k as f64 && x.fract() == 0.0 && x <= MAX_EXACT_INT
            }
            ParamKind::PositiveOrInfinite => x > 0.0,
            ParamKind::Finite => x.is_finite(),
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                ParamKind::Positive => "must be finite and > 0".into(),
                ParamKind::NonNegative => "must be finite and >= 0".into(),
                ParamKind::Probability => "must be in (0, 1)".into(),
                ParamKind::IntAtLeast(k) => {
                    format!("must be an integer >= {k} and <= 2^53 = {MAX_EXACT_INT}")
                }
                ParamKind::PositiveOrInfinite => "must be > 0".into(),
                ParamKind::Finite => "must be finite".into(),
            })
        }
    }
}
