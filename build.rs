//! Build identity: content hashes of the sources, so that results computed by one build
//! can be told from another's (shard manifests, the result cache) whatever the version
//! number says. Hashes the file contents, never their times or absolute paths, so two
//! clones of the same tree build the same identity.
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The folders and files whose code decides a unit's numbers: the core, the systems that
/// adapt a unit to it, the fault recipes, and the statistics units compute with
/// (`src/fit`). Reports, the CLI and the verdict rules are not in it: changing them
/// cannot change a simulated value. Nor is the fault
/// matrix ([`ENGINE_EXCLUDED`]): it drives runs, it computes no unit.
const ENGINE: &[&str] = &[
    "src/train",
    "src/privacy",
    "src/models",
    "src/data",
    "src/systems",
    "src/faults",
    "src/rng.rs",
    "src/linalg",
    // The figure code: `rf_fig2` computes its metrics with `figures::fig2_ordinal`.
    "src/figures",
    // The statistics units compute with: the engines' two-sample tests
    // (`systems::engines`) and the audit's Clopper-Pearson bounds (`privacy::audit`).
    // Listed here, not in VERDICT, so the verdict hash's files are the same (the tests'
    // `every_file_the_engine_imports_is_in_the_engine_hash` keeps this list whole).
    "src/fit",
    "Cargo.lock",
];

/// Parts of [`ENGINE`]'s folders that decide no unit's numbers: the fault matrix (a
/// driver: which recipe runs which claim).
///
/// Nor is the external-core protocol ([`EXTERNAL`]): it decides the numbers of external
/// claims only, and an external core's cache identity holds its hash instead
/// (`src/systems/external/mod.rs`, `hash_files`), so an edit of the protocol code
/// recomputes the external claims' units and keeps the built-in claims' cache.
const ENGINE_EXCLUDED: &[&str] = &["src/faults/matrix", "src/systems/external"];

/// What decides a verdict row beyond the engine: how units become points (`execute`,
/// `plan`), the spec's parsing and expressions, the fits and the verdict rules. Reports
/// and the CLI are not in it. Stored verdict rows of `dpclaims stability` (one record per
/// seed) are reused only by a build with the same hash. The scorecards are not in it:
/// the part of a scorecard that decides verdict rows is its hypothesis registry, and a
/// claim's `judged_hash` (src/spec/read.rs) covers the registry it is judged under, so an
/// edit of a scorecard's counting or prose keeps the stored rows, and an edit of a
/// hypothesis reruns only the claims of that paper.
const VERDICT: &[&str] = &[
    "src/judge",
    "src/spec",
    "src/execute",
    // The driver: which units each look draws.
    "src/pipeline",
    "src/plan",
    "src/lib.rs",
];

fn files(root: &Path, out: &mut Vec<PathBuf>) {
    if root.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(root)
            .expect("build.rs: read_dir")
            .map(|e| e.expect("build.rs: dir entry").path())
            .collect();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if root.is_file() {
        out.push(root.to_path_buf());
    }
}

/// The external-core protocol (`system: external`): it decides the numbers of external
/// claims only. It is in neither the engine hash (an external unit's key holds it
/// through the core's identity) nor the verdict hash of the built-in claims; an external claim's
/// `judged_hash` (src/spec/load.rs) adds [`EXTERNAL`]'s own hash instead, so stored
/// verdict rows of a built-in claim survive a change of the protocol code and those of an
/// external claim do not.
const EXTERNAL: &[&str] = &["src/systems/external"];

fn hash(paths: &[&str]) -> String {
    hash_excluding(paths, &[])
}

fn hash_excluding(paths: &[&str], exclude: &[&str]) -> String {
    let mut all = Vec::new();
    for p in paths {
        files(Path::new(p), &mut all);
    }
    all.retain(|f| !exclude.iter().any(|x| f.starts_with(x)));
    all.sort();
    let mut h = Sha256::new();
    for f in &all {
        let rel = f.to_string_lossy().replace('\\', "/");
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        let bytes = std::fs::read(f).expect("build.rs: read source");
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn git_commit() -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => "unknown".into(),
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=scorecards");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=Cargo.toml");
    // The commit is informational (a dirty tree has the commit of its base): follow HEAD.
    if let Ok(o) = std::process::Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .output()
    {
        if o.status.success() {
            let dir = String::from_utf8_lossy(&o.stdout).trim().to_string();
            println!("cargo:rerun-if-changed={dir}/HEAD");
        }
    }
    println!(
        "cargo:rustc-env=DPCLAIMS_ENGINE_HASH={}",
        hash_excluding(ENGINE, ENGINE_EXCLUDED)
    );
    let verdict: Vec<&str> = ENGINE.iter().chain(VERDICT).copied().collect();
    println!(
        "cargo:rustc-env=DPCLAIMS_VERDICT_HASH={}",
        hash_excluding(&verdict, EXTERNAL)
    );
    println!("cargo:rustc-env=DPCLAIMS_EXTERNAL_HASH={}", hash(EXTERNAL));
    println!(
        "cargo:rustc-env=DPCLAIMS_SOURCE_HASH={}",
        hash(&["src", "Cargo.lock", "Cargo.toml"])
    );
    println!("cargo:rustc-env=DPCLAIMS_GIT_COMMIT={}", git_commit());
}
