//! Issue 58 (hardening, fourth round): a signal during the swap of the report set leaves
//! the old set or the new one, whole (the staging directory has one owner: the thread
//! that swaps it; a signal only marks the run stopped); no user value forges a line on
//! stdout, stderr, in a GitHub annotation or in the job summary (one escaping function,
//! `spec::echo::escape_controls`); and the output minors: `--check-determinism` on a
//! warm cache, `--json --require-baseline`, 240-byte output names, `run -x` and the
//! committed reports, a FIFO in `--out`, SIGXFSZ, the report directory's mode and
//! group, `--json --junit /dev/stdout`. Every case runs under a hang guard
//! (`hardening3_util::wait`), checks the exit status and the message, and no wall time.
use super::hardening3_util::{cmd, digest, wait, Out, DEADLINE};
use crate::sharding::{files, workdir};
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::Stdio;

/// The files of a report set (its `raw/` too), path -> bytes, without those other
/// commands wrote.
fn set_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut f = files(dir);
    f.remove("BENCH.md");
    f.remove("full/SUMMARY.md");
    f
}

/// `reports/` as the complete run A left it, plus files of other commands.
fn reset_to(dir: &Path, a: &BTreeMap<String, Vec<u8>>) {
    let r = dir.join("reports");
    if r.exists() {
        std::fs::remove_dir_all(&r).unwrap();
    }
    std::fs::create_dir_all(r.join("full")).unwrap();
    for (name, bytes) in a {
        let to = r.join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    std::fs::write(r.join("BENCH.md"), "bench").unwrap();
    std::fs::write(r.join("full/SUMMARY.md"), "full").unwrap();
}

/// The sets of seed 1 (A, the old one) and seed 2 (B, what the runs below write) of the
/// sharding tests' two tiny claims, in `dir`.
fn reference_sets(dir: &Path) -> (BTreeMap<String, Vec<u8>>, BTreeMap<String, Vec<u8>>) {
    for (seed, out) in [("1", "ref-a"), ("2", "ref-b")] {
        let o = wait(
            cmd(dir, &["run", "--seed", seed, "--no-baseline", "--out", out])
                .spawn()
                .unwrap(),
            DEADLINE,
        );
        assert!(matches!(o.code, Some(0 | 1)), "{}", o.stderr);
    }
    let (a, b) = (files(&dir.join("ref-a")), files(&dir.join("ref-b")));
    assert_ne!(a["SUMMARY.md"], b["SUMMARY.md"]);
    (a, b)
}

/// After a stopped run: the set is A or B whole, the other commands' files are there, no
/// staging directory is left, nothing else changed. Returns 'A' or 'B'.
fn one_whole_set(
    dir: &Path,
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
    claims: &BTreeMap<std::path::PathBuf, String>,
    what: &str,
) -> char {
    let r = dir.join("reports");
    let got = set_of(&r);
    let which = if &got == a {
        'A'
    } else if &got == b {
        'B'
    } else {
        let missing: Vec<&String> = a.keys().filter(|k| !got.contains_key(*k)).collect();
        panic!(
            "{what}: neither the old set nor the new one: {} files, missing {missing:?}",
            got.len()
        )
    };
    assert_eq!(
        std::fs::read(r.join("BENCH.md")).unwrap(),
        b"bench",
        "{what}"
    );
    assert_eq!(
        std::fs::read(r.join("full/SUMMARY.md")).unwrap(),
        b"full",
        "{what}"
    );
    assert!(
        !dir.join(".reports.dpclaims-staging").exists(),
        "{what}: the staging directory was left behind"
    );
    assert_eq!(
        &digest(&dir.join("claims"), &[]),
        claims,
        "{what}: claims changed"
    );
    which
}

const SIGNALS: [(i32, &str); 3] = [
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGINT, "SIGINT"),
    (libc::SIGHUP, "SIGHUP"),
];

