//! The command line in a shell (issue 33, item 11): completion of claim ids, the nearest
//! subcommand for a slip, outside a checkout, times in the plan, verdict lines without
//! trailing spaces.
use crate::util::dpclaims_in;
use std::path::Path;
use std::process::{Command, Output};

const CALIBRATION: &str = "claims/sigma-a-calibration.yaml";

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A directory with `claims/alpha.yaml` and `claims/beta.yaml` (scaffolds that run) and
/// a file `notes.txt`.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    for id in ["alpha", "beta"] {
        let o = dpclaims_in(dir.path(), &["new", id, "--system", "gaussian-calibration"]);
        assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    }
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    dir
}

/// What bash's completion of dpclaims offers for `words` (the last one being
/// completed), in `dir`, with the script `dpclaims completions bash` prints.
fn bash_complete(dir: &Path, words: &[&str]) -> Option<Vec<String>> {
    let script = text(&dpclaims_in(dir, &["completions", "bash"]).stdout);
    std::fs::write(dir.join("completion.bash"), &script).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let probe = format!(
        "source ./completion.bash\n\
         COMP_WORDS=({})\nCOMP_CWORD={cword}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\nCOMP_POINT=${{#COMP_LINE}}\n\
         _dpclaims_with_claim_ids dpclaims '{}' '{prev}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        quoted.join(" "),
        words[cword]
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&probe)
        .current_dir(dir)
        .output()
        .ok()?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    Some(text(&out.stdout).lines().map(str::to_string).collect())
}

#[test]
fn completion_offers_claim_ids_and_files_after_run() {
    let dir = checkout();
    // No bash here: the scripts are still checked below.
    if let Some(all) = bash_complete(dir.path(), &["dpclaims", "run", ""]) {
        for w in ["alpha", "beta", "notes.txt", "claims"] {
            assert!(all.contains(&w.to_string()), "`{w}` not in {all:?}");
        }
        let a = bash_complete(dir.path(), &["dpclaims", "run", "al"]).unwrap();
        assert_eq!(a, vec!["alpha".to_string()]);
        let p =
            bash_complete(dir.path(), &["dpclaims", "plan", "--profile", "quick", "b"]).unwrap();
        assert_eq!(p, vec!["beta".to_string()]);
        // An option's value is completed as clap's script does (no ids).
        let o = bash_complete(dir.path(), &["dpclaims", "run", "--out", "al"]).unwrap();
        assert!(!o.contains(&"alpha".to_string()), "{o:?}");
        // Options still complete as options, and other commands get no ids.
        let f = bash_complete(dir.path(), &["dpclaims", "run", "--no-rep"]).unwrap();
        assert_eq!(f, vec!["--no-reports".to_string()]);
        let d = bash_complete(dir.path(), &["dpclaims", "diff", "al"]).unwrap();
        assert!(!d.contains(&"alpha".to_string()), "{d:?}");
    }
    // A completed id is a claim `run`, `plan` and `list` read (claims/<id>.yaml).
    let r = dpclaims_in(dir.path(), &["run", "alpha", "--no-reports"]);
    assert_eq!(code(&r), 0, "{}", text(&r.stderr));
    assert!(text(&r.stderr).contains("alpha "), "{}", text(&r.stderr));
    let l = dpclaims_in(dir.path(), &["list", "beta"]);
    assert_eq!(code(&l), 0, "{}", text(&l.stderr));
    assert!(text(&l.stdout).starts_with("beta "), "{}", text(&l.stdout));
    // zsh and fish: the scripts carry the id completion (and parse, where installed).
    let zsh = text(&dpclaims_in(dir.path(), &["completions", "zsh"]).stdout);
    assert!(zsh.contains("_dpclaims_claim_ids() {"), "{zsh}");
    assert!(zsh.contains("claims/*.yaml(N:t:r)"));
    assert!(
        zsh.lines()
            .filter(|l| l.starts_with("'*::paths -- "))
            .all(|l| l.ends_with(":_dpclaims_claim_ids' \\")),
        "{zsh}"
    );
    let fish = text(&dpclaims_in(dir.path(), &["completions", "fish"]).stdout);
    assert!(
        fish.contains("function __fish_dpclaims_claim_ids"),
        "{fish}"
    );
    assert!(fish.contains("__fish_dpclaims_using_subcommand run plan list stability"));
    for (shell, script) in [("zsh", zsh), ("fish", fish)] {
        let f = dir.path().join(format!("completion.{shell}"));
        std::fs::write(&f, script).unwrap();
        if let Ok(st) = Command::new(shell).arg("-n").arg(&f).status() {
            assert!(st.success(), "the {shell} script parses");
        }
    }
}

#[test]
fn an_unknown_subcommand_suggests_the_nearest() {
    let dir = tempfile::tempdir().unwrap();
    // clap's own suggestion (Jaro similarity), and ours for the slips it misses.
    for (typed, meant) in [
        ("lsit", "list"),
        ("runn", "run"),
        ("rnu", "run"),
        ("rn", "run"),
        ("nwe", "new"),
    ] {
        let o = dpclaims_in(dir.path(), &[typed]);
        assert_eq!(code(&o), 2, "{typed}");
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!("unrecognized subcommand '{typed}'"))
                && err.contains(&format!("tip: a similar subcommand exists: '{meant}'")),
            "{typed}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let o = dpclaims_in(dir.path(), &["xyzzy"]);
    assert_eq!(code(&o), 2);
    assert!(!text(&o.stderr).contains("tip:"), "{}", text(&o.stderr));
}

#[test]
fn outside_a_checkout_run_list_and_plan_ask_for_claims() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["run", "list", "plan"] {
        let o = dpclaims_in(dir.path(), &[cmd]);
        assert_eq!(code(&o), 2, "{cmd}");
        assert_eq!(
            text(&o.stderr).trim(),
            "error: no claims/ here: pass claim files or ids (or `dpclaims init` a project)",
            "{cmd}"
        );
        assert!(!dir.path().join("reports").exists(), "{cmd} wrote reports");
    }
    // With a file it runs as before.
    let spec = std::fs::canonicalize(CALIBRATION).unwrap();
    let o = dpclaims_in(dir.path(), &["list", spec.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
}

#[test]
fn plan_prints_times_in_the_unit_that_fits() {
    let o = dpclaims_in(Path::new("."), &["plan", CALIBRATION]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let first = out.lines().next().unwrap();
    // A claim of a fraction of a second: seconds, not "0.000 h".
    assert!(first.contains(" s on "), "{first}");
    assert!(!first.contains(" h"), "{first}");
    // The limit (24 hours by default) in hours.
    let last = out.lines().last().unwrap();
    assert!(last.contains("(limit 24.0 h)"), "{last}");
    assert!(last.contains(" s on "), "{last}");
}

#[test]
fn verdict_lines_have_no_trailing_spaces() {
    let o = dpclaims_in(
        Path::new("."),
        &["run", CALIBRATION, "--no-reports", "--no-baseline"],
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let all = format!("{}{}", text(&o.stderr), text(&o.stdout));
    for l in all.lines() {
        assert_eq!(l, l.trim_end(), "trailing whitespace: {l:?}");
    }
    assert!(
        all.lines().any(|l| l.starts_with("sigma-a-calibration")
            && l.contains("replace-one-kappa2")
            && l.ends_with("holds")),
        "{all}"
    );
}
