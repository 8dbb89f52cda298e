//! The temporaries of the running process (temporary files of [`super::write_atomic`],
//! the report set's staging directory): registered while they exist, so that a run
//! stopped by SIGINT, SIGTERM or SIGHUP (`src/cli/signals.rs`) removes them before it
//! exits instead of leaving debris next to the user's files.
//!
//! **One owner per staging directory** (issue 58). A directory that a thread is moving
//! into place (the report set's staging directory, `report::set`) is *owned*
//! ([`own`]): the signal thread never removes it. A stop only marks the run stopped
//! ([`remove_all`] sets the flag, then waits for the owners); the owner checks
//! [`stopping`] at each step boundary of its swap and either abandons the swap (before
//! the exchange: it removes its staging directory, the old set untouched) or finishes it
//! (after the exchange: it removes the old set), then drops its [`Owned`] guard, which
//! wakes the signal thread. So the set on disk is always the old one or the new one,
//! whole. An owner that does not reach a boundary within [`OWNER_GRACE`] (blocked on a
//! slow disk) is left alone: the process exits as under SIGKILL, which the swap survives
//! (its step 1 removes the debris at the next run).
//!
//! A temporary file (of [`super::write_atomic`], a write probe) is registered *before*
//! it is created ([`begin`], refused once the run is stopping) and the stop waits for its
//! writer to rename or remove it: a file created after the stop's removal would be left
//! in the user's directory.
//!
//! Removal never crosses a mount boundary: a registered directory is removed only when
//! it is on the device it was registered on, and its tree is walked without descending
//! into another device ([`super::remove::remove_tree`]).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// What a registered temporary is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    /// A directory its owner removes or moves into place itself.
    Owned,
    /// A file being written and renamed (or removed) in a moment ([`begin`]): a stop
    /// waits for its writer, so no temporary is created after the stop's removal.
    Transient,
}

static TEMPS: Mutex<BTreeMap<PathBuf, Kind>> = Mutex::new(BTreeMap::new());
/// Signalled when an owned temporary is released.
static RELEASED: Condvar = Condvar::new();
/// Set once by a stop (a signal): no new owner is admitted, owners stop at their next
/// step boundary.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// How long a stop waits for the owners to reach a step boundary: a guard against an
/// owner blocked in the kernel, not a speed promise (a boundary comes after each file).
pub const OWNER_GRACE: Duration = Duration::from_secs(30);

/// Records a temporary (`dir`: a directory, removed with its tree).
pub fn register(path: &Path, dir: bool) {
    if let Ok(mut t) = TEMPS.lock() {
        t.insert(path.to_path_buf(), if dir { Kind::Dir } else { Kind::File });
    }
}

/// Records a file about to be created (a temporary of [`super::write_atomic`], a write
/// probe) *before* it is created: refused once the run is stopping, so a stop never
/// misses a temporary created after its removal; the stop waits for the writer to
/// [`unregister`] it (renamed into place or removed).
pub fn begin(path: &Path) -> std::io::Result<()> {
    let mut t = TEMPS.lock().map_err(|_| stopped_error())?;
    if stopping() {
        return Err(stopped_error());
    }
    t.insert(path.to_path_buf(), Kind::Transient);
    Ok(())
}

/// Forgets a temporary (renamed into place, or removed by its owner).
pub fn unregister(path: &Path) {
    if let Ok(mut t) = TEMPS.lock() {
        if matches!(t.remove(path), Some(Kind::Owned | Kind::Transient)) {
            RELEASED.notify_all();
        }
    }
}

/// How many temporaries are registered now (tests).
pub fn count() -> usize {
    TEMPS.lock().map(|t| t.len()).unwrap_or(0)
}

/// True once the run is being stopped (a signal): an owner abandons or finishes its
/// work at its next step boundary.
pub fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// Marks the run stopping (the first thing a signal's stop does, before it prints its
/// line): from here on no owner starts, and each stops at its next step boundary.
pub fn mark_stopping() {
    STOPPING.store(true, Ordering::SeqCst);
}

/// The error of an owner that stopped at a step boundary because the run is stopping.
pub fn stopped_error() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        "the run was stopped by a signal",
    )
}

/// The ownership of a temporary directory; released (and unregistered) when dropped.
pub struct Owned(PathBuf);

impl Drop for Owned {
    fn drop(&mut self) {
        unregister(&self.0);
    }
}

/// Takes the ownership of the directory `path` (module docs): the signal thread will
/// not remove it, and waits for the guard to be dropped. Refused once the run is
/// stopping (the owner must not start).
pub fn own(path: &Path) -> std::io::Result<Owned> {
    let mut t = TEMPS.lock().map_err(|_| stopped_error())?;
    if stopping() {
        return Err(stopped_error());
    }
    t.insert(path.to_path_buf(), Kind::Owned);
    Ok(Owned(path.to_path_buf()))
}

/// Stops the temporaries (at a signal's stop): marks the run stopping, waits at most
/// [`OWNER_GRACE`] for the owned directories to be released by their owners (never
/// removing one under its owner), then removes every other registered temporary. Safe
/// from any thread; a temporary file its writer is still writing is removed under it
/// (its write then fails, and the process is exiting anyway; each file is atomic).
pub fn remove_all() {
    let Ok(mut t) = TEMPS.lock() else {
        return;
    };
    STOPPING.store(true, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + OWNER_GRACE;
    while t
        .values()
        .any(|k| matches!(k, Kind::Owned | Kind::Transient))
    {
        let now = std::time::Instant::now();
        if now >= deadline {
            break;
        }
        t = match RELEASED.wait_timeout(t, deadline - now) {
            Ok((g, _)) => g,
            Err(_) => return,
        };
    }
    let all: Vec<(PathBuf, Kind)> = std::mem::take(&mut *t)
        .into_iter()
        .filter(|(_, k)| *k != Kind::Owned)
        .collect();
    drop(t);
    for (path, kind) in all {
        if kind == Kind::Dir {
            let _ = super::remove::remove_tree(&path);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
}