/// A run of seed 2 into `reports/` with the report writer's gate on: reads `k` lines of
/// its stderr (verdict lines and report steps; a step is released only once read), then
/// sends `sig` and closes stdin (every later step passes its gate at once: the run
/// reaches its next step boundary). `None`: every step released, no signal.
fn gated_signalled(dir: &Path, k: Option<usize>, sig: i32) -> (Vec<String>, Out) {
    let mut c = cmd(
        dir,
        &["run", "--seed", "2", "--no-baseline", "--out", "reports"],
    );
    // No periodic progress lines (src/cli/progress.rs): off a terminal one is printed
    // whenever 30 s pass between two units, so a run slowed by a loaded machine printed
    // one more line than the reference run, and every step after it was counted one
    // line late (the run held at the wrong gate, or past the last one: this test's
    // flake). The lines counted are then the run's own, the same at every run.
    c.env("DPCLAIMS_REPORT_GATE", "1")
        .env("DPCLAIMS_PROGRESS_SECONDS", "0")
        .stdin(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let pid = child.id() as i32;
    let mut stdin = Some(child.stdin.take().unwrap());
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut read = Vec::new();
    let mut after = Vec::new();
    loop {
        if Some(read.len()) == k {
            // SAFETY: kill(2) of the test's own child (not yet reaped: its pid is ours).
            unsafe {
                libc::kill(pid, sig);
            }
            // The stop is marked before its line is printed: once the line is read, the
            // run held at a gate sees it at that very step when the gate opens.
            for line in lines.by_ref() {
                let line = line.unwrap();
                let seen = line.contains(" received");
                after.push(line);
                if seen {
                    break;
                }
            }
            drop(stdin.take());
            break;
        }
        let Some(line) = lines.next() else { break };
        let line = line.unwrap();
        read.push(line.clone());
        if line.starts_with("dpclaims-report-step:") && Some(read.len()) != k {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(b"\n");
                let _ = s.flush();
            }
        }
    }
    drop(stdin);
    // The rest of stderr is read after the exit (a few lines: the pipe never fills).
    let mut o = wait(child, DEADLINE);
    after.extend(lines.map_while(Result::ok));
    o.stderr = after.join("\n");
    (read, o)
}

/// Item 2: a SIGTERM, SIGINT or SIGHUP at every step of the swap (held there by the test
/// gate of src/report/set.rs, so no timing is involved) leaves the old set until the
/// exchange and the new one from it on — each whole, the staging directory removed —
/// and the run exits 128 + the signal.
#[test]
fn a_signal_at_every_step_of_the_swap_leaves_one_whole_set() {
    let w = workdir();
    let dir = w.path();
    let (a, b) = reference_sets(dir);
    let claims = digest(&dir.join("claims"), &[]);
    reset_to(dir, &a);
    let (progress, o) = gated_signalled(dir, None, 0);
    assert!(matches!(o.code, Some(0 | 1)), "{}", o.stderr);
    let total = progress.len();
    assert!(total >= 20, "only {total} progress lines: {progress:?}");
    assert_eq!(set_of(&dir.join("reports")), b);
    let exchange = progress
        .iter()
        .position(|l| l == "dpclaims-report-step: exchange")
        .expect("an exchange step");
    let done = progress
        .iter()
        .position(|l| l == "dpclaims-report-step: done")
        .expect("a done step");
    let mut seen = String::new();
    for k in 0..=total {
        let (sig, name) = SIGNALS[k % 3];
        reset_to(dir, &a);
        let (_, o) = gated_signalled(dir, Some(k), sig);
        let what = format!("{name} after {k} of {total} progress lines");
        if k == 0 && o.signal == Some(sig) {
            // Before its first line the run may not have installed its handlers yet: the
            // signal's default action ended it, before it wrote anything.
        } else if k <= done {
            // Held at a gate (or computing before the first): the signal always stops it.
            assert_eq!(o.code, Some(128 + sig), "{what}: {}", o.stderr);
            assert!(
                o.stderr.contains(&format!("{name} received")),
                "{what}: {}",
                o.stderr
            );
            assert!(!o.stderr.contains("error:"), "{what}: {}", o.stderr);
        } else {
            // Past the last gate the run may end before the signal arrives.
            assert!(
                matches!(o.code, Some(0 | 1)) || o.code == Some(128 + sig),
                "{what}: {:?} {}",
                o.code,
                o.stderr
            );
        }
        seen.push(one_whole_set(dir, &a, &b, &claims, &what));
    }
    // Old until the exchange (held at its gate, the swap is abandoned), new from the
    // step after it on (the swap is finished).
    assert_eq!(
        seen,
        "A".repeat(exchange + 2) + &"B".repeat(total - exchange - 1),
        "{progress:?}"
    );
}

