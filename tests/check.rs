//! `dpclaims check` (issue 33, item 2): every error of every spec at once, each with its
//! file, field and line; exit 2 if any, 0 and "ok: N claims checked" otherwise.
use crate::util::dpclaims_in;
use std::path::Path;

/// A valid spec (gaussian_calibration, fast): `model` is left out, the system fixes it.
pub const GOOD: &str = r#"id: tiny
title: "tiny"
source: {paper: "p", section: "s", equation: "e"}
statement: "s"
system: gaussian_calibration
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

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in the spec"))
        + 1
}

fn check(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let o = dpclaims_in(dir, &all);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// An unknown field, a value of the wrong type and a prediction naming an unknown
/// metric: three errors, far apart, in three layers (top level, a sweep, a prediction).
fn three_errors() -> String {
    GOOD.replace("statement: \"s\"\n", "statement: \"s\"\ncolour: blue\n")
        .replace(
            "{delta: [1.0e-5, 1.0e-3]}, replicates: 1}\n    full",
            "{delta: [1.0e-5, 1.0e-3]}, replicates: many}\n    full",
        )
        .replace("metric: exact_epsilon", "metric: exact_epsilonn")
}

#[test]
fn a_good_spec_checks_ok_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.yaml"), GOOD).unwrap();
    let (code, out, err) = check(dir.path(), &["tiny.yaml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), "ok: 1 claim checked");
    // The loader agrees (and fills in the model the system fixes).
    let claim = dpclaims::spec::claim_from_bytes(Path::new("tiny.yaml"), GOOD.as_bytes()).unwrap();
    assert_eq!(claim.model, "none");
}

#[test]
fn three_errors_of_one_spec_are_reported_at_once_with_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let spec = three_errors();
    std::fs::write(dir.path().join("bad.yaml"), &spec).unwrap();
    let (code, out, err) = check(dir.path(), &["bad.yaml"]);
    assert_eq!(code, 2, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    let colour = line_of(&spec, "colour:");
    let many = line_of(&spec, "replicates: many");
    let metric = line_of(&spec, "exact_epsilonn");
    assert!(
        lines[0].starts_with(&format!(
            "bad.yaml:{colour}:1: colour: unknown field `colour`"
        )),
        "{out}"
    );
    assert!(
        lines[1].starts_with(&format!("bad.yaml:{many}:"))
            && lines[1].contains("sweeps.grid.quick.replicates: invalid type: string \"many\""),
        "{out}"
    );
    assert!(
        lines[2].starts_with(&format!("bad.yaml:{metric}:5: predictions[0].metric:"))
            && lines[2].contains("unknown metric `exact_epsilonn`"),
        "{out}"
    );
    assert_eq!(lines[3], "3 errors in 1 of 1 spec file");
    // `run` still stops at the first.
    let o = dpclaims_in(dir.path(), &["run", "--no-reports", "bad.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown field `colour`") && !err.contains("many"),
        "{err}"
    );
}

#[test]
fn json_lists_every_error_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.yaml"), three_errors()).unwrap();
    let (code, out, _) = check(dir.path(), &["--json", "bad.yaml"]);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(v["ok"], false);
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 3, "{out}");
    let fields: Vec<&str> = errors
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "colour",
            "sweeps.grid.quick.replicates",
            "predictions[0].metric"
        ]
    );
    assert!(errors
        .iter()
        .all(|e| e["line"].is_u64() && e["column"].is_u64()));
}

#[test]
fn a_key_indented_under_the_wrong_parent_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    // `statement` slipped under `source`.
    let spec = GOOD.replace(
        "source: {paper: \"p\", section: \"s\", equation: \"e\"}\nstatement: \"s\"\n",
        "source:\n  paper: p\n  section: s\n  equation: e\n  statement: \"s\"\n",
    );
    std::fs::write(dir.path().join("slip.yaml"), &spec).unwrap();
    let (code, out, _) = check(dir.path(), &["slip.yaml"]);
    assert_eq!(code, 2, "{out}");
    let at = line_of(&spec, "  statement:");
    assert!(
        out.contains(&format!(
            "slip.yaml:{at}:3: source.statement: unknown field `statement`"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "slip.yaml:{at}:3: statement: missing field `statement`"
        )) && out.contains("indented under the wrong parent"),
        "{out}"
    );
    // A key indented deeper than its siblings is a YAML syntax error: its line is named.
    let spec = GOOD.replace("statement: \"s\"\n", "statement: \"s\"\n  system: x\n");
    std::fs::write(dir.path().join("slip.yaml"), &spec).unwrap();
    let (code, out, _) = check(dir.path(), &["slip.yaml"]);
    assert_eq!(code, 2, "{out}");
    let at = line_of(&spec, "  system: x");
    assert!(out.contains(&format!("slip.yaml:{at}:")), "{out}");
}

