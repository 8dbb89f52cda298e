//! Issue 50, family 7: terminal control characters are escaped in every terminal line
//! that echoes spec text, file names or a core's stderr — `check`, `plan`, `run`,
//! `diff`, `stability` (and `list`, tests/hardening3_names.rs) — through one helper
//! (`report::terminal_text`). Each case checks that the text was echoed (its escaped
//! form is there: the case is not vacuous), that no raw ESC, BEL or bidi override
//! reached the terminal, the exit status, and that nothing outside the output changed.
use super::hardening3_util::{digest, exit2, project, run, spec, Out};

/// No raw control character (newlines and tabs aside) nor bidi override on either
/// stream, and `shown` (the escaped form) on stderr or stdout.
fn escaped(o: &Out, shown: &str) {
    for (name, s) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let raw: Vec<char> = s
            .chars()
            .filter(|c| {
                (c.is_control() && *c != '\n' && *c != '\t')
                    || ('\u{202a}'..='\u{202e}').contains(c)
            })
            .collect();
        assert!(raw.is_empty(), "raw {raw:?} on {name}:\n{s:?}");
    }
    assert!(
        o.stdout.contains(shown) || o.stderr.contains(shown),
        "{shown:?} not echoed:\nstdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
}

/// A project whose claim `ca` sits in a file named with an escape sequence and carries
/// an unknown field (an error that names the file), plus a sound claim `cb`.
fn bad_file_project() -> (tempfile::TempDir, &'static str) {
    let d = project(&["cb"]);
    let text =
        spec("ca", "t\\e[31mred\\a").replace("statement: \"s\"", "statement: \"s\"\nbogus: 1");
    std::fs::write(d.path().join("claims/ca-\u{1b}[31m\u{202e}.yaml"), text).unwrap();
    (d, "ca-\\x1b[31m\\u{202e}.yaml")
}

#[test]
fn check_and_plan_escape_a_file_name_with_escape_sequences() {
    let (d, shown) = bad_file_project();
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["check"]);
    assert_eq!(o.code, Some(2), "{}\n{}", o.stdout, o.stderr);
    escaped(&o, shown);
    let o = run(d.path(), &["plan"]);
    exit2(&o, &["bogus"]);
    escaped(&o, shown);
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

#[test]
fn check_escapes_a_variant_name_with_escape_sequences() {
    let d = project(&["ca"]);
    let text = std::fs::read_to_string(d.path().join("claims/ca.yaml"))
        .unwrap()
        .replace("  - name: main", "  - name: \"ma\\e[31min\\u202e\"");
    std::fs::write(d.path().join("claims/ca.yaml"), text).unwrap();
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["check"]);
    assert_eq!(o.code, Some(2), "{}\n{}", o.stdout, o.stderr);
    escaped(&o, "ma\\u{1b}[31min");
    let o = run(d.path(), &["run", "--no-reports"]);
    exit2(&o, &["ma"]);
    escaped(&o, "ma\\u{1b}[31min");
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

#[test]
fn run_and_stability_escape_a_core_s_stderr_and_a_spec_s_file_name() {
    let d = project(&["ca"]);
    // The core fails its first unit after writing escape sequences to its stderr.
    let core = std::fs::read_to_string(d.path().join("claims/core.py"))
        .unwrap()
        .replace(
            "    print(json.dumps({\"unit\": u, \"metrics\": {\"m\": p[\"sign\"] * p[\"x\"]}}), flush=True)",
            "    sys.stderr.write(\"boom \\x1b[2J\\x1b]0;pwned\\x07\\n\"); sys.stderr.flush()\n    sys.exit(4)",
        );
    std::fs::write(d.path().join("claims/core.py"), core).unwrap();
    let before = digest(d.path(), &["claims/started"]);
    let o = run(d.path(), &["run", "--no-reports"]);
    exit2(&o, &["core `python3 core.py`"]);
    escaped(&o, "boom \\x1b[2J\\x1b]0;pwned\\x07");
    let o = run(
        d.path(),
        &["stability", "--seeds", "1", "--out", "out", "--no-records"],
    );
    exit2(&o, &["core `python3 core.py`"]);
    escaped(&o, "boom \\x1b[2J\\x1b]0;pwned\\x07");
    assert_eq!(
        digest(d.path(), &["claims/started", "out"]),
        before,
        "files changed outside the output"
    );
    // A spec file named with an escape sequence, as the path of a run and a stability.
    let (d, shown) = bad_file_project();
    let before = digest(d.path(), &[]);
    let path = format!("claims/{}", "ca-\u{1b}[31m\u{202e}.yaml");
    let o = run(d.path(), &["run", &path, "--no-reports"]);
    exit2(&o, &["bogus"]);
    escaped(&o, shown);
    let o = run(
        d.path(),
        &["stability", &path, "--seeds", "1", "--out", "out"],
    );
    exit2(&o, &["bogus"]);
    escaped(&o, shown);
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

#[test]
fn diff_escapes_the_names_of_what_it_compares() {
    let d = project(&["ca"]);
    let o = run(d.path(), &["run", "--no-baseline", "--out", "a"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let b = "b-\u{1b}]0;pwned\u{7}";
    std::fs::rename(d.path().join("a"), d.path().join(b)).unwrap();
    let before = digest(d.path(), &[]);
    // The same set on both sides (exit 0): its names are echoed in the header.
    let o = run(d.path(), &["diff", b, b]);
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    escaped(&o, "b-\\x1b]0;pwned\\x07");
    let o = run(d.path(), &["diff", b, b, "--markdown"]);
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    escaped(&o, "b-\\x1b]0;pwned\\x07");
    // A missing side: the error names it.
    let missing = "c-\u{1b}[31m";
    let o = run(d.path(), &["diff", b, missing]);
    exit2(&o, &[]);
    escaped(&o, "c-\\x1b[31m");
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

/// `--require-baseline`'s failure names the baseline directory escaped.
#[test]
fn the_baseline_failure_escapes_the_baseline_directory() {
    let d = project(&["ca"]);
    std::fs::create_dir(d.path().join("ba\u{1b}[31mse")).unwrap();
    let before = digest(d.path(), &["claims/started", "target"]);
    let o = run(
        d.path(),
        &[
            "run",
            "--no-reports",
            "--require-baseline",
            "--baseline",
            "ba\u{1b}[31mse",
        ],
    );
    assert_eq!(o.code, Some(1), "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("FAIL --require-baseline"), "{}", o.stderr);
    escaped(&o, "ba\\x1b[31mse");
    assert_eq!(
        digest(d.path(), &["claims/started", "target"]),
        before,
        "files changed"
    );
}