/// A signal while units compute ends the run with 128 + the signal, never by a crash:
/// the stop used to `exit` from the signal thread, which ran OpenBLAS's destructor under
/// a worker still in `cblas_ddot`, and the run died of SIGSEGV (src/cli/signals.rs,
/// `exit_once`; 7 of 100 runs of the test above under load). 120 stops after the
/// first or second verdict line (the units of the second claim computing; the report
/// gate holds the run before its set, so it never ends first); each must end 128 + the
/// signal with the stop's line, and leave the old set whole. Catches the old crash with
/// a probability, not always (its timing is the machine's).
#[test]
fn a_signal_while_units_compute_ends_the_run_by_its_status_never_a_crash() {
    let w = workdir();
    let dir = w.path();
    let (a, b) = reference_sets(dir);
    let claims = digest(&dir.join("claims"), &[]);
    for i in 0..120 {
        let (sig, name) = SIGNALS[i % 3];
        reset_to(dir, &a);
        let (_, o) = gated_signalled(dir, Some(1 + i % 2), sig);
        let what = format!("round {i}: {name}");
        assert_eq!(
            (o.code, o.signal),
            (Some(128 + sig), None),
            "{what}: {}",
            o.stderr
        );
        assert!(o.stderr.contains(&format!("{name} received")), "{what}");
        assert_eq!(one_whole_set(dir, &a, &b, &claims, &what), 'A', "{what}");
    }
}

/// Item 2: signals at pseudo-random moments of a whole run (no gate), repeated a bounded
/// number of times: each run leaves the old set or the new one, whole, and no staging
/// directory. The moments spread over the run's length, most near its end where the
/// set is written; which set each run left is printed, not asserted (the timing is the
/// machine's).
#[test]
fn signals_at_random_moments_leave_one_whole_set() {
    const RUNS: usize = 16;
    let w = workdir();
    let dir = w.path();
    let (a, b) = reference_sets(dir);
    let claims = digest(&dir.join("claims"), &[]);
    // One whole run's length on this machine, as the scale of the moments (measured,
    // never asserted).
    reset_to(dir, &a);
    let t0 = std::time::Instant::now();
    let o = wait(
        cmd(
            dir,
            &["run", "--seed", "2", "--no-baseline", "--out", "reports"],
        )
        .spawn()
        .unwrap(),
        DEADLINE,
    );
    let scale = t0.elapsed();
    assert!(matches!(o.code, Some(0 | 1)), "{}", o.stderr);
    assert_eq!(set_of(&dir.join("reports")), b);
    // A fixed linear congruential sequence: the same moments at every invocation.
    let mut x: u64 = 0x5eed_0058;
    let mut seen = String::new();
    for i in 0..RUNS {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        // Half of the moments in the last 40% of the run, the others anywhere in it.
        let f = if i % 2 == 0 { 0.6 + 0.5 * u } else { 1.1 * u };
        let (sig, name) = SIGNALS[i % 3];
        reset_to(dir, &a);
        let mut c = cmd(
            dir,
            &["run", "--seed", "2", "--no-baseline", "--out", "reports"],
        );
        c.stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        std::thread::sleep(scale.mul_f64(f));
        // SAFETY: kill(2) of the test's own child (not yet reaped: its pid is ours).
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let o = wait(child, DEADLINE);
        let what = format!("run {i}: {name} at {f:.2} of the run");
        // A signal before the handlers are installed (the first instants) ends the
        // process by its default action, before it writes anything.
        assert!(
            matches!(o.code, Some(0 | 1)) || o.code == Some(128 + sig) || o.signal == Some(sig),
            "{what}: {:?} {:?} {}",
            o.code,
            o.signal,
            o.stderr
        );
        if o.code == Some(128 + sig) {
            assert!(o.stderr.contains(&format!("{name} received")), "{what}");
        }
        seen.push(one_whole_set(dir, &a, &b, &claims, &what));
    }
    println!("signals at random moments: {seen} (A: the old set, B: the new one)");
}

