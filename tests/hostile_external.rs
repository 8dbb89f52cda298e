//! Hostile external cores (issue 32, family 3): answers that do not pair with their
//! requests, a core that stops reading, signals, and children that try to outlive the
//! run. Every case runs the binary under a deadline (a hang fails the test instead of
//! hanging it), and checks the exit status and the message.
use super::hardening3_util::{self as util, exit2, none_alive, recorded_pids, wait, Out};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

fn start(dir: &Path, args: &[&str]) -> Child {
    util::cmd(dir, args)
        .env("RAYON_NUM_THREADS", "2")
        .spawn()
        .expect("start dpclaims")
}

fn run(dir: &Path, args: &[&str]) -> Out {
    wait(start(dir, args), DEADLINE)
}

/// A core: handshake with `protocol`, then `body` per request (sees `msg`, `p`, `u`).
fn core(protocol: &str, body: &str) -> String {
    util::core_with(protocol, body)
}

fn ok_answer() -> &'static str {
    util::ok_answer()
}

fn spec(replicates: u32) -> String {
    util::spec("ext-hostile", "hostile cores")
        .replace("replicates: 2", &format!("replicates: {replicates}"))
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
