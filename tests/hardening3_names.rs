//! Issue 50, family 7: names and text. A spec whose file name is not UTF-8 is an error
//! naming it; terminal control characters of spec text are escaped in `list`; `accept`
//! and `man --out` refuse links; a FIFO inside the output directory is found before any
//! core starts. Each case checks the exit status, the message, and that no file outside
//! the output changed, under a deadline.
use super::hardening3_util::{digest, exit2, project, run, spec};
use std::os::unix::ffi::OsStrExt as _;

#[test]
fn a_spec_whose_name_is_not_utf8_is_an_error_naming_it_not_skipped() {
    let d = project(&["ca"]);
    let name = std::ffi::OsStr::from_bytes(b"b\xff.yaml");
    std::fs::write(d.path().join("claims").join(name), spec("cb", "cb")).unwrap();
    let before = digest(d.path(), &[]);
    for cmd in ["list", "check", "plan"] {
        let o = run(d.path(), &[cmd, "claims"]);
        assert_eq!(o.code, Some(2), "{cmd}: {}{}", o.stdout, o.stderr);
        // `check` lists its findings on stdout.
        let all = format!("{}{}", o.stdout, o.stderr);
        assert!(
            all.contains("b\u{fffd}.yaml") && all.contains("not UTF-8"),
            "{cmd}: {all}"
        );
    }
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

#[test]
fn list_escapes_terminal_control_characters_of_a_title() {
    let d = tempfile::tempdir().unwrap();
    // YAML's "\e" is ESC: a title that would clear the screen and set the window title.
    let text =
        spec("ca", "ok").replace("title: \"ok\"", "title: \"a\\e[2J\\e]0;pwned\\a b\\u202e\"");
    std::fs::write(d.path().join("claim.yaml"), text).unwrap();
    let o = run(d.path(), &["list", "claim.yaml"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        !o.stdout.chars().any(|c| c.is_control() && c != '\n') && !o.stdout.contains('\u{202e}'),
        "raw control characters on the terminal: {:?}",
        o.stdout
    );
    assert!(
        o.stdout.contains("a\\x1b[2J\\x1b]0;pwned\\x07 b\\u{202e}"),
        "{:?}",
        o.stdout
    );
}

#[test]
fn list_prints_a_plain_title_unchanged() {
    // Negative control of the escape: ordinary text (UTF-8 included) is not touched.
    let d = tempfile::tempdir().unwrap();
    let text = spec("ca", "ok").replace("title: \"ok\"", "title: \"ε-DP, σ ≥ 1\"");
    std::fs::write(d.path().join("claim.yaml"), text).unwrap();
    let o = run(d.path(), &["list", "claim.yaml"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("ε-DP, σ ≥ 1"), "{:?}", o.stdout);
}

#[test]
fn accept_refuses_a_pending_snapshot_that_is_a_link() {
    let d = tempfile::tempdir().unwrap();
    let pending = d.path().join("target/dpclaims/pending");
    std::fs::create_dir_all(&pending).unwrap();
    std::fs::write(d.path().join("secret.txt"), "not a snapshot\n").unwrap();
    std::os::unix::fs::symlink(
        d.path().join("secret.txt"),
        pending.join("tests__claims__every_claim_at_the_quick_profile@ca.yaml.snap"),
    )
    .unwrap();
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["accept"]);
    exit2(&o, &["symbolic link", "refusing"]);
    assert!(
        !d.path().join("tests/snapshots").exists(),
        "a file entered the baseline"
    );
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

#[test]
fn man_out_never_writes_through_a_link() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("man")).unwrap();
    std::fs::write(d.path().join("victim.txt"), "keep me\n").unwrap();
    std::os::unix::fs::symlink(d.path().join("victim.txt"), d.path().join("man/dpclaims.1"))
        .unwrap();
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["man", "--out", "man"]);
    exit2(&o, &["dpclaims.1", "symbolic link"]);
    assert_eq!(
        std::fs::read_to_string(d.path().join("victim.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}

#[test]
fn man_out_writes_its_pages_into_an_empty_directory() {
    // Control: the refusal above is about the link, not about writing pages.
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), &["man", "--out", "man"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(d.path().join("man/dpclaims.1").is_file());
    assert!(std::fs::read_dir(d.path().join("man"))
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().starts_with('.')));
}

#[test]
fn a_fifo_inside_the_output_directory_is_found_before_any_core_starts() {
    let d = project(&["ca"]);
    std::fs::create_dir_all(d.path().join("out/raw")).unwrap();
    let fifo = d.path().join("out/raw/pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo of a path in the test's own directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let before = digest(d.path(), &[]);
    let o = run(d.path(), &["run", "claims/ca.yaml", "--out", "out"]);
    exit2(&o, &["out/raw/pipe", "named pipe"]);
    assert!(
        !d.path().join("claims/started").exists(),
        "a core ran first"
    );
    assert_eq!(digest(d.path(), &[]), before, "files changed");
}