/// The tiny claim with a newline and a forged workflow command in its values.
fn forging_claim(id: &str) -> String {
    crate::util::tiny_rf_claim(&format!(
        "\nid: {id}\ntitle: \"t\\n::warning file=x::FORGED-TITLE\"\n\
         source: {{paper: \"p\\n::warning file=x::FORGED-PAPER\", section: \"s\\n## FORGED-SECTION\", equation: \"e\\r::warning file=x::FORGED-EQ\"}}\n\
         statement: \"s\\n::warning file=x::FORGED-STATEMENT\"\n"
    ))
    .replace(
        "tolerance_reason: \"test only\"",
        "tolerance_reason: \"x\\n::warning file=x::FORGED-REASON\"",
    )
}

/// No line of `text` is a workflow command dpclaims did not write (its own annotations
/// name `file` and start with `::error ` or `::warning `), and every `FORGED` marker
/// sits inside a line, after an escaped line break.
fn no_forged_line(name: &str, text: &str, own_file: &str) {
    for line in text.split(['\n', '\r']) {
        let t = line.trim_start();
        if t.starts_with("::") {
            assert!(
                t.starts_with(&format!("::error file={own_file},"))
                    || t.starts_with(&format!("::warning file={own_file},")),
                "{name}: a forged workflow command: {line:?}"
            );
        }
        assert!(
            !t.starts_with("## FORGED") && !t.starts_with("FORGED"),
            "{name}: a forged line: {line:?}"
        );
    }
}

/// Item 3: under GitHub Actions, spec values and an `--out` holding a newline (or a
/// carriage return) forge no line: not on stdout, not on stderr, not in an annotation,
/// not in the job summary; each shows escaped (`\x0a`) where it is echoed.
#[test]
fn no_user_value_forges_a_workflow_command_or_a_summary_line() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("tiny.yaml"), forging_claim("tiny")).unwrap();
    let out = "out\n::warning file=o::FORGED-OUT\r## FORGED-OUT-CR";
    let before = digest(d.path(), &[out]);
    let mut c = cmd(
        d.path(),
        &["run", "tiny.yaml", "--no-baseline", "--out", out],
    );
    c.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", d.path().join("summary.md"));
    let o = wait(c.spawn().unwrap(), DEADLINE);
    assert!(matches!(o.code, Some(0 | 1)), "{:?}: {}", o.code, o.stderr);
    let summary = std::fs::read_to_string(d.path().join("summary.md")).unwrap();
    for (name, text) in [
        ("stdout", &o.stdout),
        ("stderr", &o.stderr),
        ("summary", &summary),
    ] {
        no_forged_line(name, text, "tiny.yaml");
    }
    // Echoed, escaped (the cases are not vacuous).
    assert!(
        o.stdout
            .contains("reports in out\\x0a::warning file=o::FORGED-OUT\\x0d## FORGED-OUT-CR"),
        "{}",
        o.stdout
    );
    // The section's line break is folded inside its table row.
    assert!(
        summary
            .lines()
            .filter(|l| l.contains("FORGED-SECTION"))
            .all(|l| l.starts_with("| `tiny` |")),
        "{summary}"
    );
    assert!(summary.contains("FORGED-SECTION"), "{summary}");
    assert!(o.stdout.contains("FORGED-REASON"), "{}", o.stdout);
    // The set went where it was asked, and nothing else changed.
    assert!(d.path().join(out).join("tiny.md").is_file());
    let mut after = digest(d.path(), &[out]);
    after.remove(Path::new("summary.md"));
    assert_eq!(after, before);

    // A run that stops with exit 2 on such a value, and a spec file whose name holds
    // one: the error line, its annotation and its summary stay one line each.
    let bad = forging_claim("bad").replace(
        "metric: train_loss",
        "metric: \"train_loss\\n::warning file=x::FORGED-METRIC\"",
    );
    let named = "bad\n::warning file=y::FORGED-FILE.yaml";
    std::fs::write(d.path().join("bad.yaml"), &bad).unwrap();
    std::fs::write(d.path().join(named), &bad).unwrap();
    for (file, own) in [
        ("bad.yaml", "bad.yaml"),
        (named, "bad%0A%3A%3Awarning file=y%3A%3AFORGED-FILE.yaml"),
    ] {
        let summary = d.path().join("summary2.md");
        let _ = std::fs::remove_file(&summary);
        let mut c = cmd(
            d.path(),
            &[
                "run",
                file,
                "--no-baseline",
                "--out",
                "out2",
                "--junit",
                "j.xml",
            ],
        );
        c.env("GITHUB_ACTIONS", "true")
            .env("GITHUB_STEP_SUMMARY", &summary);
        let o = wait(c.spawn().unwrap(), DEADLINE);
        assert_eq!(o.code, Some(2), "{file:?}: {}", o.stderr);
        assert!(o.stderr.contains("FORGED-METRIC"), "{}", o.stderr);
        let summary = std::fs::read_to_string(&summary).unwrap();
        assert!(summary.contains("the run stopped (exit 2)"), "{summary}");
        for (name, text) in [
            ("stdout", &o.stdout),
            ("stderr", &o.stderr),
            ("summary", &summary),
        ] {
            no_forged_line(&format!("{file:?} {name}"), text, own);
        }
        // Outside a line of its own: the error line is one line.
        assert_eq!(o.stderr.trim_end().lines().count(), 1, "{}", o.stderr);
    }
}

