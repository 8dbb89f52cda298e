//! Sequential verdicts (issue 34): a sweep with `replicates: {min, max}` draws replicates
//! look by look, and a row stops at the first look that decides it
//! (`dpclaims::judge::sequential`).
use dpclaims::judge::ClaimOutcome;
use dpclaims::pipeline;
use dpclaims::spec::{self, Claim, Profile, Replicates};
use dpclaims::train::Recipe;
use std::path::Path;

const DEMO: &str = include_str!("data/sequential-demo.yaml");

fn load(text: &str) -> Result<Claim, String> {
    spec::claim_from_bytes(Path::new("sequential-demo.yaml"), text.as_bytes())
        .map_err(|e| e.to_string())
}

fn row<'a>(
    o: &'a ClaimOutcome,
    prediction: &str,
    variant: &str,
) -> &'a dpclaims::judge::PredictionResult {
    o.results
        .iter()
        .find(|r| r.prediction_name == prediction && r.variant == variant)
        .unwrap_or_else(|| panic!("no row {prediction}/{variant}"))
}

/// Replicates drawn at the first point of a group.
fn drawn(o: &ClaimOutcome, variant: &str) -> usize {
    o.points
        .iter()
        .find(|p| p.variant == variant)
        .map(|p| p.metrics["empirical_sigma"].len())
        .unwrap()
}

#[test]
fn looks_double_from_min_and_end_at_max() {
    let r = |min, max| Replicates { min, max }.looks();
    assert_eq!(r(8, 8), vec![8]);
    assert_eq!(r(8, 96), vec![8, 16, 32, 64, 96]);
    assert_eq!(r(2, 64), vec![2, 4, 8, 16, 32, 64]);
    assert_eq!(r(5, 6), vec![5, 6]);
    assert_eq!(Replicates { min: 8, max: 96 }.next_look(16), Some(32));
    assert_eq!(Replicates { min: 8, max: 96 }.next_look(96), None);
}

#[test]
fn a_row_stops_at_the_first_look_that_decides_it_and_its_group_grows_only_for_the_undecided() {
    let claim = load(DEMO).unwrap();
    let o = pipeline::run_claim(&claim, Profile::Quick, 0, &Recipe::PAPER, &|| {}).unwrap();
    let loose = row(&o, "loose", "classic");
    let tight = row(&o, "tight", "classic");
    let control = row(&o, "loose", "flat-noise");
    // The wide tolerance decides at an early look (4 replicates: at 2 the 6-look level
    // leaves its interval too wide); the narrow one needs later looks, and the group
    // draws exactly as many as it does.
    assert_eq!(loose.verdict.as_str(), "holds");
    // Decided at the look of 4, and judged on every replicate its group drew (issue 56:
    // no replicates hidden), the deciding look named.
    assert!(
        loose.power.contains("first decided") && loose.power.contains("at 4 replicates a point"),
        "{}",
        loose.power
    );
    assert_eq!(loose.replicates, tight.replicates, "{}", loose.power);
    assert_eq!(tight.verdict.as_str(), "holds");
    assert!(
        tight.replicates > 4,
        "tight decided at {}",
        tight.replicates
    );
    assert_eq!(drawn(&o, "classic"), tight.replicates);
    // The control is caught at the first look: nothing more is drawn for it.
    assert_eq!(control.verdict.as_str(), "refuted");
    assert_eq!(control.replicates, 2);
    assert_eq!(drawn(&o, "flat-noise"), 2);
    // A row judged at k looks is judged at level 1 - (1 - c)/k: wider than one look.
    let n = loose.replicates.to_string();
    let fixed = load(&DEMO.replace("{min: 2, max: 64}", &n)).unwrap();
    let f = pipeline::run_claim(&fixed, Profile::Quick, 0, &Recipe::PAPER, &|| {}).unwrap();
    let (a, b) = (loose.ci.unwrap(), row(&f, "loose", "classic").ci.unwrap());
    assert_eq!(
        loose.estimate.unwrap().to_bits(),
        row(&f, "loose", "classic").estimate.unwrap().to_bits()
    );
    assert!(a.1 - a.0 > b.1 - b.0, "{a:?} not wider than {b:?}");
}

/// The futility rule on a real row, moved onto an edge: an estimate on the edge of
/// "-1 +- 0.04" with an interval wider than the last look could shrink it past the edge
/// stops at the first look; the same interval far from the edge draws on; a negative
/// control, a decided row or a row at its maximum never stops for futility. And the
/// run's summary names a row that stopped before `max` undecided.
#[test]
fn a_row_on_an_edge_stops_as_undecidable_and_the_summary_says_so() {
    use dpclaims::judge::sequential::futile;
    let claim = load(DEMO).unwrap();
    let o = pipeline::run_claim(&claim, Profile::Quick, 0, &Recipe::PAPER, &|| {}).unwrap();
    let mut r = row(&o, "tight", "classic").clone();
    let p = &claim.predictions[r.prediction];
    let looks = Replicates { min: 8, max: 64 }.looks();
    let edge = -1.0 + 0.04;
    let (se, h) = (0.02, 0.2);
    r.verdict = dpclaims::fit::Verdict::Inconclusive;
    r.detail.stderr = Some(se);
    r.estimate = Some(edge);
    r.ci = Some((edge - h, edge + h));
    assert!(futile(p, &r, 8, &looks), "on the edge");
    assert!(!futile(p, &r, 64, &looks), "at max");
    r.estimate = Some(edge + 0.9 * h);
    r.ci = Some((edge - 0.1 * h, edge + 1.9 * h));
    assert!(!futile(p, &r, 8, &looks), "far from the edge");
    r.estimate = Some(edge);
    r.ci = Some((edge - h, edge + h));
    r.verdict = dpclaims::fit::Verdict::Holds;
    assert!(!futile(p, &r, 8, &looks), "decided");
    r.verdict = dpclaims::fit::Verdict::Inconclusive;
    r.negative_control = true;
    assert!(!futile(p, &r, 8, &looks), "control");
    // The summary: a sequential row inconclusive before its maximum.
    let mut o = o.clone();
    let i = o
        .results
        .iter()
        .position(|x| x.prediction_name == "tight" && x.variant == "classic")
        .unwrap();
    o.results[i].verdict = dpclaims::fit::Verdict::Inconclusive;
    o.results[i].replicates = 8;
    let spent = o.spent();
    assert_eq!(spent.undecidable, vec!["tight / classic".to_string()]);
    assert!(spent
        .words()
        .contains("rows stopped as undecidable: tight / classic"));
}

