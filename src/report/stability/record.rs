//! One seed's verdict rows on disk: `reports/stability/seed-<k>.jsonl`.
//!
//! A 20-seed stability run of the quick suite takes hours on two cores, longer than one
//! sitting and than most CI jobs. Each seed's rows are therefore written as soon as the
//! seed is judged, and a later `dpclaims stability` reads a seed from its record instead
//! of running it again — but only when the record was made from the same claims and by a
//! build that judges them the same way: the header holds the verdict hash of the build
//! ([`crate::build_id::VERDICT_HASH`]: the engine and everything between a unit's numbers
//! and a verdict) and every claim's [`crate::spec::Claim::judged_hash`] (the spec without
//! its discussion). Anything else is stale and the seed runs again. Seeds are
//! independent, so records made on different machines (or Slurm jobs, one seed each)
//! combine into one STABILITY.md.
//!
//! The first line is the [`Header`]; every other line is one [`Row`] (the `--json` rows
//! of `dpclaims stability`). Numbers are JSON numbers, written shortest-round-trip and
//! read back bit for bit (serde_json's `float_roundtrip`), or the strings `inf`, `-inf`,
//! `NaN` when not finite, so a seed read from its record gives the same page bytes as the
//! seed run afresh: both go through [`Row`] ([`super::SeedVerdicts::from_rows`]).
use crate::fit::Verdict;
use crate::judge::{ClaimOutcome, ControlStatus};
use crate::spec::{Claim, Profile};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `format` of a record's header.
pub const FORMAT: &str = "dpclaims-stability-seed/1";

/// What a record was made from; a record is used only when its header equals the one
/// the current build and claims would write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub format: String,
    pub seed: u64,
    pub profile: String,
    /// [`crate::build_id::VERDICT_HASH`] of the build that judged the seed.
    pub verdict_build: String,
    /// Claim id -> [`Claim::judged_hash`], for every claim of the run.
    pub claims: BTreeMap<String, String>,
}

impl Header {
    /// The header this build writes for `claims` at `seed`.
    pub fn current(seed: u64, profile: Profile, claims: &[Claim]) -> Header {
        Header {
            format: FORMAT.into(),
            seed,
            profile: profile.to_string(),
            verdict_build: crate::build_id::VERDICT_HASH.into(),
            claims: claims
                .iter()
                .map(|c| (c.id.clone(), c.judged_hash.clone()))
                .collect(),
        }
    }

    /// Why a record with header `self` cannot stand for `want`'s seed (`None`: it can).
    pub fn mismatch(&self, want: &Header) -> Option<String> {
        if self.format != want.format {
            return Some(format!("format `{}`, not `{}`", self.format, want.format));
        }
        if self.seed != want.seed || self.profile != want.profile {
            return Some(format!(
                "made for seed {} at the {} profile",
                self.seed, self.profile
            ));
        }
        if self.verdict_build != want.verdict_build {
            return Some(format!(
                "judged by another build (verdict hash {}, this build {})",
                short(&self.verdict_build),
                short(&want.verdict_build)
            ));
        }
        let changed: Vec<&str> = want
            .claims
            .iter()
            .filter(|(id, h)| self.claims.get(*id) != Some(*h))
            .map(|(id, _)| id.as_str())
            .chain(
                self.claims
                    .keys()
                    .filter(|id| !want.claims.contains_key(*id))
                    .map(String::as_str),
            )
            .collect();
        (!changed.is_empty()).then(|| {
            format!(
                "made from other claims or other versions of them: {}",
                changed.join(", ")
            )
        })
    }
}

fn short(h: &str) -> &str {
    &h[..h.len().min(12)]
}

