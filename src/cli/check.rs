//! `dpclaims check [PATH|ID...]`: every error of every spec at once, each with its file,
//! field and line:column (the library's [`crate::spec::check`]); exit 2 if any.
use crate::spec::check::{check_paths, CheckReport};
use clap::Args;
use std::path::{Path, PathBuf};
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
        if !Path::new("claims").is_dir() {
            anyhow::bail!("no claims/ here: pass claim files or ids");
        }
        vec![PathBuf::from("claims")]
    } else {
        resolve(&a.paths)?
    };
    let report = check_paths(&paths);
    if a.json {
        println!("{}", json(&report));
    } else {
        for d in &report.errors {
            println!("{d}");
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
    })
    .to_string()
}

/// Paths as given; a claim id that is not a path is `claims/<id>.yaml`, or the spec of
/// claims/ whose `id:` it is. Unlike `run`'s resolution this reads only the ids, so a
/// broken spec elsewhere in claims/ does not stop the check of the one asked for.
fn resolve(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.exists() || !super::select::looks_like_id(p) {
            out.push(p.clone());
            continue;
        }
        let id = p.to_string_lossy().into_owned();
        let direct = Path::new("claims").join(format!("{id}.yaml"));
        if direct.is_file() {
            out.push(direct);
            continue;
        }
        let files = crate::spec::spec_files(Path::new("claims")).map_err(|_| {
            anyhow::anyhow!(
                "`{id}` is neither a file nor a claim id: no claims/ here (pass claim files, \
                 directories or the ids of claims in ./claims/)"
            )
        })?;
        let mut ids = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let found = serde_yaml::from_str::<serde_yaml::Value>(&text)
                .ok()
                .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string));
            if let Some(found) = found {
                ids.push((found, f));
            }
        }
        match ids.iter().find(|(i, _)| *i == id) {
            Some((_, f)) => out.push(f.clone()),
            None => {
                let near = super::select::nearest(&id, ids.iter().map(|(i, _)| i.as_str()));
                anyhow::bail!(
                    "`{id}` is neither a file nor the id of a claim in claims/{}",
                    near.map(|n| format!(" (did you mean `{n}`?)"))
                        .unwrap_or_default()
                );
            }
        }
    }
    Ok(out)
}
