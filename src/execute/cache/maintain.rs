//! `dpclaims cache stats|prune`: what a cache directory holds, per build, and removing
//! what this build can never use (other builds' entries, entries that fail their checks,
//! temporary files left by interrupted writes).
use super::entry::{self, CacheKey};
use super::{build_dir_name, CacheError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A temporary file younger than this may belong to a write in progress (another
/// process sharing the directory): `prune` leaves it.
const TMP_GRACE: Duration = Duration::from_secs(600);

/// One build's entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BuildStats {
    /// The folder's name: the first characters of the build's engine hash.
    pub build: String,
    /// Whether it is the build asked about (this binary's, unless a test says otherwise).
    pub current: bool,
    pub entries: usize,
    pub bytes: u64,
    /// Entries that fail their checksum, format or key (recomputed when met).
    pub corrupt: usize,
    /// Temporary files of writes in progress or interrupted.
    pub temporary: usize,
}

/// A cache directory's contents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub dir: String,
    /// Builds in name order.
    pub builds: Vec<BuildStats>,
}

impl CacheStats {
    /// Entries of all builds.
    pub fn entries(&self) -> usize {
        self.builds.iter().map(|b| b.entries).sum()
    }
    /// Bytes of all entries.
    pub fn bytes(&self) -> u64 {
        self.builds.iter().map(|b| b.bytes).sum()
    }
}

/// What `prune` removed and kept.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Pruned {
    pub dir: String,
    /// Entries of other builds (all entries with `all`).
    pub other_builds: usize,
    /// Corrupt entries of the current build.
    pub corrupt: usize,
    pub temporary: usize,
    pub bytes: u64,
    /// Entries left.
    pub kept: usize,
}

fn io_err(dir: &Path) -> impl Fn(std::io::Error) -> CacheError + '_ {
    move |e| CacheError::Dir {
        dir: dir.display().to_string(),
        message: e.to_string(),
    }
}

/// Sorted entries of a folder (none when it does not exist).
fn children(dir: &Path) -> Result<Vec<PathBuf>, CacheError> {
    match std::fs::read_dir(dir) {
        Ok(rd) => {
            let mut v = rd
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(io_err(dir))?;
            v.sort();
            Ok(v)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(io_err(dir)(e)),
    }
}

/// What a file of a build folder is.
enum Kind {
    Entry { ok: bool },
    Temporary { old: bool },
}

fn kind(path: &Path) -> Kind {
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with('.') {
        let old = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_none_or(|age| age > TMP_GRACE);
        return Kind::Temporary { old };
    }
    let ok = crate::fsio::read(path, crate::fsio::InputKind::CacheEntry)
        .ok()
        .and_then(|b| entry::decode(&CacheKey(name), &b))
        .is_some();
    Kind::Entry { ok }
}

/// Whether `p` is a directory itself (a link to one is not: the tool never follows a
/// link out of its cache).
fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Whether a folder's name has `len` characters, letters, digits or `-` (what the tool
/// names its folders: a build's engine hash, two hex digits of a key).
fn tool_name(p: &Path, len: std::ops::RangeInclusive<usize>) -> bool {
    let n = folder_name(p);
    len.contains(&n.len()) && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Checks that `dir` is missing or the tool's own cache (its `CACHEDIR.TAG`) before it is
/// read through or pruned: `DPCLAIMS_CACHE=. dpclaims cache prune` in a checkout must
/// delete nothing.
fn own(dir: &Path) -> Result<(), CacheError> {
    if std::fs::symlink_metadata(dir).is_err() || crate::fsio::marker::is_own_cache(dir) {
        return Ok(());
    }
    Err(CacheError::Foreign(format!(
        "{} is not a dpclaims result cache (no {} written by dpclaims): refusing to \
         read or prune it; nothing was deleted",
        dir.display(),
        crate::fsio::marker::CACHE_TAG
    )))
}

/// Build folders of `dir`: sub-folders named as the tool names them.
fn build_dirs(dir: &Path) -> Result<Vec<PathBuf>, CacheError> {
    own(dir)?;
    Ok(children(dir)?
        .into_iter()
        .filter(|p| is_real_dir(p) && tool_name(p, 1..=super::BUILD_DIR_LEN))
        .collect())
}

/// Regular files of a build folder (two levels: `<2 hex>/<key>`); links are skipped.
fn files_of(build: &Path) -> Result<Vec<PathBuf>, CacheError> {
    let mut out = vec![];
    for sub in children(build)? {
        if is_real_dir(&sub) && tool_name(&sub, 2..=2) {
            out.extend(
                children(&sub)?
                    .into_iter()
                    .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())),
            );
        }
    }
    Ok(out)
}

fn folder_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The contents of the cache in `dir` (empty when it does not exist); `build` is the
/// engine hash counted as current. Every entry is read and checked.
pub fn stats(dir: &Path, build: &str) -> Result<CacheStats, CacheError> {
    let current = build_dir_name(build);
    let mut builds = vec![];
    for b in build_dirs(dir)? {
        let name = folder_name(&b);
        let mut s = BuildStats {
            current: name == current,
            build: name,
            ..BuildStats::default()
        };
        for f in files_of(&b)? {
            match kind(&f) {
                Kind::Temporary { .. } => s.temporary += 1,
                Kind::Entry { ok } => {
                    s.entries += 1;
                    s.bytes += std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
                    s.corrupt += usize::from(!ok);
                }
            }
        }
        builds.push(s);
    }
    Ok(CacheStats {
        dir: dir.display().to_string(),
        builds,
    })
}

/// Removes from the cache in `dir` every entry of a build other than `build`, every
/// corrupt entry and every temporary file older than a few minutes; with `all`, every
/// entry. Unknown files outside build folders are left alone.
pub fn prune(dir: &Path, build: &str, all: bool) -> Result<Pruned, CacheError> {
    let current = build_dir_name(build);
    let mut p = Pruned {
        dir: dir.display().to_string(),
        ..Pruned::default()
    };
    for b in build_dirs(dir)? {
        let keep_build = !all && folder_name(&b) == current;
        for f in files_of(&b)? {
            let len = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
            let remove = match kind(&f) {
                Kind::Temporary { old } => {
                    p.temporary += usize::from(old);
                    old
                }
                Kind::Entry { ok } if keep_build => {
                    p.corrupt += usize::from(!ok);
                    p.kept += usize::from(ok);
                    !ok
                }
                Kind::Entry { .. } => {
                    p.other_builds += 1;
                    true
                }
            };
            if remove {
                // Another process may have removed or replaced it meanwhile: not an error.
                if std::fs::remove_file(&f).is_ok() {
                    p.bytes += len;
                }
            }
        }
        // Empty folders go (a non-empty one, e.g. a recent temporary file, stays).
        for sub in children(&b)? {
            let _ = std::fs::remove_dir(&sub);
        }
        if !keep_build {
            let _ = std::fs::remove_dir(&b);
        }
    }
    Ok(p)
}
