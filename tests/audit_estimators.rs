//! The audit's estimators beside Clopper-Pearson (Gaussian DP, one run), the confidence
//! split and the null calibration (issue: a tight and calibrated audit).
use crate::util::{dpclaims, ok_json};
use dpclaims::privacy::audit::estimators::{gdp_estimate, one_run_bound, one_run_p_value};
use dpclaims::privacy::gdp_epsilon;
use dpclaims::rng::SeedPath;

/// App. D of Steinke, Nasr & Jagielski (2023) by hand: r = 2 guesses, both right, at
/// eps = 0 (q = 1/2): beta = 1/4; alpha = max(P[Bin = 1]/1, P[0 <= Bin < 2]/2) = 1/2.
#[test]
fn one_run_p_value_matches_a_hand_computation() {
    assert!((one_run_p_value(10, 2, 2, 0.0, 0.0) - 0.25).abs() < 1e-12);
    assert!((one_run_p_value(10, 2, 2, 0.0, 0.01) - (0.25 + 0.5 * 0.01 * 20.0)).abs() < 1e-12);
    // More right guesses, larger bound; none right, no bound.
    let a = one_run_bound(1000, 100, 80, 1e-5, 0.95);
    let b = one_run_bound(1000, 100, 95, 1e-5, 0.95);
    assert!(0.0 < a && a < b, "{a} {b}");
    assert_eq!(one_run_bound(1000, 100, 40, 1e-5, 0.95), 0.0);
}

/// `n` scores `2 (shift + z) + offset`, `z` standard normal: a Gaussian mechanism's
/// canary scores at `mu = shift`.
fn gaussian_scores<R: rand::Rng>(rng: &mut R, shift: f64, offset: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let z: f64 = rand_distr::Distribution::sample(&rand_distr::StandardNormal, rng);
            2.0 * (shift + z) + offset
        })
        .collect()
}

/// On exactly Gaussian scores with a known mu the lower confidence bound sits below mu and
/// close to it, and the normality check passes.
#[test]
fn gdp_estimate_bounds_a_known_mu_from_below() {
    let mu = 0.5;
    let mut rng = SeedPath::new(3).rng();
    let mut draw = |shift: f64, n: usize| gaussian_scores(&mut rng, shift, 7.0, n);
    let canary = draw(mu, 20_000);
    let replaced = draw(0.0, 20_000);
    let e = gdp_estimate(&canary, &replaced, 1e-5, 0.95).unwrap();
    assert!(e.mu_lower <= mu && e.mu_lower > mu - 0.05, "{e:?}");
    assert!(e.epsilon_lower_bound <= gdp_epsilon(mu, 1e-5).unwrap());
    assert!(e.fit_p_value > 0.01, "{e:?}");
    // Scores that are far from Gaussian are flagged.
    let skewed: Vec<f64> = canary.iter().map(|x| x.exp()).collect();
    let f = gdp_estimate(&skewed, &replaced, 1e-5, 0.95).unwrap();
    assert!(f.fit_p_value < 1e-6, "{f:?}");
}

/// The GDP estimate sees the scores only through their differences (the module docs:
/// `μ = (m₁ − m₀)/s`, `s` the pooled deviation about each world's mean), so a common
/// offset, as a summed loss carries, changes nothing beyond the rounding of the shifted
/// scores themselves (about 1e-16 of the offset per score, 1e-10 of `μ̂` at 1e6). A
/// spread computed as `Σv² − n·m̄²` (equal in exact arithmetic) moves `μ̂` by 2.6e-4 at
/// the offset −1e6 and fails here.
#[test]
fn gdp_estimate_is_unchanged_by_a_common_offset_of_the_scores() {
    let mut rng = SeedPath::new(5).rng();
    let mut draw = |shift: f64, n: usize| gaussian_scores(&mut rng, shift, 0.0, n);
    let (canary, replaced) = (draw(0.5, 2000), draw(0.0, 2000));
    let base = gdp_estimate(&canary, &replaced, 1e-5, 0.95).unwrap();
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    for offset in [-1e6, 1e3, 1e6] {
        let shift = |x: &[f64]| x.iter().map(|v| v + offset).collect::<Vec<f64>>();
        let e = gdp_estimate(&shift(&canary), &shift(&replaced), 1e-5, 0.95).unwrap();
        assert!(
            rel(e.mu_hat, base.mu_hat) <= 1e-7,
            "offset {offset}: {e:?} vs {base:?}"
        );
        assert!(
            rel(e.mu_lower, base.mu_lower) <= 1e-7,
            "offset {offset}: {e:?} vs {base:?}"
        );
        assert!(
            rel(e.epsilon_lower_bound, base.epsilon_lower_bound) <= 1e-7,
            "offset {offset}: {e:?} vs {base:?}"
        );
        assert!(
            (e.fit_p_value - base.fit_p_value).abs() <= 1e-7,
            "offset {offset}"
        );
    }
}

