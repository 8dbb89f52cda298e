//! The raw, strictly typed shape of a claim file (serde; unknown fields are errors).
//! Only [`super::load_claim`] turns it into a validated [`super::Claim`]; the YAML
//! parser (serde_yaml, deprecated upstream) is confined to [`from_yaml`].
use super::expr::Expr;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::collections::BTreeMap;

use super::raw_parts::unique_keys;
pub use super::raw_parts::{
    RawConstant, RawData, RawExternal, RawExternalAudit, RawTarget, RawVariantExternal,
};

/// Deepest nesting of flow collections a spec may use: the YAML parser takes time quadratic in
/// the depth, so deeper input is refused before parsing (serde_yaml's recursion limit: 128).
pub const MAX_NESTING: usize = 128;

/// Parses YAML into `T`; on error returns (field path, message).
pub fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, (String, String)> {
    if let Some(line) = too_deep(text) {
        return Err((
            "(top level)".to_string(),
            format!("collections nested more than {MAX_NESTING} levels deep (line {line})"),
        ));
    }
    serde_yaml::from_str(text).map_err(|e| split_path(&e.to_string()))
}

/// Parses a claim file ([`from_yaml`]), locating an error inside a prediction at its index
/// (`predictions[1].tolerance`), which serde_yaml does not report for hand-read elements.
pub fn claim_from_yaml(text: &str) -> Result<RawClaim, (String, String)> {
    from_yaml::<RawClaim>(text).map_err(|(field, message)| {
        let Some(inner) = field.strip_prefix("predictions") else {
            return (field, message);
        };
        if inner.starts_with('[') {
            return (field, message);
        }
        let inner = inner.trim_start_matches('.');
        let located = serde_yaml::from_str::<serde_yaml::Value>(text)
            .ok()
            .and_then(|v| v.get("predictions").and_then(|p| p.as_sequence()).cloned())
            .and_then(|items| {
                items
                    .iter()
                    .position(|item| serde_yaml::from_value::<RawPrediction>(item.clone()).is_err())
            });
        match located {
            Some(i) if inner.is_empty() => (format!("predictions[{i}]"), message),
            Some(i) => (format!("predictions[{i}].{inner}"), message),
            None => (field, message),
        }
    })
}

/// The spec re-serialised without its top-level `discussion` and `labels` (`None` when
/// the text is not a YAML mapping): the part of a spec that decides its verdicts
/// ([`super::Claim::judged_hash`]). Prose and axis words decide no verdict, so editing
/// them keeps the stored stability rows usable.
pub fn without_discussion(text: &str) -> Option<String> {
    let mut v: serde_yaml::Value = serde_yaml::from_str(text).ok()?;
    let m = v.as_mapping_mut()?;
    m.remove("discussion");
    m.remove("labels");
    serde_yaml::to_string(&v).ok()
}

/// serde_yaml prefixes the path ("a.b[0].c: ...") when the error is not at the root; a
/// prediction's fields add theirs (`predictions[1]: tolerance: ...`, see
/// [`RawPrediction`]'s deserialisation): (field path, message).
fn split_path(msg: &str) -> (String, String) {
    let is_path = |p: &str| {
        !p.is_empty()
            && !p.contains(' ')
            && !p.starts_with("unknown")
            && p.chars()
                .all(|c| c.is_alphanumeric() || "_-.[]".contains(c))
    };
    match msg.split_once(": ") {
        Some((path, rest)) if is_path(path) => {
            let mut path = path.to_string();
            let mut rest = rest.to_string();
            while let Some((inner, r)) = rest.clone().split_once(": ") {
                if !is_path(inner) {
                    break;
                }
                path = format!("{path}.{inner}");
                rest = r.to_string();
            }
            (path, rest)
        }
        _ => ("(top level)".to_string(), msg.to_string()),
    }
}

