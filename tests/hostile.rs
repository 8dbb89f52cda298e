//! Hostile inputs (issue 32, families 1, 2 and 5): what the tool is pointed at cannot
//! hang it, make it read without end, lose a user's files or slip past the planner.
//!
//! Every case runs the built binary in a fresh directory under a timeout (a hang fails
//! the case, it does not hang the suite), and checks the exit status, that stderr names
//! the path and the problem, that nothing panicked, and that nothing outside the output
//! directory changed (a fingerprint of the whole case directory, output excluded, before
//! and after). Inputs use the tiny spec of `bad_inputs/base.yaml` (microseconds a unit).
//!
//! Families: 1 — the file-input layer (`src/fsio/read.rs`, `src/fsio/yaml.rs`): for every
//! input kind a FIFO, a link to /dev/zero, a link where a link is refused, an oversized
//! file (sparse: instant); the YAML alias bomb. 2 — the file-output layer
//! (`src/fsio/write.rs`, `src/fsio/marker.rs`, `src/report/set.rs`). 5 — budgets
//! (`src/plan/budget.rs`, the external audit through the planner).
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a case may take before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

const TINY: &str = include_str!("bad_inputs/base.yaml");

struct Out {
    code: i32,
    stderr: String,
    stdout: String,
}

/// Runs `dpclaims args` in `dir` (no user cache unless `env` sets one), killed and failed
/// after [`TIMEOUT`].
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dpclaims"));
    cmd.current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("DPCLAIMS_NO_CACHE", "1")
        .env_remove("DPCLAIMS_CACHE")
        .env_remove("GITHUB_ACTIONS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start dpclaims");
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dpclaims {args:?} did not finish within {TIMEOUT:?} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = Out {
        code: status.code().unwrap_or(-1),
        stdout: t1.join().unwrap(),
        stderr: t2.join().unwrap(),
    };
    assert!(
        !out.stderr.contains("panicked") && !out.stderr.contains("internal error"),
        "{args:?} panicked: {}",
        out.stderr
    );
    out
}

/// A fingerprint of every entry under `root` except the directories named in `skip`:
/// type, and the bytes of regular files or the target of links (a FIFO is never read).
fn fingerprint(root: &Path, skip: &[&str]) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, p: &Path, skip: &[&str], out: &mut BTreeMap<PathBuf, String>) {
        let rel = p.strip_prefix(root).unwrap().to_path_buf();
        if skip.iter().any(|s| rel == Path::new(s)) {
            return;
        }
        let Ok(m) = std::fs::symlink_metadata(p) else {
            return;
        };
        let t = m.file_type();
        let v = if t.is_symlink() {
            format!("link {}", std::fs::read_link(p).unwrap().display())
        } else if t.is_dir() {
            let mut names: Vec<_> = std::fs::read_dir(p)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            names.sort();
            for n in names {
                walk(root, &n, skip, out);
            }
            "dir".into()
        } else if t.is_file() {
            // Sparse oversized files: their length, not their bytes.
            if m.len() > 1 << 20 {
                format!("file of {} bytes", m.len())
            } else {
                format!("file {:?}", std::fs::read(p).unwrap())
            }
        } else {
            format!("special {:?}", t)
        };
        out.insert(rel, v);
    }
    let mut out = BTreeMap::new();
    walk(root, root, skip, &mut out);
    out
}

/// A case directory: the tiny spec, a sentinel directory of a user's files.
fn case_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("tiny.yaml"), TINY).unwrap();
    std::fs::create_dir(d.path().join("sentinel")).unwrap();
    std::fs::write(d.path().join("sentinel/victim.txt"), "a user's file\n").unwrap();
    std::fs::write(d.path().join("sentinel/notes.md"), "# notes\n").unwrap();
    d
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(ok.success());
}

fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

/// A sparse file of 300 MiB: over every cap, created instantly.
fn oversized(p: &Path) {
    let f = std::fs::File::create(p).unwrap();
    f.set_len(300 << 20).unwrap();
}

