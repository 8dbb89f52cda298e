//! Issue 50, family 1: SIGINT, SIGTERM and SIGHUP stop a run the same way whichever
//! thread the kernel delivers them to — in particular the worker thread OpenBLAS starts
//! from a library constructor before `main`, which no signal mask set in `main` covers.
//! Every case runs with `OPENBLAS_NUM_THREADS` unset (the Makefile's TEST_ENV sets it to
//! 1, which hid the bug) so OpenBLAS starts its threads, with busy external cores that
//! have started children in new sessions; each checks exit 128 + n, one line on stderr,
//! no process left, no temporary left, and nothing outside the output changed.
use super::hardening3_util::{cmd, digest, none_alive, recorded_pids, setup, wait};
use std::io::{BufRead as _, Write as _};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn busy_body() -> &'static str {
    r#"    if first:
        first = False
        c = subprocess.Popen(["sleep", "300"], start_new_session=True)
        os.makedirs("pids", exist_ok=True)
        with open(f"pids/{os.getpid()}", "w") as f:
            f.write(f"{os.getpid()} {c.pid}\n")
    time.sleep(120)
    print(json.dumps({"unit": u, "metrics": {"m": p["x"]}}), flush=True)"#
}

/// The threads of `pid` other than the main thread and dpclaims' own signal thread,
/// oldest first: the first is OpenBLAS's, started before `main`.
fn other_threads(pid: i32) -> Vec<i32> {
    let mut t: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
                .collect()
        })
        .unwrap_or_default();
    t.sort();
    t.retain(|&tid| {
        tid != pid
            && !std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
                .unwrap_or_default()
                .starts_with("dpclaims-sig")
    });
    t
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Where the signal goes: the process (the kernel picks a thread), or the oldest thread
/// that is not main's (OpenBLAS's worker when it has one).
#[derive(Clone, Copy)]
enum To {
    Process,
    BlasThread,
}

fn signal_case(sig: i32, code: i32, to: To) {
    let d = setup(busy_body());
    let before = digest(d.path(), &["pids", "out"]);
    let mut c = cmd(d.path(), &["run", "claim.yaml", "--no-reports"]);
    c.env_remove("OPENBLAS_NUM_THREADS")
        .env_remove("OMP_NUM_THREADS")
        .env("RAYON_NUM_THREADS", "2");
    let child = c.spawn().expect("start dpclaims");
    let pid = child.id() as i32;
    let t0 = Instant::now();
    while recorded_pids(d.path()).len() < 4 && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let pids = recorded_pids(d.path());
    assert!(pids.len() >= 2, "no core started: {pids:?}");
    let threads = other_threads(pid);
    if cpus() >= 2 {
        // OpenBLAS's own threads: at least one besides main (two BLAS threads).
        assert!(
            !threads.is_empty(),
            "no thread besides main: OpenBLAS started none"
        );
    }
    // SAFETY: kill(2)/tgkill(2) of the test's own child.
    unsafe {
        match (to, threads.first()) {
            (To::BlasThread, Some(&tid)) => {
                libc::syscall(libc::SYS_tgkill, pid, tid, sig);
            }
            _ => {
                libc::kill(pid, sig);
            }
        }
    }
    let o = wait(child, Duration::from_secs(30));
    assert_eq!(
        o.code,
        Some(code),
        "signal {:?}; stderr:\n{}",
        o.signal,
        o.stderr
    );
    let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line on stderr, got:\n{}", o.stderr);
    assert!(lines[0].contains("received: stopping"), "{}", o.stderr);
    none_alive(&pids);
    assert_eq!(digest(d.path(), &["pids", "out"]), before, "files changed");
}

#[test]
fn sigint_to_the_process_with_blas_threads_exits_130_and_leaves_no_core() {
    signal_case(libc::SIGINT, 130, To::Process);
}

#[test]
fn sigterm_to_the_process_with_blas_threads_exits_143_and_leaves_no_core() {
    signal_case(libc::SIGTERM, 143, To::Process);
}

#[test]
fn sighup_to_the_process_with_blas_threads_exits_129_and_leaves_no_core() {
    signal_case(libc::SIGHUP, 129, To::Process);
}

#[test]
fn sigint_delivered_to_the_openblas_thread_exits_130_and_leaves_no_core() {
    signal_case(libc::SIGINT, 130, To::BlasThread);
}

#[test]
fn sigterm_delivered_to_the_openblas_thread_exits_143_and_leaves_no_core() {
    signal_case(libc::SIGTERM, 143, To::BlasThread);
}

#[test]
fn sighup_delivered_to_the_openblas_thread_exits_129_and_leaves_no_core() {
    signal_case(libc::SIGHUP, 129, To::BlasThread);
}

/// A signal while the report set is being staged (held at a step by the test gate of
/// src/report/set.rs): the run abandons the swap at that step, the staging directory and
/// every temporary are removed, the previous report set is untouched, exit 143.
#[test]
fn a_signal_during_the_report_swap_removes_the_staging_directory_and_keeps_the_old_set() {
    let d = setup(super::hardening3_util::ok_answer());
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("old.txt"), "the previous set").unwrap();
    let before = digest(d.path(), &[]);
    let mut c = cmd(
        d.path(),
        &["run", "claim.yaml", "--out", "out", "--no-baseline"],
    );
    c.env_remove("OPENBLAS_NUM_THREADS")
        .env("DPCLAIMS_REPORT_GATE", "1")
        .stdin(Stdio::piped());
    let mut child = c.spawn().expect("start dpclaims");
    let pid = child.id() as i32;
    let mut stdin = child.stdin.take().unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let t0 = Instant::now();
    let mut writes = 0;
    let mut line = String::new();
    while t0.elapsed() < Duration::from_secs(60) {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if line.starts_with("dpclaims-report-step: write") {
            writes += 1;
            if writes == 3 {
                break;
            }
        }
        if line.starts_with("dpclaims-report-step:") {
            stdin.write_all(b"\n").unwrap();
        }
    }
    assert_eq!(writes, 3, "the gate never reached a third write: {line}");
    let staging = d.path().join(".out.dpclaims-staging");
    assert!(staging.is_dir(), "no staging directory while staging");
    // SAFETY: kill(2) of the test's own child.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    // The stop is marked before its line is printed; the run, held at the gate, owns the
    // staging directory and abandons the swap when the gate opens (issue 58): end of
    // input opens every gate.
    let mut rest = String::new();
    loop {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        rest.push_str(&line);
        if line.contains("SIGTERM received") {
            break;
        }
    }
    drop(stdin);
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    let t1 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t1.elapsed() < Duration::from_secs(30),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(143), "{rest}");
    assert!(rest.contains("SIGTERM received"), "{rest}");
    assert!(!staging.exists(), "the staging directory was left behind");
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}
