//! The raw, strictly typed shape of a claim file (serde; unknown fields are errors).
//! Only [`super::load_claim`] turns it into a validated [`super::Claim`]; the YAML
//! parser (serde_yaml, deprecated upstream) is confined to [`from_yaml`].
use super::expr::Expr;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Parses YAML into `T`; on error returns (field path, message).
pub fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, (String, String)> {
    serde_yaml::from_str(text).map_err(|e| {
        let msg = e.to_string();
        // serde_yaml prefixes the path ("a.b[0].c: ...") when the error is not at the root.
        match msg.split_once(": ") {
            Some((path, rest))
                if !path.contains(' ') && !path.is_empty() && !msg.starts_with("unknown") =>
            {
                (path.to_string(), rest.to_string())
            }
            _ => ("(top level)".to_string(), msg),
        }
    })
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawClaim {
    pub id: String,
    pub title: String,
    pub source: RawSource,
    pub statement: String,
    pub system: String,
    pub model: String,
    /// replace_one | add_remove | not_applicable (DESIGN 3: explicit in every spec).
    pub adjacency: String,
    #[serde(default)]
    pub data: RawData,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default)]
    pub params: BTreeMap<String, Expr>,
    /// The theorem's hypotheses, checked at every sweep point (e.g. "n >= d*ln(d)^2").
    #[serde(default)]
    pub assumptions: Vec<RawAssumption>,
    pub sweeps: BTreeMap<String, RawSweep>,
    pub variants: Vec<RawVariant>,
    pub predictions: Vec<RawPrediction>,
    /// Extra metrics tabulated in the report (no verdict).
    #[serde(default)]
    pub report_metrics: Vec<String>,
    #[serde(default)]
    pub discussion: Option<String>,
}

/// A hypothesis: `"lhs <op> rhs"`, or the same with the place in the paper it comes from.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum RawAssumption {
    Plain(String),
    Sourced(RawSourcedAssumption),
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawSourcedAssumption {
    pub require: String,
    pub source: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    pub paper: String,
    pub section: String,
    pub equation: String,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawData {
    #[serde(default)]
    pub input: Option<String>,
    #[serde(default)]
    pub target: Option<RawTarget>,
    #[serde(default)]
    pub label_noise: Option<f64>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum RawTarget {
    Name(String),
    SingleIndex { single_index: Vec<f64> },
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    pub quick: RawProfile,
    pub full: RawProfile,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    pub axes: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    pub coupled: BTreeMap<String, Expr>,
    pub replicates: usize,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub negative_control: bool,
    #[serde(default)]
    pub params: BTreeMap<String, Expr>,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default)]
    pub data: Option<RawData>,
    /// Negative controls: the predictions (by name) that must refute this variant.
    #[serde(default)]
    pub caught_by: Vec<String>,
    /// Main variants: prediction name -> why this variant is refuted there (a finding).
    #[serde(default)]
    pub findings: BTreeMap<String, String>,
}

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
}

/// A prediction, tagged by `kind`. The common fields (metric, sweep, expected, ...) are
/// spelled out in each kind's struct rather than shared with `#[serde(flatten)]`,
/// because serde ignores `deny_unknown_fields` under `flatten` and a typo must stay an
/// error; [`RawPrediction::common`] gives them back uniformly.
#[derive(Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RawPrediction {
    Exponent(RawFit),
    RateAtMost(RawFit),
    Event(RawEvent),
    Inequality(RawInequality),
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
                }
            };
        }
        match self {
            RawPrediction::Exponent(f) | RawPrediction::RateAtMost(f) => c!(f),
            RawPrediction::Event(f) => c!(f),
            RawPrediction::Inequality(f) => c!(f),
        }
    }
}

#[derive(Deserialize, Debug)]
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
    #[serde(default)]
    pub expected: Option<IgnoredAny>,
    #[serde(default)]
    pub expected_full: Option<IgnoredAny>,
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
}

#[derive(Deserialize, Debug)]
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
    #[serde(default)]
    pub expected: Option<IgnoredAny>,
    #[serde(default)]
    pub expected_full: Option<IgnoredAny>,
    #[serde(default)]
    pub note: Option<String>,
    pub alpha: f64,
    #[serde(default)]
    pub confidence: Option<f64>,
}

#[derive(Deserialize, Debug)]
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
    #[serde(default)]
    pub expected: Option<IgnoredAny>,
    #[serde(default)]
    pub expected_full: Option<IgnoredAny>,
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
}
