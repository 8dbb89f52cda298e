//! CI outputs on every exit (issue 33, item 6): a run that stops with exit 2 — a spec
//! error, a crashing core — still writes a valid JUnit file with an `<error>` case
//! naming the file, the field and the message, and under GitHub Actions an `::error`
//! annotation on the spec's line (relative to `$GITHUB_WORKSPACE`) and the job summary.
use crate::util::tiny_rf_claim_named;
use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpclaims"));
    c.current_dir(dir)
        .env("DPCLAIMS_NO_CACHE", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_WORKSPACE")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn error_case(xml: &str) -> (String, String, String, String) {
    let doc = roxmltree::Document::parse(xml).expect("well-formed JUnit");
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert!(suite.attribute("timestamp").is_some() && suite.attribute("hostname").is_some());
    assert_eq!(suite.attribute("errors"), Some("1"));
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    let err = case.children().find(|n| n.has_tag_name("error")).unwrap();
    (
        case.attribute("file").unwrap_or("").to_string(),
        case.attribute("line").unwrap_or("").to_string(),
        case.attribute("name").unwrap_or("").to_string(),
        err.text().unwrap_or("").to_string(),
    )
}

#[test]
fn a_spec_error_leaves_a_junit_file_with_an_error_case() {
    let d = tempfile::tempdir().unwrap();
    let spec =
        tiny_rf_claim_named("ci-error").replacen("statement:", "bogus_key: 1\nstatement:", 1);
    std::fs::write(d.path().join("c.yaml"), &spec).unwrap();
    let o = run(
        d.path(),
        &["run", "c.yaml", "--no-reports", "--junit", "j.xml"],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let xml = std::fs::read_to_string(d.path().join("j.xml")).expect("JUnit written");
    let (file, line, name, text) = error_case(&xml);
    assert_eq!(file, "c.yaml");
    assert!(name.starts_with("c.yaml: "), "{name}");
    assert!(text.contains("bogus_key"), "{text}");
    let want = spec
        .lines()
        .position(|l| l.starts_with("bogus_key"))
        .unwrap()
        + 1;
    assert_eq!(
        line,
        want.to_string(),
        "the error case points at the bad key's line"
    );
}

#[test]
fn a_crashing_core_leaves_a_junit_file_naming_its_claim_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("core.py"),
        "import json, sys\nfor line in sys.stdin:\n    msg = json.loads(line)\n    if 'protocol' in msg:\n        print(json.dumps({'protocol': 'dpclaims-external/2', 'metrics': ['m']}), flush=True)\n    else:\n        sys.exit(7)\n",
    )
    .unwrap();
    let spec = r#"id: ci-crash
title: "t"
source: {paper: "p", section: "s", equation: "e"}
statement: "s"
system: external
external:
  command: ["python3", "core.py"]
  metrics: [m]
params:
  x: "1"
sweeps:
  s:
    quick: {axes: {x: [1, 2]}, replicates: 1}
    full: {axes: {x: [1, 2]}, replicates: 1}
variants:
  - name: main
  - name: control
    negative_control: true
    caught_by: [m-positive]
predictions:
  - kind: inequality
    evidence: consequence
    name: m-positive
    metric: m
    sweep: s
    op: ">"
    rhs: "0"
"#;
    std::fs::create_dir(d.path().join("claims")).unwrap();
    std::fs::write(d.path().join("claims/crash.yaml"), spec).unwrap();
    std::fs::copy(d.path().join("core.py"), d.path().join("claims/core.py")).unwrap();
    let summary = d.path().join("summary.md");
    let ws = d.path().to_str().unwrap();
    let o = run(
        &d.path().join("claims"),
        &["run", "crash.yaml", "--no-reports", "--junit", "../j.xml"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_WORKSPACE", ws),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let xml = std::fs::read_to_string(d.path().join("j.xml")).expect("JUnit written");
    let (file, _, _, text) = error_case(&xml);
    // Relative to the workspace, not to the directory dpclaims ran in.
    assert_eq!(file, "claims/crash.yaml");
    assert!(text.contains("exit status 7"), "{text}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("::error file=claims/crash.yaml,line=")),
        "{out}"
    );
    let md = std::fs::read_to_string(&summary).expect("summary appended");
    assert!(
        md.contains("the run stopped (exit 2)") && md.contains("exit status 7"),
        "{md}"
    );
}

#[test]
fn a_normal_junit_file_has_timestamp_and_hostname() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("c.yaml"), tiny_rf_claim_named("ci-stamp")).unwrap();
    let o = run(
        d.path(),
        &[
            "run",
            "c.yaml",
            "--no-reports",
            "--no-baseline",
            "--junit",
            "j.xml",
        ],
        &[],
    );
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let xml = std::fs::read_to_string(d.path().join("j.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    for s in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
        let ts = s.attribute("timestamp").unwrap();
        assert_eq!(ts.len(), 19, "{ts}");
        assert!(!s.attribute("hostname").unwrap().is_empty());
    }
}