/// One verdict row of one seed: what STABILITY.md needs of a judged prediction, and the
/// numbers of its interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub seed: u64,
    pub claim: String,
    pub prediction: String,
    pub variant: String,
    /// The prediction kind (`exponent`, `rate_at_most`, `inequality`, `event`, ...).
    pub kind: String,
    pub verdict: Verdict,
    pub negative_control: bool,
    /// Negative controls: caught at this seed (`false` too for a control not judged
    /// because it is identical to a main variant); `None` for main variants.
    pub caught: Option<bool>,
    #[serde(with = "num")]
    pub estimate: Option<f64>,
    #[serde(with = "num")]
    pub ci_lo: Option<f64>,
    #[serde(with = "num")]
    pub ci_hi: Option<f64>,
    #[serde(with = "num")]
    pub predicted: Option<f64>,
    #[serde(with = "num")]
    pub tolerance: Option<f64>,
    /// Why this row fails the run, if it does.
    pub problem: Option<String>,
}

impl Row {
    /// The rows of one seed's outcomes, in the order the run judged them.
    pub fn of(seed: u64, outcomes: &[ClaimOutcome]) -> Vec<Row> {
        outcomes
            .iter()
            .flat_map(|o| {
                o.results.iter().map(move |r| Row {
                    seed,
                    claim: o.claim.id.clone(),
                    prediction: r.prediction_name.clone(),
                    variant: r.variant.clone(),
                    kind: r.kind.to_string(),
                    verdict: r.verdict,
                    negative_control: r.negative_control,
                    caught: r.control.as_ref().map(|c| *c == ControlStatus::Caught),
                    estimate: r.estimate,
                    ci_lo: r.ci.map(|c| c.0),
                    ci_hi: r.ci.map(|c| c.1),
                    predicted: r.predicted,
                    tolerance: r.tolerance,
                    problem: r.problem.clone(),
                })
            })
            .collect()
    }

    pub fn ci(&self) -> Option<(f64, f64)> {
        Some((self.ci_lo?, self.ci_hi?))
    }

    /// One JSON line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a row serialises")
    }
}

/// `DIR/seed-<seed>.jsonl`.
pub fn path(dir: &Path, seed: u64) -> PathBuf {
    dir.join(format!("seed-{seed}.jsonl"))
}

/// The text of a record.
pub fn to_text(header: &Header, rows: &[Row]) -> String {
    let mut s = serde_json::to_string(header).expect("a header serialises");
    s.push('\n');
    for r in rows {
        s.push_str(&r.to_line());
        s.push('\n');
    }
    s
}

/// What became of a seed's record.
#[derive(Debug)]
pub enum Lookup {
    /// Made from these claims by a build that judges them the same way.
    Usable(Vec<Row>),
    /// No record for this seed.
    Missing,
    /// A record that cannot stand for the seed: why (stale, unreadable, malformed).
    Unusable(String),
}

/// Reads the record of `want.seed` in `dir`. Never an error: a record that cannot be
/// used is reported and the seed is run again, like a cache entry.
pub fn read(dir: &Path, want: &Header) -> Lookup {
    let p = path(dir, want.seed);
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Missing,
        Err(e) => return Lookup::Unusable(format!("{}: {e}", p.display())),
    };
    match parse(&text, want) {
        Ok(rows) => Lookup::Usable(rows),
        Err(why) => Lookup::Unusable(format!("{}: {why}", p.display())),
    }
}

/// The rows of a record's text, when its header matches `want` and every row is well
/// formed and of that seed and of one of its claims.
pub fn parse(text: &str, want: &Header) -> Result<Vec<Row>, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty file")?;
    let header: Header =
        serde_json::from_str(first).map_err(|e| format!("line 1 (the header): {e}"))?;
    if let Some(why) = header.mismatch(want) {
        return Err(why);
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let row: Row = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 2))?;
        if row.seed != want.seed || !want.claims.contains_key(&row.claim) {
            return Err(format!(
                "line {}: a row of seed {} of claim `{}`, which this record is not about",
                i + 2,
                row.seed,
                row.claim
            ));
        }
        rows.push(row);
    }
    let judged: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.claim.as_str()).collect();
    if let Some(missing) = want.claims.keys().find(|c| !judged.contains(c.as_str())) {
        return Err(format!("no row of claim `{missing}` (truncated?)"));
    }
    Ok(rows)
}

