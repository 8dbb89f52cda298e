//! The shared helpers of the tests that run the binary against external cores and
//! hostile surroundings (the hardening3_* modules and tests/hostile_external.rs): the
//! binary under a deadline, a digest of a directory tree (to check that no file outside
//! the output changed), a scripted external core and its claim, and process checks.
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const DEADLINE: Duration = Duration::from_secs(120);

pub struct Out {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// The binary in `dir`, with the tests' fixed environment (no user cache).
pub fn cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpclaims"));
    c.env("DPCLAIMS_NO_CACHE", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_ACTIONS")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Waits for `child` at most `deadline` (a hang kills it and fails the test), reading
/// its output meanwhile.
pub fn wait(mut child: Child, deadline: Duration) -> Out {
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = so.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = se.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
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
    use std::os::unix::process::ExitStatusExt as _;
    Out {
        code: status.code(),
        signal: status.signal(),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Runs `args` in `dir` under [`DEADLINE`].
pub fn run(dir: &Path, args: &[&str]) -> Out {
    wait(cmd(dir, args).spawn().expect("start dpclaims"), DEADLINE)
}

/// Exit 2, every word of `words` in the message, no internal error.
pub fn exit2(o: &Out, words: &[&str]) {
    assert_eq!(
        o.code,
        Some(2),
        "stdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
    for w in words {
        assert!(o.stderr.contains(w), "missing {w:?} in:\n{}", o.stderr);
    }
    assert!(!o.stderr.contains("internal error"), "{}", o.stderr);
}

/// Every file under `dir` (not following links) with its type, size and bytes' digest,
/// minus the entries under the `skip` names (relative paths).
pub fn digest(dir: &Path, skip: &[&str]) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    walk(dir, dir, skip, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<PathBuf, String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let rel = p.strip_prefix(root).unwrap().to_path_buf();
        if skip.iter().any(|s| rel.starts_with(s)) {
            continue;
        }
        let m = std::fs::symlink_metadata(&p).unwrap();
        let v = if m.is_dir() {
            walk(root, &p, skip, out);
            "dir".to_string()
        } else if m.is_file() {
            let b = std::fs::read(&p).unwrap_or_default();
            use std::hash::{Hash as _, Hasher as _};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            b.hash(&mut h);
            format!("file {} {:x}", b.len(), h.finish())
        } else if m.file_type().is_symlink() {
            format!("link {:?}", std::fs::read_link(&p).ok())
        } else {
            "other".to_string()
        };
        out.insert(rel, v);
    }
}

/// A core: handshake, then `body` per request (sees `msg`, `p`, `u`).
pub fn core(body: &str) -> String {
    core_with("dpclaims-external/2", body)
}

/// [`core`] whose handshake answers with `protocol`.
pub fn core_with(protocol: &str, body: &str) -> String {
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

pub fn ok_answer() -> &'static str {
    r#"    print(json.dumps({"unit": u, "metrics": {"m": p["sign"] * p["x"]}}), flush=True)"#
}

/// A claim of one external core: three points, two replicates, a negative control.
pub fn spec(id: &str, title: &str) -> String {
    format!(
        r#"id: {id}
title: "{title}"
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
    quick: {{axes: {{x: [1, 2, 4]}}, replicates: 2}}
    full: {{axes: {{x: [1, 2, 4]}}, replicates: 2}}
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

/// A directory with `core.py` (`body` per request) and `claim.yaml`.
pub fn setup(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("core.py"), core(body)).unwrap();
    std::fs::write(
        dir.path().join("claim.yaml"),
        spec("ext-h3", "hardening three"),
    )
    .unwrap();
    dir
}

/// The pids a core recorded in `<dir>/pids/` (one file per core: its pid and its
/// children's).
pub fn recorded_pids(dir: &Path) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir.join("pids")) {
        for e in rd.flatten() {
            let s = std::fs::read_to_string(e.path()).unwrap_or_default();
            out.extend(s.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
        }
    }
    out
}

pub fn alive(pid: i32) -> bool {
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

/// Fails when any of `pids` is still alive a few seconds on (and kills it).
pub fn none_alive(pids: &[i32]) {
    let t0 = Instant::now();
    while pids.iter().any(|p| alive(*p)) && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for p in &left {
        // SAFETY: kill(2) of a test's own leftover.
        unsafe {
            libc::kill(*p, libc::SIGKILL);
        }
    }
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
}

/// A project: `claims/<id>.yaml` for each id (the claim of [`spec`]) and `core.py`,
/// which creates `claims/started` when it starts (so a test sees whether any core ran).
pub fn project(ids: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let core = core(ok_answer()).replacen(
        "first = True\n",
        "first = True\nopen(\"started\", \"a\").close()\n",
        1,
    );
    // The core's command is relative to its spec's directory, and runs there.
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    std::fs::write(dir.path().join("claims/core.py"), core).unwrap();
    for id in ids {
        std::fs::write(
            dir.path().join("claims").join(format!("{id}.yaml")),
            spec(id, id),
        )
        .unwrap();
    }
    dir
}

/// The address space a command refused before any work runs under
/// ([`refused_before_work`]): 1.5 GiB, far below what any refused size would need
/// (hundreds of GB for `--p 1e11`, `--audit-trials 1e11`, an alias bomb), so a refusal
/// that came after allocating would abort ("memory allocation failed", a signal) instead
/// of exiting 2.
pub const REFUSED_ADDRESS_SPACE: u64 = 1536 << 20;

/// Runs `args` in `dir` so that "refused before any work" is shown by what did not
/// happen, never by a wall time (issue 58): under [`REFUSED_ADDRESS_SPACE`], with a
/// result cache of its own in `cache` (every computed unit lands there: see
/// [`computed_units`]), and under [`DEADLINE`] — a hang guard only, no speed promise.
pub fn refused_before_work(dir: &Path, args: &[&str], cache: &Path) -> Out {
    use std::os::unix::process::CommandExt as _;
    let mut c = cmd(dir, args);
    c.env_remove("DPCLAIMS_NO_CACHE")
        .env("DPCLAIMS_CACHE", cache)
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("RAYON_NUM_THREADS", "2");
    // SAFETY: setrlimit in the child between fork and exec: async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: REFUSED_ADDRESS_SPACE,
                rlim_max: REFUSED_ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = wait(c.spawn().expect("start dpclaims"), DEADLINE);
    assert_eq!(
        o.signal, None,
        "{args:?}: killed by a signal (it allocated before refusing?): {}",
        o.stderr
    );
    o
}

/// The unit results in the result cache `cache` (its entries sit two levels under the
/// build's directory; `CACHEDIR.TAG` and `.gitignore` are not units): 0 when no unit was
/// computed.
pub fn computed_units(cache: &Path) -> usize {
    fn files(p: &Path, depth: usize) -> usize {
        let Ok(rd) = std::fs::read_dir(p) else {
            return 0;
        };
        rd.flatten()
            .map(|e| {
                let p = e.path();
                if p.is_dir() {
                    files(&p, depth + 1)
                } else if depth >= 2 {
                    1
                } else {
                    0
                }
            })
            .sum()
    }
    files(cache, 0)
}
