//! The data generators accept every edge of the domain their docs state, and refuse the
//! first value past it: the pair pins each boundary, so a check written one step too
//! tight (`<` for `<=`) or too loose fails here. `bad_specs_are_errors_not_panics`
//! (src/data/planted.rs) tests values far outside only.
//!
//! * the planted-support task ([`PlantedSpec`], src/data/planted.rs): `n_train, n_test
//!   >= 1`, support `s` in `1..=D`, `energy_fraction` in `[0, 1]` (1 when `s = D`),
//!   `signal >= 0` finite, `noise_sd > 0` finite, `K >= 2` classes;
//! * the synthetic mixture ([`SyntheticSpec`], src/train/dpsgd/data.rs): `n_train, n_test
//!   >= 1`, informative features in `1..=D`, `K >= 2`, `separation >= 0` finite,
//!   `nuisance_sd > 0` finite.
use dpclaims::data::planted::PlantedSpec;
use dpclaims::rng::SeedPath;
use dpclaims::train::dpsgd::{Classification, SyntheticSpec};

fn planted() -> PlantedSpec {
    PlantedSpec {
        n_train: 6,
        n_test: 4,
        features: 5,
        support: 2,
        ..PlantedSpec::default()
    }
}

fn synthetic() -> SyntheticSpec {
    SyntheticSpec {
        n_train: 6,
        n_test: 4,
        features: 5,
        informative: 2,
        ..SyntheticSpec::default()
    }
}

/// Draws the planted task; on success also checks the shapes the spec asks for.
fn draw_planted(s: &PlantedSpec) -> bool {
    let rng = &mut SeedPath::new(3).rng_for("planted");
    match s.generate(rng) {
        Ok(p) => {
            assert_eq!(p.train_x.dim(), (s.n_train, s.features), "{s:?}");
            assert_eq!(p.test_x.dim(), (s.n_test, s.features), "{s:?}");
            assert_eq!(p.means.dim(), (s.classes, s.features), "{s:?}");
            assert_eq!(p.support.len(), s.support, "{s:?}");
            assert!(p.train_y.iter().chain(&p.test_y).all(|&y| y < s.classes));
            true
        }
        Err(_) => false,
    }
}

fn draw_synthetic(s: &SyntheticSpec) -> bool {
    let rng = &mut SeedPath::new(3).rng_for("synthetic");
    match Classification::synthetic(s, rng) {
        Ok(c) => {
            assert_eq!(c.train_x.dim(), (s.n_train, s.features), "{s:?}");
            assert_eq!(c.test_x.dim(), (s.n_test, s.features), "{s:?}");
            assert_eq!(c.classes, s.classes, "{s:?}");
            assert!(c.validate().is_ok(), "{s:?}");
            true
        }
        Err(_) => false,
    }
}

#[test]
fn the_planted_task_accepts_each_edge_of_its_domain_and_refuses_the_next_value() {
    let b = planted();
    let d = b.features;
    let edges = [
        ("n_train = 1", PlantedSpec { n_train: 1, ..b }),
        ("n_test = 1", PlantedSpec { n_test: 1, ..b }),
        ("s = 1", PlantedSpec { support: 1, ..b }),
        (
            "s = D, f = 1",
            PlantedSpec {
                support: d,
                energy_fraction: 1.0,
                ..b
            },
        ),
        (
            "f = 0",
            PlantedSpec {
                energy_fraction: 0.0,
                ..b
            },
        ),
        (
            "f = 1",
            PlantedSpec {
                energy_fraction: 1.0,
                ..b
            },
        ),
        ("signal = 0", PlantedSpec { signal: 0.0, ..b }),
        (
            "noise_sd = smallest positive",
            PlantedSpec {
                noise_sd: f64::MIN_POSITIVE,
                ..b
            },
        ),
        ("K = 2", PlantedSpec { classes: 2, ..b }),
    ];
    for (what, s) in &edges {
        assert!(draw_planted(s), "{what} is inside the domain: {s:?}");
    }
    let past = [
        ("n_train = 0", PlantedSpec { n_train: 0, ..b }),
        ("n_test = 0", PlantedSpec { n_test: 0, ..b }),
        ("s = 0", PlantedSpec { support: 0, ..b }),
        (
            "s = D + 1",
            PlantedSpec {
                support: d + 1,
                energy_fraction: 1.0,
                ..b
            },
        ),
        (
            "s = D, f < 1",
            PlantedSpec {
                support: d,
                energy_fraction: 1.0 - f64::EPSILON,
                ..b
            },
        ),
        (
            "f < 0",
            PlantedSpec {
                energy_fraction: -f64::MIN_POSITIVE,
                ..b
            },
        ),
        (
            "f > 1",
            PlantedSpec {
                energy_fraction: 1.0 + f64::EPSILON,
                ..b
            },
        ),
        (
            "signal < 0",
            PlantedSpec {
                signal: -f64::MIN_POSITIVE,
                ..b
            },
        ),
        (
            "signal infinite",
            PlantedSpec {
                signal: f64::INFINITY,
                ..b
            },
        ),
        ("noise_sd = 0", PlantedSpec { noise_sd: 0.0, ..b }),
        (
            "noise_sd infinite",
            PlantedSpec {
                noise_sd: f64::INFINITY,
                ..b
            },
        ),
        ("K = 1", PlantedSpec { classes: 1, ..b }),
    ];
    for (what, s) in &past {
        assert!(!draw_planted(s), "{what} is outside the domain: {s:?}");
    }
}

#[test]
fn the_synthetic_mixture_accepts_each_edge_of_its_domain_and_refuses_the_next_value() {
    let b = synthetic();
    let d = b.features;
    let edges = [
        ("n_train = 1", SyntheticSpec { n_train: 1, ..b }),
        ("n_test = 1", SyntheticSpec { n_test: 1, ..b }),
        (
            "s = 1",
            SyntheticSpec {
                informative: 1,
                ..b
            },
        ),
        (
            "s = D",
            SyntheticSpec {
                informative: d,
                ..b
            },
        ),
        ("K = 2", SyntheticSpec { classes: 2, ..b }),
        (
            "separation = 0",
            SyntheticSpec {
                separation: 0.0,
                ..b
            },
        ),
        (
            "nuisance_sd = smallest positive",
            SyntheticSpec {
                nuisance_sd: f64::MIN_POSITIVE,
                ..b
            },
        ),
    ];
    for (what, s) in &edges {
        assert!(draw_synthetic(s), "{what} is inside the domain: {s:?}");
    }
    let past = [
        ("n_train = 0", SyntheticSpec { n_train: 0, ..b }),
        ("n_test = 0", SyntheticSpec { n_test: 0, ..b }),
        (
            "s = 0",
            SyntheticSpec {
                informative: 0,
                ..b
            },
        ),
        (
            "s = D + 1",
            SyntheticSpec {
                informative: d + 1,
                ..b
            },
        ),
        ("K = 1", SyntheticSpec { classes: 1, ..b }),
        (
            "separation < 0",
            SyntheticSpec {
                separation: -f64::MIN_POSITIVE,
                ..b
            },
        ),
        (
            "separation infinite",
            SyntheticSpec {
                separation: f64::INFINITY,
                ..b
            },
        ),
        (
            "nuisance_sd = 0",
            SyntheticSpec {
                nuisance_sd: 0.0,
                ..b
            },
        ),
        (
            "nuisance_sd NaN",
            SyntheticSpec {
                nuisance_sd: f64::NAN,
                ..b
            },
        ),
    ];
    for (what, s) in &past {
        assert!(!draw_synthetic(s), "{what} is outside the domain: {s:?}");
    }
}
