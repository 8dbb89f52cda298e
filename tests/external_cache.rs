//! External cores as first-class systems (issue 47, item 2), on the numpy reference core
//! of `examples/external/gaussian_mean.py`: results cached under the hash of the files the
//! spec declares and its version (`--no-cache` honoured; a core without files said once
//! to be uncached), `plan` timing a calibration unit or using the declared `cost_s` and
//! saying which, the replay hint of a spec outside `claims/`, and a crash annotated on
//! the spec's `external:` line with the core's stderr tail.
use std::path::Path;
use std::process::{Command, Output};

fn numpy() -> bool {
    Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A copy of the example claim and its core in a temp dir, `external:` extended by
/// `extra` (indented fields), the core wrapped to log every request it answers.
fn setup(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/external");
    let core = std::fs::read_to_string(ex.join("gaussian_mean.py")).unwrap();
    // Logs each unit request (not the handshake) to requests.log.
    let core = core.replace(
        "        msg = json.loads(line)\n",
        "        msg = json.loads(line)\n        if \"unit\" in msg:\n            open(\"requests.log\", \"a\").write(line)\n",
    );
    assert!(
        core.contains("requests.log"),
        "the example core's loop changed"
    );
    std::fs::write(dir.path().join("gaussian_mean.py"), core).unwrap();
    let spec = std::fs::read_to_string(ex.join("gaussian-mean.yaml")).unwrap();
    let spec = spec.replace("  timeout_s: 30\n", &format!("  timeout_s: 30\n{extra}"));
    std::fs::write(dir.path().join("gm.yaml"), spec).unwrap();
    dir
}

fn run(dir: &Path, more: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .env_remove("DPCLAIMS_NO_CACHE")
        .env_remove("GITHUB_ACTIONS")
        .current_dir(dir)
        .args(["run", "gm.yaml", "--no-reports", "--cache", "cache"])
        .args(more)
        .output()
        .unwrap()
}

/// Unit requests the core answered since the last call (the log is emptied).
fn answered(dir: &Path) -> usize {
    let p = dir.join("requests.log");
    let n = std::fs::read_to_string(&p)
        .unwrap_or_default()
        .lines()
        .count();
    let _ = std::fs::remove_file(p);
    n
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_external_core_with_declared_files_is_read_from_the_cache_on_a_second_run() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let dir = setup("  files: [gaussian_mean.py]\n  version: \"1\"\n");
    let d = dir.path();
    let first = run(d, &[]);
    assert!(first.status.code() != Some(2), "{}", stderr(&first));
    let n = answered(d);
    assert!(n >= 40, "the first run computes every unit: {n}");
    let again = run(d, &[]);
    assert_eq!(answered(d), 0, "{}", stderr(&again));
    assert!(
        stderr(&again).contains(&format!("{n} of {n} units read, 0 computed")),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        first.stdout, again.stdout,
        "the same verdicts from the cache"
    );
    // --no-cache computes (its sequential looks draw only what the rows need).
    let uncached = run(d, &["--no-cache"]);
    assert!(answered(d) > 0, "{}", stderr(&uncached));
    assert!(
        !stderr(&uncached).contains("units read"),
        "{}",
        stderr(&uncached)
    );
    // Editing a declared file, or the declared version, is a new core.
    let core = d.join("gaussian_mean.py");
    let text = std::fs::read_to_string(&core).unwrap();
    std::fs::write(&core, format!("{text}\n# edited\n")).unwrap();
    run(d, &[]);
    assert_eq!(answered(d), n, "an edited core is recomputed");
    let spec = std::fs::read_to_string(d.join("gm.yaml")).unwrap();
    std::fs::write(
        d.join("gm.yaml"),
        spec.replace("version: \"1\"", "version: \"2\""),
    )
    .unwrap();
    run(d, &[]);
    assert_eq!(answered(d), n, "a new version is recomputed");
    run(d, &[]);
    assert_eq!(answered(d), 0);
}

#[test]
fn a_core_without_declared_files_is_not_cached_and_the_run_says_so_once() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let dir = setup("");
    let d = dir.path();
    for _ in 0..2 {
        let out = run(d, &[]);
        assert!(out.status.code() != Some(2), "{}", stderr(&out));
        assert!(answered(d) >= 40, "computed on every run");
        let e = stderr(&out);
        assert_eq!(e.matches("note: not cached").count(), 1, "{e}");
        assert!(
            e.contains("core `python3 gaussian_mean.py`") && e.contains("external.files"),
            "{e}"
        );
    }
    // A declared file that does not exist is an error naming it.
    let dir = setup("  files: [missing_core.py]\n");
    let out = run(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing_core.py"), "{}", stderr(&out));
}

#[test]
fn plan_times_a_calibration_unit_or_takes_the_declared_cost_and_says_which() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let dir = setup("");
    let plan = |d: &Path, more: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            .current_dir(d)
            .args(["plan", "gm.yaml"])
            .args(more)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let measured = plan(dir.path(), &["--calibrate"]);
    assert!(
        measured.contains("cost: external core: measured, one calibration unit (external-gaussian-mean/classical/vs_eps/epsilon=0.99/0) took"),
        "{measured}"
    );
    assert!(answered(dir.path()) == 1, "one calibration unit");
    // Without --calibrate, plan never starts a core.
    let nominal = plan(dir.path(), &[]);
    assert!(nominal.contains("not measured"), "{nominal}");
    assert_eq!(
        answered(dir.path()),
        0,
        "plan without --calibrate started the core"
    );
    let dir = setup("  cost_s: 90\n");
    let declared = plan(dir.path(), &["--calibrate"]);
    assert!(
        declared.contains("declared cost_s = 90 s a unit"),
        "{declared}"
    );
    // 80 units of 90 s: 2.0 h of CPU.
    assert!(declared.contains("cpu    2.00 h"), "{declared}");
    assert_eq!(answered(dir.path()), 0, "nothing run for a declared cost");
}

