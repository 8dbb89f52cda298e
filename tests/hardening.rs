//! Hardening (issue 17): clear errors before any work, nothing lost. Exit status 0 ok,
//! 1 verdict failure, 2 bad input, 3 internal error. The wide corpus of malformed
//! inputs is `bad_inputs/`; here, one test per rule.
use crate::hardening3_util::{computed_units, digest, refused_before_work};
use crate::util::{dpclaims, dpclaims_in};
use dpclaims::plan::{self, budget};
use dpclaims::spec::{self, Profile};
use std::path::Path;
use std::process::{Command, Output};

const CALIBRATION: &str = "claims/sigma-a-calibration.yaml";

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` to `dir/name` and returns its path as a string.
fn write(dir: &Path, name: &str, text: &[u8]) -> String {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f.display().to_string()
}

/// `text` with its first two `replicates:` values (the first sweep's quick and full
/// profiles: the full one may not have fewer; a count or `{min, max}`, with any comment
/// after it) set to `value`.
fn first_replicates(text: &str, value: &str) -> String {
    let set = |text: &str, from: usize| {
        let i = from
            + text[from..]
                .find("replicates: ")
                .expect("a replicates field")
            + "replicates: ".len();
        let j = i + text[i..].find('\n').unwrap_or(text.len() - i);
        (
            format!("{}{value}{}", &text[..i], &text[j..]),
            i + value.len(),
        )
    };
    let (once, at) = set(text, 0);
    set(&once, at).0
}

fn spec_text(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_directory_without_claim_specs_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a spec").unwrap();
    let d = dir.path().display().to_string();
    for cmd in ["run", "list", "plan"] {
        let o = dpclaims(&[cmd, &d]);
        assert_eq!(code(&o), 2, "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("no claim specs in {d}")),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn a_byte_order_mark_is_dropped_and_non_utf8_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(spec_text(CALIBRATION).bytes());
    let f = write(dir.path(), "bom.yaml", &bom);
    let o = dpclaims(&["run", "--no-reports", "--no-baseline", &f]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // The hash is of the file's bytes (the BOM included): it is what a manifest checks.
    let claim = spec::load_claim(Path::new(&f)).unwrap();
    assert_eq!(claim.id, "sigma-a-calibration");
    let plain = spec::load_claim(Path::new(CALIBRATION)).unwrap();
    assert_ne!(claim.spec_hash, plain.spec_hash);

    let mut latin1 = spec_text(CALIBRATION).into_bytes();
    latin1.extend(b"# caf\xE9\n");
    let f = write(dir.path(), "latin1.yaml", &latin1);
    let o = dpclaims(&["run", "--no-reports", &f]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("latin1.yaml") && stderr(&o).contains("not UTF-8"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_unwritable_output_directory_fails_before_any_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "a-file", b"x");
    let cases = [
        "/proc/dpclaims-test/out".to_string(),
        file.clone(),
        format!("{file}/sub"),
    ];
    for out in &cases {
        // A failure after simulating would have computed units, and every computed unit
        // lands in the run's own result cache: it must stay empty (no wall time asserted,
        // issue 58).
        let cache = tempfile::tempdir().unwrap();
        let o = refused_before_work(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &["run", "claims/noise-term-scaling.yaml", "--out", out],
            cache.path(),
        );
        assert_eq!(o.code, Some(2), "{out}: {}", o.stderr);
        assert!(o.stderr.contains(out.as_str()), "{}", o.stderr);
        assert_eq!(
            computed_units(cache.path()),
            0,
            "{out}: units were computed"
        );
    }
    let o = dpclaims(&[
        "run",
        CALIBRATION,
        "--shard",
        "0/2",
        "--partial-out",
        &format!("{file}/shards"),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is a file"), "{}", stderr(&o));
    for args in [
        vec!["stability", CALIBRATION, "--seeds", "1", "--out", &file],
        vec!["fig2", "--out", &file],
        vec![
            "perf",
            "--quick",
            "--markdown",
            "/proc/dpclaims-test/BENCH.md",
        ],
    ] {
        let o = dpclaims(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
    }
    // A read-only directory (only meaningful when not running as root).
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
    std::fs::set_permissions(&ro, perm).unwrap();
    if std::fs::write(ro.join("probe"), b"x").is_err() {
        let o = dpclaims(&["run", CALIBRATION, "--out", ro.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(stderr(&o).contains("not writable"), "{}", stderr(&o));
    }
}

#[test]
fn messages_clip_long_spec_input() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x".repeat(200_000);
    let base = spec_text(CALIBRATION);
    let title_line = base.lines().find(|l| l.starts_with("title:")).unwrap();
    let with_title = base.replacen(title_line, &format!("title: \"{big}\""), 1);
    for (what, text) in [
        (
            "a wrong field elsewhere",
            with_title.replacen("system: gaussian_calibration", "system: nope", 1),
        ),
        (
            "an unknown field",
            with_title.replacen("adjacency:", "adjacencyy: 1\nadjacency:", 1),
        ),
        (
            "the long value is the wrong one",
            base.replacen(
                "system: gaussian_calibration",
                &format!("system: \"{big}\""),
                1,
            ),
        ),
        (
            "a long expression",
            base.replacen("params:\n", &format!("params:\n  zz: \"{big} +\"\n"), 1),
        ),
        (
            "a long key",
            base.replacen("params:\n", &format!("params:\n  {big}: \"1 +\"\n"), 1),
        ),
    ] {
        let f = write(dir.path(), "long.yaml", text.as_bytes());
        let o = dpclaims(&["run", "--no-reports", &f]);
        assert_eq!(code(&o), 2, "{what}");
        let err = stderr(&o);
        assert!(
            err.len() < 1000,
            "{what}: {} bytes: {}",
            err.len(),
            &err[..300]
        );
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
    }
    let msg = dpclaims::spec::echo::clip_echoes(&format!("unknown system `{big}`"));
    assert!(msg.ends_with("x…`"), "{msg}");
}

