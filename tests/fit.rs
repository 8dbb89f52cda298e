//! Integration tests of fits, bounds and verdict rules.

use dpclaims::fit::{
    bootstrap_slope_ci, clopper_pearson, clopper_pearson_lower_one_sided,
    clopper_pearson_upper_one_sided, fit_power_law, judge_event, judge_exponent, judge_inequality,
    judge_rate_at_most, student_t_quantile, try_judge_event, FitError, Interval, Verdict,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Tolerance of published quantiles quoted to 7 significant digits.
const QUOTED: f64 = 1e-6;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn exact_power_law_recovers_slope_with_zero_stderr() {
    let x: Vec<f64> = [10.0, 20.0, 40.0, 80.0, 160.0, 320.0].to_vec();
    let y: Vec<Vec<f64>> = x.iter().map(|&v| vec![3.0 * v.powf(-0.75); 4]).collect();
    let fit = fit_power_law(&x, &y, 0.95).unwrap();
    assert!(close(fit.slope, -0.75, 1e-12), "{fit:?}");
    assert!(close(fit.intercept, 3f64.ln(), 1e-12), "{fit:?}");
    assert_eq!(fit.stderr.to_bits(), 0f64.to_bits());
    assert_eq!(fit.ci.0.to_bits(), fit.slope.to_bits());
    assert_eq!(fit.ci.1.to_bits(), fit.slope.to_bits());
    assert!(close(fit.r2, 1.0, 1e-12));
    assert_eq!(fit.points, 6);
    assert!(fit.bootstrap_ci.is_none());
    assert!(close(fit.predict(50.0), 3.0 * 50f64.powf(-0.75), 1e-12));
}

/// A noisy power law `y = 2 x^-0.5 · (1 + 0.1 u)`, u uniform in [-1, 1].
fn noisy(rng: &mut ChaCha8Rng, reps: usize) -> (Vec<f64>, Vec<Vec<f64>>) {
    let x: Vec<f64> = (0..8).map(|k| 100.0 * 2f64.powi(k)).collect();
    let y = x
        .iter()
        .map(|&v| {
            (0..reps)
                .map(|_| 2.0 * v.powf(-0.5) * (1.0 + 0.1 * rng.random_range(-1.0..1.0)))
                .collect()
        })
        .collect();
    (x, y)
}

#[test]
fn noisy_power_law_ci_covers_truth() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (x, y) = noisy(&mut rng, 5);
    let fit = fit_power_law(&x, &y, 0.95).unwrap();
    assert!(fit.ci.0 < -0.5 && -0.5 < fit.ci.1, "{fit:?}");
    assert!(fit.stderr > 0.0 && fit.stderr < 0.05, "{fit:?}");
    assert!(fit.r2 > 0.95 && fit.r2 <= 1.0, "{fit:?}");
    assert!(close(fit.ci.1 - fit.slope, fit.slope - fit.ci.0, 1e-12));

    let mut boot_rng = ChaCha8Rng::seed_from_u64(11);
    let boot = bootstrap_slope_ci(&x, &y, 0.95, 400, &mut boot_rng).unwrap();
    assert!(boot.0 < -0.5 && -0.5 < boot.1, "{boot:?}");
    assert!(
        boot.0 <= fit.slope && fit.slope <= boot.1,
        "{boot:?} vs {fit:?}"
    );
}

#[test]
fn noisy_fit_coverage_is_near_nominal() {
    // 200 independent experiments: a 90% interval must cover the truth in about 180;
    // the binomial sd is ~4.2, so [160, 198] is a > 4-sigma acceptance band.
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let covered = (0..200)
        .filter(|_| {
            let (x, y) = noisy(&mut rng, 3);
            let fit = fit_power_law(&x, &y, 0.90).unwrap();
            fit.ci.0 <= -0.5 && -0.5 <= fit.ci.1
        })
        .count();
    assert!((160..=198).contains(&covered), "covered {covered}/200");
}

