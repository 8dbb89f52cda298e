//! Issue 50, family 3: the YAML alias budget fires on the real doubling-alias shape — a
//! few kilobytes whose anchors each alias the previous one twice, with a wide first
//! anchor so that serde_yaml's own repetition limit (100 replays per event) does *not*
//! fire first — for `list`, `check`, `plan` and `run`, under a memory limit (1.5 GiB of
//! address space: the expansion needs several GB, so without the budget the process
//! aborts instead of exiting 2).
use super::hardening3_util::{cmd, digest, exit2, wait};
use std::os::unix::process::CommandExt as _;
use std::time::Duration;

/// `levels` doubling anchors over a first anchor of 1000 scalars: 1000 * 2^levels nodes,
/// inside a prediction (whose map the loader reads whole: the expansion is built).
/// Measured with the build before this fix under `ulimit -v 1.5 GiB`: `list` and `plan`
/// of `doubling(15)` abort with "memory allocation failed" (exit 134).
fn doubling(levels: usize) -> String {
    let mut s = String::from("id: bomb\ntitle: \"t\"\npredictions:\n  - a0: &a0 [");
    s.push_str(&vec!["x"; 1000].join(","));
    s.push_str("]\n");
    for i in 1..=levels {
        s.push_str(&format!("    a{i}: &a{i} [*a{}, *a{}]\n", i - 1, i - 1));
    }
    s
}

fn limited(dir: &std::path::Path, args: &[&str]) -> super::hardening3_util::Out {
    let mut c = cmd(dir, args);
    c.env("OPENBLAS_NUM_THREADS", "1")
        .env("RAYON_NUM_THREADS", "2");
    // SAFETY: setrlimit in the child between fork and exec: async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1536 << 20,
                rlim_max: 1536 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    wait(c.spawn().unwrap(), Duration::from_secs(60))
}

#[test]
fn the_doubling_alias_spec_is_about_four_kilobytes_and_past_the_budget() {
    let text = doubling(15);
    assert!(text.len() < 4096, "{} bytes", text.len());
    // Typed: the library's check says so itself, whatever the message's words.
    assert_eq!(
        dpclaims::fsio::yaml::aliases_within_budget(&text),
        Err(dpclaims::fsio::yaml::AliasBudgetExceeded)
    );
    // Negative control: the same shape with a few levels is within the budget.
    assert_eq!(
        dpclaims::fsio::yaml::aliases_within_budget(&doubling(4)),
        Ok(())
    );
}

fn bomb_case(command: &str) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("bomb.yaml"), doubling(15)).unwrap();
    let before = digest(d.path(), &[]);
    let mut args = vec![command, "bomb.yaml"];
    if command == "run" {
        args.extend(["--out", "out"]);
    }
    let o = limited(d.path(), &args);
    assert_eq!(o.signal, None, "killed by a signal: {}", o.stderr);
    if command == "check" {
        // `check` lists its findings and exits 1 or 2; the finding is the budget's.
        assert!(
            matches!(o.code, Some(1 | 2)),
            "{:?}: {}{}",
            o.code,
            o.stdout,
            o.stderr
        );
        let all = format!("{}{}", o.stdout, o.stderr);
        assert!(all.contains("once its aliases"), "{all}");
    } else {
        exit2(&o, &["bomb.yaml", "once its aliases"]);
    }
    assert_eq!(digest(d.path(), &["out"]), before, "files changed");
}

#[test]
fn list_refuses_the_doubling_alias_spec_under_a_memory_limit() {
    bomb_case("list");
}

#[test]
fn check_refuses_the_doubling_alias_spec_under_a_memory_limit() {
    bomb_case("check");
}

#[test]
fn plan_refuses_the_doubling_alias_spec_under_a_memory_limit() {
    bomb_case("plan");
}

#[test]
fn run_refuses_the_doubling_alias_spec_under_a_memory_limit() {
    bomb_case("run");
}

#[test]
fn a_small_doubling_spec_is_not_refused_by_the_budget() {
    // Negative control of the four cases: the budget names only what is over it.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("bomb.yaml"), doubling(3)).unwrap();
    let o = limited(d.path(), &["list", "bomb.yaml"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(!o.stderr.contains("once its aliases"), "{}", o.stderr);
}
