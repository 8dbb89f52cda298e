//! The CI tools, end to end on tiny claims: `run --junit` (parsed with a real XML
//! parser; a failure exactly where the run exits 1), GitHub Actions annotations and job
//! summary, `merge --junit`, `dpclaims diff`, completions and man pages.
use crate::util::dpclaims_in;
use std::path::Path;
use std::process::{Command, Output};

/// A deterministic claim: one prediction that holds (its control caught), one whose
/// hypotheses no point satisfies (out of regime).
const CALIBRATION: &str = r#"id: tiny-ci
title: "tiny calibration (test only)"
source: {paper: "p", section: "s", equation: "e"}
statement: "s"
system: gaussian_calibration
model: none
adjacency: replace_one
params: {epsilon: "1", kappa: "2", eta: "0.1", steps: "10"}
sweeps:
  grid:
    quick: {axes: {delta: [1.0e-5, 1.0e-4, 1.0e-3]}, replicates: 1}
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
  - kind: inequality
    evidence: consequence
    name: "big-delta"
    metric: exact_epsilon
    sweep: grid
    op: "<="
    rhs: "epsilon"
    assumptions: ["delta >= 0.5"]
"#;

/// The 1-based line of `spec` that is `needle` once trimmed.
fn line_of(spec: &str, needle: &str) -> usize {
    spec.lines().position(|l| l.trim() == needle).unwrap() + 1
}

/// A claim whose negative control equals its main variant: it cannot be caught, so the
/// run exits 1.
fn failing() -> String {
    CALIBRATION
        .replace("id: tiny-ci", "id: tiny-fail")
        .replace("    options: {calibration: inverse_epsilon}\n", "")
}

/// A temporary directory with `claims/` holding the given (file name, spec) pairs.
fn workdir(specs: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    for (name, text) in specs {
        std::fs::write(dir.path().join("claims").join(name), text).unwrap();
    }
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Runs the binary in `dir` with the GitHub Actions variables cleared (the tests may
/// themselves run under Actions) plus `env`.
fn run_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpclaims"));
    c.current_dir(dir)
        .args(args)
        .env("DPCLAIMS_NO_CACHE", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run dpclaims")
}

/// Attribute `name` of a node, which must have it.
fn attr<'a>(n: roxmltree::Node<'a, '_>, name: &str) -> &'a str {
    n.attribute(name)
        .unwrap_or_else(|| panic!("<{}> has no `{name}`", n.tag_name().name()))
}

fn count(n: roxmltree::Node, name: &str) -> usize {
    attr(n, name).parse().unwrap()
}

/// The parsed JUnit document's cases: (classname, name, outcome) with outcome
/// `failure`, `skipped` or `passed`; checks the structure JUnit consumers expect on
/// the way (testsuites > testsuite > testcase, the counts, classname/name/time).
fn junit_cases(xml: &str) -> Vec<(String, String, String)> {
    let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert!(!suites.is_empty());
    let mut all = Vec::new();
    let (mut failures, mut skipped) = (0, 0);
    for s in &suites {
        assert_eq!(s.tag_name().name(), "testsuite");
        let name = attr(*s, "name");
        attr(*s, "time").parse::<f64>().unwrap();
        let cases: Vec<_> = s
            .children()
            .filter(|n| n.is_element() && n.tag_name().name() == "testcase")
            .collect();
        assert_eq!(count(*s, "tests"), cases.len(), "{name}");
        let mut f = 0;
        let mut k = 0;
        for c in cases {
            assert_eq!(attr(c, "classname"), name);
            let t: f64 = attr(c, "time").parse().unwrap();
            assert!(t >= 0.0);
            let kids: Vec<&str> = c
                .children()
                .filter(|n| n.is_element())
                .map(|n| n.tag_name().name())
                .collect();
            let outcome = if kids.contains(&"failure") {
                f += 1;
                let fl = c.children().find(|n| n.has_tag_name("failure")).unwrap();
                assert!(!attr(fl, "message").is_empty());
                "failure"
            } else if kids.contains(&"skipped") {
                k += 1;
                "skipped"
            } else {
                "passed"
            };
            assert!(
                kids.iter().filter(|k| **k == "failure").count() <= 1,
                "one <failure> per testcase"
            );
            all.push((
                name.to_string(),
                attr(c, "name").to_string(),
                outcome.to_string(),
            ));
        }
        assert_eq!(count(*s, "failures"), f, "{name}");
        assert_eq!(count(*s, "skipped"), k, "{name}");
        assert_eq!(count(*s, "errors"), 0);
        failures += f;
        skipped += k;
    }
    assert_eq!(count(root, "tests"), all.len());
    assert_eq!(count(root, "failures"), failures);
    assert_eq!(count(root, "skipped"), skipped);
    all
}

fn case<'a>(cases: &'a [(String, String, String)], class: &str, name: &str) -> &'a str {
    &cases
        .iter()
        .find(|c| c.0 == class && c.1 == name)
        .unwrap_or_else(|| panic!("no case {class} {name} in {cases:?}"))
        .2
}

