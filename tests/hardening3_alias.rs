//! Issue 50, families 2 and 4 (and the job summary of family 7): an output never is or
//! holds an input, never crosses a mount boundary, and a subset never rewrites the
//! committed reports. Every case checks the exit status, the message, that no core
//! started when the refusal is up front, and that no file outside the output changed.
use super::hardening3_util::{cmd, digest, exit2, project, run, wait, DEADLINE};
use std::path::Path;

fn started(d: &Path) -> bool {
    d.join("claims/started").exists()
}

/// Refused up front: exit 2 naming `words`, no core started, nothing changed.
fn refused(d: &Path, args: &[&str], words: &[&str]) {
    let before = digest(d, &[]);
    let o = run(d, args);
    exit2(&o, words);
    assert!(!started(d), "a core ran before the refusal");
    assert_eq!(digest(d, &[]), before, "files changed");
}

#[test]
fn run_junit_onto_a_spec_is_refused_naming_both() {
    // A forgotten value: `--junit` takes the spec, the suite would run and replace it.
    let d = project(&["ca", "cb"]);
    refused(
        d.path(),
        &["run", "--junit", "claims/cb.yaml"],
        &["--junit", "claims/cb.yaml", "the spec"],
    );
}

#[test]
fn run_junit_onto_a_hard_link_of_a_spec_is_refused_by_inode() {
    let d = project(&["ca"]);
    std::fs::hard_link(d.path().join("claims/ca.yaml"), d.path().join("out.xml")).unwrap();
    refused(
        d.path(),
        &["run", "claims/ca.yaml", "--junit", "out.xml"],
        &["out.xml", "the spec"],
    );
}

#[test]
fn run_junit_onto_a_spec_by_a_detour_path_is_refused() {
    let d = project(&["ca"]);
    std::fs::create_dir(d.path().join("x")).unwrap();
    refused(
        d.path(),
        &["run", "claims/ca.yaml", "--junit", "x/../claims/ca.yaml"],
        &["the spec", "ca.yaml"],
    );
}

#[test]
fn run_out_holding_the_specs_is_refused() {
    let d = project(&["ca"]);
    refused(
        d.path(),
        &["run", "claims/ca.yaml", "--out", "claims"],
        &["--out", "holds", "the spec"],
    );
}

#[test]
fn run_out_holding_the_specs_through_a_symlink_is_refused() {
    let d = project(&["ca"]);
    std::os::unix::fs::symlink("claims", d.path().join("rep")).unwrap();
    refused(
        d.path(),
        &["run", "claims/ca.yaml", "--out", "rep"],
        &["--out", "holds", "the spec"],
    );
}

#[test]
fn run_junit_onto_a_scorecard_registry_is_refused() {
    let d = project(&["ca"]);
    std::fs::create_dir(d.path().join("scorecards")).unwrap();
    std::fs::write(d.path().join("scorecards/p.yaml"), "paper: p\n").unwrap();
    refused(
        d.path(),
        &["run", "--junit", "scorecards/p.yaml"],
        &["scorecard registry", "p.yaml"],
    );
}

#[test]
fn run_junit_onto_a_baseline_snapshot_is_refused() {
    let d = project(&["ca"]);
    let snap = "tests/snapshots/tests__claims__every_claim_at_the_quick_profile@ca.yaml.snap";
    std::fs::create_dir_all(d.path().join("tests/snapshots")).unwrap();
    std::fs::write(d.path().join(snap), "---\nsource: x\n---\n").unwrap();
    refused(
        d.path(),
        &["run", "claims/ca.yaml", "--junit", snap],
        &["baseline snapshot"],
    );
}

#[test]
fn run_partial_out_holding_a_spec_is_refused() {
    let d = project(&["ca"]);
    refused(
        d.path(),
        &[
            "run",
            "claims/ca.yaml",
            "--shard",
            "1/2",
            "--partial-out",
            "claims",
        ],
        &["--partial-out", "the spec"],
    );
}

#[test]
fn stability_json_onto_a_spec_is_refused() {
    let d = project(&["ca"]);
    refused(
        d.path(),
        &[
            "stability",
            "claims/ca.yaml",
            "--seeds",
            "1",
            "--no-records",
            "--json",
            "claims/ca.yaml",
        ],
        &["--json", "the spec"],
    );
}

