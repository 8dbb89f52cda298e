//! Property tests (proptest): the expression parser and evaluator never panic, the
//! power-law fitter returns finite numbers or an error on any finite input, and the
//! accountants are monotone (epsilon non-increasing in the noise multiplier,
//! non-decreasing in the sampling rate and the number of steps) and never negative or
//! NaN.
use dpclaims::fit::{bootstrap_slope_ci, fit_power_law};
use dpclaims::privacy::{epsilon, Accountant, AccountantRecipe, Phase, PrivacyError};
use dpclaims::spec::expr::Expr;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::collections::BTreeMap;

/// Text made of the expression language's pieces (deeper parses than random bytes).
fn expr_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("x".to_string()),
        Just("n".to_string()),
        Just("pi".to_string()),
        Just("1".to_string()),
        Just("0".to_string()),
        Just("2.5e3".to_string()),
        Just("1e400".to_string()),
        Just(".5".to_string()),
        Just("+".to_string()),
        Just("-".to_string()),
        Just("*".to_string()),
        Just("/".to_string()),
        Just("^".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(",".to_string()),
        Just(" ".to_string()),
        Just("sqrt(".to_string()),
        Just("ln(".to_string()),
        Just("exp(".to_string()),
        Just("min(".to_string()),
        Just("max(".to_string()),
        Just("ceil(".to_string()),
        Just("log(".to_string()),
        Just("é".to_string()),
        "[a-z_]{1,3}",
        "[0-9.eE+-]{1,6}",
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

fn eval_all(e: &Expr, x: f64, n: f64) {
    let vars = BTreeMap::from([("x".to_string(), x), ("n".to_string(), n)]);
    // Any value or an error; never a panic.
    let _ = e.eval_map(&vars);
    let _ = e.eval(&|name| vars.get(name).copied());
    let _ = e.variables();
    let _ = e.to_string();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::default() })]

    #[test]
    fn the_expression_parser_never_panics_on_any_string(s in any::<String>(), x in any::<f64>(), n in any::<f64>()) {
        if let Ok(e) = Expr::parse(&s) {
            eval_all(&e, x, n);
        }
    }

    #[test]
    fn the_expression_parser_never_panics_on_expression_like_text(s in expr_text(), x in any::<f64>(), n in any::<f64>()) {
        match Expr::parse(&s) {
            Ok(e) => {
                eval_all(&e, x, n);
                // Its printed form parses again to the same value.
                let again = Expr::parse(&e.to_string());
                prop_assert!(again.is_ok(), "{s:?} printed as {e}");
            }
            Err(err) => prop_assert!(!err.to_string().is_empty()),
        }
    }

    #[test]
    fn the_power_law_fit_is_finite_or_an_error(
        points in prop::collection::vec(
            (-1e6f64..1e6, prop::collection::vec(-1e6f64..1e6, 0..5)),
            0..8,
        ),
        scale in prop_oneof![Just(1e-300), Just(1e-10), Just(1.0), Just(1e10), Just(1e300)],
        confidence in prop_oneof![Just(0.95), Just(0.5), Just(1e-12), Just(1.0 - 1e-12), -1.0f64..2.0],
        seed in any::<u64>(),
    ) {
        let x: Vec<f64> = points.iter().map(|(x, _)| x.abs() * scale).collect();
        let y: Vec<Vec<f64>> = points.iter().map(|(_, y)| y.iter().map(|v| v * scale).collect()).collect();
        if let Ok(f) = fit_power_law(&x, &y, confidence) {
            prop_assert!(f.slope.is_finite() && f.intercept.is_finite(), "{f:?}");
            prop_assert!(f.stderr.is_finite() && f.stderr >= 0.0, "{f:?}");
            prop_assert!(f.ci.0.is_finite() && f.ci.1.is_finite() && f.ci.0 <= f.ci.1, "{f:?}");
            prop_assert!(f.r2.is_finite(), "{f:?}");
        }
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        if let Ok((lo, hi)) = bootstrap_slope_ci(&x, &y, confidence, 50, &mut rng) {
            prop_assert!(lo.is_finite() && hi.is_finite() && lo <= hi, "{lo} {hi}");
        }
    }
}

