//! The result cache: each unit's metric values stored under a content key (the unit as
//! the system sees it, the judged content of its spec, the profile, the recipe's
//! identity, an external core's files and the build's engine hash, [`entry`]), so that a
//! re-run computes only what changed.
//!
//! Layout of a cache directory (default `.dpclaims-cache` in the working directory):
//!
//! ```text
//! <dir>/CACHEDIR.TAG, .gitignore            (backup tools and git skip the folder)
//! <dir>/<build: 16 hex digits of the engine hash>/<2 hex>/<key: 64 hex>   (one entry)
//! ```
//!
//! Rules:
//! * A value is served only from an entry whose checksum, format and key check out
//!   ([`entry::decode`]); anything else is a miss: the unit is recomputed and the entry
//!   overwritten. A cache never makes a run fail: an entry that cannot be written is
//!   counted and skipped.
//! * Entries are written to a temporary file in the same folder and renamed into place,
//!   so a reader (another thread, or another process sharing the directory) sees a whole
//!   entry or none. A crash mid-write leaves a temporary file (removed by `prune`) or, on
//!   a file system that reorders writes, an entry whose checksum fails (a miss); that is
//!   why entries are not `fsync`ed.
//! * The library runs uncached unless the caller opts in with [`with_cache`] on its own
//!   thread (the CLI does; tests and other library callers run uncached). A scope is
//!   thread-local, not a parameter, so that every runner entry point reaches it (local
//!   runs, shards, several seeds, a matrix of recipes) without a parameter on each. A
//!   scope names its recipe ([`with_cache`], [`as_recipe`]): values computed with one
//!   recipe are never served to a run of another.
pub mod entry;
pub mod history;
pub mod maintain;

use entry::CacheKey;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The default cache directory, relative to the working directory.
pub const DEFAULT_DIR: &str = ".dpclaims-cache";

/// Characters of the engine hash that name a build's folder.
const BUILD_DIR_LEN: usize = 16;

/// A cache directory that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cache directory {dir}: {message}")]
    Dir { dir: String, message: String },
    /// A directory that is not the tool's own cache (it holds other files and no tag).
    #[error("{0}")]
    Foreign(String),
}

/// What a cache did during a run (counts since it was opened).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheCounts {
    /// Units served from an entry.
    pub hits: usize,
    /// Units computed (no entry, or an entry that failed its checks).
    pub misses: usize,
    /// Of the misses, entries that existed but failed their checksum, format or key.
    pub corrupt: usize,
    /// Entries written.
    pub stored: usize,
    /// Entries that could not be written (the run went on).
    pub store_errors: usize,
    /// Values of expensive expression functions (accountants, calibrations) read from
    /// the cache, and computed (then stored), with the seconds the computed ones took
    /// (in microseconds, to keep the counts integers).
    pub functions_read: usize,
    pub functions_computed: usize,
    pub function_micros: usize,
}

impl CacheCounts {
    /// What was done between `before` and `self` (two readings of one cache's counts).
    pub fn since(&self, before: &CacheCounts) -> CacheCounts {
        CacheCounts {
            hits: self.hits - before.hits,
            misses: self.misses - before.misses,
            corrupt: self.corrupt - before.corrupt,
            stored: self.stored - before.stored,
            store_errors: self.store_errors - before.store_errors,
            functions_read: self.functions_read - before.functions_read,
            functions_computed: self.functions_computed - before.functions_computed,
            function_micros: self.function_micros - before.function_micros,
        }
    }
}

/// A cache directory for one build.
#[derive(Debug)]
pub struct ResultCache {
    dir: PathBuf,
    build: String,
    machine: String,
    hits: AtomicUsize,
    misses: AtomicUsize,
    corrupt: AtomicUsize,
    stored: AtomicUsize,
    store_errors: AtomicUsize,
    functions_read: AtomicUsize,
    functions_computed: AtomicUsize,
    function_micros: AtomicUsize,
    /// Cores whose units were run uncached because they are not hashable (an external
    /// core that declares no files): said once per run ([`ResultCache::uncacheable`]).
    unhashable: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// Claim id -> wall seconds of its external core's first start ([`history`]).
    startups: std::sync::Mutex<BTreeMap<String, f64>>,
    /// One line per claim that computed units: how many and why ([`history::after_claim`]).
    recomputed: std::sync::Mutex<Vec<String>>,
}

