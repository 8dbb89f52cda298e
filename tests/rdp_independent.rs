//! The independent quadrature accountant (`privacy::rdp_quadrature`) against exact
//! values and against the project's series accountant (`privacy::rdp`): the two are
//! written independently, so agreement cross-checks both.
use dpclaims::privacy::rdp_quadrature::{
    epsilon_subsampled_gaussian, epsilon_subsampled_gaussian_with_orders, quadrature_orders,
    rdp_curve_quadrature, rdp_subsampled_gaussian_quadrature, subsampled_gaussian_divergences,
};
use dpclaims::privacy::{
    default_orders, epsilon, rdp_sampled_gaussian, Accountant, AccountantRecipe, Phase,
    PrivacyError,
};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// At q = 1 both divergences are those of two Gaussians at distance 1:
/// `alpha / (2 z^2)` exactly (Mironov 2017, Prop. 7).
#[test]
fn q_one_is_the_gaussian_mechanism() {
    let mut worst: f64 = 0.0;
    for z in [0.5, 0.6, 1.0, 2.0, 5.0, 20.0] {
        for alpha in [
            1.01, 1.25, 1.5, 2.0, 2.7, 3.0, 8.5, 17.0, 64.0, 128.0, 256.0,
        ] {
            let exact = alpha / (2.0 * z * z);
            let (up, down) = subsampled_gaussian_divergences(1.0, z, alpha).unwrap();
            for r in [up, down] {
                worst = worst.max(rel(r, exact));
                assert!(
                    rel(r, exact) <= 1e-8,
                    "z {z} alpha {alpha}: {r:e} vs {exact:e}"
                );
            }
        }
    }
    println!("q = 1: worst relative error {worst:.2e}");
}

/// Integer orders 2..=64 on q in {0.001, 0.01, 0.1, 0.5}, z in {0.6, 1, 2, 5}: the
/// quadrature and the binomial expansion of `privacy::rdp` agree to 1e-6 relative.
#[test]
fn integer_orders_match_the_series_accountant() {
    let mut worst: (f64, f64, f64, f64) = (0.0, 0.0, 0.0, 0.0);
    for q in [0.001, 0.01, 0.1, 0.5] {
        for z in [0.6, 1.0, 2.0, 5.0] {
            for a in 2..=64u32 {
                let alpha = f64::from(a);
                let series = rdp_sampled_gaussian(q, z, alpha).unwrap();
                let quad = rdp_subsampled_gaussian_quadrature(q, z, alpha).unwrap();
                let d = rel(quad, series);
                if d > worst.0 {
                    worst = (d, q, z, alpha);
                }
                assert!(
                    d <= 1e-6,
                    "q {q} z {z} alpha {alpha}: quadrature {quad:e} vs series {series:e}"
                );
            }
        }
    }
    println!(
        "integer orders: worst relative difference {:.2e} (q {}, z {}, alpha {})",
        worst.0, worst.1, worst.2, worst.3
    );
}

/// Fractional orders against mpmath quadrature at 40 digits of
/// `ln E_{N(0,z^2)}[(1 - q + q e^{(2x-1)/(2z^2)})^alpha]/(alpha - 1)` (the values of
/// `privacy::rdp`'s `mp_tests`, computed outside this code base), to 1e-8 relative.
/// Two of those constants are about 3e-12 relative off (a re-run of mpmath gives the
/// values of `both_directions_match_high_precision_quadrature`, which the quadrature
/// matches to 1e-15).
#[test]
fn fractional_orders_match_high_precision_quadrature() {
    let mp: [(f64, f64, f64, f64); 5] = [
        (1e-4, 1.0, 1.5, 1.288_537_390_767_33e-8),
        (0.1, 100.0, 20.5, 1.025_221_459_391_04e-5),
        (0.5, 0.8, 2.5, 0.994_609_531_280_795),
        (0.01, 2.5, 1.5, 1.300_141_794_373_48e-5),
        (0.999, 100.0, 256.1, 0.012_779_725_746_660_6),
    ];
    for (q, z, alpha, exact) in mp {
        let (up, down) = subsampled_gaussian_divergences(q, z, alpha).unwrap();
        println!(
            "q {q} z {z} alpha {alpha}: {up:.12e} vs {exact:.12e} ({:.2e}); reverse {down:.6e}",
            up / exact - 1.0
        );
        assert!(rel(up, exact) <= 1e-8, "q {q} z {z} alpha {alpha}");
        assert!(down <= up);
    }
}