#[test]
fn the_replay_hint_of_a_spec_outside_claims_replays() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    // A calibration the main variant fails: its row fails the run and prints the hint.
    let dir = setup("");
    let d = dir.path().join("my specs");
    std::fs::create_dir(&d).unwrap();
    for f in ["gm.yaml", "gaussian_mean.py"] {
        std::fs::rename(dir.path().join(f), d.join(f)).unwrap();
    }
    let spec = std::fs::read_to_string(d.join("gm.yaml")).unwrap();
    let spec = spec.replace(
        "  - name: classical\n",
        "  - name: classical\n    options: {calibration: inverse_epsilon}\n",
    );
    std::fs::write(d.join("gm.yaml"), spec).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .env("DPCLAIMS_NO_CACHE", "1")
        .current_dir(dir.path())
        .args(["run", "my specs/gm.yaml", "--no-reports"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = stderr(&out);
    let hint = e
        .lines()
        .find_map(|l| l.split("replay one: ").nth(1))
        .unwrap_or_else(|| panic!("no replay hint: {e}"));
    assert!(
        hint.starts_with("dpclaims run 'my specs/gm.yaml' --unit '"),
        "{hint}"
    );
    let replay = Command::new("sh")
        .current_dir(dir.path())
        .env("DPCLAIMS_NO_CACHE", "1")
        .arg("-c")
        .arg(hint.replacen("dpclaims", env!("CARGO_BIN_EXE_dpclaims"), 1))
        .output()
        .unwrap();
    assert!(replay.status.success(), "{hint}: {}", stderr(&replay));
    assert!(String::from_utf8_lossy(&replay.stdout).contains("z2"));
}

#[test]
fn a_core_crash_is_annotated_on_the_external_line_with_its_stderr_tail() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let dir = setup("");
    let d = dir.path();
    let core = std::fs::read_to_string(d.join("gaussian_mean.py")).unwrap();
    // An uncaught exception on the first unit: a Python traceback with its own line numbers.
    let core = core.replace(
        "        msg = json.loads(line)\n",
        "        msg = json.loads(line)\n        if \"unit\" in msg:\n            raise RuntimeError(\"planted crash\")\n",
    );
    std::fs::write(d.join("gaussian_mean.py"), core).unwrap();
    let summary = d.join("summary.md");
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .env("DPCLAIMS_NO_CACHE", "1")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .current_dir(d)
        .args(["run", "gm.yaml", "--no-reports", "--junit", "junit.xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let spec = std::fs::read_to_string(d.join("gm.yaml")).unwrap();
    let line = spec.lines().position(|l| l == "external:").unwrap() + 1;
    let ann = stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no annotation: {stdout}"));
    assert!(
        ann.starts_with(&format!("::error file=gm.yaml,line={line},")),
        "{ann}"
    );
    assert!(
        ann.contains("RuntimeError: planted crash") && ann.contains("Traceback"),
        "{ann}"
    );
    let junit = std::fs::read_to_string(d.join("junit.xml")).unwrap();
    assert!(junit.contains("planted crash"), "{junit}");
}

/// `dpclaims audit` exits 1 when the certified bound exceeds the claim (the reference
/// core with the sqrt(2 ln(1.25/delta)) factor dropped), 0 when it does not; --help says so.
#[test]
fn dpclaims_audit_exits_1_on_a_violated_claim_and_documents_it() {
    let help = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args(["audit", "--help"])
        .output()
        .unwrap();
    let h = String::from_utf8_lossy(&help.stdout);
    assert!(
        h.contains("Exit status: 0") && h.contains("1 when it exceeds"),
        "{h}"
    );
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/external");
    let audit = |calibration: &str| {
        Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            .current_dir(&ex)
            .args([
                "audit",
                "--system",
                "external",
                "--command",
                "python3 gaussian_mean.py",
                "--epsilon",
                "0.5",
                "--delta",
                "1e-5",
                "--trials",
                "1000",
                "--param",
                "n=1000",
                "--param",
                "k=1",
                "--option",
            ])
            .arg(format!("calibration={calibration}"))
            .output()
            .unwrap()
    };
    let bad = audit("inverse_epsilon");
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("EXCEEDS"));
    let good = audit("classical");
    assert_eq!(good.status.code(), Some(0), "{}", stderr(&good));
}

/// A spec audits an external core in canary mode and judges its bound: the classical
/// calibration holds, the dropped factor is caught; the power metrics are reported.
#[test]
fn a_spec_audits_an_external_core_and_judges_its_bound() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/external");
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .env("DPCLAIMS_NO_CACHE", "1")
        .args(["run", "--no-reports", "--json"])
        .arg(ex.join("gaussian-mean-audit.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(
        text.contains("\"caught\"") || text.contains("caught"),
        "{text}"
    );
    let rows = v["claims"][0]["results"].as_array().unwrap();
    let verdict = |variant: &str| {
        rows.iter()
            .find(|r| r["variant"] == variant)
            .map(|r| r["verdict"].as_str().unwrap_or("").to_string())
            .unwrap()
    };
    assert_eq!(verdict("classical"), "holds", "{text}");
    assert_eq!(verdict("inverse-epsilon"), "refuted", "{text}");
}

/// A bound with a registered constant (issue 47, item 4): a control wrong by a factor
/// that does not change along the sweep keeps the ratio flat, so "the ratio does not
/// grow" passes it; the registered ceiling catches it. Pure Python (no numpy).
#[test]
fn a_registered_constant_catches_what_the_trend_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let core = r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "protocol" in msg:
        print(json.dumps({"protocol": "dpclaims-external/2", "metrics": ["m"]}), flush=True)
        continue
    p, s = msg["params"], int(msg["seed"], 16)
    m = p["factor"] * p["x"] * (1 + 0.02 * ((s % 1000) / 1000.0 - 0.5))
    print(json.dumps({"unit": msg["unit"], "metrics": {"m": m}}), flush=True)
"#;
    std::fs::write(dir.path().join("core.py"), core).unwrap();
    let spec = |constant: &str| {
        format!(
            r#"id: bound-constant
title: "test"
source: {{paper: "p", section: "s", equation: "e"}}
statement: "m = O(x) with m <= 3 x at every size"
system: external
external:
  command: ["python3", "core.py"]
  metrics: [m]
params:
  x: "1"
  factor: "2"
sweeps:
  s:
    quick: {{axes: {{x: [1, 2, 4, 8, 16]}}, replicates: 4}}
    full: {{axes: {{x: [1, 2, 4, 8, 16]}}, replicates: 4}}
variants:
  - name: main
  - name: five-times
    negative_control: true
    caught_by: [m-bound]
    params: {{factor: "5"}}
predictions:
  - kind: bound
    evidence: consequence
    name: m-bound
    metric: m
    sweep: s
    x: x
    bound: "x"
    direction: upper
    tolerance: 0.05
    tolerance_reason: "the core's noise is 1%"
{constant}"#
        )
    };
    // Writes the spec and runs it (JSON verdicts on stdout).
    let run_spec = |text: &str| {
        std::fs::write(dir.path().join("claim.yaml"), text).unwrap();
        Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            .env("DPCLAIMS_NO_CACHE", "1")
            .args(["run", "--no-reports", "--json"])
            .arg(dir.path().join("claim.yaml"))
            .output()
            .unwrap()
    };
    let run = |constant: &str| {
        let out = run_spec(&spec(constant));
        assert!(out.status.code() != Some(2), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = v["claims"][0]["results"].as_array().unwrap().clone();
        let verdict = |variant: &str| {
            rows.iter()
                .find(|r| r["variant"] == variant)
                .map(|r| r["verdict"].as_str().unwrap_or("").to_string())
                .unwrap()
        };
        (
            out.status.code(),
            verdict("main"),
            verdict("five-times"),
            v.to_string(),
        )
    };
    // Without a constant the flat-ratio control passes (not caught: exit 1).
    let (code, main, control, text) = run("");
    assert_eq!(
        (code, main.as_str(), control.as_str()),
        (Some(1), "holds", "holds"),
        "{text}"
    );
    // With the ceiling 3: the main variant (constant 2) holds, the control (5) is caught.
    let (code, main, control, text) =
        run("    constant: {at_most: 3, source: \"the statement: m <= 3 x at every size\"}\n");
    assert_eq!(
        (code, main.as_str(), control.as_str()),
        (Some(0), "holds", "refuted"),
        "{text}"
    );
    assert!(text.contains("exceeds the registered 3"), "{text}");
    // One replicate a point gives no interval to judge a constant on (as `over: means`):
    // refused, naming the point, where it was once judged on a zero-width interval.
    let one =
        spec("    constant: {at_most: 3, source: \"the statement: m <= 3 x at every size\"}\n")
            .replace("replicates: 4", "replicates: 1");
    let out = run_spec(&one);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "a registered constant needs at least 2 replicates per point, got 1 at x = 1"
        ),
        "{}",
        stderr(&out)
    );
    // A constant must say where it comes from, and an upper bound takes at_most.
    std::fs::write(
        dir.path().join("claim.yaml"),
        spec("    constant: {at_least: 3, source: \"x\"}\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args(["check"])
        .arg(dir.path().join("claim.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // `check` lists the spec errors on stdout (file:line:col: message).
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("at_most"), "{said}");
}
