//! Issue 50, families 2 and 4, every output flag: `perf --markdown`, `audit --markdown`,
//! `fig2 --out`, `privacy-report --out`, `faults --out`, `man --out`, `stability --json`
//! and `--records`, `run --junit` and `--out`, `merge --out` and `--junit` are compared
//! with the inputs and with the repository's tracked files (`git ls-files`, its
//! generated `reports/` aside) before anything runs: a collision is exit 2 naming both
//! paths, and no file changes. `merge` and `slurm` of a subset default to
//! target/dpclaims, never the committed reports.
use super::hardening3_util::{digest, exit2, project, run};
use std::path::Path;
use std::process::{Command, Stdio};

/// `project(ids)` made a git checkout with its files tracked (`git add`: an index is
/// all `git ls-files` reads), plus a tracked README.md, docs/guide.md and
/// reports/old.md (generated: not an input).
fn checkout(ids: &[&str]) -> tempfile::TempDir {
    let d = project(ids);
    std::fs::write(d.path().join("README.md"), "readme\n").unwrap();
    std::fs::create_dir_all(d.path().join("docs")).unwrap();
    std::fs::write(d.path().join("docs/guide.md"), "guide\n").unwrap();
    std::fs::create_dir_all(d.path().join("reports")).unwrap();
    std::fs::write(d.path().join("reports/old.md"), "old\n").unwrap();
    for args in [&["init", "-q"][..], &["add", "-A"][..]] {
        let ok = Command::new("git")
            .args(args)
            .current_dir(d.path())
            .stdout(Stdio::null())
            .status()
            .expect("git (the tests run in a git checkout)")
            .success();
        assert!(ok, "git {args:?}");
    }
    d
}

/// Refused before anything runs: exit 2 naming `words`, no file changed (`.git`, which
/// git itself may touch, aside).
fn refused(d: &Path, args: &[&str], words: &[&str]) {
    let before = digest(d, &[".git"]);
    let o = run(d, args);
    exit2(&o, words);
    assert!(!d.join("claims/started").exists(), "a core ran");
    assert_eq!(digest(d, &[".git"]), before, "files changed");
}

#[test]
fn markdown_outputs_onto_a_tracked_file_are_refused_naming_both() {
    let d = checkout(&["ca"]);
    // Before measuring: `perf` would take seconds, the null audits minutes.
    refused(
        d.path(),
        &["perf", "--quick", "--markdown", "README.md"],
        &["--markdown README.md", "the tracked file", "README.md"],
    );
    refused(
        d.path(),
        &[
            "audit",
            "--system",
            "rf-dpgd",
            "--epsilon",
            "2",
            "--delta",
            "1e-5",
            "--null-audits",
            "200",
            "--markdown",
            "docs/guide.md",
        ],
        &["--markdown docs/guide.md", "the tracked file", "guide.md"],
    );
}

#[test]
fn report_directories_holding_tracked_files_are_refused_naming_both() {
    let d = checkout(&["ca"]);
    for cmd in ["fig2", "privacy-report", "faults"] {
        refused(
            d.path(),
            &[cmd, "--out", "docs"],
            &["--out docs", "holds the tracked file", "guide.md"],
        );
    }
    refused(
        d.path(),
        &["run", "--out", "docs"],
        &["--out docs", "holds the tracked file", "guide.md"],
    );
    refused(
        d.path(),
        &["run", "--junit", "README.md"],
        &["--junit README.md", "the tracked file"],
    );
    refused(
        d.path(),
        &[
            "stability",
            "--seeds",
            "1",
            "--out",
            "s",
            "--json",
            "README.md",
        ],
        &["--json README.md", "the tracked file"],
    );
    refused(
        d.path(),
        &[
            "stability",
            "--seeds",
            "1",
            "--out",
            "s",
            "--records",
            "docs",
        ],
        &["--records docs", "holds the tracked file", "guide.md"],
    );
}

#[test]
fn the_generated_reports_are_no_input_and_outside_a_checkout_nothing_is_tracked() {
    // Control of the cases above: reports/ is tracked but generated, so a run may
    // replace it; and the same `man --out .` that a tracked page refuses is allowed
    // where git tracks nothing.
    let d = checkout(&["ca"]);
    let o = run(d.path(), &["run", "--no-baseline", "--out", "reports"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(d.path().join("reports/SUMMARY.md").exists());
    std::fs::remove_file(d.path().join("claims/started")).unwrap();
    std::fs::write(d.path().join("dpclaims.1"), "mine\n").unwrap();
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("dpclaims.1"), "mine\n").unwrap();
    let o = run(plain.path(), &["man", "--out", "."]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_ne!(
        std::fs::read_to_string(plain.path().join("dpclaims.1")).unwrap(),
        "mine\n"
    );
    // Tracked: refused, the page kept.
    let ok = Command::new("git")
        .args(["add", "dpclaims.1"])
        .current_dir(d.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    refused(
        d.path(),
        &["man", "--out", "."],
        &["--out ./dpclaims.1", "the tracked file", "dpclaims.1"],
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("dpclaims.1")).unwrap(),
        "mine\n"
    );
}

#[test]
fn merge_outputs_never_alias_its_inputs_and_a_subset_merge_leaves_reports_alone() {
    let d = project(&["ca", "cb"]);
    let o = run(
        d.path(),
        &[
            "run",
            "claims/ca.yaml",
            "--shard",
            "0/1",
            "--partial-out",
            "parts",
        ],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    std::fs::remove_file(d.path().join("claims/started")).unwrap();
    refused(
        d.path(),
        &["merge", "parts", "--out", "parts", "--no-baseline"],
        &["--out parts", "holds the partial file", "shard-0-of-1.json"],
    );
    refused(
        d.path(),
        &[
            "merge",
            "parts",
            "--junit",
            "claims/ca.yaml",
            "--no-baseline",
        ],
        &["--junit claims/ca.yaml", "the spec"],
    );
    // A spec the merge was given but the shards did not run is an input too (outside a
    // git checkout, where no tracked-files list would catch it).
    assert!(!d.path().join(".git").exists());
    refused(
        d.path(),
        &[
            "merge",
            "parts",
            "--junit",
            "claims/cb.yaml",
            "--no-baseline",
        ],
        &["--junit claims/cb.yaml", "the spec"],
    );
    // The shards ran one claim of claims/: the merge is a subset, written under target.
    std::fs::create_dir(d.path().join("reports")).unwrap();
    std::fs::write(d.path().join("reports/SUMMARY.md"), "committed\n").unwrap();
    let before = digest(d.path(), &["target"]);
    let o = run(d.path(), &["merge", "parts", "--no-baseline"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        d.path().join("target/dpclaims/merge/SUMMARY.md").exists(),
        "{}",
        o.stdout
    );
    assert_eq!(digest(d.path(), &["target"]), before, "files changed");
    // `slurm` of that subset writes the same default into its merge command.
    let o = run(d.path(), &["slurm", "claims/ca.yaml", "--shards", "2"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stdout.contains("--out target/dpclaims/ca"),
        "{}",
        o.stdout
    );
}
