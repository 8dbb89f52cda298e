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
pub mod expr;
pub mod raw;

pub use assumption::{Assumption, Violation};

use crate::data::InputDist;
use crate::systems::{self, ParamKind, System};
use expr::Expr;
use raw::{RawClaim, RawPrediction, RawProfile, RawTarget};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// A spec problem: the file, the field (a dotted path) and what is wrong.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}: {field}: {message}")]
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

/// The target function of a data spec.
#[derive(Clone, Debug, PartialEq)]
pub enum TargetSpec {
    /// `y = sign(u^T x)`.
    Sign,
    /// `y = sigma_*(<x, mu>)` with these normalised Hermite coefficients.
    SingleIndex(Vec<f64>),
    /// No target (systems that do not simulate data).
    None,
}

/// Validated data settings.
#[derive(Clone, Debug, PartialEq)]
pub struct DataSpec {
    pub input: InputDist,
    pub target: TargetSpec,
    pub label_noise: f64,
}

/// One sweep at one profile: axes (cartesian product), coupled variables, replicates.
#[derive(Clone, Debug)]
pub struct SweepProfile {
    pub axes: Vec<(String, Vec<f64>)>,
    pub coupled: BTreeMap<String, Expr>,
    pub replicates: usize,
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
    pub params: BTreeMap<String, Expr>,
    pub options: BTreeMap<String, String>,
    pub data: DataSpec,
    /// Negative controls: the predictions (by name) that must refute this variant.
    pub caught_by: Vec<String>,
    /// Main variants: prediction name -> the finding that explains its refutation.
    pub findings: BTreeMap<String, String>,
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
    /// `metric <op> rhs` at every sweep point and replicate.
    Inequality { op: CmpOp, rhs: Expr },
}

impl PredictionKind {
    pub fn name(&self) -> &'static str {
        match self {
            PredictionKind::Exponent(_) => "exponent",
            PredictionKind::RateAtMost(_) => "rate_at_most",
            PredictionKind::Event { .. } => "event",
            PredictionKind::Inequality { .. } => "inequality",
        }
    }
}

/// The predicted exponent: a number, or the local log-log slope over the sweep points
/// of an expression — a theorem's bound (`RateOf`, over the point's variables) or an
/// exact finite-size value (`ValueOf`, which may also name metrics the system computes
/// from theory, e.g. an exact expectation; their mean over replicates is used).
#[derive(Clone, Debug)]
pub enum Predicted {
    Value(f64),
    RateOf(Expr),
    ValueOf(Expr),
}

impl Predicted {
    /// The expression whose local slope is the prediction, if any.
    pub fn expr(&self) -> Option<&Expr> {
        match self {
            Predicted::Value(_) => None,
            Predicted::RateOf(e) | Predicted::ValueOf(e) => Some(e),
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
}

impl Prediction {
    /// Whether this prediction judges `variant`: every main variant, and the negative
    /// controls that name it in `caught_by`.
    pub fn judges(&self, variant: &Variant) -> bool {
        !variant.negative_control || variant.caught_by.contains(&self.name)
    }

    /// Metrics a judged unit must compute: the metric and those `predicted_value_of` names.
    pub fn metrics_needed(&self, system: &dyn System) -> BTreeSet<String> {
        let mut m = BTreeSet::from([self.metric.clone()]);
        if let PredictionKind::Exponent(f) | PredictionKind::RateAtMost(f) = &self.kind {
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
            PredictionKind::Exponent(_) | PredictionKind::RateAtMost(_) => 3,
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
    pub discussion: String,
    /// SHA-256 of the file's bytes (hex), for manifests and report headers.
    pub spec_hash: String,
}

impl Claim {
    pub fn sweep(&self, name: &str) -> &Sweep {
        self.sweeps
            .iter()
            .find(|s| s.name == name)
            .expect("validated sweep name")
    }

    /// Resolves every variable of one sweep point for one variant: parameters (with the
    /// variant's overrides), axis values and coupled variables, evaluated in dependency
    /// order.
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
        for (k, e) in &variant.params {
            defs.insert(k.clone(), e);
        }
        for (k, e) in &profile.coupled {
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

/// Loads and validates every `*.yaml` file of a directory (sorted by file name), or the
/// given files.
pub fn load_claims(paths: &[PathBuf]) -> Result<Vec<Claim>, SpecError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let rd = std::fs::read_dir(p).map_err(|e| SpecError {
                file: p.display().to_string(),
                field: "(directory)".into(),
                message: e.to_string(),
            })?;
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            v.sort();
            files.extend(v);
        } else {
            files.push(p.clone());
        }
    }
    let mut claims = Vec::new();
    let mut ids = BTreeSet::new();
    for f in files {
        let c = load_claim(&f)?;
        if !ids.insert(c.id.clone()) {
            return Err(SpecError {
                file: f.display().to_string(),
                field: "id".into(),
                message: format!("duplicate claim id `{}`", c.id),
            });
        }
        claims.push(c);
    }
    Ok(claims)
}

/// Reads and validates one claim file.
pub fn load_claim(path: &Path) -> Result<Claim, SpecError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| SpecError {
        file: file.clone(),
        field: "(file)".into(),
        message: e.to_string(),
    })?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| SpecError {
        file: file.clone(),
        field: "(file)".into(),
        message: "not UTF-8".into(),
    })?;
    let raw: RawClaim = raw::from_yaml(&text).map_err(|(field, message)| SpecError {
        file: file.clone(),
        field,
        message,
    })?;
    let hash = {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(&bytes);
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    validate(raw, path, hash)
}

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, field: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }
}

