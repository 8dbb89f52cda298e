//! Report sets: a run killed (SIGKILL) at any step leaves the previous complete set or the
//! new complete one, never a mix, and the files other commands wrote survive; a run of
//! some claims keeps the other claims' rows, marked with the run they came from.
use crate::sharding::{code, files, text, workdir};
use crate::util::dpclaims_in;
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

/// The files of a report set (its `raw/` too), path -> bytes, without those other
/// commands wrote.
fn set_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut f = files(dir);
    f.remove("BENCH.md");
    f.remove("full/SUMMARY.md");
    f
}

/// `reports/` as the complete run A left it, plus files of other commands.
fn reset_to(dir: &Path, a: &Path) {
    let r = dir.join("reports");
    if r.exists() {
        std::fs::remove_dir_all(&r).unwrap();
    }
    std::fs::create_dir_all(r.join("full")).unwrap();
    for (name, bytes) in files(a) {
        let to = r.join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    std::fs::write(r.join("BENCH.md"), "bench").unwrap();
    std::fs::write(r.join("full/SUMMARY.md"), "full").unwrap();
}

/// Runs seed 2 into `reports/` with the report writer's gate on; reads `k` lines of its
/// stderr (verdict lines and report steps, each step released only once read), then
/// SIGKILLs it — or, with `k = None`, releases every step. Returns the lines read.
fn gated_run(dir: &Path, k: Option<usize>) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .args(["run", "--seed", "2", "--no-baseline", "--out", "reports"])
        .env("DPCLAIMS_REPORT_GATE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut read = Vec::new();
    loop {
        if Some(read.len()) == k {
            child.kill().unwrap();
            child.wait().unwrap();
            return read;
        }
        let Some(line) = lines.next() else { break };
        let line = line.unwrap();
        read.push(line.clone());
        let n = read.len();
        if line.starts_with("dpclaims-report-step:") && Some(n) != k {
            // Released only when not about to be killed here.
            let _ = stdin.write_all(b"\n");
            let _ = stdin.flush();
        }
    }
    let status = child.wait().unwrap().code();
    assert!(matches!(status, Some(0 | 1)), "{status:?}: {read:?}");
    read
}

#[test]
fn a_run_killed_at_any_step_leaves_one_complete_report_set() {
    let w = workdir();
    let dir = w.path();
    for (seed, out) in [("1", "ref-a"), ("2", "ref-b")] {
        // Exit 0 or 1 (a tiny claim may be refuted at some seed): the reports are written.
        let r = dpclaims_in(dir, &["run", "--seed", seed, "--no-baseline", "--out", out]);
        assert!(code(&r) <= 1, "{}", text(&r.stderr));
    }
    let (a, b) = (files(&dir.join("ref-a")), files(&dir.join("ref-b")));
    assert_ne!(a["SUMMARY.md"], b["SUMMARY.md"]);
    // The run's own progress: its verdict lines, then every step of the report writer.
    reset_to(dir, &dir.join("ref-a"));
    let progress = gated_run(dir, None);
    let total = progress.len();
    assert!(total + 1 >= 20, "only {total} progress lines: {progress:?}");
    assert_eq!(set_of(&dir.join("reports")), b);
    // Kill after every progress line (and before the first): verdict lines (computing),
    // then each step of the report writer, stopped at while it waits.
    let mut seen = Vec::new();
    for k in 0..=total {
        reset_to(dir, &dir.join("ref-a"));
        gated_run(dir, Some(k));
        let r = dir.join("reports");
        let got = set_of(&r);
        let which = if got == a {
            'A'
        } else if got == b {
            'B'
        } else {
            panic!(
                "killed after {k} of {total} progress lines: a mixed set: {:?}",
                got.keys().collect::<Vec<_>>()
            )
        };
        assert_eq!(
            std::fs::read_to_string(r.join("BENCH.md")).unwrap(),
            "bench"
        );
        assert_eq!(
            std::fs::read_to_string(r.join("full/SUMMARY.md")).unwrap(),
            "full"
        );
        seen.push(which);
    }
    // Old until the exchange (line `exchange + 1`, where it waits), new from it on.
    let s: String = seen.iter().collect();
    let exchange = progress
        .iter()
        .position(|l| l == "dpclaims-report-step: exchange")
        .expect("an exchange step");
    assert_eq!(
        s,
        "A".repeat(exchange + 2) + &"B".repeat(total - exchange - 1),
        "{progress:?}"
    );
    // The next run removes a killed run's staging directory.
    reset_to(dir, &dir.join("ref-a"));
    gated_run(dir, Some(exchange + 1));
    assert_eq!(set_of(&dir.join("reports")), a);
    assert!(dir.join(".reports.dpclaims-staging").exists());
    let r = dpclaims_in(
        dir,
        &["run", "--seed", "2", "--no-baseline", "--out", "reports"],
    );
    assert!(code(&r) <= 1, "{}", text(&r.stderr));
    assert!(!dir.join(".reports.dpclaims-staging").exists());
    assert_eq!(set_of(&dir.join("reports")), b);
}

#[test]
fn a_run_of_some_claims_keeps_the_other_rows_marked_with_their_run() {
    let w = workdir();
    let dir = w.path();
    let full = dpclaims_in(dir, &["run", "--no-baseline", "--out", "reports"]);
    assert_eq!(code(&full), 0, "{}", text(&full.stderr));
    let noise_page = std::fs::read(dir.join("reports/tiny-noise.md")).unwrap();
    // The bootstrap beside a fit is a fixed 95 % cross-check, labelled as such: at the
    // verdicts' family-wise level its tails would be the resamples' extremes.
    let page = String::from_utf8_lossy(&noise_page);
    assert!(
        page.contains("bootstrap 95% CI [") && page.contains("(reported, not judged)"),
        "{page}"
    );
    let one = dpclaims_in(
        dir,
        &[
            "run",
            "claims/tiny-calibration.yaml",
            "--seed",
            "5",
            "--no-baseline",
            "--out",
            "reports",
        ],
    );
    assert_eq!(code(&one), 0, "{}", text(&one.stderr));
    let summary = std::fs::read_to_string(dir.join("reports/SUMMARY.md")).unwrap();
    let engine = &dpclaims::build_id::ENGINE_HASH[..12];
    let kept_row = summary
        .lines()
        .find(|l| l.starts_with("| [tiny-noise](tiny-noise.md) (kept) | s, Eq. 20 |"))
        .unwrap_or_else(|| panic!("no kept row: {summary}"));
    assert!(
        kept_row.contains(&format!(
            "kept from an earlier run: profile `quick`, seed 0, engine `{engine}`"
        )),
        "{kept_row}"
    );
    assert!(summary.contains("(profile `quick`, seed 5)"));
    assert!(summary.contains("| [tiny-calibration](tiny-calibration.md) | s, e |"));
    // Every verdict of the kept claim, as the full run listed it.
    let full_verdict_rows = 4;
    assert_eq!(
        summary
            .lines()
            .filter(|l| l.starts_with("| [tiny-noise](tiny-noise.md) (kept) | `"))
            .count(),
        full_verdict_rows
    );
    assert_eq!(
        std::fs::read(dir.join("reports/tiny-noise.md")).unwrap(),
        noise_page
    );
    // verdicts.json lists both, the kept one with its run: `diff` sees no claim removed.
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("reports/verdicts.json")).unwrap()).unwrap();
    let ids: Vec<&str> = doc["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tiny-calibration", "tiny-noise"]);
    assert_eq!(doc["claims"][1]["from"]["seed"], 0);
    assert_eq!(doc["seed"], 5);
    let d = dpclaims_in(dir, &["diff", "reports", "reports"]);
    assert_eq!(code(&d), 0, "{}", text(&d.stdout));
    // Run the other claim: the first keeps its seed-5 row.
    let other = dpclaims_in(
        dir,
        &[
            "run",
            "claims/tiny-noise.yaml",
            "--seed",
            "6",
            "--no-baseline",
            "--out",
            "reports",
        ],
    );
    assert_eq!(code(&other), 0, "{}", text(&other.stderr));
    let summary = std::fs::read_to_string(dir.join("reports/SUMMARY.md")).unwrap();
    assert!(
        summary.contains("kept from an earlier run: profile `quick`, seed 5"),
        "{summary}"
    );
    assert!(!summary.contains("[tiny-noise](tiny-noise.md) (kept)"));
    // A claim whose page is gone is not listed.
    std::fs::remove_file(dir.join("reports/tiny-calibration.md")).unwrap();
    let again = dpclaims_in(
        dir,
        &[
            "run",
            "claims/tiny-noise.yaml",
            "--no-baseline",
            "--out",
            "reports",
        ],
    );
    assert_eq!(code(&again), 0, "{}", text(&again.stderr));
    let summary = std::fs::read_to_string(dir.join("reports/SUMMARY.md")).unwrap();
    assert!(!summary.contains("tiny-calibration"), "{summary}");
}
