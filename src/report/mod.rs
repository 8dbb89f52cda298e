//! Reports: Markdown, CSV and SVG written atomically to `reports/`.
//!
//! Every file is rendered to a string first. A run's set (pages, `SUMMARY.md`,
//! `verdicts.json`) replaces the previous set in one step ([`set`]: staging directory,
//! then `renameat2(RENAME_EXCHANGE)`); a run of some claims keeps the rows of the others
//! ([`kept`]). Single files of other commands are written with [`write_atomic`]
//! (temporary file in the same directory, then rename), so no report is ever
//! half-written. Output contains no timings and no paths that depend on the machine,
//! so the same spec and seed give the same bytes.
pub mod baseline;
pub mod bench;
pub mod ci;
mod claim_page;
mod csv;
pub mod diff;
pub mod export;
pub mod github;
pub mod heatmap;
pub mod html;
mod internal_refs;
pub mod junit;
pub mod kept;
pub(crate) mod margin;
pub mod number;
mod output;
pub mod pending;
mod plots;
mod rows;
pub mod scorecard;
pub mod set;
pub mod snapshot;
pub mod stability;
mod summary;
pub mod svg;

pub use claim_page::{claim_markdown, prediction_text, regime_line, result_line};
pub use csv::claim_csv;
pub use kept::Listed;
pub use output::{
    eprint_line, escape_controls, prepare_output_dir, prepare_output_file, print_command,
    shown_path, terminal_text, OutputError,
};
pub use plots::claim_svg;
pub use rows::SummaryRows;
pub use summary::{
    claim_in_words, claims_table, summary_markdown, summary_markdown_listed, verdicts_table,
};

use crate::judge::{ClaimOutcome, Tally};
use std::path::Path;

/// The subdirectory of a report set holding `<id>.csv` with the raw `f64` of every
/// replicate ([`csv::claim_csv_raw`]; for debugging, not committed: `.gitignore`).
pub const RAW_DIR: &str = "raw";

/// Writes `contents` to `path` atomically (temporary file with an unpredictable name,
/// fsync, rename; a device or FIFO is written in place, never replaced): the one writer
/// of single files, [`crate::fsio::write_atomic`].
pub use crate::fsio::write_atomic;

pub use number::table as fmt_num;

/// `s` as a sentence: a full stop appended unless it already ends with one (a spec's
/// counterexample often does: "… is valid." must not read "valid.." on a page).
pub(crate) fn sentence(s: &str) -> String {
    let t = s.trim_end();
    if t.ends_with(['.', '!', '?']) {
        t.to_string()
    } else {
        format!("{t}.")
    }
}

pub(crate) fn fmt_opt(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "—".into())
}

pub(crate) fn fmt_ci(ci: Option<(f64, f64)>) -> String {
    ci.map(|(a, b)| format!("[{}, {}]", fmt_num(a), fmt_num(b)))
        .unwrap_or_else(|| "—".into())
}

pub(crate) fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (m, sd)
}

