//! The fault catalogue (`src/faults/`) and the regression power of the claim suite.
//!
//! * The catalogue is complete (every [`Fault`] variant has exactly one entry) and its
//!   names, descriptions and sources are non-empty and unique.
//! * Every fault is wired: it changes at least one small unit of a system it declares.
//! * Every fault respects its declaration: it leaves one small unit of every other
//!   system bit-for-bit unchanged (what lets the matrix skip those claims).
//! * Every fault is detected at the quick profile. The whole matrix (`dpclaims faults`,
//!   `reports/FAULTS.md`) takes minutes, so this test runs a representative subset: each
//!   fault against its *sentinel* claim, a cheap claim that detects it in the full
//!   matrix (`dpclaims faults --all`), and asserts the same kind of detection (a changed
//!   verdict, a run error, or a changed snapshot). Adding a fault means adding its
//!   sentinel here (the completeness test fails otherwise).
//! * The matrix runs the fault-free suite once, stops a row at its first detection in
//!   the order of cost, and runs every cell with `--all`.
use crate::util::{dpclaims, fault_free_quick, shrunk_claim};
use dpclaims::faults::matrix::CellStatus::{Snapshot, Verdict};
use dpclaims::faults::matrix::{self, CellStatus, MatrixConfig, Progress};
use dpclaims::faults::{Fault, CATALOGUE};
use dpclaims::rng::SeedPath;
use dpclaims::spec::{self, DataSpec, TargetSpec};
use dpclaims::systems::{self, UnitInput};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every variant, written out: adding a variant to `Fault` breaks this match until the
/// list below (and so the completeness test) is updated.
const ALL: [Fault; 18] = [
    Fault::NoiseMissingSqrtEta,
    Fault::NoiseCOverN,
    Fault::Noise2COverN,
    Fault::ClipMultiply,
    Fault::ClipSkipped,
    Fault::ClipMean,
    Fault::NoiseReused,
    Fault::SigmaInverseEpsilon,
    Fault::StepsOffByOne,
    Fault::RidgeLeftOut,
    Fault::FirstLayerNotNormalised,
    Fault::SharedRng,
    Fault::TopkMaskAfterClip,
    Fault::TopkNoiseOnInactive,
    Fault::TopkScoresPreNoise,
    Fault::RdpPoissonAtQOne,
    Fault::ClassicConversion,
    Fault::ComposeByMax,
];

#[allow(dead_code)]
fn exhaustive(f: Fault) -> usize {
    match f {
        Fault::None => 0,
        Fault::NoiseMissingSqrtEta
        | Fault::NoiseCOverN
        | Fault::Noise2COverN
        | Fault::ClipMultiply
        | Fault::ClipSkipped
        | Fault::ClipMean
        | Fault::NoiseReused
        | Fault::SigmaInverseEpsilon
        | Fault::StepsOffByOne
        | Fault::RidgeLeftOut
        | Fault::FirstLayerNotNormalised
        | Fault::SharedRng
        | Fault::TopkMaskAfterClip
        | Fault::TopkNoiseOnInactive
        | Fault::TopkScoresPreNoise
        | Fault::RdpPoissonAtQOne
        | Fault::ClassicConversion
        | Fault::ComposeByMax => 1,
    }
}

#[test]
fn catalogue_is_complete_and_its_names_and_descriptions_unique() {
    assert_eq!(CATALOGUE.len(), ALL.len());
    let mut names = HashSet::new();
    let mut descriptions = HashSet::new();
    for f in ALL {
        let entries: Vec<_> = CATALOGUE.iter().filter(|i| i.fault == f).collect();
        assert_eq!(
            entries.len(),
            1,
            "{f:?} must have exactly one catalogue entry"
        );
        let i = entries[0];
        assert!(
            !i.name.is_empty()
                && i.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "name `{}` must be kebab-case",
            i.name
        );
        assert!(names.insert(i.name), "duplicate name `{}`", i.name);
        assert!(
            descriptions.insert(i.description),
            "duplicate description of `{}`",
            i.name
        );
        assert!(i.description.len() > 20, "`{}`: describe the fault", i.name);
        assert!(i.violates.len() > 10, "`{}`: say what it violates", i.name);
        assert!(!i.systems.is_empty(), "`{}` reaches no system", i.name);
        for s in i.systems {
            assert!(
                systems::by_name(s).is_some(),
                "`{}`: unknown system `{s}`",
                i.name
            );
        }
        assert_eq!(i.name.parse::<Fault>().unwrap(), f);
        assert_eq!(f.name(), i.name);
    }
    assert_eq!("none".parse::<Fault>().unwrap(), Fault::None);
    assert!("no-such-fault".parse::<Fault>().is_err());
    assert_eq!(Fault::all().collect::<Vec<_>>(), ALL.to_vec());
}

