//! `dpclaims advise` (issue 33, item 8): the replicates that would decide a row at the
//! seed-to-seed spread of the stability records, checked against the formula on two
//! synthetic seeds, and run on the committed records.
use crate::util::tiny_rf_claim_named;
use std::path::Path;
use std::process::{Command, Output};

/// The stdout of a command that must have exited 0 (its stderr shown if not).
fn succeeded(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .env("DPCLAIMS_NO_CACHE", "1")
        .args(args)
        .output()
        .unwrap()
}

fn row(seed: u64, verdict: &str, lo: f64, hi: f64) -> String {
    format!(
        r#"{{"seed":{seed},"claim":"adv","prediction":"vs-n","variant":"prop22","kind":"inequality","verdict":"{verdict}","negative_control":false,"caught":null,"estimate":{},"ci_lo":{lo},"ci_hi":{hi},"predicted":0.0,"tolerance":0.0,"problem":null}}"#,
        (lo + hi) / 2.0
    )
}

#[test]
fn the_advice_follows_the_formula_on_two_synthetic_seeds() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("adv.yaml"), tiny_rf_claim_named("adv")).unwrap();
    let rec = d.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let header = r#"{"format":"dpclaims-stability-seed/1","seed":0,"profile":"quick"}"#;
    // An inequality over means (> 0 violates): intervals [-0.01, 0.03] (inconclusive)
    // and [0, 0.04] (refuted at the edge). h = 0.02; the centre's distance into the
    // refuted region is 0.01 and 0.02 (mean 0.015, sd 0.00707); z(0.01) = 2.326:
    // k = ((0.02 + 2.326 * 0.00707) / 0.015)^2 = 5.90, at 2 replicates 12 per point.
    std::fs::write(
        rec.join("seed-0.jsonl"),
        format!("{header}\n{}\n", row(0, "inconclusive", -0.01, 0.03)),
    )
    .unwrap();
    std::fs::write(
        rec.join("seed-1.jsonl"),
        format!("{header}\n{}\n", row(1, "refuted", 0.0, 0.04)),
    )
    .unwrap();
    let o = run(d.path(), &["advise", "adv.yaml", "--records", "rec"]);
    let out = succeeded(&o);
    assert!(
        out.contains("vs-n / prop22: inconclusive 1/2, refuted 1/2"),
        "{out}"
    );
    assert!(
        out.contains(
            "about 12 replicates per point (now 2, x5.9 the work) would make it `refuted`"
        ),
        "{out}"
    );
    // One seed is not a spread.
    std::fs::remove_file(rec.join("seed-1.jsonl")).unwrap();
    let o = run(d.path(), &["advise", "adv.yaml", "--records", "rec"]);
    assert_eq!(o.status.code(), Some(2));
}

/// On the committed 20-seed records: a proxy row inconclusive at every seed gets advice
/// in replicates per point (Table 2, learned vs random support); a row out of regime at
/// most seeds (Table 4, whose measured premise fails) gets none, and says why.
#[test]
fn the_committed_records_advise_on_the_table_2_and_4_proxies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (claim, row, says) in [
        (
            "tpk-ranking",
            "topk-beats-rand / planted-concentrated",
            "replicates per point",
        ),
        (
            "tpk-budget-split",
            "interior-optimum / planted",
            "out of regime or not judged): no advice",
        ),
    ] {
        let o = run(root, &["advise", claim]);
        let out = succeeded(&o);
        assert!(out.contains(row), "{out}");
        assert!(out.contains(says), "{out}");
    }
}