/// `Option<f64>` as a JSON number when finite, `null` when absent and the strings
/// `inf`, `-inf`, `NaN` otherwise (JSON has no non-finite numbers; serde_json would
/// write them as `null`, indistinguishable from an absent value).
mod num {
    use super::Value;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_none(),
            Some(x) if x.is_finite() => s.serialize_f64(*x),
            Some(x) => s.serialize_str(&format!("{x:?}")),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(None),
            Value::Number(n) => n
                .as_f64()
                .map(Some)
                .ok_or_else(|| D::Error::custom("a number out of range")),
            Value::String(s) if matches!(s.as_str(), "inf" | "-inf" | "NaN") => {
                Ok(Some(s.parse().expect("inf, -inf and NaN parse")))
            }
            other => Err(D::Error::custom(format!(
                "expected a number, null, \"inf\", \"-inf\" or \"NaN\", found {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(estimate: Option<f64>, lo: f64, hi: f64) -> Row {
        Row {
            seed: 3,
            claim: "c".into(),
            prediction: "p".into(),
            variant: "v".into(),
            kind: "exponent".into(),
            verdict: Verdict::Holds,
            negative_control: false,
            caught: None,
            estimate,
            ci_lo: Some(lo),
            ci_hi: Some(hi),
            predicted: Some(-0.8),
            tolerance: None,
            problem: Some("a \"quoted\" problem\nover two lines".into()),
        }
    }

    fn header() -> Header {
        Header {
            format: FORMAT.into(),
            seed: 3,
            profile: "quick".into(),
            verdict_build: "ab".repeat(32),
            claims: [("c".to_string(), "cd".repeat(32))].into_iter().collect(),
        }
    }

    #[test]
    fn rows_round_trip_bit_for_bit_including_non_finite_numbers() {
        let awkward = [
            0.1 + 0.2,
            -0.6312345678901234,
            f64::MIN_POSITIVE,
            5e-324,
            1.7976931348623157e308,
            -0.0,
            std::f64::consts::PI * 1e-17,
        ];
        let mut rows: Vec<Row> = awkward
            .iter()
            .map(|&x| row(Some(x), x / 3.0, x * 7.0))
            .collect();
        rows.push(row(Some(f64::NAN), f64::NEG_INFINITY, f64::INFINITY));
        rows.push(row(None, 1.0, 2.0));
        let text = to_text(&header(), &rows);
        let back = parse(&text, &header()).unwrap();
        assert_eq!(back.len(), rows.len());
        for (a, b) in rows.iter().zip(&back) {
            for (x, y) in [
                (a.estimate, b.estimate),
                (a.ci_lo, b.ci_lo),
                (a.ci_hi, b.ci_hi),
                (a.predicted, b.predicted),
                (a.tolerance, b.tolerance),
            ] {
                assert_eq!(x.map(f64::to_bits), y.map(f64::to_bits), "{x:?} {y:?}");
            }
            assert_eq!(a.problem, b.problem);
        }
    }

    #[test]
    fn a_record_of_another_build_seed_or_claim_version_is_not_used() {
        let text = to_text(&header(), &[row(Some(1.0), 0.5, 1.5)]);
        assert!(parse(&text, &header()).is_ok());
        let mut other = header();
        other.verdict_build = "ef".repeat(32);
        assert!(parse(&text, &other).unwrap_err().contains("another build"));
        let mut other = header();
        other.claims.insert("c".into(), "00".repeat(32));
        assert!(parse(&text, &other).unwrap_err().contains(": c"));
        let mut other = header();
        other.claims.insert("d".into(), "00".repeat(32));
        assert!(parse(&text, &other).unwrap_err().contains(": d"));
        let mut other = header();
        other.seed = 4;
        assert!(parse(&text, &other).unwrap_err().contains("seed 3"));
        // Truncated to its header: the claim's rows are missing.
        let head = text.lines().next().unwrap();
        assert!(parse(head, &header()).unwrap_err().contains("truncated"));
        // A damaged row names its line.
        let bad = format!("{head}\n{{\"seed\": 3, \"claim\": \"c\"}}\n");
        assert!(parse(&bad, &header()).unwrap_err().starts_with("line 2"));
        assert!(parse("", &header()).unwrap_err().contains("empty"));
    }
}
