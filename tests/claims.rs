//! Every claim in `claims/` at the quick profile. Two separate questions:
//! * the claim verdicts: every negative control is caught, no main variant is refuted
//!   without a finding, no tolerance is vacuous (`ClaimOutcome::problems` is empty);
//! * the regression baseline: insta snapshots of rounded estimates and verdicts catch
//!   any change of the training core that moves a result (under `CI=true` a changed
//!   snapshot fails). `dpclaims run` compares with the same snapshots.
//!
//! Both questions are `make run`'s (`dpclaims run` exits 1 on either, and under
//! `CI=true` on a claim that has no snapshot yet), and CI runs `make test` then
//! `make run`: running the whole quick suite here as well would compute it twice (about
//! two minutes of 2 cores, which `make test`'s five-minute budget cannot hold). So the
//! whole-suite test is ignored by default and is the way to record snapshots:
//! `INSTA_UPDATE=always cargo test --release -- --ignored every_claim_at_the_quick_profile`
//! (`DPCLAIMS_SNAPSHOT_ONLY=id1,id2` records only those claim files' snapshots).
//! The load-time checks of the controls below run in `make test`.
use crate::util::fault_free_quick;
use dpclaims::report::snapshot::snapshot;
use dpclaims::spec::{self, Profile};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The claim files, sorted.
fn claim_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("claims");
    let dir = dir.canonicalize().unwrap_or(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no claim files in {}", dir.display());
    files
}

/// One snapshot per claim file, named and headed as `insta::glob!("../claims",
/// "*.yaml", ..)` names them (`<test>@<file>.snap`, `input_file`), which this loop
/// replaces: insta's `glob` feature builds globset and a regex engine, and its
/// `redactions` feature a PEG parser, for the test build only — about a minute of CPU
/// of a clean build, for one directory listing (snapshots hold rounded numbers, so
/// nothing is redacted). As with `glob!`, every claim runs and the failures are listed
/// at the end.
#[test]
#[ignore = "the whole quick suite; `make run` checks the same snapshots (module docs)"]
fn every_claim_at_the_quick_profile() {
    let mut failed = vec![];
    let only = std::env::var("DPCLAIMS_SNAPSHOT_ONLY").ok();
    for path in claim_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name.trim_end_matches(".yaml");
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|id| id == stem))
        {
            continue;
        }
        let checked = catch_unwind(AssertUnwindSafe(|| {
            let claim = spec::load_claim(&path).unwrap();
            let out = fault_free_quick(&claim);
            let snap = snapshot(&out);
            insta::with_settings!({
                input_file => &path,
                snapshot_suffix => name.as_str(),
                info => &serde_json::json!({"seed": 0, "profile": "quick"}),
            }, {
                insta::assert_yaml_snapshot!(snap);
            });
            let problems = out.problems();
            assert!(problems.is_empty(), "{}", problems.join("\n"));
        }));
        if checked.is_err() {
            failed.push(name);
        }
    }
    assert!(
        failed.is_empty(),
        "claims whose snapshot or verdicts failed (messages above): {}",
        failed.join(", ")
    );
}

/// Every claim file carries a negative control, and every negative control names a
/// prediction that must catch it.
#[test]
fn every_negative_control_names_what_catches_it() {
    let claims = spec::load_claims(&["claims".into()]).unwrap();
    assert!(claims.len() >= 6);
    for c in &claims {
        assert!(c.variants.iter().any(|v| v.negative_control), "{}", c.id);
        for v in c.variants.iter().filter(|v| v.negative_control) {
            assert!(!v.caught_by.is_empty(), "{}: {}", c.id, v.name);
        }
    }
}

/// Neutering any negative control of the suite (giving it the settings of a main
/// variant) is detected before anything runs, for every prediction that must catch it;
/// `dpclaims run` then fails naming it (end to end in `spec_errors.rs`).
#[test]
fn every_neutered_negative_control_is_detected() {
    use dpclaims::judge::regime::identical_main;
    let claims = spec::load_claims(&["claims".into()]).unwrap();
    let mut checked = 0;
    for c in &claims {
        for (ci, ctrl) in c.variants.iter().enumerate() {
            if !ctrl.negative_control {
                continue;
            }
            // Nothing is identical as written.
            for p in c
                .predictions
                .iter()
                .filter(|p| ctrl.caught_by.contains(&p.name))
            {
                for profile in [Profile::Quick, Profile::Full] {
                    assert_eq!(
                        identical_main(c, &ctrl.name, &p.sweep, profile),
                        None,
                        "{}: control `{}` already equals a main variant",
                        c.id,
                        ctrl.name
                    );
                }
            }
            // The closest main variant (fewest differing overrides).
            let main = c
                .variants
                .iter()
                .filter(|m| !m.negative_control)
                .min_by_key(|m| {
                    let opts = m
                        .options
                        .iter()
                        .filter(|(k, v)| ctrl.options.get(*k) != Some(v))
                        .count();
                    let params = m.params.len() + ctrl.params.len();
                    opts * 100 + params
                })
                .unwrap();
            let mut neutered = c.clone();
            {
                let v = &mut neutered.variants[ci];
                v.params = main.params.clone();
                v.options = main.options.clone();
                v.data = main.data.clone();
            }
            for p in c
                .predictions
                .iter()
                .filter(|p| ctrl.caught_by.contains(&p.name))
            {
                assert_eq!(
                    identical_main(&neutered, &ctrl.name, &p.sweep, Profile::Quick).as_deref(),
                    Some(main.name.as_str()),
                    "{}: neutered control `{}` not detected on `{}`",
                    c.id,
                    ctrl.name,
                    p.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}
