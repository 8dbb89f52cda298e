//! Scorecards (`scorecards/<name>.yaml` → `scorecard-<name>.md`), end to end on a tiny
//! claim: the page carries each result's combined verdict (the run's own verdicts,
//! combined by `report::scorecard::combine`), links to the claim's page, lists planned
//! and not checkable results, and is linked from the HTML index; a bad entry (unknown
//! claim, prediction or variant, a negative control, an empty entry, an unknown field)
//! is exit 2 naming the file and the entry, before anything runs; `merge` of a sharded
//! run writes the same page.
use crate::util::dpclaims_in;
use dpclaims::report::scorecard::combine;
use std::path::Path;

fn claim() -> String {
    crate::util::tiny_rf_claim_named("tiny-sc")
        .replace("id: tiny-sc", "id: tiny-sc\npaper: tiny-paper")
}

const CARD: &str = r#"
paper: "A tiny paper"
results:
  - result: "Eq. 20"
    title: "the noise term falls as n^-2"
    quote: {text: "the noise term falls as n^-2", where: "Eq. 20"}
    could_fail: data
    checked_by:
      - {claim: tiny-sc, prediction: vs-n, variant: prop22}
      - {claim: tiny-sc, prediction: finite, variant: prop22}
  - result: "Fig. 9"
    title: "a figure whose claim is still to be written"
    planned: ["claims/later.yaml"]
  - result: "Table 1"
    title: "CIFAR-10 accuracy"
    not_checkable: "needs CIFAR-10"
"#;