#[test]
fn stability_out_holding_the_spec_is_refused() {
    let d = project(&["ca"]);
    refused(
        d.path(),
        &[
            "stability",
            "claims/ca.yaml",
            "--seeds",
            "1",
            "--no-records",
            "--out",
            "claims",
        ],
        &["--out", "the spec"],
    );
}

fn with_summary(d: &Path, summary: &str, words: &[&str]) {
    let before = digest(d, &[]);
    let mut c = cmd(d, &["run", "claims/ca.yaml", "--out", "out"]);
    c.env("GITHUB_STEP_SUMMARY", summary);
    let o = wait(c.spawn().unwrap(), std::time::Duration::from_secs(30));
    exit2(&o, words);
    assert!(!started(d), "a core ran before the refusal");
    assert_eq!(digest(d, &[]), before, "files changed");
}

#[test]
fn a_fifo_as_github_step_summary_is_refused_at_once() {
    let d = project(&["ca"]);
    let fifo = d.path().join("summary.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo of a path in the test's own directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    with_summary(
        d.path(),
        fifo.to_str().unwrap(),
        &["GITHUB_STEP_SUMMARY", "named pipe"],
    );
}

#[test]
fn a_device_as_github_step_summary_is_refused_at_once() {
    let d = project(&["ca"]);
    with_summary(
        d.path(),
        "/dev/zero",
        &["GITHUB_STEP_SUMMARY", "character device"],
    );
}

#[test]
fn a_spec_as_github_step_summary_is_refused() {
    let d = project(&["ca"]);
    let spec = d.path().join("claims/ca.yaml");
    with_summary(
        d.path(),
        spec.to_str().unwrap(),
        &["GITHUB_STEP_SUMMARY", "the spec"],
    );
}

// ---- Mount boundaries (root only: skipped cleanly where mount is not permitted) ----

/// Bind-mounts `from` on `to`; false when this process may not mount.
fn bind(from: &Path, to: &Path) -> bool {
    std::process::Command::new("mount")
        .arg("--bind")
        .arg(from)
        .arg(to)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn unmount(p: &Path) {
    let _ = std::process::Command::new("umount").arg(p).status();
}

#[test]
fn an_output_directory_holding_a_mount_point_is_refused_before_simulating() {
    let d = project(&["ca"]);
    let vol = tempfile::tempdir().unwrap();
    std::fs::write(vol.path().join("precious.csv"), "1,2,3\n").unwrap();
    let data = d.path().join("out/data");
    std::fs::create_dir_all(&data).unwrap();
    if !bind(vol.path(), &data) {
        eprintln!("skipped: mount --bind is not permitted here");
        return;
    }
    let vol_before = digest(vol.path(), &[]);
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["run", "claims/ca.yaml", "--out", "out"]);
    let after = digest(d.path(), &[]);
    unmount(&data);
    exit2(&o, &["--out", "mount point", "out/data"]);
    assert!(!started(d.path()), "the claim ran before the refusal");
    assert_eq!(after, before, "files changed");
    assert_eq!(
        digest(vol.path(), &[]),
        vol_before,
        "the mounted volume changed"
    );
}

#[test]
fn a_stale_staging_directory_holding_a_mount_point_is_never_emptied() {
    // Step 1 of the report swap removes a stale staging directory: never across a mount.
    let d = project(&["ca"]);
    let vol = tempfile::tempdir().unwrap();
    std::fs::write(vol.path().join("precious.csv"), "1,2,3\n").unwrap();
    let m = d.path().join(".out.dpclaims-staging/m");
    std::fs::create_dir_all(&m).unwrap();
    if !bind(vol.path(), &m) {
        eprintln!("skipped: mount --bind is not permitted here");
        return;
    }
    let vol_before = digest(vol.path(), &[]);
    let o = run(
        d.path(),
        &["run", "claims/ca.yaml", "--out", "out", "--no-baseline"],
    );
    let still = m.join("precious.csv").is_file();
    unmount(&m);
    exit2(&o, &["mount point"]);
    assert!(still, "a file on the mounted volume was removed");
    assert_eq!(
        digest(vol.path(), &[]),
        vol_before,
        "the mounted volume changed"
    );
}