/// The `--json` document of `dpclaims run`.
pub fn run_json(
    profile: crate::spec::Profile,
    seed: u64,
    outcomes: &[ClaimOutcome],
) -> serde_json::Value {
    let claims: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "id": o.claim.id,
                "source": o.claim.source.to_string(),
                // The registration ledger: when the judged parts were registered and
                // every change after results (crate::spec::ledger).
                "registered": o.claim.ledger.as_ref().map(|e| &e.registered),
                "amendments": o.claim.ledger.as_ref().map(|e| &e.amendments),
                "results": o.results.iter().map(|r| serde_json::json!({
                    "prediction": r.prediction_name,
                    "variant": r.variant,
                    "negative_control": r.negative_control,
                    "metric": r.metric,
                    "kind": r.kind,
                    "x": r.x,
                    "estimate": r.estimate,
                    "ci": r.ci.map(|(a, b)| vec![a, b]),
                    "predicted": r.predicted,
                    "tolerance": r.tolerance,
                    "verdict": r.verdict,
                    "evidence": r.evidence,
                    "word": r.word,
                    "ablation": r.ablation,
                    "discriminating": r.discriminating,
                    "erratum": r.erratum,
                    "implied_constant": r.detail.implied_constant.map(|(c, (a, b))| vec![c, a, b]),
                    "trend": r.trend,
                    "power": r.power,
                    "replicates": r.replicates,
                    "regime": r.regime,
                    "control": r.control,
                    "finding": r.finding,
                    "problem": r.problem,
                    // Commits of the amendments this row's verdict moved with.
                    "verdict_moved_by": o.claim.ledger.as_ref().map(|e| e
                        .moved_row(&r.prediction_name, &r.variant)
                        .iter()
                        .map(|a| a.commit.clone())
                        .collect::<Vec<_>>()).unwrap_or_default(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({"profile": profile, "seed": seed, "claims": claims, "tally": Tally::of(outcomes)})
}

/// `verdicts.json`: the `--json` document of the run without the baseline line (which
/// depends on the snapshots, not on the run), pretty-printed — what `dpclaims diff` reads.
/// Its numbers are rounded to 6 significant digits and its texts' long decimals too
/// ([`number::json`]), so its bytes do not depend on the machine's kernels.
/// It adds the engine hash of the build (`engine`) and per claim its rows of
/// `SUMMARY.md` (`summary`), so a later run of other claims can keep them.
pub fn verdicts_json(outcomes: &[ClaimOutcome]) -> Option<String> {
    verdicts_json_listed(
        outcomes,
        &outcomes.iter().map(Listed::Run).collect::<Vec<_>>(),
    )
}

/// `verdicts.json` listing `listed`: this run's claims and those kept (with `from`).
pub fn verdicts_json_listed(outcomes: &[ClaimOutcome], listed: &[Listed]) -> Option<String> {
    let first = outcomes.first()?;
    let mut doc = run_json(first.profile, first.seed, outcomes);
    let claims: Vec<serde_json::Value> = listed
        .iter()
        .map(|l| match l {
            Listed::Run(o) => {
                let mut c = doc["claims"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|c| c["id"] == o.claim.id.as_str()))
                    .cloned()
                    .expect("every listed outcome is in the run's document");
                c["summary"] = serde_json::to_value(SummaryRows::of(o)).expect("rows serialise");
                c
            }
            Listed::Kept(k) => k.doc.clone(),
        })
        .collect();
    doc["claims"] = serde_json::Value::Array(claims);
    doc["engine"] = crate::build_id::ENGINE_HASH.into();
    number::json(&mut doc);
    Some(serde_json::to_string_pretty(&doc).expect("a JSON value serialises") + "\n")
}

/// Writes the run's report set — `<id>.md`, `<id>.csv`, `<id>.svg`, `<id>.html` and
/// `raw/<id>.csv` of every outcome, `SUMMARY.md`, `verdicts.json` and `index.html` — replacing the previous set of `dir` atomically
/// ([`set`]). Claims of the previous set that this run did not judge keep their pages
/// and their rows, marked with the run they came from ([`kept`]). This is the one place
/// that writes a run's set: a new file of the set is written with `stage.write` (or
/// under `stage.dir()`), never into `dir`.
pub fn write_reports(dir: &Path, outcomes: &[ClaimOutcome]) -> std::io::Result<()> {
    write_reports_with(dir, outcomes, &[], &scorecard::Catalogue::new())
}

/// [`write_reports`], plus one `scorecard-<name>.md` (and `.html`) per validated
/// scorecard of `cards`, from this run's outcomes and the kept verdicts ([`scorecard`]);
/// `claims` describes the claims they name (their sweeps, for the regime column).
pub fn write_reports_with(
    dir: &Path,
    outcomes: &[ClaimOutcome],
    cards: &[scorecard::Scorecard],
    claims: &scorecard::Catalogue,
) -> std::io::Result<()> {
    write_reports_figures(dir, outcomes, cards, claims, &[])
}

/// [`write_reports_with`], plus `<id>.png` and `<id>.pdf` beside `<id>.svg` when
/// `figures` asks for them ([`export`]; `run --figures`).
pub fn write_reports_figures(
    dir: &Path,
    outcomes: &[ClaimOutcome],
    cards: &[scorecard::Scorecard],
    claims: &scorecard::Catalogue,
    figures: &[export::FigureFormat],
) -> std::io::Result<()> {
    set::replace(dir, |stage| {
        let previous = kept::previous(dir, outcomes)?;
        let listed = previous.listing(outcomes);
        for o in outcomes {
            let id = &o.claim.id;
            stage.write(&format!("{id}.md"), claim_markdown(o).as_bytes())?;
            stage.write(&format!("{id}.csv"), claim_csv(o).as_bytes())?;
            std::fs::create_dir_all(stage.dir().join(RAW_DIR))?;
            stage.write(
                &format!("{RAW_DIR}/{id}.csv"),
                csv::claim_csv_raw(o).as_bytes(),
            )?;
            let svg = claim_svg(o);
            stage.write(&format!("{id}.svg"), svg.as_bytes())?;
            let extra = export::exports(id, &svg, figures).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{id}.svg: {e}"))
            })?;
            for (name, bytes) in extra {
                stage.write(&name, &bytes)?;
            }
        }
        stage.keep_rest_of(dir, RAW_DIR)?;
        if let Some(v) = verdicts_json_listed(outcomes, &listed) {
            stage.write(diff::VERDICTS_FILE, v.as_bytes())?;
        }
        // Only the papers whose claims are in this set (run now or kept): a subset run
        // into a fresh directory gets its own paper's scorecard, not every paper's.
        let present = |id: &str| {
            outcomes.iter().any(|o| o.claim.id == id) || previous.kept.iter().any(|k| k.id == id)
        };
        let mut plots = std::collections::BTreeMap::new();
        for card in cards.iter().filter(|c| {
            c.results
                .iter()
                .any(|r| r.checked_by.iter().any(|ch| present(&ch.claim)))
        }) {
            let md = scorecard::scorecard_page(card, claims, outcomes, &previous.kept);
            stage.write(&format!("{}.md", card.page), md.as_bytes())?;
            plots.insert(
                card.page.clone(),
                scorecard::key_plots_html(card, claims, outcomes, &previous.kept),
            );
            let md = scorecard::details_page(card, claims, outcomes, &previous.kept);
            stage.write(&format!("{}-details.md", card.page), md.as_bytes())?;
        }
        html::write_html(stage.dir(), dir, outcomes, &previous.kept, &plots)?;
        stage.write(
            "SUMMARY.md",
            summary_markdown_listed(outcomes, &listed).as_bytes(),
        )
    })
}

/// One line per claim whose rows are reported apart: a draft (a TODO placeholder for its
/// statement or a quote: never counted for the paper) and each exploratory variant
/// (never counted, never a regression of the core, never compared with the baseline,
/// so `--require-baseline` ignores it).
pub fn apart_lines(outcomes: &[crate::judge::ClaimOutcome]) -> Vec<String> {
    let mut out = Vec::new();
    for o in outcomes {
        if let Some(why) = o.claim.draft() {
            out.push(format!(
                "draft: {} ({why}): its {} main rows are shown, never counted for the paper",
                o.claim.id,
                o.results.iter().filter(|r| !r.negative_control).count()
            ));
        }
        for v in o.claim.variants.iter().filter(|v| v.exploratory) {
            let rows = o.results.iter().filter(|r| r.variant == v.name).count();
            out.push(format!(
                "exploratory: {} / {}: {rows} rows reported apart (not counted, never a \
                 regression of the core, not compared with the baseline)",
                o.claim.id, v.name
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_sentence_gets_one_full_stop() {
        assert_eq!(
            super::sentence("the calibration is valid."),
            "the calibration is valid."
        );
        assert_eq!(
            super::sentence("C_W is never defined "),
            "C_W is never defined."
        );
        assert_eq!(super::sentence("why?"), "why?");
    }
}