/// The line of the first flow collection nested deeper than [`MAX_NESTING`], if any (quotes and
/// comments skipped; a line at column 0 starts a new top-level entry, where none can be open).
fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with(|c: char| !c.is_whitespace() && c != ']' && c != '}') {
            depth = 0;
        }
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match quote {
                Some('"') if c == '\\' => {
                    chars.next();
                }
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    '#' if prev.is_whitespace() => break,
                    '"' | '\'' if prev.is_whitespace() || "[{,:".contains(prev) => quote = Some(c),
                    '[' | '{' => {
                        depth += 1;
                        if depth > MAX_NESTING {
                            return Some(n + 1);
                        }
                    }
                    ']' | '}' => depth = depth.saturating_sub(1),
                    _ => {}
                },
            }
            prev = c;
        }
    }
    None
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawClaim {
    pub id: String,
    pub title: String,
    pub source: RawSource,
    pub statement: String,
    pub system: String,
    /// The paper this claim is about: the stem of `scorecards/<paper>.yaml`, whose
    /// `hypotheses:` the predictions reference with `under`.
    #[serde(default)]
    pub paper: Option<String>,
    /// The model the system simulates. Fixed by the system, so it may be left out (it is
    /// then the system's); when given it must be the system's. Descriptive for
    /// `system: external`.
    #[serde(default)]
    pub model: Option<String>,
    /// replace_one | add_remove | not_applicable (DESIGN 3: explicit in every spec of a
    /// built-in system; optional for `system: external`).
    #[serde(default)]
    pub adjacency: Option<String>,
    /// `system: external` only: the core's command, the metrics asked of it, the time
    /// limit of one answer.
    #[serde(default)]
    pub external: Option<RawExternal>,
    #[serde(default)]
    pub data: RawData,
    #[serde(default, deserialize_with = "unique_keys")]
    pub options: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub params: BTreeMap<String, Expr>,
    /// The theorem's hypotheses, checked at every sweep point (e.g. "n >= d*ln(d)^2").
    #[serde(default)]
    pub assumptions: Vec<RawAssumption>,
    #[serde(deserialize_with = "unique_keys")]
    pub sweeps: BTreeMap<String, RawSweep>,
    pub variants: Vec<RawVariant>,
    pub predictions: Vec<RawPrediction>,
    /// Extra metrics tabulated in the report (no verdict).
    #[serde(default)]
    pub report_metrics: Vec<String>,
    /// Words (with units) for metrics and sweep variables on the plots' axes, e.g.
    /// `{test_loss: "test loss (squared error)", n: "training samples n"}`. Optional:
    /// a name without a label is shown in words (`test_loss` → "test loss").
    #[serde(default, deserialize_with = "unique_keys")]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub discussion: Option<String>,
}

/// A hypothesis: `"lhs <op> rhs"`, or the same with the place in the paper it comes from.
/// (Deserialised by hand rather than `#[serde(untagged)]`, whose only error is "did not
/// match any variant": a mistake inside the map is reported with its field.)
#[derive(Debug, Clone)]
pub enum RawAssumption {
    Plain(String),
    Sourced(RawSourcedAssumption),
}