#[test]
fn junit_has_one_testcase_per_verdict_and_fails_exactly_where_the_run_exits_1() {
    let w = workdir(&[("tiny-ci.yaml", CALIBRATION)]);
    let dir = w.path();
    let ok = run_env(dir, &["run", "--junit", "out/junit.xml"], &[]);
    assert_eq!(code(&ok), 0, "{}", text(&ok.stderr));
    let xml = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let cases = junit_cases(&xml);
    assert_eq!(cases.len(), 3, "{cases:?}");
    assert_eq!(case(&cases, "tiny-ci", "eps-bound/base"), "passed");
    assert_eq!(case(&cases, "tiny-ci", "eps-bound/broken"), "passed");
    assert_eq!(case(&cases, "tiny-ci", "big-delta/base"), "skipped");
    assert!(xml.contains("out_of_regime"), "the skip says why: {xml}");
    let eps_line = line_of(CALIBRATION, "name: eps-bound");
    assert_eq!(eps_line, 22);
    assert!(xml.contains("name=\"eps-bound/base\" time=\""));
    assert!(xml.contains(&format!(" line=\"{eps_line}\">")), "{xml}");
    let big_line = line_of(CALIBRATION, "name: \"big-delta\"");
    assert!(xml.contains(&format!(" line=\"{big_line}\">")), "{xml}");
    // The reports do not change with --junit, and hold no times.
    assert!(!std::fs::read_dir(dir.join("reports")).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("junit")));

    // A negative control that cannot be caught: exit 1, and exactly its case fails,
    // with the measurement, the prediction and the report in the message.
    std::fs::write(dir.join("claims/tiny-fail.yaml"), failing()).unwrap();
    let bad = run_env(dir, &["run", "--junit", "junit.xml"], &[]);
    assert_eq!(code(&bad), 1);
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let cases = junit_cases(&xml);
    let failed: Vec<_> = cases.iter().filter(|c| c.2 == "failure").collect();
    assert_eq!(failed.len(), 1, "{cases:?}");
    assert_eq!(
        (failed[0].0.as_str(), failed[0].1.as_str()),
        ("tiny-fail", "eps-bound/broken")
    );
    let fails = text(&bad.stderr)
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .count();
    assert_eq!(fails, failed.len(), "one failure per FAIL line");
    for w in [
        "identical to main variant",
        "measured ",
        "predicted exact_epsilon &lt;= epsilon",
        "report reports/tiny-fail.md",
    ] {
        assert!(xml.contains(w), "`{w}` not in {xml}");
    }
}

