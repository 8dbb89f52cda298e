//! The hypothesis registry of a paper: every hypothesis of its statements written once,
//! quoted with its source, in the `hypotheses:` list of `scorecards/<paper>.yaml`.
//!
//! A prediction names the hypotheses it is judged under (`under: [...]`); it cannot
//! redefine, drop or invert them, and a spec that writes one of them inline is rejected.
//! A hypothesis is a comparison over a sweep point's variables *and* the metrics its
//! system computes (a metric stands for its mean over the point's replicates): a point
//! where one fails is outside the regime, whether the failing quantity is a parameter
//! (Eq. 6, an asymptotic step size) or a measurement (no per-sample gradient clipped).
use super::evidence::Quote;
use super::raw;
use super::{Assumption, Direction};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One hypothesis of the paper.
#[derive(Clone, Debug)]
pub struct Hypothesis {
    pub name: String,
    pub quote: Quote,
    /// The comparison a point is checked against; `None` for a hypothesis every system of
    /// the paper meets by construction (`by_construction:`), which is listed so that a
    /// reader sees every hypothesis, and never gates a point.
    pub assumption: Option<Assumption>,
    /// How the systems meet a `by_construction` hypothesis (empty otherwise).
    pub by_construction: String,
    /// How an asymptotic or verbal hypothesis is read as a finite comparison.
    pub reading: String,
    /// The smallest size at which it can hold, when known (e.g. an empty window).
    pub feasible_from: String,
}

/// A paper's registry.
#[derive(Clone, Debug)]
pub struct Registry {
    pub paper: String,
    pub file: PathBuf,
    pub hypotheses: Vec<Hypothesis>,
}

/// The raw shape of one registry entry (shared with the scorecard loader).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHypothesis {
    pub name: String,
    pub quote: Quote,
    /// A finite comparison with explicit constants, checked at each sweep point.
    #[serde(default)]
    pub require: Option<String>,
    /// An asymptotic hypothesis (ω, o, O, "as η → 0"): a ratio and the direction it must
    /// move along the sweep; never a pointwise gate ([`crate::spec::assumption`]).
    #[serde(default)]
    pub asymptotic: Option<RawAsymptotic>,
    /// A hypothesis the systems meet by construction (an odd activation, theta_0 = 0):
    /// how they meet it, with the file that does. Listed, never a gate: a prediction
    /// cannot name it in `under`, and a check of it would be true by construction.
    #[serde(default)]
    pub by_construction: Option<String>,
    #[serde(default)]
    pub reading: String,
    #[serde(default)]
    pub feasible_from: String,
}

/// `asymptotic: {ratio: "n*ln(d)^3/d^1.5", direction: shrinks}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAsymptotic {
    pub ratio: String,
    /// `grows` (ω), `shrinks` (o), `bounded` (O).
    pub direction: String,
}

#[derive(Deserialize)]
struct RegistryFile {
    #[serde(default)]
    hypotheses: Vec<RawHypothesis>,
}

/// Validates raw entries: names unique and well formed, each `require` one comparison.
pub fn validate(raw: &[RawHypothesis]) -> Result<Vec<Hypothesis>, String> {
    let mut out: Vec<Hypothesis> = Vec::new();
    for (i, h) in raw.iter().enumerate() {
        let at = format!("hypotheses[{i}] ({})", h.name);
        if h.name.is_empty()
            || !h
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(format!(
                "{at}: name must be lowercase letters, digits and '-'"
            ));
        }
        if out.iter().any(|o| o.name == h.name) {
            return Err(format!("{at}: duplicate hypothesis name"));
        }
        if h.quote.text.trim().is_empty() || h.quote.location.trim().is_empty() {
            return Err(format!(
                "{at}: quote needs the paper's words and where they stand"
            ));
        }
        let source = format!("{}: {}", h.name, h.quote.location.trim());
        let assumption = match (&h.require, &h.asymptotic, &h.by_construction) {
            (Some(req), None, None) => {
                Some(Assumption::parse(req, &source).map_err(|m| format!("{at}: require: {m}"))?)
            }
            (None, Some(a), None) => {
                let dir = Direction::parse(a.direction.trim()).ok_or_else(|| {
                    format!(
                        "{at}: asymptotic.direction: `{}` is not grows (ω), shrinks (o) or bounded (O)",
                        a.direction
                    )
                })?;
                Some(
                    Assumption::asymptotic(&a.ratio, dir, &source)
                        .map_err(|m| format!("{at}: asymptotic.ratio: {m}"))?,
                )
            }
            (None, None, Some(how)) if !how.trim().is_empty() => None,
            _ => {
                return Err(format!(
                    "{at}: write exactly one of `require` (a finite comparison with explicit \
                     constants, checked at each point), `asymptotic` ({{ratio, direction}}: \
                     an ω/o/O hypothesis, checked as a direction along the sweep, never with \
                     constant 1 at a point) and `by_construction` (how every system meets it; \
                     listed, never a gate)"
                ))
            }
        };
        out.push(Hypothesis {
            name: h.name.clone(),
            quote: h.quote.clone(),
            assumption,
            by_construction: h
                .by_construction
                .as_deref()
                .unwrap_or("")
                .trim()
                .to_string(),
            reading: h.reading.trim().to_string(),
            feasible_from: h.feasible_from.trim().to_string(),
        });
    }
    Ok(out)
}

