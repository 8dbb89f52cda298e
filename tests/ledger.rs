//! The registration ledger (issue 56, items 1-2), end to end on a tiny project: the first
//! accepted results register a claim; a changed tolerance (or any judged field) makes
//! `dpclaims run` exit 2 naming the claim and the field, and nothing runs; `accept
//! --amend "why"` records it, the run goes on, the claim page lists the amendment (old ->
//! new, reason), accepting the new results records which verdicts moved, the scorecard
//! marks the row and counts it in its box, and `verdicts.json` carries it. Prose edits
//! need no amendment.
use crate::util::dpclaims_in;
use std::path::Path;

const CARD: &str = r#"
paper: "A tiny paper"
results:
  - result: "Eq. 20"
    title: "the training loss stays below a bound"
    quote: {text: "the training loss stays below a bound", where: "Eq. 20"}
    could_fail: data
    checked_by:
      - {claim: tiny-led, prediction: finite, variant: prop22}
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let claim = crate::util::tiny_rf_claim_named("tiny-led")
        .replace("id: tiny-led", "id: tiny-led\npaper: tiny-paper")
        .replace(
            "evidence: consequence\n    name: finite",
            "evidence: statement\n    name: finite\n    quote: {text: \"the training loss stays below a bound\", where: \"Eq. 20\"}",
        );
    for (sub, file, text) in [
        (".", "dpclaims.toml", "[project]\nname = \"tiny\"\n"),
        ("claims", "tiny-led.yaml", claim.as_str()),
        ("scorecards", "tiny-paper.yaml", CARD),
    ] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join(file), text).unwrap();
    }
    dir
}

fn ok(o: &std::process::Output) -> String {
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "exit {:?}\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn edit(dir: &Path, from: &str, to: &str) {
    let f = dir.join("claims/tiny-led.yaml");
    let t = read(&f);
    assert!(t.contains(from), "{from}");
    std::fs::write(&f, t.replace(from, to)).unwrap();
}

#[test]
fn a_judged_change_after_results_is_refused_until_amended_and_then_shown() {
    let dir = project();
    let d = dir.path();
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    let out = ok(&dpclaims_in(d, &["accept"]));
    assert!(out.contains("registered tiny-led"), "{out}");
    let ledger = d.join("tests/snapshots/ledger/tiny-led.yaml");
    assert!(
        read(&ledger).contains("predictions[finite].rhs: '1.0e12'"),
        "{}",
        read(&ledger)
    );

    // Prose is not judged: a new discussion needs no amendment.
    std::fs::write(
        d.join("claims/tiny-led.yaml"),
        read(&d.join("claims/tiny-led.yaml")) + "discussion: \"written after the run\"\n",
    )
    .unwrap();
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    // Registered, not amended: the page says so, and claims no amendment it does not have.
    let page = read(&d.join("out/tiny-led.md"));
    assert!(
        page.contains("No change since. A change to a judged part"),
        "{page}"
    );
    assert!(!page.contains("each changed a judged part"), "{page}");

    // A changed bound: refused before anything runs, claim and field named.
    let before = read(&d.join("out/tiny-led.md"));
    edit(d, "rhs: \"1.0e12\"", "rhs: \"1.0e-12\"");
    let o = dpclaims_in(d, &["run", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("claim `tiny-led`"), "{err}");
    assert!(
        err.contains("predictions[finite].rhs: 1.0e12 -> 1.0e-12"),
        "{err}"
    );
    assert!(err.contains("dpclaims accept --amend"), "{err}");
    assert_eq!(
        read(&d.join("out/tiny-led.md")),
        before,
        "a refused run writes nothing"
    );

    // A reason is required; then the amendment is recorded and the run goes on.
    assert_eq!(
        dpclaims_in(d, &["accept", "--amend", " ", "tiny-led"])
            .status
            .code(),
        Some(2)
    );
    let out = ok(&dpclaims_in(
        d,
        &[
            "accept",
            "--amend",
            "the bound was read off the wrong table",
            "tiny-led",
        ],
    ));
    assert!(
        out.contains("predictions[finite].rhs: 1.0e12 -> 1.0e-12"),
        "{out}"
    );
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    let page = read(&d.join("out/tiny-led.md"));
    assert!(
        page.contains("## Changes after results (amendments)"),
        "{page}"
    );
    assert!(
        page.contains("the bound was read off the wrong table"),
        "{page}"
    );
    assert!(
        page.contains("`predictions[finite].rhs` `1.0e12` → `1.0e-12`"),
        "{page}"
    );
    assert!(page.contains("not known"), "{page}");

    // Accepting the amended results records the verdict that moved.
    ok(&dpclaims_in(d, &["accept"]));
    let l = read(&ledger);
    assert!(
        l.contains("prediction: finite") && l.contains("after: refuted"),
        "{l}"
    );
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    let page = read(&d.join("out/tiny-led.md"));
    assert!(
        page.contains("**moved:** `finite` / prop22: holds") && page.contains("→ refuted"),
        "{page}"
    );
    let card = read(&d.join("out/scorecard-tiny-paper.md"));
    assert!(
        card.contains(
            "**Changed after results:** 1 of 1 verdicts depend on a change made after results (†"
        ),
        "{card}"
    );
    assert!(card.contains(" †"), "{card}");
    let v: serde_json::Value = serde_json::from_str(&read(&d.join("out/verdicts.json"))).unwrap();
    let c = &v["claims"][0];
    assert_eq!(
        c["amendments"][0]["reason"],
        "the bound was read off the wrong table"
    );
    let row = c["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prediction"] == "finite" && r["variant"] == "prop22")
        .unwrap();
    assert_eq!(row["verdict_moved_by"].as_array().map(|a| a.len()), Some(1));

    // `ledger show` has nothing unrecorded.
    assert_eq!(dpclaims_in(d, &["ledger", "show"]).status.code(), Some(0));
}