#[test]
fn junit_names_the_verdict_that_changed_against_the_baseline() {
    use dpclaims::report::snapshot::snapshot;
    let w = workdir(&[("tiny-ci.yaml", CALIBRATION)]);
    let dir = w.path();
    // The baseline as `tests/claims.rs` would record it, then one verdict edited.
    let claim = dpclaims::spec::load_claim(&dir.join("claims/tiny-ci.yaml")).unwrap();
    let o = dpclaims::pipeline::run_claim(
        &claim,
        dpclaims::spec::Profile::Quick,
        0,
        &dpclaims::train::Recipe::PAPER,
        &|| {},
    )
    .unwrap();
    let body = serde_yaml::to_string(&snapshot(&o)).unwrap();
    let header =
        "---\nsource: tests/claims.rs\nexpression: snap\ninfo:\n  profile: quick\n  seed: 0\n---\n";
    let snaps = dir.join("tests/snapshots");
    std::fs::create_dir_all(&snaps).unwrap();
    let file = snaps.join("tests__claims__every_claim_at_the_quick_profile@tiny-ci.yaml.snap");
    std::fs::write(&file, format!("{header}{body}")).unwrap();
    let same = run_env(dir, &["run", "--junit", "junit.xml"], &[]);
    assert_eq!(code(&same), 0, "{}", text(&same.stdout));
    assert!(text(&same.stdout).contains("baseline unchanged"));
    assert!(
        junit_cases(&std::fs::read_to_string(dir.join("junit.xml")).unwrap())
            .iter()
            .all(|c| c.2 != "failure")
    );

    let first_holds = body.find("verdict: consistent").unwrap();
    let mut edited = body.clone();
    edited.replace_range(
        first_holds..first_holds + "verdict: consistent".len(),
        "verdict: inconsistent",
    );
    std::fs::write(&file, format!("{header}{edited}")).unwrap();
    let changed = run_env(dir, &["run", "--junit", "junit.xml"], &[]);
    assert_eq!(code(&changed), 1);
    assert!(text(&changed.stdout).contains("baseline CHANGED"));
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let cases = junit_cases(&xml);
    let failed: Vec<_> = cases.iter().filter(|c| c.2 == "failure").collect();
    assert_eq!(failed.len(), 1, "{cases:?}");
    assert_eq!(failed[0].1, "eps-bound/base");
    assert!(
        xml.contains("verdict inconsistent -&gt; consistent"),
        "{xml}"
    );
    assert!(xml.contains("type=\"baseline_changed\""));
}

/// `--require-baseline` (what `.ci/run` passes to `make run`): a claim with no snapshot
/// fails the run, as insta fails a missing snapshot; recorded, the same run passes.
#[test]
fn require_baseline_fails_a_claim_without_a_snapshot() {
    let w = workdir(&[("tiny-ci.yaml", CALIBRATION)]);
    let dir = w.path();
    let snaps = dir.join("tests/snapshots");
    std::fs::create_dir_all(&snaps).unwrap();
    let plain = run_env(dir, &["run", "--no-reports"], &[]);
    assert_eq!(code(&plain), 0, "{}", text(&plain.stderr));
    assert!(text(&plain.stdout).contains("not in the baseline yet: tiny-ci"));
    let strict = run_env(dir, &["run", "--no-reports", "--require-baseline"], &[]);
    assert_eq!(code(&strict), 1);
    assert!(
        text(&strict.stderr).contains("FAIL --require-baseline: 1 claim(s) have no snapshot"),
        "{}",
        text(&strict.stderr)
    );
    crate::util::record_baseline(dir, &dir.join("claims/tiny-ci.yaml"));
    let recorded = run_env(dir, &["run", "--no-reports", "--require-baseline"], &[]);
    assert_eq!(code(&recorded), 0, "{}", text(&recorded.stderr));
    // Another seed is not compared with the seed-0 baseline: not checked, so it fails.
    let other = run_env(
        dir,
        &["run", "--no-reports", "--require-baseline", "--seed", "1"],
        &[],
    );
    assert_eq!(code(&other), 1);
    assert!(text(&other.stderr).contains("the baseline was not checked"));
}