impl ResultCache {
    /// The cache in `dir` for this build ([`crate::build_id::ENGINE_HASH`]), created if
    /// missing.
    pub fn open(dir: &Path) -> Result<Self, CacheError> {
        Self::with_build(dir, crate::build_id::ENGINE_HASH)
    }

    /// The cache in `dir` for the build whose engine hash is `build` (tests use this to
    /// stand for another build).
    pub fn with_build(dir: &Path, build: &str) -> Result<Self, CacheError> {
        let err = |e: std::io::Error| CacheError::Dir {
            dir: dir.display().to_string(),
            message: e.to_string(),
        };
        if build.is_empty()
            || !build
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(CacheError::Dir {
                dir: dir.display().to_string(),
                message: format!("build identity `{build}` is not alphanumeric"),
            });
        }
        // A directory the tool did not create (a checkout, a home directory) is never
        // tagged, written into or pruned (crate::fsio::marker).
        if let Some(why) = crate::fsio::marker::foreign_cache(dir) {
            return Err(CacheError::Foreign(why));
        }
        std::fs::create_dir_all(dir).map_err(err)?;
        for (name, text) in [
            (
                crate::fsio::marker::CACHE_TAG,
                crate::fsio::marker::CACHE_TAG_TEXT,
            ),
            (".gitignore", "# dpclaims result cache\n*\n"),
        ] {
            let p = dir.join(name);
            if !p.exists() {
                write_atomic(&p, text.as_bytes()).map_err(err)?;
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            build: build.to_string(),
            machine: machine_identity(),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
            corrupt: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            store_errors: AtomicUsize::new(0),
            functions_read: AtomicUsize::new(0),
            functions_computed: AtomicUsize::new(0),
            function_micros: AtomicUsize::new(0),
            unhashable: Default::default(),
            startups: Default::default(),
            recomputed: Default::default(),
        })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The engine hash this cache serves.
    pub fn build(&self) -> &str {
        &self.build
    }

    /// The kernels of this machine that round ([`machine_identity`]), part of every key.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The folder of this build's entries.
    fn build_dir(&self) -> PathBuf {
        self.dir.join(build_dir_name(&self.build))
    }

    fn path(&self, key: &CacheKey) -> PathBuf {
        self.build_dir().join(&key.0[..2]).join(&key.0)
    }

