//! Selecting claims and where a partial run writes (issue 33, items 5 and 7): claim ids
//! as well as paths, a typo answered with the nearest id, `-k`, `--fail-fast`,
//! `--last-failed`; a subset or a claim outside `claims/` writes to
//! `target/dpclaims/<name>`, never to the committed `reports/`.
use crate::util::tiny_rf_claim_named;
use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .env_remove("DPCLAIMS_NO_CACHE")
        .env_remove("DPCLAIMS_CACHE")
        .args(args)
        .output()
        .unwrap()
}

/// The ids of the claims a `run --json` judged, in order.
fn json_ids(o: &Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// claims/ with a passing claim (`sigma-a-calibration`, a copy of the shipped one) and a
/// failing one (`tiny-fail`: its control is not caught at the tiny size).
fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let c = d.path().join("claims");
    std::fs::create_dir(&c).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("claims/sigma-a-calibration.yaml");
    std::fs::copy(shipped, c.join("sigma-a-calibration.yaml")).unwrap();
    std::fs::write(c.join("tiny.yaml"), tiny_rf_claim_named("tiny-fail")).unwrap();
    d
}

#[test]
fn a_claim_id_runs_its_file_and_a_typo_suggests_the_nearest_id() {
    let d = tree();
    let o = run(
        d.path(),
        &["run", "sigma-a-calibration", "--no-baseline", "--no-cache"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // By its id, though its file is named otherwise.
    let o = run(
        d.path(),
        &[
            "run",
            "tiny-fail",
            "--no-reports",
            "--no-baseline",
            "--no-cache",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let o = run(d.path(), &["run", "sigma-a-calibraton", "--no-cache"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("did you mean `sigma-a-calibration`?"),
        "{}",
        err(&o)
    );
}

/// An id is found by the `id:` fields alone: a broken spec elsewhere in claims/ does
/// not stop the run of the claim asked for (it did when ids were resolved by loading
/// every spec), and running the broken one still names its error.
#[test]
fn a_broken_spec_elsewhere_does_not_stop_a_run_by_id() {
    let d = tree();
    std::fs::write(
        d.path().join("claims/broken.yaml"),
        "id: broken\ntitle: [unclosed\n",
    )
    .unwrap();
    let o = run(
        d.path(),
        &[
            "run",
            "tiny-fail",
            "--no-reports",
            "--no-baseline",
            "--no-cache",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let o = run(d.path(), &["run", "broken", "--no-baseline", "--no-cache"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("broken.yaml"), "{}", err(&o));
}

#[test]
fn a_subset_writes_under_target_and_the_whole_directory_to_reports() {
    let d = tree();
    let o = run(
        d.path(),
        &[
            "run",
            "claims/sigma-a-calibration.yaml",
            "--no-baseline",
            "--no-cache",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(d
        .path()
        .join("target/dpclaims/sigma-a-calibration/SUMMARY.md")
        .is_file());
    assert!(
        !d.path().join("reports").exists(),
        "a subset wrote to reports/"
    );
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("reports in target/dpclaims/sigma-a-calibration"));
    // The whole claims/ directory goes to reports/ by default (tiny-fail fails: exit 1,
    // the reports are written all the same).
    let o = run(d.path(), &["run", "--no-baseline", "--no-cache"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(d.path().join("reports/SUMMARY.md").is_file());
    assert!(!d.path().join("target/dpclaims/claims").exists());
}

#[test]
fn k_selects_by_id_prediction_or_variant_name() {
    let d = tree();
    let o = run(
        d.path(),
        &[
            "run",
            "-k",
            "SIGMA-A",
            "--no-reports",
            "--no-baseline",
            "--no-cache",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let ids = json_ids(&o);
    assert_eq!(ids, ["sigma-a-calibration"]);
    let o = run(d.path(), &["run", "-k", "no-such-name", "--no-cache"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no claim selected"), "{}", err(&o));
}

#[test]
fn fail_fast_stops_after_the_first_failing_claim() {
    let d = tree();
    // tiny.yaml sorts after sigma-a-calibration.yaml: put a failing claim first.
    std::fs::write(
        d.path().join("claims/a-first.yaml"),
        tiny_rf_claim_named("a-first"),
    )
    .unwrap();
    let o = run(
        d.path(),
        &["run", "-x", "--no-reports", "--no-baseline", "--no-cache"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("--fail-fast: stopped after claim `a-first` (1 of 3 claims run)"),
        "{}",
        err(&o)
    );
}

/// `-x` with a baseline stops after the first claim that changed against it, as it stops
/// after a failing verdict: a regression of the core mostly shows as a baseline change
/// (every verdict as before, an estimate moved), and a CI run or `make mutants` that
/// waits for the rest of the suite to learn it has failed wastes its time.
#[test]
fn fail_fast_stops_after_the_first_claim_that_changed_against_the_baseline() {
    let d = tempfile::tempdir().unwrap();
    let c = d.path().join("claims");
    std::fs::create_dir(&c).unwrap();
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("claims/sigma-a-calibration.yaml"),
    )
    .unwrap();
    for id in ["a-moved", "b-same", "c-same"] {
        let text = shipped.replacen("id: sigma-a-calibration", &format!("id: {id}"), 1);
        assert_ne!(text, shipped);
        std::fs::write(c.join(format!("{id}.yaml")), text).unwrap();
    }
    let base = ["--baseline", "snap", "--no-reports", "--no-cache"];
    let first = run(d.path(), &[&["run"][..], &base[..]].concat());
    assert_eq!(first.status.code(), Some(0), "{}", err(&first));
    let acc = run(d.path(), &["accept", "--baseline", "snap"]);
    assert_eq!(acc.status.code(), Some(0), "{}", err(&acc));
    // a-moved's snapshot records another estimate: the core "moved" it.
    let snap = d
        .path()
        .join("snap/tests__claims__every_claim_at_the_quick_profile@a-moved.yaml.snap");
    let text = std::fs::read_to_string(&snap).unwrap();
    let at = text
        .find("estimate: ")
        .expect("an estimate in the snapshot");
    let moved = format!("{}estimate: 12345{}", &text[..at], {
        let rest = &text[at + "estimate: ".len()..];
        &rest[rest.find('\n').unwrap()..]
    });
    std::fs::write(&snap, moved).unwrap();
    let o = run(d.path(), &[&["run", "-x"][..], &base[..]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("--fail-fast: stopped after claim `a-moved` (1 of 3 claims run)"),
        "{}",
        err(&o)
    );
    assert!(err(&o).contains("baseline CHANGED"), "{}", err(&o));
    // Without -x every claim runs, and the run fails on the same change.
    let o = run(d.path(), &[&["run"][..], &base[..]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(!err(&o).contains("--fail-fast"), "{}", err(&o));
    // --last-failed reruns the claim that changed against the baseline, and only it.
    let cached = ["--baseline", "snap", "--no-reports", "--cache", "cache"];
    let o = run(d.path(), &[&["run"][..], &cached[..]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let o = run(
        d.path(),
        &[&["run", "--last-failed", "--json"][..], &cached[..]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let ids = json_ids(&o);
    assert_eq!(ids, ["a-moved"]);
}

#[test]
fn last_failed_runs_only_the_claims_that_failed_last_time() {
    let d = tree();
    let cache = ["--cache", "cache", "--no-reports", "--no-baseline"];
    let first = run(d.path(), &[&["run"][..], &cache[..]].concat());
    assert_eq!(first.status.code(), Some(1), "{}", err(&first));
    let again = run(
        d.path(),
        &[&["run", "--last-failed", "--json"][..], &cache[..]].concat(),
    );
    assert_eq!(again.status.code(), Some(1), "{}", err(&again));
    let ids = json_ids(&again);
    assert_eq!(ids, ["tiny-fail"]);
}

/// A failing or inconclusive row names its units; `run --unit ID` replays one with its
/// seed and prints the very value the run used (the CSV's, to the last bit).
#[test]
fn a_unit_named_by_a_row_replays_to_the_run_s_own_value() {
    let d = tree();
    let o = run(
        d.path(),
        &[
            "run",
            "tiny-fail",
            "--no-baseline",
            "--no-cache",
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let e = err(&o);
    let id = e
        .split("--unit '")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .unwrap_or_else(|| panic!("no replay hint in:\n{e}"))
        .to_string();
    let parts: Vec<&str> = id.split('/').collect();
    let (variant, sweep, point, rep) = (parts[1], parts[2], parts[3], parts[4]);
    let r = run(d.path(), &["run", "--unit", &id, "--json", "--no-cache"]);
    assert_eq!(r.status.code(), Some(0), "{}", err(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    // The raw values (the committed CSV has them to 6 significant digits).
    let csv = std::fs::read_to_string(d.path().join("out/raw/tiny-fail.csv")).unwrap();
    let mut checked = 0;
    for line in csv.lines().skip(1) {
        // claim,sweep,variant,point,"vars",replicate,metric,value
        let (head, tail) = line.split_once(",\"").unwrap();
        let h: Vec<&str> = head.split(',').collect();
        let t: Vec<&str> = tail.split("\",").nth(1).unwrap().split(',').collect();
        if h[1] == sweep && h[2] == variant && h[3] == point && t[0] == rep {
            let want: f64 = t[2].parse().unwrap();
            let got = v["metrics"][t[1]].as_f64().unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{} of {id}", t[1]);
            checked += 1;
        }
    }
    assert!(checked >= 1, "no CSV row for {id}");
    let bad = run(
        d.path(),
        &["run", "--unit", "tiny-fail/prop22/vs_n/n=9/0", "--no-cache"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(err(&bad).contains("no such unit"), "{}", err(&bad));
}

/// A subset run into a fresh directory writes the scorecard of its own paper only; into a
/// directory that keeps other claims, index.html lists the kept claims as SUMMARY.md does.
#[test]
fn a_subset_gets_its_paper_s_scorecard_and_index_lists_kept_claims() {
    let d = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Scorecards are validated against the whole claims directory.
    std::fs::create_dir(d.path().join("claims")).unwrap();
    for e in std::fs::read_dir(root.join("claims")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            std::fs::copy(&p, d.path().join("claims").join(p.file_name().unwrap())).unwrap();
        }
    }
    let sc = d.path().join("scorecards");
    std::fs::create_dir(&sc).unwrap();
    for p in ["privacy-for-free", "tp-topk", "private-feature-learning"] {
        std::fs::copy(
            root.join(format!("scorecards/{p}.yaml")),
            sc.join(format!("{p}.yaml")),
        )
        .unwrap();
    }
    let o = run(
        d.path(),
        &[
            "run",
            "sigma-a-calibration",
            "--no-baseline",
            "--no-cache",
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let mut names: Vec<String> = std::fs::read_dir(d.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("scorecard-") && n.ends_with(".md"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "scorecard-privacy-for-free-details.md",
            "scorecard-privacy-for-free.md"
        ],
        "{names:?}"
    );
    // The other claim into the same directory: the first is kept, in index.html too.
    let o = run(
        d.path(),
        &[
            "run",
            "tp-topk-misranking-bound",
            "--no-baseline",
            "--no-cache",
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let index = std::fs::read_to_string(d.path().join("out/index.html")).unwrap();
    assert!(
        index.contains("This run judged 1 of the 2 claims listed"),
        "{index}"
    );
    assert!(
        index.contains("href=\"sigma-a-calibration.html\""),
        "{index}"
    );
    assert!(d.path().join("out/scorecard-privacy-for-free.md").is_file());
    assert!(d.path().join("out/scorecard-tp-topk.md").is_file());
}