/// The escaping function itself: every control character, the line breaks included, is
/// shown; a line that starts with `::` cannot leave `terminal_text` as a command.
#[test]
fn one_function_escapes_a_user_value_and_no_terminal_line_is_a_command() {
    use dpclaims::report::{escape_controls, terminal_text};
    assert_eq!(
        escape_controls("a\nb\rc\td\u{1b}"),
        "a\\x0ab\\x0dc\\x09d\\x1b"
    );
    assert_eq!(escape_controls("plain"), "plain");
    assert_eq!(
        terminal_text("error: x\n  ::warning file=a::b\nok"),
        "error: x\n  \\x3a:warning file=a::b\nok"
    );
    assert_eq!(terminal_text("two\nlines"), "two\nlines");
}

/// Item 4: `--check-determinism` on a warm result cache asks the cores again (and says
/// that the cache is not used) instead of reading every unit from the cache and
/// checking nothing.
#[test]
fn check_determinism_on_a_warm_cache_asks_the_cores_again() {
    // A core that logs every unit it is asked for, declared by its file (so its units
    // are cached).
    let d = tempfile::tempdir().unwrap();
    let body = format!(
        "    open(\"asked\", \"a\").write(u + \"\\n\")\n{}",
        super::hardening3_util::ok_answer()
    );
    std::fs::write(
        d.path().join("core.py"),
        super::hardening3_util::core(&body),
    )
    .unwrap();
    std::fs::write(
        d.path().join("claim.yaml"),
        super::hardening3_util::spec("cd", "cd")
            .replace("  timeout_s: 30", "  timeout_s: 30\n  files: [core.py]"),
    )
    .unwrap();
    let cache = d.path().join("cache");
    let asked = d.path().join("asked");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "claim.yaml", "--no-reports", "--no-baseline"];
        args.extend_from_slice(extra);
        let mut c = cmd(d.path(), &args);
        c.env_remove("DPCLAIMS_NO_CACHE")
            .env("DPCLAIMS_CACHE", &cache);
        wait(c.spawn().unwrap(), DEADLINE)
    };
    let o = run(&[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(asked.exists(), "no unit asked: {}", o.stderr);
    std::fs::remove_file(&asked).unwrap();
    // Warm: a plain run reads every unit from the cache and asks the core for none.
    let o = run(&[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!asked.exists(), "the cache was not warm");
    let o = run(&["--check-determinism"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let n = std::fs::read_to_string(&asked)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(
        n > 12,
        "--check-determinism asked {n} units (12 units, a sample twice)"
    );
    assert!(
        o.stderr
            .contains("--check-determinism: the result cache is not used"),
        "{}",
        o.stderr
    );
}

/// Item 4: `run --json --require-baseline` without a snapshot exits 1, and its document
/// says why in `tally.problems` (it said `problems: []`).
#[test]
fn json_with_require_baseline_lists_the_failure_in_problems() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("rb.yaml"),
        crate::util::tiny_rf_claim_named("rb"),
    )
    .unwrap();
    std::fs::create_dir(d.path().join("snaps")).unwrap();
    let o = wait(
        cmd(
            d.path(),
            &[
                "run",
                "rb.yaml",
                "--no-reports",
                "--json",
                "--require-baseline",
                "--baseline",
                "snaps",
            ],
        )
        .spawn()
        .unwrap(),
        DEADLINE,
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let doc: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON document");
    let problems = doc["tally"]["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().unwrap().contains("--require-baseline")),
        "{problems:?}"
    );
}

/// Item 4: a legal name of 240 bytes for `--out` and `--junit`: the run writes them (the
/// temporary and staging names are shortened to fit NAME_MAX) and leaves no debris.
#[test]
fn a_240_byte_output_name_is_written() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("long.yaml"),
        crate::util::tiny_rf_claim_named("long"),
    )
    .unwrap();
    let out = "o".repeat(240);
    let junit = format!("{}.xml", "j".repeat(236));
    assert_eq!(junit.len(), 240);
    for round in 0..2 {
        let o = wait(
            cmd(
                d.path(),
                &[
                    "run",
                    "long.yaml",
                    "--no-baseline",
                    "--out",
                    &out,
                    "--junit",
                    &junit,
                ],
            )
            .spawn()
            .unwrap(),
            DEADLINE,
        );
        assert!(matches!(o.code, Some(0 | 1)), "round {round}: {}", o.stderr);
        assert!(d.path().join(&out).join("long.md").is_file());
        assert!(std::fs::read_to_string(d.path().join(&junit))
            .unwrap()
            .contains("<testsuites"));
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with('.')),
            "debris: {names:?}"
        );
    }
}

