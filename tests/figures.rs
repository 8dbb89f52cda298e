//! `dpclaims fig2` at the quick profile: the files, their columns and sizes, and
//! determinism across thread counts.
use dpclaims::figures::fig2::{logspace, Fig2Config};
use dpclaims::spec::Profile;
use std::process::Command;

fn run_fig2(dir: &std::path::Path, threads: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args(["fig2", "--profile", "quick", "--out"])
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

#[test]
fn logspace_matches_numpy() {
    let v = logspace(-2.0, 1.5, 20);
    assert_eq!(v.len(), 20);
    assert!((v[0] - 0.01).abs() < 1e-15);
    assert!((v[19] - 10f64.powf(1.5)).abs() < 1e-12);
    // numpy.logspace(-1.5, 2.5, 20)[1] = 10^(-1.5 + 4/19) = 0.05134832907437552
    assert!((logspace(-1.5, 2.5, 20)[1] - 0.051_348_329_074_375_52).abs() < 1e-15);
}