/// A small unit of a system, with parameters under which the faults of its code paths
/// show (clipping binds, kappa = 1 somewhere, a ridge, a sparse phase 2, two phases).
struct SmallUnit {
    system: &'static str,
    vars: BTreeMap<String, f64>,
    options: BTreeMap<String, String>,
    data: DataSpec,
    metrics: BTreeSet<String>,
}

fn small_units() -> Vec<SmallUnit> {
    let unit = |system: &'static str, vars: &[(&str, f64)], options: &[(&str, &str)], target| {
        let sys = systems::by_name(system).unwrap();
        SmallUnit {
            system,
            vars: vars.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            // Defaults (the first allowed value), as spec validation fills them in.
            options: sys
                .options()
                .iter()
                .map(|o| (o.name.to_string(), o.values[0].to_string()))
                .chain(options.iter().map(|(k, v)| (k.to_string(), v.to_string())))
                .collect(),
            data: DataSpec {
                input: dpclaims::data::InputDist::Gaussian,
                target,
                label_noise: 0.0,
            },
            metrics: sys.metrics().iter().map(|m| m.name.to_string()).collect(),
        }
    };
    let rf = |system: &'static str, kappa: f64| {
        unit(
            system,
            &[
                ("seeds", 8.0),
                ("d", 5.0),
                ("n", 20.0),
                ("p", 40.0),
                ("n_test", 20.0),
                ("eta", 1.0 / 40.0),
                ("steps", 12.0),
                ("clip", 0.5 * 40f64.sqrt()),
                ("epsilon", 2.0),
                ("delta", 1e-3),
                ("kappa", kappa),
            ],
            &[],
            TargetSpec::Sign,
        )
    };
    let fl = |kappa: f64| {
        unit(
            "feature_learning",
            &[
                ("d", 6.0),
                ("n", 40.0),
                ("p", 12.0),
                ("n_test", 30.0),
                ("eta_w", 2.0),
                ("sigma_w", 0.1),
                ("eta_a", 0.05),
                ("steps", 6.0),
                ("clip", 0.5),
                ("lambda", 0.2),
                ("epsilon", 2.0),
                ("delta", 1e-3),
                ("kappa", kappa),
            ],
            &[],
            TargetSpec::SingleIndex(vec![0.0, 1.0, 0.5]),
        )
    };
    let cal = |calibration: &'static str| {
        unit(
            "gaussian_calibration",
            &[
                ("epsilon", 1.0),
                ("delta", 1e-5),
                ("steps", 100.0),
                ("eta", 0.01),
                ("kappa", 2.0),
            ],
            &[("calibration", calibration)],
            TargetSpec::None,
        )
    };
    let audit = |mechanism: &'static str, calibration: &'static str| {
        unit(
            "privacy_audit",
            &[("epsilon", 2.0), ("delta", 1e-5), ("trials", 200.0)],
            &[("mechanism", mechanism), ("calibration", calibration)],
            TargetSpec::None,
        )
    };
    let tp = |method: &'static str| {
        unit(
            "tp_topk",
            &[
                ("epsilon", 3.0),
                ("epochs", 3.0),
                ("phase1_epochs", 1.0),
                ("active_ratio", 0.2),
                ("clip", 0.5),
            ],
            &[("method", method)],
            TargetSpec::None,
        )
    };
    vec![
        rf("rf_dpgd", 2.0),
        rf("rf_dpgd", 1.0),
        rf("rf_engines", 2.0),
        unit(
            "rf_kernel",
            &[
                ("d", 4.0),
                ("n", 12.0),
                ("p", 144.0),
                ("n_test", 10.0),
                ("tau", 0.05),
                ("clip", 12.0),
                ("epsilon", 2.0),
                ("delta", 1e-3),
                ("kappa", 2.0),
                ("eta", 0.01),
                ("grid", 50.0),
            ],
            &[],
            TargetSpec::Sign,
        ),
        unit(
            "rf_tuned",
            &[
                ("d", 5.0),
                ("n", 20.0),
                ("p", 40.0),
                ("n_test", 20.0),
                ("n_val", 10.0),
                ("eta", 1.0 / 40.0),
                ("steps", 4.0),
                ("clip", 0.5 * 40f64.sqrt()),
                ("epsilon", 2.0),
                ("delta", 1e-3),
                ("kappa", 2.0),
                ("grid_steps_lo", 1.0),
                ("grid_steps_hi", 4.0),
                ("grid_steps_k", 3.0),
                ("p_ref", 30.0),
                ("clip_ref", 0.5 * 30f64.sqrt()),
            ],
            &[],
            TargetSpec::Sign,
        ),
        unit(
            "rf_fig2",
            &[
                ("d", 3.0),
                ("n", 8.0),
                ("n_test", 10.0),
                ("n_val", 6.0),
                ("epsilon", 2.0),
                ("delta", 1e-3),
                ("kappa", 2.0),
            ],
            &[],
            TargetSpec::Sign,
        ),
        fl(2.0),
        fl(1.0),
        cal("prop_2_2"),
        unit(
            "gaussian_mechanism",
            &[
                ("sensitivity", 1.0),
                ("epsilon", 0.5),
                ("delta", 1e-5),
                ("samples", 100.0),
            ],
            &[],
            TargetSpec::None,
        ),
        audit("rf-dpgd", "prop-2-2"),
        audit("feature-learning-second-layer", "exact"),
        audit("feature-learning-first-layer", "exact"),
        audit("tp-topk", "exact"),
        tp("tp-topk"),
        tp("on-topk"),
        unit(
            "tp_topk",
            &[
                ("g_i", 1.0),
                ("g_j", 0.5),
                ("sigma", 1.0),
                ("t1", 4.0),
                ("trials", 200.0),
                // The union bound after Prop. 5.3 (support_miss_mc), asked for as every
                // metric is here.
                ("set_k", 3.0),
                ("set_p", 12.0),
                ("set_trials", 200.0),
            ],
            &[("mode", "misranking")],
            TargetSpec::None,
        ),
    ]
}

