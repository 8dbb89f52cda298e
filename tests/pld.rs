//! The certified PLD accountant (`privacy::pld`), checked against computations that share
//! no code with it: the exact Gaussian-DP formula at q = 1, a direct numerical
//! integration of one step's hockey-stick divergence, and the RDP accountant (an upper
//! bound of the exact value).
use crate::util::{dpclaims, ok_json};
use dpclaims::privacy::pld::{pld_epsilon, PldBracket};
use dpclaims::privacy::{self, Accountant, AccountantRecipe, Phase};

fn bracket(phases: &[Phase], delta: f64) -> PldBracket {
    pld_epsilon(phases, delta, 0.01).expect("pld")
}

/// The normal density: the direct check integrates densities, so it shares no CDF
/// (erfc) code with the accountant.
fn density(x: f64, mean: f64, sd: f64) -> f64 {
    let z = (x - mean) / sd;
    (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
}

/// `δ(ε)` of one step of the Poisson-subsampled Gaussian, as the larger of the two
/// directions' `∫ (p − e^ε q)_+ dx`, by the composite Simpson rule on a fine grid.
fn direct_delta(q: f64, z: f64, eps: f64) -> f64 {
    let (lo, hi) = (-14.0 * z, 1.0 + 14.0 * z);
    let n = 100_000usize; // even
    let h = (hi - lo) / n as f64;
    let (mut remove, mut add) = (0.0, 0.0);
    for i in 0..=n {
        let x = lo + i as f64 * h;
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let without = density(x, 0.0, z);
        let with = (1.0 - q) * without + q * density(x, 1.0, z);
        remove += w * (with - eps.exp() * without).max(0.0);
        add += w * (without - eps.exp() * with).max(0.0);
    }
    (remove.max(add)) * h / 3.0
}

/// `ε(δ)` of [`direct_delta`] by bisection.
fn direct_epsilon(q: f64, z: f64, delta: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 60.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if direct_delta(q, z, mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[test]
fn full_batch_bracket_contains_the_exact_gdp_epsilon() {
    let cases: &[(&[Phase], f64)] = &[
        (&[Phase::full_batch(1.0, 1)], 1e-5),
        (&[Phase::full_batch(2.0, 100)], 1e-5),
        (&[Phase::full_batch(10.0, 100)], 1e-6),
        (&[Phase::full_batch(0.5, 10)], 1e-3),
        (
            &[Phase::full_batch(2.0, 50), Phase::full_batch(3.0, 30)],
            1e-5,
        ),
    ];
    for (phases, delta) in cases {
        let mu = phases
            .iter()
            .map(|p| p.steps as f64 / (p.noise_multiplier * p.noise_multiplier))
            .sum::<f64>()
            .sqrt();
        let exact = privacy::gdp_epsilon(mu, *delta).unwrap();
        let b = bracket(phases, *delta);
        assert!(
            b.epsilon_lower <= exact && exact <= b.epsilon_upper,
            "{phases:?} delta {delta}: exact {exact} not in [{}, {}]",
            b.epsilon_lower,
            b.epsilon_upper
        );
        assert!(b.width() <= 0.01, "width {}", b.width());
    }
}

#[test]
fn one_step_bracket_contains_a_direct_integration() {
    for &q in &[0.01, 0.2, 0.7] {
        for &z in &[0.7, 1.5] {
            let delta = 1e-5;
            let direct = direct_epsilon(q, z, delta);
            let b = bracket(&[Phase::new(q, z, 1)], delta);
            // The Simpson rule is accurate to far better than 1e-6 here.
            assert!(
                b.epsilon_lower - 1e-6 <= direct && direct <= b.epsilon_upper + 1e-6,
                "q {q} z {z}: direct {direct} not in [{}, {}]",
                b.epsilon_lower,
                b.epsilon_upper
            );
        }
    }
}

#[test]
fn the_bracket_lies_below_rdp() {
    let cases = [
        (0.01, 1.0, 10_000u64, 1e-5),
        (0.05, 1.2, 600, 1e-5),
        (0.2, 2.0, 50, 1e-6),
        (1.0, 3.0, 20, 1e-5),
    ];
    for (q, z, steps, delta) in cases {
        let phases = [Phase::new(q, z, steps)];
        let rdp = privacy::epsilon(Accountant::Rdp, &phases, delta, &AccountantRecipe::PAPER)
            .unwrap()
            .epsilon;
        let b = bracket(&phases, delta);
        assert!(
            b.epsilon_lower <= rdp,
            "q {q} z {z} T {steps}: pld lower {} above rdp {rdp}",
            b.epsilon_lower
        );
    }
    // The standard case of the issue: RDP over-states the exact value by about 8%.
    let phases = [Phase::new(0.01, 1.0, 10_000)];
    let rdp = privacy::epsilon(Accountant::Rdp, &phases, 1e-5, &AccountantRecipe::PAPER)
        .unwrap()
        .epsilon;
    let b = bracket(&phases, 1e-5);
    assert!(
        b.width() <= 0.01 && rdp / b.epsilon_upper > 1.05,
        "{b:?} rdp {rdp}"
    );
}

#[test]
fn monotone_in_noise_sampling_rate_and_steps() {
    let eps = |q: f64, z: f64, t: u64| bracket(&[Phase::new(q, z, t)], 1e-5);
    let chain = |bs: Vec<PldBracket>| {
        for w in bs.windows(2) {
            // True values decrease along the chain: brackets may overlap, never invert.
            assert!(
                w[1].epsilon_lower <= w[0].epsilon_upper,
                "{:?} then {:?}",
                w[0],
                w[1]
            );
            assert!(
                w[1].epsilon_upper <= w[0].epsilon_upper + 0.01,
                "{:?} then {:?}",
                w[0],
                w[1]
            );
        }
    };
    chain(
        [0.6, 0.8, 1.0, 1.5, 3.0]
            .iter()
            .map(|&z| eps(0.05, z, 200))
            .collect(),
    );
    chain(
        [0.5, 0.2, 0.1, 0.05, 0.01]
            .iter()
            .map(|&q| eps(q, 1.0, 200))
            .collect(),
    );
    chain(
        [1000u64, 300, 100, 30, 1]
            .iter()
            .map(|&t| eps(0.05, 1.0, t))
            .collect(),
    );
}

#[test]
fn the_order_of_phases_does_not_matter() {
    let a = Phase::new(0.05, 1.1, 120);
    let b = Phase::new(0.05, 2.0, 300);
    let ab = bracket(&[a, b], 1e-5);
    let ba = bracket(&[b, a], 1e-5);
    assert!(
        (ab.epsilon_upper - ba.epsilon_upper).abs() < 1e-9,
        "{ab:?} {ba:?}"
    );
    assert!(
        (ab.epsilon_lower - ba.epsilon_lower).abs() < 1e-9,
        "{ab:?} {ba:?}"
    );
}

#[test]
fn edge_cases_are_sound_or_refused() {
    // Tiny noise at q = 1 over many steps: still contains the exact value.
    let phases = [Phase::full_batch(0.01, 1_000_000)];
    let exact = privacy::gdp_epsilon((1e6f64).sqrt() / 0.01, 1e-5).unwrap();
    let b = bracket(&phases, 1e-5);
    assert!(
        b.epsilon_lower <= exact && exact <= b.epsilon_upper,
        "{b:?} vs {exact}"
    );
    // Tiny noise, subsampled: finite and large.
    let b = bracket(&[Phase::new(0.01, 0.01, 1)], 1e-5);
    assert!(
        b.epsilon_upper.is_finite() && b.epsilon_lower > 1000.0,
        "{b:?}"
    );
    // Bad input is a typed error, never a panic or a NaN.
    assert!(pld_epsilon(&[Phase::new(0.01, 1.0, 10)], 1e-5, 0.0).is_err());
    assert!(pld_epsilon(&[Phase::new(0.01, 1.0, 10)], 1.5, 0.01).is_err());
    assert!(pld_epsilon(&[Phase::new(1.5, 1.0, 10)], 1e-5, 0.01).is_err());
    assert!(pld_epsilon(&[], 1e-5, 0.01).is_err());
}

#[test]
fn cli_account_pld_prints_the_bracket() {
    let args = [
        "account",
        "--accountant",
        "pld",
        "--delta",
        "1e-5",
        "--phase",
        "0.01,1,10000",
    ];
    let v = ok_json(&dpclaims(&[&args[..], &["--json"]].concat()));
    let (lo, hi) = (
        v["epsilon_lower"].as_f64().unwrap(),
        v["epsilon_upper"].as_f64().unwrap(),
    );
    assert_eq!(v["accountant"], "pld");
    assert_eq!(v["epsilon"].as_f64(), Some(hi));
    assert!(lo < hi && hi - lo <= 0.01, "{v}");
    assert!(v["discretisation"]["interval"].as_f64().unwrap() > 0.0);
    let out = dpclaims(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.starts_with("ε ∈ ["), "{text}");
    let bad = dpclaims(&[&args[..], &["--width", "-1"]].concat());
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("width"));
}

#[test]
fn calibrate_with_pld_meets_the_target_at_the_upper_end() {
    let c = privacy::calibrate(
        Accountant::Pld,
        2.0,
        1e-5,
        0.05,
        200,
        &AccountantRecipe::PAPER,
    )
    .unwrap();
    let b = bracket(&[Phase::new(0.05, c.noise_multiplier, 200)], 1e-5);
    assert!(b.epsilon_upper <= 2.0 * (1.0 + 1e-6), "{c:?} {b:?}");
    // Tighter than RDP: less noise for the same target.
    let r = privacy::calibrate(
        Accountant::Rdp,
        2.0,
        1e-5,
        0.05,
        200,
        &AccountantRecipe::PAPER,
    )
    .unwrap();
    assert!(c.noise_multiplier < r.noise_multiplier, "{c:?} {r:?}");
}

/// One step's connect-the-dots mass function (`StepLoss::discretise`) is a probability
/// split three ways, whatever the step and the grid: every point's mass finite and >= 0,
/// and the points, the mass clamped up onto the first point and the mass beyond the
/// upper end adding up to 1; its grid straddles zero loss (`lower_end < 0 < upper_end`:
/// both worlds' losses take both signs, and a grid of one cell still has two points).
/// Over sampling rates 1e-4..1, noise 0.1..30, both directions, spacings 1e-3..2 and tails
/// 1e-14 and 1e-6.
#[test]
fn one_steps_mass_function_is_a_whole_probability_on_a_grid_that_straddles_zero() {
    use dpclaims::privacy::pld::loss::{Direction, StepLoss};
    for q in [1e-4, 0.01, 0.3, 1.0] {
        for sigma in [0.1, 0.5, 1.0, 4.0, 30.0] {
            for direction in [Direction::Remove, Direction::Add] {
                let s = StepLoss {
                    q,
                    sigma,
                    direction,
                };
                for tail in [1e-14, 1e-6] {
                    let (lo, hi) = (s.lower_end(tail), s.upper_end(tail));
                    let at = format!("q {q} sigma {sigma} {direction:?} tail {tail}");
                    assert!(lo < 0.0 && 0.0 < hi, "{at}: ends {lo}, {hi}");
                    for dl in [1e-3, 0.05, 2.0] {
                        let pmf = s.discretise(dl, tail);
                        assert!(
                            pmf.mass.len() >= 2,
                            "{at} dl {dl}: {} points",
                            pmf.mass.len()
                        );
                        for (k, m) in pmf.mass.iter().enumerate() {
                            assert!(
                                m.is_finite() && *m >= 0.0,
                                "{at} dl {dl}: mass {m} at point {k}"
                            );
                        }
                        assert!(pmf.beyond.is_finite() && pmf.beyond >= 0.0, "{at} dl {dl}");
                        let total = pmf.mass.iter().sum::<f64>() + pmf.beyond;
                        assert!((total - 1.0).abs() < 1e-9, "{at} dl {dl}: total {total}");
                    }
                }
            }
        }
    }
}
