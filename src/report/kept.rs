//! Claims a run keeps from the previous report set: a run of some of the claims
//! (`dpclaims run claims/a.yaml --out reports`) updates those claims' rows of
//! `SUMMARY.md` and lists every other claim of the previous set unchanged, marked with the
//! run it came from (profile, seed, engine hash).
//!
//! What is kept comes from the previous `verdicts.json` of the directory: each claim entry
//! holds its rendered summary rows (`summary`) and, when it was itself kept, the run it
//! came from (`from`; otherwise the document's own profile, seed and engine). A claim is
//! kept only while its page `<id>.md` is in the directory (the pages of claims a run does
//! not judge are carried into the new set untouched, [`super::set`]). The new
//! `verdicts.json` lists the kept claims too, so `dpclaims diff` compares whole
//! directories and the next partial run keeps them again.
use super::rows::SummaryRows;
use crate::judge::ClaimOutcome;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The run a row came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub profile: String,
    pub seed: u64,
    /// [`crate::build_id::ENGINE_HASH`] of the build that ran it (`unknown` for a
    /// `verdicts.json` written before the engine hash was recorded).
    pub engine: String,
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "profile `{}`, seed {}, engine `{}`",
            self.profile,
            self.seed,
            self.engine.chars().take(12).collect::<String>()
        )
    }
}

/// A claim of the previous report set that this run did not judge.
#[derive(Clone, Debug)]
pub struct Kept {
    pub id: String,
    pub from: Provenance,
    pub rows: SummaryRows,
    /// Its entry of the previous `verdicts.json`, with `from` and `summary` set.
    pub doc: serde_json::Value,
}

/// The previous set of `dir` as far as this run keeps it: the kept claims, and the
/// previous order of all claim ids (the new tables keep it).
pub struct Previous {
    pub kept: Vec<Kept>,
    pub order: Vec<String>,
}

/// Reads `dir/verdicts.json` (none: nothing is kept) and keeps every claim that is not
/// among `outcomes` and whose page is still in `dir`. A `verdicts.json` that cannot be
/// parsed is an error naming it: its claims would otherwise vanish from the summary.
pub fn previous(dir: &Path, outcomes: &[ClaimOutcome]) -> std::io::Result<Previous> {
    let file = dir.join(super::diff::VERDICTS_FILE);
    let text = match crate::fsio::read_string(&file, crate::fsio::InputKind::Verdicts) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Previous {
                kept: vec![],
                order: vec![],
            })
        }
        Err(e) => {
            return Err(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", file.display()),
            ))
        }
    };
    let bad = |why: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{}: {why}; it lists the claims this run does not judge, whose rows SUMMARY.md \
                 keeps: repair it, or move it away to list only this run's claims",
                file.display()
            ),
        )
    };
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a verdicts document: {e}")))?;
    let top = Provenance {
        profile: doc["profile"].as_str().unwrap_or("unknown").to_string(),
        seed: doc["seed"].as_u64().unwrap_or(0),
        engine: doc["engine"].as_str().unwrap_or("unknown").to_string(),
    };
    let claims = doc["claims"]
        .as_array()
        .ok_or_else(|| bad("no `claims` list".into()))?;
    let mut kept = Vec::new();
    let mut order = Vec::new();
    for c in claims {
        let id = c["id"]
            .as_str()
            .ok_or_else(|| bad("a claim without an `id`".into()))?
            .to_string();
        // The id names a page this run links to and a row of SUMMARY.md: a file that was
        // edited could otherwise point outside the report set or paste markup into it.
        crate::spec::names::claim_id(&id).map_err(|m| {
            bad(format!(
                "claim id {}: {m}",
                crate::spec::echo::clip_echoes(&format!("{id:?}"))
            ))
        })?;
        if order.contains(&id) {
            continue;
        }
        order.push(id.clone());
        if outcomes.iter().any(|o| o.claim.id == id) || !dir.join(format!("{id}.md")).is_file() {
            continue;
        }
        let from = serde_json::from_value(c["from"].clone()).unwrap_or_else(|_| top.clone());
        let rows =
            serde_json::from_value(c["summary"].clone()).unwrap_or_else(|_| rows_from_results(c));
        let mut entry = c.clone();
        entry["from"] = serde_json::to_value(&from).expect("provenance serialises");
        entry["summary"] = serde_json::to_value(&rows).expect("rows serialise");
        kept.push(Kept {
            id,
            from,
            rows,
            doc: entry,
        });
    }
    Ok(Previous { kept, order })
}

/// Rows for a claim of a `verdicts.json` that recorded no summary rows (written before
/// they were recorded): what the results hold.
fn rows_from_results(c: &serde_json::Value) -> SummaryRows {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("?").to_string();
    let verdicts = c["results"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    format!(
                        "`{}` ({} {}) | — | {}{} | {} | — | **{}** |",
                        s(&r["prediction"]),
                        s(&r["kind"]),
                        s(&r["metric"]),
                        s(&r["variant"]),
                        if r["negative_control"].as_bool() == Some(true) {
                            " (neg. control)"
                        } else {
                            ""
                        },
                        r["estimate"]
                            .as_f64()
                            .map(super::fmt_num)
                            .unwrap_or_else(|| "—".into()),
                        s(&r["verdict"])
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    SummaryRows {
        source: super::claim_page::cell(&s(&c["source"])),
        words: "see its page (this row was not recorded by the run that judged it)".into(),
        verdicts,
    }
}

impl Previous {
    /// The claims of the new tables: with nothing kept, this run's claims in run order
    /// (so a run's set never depends on what the directory held); else the previous
    /// order, each id either judged by this run or kept, then this run's new claims in
    /// run order.
    pub fn listing<'a>(&'a self, outcomes: &'a [ClaimOutcome]) -> Vec<Listed<'a>> {
        let mut out: Vec<Listed> = Vec::new();
        if self.kept.is_empty() {
            return outcomes.iter().map(Listed::Run).collect();
        }
        for id in &self.order {
            if let Some(o) = outcomes.iter().find(|o| &o.claim.id == id) {
                out.push(Listed::Run(o));
            } else if let Some(k) = self.kept.iter().find(|k| &k.id == id) {
                out.push(Listed::Kept(k));
            }
        }
        for o in outcomes {
            if !self.order.contains(&o.claim.id) {
                out.push(Listed::Run(o));
            }
        }
        out
    }
}

/// A claim listed in `SUMMARY.md`: judged by this run, or kept from an earlier run
/// whose pages are still in the directory (marked with that run's profile, seed and
/// engine).
pub enum Listed<'a> {
    Run(&'a ClaimOutcome),
    Kept(&'a Kept),
}

impl Listed<'_> {
    pub fn id(&self) -> &str {
        match self {
            Listed::Run(o) => &o.claim.id,
            Listed::Kept(k) => &k.id,
        }
    }
}