fn run_unit(u: &SmallUnit, fault: Fault) -> Result<Vec<(String, u64)>, String> {
    let recipe = fault.recipe();
    let input = UnitInput {
        vars: &u.vars,
        options: &u.options,
        data: &u.data,
        metrics: &u.metrics,
        variant: "main",
        seeds: SeedPath::new(3).child("fault-test").child(u.system),
        recipe: &recipe,
        shared: None,
    };
    systems::by_name(u.system)
        .unwrap()
        .run(&input)
        .map(|m| m.into_iter().map(|(k, v)| (k, v.to_bits())).collect())
        .map_err(|e| e.to_string())
}

#[test]
fn every_fault_changes_a_system_it_declares_and_no_other() {
    let units = small_units();
    for s in systems::all() {
        assert!(
            units.iter().any(|u| u.system == s.name()),
            "add a small unit of the system `{}` to this test",
            s.name()
        );
    }
    let base: Vec<_> = units
        .iter()
        .map(|u| run_unit(u, Fault::None).expect("the correct core runs"))
        .collect();
    for f in ALL {
        let info = f.info().unwrap();
        let mut changed = vec![];
        for (u, b) in units.iter().zip(&base) {
            let out = run_unit(u, f);
            let same = out.as_ref().is_ok_and(|o| o == b);
            if info.systems.contains(&u.system) {
                if !same {
                    changed.push(u.system);
                }
            } else {
                assert!(
                    same,
                    "`{}` declares it cannot reach `{}`, but it changed its output ({:?})",
                    info.name,
                    u.system,
                    out.err()
                );
            }
        }
        assert!(
            !changed.is_empty(),
            "`{}` changed no unit of the systems it declares ({:?}): is it wired?",
            info.name,
            info.systems
        );
    }
}