/// Both directions at fractional orders against mpmath 1.3.0 (`mp.dps = 40`, `quad` of
/// `phi(x) L(x)^alpha` and `phi(x) L(x)^(1 - alpha)` split at `0, 1/2, 1, +-alpha`,
/// `+-(alpha + 40 z)`), to 1e-9 relative.
#[test]
fn both_directions_match_high_precision_quadrature() {
    let mp: [(f64, f64, f64, f64, f64); 7] = [
        (
            0.01,
            0.6,
            1.25,
            7.557_659_032_203_06e-4,
            5.799_999_161_333_314e-4,
        ),
        (
            0.5,
            0.6,
            4.14,
            4.836_320_964_189_738_8,
            0.460_413_040_060_112_47,
        ),
        (
            0.01,
            1.0,
            4.14,
            3.774_668_000_268_303e-4,
            3.175_286_626_804_348_8e-4,
        ),
        (
            0.001,
            5.0,
            1.01,
            2.060_859_746_908_234_6e-8,
            2.060_772_894_097_693_6e-8,
        ),
        (
            0.1,
            0.6,
            7.37,
            7.572_052_906_382_125,
            0.055_968_550_369_907_642,
        ),
        (
            0.1,
            100.0,
            20.5,
            1.025_221_459_388_117_8e-5,
            1.024_852_427_138_247_7e-5,
        ),
        (
            0.01,
            2.5,
            1.5,
            1.300_141_794_376_079_5e-5,
            1.295_457_498_953_823_5e-5,
        ),
    ];
    for (q, z, alpha, up_mp, down_mp) in mp {
        let (up, down) = subsampled_gaussian_divergences(q, z, alpha).unwrap();
        println!(
            "q {q} z {z} alpha {alpha}: {:.2e} {:.2e}",
            up / up_mp - 1.0,
            down / down_mp - 1.0
        );
        assert!(rel(up, up_mp) <= 1e-9, "q {q} z {z} alpha {alpha}: {up:e}");
        assert!(
            rel(down, down_mp) <= 1e-9,
            "q {q} z {z} alpha {alpha}: {down:e}"
        );
    }
}

/// The series accountant's fractional orders sum absolute values of the series terms
/// (an upper bound, see `privacy::rdp::log_a_frac`): never below the exact quadrature.
/// How much above is printed (up to about 20% at q = 0.01, z = 0.6, order 1.25).
#[test]
fn fractional_series_is_an_upper_bound_of_the_quadrature() {
    let mut loosest: (f64, f64, f64, f64) = (0.0, 0.0, 0.0, 0.0);
    for q in [0.001, 0.01, 0.1, 0.5] {
        for z in [0.6, 1.0, 2.0, 5.0] {
            for alpha in [1.25, 1.5, 1.75, 2.25, 2.5, 3.5, 4.5, 10.3] {
                let series = rdp_sampled_gaussian(q, z, alpha).unwrap();
                let quad = rdp_subsampled_gaussian_quadrature(q, z, alpha).unwrap();
                assert!(
                    quad <= series * (1.0 + 1e-9),
                    "q {q} z {z} alpha {alpha}: quadrature {quad:e} above series {series:e}"
                );
                if series / quad - 1.0 > loosest.0 {
                    loosest = (series / quad - 1.0, q, z, alpha);
                }
            }
        }
    }
    println!(
        "fractional orders: series at most {:.3e} above the quadrature (q {}, z {}, alpha {})",
        loosest.0, loosest.1, loosest.2, loosest.3
    );
}