fn data_spec(ctx: &Ctx, field: &str, raw: &raw::RawData) -> Result<DataSpec, SpecError> {
    let input = match raw.input.as_deref().unwrap_or("gaussian") {
        "gaussian" => InputDist::Gaussian,
        "sphere" => InputDist::Sphere,
        other => {
            return Err(ctx.err(
                format!("{field}.input"),
                format!("unknown input distribution `{other}` (known: gaussian, sphere)"),
            ))
        }
    };
    let target = match &raw.target {
        None => TargetSpec::None,
        Some(RawTarget::Name(s)) if s == "sign" => TargetSpec::Sign,
        Some(RawTarget::Name(s)) if s == "none" => TargetSpec::None,
        Some(RawTarget::Name(s)) => {
            return Err(ctx.err(
                format!("{field}.target"),
                format!("unknown target `{s}` (known: sign, none, {{single_index: [hermite coefficients]}})"),
            ))
        }
        Some(RawTarget::SingleIndex { single_index }) => {
            if single_index.is_empty() || single_index.iter().any(|c| !c.is_finite()) {
                return Err(ctx.err(
                    format!("{field}.target.single_index"),
                    "needs a non-empty list of finite Hermite coefficients",
                ));
            }
            TargetSpec::SingleIndex(single_index.clone())
        }
    };
    let label_noise = raw.label_noise.unwrap_or(0.0);
    if !(label_noise.is_finite() && label_noise >= 0.0) {
        return Err(ctx.err(format!("{field}.label_noise"), "must be finite and >= 0"));
    }
    Ok(DataSpec {
        input,
        target,
        label_noise,
    })
}

fn sweep_profile(ctx: &Ctx, field: &str, raw: &RawProfile) -> Result<SweepProfile, SpecError> {
    if raw.axes.is_empty() {
        return Err(ctx.err(format!("{field}.axes"), "a sweep needs at least one axis"));
    }
    let mut axes = Vec::new();
    for (k, v) in &raw.axes {
        if v.is_empty() {
            return Err(ctx.err(format!("{field}.axes.{k}"), "empty sweep axis"));
        }
        if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
            return Err(ctx.err(
                format!("{field}.axes.{k}"),
                format!("non-finite value {bad}"),
            ));
        }
        axes.push((k.clone(), v.clone()));
    }
    if raw.replicates == 0 {
        return Err(ctx.err(format!("{field}.replicates"), "must be at least 1"));
    }
    for k in raw.coupled.keys() {
        if raw.axes.contains_key(k) {
            return Err(ctx.err(
                format!("{field}.coupled.{k}"),
                "a variable cannot be both an axis and coupled",
            ));
        }
    }
    Ok(SweepProfile {
        axes,
        coupled: raw.coupled.clone(),
        replicates: raw.replicates,
    })
}