#[test]
fn bootstrap_is_deterministic_given_rng() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (x, y) = noisy(&mut rng, 4);
    let a = bootstrap_slope_ci(&x, &y, 0.9, 200, &mut ChaCha8Rng::seed_from_u64(5)).unwrap();
    let b = bootstrap_slope_ci(&x, &y, 0.9, 200, &mut ChaCha8Rng::seed_from_u64(5)).unwrap();
    assert_eq!(
        (a.0.to_bits(), a.1.to_bits()),
        (b.0.to_bits(), b.1.to_bits())
    );
    let c = bootstrap_slope_ci(&x, &y, 0.9, 200, &mut ChaCha8Rng::seed_from_u64(6)).unwrap();
    assert_ne!(
        (a.0.to_bits(), a.1.to_bits()),
        (c.0.to_bits(), c.1.to_bits())
    );
}

#[test]
fn bootstrap_errors() {
    let x = [1.0, 2.0, 4.0];
    let y = vec![vec![1.0, 2.0]; 3];
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    assert_eq!(
        bootstrap_slope_ci(&x, &y, 0.9, 0, &mut rng),
        Err(FitError::NoResamples)
    );
    assert_eq!(
        bootstrap_slope_ci(&x, &y, 1.0, 10, &mut rng),
        Err(FitError::Confidence(1.0))
    );
    // Middle point {-1, 2}: only the {-1, -1} resample (1/4) has a non-positive mean,
    // so most resamples are usable.
    let y = vec![vec![1.0], vec![-1.0, 2.0], vec![1.0]];
    assert!(bootstrap_slope_ci(&x, &y, 0.9, 400, &mut rng).is_ok());
    // Every point {-10, -10, -10, 31} (mean 0.25): a resample without the 31 has a
    // negative mean, probability (3/4)^4 ~ 0.32 per point, so only ~0.32 of the
    // resamples are positive at all three points.
    let y = vec![vec![-10.0, -10.0, -10.0, 31.0]; 3];
    assert!(matches!(
        bootstrap_slope_ci(&x, &y, 0.9, 400, &mut rng),
        Err(FitError::BootstrapDegenerate { .. })
    ));
}

#[test]
fn student_t_quantile_known_value() {
    // t_{0.975, 3} = 3.182446305 (standard tables).
    let t = student_t_quantile(0.975, 3.0).unwrap();
    assert!(close(t, 3.182446305, 1e-8), "{t}");
    // t_{0.95, 10} = 1.812461123.
    let t = student_t_quantile(0.95, 10.0).unwrap();
    assert!(close(t, 1.812461123, 1e-8), "{t}");
}

#[test]
fn fit_ci_uses_t_with_points_minus_two_dof() {
    // 5 points => 3 dof: the half-width is t_{0.975,3} * stderr.
    let x = [1.0, 2.0, 4.0, 8.0, 16.0];
    let y: Vec<Vec<f64>> = [1.0, 0.6, 0.26, 0.13, 0.07]
        .iter()
        .map(|&v| vec![v])
        .collect();
    let fit = fit_power_law(&x, &y, 0.95).unwrap();
    let half = (fit.ci.1 - fit.ci.0) / 2.0;
    assert!(
        close(half, 3.182446305 * fit.stderr, 1e-8 * fit.stderr.max(1.0)),
        "{fit:?}"
    );
}

