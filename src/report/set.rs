//! A run's report set replaced atomically: a run killed at any moment (SIGKILL, power
//! aside) leaves the directory holding the previous complete set or the new complete one,
//! never a mix of the two.
//!
//! **How** (Linux). For `--out reports`, under an exclusive `flock` of the parent
//! directory (two runs into one directory take turns):
//! 1. a stale staging directory `.reports.dpclaims-staging` (left by a run killed before
//!    step 5 or 6) is removed;
//! 2. it is created again, next to `reports/` (same filesystem), and the run's files are
//!    written into it ([`Stage`]; each fsynced);
//! 3. every entry of `reports/` the run did not write is carried over: files hard-linked
//!    (copied where a link is refused), directories recreated recursively, symlinks
//!    recreated — the files other commands write (`fig2*`, `BENCH.md`, `FAULTS.md`,
//!    `STABILITY.md`, `full/`) and the pages of claims this run did not judge survive,
//!    unchanged and without copying their bytes;
//! 4. the staging directory is fsynced;
//! 5. `renameat2(staging, reports, RENAME_EXCHANGE)` swaps the two directories in one
//!    step: before it `reports/` is the old set, after it the new one;
//! 6. the staging name, now holding the old set, is removed.
//!
//! The old directory is never written to, so until step 5 it is intact; step 5 is
//! atomic; after it the new directory is complete. A kill between 5 and 6 leaves only
//! garbage under the staging name, which step 1 of the next run removes.
//!
//! `dpclaims fig2` replaces its files the same way (`figures::write_set`), under the same
//! lock, so it and a run take turns.
//!
//! **Not covered.** Another command writing into `reports/` in place *during* steps 3–5
//! (`perf`'s `BENCH.md`, `stability`'s `STABILITY.md` alongside a run) may lose its file,
//! which lands in the old directory; run such commands one after the other. Where the swap is impossible — not Linux, a
//! filesystem without `RENAME_EXCHANGE`, a parent directory that is not writable, or an
//! output directory that contains the working directory (swapping it would move the
//! shell's directory, and carry the whole tree over) — the files are written in place,
//! each atomically (temporary file and rename) but not as a set; [`Stage::in_place`]
//! says which.
//!
//! **Signals.** A SIGINT, SIGTERM or SIGHUP during the swap does not touch the staging
//! directory: its one owner is the thread running [`replace`] ([`crate::fsio::temps::own`]),
//! and every step above (each file written, each entry kept, the exchange) is a boundary
//! where that thread checks for a stop. Before the exchange it abandons the swap (the
//! staging directory removed, the old set untouched); after it, it finishes (the old set
//! removed). Either way the directory holds one whole set. The directory's mode and
//! group are those of the set it replaces.
//!
//! **Observing it in tests.** With `DPCLAIMS_REPORT_GATE` set, the writer prints
//! `dpclaims-report-step: <step>` on stderr before every step above and every file, and
//! waits for one line on stdin (end of input lets every later step through), so a test
//! can signal or kill the process at each step without timing anything. Nothing else
//! reads the variable.
use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};

/// Where a run's files are written: the staging directory, or the output directory
/// itself when the set cannot be swapped.
pub struct Stage {
    dir: PathBuf,
    in_place: bool,
    gate: bool,
}

impl Stage {
    /// The directory to write the set's files into (write them with [`Stage::write`], or
    /// under this path directly: every file found here is part of the new set).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when the files are written straight into the output directory (see the
    /// module docs): each file atomic, the set not.
    pub fn in_place(&self) -> bool {
        self.in_place
    }

    /// Writes `name` (a file name in [`Stage::dir`]) and fsyncs it. A step boundary:
    /// once the run is stopping (a signal), nothing more is written and the error is
    /// [`crate::fsio::temps::stopped_error`].
    pub fn write(&self, name: &str, contents: &[u8]) -> std::io::Result<()> {
        self.step(&format!("write {name}"))?;
        let path = self.dir.join(name);
        if self.in_place {
            return super::write_atomic(&path, contents);
        }
        // The staging directory is the run's own and fresh: a file already there (or a
        // link) was not written by this run, and is never opened.
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)?;
        f.write_all(contents)?;
        f.sync_all()
    }

    /// Carries into the stage's `sub` directory every entry of `dir/sub` (the previous
    /// set) that this run did not write there, as step 3 does for the whole set (a
    /// directory the run writes into is not carried over as a whole): the `raw/` files
    /// of the claims a run did not judge survive it. Nothing to do in place.
    pub fn keep_rest_of(&self, dir: &Path, sub: &str) -> std::io::Result<()> {
        if self.in_place {
            return Ok(());
        }
        let from = dir.join(sub);
        let entries = match std::fs::read_dir(&from) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        std::fs::create_dir_all(self.dir.join(sub))?;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let to = self.dir.join(sub).join(&name);
            if std::fs::symlink_metadata(&to).is_ok() || is_leftover(&name.to_string_lossy()) {
                continue;
            }
            link_tree(&entry.path(), &to)?;
        }
        Ok(())
    }

    /// A step boundary: the test gate (module docs), then the stop check — a run being
    /// stopped by a signal goes no further ([`crate::fsio::temps`]: the staging
    /// directory's one owner is this thread, which abandons or finishes the swap here).
    fn step(&self, what: &str) -> std::io::Result<()> {
        self.gate(what);
        if crate::fsio::temps::stopping() {
            return Err(crate::fsio::temps::stopped_error());
        }
        Ok(())
    }

    /// The test gate (module docs): announce `what`, wait for a line on stdin (end of
    /// input lets every later step through).
    fn gate(&self, what: &str) {
        if self.gate {
            eprintln!("dpclaims-report-step: {what}");
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
        }
    }
}

