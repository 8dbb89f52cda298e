//! `system: external`: tiny cores (Python without dependencies, or shell) written into temp
//! dirs. A core that crashes, hangs, lies or disagrees with itself gives exit 2 with a
//! message naming the claim, variant and sweep point, the core's message and its stderr;
//! a well-behaved core gets the documented requests and reproducible seeds.
use crate::util::{dpclaims, dpclaims_in};
use std::path::Path;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The handshake and a request loop around `body`, which sees `msg` (the request) and
/// `p` (its params) and must print one answer line.
fn python_core(metrics: &str, body: &str) -> String {
    format!(
        r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    with open("requests.log", "a") as f:
        f.write(line)
    if "protocol" in msg:
        print(json.dumps({{"protocol": "dpclaims-external/2", "metrics": {metrics}}}), flush=True)
        continue
    p = msg["params"]
{body}
"#
    )
}

/// Deterministic; negative for the control's option (so the control is caught).
const GOOD: &str = r#"    s = int(msg["seed"], 16)
    sign = 1 if msg["options"]["flavour"] == "vanilla" else -1
    print(json.dumps({"unit": msg["unit"], "metrics": {"m": sign * p["x"] * (1 + (s % 1000) / 1000.0)}}), flush=True)"#;

/// A claim over `core.py` with a main variant, a negative control and one option.
fn spec(extra_external: &str) -> String {
    format!(
        r#"id: ext-test
title: "test"
source: {{paper: "p", section: "s", equation: "e"}}
statement: "s"
system: external
external:
  command: ["python3", "core.py"]
  metrics: [m]
{extra_external}
params:
  x: "1"
  y: "2 * x"
options: {{flavour: vanilla}}
sweeps:
  s:
    quick: {{axes: {{x: [1, 2, 4]}}, replicates: 2}}
    full: {{axes: {{x: [1, 2, 4, 8]}}, replicates: 2}}
variants:
  - name: main
  - name: control
    negative_control: true
    caught_by: [m-positive]
    params: {{y: "-1"}}
    options: {{flavour: broken}}
predictions:
  - kind: inequality
    evidence: consequence
    name: m-positive
    metric: m
    sweep: s
    op: ">"
    rhs: "0"
"#
    )
}

fn setup(core: &str, extra_external: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("core.py"), core).unwrap();
    std::fs::write(dir.path().join("claim.yaml"), spec(extra_external)).unwrap();
    dir
}

fn run(dir: &Path, more: &[&str]) -> Output {
    let spec = dir.join("claim.yaml");
    let mut args = vec!["run", spec.to_str().unwrap(), "--no-reports", "--json"];
    args.extend_from_slice(more);
    // Started elsewhere: the command must resolve relative to the spec's directory.
    dpclaims(&args)
}

