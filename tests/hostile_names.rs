//! Hostile inputs, second round (issue 32): names, numbers, environment, standard
//! output, Slurm scripts and the HTML pages. Every case runs the built binary under a
//! timeout, checks its exit status and message, that it did not panic, and (where the
//! case could write) that nothing outside its output directory changed.
use crate::util::{tiny_rf_claim, tiny_rf_claim_named};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Runs `dpclaims args` in `dir` with `env` set, killed (and the case failed) after 120 s.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dpclaims"));
    cmd.env("DPCLAIMS_NO_CACHE", "1")
        .env_remove("DPCLAIMS_SEED")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("start dpclaims");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("wait for dpclaims"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            panic!("dpclaims {args:?} hung (killed after 120 s)");
        }
    }
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2, no panic, and the message contains every one of `needles`.
fn bad_input(o: &Output, needles: &[&str]) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert!(
        !e.contains("panicked") && !e.contains("internal error"),
        "{e}"
    );
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
}

/// Every file under `dir` with its bytes (to see that nothing changed).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.display().to_string(),
                    std::fs::read(&p).unwrap_or_default(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn spec_with_id(id: &str) -> String {
    tiny_rf_claim_named(id)
}

/// The tiny claim with its text edited by `edit`.
fn edited(id: &str, edit: impl Fn(String) -> String) -> String {
    edit(spec_with_id(id))
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn reserved_and_unsafe_claim_ids_are_refused_at_load() {
    let t = tempfile::tempdir().unwrap();
    let cases: Vec<(String, &str)> = vec![
        ("index".into(), "reserved"),
        ("summary".into(), "reserved"),
        ("verdicts".into(), "reserved"),
        ("scorecard-x".into(), "reserved"),
        ("x".repeat(300), "more than 64"),
        ("Upper".into(), "contains"),
        ("-lead".into(), "start"),
        ("a_b".into(), "contains"),
    ];
    for (id, why) in cases {
        let f = write(t.path(), "c.yaml", &spec_with_id(&format!("{id:?}")));
        for args in [
            vec!["list", &f],
            vec!["plan", &f],
            vec!["run", &f, "--out", "out"],
        ] {
            let o = run(t.path(), &args, &[]);
            bad_input(&o, &["id", why]);
        }
        assert!(!t.path().join("out").exists(), "{id}: wrote reports");
    }
}

#[test]
fn unsafe_variant_prediction_and_sweep_names_are_refused_at_load() {
    let t = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        // A newline would split the verdict line; a leading '=' is a spreadsheet formula.
        (
            "variant newline",
            r#"- name: "prop\n22""#.into(),
            "variants[0].name",
        ),
        (
            "variant formula",
            r#"- name: "=1+1""#.into(),
            "variants[0].name",
        ),
        (
            "variant plus",
            r#"- name: "+cmd""#.into(),
            "variants[0].name",
        ),
        ("variant at", r#"- name: "@sum""#.into(), "variants[0].name"),
        (
            "variant html",
            r#"- name: "<b>x</b>""#.into(),
            "variants[0].name",
        ),
        // A Cyrillic 'р' that prints like the Latin 'p'.
        (
            "variant look-alike",
            "- name: \"\u{440}rop22\"".into(),
            "variants[0].name",
        ),
        (
            "variant long",
            format!("- name: {}", "v".repeat(65)),
            "variants[0].name",
        ),
        (
            "variant comma",
            r#"- name: "a,b""#.into(),
            "variants[0].name",
        ),
    ];
    for (what, line, field) in cases {
        let text = edited("c", |s| s.replacen("- name: prop22", &line, 1));
        assert_ne!(text, spec_with_id("c"), "{what}: edit did not apply");
        let f = write(t.path(), "c.yaml", &text);
        bad_input(&run(t.path(), &["list", &f], &[]), &[field]);
    }
    let text = edited("c", |s| s.replacen("name: vs-n", "name: \"vs n\"", 1));
    let f = write(t.path(), "c.yaml", &text);
    bad_input(
        &run(t.path(), &["plan", &f], &[]),
        &["predictions[0].name", "contains"],
    );
    let text = edited("c", |s| s.replacen("  vs_n:\n", "  \"vs\\nn\":\n", 1));
    let f = write(t.path(), "c.yaml", &text);
    bad_input(&run(t.path(), &["plan", &f], &[]), &["sweeps."]);
}

#[test]
fn hidden_and_editor_files_in_a_claims_directory_are_skipped() {
    let t = tempfile::tempdir().unwrap();
    let claims = t.path().join("claims");
    std::fs::create_dir(&claims).unwrap();
    write(&claims, "good.yaml", &spec_with_id("good"));
    // An emacs lock file, an emacs autosave, a hidden copy: none of them a claim (and
    // none of them valid YAML).
    write(&claims, ".#good.yaml", "user@host.1234:1700000000");
    write(&claims, "#good.yaml#", "id: [unclosed");
    write(&claims, ".good.yaml", "id: [unclosed");
    let o = run(t.path(), &["list", "claims"], &[]);
    assert!(o.status.success(), "{}", err(&o));
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(listed.contains("good"), "{listed}");
    assert_eq!(listed.matches("noise term along n").count(), 1, "{listed}");
}

#[test]
fn ids_read_back_from_an_old_verdicts_file_are_validated() {
    let t = tempfile::tempdir().unwrap();
    let f = write(t.path(), "c.yaml", &spec_with_id("c"));
    let out = t.path().join("reports");
    std::fs::create_dir(&out).unwrap();
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    write(&outside, "keep.md", "untouched");
    let before = snapshot(&outside);
    for id in [
        "../outside/keep",
        "<script>alert(1)</script>",
        "index",
        "a\nb",
    ] {
        let doc = serde_json::json!({
            "profile": "quick", "seed": 0, "engine": "x",
            "claims": [{"id": id, "results": []}],
        });
        std::fs::write(out.join("verdicts.json"), doc.to_string()).unwrap();
        let o = run(t.path(), &["run", &f, "--out", "reports"], &[]);
        bad_input(&o, &["verdicts.json", "claim id"]);
        assert_eq!(snapshot(&outside), before, "{id}");
        assert!(
            !out.join("SUMMARY.md").exists(),
            "{id}: the set was written"
        );
    }
}

#[test]
fn a_non_finite_right_hand_side_is_bad_input_not_a_caught_control() {
    // The control is judged by `finite` too; its right-hand side is NaN (sqrt of a
    // negative number) there and 1e12 on the main variant. NaN compares false with
    // everything, so it used to read as "refuted": a caught control, exit 0.
    let t = tempfile::tempdir().unwrap();
    let text = edited("c", |s| {
        s.replace("caught_by: [vs-n]", "caught_by: [vs-n, finite]")
            .replace("rhs: \"1.0e12\"", "rhs: \"1.0e12 + sqrt(1 - sigma_scale)\"")
    });
    assert!(text.contains("sqrt(1 - sigma_scale)") && text.contains("[vs-n, finite]"));
    let f = write(t.path(), "c.yaml", &text);
    let o = run(t.path(), &["run", &f, "--out", "out", "--no-baseline"], &[]);
    let e = err(&o);
    bad_input(&o, &["c", "finite", "noise-grows-with-n"]);
    assert!(e.contains("NaN") || e.contains("not a finite"), "{e}");
    assert!(e.contains("point"), "the point is named: {e}");
    // An infinite right-hand side (ln 0) on the main variant: also bad input.
    let text = edited("c", |s| {
        s.replace("rhs: \"1.0e12\"", "rhs: \"-ln(sigma_scale - 1)\"")
    });
    let f = write(t.path(), "c.yaml", &text);
    let o = run(
        t.path(),
        &["run", &f, "--out", "out2", "--no-baseline"],
        &[],
    );
    bad_input(&o, &["finite", "prop22"]);
    assert!(!t.path().join("out2/SUMMARY.md").exists());
}

#[test]
fn environment_variables_are_named_when_their_values_are_bad() {
    let t = tempfile::tempdir().unwrap();
    let f = write(t.path(), "c.yaml", &spec_with_id("c"));
    for (var, value, cmd) in [
        ("DPCLAIMS_SEED", "abc", "run"),
        ("DPCLAIMS_SEED", "-1", "run"),
        ("DPCLAIMS_MAX_HOURS", "abc", "run"),
        ("DPCLAIMS_MAX_MEMORY_GB", "lots", "plan"),
        ("DPCLAIMS_NO_CACHE", "maybe", "run"),
    ] {
        let args: Vec<&str> = if cmd == "run" {
            vec![cmd, &f, "--no-reports"]
        } else {
            vec![cmd, &f]
        };
        let o = run(t.path(), &args, &[(var, value)]);
        bad_input(&o, &[var]);
        assert!(
            !err(&o).contains("'--"),
            "names a flag the user never typed: {}",
            err(&o)
        );
    }
    // A flag typed on the command line is named as the flag.
    let o = run(t.path(), &["run", &f, "--no-reports", "--seed", "x"], &[]);
    bad_input(&o, &["--seed"]);
    for (var, value) in [
        ("DPCLAIMS_PROGRESS_SECONDS", "1e300"),
        ("DPCLAIMS_PROGRESS_SECONDS", "-1"),
        ("DPCLAIMS_PROGRESS_SECONDS", "NaN"),
        ("DPCLAIMS_PROGRESS_SECONDS", "soon"),
        ("RAYON_NUM_THREADS", "many"),
        ("RAYON_NUM_THREADS", "-3"),
    ] {
        let o = run(t.path(), &["run", &f, "--no-reports"], &[(var, value)]);
        bad_input(&o, &[var]);
    }
}

#[test]
fn a_huge_thread_count_is_clamped_with_a_note() {
    let t = tempfile::tempdir().unwrap();
    let f = write(t.path(), "c.yaml", &spec_with_id("c"));
    let o = run(t.path(), &["list", &f], &[("RAYON_NUM_THREADS", "100000")]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("using 256 threads"), "{}", err(&o));
}

#[test]
fn absurd_durations_are_refused_not_a_panic() {
    let t = tempfile::tempdir().unwrap();
    let marker = t.path().join("core-started");
    let core = format!("touch {}", marker.display());
    for timeout in ["1e300", "inf", "0", "-5", "86401"] {
        let o = run(
            t.path(),
            &[
                "audit",
                "--system",
                "external",
                "--command",
                &core,
                "--timeout-s",
                timeout,
                "--trials",
                "10",
            ],
            &[],
        );
        // clap refuses "inf"-like values itself for some; either way exit 2, no panic.
        assert_eq!(o.status.code(), Some(2), "{timeout}: {}", err(&o));
        assert!(!err(&o).contains("panicked"), "{}", err(&o));
        assert!(!marker.exists(), "{timeout}: the core was started");
    }
}

#[test]
fn a_full_standard_output_is_exit_2_with_a_message() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let f = write(t.path(), "c.yaml", &spec_with_id("c"));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args(["list", &f])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    bad_input(&o, &["standard output"]);
}

#[test]
fn slurm_refuses_control_characters_in_paths() {
    let t = tempfile::tempdir().unwrap();
    let claims = t.path().join("claims");
    std::fs::create_dir(&claims).unwrap();
    write(&claims, "good.yaml", &spec_with_id("good"));
    let evil = "claims\nrm -rf ~\n#";
    std::fs::create_dir(t.path().join(evil)).unwrap();
    write(&t.path().join(evil), "e.yaml", &spec_with_id("e"));
    let o = run(t.path(), &["slurm", evil, "--shards", "2"], &[]);
    bad_input(&o, &["claim path", "control character"]);
    assert!(o.stdout.is_empty(), "a script was printed");
    for flag in ["--out", "--dir"] {
        let o = run(
            t.path(),
            &["slurm", "claims", "--shards", "2", flag, "x\ny"],
            &[],
        );
        bad_input(&o, &[flag, "control character"]);
        assert!(o.stdout.is_empty());
    }
    // A plain path still works, quoted.
    let o = run(
        t.path(),
        &["slurm", "claims", "--shards", "2", "--out", "my reports"],
        &[],
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("'my reports'"));
}

#[test]
fn spec_prose_cannot_put_scripts_remote_images_or_foreign_links_in_the_html() {
    let t = tempfile::tempdir().unwrap();
    let header = r#"
id: hostile-prose
title: "prose [t](javascript:alert(1)) <script>alert(2)</script> [fine](https://example.org/paper)"
source: {paper: "test", section: "s", equation: "Eq. 20"}
statement: >
  see [docs](javascript:alert(3)), ![tracker](https://evil.example/pixel.png),
  [data](data:text/html;base64,PHNjcmlwdD4=), [up](../../etc/passwd),
  <img src=x onerror=alert(4)> and [fine](https://example.org/paper)
"#;
    let f = write(t.path(), "c.yaml", &tiny_rf_claim(header));
    let o = run(t.path(), &["run", &f, "--out", "out", "--no-baseline"], &[]);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{}",
        err(&o)
    );
    let mut pages = 0;
    for e in std::fs::read_dir(t.path().join("out")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "html") {
            pages += 1;
            let h = std::fs::read_to_string(&p).unwrap().to_lowercase();
            for bad in [
                "href=\"javascript:",
                "href=\"data:",
                "href=\"../",
                "<script",
                "src=\"https://evil",
                "<img src=x",
            ] {
                assert!(!h.contains(bad), "{}: contains {bad}", p.display());
            }
        }
    }
    assert!(pages >= 2, "no HTML pages written");
    let page = std::fs::read_to_string(t.path().join("out/hostile-prose.html")).unwrap();
    // The title is Markdown: its allowed link is kept. The statement is prose (its
    // brackets are usually math, `E[c^2](1 - 1/d)`): shown as written, never a link.
    assert!(
        page.contains("href=\"https://example.org/paper\""),
        "{page}"
    );
    assert!(
        page.contains("[fine](https://example.org/paper)</p>"),
        "the statement's brackets as written: {page}"
    );
}

#[test]
fn list_plan_and_slurm_never_start_an_external_core() {
    // A spec is code only when it runs: reading, estimating and scripting it start
    // nothing (docs/trust-and-safety.md).
    let t = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/external/gaussian-mean.yaml");
    let text = std::fs::read_to_string(src).unwrap().replace(
        r#"command: ["python3", "gaussian_mean.py"]"#,
        r#"command: ["sh", "-c", "touch core-started; exec cat"]"#,
    );
    assert!(text.contains("core-started"));
    let f = write(t.path(), "ext.yaml", &text);
    for args in [
        vec!["list", f.as_str()],
        vec!["plan", f.as_str()],
        vec!["slurm", f.as_str(), "--shards", "2"],
    ] {
        let o = run(t.path(), &args, &[]);
        assert!(o.status.success(), "{args:?}: {}", err(&o));
        assert!(
            !t.path().join("core-started").exists(),
            "{args:?} started the core"
        );
    }
}

/// A key with a Cyrillic look-alike letter prints exactly like the expected key: the
/// message names the letter's code point.
#[test]
fn a_lookalike_key_is_named_by_its_code_point() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny_rf_claim_named("lookalike").replacen("statement:", "st\u{430}tement:", 1);
    std::fs::write(dir.path().join("c.yaml"), spec).unwrap();
    let o = run(dir.path(), &["list", "c.yaml"], &[]);
    bad_input(
        &o,
        &["unknown field", "U+0430 at character 3", "non-ASCII letter"],
    );
}
