//! Every claim in `claims/` at the quick profile: verdicts equal the spec's expectations,
//! and insta snapshots of rounded estimates and verdicts catch any change of the
//! training core that moves a result. Under `CI=true` a changed snapshot fails.
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
        for r in &out.results {
            assert_eq!(
                r.verdict, r.expected,
                "{}: {} / {} ({}): verdict {} but the spec expects {}",
                claim.id, r.metric, r.variant, r.kind, r.verdict, r.expected
            );
        }
    });
}

/// Every claim file carries a negative control, and every negative control is judged by
/// at least one prediction whose expected verdict is not `holds`.
#[test]
fn every_negative_control_is_flagged_somewhere() {
    let claims = spec::load_claims(&["claims".into()]).unwrap();
    assert!(claims.len() >= 6);
    for c in &claims {
        for v in c.variants.iter().filter(|v| v.negative_control) {
            let flagged = c.predictions.iter().any(|p| {
                p.expected
                    .get(&v.name)
                    .is_some_and(|e| *e != dpclaims::fit::Verdict::Holds)
            });
            assert!(
                flagged,
                "{}: negative control `{}` is never expected to fail",
                c.id, v.name
            );
        }
    }
}
