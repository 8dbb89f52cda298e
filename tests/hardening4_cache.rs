//! Issue 58 (hardening, fourth round): the result cache's key and the external-core
//! process family.
//!
//! * The key is derived from everything a unit's result depends on, not from a hand-kept
//!   list: every leaf of a real external spec (the audit example, `external.audit`
//!   included) and of a real built-in one is changed in turn, and the key must change
//!   unless the leaf sits under a key declared prose (`spec::judged::PROSE_KEYS`, the one
//!   list); every file of a core, its program (`argv[0]`) included, is edited in turn and
//!   the key must change. Then both reproductions end to end: a changed audit setting
//!   recomputes the audit, an edited `./core.py` recomputes its units.
//! * A program command (`["./core.py"]`, `["bin/core.py"]`) starts from a relative spec
//!   path (`dpclaims run claims/x.yaml`): it is the spec directory's.
//! * A `kill -9` of dpclaims takes its busy cores and their children with it.
//!
//! Every run of the binary is under a deadline and checks its exit status and message.
use super::hardening3_util::{self as util, alive, digest, Out};
use dpclaims::execute;
use dpclaims::execute::cache::entry::CacheKey;
use dpclaims::spec::{self, judged, Profile};
use serde_yaml::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn numpy() -> bool {
    Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The keys a run of the claim in `text` (read as the file `path`) would look up, or
/// `None` when the text is not a valid claim (or its core cannot be started).
fn keys(path: &Path, text: &str) -> Option<Vec<Option<CacheKey>>> {
    let claim = spec::claim_from_bytes(path, text.as_bytes()).ok()?;
    assert_eq!(
        claim.key_hash,
        judged::key_hash(text),
        "a claim's key hash is the judged content of its text"
    );
    execute::planned_keys(&claim, Profile::Quick, 0, "build-h58", "paper").ok()
}

/// Every leaf of `v`: its path (keys and list indices) and whether a key on the way is
/// declared prose.
fn leaves(v: &Value, path: &mut Vec<String>, prose: bool, out: &mut Vec<(Vec<String>, bool)>) {
    match v {
        Value::Mapping(m) => {
            for (k, val) in m {
                let k = k.as_str().unwrap_or("?").to_string();
                let p = prose || judged::PROSE_KEYS.contains(&k.as_str());
                path.push(k);
                leaves(val, path, p, out);
                path.pop();
            }
        }
        Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(format!("[{i}]"));
                leaves(item, path, prose, out);
                path.pop();
            }
        }
        Value::Tagged(t) => leaves(&t.value, path, prose, out),
        _ => out.push((path.clone(), prose)),
    }
}

fn at<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    let mut cur = v;
    for seg in path {
        cur = match seg.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            Some(i) => &mut cur.as_sequence_mut().unwrap()[i.parse::<usize>().unwrap()],
            None => cur.as_mapping_mut().unwrap().get_mut(seg.as_str()).unwrap(),
        };
    }
    cur
}

/// Valid words of the spec format's enumerations: tried as other values of a string leaf
/// (so that `estimator: gdp` can become a spec that still loads).
const WORDS: &[&str] = &[
    "best",
    "clopper_pearson",
    "gdp",
    "add_remove",
    "replace_one",
];

/// Other values for a leaf, the likeliest to keep the spec valid first.
fn candidates(leaf: &Value) -> Vec<Value> {
    match leaf {
        Value::Bool(b) => vec![Value::Bool(!b)],
        Value::Number(n) => {
            let mut out = Vec::new();
            if let Some(i) = n.as_u64() {
                out.extend([i + 1, i * 2 + 1].map(Value::from));
            }
            if let Some(x) = n.as_f64() {
                out.extend([x * 1.5, x + 1.0, x / 2.0, x * 0.9].map(Value::from));
            }
            out.retain(|c| c != leaf);
            out
        }
        Value::String(s) => {
            let mut out: Vec<Value> = WORDS
                .iter()
                .filter(|w| **w != s && !s.is_empty())
                .map(|w| Value::from(*w))
                .collect();
            out.insert(0, Value::from(format!("({s}) * 1.5")));
            out.insert(0, Value::from(format!("{s}x")));
            out
        }
        Value::Null => vec![Value::from(1)],
        _ => vec![],
    }
}

/// What the leaf walk found: leaves checked on the keys of a loaded claim, leaves whose
/// every other value makes the spec invalid (checked on the spec's key hash, the part of
/// every key that holds the spec), and the prose leaves.
#[derive(Default, Debug)]
struct Walk {
    on_keys: BTreeSet<String>,
    on_hash: BTreeSet<String>,
    prose: BTreeSet<String>,
}

