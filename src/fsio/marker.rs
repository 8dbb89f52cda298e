//! Proof that a directory is the tool's own before anything in it is deleted or written
//! beside a user's files: the result cache's `CACHEDIR.TAG`, which the tool writes when it
//! creates the cache (its first line is the standard cache-directory signature that
//! backup tools honour; the second says dpclaims made it).
//!
//! Rules (README, "Trust and safety"): `cache prune` and `cache stats` act only on a
//! directory holding this tag; a `--cache` directory is adopted (tagged) only when it is
//! missing or empty, never when it already holds files the tool did not write.
use std::path::Path;

/// The tag's file name (<https://bford.info/cachedir/>).
pub const CACHE_TAG: &str = "CACHEDIR.TAG";

/// The standard signature line of a cache-directory tag.
const SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";

/// What dpclaims writes in the tag (the second line is its own mark).
pub const CACHE_TAG_TEXT: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
     # This file is a cache directory tag created by dpclaims (result cache).\n";

/// Whether `dir` holds a `CACHEDIR.TAG` written by dpclaims (a regular file, not a link).
pub fn is_own_cache(dir: &Path) -> bool {
    super::read::read_string(&dir.join(CACHE_TAG), super::read::InputKind::CacheEntry)
        .is_ok_and(|t| t.starts_with(SIGNATURE) && t.contains("created by dpclaims"))
}

/// Whether `dir` exists and holds no entry at all.
pub fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut rd| rd.next().is_none())
}

/// Why `dir` may not be used or maintained as a result cache, or `None` when it may:
/// it is missing, empty, or the tool's own.
pub fn foreign_cache(dir: &Path) -> Option<String> {
    match std::fs::symlink_metadata(dir) {
        Err(_) => None,
        Ok(_) if is_own_cache(dir) || is_empty_dir(dir) => None,
        Ok(m) if !m.is_dir() && !m.file_type().is_symlink() => Some(format!(
            "{} is {}, not a result cache directory",
            dir.display(),
            super::describe(m.file_type())
        )),
        Ok(_) => Some(format!(
            "{} is not a dpclaims result cache: it holds files but no {CACHE_TAG} written by \
             dpclaims; refusing to use or clean it (nothing was written or deleted). Point \
             --cache (or DPCLAIMS_CACHE) at a new or empty directory",
            dir.display()
        )),
    }
}