/// A row that is not decided but that its last look could still decide runs to `max`
/// and stays inconclusive there (with its power).
#[test]
fn an_undecided_row_runs_to_max() {
    let text = DEMO
        .replace("tolerance: 0.04", "tolerance: 0.002")
        .replace("max: 64", "max: 16");
    let claim = load(&text).unwrap();
    let o = pipeline::run_claim(&claim, Profile::Quick, 0, &Recipe::PAPER, &|| {}).unwrap();
    let tight = row(&o, "tight", "classic");
    assert_eq!(tight.verdict.as_str(), "inconclusive");
    assert_eq!(tight.replicates, 16);
    assert_eq!(drawn(&o, "classic"), 16);
}

/// The looks read only unit values: judging the values of every unit up to `max` (a
/// sharded run's merge) gives the run's outcome bit for bit, and so does a run on one
/// thread.
#[test]
fn judging_all_units_up_to_max_equals_the_sequential_run() {
    let claim = load(DEMO).unwrap();
    let o = pipeline::run_claim(&claim, Profile::Quick, 0, &Recipe::PAPER, &|| {}).unwrap();
    let all =
        dpclaims::execute::run_units(&claim, Profile::Quick, 0, &Recipe::PAPER, &|| {}).unwrap();
    let j = pipeline::judge(&claim, Profile::Quick, 0, &all).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| {
            pipeline::run_claim(&claim, Profile::Quick, 0, &Recipe::PAPER, &|| {}).unwrap()
        });
    let key = |o: &ClaimOutcome| {
        o.results
            .iter()
            .map(|r| {
                (
                    r.prediction_name.clone(),
                    r.variant.clone(),
                    r.verdict,
                    r.replicates,
                    r.estimate.map(f64::to_bits),
                    r.ci.map(|(a, b)| (a.to_bits(), b.to_bits())),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&o), key(&j));
    assert_eq!(key(&o), key(&one));
    assert_eq!(o.points.len(), j.points.len());
    for (a, b) in o.points.iter().zip(&j.points) {
        assert_eq!(a.metrics, b.metrics);
    }
}

#[test]
fn a_schedule_is_checked_at_load() {
    let e = load(&DEMO.replacen("{min: 2, max: 64}", "{min: 8, max: 4}", 1)).unwrap_err();
    assert!(
        e.contains("replicates.max") && e.contains("below min 8"),
        "{e}"
    );
    let e = load(&DEMO.replacen("{min: 2, max: 64}", "{min: 0, max: 4}", 1)).unwrap_err();
    assert!(e.contains("at least 1"), "{e}");
    // The full profile never has fewer replicates than the quick one.
    let e = load(&DEMO.replacen("{min: 2, max: 64}", "{min: 2, max: 128}", 1)).unwrap_err();
    assert!(e.contains("fewer than the quick profile's 128"), "{e}");
    let e = load(&DEMO.replacen("{min: 2, max: 64}", "{min: 2, most: 64}", 1)).unwrap_err();
    assert!(e.contains("unknown field `most`"), "{e}");
    let e = load(&DEMO.replacen("{min: 2, max: 64}", "many", 1)).unwrap_err();
    assert!(
        e.contains("a count of replicates (`24`) or a sequential range"),
        "{e}"
    );
}

/// The conditional power is the chance that the last look's interval clears the edge:
/// at the last look itself (`n = n_max`, nothing left to draw) it is 1 when the estimate,
/// moved one standard error away from the edge, lies beyond `b + h_max` or below
/// `b - h_max`, and 0 between; and just before the last look of a long schedule it is
/// already that 0 or 1, to within the one replicate left to draw. An exact margin (`se = 0`)
/// is decided by the same rule at every look.
#[test]
fn at_the_last_look_the_conditional_power_is_whether_the_estimate_clears_the_edge() {
    use dpclaims::judge::sequential::conditional_power;
    let (b, se, h_max) = (0.0, 0.5, 1.0);
    for (m, clears) in [
        (2.0, true),
        (0.6, true),
        (0.4, false),
        (0.0, false),
        (-0.4, false),
        (-0.6, true),
        (-2.0, true),
    ] {
        let want = if clears { 1.0 } else { 0.0 };
        assert_eq!(
            conditional_power(m, b, se, h_max, 64, 64),
            want,
            "m {m} at the last look"
        );
        let n_max = 1_000_000;
        let near = conditional_power(m, b, se, h_max, n_max - 1, n_max);
        assert!(
            (near - want).abs() < 1e-3,
            "m {m} one replicate before the last look: {near}"
        );
        // An exact margin: no spread, so the estimate itself decides (m clear of h_max).
        let exact = conditional_power(m, b, 0.0, h_max, 8, 64);
        let want_exact = if m.abs() > h_max { 1.0 } else { 0.0 };
        assert_eq!(exact, want_exact, "m {m} with se 0");
    }
}