/// The name of the staging directory of `dir` (a sibling): `.<name>.dpclaims-staging`,
/// the name shortened ([`crate::fsio::fit_name`]) so that it fits `NAME_MAX` whenever
/// `dir`'s own name does (a legal 240-byte `--out` name is not refused after the work).
pub fn staging_dir(dir: &Path) -> Option<PathBuf> {
    const SUFFIX: &str = ".dpclaims-staging";
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let name = crate::fsio::fit_name(&name, 1 + SUFFIX.len());
    Some(dir.with_file_name(format!(".{name}{SUFFIX}")))
}

/// Replaces the report set of `dir` by what `fill` writes into the [`Stage`], atomically
/// where possible (module docs). `fill` may read the current contents of `dir`.
pub fn replace(
    dir: &Path,
    fill: impl FnOnce(&Stage) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let gate = std::env::var_os("DPCLAIMS_REPORT_GATE").is_some();
    std::fs::create_dir_all(dir)?;
    let in_place = |gate| Stage {
        dir: dir.to_path_buf(),
        in_place: true,
        gate,
    };
    let real = std::fs::canonicalize(dir)?;
    let contains_cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .is_ok_and(|cwd| cwd.starts_with(&real));
    let (Some(parent), Some(staging)) = (real.parent(), staging_dir(&real)) else {
        return fill(&in_place(gate));
    };
    if !cfg!(target_os = "linux") || contains_cwd || swap_impossible(&real).is_some() {
        return fill(&in_place(gate));
    }
    let Ok(_lock) = lock(parent) else {
        return fill(&in_place(gate));
    };
    let stage = Stage {
        dir: staging.clone(),
        in_place: false,
        gate,
    };
    // This thread is the staging directory's one owner (fsio::temps): a signal marks the
    // run stopped and waits; every step below is a boundary where the swap is abandoned
    // (before the exchange: the staging directory removed, the old set untouched) or
    // finished (after it). Refused when the run is stopping already.
    let _owned = crate::fsio::temps::own(&staging)?;
    stage.step("remove a stale staging directory")?;
    if std::fs::symlink_metadata(&staging).is_ok() {
        crate::fsio::remove::remove_tree(&staging)?;
    }
    match std::fs::create_dir(&staging) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return fill(&in_place(gate));
        }
        Err(e) => return Err(e),
    }
    let built = (|| {
        std::fs::set_permissions(&staging, std::fs::metadata(&real)?.permissions())?;
        fill(&stage)?;
        for entry in std::fs::read_dir(&real)? {
            let entry = entry?;
            let name = entry.file_name();
            let to = staging.join(&name);
            if std::fs::symlink_metadata(&to).is_ok() || is_leftover(&name.to_string_lossy()) {
                continue;
            }
            stage.step(&format!("keep {}", name.to_string_lossy()))?;
            link_tree(&entry.path(), &to)?;
        }
        std::fs::File::open(&staging)?.sync_all()
    })();
    let built = built.and_then(|()| stage.step("exchange"));
    if let Err(e) = built {
        // Abandoned (an error, or a stop at a step boundary): the old set is untouched.
        let _ = crate::fsio::remove::remove_tree(&staging);
        return Err(e);
    }
    keep_group(&real, &staging);
    if let Err(e) = exchange(&staging, &real) {
        // No RENAME_EXCHANGE here: move the new files in one by one (each atomic).
        // EBUSY, EXDEV: a mount point that `swap_impossible` did not see (a bind mount of
        // the same file system): copied in, each file atomically.
        if !matches!(
            e.raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP | libc::EBUSY | libc::EXDEV)
        ) {
            let _ = crate::fsio::remove::remove_tree(&staging);
            return Err(e);
        }
        for entry in std::fs::read_dir(&staging)? {
            let entry = entry?;
            let to = real.join(entry.file_name());
            if entry.file_type()?.is_file() && !to.is_dir() {
                let bytes = std::fs::read(entry.path())?;
                super::write_atomic(&to, &bytes)?;
            }
        }
    }
    std::fs::File::open(parent)?.sync_all()?;
    // The new set is in place: a stop from here on finishes the swap (the old set, now
    // under the staging name, is removed) and then stops the run.
    stage.gate("remove the old set");
    crate::fsio::remove::remove_tree(&staging)?;
    stage.gate("done");
    if crate::fsio::temps::stopping() {
        return Err(crate::fsio::temps::stopped_error());
    }
    Ok(())
}

