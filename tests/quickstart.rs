//! The README's quick start, verbatim (issue 33): every `sh` block of its "Quick start"
//! section runs, in order, with `set -e`, in a copy of the tree's claims, scorecards,
//! examples, adapter and baseline, with `target/release/dpclaims` the binary under test.
//! A command the README shows must work as shown.
use std::path::Path;
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "__pycache__" || name == ".pytest_cache" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The `sh` code blocks of the README section headed `## Quick start`.
fn quick_start_blocks(readme: &str) -> Vec<String> {
    let start = readme
        .find("## Quick start")
        .expect("a Quick start section");
    let section = &readme[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in section[..end].lines() {
        match (&mut cur, line.trim_start()) {
            (None, "```sh") => cur = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn the_readme_quick_start_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = quick_start_blocks(&readme);
    assert!(blocks.len() >= 3, "{blocks:?}");
    let d = tempfile::tempdir().unwrap();
    for dir in [
        "claims",
        "scorecards",
        "examples",
        "python",
        "tests/snapshots",
    ] {
        copy_dir(&root.join(dir), &d.path().join(dir));
    }
    std::fs::create_dir_all(d.path().join("target/release")).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_dpclaims"),
        d.path().join("target/release/dpclaims"),
    )
    .unwrap();
    for (i, b) in blocks.iter().enumerate() {
        let o = Command::new("bash")
            .args(["-c", &format!("set -euo pipefail\n{b}")])
            .current_dir(d.path())
            .env("DPCLAIMS_NO_CACHE", "1")
            .env("OPENBLAS_NUM_THREADS", "1")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "quick start block {} failed ({:?}):\n{b}\nstdout:\n{}\nstderr:\n{}",
            i + 1,
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // Step 2 opens the pages step 1 wrote; step 3 recorded the new claim's baseline.
    for page in ["index.html", "sigma-a-calibration.html", "SUMMARY.md"] {
        assert!(
            d.path()
                .join("target/dpclaims/quickstart")
                .join(page)
                .is_file(),
            "{page}"
        );
    }
    assert!(d
        .path()
        .join("tests/snapshots/tests__claims__every_claim_at_the_quick_profile@my-first-claim.yaml.snap")
        .is_file());
}