/// Asserts exit 2 and that stderr names `path` and every word of `what`.
fn refused(o: &Out, path: &str, what: &[&str]) {
    assert_eq!(o.code, 2, "expected exit 2: {}", o.stderr);
    assert!(
        o.stderr.contains(path),
        "stderr does not name {path}: {}",
        o.stderr
    );
    for w in what {
        assert!(
            o.stderr.contains(w),
            "stderr does not say `{w}`: {}",
            o.stderr
        );
    }
}

/// On a fresh case directory: `plant` the hostile input, then `act`, and check that
/// nothing outside `out_dirs` changed during `act`.
fn unchanged_outside(out_dirs: &[&str], plant: impl FnOnce(&Path), act: impl FnOnce(&Path)) {
    let d = case_dir();
    plant(d.path());
    let before = fingerprint(d.path(), out_dirs);
    act(d.path());
    let after = fingerprint(d.path(), out_dirs);
    assert_eq!(before, after, "files outside the output directory changed");
}

// ---------------------------------------------------------------- family 1: specs

const FIFO_WORDS: &[&str] = &["not a regular file", "named pipe"];
const DEVICE_WORDS: &[&str] = &["not a regular file", "character device"];
const LINK_WORDS: &[&str] = &["symbolic link"];
const SIZE_WORDS: &[&str] = &["larger than the limit"];

#[test]
fn a_spec_that_is_a_fifo_is_refused_without_waiting() {
    unchanged_outside(
        &["out"],
        |d| mkfifo(&d.join("fifo.yaml")),
        |d| {
            let o = run(
                d,
                &["run", "fifo.yaml", "--no-baseline", "--out", "out"],
                &[],
            );
            refused(&o, "fifo.yaml", FIFO_WORDS);
        },
    );
}

#[test]
fn a_spec_linked_to_dev_zero_is_refused() {
    unchanged_outside(
        &["out"],
        |d| link(Path::new("/dev/zero"), &d.join("zero.yaml")),
        |d| {
            for cmd in ["run", "list", "plan"] {
                let o = run(
                    d,
                    &[cmd, "zero.yaml", "--out", "out"][..if cmd == "run" { 4 } else { 2 }],
                    &[],
                );
                refused(&o, "zero.yaml", DEVICE_WORDS);
            }
        },
    );
}

#[test]
fn an_oversized_spec_is_refused_before_it_is_read() {
    unchanged_outside(
        &["out"],
        |d| oversized(&d.join("big.yaml")),
        |d| {
            let o = run(d, &["list", "big.yaml"], &[]);
            refused(&o, "big.yaml", SIZE_WORDS);
        },
    );
}

#[test]
fn a_spec_that_is_a_link_to_a_regular_file_is_followed() {
    // Documented: claims directories of links are common; a link to a regular spec is read.
    unchanged_outside(
        &[],
        |d| link(&d.join("tiny.yaml"), &d.join("alias.yaml")),
        |d| {
            let o = run(d, &["list", "alias.yaml"], &[]);
            assert_eq!(o.code, 0, "{}", o.stderr);
            assert!(o.stdout.contains("tiny"), "{}", o.stdout);
        },
    );
}

/// A spec with a doubling alias chain of `depth` levels inside an otherwise valid spec.
fn alias_bomb(depth: usize) -> String {
    let mut chain = vec![format!("  - &a0 \"{}\"", "lol".repeat(30))];
    for k in 1..=depth {
        chain.push(format!("  - &a{k} [*a{0}, *a{0}]", k - 1));
    }
    TINY.replace(
        "statement: \"s\"\n",
        &format!("statement: \"s\"\nreport_metrics:\n{}\n", chain.join("\n")),
    )
}

