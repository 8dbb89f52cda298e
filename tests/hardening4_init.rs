//! Issue 58, item 5: `dpclaims init` all or nothing (src/project/init.rs). A project made
//! in a subdirectory of a git repository rewrites its committed reports (its root is not
//! the repository's: src/cli/alias.rs `tracked`); an init that fails midway — a plain
//! file where it makes a directory, a full disk (a file-size limit, which holds for root
//! too) — leaves the directory exactly as it was, and a retry is not told "already a
//! dpclaims project"; a symbolic link where init writes is refused with nothing written;
//! control characters in the name are escaped on output; the staging directory a
//! `kill -9` leaves is removed by the next init there, and nothing else is (issue 58,
//! src/project/stale.rs). Every case runs under a hang
//! guard (`hardening3_util::wait`), checks the exit status and the message, and that
//! nothing outside the target directory changed (for a failure: nothing at all).
use super::hardening3_util::{cmd, digest, exit2, run, wait, Out, DEADLINE};
use std::path::Path;
use std::process::Command;

/// A git command in `dir` under the tests' fixed identity; it must succeed.
fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn tools() -> bool {
    let ok = |c: &str, a: &[&str]| {
        Command::new(c)
            .args(a)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    ok("git", &["--version"]) && ok("python3", &["-c", "import numpy"])
}

/// No staging directory of init left in `dir`.
fn no_staging_left(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            assert!(!n.starts_with(".dpclaims-init"), "left behind: {n}");
        }
    }
}

fn ok(o: &Out) {
    assert_eq!(
        o.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
}

/// (a) `init sub/proj` in a repository, run, commit, run again: exit 0 and the committed
/// reports rewritten (a tampered committed SUMMARY.md is the run's again); nothing outside
/// the project changed.
#[test]
fn a_project_in_a_git_subdirectory_rewrites_its_committed_reports() {
    if !tools() {
        eprintln!("SKIPPED: git, or python3 with numpy (the example core), is not available");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let repo = d.path();
    git(repo, &["init", "-q", "."]);
    std::fs::write(repo.join("outside.txt"), "the repository's own file\n").unwrap();
    ok(&run(repo, &["init", "sub/proj"]));
    let proj = repo.join("sub/proj");
    ok(&run(&proj, &["run"]));
    let summary = proj.join("reports/SUMMARY.md");
    let first = std::fs::read(&summary).unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "first run"]);
    // A committed report that is not the run's: the next run must replace it.
    std::fs::write(&summary, "tampered\n").unwrap();
    git(repo, &["commit", "-q", "-a", "-m", "tampered"]);
    let outside = digest(repo, &["sub/proj", ".git"]);
    let o = run(&proj, &["run"]);
    ok(&o);
    assert!(!o.stderr.contains("tracked file"), "{}", o.stderr);
    assert_eq!(
        std::fs::read(&summary).unwrap(),
        first,
        "reports not rewritten"
    );
    assert_eq!(digest(repo, &["sub/proj", ".git"]), outside);
    // The guard still holds for the project's other tracked files: `--out core` (its
    // committed core) is refused.
    let o = run(&proj, &["run", "--out", "core"]);
    exit2(&o, &["holds the tracked file", "sub/proj/core/"]);
}

