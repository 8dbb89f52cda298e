//! Helpers shared by the test modules: running the built binary; the fault-free run of
//! a claim, computed once per test process.
use dpclaims::judge::ClaimOutcome;
use dpclaims::pipeline;
use dpclaims::spec::{Claim, Profile};
use dpclaims::train::Recipe;
use std::collections::HashMap;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

/// Runs the built `dpclaims` binary with `args`.
pub fn dpclaims(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        // Never the user's result cache (tests/cache.rs tests the cache).
        .env("DPCLAIMS_NO_CACHE", "1")
        .args(args)
        .output()
        .expect("run dpclaims")
}

/// Asserts that a run succeeded (showing its stderr if not) and parses its stdout as JSON.
pub fn ok_json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Runs the built `dpclaims` binary with `args` in the directory `dir`.
pub fn dpclaims_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        // Never the user's result cache (tests/cache.rs tests the cache).
        .env("DPCLAIMS_NO_CACHE", "1")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run dpclaims")
}

/// The outcome of `claim` on the correct core (`Recipe::PAPER`) at the quick profile and
/// seed 0, computed once per test process (one binary: `tests/tests.rs`). The claim
/// snapshots (`claims.rs`, when run with `--ignored`) and the fault sentinels
/// (`faults.rs`) compare with the same fault-free run; computing it once for both saves
/// the sentinel claims' second run. Same spec and seed give the same bytes, so sharing
/// the run changes no result. Keyed by claim id and spec hash; a caller that asks while
/// another computes the same claim waits for it.
pub fn fault_free_quick(claim: &Claim) -> Arc<ClaimOutcome> {
    type Slot = Arc<OnceLock<Arc<ClaimOutcome>>>;
    static RUNS: OnceLock<Mutex<HashMap<(String, String), Slot>>> = OnceLock::new();
    let slot = RUNS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry((claim.id.clone(), claim.spec_hash.clone()))
        .or_default()
        .clone();
    slot.get_or_init(|| {
        let out = pipeline::run_claim(claim, Profile::Quick, 0, &Recipe::PAPER, &|| {})
            .unwrap_or_else(|e| panic!("{}: {e}", claim.id));
        Arc::new(out)
    })
    .clone()
}

/// A copy of `claims/<id>.yaml` in `dir` with its replicates cut from `from` to `to`
/// (every `replicates: <from>` line, and every sequential line converted from the fixed
/// count `from` — `# sequential (issue 34): was <from>` — which becomes
/// `{min: max(2, to/4), max: to}` and stays sequential; at least one must exist): the
/// same systems, variants, sweeps and predictions at a tenth of the cost, for tests of
/// the machinery (determinism, the fault matrix's order) rather than of the claim's
/// numbers.
pub fn shrunk_claim(dir: &std::path::Path, id: &str, from: u32, to: u32) -> std::path::PathBuf {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("claims")
        .join(format!("{id}.yaml"));
    let text = std::fs::read_to_string(&src).unwrap();
    let (fixed, sequential) = (
        format!("replicates: {from}"),
        format!("# sequential (issue 34): was {from}"),
    );
    let mut found = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let indent = &l[..l.len() - l.trim_start().len()];
            if l.trim() == fixed {
                found = true;
                format!("{indent}replicates: {to}")
            } else if l.trim_start().starts_with("replicates:") && l.ends_with(&sequential) {
                found = true;
                format!(
                    "{indent}replicates: {{min: {}, max: {to}}}",
                    (to / 4).max(2)
                )
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(found, "{}: no `{fixed}` or `{sequential}`", src.display());
    let path = dir.join(format!("{id}.yaml"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A tiny random-features claim (noise term along n at toy sizes, a negative control the
/// exponent catches, an inequality only the main variant is judged by) with `header`
/// (its `id`, `title`, `source`, `statement` lines) in front: the fixture of the HTML
/// and scorecard tests.
pub fn tiny_rf_claim(header: &str) -> String {
    format!("{header}{TINY_RF_BODY}")
}

/// [`tiny_rf_claim`] with a plain header and the id `id`.
pub fn tiny_rf_claim_named(id: &str) -> String {
    tiny_rf_claim(&format!(
        r#"
id: {id}
title: "noise term along n, tiny sizes (test only)"
source: {{paper: "test", section: "s", equation: "Eq. 20"}}
statement: "noise term along n"
"#
    ))
}

const TINY_RF_BODY: &str = r#"system: rf_dpgd
model: random_features_tanh
adjacency: replace_one
data: {input: gaussian, target: sign}
params:
  d: "4"
  n: "16"
  p: "4 * n"
  n_test: "50"
  eta: "1/p"
  steps: "ceil(d * ln(n)^2 / (eta * p))"
  clip: "sqrt(p) * ln(n)^2"
  epsilon: "2"
  delta: "1.0e-5"
  kappa: "2"
  sigma_scale: "1"
sweeps:
  vs_n:
    quick: {axes: {n: [8, 12, 16, 24]}, replicates: 2}
    full: {axes: {n: [8, 12, 16, 24]}, replicates: 2}
variants:
  - name: prop22
  - name: noise-grows-with-n
    negative_control: true
    caught_by: [vs-n]
    params: {sigma_scale: "n^4"}
predictions:
  - kind: exponent
    evidence: consequence
    name: vs-n
    metric: noise_term
    sweep: vs_n
    x: n
    predicted: -2.0
    tolerance: 0.5
    tolerance_reason: "test only"
  - kind: inequality
    evidence: consequence
    name: finite
    metric: train_loss
    sweep: vs_n
    op: "<="
    rhs: "1.0e12"
"#;

/// A project of `files` (folder, file name, text) in a fresh directory, run once with
/// `dpclaims run --no-baseline --out out` (exit 0 or 1: a tiny claim's verdicts do not
/// matter to the pages): the directory, its reports in `out/`.
pub fn run_tiny_project(files: Vec<(&str, &str, String)>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (sub, file, text) in files {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join(file), text).unwrap();
    }
    let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    dir
}

/// Records the quick-profile, seed-0 snapshot of the claim at `spec` as its regression
/// baseline in `dir/tests/snapshots` (what `dpclaims accept` writes), for tests that need
/// a project with a baseline.
pub fn record_baseline(dir: &std::path::Path, spec: &std::path::Path) {
    use dpclaims::report::snapshot::snapshot;
    let claim = dpclaims::spec::load_claim(spec).unwrap();
    let o = dpclaims::pipeline::run_claim(
        &claim,
        dpclaims::spec::Profile::Quick,
        0,
        &dpclaims::train::Recipe::PAPER,
        &|| {},
    )
    .unwrap();
    let snaps = dir.join("tests/snapshots");
    std::fs::create_dir_all(&snaps).unwrap();
    let header =
        "---\nsource: tests/claims.rs\nexpression: snap\ninfo:\n  profile: quick\n  seed: 0\n---\n";
    std::fs::write(
        snaps.join(format!(
            "tests__claims__every_claim_at_the_quick_profile@{}.snap",
            spec.file_name().unwrap().to_string_lossy()
        )),
        format!("{header}{}", serde_yaml::to_string(&snapshot(&o)).unwrap()),
    )
    .unwrap();
}
