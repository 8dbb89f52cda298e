//! Parts of a raw claim shared by [`super::raw`] and [`super::raw_variant`]: the
//! unique-key map reader, the `external:` blocks, a bound's registered constant and the
//! data spec (kept here so that neither file imports the other's).
use serde::Deserialize;
use std::collections::BTreeMap;

/// A map with unique keys: YAML allows a key twice and serde would keep the last value
/// silently (`kappa: 2` then `kappa: 3`), which a spec must never do.
pub(crate) fn unique_keys<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut m: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(k) = m.next_key::<String>()? {
                if out.contains_key(&k) {
                    return Err(serde::de::Error::custom(format!("duplicate key `{k}`")));
                }
                let v = m.next_value()?;
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(Unique(std::marker::PhantomData))
}

/// A bound's registered constant (`constant:` of a `bound` prediction).
#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawConstant {
    /// Upper bounds: the implied constant is at most this.
    #[serde(default)]
    pub at_most: Option<f64>,
    /// Lower (Omega) bounds: the implied constant is at least this.
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Where the value comes from (the paper's or its proof's sentence, equation, line).
    pub source: String,
}

/// The `external:` block of a claim (`system: external`).
#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExternal {
    /// Program and arguments, run in the spec file's directory.
    pub command: Vec<String>,
    #[serde(default)]
    pub metrics: Vec<String>,
    /// Metrics of `metrics` that are exact computations (an accountant's epsilon, a
    /// closed form): deterministic functions of the unit's variables that draw nothing
    /// from its seed. Judged like a built-in system's exact metrics: no power line, the
    /// replicates of a point must agree to the bit (else the run fails), and a mean's
    /// interval is the value itself, so one replicate a point suffices.
    #[serde(default)]
    pub exact: Vec<String>,
    #[serde(default)]
    pub timeout_s: Option<f64>,
    /// The files the core's results depend on (its sources, relative to the spec file):
    /// hashed into the result cache's keys. Without them the core's units are not cached.
    #[serde(default)]
    pub files: Vec<String>,
    /// The core's declared version (of what the files do not capture: a library, a
    /// data set), part of the result cache's keys.
    #[serde(default)]
    pub version: Option<String>,
    /// The declared CPU seconds of one unit, for `dpclaims plan` (without it, `plan`
    /// times one calibration unit).
    #[serde(default)]
    pub cost_s: Option<f64>,
    /// Canary mode: each unit is one empirical privacy audit of the core (its `score` on
    /// `trials` runs with the canary and `trials` without), judged by the predictions
    /// through the audit's metrics (`epsilon_lower_bound`, ...).
    #[serde(default)]
    pub audit: Option<RawExternalAudit>,
}

/// `external.audit`: an audit inside a spec.
#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExternalAudit {
    /// Runs per world (with and without the canary), at least 4.
    pub trials: u64,
    /// The estimator whose bound is `epsilon_lower_bound`: clopper_pearson, gdp, or
    /// best (the larger of the two, each at half the error probability; default).
    #[serde(default)]
    pub estimator: Option<String>,
    /// Joint confidence of the bound (default 0.95).
    #[serde(default)]
    pub confidence: Option<f64>,
}

/// A variant's own core (`external: {command: [...]}`), e.g. a faulty copy.
#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawVariantExternal {
    pub command: Vec<String>,
    /// The files this variant's core depends on besides the claim's `external.files`.
    #[serde(default)]
    pub files: Vec<String>,
}

#[derive(Deserialize, Debug, Default, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawData {
    #[serde(default)]
    pub input: Option<String>,
    #[serde(default)]
    pub target: Option<RawTarget>,
    #[serde(default)]
    pub label_noise: Option<f64>,
}

#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RawTarget {
    Name(String),
    SingleIndex { single_index: Vec<f64> },
}
