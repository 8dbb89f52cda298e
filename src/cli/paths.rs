//! Where a command's claims and outputs are when the command line does not say: the
//! claim paths (`claims/`, or ids read as `claims/<id>.yaml`) and the report directory
//! (`reports/` only for the whole suite at its defaults, else `target/dpclaims/<name>`).
use std::path::PathBuf;

/// `out`, unless it is the committed `reports` and `subset` names what makes the run
/// less than the whole suite at its defaults: then `target/dpclaims/<subset>`.
pub(super) fn committed_or(out: PathBuf, subset: Option<String>) -> PathBuf {
    match subset {
        Some(name) if out == crate::project::path("reports") => {
            crate::project::path("target").join("dpclaims").join(name)
        }
        _ => out,
    }
}

/// `reports` when `paths` is the `claims/` directory of the working directory (or
/// empty), else `target/dpclaims/<name>`.
pub(super) fn default_out(paths: &[PathBuf]) -> PathBuf {
    let claims = std::fs::canonicalize(crate::project::path("claims")).ok();
    let whole = paths.is_empty()
        || (paths.len() == 1
            && claims.is_some()
            && std::fs::canonicalize(&paths[0]).ok() == claims);
    if whole {
        return crate::project::path("reports");
    }
    let name = match paths {
        [one] => one
            .file_stem()
            .or_else(|| one.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty() && s != "." && s != "..")
            .unwrap_or_else(|| "run".into()),
        _ => "selection".into(),
    };
    // Keep the name a plain directory name (no separators, no leading dot).
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    crate::project::path("target")
        .join("dpclaims")
        .join(name.trim_start_matches('_'))
}

/// The claim paths of `list`, `run`, `plan`, `stability` and `slurm`: `claims/` when
/// none is given (outside a checkout, where there is none, an error that says what to
/// pass), and claim ids read as their files in `claims/` ([`super::select::resolve`]:
/// what the shell completion offers).
pub(super) fn default_paths(p: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    if p.is_empty() {
        let claims = crate::project::path("claims");
        if !claims.is_dir() {
            anyhow::bail!(
                "no claims/ here: pass claim files or ids (or `dpclaims init` a project)"
            );
        }
        return Ok(vec![claims]);
    }
    super::select::resolve(p)
}
