//! Every reason `dpclaims run` exits 1 is visible in CI three ways (issue 47, item 6): a
//! failed JUnit testcase, an `::error` annotation (GITHUB_ACTIONS=true) and a line of
//! the job summary (GITHUB_STEP_SUMMARY). One run per reason: a claim without a
//! snapshot under `--require-baseline` (its snapshot only pending), a baseline that
//! changed, a negative control not caught.
use crate::util::tiny_rf_claim_named;
use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .env("DPCLAIMS_NO_CACHE", "1")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env_remove("GITHUB_WORKSPACE")
        .args(args)
        .output()
        .unwrap()
}

/// Runs the claims of `dir` with `extra` flags and checks exit 1, a failed JUnit case
/// whose message holds `why`, an `::error` holding it and a summary line holding it.
fn fails_three_ways(dir: &Path, extra: &[&str], why: &str) {
    let _ = std::fs::remove_file(dir.join("summary.md"));
    let mut args = vec!["run", "claims", "--no-reports", "--junit", "j.xml"];
    args.extend_from_slice(extra);
    let o = run(dir, &args);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{why}: {out}\n{err}");
    let xml = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failed: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .map(|n| n.attribute("message").unwrap_or("").to_string() + n.text().unwrap_or(""))
        .collect();
    assert!(failed.iter().any(|m| m.contains(why)), "{why}: {xml}");
    let top = doc.root_element();
    assert_ne!(top.attribute("failures"), Some("0"), "{xml}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("::error ") && l.contains(why)),
        "{why}: {out}"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("**Failures**") && summary.contains(why),
        "{why}: {summary}"
    );
}

#[test]
fn each_exit_1_reason_is_a_junit_failure_an_annotation_and_a_summary_line() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::create_dir_all(dir.join("claims")).unwrap();
    // 8 replicates a point: at the fixture's 2 its control (noise times n^4) is not
    // caught at seed 0 (exponent 7.7 against -2, inconclusive), and the run that must
    // pass would fail for that reason.
    let spec = tiny_rf_claim_named("exit-reasons").replace("replicates: 2}", "replicates: 8}");
    assert_ne!(spec, tiny_rf_claim_named("exit-reasons"));
    std::fs::write(dir.join("claims/exit-reasons.yaml"), &spec).unwrap();
    // 1. No baseline directory at all, then a claim without a snapshot (pending only).
    fails_three_ways(dir, &["--require-baseline"], "--require-baseline");
    std::fs::create_dir_all(dir.join("tests/snapshots")).unwrap();
    fails_three_ways(dir, &["--require-baseline"], "has no snapshot");
    // Recorded, the same run passes.
    let o = run(dir, &["accept"]);
    assert!(o.status.success());
    let o = run(
        dir,
        &["run", "claims", "--no-reports", "--require-baseline"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // 2. The baseline changed: another noise law of the core's main variant.
    // (n^4: the main row's verdict moves from inconclusive to inconsistent.)
    let changed = spec.replacen("sigma_scale: \"1\"", "sigma_scale: \"n^4\"", 1);
    assert_ne!(spec, changed);
    std::fs::write(dir.join("claims/exit-reasons.yaml"), &changed).unwrap();
    // A judged change after accepted results is an amendment (the ledger).
    let o = crate::util::dpclaims_in(
        dir,
        &[
            "accept",
            "--amend",
            "another noise law, for this test",
            "exit-reasons",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    fails_three_ways(dir, &[], "changed against the baseline");
    // 3. A negative control not caught: the control's noise grows by a constant factor
    // only, which leaves the exponent along n as it is.
    let uncaught = spec.replacen(
        "params: {sigma_scale: \"n^4\"}",
        "params: {sigma_scale: \"1.5\"}",
        1,
    );
    assert_ne!(spec, uncaught);
    std::fs::write(dir.join("claims/exit-reasons.yaml"), &uncaught).unwrap();
    fails_three_ways(dir, &["--no-baseline"], "not caught");
}