#[test]
fn github_actions_get_annotations_at_the_predictions_line_and_a_job_summary() {
    let w = workdir(&[
        ("tiny-ci.yaml", CALIBRATION),
        ("tiny-fail.yaml", &failing()),
    ]);
    let dir = w.path();
    let summary = dir.join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
    ];
    let out = run_env(dir, &["run"], &env);
    assert_eq!(code(&out), 1);
    let stdout = text(&out.stdout);
    let errors: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    let warnings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::warning "))
        .collect();
    assert_eq!(errors.len(), 1, "{stdout}");
    assert!(
        errors[0].starts_with(&format!(
            "::error file=claims/tiny-fail.yaml,line={},title=dpclaims%3A tiny-fail eps-bound/broken::negative control is identical",
            line_of(&failing(), "name: eps-bound")
        )),
        "{}",
        errors[0]
    );
    // Out of regime in both claims: warnings at the prediction's line.
    assert_eq!(warnings.len(), 2, "{stdout}");
    for (w, (file, spec)) in warnings.iter().zip([
        ("tiny-ci", CALIBRATION.to_string()),
        ("tiny-fail", failing()),
    ]) {
        assert!(
            w.starts_with(&format!(
                "::warning file=claims/{file}.yaml,line={},title=dpclaims%3A {file} big-delta/base::out_of_regime",
                line_of(&spec, "name: \"big-delta\"")
            )),
            "{w}"
        );
    }
    // Appended, not overwritten.
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with("earlier step\n## dpclaims: 2 claims"),
        "{md}"
    );
    for w in [
        "| claim | source | in plain words |",
        "| `tiny-fail` |",
        "**Failures** (1):",
        "negative controls 1/2 caught",
        "<details><summary>Every verdict</summary>",
    ] {
        assert!(md.contains(w), "`{w}` not in {md}");
    }
    // With --json, stdout stays one document and the annotations go to stderr.
    let out = run_env(dir, &["run", "--json", "--no-reports"], &env);
    assert_eq!(code(&out), 1);
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON document");
    assert!(text(&out.stderr).contains("::error file=claims/tiny-fail.yaml"));
    // Outside GitHub Actions: no annotations, the summary file untouched.
    let before = std::fs::read_to_string(&summary).unwrap();
    let out = run_env(
        dir,
        &["run"],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert!(!text(&out.stdout).contains("::"));
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), before);
}

#[test]
fn merge_writes_the_same_junit_cases_as_the_unsharded_run() {
    let w = workdir(&[
        ("tiny-ci.yaml", CALIBRATION),
        ("tiny-fail.yaml", &failing()),
    ]);
    let dir = w.path();
    let whole = run_env(dir, &["run", "--out", "one", "--junit", "one.xml"], &[]);
    assert_eq!(code(&whole), 1);
    for i in 0..2 {
        let s = format!("{i}/2");
        let out = dpclaims_in(dir, &["run", "--shard", &s, "--partial-out", "shards"]);
        assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    }
    let merged = run_env(
        dir,
        &["merge", "shards", "--out", "two", "--junit", "two.xml"],
        &[],
    );
    assert_eq!(code(&merged), 1);
    // Equal up to times (a merge knows none), timestamps and the report directory.
    let strip = |p: &str| {
        let mut s = std::fs::read_to_string(dir.join(p)).unwrap();
        for attr in [" time=\"", " timestamp=\""] {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find(attr) {
                out.push_str(&rest[..i]);
                let after = &rest[i + attr.len()..];
                rest = &after[after.find('"').unwrap() + 1..];
            }
            out.push_str(rest);
            s = out;
        }
        s.replace("report one/", "report two/")
    };
    assert_eq!(strip("one.xml"), strip("two.xml"));
    assert!(std::fs::read_to_string(dir.join("two.xml"))
        .unwrap()
        .contains("time=\"0.000\""));
}

