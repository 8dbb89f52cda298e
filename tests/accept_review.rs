//! Baselines like insta (issue 33, item 4): a run keeps a pending snapshot of every new
//! or changed claim from its own results; `dpclaims accept` and `dpclaims review` move
//! them into the baseline; "baseline CHANGED" says what changed and how to accept it.
use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .env("DPCLAIMS_NO_CACHE", "1")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const SNAP: &str = "tests__claims__every_claim_at_the_quick_profile@sigma-a-calibration.yaml.snap";

fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("claims")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("claims/sigma-a-calibration.yaml"),
        d.path().join("claims/sigma-a-calibration.yaml"),
    )
    .unwrap();
    d
}

#[test]
fn accepting_an_unchanged_claim_writes_the_committed_snapshot_byte_for_byte() {
    let d = tree();
    let o = run(d.path(), &["run", "--no-reports"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("dpclaims accept sigma-a-calibration"),
        "{}",
        err(&o)
    );
    let o = run(d.path(), &["accept", "sigma-a-calibration"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        std::fs::read_to_string(d.path().join("tests/snapshots").join(SNAP)).unwrap(),
        std::fs::read_to_string(root.join("tests/snapshots").join(SNAP)).unwrap(),
        "the accepted snapshot differs from the one recorded with insta"
    );
    // Accepted: the next run is unchanged and keeps nothing pending.
    let o = run(d.path(), &["run", "--no-reports", "--require-baseline"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("baseline unchanged"));
    assert!(!d.path().join("target/dpclaims/pending").join(SNAP).exists());
}

#[test]
fn a_changed_claim_names_what_changed_and_review_accepts_or_rejects_it() {
    let d = tree();
    run(d.path(), &["run", "--no-reports"]);
    run(d.path(), &["accept"]);
    let spec = d.path().join("claims/sigma-a-calibration.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text.replacen("kappa: \"2\"", "kappa: \"2.1\"", 1)).unwrap();
    // A judged change after accepted results is an amendment (the ledger).
    run(
        d.path(),
        &[
            "accept",
            "--amend",
            "kappa 2.1 for this test",
            "sigma-a-calibration",
        ],
    );
    let o = run(d.path(), &["run", "--no-reports"]);
    assert_eq!(o.status.code(), Some(1), "a changed baseline fails the run");
    let e = err(&o);
    assert!(e.contains("baseline CHANGED: sigma-a-calibration"), "{e}");
    assert!(e.contains(" -> "), "old -> new is shown: {e}");
    assert!(e.contains("dpclaims review"), "{e}");
    // Without a terminal, review needs a decision flag.
    let o = run(d.path(), &["review"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--accept-all"), "{}", err(&o));
    // Rejected: the baseline stays, the pending snapshot goes.
    let before = std::fs::read(d.path().join("tests/snapshots").join(SNAP)).unwrap();
    let o = run(d.path(), &["review", "--reject-all"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(" -> "),
        "review shows the diff"
    );
    assert_eq!(
        std::fs::read(d.path().join("tests/snapshots").join(SNAP)).unwrap(),
        before
    );
    // Run again, accept: the next run is unchanged.
    run(d.path(), &["run", "--no-reports"]);
    let o = run(d.path(), &["review", "--accept-all"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let o = run(d.path(), &["run", "--no-reports"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn accepting_a_claim_without_a_pending_snapshot_is_an_error() {
    let d = tree();
    let o = run(d.path(), &["accept", "no-such-claim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("no pending snapshot of claim `no-such-claim`"),
        "{}",
        err(&o)
    );
}