#[test]
fn clopper_pearson_known_values() {
    let (lo, hi) = clopper_pearson(0, 10, 0.95).unwrap();
    assert_eq!(lo.to_bits(), 0f64.to_bits());
    assert!(close(hi, 0.3084971, QUOTED), "{hi}");
    let (lo, hi) = clopper_pearson(5, 10, 0.95).unwrap();
    assert!(
        close(lo, 0.1870860, QUOTED) && close(hi, 0.8129140, QUOTED),
        "{lo} {hi}"
    );
    let (lo, hi) = clopper_pearson(10, 10, 0.95).unwrap();
    assert!(close(lo, 1.0 - 0.3084971, QUOTED), "{lo}");
    assert_eq!(hi.to_bits(), 1f64.to_bits());
    // One-sided 95% upper bound with 0 of n: 1 - 0.05^(1/n) ("rule of three" ~ 3/n).
    let u = clopper_pearson_upper_one_sided(0, 100, 0.95).unwrap();
    assert!(close(u, 1.0 - 0.05f64.powf(0.01), 1e-10), "{u}");
    let l = clopper_pearson_lower_one_sided(100, 100, 0.95).unwrap();
    assert!(close(l, 0.05f64.powf(0.01), 1e-10), "{l}");
    assert_eq!(
        clopper_pearson_lower_one_sided(0, 5, 0.95)
            .unwrap()
            .to_bits(),
        0f64.to_bits()
    );
    assert_eq!(
        clopper_pearson_upper_one_sided(5, 5, 0.95)
            .unwrap()
            .to_bits(),
        1f64.to_bits()
    );
    // One-sided bounds at c equal the two-sided interval at 2c - 1.
    let (lo, hi) = clopper_pearson(37, 120, 0.9).unwrap();
    let l = clopper_pearson_lower_one_sided(37, 120, 0.95).unwrap();
    let u = clopper_pearson_upper_one_sided(37, 120, 0.95).unwrap();
    assert!(close(lo, l, 1e-12) && close(hi, u, 1e-12));
}

#[test]
fn clopper_pearson_errors() {
    assert_eq!(clopper_pearson(0, 0, 0.95), Err(FitError::NoTrials));
    assert_eq!(
        clopper_pearson(11, 10, 0.95),
        Err(FitError::SuccessesExceedTrials {
            successes: 11,
            trials: 10
        })
    );
    assert_eq!(clopper_pearson(1, 10, 0.0), Err(FitError::Confidence(0.0)));
    assert!(clopper_pearson(1, 10, f64::NAN).is_err());
    assert!(clopper_pearson_lower_one_sided(1, 0, 0.9).is_err());
    assert!(clopper_pearson_upper_one_sided(1, 10, 1.5).is_err());
}

#[test]
fn fit_errors_on_bad_input() {
    let good_y = vec![vec![1.0]; 4];
    let x = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(
        fit_power_law(&x[..3], &good_y, 0.95).unwrap_err(),
        FitError::LengthMismatch { x: 3, y: 4 }
    );
    assert_eq!(
        fit_power_law(&[1.0, 2.0], &good_y[..2], 0.95).unwrap_err(),
        FitError::TooFewPoints { distinct: 2 }
    );
    assert_eq!(
        fit_power_law(&[], &[], 0.95).unwrap_err(),
        FitError::TooFewPoints { distinct: 0 }
    );
    assert_eq!(
        fit_power_law(&[1.0, -2.0, 3.0, 4.0], &good_y, 0.95).unwrap_err(),
        FitError::NonPositiveX {
            index: 1,
            value: -2.0
        }
    );
    assert!(matches!(
        fit_power_law(&[1.0, 2.0, f64::NAN, 4.0], &good_y, 0.95),
        Err(FitError::NonFiniteX { index: 2, .. })
    ));
    let y = vec![vec![1.0], vec![1.0, f64::INFINITY], vec![1.0], vec![1.0]];
    assert!(matches!(
        fit_power_law(&x, &y, 0.95),
        Err(FitError::NonFiniteY {
            index: 1,
            replicate: 1,
            ..
        })
    ));
    let y = vec![vec![1.0], vec![1.0], vec![], vec![1.0]];
    assert!(matches!(
        fit_power_law(&x, &y, 0.95),
        Err(FitError::EmptyReplicates { index: 2, .. })
    ));
    let y = vec![vec![1.0], vec![1.0], vec![1.0], vec![-1.0, 0.5]];
    let err = fit_power_law(&x, &y, 0.95).unwrap_err();
    assert_eq!(
        err,
        FitError::NonPositiveMean {
            index: 3,
            x: 4.0,
            value: -0.25
        }
    );
    assert!(err.to_string().contains("y[3]") && err.to_string().contains("-0.25"));
    for c in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(matches!(
            fit_power_law(&x, &good_y, c),
            Err(FitError::Confidence(_))
        ));
    }
}

