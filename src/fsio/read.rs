//! Reading a file the tool is given (module docs of [`crate::fsio`]).
//!
//! Every reader of an input or on-disk state goes through [`read`]:
//! 1. `stat` (or `lstat` where a link is refused) the path: anything but a regular file
//!    is refused before it is opened (a FIFO would block the open or the read forever,
//!    `/dev/zero` never ends, a directory is a mistake);
//! 2. open it with `O_NONBLOCK` (and `O_NOFOLLOW` where a link is refused), so that a
//!    FIFO swapped in after step 1 cannot block, and `fstat` the open descriptor: the
//!    checks of step 1 again, on what was really opened;
//! 3. refuse a file larger than its kind's cap ([`InputKind::cap`]);
//! 4. read at most cap + 1 bytes: a file that grows while it is read is refused too.
//!
//! Errors keep the `io::ErrorKind` of a missing file (`NotFound`: callers treat a missing
//! record or cache entry as absent) and say what is wrong; the caller names the path.
//!
//! Links. A claim spec, a registry, a diff input and a baseline snapshot are files a
//! user names or keeps under version control; a symbolic link to a regular file is
//! followed (claims directories of symlinks are common). Partials, stability records,
//! the previous `verdicts.json` of a report set and cache entries are the tool's own
//! state, which it always writes as regular files: a link there was planted, and is
//! refused (`O_NOFOLLOW`).
use std::fs::OpenOptions;
use std::io::{self, Read as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

const MIB: u64 = 1 << 20;

/// The kinds of files the tool reads, each with its size cap and link rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A claim spec (`claims/*.yaml`): 16 MiB (the largest shipped is 16 KB; a spec with
    /// an axis of 200 000 points is a few MB and must reach the sweep-size check, which
    /// names the field). What YAML may expand to is bounded by [`super::yaml`].
    Spec,
    /// A paper's hypothesis registry or scorecard (`scorecards/<paper>.yaml`): 16 MiB.
    Registry,
    /// A shard's partial file (`run --shard`, `merge`): 256 MiB.
    Partial,
    /// A stability record (one seed's verdict rows): 256 MiB.
    Record,
    /// The previous `verdicts.json` of a report set (rows kept for claims not run): 256 MiB.
    Verdicts,
    /// A verdicts document compared by `dpclaims diff`: 256 MiB.
    DiffInput,
    /// A result cache entry: 1 MiB (an entry is a few hundred bytes).
    CacheEntry,
    /// A baseline snapshot (`tests/snapshots/*.snap`): 16 MiB.
    Snapshot,
    /// A report file read back to be updated or rendered (`BENCH.md`, a scorecard's
    /// Markdown): 16 MiB.
    Report,
    /// A file an external core declares (`external.files`), hashed into the result
    /// cache's keys: 256 MiB (sources, a small model's weights).
    CoreFile,
}

impl InputKind {
    /// The largest file of this kind that is read.
    pub fn cap(self) -> u64 {
        match self {
            InputKind::CacheEntry => MIB,
            InputKind::Spec | InputKind::Registry | InputKind::Snapshot | InputKind::Report => {
                16 * MIB
            }
            InputKind::Partial
            | InputKind::Record
            | InputKind::Verdicts
            | InputKind::DiffInput
            | InputKind::CoreFile => 256 * MIB,
        }
    }

    /// Whether a symbolic link (as the last component of the path) is followed.
    pub fn follows_links(self) -> bool {
        matches!(
            self,
            InputKind::Spec
                | InputKind::Registry
                | InputKind::DiffInput
                | InputKind::Snapshot
                | InputKind::Report
                | InputKind::CoreFile
        )
    }

    /// The file in words, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            InputKind::Spec => "a claim spec",
            InputKind::Registry => "a hypothesis registry",
            InputKind::Partial => "a partial file",
            InputKind::Record => "a stability record",
            InputKind::Verdicts => "a report set's verdicts.json",
            InputKind::DiffInput => "a verdicts document",
            InputKind::CacheEntry => "a cache entry",
            InputKind::Snapshot => "a baseline snapshot",
            InputKind::Report => "a report file",
            InputKind::CoreFile => "a core's declared file",
        }
    }
}