impl<'de> Deserialize<'de> for RawAssumption {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawAssumption;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a hypothesis \"lhs <op> rhs\" or {require: ..., source: ...}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawAssumption, E> {
                Ok(RawAssumption::Plain(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<RawAssumption, A::Error> {
                RawSourcedAssumption::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(RawAssumption::Sourced)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSourcedAssumption {
    pub require: String,
    pub source: String,
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    pub paper: String,
    pub section: String,
    pub equation: String,
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    pub quick: RawProfile,
    pub full: RawProfile,
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    #[serde(deserialize_with = "unique_keys")]
    pub axes: BTreeMap<String, Vec<f64>>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub coupled: BTreeMap<String, Expr>,
    pub replicates: super::replicates::RawReplicates,
}

pub use super::raw_variant::RawVariant;

pub use super::evidence::{RawConfirmation, RawErratum, RawFinding, RawQuotedFinding};

/// Fields every prediction has.
pub struct Common<'a> {
    pub name: &'a String,
    pub metric: &'a String,
    pub sweep: &'a String,
    pub assumptions: &'a Vec<RawAssumption>,
    pub source: &'a Option<String>,
    /// Fields of the old format (a verdict pinned after measuring): rejected on load.
    pub legacy_expected: bool,
    pub note: &'a Option<String>,
    pub evidence: &'a Option<String>,
    pub quote: &'a Option<super::evidence::Quote>,
    pub proxy: &'a Option<String>,
    pub under: &'a Vec<String>,
}

/// A prediction, tagged by `kind`. The common fields (metric, sweep, expected, ...) are
/// spelled out in each kind's struct rather than shared with `#[serde(flatten)]`,
/// because serde ignores `deny_unknown_fields` under `flatten` and a typo must stay an
/// error; [`RawPrediction::common`] gives them back uniformly.
///
/// Deserialised by hand: `#[serde(tag = "kind")]` buffers the map and loses the path
/// of an error inside it ("predictions: invalid type: map, expected a string"). Here the
/// map is read as YAML, `kind` taken out, and the rest parsed as the kind's struct by
/// serde_yaml, whose errors name the field: "predictions[1].tolerance: invalid type".
#[derive(Debug)]
pub enum RawPrediction {
    Exponent(RawFit),
    RateAtMost(RawFit),
    Event(RawEvent),
    Inequality(RawInequality),
    Bound(RawBound),
}

impl<'de> Deserialize<'de> for RawPrediction {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = serde_yaml::Mapping::deserialize(d)?;
        let kind = match map.remove("kind") {
            Some(serde_yaml::Value::String(k)) => k,
            Some(_) => return Err(D::Error::custom("kind: must be a string")),
            None => return Err(D::Error::missing_field("kind")),
        };
        // Back to text and parsed again, so that serde_yaml tracks the path; the
        // positions of that text are not the file's, so they are dropped.
        let text = serde_yaml::to_string(&map).map_err(D::Error::custom)?;
        fn parse<T: serde::de::DeserializeOwned, E: Error>(text: &str) -> Result<T, E> {
            serde_yaml::from_str(text).map_err(|e| {
                let m = e.to_string();
                let m = match m.rfind(" at line ") {
                    Some(i) if m[i..].contains(" column ") => m[..i].to_string(),
                    _ => m,
                };
                E::custom(m)
            })
        }
        match kind.as_str() {
            "exponent" => parse(&text).map(RawPrediction::Exponent),
            "rate_at_most" => parse(&text).map(RawPrediction::RateAtMost),
            "event" => parse(&text).map(RawPrediction::Event),
            "inequality" => parse(&text).map(RawPrediction::Inequality),
            "bound" => parse(&text).map(RawPrediction::Bound),
            other => Err(D::Error::custom(format!(
                "kind: unknown kind `{other}` (known: exponent, rate_at_most, event, inequality, bound)"
            ))),
        }
    }
}

impl RawPrediction {
    pub fn common(&self) -> Common<'_> {
        macro_rules! c {
            ($f:expr) => {
                Common {
                    name: &$f.name,
                    metric: &$f.metric,
                    sweep: &$f.sweep,
                    assumptions: &$f.assumptions,
                    source: &$f.source,
                    legacy_expected: $f.expected.is_some() || $f.expected_full.is_some(),
                    note: &$f.note,
                    evidence: &$f.evidence,
                    quote: &$f.quote,
                    proxy: &$f.proxy,
                    under: &$f.under,
                }
            };
        }
        match self {
            RawPrediction::Exponent(f) | RawPrediction::RateAtMost(f) => c!(f),
            RawPrediction::Event(f) => c!(f),
            RawPrediction::Inequality(f) => c!(f),
            RawPrediction::Bound(f) => c!(f),
        }
    }
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFit {
    /// Names the prediction (for `caught_by` and `findings`); unique in the file.
    pub name: String,
    pub metric: String,
    pub sweep: String,
    /// Where the paper states this prediction (default: the claim's equation).
    #[serde(default)]
    pub source: Option<String>,
    /// Hypotheses of this prediction only, added to the claim's `assumptions`.
    #[serde(default)]
    pub assumptions: Vec<RawAssumption>,
    /// Removed (rejected on load): not in the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub expected: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub expected_full: Option<IgnoredAny>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub quote: Option<super::evidence::Quote>,
    #[serde(default)]
    pub proxy: Option<String>,
    #[serde(default)]
    pub under: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub x: String,
    #[serde(default)]
    pub predicted: Option<f64>,
    #[serde(default)]
    pub predicted_rate_of: Option<Expr>,
    #[serde(default)]
    pub predicted_value_of: Option<Expr>,
    pub tolerance: f64,
    /// One line: why this tolerance (CI width, a known log correction, ...).
    #[serde(default)]
    pub tolerance_reason: Option<String>,
    #[serde(default)]
    pub divide_by: Option<Expr>,
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub bootstrap: Option<usize>,
    /// A paired contrast: the fit is of `metric(variant) - metric(<minus>)`, replicate by
    /// replicate at each point, as for an inequality's `minus` ("the gap shrinks as n
    /// grows": `rate_at_most` of the paired gap with `predicted: 0`).
    #[serde(default)]
    pub minus: Option<String>,
    /// The one main variant this prediction judges (default: every main variant).
    #[serde(default)]
    pub variant: Option<String>,
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    /// Names the prediction (for `caught_by` and `findings`); unique in the file.
    pub name: String,
    pub metric: String,
    pub sweep: String,
    /// Where the paper states this prediction (default: the claim's equation).
    #[serde(default)]
    pub source: Option<String>,
    /// Hypotheses of this prediction only, added to the claim's `assumptions`.
    #[serde(default)]
    pub assumptions: Vec<RawAssumption>,
    /// Removed (rejected on load): not in the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub expected: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub expected_full: Option<IgnoredAny>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub quote: Option<super::evidence::Quote>,
    #[serde(default)]
    pub proxy: Option<String>,
    #[serde(default)]
    pub under: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub alpha: f64,
    #[serde(default)]
    pub confidence: Option<f64>,
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawInequality {
    /// Names the prediction (for `caught_by` and `findings`); unique in the file.
    pub name: String,
    pub metric: String,
    pub sweep: String,
    /// Where the paper states this prediction (default: the claim's equation).
    #[serde(default)]
    pub source: Option<String>,
    /// Hypotheses of this prediction only, added to the claim's `assumptions`.
    #[serde(default)]
    pub assumptions: Vec<RawAssumption>,
    /// Removed (rejected on load): not in the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub expected: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub expected_full: Option<IgnoredAny>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub quote: Option<super::evidence::Quote>,
    #[serde(default)]
    pub proxy: Option<String>,
    #[serde(default)]
    pub under: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub op: String,
    pub rhs: Expr,
    /// `runs` (default: every replicate) or `means` (the mean at every point, on a CI).
    #[serde(default)]
    pub over: Option<String>,
    /// Confidence of the simultaneous intervals when `over: means` (default 0.95).
    #[serde(default)]
    pub confidence: Option<f64>,
    /// A paired contrast: the variant whose `metric` is subtracted from each judged
    /// variant's at the same point and replicate (with `over: means`): "TP-TopK beats
    /// TP-Rand" as `metric: test_accuracy`, `minus: tp-rand`, `op: ">"`, `rhs: "0"`.
    #[serde(default)]
    pub minus: Option<String>,
    /// The one main variant this prediction judges (default: every main variant; the
    /// negative controls that name it in `caught_by` are judged either way).
    #[serde(default)]
    pub variant: Option<String>,
}

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBound {
    pub name: String,
    pub metric: String,
    pub sweep: String,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub assumptions: Vec<RawAssumption>,
    /// Removed (rejected on load): not in the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub expected: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub expected_full: Option<IgnoredAny>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub quote: Option<super::evidence::Quote>,
    #[serde(default)]
    pub proxy: Option<String>,
    #[serde(default)]
    pub under: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub x: String,
    pub bound: Expr,
    pub direction: String,
    /// An implied-constant ceiling (`upper`) or floor (`lower`) registered from the paper
    /// or its proof: `{at_most: 12.6, source: "..."}`; the row is then judged on it too.
    #[serde(default)]
    pub constant: Option<RawConstant>,
    pub tolerance: f64,
    #[serde(default)]
    pub tolerance_reason: Option<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
}
