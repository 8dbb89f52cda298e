//! The temporaries of the running process (temporary files of [`super::write_atomic`],
//! the report set's staging directory): registered while they exist, so that a run
//! stopped by SIGINT, SIGTERM or SIGHUP (`src/cli/signals.rs`) removes them before it
//! exits instead of leaving debris next to the user's files.
//!
//! Removal never crosses a mount boundary: a registered directory is removed only when
//! it is on the device it was registered on, and its tree is walked without descending
//! into another device ([`super::remove::remove_tree`]).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static TEMPS: Mutex<BTreeMap<PathBuf, bool>> = Mutex::new(BTreeMap::new());

/// Records a temporary (`dir`: a directory, removed with its tree).
pub fn register(path: &Path, dir: bool) {
    if let Ok(mut t) = TEMPS.lock() {
        t.insert(path.to_path_buf(), dir);
    }
}

/// Forgets a temporary (renamed into place, or removed by its owner).
pub fn unregister(path: &Path) {
    if let Ok(mut t) = TEMPS.lock() {
        t.remove(path);
    }
}

/// How many temporaries are registered now (tests).
pub fn count() -> usize {
    TEMPS.lock().map(|t| t.len()).unwrap_or(0)
}

/// Removes every registered temporary (at a signal's stop). Safe from any thread; a
/// temporary its owner is still writing is removed under it (its write then fails, and
/// the process is exiting anyway).
pub fn remove_all() {
    let all: Vec<(PathBuf, bool)> = match TEMPS.lock() {
        Ok(mut t) => std::mem::take(&mut *t).into_iter().collect(),
        Err(_) => return,
    };
    for (path, dir) in all {
        if dir {
            let _ = super::remove::remove_tree(&path);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
}
