//! `dpclaims perf`: its output is complete and its kernels are real implementations of
//! the DP-GD step. No timing is asserted here: speed is measured (`dpclaims perf`,
//! `make bench`) and reported as ratios, never tested.
use crate::util::{dpclaims, ok_json};
use dpclaims::perf::{self, PerfProblem, PerfSizes};
use dpclaims::rng::SeedPath;
use dpclaims::train::dpgd::{self, DpGdRecipe, Problem, RecordPlan};
use ndarray::Array1;

fn rel_diff(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let d = a - b;
    (d.dot(&d) / b.dot(b)).sqrt()
}

fn quick_problem() -> PerfProblem {
    PerfProblem::build(&PerfSizes::quick(), &SeedPath::new(3).child("perf")).unwrap()
}

fn positive_finite(v: &serde_json::Value, key: &str) -> f64 {
    let x = v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {}", v[key]));
    assert!(x.is_finite() && x > 0.0, "{key} = {x}");
    x
}

#[test]
fn perf_json_quick_has_every_key_with_positive_finite_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("BENCH.md");
    let out = dpclaims(&[
        "perf",
        "--json",
        "--quick",
        "--markdown",
        md.to_str().unwrap(),
    ]);
    let v = ok_json(&out);
    for key in [
        "direct_step_s",
        "gemv_floor_s",
        "reference_loop_step_s",
        "direct_over_floor",
        "reference_over_direct",
        "direct_gradient_s",
        "noise_draw_s",
        "gemm_gflops",
        "mem_read_gb_s",
        "gemv_gb_s",
    ] {
        positive_finite(&v, key);
    }
    let ratio = v["direct_step_s"].as_f64().unwrap() / v["gemv_floor_s"].as_f64().unwrap();
    assert!((ratio - v["direct_over_floor"].as_f64().unwrap()).abs() < 1e-12 * ratio);
    // Filled by the reduced engine: an object of positive times (possibly empty), and a
    // rate or null.
    let reduced = v["reduced_step_s"]
        .as_object()
        .expect("reduced_step_s is an object");
    for (p, t) in reduced {
        assert!(p.parse::<usize>().is_ok(), "key {p} is not a p");
        let t = t.as_f64().expect("a number");
        assert!(t.is_finite() && t > 0.0, "reduced_step_s[{p}] = {t}");
    }
    assert!(v["heatmap_cells_per_s"].is_null() || positive_finite(&v, "heatmap_cells_per_s") > 0.0);
    if !v["heatmap_cells_per_s"].is_null() {
        let h = &v["heatmap"];
        assert_eq!(h["runs"], 108, "the quick profile's heat map");
        let cells_per_s = h["runs"].as_f64().unwrap() / h["projected_s"].as_f64().unwrap();
        assert!((cells_per_s / v["heatmap_cells_per_s"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    }
    // Which kernels ran the reduced engine, and the per-step product with both.
    let backend = v["machine"]["gemm_backend"].as_str().unwrap();
    assert!(backend.starts_with("faer "), "{backend}");
    let gemm = v["reduced_gemm"].as_array().unwrap();
    assert_eq!(gemm.len(), 4, "two shapes, two kernel sets");
    for g in gemm {
        assert!(g["gflops"].as_f64().unwrap() > 0.0, "{g}");
    }
    assert!(gemm
        .iter()
        .any(|g| g["kernels"].as_str().unwrap().starts_with("openblas ")));
    assert_eq!(v["reference_samples_timed"], 200);
    assert!(v["reference_gradient_rel_diff"].as_f64().unwrap() < 1e-10);
    assert_eq!(v["quick"], true);
    assert_eq!(v["machine"]["blas_threads"], 1);
    let page = std::fs::read_to_string(&md).expect("--markdown wrote the page");
    assert!(
        page.contains("| kernel | size | time | ratio to floor |"),
        "{page}"
    );
    assert!(page.contains("GFLOP/s") && page.contains("GB/s"), "{page}");
}

#[test]
fn reference_loop_computes_the_direct_gradient() {
    let pr = quick_problem();
    let p = pr.theta.len();
    let zero = Array1::<f64>::zeros(p);
    let big = &pr.theta * 5.0;
    for (what, theta, clip) in [
        ("some clipped", &pr.theta, pr.cfg.clip),
        ("all clipped (theta = 0)", &zero, pr.cfg.clip),
        ("mostly clipped", &big, pr.cfg.clip),
        ("none clipped", &pr.theta, f64::INFINITY),
    ] {
        let (g, stats) = dpgd::clipped_mean_gradient(
            &pr.phi.view(),
            &pr.phi_sq.view(),
            &pr.y.view(),
            &theta.view(),
            clip,
            pr.cfg.clip_rule,
            pr.cfg.ridge,
        );
        let g_ref = perf::reference_clipped_mean_gradient(
            &pr.phi.view(),
            &pr.y.view(),
            &theta.view(),
            clip,
        );
        let e = rel_diff(&g_ref, &g);
        assert!(e < 1e-10, "{what}: relative difference {e:e}");
        if what == "some clipped" {
            assert!(
                stats.clip_fraction > 0.0 && stats.clip_fraction < 1.0,
                "the timed theta should exercise both branches, clip fraction {}",
                stats.clip_fraction
            );
        }
    }
}

/// The step `perf` times is the engine's step: k of them give `dpgd::run`'s bits.
#[test]
fn timed_direct_step_is_dpgd_run_bit_for_bit() {
    let pr = quick_problem();
    let k = 4;
    let mut cfg = pr.cfg.clone();
    cfg.steps = k;
    let problem = Problem {
        phi: pr.phi.view(),
        y: pr.y.view(),
        test: None,
    };
    let seed = SeedPath::new(9);
    let run = dpgd::run(
        &problem,
        pr.theta.clone(),
        &cfg,
        &RecordPlan::default(),
        &mut seed.rng(),
        &DpGdRecipe::PAPER,
    )
    .unwrap();
    let mut theta = pr.theta.clone();
    let mut xi = Array1::zeros(theta.len());
    let mut rng = seed.rng();
    for _ in 0..k {
        perf::direct_step(&pr, &mut theta, &mut xi, &mut rng);
    }
    assert!(
        theta
            .iter()
            .zip(&run.theta)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "perf's direct step differs from dpgd::run"
    );
}

/// The reference-style step, from the same noise stream, follows the same trajectory up
/// to rounding: it is a real DP-GD step, not a stand-in.
#[test]
fn reference_step_follows_the_direct_trajectory() {
    let pr = quick_problem();
    let seed = SeedPath::new(11);
    let (mut a, mut b) = (pr.theta.clone(), pr.theta.clone());
    let mut xi = Array1::zeros(a.len());
    let (mut ra, mut rb) = (seed.rng(), seed.rng());
    for _ in 0..5 {
        perf::direct_step(&pr, &mut a, &mut xi, &mut ra);
        perf::reference_step(&pr, &mut b, &mut rb);
    }
    let e = rel_diff(&b, &a);
    assert!(e < 1e-10, "relative difference after 5 steps {e:e}");
    assert!(rel_diff(&a, &pr.theta) > 1e-3, "the steps moved theta");
}

#[test]
fn memory_read_kernel_reads_every_element() {
    let pr = quick_problem();
    for m in [pr.phi.view(), pr.phi.slice(ndarray::s![..13, ..1999])] {
        let fast = perf::read_sum(&m);
        let plain: f64 = m.iter().sum();
        let scale: f64 = m.iter().map(|x| x.abs()).sum();
        assert!((fast - plain).abs() <= 1e-12 * scale, "{fast} vs {plain}");
    }
}

#[test]
fn criterion_results_are_read_with_ratios_to_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    for (name, ns) in [("gemv_floor", 100e6), ("direct_step", 103e6)] {
        let new = dir
            .path()
            .join("perf")
            .join(name)
            .join("n2000_p40000")
            .join("new");
        std::fs::create_dir_all(&new).unwrap();
        let id = format!("perf/{name}/n2000_p40000");
        std::fs::write(
            new.join("benchmark.json"),
            format!(r#"{{"group_id":"perf","full_id":"{id}"}}"#),
        )
        .unwrap();
        std::fs::write(
            new.join("estimates.json"),
            format!(
                r#"{{"median":{{"point_estimate":{ns},"confidence_interval":{{"lower_bound":{},"upper_bound":{}}}}}}}"#,
                ns * 0.9,
                ns * 1.1
            ),
        )
        .unwrap();
    }
    let rows = dpclaims::report::bench::criterion_estimates(dir.path(), "perf");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, "perf/direct_step/n2000_p40000");
    assert!((rows[1].median_s - 0.1).abs() < 1e-12);
    let md = dpclaims::report::bench::criterion_markdown(&rows);
    assert!(
        md.contains(
            "| `perf/direct_step/n2000_p40000` | 103.00 ms | 92.70 ms – 113.30 ms | 1.03 |"
        ),
        "{md}"
    );
    assert!(
        dpclaims::report::bench::criterion_estimates(&dir.path().join("nothing"), "perf")
            .is_empty()
    );
}
