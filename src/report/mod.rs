//! Reports: Markdown, CSV and SVG written atomically to `reports/`.
//!
//! Every file is rendered to a string first and then written with [`write_atomic`]
//! (temporary file in the same directory, then rename), so a report is never
//! half-written. Output contains no timings and no paths that depend on the machine,
//! so the same spec and seed give the same bytes.
pub mod baseline;
pub mod bench;
pub mod ci;
mod claim_page;
mod csv;
pub mod diff;
pub mod github;
pub mod heatmap;
pub mod html;
pub mod junit;
mod output;
mod plots;
pub mod snapshot;
pub mod stability;
mod summary;
pub mod svg;

pub use claim_page::{claim_markdown, prediction_text, result_line};
pub use csv::claim_csv;
pub use output::{prepare_output_dir, prepare_output_file, OutputError};
pub use plots::claim_svg;
pub use summary::{claim_in_words, claims_table, summary_markdown, verdicts_table};

use crate::judge::{ClaimOutcome, Tally};
use std::io::Write as _;
use std::path::Path;

/// Writes `contents` to `path` atomically (temp file + fsync + rename).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Formats a number for tables: 4 significant digits, scientific when far from 1.
pub fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if (1e-3..1e5).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    } else {
        format!("{v:.3e}")
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
                    "regime": r.regime,
                    "control": r.control,
                    "finding": r.finding,
                    "problem": r.problem,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({"profile": profile, "seed": seed, "claims": claims, "tally": Tally::of(outcomes)})
}

/// `verdicts.json`: the `--json` document of the run without the baseline line (which
/// depends on the snapshots, not on the run), pretty-printed — what `dpclaims diff` reads.
pub fn verdicts_json(outcomes: &[ClaimOutcome]) -> Option<String> {
    let first = outcomes.first()?;
    let doc = run_json(first.profile, first.seed, outcomes);
    Some(serde_json::to_string_pretty(&doc).expect("a JSON value serialises") + "\n")
}

/// Writes `<id>.md`, `<id>.csv`, `<id>.svg`, `<id>.html` of every outcome, `SUMMARY.md`,
/// `verdicts.json` and `index.html`.
pub fn write_reports(dir: &Path, outcomes: &[ClaimOutcome]) -> std::io::Result<()> {
    for o in outcomes {
        write_atomic(
            &dir.join(format!("{}.md", o.claim.id)),
            claim_markdown(o).as_bytes(),
        )?;
        write_atomic(
            &dir.join(format!("{}.csv", o.claim.id)),
            claim_csv(o).as_bytes(),
        )?;
        write_atomic(
            &dir.join(format!("{}.svg", o.claim.id)),
            claim_svg(o).as_bytes(),
        )?;
    }
    if let Some(v) = verdicts_json(outcomes) {
        write_atomic(&dir.join(diff::VERDICTS_FILE), v.as_bytes())?;
    }
    html::write_html(dir, outcomes)?;
    write_atomic(
        &dir.join("SUMMARY.md"),
        summary_markdown(outcomes).as_bytes(),
    )
}