    /// The values stored under `key`, or `None` (counted as a miss; an entry that fails
    /// its checks also as corrupt). An entry that passes its checksum but lacks one of
    /// the `wanted` metrics, or holds a non-finite one (never stored: a diverged unit is
    /// an error before it is stored), is corrupt too: written by a core that produced
    /// fewer metrics, or forged. The unit is then computed again and the entry replaced,
    /// rather than the run failing on a metric the cache lost.
    pub fn lookup<'a>(
        &self,
        key: &CacheKey,
        wanted: impl IntoIterator<Item = &'a String>,
    ) -> Option<BTreeMap<String, f64>> {
        let found = match crate::fsio::read(&self.path(key), crate::fsio::InputKind::CacheEntry) {
            Ok(bytes) => {
                let v = entry::decode(key, &bytes).filter(|m| {
                    wanted
                        .into_iter()
                        .all(|name| m.get(name).is_some_and(|x| x.is_finite()))
                });
                if v.is_none() {
                    self.corrupt.fetch_add(1, Ordering::Relaxed);
                }
                v
            }
            Err(_) => None,
        };
        match found {
            Some(_) => self.hits.fetch_add(1, Ordering::Relaxed),
            None => self.misses.fetch_add(1, Ordering::Relaxed),
        };
        found
    }

    /// Stores `metrics` under `key` (atomically; a failure is counted, never an error).
    pub fn store(&self, key: &CacheKey, metrics: &BTreeMap<String, f64>) {
        let Some(bytes) = entry::encode(key, metrics) else {
            self.store_errors.fetch_add(1, Ordering::Relaxed);
            return;
        };
        match write_atomic(&self.path(key), &bytes) {
            Ok(()) => self.stored.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.store_errors.fetch_add(1, Ordering::Relaxed),
        };
    }

    /// Records that the units of `what` (a claim's core) ran uncached: not hashable.
    pub fn note_unhashable(&self, what: String) {
        if let Ok(mut s) = self.unhashable.lock() {
            s.insert(what);
        }
    }

    /// The cores whose units ran uncached since the cache was opened, each once.
    pub fn unhashable(&self) -> Vec<String> {
        self.unhashable
            .lock()
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Records that the external core(s) of claim `id` took `seconds` to start.
    pub fn note_startup(&self, id: &str, seconds: f64) {
        if let Ok(mut s) = self.startups.lock() {
            *s.entry(id.to_string()).or_insert(0.0) += seconds;
        }
    }

    /// The start-up seconds recorded for claim `id` (0 when none).
    pub fn startup_of(&self, id: &str) -> f64 {
        self.startups
            .lock()
            .ok()
            .and_then(|s| s.get(id).copied())
            .unwrap_or(0.0)
    }

    /// Every start-up recorded since the cache was opened (claim id, seconds).
    pub fn startups(&self) -> Vec<(String, f64)> {
        self.startups
            .lock()
            .map(|s| s.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default()
    }

    /// Records a claim's "units computed, and why" line.
    pub fn note_recomputed(&self, line: String) {
        if let Ok(mut v) = self.recomputed.lock() {
            v.push(line);
        }
    }

    /// The "units computed, and why" lines of the claims run since the cache was opened.
    pub fn recomputed(&self) -> Vec<String> {
        self.recomputed
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// What this cache did since it was opened.
    pub fn counts(&self) -> CacheCounts {
        CacheCounts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            corrupt: self.corrupt.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            store_errors: self.store_errors.load(Ordering::Relaxed),
            functions_read: self.functions_read.load(Ordering::Relaxed),
            functions_computed: self.functions_computed.load(Ordering::Relaxed),
            function_micros: self.function_micros.load(Ordering::Relaxed),
        }
    }
}

/// Function values ([`crate::spec::expr::memo`]) are entries of the same folder, under
/// [`entry::function_key`] (build, machine, name, argument bits), holding one metric,
/// `value`: pruned with their build's units, checked by the same checksum.
impl crate::spec::expr::memo::FunctionStore for ResultCache {
    fn read(&self, name: &str, args: &[f64]) -> Option<f64> {
        let key = entry::function_key(&self.build, &self.machine, name, args);
        let bytes = crate::fsio::read(&self.path(&key), crate::fsio::InputKind::CacheEntry).ok()?;
        let v = entry::decode(&key, &bytes)?
            .get("value")
            .copied()
            .filter(|v| v.is_finite())?;
        self.functions_read.fetch_add(1, Ordering::Relaxed);
        Some(v)
    }

    fn write(&self, name: &str, args: &[f64], value: f64, seconds: f64) {
        self.functions_computed.fetch_add(1, Ordering::Relaxed);
        self.function_micros
            .fetch_add((seconds * 1e6) as usize, Ordering::Relaxed);
        let key = entry::function_key(&self.build, &self.machine, name, args);
        let metrics = BTreeMap::from([("value".to_string(), value)]);
        if let Some(bytes) = entry::encode(&key, &metrics) {
            if write_atomic(&self.path(&key), &bytes).is_err() {
                self.store_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// What, besides the build, decides the bits of a unit on this machine: the kernels
/// that round differently from one CPU to another (faer's instruction set, OpenBLAS's
/// kernel set, the C library's `libm`, README "Determinism"). Part of every key, so a
/// cache shared between machines (a CI cache restored on another runner) serves only
/// values this machine would have computed bit for bit.
pub fn machine_identity() -> String {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    let libc_version = {
        // SAFETY: glibc returns a pointer to a static NUL-terminated string.
        let p = unsafe { libc::gnu_get_libc_version() };
        if p.is_null() {
            "unknown".to_string()
        } else {
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        }
    };
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let libc_version = "unknown".to_string();
    format!(
        "{} {}; faer {}; openblas {}; glibc {}",
        std::env::consts::ARCH,
        std::env::consts::OS,
        crate::linalg::faer_simd_level(),
        crate::linalg::blas_core().unwrap_or_else(|| "unknown".into()),
        libc_version
    )
}

/// The name of the folder of the entries of the build whose engine hash is `build`.
pub(crate) fn build_dir_name(build: &str) -> &str {
    &build[..build.len().min(BUILD_DIR_LEN)]
}

/// Writes `bytes` to a temporary file next to `path` and renames it into place (not
/// fsynced: module docs), through [`crate::fsio::write`].
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::fsio::write::write_atomic_with(path, bytes, crate::fsio::Durability::NoFsync)
}

/// A cache and the identity of the recipe the runs in it use.
#[derive(Clone, Debug)]
struct Scope {
    cache: Arc<ResultCache>,
    /// The recipe's identity in keys (`paper` for [`crate::train::Recipe::PAPER`]).
    recipe_id: String,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Restores the previous scope when a scope function returns or unwinds.
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        SCOPE.with(|s| *s.borrow_mut() = previous);
    }
}

fn scoped<R>(scope: Option<Scope>, f: impl FnOnce() -> R) -> R {
    let _restore = Restore(SCOPE.with(|s| std::mem::replace(&mut *s.borrow_mut(), scope)));
    f()
}

/// Runs `f` with the runner's units on this thread cached in `cache` (module docs),
/// their recipe named `recipe_id` in the keys: `"paper"` for [`crate::train::Recipe::PAPER`].
///
/// The recipe is named, not read from the [`crate::train::Recipe`] value: its formulas are function
/// pointers, whose addresses are neither stable across processes nor unique within one
/// (each codegen unit may hold its own copy). So the contract is the caller's: every run
/// of another recipe inside `f` is wrapped in [`as_recipe`] with a name of its own, or
/// in [`uncached`].
pub fn with_cache<R>(cache: &Arc<ResultCache>, recipe_id: &str, f: impl FnOnce() -> R) -> R {
    // The expressions' accountants are kept in the same cache (they are the paper
    // recipe's whatever the run's: no recipe in their key).
    let store: Arc<dyn crate::spec::expr::memo::FunctionStore> = cache.clone();
    crate::spec::expr::memo::with_store(store, || with_unit_cache(cache, recipe_id, f))
}

fn with_unit_cache<R>(cache: &Arc<ResultCache>, recipe_id: &str, f: impl FnOnce() -> R) -> R {
    scoped(
        Some(Scope {
            cache: cache.clone(),
            recipe_id: recipe_id.to_string(),
        }),
        f,
    )
}

/// Runs `f` with the cache of this thread's scope (if any) keyed for the recipe named
/// `recipe_id`: what a caller running another recipe than its scope's must use.
pub fn as_recipe<R>(recipe_id: &str, f: impl FnOnce() -> R) -> R {
    let scope = SCOPE.with(|s| s.borrow().clone()).map(|s| Scope {
        recipe_id: recipe_id.to_string(),
        ..s
    });
    scoped(scope, f)
}

/// Runs `f` without a cache on this thread.
pub fn uncached<R>(f: impl FnOnce() -> R) -> R {
    scoped(None, f)
}

/// The cache a run on this thread uses, with the name of its recipe.
pub(crate) fn active() -> Option<(Arc<ResultCache>, String)> {
    SCOPE.with(|s| {
        s.borrow()
            .as_ref()
            .map(|s| (s.cache.clone(), s.recipe_id.clone()))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_machine_identity_names_the_kernels_and_is_stable() {
        let m = super::machine_identity();
        assert!(m.contains("faer ") && m.contains("openblas "), "{m}");
        assert_eq!(m, super::machine_identity());
    }
}
