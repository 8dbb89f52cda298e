//! The identity of this build, computed by `build.rs` from the contents of the sources
//! (never their times or paths): what a stored result must match to be reused.
//!
//! * [`ENGINE_HASH`] covers the code that decides a unit's numbers (the core, the
//!   systems, the fault recipes, the statistics of `src/fit` that units use, `Cargo.lock`): results of two builds with the same
//!   engine hash are interchangeable, so shard merges and the result cache compare it.
//!   The external-core protocol is not in it: [`EXTERNAL_HASH`] is part of an external
//!   core's cache identity instead, so an edit of the protocol recomputes external
//!   units only.
//! * [`SOURCE_HASH`] covers every source file; [`GIT_COMMIT`] is the commit the build
//!   was made from (informational: an uncommitted change keeps its base's commit).

/// SHA-256 (hex) of the engine's sources and `Cargo.lock`.
pub const ENGINE_HASH: &str = env!("DPCLAIMS_ENGINE_HASH");
/// SHA-256 (hex) of the engine's sources and of the code between a unit's numbers and a
/// verdict (`execute`, `plan`, `spec`, `fit`, `judge`): two builds with the same verdict
/// hash give the same verdict rows for the same specs and seed, so `dpclaims stability`
/// reuses a seed's stored rows only under it.
///
/// The external-core protocol (`src/systems/external`) is not in it: it decides only
/// external claims' numbers, and an external claim's `judged_hash` adds
/// [`EXTERNAL_HASH`] instead (src/spec/load.rs).
pub const VERDICT_HASH: &str = env!("DPCLAIMS_VERDICT_HASH");
/// SHA-256 (hex) of the external-core protocol's sources (`src/systems/external`).
pub const EXTERNAL_HASH: &str = env!("DPCLAIMS_EXTERNAL_HASH");
/// SHA-256 (hex) of all of `src/`, `Cargo.lock` and `Cargo.toml`.
pub const SOURCE_HASH: &str = env!("DPCLAIMS_SOURCE_HASH");
/// `git rev-parse HEAD` at build time, or `unknown`.
pub const GIT_COMMIT: &str = env!("DPCLAIMS_GIT_COMMIT");

/// What `dpclaims --version` prints after the version: the full engine, verdict and
/// source hashes and the commit. `make lint` compares the engine hash with the one the
/// committed `reports/verdicts.json` was written by, so a commit whose reports came from
/// an earlier engine is seen before CI runs the suite.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\nengine ",
    env!("DPCLAIMS_ENGINE_HASH"),
    "\nverdict ",
    env!("DPCLAIMS_VERDICT_HASH"),
    "\nsource ",
    env!("DPCLAIMS_SOURCE_HASH"),
    "\ncommit ",
    env!("DPCLAIMS_GIT_COMMIT")
);

/// A one-line identity for reports and messages: version, engine and source hashes
/// (12 hex digits each) and the commit.
pub fn describe() -> String {
    format!(
        "dpclaims {} (engine {}, source {}, commit {})",
        env!("CARGO_PKG_VERSION"),
        &ENGINE_HASH[..12],
        &SOURCE_HASH[..12],
        &GIT_COMMIT[..GIT_COMMIT.len().min(12)]
    )
}
