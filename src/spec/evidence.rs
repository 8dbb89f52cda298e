//! What a prediction is evidence of, and the paper-facing words of its verdict.
//!
//! Every prediction declares its evidence kind (issue 31; `claims/README.md`, "Evidence"):
//! * `statement` — a sentence of the paper tested literally, inside its hypotheses; it
//!   carries the paper's words (`quote`). Only a statement gives holds / refuted /
//!   inconclusive / out of regime *about the paper*, and a refuted statement on a main
//!   variant is an erratum candidate that needs a confirmed [`Erratum`].
//! * `consequence` — something the tool derives from the paper (an exact finite-size
//!   form, a proof step's mechanism): consistent / inconsistent.
//! * `proxy` — an empirical result of the paper reproduced on another task or model,
//!   named in `proxy`: reproduced / not reproduced (on the proxy). Never an erratum.
//! * `printed` — a sentence of the paper read on the paper's own printed numbers (a table's
//!   entries, not a simulation): consistent / inconsistent with its printed numbers. It
//!   says whether the paper's text agrees with its tables, never that the result holds:
//!   the data could not have said no to the result itself.
//! * `self_check` — the tool's own correctness (engine equivalence, accountant against an
//!   independent computation): passed / failed; failing is a failure of the run.
use super::expr::Expr;
use super::CmpOp;
use crate::fit::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The evidence kind of a prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    Statement,
    Consequence,
    Proxy,
    Printed,
    SelfCheck,
}

impl Evidence {
    pub const ALL: [Evidence; 5] = [
        Evidence::Statement,
        Evidence::Consequence,
        Evidence::Proxy,
        Evidence::Printed,
        Evidence::SelfCheck,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Statement => "statement",
            Evidence::Consequence => "consequence",
            Evidence::Proxy => "proxy",
            Evidence::Printed => "printed",
            Evidence::SelfCheck => "self_check",
        }
    }

    pub fn parse(s: &str) -> Option<Evidence> {
        Evidence::ALL.into_iter().find(|e| e.as_str() == s)
    }

    /// The word of `verdict` for this kind of evidence (`proxy` names its task).
    pub fn word(self, verdict: Verdict, proxy: &str) -> String {
        // The proxy's name: its text up to the first comma or parenthesis, at most 60
        // characters, cut at a word boundary with "..." when longer (the whole text is on
        // the claim's page).
        let head = proxy.split([',', '(', ';']).next().unwrap_or("").trim();
        let name: String = if head.chars().count() <= 60 {
            head.to_string()
        } else {
            let cut: String = head.chars().take(57).collect();
            let cut = match cut.rfind(' ') {
                Some(i) if i > 20 => &cut[..i],
                _ => cut.as_str(),
            };
            format!("{}...", cut.trim_end())
        };
        let on = |w: &str| {
            if name.is_empty() {
                w.to_string()
            } else {
                format!("{w} (on {name})")
            }
        };
        match (self, verdict) {
            (_, Verdict::Inconclusive) => "inconclusive".into(),
            (_, Verdict::OutOfRegime) => "out of regime".into(),
            (Evidence::Statement, Verdict::Holds) => "holds".into(),
            (Evidence::Statement, Verdict::Refuted) => "refuted".into(),
            (Evidence::Consequence, Verdict::Holds) => "consistent".into(),
            (Evidence::Consequence, Verdict::Refuted) => "inconsistent".into(),
            (Evidence::Proxy, Verdict::Holds) => on("reproduced"),
            (Evidence::Proxy, Verdict::Refuted) => on("not reproduced"),
            (Evidence::Printed, Verdict::Holds) => "consistent with its printed numbers".into(),
            (Evidence::Printed, Verdict::Refuted) => "inconsistent with its printed numbers".into(),
            (Evidence::SelfCheck, Verdict::Holds) => "passed".into(),
            (Evidence::SelfCheck, Verdict::Refuted) => "failed".into(),
        }
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The paper's own words and where they stand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quote {
    pub text: String,
    #[serde(rename = "where")]
    pub location: String,
}

impl fmt::Display for Quote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" ({})", self.text.trim(), self.location.trim())
    }
}

/// One change of a variant from the algorithm as printed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Deviation {
    pub change: String,
    /// The sentence of the paper that the change alters.
    pub sentence: Quote,
    /// An obvious typo fixed: the variant still counts as the printed algorithm.
    #[serde(default)]
    pub typo_fix: bool,
}

/// A number that a finding or an erratum quotes from the run: the mean of `metric` over
/// the replicates at the point whose variables include `at`, within `rel_tol` of `value`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotedNumber {
    pub metric: String,
    #[serde(default)]
    pub at: BTreeMap<String, f64>,
    pub value: f64,
    pub rel_tol: f64,
}

/// An explanation of an inconsistent consequence or a proxy not reproduced, with the
/// numbers it quotes (checked against the run).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub text: String,
    pub quotes: Vec<QuotedNumber>,
}

/// The independent confirmation of an erratum: a different computation, checked at run
/// time where it is computable (`check` true at one judged point at least), or a proof
/// sketch.
#[derive(Clone, Debug, Serialize)]
pub struct Confirmation {
    pub method: String,
    /// `lhs <op> rhs` over the point's variables and metric means (its text, sides, op).
    #[serde(skip)]
    pub check: Option<(String, Expr, CmpOp, Expr)>,
    pub proof: String,
}

/// A refuted statement on a main variant, claimed as an error of the paper.
#[derive(Clone, Debug, Serialize)]
pub struct Erratum {
    pub sentence: Quote,
    pub counterexample: String,
    /// The reading of an ambiguous text the erratum needs (e.g. the adjacency).
    pub reading: String,
    pub confirmation: Confirmation,
    pub quotes: Vec<QuotedNumber>,
}

// The raw (serde) shapes of findings and errata in a spec file; validated by
// `super::provenance`.

/// A finding: its text, or `{text, quotes}` with the numbers it quotes from the run.
#[derive(Debug, Clone)]
pub enum RawFinding {
    Text(String),
    Quoted(RawQuotedFinding),
}

impl<'de> Deserialize<'de> for RawFinding {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawFinding;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a finding's text or {text: ..., quotes: [...]}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawFinding, E> {
                Ok(RawFinding::Text(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<RawFinding, A::Error> {
                RawQuotedFinding::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(RawFinding::Quoted)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawQuotedFinding {
    pub text: String,
    #[serde(default)]
    pub quotes: Vec<QuotedNumber>,
}

#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawErratum {
    pub sentence: Quote,
    pub counterexample: String,
    #[serde(default)]
    pub reading: String,
    pub confirmation: RawConfirmation,
    #[serde(default)]
    pub quotes: Vec<QuotedNumber>,
}

#[derive(Deserialize, Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawConfirmation {
    pub method: String,
    #[serde(default)]
    pub check: Option<String>,
    #[serde(default)]
    pub proof: Option<String>,
}
