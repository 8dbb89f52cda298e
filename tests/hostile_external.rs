//! Hostile external cores (issue 32, family 3): answers that do not pair with their
//! requests, a core that stops reading, signals, and children that try to outlive the
//! run. Every case runs the binary under a deadline (a hang fails the test instead of
//! hanging it), and checks the exit status and the message.
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

struct Out {
    code: Option<i32>,
    signal: Option<i32>,
    stderr: String,
}

fn start(dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .env("DPCLAIMS_NO_CACHE", "1")
        .env("RAYON_NUM_THREADS", "2")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dpclaims")
}

fn wait(mut child: Child, deadline: Duration) -> Out {
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dpclaims did not end within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    Out {
        code: status.code(),
        signal: status.signal(),
        stderr,
    }
}

fn run(dir: &Path, args: &[&str]) -> Out {
    wait(start(dir, args), DEADLINE)
}

/// A core: handshake with `protocol`, then `body` per request (sees `msg`, `p`, `u`).
fn core(protocol: &str, body: &str) -> String {
    format!(
        r#"import json, os, subprocess, sys, time
first = True
for line in sys.stdin:
    msg = json.loads(line)
    if "protocol" in msg:
        print(json.dumps({{"protocol": "{protocol}", "metrics": ["m"]}}), flush=True)
        continue
    p, u = msg["params"], msg["unit"]
{body}
"#
    )
}

fn ok_answer() -> &'static str {
    r#"    print(json.dumps({"unit": u, "metrics": {"m": p["sign"] * p["x"]}}), flush=True)"#
}