#[test]
fn diff_exits_0_on_identical_runs_1_naming_a_changed_verdict_2_naming_a_missing_file() {
    let w = workdir(&[("tiny-ci.yaml", CALIBRATION)]);
    let dir = w.path();
    for (out, json) in [("a", "a.json"), ("b", "b.json")] {
        let r = dpclaims_in(dir, &["run", "--no-baseline", "--out", out]);
        assert_eq!(code(&r), 0, "{}", text(&r.stderr));
        let j = dpclaims_in(dir, &["run", "--no-baseline", "--json", "--no-reports"]);
        std::fs::write(dir.join(json), &j.stdout).unwrap();
    }
    // Two runs: nothing changed; a report directory against a `run --json` document too.
    for (old, new) in [("a", "b"), ("a", "b.json"), ("a.json", "b")] {
        let d = dpclaims_in(dir, &["diff", old, new]);
        assert_eq!(
            code(&d),
            0,
            "{old} {new}: {}{}",
            text(&d.stdout),
            text(&d.stderr)
        );
        assert!(text(&d.stdout).contains("no change"));
    }
    // One verdict changed.
    let path = dir.join("b/verdicts.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["claims"][0]["results"][0]["verdict"] = "refuted".into();
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let d = dpclaims_in(dir, &["diff", "a", "b"]);
    assert_eq!(code(&d), 1);
    let out = text(&d.stdout);
    assert!(out.contains("1 change"), "{out}");
    let line = out.lines().find(|l| l.starts_with("verdict")).expect(&out);
    for w in ["tiny-ci", "eps-bound/base", "holds", "refuted"] {
        assert!(line.contains(w), "`{w}` not in {line}");
    }
    let md = text(&dpclaims_in(dir, &["diff", "a", "b", "--markdown"]).stdout);
    assert!(md.starts_with("### dpclaims diff: 1 change"), "{md}");
    assert!(
        md.contains("| verdict | `tiny-ci` | `eps-bound/base` | holds"),
        "{md}"
    );
    // A claim added (and, the other way round, removed).
    std::fs::write(
        dir.join("claims/tiny-two.yaml"),
        CALIBRATION.replace("id: tiny-ci", "id: tiny-two"),
    )
    .unwrap();
    let r = dpclaims_in(dir, &["run", "--no-baseline", "--out", "c"]);
    assert_eq!(code(&r), 0);
    let d = dpclaims_in(dir, &["diff", "a", "c"]);
    assert_eq!(code(&d), 1);
    assert!(text(&d.stdout).contains("claim added"));
    assert!(text(&dpclaims_in(dir, &["diff", "c", "a"]).stdout).contains("claim removed"));
    // Bad input: exit 2, naming the file.
    std::fs::create_dir(dir.join("empty")).unwrap();
    std::fs::write(dir.join("bad.json"), "{\"claims\": 3}").unwrap();
    for (arg, named) in [
        ("empty", "empty/verdicts.json"),
        ("missing.json", "missing.json"),
        ("bad.json", "bad.json"),
    ] {
        let d = dpclaims_in(dir, &["diff", "a", arg]);
        assert_eq!(code(&d), 2, "{arg}");
        assert!(text(&d.stderr).contains(named), "{}", text(&d.stderr));
    }
}

/// An estimate that moved inside its intervals under an unchanged verdict is shown as
/// `within` and passes (exit 1 with --strict); --common-only ignores added claims.
#[test]
fn diff_shows_moves_within_the_interval_and_compares_common_results_only_on_request() {
    let w = workdir(&[("tiny-ci.yaml", CALIBRATION)]);
    let dir = w.path();
    for out in ["a", "b", "plain"] {
        let r = dpclaims_in(dir, &["run", "--no-baseline", "--out", out]);
        assert_eq!(code(&r), 0, "{}", text(&r.stderr));
    }
    // Give the first result an interval in both runs, and move the later estimate
    // inside it.
    for (run, shift) in [("a", 0.0), ("b", 0.1)] {
        let path = dir.join(run).join("verdicts.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let r = &mut doc["claims"][0]["results"][0];
        r["estimate"] = serde_json::json!(1.0 + shift);
        r["ci"] = serde_json::json!([0.5, 1.5]);
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
    let d = dpclaims_in(dir, &["diff", "a", "b"]);
    assert_eq!(code(&d), 0, "{}", text(&d.stdout));
    let out = text(&d.stdout);
    assert!(
        out.contains("no change (1 estimate moved within its intervals"),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("within")), "{out}");
    assert_eq!(code(&dpclaims_in(dir, &["diff", "a", "b", "--strict"])), 1);
    // A run with one more claim: --common-only compares the claims both have.
    std::fs::write(
        dir.join("claims/tiny-two.yaml"),
        CALIBRATION.replace("id: tiny-ci", "id: tiny-two"),
    )
    .unwrap();
    let r = dpclaims_in(dir, &["run", "--no-baseline", "--out", "c"]);
    assert_eq!(code(&r), 0);
    assert_eq!(code(&dpclaims_in(dir, &["diff", "plain", "c"])), 1);
    let d = dpclaims_in(dir, &["diff", "plain", "c", "--common-only"]);
    assert_eq!(code(&d), 0, "{}", text(&d.stdout));
    assert!(!text(&d.stdout).contains("claim added"));
}

#[test]
fn completions_and_man_pages_list_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = dpclaims_in(dir.path(), &["completions", shell]);
        assert_eq!(code(&out), 0);
        let s = text(&out.stdout);
        for w in ["diff", "junit", "merge"] {
            assert!(s.contains(w), "{shell}: no `{w}`");
        }
    }
    let bash = text(&dpclaims_in(dir.path(), &["completions", "bash"]).stdout);
    let check = Command::new("bash").arg("-n").arg("-c").arg(&bash).status();
    if let Ok(st) = check {
        assert!(st.success(), "the bash completion script parses");
    }
    let man = dpclaims_in(dir.path(), &["man"]);
    assert_eq!(code(&man), 0);
    assert!(text(&man.stdout).contains(".TH dpclaims 1"));
    let out = dpclaims_in(dir.path(), &["man", "--out", "man"]);
    assert_eq!(code(&out), 0);
    for page in ["dpclaims.1", "dpclaims-run.1", "dpclaims-diff.1"] {
        assert!(dir.path().join("man").join(page).is_file(), "{page}");
    }
}

