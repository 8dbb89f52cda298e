//! docs/tutorial-your-own-paper.md runs as written (issue 47, item 8): its `sh` blocks,
//! extracted verbatim and run in order by bash (`-e`: a failing command fails the test)
//! in one empty temporary directory with this build's `dpclaims` first on the PATH,
//! from `dpclaims init` to the CI run that shows the planted regression: exit 1, a failed
//! JUnit testcase, `::error` annotations and the job summary. Skipped, saying so, when
//! python3 with numpy is not there (the tutorial's core is numpy).
use std::path::Path;
use std::process::Command;

/// The `sh` blocks of a Markdown text, in order.
fn sh_blocks(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in md.lines() {
        match &mut cur {
            None if line.trim_end() == "```sh" => cur = Some(String::new()),
            Some(b) if line.trim_end() == "```" => {
                out.push(std::mem::take(b));
                cur = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    assert!(cur.is_none(), "an unclosed sh block");
    out
}

fn numpy() -> bool {
    Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_tutorial_runs_verbatim_from_init_to_a_failing_ci_run() {
    if !numpy() {
        eprintln!("SKIPPED the tutorial test: python3 with numpy is not available (apt-get install python3-numpy)");
        return;
    }
    let md = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tutorial-your-own-paper.md"),
    )
    .unwrap();
    let blocks = sh_blocks(&md);
    assert!(blocks.len() >= 6, "{} sh blocks", blocks.len());
    let bin = Path::new(env!("CARGO_BIN_EXE_dpclaims"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let d = tempfile::tempdir().unwrap();
    let mut last = String::new();
    for (i, b) in blocks.iter().enumerate() {
        let o = Command::new("bash")
            .args(["-e", "-c", b])
            .current_dir(d.path())
            .env("PATH", &path)
            .env("OPENBLAS_NUM_THREADS", "1")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_WORKSPACE")
            .env_remove("DPCLAIMS_CACHE")
            .env_remove("DPCLAIMS_NO_CACHE")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "block {i} failed ({:?}):\n{b}\nstdout:\n{}\nstderr:\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        last = String::from_utf8_lossy(&o.stdout).into_owned();
    }
    // The last block is the CI run: it failed with exit 1, and said so three ways.
    assert!(last.contains("dpclaims run exited with 1"), "{last}");
    assert!(last.contains("::error file="), "{last}");
    let junit = std::fs::read_to_string(d.path().join("target/dpclaims-junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert!(failures > 0, "{junit}");
    assert!(junit.contains("privacy-spent/dp-gd"), "{junit}");
    let summary = std::fs::read_to_string(d.path().join("step-summary.md")).unwrap();
    assert!(summary.contains("**Failures**"), "{summary}");
}
