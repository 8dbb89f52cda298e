//! `dpclaims check [PATH|ID...]`: every error of every spec at once, each with its file,
//! field and line:column (the library's [`crate::spec::check`]); exit 2 if any.
use crate::spec::check::{check_paths, CheckReport};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Spec files, directories of specs, or ids of claims in ./claims/ (default: claims/).
    #[arg(value_name = "PATH|ID")]
    pub paths: Vec<PathBuf>,
    /// One JSON document on stdout: {ok, files, valid, errors: [{file, line, column, field,
    /// message}]}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &CheckArgs) -> anyhow::Result<ExitCode> {
    let paths = if a.paths.is_empty() {
        let claims = crate::project::path("claims");
        if !claims.is_dir() {
            anyhow::bail!(
                "no claims/ here: pass claim files or ids (or `dpclaims init` a project)"
            );
        }
        vec![claims]
    } else {
        super::select::resolve(&a.paths)?
    };
    let report = check_paths(&paths);
    if a.json {
        println!("{}", json(&report));
    } else {
        for d in &report.errors {
            println!("{}", crate::report::terminal_text(&d.to_string()));
        }
        for d in &report.placeholders {
            println!("{d}");
        }
        if !report.placeholders.is_empty() {
            println!(
                "{} TODO placeholder{} left (not errors; a claim whose statement or quote is \
                 one is a draft: reported apart, never counted)",
                report.placeholders.len(),
                if report.placeholders.len() == 1 {
                    ""
                } else {
                    "s"
                }
            );
        }
        if report.ok() {
            println!(
                "ok: {} claim{} checked",
                report.files,
                if report.files == 1 { "" } else { "s" }
            );
        } else {
            println!(
                "{} error{} in {} of {} spec file{}",
                report.errors.len(),
                if report.errors.len() == 1 { "" } else { "s" },
                report.bad_files(),
                report.files,
                if report.files == 1 { "" } else { "s" }
            );
        }
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

fn json(r: &CheckReport) -> String {
    serde_json::json!({
        "ok": r.ok(),
        "files": r.files,
        "valid": r.valid,
        "errors": r.errors,
        "placeholders": r.placeholders,
    })
    .to_string()
}
