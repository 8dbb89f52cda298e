//! `dpclaims fig2` at the quick profile: the files, their columns and sizes, and
//! determinism across thread counts.
use dpclaims::figures::fig2::{logspace, Fig2Config};
use dpclaims::spec::Profile;
use std::process::Command;

fn run_fig2(dir: &std::path::Path, threads: &str) {
    fig2(dir, threads, &[]);
}

/// `dpclaims fig2 --profile quick <extra> --out <dir>` on `threads` threads, which must
/// succeed.
fn fig2(dir: &std::path::Path, threads: &str, extra: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args(["fig2", "--profile", "quick"])
        .args(extra)
        .arg("--out")
        .arg(dir)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("run dpclaims");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fig2_quick_writes_the_three_csvs_deterministically() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run_fig2(a.path(), "1");
    run_fig2(b.path(), "2");
    let cfg = Fig2Config::new(Profile::Quick, 0);
    let expect = [
        (
            "fig2-loss-vs-p.csv",
            "p,method,seed,test_loss",
            2 * cfg.p_values.len() * cfg.seeds,
        ),
        (
            "fig2-loss-vs-T.csv",
            "p,c_time,seed,test_loss",
            cfg.time_p.len() * cfg.time_c.len() * cfg.seeds,
        ),
        (
            "fig2-heatmap.csv",
            "eps,c_clip,c_time,test_loss",
            cfg.heat_eps.len() * cfg.heat_clip.len() * cfg.heat_time.len(),
        ),
    ];
    for (name, header, rows) in expect {
        let text = std::fs::read_to_string(a.path().join(name)).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(header), "{name}");
        let body: Vec<&str> = lines.collect();
        assert_eq!(body.len(), rows, "{name}");
        for l in &body {
            let loss: f64 = l.rsplit(',').next().unwrap().parse().unwrap();
            assert!(loss.is_finite() && loss >= 0.0, "{name}: {l}");
        }
    }
    for f in std::fs::read_dir(a.path()).unwrap() {
        let f = f.unwrap();
        if f.path().is_dir() {
            continue;
        }
        let other = std::fs::read(b.path().join(f.file_name())).unwrap();
        assert_eq!(
            std::fs::read(f.path()).unwrap(),
            other,
            "{:?}",
            f.file_name()
        );
    }
    let md = std::fs::read_to_string(a.path().join("fig2.md")).unwrap();
    assert!(md.contains("## Panel 4"));
}

/// Issue 34, item 4: every number of the committed tables has at most 6 significant
/// digits (`report::number`), the raw f64 are in `raw/` with the same rows, and the heat
/// maps re-drawn from the rounded CSV (`fig2 --replot`) are the ones the run drew.
#[test]
fn fig2_tables_are_rounded_and_the_raw_values_kept_apart() {
    let a = tempfile::tempdir().unwrap();
    run_fig2(a.path(), "2");
    for name in [
        "fig2-loss-vs-p.csv",
        "fig2-loss-vs-p-grid.csv",
        "fig2-loss-vs-T.csv",
        "fig2-heatmap.csv",
    ] {
        let text = std::fs::read_to_string(a.path().join(name)).unwrap();
        let raw = std::fs::read_to_string(a.path().join("raw").join(name)).unwrap();
        assert_eq!(text.lines().count(), raw.lines().count(), "{name}");
        let mut longer = 0;
        for (l, r) in text.lines().zip(raw.lines()).skip(1) {
            for (x, y) in l.split(',').zip(r.split(',')) {
                let Ok(v) = x.parse::<f64>() else {
                    assert_eq!(x, y, "{name}: a text field is written as it is");
                    continue;
                };
                assert!(
                    dpclaims::report::number::significant_digits(x) <= 6,
                    "{name}: {x} has more than 6 significant digits"
                );
                let w: f64 = y.parse().unwrap();
                assert!(
                    (v - w).abs() <= 1e-5 * w.abs().max(1e-12),
                    "{name}: {x} vs {y}"
                );
                longer += usize::from(x != y);
            }
        }
        assert!(
            name == "fig2-loss-vs-p.csv" || longer > 0,
            "{name}: no value was rounded, so the test shows nothing"
        );
    }
    let drawn: Vec<_> = ["1", "2", "4"]
        .iter()
        .map(|e| std::fs::read(a.path().join(format!("fig2-heatmap-eps{e}.svg"))).unwrap())
        .collect();
    fig2(a.path(), "2", &["--replot"]);
    for (e, before) in ["1", "2", "4"].iter().zip(drawn) {
        let after = std::fs::read(a.path().join(format!("fig2-heatmap-eps{e}.svg"))).unwrap();
        assert!(after == before, "eps {e}: the re-drawn heat map differs");
    }
}

#[test]
fn logspace_matches_numpy() {
    let v = logspace(-2.0, 1.5, 20);
    assert_eq!(v.len(), 20);
    assert!((v[0] - 0.01).abs() < 1e-15);
    assert!((v[19] - 10f64.powf(1.5)).abs() < 1e-12);
    // numpy.logspace(-1.5, 2.5, 20)[1] = 10^(-1.5 + 4/19) = 0.05134832907437552
    assert!((logspace(-1.5, 2.5, 20)[1] - 0.051_348_329_074_375_52).abs() < 1e-15);
}

/// Non-negotiable 8: `fig2` replaces its files as one set, like a run's reports. Killed
/// before the exchange it leaves the previous Fig. 2 files, byte for byte; finished, the
/// new ones; the files other commands wrote (a claim's page, its raw CSV) survive both.
#[test]
fn fig2_replaces_its_files_as_one_set() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;
    let w = tempfile::tempdir().unwrap();
    let dir = w.path().join("reports");
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::write(dir.join("some-claim.md"), "page").unwrap();
    std::fs::write(dir.join("raw/some-claim.csv"), "raw").unwrap();
    fig2(&dir, "2", &[]);
    let first = crate::sharding::files(&dir);
    assert_eq!(first["some-claim.md"], b"page");
    assert_eq!(first["raw/some-claim.csv"], b"raw");
    assert!(first.contains_key("fig2.md") && first.contains_key("raw/fig2-heatmap.csv"));
    // Seed 1, its report writer stopped at the exchange and killed there.
    let mut child = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args(["fig2", "--profile", "quick", "--seed", "1", "--out"])
        .arg(&dir)
        .env("DPCLAIMS_REPORT_GATE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut steps = 0;
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if line == "dpclaims-report-step: exchange" {
            child.kill().unwrap();
            break;
        }
        if line.starts_with("dpclaims-report-step:") {
            steps += 1;
            stdin.write_all(b"\n").unwrap();
            stdin.flush().unwrap();
        }
    }
    child.wait().unwrap();
    assert!(steps > 10, "only {steps} steps before the exchange");
    assert_eq!(
        crate::sharding::files(&dir),
        first,
        "a killed fig2 changed the set"
    );
    // Finished, it replaces the Fig. 2 files and keeps the others.
    fig2(&dir, "2", &["--seed", "1"]);
    let second = crate::sharding::files(&dir);
    assert_ne!(second["fig2-heatmap.csv"], first["fig2-heatmap.csv"]);
    assert_eq!(second["some-claim.md"], b"page");
    assert_eq!(second["raw/some-claim.csv"], b"raw");
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        first.keys().collect::<Vec<_>>()
    );
    assert!(!w.path().join(".reports.dpclaims-staging").exists());
}
