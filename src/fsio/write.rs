//! Replacing a file (module docs of [`crate::fsio`]): [`write_atomic`] is the one writer
//! of single files (reports, partials, records, JUnit XML, cache entries).
//!
//! What is at the path decides how it is written:
//! * nothing, a regular file, or a symbolic link: the bytes go to a temporary file in the
//!   same directory — named `.<name>.tmp-<pid>-<16 random hex digits>`, created with
//!   `O_EXCL | O_NOFOLLOW` (never through a link planted at that name; on a collision
//!   another name is drawn) — which is fsynced and renamed over the path. A link at the
//!   path is *replaced*, never written through: the tool does not write where a link it
//!   did not create points.
//! * a character device or a named pipe itself (not a link to one: a FIFO a reader waits
//!   on), and any path under `/dev/` or `/proc/` (`--junit /dev/null`, `/dev/stdout`):
//!   written *in place*, never replaced (renaming a regular file over `/dev/null`, as
//!   root, would destroy the device). A FIFO with no reader is an error, not a wait.
//!   `/dev/stdout` and `/dev/stderr` are written on the process's own streams.
//! * a directory, a block device or a socket: refused with an error saying what it is.
use std::fs::OpenOptions;
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::{self, Write as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether the file's bytes are flushed to the disk before the rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` before the rename (reports, partials, records).
    Fsync,
    /// No `fsync` (cache entries: a torn entry fails its checksum and is recomputed).
    NoFsync,
}

/// Writes `contents` to `path` atomically with `fsync` (module docs).
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    write_atomic_with(path, contents, Durability::Fsync)
}

/// Writes `contents` to `path` (module docs), flushed as `durability` says.
pub fn write_atomic_with(path: &Path, contents: &[u8], durability: Durability) -> io::Result<()> {
    let named = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    // The process's own output streams: written on the open descriptor, where the rest
    // of the output goes (reopening a redirected file would write over it from offset 0).
    match path.to_str() {
        Some("/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1") => {
            let mut out = io::stdout().lock();
            return out.write_all(contents).and_then(|()| out.flush());
        }
        Some("/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") => {
            return io::stderr().lock().write_all(contents);
        }
        _ => {}
    }
    if is_system_path(path) {
        return write_in_place(path, contents);
    }
    // `lstat`: a link at the path is replaced like a file, whatever it points at (only
    // under /dev and /proc, above, is a path written through).
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let t = m.file_type();
        if t.is_char_device() || t.is_fifo() {
            return write_in_place(path, contents);
        }
        if !t.is_file() && !t.is_symlink() {
            return Err(named(format!(
                "{} is {}: refusing to replace it with a file",
                path.display(),
                super::describe(t)
            )));
        }
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    // Registered before it exists (temps::begin), unregistered once renamed or removed.
    let (tmp, mut f) = create_temporary(dir, &name)?;
    let written = f
        .write_all(contents)
        .and_then(|()| match durability {
            Durability::Fsync => f.sync_all(),
            Durability::NoFsync => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    drop(f);
    let written = written.inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    });
    super::temps::unregister(&tmp);
    written
}

/// `/dev/...` and `/proc/...` (as written, or relative to a working directory there):
/// devices and the process's own descriptors, never replaced.
fn is_system_path(path: &Path) -> bool {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    abs.starts_with("/dev") || abs.starts_with("/proc")
}

/// Writes into an existing character device, FIFO or descriptor path without replacing
/// it. `O_NONBLOCK` on open: a FIFO without a reader fails (`ENXIO`) instead of waiting.
fn write_in_place(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                io::Error::new(
                    e.kind(),
                    format!("{} is a named pipe with no reader", path.display()),
                )
            } else {
                e
            }
        })?;
    let t = f.metadata()?.file_type();
    if !(t.is_file() || t.is_char_device() || t.is_fifo() || t.is_socket()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}: refusing to write to it",
                path.display(),
                super::describe(t)
            ),
        ));
    }
    // Blocking writes from here on (a slow reader is waited for, not an error).
    use std::os::unix::io::AsRawFd as _;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    f.write_all(contents)?;
    f.flush()
}

/// A fresh temporary file next to the target, with an unpredictable name, created
/// exclusively (`O_EXCL`: a file or link already at that name is never opened).
fn create_temporary(dir: &Path, name: &str) -> io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    // `.` + `.tmp-` + a pid (at most 10 digits) + `-` + 16 hex digits: 33 bytes beside
    // the name, which is shortened to fit NAME_MAX (a legal 240-byte target name).
    let name = super::fit_name(name, 33);
    for _ in 0..16 {
        let tmp = dir.join(format!(
            ".{name}.tmp-{}-{:016x}",
            std::process::id(),
            random_u64()
        ));
        super::temps::begin(&tmp)?;
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                super::temps::unregister(&tmp);
                last = Some(e)
            }
            Err(e) => {
                super::temps::unregister(&tmp);
                return Err(e);
            }
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary name")))
}

/// Renames `from` to `to` (a file or a whole directory tree, on one file system) only
/// when nothing is at `to`: `renameat2(RENAME_NOREPLACE)` on Linux, so a file or an
/// empty directory created at `to` meanwhile is never replaced (`rename(2)` would replace
/// both); `AlreadyExists` then. Where the flag is not supported (an old kernel, a file
/// system without it, another system), `to` is checked just before a plain rename.
pub fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let c = |p: &Path| {
            std::ffi::CString::new(p.as_os_str().as_bytes())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
        };
        let (a, b) = (c(from)?, c(to)?);
        // SAFETY: two NUL-terminated paths that outlive the call; the raw syscall avoids
        // depending on the libc version exporting the wrapper.
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
            return Err(e);
        }
    }
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    std::fs::rename(from, to)
}

/// 64 unpredictable bits: std's `RandomState` keys come from the operating system's
/// random source; the counter, time and pid make every call differ.
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_at_the_path_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, b"precious").unwrap();
        let target = dir.path().join("out").join("report.md");
        std::fs::create_dir(dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(&outside, &target).unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(!std::fs::symlink_metadata(&target)
            .unwrap()
            .file_type()
            .is_symlink());
        // No temporary left behind.
        assert_eq!(
            std::fs::read_dir(dir.path().join("out")).unwrap().count(),
            1
        );
    }

    #[test]
    fn devices_are_written_in_place_and_directories_refused() {
        write_atomic(Path::new("/dev/null"), b"x").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
    }

    #[test]
    fn rename_new_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::write(a.join("f"), b"x").unwrap();
        // An empty directory at the destination: rename(2) would replace it.
        std::fs::create_dir(&b).unwrap();
        let e = rename_new(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert!(a.join("f").is_file() && std::fs::read_dir(&b).unwrap().count() == 0);
        std::fs::remove_dir(&b).unwrap();
        rename_new(&a, &b).unwrap();
        assert!(b.join("f").is_file() && !a.exists());
    }

    #[test]
    fn temporary_names_differ() {
        assert_ne!(random_u64(), random_u64());
    }
}
