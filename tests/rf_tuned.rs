//! The `rf_tuned` system: hyper-parameters selected on the validation split, reported on
//! the test set; the collapse metrics.
use dpclaims::data::InputDist;
use dpclaims::rng::SeedPath;
use dpclaims::spec::{DataSpec, TargetSpec};
use dpclaims::systems::{self, UnitInput};
use dpclaims::train::Recipe;
use std::collections::{BTreeMap, BTreeSet};

const METRICS: [&str; 8] = [
    "test_loss",
    "val_loss",
    "best_steps",
    "best_clip_over_sqrt_p",
    "excess_risk",
    "min_norm_test_loss",
    "spread_steps",
    "collapse_ratio",
];

fn unit(extra: &[(&str, f64)], metrics: &[&str]) -> Result<BTreeMap<String, f64>, String> {
    let p = 120.0;
    let mut vars: BTreeMap<String, f64> = [
        ("d", 5.0),
        ("n", 30.0),
        ("p", p),
        ("n_test", 40.0),
        ("n_val", 20.0),
        ("eta", 1.0 / p),
        ("steps", 10.0),
        ("clip", f64::sqrt(p)),
        ("epsilon", 4.0),
        ("delta", 1.0 / 30.0),
        ("kappa", 2.0),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), *v))
    .collect();
    for (k, v) in extra {
        vars.insert(k.to_string(), *v);
    }
    let options: BTreeMap<String, String> =
        [("clip_rule".to_string(), "divide".to_string())].into();
    let data = DataSpec {
        input: InputDist::Gaussian,
        target: TargetSpec::Sign,
        label_noise: 0.0,
    };
    let metrics: BTreeSet<String> = metrics.iter().map(|s| s.to_string()).collect();
    let input = UnitInput {
        vars: &vars,
        options: &options,
        data: &data,
        metrics: &metrics,
        variant: "main",
        seeds: SeedPath::new(3).child("rf-tuned"),
        recipe: &Recipe::PAPER,
        shared: None,
    };
    systems::by_name("rf_tuned")
        .unwrap()
        .run(&input)
        .map_err(|e| e.to_string())
}

const GRID: [(&str, f64); 6] = [
    ("grid_clip_lo", 0.2),
    ("grid_clip_hi", 1.0),
    ("grid_clip_k", 3.0),
    ("grid_steps_lo", 1.0),
    ("grid_steps_hi", 8.0),
    ("grid_steps_k", 4.0),
];

/// Never tune on the test set: a grid without a validation split is refused.
#[test]
fn a_grid_without_validation_is_refused() {
    let mut extra = GRID.to_vec();
    extra.push(("n_val", 0.0));
    let err = unit(&extra, &["test_loss"]).unwrap_err();
    assert!(err.contains("validation"), "{err}");
}

/// The reported cell is the grid's best on validation, and its test loss is that of the
/// same cell run alone (same data, features and noise stream).
#[test]
fn the_selected_cell_is_the_best_on_validation() {
    let tuned = unit(&GRID, &METRICS[..6]).unwrap();
    let again = unit(&GRID, &METRICS[..6]).unwrap();
    for (k, v) in &tuned {
        assert_eq!(v.to_bits(), again[k].to_bits(), "{k} is not deterministic");
    }
    let clip = tuned["best_clip_over_sqrt_p"] * f64::sqrt(120.0);
    let alone = unit(
        &[("clip", clip), ("steps", tuned["best_steps"])],
        &METRICS[..6],
    )
    .unwrap();
    let rel = (alone["test_loss"] - tuned["test_loss"]).abs() / tuned["test_loss"];
    assert!(
        rel < 1e-10,
        "{} vs {}",
        alone["test_loss"],
        tuned["test_loss"]
    );
    assert!(
        (tuned["excess_risk"] - (tuned["test_loss"] - tuned["min_norm_test_loss"])).abs() < 1e-12
    );
    // Every other cell has a validation loss at least as large.
    for c in [0.2, 1.0] {
        for t in [10.0, 80.0] {
            let other = unit(
                &[("clip", c * f64::sqrt(120.0)), ("steps", t)],
                &METRICS[..6],
            )
            .unwrap();
            assert!(other["val_loss"] >= tuned["val_loss"] - 1e-12);
        }
    }
}

/// The collapse metrics with p_ref = p compare two curves at the same width: the shift
/// is 0, so both spreads are equal and the ratio is 1.
#[test]
fn collapse_ratio_is_one_at_the_reference_width() {
    let extra = [
        ("grid_steps_lo", 1.0),
        ("grid_steps_hi", 8.0),
        ("grid_steps_k", 6.0),
        ("p_ref", 120.0),
        ("clip_ref", f64::sqrt(120.0)),
    ];
    let out = unit(
        &extra,
        &["spread_steps", "spread_collapsed", "collapse_ratio"],
    )
    .unwrap();
    assert!(
        out["spread_steps"] > 0.0,
        "independent features: the curves differ"
    );
    assert!((out["collapse_ratio"] - 1.0).abs() < 1e-12, "{out:?}");
}