/// The JSON document carries every estimator; a quarter of the noise is caught by the
/// reported (largest) bound.
#[test]
fn cli_audit_reports_every_estimator() {
    let base = [
        "audit",
        "--system",
        "rf-dpgd",
        "--epsilon",
        "2",
        "--delta",
        "1e-5",
        "--trials",
        "4000",
        "--calibration",
        "exact",
        "--json",
    ];
    let v = ok_json(&dpclaims(&base));
    let est = &v["estimators"];
    for key in ["clopper_pearson", "gdp", "one_run"] {
        assert!(
            est[key]["epsilon_lower_bound"].as_f64().is_some(),
            "{key}: {v}"
        );
    }
    assert!(est["gdp"]["mu_lower"].as_f64().unwrap() > 0.3);
    assert!(est["gdp"]["fit_p_value"].as_f64().is_some());
    assert_eq!(est["one_run"]["canaries"].as_u64(), Some(4000));
    let reported = v["epsilon_lower_bound"].as_f64().unwrap();
    assert!(reported <= 2.0, "{v}");
    assert!(reported >= est["gdp"]["epsilon_lower_bound"].as_f64().unwrap());
    let out = dpclaims(&[&base[..], &["--noise-scale", "0.25"]].concat());
    // Exit status 1: the certified bound exceeds the claimed epsilon.
    assert_eq!(out.status.code(), Some(1));
    let under: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        under["epsilon_lower_bound"].as_f64().unwrap() > 2.0,
        "{under}"
    );
}

/// The null calibration (reduced: 40 audits): no estimator's bound exceeds the claimed
/// epsilon more often than its share of 1 - confidence allows (Clopper-Pearson).
#[test]
fn null_calibration_of_the_estimators() {
    let out = dpclaims(&[
        "audit",
        "--system",
        "rf-dpgd",
        "--epsilon",
        "2",
        "--delta",
        "1e-5",
        "--trials",
        "2000",
        "--null-audits",
        "40",
        "--json",
    ]);
    let v = ok_json(&out);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 4, "{v}");
    for r in rows {
        assert_eq!(r["calibrated"], true, "{r}");
        assert_eq!(r["audits"], 40);
    }
}

/// `audit`'s default calibration is the audited paper's own, not the tool's exact one: on
/// the blog's second layer the post's sigma_a (Prop. 2.2's formula, kappa 1), on rf-dpgd
/// Prop. 2.2 (kappa 2); `--calibration exact` and `--null-audits` ask for the exact one.
#[test]
fn the_audit_default_calibration_is_the_papers() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "audit",
            "--epsilon",
            "2",
            "--delta",
            "1e-5",
            "--trials",
            "200",
            "--json",
        ];
        a.extend_from_slice(extra);
        let out = dpclaims(&a);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{a:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    for system in ["rf-dpgd", "feature-learning-second-layer"] {
        let paper = run(&["--system", system]);
        assert_eq!(paper["calibration"], "prop-2-2", "{system}: {paper}");
        let exact = run(&["--system", system, "--calibration", "exact"]);
        assert_eq!(exact["calibration"], "exact", "{system}: {exact}");
        // Prop. 2.2's sigma is larger than the exact one (at kappa 2 and at the post's 1).
        assert!(
            paper["sigma"].as_f64().unwrap() != exact["sigma"].as_f64().unwrap(),
            "{system}"
        );
    }
    // The blog's default is the post's sigma_a: Prop. 2.2's formula at the printed kappa 1.
    let second = run(&["--system", "feature-learning-second-layer"]);
    let post = run(&[
        "--system",
        "feature-learning-second-layer",
        "--calibration",
        "prop-2-2",
        "--kappa",
        "1",
    ]);
    assert_eq!(second["sigma"], post["sigma"], "{second} {post}");
}

/// The model-based threshold selection falls back to the empirical one (module docs of
/// `privacy::audit::stats`) whenever it has nothing to predict counts for: a selection
/// half of fewer than 2 runs, or a measurement half of 0 runs in either world; each
/// case gives exactly the empirical selection's threshold.
#[test]
fn threshold_selection_falls_back_to_the_empirical_one_when_a_half_is_empty() {
    use dpclaims::privacy::audit::stats::{select_threshold, select_threshold_empirical};
    let pos: Vec<f64> = (0..40).map(|i| 1.0 + 0.05 * i as f64).collect();
    let neg: Vec<f64> = (0..40).map(|i| 0.03 * i as f64).collect();
    let empirical = select_threshold_empirical(&pos, &neg, 1e-5, 0.95)
        .unwrap()
        .threshold;
    for (mp, mn) in [(0, 500), (500, 0), (0, 0)] {
        let t = select_threshold(&pos, &neg, mp, mn, 1e-5, 0.95);
        assert_eq!(
            t.as_ref().ok().map(|t| t.to_bits()),
            Some(empirical.to_bits()),
            "measured {mp} canary and {mn} replaced runs: {t:?}"
        );
    }
    let one = select_threshold(&pos[..1], &neg, 500, 500, 1e-5, 0.95).unwrap();
    let want = select_threshold_empirical(&pos[..1], &neg, 1e-5, 0.95)
        .unwrap()
        .threshold;
    assert_eq!(one.to_bits(), want.to_bits());
}