/// How a scorecard counts results (`could_fail`, `control`, `checked_by`, `key`, its
/// hypotheses, a result declared not checkable) is registered with the first accepted
/// results too: a later change is refused by `run` until amended, and then listed on the
/// details page and counted in the short page's box. Its prose (titles, quotes) is free.
#[test]
fn a_scorecard_change_after_results_is_refused_until_amended_and_then_shown() {
    let dir = project();
    let d = dir.path();
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    let out = ok(&dpclaims_in(d, &["accept"]));
    assert!(out.contains("registered scorecard-tiny-paper"), "{out}");
    let card = d.join("scorecards/tiny-paper.yaml");
    let edit_card = |from: &str, to: &str| {
        let t = read(&card);
        assert!(t.contains(from), "{from}");
        std::fs::write(&card, t.replace(from, to)).unwrap();
    };
    // A reworded title is prose.
    edit_card(
        "title: \"the training loss stays below a bound\"",
        "title: \"the loss stays below a bound\"",
    );
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    // Choosing another key number is judged: refused, named.
    edit_card(
        "    could_fail: data\n",
        "    could_fail: data\n    key: {from: {claim: tiny-led, prediction: finite, variant: prop22}, value: estimate, meaning: \"the loss {v}\"}\n",
    );
    let o = dpclaims_in(d, &["run", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("scorecard `scorecard-tiny-paper`"), "{err}");
    assert!(
        err.contains("results[Eq. 20].key.from.claim: (absent) -> tiny-led"),
        "{err}"
    );
    let out = ok(&dpclaims_in(
        d,
        &[
            "accept",
            "--amend",
            "the row's estimate is the number the paper's sentence is about",
            "scorecard-tiny-paper",
        ],
    ));
    assert!(out.contains("amendment of scorecard-tiny-paper"), "{out}");
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    let details = read(&d.join("out/scorecard-tiny-paper-details.md"));
    assert!(
        details.contains("## Changes to this scorecard after registration (amendments)")
            && details.contains("the row's estimate is the number the paper's sentence is about")
            && details.contains("`results[Eq. 20].key.from.claim`"),
        "{details}"
    );
    let short = read(&d.join("out/scorecard-tiny-paper.md"));
    assert!(
        short.contains("its counting changed 1 times (details)"),
        "{short}"
    );
    assert_eq!(dpclaims_in(d, &["ledger", "show"]).status.code(), Some(0));
}

/// A verdict that moves with no change to the spec moved because the tool changed (its
/// verdict rules or its engine) after results: `accept` refuses it, accepting nothing,
/// until `accept --amend "why"` records it as an amendment of the claim (field: the tool),
/// which the claim page lists with the verdict it moved. Simulated by an accepted
/// snapshot that says `inconclusive` where the run says `holds`.
#[test]
fn a_verdict_moved_by_the_tool_is_refused_until_amended_and_then_shown() {
    let dir = project();
    let d = dir.path();
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    ok(&dpclaims_in(d, &["accept"]));
    let snap = std::fs::read_dir(d.join("tests/snapshots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("tiny-led.yaml.snap"))
        .expect("the accepted snapshot");
    let accepted = read(&snap);
    assert!(accepted.contains("verdict: holds"), "{accepted}");
    let older = accepted.replacen("verdict: holds", "verdict: inconclusive", 1);
    std::fs::write(&snap, &older).unwrap();

    // The run differs from the baseline; accepting it without a reason is refused.
    let o = dpclaims_in(d, &["run", "--out", "out"]);
    assert_eq!(o.status.code(), Some(1));
    let o = dpclaims_in(d, &["accept"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("its spec is unchanged but 1 verdict(s) moved"),
        "{err}"
    );
    assert!(
        err.contains("inconclusive (not discriminating) -> holds"),
        "{err}"
    );
    assert!(err.contains("dpclaims accept --amend"), "{err}");
    assert_eq!(read(&snap), older, "a refused accept accepts nothing");

    // With a reason it is recorded, accepted, and shown.
    let out = ok(&dpclaims_in(
        d,
        &[
            "accept",
            "--amend",
            "the bound rule was corrected",
            "tiny-led",
        ],
    ));
    assert!(out.contains("the tool: verdict rules or engine"), "{out}");
    assert_eq!(read(&snap), accepted);
    let l = read(&d.join("tests/snapshots/ledger/tiny-led.yaml"));
    assert!(
        l.contains("before: inconclusive") && l.contains("after: holds"),
        "{l}"
    );
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    let page = read(&d.join("out/tiny-led.md"));
    assert!(page.contains("the bound rule was corrected"), "{page}");
    assert!(page.contains("the tool: verdict rules or engine"), "{page}");
    assert!(
        page.contains("**moved:** `finite` / prop22: inconclusive"),
        "{page}"
    );
    assert_eq!(dpclaims_in(d, &["ledger", "show"]).status.code(), Some(0));
}

/// An amendment that moves no verdict (the results equal the baseline) is settled like
/// one that does: the run keeps the claim's snapshot pending although unchanged, and
/// accepting it records that nothing moved; the page then says so instead of "not known".
#[test]
fn an_amendment_that_moves_no_verdict_is_settled_by_accepting_the_unchanged_results() {
    let dir = project();
    let d = dir.path();
    ok(&dpclaims_in(d, &["run", "--out", "out"]));
    ok(&dpclaims_in(d, &["accept"]));
    let ledger = d.join("tests/snapshots/ledger/tiny-led.yaml");
    let snap = d.join("tests/snapshots");
    let snaps = |p: &Path| -> Vec<(String, String)> {
        let mut v: Vec<_> = std::fs::read_dir(p)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    read(&e.path()),
                )
            })
            .collect();
        v.sort();
        v
    };
    let accepted = snaps(&snap);
    // More replicates at the full profile: the quick run (the baseline's) is unchanged.
    edit(
        d,
        "full: {axes: {n: [8, 12, 16, 24]}, replicates: 2}",
        "full: {axes: {n: [8, 12, 16, 24]}, replicates: 3}",
    );
    ok(&dpclaims_in(
        d,
        &[
            "accept",
            "--amend",
            "the full profile takes 3 replicates",
            "tiny-led",
        ],
    ));
    let o = dpclaims_in(d, &["run", "--out", "out"]);
    let out = ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(out.contains("baseline unchanged"), "{out}");
    assert!(
        err.contains("accept with `dpclaims accept tiny-led`"),
        "{err}"
    );
    assert!(read(&d.join("out/tiny-led.md")).contains("not known"));
    ok(&dpclaims_in(d, &["accept", "tiny-led"]));
    let l = read(&ledger);
    assert!(l.contains("moved: []"), "{l}");
    assert_eq!(snaps(&snap), accepted, "the snapshot bytes are unchanged");
    // Settled: the next run keeps nothing pending and the page says none moved.
    let o = dpclaims_in(d, &["run", "--out", "out"]);
    ok(&o);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("pending"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let page = read(&d.join("out/tiny-led.md"));
    assert!(!page.contains("not known"), "{page}");
    assert!(page.contains("none moved"), "{page}");
}