#[test]
fn a_yaml_alias_bomb_is_refused_by_run_list_and_plan() {
    for depth in [14, 40] {
        let name = format!("bomb{depth}.yaml");
        assert!(alias_bomb(depth).len() < 5_000);
        let plant = |d: &Path| std::fs::write(d.join(&name), alias_bomb(depth)).unwrap();
        unchanged_outside(&["out"], plant, |d| {
            for cmd in ["run", "list", "plan"] {
                let o = run(d, &[cmd, &name], &[]);
                refused(&o, &name, &["aliases", "expands to more than"]);
                // Refused before expanding: under a 1.5 GiB address space (the expansion
                // of depth 40 needs far more, and would abort the process) the refusal is
                // the same exit 2, and no unit is computed; no wall time (issue 58).
                let cache = tempfile::tempdir().unwrap();
                let limited =
                    crate::hardening3_util::refused_before_work(d, &[cmd, &name], cache.path());
                assert_eq!(
                    limited.code,
                    Some(2),
                    "{cmd} depth {depth}: {}",
                    limited.stderr
                );
                assert!(limited.stderr.contains("aliases"), "{}", limited.stderr);
                assert_eq!(crate::hardening3_util::computed_units(cache.path()), 0);
            }
        });
    }
}

#[test]
fn a_spec_with_a_few_aliases_still_loads() {
    // The shipped claims use aliases for repeated notes: the budget must not refuse them.
    let text = TINY
        .replace("title: \"tiny\"", "title: &t \"tiny\"")
        .replace("statement: \"s\"", "statement: *t");
    assert!(text.contains("*t"));
    let plant = |d: &Path| std::fs::write(d.join("aliased.yaml"), &text).unwrap();
    unchanged_outside(&[], plant, |d| {
        let o = run(d, &["list", "aliased.yaml"], &[]);
        assert_eq!(o.code, 0, "{}", o.stderr);
    });
}

// ---------------------------------------------------------------- family 1: partials