fn spec(replicates: u32) -> String {
    format!(
        r#"id: ext-hostile
title: "hostile cores"
source: {{paper: "p", section: "s", equation: "e"}}
statement: "s"
system: external
external:
  command: ["python3", "core.py"]
  metrics: [m]
  timeout_s: 30
params:
  x: "1"
  sign: "1"
sweeps:
  s:
    quick: {{axes: {{x: [1, 2, 4]}}, replicates: {replicates}}}
    full: {{axes: {{x: [1, 2, 4]}}, replicates: {replicates}}}
variants:
  - name: main
  - name: control
    negative_control: true
    caught_by: [m-positive]
    params: {{sign: "-1"}}
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

fn setup(core_py: &str) -> tempfile::TempDir {
    setup_with(core_py, 2)
}

fn setup_with(core_py: &str, replicates: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("core.py"), core_py).unwrap();
    std::fs::write(dir.path().join("claim.yaml"), spec(replicates)).unwrap();
    dir
}

fn run_claim(dir: &Path) -> Out {
    run(dir, &["run", "claim.yaml", "--no-reports"])
}

fn exit2(o: &Out, words: &[&str]) {
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    for w in words {
        assert!(o.stderr.contains(w), "missing {w:?} in:\n{}", o.stderr);
    }
    assert!(!o.stderr.contains("internal error"), "{}", o.stderr);
}

#[test]
fn a_core_that_answers_one_unit_twice_is_exit_2_naming_both_units() {
    let body = r#"    a = json.dumps({"unit": u, "metrics": {"m": p["x"]}})
    print(a, flush=True)
    print(a, flush=True)"#;
    let d = setup(&core("dpclaims-external/2", body));
    let o = run_claim(d.path());
    exit2(
        &o,
        &[
            "answered a unit twice",
            "the request was for unit `ext-hostile/",
        ],
    );
    // Both ids are named: the answer's and the request's.
    assert!(
        o.stderr.matches("`ext-hostile/").count() >= 2,
        "{}",
        o.stderr
    );
}

#[test]
fn a_core_that_skips_a_unit_is_exit_2() {
    // Answers the first request as if it were another unit.
    let body =
        r#"    print(json.dumps({"unit": u + "-next", "metrics": {"m": p["x"]}}), flush=True)"#;
    let d = setup(&core("dpclaims-external/2", body));
    exit2(
        &run_claim(d.path()),
        &["answer is for unit", "out of order"],
    );
}

#[test]
fn an_answer_without_its_unit_id_is_exit_2() {
    let body = r#"    print(json.dumps({"metrics": {"m": p["x"]}}), flush=True)"#;
    let d = setup(&core("dpclaims-external/2", body));
    exit2(&run_claim(d.path()), &["has no `unit`", "echoes"]);
}

#[test]
fn a_version_1_core_is_refused_at_the_handshake_with_what_changed() {
    let body = r#"    print(json.dumps({"metrics": {"m": p["x"]}}), flush=True)"#;
    let d = setup(&core("dpclaims-external/1", body));
    exit2(
        &run_claim(d.path()),
        &[
            "speaks `dpclaims-external/1`",
            "echoes its request's `unit`",
        ],
    );
}

#[test]
fn a_null_error_is_no_error() {
    let body = r#"    print(json.dumps({"unit": u, "error": None, "metrics": {"m": p["sign"] * p["x"]}}), flush=True)"#;
    let d = setup(&core("dpclaims-external/2", body));
    let o = run_claim(d.path());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn an_error_answer_with_a_null_unit_still_reports_the_error() {
    let body = r#"    print(json.dumps({"error": "cannot read the request"}), flush=True)"#;
    let d = setup(&core("dpclaims-external/2", body));
    exit2(&run_claim(d.path()), &["cannot read the request"]);
}

#[test]
fn a_core_that_stops_reading_is_exit_2_never_a_silent_sigpipe() {
    // Reads the handshake, closes stdin, then answers it and lives on: the first request
    // meets a pipe without a reader (EPIPE), deterministically (closing after answering
    // raced with the harness's first write, which then waited for its timeout). Repeated,
    // since the old failure (death by SIGPIPE) depended on timing.
    let py = r#"import json, os, sys, time
line = sys.stdin.readline()
os.close(0)
print(json.dumps({"protocol": "dpclaims-external/2", "metrics": ["m"]}), flush=True)
time.sleep(30)
"#;
    let d = setup_with(py, 40);
    for _ in 0..5 {
        let o = run_claim(d.path());
        assert_eq!(o.signal, None, "killed by a signal: {}", o.stderr);
        exit2(&o, &["core `python3 core.py`"]);
        assert!(
            o.stderr.contains("stopped reading its requests")
                || o.stderr.contains("exited without answering"),
            "{}",
            o.stderr
        );
    }
}

#[test]
fn a_core_that_exits_after_the_handshake_is_exit_2_every_time() {
    let py = r#"import json, sys
line = sys.stdin.readline()
print(json.dumps({"protocol": "dpclaims-external/2", "metrics": ["m"]}), flush=True)
"#;
    let d = setup_with(py, 40);
    for _ in 0..10 {
        let o = run_claim(d.path());
        assert_eq!(o.signal, None, "killed by a signal: {}", o.stderr);
        exit2(&o, &["core `python3 core.py`", "the core"]);
    }
}

/// A core that starts a child in a new session (it leaves the core's process group) and
/// records both pids in `pids/`, then does `then`.
fn core_with_escaping_child(then: &str) -> String {
    core(
        "dpclaims-external/2",
        &format!(
            r#"    if first:
        first = False
        c = subprocess.Popen(["sleep", "300"], start_new_session=True)
        os.makedirs("pids", exist_ok=True)
        with open(f"pids/{{os.getpid()}}", "w") as f:
            f.write(f"{{os.getpid()}} {{c.pid}}\n")
{then}"#
        ),
    )
}

fn recorded_pids(dir: &Path) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir.join("pids")) {
        for e in rd.flatten() {
            let s = std::fs::read_to_string(e.path()).unwrap_or_default();
            out.extend(s.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
        }
    }
    out
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s
                .rfind(')')
                .map(|i| s[i + 1..].split_whitespace().next().unwrap_or(""))
                .unwrap_or("");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

fn none_alive(pids: &[i32]) {
    // Orphans re-parented to init are reaped by it shortly after they die.
    let t0 = Instant::now();
    while pids.iter().any(|p| alive(*p)) && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for p in &left {
        // Do not leave them behind for the next test.
        unsafe {
            libc::kill(*p, libc::SIGKILL);
        }
    }
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
}

#[test]
fn a_child_that_leaves_the_core_s_group_does_not_outlive_a_successful_run() {
    let d = setup(&core_with_escaping_child(ok_answer()));
    let o = run_claim(d.path());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let pids = recorded_pids(d.path());
    assert!(
        pids.len() >= 2,
        "the core did not record its child: {pids:?}"
    );
    none_alive(&pids);
}

#[test]
fn a_child_that_leaves_the_core_s_group_does_not_outlive_a_failed_run() {
    let body = r#"    print(json.dumps({"unit": u, "error": "deliberate"}), flush=True)"#;
    let d = setup(&core_with_escaping_child(body));
    exit2(&run_claim(d.path()), &["deliberate"]);
    none_alive(&recorded_pids(d.path()));
}

fn signal_case(sig: i32, code: i32) {
    // Busy cores: every unit sleeps, so a signal finds them in the middle of a unit.
    let body = r#"    time.sleep(120)
    print(json.dumps({"unit": u, "metrics": {"m": p["x"]}}), flush=True)"#;
    let d = setup(&core_with_escaping_child(body));
    let child = start(d.path(), &["run", "claim.yaml", "--no-reports"]);
    let pid = child.id() as i32;
    // Wait until the cores have started their children.
    let t0 = Instant::now();
    while recorded_pids(d.path()).len() < 2 && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let pids = recorded_pids(d.path());
    assert!(pids.len() >= 2, "no core started: {pids:?}");
    unsafe {
        libc::kill(pid, sig);
    }
    let o = wait(child, Duration::from_secs(20));
    assert_eq!(o.code, Some(code), "{:?} {}", o.signal, o.stderr);
    assert!(o.stderr.contains("received: stopping"), "{}", o.stderr);
    none_alive(&pids);
}

#[test]
fn sigterm_stops_busy_cores_and_their_children_then_exits_143() {
    signal_case(libc::SIGTERM, 143);
}

#[test]
fn sigint_stops_busy_cores_and_their_children_then_exits_130() {
    signal_case(libc::SIGINT, 130);
}

#[test]
fn list_and_plan_never_start_a_core() {
    let py = r#"open("started", "w").write("yes")
"#;
    let d = setup(py);
    for cmd in ["list", "plan"] {
        let o = run(d.path(), &[cmd, "claim.yaml"]);
        assert_eq!(o.code, Some(0), "{cmd}: {}", o.stderr);
        assert!(!d.path().join("started").exists(), "{cmd} started the core");
    }
}

#[test]
fn the_audit_refuses_a_mispaired_core_too() {
    let body = r#"    a = json.dumps({"unit": u, "metrics": {"m": 1.0, "score": 0.5}})
    print(a, flush=True)
    print(a, flush=True)"#;
    let py = core("dpclaims-external/2", body).replace(r#"["m"]"#, r#"["m", "score"]"#);
    let d = setup(&py);
    let o = run(
        d.path(),
        &[
            "audit",
            "--system",
            "external",
            "--command",
            "python3 core.py",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
            "--trials",
            "200",
        ],
    );
    exit2(&o, &["answered a unit twice"]);
}
