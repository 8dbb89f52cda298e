//! One seed's verdict rows on disk: `reports/stability/seed-<k>.jsonl`.
//!
//! A 20-seed stability run of the quick suite takes hours on two cores, longer than one
//! sitting and than most CI jobs. Each seed's rows are therefore written as soon as the
//! seed is judged, and a later `dpclaims stability` reads a seed from its record instead
//! of running it again — but only when the record was made from the same claims and by a
//! build that judges them the same way: the header holds the verdict hash of the build
//! ([`crate::build_id::VERDICT_HASH`]: the engine and everything between a unit's numbers
//! and a verdict) and every claim's [`crate::spec::Claim::judged_hash`] (the spec without
//! its discussion, and the hypotheses of its paper's registry: a scorecard's counting and
//! prose decide no row, so editing them keeps every record). A record of another build is stale and the seed runs again; of the
//! same build, the rows of every claim whose spec is unchanged stand and only the new or
//! changed claims run (a claim's verdicts depend on its spec and the build alone: the
//! family-wise level is a fixed budget of rows, not the suite's size). Seeds are
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

/// What a record was made from; a record's rows are used only when its format, seed,
/// profile and build equal the ones the current build would write, and then only those
/// of claims whose [`Claim::judged_hash`] is unchanged.
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

    /// Why no row of a record with header `self` can stand for `want`'s seed (`None`:
    /// the rows of its unchanged claims can; [`Header::changed_claims`] says which).
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
        None
    }

    /// The claims of `want` that this record has no usable rows for: new ones and those
    /// whose spec changed (a claim's verdicts depend on its own spec and the build only,
    /// so the other claims' rows stand).
    pub fn changed_claims(&self, want: &Header) -> Vec<String> {
        want.claims
            .iter()
            .filter(|(id, h)| self.claims.get(*id) != Some(*h))
            .map(|(id, _)| id.clone())
            .collect()
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
    /// Made by a build that judges the same way: the rows of every claim whose spec is
    /// unchanged, by claim id; the claims to run again are the others.
    Usable(Reuse),
    /// No record for this seed.
    Missing,
    /// A record none of whose rows can stand for the seed: why (another build, unreadable,
    /// malformed).
    Unusable(String),
}

/// The usable part of a seed's record.
#[derive(Debug, Default)]
pub struct Reuse {
    /// Claim id -> its rows in the order the run judged them.
    pub kept: BTreeMap<String, Vec<Row>>,
    /// Claims of the run with no usable rows (new, changed, or missing from the record),
    /// with why.
    pub rerun: BTreeMap<String, &'static str>,
}

impl Reuse {
    /// Every claim's rows are in the record.
    pub fn is_complete(&self) -> bool {
        self.rerun.is_empty()
    }
}

/// Reads the record of `want.seed` in `dir`. Never an error: a record that cannot be
/// used is reported and the seed is run again, like a cache entry.
pub fn read(dir: &Path, want: &Header) -> Lookup {
    let p = path(dir, want.seed);
    let text = match crate::fsio::read_string(&p, crate::fsio::InputKind::Record) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Missing,
        Err(e) => return Lookup::Unusable(format!("{}: {e}", p.display())),
    };
    match parse(&text, want) {
        Ok(reuse) => Lookup::Usable(reuse),
        Err(why) => Lookup::Unusable(format!("{}: {why}", p.display())),
    }
}

/// The usable rows of a record's text: none when its header is of another build, seed or
/// profile, or any line is malformed; else the rows of every claim of `want` whose spec
/// is unchanged (rows of claims `want` does not have are dropped).
pub fn parse(text: &str, want: &Header) -> Result<Reuse, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty file")?;
    let header: Header =
        serde_json::from_str(first).map_err(|e| format!("line 1 (the header): {e}"))?;
    if let Some(why) = header.mismatch(want) {
        return Err(why);
    }
    let mut reuse = Reuse::default();
    for id in header.changed_claims(want) {
        let why = if header.claims.contains_key(&id) {
            "its spec changed"
        } else {
            "not in the record"
        };
        reuse.rerun.insert(id, why);
    }
    for (i, line) in lines.enumerate() {
        let row: Row = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 2))?;
        for (what, n) in [("prediction", &row.prediction), ("variant", &row.variant)] {
            crate::spec::names::name(n).map_err(|m| format!("line {}: {what} name {m}", i + 2))?;
        }
        crate::spec::names::claim_id(&row.claim)
            .map_err(|m| format!("line {}: claim id {m}", i + 2))?;
        if row.seed != want.seed || !header.claims.contains_key(&row.claim) {
            return Err(format!(
                "line {}: a row of seed {} of claim `{}`, which this record is not about",
                i + 2,
                row.seed,
                row.claim
            ));
        }
        if want.claims.contains_key(&row.claim) && !reuse.rerun.contains_key(&row.claim) {
            reuse.kept.entry(row.claim.clone()).or_default().push(row);
        }
    }
    for id in want.claims.keys() {
        if !reuse.kept.contains_key(id) && !reuse.rerun.contains_key(id) {
            reuse
                .rerun
                .insert(id.clone(), "no row in the record (truncated?)");
        }
    }
    Ok(reuse)
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
        assert!(back.is_complete());
        let back = &back.kept["c"];
        assert_eq!(back.len(), rows.len());
        for (a, b) in rows.iter().zip(back) {
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
    fn a_record_of_another_build_or_seed_is_not_used_and_a_changed_claim_runs_again() {
        let text = to_text(&header(), &[row(Some(1.0), 0.5, 1.5)]);
        assert!(parse(&text, &header()).unwrap().is_complete());
        let mut other = header();
        other.verdict_build = "ef".repeat(32);
        assert!(parse(&text, &other).unwrap_err().contains("another build"));
        // A changed claim is run again; the others' rows stand.
        let mut other = header();
        other.claims.insert("c".into(), "00".repeat(32));
        let r = parse(&text, &other).unwrap();
        assert!(r.kept.is_empty());
        assert_eq!(r.rerun["c"], "its spec changed");
        let mut other = header();
        other.claims.insert("d".into(), "00".repeat(32));
        let r = parse(&text, &other).unwrap();
        assert_eq!(r.kept["c"].len(), 1);
        assert_eq!(r.rerun["d"], "not in the record");
        // A claim dropped from the run: its rows are dropped, the others stand.
        let two = {
            let mut h = header();
            h.claims.insert("d".into(), "00".repeat(32));
            let mut d = row(Some(2.0), 1.0, 3.0);
            d.claim = "d".into();
            to_text(&h, &[row(Some(1.0), 0.5, 1.5), d])
        };
        let r = parse(&two, &header()).unwrap();
        assert!(r.is_complete());
        assert_eq!(r.kept.keys().collect::<Vec<_>>(), ["c"]);
        let mut other = header();
        other.seed = 4;
        assert!(parse(&text, &other).unwrap_err().contains("seed 3"));
        // Truncated to its header: the claim's rows are missing, so it runs again.
        let head = text.lines().next().unwrap();
        assert!(parse(head, &header()).unwrap().rerun["c"].contains("truncated"));
        // A damaged row names its line.
        let bad = format!("{head}\n{{\"seed\": 3, \"claim\": \"c\"}}\n");
        assert!(parse(&bad, &header()).unwrap_err().starts_with("line 2"));
        assert!(parse("", &header()).unwrap_err().contains("empty"));
    }
}