#[test]
fn a_tmpfs_inside_the_output_directory_is_refused_before_simulating() {
    let d = project(&["ca"]);
    let t = d.path().join("out/t");
    std::fs::create_dir_all(&t).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&t)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: mount -t tmpfs is not permitted here");
        return;
    }
    std::fs::write(t.join("f"), "x").unwrap();
    let o = run(d.path(), &["run", "claims/ca.yaml", "--out", "out"]);
    let still = t.join("f").is_file();
    unmount(&t);
    exit2(&o, &["mount point"]);
    assert!(!started(d.path()), "the claim ran before the refusal");
    assert!(still, "a file on the tmpfs was removed");
}

// ---- Subsets never rewrite the committed reports (family 4) ----

/// A project with committed `reports/` (one marker file) and a committed STABILITY.md.
fn committed() -> tempfile::TempDir {
    let d = project(&["ca", "cb"]);
    std::fs::create_dir(d.path().join("reports")).unwrap();
    std::fs::write(d.path().join("reports/SUMMARY.md"), "committed\n").unwrap();
    std::fs::write(
        d.path().join("reports/STABILITY.md"),
        "committed, 20 seeds\n",
    )
    .unwrap();
    d
}

fn subset_case(args: &[&str], lands_in: &str, file: &str) {
    let d = committed();
    let before = digest(d.path(), &["target", ".dpclaims-cache", "claims/started"]);
    let mut c = cmd(d.path(), args);
    c.env_remove("DPCLAIMS_NO_CACHE");
    let o = wait(c.spawn().unwrap(), DEADLINE);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(
        digest(d.path(), &["target", ".dpclaims-cache", "claims/started"]),
        before,
        "the committed reports changed"
    );
    assert!(
        d.path().join(lands_in).join(file).is_file(),
        "no {file} in {lands_in}: {}",
        o.stderr
    );
}

#[test]
fn subset_by_keyword_writes_to_target_not_reports() {
    subset_case(
        &["run", "-k", "ca"],
        "target/dpclaims/selection",
        "SUMMARY.md",
    );
}

#[test]
fn subset_by_last_failed_writes_to_target_not_reports() {
    subset_case(
        &["run", "--last-failed"],
        "target/dpclaims/last-failed",
        "SUMMARY.md",
    );
}

#[test]
fn subset_by_id_writes_to_target_not_reports() {
    subset_case(&["run", "ca"], "target/dpclaims/ca", "SUMMARY.md");
}

#[test]
fn subset_by_path_writes_to_target_not_reports() {
    subset_case(
        &["run", "claims/cb.yaml"],
        "target/dpclaims/cb",
        "SUMMARY.md",
    );
}

#[test]
fn subset_at_another_seed_writes_to_target_not_reports() {
    subset_case(
        &["run", "--seed", "3"],
        "target/dpclaims/seed-3",
        "SUMMARY.md",
    );
}

#[test]
fn subset_stability_of_one_claim_keeps_the_committed_stability_md() {
    subset_case(
        &[
            "stability",
            "claims/ca.yaml",
            "--seeds",
            "1",
            "--no-records",
        ],
        "target/dpclaims/stability-ca",
        "STABILITY.md",
    );
}

#[test]
fn subset_control_the_whole_suite_does_write_reports() {
    // The negative control of the cases above: the whole suite at its defaults writes
    // the committed set, so a check of "reports/ unchanged" can fail.
    let d = committed();
    let o = run(d.path(), &["run"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let s = std::fs::read_to_string(d.path().join("reports/SUMMARY.md")).unwrap();
    assert_ne!(s, "committed\n", "the whole suite did not write reports/");
    // Nothing else got the reports (target/dpclaims/pending may hold snapshots).
    for sub in ["selection", "last-failed", "seed-0", "claims"] {
        assert!(
            !d.path().join("target/dpclaims").join(sub).exists(),
            "{sub}"
        );
    }
}