fn check_option(
    ctx: &Ctx,
    field: &str,
    system: &dyn System,
    key: &str,
    value: &str,
) -> Result<(), SpecError> {
    match system.options().iter().find(|o| o.name == key) {
        None => Err(ctx.err(
            format!("{field}.{key}"),
            format!(
                "unknown option for system `{}` (known: {})",
                system.name(),
                system
                    .options()
                    .iter()
                    .map(|o| o.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        Some(o) if !o.values.contains(&value) => Err(ctx.err(
            format!("{field}.{key}"),
            format!("unknown value `{value}` (allowed: {})", o.values.join(", ")),
        )),
        Some(_) => Ok(()),
    }
}

fn validate(raw: RawClaim, path: &Path, spec_hash: String) -> Result<Claim, SpecError> {
    let file = path.display().to_string();
    let ctx = Ctx { file: &file };
    if raw.id.is_empty()
        || !raw
            .id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(ctx.err("id", "must be non-empty lowercase letters, digits and '-'"));
    }
    let system = systems::by_name(&raw.system).ok_or_else(|| {
        ctx.err(
            "system",
            format!(
                "unknown system `{}` (known: {})",
                raw.system,
                systems::all()
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    if raw.model != system.model() {
        return Err(ctx.err(
            "model",
            format!(
                "system `{}` simulates model `{}`, not `{}`",
                system.name(),
                system.model(),
                raw.model
            ),
        ));
    }
    let adjacency = raw.adjacency.clone();
    if !["replace_one", "add_remove", "not_applicable"].contains(&adjacency.as_str()) {
        return Err(ctx.err(
            "adjacency",
            "must be replace_one (sensitivity 2C/n of the clipped mean), add_remove (C/n) or not_applicable",
        ));
    }
    for (k, v) in &raw.options {
        check_option(&ctx, "options", system, k, v)?;
    }
    let base_data = data_spec(&ctx, "data", &raw.data)?;
    // Sweeps.
    if raw.sweeps.is_empty() {
        return Err(ctx.err("sweeps", "at least one sweep is needed"));
    }
    let mut sweeps = Vec::new();
    for (name, s) in &raw.sweeps {
        sweeps.push(Sweep {
            name: name.clone(),
            quick: sweep_profile(&ctx, &format!("sweeps.{name}.quick"), &s.quick)?,
            full: sweep_profile(&ctx, &format!("sweeps.{name}.full"), &s.full)?,
        });
    }
    // Variants.
    if raw.variants.is_empty() {
        return Err(ctx.err("variants", "at least one variant is needed"));
    }
    let mut variants: Vec<Variant> = Vec::new();
    for (i, v) in raw.variants.iter().enumerate() {
        let field = format!("variants[{i}]");
        if v.name.is_empty() || variants.iter().any(|w| w.name == v.name) {
            return Err(ctx.err(
                format!("{field}.name"),
                format!("empty or duplicate variant name `{}`", v.name),
            ));
        }
        for k in v.params.keys() {
            if !raw.params.contains_key(k) {
                return Err(ctx.err(
                    format!("{field}.params.{k}"),
                    "a variant may only override a parameter defined in `params`",
                ));
            }
        }
        let mut options = raw.options.clone();
        for (k, val) in &v.options {
            check_option(&ctx, &format!("{field}.options"), system, k, val)?;
            options.insert(k.clone(), val.clone());
        }
        for o in system.options() {
            options
                .entry(o.name.to_string())
                .or_insert_with(|| o.values[0].to_string());
        }
        let data = match &v.data {
            Some(d) => {
                let merged = raw::RawData {
                    input: d.input.clone().or(raw.data.input.clone()),
                    target: d.target.clone().or(raw.data.target.clone()),
                    label_noise: d.label_noise.or(raw.data.label_noise),
                };
                data_spec(&ctx, &format!("{field}.data"), &merged)?
            }
            None => base_data.clone(),
        };
        variants.push(Variant {
            name: v.name.clone(),
            description: v.description.clone(),
            negative_control: v.negative_control,
            params: v.params.clone(),
            options,
            data,
            caught_by: v.caught_by.clone(),
            findings: v.findings.clone(),
        });
    }
    if !variants.iter().any(|v| v.negative_control) {
        return Err(ctx.err(
            "variants",
            "every claim carries at least one negative control (a variant with negative_control: true)",
        ));
    }
    if system.needs_target() {
        for v in &variants {
            if v.data.target == TargetSpec::None {
                return Err(ctx.err(
                    "data.target",
                    format!("system `{}` needs a target", system.name()),
                ));
            }
        }
    }
    let assumptions = assumptions(&ctx, "assumptions", &raw.assumptions)?;
    // Predictions.
    if raw.predictions.is_empty() {
        return Err(ctx.err("predictions", "at least one prediction is needed"));
    }
    let mut predictions: Vec<Prediction> = Vec::new();
    for (i, p) in raw.predictions.into_iter().enumerate() {
        let field = format!("predictions[{i}]");
        let p = prediction(&ctx, &field, p, system, &sweeps, &assumptions)?;
        if predictions.iter().any(|q| q.name == p.name) {
            return Err(ctx.err(
                format!("{field}.name"),
                format!("duplicate prediction name `{}`", p.name),
            ));
        }
        predictions.push(p);
    }
    for p in &mut predictions {
        if p.source.is_empty() {
            p.source = raw.source.equation.clone();
        }
    }
    check_roles(&ctx, &variants, &predictions)?;
    for (i, m) in raw.report_metrics.iter().enumerate() {
        if !system.metrics().iter().any(|x| x.name == m.as_str()) {
            return Err(ctx.err(
                format!("report_metrics[{i}]"),
                format!("unknown metric `{m}` for system `{}`", system.name()),
            ));
        }
    }
    let claim = Claim {
        file: path.to_path_buf(),
        id: raw.id,
        title: raw.title,
        source: Source {
            paper: raw.source.paper,
            section: raw.source.section,
            equation: raw.source.equation,
        },
        statement: raw.statement.trim().to_string(),
        system,
        model: raw.model,
        adjacency,
        params: raw.params,
        assumptions,
        sweeps,
        variants,
        predictions,
        report_metrics: raw.report_metrics,
        discussion: raw.discussion.unwrap_or_default().trim().to_string(),
        spec_hash,
    };
    check_points(&ctx, &claim)?;
    Ok(claim)
}

fn prediction(
    ctx: &Ctx,
    field: &str,
    p: RawPrediction,
    system: &dyn System,
    sweeps: &[Sweep],
    claim_assumptions: &[Assumption],
) -> Result<Prediction, SpecError> {
    let common = p.common();
    if common.legacy_expected {
        return Err(ctx.err(
            format!("{field}.expected"),
            "`expected`/`expected_full` were removed: a verdict comes from the prediction \
             (registered from the paper) and the measurement, never from a recorded outcome. \
             Name the predictions that must catch each negative control in its `caught_by`, \
             and explain a refuted main variant in its `findings` (see claims/README.md)",
        ));
    }
    if common.name.is_empty()
        || !common
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ctx.err(
            format!("{field}.name"),
            "must be non-empty letters, digits, '-' or '_'",
        ));
    }
    if !system
        .metrics()
        .iter()
        .any(|m| m.name == common.metric.as_str())
    {
        return Err(ctx.err(
            format!("{field}.metric"),
            format!(
                "unknown metric `{}` for system `{}` (known: {})",
                common.metric,
                system.name(),
                system
                    .metrics()
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if let Some(m) = system.metrics().iter().find(|m| {
        m.name == common.metric.as_str() && system.self_checks().contains(&m.name)
    }) {
        return Err(ctx.err(
            format!("{field}.metric"),
            format!(
                "`{}` is computed by the same code that set the quantity it is compared with \
                 ({}); a check on it cannot fail. Judge an independent computation instead",
                m.name, m.doc
            ),
        ));
    }
    let sweep = sweeps
        .iter()
        .find(|s| &s.name == common.sweep)
        .ok_or_else(|| {
            ctx.err(
                format!("{field}.sweep"),
                format!("unknown sweep `{}`", common.sweep),
            )
        })?;
    let mut all_assumptions = claim_assumptions.to_vec();
    all_assumptions.extend(assumptions(
        ctx,
        &format!("{field}.assumptions"),
        common.assumptions,
    )?);
    let fit_spec = |f: &raw::RawFit| -> Result<FitSpec, SpecError> {
        let is_var = |prof: &SweepProfile| {
            prof.axes.iter().any(|(k, _)| k == &f.x) || prof.coupled.contains_key(&f.x)
        };
        if !(is_var(&sweep.quick) && is_var(&sweep.full)) {
            return Err(ctx.err(
                format!("{field}.x"),
                format!(
                    "`{}` is not an axis or coupled variable of sweep `{}` at both profiles",
                    f.x, sweep.name
                ),
            ));
        }
        let predicted = match (&f.predicted, &f.predicted_rate_of, &f.predicted_value_of) {
            (Some(v), None, None) if v.is_finite() => Predicted::Value(*v),
            (None, Some(e), None) => Predicted::RateOf(e.clone()),
            (None, None, Some(e)) => Predicted::ValueOf(e.clone()),
            _ => return Err(ctx.err(
                format!("{field}.predicted"),
                "give exactly one of `predicted` (a number), `predicted_rate_of` (a bound's \
                 expression) or `predicted_value_of` (an exact finite-size value)",
            )),
        };
        if !(f.tolerance.is_finite() && f.tolerance >= 0.0) {
            return Err(ctx.err(format!("{field}.tolerance"), "must be finite and >= 0"));
        }
        let tolerance_reason = match &f.tolerance_reason {
            Some(r) if !r.trim().is_empty() => r.trim().to_string(),
            _ => {
                return Err(ctx.err(
                    format!("{field}.tolerance_reason"),
                    "every tolerance needs a one-line reason (CI width, a known log correction, ...)",
                ))
            }
        };
        if let Predicted::Value(v) = predicted {
            let rate = matches!(p, RawPrediction::RateAtMost(_));
            if vacuous(rate, v, f.tolerance) {
                return Err(ctx.err(
                    format!("{field}.tolerance"),
                    format!(
                        "tolerance {} makes the prediction vacuous: it admits a zero slope \
                         as well as the predicted {v}",
                        f.tolerance
                    ),
                ));
            }
        }
        let confidence = f.confidence.unwrap_or(0.95);
        if !(confidence > 0.0 && confidence < 1.0) {
            return Err(ctx.err(format!("{field}.confidence"), "must be in (0, 1)"));
        }
        for prof in [&sweep.quick, &sweep.full] {
            if prof.axes.iter().map(|(_, v)| v.len()).product::<usize>() < 3 {
                return Err(ctx.err(
                    format!("{field}.sweep"),
                    "a fit needs at least 3 sweep points",
                ));
            }
        }
        Ok(FitSpec {
            x: f.x.clone(),
            predicted,
            tolerance: f.tolerance,
            divide_by: f.divide_by.clone(),
            confidence,
            bootstrap: f.bootstrap.unwrap_or(1000),
            tolerance_reason,
        })
    };
    let kind = match &p {
        RawPrediction::Exponent(f) => PredictionKind::Exponent(fit_spec(f)?),
        RawPrediction::RateAtMost(f) => PredictionKind::RateAtMost(fit_spec(f)?),
        RawPrediction::Event(raw::RawEvent {
            alpha, confidence, ..
        }) => {
            if !(*alpha > 0.0 && *alpha < 1.0) {
                return Err(ctx.err(format!("{field}.alpha"), "must be in (0, 1)"));
            }
            let confidence = confidence.unwrap_or(0.95);
            if !(confidence > 0.0 && confidence < 1.0) {
                return Err(ctx.err(format!("{field}.confidence"), "must be in (0, 1)"));
            }
            PredictionKind::Event {
                alpha: *alpha,
                confidence,
            }
        }
        RawPrediction::Inequality(raw::RawInequality { op, rhs, .. }) => {
            let op = match op.as_str() {
                "<=" => CmpOp::Le,
                "<" => CmpOp::Lt,
                ">=" => CmpOp::Ge,
                ">" => CmpOp::Gt,
                o => {
                    return Err(ctx.err(
                        format!("{field}.op"),
                        format!("unknown operator `{o}` (use <=, <, >=, >)"),
                    ))
                }
            };
            PredictionKind::Inequality {
                op,
                rhs: rhs.clone(),
            }
        }
    };
    let common = p.common();
    Ok(Prediction {
        name: common.name.clone(),
        metric: common.metric.clone(),
        sweep: common.sweep.clone(),
        kind,
        assumptions: all_assumptions,
        source: common.source.clone().unwrap_or_default(),
        note: common.note.clone().unwrap_or_default(),
    })
}

fn assumptions(
    ctx: &Ctx,
    field: &str,
    raw: &[raw::RawAssumption],
) -> Result<Vec<Assumption>, SpecError> {
    raw.iter()
        .enumerate()
        .map(|(i, a)| {
            let (text, source) = match a {
                raw::RawAssumption::Plain(t) => (t.as_str(), ""),
                raw::RawAssumption::Sourced(s) => (s.require.as_str(), s.source.as_str()),
            };
            Assumption::parse(text, source).map_err(|m| ctx.err(format!("{field}[{i}]"), m))
        })
        .collect()
}

/// Negative controls name the predictions that must catch them; main variants may
/// explain a refutation with a finding; both reference existing predictions.
fn check_roles(
    ctx: &Ctx,
    variants: &[Variant],
    predictions: &[Prediction],
) -> Result<(), SpecError> {
    let known = |n: &String| predictions.iter().any(|p| &p.name == n);
    let names = || {
        predictions
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, v) in variants.iter().enumerate() {
        let field = format!("variants[{i}]");
        if v.negative_control {
            if v.caught_by.is_empty() {
                return Err(ctx.err(
                    format!("{field}.caught_by"),
                    format!(
                        "negative control `{}` must name the predictions that must catch it (known: {})",
                        v.name,
                        names()
                    ),
                ));
            }
            if !v.findings.is_empty() {
                return Err(ctx.err(
                    format!("{field}.findings"),
                    "a negative control has no findings: its refutation is what it is for",
                ));
            }
        } else if !v.caught_by.is_empty() {
            return Err(ctx.err(
                format!("{field}.caught_by"),
                "only a negative control (negative_control: true) is caught",
            ));
        }
        for n in v.caught_by.iter().chain(v.findings.keys()) {
            if !known(n) {
                return Err(ctx.err(
                    format!("{field}"),
                    format!("unknown prediction `{n}` (known: {})", names()),
                ));
            }
        }
        for (n, text) in &v.findings {
            if text.trim().is_empty() {
                return Err(ctx.err(format!("{field}.findings.{n}"), "empty finding"));
            }
        }
    }
    Ok(())
}

/// Evaluates every point of every sweep, variant and profile: unknown symbols, cycles,
/// non-finite values and the system's parameter constraints are reported here, before
/// anything runs.
fn check_points(ctx: &Ctx, claim: &Claim) -> Result<(), SpecError> {
    // Unknown symbols, with the field that uses them.
    for sweep in &claim.sweeps {
        for (pname, prof) in [("quick", &sweep.quick), ("full", &sweep.full)] {
            let mut defined: BTreeSet<String> = claim.params.keys().cloned().collect();
            defined.extend(prof.axes.iter().map(|(k, _)| k.clone()));
            defined.extend(prof.coupled.keys().cloned());
            let mut exprs: Vec<(String, &Expr)> = Vec::new();
            for (k, e) in &claim.params {
                exprs.push((format!("params.{k}"), e));
            }
            for v in &claim.variants {
                for (k, e) in &v.params {
                    exprs.push((format!("variants.{}.params.{k}", v.name), e));
                }
            }
            for (k, e) in &prof.coupled {
                exprs.push((format!("sweeps.{}.{pname}.coupled.{k}", sweep.name), e));
            }
            for (i, p) in claim.predictions.iter().enumerate() {
                if p.sweep != sweep.name {
                    continue;
                }
                match &p.kind {
                    PredictionKind::Exponent(f) | PredictionKind::RateAtMost(f) => {
                        if let Some(e) = &f.divide_by {
                            exprs.push((format!("predictions[{i}].divide_by"), e));
                        }
                        if let Predicted::RateOf(e) = &f.predicted {
                            exprs.push((format!("predictions[{i}].predicted_rate_of"), e));
                        }
                        if let Predicted::ValueOf(e) = &f.predicted {
                            for s in e.variables() {
                                let metric =
                                    claim.system.metrics().iter().any(|m| m.name == s.as_str());
                                if !metric && !defined.contains(&s) {
                                    return Err(ctx.err(
                                        format!("predictions[{i}].predicted_value_of"),
                                        format!("unknown symbol `{s}` in `{e}` (neither a variable nor a metric of system `{}`)", claim.system.name()),
                                    ));
                                }
                            }
                        }
                    }
                    PredictionKind::Inequality { rhs, .. } => {
                        exprs.push((format!("predictions[{i}].rhs"), rhs))
                    }
                    PredictionKind::Event { .. } => {}
                }
                for (j, a) in p.assumptions.iter().enumerate() {
                    for s in a.variables() {
                        if !defined.contains(&s) {
                            return Err(ctx.err(
                                format!("predictions[{i}].assumptions[{j}]"),
                                format!("unknown symbol `{s}` in `{}`", a.text),
                            ));
                        }
                    }
                }
            }
            for (field, e) in exprs {
                for s in e.variables() {
                    if !defined.contains(&s) {
                        return Err(ctx.err(field, format!("unknown symbol `{s}` in `{e}`")));
                    }
                }
            }
            for pinfo in claim.system.params() {
                if !pinfo.optional && !defined.contains(pinfo.name) {
                    return Err(ctx.err(
                        "params",
                        format!(
                            "system `{}` needs parameter `{}` ({})",
                            claim.system.name(),
                            pinfo.name,
                            pinfo.doc
                        ),
                    ));
                }
            }
            // Values at every point.
            for v in &claim.variants {
                for pt in prof.axis_points() {
                    let label = point_label(&pt);
                    let vals = claim.resolve(v, prof, &pt).map_err(|m| {
                        ctx.err(
                            format!("sweeps.{}.{pname}", sweep.name),
                            format!("variant `{}`, point {label}: {m}", v.name),
                        )
                    })?;
                    for pinfo in claim.system.params() {
                        let Some(&x) = vals.get(pinfo.name) else {
                            continue;
                        };
                        if let Err(m) = pinfo.kind.check(x) {
                            return Err(ctx.err(
                                format!("params.{}", pinfo.name),
                                format!("{m} (got {x} at sweep `{}` {pname}, variant `{}`, point {label})", sweep.name, v.name),
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Canonical label of a sweep point, e.g. `d=20 n=400` (shortest round-trip floats).
pub fn point_label(pt: &[(String, f64)]) -> String {
    pt.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl ParamKind {
    /// Checks a resolved value against the constraint.
    pub fn check(self, x: f64) -> Result<(), String> {
        let ok = match self {
            ParamKind::Positive => x.is_finite() && x > 0.0,
            ParamKind::NonNegative => x.is_finite() && x >= 0.0,
            ParamKind::Probability => x > 0.0 && x < 1.0,
            ParamKind::IntAtLeast(k) => x.is_finite() && x >= k as f64 && x.fract() == 0.0,
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
                ParamKind::IntAtLeast(k) => format!("must be an integer >= {k}"),
                ParamKind::PositiveOrInfinite => "must be > 0".into(),
                ParamKind::Finite => "must be finite".into(),
            })
        }
    }
}
