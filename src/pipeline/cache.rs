//! The result cache as the driver uses it ([`crate::execute::cache`]): a run with its
//! units cached, and `dpclaims cache stats|prune`.
use crate::execute::cache::{self, maintain, ResultCache};
use std::path::Path;
use std::sync::Arc;

/// The cache's directory when none is given (under the project root).
pub const DEFAULT_DIR: &str = cache::DEFAULT_DIR;

/// Runs `f` with the units of runs cached in `dir`, then says on stderr what the cache
/// did. A cache directory that cannot be used is a warning: the run goes on uncached. A
/// directory that is not the tool's own cache (it holds other files and no
/// `CACHEDIR.TAG` of dpclaims) is an error before any work: nothing is written into it.
pub fn with_cache<R>(dir: &Path, f: impl FnOnce() -> R) -> anyhow::Result<R> {
    let c = match ResultCache::open(dir) {
        Ok(c) => Arc::new(c),
        Err(e @ cache::CacheError::Foreign(_)) => return Err(e.into()),
        Err(e) => {
            crate::report::eprint_line(&format!("warning: {e}; running without the result cache"));
            return Ok(f());
        }
    };
    // The commands run the papers' recipe; the fault matrix names its other recipes
    // itself (`cache::as_recipe`).
    let out = cache::with_cache(&c, "paper", f);
    let n = c.counts();
    let unhashable = c.unhashable();
    if !unhashable.is_empty() {
        crate::report::eprint_line(&format!(
                "note: not cached (an external core that declares no `external.files` cannot be hashed, so its units always run): {}; declare the files its results depend on, e.g. `external: {{files: [core.py]}}`, to cache them",
                unhashable.join("; ")
            ));
    }
    let startups = c.startups();
    if !startups.is_empty() {
        crate::report::eprint_line(&format!(
            "external cores started in {} (the first worker of each claim; a second thread's worker starts with its first unit)",
            startups
                .iter()
                .map(|(id, s)| format!("{s:.1} s (`{id}`)"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if n.functions_read + n.functions_computed > 0 {
        crate::report::eprint_line(&format!(
            "accountants of expressions: {} read from the cache, {} computed ({:.1} s)",
            n.functions_read,
            n.functions_computed,
            n.function_micros as f64 * 1e-6
        ));
    }
    for line in c.recomputed() {
        crate::report::eprint_line(&format!("recomputed: {line}"));
    }
    if n.hits + n.misses > 0 {
        crate::report::eprint_line(&format!(
            "result cache {}: {} of {} units read, {} computed{}{}",
            dir.display(),
            n.hits,
            n.hits + n.misses,
            n.misses,
            if n.corrupt > 0 {
                format!(" ({} damaged entries recomputed)", n.corrupt)
            } else {
                String::new()
            },
            if n.store_errors > 0 {
                format!("; {} entries could not be written", n.store_errors)
            } else {
                String::new()
            },
        ));
    }
    Ok(out)
}

/// The entries of the cache in `dir` by build (`build`: this build's engine hash).
pub fn stats(dir: &Path, build: &str) -> anyhow::Result<maintain::CacheStats> {
    Ok(maintain::stats(dir, build)?)
}

/// Removes the entries of other builds than `build` (all with `all`), damaged entries
/// and temporary files from the cache in `dir`.
pub fn prune(dir: &Path, build: &str, all: bool) -> anyhow::Result<maintain::Pruned> {
    Ok(maintain::prune(dir, build, all)?)
}