/// Changes every leaf of the spec `file` (written as `dir/name`) in turn and checks the
/// keys (module docs).
fn walk_spec(dir: &Path, name: &str, text: &str) -> Walk {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let original = keys(&path, text).expect("the original spec loads and plans");
    assert!(original.iter().all(Option::is_some), "every unit is cached");
    let before: BTreeSet<&CacheKey> = original.iter().flatten().collect();
    let root: Value = serde_yaml::from_str(text).unwrap();
    let mut all = Vec::new();
    leaves(&root, &mut Vec::new(), false, &mut all);
    let mut w = Walk::default();
    for (leaf_path, prose) in all {
        let label = leaf_path.join(".");
        let mut tried = None;
        for c in candidates(at(&mut root.clone(), &leaf_path)) {
            let mut v = root.clone();
            *at(&mut v, &leaf_path) = c;
            let changed = serde_yaml::to_string(&v).unwrap();
            tried.get_or_insert_with(|| changed.clone());
            let Some(after) = keys(&path, &changed) else {
                continue;
            };
            if prose {
                assert_eq!(after, original, "prose `{label}` changed a key");
            } else {
                assert!(
                    after.iter().flatten().all(|k| !before.contains(k)),
                    "`{label}` changed and a unit kept its key: a stale value would be served"
                );
            }
            tried = None;
            w.on_keys.insert(label.clone());
            break;
        }
        if let Some(changed) = tried {
            // No other value of this leaf loads: the key's spec part still must move.
            let (a, b) = (judged::key_hash(text), judged::key_hash(&changed));
            if prose {
                assert_eq!(a, b, "prose `{label}` changed the spec's key hash");
            } else {
                assert_ne!(a, b, "`{label}` is missing from the spec's key hash");
                w.on_hash.insert(label.clone());
            }
        }
        if prose {
            w.prose.insert(label);
        }
    }
    eprintln!(
        "{name}: {} leaves checked on the keys of a loaded claim, {} on the spec's key hash only (no other value loads), {} prose",
        w.on_keys.len(),
        w.on_hash.len(),
        w.prose.len()
    );
    w
}

#[test]
fn every_leaf_of_a_real_external_spec_changes_the_key_unless_declared_prose() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let ex = repo().join("examples/external");
    std::fs::copy(
        ex.join("gaussian_mean.py"),
        d.path().join("gaussian_mean.py"),
    )
    .unwrap();
    let text = std::fs::read_to_string(ex.join("gaussian-mean-audit.yaml")).unwrap();
    let w = walk_spec(d.path(), "gaussian-mean-audit.yaml", &text);
    // The three audit settings that were missing from the old key, on real keys.
    for f in [
        "external.audit.trials",
        "external.audit.estimator",
        "external.audit.confidence",
    ] {
        assert!(w.on_keys.contains(f), "{f} not checked on keys: {w:?}");
    }
    assert!(
        w.prose.contains("title") && w.prose.contains("statement"),
        "{w:?}"
    );
    assert!(w.on_keys.len() >= 15, "{w:?}");
}

#[test]
fn every_leaf_of_a_real_built_in_spec_changes_the_key_unless_declared_prose() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("claims/sigma-a-calibration.yaml")).unwrap();
    let w = walk_spec(d.path(), "sigma-a-calibration.yaml", &text);
    for f in [
        "predictions.[0].rhs",
        "sweeps.grid.full.replicates",
        "sweeps.grid.full.axes.frac.[0]",
    ] {
        assert!(w.on_keys.contains(f), "{f} not checked on keys: {w:?}");
    }
    assert!(w.prose.contains("discussion") && w.prose.contains("predictions.[0].note"));
    assert!(w.on_keys.len() >= 40, "{w:?}");
}

/// A core of three files: its program `core.py` (run as `./core.py`), a table it is given
/// as an argument, and a declared library; plus a file it does not use.
fn program_core(dir: &Path) -> PathBuf {
    let core = util::core(util::ok_answer());
    std::fs::write(
        dir.join("core.py"),
        format!("#!/usr/bin/env python3\n{core}"),
    )
    .unwrap();
    set_exec(&dir.join("core.py"));
    std::fs::write(dir.join("table.txt"), "1 2 3\n").unwrap();
    std::fs::write(dir.join("lib.py"), "X = 1\n").unwrap();
    std::fs::write(dir.join("unrelated.txt"), "notes\n").unwrap();
    let spec = util::spec("prog", "program core").replace(
        r#"  command: ["python3", "core.py"]"#,
        "  command: [\"./core.py\", \"table.txt\"]\n  files: [lib.py]",
    );
    assert!(spec.contains("./core.py"));
    let path = dir.join("prog.yaml");
    std::fs::write(&path, spec).unwrap();
    path
}