#[test]
fn constant_means_fit_exactly_flat() {
    let x = [1.0, 2.0, 3.0];
    let y = vec![vec![5.0]; 3];
    let fit = fit_power_law(&x, &y, 0.95).unwrap();
    assert!(close(fit.slope, 0.0, 1e-15) && close(fit.r2, 1.0, 0.0));
    assert_eq!(fit.stderr.to_bits(), 0f64.to_bits());
}

#[test]
fn verdict_display_and_serde() {
    assert_eq!(Verdict::Holds.to_string(), "holds");
    assert_eq!(Verdict::Refuted.to_string(), "refuted");
    assert_eq!(Verdict::Inconclusive.to_string(), "inconclusive");
    assert_eq!(
        serde_json::to_string(&Verdict::Inconclusive).unwrap(),
        "\"inconclusive\""
    );
    let v: Verdict = serde_json::from_str("\"refuted\"").unwrap();
    assert_eq!(v, Verdict::Refuted);
}

#[test]
fn judge_exponent_branches() {
    // Holds: the CI lies inside [predicted - tol, predicted + tol].
    assert_eq!(
        judge_exponent((-1.05, -0.95), -1.0, -1.0, 0.1),
        Verdict::Holds
    );
    assert_eq!(
        judge_exponent((-0.96, -0.90), -0.93, -1.0, 0.1),
        Verdict::Holds
    );
    // Inconclusive: the CI (half-width 0.2) is wider than the band.
    assert_eq!(
        judge_exponent((-1.2, -0.8), -1.0, -1.0, 0.1),
        Verdict::Inconclusive
    );
    // Negative control: slope -0.5 vs predicted -1 with tolerance 0.15, narrow CI.
    assert_eq!(
        judge_exponent((-0.55, -0.45), -0.5, -1.0, 0.15),
        Verdict::Refuted
    );
    // Refuted however wide the CI, when it lies wholly outside the band.
    assert_eq!(
        judge_exponent((1.2, 2.2), 1.7, -0.36, 0.2),
        Verdict::Refuted
    );
    // Inconclusive at the edge of the band (regression: a true exponent at the edge
    // flipped between holds and refuted with the seed under the point-estimate rule).
    assert_eq!(
        judge_exponent((-0.88, -0.82), -0.85, -1.0, 0.15),
        Verdict::Inconclusive
    );
    assert_eq!(
        judge_exponent((-1.0, -0.8), -0.85, -1.0, 0.1),
        Verdict::Inconclusive
    );
    // Inconclusive on NaN (a failed fit never refutes).
    assert_eq!(
        judge_exponent((f64::NAN, 0.0), -1.0, -1.0, 0.1),
        Verdict::Inconclusive
    );
    // Inconclusive on an infinite CI.
    assert_eq!(
        judge_exponent((f64::NEG_INFINITY, f64::INFINITY), -1.0, -1.0, 0.1),
        Verdict::Inconclusive
    );
}