/// The partial file of the tiny spec's only shard, written into `d/p`.
fn make_partial(d: &Path) -> PathBuf {
    let o = run(
        d,
        &["run", "tiny.yaml", "--shard", "0/1", "--partial-out", "p"],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let f = std::fs::read_dir(d.join("p"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a partial file");
    f
}

#[test]
fn a_partial_that_is_a_fifo_is_refused_by_merge() {
    unchanged_outside(
        &["out"],
        |d| mkfifo(&d.join("shard-0-of-1.json")),
        |d| {
            let o = run(
                d,
                &[
                    "merge",
                    "shard-0-of-1.json",
                    "--claims",
                    "tiny.yaml",
                    "--out",
                    "out",
                    "--no-baseline",
                ],
                &[],
            );
            refused(&o, "shard-0-of-1.json", FIFO_WORDS);
        },
    );
}

#[test]
fn a_partial_linked_to_dev_zero_is_refused_by_merge() {
    unchanged_outside(
        &["out"],
        |d| link(Path::new("/dev/zero"), &d.join("shard-0-of-1.json")),
        |d| {
            let o = run(
                d,
                &[
                    "merge",
                    "shard-0-of-1.json",
                    "--claims",
                    "tiny.yaml",
                    "--out",
                    "out",
                    "--no-baseline",
                ],
                &[],
            );
            refused(&o, "shard-0-of-1.json", LINK_WORDS);
        },
    );
}

#[test]
fn a_partial_that_is_a_link_to_a_valid_partial_is_refused() {
    let d = case_dir();
    let real = make_partial(d.path());
    let at = d.path().join("linked.json");
    link(&real, &at);
    let before = fingerprint(d.path(), &["out"]);
    let o = run(
        d.path(),
        &[
            "merge",
            "linked.json",
            "--claims",
            "tiny.yaml",
            "--out",
            "out",
            "--no-baseline",
        ],
        &[],
    );
    refused(&o, "linked.json", LINK_WORDS);
    assert_eq!(before, fingerprint(d.path(), &["out"]));
}

#[test]
fn an_oversized_partial_is_refused_before_it_is_read() {
    unchanged_outside(
        &["out"],
        |d| oversized(&d.join("shard-0-of-1.json")),
        |d| {
            let o = run(
                d,
                &[
                    "merge",
                    "shard-0-of-1.json",
                    "--claims",
                    "tiny.yaml",
                    "--out",
                    "out",
                    "--no-baseline",
                ],
                &[],
            );
            refused(&o, "shard-0-of-1.json", SIZE_WORDS);
        },
    );
}

#[test]
fn run_shard_refuses_a_fifo_or_device_link_at_its_partial_path() {
    for plant in ["fifo", "zero"] {
        let d = case_dir();
        let p = d.path().join("p");
        std::fs::create_dir(&p).unwrap();
        let f = p.join("shard-0-of-1.json");
        if plant == "fifo" {
            mkfifo(&f);
        } else {
            link(Path::new("/dev/zero"), &f);
        }
        let before = fingerprint(d.path(), &[]);
        let o = run(
            d.path(),
            &["run", "tiny.yaml", "--shard", "0/1", "--partial-out", "p"],
            &[],
        );
        refused(&o, "shard-0-of-1.json", &[]);
        assert_eq!(before, fingerprint(d.path(), &[]), "{plant}");
    }
}

// ---------------------------------------------------------------- family 1: records

fn stability(d: &Path) -> Out {
    run(
        d,
        &["stability", "tiny.yaml", "--seeds", "1", "--out", "out"],
        &[],
    )
}

/// Plants `f` at the record of seed 0 of `out/stability/` and checks that `stability`
/// refuses it, before any seed runs, with `words`.
fn record_case(plant: impl FnOnce(&Path, &Path), words: &[&str]) {
    let d = case_dir();
    let rec_dir = d.path().join("out/stability");
    std::fs::create_dir_all(&rec_dir).unwrap();
    plant(d.path(), &rec_dir.join("seed-0.jsonl"));
    let before = fingerprint(d.path(), &[]);
    let o = stability(d.path());
    refused(&o, "seed-0.jsonl", words);
    // Refused before any work: not even STABILITY.md was written.
    assert_eq!(before, fingerprint(d.path(), &[]));
}

#[test]
fn a_stability_record_that_is_a_fifo_is_refused() {
    record_case(|_, f| mkfifo(f), FIFO_WORDS);
}

#[test]
fn a_stability_record_linked_to_dev_zero_is_refused() {
    record_case(|_, f| link(Path::new("/dev/zero"), f), LINK_WORDS);
}

#[test]
fn a_stability_record_that_is_a_link_to_a_regular_file_is_refused() {
    record_case(|d, f| link(&d.join("sentinel/victim.txt"), f), LINK_WORDS);
}

#[test]
fn an_oversized_stability_record_is_refused() {
    record_case(|_, f| oversized(f), SIZE_WORDS);
}

// ---------------------------------------------------------------- family 1: verdicts.json

/// Plants the previous `verdicts.json` of `out/` and checks that `run` refuses it before
/// simulating, with `words`.
fn verdicts_case(plant: impl FnOnce(&Path, &Path), words: &[&str]) {
    let d = case_dir();
    std::fs::create_dir(d.path().join("out")).unwrap();
    plant(d.path(), &d.path().join("out/verdicts.json"));
    let before = fingerprint(d.path(), &[]);
    let o = run(
        d.path(),
        &["run", "tiny.yaml", "--no-baseline", "--out", "out"],
        &[],
    );
    refused(&o, "verdicts.json", words);
    // Refused before the simulation: no verdict printed, nothing written.
    assert!(!o.stderr.contains("consistent"), "{}", o.stderr);
    assert_eq!(before, fingerprint(d.path(), &[]));
}

#[test]
fn a_previous_verdicts_json_that_is_a_fifo_is_refused_before_simulating() {
    verdicts_case(|_, f| mkfifo(f), FIFO_WORDS);
}

#[test]
fn a_previous_verdicts_json_linked_to_dev_zero_is_refused() {
    verdicts_case(|_, f| link(Path::new("/dev/zero"), f), LINK_WORDS);
}

#[test]
fn a_previous_verdicts_json_that_is_a_link_to_a_regular_file_is_refused() {
    verdicts_case(|d, f| link(&d.join("sentinel/victim.txt"), f), LINK_WORDS);
}

#[test]
fn an_oversized_previous_verdicts_json_is_refused() {
    verdicts_case(|_, f| oversized(f), SIZE_WORDS);
}

// ---------------------------------------------------------------- family 1: diff inputs

#[test]
fn diff_refuses_a_fifo_a_device_and_an_oversized_input() {
    let d = case_dir();
    let o = run(
        d.path(),
        &["run", "tiny.yaml", "--no-baseline", "--out", "out"],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    mkfifo(&d.path().join("fifo.json"));
    link(Path::new("/dev/zero"), &d.path().join("zero.json"));
    oversized(&d.path().join("big.json"));
    let before = fingerprint(d.path(), &[]);
    for (name, words) in [
        ("fifo.json", FIFO_WORDS),
        ("zero.json", DEVICE_WORDS),
        ("big.json", SIZE_WORDS),
    ] {
        for args in [["diff", "out", name], ["diff", name, "out"]] {
            let o = run(d.path(), &args, &[]);
            refused(&o, name, words);
        }
    }
    // A link to a real verdicts document is a file the user named: followed.
    link(
        &d.path().join("out/verdicts.json"),
        &d.path().join("linked.json"),
    );
    let o = run(d.path(), &["diff", "out", "linked.json"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut after = fingerprint(d.path(), &[]);
    after.remove(Path::new("linked.json"));
    assert_eq!(before, after);
}

// ---------------------------------------------------------------- family 1: snapshots

fn snapshot_case(plant: impl FnOnce(&Path), words: &[&str]) {
    let d = case_dir();
    let base = d.path().join("base");
    std::fs::create_dir(&base).unwrap();
    let f = dpclaims::report::baseline::snapshot_file(&base, "tiny");
    plant(&f);
    let before = fingerprint(d.path(), &["out"]);
    let o = run(
        d.path(),
        &["run", "tiny.yaml", "--baseline", "base", "--out", "out"],
        &[],
    );
    refused(&o, "tiny.yaml.snap", words);
    assert!(
        !o.stderr.contains("consistent"),
        "refused after simulating: {}",
        o.stderr
    );
    assert_eq!(before, fingerprint(d.path(), &["out"]));
}

#[test]
fn a_baseline_snapshot_that_is_a_fifo_is_refused_before_simulating() {
    snapshot_case(mkfifo, FIFO_WORDS);
}

#[test]
fn a_baseline_snapshot_linked_to_dev_zero_is_refused() {
    snapshot_case(|f| link(Path::new("/dev/zero"), f), DEVICE_WORDS);
}

#[test]
fn an_oversized_baseline_snapshot_is_refused() {
    snapshot_case(oversized, SIZE_WORDS);
}

// ---------------------------------------------------------------- family 1: cache entries

/// Runs the tiny spec with a fresh cache `c` and returns its entry files.
fn cached_run(d: &Path) -> Vec<PathBuf> {
    let o = run(
        d,
        &[
            "run",
            "tiny.yaml",
            "--no-baseline",
            "--no-reports",
            "--cache",
            "c",
        ],
        &[("DPCLAIMS_NO_CACHE", "0")],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut v = vec![];
    for b in std::fs::read_dir(d.join("c")).unwrap() {
        let b = b.unwrap().path();
        // Build folders only (the run history's `.history` holds no entries).
        if b.is_dir() && !b.file_name().unwrap().to_string_lossy().starts_with('.') {
            for s in std::fs::read_dir(&b).unwrap() {
                for e in std::fs::read_dir(s.unwrap().path()).unwrap() {
                    v.push(e.unwrap().path());
                }
            }
        }
    }
    v.sort();
    assert!(!v.is_empty());
    v
}

/// A cache entry replaced by `plant` is a miss (recomputed, the run succeeds as a cache
/// never fails a run), read without hanging, and never followed out of the cache.
fn cache_case(plant: impl Fn(&Path, &Path)) {
    let d = case_dir();
    let entries = cached_run(d.path());
    let victim = &entries[0];
    std::fs::remove_file(victim).unwrap();
    plant(d.path(), victim);
    let before = fingerprint(d.path(), &["c"]);
    let o = run(
        d.path(),
        &[
            "run",
            "tiny.yaml",
            "--no-baseline",
            "--no-reports",
            "--cache",
            "c",
        ],
        &[("DPCLAIMS_NO_CACHE", "0")],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("computed"), "{}", o.stderr);
    assert_eq!(before, fingerprint(d.path(), &["c"]));
}

#[test]
fn a_cache_entry_that_is_a_fifo_is_a_miss_not_a_hang() {
    cache_case(|_, f| mkfifo(f));
}

#[test]
fn a_cache_entry_linked_to_dev_zero_is_a_miss_and_the_link_is_replaced() {
    cache_case(|_, f| link(Path::new("/dev/zero"), f));
}

#[test]
fn a_cache_entry_linked_outside_the_cache_is_never_written_through() {
    cache_case(|d, f| link(&d.join("sentinel/victim.txt"), f));
}

#[test]
fn an_oversized_cache_entry_is_a_miss() {
    cache_case(|_, f| oversized(f));
}

// ---------------------------------------------------------------- family 2: writes

#[test]
fn junit_to_dev_null_leaves_the_device_a_device() {
    use std::os::unix::fs::FileTypeExt as _;
    unchanged_outside(
        &["out"],
        |_| {},
        |d| {
            let o = run(
                d,
                &[
                    "run",
                    "tiny.yaml",
                    "--no-baseline",
                    "--out",
                    "out",
                    "--junit",
                    "/dev/null",
                ],
                &[],
            );
            assert_eq!(o.code, 0, "{}", o.stderr);
            let m = std::fs::symlink_metadata("/dev/null").unwrap();
            assert!(m.file_type().is_char_device(), "/dev/null was replaced");
        },
    );
}

#[test]
fn junit_to_dev_stdout_goes_to_the_output_stream() {
    unchanged_outside(
        &["out"],
        |_| {},
        |d| {
            let o = run(
                d,
                &[
                    "run",
                    "tiny.yaml",
                    "--no-baseline",
                    "--no-reports",
                    "--junit",
                    "/dev/stdout",
                ],
                &[],
            );
            assert_eq!(o.code, 0, "{}", o.stderr);
            assert!(o.stdout.contains("<testsuites"), "{}", o.stdout);
            assert!(o.stdout.contains("claims, profile quick"), "{}", o.stdout);
        },
    );
}

#[test]
fn junit_at_a_link_pointing_outside_replaces_the_link_not_its_target() {
    unchanged_outside(
        &["out"],
        |_| {},
        |d| {
            std::fs::create_dir(d.join("out")).unwrap();
            link(&d.join("sentinel/victim.txt"), &d.join("out/junit.xml"));
            let o = run(
                d,
                &[
                    "run",
                    "tiny.yaml",
                    "--no-baseline",
                    "--out",
                    "out",
                    "--junit",
                    "out/junit.xml",
                ],
                &[],
            );
            assert_eq!(o.code, 0, "{}", o.stderr);
            let m = std::fs::symlink_metadata(d.join("out/junit.xml")).unwrap();
            assert!(m.is_file(), "the link was not replaced");
            assert!(std::fs::read_to_string(d.join("out/junit.xml"))
                .unwrap()
                .contains("<testsuite"));
        },
    );
}

#[test]
fn stability_json_at_a_link_pointing_outside_is_not_written_through() {
    unchanged_outside(
        &["out"],
        |_| {},
        |d| {
            std::fs::create_dir(d.join("out")).unwrap();
            link(&d.join("sentinel/notes.md"), &d.join("out/st.json"));
            let o = run(
                d,
                &[
                    "stability",
                    "tiny.yaml",
                    "--seeds",
                    "1",
                    "--out",
                    "out",
                    "--json",
                    "out/st.json",
                ],
                &[],
            );
            assert_eq!(o.code, 0, "{}", o.stderr);
            assert!(std::fs::symlink_metadata(d.join("out/st.json"))
                .unwrap()
                .is_file());
        },
    );
}

#[test]
fn junit_at_a_directory_is_refused_before_simulating() {
    unchanged_outside(
        &["out"],
        |_| {},
        |d| {
            let o = run(
                d,
                &[
                    "run",
                    "tiny.yaml",
                    "--no-baseline",
                    "--out",
                    "out",
                    "--junit",
                    "sentinel",
                ],
                &[],
            );
            refused(&o, "sentinel", &["directory"]);
            assert!(!o.stderr.contains("consistent"), "{}", o.stderr);
        },
    );
}

#[test]
fn junit_to_a_fifo_without_a_reader_fails_instead_of_waiting() {
    unchanged_outside(
        &["out"],
        |d| mkfifo(&d.join("sentinel/pipe")),
        |d| {
            let o = run(
                d,
                &[
                    "run",
                    "tiny.yaml",
                    "--no-baseline",
                    "--out",
                    "out",
                    "--junit",
                    "sentinel/pipe",
                ],
                &[],
            );
            refused(&o, "sentinel/pipe", &["no reader"]);
        },
    );
}

#[test]
fn the_atomic_writer_never_follows_links_it_did_not_create() {
    // Links planted at the final name and at names a temporary could take (the old,
    // predictable `.<name>.tmp-<pid>` for every pid up to ours): none is written through.
    let d = case_dir();
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let victim = d.path().join("sentinel/victim.txt");
    link(&victim, &out.join("x.md"));
    for pid in 1..200 {
        link(&victim, &out.join(format!(".x.md.tmp-{pid}")));
    }
    let before = fingerprint(d.path(), &["out"]);
    dpclaims::report::write_atomic(&out.join("x.md"), b"new").unwrap();
    assert_eq!(std::fs::read(out.join("x.md")).unwrap(), b"new");
    assert_eq!(before, fingerprint(d.path(), &["out"]));
}

#[test]
fn a_mount_point_as_output_is_written_file_by_file() {
    // /proc is a mount point everywhere: the swap is known impossible up front.
    assert!(dpclaims::report::set::swap_impossible(Path::new("/proc")).is_some());
    let d = case_dir();
    assert!(dpclaims::report::set::swap_impossible(&d.path().join("sentinel")).is_none());
}

// ---------------------------------------------------------------- family 2: ownership

/// A foreign directory: a checkout-like tree two levels deep (what prune used to delete).
fn foreign_tree(d: &Path) {
    for (sub, file) in [
        ("src/a", "lib.rs"),
        ("docs/b", "x.md"),
        ("0123456789abcdef/ab", "k"),
    ] {
        std::fs::create_dir_all(d.join("sentinel").join(sub)).unwrap();
        std::fs::write(d.join("sentinel").join(sub).join(file), "tracked\n").unwrap();
    }
}

#[test]
fn cache_prune_in_a_foreign_directory_deletes_nothing() {
    unchanged_outside(&[], foreign_tree, |d| {
        let s = d.join("sentinel");
        for args in [
            &["cache", "prune"][..],
            &["cache", "prune", "--all"],
            &["cache", "stats"],
        ] {
            let o = run(&s, args, &[("DPCLAIMS_CACHE", ".")]);
            refused(&o, "not a dpclaims result cache", &["nothing was deleted"]);
        }
        let o = run(d, &["cache", "prune", "--cache", "sentinel"], &[]);
        refused(&o, "sentinel", &["not a dpclaims result cache"]);
    });
}

#[test]
fn cache_on_a_foreign_non_empty_directory_writes_nothing_into_it() {
    unchanged_outside(
        &["out"],
        |_| {},
        |d| {
            let o = run(
                d,
                &[
                    "run",
                    "tiny.yaml",
                    "--no-baseline",
                    "--out",
                    "out",
                    "--cache",
                    "sentinel",
                ],
                &[("DPCLAIMS_NO_CACHE", "0")],
            );
            refused(&o, "sentinel", &["not a dpclaims result cache"]);
            assert!(!d.join("sentinel/CACHEDIR.TAG").exists());
            assert!(!d.join("sentinel/.gitignore").exists());
        },
    );
}

#[test]
fn an_empty_directory_becomes_a_cache_and_prune_works_in_it() {
    let d = case_dir();
    std::fs::create_dir(d.path().join("c")).unwrap();
    cached_run(d.path());
    assert!(d.path().join("c/CACHEDIR.TAG").is_file());
    let o = run(d.path(), &["cache", "prune", "--all", "--cache", "c"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn cache_prune_never_follows_a_link_out_of_the_cache() {
    let d = case_dir();
    cached_run(d.path());
    foreign_tree(d.path());
    // A "build folder" that is a link to the user's tree, and one inside a real build.
    link(
        &d.path().join("sentinel/0123456789abcdef"),
        &d.path().join("c/fedcba9876543210"),
    );
    let before = fingerprint(d.path(), &["c"]);
    let o = run(d.path(), &["cache", "prune", "--all", "--cache", "c"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(before, fingerprint(d.path(), &["c"]));
}

// ---------------------------------------------------------------- family 5: budgets

#[test]
fn an_external_audit_of_huge_trials_is_refused_before_a_core_starts() {
    unchanged_outside(
        &[],
        |_| {},
        |d| {
            let started = d.join("sentinel/core-started");
            let cmd = format!("touch {}", started.display());
            let o = run(
                d,
                &[
                    "audit",
                    "--system",
                    "external",
                    "--epsilon",
                    "1",
                    "--delta",
                    "1e-5",
                    "--trials",
                    "100000000000000",
                    "--command",
                    &cmd,
                ],
                &[],
            );
            refused(&o, "--trials", &["exceeds the limit"]);
            assert!(!started.exists(), "the core was started");
        },
    );
}

#[test]
fn the_memory_budget_takes_the_smallest_of_machine_cgroup_and_rlimit() {
    use dpclaims::plan::budget::{memory_budget, parse_cgroup_limit};
    let gb = 1e9;
    assert_eq!(memory_budget(32.0 * gb, None, None), 16.0 * gb);
    assert_eq!(memory_budget(32.0 * gb, Some(4.0 * gb), None), 4.0 * gb);
    assert_eq!(
        memory_budget(32.0 * gb, Some(4.0 * gb), Some(2.0 * gb)),
        2.0 * gb
    );
    assert_eq!(memory_budget(32.0 * gb, None, Some(1e20)), 16.0 * gb);
    assert_eq!(parse_cgroup_limit("max"), None);
    assert_eq!(parse_cgroup_limit("2147483648\n"), Some(2147483648.0));
}

#[test]
fn under_ulimit_v_the_planner_budget_follows_the_limit() {
    // `plan` prints the memory limit it checks against; under `ulimit -v` of 2 GiB it is
    // that limit (2.147 GB), not half of the machine.
    let d = case_dir();
    let bin = env!("CARGO_BIN_EXE_dpclaims");
    let out = Command::new("sh")
        .current_dir(d.path())
        .arg("-c")
        .arg(format!("ulimit -v 2097152 && exec {bin} plan tiny.yaml"))
        .env("DPCLAIMS_NO_CACHE", "1")
        .env_remove("DPCLAIMS_MAX_MEMORY_GB")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("(limit 2.147 GB)"), "{stdout}{stderr}");
}