fn workdir(card: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (sub, file, text) in [
        ("claims", "tiny-sc.yaml", claim().as_str()),
        ("scorecards", "tiny-paper.yaml", card),
    ] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join(file), text).unwrap();
    }
    dir
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_tiny_run_writes_its_scorecard_with_the_combined_verdicts_and_links() {
    let dir = workdir(CARD);
    let o = dpclaims_in(
        dir.path(),
        &["run", "--no-baseline", "--out", "out", "--json"],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let field = |pred: &str, f: &str| {
        doc["claims"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["prediction"] == pred && r["variant"] == "prop22")
            .unwrap()[f]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The result's rows are consequences: its section, and the word of its deciding row
    // (combined as `combine` says over the rows' verdicts).
    let (a, b) = (field("vs-n", "word"), field("finite", "word"));
    let combined = combine(
        &[
            Some(&field("vs-n", "verdict")),
            Some(&field("finite", "verdict")),
        ],
        false,
    );
    let short = read(&dir.path().join("out/scorecard-tiny-paper.md"));
    // The short page: one row per result, the verdict, the claim page; details elsewhere.
    let row = short
        .lines()
        .find(|l| l.starts_with("| Eq. 20 | the noise term falls as n^-2 | **"))
        .expect("a short row for Eq. 20");
    assert!(row.ends_with("| [tiny-sc](tiny-sc.md) |"), "{row}");
    assert!(short.contains("## Not judged, and why\n\n- **Fig. 9.** Its check is to be written (claims/later.yaml)."), "{short}");
    assert!(short.contains("- **Table 1.** Needs CIFAR-10"), "{short}");
    assert!(
        dpclaims::report::scorecard::check_page(&short).is_empty(),
        "{short}"
    );
    assert!(short.contains("(scorecard-tiny-paper-details.md)"));
    let page = read(&dir.path().join("out/scorecard-tiny-paper-details.md"));
    assert!(
        page.contains("## Consequences derived by the tool"),
        "{page}"
    );
    let row = page
        .lines()
        .find(|l| l.starts_with("| Eq. 20 | \"the noise term falls as n^-2\" (Eq. 20)"))
        .expect("a row for Eq. 20, quoting the paper");
    assert!(
        row.contains(&format!("| **{a}** |")) || row.contains(&format!("| **{b}** |")),
        "{row} ({combined:?})"
    );
    assert!(row.contains("[tiny-sc](tiny-sc.md)"), "{row}");
    assert!(row.contains("4/4 points inside the hypotheses"), "{row}");
    // Every check is shown, with its own verdict, from this run.
    for (pred, v) in [("vs-n", &a), ("finite", &b)] {
        assert!(
            page.lines().any(|l| l
                .contains(&format!("| `{pred}` | prop22 | consequence | **{v}** |"))
                && l.ends_with("| this run |")),
            "no row for {pred}:\n{page}"
        );
    }
    assert!(page.contains(
        "| Fig. 9 | *(paraphrase, no quote)* a figure whose claim is still to be written | **not yet checked** |"
    ));
    assert!(page.contains("planned: `claims/later.yaml`"));
    assert!(page.contains(
        "| Table 1 | *(paraphrase, no quote)* CIFAR-10 accuracy | **not checkable in simulation** | needs CIFAR-10 |"
    ));
    assert!(page.contains("**3 results of the paper:**"));
    // The linked claim page exists; the HTML page is written and linked from the index.
    assert!(dir.path().join("out/tiny-sc.md").is_file());
    let html = read(&dir.path().join("out/scorecard-tiny-paper.html"));
    assert!(html.contains(r#"href="tiny-sc.html""#));
    assert!(html.contains(r#"href="scorecard-tiny-paper-details.html""#));
    assert!(dir
        .path()
        .join("out/scorecard-tiny-paper-details.html")
        .is_file());
    let index = read(&dir.path().join("out/index.html"));
    assert!(index.contains(r#"href="scorecard-tiny-paper.html""#));
    assert!(!index.contains(r#"href="scorecard-tiny-paper-details.html""#));
    // Same spec and seed: the same page.
    let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "again"]);
    assert!(matches!(o.status.code(), Some(0 | 1)));
    assert_eq!(
        page,
        read(&dir.path().join("again/scorecard-tiny-paper-details.md"))
    );
    assert_eq!(
        short,
        read(&dir.path().join("again/scorecard-tiny-paper.md"))
    );
    // A sharded run's merge writes the same page (and its HTML) as the whole run.
    let o = dpclaims_in(
        dir.path(),
        &["run", "--shard", "0/1", "--partial-out", "shards"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = dpclaims_in(
        dir.path(),
        &["merge", "shards", "--no-baseline", "--out", "merged"],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        page,
        read(&dir.path().join("merged/scorecard-tiny-paper-details.md"))
    );
    assert_eq!(
        short,
        read(&dir.path().join("merged/scorecard-tiny-paper.md"))
    );
    assert!(dir
        .path()
        .join("merged/scorecard-tiny-paper.html")
        .is_file());
}

#[test]
fn bad_scorecard_entries_exit_2_naming_the_file_and_the_entry() {
    let check = |c: &str| format!("\n    could_fail: data\n    checked_by:\n      - {c}\n");
    let head = "paper: \"p\"\nresults:\n  - result: \"Eq. 20\"\n    title: \"t\"\n    quote: {text: \"t\", where: \"Eq. 20\"}";
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!(
                "{head}{}",
                check("{claim: nope, prediction: vs-n, variant: prop22}")
            ),
            "results[0] (Eq. 20).checked_by[0]",
            "unknown claim `nope`",
        ),
        (
            format!(
                "{head}{}",
                check("{claim: tiny-sc, prediction: nope, variant: prop22}")
            ),
            "results[0] (Eq. 20).checked_by[0]",
            "has no prediction `nope`",
        ),
        (
            format!(
                "{head}{}",
                check("{claim: tiny-sc, prediction: vs-n, variant: nope}")
            ),
            "results[0] (Eq. 20).checked_by[0]",
            "has no variant `nope`",
        ),
        (
            format!(
                "{head}{}",
                check("{claim: tiny-sc, prediction: vs-n, variant: noise-grows-with-n}")
            ),
            "results[0] (Eq. 20).checked_by[0]",
            "is a negative control",
        ),
        (
            format!("{head}\n"),
            "results[0] (Eq. 20)",
            "needs `checked_by`, `planned`, `not_testable` or `not_checkable`",
        ),
        (
            format!("{head}\n    not_checkable: \"x\"\n    planned: [\"claims/a.yaml\"]\n"),
            "results[0] (Eq. 20)",
            "cannot be combined",
        ),
        (
            // A checked result quotes the paper.
            format!(
                "paper: \"p\"\nresults:\n  - result: \"Eq. 20\"\n    title: \"t\"{}",
                check("{claim: tiny-sc, prediction: vs-n, variant: prop22}")
            ),
            "results[0] (Eq. 20)",
            "a checked result quotes the paper",
        ),
        (
            // A registry hypothesis the check is not judged under.
            format!(
                "paper: \"p\"\nhypotheses:\n  - {{name: n-big, quote: {{text: \"n large\", where: \"Eq. 6\"}}, require: \"n >= 1\"}}\n{}\n    hypotheses: [n-big]{}",
                &head["paper: \"p\"\n".len()..],
                check("{claim: tiny-sc, prediction: vs-n, variant: prop22}")
            ),
            "results[0] (Eq. 20).checked_by[0]",
            "omits the result's hypothesis `n-big`",
        ),
        (
            format!("{head}\n    planned: [\"claims/a.yaml\"]\n    colour: red\n"),
            "results",
            "unknown field `colour`",
        ),
        (
            // Not testable names the quantity, its value and where it would change.
            format!("{head}\n    not_testable: {{quantity: \"q\", measured: \" \", changes_at: \"n > 1e7\"}}\n"),
            "results[0] (Eq. 20)",
            "`not_testable` names the quantity",
        ),
        (
            format!("{head}\n    not_checkable: \"x\"\n    not_testable: {{quantity: \"q\", measured: \"m\", changes_at: \"c\"}}\n"),
            "results[0] (Eq. 20)",
            "exclude each other",
        ),
        (
            format!("{head}\n    planned: [\"claims/a.yaml\"]\nremarks:\n  - {{where: \"L1\", text: \"a slip\", derivation: \"\"}}\n"),
            "remarks[0]",
            "one-line derivation",
        ),
        (
            // An asymptotic hypothesis has a direction, and a hypothesis exactly one form.
            format!(
                "paper: \"p\"\nhypotheses:\n  - {{name: n-big, quote: {{text: \"n = ω(1)\", where: \"Eq. 6\"}}, asymptotic: {{ratio: \"n\", direction: up}}}}\n{}\n    planned: [\"claims/a.yaml\"]\n",
                &head["paper: \"p\"\n".len()..],
            ),
            "hypotheses",
            "is not grows (ω), shrinks (o) or bounded (O)",
        ),
        (
            format!(
                "paper: \"p\"\nhypotheses:\n  - {{name: n-big, quote: {{text: \"n = ω(1)\", where: \"Eq. 6\"}}, require: \"n >= 1\", asymptotic: {{ratio: \"n\", direction: grows}}}}\n{}\n    planned: [\"claims/a.yaml\"]\n",
                &head["paper: \"p\"\n".len()..],
            ),
            "hypotheses",
            "exactly one of `require`",
        ),
    ];
    for (card, entry, problem) in cases {
        let dir = workdir(&card);
        let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{card}\n{err}");
        assert!(err.contains("tiny-paper.yaml"), "{err}");
        assert!(err.contains(entry), "{entry} not in {err}");
        assert!(err.contains(problem), "{problem} not in {err}");
        assert!(!err.contains("panicked"), "{err}");
        // Refused before anything runs: no report set.
        assert!(!dir.path().join("out").exists(), "{err}");
    }
}

#[test]
fn a_run_of_other_claims_keeps_the_verdicts_of_the_claims_it_did_not_run() {
    let dir = workdir(CARD);
    let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
    assert!(matches!(o.status.code(), Some(0 | 1)));
    let first = read(&dir.path().join("out/scorecard-tiny-paper-details.md"));
    // A second claim (a copy under another id), run alone into the same directory.
    let other = claim().replace("id: tiny-sc", "id: tiny-other");
    std::fs::write(dir.path().join("claims/tiny-other.yaml"), other).unwrap();
    let o = dpclaims_in(
        dir.path(),
        &[
            "run",
            "claims/tiny-other.yaml",
            "--no-baseline",
            "--out",
            "out",
        ],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let kept = read(&dir.path().join("out/scorecard-tiny-paper-details.md"));
    let rows = |page: &str| -> Vec<String> {
        page.lines()
            .filter(|l| l.starts_with("| Eq. 20 |"))
            .map(|l| l.rsplit_once(" | ").unwrap().0.to_string())
            .collect()
    };
    // The same verdicts, measurements and regimes; only where they came from differs.
    assert_eq!(rows(&first), rows(&kept));
    assert!(
        kept.contains("| kept: profile `quick`, seed 0, engine `"),
        "{kept}"
    );
}

/// An asymptotic hypothesis is a direction along the sweep, never a pointwise gate: a
/// sweep in n that moves `n` up is inside `n = ω(1)` at every point (whatever n's size),
/// and outside `1/n = ω(1)` at every point, with the ratio's ends named; `not_testable`
/// and `remarks` reach the page.
#[test]
fn an_asymptotic_hypothesis_is_judged_along_the_sweep_and_not_testable_has_its_numbers() {
    for (ratio, inside) in [("n", true), ("1/n", false)] {
        let card = format!(
            r#"
paper: "A tiny paper"
hypotheses:
  - name: n-grows
    quote: {{text: "n = ω(1)", where: "Eq. 6"}}
    asymptotic: {{ratio: "{ratio}", direction: grows}}
results:
  - result: "Eq. 20"
    title: "the noise term falls as n^-2"
    quote: {{text: "the noise term falls as n^-2", where: "Eq. 20"}}
    hypotheses: [n-grows]
    could_fail: data
    checked_by:
      - {{claim: tiny-sc, prediction: vs-n, variant: prop22}}
    not_testable: {{quantity: "the tiny quantity", measured: "42 at every point", changes_at: "from n = 1e9"}}
remarks:
  - where: "L7"
    text: "a small slip"
    derivation: "1 + 1 = 2"
"#
        );
        let dir = workdir(&card);
        let spec = dir.path().join("claims/tiny-sc.yaml");
        let text =
            read(&spec).replace("    name: vs-n\n", "    name: vs-n\n    under: [n-grows]\n");
        std::fs::write(&spec, text).unwrap();
        let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
        let page = read(&dir.path().join("out/tiny-sc.md"));
        if inside {
            assert!(
                page.contains("all 4 points inside the hypotheses"),
                "{page}"
            );
        } else {
            assert!(page.contains("0/4 points inside"), "{page}");
            assert!(
                page.contains("1/n grows along the sweep")
                    && page.contains("the sweep moves the ratio away from the regime"),
                "{page}"
            );
        }
        let card_md = read(&dir.path().join("out/scorecard-tiny-paper-details.md"));
        assert!(
            card_md.contains("## Remarks for the authors (not errata)"),
            "{card_md}"
        );
        assert!(card_md.contains("**L7.** A small slip."), "{card_md}");
        if !inside {
            assert!(
                card_md
                    .contains("The tiny quantity: 42 at every point. Would change: from n = 1e9."),
                "{card_md}"
            );
        }
    }
}

/// A hypothesis every system meets by construction (`by_construction:`) is listed on the
/// page so that a reader sees every hypothesis, gates nothing (a result may list it
/// without its checks naming it), and cannot be named in a prediction's `under`.
#[test]
fn a_by_construction_hypothesis_is_listed_and_never_a_gate() {
    let card = r#"
paper: "A tiny paper"
hypotheses:
  - name: init-zero
    quote: {text: "we set the initialization θ_0 = 0", where: "L107"}
    by_construction: "every run starts at theta_0 = 0"
results:
  - result: "Eq. 20"
    title: "the noise term falls as n^-2"
    quote: {text: "the noise term falls as n^-2", where: "Eq. 20"}
    hypotheses: [init-zero]
    could_fail: data
    checked_by:
      - {claim: tiny-sc, prediction: vs-n, variant: prop22}
"#;
    let dir = workdir(card);
    let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    let card_md = read(&dir.path().join("out/scorecard-tiny-paper-details.md"));
    assert!(
        card_md.contains("by construction: every run starts at theta_0 = 0"),
        "{card_md}"
    );
    // Named in `under`: refused before anything runs, naming the hypothesis.
    let dir = workdir(card);
    let spec = dir.path().join("claims/tiny-sc.yaml");
    let text = read(&spec).replace(
        "    name: vs-n\n",
        "    name: vs-n\n    under: [init-zero]\n",
    );
    std::fs::write(&spec, text).unwrap();
    let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`init-zero` is met by construction") && err.contains("gates nothing"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists(), "{err}");
    // Exactly one form.
    let both = card.replace(
        "    by_construction: \"every run starts at theta_0 = 0\"",
        "    by_construction: \"x\"\n    require: \"n >= 1\"",
    );
    let dir = workdir(&both);
    let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("exactly one of `require`"), "{err}");
}

/// The short page's numbers come from the run: a key and the box's placeholders are
/// filled with the row's estimate; the limits (15 words, 8 lines) and an unknown or
/// malformed placeholder are errors of the scorecard file (exit 2, naming the entry).
#[test]
fn key_numbers_and_the_box_come_from_the_run_and_the_limits_are_enforced() {
    let card = CARD.replace(
        "    title: \"the noise term falls as n^-2\"\n",
        "    title: \"the noise term falls as n^-2\"\n    claim: \"the noise term falls as n^-2\"\n    key: {from: {claim: tiny-sc, prediction: finite, variant: prop22}, value: effect, scale: -1, meaning: \"bound - measured = {v}\"}\n",
    ) + "summary:\n  - \"Eq. 20: margin {tiny-sc/finite/prop22:estimate}.\"\n";
    let dir = workdir(&card);
    let o = dpclaims_in(
        dir.path(),
        &["run", "--no-baseline", "--out", "out", "--json"],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = doc["claims"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prediction"] == "finite" && r["variant"] == "prop22")
        .unwrap()
        .clone();
    let est = r["estimate"].as_f64().unwrap();
    let page = read(&dir.path().join("out/scorecard-tiny-paper.md"));
    use dpclaims::report::scorecard::keynum::sig;
    assert!(
        page.contains(&format!("> - Eq. 20: margin {}.", sig(est))),
        "{page}"
    );
    let row = page.lines().find(|l| l.starts_with("| Eq. 20 |")).unwrap();
    let signed = if -est > 0.0 {
        format!("+{}", sig(-est))
    } else {
        sig(-est)
    };
    assert!(
        row.contains(&format!("bound - measured = {signed}")),
        "{row}"
    );
    assert!(
        dpclaims::report::scorecard::check_page(&page).is_empty(),
        "{page}"
    );
    for (bad, entry) in [
        (
            card.replace("summary:\n", &format!("summary:\n{}", "  - \"a line\"\n".repeat(8))),
            "summary",
        ),
        (card.replace("margin {tiny-sc/finite/prop22:estimate}", "margin {tiny-sc/nope/prop22:estimate}"), "summary[0]"),
        (card.replace("margin {tiny-sc/finite/prop22:estimate}", "margin {tiny-sc/finite:estimate}"), "summary[0]"),
        (
            card.replace(
                "claim: \"the noise term falls as n^-2\"",
                "claim: \"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen\"",
            ),
            "results[0] (Eq. 20)",
        ),
        (card.replace("meaning: \"bound - measured = {v}\"", "meaning: \"no number\""), "results[0] (Eq. 20)"),
        (card.replace("variant: prop22}, value: effect", "variant: nope}, value: effect"), "results[0] (Eq. 20).key"),
    ] {
        let d = workdir(&bad);
        let o = dpclaims_in(d.path(), &["run", "--no-baseline", "--out", "out"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}\n{err}");
        assert!(err.contains(entry), "{entry}: {err}");
    }
}

/// A result whose checks are another result's (`could_fail: follows`) takes that result's
/// verdict, named beside it, in its own section and count; the measurement counts once.
/// Without `follows` the same check listed twice is refused, and a `follows` result whose
/// check no other result lists is refused (exit 2, naming the entry).
#[test]
fn a_verdict_that_follows_from_another_result_is_named_and_counted_once() {
    let two = |second_could_fail: &str, second_check: &str| {
        format!(
            "paper: \"p\"\nresults:\n  - result: \"Eq. 20\"\n    title: \"t\"\n    quote: {{text: \"t\", where: \"Eq. 20\"}}\n    could_fail: data\n    checked_by:\n      - {{claim: tiny-sc, prediction: vs-n, variant: prop22}}\n  - result: \"Headline\"\n    title: \"h\"\n    quote: {{text: \"h\", where: \"Abstract\"}}\n    could_fail: {second_could_fail}\n    checked_by:\n      - {second_check}\n"
        )
    };
    let same = "{claim: tiny-sc, prediction: vs-n, variant: prop22}";
    let other = "{claim: tiny-sc, prediction: finite, variant: prop22}";
    let dir = workdir(&two("follows", same));
    let o = dpclaims_in(
        dir.path(),
        &["run", "--no-baseline", "--out", "out", "--json"],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let short = read(&dir.path().join("out/scorecard-tiny-paper.md"));
    let row = short
        .lines()
        .find(|l| l.starts_with("| Headline |"))
        .expect("a row for the headline");
    assert!(row.contains("(follows from Eq. 20)**"), "{row}");
    assert!(short.contains("1 follows from another result"), "{short}");
    let page = read(&dir.path().join("out/scorecard-tiny-paper-details.md"));
    assert!(
        page.contains("## Verdicts that follow from another result"),
        "{page}"
    );
    for (card, want) in [
        (two("data", same), "the same check is listed twice"),
        (
            two("follows", other),
            "must also be listed by exactly one result",
        ),
    ] {
        let dir = workdir(&card);
        let o = dpclaims_in(dir.path(), &["run", "--no-baseline", "--out", "out"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("results[1] (Headline)"), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(!dir.path().join("out").exists(), "{err}");
    }
}
