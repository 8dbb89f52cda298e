//! A variant of a claim file, raw (serde; unknown fields are errors): see
//! [`super::raw`].
use super::evidence::{RawErratum, RawFinding};
use super::expr::Expr;
use super::raw_parts::{unique_keys, RawData, RawVariantExternal};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize, Debug, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub negative_control: bool,
    /// An exploratory variant: outside the statement's hypotheses on purpose (a regime
    /// the paper does not cover, a question of one's own). Judged and reported apart:
    /// never counted for the paper, never a regression of the core, never compared
    /// with the regression baseline.
    #[serde(default)]
    pub exploratory: bool,
    /// The task of this variant, named in its proxy rows' words (default: the prediction's).
    #[serde(default)]
    pub proxy: Option<String>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub params: BTreeMap<String, Expr>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub options: BTreeMap<String, String>,
    #[serde(default)]
    pub data: Option<RawData>,
    /// `system: external` only: this variant runs another core.
    #[serde(default)]
    pub external: Option<RawVariantExternal>,
    /// Negative controls: the predictions (by name) that must refute this variant.
    #[serde(default)]
    pub caught_by: Vec<String>,
    /// Main variants: prediction name -> why this variant is refuted there (a finding).
    #[serde(default, deserialize_with = "unique_keys")]
    pub findings: BTreeMap<String, RawFinding>,
    #[serde(default, deserialize_with = "unique_keys")]
    pub errata: BTreeMap<String, RawErratum>,
    #[serde(default)]
    pub deviations: Vec<super::evidence::Deviation>,
}
