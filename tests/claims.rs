//! Every claim in `claims/` at the quick profile. Two separate questions:
//! * the claim verdicts: every negative control is caught, no main variant is refuted
//!   without a finding, no tolerance is vacuous (`ClaimOutcome::problems` is empty);
//! * the regression baseline: insta snapshots of rounded estimates and verdicts catch
//!   any change of the training core that moves a result (under `CI=true` a changed
//!   snapshot fails). `dpclaims run` compares with the same snapshots.
use dpclaims::report::snapshot::snapshot;
use dpclaims::runner;
use dpclaims::spec::{self, Profile};

#[test]
fn every_claim_at_the_quick_profile() {
    insta::glob!("../claims", "*.yaml", |path| {
        let claim = spec::load_claim(path).unwrap();
        let out = runner::run_claim(&claim, Profile::Quick, 0, &|| {}).unwrap();
        let snap = snapshot(&out);
        insta::with_settings!({info => &serde_json::json!({"seed": 0, "profile": "quick"})}, {
            insta::assert_yaml_snapshot!(snap);
        });
        let problems = out.problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    });
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