/// The sentinel of each fault: a claim that detects it at the quick profile, and how
/// (from `dpclaims faults --all`), the cheapest detector (engine-equivalence, the
/// first-layer audit, sigma-a-calibration and tp-topk-digits run in seconds;
/// final-risk-bound-blog in about ten, noise-term-scaling in about forty, so they sentinel
/// only the faults nothing cheaper detects; the whole matrix is `dpclaims faults`). A
/// snapshot change is a detection as much as a verdict: the baseline fails on either. A
/// missing sqrt(eta) is also `noise-term-scaling`'s negative control, caught there by a
/// verdict (`make run`); warm-up scores before the noise are the TP-TopK audit's.
const SENTINELS: &[(&str, &str, CellStatus)] = &[
    ("noise-missing-sqrt-eta", "engine-equivalence", Snapshot),
    ("noise-c-over-n", "engine-equivalence", Snapshot),
    // A snapshot change since the blog claim runs 40 replicates (was 4): the verdict it
    // used to flip (as-printed refuted -> inconclusive) now stays refuted under twice the
    // noise, since as-printed diverges either way; the numbers still move.
    ("noise-2c-over-n", "final-risk-bound-blog", Snapshot),
    ("clip-multiply", "engine-equivalence", Verdict),
    ("clip-skipped", "engine-equivalence", Verdict),
    ("clip-mean", "engine-equivalence", Verdict),
    ("noise-reused", "engine-equivalence", Verdict),
    ("sigma-inverse-epsilon", "sigma-a-calibration", Verdict),
    ("steps-off-by-one", "engine-equivalence", Verdict),
    // A verdict change since the certificate and ridge rows draw up to 240 replicates
    // (stop 47): the repaired-noiseless ablation of test_risk moves from inconclusive.
    ("ridge-left-out", "final-risk-bound-blog", Verdict),
    ("first-layer-not-normalised", "first-layer-audit", Verdict),
    ("shared-rng", "first-layer-audit", Verdict),
    // A verdict change since tp-topk-digits judges L155's online contrast (ON-TopK -
    // ON-Rand): clipping before masking moves it from refuted to inconclusive.
    ("topk-mask-after-clip", "tp-topk-digits", Verdict),
    ("topk-noise-on-inactive", "tp-topk-digits", Verdict),
    // Also a verdict change since L155's contrast: scores taken before the noise move it
    // from refuted to inconclusive.
    ("topk-scores-pre-noise", "tp-topk-digits", Verdict),
    ("rdp-poisson-at-q1", "tp-topk-digits", Verdict),
    ("classic-conversion", "tp-topk-digits", Snapshot),
    ("compose-by-max", "tp-topk-digits", Verdict),
];

#[test]
fn every_fault_has_one_sentinel() {
    for f in ALL {
        let n = SENTINELS.iter().filter(|s| s.0 == f.name()).count();
        assert_eq!(
            n,
            1,
            "fault `{}` needs exactly one sentinel claim",
            f.name()
        );
    }
    assert_eq!(SENTINELS.len(), ALL.len());
}

/// Each fault against its sentinel claim: detected, and detected the same way as in
/// the committed matrix.
#[test]
fn every_fault_is_detected_by_its_sentinel_claim_at_the_quick_profile() {
    let cfg = MatrixConfig {
        audit: false,
        ..MatrixConfig::default()
    };
    let ids: BTreeSet<&str> = SENTINELS.iter().map(|s| s.1).collect();
    let claims: Vec<_> = ids
        .iter()
        .map(|id| spec::load_claim(format!("claims/{id}.yaml").as_ref()).unwrap())
        .collect();
    // The fault-free runs are the claim snapshot test's (`util::fault_free_quick`), the
    // same outcomes `matrix::baseline` computes (the recipe of `Fault::None` is
    // `Recipe::PAPER`; no audit here).
    let base: Vec<_> = claims.iter().map(fault_free_quick).collect();
    for (name, claim, want) in SENTINELS {
        let fault: Fault = name.parse().unwrap();
        let i = claims.iter().position(|c| c.id == *claim).unwrap();
        let row = matrix::fault_row(
            std::slice::from_ref(&claims[i]),
            std::slice::from_ref(&*base[i]),
            fault,
            &cfg,
            &|_| {},
        );
        let cell = &row.cells[0];
        assert!(
            cell.status.detects(),
            "`{name}` is no longer detected by `{claim}`: {cell:?}"
        );
        assert_eq!(
            cell.status, *want,
            "`{name}` on `{claim}` changed how it is detected: {cell:?}"
        );
    }
}

#[test]
fn faults_command_json_lists_each_fault_with_its_detectors() {
    let out = dpclaims(&[
        "faults",
        "claims/sigma-a-calibration.yaml",
        "--only",
        "sigma-inverse-epsilon",
        "compose-by-max",
        "--no-audit",
        "--no-report",
        "--json",
    ]);
    // compose-by-max cannot reach the calibration system: undetected here, so exit 1.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], 2);
    let faults = v["faults"].as_array().unwrap();
    assert_eq!(faults[0]["name"], "sigma-inverse-epsilon");
    assert_eq!(faults[0]["detected_by"][0], "sigma-a-calibration");
    assert!(faults[0]["verdict_changes"].as_u64().unwrap() >= 1);
    assert_eq!(faults[0]["audit_violation"], false);
    assert!(faults[0]["description"].as_str().unwrap().len() > 20);
    assert_eq!(faults[1]["name"], "compose-by-max");
    assert_eq!(faults[1]["cells"][0]["status"], "skipped");
    assert_eq!(v["detected"], 1);
}

