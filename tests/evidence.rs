//! The evidence model (issue 31; claims/README.md, "Evidence"): what the loader refuses
//! (a prediction without its evidence kind, a statement without the paper's words, a
//! registry hypothesis restated inline or omitted by a check of its result, the removed
//! local-slope prediction, a full profile weaker than the quick one) and what the judge
//! claims (measured hypotheses, errata confirmed at run time, bounds never refuted on a
//! main variant, holds that could not have failed, failed self-checks, findings that
//! contradict their run). Judged on hand-made point records: no simulation.
use dpclaims::fit::Verdict;
use dpclaims::judge::{judge, PointRecord, Tally};
use dpclaims::spec::{self, Claim, Profile};
use std::collections::BTreeMap;
use std::path::Path;

const REGISTRY: &str = r#"
paper: "A test paper"
hypotheses:
  - name: n-large
    quote: {text: "n = ω(1)", where: "Eq. 1"}
    require: "n >= 10"
  - name: no-clip
    quote: {text: "no gradient is clipped", where: "Eq. 2"}
    require: "clip_fraction <= 0"
results:
  - result: "Theorem 1"
    title: "the noise term decays"
    quote: {text: "the noise term is O(1/n^2)", where: "Theorem 1"}
    hypotheses: [n-large]
    could_fail: data
    checked_by:
      - {claim: ev, prediction: vs-n, variant: main}
"#;

/// A claim about `paper-x` over the rf_dpgd metrics; `preds` are its predictions,
/// `extra` lines appended to the main variant.
fn claim_text(preds: &str, main_extra: &str) -> String {
    format!(
        r#"id: ev
paper: paper-x
title: "t"
source: {{paper: "p", section: "s", equation: "e"}}
statement: "s"
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
  steps: "3"
  clip: "1"
  epsilon: "2"
  delta: "1.0e-5"
  kappa: "2"
  sigma_scale: "1"
sweeps:
  vs_n:
    quick: {{axes: {{n: [8, 12, 16, 24]}}, replicates: 3}}
    full: {{axes: {{n: [8, 12, 16, 24]}}, replicates: 3}}
variants:
  - name: main
{main_extra}
  - name: control
    negative_control: true
    caught_by: [vs-n]
    params: {{sigma_scale: "n^4"}}
predictions:
{preds}"#
    )
}

const VS_N: &str = r#"  - kind: exponent
    name: vs-n
    evidence: statement
    quote: {text: "the noise term is O(1/n^2)", where: "Theorem 1"}
    under: [n-large]
    metric: noise_term
    sweep: vs_n
    x: n
    predicted: -2.0
    tolerance: 0.5
    tolerance_reason: "test"
"#;

fn dir_with(claim: &str, card: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("claims")).unwrap();
    std::fs::create_dir_all(d.path().join("scorecards")).unwrap();
    std::fs::write(d.path().join("claims/ev.yaml"), claim).unwrap();
    std::fs::write(d.path().join("scorecards/paper-x.yaml"), card).unwrap();
    d
}

fn load(claim: &str) -> Result<Claim, String> {
    let d = dir_with(claim, REGISTRY);
    spec::load_claim(&d.path().join("claims/ev.yaml")).map_err(|e| e.to_string())
}

fn load_err(claim: &str) -> String {
    load(claim).expect_err("the loader must refuse it")
}

#[test]
fn a_prediction_without_its_evidence_kind_is_refused() {
    let e = load_err(&claim_text(
        &VS_N.replace("    evidence: statement\n", ""),
        "",
    ));
    assert!(
        e.contains("predictions[0].evidence") && e.contains("missing"),
        "{e}"
    );
}

#[test]
fn a_statement_without_the_papers_words_is_refused() {
    let text = VS_N.replace(
        "    quote: {text: \"the noise term is O(1/n^2)\", where: \"Theorem 1\"}\n",
        "",
    );
    let e = load_err(&claim_text(&text, ""));
    assert!(e.contains("predictions[0].quote"), "{e}");
}

#[test]
fn a_registry_hypothesis_restated_inline_is_refused() {
    let text = VS_N.replace("    under: [n-large]\n", "    assumptions: [\"n >= 10\"]\n");
    let e = load_err(&claim_text(&text, ""));
    assert!(e.contains("`n-large`") && e.contains("under"), "{e}");
    // An unknown name is refused too, listing the registry.
    let e = load_err(&claim_text(&VS_N.replace("[n-large]", "[n-larg]"), ""));
    assert!(
        e.contains("unknown hypothesis `n-larg`") && e.contains("n-large, no-clip"),
        "{e}"
    );
}

