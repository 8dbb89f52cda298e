//! Every claim in `claims/` at the quick profile: verdicts equal the spec's expectations,
//! and insta snapshots of rounded estimates and verdicts catch any change of the
//! training core that moves a result. Under `CI=true` a changed snapshot fails.
use dpclaims::runner;
use dpclaims::spec::{self, Profile};
use serde::Serialize;

#[derive(Serialize)]
struct SnapResult {
    variant: String,
    metric: String,
    kind: &'static str,
    x: Option<String>,
    estimate: Option<f64>,
    ci: Option<(f64, f64)>,
    verdict: String,
    expected: String,
    points: usize,
}

#[derive(Serialize)]
struct Snap {
    id: String,
    results: Vec<SnapResult>,
}

/// Rounds to 2 decimals (snapshots hold rounded numbers, never raw f64s). Large values
/// are rounded to 2 significant decimals in scientific form so tiny relative changes of
/// a big number do not flip the snapshot.
fn round2(v: f64) -> f64 {
    if v.abs() >= 1e3 {
        let e = v.abs().log10().floor();
        let m = (v / 10f64.powf(e) * 100.0).round() / 100.0;
        m * 10f64.powf(e)
    } else {
        let r = (v * 100.0).round() / 100.0;
        if r == 0.0 {
            0.0
        } else {
            r
        }
    }
}

#[test]
fn every_claim_at_the_quick_profile() {
    insta::glob!("../claims", "*.yaml", |path| {
        let claim = spec::load_claim(path).unwrap();
        let out = runner::run_claim(&claim, Profile::Quick, 0, &|| {}).unwrap();
        let snap = Snap {
            id: claim.id.clone(),
            results: out
                .results
                .iter()
                .map(|r| SnapResult {
                    variant: r.variant.clone(),
                    metric: r.metric.clone(),
                    kind: r.kind,
                    x: r.x.clone(),
                    estimate: r.estimate.map(round2),
                    ci: r.ci.map(|(a, b)| (round2(a), round2(b))),
                    verdict: r.verdict.to_string(),
                    expected: r.expected.to_string(),
                    points: r.points,
                })
                .collect(),
        };
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