#[test]
fn judge_rate_at_most_branches() {
    // Holds: the whole CI lies below bound + tolerance.
    assert_eq!(judge_rate_at_most((-1.2, -0.8), -0.5, 0.05), Verdict::Holds);
    // Inconclusive: the point estimate (-0.48) is within the bound but the CI reaches
    // above it (the rule judges the interval, not the point estimate).
    assert_eq!(
        judge_rate_at_most((-0.6, -0.36), -0.5, 0.05),
        Verdict::Inconclusive
    );
    // Holds at the edge: hi exactly at the bound.
    assert_eq!(
        judge_rate_at_most((-0.6, -0.45), -0.5, 0.05),
        Verdict::Holds
    );
    // Refuted: the whole CI lies above bound + tolerance.
    assert_eq!(
        judge_rate_at_most((-0.3, -0.1), -0.5, 0.05),
        Verdict::Refuted
    );
    // Inconclusive: CI straddles the bound.
    assert_eq!(
        judge_rate_at_most((-0.6, 0.0), -0.5, 0.05),
        Verdict::Inconclusive
    );
    assert_eq!(
        judge_rate_at_most((f64::NAN, 0.0), -0.5, 0.05),
        Verdict::Inconclusive
    );
}

#[test]
fn out_of_regime_serialises_in_snake_case() {
    assert_eq!(Verdict::OutOfRegime.to_string(), "out_of_regime");
    assert_eq!(
        serde_json::to_string(&Verdict::OutOfRegime).unwrap(),
        "\"out_of_regime\""
    );
}

#[test]
fn judge_event_branches() {
    // Holds only when the whole CP interval is >= 1 - alpha: 400/400 (lower end ~0.991).
    let (v, (lo, _)) = judge_event(400, 400, 0.05, 0.95);
    assert_eq!(v, Verdict::Holds);
    assert!(lo >= 0.95);
    // An observed frequency above the claim is not enough (regression: the noiseless
    // no-clip event held at 32/32 with its interval reaching 0.755 < 0.9): inconclusive.
    let (v, (lo, hi)) = judge_event(96, 100, 0.05, 0.95);
    assert_eq!(v, Verdict::Inconclusive);
    assert!(lo < 0.95 && 0.96 < hi);
    assert_eq!(judge_event(9, 10, 0.1, 0.95).0, Verdict::Inconclusive);
    assert_eq!(judge_event(32, 32, 0.1, 0.99975).0, Verdict::Inconclusive);
    // Refuted: 80/100, the CP upper bound (~0.87) is below 0.95.
    let (v, (_, hi)) = judge_event(80, 100, 0.05, 0.95);
    assert_eq!(v, Verdict::Refuted);
    assert!(hi < 0.95);
    // Inconclusive: 93/100 is below 0.95 but not significantly.
    assert_eq!(judge_event(93, 100, 0.05, 0.95).0, Verdict::Inconclusive);
    // Bad input: inconclusive with the vacuous interval; the try_ form reports why.
    assert_eq!(
        judge_event(1, 0, 0.05, 0.95),
        (Verdict::Inconclusive, (0.0, 1.0))
    );
    assert_eq!(try_judge_event(0, 0, 0.05, 0.95), Err(FitError::NoTrials));
    assert!(try_judge_event(1, 2, 1.5, 0.95).is_err());
    assert_eq!(judge_event(5, 10, 0.05, 2.0).0, Verdict::Inconclusive);
}

#[test]
fn judge_inequality_branches() {
    assert_eq!(judge_inequality(&[true, true, true]), Verdict::Holds);
    assert_eq!(judge_inequality(&[true, false, true]), Verdict::Refuted);
    assert_eq!(judge_inequality(&[]), Verdict::Inconclusive);
}

mod two_sample {
    use dpclaims::fit::{brown_forsythe_test, ks_two_sample, welch_test};
    use dpclaims::rng::SeedPath;
    use rand_distr::{Distribution, StandardNormal};

    fn normals(seed: u64, n: usize, mean: f64, sd: f64) -> Vec<f64> {
        let mut rng = SeedPath::new(seed).rng();
        (0..n)
            .map(|_| {
                let z: f64 = StandardNormal.sample(&mut rng);
                mean + sd * z
            })
            .collect()
    }

