//! Every claim in `claims/` at the quick profile. Two separate questions:
//! * the claim verdicts: every negative control is caught, no main variant is refuted
//!   without a finding, no tolerance is vacuous (`ClaimOutcome::problems` is empty);
//! * the regression baseline: insta snapshots of rounded estimates and verdicts catch
//!   any change of the training core that moves a result (under `CI=true` a changed
//!   snapshot fails). `dpclaims run` compares with the same snapshots.
//!
//! Both questions are `make run`'s (`dpclaims run` exits 1 on either, and with
//! `--require-baseline` on a claim that has no snapshot yet); CI runs `make test` then
//! `make run`, so the whole quick suite is not computed here a second time. Snapshots
//! are recorded from a run's own results: `dpclaims run` keeps a pending snapshot of
//! every new or changed claim, `dpclaims review` / `dpclaims accept` move them into
//! `tests/snapshots/` (src/report/pending.rs; tests/accept_review.rs). The load-time
//! checks of the controls below run in `make test`.
use dpclaims::spec::{self, Profile};

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
    use dpclaims::spec::identical_main;
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