#[test]
fn a_panic_is_one_line_and_exit_3() {
    let o = dpclaims(&["internal-panic"]);
    assert_eq!(code(&o), 3);
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("internal error: deliberate panic")
            && err.trim().ends_with("please report"),
        "{err}"
    );
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `dpclaims list | head -1`: the reader is gone before dpclaims writes.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .arg("list")
        .stdout(writer)
        .output()
        .unwrap();
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    // Killed by SIGPIPE (no status code), as `cat` or `ls` would be.
    assert!(code(&o) == -1 || code(&o) == 0, "{:?}", o.status);
}

/// The absurd sizes: each refused with exit 2 in well under a second, naming the
/// claim, the field, the estimate and the limit.
#[test]
fn absurd_sizes_are_refused_before_simulating() {
    let dir = tempfile::tempdir().unwrap();
    let noise = spec_text("claims/noise-term-scaling.yaml");
    let risk = spec_text("claims/final-risk-bound.yaml");
    let calib = spec_text(CALIBRATION);
    let axis: Vec<String> = (0..200_000)
        .map(|i| format!("{}", 1e-3 + i as f64 * 1e-9))
        .collect();
    let cases: Vec<(&str, String, &[&str])> = vec![
        (
            "replicates 1e9",
            first_replicates(&noise, "1000000000"),
            &[
                "claim `noise-term-scaling`",
                "sweeps.vs_n.quick.replicates",
                "exceeds the limit",
                "GB",
            ],
        ),
        (
            // Beyond 2^53, a count is refused when the spec loads.
            "p = n^9",
            noise.replacen("p: \"n^2\"", "p: \"n^9\"", 1),
            &["absurd.yaml", "params.p", "2^53"],
        ),
        (
            "p = n^6",
            noise.replacen("p: \"n^2\"", "p: \"n^6\"", 1),
            &[
                "claim `noise-term-scaling`",
                "params.p",
                "exceeds the limit",
                "--max-memory-gb",
            ],
        ),
        (
            "steps 1e7 (work)",
            noise.replacen(
                "steps: \"ceil(d * ln(n)^2 / (eta * p))\"",
                "steps: \"1e7\"",
                1,
            ),
            &["claim `noise-term-scaling`", "params.steps", "--max-hours"],
        ),
        (
            "bootstrap 1e12",
            risk.replacen(
                "    tolerance_reason:",
                "    bootstrap: 1000000000000\n    tolerance_reason:",
                1,
            ),
            &[
                "claim `final-risk-bound`",
                "bootstrap",
                "1e12",
                "exceeds the limit",
            ],
        ),
        (
            "an axis of 200 000 points",
            calib.replacen(
                "frac: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]",
                &format!("frac: [{}]", axis.join(", ")),
                1,
            ),
            &[
                "sweeps.grid.quick.axes",
                "sweep points",
                "exceed the limit 10000",
            ],
        ),
    ];
    for (what, text, words) in cases {
        // Each case changes its spec (a claim edited on main must not silently turn a
        // case into a real run).
        assert!(
            text != noise && text != risk && text != calib,
            "{what}: the mutation does not apply"
        );
        let f = write(dir.path(), "absurd.yaml", text.as_bytes());
        for cmd in ["run", "plan"] {
            let args = if cmd == "run" {
                vec!["run", "--no-baseline", "--no-reports", f.as_str()]
            } else {
                vec!["plan", f.as_str()]
            };
            // Refused before any work: no unit in the run's own cache, no allocation of
            // the absurd size (a 1.5 GiB address space), no wall time asserted (issue 58).
            let cache = tempfile::tempdir().unwrap();
            let o = refused_before_work(Path::new(env!("CARGO_MANIFEST_DIR")), &args, cache.path());
            let err = o.stderr.clone();
            assert_eq!(o.code, Some(2), "{what} ({cmd}): {err}");
            assert_eq!(
                computed_units(cache.path()),
                0,
                "{what} ({cmd}): units computed"
            );
            for w in words {
                assert!(err.contains(w), "{what} ({cmd}): lacks {w:?}: {err}");
            }
            assert_eq!(err.trim().lines().count(), 1, "{err}");
        }
    }
    // The limits are flags: a tiny memory budget refuses the smallest claim, a larger
    // one lets it run.
    let o = dpclaims(&["plan", CALIBRATION, "--max-memory-gb", "1e-6"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--max-memory-gb"), "{}", stderr(&o));
    let o = dpclaims(&[
        "plan",
        "claims/noise-term-scaling.yaml",
        "--max-hours",
        "1e-6",
    ]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--max-hours"), "{}", stderr(&o));
    let o = dpclaims(&[
        "run",
        "--no-reports",
        "--no-baseline",
        CALIBRATION,
        "--max-hours",
        "1",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn absurd_command_line_sizes_are_refused_before_allocating() {
    let cases: &[(&[&str], &str)] = &[
        (&["demo", "--p", "100000000000"], "--p"),
        (&["demo", "--n", "1000000", "--p", "1000000"], "--n"),
        (
            &[
                "audit",
                "--system",
                "rf-dpgd",
                "--epsilon",
                "1",
                "--delta",
                "1e-5",
                "--trials",
                "100000000000000",
            ],
            "--trials",
        ),
        (
            &[
                "train",
                "--method",
                "dp-sgd",
                "--epsilon",
                "1",
                "--epochs",
                "100000000000",
            ],
            "--epochs",
        ),
        (
            &[
                "train",
                "--method",
                "dp-sgd",
                "--epsilon",
                "1",
                "--model",
                "mlp",
                "--hidden",
                "10000000000",
            ],
            "--hidden",
        ),
        (
            &["fig2", "--seeds", "1000000000000", "--out", "never"],
            "--seeds",
        ),
        (
            &["faults", "--audit-trials", "100000000000", "--no-report"],
            "--audit-trials",
        ),
        (
            &["stability", CALIBRATION, "--seeds", "1000000000000000"],
            "--max-hours",
        ),
    ];
    // Refused before allocating: each size would need far more than the 1.5 GiB address
    // space the command runs under (an allocation would abort it, not exit 2), and
    // nothing is written; no wall time is asserted (issue 58).
    for (args, word) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("claims")).unwrap();
        std::fs::copy(CALIBRATION, dir.path().join(CALIBRATION)).unwrap();
        let before = digest(dir.path(), &[]);
        let cache = dir.path().join("cache");
        let o = refused_before_work(dir.path(), args, &cache);
        assert_eq!(o.code, Some(2), "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(word), "{args:?}: {}", o.stderr);
        assert_eq!(computed_units(&cache), 0, "{args:?}");
        assert_eq!(
            digest(dir.path(), &["cache"]),
            before,
            "{args:?}: files changed"
        );
    }
}

/// Every shipped claim fits the default budget at both profiles with a wide margin
/// (the estimates are conservative by a small factor, tests/claim times in the module
/// docs of systems/cost.rs), and the counted units equal the listed ones.
#[test]
fn shipped_claims_fit_the_default_budget() {
    let claims = spec::load_claims(&["claims".into()]).unwrap();
    let limits = budget::Limits {
        max_seconds: budget::DEFAULT_MAX_HOURS * 3600.0,
        max_bytes: 8e9,
        threads: 2,
    };
    for profile in [Profile::Quick, Profile::Full] {
        let est = budget::check_claims(&claims, profile, &limits, 1.0, 1.0).unwrap();
        let total: f64 = est.iter().map(|e| e.wall_seconds).sum();
        assert!(total < limits.max_seconds / 4.0, "{profile}: {total} s");
        for (c, e) in claims.iter().zip(&est) {
            let listed = plan::planned_units(c, profile).len();
            assert_eq!(plan::unit_count(c, profile), listed, "{}", c.id);
            assert_eq!(e.units, listed as f64, "{}", c.id);
            assert!(e.memory_bytes < 4e9, "{}: {}", c.id, e.memory_bytes);
        }
    }
}

#[test]
fn plan_prints_an_estimate_per_claim() {
    let o = dpclaims(&["plan", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(
        claims.len(),
        spec::load_claims(&["claims".into()]).unwrap().len()
    );
    for c in claims {
        assert!(c["cpu_seconds"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["memory_bytes"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["work_driver"]["field"].is_string(), "{c}");
    }
    let o = dpclaims_in(Path::new("."), &["plan", CALIBRATION, "--profile", "full"]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("sigma-a-calibration") && out.contains("profile full"),
        "{out}"
    );
}

/// The accountants at absurd inputs give a large (or infinite) but sound epsilon, or
/// exit 2; never 0 nor NaN.
#[test]
fn accountants_at_absurd_inputs_are_sound_or_refused() {
    // (accountant, phase): q = 1 with sigma = 0.01 over 1e6 steps; sigma = 1e-4; q = 0.5,
    // sigma = 1e-3 over 1e5 steps (RDP only: the others need q = 1).
    let cases = [
        ("rdp", "1,0.01,1000000"),
        ("gdp", "1,0.01,1000000"),
        ("zcdp", "1,0.01,1000000"),
        ("rdp", "1,0.0001,10"),
        ("gdp", "1,0.0001,10"),
        ("zcdp", "1,0.0001,10"),
        ("rdp", "0.5,0.001,100000"),
        ("rdp", "1e-300,0.0001,10"),
        ("rdp", "0.5,1e-300,1"),
        ("gdp", "1,1e-300,1"),
        ("zcdp", "1,1e-300,1"),
        ("rdp", "0.001,1000,18446744073709551615"),
        ("gdp", "1,1,18446744073709551615"),
        ("zcdp", "1,1,18446744073709551615"),
    ];
    for (acc, phase) in cases {
        let o = dpclaims(&[
            "account",
            "--accountant",
            acc,
            "--delta",
            "1e-5",
            "--phase",
            phase,
            "--json",
        ]);
        match code(&o) {
            0 => {
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                let eps = v["epsilon"].as_f64().unwrap();
                assert!(eps.is_finite() && eps > 1.0, "{acc} {phase}: epsilon {eps}");
            }
            2 => assert!(
                stderr(&o).contains("not finite"),
                "{acc} {phase}: {}",
                stderr(&o)
            ),
            c => panic!("{acc} {phase}: exit {c}: {}", stderr(&o)),
        }
        assert!(!stderr(&o).contains("internal error"));
    }
    // A phase outside the domain is named.
    for (phase, word) in [
        ("2,1,10", "sampling rate"),
        ("nan,1,10", "sampling rate"),
        ("1,0,10", "noise multiplier"),
        ("1,inf,10", "noise multiplier"),
        ("1,1,0", "steps"),
    ] {
        let o = dpclaims(&[
            "account",
            "--accountant",
            "rdp",
            "--delta",
            "1e-5",
            "--phase",
            phase,
        ]);
        assert_eq!(code(&o), 2, "{phase}");
        assert!(stderr(&o).contains(word), "{phase}: {}", stderr(&o));
    }
}

#[test]
fn calibration_at_the_edges_names_the_bound() {
    for acc in ["rdp", "gdp", "zcdp"] {
        // Unreachable: epsilon 1 over 1e18 full-batch steps needs z > 1e8.
        let o = dpclaims(&[
            "calibrate",
            "--accountant",
            acc,
            "--delta",
            "1e-5",
            "--target-epsilon",
            "1",
            "--sampling-rate",
            "1",
            "--steps",
            "1000000000000000000",
        ]);
        assert_eq!(code(&o), 2, "{acc}: {}", String::from_utf8_lossy(&o.stdout));
        assert!(
            stderr(&o).contains("unreachable") && stderr(&o).contains("search bound z = 1e8"),
            "{acc}: {}",
            stderr(&o)
        );
        // Too loose: any noise meets epsilon 1e300.
        let o = dpclaims(&[
            "calibrate",
            "--accountant",
            acc,
            "--delta",
            "1e-5",
            "--target-epsilon",
            "1e300",
            "--sampling-rate",
            "1",
            "--steps",
            "1",
        ]);
        assert_eq!(code(&o), 2, "{acc}");
        assert!(
            stderr(&o).contains("search bound z = 1e-6") && stderr(&o).contains("1e300"),
            "{acc}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).len() < 300, "{}", stderr(&o));
        // Reachable near the edges: the result meets the target.
        let o = dpclaims(&[
            "calibrate",
            "--accountant",
            acc,
            "--delta",
            "1e-5",
            "--target-epsilon",
            "1e-3",
            "--sampling-rate",
            "1",
            "--steps",
            "1",
            "--json",
        ]);
        if code(&o) == 0 {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let (z, eps) = (
                v["noise_multiplier"].as_f64().unwrap(),
                v["epsilon"].as_f64().unwrap(),
            );
            assert!(
                z.is_finite() && z > 0.0 && (0.0..=1e-3).contains(&eps),
                "{acc}: {v}"
            );
        } else {
            assert_eq!(code(&o), 2, "{acc}");
            assert!(stderr(&o).contains("search bound"), "{}", stderr(&o));
        }
    }
    for (flag, value, word) in [
        ("--target-epsilon", "nan", "target epsilon"),
        ("--target-epsilon", "-1", "target epsilon"),
        ("--sampling-rate", "0", "sampling rate"),
        ("--delta", "1", "delta"),
    ] {
        let mut args = vec![
            "calibrate",
            "--accountant",
            "rdp",
            "--delta",
            "1e-5",
            "--target-epsilon",
            "1",
            "--sampling-rate",
            "0.01",
            "--steps",
            "100",
        ];
        let i = args.iter().position(|a| *a == flag).unwrap();
        args[i + 1] = value;
        let o = dpclaims(&args);
        assert_eq!(code(&o), 2, "{flag} {value}");
        assert!(stderr(&o).contains(word), "{flag} {value}: {}", stderr(&o));
    }
}