/// A real claim of the suite (the cheapest): under GitHub Actions the annotations,
/// the JUnit file and the job summary agree with the run; every case points at the
/// line naming its prediction (not at the `findings` entry of the same name).
#[test]
fn sigma_a_calibration_under_github_actions() {
    let tmp = tempfile::tempdir().unwrap();
    let (junit, summary) = (tmp.path().join("junit.xml"), tmp.path().join("summary.md"));
    let spec = "claims/sigma-a-calibration.yaml";
    let out = run_env(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "run",
            spec,
            "--no-reports",
            "--no-baseline",
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    let stdout = text(&out.stdout);
    let fails = text(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .count();
    let errors = stdout.lines().filter(|l| l.starts_with("::error ")).count();
    assert_eq!(errors, fails, "{stdout}");
    assert_eq!(code(&out), if fails == 0 { 0 } else { 1 });
    let xml = std::fs::read_to_string(&junit).unwrap();
    let cases = junit_cases(&xml);
    assert_eq!(cases.iter().filter(|c| c.2 == "failure").count(), fails);
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(spec)).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    for c in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        let prediction = attr(c, "name").split('/').next().unwrap();
        assert_eq!(attr(c, "file"), spec);
        assert_eq!(
            attr(c, "line").parse::<usize>().unwrap(),
            line_of(&text, &format!("name: {prediction}")),
            "{prediction}"
        );
    }
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("| `sigma-a-calibration` |"), "{md}");
}

