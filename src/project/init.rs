//! `dpclaims init [DIR]`: a project of one's own ([`super::templates`]). It refuses a
//! directory that is already a project (it holds [`super::MARKER`]) and never replaces
//! a file: when any file it would write exists, it writes nothing.
use super::templates::{FILES, SCHEMA};
use std::path::{Path, PathBuf};

/// Why a project could not be created (the CLI exits 2 with this message).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(
        "{0} is already a dpclaims project (it holds {marker}): nothing written; \
         add claims with `dpclaims new <id>` there",
        marker = super::MARKER
    )]
    AlreadyAProject(String),
    #[error("{dir} holds {which} already: nothing written (init never replaces a file; choose an empty directory)")]
    WouldOverwrite { dir: String, which: String },
    #[error("{0} is not a directory: nothing written")]
    NotADirectory(String),
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// The files written, relative to the project's root, in order.
pub fn files() -> Vec<&'static str> {
    FILES
        .iter()
        .map(|(p, _)| *p)
        .chain(std::iter::once(SCHEMA))
        .collect()
}

/// Creates the project in `dir` (created when missing); returns the files written.
pub fn init(dir: &Path) -> Result<Vec<PathBuf>, InitError> {
    let shown = dir.display().to_string();
    if dir.symlink_metadata().is_ok() && !dir.is_dir() {
        return Err(InitError::NotADirectory(shown));
    }
    if dir.join(super::MARKER).symlink_metadata().is_ok() {
        return Err(InitError::AlreadyAProject(shown));
    }
    let existing: Vec<&str> = files()
        .into_iter()
        .filter(|f| dir.join(f).symlink_metadata().is_ok())
        .collect();
    if !existing.is_empty() {
        return Err(InitError::WouldOverwrite {
            dir: shown,
            which: existing.join(", "),
        });
    }
    let name = project_name(dir);
    let schema = crate::spec::schema::claim_schema_json() + "\n";
    let mut written = Vec::new();
    let all = FILES
        .iter()
        .map(|(p, t)| (*p, t.replace("{{name}}", &name)))
        .chain(std::iter::once((SCHEMA, schema)));
    for (rel, text) in all {
        let path = dir.join(rel);
        write_new(&path, &text)?;
        written.push(path);
    }
    Ok(written)
}

/// The directory's name, as the project's name (`my-project` when it has none).
fn project_name(dir: &Path) -> String {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    abs.file_name()
        .map(|n| n.to_string_lossy().replace(['"', '\\'], ""))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "my-project".into())
}

/// Writes a new file (its directory created), never replacing one, even one created
/// since the check.
fn write_new(path: &Path, text: &str) -> Result<(), InitError> {
    use std::io::Write as _;
    let io = |source| InitError::Io {
        path: path.display().to_string(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_written_once_and_never_over_a_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("paper");
        let written = init(&dir).unwrap();
        assert_eq!(written.len(), files().len());
        // Every claim of the project loads as written.
        let claims = crate::spec::load_claims(&[dir.join("claims")]).unwrap();
        assert_eq!(claims.len(), 1);
        assert!(claims[0].draft().is_none());
        let again = init(&dir).unwrap_err().to_string();
        assert!(again.contains("already a dpclaims project"), "{again}");
        // Not a project, but a file init would write: nothing written.
        let other = d.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("README.md"), "mine").unwrap();
        let e = init(&other).unwrap_err().to_string();
        assert!(
            e.contains("README.md") && e.contains("nothing written"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(other.join("README.md")).unwrap(),
            "mine"
        );
        assert!(!other.join(crate::project::MARKER).exists());
    }
}