fn requests(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("requests.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn assert_names_the_unit(e: &str) {
    assert!(e.contains("claim `ext-test`"), "{e}");
    assert!(e.contains("variant `"), "{e}");
    assert!(e.contains("sweep `s` point x="), "{e}");
    assert!(e.contains("core `python3 core.py`"), "{e}");
}

#[test]
fn a_deterministic_core_gets_the_documented_requests_and_gives_the_same_bytes() {
    let dir = setup(&python_core(r#"["m"]"#, GOOD), "");
    let a = run(dir.path(), &[]);
    assert!(a.status.success(), "{}", stderr(&a));
    let reqs = requests(dir.path());
    let units: Vec<&serde_json::Value> = reqs.iter().filter(|r| r.get("unit").is_some()).collect();
    // 3 points x 2 replicates x 2 variants.
    assert_eq!(units.len(), 12);
    let first = units
        .iter()
        .find(|r| r["unit"] == "ext-test/main/s/x=1/0")
        .expect("unit id <claim>/<variant>/<sweep>/<point>/<replicate>");
    let path = dpclaims::rng::SeedPath::new(0)
        .child("ext-test")
        .child("s")
        .child("x=1")
        .child("rep0");
    let seed = format!("{:016x}", dpclaims::systems::external::seed_of(&path));
    assert_eq!(first["seed"], seed.as_str());
    assert_eq!(first["params"]["x"], 1.0);
    assert_eq!(first["params"]["y"], 2.0);
    assert_eq!(first["options"]["flavour"], "vanilla");
    let control = units
        .iter()
        .find(|r| r["unit"] == "ext-test/control/s/x=1/0")
        .unwrap();
    // Common random numbers: variants share the seed of a point.
    assert_eq!(control["seed"], seed.as_str());
    assert_eq!(control["params"]["y"], -1.0);
    assert_eq!(control["options"]["flavour"], "broken");
    let b = run(dir.path(), &["--check-determinism"]);
    assert!(b.status.success(), "{}", stderr(&b));
    assert_eq!(a.stdout, b.stdout, "same spec and seed, same bytes");
}

#[test]
fn a_crashing_core_is_exit_2_with_its_stderr() {
    let body = r#"    if p["x"] == 4:
        sys.stderr.write("Traceback: ZeroDivisionError in step 17\n")
        sys.exit(3)
    print(json.dumps({"unit": msg["unit"], "metrics": {"m": 1.0}}), flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, body), "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_names_the_unit(&e);
    assert!(e.contains("x=4"), "{e}");
    assert!(
        e.contains("exited without answering (exit status 3)"),
        "{e}"
    );
    assert!(e.contains("ZeroDivisionError in step 17"), "{e}");
}

#[test]
fn a_hanging_core_is_killed_at_its_timeout() {
    let body = r#"    if p["x"] == 2:
        sys.stderr.write("computing forever\n")
        sys.stderr.flush()
        import time
        time.sleep(600)
    print(json.dumps({"unit": msg["unit"], "metrics": {"m": 1.0}}), flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, body), "  timeout_s: 1");
    // Under the hang guard of hardening3_util::wait: a timeout that never fired would
    // fail there, not hang the suite.
    let spec = dir.path().join("claim.yaml");
    let h = crate::hardening3_util::wait(
        crate::hardening3_util::cmd(
            dir.path(),
            &["run", spec.to_str().unwrap(), "--no-reports", "--json"],
        )
        .spawn()
        .unwrap(),
        crate::hardening3_util::DEADLINE,
    );
    assert_eq!(h.code, Some(2), "{}", h.stderr);
    let e = h.stderr;
    assert_names_the_unit(&e);
    assert!(e.contains("no answer within 1 s"), "{e}");
    assert!(e.contains("computing forever"), "{e}");
    // The timeout is shown by its message (no wall time asserted, issue 58).
}

#[test]
fn a_core_printing_something_else_than_json_lines_is_exit_2() {
    let body = r#"    print("loss = 0.25", flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, body), "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_names_the_unit(&e);
    assert!(e.contains("`loss = 0.25`"), "{e}");
    assert!(e.contains("not one JSON object per line"), "{e}");
}

#[test]
fn a_non_finite_metric_and_an_error_answer_are_exit_2() {
    let nan = r#"    print('{"unit": "%s", "metrics": {"m": NaN}}' % msg["unit"], flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, nan), "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("non-finite"), "{}", stderr(&o));
    let null =
        r#"    print(json.dumps({"unit": msg["unit"], "metrics": {"m": None}}), flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, null), "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("metric `m` = null is not a finite number"),
        "{}",
        stderr(&o)
    );
    // Lying: the handshake promises `m`, the answers never carry it.
    let liar =
        r#"    print(json.dumps({"unit": msg["unit"], "metrics": {"other": 1.0}}), flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, liar), "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the answer has no metric `m` (it gave: other)"),
        "{}",
        stderr(&o)
    );
    let err = r#"    print(json.dumps({"error": "p must exceed n"}), flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, err), "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_names_the_unit(&e);
    assert!(
        e.contains("the core answered an error: p must exceed n"),
        "{e}"
    );
}