/// The workflow runs what docs/ci.md says, through the Makefile (whose `run` passes
/// RUN_FLAGS on), and publishes the JUnit file it asks for.
#[test]
fn the_github_workflow_runs_make_test_and_make_run_with_junit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(".github/workflows/claims.yml")).unwrap();
    let wf: serde_yaml::Value = serde_yaml::from_str(&text).expect("valid YAML");
    let steps = wf["jobs"]["claims"]["steps"].as_sequence().expect("steps");
    let run = |needle: &str| {
        steps.iter().position(|s| {
            s.get("run")
                .and_then(|r| r.as_str())
                .is_some_and(|r| r.contains(needle))
        })
    };
    let uses = |needle: &str| {
        steps.iter().position(|s| {
            s.get("uses")
                .and_then(|r| r.as_str())
                .is_some_and(|r| r.starts_with(needle))
        })
    };
    let junit = wf["jobs"]["claims"]["env"]["JUNIT"].as_str().unwrap();
    let apt = run("apt-get install").expect("apt step");
    let test = run("make test").expect("make test");
    let make_run = run("make run RUN_FLAGS=\"--junit $JUNIT --require-baseline\"")
        .expect("make run --junit --require-baseline");
    assert!(uses("actions/checkout").unwrap() < apt && apt < test && test < make_run);
    assert!(uses("actions/cache").is_some());
    for (action, key) in [
        ("actions/upload-artifact", "path"),
        ("mikepenz/action-junit-report", "report_paths"),
    ] {
        let s = &steps[uses(action).expect(action)];
        assert_eq!(s["if"].as_str(), Some("always()"), "{action}");
        assert!(
            s["with"][key].as_str().unwrap().contains("env.JUNIT"),
            "{action} gets {junit}"
        );
    }
    for pkg in ["libopenblas-dev", "liblapack-dev"] {
        assert!(steps[apt]["run"].as_str().unwrap().contains(pkg));
    }
    let make = std::fs::read_to_string(root.join("Makefile")).unwrap();
    assert!(make.contains("run --profile quick --out reports $(RUN_FLAGS)"));
    assert!(make.contains("install -y -qq libopenblas-dev liblapack-dev"));
    // The CI entry point runs the tool's tests, then the claims against the baseline.
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let (t, r) = (
        ci.find("\nmake test\n").expect(".ci/run: make test"),
        ci.find("\nmake run RUN_FLAGS=\"--require-baseline\"")
            .expect(".ci/run: make run --require-baseline"),
    );
    assert!(t < r);
    // Then the reports as committed, and the same bytes with the generic kernels.
    let d = ci
        .find("\ngit diff --exit-code --stat -- reports/\n")
        .expect(".ci/run: git diff of reports/");
    let p = ci
        .find("\nmake reproduce")
        .expect(".ci/run: make reproduce");
    assert!(r < d && d < p);
}

/// Off a terminal (a CI log) a long run is visibly alive: a plain `progress:` line at
/// most every `DPCLAIMS_PROGRESS_SECONDS`, on stderr only, so stdout and the reports are
/// the same bytes with the lines on or off; a malformed interval is bad input (exit 2)
/// naming the variable.
#[test]
fn off_a_terminal_progress_is_plain_lines_on_stderr_that_change_no_output() {
    let w = workdir(&[(
        "tiny-progress.yaml",
        &crate::util::tiny_rf_claim(
            "id: tiny-progress\ntitle: \"t\"\nsource: {paper: \"p\", section: \"s\", equation: \"e\"}\nstatement: \"s\"\n",
        ),
    )]);
    let dir = w.path();
    let run_with = |secs: &str, out: &str| {
        Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            .current_dir(dir)
            .env("DPCLAIMS_PROGRESS_SECONDS", secs)
            .args(["run", "--no-baseline", "--no-cache", "--json", "--out", out])
            .output()
            .unwrap()
    };
    let lines = run_with("0.000001", "a");
    let quiet = run_with("0", "b");
    assert!(code(&lines) <= 1, "{}", text(&lines.stderr));
    let progress: Vec<String> = text(&lines.stderr)
        .lines()
        .filter(|l| l.starts_with("progress: tiny-progress: "))
        .map(str::to_string)
        .collect();
    assert!(!progress.is_empty(), "{}", text(&lines.stderr));
    assert!(
        progress
            .iter()
            .all(|l| l.contains(" units, ") && l.contains(" elapsed")),
        "{progress:?}"
    );
    assert!(!text(&quiet.stderr).contains("progress:"));
    assert_eq!(lines.stdout, quiet.stdout);
    for f in ["SUMMARY.md", "tiny-progress.md", "tiny-progress.csv"] {
        assert_eq!(
            std::fs::read(dir.join("a").join(f)).unwrap(),
            std::fs::read(dir.join("b").join(f)).unwrap(),
            "{f}"
        );
    }
    let bad = run_with("soon", "c");
    assert_eq!(code(&bad), 2, "{}", text(&bad.stderr));
    assert!(text(&bad.stderr).contains("DPCLAIMS_PROGRESS_SECONDS"));
}