/// (b) A failure midway, twice: a plain file named `core` (found before anything is
/// written), and a full disk (`ulimit -f`: the fourth file of the project fails with
/// EFBIG after three were written). Each time the directory tree and bytes are exactly
/// as before, no staging directory is left, and the retry (obstacle gone) succeeds.
#[test]
fn an_init_that_fails_midway_leaves_the_directory_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p");
    std::fs::create_dir_all(p.join("docs")).unwrap();
    std::fs::write(p.join("notes.txt"), "mine\n").unwrap();
    std::fs::write(p.join("docs/mine.md"), "mine\n").unwrap();
    std::fs::write(p.join("core"), "a plain file\n").unwrap();
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["init", "p"]);
    exit2(
        &o,
        &[
            "p holds core (a regular file, where init makes a directory)",
            "nothing written",
        ],
    );
    assert_eq!(digest(d.path(), &[]), before);
    no_staging_left(&p);

    // A full disk, into the existing directory (the obstacle gone) and into a new one.
    std::fs::remove_file(p.join("core")).unwrap();
    let before = digest(d.path(), &[]);
    for target in ["p", "new/q"] {
        let mut c = cmd(d.path(), &["init", target]);
        // SAFETY: setrlimit is async-signal-safe; called in the child before exec.
        unsafe {
            use std::os::unix::process::CommandExt as _;
            c.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 2048,
                    rlim_max: 2048,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let o = wait(c.spawn().unwrap(), DEADLINE);
        exit2(&o, &["cannot write", "nothing written"]);
        assert!(o.stderr.contains("too large"), "{}", o.stderr);
        assert_eq!(digest(d.path(), &[]), before, "{target}");
        no_staging_left(&p);
        no_staging_left(d.path());
        assert!(!d.path().join("new").exists());
    }
    // The retry is not told "already a dpclaims project": it writes the project.
    ok(&run(d.path(), &["init", "p"]));
    assert!(p.join("dpclaims.toml").is_file() && p.join("docs/claim.schema.json").is_file());
    assert_eq!(std::fs::read(p.join("docs/mine.md")).unwrap(), b"mine\n");
    no_staging_left(&p);
}

/// (c) A symbolic link among the paths init writes (`claims` to a directory outside,
/// `core/dpclaims_core` deeper down): exit 2 naming the links, nothing written anywhere,
/// the directories they point at untouched.
#[test]
fn a_link_where_init_writes_is_refused_with_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p");
    std::fs::create_dir_all(p.join("core")).unwrap();
    std::fs::create_dir_all(d.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", p.join("claims")).unwrap();
    std::os::unix::fs::symlink("../../elsewhere", p.join("core/dpclaims_core")).unwrap();
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["init", "p"]);
    exit2(
        &o,
        &[
            "p/claims",
            "p/core/dpclaims_core",
            "symbolic link",
            "nothing written",
        ],
    );
    assert_eq!(digest(d.path(), &[]), before);
    assert_eq!(
        std::fs::read_dir(d.path().join("elsewhere"))
            .unwrap()
            .count(),
        0
    );
    no_staging_left(&p);
}

/// (d) A name with a newline, an escape sequence and a forged workflow command: printed
/// escaped on stdout (success) and stderr (the refused second init), never raw; the
/// name in the project's files has none of them; nothing written outside the target.
#[test]
fn control_characters_in_the_name_are_escaped_on_output() {
    let d = tempfile::tempdir().unwrap();
    let name = "a\n::warning file=x::forged\u{1b}[31m\r\u{202e}b";
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["init", name]);
    ok(&o);
    for (what, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{what}: {text:?}"
        );
        assert!(!text.lines().any(|l| l.starts_with("::")), "{what}: {text}");
    }
    assert!(
        o.stdout
            .contains(r"a\x0a::warning file=x::forged\x1b[31m\x0d\u{202e}b"),
        "{}",
        o.stdout
    );
    let o = run(d.path(), &["init", name]);
    exit2(&o, &[r"a\x0a::warning", "already a dpclaims project"]);
    assert!(
        !o.stderr.contains('\u{1b}') && !o.stderr.contains("\n::"),
        "{:?}",
        o.stderr
    );
    let target = d.path().join(name);
    let toml = std::fs::read_to_string(target.join("dpclaims.toml")).unwrap();
    let line = toml.lines().find(|l| l.starts_with("name = ")).unwrap();
    assert_eq!(line, "name = \"a::warning file=x::forged[31mb\"");
    // Only the target was added to the temporary directory.
    let mut after = digest(d.path(), &[name]);
    after.remove(Path::new(name));
    assert_eq!(after, before);
}