/// Every system has a cost per unit, so the order of a row is an estimate, not a
/// default (a new system without one would be tried last).
#[test]
fn every_system_has_a_cost_estimate() {
    for s in systems::all() {
        assert!(
            matrix::order::UNIT_SECONDS
                .iter()
                .any(|(name, _)| *name == s.name()),
            "add the system `{}` to UNIT_SECONDS in src/faults/matrix/order.rs",
            s.name()
        );
    }
}

/// The fault-free suite runs once per matrix, however many rows compare with it.
#[test]
fn the_matrix_runs_the_fault_free_suite_once() {
    let claims = vec![spec::load_claim("claims/sigma-a-calibration.yaml".as_ref()).unwrap()];
    let cfg = MatrixConfig {
        audit: false,
        ..MatrixConfig::default()
    };
    let (fault_free, rows) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let m = matrix::run_matrix(
        &claims,
        &[Fault::SigmaInverseEpsilon, Fault::ComposeByMax],
        &cfg,
        &|p| match p {
            Progress::Fault(Fault::None) => {
                fault_free.fetch_add(1, Ordering::Relaxed);
            }
            Progress::Fault(_) => {
                rows.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        },
    )
    .unwrap();
    assert_eq!(fault_free.load(Ordering::Relaxed), 1);
    assert_eq!(rows.load(Ordering::Relaxed), 2);
    assert_eq!(m.faults.len(), 2);
}

/// A row stops at its first detection in the order of cost (the claims after it are
/// `not_run`); `--all` runs every cell. Three cheap DP-GD claims that `clip-skipped`
/// reaches: two of them detect it (`engine-equivalence` by a verdict,
/// `final-risk-bound-blog` by its snapshot), `first-layer-audit` does not. The blog claim
/// runs at 4 replicates instead of 40 (`util::shrunk_claim`): the test is of the row's
/// order and stopping, and a tenth of the replicates still moves its numbers.
#[test]
fn a_row_stops_at_its_first_detection_unless_all() {
    let dir = tempfile::tempdir().unwrap();
    let blog = shrunk_claim(dir.path(), "final-risk-bound-blog", 40, 4);
    let blog = blog.to_str().unwrap();
    let run = |all: bool| -> serde_json::Value {
        let mut args = vec![
            "faults",
            "claims/engine-equivalence.yaml",
            blog,
            "claims/first-layer-audit.yaml",
            "--only",
            "clip-skipped",
            "--no-audit",
            "--no-report",
            "--json",
        ];
        if all {
            args.push("--all");
        }
        let out = dpclaims(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let status = |row: &serde_json::Value, claim: &str| -> String {
        row["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["claim"] == claim)
            .unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let early = run(false);
    let order: Vec<String> = early["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["detector"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order.len(), 3, "{order:?}");
    let row = &early["faults"][0];
    let first = row["first_detector"].as_str().unwrap().to_string();
    let at = order.iter().position(|c| *c == first).unwrap();
    for (i, c) in order.iter().enumerate() {
        let s = status(row, c);
        if i < at {
            assert_eq!(s, "unchanged", "`{c}` ran before the first detector");
        } else if i == at {
            assert!(["verdict", "snapshot"].contains(&s.as_str()), "`{c}`: {s}");
        } else {
            assert_eq!(s, "not_run", "`{c}` comes after the first detection");
        }
    }
    assert_eq!(row["detected_by"], serde_json::json!([first]));
    assert!(
        at < 2,
        "two of the three claims detect the fault: {order:?}"
    );
    assert_eq!(row["not_run"].as_array().unwrap().len(), 2 - at);

    let full = run(true);
    let row = &full["faults"][0];
    assert_eq!(full["all"], true);
    assert_eq!(status(row, "engine-equivalence"), "verdict");
    assert_eq!(status(row, "final-risk-bound-blog"), "snapshot");
    assert_eq!(status(row, "first-layer-audit"), "unchanged");
    assert!(row["not_run"].as_array().unwrap().is_empty());
    assert_eq!(row["first_detector"].as_str().unwrap(), first);
}

#[test]
fn faults_command_rejects_an_unknown_fault() {
    let out = dpclaims(&["faults", "--only", "no-such-fault", "--no-report"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown fault `no-such-fault`"));
}

#[test]
fn faults_list_prints_the_catalogue() {
    let out = dpclaims(&["faults", "--list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for i in CATALOGUE {
        assert!(text.contains(i.name), "`{}` missing from --list", i.name);
    }
}
