//! `dpclaims stability` resumes from its seed records: a seed read from its record gives
//! the same STABILITY.md and `--json` bytes as the seed run afresh; a record of another
//! version of a claim, or a damaged one, is not used (the seed runs again, with a
//! message), while a revised discussion keeps the records usable.
use crate::util::dpclaims_in;
use std::path::Path;

fn claim() -> String {
    crate::util::tiny_rf_claim_named("tiny-stability")
}

fn stability(dir: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "stability",
        "claims",
        "--seeds",
        "3",
        "--out",
        "out",
        "--json",
        "rows.jsonl",
    ];
    args.extend_from_slice(extra);
    let o = dpclaims_in(dir, &args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let page = std::fs::read_to_string(dir.join("out/STABILITY.md")).unwrap();
    let rows = std::fs::read_to_string(dir.join("rows.jsonl")).unwrap();
    (format!("{page}\n---\n{rows}"), err)
}

#[test]
fn a_seed_read_from_its_record_gives_the_same_bytes_as_the_seed_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("claims")).unwrap();
    let spec = d.join("claims/tiny-stability.yaml");
    std::fs::write(&spec, claim()).unwrap();
    let record = |k: u64| d.join(format!("out/stability/seed-{k}.jsonl"));

    // Without records: every seed runs; nothing is stored.
    let (plain, err) = stability(d, &["--no-records"]);
    assert!(!err.contains("seed records"), "{err}");
    assert!(!record(0).exists());
    // The page has an interval-based row (a margin), so the numbers are compared too.
    assert!(
        plain.contains("| tiny-stability | vs-n | prop22 |"),
        "{plain}"
    );

    // First run with records: 0 read, 3 run, 3 records written.
    let (first, err) = stability(d, &[]);
    assert!(
        err.contains("0 of 3 seeds read whole, 0 in part, 3 to run"),
        "{err}"
    );
    assert_eq!(first, plain);
    for k in 0..3 {
        assert!(record(k).is_file());
    }

    // Again: every seed read from its record, same bytes.
    let (again, err) = stability(d, &[]);
    assert!(
        err.contains("3 of 3 seeds read whole, 0 in part, 0 to run"),
        "{err}"
    );
    assert_eq!(again, first);

    // A missing record and a damaged one: those two seeds run again, same bytes.
    std::fs::remove_file(record(1)).unwrap();
    let text = std::fs::read_to_string(record(2)).unwrap();
    std::fs::write(record(2), &text[..text.len() / 2]).unwrap();
    let (resumed, err) = stability(d, &[]);
    assert!(
        err.contains("1 of 3 seeds read whole, 0 in part, 2 to run"),
        "{err}"
    );
    assert!(
        err.contains("seed 2: record not used") && err.contains("seed-2.jsonl: "),
        "{err}"
    );
    assert_eq!(resumed, first);

    // A revised discussion does not change what is judged: the records stay usable.
    std::fs::write(
        &spec,
        format!("{}discussion: revised after measuring\n", claim()),
    )
    .unwrap();
    let (_, err) = stability(d, &[]);
    assert!(err.contains("3 of 3 seeds read"), "{err}");
    // Nor do axis words (`labels:`, used only by the plots).
    std::fs::write(
        &spec,
        format!("{}labels: {{n: \"training samples n\"}}\n", claim()),
    )
    .unwrap();
    let (_, err) = stability(d, &[]);
    assert!(err.contains("3 of 3 seeds read"), "{err}");

    // More replicates do: the claim's rows in every record are stale, named with the
    // claim, and the claim runs again (a record of the same build is used per claim).
    std::fs::write(&spec, claim().replace("replicates: 2}", "replicates: 3}")).unwrap();
    let (changed, err) = stability(d, &[]);
    assert!(
        err.contains("0 of 3 seeds read whole, 3 in part, 0 to run"),
        "{err}"
    );
    assert!(
        err.contains("runs again: tiny-stability (its spec changed)"),
        "{err}"
    );
    let (again, err) = stability(d, &[]);
    assert!(err.contains("3 of 3 seeds read"), "{err}");
    assert_eq!(again, changed);

    // A second claim: only it runs; the first claim's rows are read, and the page is
    // the one a run of both without records gives.
    std::fs::write(
        d.join("claims/tiny-second.yaml"),
        claim().replace("id: tiny-stability", "id: tiny-second"),
    )
    .unwrap();
    let (both, err) = stability(d, &[]);
    assert!(
        err.contains("record used for 1 claims; runs again: tiny-second (not in the record)"),
        "{err}"
    );
    assert!(err.contains("1 of 2 claims run, the others read"), "{err}");
    let (fresh, _) = stability(d, &["--no-records"]);
    assert_eq!(both, fresh);
}

/// A claim's stored rows depend on its spec and on the hypotheses of its paper's registry,
/// not on the rest of the scorecard: an edit of a scorecard's prose or counting keeps the
/// claim's `judged_hash` (so its stability records stay usable), an edit of a hypothesis
/// changes it (the claim runs again).
#[test]
fn a_scorecard_edit_keeps_the_records_and_a_hypothesis_edit_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("claims")).unwrap();
    std::fs::create_dir_all(d.join("scorecards")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = d.join("claims/tp-topk-digits.yaml");
    std::fs::copy(root.join("claims/tp-topk-digits.yaml"), &spec).unwrap();
    let card = d.join("scorecards/tp-topk.yaml");
    let text = std::fs::read_to_string(root.join("scorecards/tp-topk.yaml")).unwrap();
    let hash = |card_text: &str| {
        std::fs::write(&card, card_text).unwrap();
        dpclaims::spec::load_claim(&spec).unwrap().judged_hash
    };
    let base = hash(&text);
    let prose = text.replacen("intro: >\n", "intro: >\n  An edited introduction.\n", 1);
    assert_ne!(prose, text);
    assert_eq!(
        hash(&prose),
        base,
        "a prose edit of the scorecard moved the hash"
    );
    let hyp = text.replacen(
        "require: \"clip_order_term <= 1.0e-12\"",
        "require: \"clip_order_term <= 1.0e-11\"",
        1,
    );
    assert_ne!(hyp, text);
    assert_ne!(hash(&hyp), base, "a hypothesis edit kept the hash");
}