    /// Reference values computed by hand from the definitions (D and the Kolmogorov
    /// series) for two small samples.
    #[test]
    fn ks_statistic_on_a_known_pair() {
        let a: Vec<f64> = (0..10).map(f64::from).collect();
        let b: Vec<f64> = (5..15).map(f64::from).collect();
        let t = ks_two_sample(&a, &b).unwrap();
        assert!((t.statistic - 0.5).abs() < 1e-15);
        // N_e = 5, l = (sqrt 5 + 0.12 + 0.11/sqrt 5) * 0.5 = 1.202...
        let l: f64 = (5f64.sqrt() + 0.12 + 0.11 / 5f64.sqrt()) * 0.5;
        let q = 2.0
            * (1..50)
                .map(|k| {
                    let k = k as f64;
                    (if k as i64 % 2 == 1 { 1.0 } else { -1.0 }) * (-2.0 * k * k * l * l).exp()
                })
                .sum::<f64>();
        assert!((t.p_value - q).abs() < 1e-12);
    }

    /// Same law: no rejection at 1%; shifted mean, scaled spread: rejected.
    #[test]
    fn tests_accept_the_same_law_and_catch_shifts() {
        let a = normals(1, 400, 0.0, 1.0);
        let b = normals(2, 400, 0.0, 1.0);
        assert!(ks_two_sample(&a, &b).unwrap().p_value > 0.01);
        assert!(welch_test(&a, &b).unwrap().p_value > 0.01);
        assert!(brown_forsythe_test(&a, &b).unwrap().p_value > 0.01);
        let shifted = normals(2, 400, 0.4, 1.0);
        assert!(ks_two_sample(&a, &shifted).unwrap().p_value < 1e-3);
        assert!(welch_test(&a, &shifted).unwrap().p_value < 1e-3);
        let wide = normals(2, 400, 0.0, 1.5);
        assert!(brown_forsythe_test(&a, &wide).unwrap().p_value < 1e-3);
    }

    #[test]
    fn too_small_or_non_finite_samples_are_errors() {
        assert!(ks_two_sample(&[1.0, 2.0], &[1.0; 10]).is_err());
        let mut a = vec![0.0; 10];
        a[3] = f64::NAN;
        assert!(welch_test(&a, &[1.0; 10]).is_err());
    }
}

#[test]
fn a_tolerance_that_admits_a_zero_slope_is_vacuous() {
    use dpclaims::spec::vacuous;
    // rate_at_most -0.11 + 0.2: a flat slope passes.
    assert!(vacuous(true, -0.11, 0.2));
    assert!(!vacuous(true, -0.11, 0.1));
    // A growth bound admits zero naturally; so does a prediction of 0.
    assert!(!vacuous(true, 0.38, 0.2));
    assert!(!vacuous(true, 0.0, 0.2));
    // exponent -0.5 ± 0.5 admits 0.
    assert!(vacuous(false, -0.5, 0.5));
    assert!(!vacuous(false, -2.0, 0.2));
    assert!(!vacuous(false, 0.0, 0.1));
}

/// A curved law `E y = x^-0.5 (1 + 3/ln x)` with multiplicative noise of sd ~0.1: its
/// least-squares slope over `x` (the design slope, the estimand) is not -0.5.
fn curved(rng: &mut ChaCha8Rng, reps: usize) -> (Vec<f64>, Vec<Vec<f64>>, f64) {
    let x: Vec<f64> = (0..5).map(|k| 16.0 * 2f64.powi(k)).collect();
    let truth = |v: f64| v.powf(-0.5) * (1.0 + 3.0 / v.ln());
    let y = x
        .iter()
        .map(|&v| {
            (0..reps)
                .map(|_| truth(v) * (1.0 + 0.17 * rng.random_range(-1.0..1.0)))
                .collect()
        })
        .collect();
    let exact: Vec<Vec<f64>> = x.iter().map(|&v| vec![truth(v)]).collect();
    let design_slope = fit_power_law(&x, &exact, 0.95).unwrap().slope;
    (x, y, design_slope)
}