/// Item 4: `run -x` (`--fail-fast`) that stops early leaves the report set as it was: a
/// set written from part of the selection would replace the committed one.
#[test]
fn fail_fast_stopping_early_leaves_the_report_set_alone() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("claims")).unwrap();
    for id in ["ff-a", "ff-b"] {
        // The tiny claim at seed 0: its negative control is not caught (exit 1).
        std::fs::write(
            d.path().join(format!("claims/{id}.yaml")),
            crate::util::tiny_rf_claim_named(id),
        )
        .unwrap();
    }
    std::fs::create_dir(d.path().join("out")).unwrap();
    std::fs::write(d.path().join("out/SUMMARY.md"), "the committed set").unwrap();
    let before = digest(d.path(), &[]);
    let o = wait(
        cmd(
            d.path(),
            &["run", "-x", "claims", "--no-baseline", "--out", "out"],
        )
        .spawn()
        .unwrap(),
        DEADLINE,
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("--fail-fast: stopped after claim"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("the report set in out is left as it was"),
        "{}",
        o.stderr
    );
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

/// Item 4: a run refused for a FIFO in `--out` (exit 2) still gives CI its outputs: the
/// JUnit error case, the annotation and the job summary.
#[test]
fn a_fifo_in_out_is_refused_with_the_ci_outputs() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("fi.yaml"),
        crate::util::tiny_rf_claim_named("fi"),
    )
    .unwrap();
    std::fs::create_dir(d.path().join("out")).unwrap();
    let fifo = std::ffi::CString::new(d.path().join("out/pipe").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let mut c = cmd(
        d.path(),
        &[
            "run",
            "fi.yaml",
            "--no-baseline",
            "--out",
            "out",
            "--junit",
            "j.xml",
        ],
    );
    c.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", d.path().join("summary.md"));
    let o = wait(c.spawn().unwrap(), DEADLINE);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("a named pipe"), "{}", o.stderr);
    let junit = std::fs::read_to_string(d.path().join("j.xml")).unwrap();
    assert!(
        junit.contains("<error") && junit.contains("named pipe"),
        "{junit}"
    );
    assert!(o.stdout.contains("::error "), "{}", o.stdout);
    let summary = std::fs::read_to_string(d.path().join("summary.md")).unwrap();
    assert!(summary.contains("the run stopped (exit 2)"), "{summary}");
    assert!(!d.path().join("out/fi.md").exists());
}