fn set_exec(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn every_file_of_a_core_its_program_included_changes_the_key() {
    let d = tempfile::tempdir().unwrap();
    let path = program_core(d.path());
    let text = std::fs::read_to_string(&path).unwrap();
    let original = keys(&path, &text).expect("the core starts");
    assert!(original.iter().all(Option::is_some));
    for f in ["core.py", "table.txt", "lib.py"] {
        let p = d.path().join(f);
        let old = std::fs::read(&p).unwrap();
        std::fs::write(&p, [old.as_slice(), b"\n# edited\n"].concat()).unwrap();
        let after = keys(&path, &text).expect("the edited core starts");
        assert!(
            after.iter().zip(&original).all(|(a, b)| a != b),
            "{f} edited and a unit kept its key"
        );
        std::fs::write(&p, &old).unwrap();
        assert_eq!(keys(&path, &text).unwrap(), original, "{f} restored");
    }
    std::fs::write(d.path().join("unrelated.txt"), "other notes\n").unwrap();
    assert_eq!(
        keys(&path, &text).unwrap(),
        original,
        "a file the core does not name decides nothing"
    );
}

/// `dpclaims <args>` in `dir` with the result cache on (the tests' default turns it off).
fn run_cached(dir: &Path, args: &[&str]) -> Out {
    let mut c = util::cmd(dir, args);
    c.env_remove("DPCLAIMS_NO_CACHE");
    util::wait(c.spawn().expect("start dpclaims"), DEADLINE)
}

/// (units read, units in all) from the cache's line on stderr.
fn cache_line(o: &Out) -> (usize, usize) {
    let line = o
        .stderr
        .lines()
        .find(|l| l.contains("units read"))
        .unwrap_or_else(|| panic!("no cache line in:\n{}", o.stderr));
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "of").unwrap();
    (words[i - 1].parse().unwrap(), words[i + 1].parse().unwrap())
}