#[test]
fn the_local_slope_of_a_bound_is_no_longer_a_prediction() {
    let text = VS_N.replace(
        "    predicted: -2.0\n",
        "    predicted_rate_of: \"1/n^2\"\n",
    );
    let e = load_err(&claim_text(&text, ""));
    assert!(
        e.contains("predicted_rate_of") && e.contains("kind: bound"),
        "{e}"
    );
}

#[test]
fn a_full_profile_weaker_than_the_quick_one_is_refused() {
    let text = claim_text(VS_N, "").replace(
        "full: {axes: {n: [8, 12, 16, 24]}, replicates: 3}",
        "full: {axes: {n: [8, 12, 16, 24]}, replicates: 2}",
    );
    let e = load_err(&text);
    assert!(e.contains("full.replicates"), "{e}");
}

#[test]
fn a_check_that_omits_a_hypothesis_of_its_result_is_refused_by_the_scorecard() {
    let text = claim_text(&VS_N.replace("    under: [n-large]\n", ""), "");
    let d = dir_with(&text, REGISTRY);
    let out = dpclaims_util_run(d.path());
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("omits the result's hypothesis `n-large`"),
        "{err}"
    );
    // A self-check cannot be evidence for a result either.
    let text = claim_text(
        &VS_N.replace("evidence: statement", "evidence: self_check"),
        "",
    );
    let d = dir_with(&text, REGISTRY);
    let err = String::from_utf8_lossy(&dpclaims_util_run(d.path()).stderr).into_owned();
    assert!(err.contains("self-check of the tool"), "{err}");
    // Nor an ablation.
    let abl = "    deviations:\n      - {change: \"another init\", sentence: {text: \"a0 = 1\", where: \"Alg. 1\"}}\n";
    let d = dir_with(&claim_text(VS_N, abl), REGISTRY);
    let err = String::from_utf8_lossy(&dpclaims_util_run(d.path()).stderr).into_owned();
    assert!(err.contains("ablation"), "{err}");
}

/// `dpclaims run` in `dir`: the scorecards are validated before anything runs.
fn dpclaims_util_run(dir: &Path) -> std::process::Output {
    crate::util::dpclaims_in(
        dir,
        &[
            "run",
            "claims",
            "--no-baseline",
            "--no-cache",
            "--out",
            "out",
        ],
    )
}

/// Point records of `variant` along n: `metric` = f(n) for every replicate (three
/// replicates with a small spread), and `clip_fraction` = `clip(n)`.
fn records(
    variant: &str,
    metric: &str,
    f: impl Fn(f64) -> f64,
    clip: impl Fn(f64) -> f64,
) -> Vec<PointRecord> {
    [8.0, 12.0, 16.0, 24.0]
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let mut vars = BTreeMap::new();
            vars.insert("n".to_string(), n);
            for (k, v) in [
                ("d", 4.0),
                ("p", 4.0 * n),
                ("epsilon", 2.0),
                ("delta", 1e-5),
                ("eta", 0.25 / n),
                ("steps", 3.0),
                ("clip", 1.0),
                ("kappa", 2.0),
                ("sigma_scale", 1.0),
                ("n_test", 50.0),
            ] {
                vars.insert(k.to_string(), v);
            }
            let y = f(n);
            let mut metrics = BTreeMap::new();
            metrics.insert(metric.to_string(), vec![y * 0.999, y, y * 1.001]);
            metrics.insert("clip_fraction".to_string(), vec![clip(n); 3]);
            PointRecord {
                sweep: "vs_n".into(),
                variant: variant.into(),
                index: i,
                label: format!("n={n}"),
                vars,
                metrics,
            }
        })
        .collect()
}

fn judged(
    claim: &Claim,
    main: Vec<PointRecord>,
    control: Vec<PointRecord>,
) -> dpclaims::judge::ClaimOutcome {
    let mut pts = main;
    pts.extend(control);
    judge(claim, Profile::Quick, 0, pts).unwrap()
}

fn row<'a>(
    o: &'a dpclaims::judge::ClaimOutcome,
    variant: &str,
) -> &'a dpclaims::judge::PredictionResult {
    o.results.iter().find(|r| r.variant == variant).unwrap()
}