/// Item 4: a file past `ulimit -f` (SIGXFSZ, ignored) is a write error naming what was
/// written (exit 2), not a silent death by the signal.
#[test]
fn a_file_size_limit_is_a_write_error_not_a_silent_death() {
    use std::os::unix::process::CommandExt as _;
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("fs.yaml"),
        crate::util::tiny_rf_claim_named("fs"),
    )
    .unwrap();
    let mut c = cmd(
        d.path(),
        &["run", "fs.yaml", "--no-baseline", "--out", "out"],
    );
    // SAFETY: setrlimit in the child between fork and exec: async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 512,
                rlim_max: 512,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = wait(c.spawn().unwrap(), DEADLINE);
    assert_eq!(o.signal, None, "killed by a signal: {}", o.stderr);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.stderr.contains("writing reports to out") && o.stderr.contains("too large"),
        "{}",
        o.stderr
    );
    assert!(!d.path().join("out/fs.md").exists());
}

/// Item 4: the report directory keeps its mode and its group when the run replaces it.
#[test]
fn a_report_directory_keeps_its_mode_and_group() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("mg.yaml"),
        crate::util::tiny_rf_claim_named("mg"),
    )
    .unwrap();
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o2750)).unwrap();
    // A group other than the process's own when one can be given (root, or a
    // supplementary group), else the own one (the mode is still checked).
    // SAFETY: getegid/getuid take no arguments.
    let (egid, root) = unsafe { (libc::getegid(), libc::getuid() == 0) };
    let mut groups = vec![0 as libc::gid_t; 64];
    // SAFETY: getgroups writes at most `groups.len()` entries into the buffer.
    let n = unsafe { libc::getgroups(groups.len() as i32, groups.as_mut_ptr()) };
    groups.truncate(n.max(0) as usize);
    let other = if root {
        Some(egid + 4242)
    } else {
        groups.iter().copied().find(|g| *g != egid)
    };
    if let Some(g) = other {
        std::os::unix::fs::chown(&out, None, Some(g)).unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o2750)).unwrap();
    }
    let before = std::fs::metadata(&out).unwrap();
    let o = wait(
        cmd(
            d.path(),
            &["run", "mg.yaml", "--no-baseline", "--out", "out"],
        )
        .spawn()
        .unwrap(),
        DEADLINE,
    );
    assert!(matches!(o.code, Some(0 | 1)), "{}", o.stderr);
    let after = std::fs::metadata(&out).unwrap();
    assert!(out.join("mg.md").is_file());
    assert_eq!(after.mode() & 0o7777, before.mode() & 0o7777, "mode");
    assert_eq!(after.gid(), before.gid(), "group");
    assert_ne!(after.ino(), before.ino(), "the set was not swapped");
}

/// Item 4: `--json` makes stdout one document: `--junit /dev/stdout` (or a path to the
/// file stdout goes to) would mix a second one into it; refused before any work.
#[test]
fn json_with_junit_on_stdout_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("js.yaml"),
        crate::util::tiny_rf_claim_named("js"),
    )
    .unwrap();
    let before = digest(d.path(), &[]);
    for junit in ["/dev/stdout", "/dev/fd/1"] {
        let o = wait(
            cmd(
                d.path(),
                &[
                    "run",
                    "js.yaml",
                    "--no-baseline",
                    "--json",
                    "--junit",
                    junit,
                ],
            )
            .spawn()
            .unwrap(),
            DEADLINE,
        );
        assert_eq!(o.code, Some(2), "{junit}: {}", o.stderr);
        assert!(
            o.stderr.contains("--junit") && o.stderr.contains("standard output"),
            "{}",
            o.stderr
        );
        assert_eq!(o.stdout, "", "{junit}");
    }
    // The file stdout is redirected to, named as --junit.
    let file = d.path().join("both.txt");
    let mut c = cmd(
        d.path(),
        &[
            "run",
            "js.yaml",
            "--no-baseline",
            "--json",
            "--junit",
            "both.txt",
        ],
    );
    c.stdout(std::fs::File::create(&file).unwrap());
    let o = wait(c.spawn().unwrap(), DEADLINE);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("standard output"), "{}", o.stderr);
    assert_eq!(std::fs::read(&file).unwrap(), b"");
    std::fs::remove_file(&file).unwrap();
    assert_eq!(digest(d.path(), &[]), before, "files changed");
    assert!(!d.path().join("reports").exists());
}