#[test]
fn a_directory_with_two_bad_specs_reports_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let claims = dir.path().join("claims");
    std::fs::create_dir(&claims).unwrap();
    std::fs::write(
        claims.join("a.yaml"),
        GOOD.replace("id: tiny", "id: a")
            .replace("op: \"<=\"", "op: \"=<\""),
    )
    .unwrap();
    std::fs::write(
        claims.join("b.yaml"),
        GOOD.replace("id: tiny", "id: b")
            .replace("rhs: \"epsilon\"", "rhs: \"epsilon *\""),
    )
    .unwrap();
    std::fs::write(claims.join("c.yaml"), GOOD.replace("id: tiny", "id: c")).unwrap();
    // No argument: claims/ of the current directory.
    let (code, out, err) = check(dir.path(), &[]);
    assert_eq!(code, 2, "{out}{err}");
    let a = line_of(GOOD, "op: ");
    let b = line_of(GOOD, "rhs: ");
    assert!(
        out.contains(&format!(
            "claims/a.yaml:{a}:5: predictions[0].op: unknown operator"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("claims/b.yaml:{b}:5: predictions[0].rhs:")),
        "{out}"
    );
    assert!(!out.contains("c.yaml"), "{out}");
    assert!(out.contains("2 errors in 2 of 3 spec files"), "{out}");
    // Ids are resolved as `run` resolves them; the good one alone is ok.
    let (code, out, _) = check(dir.path(), &["c"]);
    assert_eq!((code, out.trim()), (0, "ok: 1 claim checked"));
    let (code, _, err) = check(dir.path(), &["cc"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `c`?"), "{err}");
}

#[test]
fn the_shipped_claims_and_examples_check_ok() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = check(root, &["claims", "examples/external", "examples/opacus"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("ok: "), "{out}");
}

#[test]
fn a_variant_may_override_any_parameter_of_its_system_but_not_an_axis() {
    let dir = tempfile::tempdir().unwrap();
    // `sigma_scale` is an optional parameter of rf_dpgd, left out of `params`: the
    // negative control may still set it.
    let spec = crate::util::tiny_rf_claim_named("v").replace("  sigma_scale: \"1\"\n", "");
    assert!(spec.contains("params: {sigma_scale: \"n^4\"}"));
    std::fs::write(dir.path().join("v.yaml"), &spec).unwrap();
    let (code, out, err) = check(dir.path(), &["v.yaml"]);
    assert_eq!(code, 0, "{out}{err}");
    // Not a parameter of the system: refused, naming the known ones.
    let typo = spec.replace("params: {sigma_scale:", "params: {sigma_scal:");
    std::fs::write(dir.path().join("v.yaml"), &typo).unwrap();
    let (code, out, _) = check(dir.path(), &["v.yaml"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("variants[1].params.sigma_scal: a variant may only override")
            && out.contains("sigma_scale"),
        "{out}"
    );
    // A parameter of the system that is a sweep axis (not in `params`): its axis value
    // would win, so it is refused.
    let axis = GOOD.replace(
        "  - name: base\n",
        "  - name: base\n  - name: other\n    params: {delta: \"1.0e-6\"}\n",
    );
    std::fs::write(dir.path().join("v.yaml"), &axis).unwrap();
    let (code, out, _) = check(dir.path(), &["v.yaml"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("variants[1].params.delta: is a sweep variable"),
        "{out}"
    );
}

/// `check` reads what the loader reads: over the fuzz corpus it never panics, and a spec
/// is valid for one exactly when it is for the other. (Their first errors may differ: a
/// syntax error stops `check` wherever it is, while the loader may meet a field error
/// earlier in the text first.)
#[test]
fn check_agrees_with_the_loader_on_the_fuzz_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/spec_load");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let loaded = dpclaims::spec::claim_from_bytes(Path::new("fuzz.yaml"), &bytes);
        let (_, errors) = dpclaims::spec::check::check_bytes(Path::new("fuzz.yaml"), &bytes);
        assert_eq!(loaded.is_ok(), errors.is_empty(), "{path:?}: {errors:?}");
        assert!(errors.iter().all(|d| d.file == "fuzz.yaml"));
        n += 1;
    }
    assert!(n >= 10);
}

#[test]
fn without_claims_here_check_asks_for_paths() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = check(dir.path(), &[]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("no claims/ here"), "{err}");
}

/// Two independent mistakes of one prediction (an unknown metric and an unknown
/// operator) are both reported: the prediction's checks go on after the first.
#[test]
fn two_mistakes_of_one_prediction_are_both_reported() {
    let dir = tempfile::tempdir().unwrap();
    let spec = GOOD
        .replace("metric: exact_epsilon", "metric: exact_epsilonn")
        .replace("op: \"<=\"", "op: \"=<\"");
    std::fs::write(dir.path().join("bad.yaml"), &spec).unwrap();
    let (code, out, err) = check(dir.path(), &["bad.yaml"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("predictions[0].metric: unknown metric `exact_epsilonn`"),
        "{out}"
    );
    assert!(
        out.contains("predictions[0].op: unknown operator `=<`"),
        "{out}"
    );
    assert!(out.contains("2 errors in 1 of 1 spec file"), "{out}");
    // The loader's single error is still the first of them.
    let e = dpclaims::spec::claim_from_bytes(Path::new("bad.yaml"), spec.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("unknown metric"), "{e}");
}

/// On a project (no paths given) `check` checks what `run` checks before computing: a
/// scorecard naming a claim that does not exist makes `run` exit 2, so `check` says so
/// (exit 2, the scorecard and entry named) without simulating anything.
#[test]
fn check_on_a_project_checks_its_scorecards_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("dpclaims.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::create_dir_all(d.join("claims")).unwrap();
    std::fs::create_dir_all(d.join("scorecards")).unwrap();
    std::fs::write(d.join("claims/tiny.yaml"), GOOD).unwrap();
    let (code, out, err) = check(d, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.trim(),
        "ok: 1 claim checked, with the scorecards and the ledger"
    );
    std::fs::write(
        d.join("scorecards/p.yaml"),
        "paper: \"P\"\nresults:\n  - result: \"Eq. 1\"\n    title: \"t\"\n    quote: {text: \"q\", where: \"Eq. 1\"}\n    could_fail: data\n    checked_by:\n      - {claim: not-written-yet, prediction: eps-bound, variant: base}\n",
    )
    .unwrap();
    let (code, out, err) = check(d, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("not-written-yet") && out.contains("p.yaml"),
        "{out}"
    );
    let run = dpclaims_in(d, &["run", "--out", "out"]);
    assert_eq!(run.status.code(), Some(2), "run refuses it too");
    assert!(!d.join("out").exists(), "nothing computed or written");
}

/// Issue 59, (b): a metric an external core no longer offers is found by `run` only once
/// it starts the core. Plain `check` starts no core and says ok; `check --start-cores`
/// starts and greets it, sends no unit, reports what `run` reports (exit 2: the claim's
/// file and id, the core, the metric, what it offers), and leaves no core running and
/// nothing changed but what the core itself writes; with the metric offered again it
/// says ok and counts the cores (JSON: `cores_started`).
#[test]
fn check_start_cores_finds_a_metric_the_core_no_longer_offers() {
    use super::hardening3_util::{digest, none_alive, project, run};
    let dir = project(&["ext-a"]);
    let d = dir.path();
    std::fs::write(d.join("dpclaims.toml"), "[project]\nname = \"p\"\n").unwrap();
    let core = d.join("claims/core.py");
    let offers_m = std::fs::read_to_string(&core).unwrap().replacen(
        "first = True\n",
        "first = True\nopen(\"pids\", \"a\").write(\"%d \" % os.getpid())\n",
        1,
    );
    // Every request that is not the handshake is a unit: recorded, so "no unit sent" is
    // shown by a file that does not appear.
    let offers_m = offers_m.replacen(
        "    p, u = msg[\"params\"], msg[\"unit\"]\n",
        "    open(\"units\", \"a\").close()\n    p, u = msg[\"params\"], msg[\"unit\"]\n",
        1,
    );
    let offers_n = offers_m.replace(r#""metrics": ["m"]"#, r#""metrics": ["n"]"#);
    assert_ne!(offers_m, offers_n);
    std::fs::write(&core, &offers_n).unwrap();
    let written_by_core = ["claims/started", "claims/pids"];
    let before = digest(d, &written_by_core);

    let o = run(d, &["check"]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert_eq!(
        o.stdout.trim(),
        "ok: 1 claim checked, with the scorecards and the ledger"
    );
    assert!(
        !d.join("claims/started").exists(),
        "plain check started a core"
    );

    let o = run(d, &["check", "--start-cores"]);
    assert_eq!(o.code, Some(2), "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains(
            "claims/ext-a.yaml: claim `ext-a`: core `python3 core.py` does not compute the \
             metric(s) `m` the spec asks for (it offers: n)"
        ) && o
            .stdout
            .contains("1 problem `run` would refuse (exit 2) beyond the specs"),
        "{}",
        o.stdout
    );
    assert!(!o.stderr.contains("internal error"), "{}", o.stderr);
    assert!(d.join("claims/started").exists(), "no core was started");
    assert!(!d.join("claims/units").exists(), "check sent a unit");
    let pids: Vec<i32> = std::fs::read_to_string(d.join("claims/pids"))
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 1, "{pids:?}");
    none_alive(&pids);
    assert_eq!(digest(d, &written_by_core), before);
    // `run` refuses the same claim for the same reason.
    let r = run(d, &["run", "--out", "out", "--no-baseline"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("does not compute the metric(s) `m` the spec asks for (it offers: n)"),
        "{}",
        r.stderr
    );

    // The metric offered again: ok, the cores counted, still no unit sent.
    std::fs::write(&core, &offers_m).unwrap();
    let o = run(d, &["check", "--start-cores"]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert_eq!(
        o.stdout.trim(),
        "ok: 1 claim checked, with the scorecards and the ledger; the cores of 1 external \
         claim started, every metric asked offered"
    );
    let o = run(d, &["check", "--start-cores", "--json"]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].as_bool(), v["cores_started"].as_u64()),
        (Some(true), Some(1))
    );
    assert!(!d.join("claims/units").exists(), "check sent a unit");
    none_alive(
        &std::fs::read_to_string(d.join("claims/pids"))
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect::<Vec<i32>>(),
    );
}

/// Issue 59, friction 2: a mean over few replicates is often inconclusive, and a new
/// user learnt it only from a full run. `check` notes such a row on stderr (not an
/// error: stdout and the exit status are a clean check's) and names the sequential
/// schedule; the same spec with that schedule has no note.
#[test]
fn check_notes_a_mean_over_few_fixed_replicates_and_not_a_sequential_one() {
    let d = tempfile::tempdir().unwrap();
    let o = dpclaims_in(d.path(), &["init"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, out, err) = check(d.path(), &[]);
    assert_eq!(
        (code, out.trim()),
        (0, "ok: 1 claim checked, with the scorecards and the ledger"),
        "{err}"
    );
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    for part in [
        "claims/gaussian-mean.yaml",
        "`z2-at-least-classical` judges the mean of `z2` over 8 replicates",
        "`replicates: {min: 8, max: 32}` (sweeps.vs_eps.quick; the full profile at least as many)",
    ] {
        assert!(notes[0].contains(part), "{part}: {}", notes[0]);
    }
    let spec = d.path().join("claims/gaussian-mean.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    // Sequential up to the full profile's 16.
    let sequential = text.replacen("replicates: 8\n", "replicates: {min: 8, max: 16}\n", 1);
    assert_ne!(sequential, text);
    std::fs::write(&spec, sequential).unwrap();
    let (code, out, err) = check(d.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("note: "), "{err}");
}
