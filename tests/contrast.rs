//! Paired contrasts (`minus:` of an inequality over means, an `exponent` or a
//! `rate_at_most`): a variant's metric minus another variant's at the same point and
//! replicate, judged on simultaneous t intervals of the mean difference (or fitted along
//! the sweep) — the form of "method A beats method B" statements (TP-TopK's L155, Fig. 1
//! (right) against tuned non-private GD, Table 3's fall of the gap in r).
use crate::util::dpclaims_in;
use std::path::Path;

/// A tiny random-features claim: DP-GD at 4x the noise minus DP-GD at Prop. 2.2's noise
/// (`variant:` names the one main variant judged: `twice-the-noise` is judged by no
/// prediction). More noise raises the noise term at every replicate (the variants
/// share their seeds), so `louder > 0` holds; the control subtracts from a quieter run and
/// is refuted.
fn spec(extra_prediction: &str) -> String {
    format!(
        r#"id: tiny-contrast
title: "noise term: more noise, larger term (test only)"
source: {{paper: "test", section: "s", equation: "Eq. 20"}}
statement: "noise term grows with sigma"
system: rf_dpgd
model: random_features_tanh
adjacency: replace_one
data: {{input: gaussian, target: sign}}
params:
  d: "4"
  n: "16"
  p: "4 * n"
  n_test: "50"
  eta: "1/p"
  steps: "ceil(d * ln(n)^2 / (eta * p))"
  clip: "sqrt(p) * ln(n)^2"
  epsilon: "2"
  delta: "1.0e-5"
  kappa: "2"
  sigma_scale: "1"
sweeps:
  vs_n:
    quick: {{axes: {{n: [8, 16]}}, replicates: 20}}
    full: {{axes: {{n: [8, 16]}}, replicates: 20}}
variants:
  - name: prop22
  - name: four-times-noise
    params: {{sigma_scale: "4"}}
  - name: twice-the-noise
    params: {{sigma_scale: "2"}}
  - name: quarter-noise
    negative_control: true
    caught_by: [louder]
    params: {{sigma_scale: "0.25"}}
predictions:
  - kind: inequality
    evidence: consequence
    name: louder
    metric: noise_term
    sweep: vs_n
    op: ">"
    rhs: "0"
    over: means
    confidence: 0.95
    minus: prop22
    variant: four-times-noise
{extra_prediction}"#
    )
}

/// Runs `c.yaml` in `dir` outside any baseline (exit 0 expected): its `verdicts.json`.
fn run(dir: &Path) -> serde_json::Value {
    let o = dpclaims_in(
        dir,
        &[
            "run",
            "c.yaml",
            "--no-baseline",
            "--no-cache",
            "--out",
            "out",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/verdicts.json")).unwrap()).unwrap()
}

fn raw_values(csv: &Path, variant: &str, point: &str, metric: &str) -> Vec<f64> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2] == variant && f[3] == point && f[6] == metric).then(|| f[7].parse().unwrap())
        })
        .collect()
}

#[test]
fn a_contrast_judges_the_paired_difference_and_its_control_is_caught() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("c.yaml"), spec("")).unwrap();
    let v = run(d.path());
    let rows = v["claims"][0]["results"].as_array().unwrap();
    let row = |variant: &str| {
        rows.iter()
            .find(|r| r["variant"] == variant)
            .unwrap_or_else(|| panic!("no row for {variant}: {rows:?}"))
    };
    // The subtracted variant is not judged against itself, and `variant:` keeps the
    // other main variant out.
    assert!(
        rows.iter()
            .all(|r| r["variant"] != "prop22" && r["variant"] != "twice-the-noise"),
        "{rows:?}"
    );
    assert_eq!(row("four-times-noise")["verdict"], "holds");
    assert_eq!(row("four-times-noise")["replicates"], 20);
    assert_eq!(row("quarter-noise")["verdict"], "refuted");
    assert_eq!(row("quarter-noise")["control"], "caught");
    // The interval is of the paired differences the raw CSV holds: its estimate is the
    // margin rhs - mean (0 - the mean difference) at the point closest to failing.
    let csv = d.path().join("out/raw/tiny-contrast.csv");
    let est = row("four-times-noise")["estimate"].as_f64().unwrap();
    let diffs: Vec<Vec<f64>> = ["n=8", "n=16"]
        .iter()
        .map(|pt| {
            let a = raw_values(&csv, "four-times-noise", pt, "noise_term");
            let b = raw_values(&csv, "prop22", pt, "noise_term");
            assert_eq!((a.len(), b.len()), (20, 20), "{pt}");
            // The variants share their streams: 4x the noise is 16x the noise term,
            // replicate by replicate (so every pair's difference is positive).
            for (x, y) in a.iter().zip(&b) {
                assert!((x / y - 16.0).abs() < 1e-6, "{pt}: {x} / {y}");
            }
            a.iter().zip(&b).map(|(x, y)| x - y).collect()
        })
        .collect();
    let means: Vec<f64> = diffs
        .iter()
        .map(|d| d.iter().sum::<f64>() / d.len() as f64)
        .collect();
    assert!(
        means
            .iter()
            .any(|m| (m + est).abs() <= 1e-5 * m.abs().max(1e-12)),
        "estimate {est} is none of the mean paired differences {means:?}"
    );
    let page = std::fs::read_to_string(d.path().join("out/tiny-contrast.md")).unwrap();
    assert!(
        page.contains("mean paired difference noise_term(variant) - noise_term(`prop22`) > 0"),
        "{page}"
    );
}

