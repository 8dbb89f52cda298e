//! The union bound after Prop. 5.3 (TP-TopK Sec. 5, L90-L91) by Monte Carlo:
//! `support_miss_monte_carlo` against the pair simulation and the bound.
use dpclaims::rng::SeedPath;
use dpclaims::train::dpsgd::{misranking_bound, misranking_monte_carlo, support_miss_monte_carlo};

/// With one coordinate on each side (k = 1, P = 2) the support is missed exactly when
/// the pair is misranked: the two simulations agree within Monte Carlo error.
#[test]
fn one_pair_is_prop53s_misranking() {
    let (gi, gj, sigma, t1, n) = (0.8, 0.5, 0.5, 8, 20000);
    let pair = misranking_monte_carlo(gi, gj, sigma, t1, n, &mut SeedPath::new(1).rng()).unwrap();
    let set =
        support_miss_monte_carlo(gi, gj, sigma, t1, 1, 2, n, &mut SeedPath::new(2).rng()).unwrap();
    let p = 0.5 * (pair.probability + set.probability);
    let se = (2.0 * p * (1.0 - p) / n as f64).sqrt();
    assert!(
        (pair.probability - set.probability).abs() <= 4.0 * se,
        "{pair:?} vs {set:?}"
    );
}

/// More boundary pairs miss more often, the union bound k(P - k) b dominates, and bad
/// arguments are refused.
#[test]
fn the_union_bound_dominates_and_more_pairs_miss_more() {
    let (gi, gj, sigma, t1, n) = (1.0, 0.5, 0.5, 16, 4000);
    let b = misranking_bound(gi, gj, sigma, t1).unwrap();
    let rng = &mut SeedPath::new(3).rng();
    let small = support_miss_monte_carlo(gi, gj, sigma, t1, 1, 2, n, rng).unwrap();
    let large = support_miss_monte_carlo(gi, gj, sigma, t1, 2, 10, n, rng).unwrap();
    assert!(large.probability > small.probability, "{small:?} {large:?}");
    assert!(large.probability <= 16.0 * b, "{large:?} vs 16 x {b}");
    assert!(support_miss_monte_carlo(gi, gj, sigma, t1, 0, 10, n, rng).is_err());
    assert!(support_miss_monte_carlo(gi, gj, sigma, t1, 10, 10, n, rng).is_err());
    assert!(support_miss_monte_carlo(gj, gi, sigma, t1, 2, 10, n, rng).is_err());
}