#[test]
fn sampling_interval_covers_the_design_slope_and_shrinks_with_replicates() {
    // The residual interval counts the curvature as noise: it neither covers at the
    // nominal rate nor shrinks with replicates. The sampling interval does both.
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut widths = [0.0f64; 2];
    for (i, reps) in [8usize, 128].into_iter().enumerate() {
        let mut covered = 0;
        for _ in 0..200 {
            let (x, y, design) = curved(&mut rng, reps);
            let fit = fit_power_law(&x, &y, 0.90).unwrap();
            assert_eq!(fit.interval, Interval::Sampling);
            assert!(fit.dof > 5.0, "{fit:?}");
            covered += (fit.ci.0 <= design && design <= fit.ci.1) as usize;
            widths[i] += (fit.ci.1 - fit.ci.0) / 200.0;
        }
        // 90% of 200 = 180, binomial sd ~4.2: a > 4-sigma band.
        assert!(
            (160..=198).contains(&covered),
            "{reps} reps: covered {covered}/200"
        );
    }
    // 16x the replicates: about 4x narrower (the t quantiles differ a little).
    let ratio = widths[0] / widths[1];
    assert!((3.3..4.8).contains(&ratio), "width ratio {ratio}");
}

#[test]
fn sampling_stderr_is_the_delta_method_sum() {
    let x = [1.0, 2.0, 4.0];
    let y = vec![vec![1.0, 1.2], vec![0.5, 0.7, 0.6], vec![0.3, 0.2]];
    let fit = fit_power_law(&x, &y, 0.95).unwrap();
    let lx: Vec<f64> = x.iter().map(|v: &f64| v.ln()).collect();
    let mx = lx.iter().sum::<f64>() / 3.0;
    let sxx: f64 = lx.iter().map(|a| (a - mx) * (a - mx)).sum();
    let mut var = 0.0;
    for (a, reps) in lx.iter().zip(&y) {
        let r = reps.len() as f64;
        let m = reps.iter().sum::<f64>() / r;
        let s2 = reps.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (r - 1.0);
        var += ((a - mx) / sxx).powi(2) * s2 / (r * m * m);
    }
    assert!(close(fit.stderr, var.sqrt(), 1e-12), "{fit:?}");
    assert_eq!(fit.interval, Interval::Sampling);
    let t = student_t_quantile(0.975, fit.dof).unwrap();
    assert!(close(fit.ci.1 - fit.slope, t * fit.stderr, 1e-12));
}

#[test]
fn identical_replicates_give_an_exact_slope_and_single_ones_the_residual_interval() {
    let x = [1.0, 2.0, 4.0, 8.0];
    let y: Vec<Vec<f64>> = [1.0, 0.6, 0.26, 0.13].iter().map(|&v| vec![v, v]).collect();
    let fit = fit_power_law(&x, &y, 0.95).unwrap();
    assert_eq!((fit.stderr, fit.ci), (0.0, (fit.slope, fit.slope)));
    let single: Vec<Vec<f64>> = y.iter().map(|r| vec![r[0]]).collect();
    let fit1 = fit_power_law(&x, &single, 0.95).unwrap();
    assert_eq!(fit1.interval, Interval::Residual);
    assert_eq!(fit1.dof, 2.0);
    assert!(fit1.stderr > 0.0);
}

#[test]
fn the_default_level_spends_five_percent_over_the_suite() {
    use dpclaims::fit::{DEFAULT_CONFIDENCE, FAMILY_ROWS, FAMILY_WISE_ERROR};
    assert!(close(
        (1.0 - DEFAULT_CONFIDENCE) * FAMILY_ROWS as f64,
        FAMILY_WISE_ERROR,
        1e-12
    ));
}