#[test]
fn a_wrong_protocol_or_a_missing_metric_fails_before_any_unit() {
    let wrong = r#"import json, sys
for line in sys.stdin:
    with open("requests.log", "a") as f:
        f.write(line)
    print(json.dumps({"protocol": "dpclaims-external/0", "metrics": ["m"]}), flush=True)
"#;
    let dir = setup(wrong, "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("claim `ext-test`") && e.contains("dpclaims-external/0"),
        "{e}"
    );
    assert_eq!(requests(dir.path()).len(), 1, "only the handshake was sent");
    let dir = setup(&python_core(r#"["other"]"#, GOOD), "");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("does not compute the metric(s) `m`"), "{e}");
    assert!(e.contains("it offers: other"), "{e}");
    assert_eq!(requests(dir.path()).len(), 1, "only the handshake was sent");
}

#[test]
fn a_missing_program_is_exit_2() {
    let dir = setup("", "");
    let spec = std::fs::read_to_string(dir.path().join("claim.yaml")).unwrap();
    std::fs::write(
        dir.path().join("claim.yaml"),
        spec.replace(r#"["python3", "core.py"]"#, r#"["./no-such-core"]"#),
    )
    .unwrap();
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot start `./no-such-core`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_core_that_disagrees_with_itself_is_caught_by_check_determinism() {
    let body = r#"    import random
    print(json.dumps({"unit": msg["unit"], "metrics": {"m": 1.0 + random.random()}}), flush=True)"#;
    let dir = setup(&python_core(r#"["m"]"#, body), "");
    let o = run(dir.path(), &["--check-determinism"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not deterministic"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_external_block_is_validated_with_file_and_field() {
    let dir = setup(&python_core(r#"["m"]"#, GOOD), "  timeout_s: -1");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("claim.yaml: external.timeout_s"),
        "{}",
        stderr(&o)
    );
    let dir = setup(&python_core(r#"["m"]"#, GOOD), "  comand: [x]");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("comand"), "{}", stderr(&o));
    // A metric the core is not asked for cannot be judged.
    let spec = std::fs::read_to_string(dir.path().join("claim.yaml")).unwrap();
    let no_block = spec.replace("  comand: [x]\n", "").replace(
        "external:\n  command: [\"python3\", \"core.py\"]\n  metrics: [m]\n",
        "",
    );
    std::fs::write(dir.path().join("claim.yaml"), no_block).unwrap();
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("claim.yaml: external:"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_audit_runs_through_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let core = python_core(
        r#"["score"]"#,
        r#"    import random
    rng = random.Random(int(msg["seed"], 16))
    print(json.dumps({"unit": msg["unit"], "metrics": {"score": 3.0 * p["canary"] + rng.gauss(0, 1)}}), flush=True)"#,
    );
    std::fs::write(dir.path().join("core.py"), core).unwrap();
    let args = [
        "audit",
        "--system",
        "external",
        "--command",
        "python3 core.py",
        "--param",
        "n=10",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--trials",
        "400",
        "--json",
    ];
    let o = dpclaims_in(dir.path(), &args);
    // Exit status 1: the certified bound exceeds the claimed epsilon.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // mu = 3: far more than 1 of epsilon shows.
    assert!(v["epsilon_lower_bound"].as_f64().unwrap() > 1.0, "{v}");
    let reqs = requests(dir.path());
    assert_eq!(reqs.iter().filter(|r| r.get("unit").is_some()).count(), 800);
    assert!(reqs.iter().any(|r| r["unit"] == "audit/canary/trials/0/0"
        && r["params"]["canary"] == 1.0
        && r["params"]["epsilon"] == 1.0
        && r["params"]["n"] == 10.0));
    let again = dpclaims_in(dir.path(), &args);
    assert_eq!(o.stdout, again.stdout, "same seed, same audit");
}

/// The fenced block of `lang` in docs/external-protocol.md that contains `marker`.
fn doc_block(lang: &str, marker: &str) -> String {
    let doc = std::fs::read_to_string("docs/external-protocol.md").unwrap();
    doc.split(&format!("```{lang}\n"))
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .find(|b| b.contains(marker))
        .unwrap_or_else(|| panic!("a ```{lang} block with `{marker}` in the protocol doc"))
}

#[test]
fn the_documented_minimal_core_and_claim_work_as_documented() {
    let core = doc_block("python", "PROTOCOL");
    assert!(
        core.lines().count() <= 32,
        "the minimal example stays about 30 lines"
    );
    let spec = doc_block("yaml", "system: external");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("core.py"), core).unwrap();
    std::fs::write(dir.path().join("claim.yaml"), spec).unwrap();
    let o = run(dir.path(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains("\"holds\""), "{text}");
    assert!(
        text.contains("\"caught\":true") || text.contains("refuted"),
        "{text}"
    );
}

#[test]
fn a_sharded_external_run_merges_into_the_same_result() {
    let dir = setup(&python_core(r#"["m"]"#, GOOD), "");
    let spec = dir.path().join("claim.yaml");
    let spec = spec.to_str().unwrap();
    let parts = dir.path().join("parts");
    let parts = parts.to_str().unwrap();
    for shard in ["0/2", "1/2"] {
        let o = dpclaims(&["run", spec, "--shard", shard, "--partial-out", parts]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let merged = dpclaims(&["merge", parts, "--claims", spec, "--no-reports", "--json"]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    let whole = run(dir.path(), &[]);
    assert_eq!(merged.stdout, whole.stdout);
}

#[test]
fn a_relative_program_path_is_the_spec_directory_s() {
    let dir = setup(&python_core(r#"["m"]"#, GOOD), "");
    // Runs in the spec directory: `core.py` is found there.
    let script = "#!/bin/sh\nexec python3 core.py\n";
    let sub = dir.path().join("bin");
    std::fs::create_dir(&sub).unwrap();
    let wrapper = sub.join("core.sh");
    std::fs::write(&wrapper, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = std::fs::read_to_string(dir.path().join("claim.yaml")).unwrap();
    std::fs::write(
        dir.path().join("claim.yaml"),
        spec.replace(r#"["python3", "core.py"]"#, r#"["bin/core.sh"]"#),
    )
    .unwrap();
    let o = run(dir.path(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Regression: with the result cache on, a control that differs from the main variant
/// only by its core (same parameters, same seeds) was answered with the main core's
/// cached values and went uncaught. External units are cached only under their core's
/// identity (issue 47: the hash of its declared files, its own script included).
#[test]
fn external_units_are_never_served_another_core_s_values_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let body = |sign: &str| {
        format!("    print(json.dumps({{\"unit\": msg[\"unit\"], \"metrics\": {{\"m\": {sign} * p[\"x\"]}}}}), flush=True)")
    };
    std::fs::write(
        dir.path().join("core.py"),
        python_core(r#"["m"]"#, &body("1")),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("core_b.py"),
        python_core(r#"["m"]"#, &body("-1")),
    )
    .unwrap();
    let spec = r#"id: ext-cache
title: "test"
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
    quick: {axes: {x: [1, 2, 4]}, replicates: 2}
    full: {axes: {x: [1, 2, 4]}, replicates: 2}
variants:
  - name: main
  - name: other-core
    negative_control: true
    caught_by: [m-positive]
    external: {command: ["python3", "core_b.py"]}
predictions:
  - kind: inequality
    evidence: consequence
    name: m-positive
    metric: m
    sweep: s
    op: ">"
    rhs: "0"
"#;
    // Without declared files the core is not hashable (never cached); with them each
    // core (its own script hashed too) has its own keys.
    for spec in [
        spec.to_string(),
        spec.replace("  metrics: [m]\n", "  metrics: [m]\n  files: [core.py]\n"),
    ] {
        std::fs::write(dir.path().join("claim.yaml"), spec).unwrap();
        let cache = dir.path().join("cache");
        for _ in 0..2 {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_dpclaims"))
                .env_remove("DPCLAIMS_NO_CACHE")
                .args(["run", "--no-reports", "--cache"])
                .arg(&cache)
                .arg(dir.path().join("claim.yaml"))
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
        }
    }
}

/// [`spec`]'s claim with its prediction judged on the mean (`over: means`) at
/// `replicates` a point, `exact` added to its `external:` block.
fn exact_spec(exact: &str, replicates: u32) -> String {
    spec(exact)
        .replace("replicates: 2}", &format!("replicates: {replicates}}}"))
        .replace("    rhs: \"0\"\n", "    rhs: \"0\"\n    over: means\n")
}

/// An exact metric declared by an external core's spec (`external.exact`) is judged at
/// one replicate a point (the mean is the value: no interval, no power line), its
/// control caught; undeclared, one replicate is refused; declared but drawn from the
/// seed, its replicates differ and the run fails naming the declaration.
#[test]
fn an_external_exact_metric_is_judged_at_one_replicate_and_checked_to_the_bit() {
    let exact_core = python_core(
        r#"["m"]"#,
        r#"    sign = 1 if msg["options"]["flavour"] == "vanilla" else -1
    print(json.dumps({"unit": msg["unit"], "metrics": {"m": sign * 1e-9 * p["x"]}}), flush=True)"#,
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("core.py"), &exact_core).unwrap();
    let spec = dir.path().join("claim.yaml");
    std::fs::write(&spec, exact_spec("  exact: [m]", 1)).unwrap();
    let out = dpclaims(&["run", spec.to_str().unwrap(), "--no-reports", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["claims"][0]["results"].as_array().unwrap();
    let main = rows.iter().find(|r| r["variant"] == "main").unwrap();
    // A mean of 1e-9 with one replicate: decided, because the value has no sampling error.
    assert_eq!(main["verdict"], "holds", "{main}");
    assert_eq!(main["power"], "", "an exact row has no power line: {main}");
    let control = rows.iter().find(|r| r["variant"] == "control").unwrap();
    assert_eq!(control["verdict"], "refuted", "{control}");

    // Undeclared: one replicate cannot give a mean an interval.
    std::fs::write(&spec, exact_spec("", 1)).unwrap();
    let out = dpclaims(&["run", spec.to_str().unwrap(), "--no-reports", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs at least 2 replicates"),
        "{}",
        stderr(&out)
    );

    // Declared exact, but the core draws from the seed: the declaration is wrong.
    std::fs::write(dir.path().join("core.py"), python_core(r#"["m"]"#, GOOD)).unwrap();
    std::fs::write(&spec, exact_spec("  exact: [m]", 2)).unwrap();
    let out = dpclaims(&["run", spec.to_str().unwrap(), "--no-reports", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let main = v["claims"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] == "main")
        .cloned()
        .unwrap();
    assert!(
        main["problem"]
            .as_str()
            .unwrap_or("")
            .contains("declared an exact computation"),
        "{main}"
    );

    // Only a metric the core computes can be declared exact.
    std::fs::write(&spec, exact_spec("  exact: [q]", 1)).unwrap();
    let out = dpclaims(&["check", spec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("external.exact[0]"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// An inequality's `rhs` may name metrics: each run is compared with its own value
/// (over runs), or the mean of the paired difference with 0 (over means); a symbol that
/// is neither a variable nor a metric is refused by `check`.
#[test]
fn an_rhs_naming_metrics_compares_each_run_with_itself() {
    let core = python_core(
        r#"["used", "accountant"]"#,
        r#"    s = int(msg["seed"], 16) % 1000 / 1000.0
    acc = p["x"] * (1 + s)
    used = acc * (0.9 if msg["options"]["flavour"] == "vanilla" else 1.1)
    print(json.dumps({"unit": msg["unit"], "metrics": {"used": used, "accountant": acc}}), flush=True)"#,
    );
    let spec = |rhs: &str| {
        format!(
            r#"id: ext-rhs
title: "test"
source: {{paper: "p", section: "s", equation: "e"}}
statement: "s"
system: external
external:
  command: ["python3", "core.py"]
  metrics: [used, accountant]
params:
  x: "1"
options: {{flavour: vanilla}}
sweeps:
  s:
    quick: {{axes: {{x: [1, 2, 4]}}, replicates: 8}}
    full: {{axes: {{x: [1, 2, 4]}}, replicates: 8}}
variants:
  - name: main
  - name: control
    negative_control: true
    caught_by: [within, within-mean]
    options: {{flavour: broken}}
predictions:
  - kind: inequality
    evidence: consequence
    name: within
    metric: used
    sweep: s
    op: "<="
    rhs: "{rhs}"
  - kind: inequality
    evidence: consequence
    name: within-mean
    metric: used
    sweep: s
    op: "<="
    rhs: "0.95 * accountant"
    over: means
"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("core.py"), core).unwrap();
    let path = dir.path().join("claim.yaml");
    std::fs::write(&path, spec("accountant")).unwrap();
    let out = dpclaims(&["run", path.to_str().unwrap(), "--no-reports", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdict = |name: &str, variant: &str| -> String {
        v["claims"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["prediction"] == name && r["variant"] == variant)
            .map(|r| r["verdict"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(verdict("within", "main"), "holds");
    assert_eq!(verdict("within", "control"), "refuted");
    assert_eq!(verdict("within-mean", "main"), "holds");
    assert_eq!(verdict("within-mean", "control"), "refuted");
    std::fs::write(&path, spec("accountant + zz")).unwrap();
    let out = dpclaims(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("unknown symbol `zz`"), "{text}");
}