fn refused(kind: io::ErrorKind, message: String) -> io::Error {
    io::Error::new(kind, message)
}

/// Refuses anything but a regular file of at most the kind's cap.
fn check(meta: &std::fs::Metadata, kind: InputKind) -> io::Result<()> {
    let t = meta.file_type();
    if t.is_symlink() {
        return Err(refused(
            io::ErrorKind::InvalidInput,
            format!(
                "a symbolic link: {} is the tool's own file and is never read through a link",
                kind.noun()
            ),
        ));
    }
    if !t.is_file() {
        return Err(refused(
            io::ErrorKind::InvalidInput,
            format!(
                "not a regular file ({}): {} must be a regular file (a pipe or device could \
                 block the tool or never end)",
                super::describe(t),
                kind.noun()
            ),
        ));
    }
    if meta.len() > kind.cap() {
        return Err(too_large(meta.len().to_string(), kind));
    }
    Ok(())
}

fn too_large(len: String, kind: InputKind) -> io::Error {
    refused(
        io::ErrorKind::InvalidData,
        format!(
            "{len} bytes: larger than the limit of {} bytes for {}",
            kind.cap(),
            kind.noun()
        ),
    )
}

/// The bytes of `path`, read as a file of `kind` (module docs). The error says what is
/// wrong, not the path: the caller names it.
pub fn read(path: &Path, kind: InputKind) -> io::Result<Vec<u8>> {
    let before = if kind.follows_links() {
        std::fs::metadata(path)?
    } else {
        std::fs::symlink_metadata(path)?
    };
    check(&before, kind)?;
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !kind.follows_links() {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) && !kind.follows_links() {
                // Replaced by a link between the lstat and the open.
                check(&before, kind).err().unwrap_or(e)
            } else {
                e
            }
        })?;
    let opened = file.metadata()?;
    check(&opened, kind)?;
    let cap = kind.cap();
    let mut bytes = Vec::with_capacity(opened.len().min(cap) as usize + 1);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        // The size check passed on `fstat`; the read found more: it grew meanwhile.
        let e = too_large(format!("more than {cap}"), kind);
        return Err(io::Error::new(
            e.kind(),
            format!("{e} (the file grew while it was read)"),
        ));
    }
    Ok(bytes)
}

/// The checks of [`read`] without reading: `Ok` when `path` is missing or a file of
/// `kind` that [`read`] would accept. Commands call it before any work for the files
/// they will read only after it (the previous `verdicts.json`, baseline snapshots), so
/// that a FIFO or device there is an error before the simulation, not after.
pub fn precheck(path: &Path, kind: InputKind) -> io::Result<()> {
    let meta = if kind.follows_links() {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    match meta {
        Ok(m) => check(&m, kind),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// [`read`] as UTF-8 text.
pub fn read_string(path: &Path, kind: InputKind) -> io::Result<String> {
    String::from_utf8(read(path, kind)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_and_everything_else_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a");
        std::fs::write(&f, b"hello").unwrap();
        assert_eq!(read(&f, InputKind::Partial).unwrap(), b"hello");
        let e = read(dir.path(), InputKind::Spec).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let e = read(Path::new("/dev/zero"), InputKind::DiffInput).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(read(&link, InputKind::Spec).unwrap(), b"hello");
        let e = read(&link, InputKind::CacheEntry).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let missing = read(&dir.path().join("none"), InputKind::Record).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_file_over_its_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big");
        std::fs::write(&f, vec![b'x'; (MIB + 1) as usize]).unwrap();
        let e = read(&f, InputKind::CacheEntry).unwrap_err();
        assert!(e.to_string().contains("larger than the limit"), "{e}");
        assert!(read(&f, InputKind::Snapshot).is_ok());
    }
}