fn not_exit2(o: &Out) {
    assert!(
        matches!(o.code, Some(0) | Some(1)),
        "stdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
    assert!(!o.stderr.contains("internal error"), "{}", o.stderr);
}

#[test]
fn a_changed_audit_setting_recomputes_the_audit_and_prose_does_not() {
    if !numpy() {
        eprintln!("skipped: python3 with numpy is not installed (examples/external needs it)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let ex = repo().join("examples/external");
    std::fs::copy(
        ex.join("gaussian_mean.py"),
        d.path().join("gaussian_mean.py"),
    )
    .unwrap();
    let spec = std::fs::read_to_string(ex.join("gaussian-mean-audit.yaml"))
        .unwrap()
        .replace("trials: 2000", "trials: 200");
    let write = |s: &str| std::fs::write(d.path().join("audit.yaml"), s).unwrap();
    write(&spec);
    let args = ["run", "audit.yaml", "--no-reports", "--cache", "cache"];
    let first = run_cached(d.path(), &args);
    not_exit2(&first);
    let (read, n) = cache_line(&first);
    assert_eq!(read, 0, "{}", first.stderr);
    let again = run_cached(d.path(), &args);
    assert_eq!(cache_line(&again), (n, n), "{}", again.stderr);
    assert_eq!(first.stdout, again.stdout);
    // Each audit setting alone: the audit runs again (it was served from the cache).
    for (from, to) in [
        ("trials: 200", "trials: 300"),
        ("estimator: gdp", "estimator: clopper_pearson"),
        ("confidence: 0.95", "confidence: 0.9"),
    ] {
        let changed = spec.replace(from, to);
        assert_ne!(changed, spec, "{from}");
        write(&changed);
        let o = run_cached(d.path(), &args);
        not_exit2(&o);
        assert_eq!(cache_line(&o), (0, n), "{to}: {}", o.stderr);
    }
    // Prose: the title and a prediction's note decide nothing.
    write(&spec.replace("External core audited", "An external core audited"));
    let o = run_cached(d.path(), &args);
    assert_eq!(cache_line(&o), (n, n), "{}", o.stderr);
}

/// A project whose claim `claims/x.yaml` runs the program `claims/<program>` (logging
/// each unit it answers to `claims/answered.log`), files declared.
fn program_project(program: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let claims = d.path().join("claims");
    let prog = claims.join(program);
    std::fs::create_dir_all(prog.parent().unwrap()).unwrap();
    let body = format!(
        "    open(\"answered.log\", \"a\").write(u + \"\\n\")\n{}",
        util::ok_answer()
    );
    std::fs::write(
        &prog,
        format!("#!/usr/bin/env python3\n{}", util::core(&body)),
    )
    .unwrap();
    set_exec(&prog);
    let spec = util::spec("x", "a program core").replace(
        r#"  command: ["python3", "core.py"]"#,
        &format!("  command: [\"{program}\"]\n  files: [{program}]"),
    );
    std::fs::write(claims.join("x.yaml"), spec).unwrap();
    d
}

fn answered(dir: &Path) -> usize {
    let p = dir.join("claims/answered.log");
    let n = std::fs::read_to_string(&p)
        .unwrap_or_default()
        .lines()
        .count();
    let _ = std::fs::remove_file(p);
    n
}

#[test]
fn a_program_core_runs_from_a_relative_spec_path_and_an_edit_recomputes_it() {
    let d = program_project("./core.py");
    let root = d.path();
    let args = ["run", "claims/x.yaml", "--no-reports", "--cache", "cache"];
    let before = digest(root, &["cache", "target", "claims/answered.log"]);
    let first = run_cached(root, &args);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let n = answered(root);
    assert_eq!(cache_line(&first), (0, n), "{}", first.stderr);
    let again = run_cached(root, &args);
    assert_eq!(
        (answered(root), cache_line(&again)),
        (0, (n, n)),
        "{}",
        again.stderr
    );
    // The program is the core: editing it computes every unit again.
    let prog = root.join("claims/core.py");
    let text = std::fs::read_to_string(&prog).unwrap();
    std::fs::write(&prog, format!("{text}# edited\n")).unwrap();
    let edited = run_cached(root, &args);
    assert_eq!(edited.code, Some(0), "{}", edited.stderr);
    assert_eq!(
        (answered(root), cache_line(&edited)),
        (n, (0, n)),
        "{}",
        edited.stderr
    );
    std::fs::write(&prog, text).unwrap();
    assert_eq!(
        digest(root, &["cache", "target", "claims/answered.log"]),
        before,
        "nothing outside the cache and the output changed"
    );
}

#[test]
fn a_program_in_a_subfolder_of_the_spec_runs_from_a_relative_spec_path() {
    let d = program_project("bin/core.py");
    let o = util::run(d.path(), &["run", "claims/x.yaml", "--no-reports"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(answered(d.path()) > 0);
    assert!(!o.stderr.contains("cannot start"), "{}", o.stderr);
    // From inside the claims folder too (the spec path has no directory at all).
    let o = util::run(&d.path().join("claims"), &["run", "x.yaml", "--no-reports"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn a_kill_9_of_dpclaims_takes_its_busy_cores_and_their_children() {
    // Busy cores: each starts a child in its own group (`sleep`), records both pids,
    // then works on its first unit for minutes (a sleep: the same for the kernel's
    // parent-death signal, kinder to a shared machine than a spin).
    let body = r#"    if first:
        first = False
        c = subprocess.Popen(["sleep", "300"])
        os.makedirs("pids", exist_ok=True)
        with open(f"pids/{os.getpid()}", "w") as f:
            f.write(f"{os.getpid()} {c.pid}\n")
    time.sleep(300)"#;
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("core.py"), util::core(body)).unwrap();
    std::fs::write(d.path().join("claim.yaml"), util::spec("k9", "kill -9")).unwrap();
    let mut child = util::cmd(d.path(), &["run", "claim.yaml", "--no-reports"])
        .env("RAYON_NUM_THREADS", "2")
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while util::recorded_pids(d.path()).len() < 4 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let pids = util::recorded_pids(d.path());
    assert!(pids.len() >= 2, "no core started: {pids:?}");
    assert!(pids.iter().all(|p| alive(*p)), "the cores run: {pids:?}");
    // SIGKILL: dpclaims runs no code of its own after it.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    // A generous deadline for "gone" (no claim on speed).
    let t0 = Instant::now();
    while pids.iter().any(|p| alive(*p)) && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for p in &left {
        // SAFETY: kill(2) of this test's own leftover.
        unsafe {
            libc::kill(*p, libc::SIGKILL);
        }
    }
    assert!(
        left.is_empty(),
        "outlived a kill -9 of dpclaims: {left:?} of {pids:?}"
    );
}
