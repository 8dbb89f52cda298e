//! Bad input: a malformed spec gives exit status 2 and one message naming the file, the
//! field and the problem — never a panic.
use std::path::Path;
use std::process::Command;

const GOOD: &str = r#"
id: tiny
title: "tiny"
source: {paper: "p", section: "s", equation: "e"}
statement: "s"
system: gaussian_calibration
model: none
adjacency: replace_one
params:
  epsilon: "1"
  kappa: "2"
  eta: "0.1"
  steps: "10"
sweeps:
  grid:
    quick: {axes: {delta: [1.0e-5, 1.0e-3]}, replicates: 1}
    full: {axes: {delta: [1.0e-5, 1.0e-3]}, replicates: 1}
variants:
  - name: base
  - name: broken
    negative_control: true
    caught_by: [eps-bound]
    options: {calibration: inverse_epsilon}
predictions:
  - kind: inequality
    evidence: consequence
    name: eps-bound
    metric: exact_epsilon
    sweep: grid
    op: "<="
    rhs: "epsilon"
"#;

fn run_spec(dir: &Path, text: &str) -> (i32, String, String) {
    let f = dir.join("spec.yaml");
    std::fs::write(&f, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        // Never the user's result cache (tests/cache.rs tests the cache).
        .env("DPCLAIMS_NO_CACHE", "1")
        .args(["run", "--no-reports"])
        .arg(&f)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_good_spec_runs_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run_spec(dir.path(), GOOD);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_neutered_negative_control_exits_1_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // The control's only change removed: it equals the main variant.
    let (code, out, err) = run_spec(
        dir.path(),
        &GOOD.replace("    options: {calibration: inverse_epsilon}\n", ""),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("broken") && err.contains("identical to main variant `base`"),
        "{err}"
    );
    assert!(out.contains("negative controls 0/1 caught"), "{out}");
}

#[test]
fn an_uncaught_negative_control_exits_1_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // A different but harmless change (sensitivity add/remove with kappa 2 over-noises).
    let (code, out, err) = run_spec(
        dir.path(),
        &GOOD.replace(
            "options: {calibration: inverse_epsilon}",
            "options: {sensitivity: add_remove}",
        ),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("`broken`") && err.contains("not caught"),
        "{err}"
    );
}

#[test]
fn a_refuted_main_variant_needs_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let refuted = GOOD.replace(
        "  - name: base\n",
        "  - name: base\n  - name: kappa1\n    params: {kappa: \"0.5\"}\n",
    );
    let (code, out, err) = run_spec(dir.path(), &refuted);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("`kappa1`")
            && err.contains("regression of the core: inconsistent on a main variant")
            && err.contains("without a `finding`"),
        "{err}"
    );
    assert!(out.contains("1 inconsistent"), "{out}");
    let explained = refuted.replace(
        "    params: {kappa: \"0.5\"}\n",
        "    params: {kappa: \"0.5\"}\n    findings: {eps-bound: \"kappa 0.5 quarters the noise under replace-one\"}\n",
    );
    let (code, out, err) = run_spec(dir.path(), &explained);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("consequences: 1 consistent, 1 inconsistent"),
        "{out}"
    );
}

#[test]
fn points_outside_the_hypotheses_are_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    // No point inside: out of regime, so the control is not caught either (exit 1).
    let none = GOOD.replace(
        "sweeps:",
        "assumptions:\n  - {require: \"delta <= 1.0e-9\", source: \"Eq. X\"}\nsweeps:",
    );
    let (code, out, err) = run_spec(dir.path(), &none);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("1 out of regime"), "{out}");
    assert!(err.contains("out of regime"), "{err}");
    // One point inside: judged there.
    let one = GOOD.replace("sweeps:", "assumptions: [\"delta <= 1.0e-4\"]\nsweeps:");
    let (code, out, err) = run_spec(dir.path(), &one);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("consequences: 1 consistent"), "{out}");
}