/// The id of a process that has ended (started and waited for here).
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().expect("start true");
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// The staging directories of init in `dir` (names).
fn staging_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".dpclaims-init"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// (e) A `kill -9` leaves a staging directory (src/project/stale.rs): the next init
/// there removes it — only it — and says so on stderr. Beside it, left byte-identical:
/// one of a dead init holding a file init does not write (kept, with the reason), a link
/// with the pattern's name to a directory holding a project file (kept, its target
/// untouched), one whose owner runs (this test process: silent), one of the older
/// naming without a process id, and the user's own file.
#[test]
fn the_staging_directory_a_killed_init_left_is_removed_by_the_next_one() {
    let d = tempfile::tempdir().unwrap();
    let dead = dead_pid();
    let alive = std::process::id();
    let stale = format!(".dpclaims-init-{dead}-0123456789abcdef");
    // What a kill while init was writing `new/proj` leaves: part of the project.
    let root = d.path().join(&stale).join("new/proj");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("README.md"), "# partial").unwrap();
    std::fs::write(root.join("docs/claim.schema.json"), "{").unwrap();
    let foreign = format!(".dpclaims-init-{dead}-fedcba9876543210");
    std::fs::create_dir_all(d.path().join(&foreign)).unwrap();
    std::fs::write(d.path().join(&foreign).join("mine.txt"), "mine\n").unwrap();
    std::fs::create_dir_all(d.path().join("elsewhere")).unwrap();
    std::fs::write(d.path().join("elsewhere/README.md"), "mine\n").unwrap();
    let link = format!(".dpclaims-init-{dead}-1111111111111111");
    std::os::unix::fs::symlink("elsewhere", d.path().join(&link)).unwrap();
    let running = format!(".dpclaims-init-{alive}-2222222222222222");
    std::fs::create_dir_all(d.path().join(&running)).unwrap();
    std::fs::write(d.path().join(&running).join("README.md"), "# partial").unwrap();
    let old = ".dpclaims-init-3333333333333333";
    std::fs::create_dir_all(d.path().join(old)).unwrap();
    std::fs::write(d.path().join("notes.txt"), "mine\n").unwrap();
    let before = digest(d.path(), &[&stale]);

    let o = run(d.path(), &["init", "p"]);
    ok(&o);
    assert!(
        o.stderr.contains(&format!(
            "init: removed ./{stale}, the staging directory of an init (process {dead}) that no longer runs"
        )),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(&format!("init: left ./{foreign},"))
            && o.stderr
                .contains("it holds mine.txt, which init does not write"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(&format!("init: left ./{link},"))
            && o.stderr.contains("it is a symbolic link, not a directory"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains(&running), "{}", o.stderr);
    assert!(!o.stderr.contains(old), "{}", o.stderr);
    assert!(!d.path().join(&stale).exists());
    assert!(d.path().join("p/dpclaims.toml").is_file());
    assert_eq!(digest(d.path(), &["p"]), before);
    assert_eq!(
        staging_in(d.path()),
        [old.to_string(), foreign, link, running]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
}

/// (f) A real `kill -9` at a moment of init's own (the test watches for its staging
/// directory and kills it then; init may have finished first): whatever it left, the next
/// init in the same place succeeds, no staging directory remains, and every other file
/// is as it was. Ten rounds; how many caught init at work is printed, not asserted.
#[test]
fn a_kill_9_during_init_leaves_nothing_the_next_init_does_not_clean() {
    use std::os::unix::process::ExitStatusExt as _;
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("notes.txt"), "mine\n").unwrap();
    let mut caught = 0;
    for i in 0..10 {
        let target = format!("k{i}");
        let mut child = cmd(d.path(), &["init", &target]).spawn().unwrap();
        let prefix = format!(".dpclaims-init-{}-", child.id());
        let t0 = std::time::Instant::now();
        loop {
            if staging_in(d.path()).iter().any(|n| n.starts_with(&prefix)) {
                let _ = child.kill();
                caught += 1;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            assert!(t0.elapsed() < DEADLINE, "init did not end");
        }
        let status = child.wait().unwrap();
        assert!(
            status.success() || status.signal() == Some(libc::SIGKILL),
            "{status:?}"
        );
        // The killed init's own target (whole, or absent) aside, nothing else changed.
        let left = staging_in(d.path());
        let mut skip: Vec<&str> = left.iter().map(String::as_str).collect();
        skip.push(&target);
        let before = digest(d.path(), &skip);
        let next = format!("n{i}");
        let o = run(d.path(), &["init", &next]);
        ok(&o);
        assert!(staging_in(d.path()).is_empty(), "{}", o.stderr);
        for n in &left {
            assert!(
                o.stderr.contains(&format!("init: removed ./{n}")),
                "{}",
                o.stderr
            );
        }
        assert_eq!(digest(d.path(), &[&target, &next]), before, "round {i}");
        std::fs::remove_dir_all(d.path().join(format!("n{i}"))).unwrap();
    }
    eprintln!("init killed at work in {caught} of 10 rounds");
}