/// Epsilon, with "no finite guarantee" as +inf; any other error fails the property.
fn eps(acc: Accountant, q: f64, z: f64, steps: u64) -> Result<f64, TestCaseError> {
    match epsilon(
        acc,
        &[Phase::new(q, z, steps)],
        1e-5,
        &AccountantRecipe::PAPER,
    ) {
        Ok(a) => {
            prop_assert!(
                !a.epsilon.is_nan() && a.epsilon >= 0.0,
                "{acc} q {q} z {z} T {steps}: {}",
                a.epsilon
            );
            Ok(a.epsilon)
        }
        Err(PrivacyError::Unbounded) => Ok(f64::INFINITY),
        Err(e) => Err(TestCaseError::fail(format!(
            "{acc} q {q} z {z} T {steps}: {e}"
        ))),
    }
}

/// `a <= b` up to a relative rounding slack.
/// The properties draw from a fixed seed: `make test` runs the same cases on every
/// machine and every run (a random seed once failed a fresh clone on a case no earlier run
/// had drawn; that case is now a test of its own, below).
const SEED: u64 = 59;

fn le(a: f64, b: f64) -> bool {
    a <= b || (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
}

/// `a <= b` up to the RDP accountant's own error at fractional orders: its series are
/// summed to an upper bound whose slack the unit tests allow up to 5 % at a fractional
/// order (src/privacy/rdp.rs), so a larger q can give an epsilon smaller in its sixth
/// digit. 1e-5 relative is far inside that slack and far above the 2e-6 measured.
fn le_rdp(a: f64, b: f64) -> bool {
    a <= b || (a - b).abs() <= 1e-5 * b.abs().max(1e-300)
}

/// The case a random seed drew on 2026-12-02: epsilon falls by 2e-6 relative (108.01010
/// -> 108.00989) when q grows from 0.8276 to 0.8434 at z = 7.05, 7211 steps, delta =
/// 1e-5. Monotone up to the accountant's fractional-order slack, not to the last bit.
#[test]
fn the_rdp_accountant_is_monotone_in_q_up_to_its_series_slack() {
    let (z, t) = (7.046678776648311, 7211);
    let a = eps(Accountant::Rdp, 0.8276498450301925, z, t).unwrap();
    let b = eps(Accountant::Rdp, 0.8276498450301925 * 1.01904668549775, z, t).unwrap();
    assert!(le_rdp(a, b), "{a} -> {b}");
    assert!((a - b).abs() <= 1e-5 * b, "{a} -> {b}");
}

fn z_strategy() -> impl Strategy<Value = f64> {
    prop_oneof![
        1e-4f64..1e-1,
        1e-1f64..10.0,
        10.0f64..1e4,
        Just(1e-300),
        Just(1e300)
    ]
}

fn steps_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![1u64..100, 100u64..1_000_000, Just(u64::MAX / 2)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::default() })]

    #[test]
    fn full_batch_accountants_are_monotone_and_non_negative(
        z in z_strategy(), dz in 1.0f64..4.0, steps in steps_strategy(), ds in 1u64..1000,
    ) {
        for acc in [Accountant::Gdp, Accountant::Zcdp, Accountant::Rdp] {
            let e = eps(acc, 1.0, z, steps)?;
            // More noise: no more epsilon; more steps: no less.
            let more_noise = eps(acc, 1.0, z * dz, steps)?;
            prop_assert!(le(more_noise, e), "{acc}: z {z} -> {}: {e} -> {more_noise}", z * dz);
            let more_steps = eps(acc, 1.0, z, steps.saturating_add(ds))?;
            prop_assert!(le(e, more_steps), "{acc}: T {steps} -> +{ds}: {e} -> {more_steps}");
        }
    }

    #[test]
    fn the_rdp_accountant_is_monotone_in_q_sigma_and_steps(
        q in prop_oneof![1e-6f64..1e-2, 1e-2f64..1.0, Just(1.0), Just(1e-300)],
        dq in 1.0f64..10.0,
        z in z_strategy(), dz in 1.0f64..4.0,
        steps in steps_strategy(), ds in 1u64..1000,
    ) {
        let e = eps(Accountant::Rdp, q, z, steps)?;
        let q2 = (q * dq).min(1.0);
        let more_q = eps(Accountant::Rdp, q2, z, steps)?;
        prop_assert!(le_rdp(e, more_q), "q {q} -> {q2} (z {z}, T {steps}): {e} -> {more_q}");
        let more_noise = eps(Accountant::Rdp, q, z * dz, steps)?;
        prop_assert!(le_rdp(more_noise, e), "z {z} -> {} (q {q}, T {steps}): {e} -> {more_noise}", z * dz);
        let more_steps = eps(Accountant::Rdp, q, z, steps.saturating_add(ds))?;
        prop_assert!(le_rdp(e, more_steps), "T {steps} -> +{ds} (q {q}, z {z}): {e} -> {more_steps}");
    }
}