#[test]
fn malformed_specs_exit_2_naming_file_field_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &[&str])] = &[
        // (from, to, words the message must contain)
        (
            "title: \"tiny\"",
            "title: \"tiny\"\ntitel: \"typo\"",
            &["unknown field", "titel"],
        ),
        (
            "epsilon: \"1\"",
            "epsilon: \"1 + q\"",
            &["params.epsilon", "unknown symbol", "q"],
        ),
        (
            "epsilon: \"1\"",
            "epsilon: \"-1\"",
            &["params.epsilon", "> 0"],
        ),
        (
            "delta: [1.0e-5, 1.0e-3]}, replicates: 1}\n    full",
            "delta: [1.0e-5, 1.5]}, replicates: 1}\n    full",
            &["params.delta", "(0, 1)"],
        ),
        (
            "delta: [1.0e-5, 1.0e-3]}, replicates: 1}\n    full",
            "delta: []}, replicates: 1}\n    full",
            &["sweeps.grid.quick.axes.delta", "empty"],
        ),
        ("steps: \"10\"", "steps: \"sqrt(\"", &["syntax error"]),
        (
            "replicates: 1}\n    full",
            "replicates: \"many\"}\n    full",
            &["replicates"],
        ),
        (
            "metric: exact_epsilon",
            "metric: exact_epsilonn",
            &["predictions[0].metric", "unknown metric"],
        ),
        (
            "system: gaussian_calibration",
            "system: nope",
            &["system", "unknown system"],
        ),
        (
            "negative_control: true\n",
            "negative_control: false\n",
            &["negative control"],
        ),
        (
            "caught_by: [eps-bound]",
            "caught_by: [eps-bund]",
            &["variants[1]", "unknown prediction `eps-bund`"],
        ),
        (
            "    caught_by: [eps-bound]\n",
            "",
            &["variants[1].caught_by", "must name the predictions"],
        ),
        (
            "    rhs: \"epsilon\"\n",
            "    rhs: \"epsilon\"\n    expected: {base: holds}\n",
            &["predictions[0].expected", "removed"],
        ),
        (
            "sweeps:",
            "assumptions: [\"delta = 1\"]\nsweeps:",
            &["assumptions[0]", "exactly one of"],
        ),
        (
            "sweeps:",
            "assumptions: [\"delta <= nope\"]\nsweeps:",
            &["unknown symbol `nope`"],
        ),
        (
            "epsilon: \"1\"",
            "epsilon: \"epsilon2\"\n  epsilon2: \"epsilon\"",
            &["cyclic"],
        ),
    ];
    for (from, to, words) in cases {
        assert!(GOOD.contains(from), "test case does not apply: {from}");
        let (code, out, err) = run_spec(dir.path(), &GOOD.replacen(from, to, 1));
        assert_eq!(
            code, 2,
            "case {to:?}: exit {code}, stdout {out}, stderr {err}"
        );
        assert!(
            err.contains("spec.yaml"),
            "case {to:?}: message does not name the file: {err}"
        );
        for w in *words {
            assert!(err.contains(w), "case {to:?}: message lacks {w:?}: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one message: {err}");
    }
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        // Never the user's result cache (tests/cache.rs tests the cache).
        .env("DPCLAIMS_NO_CACHE", "1")
        .args(["run", "--no-reports", "no/such/claim.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/claim.yaml"));
}

/// Same spec + seed ⇒ identical report bytes, whatever the thread count.
#[test]
fn reports_are_byte_identical_across_runs_and_thread_counts() {
    // rank-one at 20 replicates instead of 200: still 880 units spread over the threads.
    let claims = tempfile::tempdir().unwrap();
    let rank_one = crate::util::shrunk_claim(claims.path(), "rank-one-gradient-step", 200, 20);
    let run = |threads: &str| {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            // Never the user's result cache (tests/cache.rs tests the cache).
            .env("DPCLAIMS_NO_CACHE", "1")
            .args([
                "run",
                rank_one.to_str().unwrap(),
                "claims/sigma-a-calibration.yaml",
                "--no-baseline",
                "--out",
            ])
            .arg(dir.path())
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Every file, `raw/` (the unrounded values) too.
        let files: Vec<(String, Vec<u8>)> =
            crate::sharding::files(dir.path()).into_iter().collect();
        files
    };
    let a = run("1");
    let b = run("2");
    // The scorecard pages of `scorecards/` (run from the repository) are compared too.
    assert_eq!(
        a.iter()
            .filter(|(name, _)| !name.starts_with("scorecard-"))
            .count(),
        13,
        "5 files per claim (raw/<id>.csv too) + SUMMARY.md + verdicts.json + index.html"
    );
    assert!(a.iter().any(|(name, _)| name.starts_with("scorecard-")));
    assert_eq!(a, b);
}

#[test]
fn run_json_is_one_document_in_the_documented_shape() {
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        // Never the user's result cache (tests/cache.rs tests the cache).
        .env("DPCLAIMS_NO_CACHE", "1")
        .args([
            "run",
            "claims/sigma-a-calibration.yaml",
            "--json",
            "--no-reports",
            "--seed",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["profile"], "quick");
    assert_eq!(v["seed"], 3);
    let r = &v["claims"][0]["results"][0];
    for k in [
        "variant",
        "metric",
        "kind",
        "x",
        "estimate",
        "ci",
        "predicted",
        "tolerance",
        "verdict",
        "prediction",
        "negative_control",
        "regime",
        "control",
        "finding",
        "problem",
        "evidence",
        "word",
        "power",
        "discriminating",
        "erratum",
    ] {
        assert!(r.get(k).is_some(), "missing {k} in {r}");
    }
    assert_eq!(v["claims"][0]["id"], "sigma-a-calibration");
    assert!(v["tally"]["statements"]["positive"].is_u64(), "{v}");
    assert!(v["tally"]["self_checks"]["positive"].is_u64(), "{v}");
    assert!(
        v["baseline"].as_str().unwrap().starts_with("baseline"),
        "{v}"
    );
}
