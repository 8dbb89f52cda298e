//! `dpclaims diff OLD NEW`: what changed between two runs (report directories holding
//! `verdicts.json`, or saved `dpclaims run --json` documents); the rules are in
//! [`crate::report::diff`].
use crate::report::diff::{self, VerdictsDoc};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The earlier run: a report directory (its verdicts.json) or a `run --json` document.
    pub old: PathBuf,
    /// The later run, likewise.
    pub new: PathBuf,
    /// Markdown for a pull-request comment instead of plain lines.
    #[arg(long)]
    pub markdown: bool,
    /// Also fail (exit 1) when a verdict is unchanged and its estimate moved within its
    /// confidence intervals (shown as `within` either way).
    #[arg(long)]
    pub strict: bool,
    /// Compare only the claims and results both runs have (a subset run against a whole
    /// one): additions and removals are neither shown nor counted.
    #[arg(long)]
    pub common_only: bool,
}

/// Prints the changes; exit 0 when there is none (estimates that moved within their
/// intervals under unchanged verdicts are shown and, without --strict, pass), 1
/// otherwise (2, naming the file, when an input cannot be read).
pub fn run(a: &DiffArgs) -> anyhow::Result<ExitCode> {
    let (old_file, old) = VerdictsDoc::load(&a.old)?;
    let (new_file, new) = VerdictsDoc::load(&a.new)?;
    let mut changes = diff::diff(&old, &new);
    if a.common_only {
        changes.retain(|c| !c.one_sided());
    }
    let note = diff::runs_note(&old, &new);
    if a.markdown {
        print!(
            "{}",
            crate::report::terminal_text(&diff::markdown(
                &old_file,
                &new_file,
                &changes,
                note.as_deref()
            ))
        );
    } else {
        if let Some(n) = &note {
            eprintln!("{}", crate::report::terminal_text(n));
        }
        print!(
            "{}",
            crate::report::terminal_text(&diff::text(&old_file, &new_file, &changes))
        );
    }
    Ok(if !changes.iter().any(|c| c.counts(a.strict)) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