/// Directories searched for `scorecards/<paper>.yaml`: the claim file's directory and
/// each of its ancestors, nearest first.
fn candidates(claim_file: &Path, paper: &str) -> Vec<PathBuf> {
    let file = format!("{paper}.yaml");
    let start = claim_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let start = if start.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        start
    };
    let mut out = Vec::new();
    let mut dir = Some(start.as_path());
    while let Some(d) = dir {
        out.push(d.join("scorecards").join(&file));
        dir = d.parent().filter(|p| !p.as_os_str().is_empty());
    }
    if start.is_relative() {
        out.push(PathBuf::from("scorecards").join(&file));
    }
    out
}

/// The registries shipped with the tool (`scorecards/` of this repository, compiled in):
/// used when no `scorecards/<paper>.yaml` is found from the claim file's directory up, so
/// that a shipped claim copied elsewhere (or run by an installed binary) keeps the
/// hypotheses of its paper.
const SHIPPED: &[(&str, &str)] = &[
    (
        "privacy-for-free",
        include_str!("../../scorecards/privacy-for-free.yaml"),
    ),
    (
        "private-feature-learning",
        include_str!("../../scorecards/private-feature-learning.yaml"),
    ),
    ("tp-topk", include_str!("../../scorecards/tp-topk.yaml")),
];

/// Finds and loads the registry of `paper` for the claim at `claim_file`: the nearest
/// `scorecards/<paper>.yaml` from the claim's directory up, else `./scorecards/`, else the
/// shipped registry of that paper.
pub fn find(claim_file: &Path, paper: &str) -> Result<Registry, String> {
    if paper.is_empty()
        || !paper
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(
            "must be lowercase letters, digits and '-' (the stem of scorecards/<paper>.yaml)"
                .into(),
        );
    }
    let tried = candidates(claim_file, paper);
    let Some(file) = tried.iter().find(|p| p.is_file()) else {
        if let Some((_, text)) = SHIPPED.iter().find(|(name, _)| *name == paper) {
            return parse(
                text,
                &PathBuf::from(format!("(shipped) scorecards/{paper}.yaml")),
                paper,
            );
        }
        return Err(format!(
            "no registry for paper `{paper}` (tried {})",
            tried
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let text = crate::fsio::read_string(file, crate::fsio::InputKind::Registry)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    parse(&text, file, paper)
}

/// Parses and validates a registry's text (`file` names it in errors).
pub fn parse(text: &str, file: &Path, paper: &str) -> Result<Registry, String> {
    crate::fsio::yaml::alias_budget(text).map_err(|m| format!("{}: {m}", file.display()))?;
    let parsed: RegistryFile =
        raw::from_yaml(text).map_err(|(field, m)| format!("{}: {field}: {m}", file.display()))?;
    let hypotheses =
        validate(&parsed.hypotheses).map_err(|m| format!("{}: {m}", file.display()))?;
    Ok(Registry {
        paper: paper.to_string(),
        file: file.to_path_buf(),
        hypotheses,
    })
}

impl Registry {
    pub fn get(&self, name: &str) -> Option<&Hypothesis> {
        self.hypotheses.iter().find(|h| h.name == name)
    }
}
