//! A dpclaims project of one's own (issue 47, item 1): its root, found as git finds a
//! repository (the nearest ancestor of the working directory holding the marker
//! [`MARKER`], written by `dpclaims init`), and every default path of the commands
//! (claims/, scorecards/, reports/, the baseline tests/snapshots/, the pending snapshots
//! and the per-run directories of target/dpclaims/, the result cache) taken from it,
//! never from the tool's own checkout. Outside any project the root is the working
//! directory, as before there were projects.
pub mod init;
pub mod stale;
mod templates;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The file that marks a project's root (`dpclaims init` writes it).
pub const MARKER: &str = "dpclaims.toml";

/// The nearest directory from `start` upwards (itself included) that holds [`MARKER`]
/// as a regular file.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join(MARKER).is_file())
        .map(Path::to_path_buf)
}

/// The project root relative to the working directory: empty when the working
/// directory is the root or no project encloses it, else `..` once per level (so that
/// paths in messages stay short and relative). Computed once per process.
pub fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let Ok(cwd) = std::env::current_dir() else {
            return PathBuf::new();
        };
        let Some(root) = find_root(&cwd) else {
            return PathBuf::new();
        };
        let up = cwd
            .strip_prefix(&root)
            .map(|rest| rest.components().count())
            .unwrap_or(0);
        (0..up).map(|_| "..").collect()
    })
}

/// `rel` (a default path such as `claims` or `tests/snapshots`) under the project root.
pub fn path(rel: impl AsRef<Path>) -> PathBuf {
    let r = root();
    if r.as_os_str().is_empty() {
        rel.as_ref().to_path_buf()
    } else {
        r.join(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_marker_wins_and_none_is_none() {
        let d = tempfile::tempdir().unwrap();
        let outer = d.path();
        let inner = outer.join("a/b");
        std::fs::create_dir_all(inner.join("c")).unwrap();
        assert_eq!(find_root(&inner.join("c")), None);
        std::fs::write(outer.join(MARKER), "").unwrap();
        assert_eq!(find_root(&inner.join("c")).as_deref(), Some(outer));
        std::fs::write(inner.join(MARKER), "").unwrap();
        assert_eq!(
            find_root(&inner.join("c")).as_deref(),
            Some(inner.as_path())
        );
        // A directory of that name is no marker.
        std::fs::create_dir_all(inner.join("c/x").join(MARKER)).unwrap();
        assert_eq!(
            find_root(&inner.join("c/x")).as_deref(),
            Some(inner.as_path())
        );
    }
}
