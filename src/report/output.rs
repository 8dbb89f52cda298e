//! The output directory of a command, checked before any work: a run that simulates
//! for an hour and then cannot write its reports has lost that hour.
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// An output location that cannot be written: names the path and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to {}: {reason}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    pub reason: String,
}

/// Creates `dir` (and its parents) and checks that a file can be created in it, by
/// writing and removing a probe file. Fails naming `dir` when it cannot be created
/// (under /proc, a file where a directory is expected, no permission) or written.
pub fn prepare_output_dir(dir: &Path) -> Result<(), OutputError> {
    let fail = |reason: String| OutputError {
        path: dir.to_path_buf(),
        reason,
    };
    if let Some(file) = file_in_the_way(dir) {
        return Err(fail(if file == dir {
            "it is a file, not a directory".into()
        } else {
            format!("{} is a file, not a directory", file.display())
        }));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory: {e}")))?;
    if !dir.is_dir() {
        return Err(fail("not a directory".into()));
    }
    let probe = dir.join(format!(".dpclaims-write-probe-{}", std::process::id()));
    let written = std::fs::File::create(&probe)
        .and_then(|mut f| f.write_all(b"probe").and_then(|()| f.sync_all()));
    let _ = std::fs::remove_file(&probe);
    written.map_err(|e| fail(format!("the directory is not writable: {e}")))
}

/// Checks that `file` can be written: its directory is prepared as by
/// [`prepare_output_dir`] and `file` itself is not a directory.
pub fn prepare_output_file(file: &Path) -> Result<(), OutputError> {
    if file.is_dir() {
        return Err(OutputError {
            path: file.to_path_buf(),
            reason: "it is a directory, not a file".into(),
        });
    }
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    prepare_output_dir(dir)
}

/// The first existing non-directory among `dir` and its ancestors (following symlinks).
fn file_in_the_way(dir: &Path) -> Option<PathBuf> {
    let mut p = Some(dir);
    while let Some(q) = p {
        if !q.as_os_str().is_empty() {
            if let Ok(m) = std::fs::metadata(q) {
                return (!m.is_dir()).then(|| q.to_path_buf());
            }
        }
        p = q.parent();
    }
    None
}