#[test]
fn a_measured_hypothesis_puts_the_points_where_it_fails_out_of_regime() {
    let c = load(&claim_text(
        &VS_N.replace("[n-large]", "[n-large, no-clip]"),
        "",
    ))
    .unwrap();
    // Clipping at every point: out of regime, naming the hypothesis and its source.
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-2), |_| 0.3),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.verdict, Verdict::OutOfRegime);
    assert_eq!(r.word, "out of regime");
    let v = &r.regime.violated;
    assert!(
        v.iter()
            .any(|v| v.assumption == "clip_fraction <= 0" && v.source.starts_with("no-clip")),
        "{v:?}"
    );
    // No clipping: judged, and it holds (the control is caught, so it counts).
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-2), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    assert_eq!(row(&o, "main").word, "holds");
    assert_eq!(row(&o, "main").discriminating, Some(true));
    assert_eq!(Tally::of(&[o]).statements.positive, 1);
}

#[test]
fn a_refuted_statement_needs_a_confirmed_erratum() {
    let c = load(&claim_text(VS_N, "")).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-1), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.verdict, Verdict::Refuted);
    assert_eq!(r.word, "refuted, unconfirmed");
    let problem = r.problem.as_deref().unwrap();
    assert!(problem.contains("refuted, unconfirmed"), "{problem}");
    // Issue 33 item 6: named first as a regression of the core, with its numbers.
    assert!(
        problem.starts_with("regression of the core: refuted on a main variant (measured "),
        "{problem}"
    );
    assert!(problem.contains("interval ["), "{problem}");
    // With an erratum whose independent check holds at a judged point: confirmed.
    let erratum = |check: &str| {
        format!(
            "    errata:\n      vs-n:\n        sentence: {{text: \"O(1/n^2)\", where: \"Theorem 1\"}}\n        counterexample: \"n = 24: 1/24\"\n        confirmation: {{method: \"closed form\", check: \"{check}\"}}\n"
        )
    };
    let c = load(&claim_text(VS_N, &erratum("noise_term * n^2 > 20"))).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-1), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.word, "refuted (erratum, confirmed)");
    assert!(r.problem.is_none(), "{:?}", r.problem);
    assert!(r.erratum.as_ref().unwrap().how.contains("n=24"));
    assert_eq!(Tally::of(&[o]).errata_confirmed, 1);
    // A check that holds nowhere leaves it unconfirmed, and the run fails.
    let c = load(&claim_text(VS_N, &erratum("noise_term * n^2 > 1000"))).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-1), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    assert_eq!(row(&o, "main").word, "refuted, unconfirmed");
    assert!(!o.problems().is_empty());
    // An erratum the run does not refute contradicts its run.
    let c = load(&claim_text(VS_N, &erratum("noise_term > 0"))).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-2), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    assert!(row(&o, "main")
        .problem
        .as_deref()
        .unwrap()
        .contains("claims an erratum"));
}

const BOUND: &str = r#"  - kind: bound
    name: vs-n
    evidence: statement
    quote: {text: "the noise term is O(1/n^2)", where: "Theorem 1"}
    under: [n-large]
    metric: noise_term
    sweep: vs_n
    x: n
    bound: "1/n^2"
    direction: upper
    tolerance: 0.0
    tolerance_reason: "test"
"#;