#[test]
fn a_contrast_names_a_main_variant_and_is_judged_on_means() {
    let d = tempfile::tempdir().unwrap();
    for (what, text, says) in [
        (
            "unknown variant",
            spec("").replace("minus: prop22", "minus: prop23"),
            "minus: unknown variant `prop23`",
        ),
        (
            "a control",
            spec("").replace("minus: prop22", "minus: quarter-noise"),
            "is a negative control",
        ),
        (
            "the variant it subtracts",
            spec("").replace("variant: four-times-noise", "variant: prop22"),
            "a variant minus itself is 0",
        ),
        (
            "not over means",
            spec("").replace("    over: means\n    confidence: 0.95\n", ""),
            "set `over: means`",
        ),
    ] {
        std::fs::write(d.path().join("c.yaml"), &text).unwrap();
        let o = dpclaims_in(d.path(), &["check", "c.yaml"]);
        // `check` lists the problems on stdout.
        let err = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        assert!(!err.contains("internal error"), "{what}: {err}");
    }
}

/// A fitted contrast (`minus:` of an `exponent` or `rate_at_most`: "the gap shrinks as n
/// grows"). Four times the noise is exactly 16 times the noise term pair by pair, so the
/// paired difference is 15 times `prop22`'s term and its log-log slope is `prop22`'s own
/// slope: the two fits must agree. Subtracted the other way the difference is negative at
/// every point, where a log-log fit is undefined: that row is inconclusive and says why,
/// and the run does not fail.
#[test]
fn a_fitted_contrast_is_the_slope_of_the_paired_difference() {
    let d = tempfile::tempdir().unwrap();
    let extra = r#"  - kind: exponent
    evidence: consequence
    name: gap-slope
    metric: noise_term
    sweep: vs_n
    x: n
    predicted: 0
    tolerance: 10
    tolerance_reason: "test only"
    minus: prop22
    variant: four-times-noise
  - kind: exponent
    evidence: consequence
    name: own-slope
    metric: noise_term
    sweep: vs_n
    x: n
    predicted: 0
    tolerance: 10
    tolerance_reason: "test only"
    variant: prop22
  - kind: rate_at_most
    evidence: consequence
    name: reversed-gap
    metric: noise_term
    sweep: vs_n
    x: n
    predicted: 0
    tolerance: 0
    tolerance_reason: "test only"
    minus: four-times-noise
    variant: prop22
"#;
    // A fit needs three points.
    let text = spec(extra).replace("n: [8, 16]", "n: [8, 16, 32]");
    std::fs::write(d.path().join("c.yaml"), text).unwrap();
    let v = run(d.path());
    let rows = v["claims"][0]["results"].as_array().unwrap();
    let row = |prediction: &str, variant: &str| {
        rows.iter()
            .find(|r| r["prediction"] == prediction && r["variant"] == variant)
            .unwrap_or_else(|| panic!("no row {prediction}/{variant}: {rows:?}"))
    };
    let gap = row("gap-slope", "four-times-noise")["estimate"]
        .as_f64()
        .unwrap();
    let own = row("own-slope", "prop22")["estimate"].as_f64().unwrap();
    assert!(
        (gap - own).abs() < 1e-9 * own.abs().max(1.0),
        "slope of the gap {gap} vs prop22's own slope {own}"
    );
    let rev = row("reversed-gap", "prop22");
    assert_eq!(rev["verdict"], "inconclusive", "{rev}");
    assert!(rev["estimate"].is_null(), "{rev}");
    let page = std::fs::read_to_string(d.path().join("out/tiny-contrast.md")).unwrap();
    assert!(
        page.contains("Not fitted: the mean paired difference at n=8 is -"),
        "{page}"
    );
    assert!(
        page.contains("slope of the mean paired difference noise_term(variant) - noise_term(`prop22`) (same seeds, replicate by replicate) vs n"),
        "{page}"
    );
}
