//! The white-box TP-TopK audit (`privacy::audit::white_box`, `dpclaims audit --system
//! tp-topk --white-box`): its loop is the training loop, bit for bit; the calibrated
//! mechanism is not refuted; half the noise, the sensitivity off by 2 and scores read
//! before the noise are caught; the CLI exits 1 when the bound exceeds the claim.
use dpclaims::privacy::audit::white_box::{
    as_method, run_white_box, trial_path, world_runs, WhiteBoxConfig,
};
use dpclaims::train::dpsgd::{run_method, ScoreSource};
use dpclaims::train::Recipe;
use std::process::Command;

fn cfg(epsilon: f64, q: f64) -> WhiteBoxConfig {
    let mut c = WhiteBoxConfig::new(epsilon, 1e-5);
    c.sampling_rate = q;
    c.trials = 2000;
    c
}

#[test]
fn white_box_loop_is_the_training_loop() {
    for q in [1.0, 0.5] {
        let mut c = cfg(2.0, q);
        c.trials = 6;
        let (data, mc) = as_method(&c, 3, &Recipe::PAPER).unwrap();
        let runs = world_runs(&c, 3, true, &Recipe::PAPER).unwrap();
        for (i, r) in runs.iter().enumerate() {
            let m = run_method(&data, &mc, &trial_path(3, "canary", i), &Recipe::PAPER).unwrap();
            assert_eq!(m.theta, r.theta, "q = {q}, run {i}");
            assert_eq!(r.unclipped, 0, "the canary is clipped at every step");
        }
    }
}

#[test]
fn calibrated_holds_and_half_noise_is_caught_at_q_1() {
    let r = run_white_box(&cfg(2.0, 1.0), 0, &Recipe::PAPER).unwrap();
    assert!(r.epsilon_lower_bound <= 2.0, "{r:?}");
    // Near tight: more than half of the exact epsilon 1.84 of the schedule.
    assert!(
        r.epsilon_lower_bound > 0.5 * r.epsilon_exact_as_run.unwrap(),
        "{r:?}"
    );
    let mut half = cfg(2.0, 1.0);
    half.noise_scale = 0.5;
    let h = run_white_box(&half, 0, &Recipe::PAPER).unwrap();
    assert!(h.epsilon_lower_bound > 2.0, "{h:?}");
    assert!(
        h.epsilon_lower_bound <= h.epsilon_exact_as_run.unwrap(),
        "{h:?}"
    );
}

#[test]
fn subsampled_half_noise_and_sensitivity_slip_are_caught() {
    let mut c = cfg(2.0, 0.25);
    c.steps = 40;
    let r = run_white_box(&c, 0, &Recipe::PAPER).unwrap();
    assert!(r.epsilon_lower_bound <= 2.0, "{r:?}");
    c.noise_scale = 0.5;
    let h = run_white_box(&c, 0, &Recipe::PAPER).unwrap();
    assert!(h.epsilon_lower_bound > 2.0, "{h:?}");
    let mut s = cfg(2.0, 1.0);
    s.clip_scale = 2.0;
    let k = run_white_box(&s, 0, &Recipe::PAPER).unwrap();
    assert!(k.epsilon_lower_bound > 2.0, "{k:?}");
    // The accountant, which assumes sensitivity C, cannot see that slip.
    assert!(k.epsilon_exact_accounted <= 2.0, "{k:?}");
}

#[test]
fn selection_before_noise_is_caught_by_the_support() {
    let mut recipe = Recipe::PAPER;
    recipe.dpsgd.scores = ScoreSource::PreNoise;
    let r = run_white_box(&cfg(4.0, 1.0), 0, &recipe).unwrap();
    assert!(r.clopper_pearson_support.epsilon_lower_bound > 4.0, "{r:?}");
    assert_eq!(r.canary_kept_whole, (1.0, 0.0));
    assert!(r.epsilon_exact_as_run.is_none());
}

#[test]
fn same_seed_same_result_and_bad_input_is_an_error() {
    let mut c = cfg(1.0, 0.5);
    c.trials = 50;
    let a = run_white_box(&c, 9, &Recipe::PAPER).unwrap();
    let b = run_white_box(&c, 9, &Recipe::PAPER).unwrap();
    assert_eq!(a, b);
    for bad in [0.0, 1.5, f64::NAN] {
        let mut c = cfg(1.0, bad);
        c.trials = 10;
        let e = run_white_box(&c, 0, &Recipe::PAPER)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sampling-rate"), "{e}");
    }
}

#[test]
fn cli_exit_status_says_whether_the_claim_is_refuted() {
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            .args([
                "audit",
                "--system",
                "tp-topk",
                "--white-box",
                "--epsilon",
                "2",
            ])
            .args(["--delta", "1e-5", "--trials", "2000", "--json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let ok = run(&[]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let bad = run(&["--noise-scale", "0.5"]);
    assert_eq!(bad.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&bad.stdout).unwrap();
    assert!(doc["epsilon_lower_bound"].as_f64().unwrap() > 2.0);
    // The classic path too (rf-dpgd, the real DP-GD loop, half the exact noise).
    let rf = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args([
            "audit",
            "--system",
            "rf-dpgd",
            "--engine",
            "direct",
            "--calibration",
            "exact",
            "--epsilon",
            "2",
        ])
        .args([
            "--delta", "1e-5", "--trials", "2000", "--d", "4", "--n", "10", "--p", "20",
        ])
        .args(["--noise-scale", "0.5"])
        .output()
        .unwrap();
    assert_eq!(rf.status.code(), Some(1));
}

/// `audit --system tp-topk` runs the white-box audit by default (the one the scorecard
/// relies on; the black-box one misses half the noise): the same bytes as `--white-box`.
#[test]
fn the_tp_topk_audit_is_white_box_by_default() {
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dpclaims"))
            .args(["audit", "--system", "tp-topk", "--epsilon", "2"])
            .args(["--delta", "1e-5", "--trials", "200", "--json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let default = run(&[]);
    let white = run(&["--white-box"]);
    assert_eq!(default.status.code(), white.status.code());
    assert_eq!(default.stdout, white.stdout);
    let black = run(&["--black-box"]);
    assert_ne!(black.stdout, white.stdout);
    // White-box options without the white-box audit: refused, named.
    let bad = run(&["--black-box", "--sampling-rate", "0.5"]);
    assert_eq!(bad.status.code(), Some(2));
}