/// `dpclaims ci`: the workflow's steps (check, run --require-baseline --junit, diff against
/// the committed verdicts) into a scratch directory; the committed reports stay the same
/// bytes; the exit status is the run's (1 with a failing claim), check's when a spec is
/// bad (the run skipped), and 2 for a scratch directory inside the committed set.
#[test]
fn ci_runs_the_workflow_steps_into_a_scratch_directory() {
    let w = workdir(&[("tiny-ci.yaml", CALIBRATION)]);
    let dir = w.path();
    crate::util::record_baseline(dir, &dir.join("claims/tiny-ci.yaml"));
    let committed = run_env(dir, &["run", "--out", "reports"], &[]);
    assert_eq!(code(&committed), 0, "{}", text(&committed.stderr));
    let before = std::fs::read(dir.join("reports/verdicts.json")).unwrap();
    let listing = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let files_before = listing(&dir.join("reports"));

    let ci = run_env(dir, &["ci", "--github"], &[]);
    let err = text(&ci.stderr);
    assert_eq!(code(&ci), 0, "{err}");
    for step in [
        "ci: dpclaims check",
        "ci: dpclaims run --require-baseline --junit",
        "ci: run exit 0",
    ] {
        assert!(err.contains(step), "{step} not in {err}");
    }
    let out = dir.join("target/dpclaims-ci");
    for f in [
        "reports/verdicts.json",
        "junit.xml",
        "diff.md",
        "step-summary.md",
    ] {
        assert!(out.join(f).is_file(), "{f} missing; {err}");
    }
    assert!(
        text(&std::fs::read(out.join("diff.md")).unwrap()).contains("o change"),
        "{}",
        text(&std::fs::read(out.join("diff.md")).unwrap())
    );
    assert_eq!(
        std::fs::read(dir.join("reports/verdicts.json")).unwrap(),
        before
    );
    assert_eq!(listing(&dir.join("reports")), files_before);

    // A scratch directory inside the committed set: refused before any step.
    let inside = run_env(dir, &["ci", "--out", "reports/ci"], &[]);
    assert_eq!(code(&inside), 2, "{}", text(&inside.stderr));
    assert!(text(&inside.stderr).contains("committed report set"));
    assert!(!dir.join("reports/ci").exists());

    // A claim whose control cannot be caught: the run's exit 1 is ci's.
    std::fs::write(dir.join("claims/tiny-fail.yaml"), failing()).unwrap();
    let red = run_env(
        dir,
        &["ci", "claims/tiny-fail.yaml", "--out", "scratch"],
        &[],
    );
    assert_eq!(code(&red), 1, "{}", text(&red.stderr));
    assert!(dir.join("scratch/junit.xml").is_file());

    // A bad spec: check's exit 2, the run skipped (no reports written).
    std::fs::write(dir.join("claims/bad.yaml"), "id: bad\n").unwrap();
    let bad = run_env(dir, &["ci", "--out", "scratch2"], &[]);
    assert_eq!(code(&bad), 2, "{}", text(&bad.stderr));
    assert!(text(&bad.stderr).contains("the run is skipped"));
    assert!(!dir.join("scratch2/reports").exists());
    assert_eq!(
        std::fs::read(dir.join("reports/verdicts.json")).unwrap(),
        before
    );
}