/// One DP-SGD phase q = 0.01, z = 1, 10 000 steps, delta = 1e-5. On the project's
/// grid of orders the two accountants agree to 1e-4 relative (in fact to about 1e-11:
/// the optimum, order 4, is an integer order, where both are exact). On the
/// independent accountant's own finer grid its epsilon is lower (optimum at order 4.14),
/// by about 1.1e-3 relative; it can never be higher, since that grid holds every order
/// of the project's grid but 512 and the quadrature is exact.
#[test]
fn epsilon_matches_the_project_accountant() {
    let delta = 1e-5;
    let phase = [(0.01, 1.0, 10_000)];
    let project = epsilon(
        Accountant::Rdp,
        &[Phase::new(0.01, 1.0, 10_000)],
        delta,
        &AccountantRecipe::PAPER,
    )
    .unwrap();
    let (same_grid, same_order) =
        epsilon_subsampled_gaussian_with_orders(&phase, delta, &default_orders()).unwrap();
    let (indep, order) =
        epsilon_subsampled_gaussian_with_orders(&phase, delta, &quadrature_orders()).unwrap();
    assert_eq!(epsilon_subsampled_gaussian(&phase, delta).unwrap(), indep);
    println!(
        "project {:.10} (order {:?}); independent on the project's grid {same_grid:.10} \
         (order {same_order}, relative {:.3e}); on its own grid {indep:.10} (order {order}, \
         relative {:.3e})",
        project.epsilon,
        project.order,
        same_grid / project.epsilon - 1.0,
        indep / project.epsilon - 1.0
    );
    assert_eq!(Some(same_order), project.order);
    assert!(rel(same_grid, project.epsilon) <= 1e-4);
    assert!(indep <= project.epsilon * (1.0 + 1e-9));
    assert!(rel(indep, project.epsilon) <= 2e-3);
}

/// Composition adds the curves: two phases equal one phase of the summed steps when
/// (q, z) is the same, and the curve of two phases is the sum of theirs.
#[test]
fn composition_adds_curves() {
    let orders = [1.5, 2.0, 7.25, 32.0];
    let a = rdp_curve_quadrature(&[(0.05, 1.2, 300)], &orders).unwrap();
    let b = rdp_curve_quadrature(&[(0.05, 3.0, 200)], &orders).unwrap();
    let ab = rdp_curve_quadrature(&[(0.05, 1.2, 300), (0.05, 3.0, 200)], &orders).unwrap();
    for i in 0..orders.len() {
        assert!(rel(ab[i], a[i] + b[i]) <= 1e-14);
    }
    let split = epsilon_subsampled_gaussian(&[(0.05, 1.2, 100), (0.05, 1.2, 200)], 1e-5).unwrap();
    let whole = epsilon_subsampled_gaussian(&[(0.05, 1.2, 300)], 1e-5).unwrap();
    assert!(rel(split, whole) <= 1e-12, "{split} vs {whole}");
}

#[test]
fn invalid_inputs_are_rejected() {
    assert!(matches!(
        epsilon_subsampled_gaussian(&[], 1e-5),
        Err(PrivacyError::NoPhases)
    ));
    assert!(matches!(
        epsilon_subsampled_gaussian(&[(0.01, 1.0, 10), (1.5, 1.0, 10)], 1e-5),
        Err(PrivacyError::SamplingRate { phase: 2, .. })
    ));
    assert!(matches!(
        epsilon_subsampled_gaussian(&[(0.01, 0.0, 10)], 1e-5),
        Err(PrivacyError::NoiseMultiplier { phase: 1, .. })
    ));
    assert!(matches!(
        epsilon_subsampled_gaussian(&[(0.01, 1.0, 0)], 1e-5),
        Err(PrivacyError::ZeroSteps { phase: 1 })
    ));
    assert!(matches!(
        epsilon_subsampled_gaussian(&[(0.01, 1.0, 10)], 0.0),
        Err(PrivacyError::Delta(_))
    ));
    assert!(matches!(
        rdp_subsampled_gaussian_quadrature(0.01, 1.0, 1.0),
        Err(PrivacyError::Order(_))
    ));
}