/// Gives the staging directory the group of the directory it replaces (its mode is
/// copied when it is created): a report directory shared through its group keeps it
/// across runs. Best effort: a group the user is not a member of cannot be given, and
/// the set is still replaced.
fn keep_group(real: &Path, staging: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    let (Ok(old), Ok(new)) = (std::fs::metadata(real), std::fs::metadata(staging)) else {
        return;
    };
    if old.gid() != new.gid() {
        let _ = std::os::unix::fs::chown(staging, None, Some(old.gid()));
        // chown may clear set-group-id: the mode again.
        let _ = std::fs::set_permissions(staging, old.permissions());
    }
}

/// Why the set in `dir` cannot be replaced by a directory swap, or `None` when it can:
/// `dir` is a mount point (a Docker volume, a tmpfs: `rename` of a mount point fails with
/// `EBUSY`) or on another file system than its parent (`EXDEV`). Decided before any work
/// (`dpclaims run` says so up front); the set is then written file by file.
pub fn swap_impossible(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let real = std::fs::canonicalize(dir).ok()?;
    let parent = real.parent()?;
    let (d, p) = (
        std::fs::metadata(&real).ok()?,
        std::fs::metadata(parent).ok()?,
    );
    if d.dev() != p.dev() {
        return Some(format!(
            "{} is on another file system than its parent (a mount point)",
            dir.display()
        ));
    }
    // A bind mount of the same file system keeps the device number: ask the mount table.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let target = real.to_string_lossy();
    let listed = mounts.lines().any(|l| {
        l.split(' ')
            .nth(4)
            .is_some_and(|m| crate::fsio::remove::unescape_mount(m) == target)
    });
    listed.then(|| format!("{} is a mount point", dir.display()))
}

/// Debris of an interrupted write that must not be carried over: the temporary files
/// of [`super::write_atomic`] (`.<name>.tmp-<pid>`) and the write probes of
/// [`super::prepare_output_dir`].
fn is_leftover(name: &str) -> bool {
    name.starts_with('.') && (name.contains(".tmp-") || name.starts_with(".dpclaims-write-probe-"))
}

/// An exclusive `flock` of directory `dir`, released when the file is dropped.
fn lock(dir: &Path) -> std::io::Result<std::fs::File> {
    let f = std::fs::File::open(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd as _;
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(f)
}

/// Swaps two directories in one step: `renameat2(a, b, RENAME_EXCHANGE)` (Linux ≥ 3.15;
/// ext4, xfs, btrfs, tmpfs, overlayfs...).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt as _;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: two NUL-terminated paths that outlive the call; the raw syscall avoids
    // depending on the libc version exporting the wrapper.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from_raw_os_error(libc::ENOSYS))
}

/// Recreates `from` at `to`: a file hard-linked (copied if the link is refused), a
/// directory recursively, a symlink as a symlink.
fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let m = std::fs::symlink_metadata(from)?;
    let t = m.file_type();
    if t.is_symlink() {
        #[cfg(unix)]
        return std::os::unix::fs::symlink(std::fs::read_link(from)?, to);
    }
    if t.is_dir() {
        std::fs::create_dir(to)?;
        std::fs::set_permissions(to, m.permissions())?;
        for e in std::fs::read_dir(from)? {
            let e = e?;
            link_tree(&e.path(), &to.join(e.file_name()))?;
        }
        return Ok(());
    }
    if t.is_file() {
        return std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(|_| ()));
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{}: neither a file, a directory nor a symlink: cannot carry it into the new report set",
            from.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_replaces_the_old_one_and_other_files_survive() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("reports");
        std::fs::create_dir_all(dir.join("full")).unwrap();
        std::fs::write(dir.join("a.md"), "old a").unwrap();
        std::fs::write(dir.join("BENCH.md"), "bench").unwrap();
        std::fs::write(dir.join("full/x.md"), "x").unwrap();
        std::fs::write(dir.join(".a.md.tmp-123"), "debris").unwrap();
        std::fs::create_dir(staging_dir(&dir).unwrap()).unwrap();
        replace(&dir, |s| {
            assert!(!s.in_place());
            s.write("a.md", b"new a")
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.md")).unwrap(), "new a");
        assert_eq!(
            std::fs::read_to_string(dir.join("BENCH.md")).unwrap(),
            "bench"
        );
        assert_eq!(std::fs::read_to_string(dir.join("full/x.md")).unwrap(), "x");
        assert!(!dir.join(".a.md.tmp-123").exists());
        assert!(!staging_dir(&dir).unwrap().exists());
    }

    #[test]
    fn a_failing_writer_leaves_the_old_set() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("reports");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.md"), "old a").unwrap();
        let e = replace(&dir, |s| {
            s.write("a.md", b"new a")?;
            Err(std::io::Error::other("boom"))
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(dir.join("a.md")).unwrap(), "old a");
        assert!(!staging_dir(&dir).unwrap().exists());
    }
}