#[test]
fn a_bound_is_judged_by_its_implied_constant_and_never_refuted_on_a_main_variant() {
    let c = load(&claim_text(BOUND, "")).unwrap();
    // measured = 7 n^-2.5: the ratio 7 n^-0.5 falls; it holds, with the implied constant
    // its largest value over the judged points n = 12..24 (n = 8 fails n >= 10).
    let o = judged(
        &c,
        records("main", "noise_term", |n| 7.0 * n.powf(-2.5), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.word, "holds", "{r:?}");
    let (k, _) = r.detail.implied_constant.unwrap();
    assert!((k - 7.0 / 12f64.sqrt()).abs() < 1e-2, "{k}");
    // measured = n^-1: the ratio grows. Inconclusive with the trend stated, not refuted.
    let o = judged(
        &c,
        records("main", "noise_term", |n| 1.0 / n, |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert!(r
        .trend
        .as_deref()
        .unwrap()
        .contains("not refuted by finite data"));
    assert!(r.problem.is_none());
    // The control's growing ratio is what catching it means.
    assert_eq!(row(&o, "control").verdict, Verdict::Refuted);
}

/// A holds must tell the bound from a constant metric: its interval of the ratio's slope
/// must exclude the slope a constant metric would give (minus the bound's own slope).
#[test]
fn a_holds_whose_interval_contains_a_constant_metric_is_not_judged() {
    // O(sqrt(n)) and a constant metric (replicates spread by +-1 %): the ratio falls like
    // n^-0.5, a holds by the slope alone, but exactly what a constant metric gives.
    let c = load(&claim_text(&BOUND.replace("\"1/n^2\"", "\"n^0.5\""), "")).unwrap();
    let mut main = records("main", "noise_term", |_| 1.0, |_| 0.0);
    for r in &mut main {
        r.metrics.insert("noise_term".into(), vec![0.99, 1.0, 1.01]);
    }
    let o = judged(
        &c,
        main,
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
    let (lo, hi) = r.ci.unwrap();
    assert!(hi <= 0.0 && lo <= -0.5 && -0.5 <= hi, "{lo} {hi}");
    assert!(
        r.power.contains("cannot tell the bound from a constant"),
        "{}",
        r.power
    );
    // A bound that hardly changes (n^-0.1: 1.07x over n = 12..24) with a metric that
    // falls like n^-2: the interval lies far from a constant metric's +0.1, so the row
    // is judged (holds), however little the bound itself changes (Eq. 21's case).
    let c = load(&claim_text(&BOUND.replace("\"1/n^2\"", "\"n^-0.1\""), "")).unwrap();
    let mut main = records("main", "noise_term", |n| n.powi(-2), |_| 0.0);
    for r in &mut main {
        let m = r.metrics["noise_term"][0];
        r.metrics
            .insert("noise_term".into(), vec![0.99 * m, m, 1.01 * m]);
    }
    let o = judged(
        &c,
        main,
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.word, "holds", "{r:?}");
    assert!(r.power.contains("outside the interval"), "{}", r.power);
}

#[test]
fn a_holds_that_no_control_can_move_is_not_discriminating() {
    // The control is caught by the other prediction only.
    let preds = format!(
        "{VS_N}  - kind: inequality\n    name: finite\n    evidence: statement\n    quote: {{text: \"finite\", where: \"Eq. 3\"}}\n    under: [n-large]\n    metric: noise_term\n    sweep: vs_n\n    op: \"<=\"\n    rhs: \"1.0e12\"\n"
    );
    let c = load(&claim_text(&preds, "")).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-2), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let fin = o
        .results
        .iter()
        .find(|r| r.prediction_name == "finite")
        .unwrap();
    assert_eq!(fin.word, "holds (not discriminating)");
    let t = Tally::of(&[o]);
    assert_eq!(
        (t.statements.positive, t.statements.not_discriminating),
        (1, 1)
    );
    assert!(
        t.line().contains("1 hold (+1 not discriminating)"),
        "{}",
        t.line()
    );
}

#[test]
fn a_failed_self_check_is_a_failure_of_the_run_not_a_finding() {
    let text = VS_N.replace("evidence: statement", "evidence: self_check");
    let c = load(&claim_text(
        &text,
        "    findings: {vs-n: \"an explanation\"}\n",
    ))
    .unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-1), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    let r = row(&o, "main");
    assert_eq!(r.word, "failed");
    assert!(r
        .problem
        .as_deref()
        .unwrap()
        .contains("a failure of the tool"));
    assert!(Tally::of(&[o])
        .line()
        .contains("self-checks: 0 passed, 1 FAILED"));
}

/// A sentence read on the paper's own printed numbers (`evidence: printed`): it needs the
/// paper's words, its verdict words are "consistent / inconsistent with its printed
/// numbers" (never "holds"), it is counted apart from the paper's holds, and a scorecard
/// result must declare the matching `could_fail` (and the reverse): no page says "holds"
/// where the scorecard counts otherwise.
#[test]
fn a_check_on_printed_numbers_is_worded_and_counted_apart_from_the_holds() {
    let printed = VS_N.replace("evidence: statement", "evidence: printed");
    let no_quote = printed.replace(
        "    quote: {text: \"the noise term is O(1/n^2)\", where: \"Theorem 1\"}\n",
        "",
    );
    let e = load_err(&claim_text(&no_quote, ""));
    assert!(
        e.contains("predictions[0].quote") && e.contains("printed"),
        "{e}"
    );
    let c = load(&claim_text(&printed, "")).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| n.powi(-2), |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    assert_eq!(row(&o, "main").word, "consistent with its printed numbers");
    assert_eq!(
        row(&o, "control").word,
        "inconsistent with its printed numbers"
    );
    let line = Tally::of(&[o]).line();
    assert!(line.starts_with("paper: 0 hold"), "{line}");
    assert!(
        line.contains("on the paper's printed numbers: 1 consistent, 0 inconsistent"),
        "{line}"
    );
    // The scorecard's result says `could_fail: data`: a printed check is refused there ...
    let d = dir_with(&claim_text(&printed, ""), REGISTRY);
    let err = String::from_utf8_lossy(&dpclaims_util_run(d.path()).stderr).into_owned();
    assert!(err.contains("declares `could_fail: printed`"), "{err}");
    // ... and a result on printed numbers checked by a statement is refused too.
    let card = REGISTRY.replace("could_fail: data", "could_fail: printed");
    let d = dir_with(&claim_text(VS_N, ""), &card);
    let err = String::from_utf8_lossy(&dpclaims_util_run(d.path()).stderr).into_owned();
    assert!(err.contains("its evidence must be `printed`"), "{err}");
}

#[test]
fn a_finding_that_contradicts_its_run_fails_the_run() {
    let text = VS_N.replace("evidence: statement", "evidence: consequence");
    let finding = |v: f64| {
        format!(
            "    findings:\n      vs-n:\n        text: \"the noise term is 1/24 at n = 24\"\n        quotes: [{{metric: noise_term, at: {{n: 24}}, value: {v}, rel_tol: 0.01}}]\n"
        )
    };
    let c = load(&claim_text(&text, &finding(1.0 / 24.0))).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| 1.0 / n, |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    assert_eq!(row(&o, "main").word, "inconsistent");
    assert!(
        row(&o, "main").problem.is_none(),
        "{:?}",
        row(&o, "main").problem
    );
    let c = load(&claim_text(&text, &finding(0.5))).unwrap();
    let o = judged(
        &c,
        records("main", "noise_term", |n| 1.0 / n, |_| 0.0),
        records("control", "noise_term", |n| n.powi(6), |_| 0.0),
    );
    assert!(row(&o, "main")
        .problem
        .as_deref()
        .unwrap()
        .contains("contradicts its run"));
}

/// Every shipped prediction says what it is evidence of (the loader requires it), every
/// statement quotes the paper, and no scorecard counts a self-check or an ablation (the
/// scorecard loader refuses it; `dpclaims run` validates every scorecard).
#[test]
fn every_shipped_statement_quotes_its_paper_and_names_its_registry() {
    let claims = spec::load_claims(&["claims".into()]).unwrap();
    for c in &claims {
        for p in &c.predictions {
            if p.evidence == spec::Evidence::Statement {
                assert!(p.quote.is_some(), "{}: {}", c.id, p.name);
                assert!(!c.paper.is_empty(), "{}: a statement of which paper?", c.id);
            }
        }
    }
}

/// A quoted number the run cannot match fails the run, and the message says which
/// quote and which point: a point no record is at (named by its variables), a metric the
/// run did not compute, a value off its tolerance (the user reads it to fix the spec).
#[test]
fn a_quote_the_run_cannot_match_fails_the_run_and_names_the_quote_and_its_point() {
    let text = VS_N.replace("evidence: statement", "evidence: consequence");
    let with_quote = |quote: &str| {
        format!(
            "    findings:\n      vs-n:\n        text: \"the noise term is 1/24 at n = 24\"\n        quotes: [{quote}]\n"
        )
    };
    let problem = |quote: &str| {
        let c = load(&claim_text(&text, &with_quote(quote))).unwrap();
        let o = judged(
            &c,
            records("main", "noise_term", |n| 1.0 / n, |_| 0.0),
            records("control", "noise_term", |n| n.powi(6), |_| 0.0),
        );
        row(&o, "main").problem.clone().unwrap_or_default()
    };
    let cases = [
        (
            "{metric: noise_term, at: {n: 30, d: 4}, value: 0.03, rel_tol: 0.01}",
            "the finding contradicts its run: quotes `noise_term` = 0.03 at d=4 n=30: 0 points of the run match (need exactly 1)",
        ),
        (
            "{metric: noise_term, value: 0.03, rel_tol: 0.01}",
            "the finding contradicts its run: quotes `noise_term` = 0.03 at (any point): 4 points of the run match (need exactly 1)",
        ),
        (
            "{metric: test_loss, at: {n: 24}, value: 0.03, rel_tol: 0.01}",
            "the finding contradicts its run: quotes `test_loss`, which the run did not compute",
        ),
        (
            "{metric: noise_term, at: {n: 24}, value: 0.5, rel_tol: 0.01}",
            "the finding contradicts its run: quotes `noise_term` = 0.5 at n=24 but the run measured",
        ),
    ];
    for (quote, expected) in cases {
        let got = problem(quote);
        assert!(got.contains(expected), "{quote}:\n{got}");
    }
}
