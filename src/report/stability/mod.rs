//! Error rates of verdicts: the suite at K master seeds, and how often each verdict
//! came out each way (`dpclaims stability`, `reports/STABILITY.md`).
//!
//! A verdict that flips with the seed is not a verdict. The page states, for every
//! (claim, prediction, variant), how often each outcome occurred; for negative controls
//! how often they were caught; the flips between `holds` and `refuted`; and at how many
//! seeds the whole suite gave exactly the reference seed's verdicts.
//!
//! Counts alone hide a verdict that did not flip in K seeds but sits near an edge, so
//! the page also gives each row's *flip margin*: at every seed, how far the row's
//! interval (or, for an event, its frequency) is from the line where the verdict would
//! change, in the estimate's own units ([`flip_margin`]); over the seeds, its mean over
//! its standard deviation is the row's distance from a flip in seed-to-seed standard
//! deviations, and a normal approximation turns that into a flip chance per seed.
use crate::fit::Verdict;
use crate::judge::ClaimOutcome;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub mod record;
pub use record::Row;

/// One verdict row's identity: (claim, prediction, variant).
pub type RowKey = (String, String, String);

/// One verdict row at one seed.
#[derive(Clone, Debug)]
pub struct SeedRow {
    pub verdict: Verdict,
    /// Negative controls only: caught at this seed?
    pub caught: Option<bool>,
    pub negative_control: bool,
    /// The distances the interval is from the `holds` and `refuted` lines
    /// ([`Edges::of`]); `None` for rows without an interval (out of regime, a
    /// deterministic inequality over runs).
    pub edges: Option<Edges>,
}

/// How far a result is from each verdict, in the estimate's units: `to_holds <= 0`
/// exactly when the interval meets the `holds` condition, `to_refuted <= 0` exactly when
/// it meets the `refuted` one (up to the strictness of the comparisons). For an
/// exponent with band `[a, b]` and interval `[lo, hi]`: `to_holds = max(a - lo, hi - b)`,
/// `to_refuted = min(hi - a, b - lo)`; a `rate_at_most` with bound `b`: `hi - b` and
/// `b - lo`; an inequality over means (interval of the violation margin, > 0 violates):
/// `hi` and `-lo`; an event with target `1 - alpha`, frequency `f` and Clopper-Pearson
/// upper end `hi`: `target - f` and `hi - target`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edges {
    pub to_holds: f64,
    pub to_refuted: f64,
}

impl Edges {
    pub fn of(r: &Row) -> Option<Edges> {
        if r.verdict == Verdict::OutOfRegime {
            return None;
        }
        let (lo, hi) = r.ci()?;
        let p = r.predicted?;
        let t = r.tolerance.unwrap_or(0.0);
        let (to_holds, to_refuted) = match r.kind.as_str() {
            "exponent" => ((p - t - lo).max(hi - p - t), (hi - p + t).min(p + t - lo)),
            "rate_at_most" => (hi - p - t, p + t - lo),
            "inequality" => (hi, -lo),
            "event" => (p - r.estimate?, hi - p),
            _ => return None,
        };
        (to_holds.is_finite() && to_refuted.is_finite()).then_some(Edges {
            to_holds,
            to_refuted,
        })
    }
}

/// The flip margin of a result against `verdict` (a row's most frequent verdict): how
/// far it is inside that verdict's region, negative when it is outside. For `holds`
/// `-to_holds`, for `refuted` `-to_refuted`, for `inconclusive` the nearer of the two
/// (`min(to_holds, to_refuted)`): an inconclusive row flips when either edge is crossed.
pub fn flip_margin(e: Edges, verdict: Verdict) -> Option<f64> {
    match verdict {
        Verdict::Holds => Some(-e.to_holds),
        Verdict::Refuted => Some(-e.to_refuted),
        Verdict::Inconclusive => Some(e.to_holds.min(e.to_refuted)),
        Verdict::OutOfRegime => None,
    }
}

/// The verdicts of one seed's run.
#[derive(Clone, Debug)]
pub struct SeedVerdicts {
    pub seed: u64,
    pub rows: BTreeMap<RowKey, SeedRow>,
    /// Problems of this run (uncaught controls, refutations without finding, ...).
    pub problems: Vec<String>,
}

impl SeedVerdicts {
    pub fn of(seed: u64, outcomes: &[ClaimOutcome]) -> SeedVerdicts {
        Self::from_rows(seed, &Row::of(seed, outcomes))
    }

    /// A seed's verdicts from its rows, run afresh ([`Row::of`]) or read from its record
    /// ([`record::read`]): the same rows give the same verdicts, margins and problems.
    pub fn from_rows(seed: u64, rows: &[Row]) -> SeedVerdicts {
        SeedVerdicts {
            seed,
            rows: rows
                .iter()
                .map(|r| {
                    (
                        (r.claim.clone(), r.prediction.clone(), r.variant.clone()),
                        SeedRow {
                            verdict: r.verdict,
                            caught: r.caught,
                            negative_control: r.negative_control,
                            edges: Edges::of(r),
                        },
                    )
                })
                .collect(),
            problems: rows
                .iter()
                .filter_map(|r| {
                    let p = r.problem.as_ref()?;
                    Some(crate::judge::problem_line(
                        &r.claim,
                        &r.prediction,
                        &r.variant,
                        p,
                    ))
                })
                .collect(),
        }
    }
}

/// A row's flip margin over the seeds ([`flip_margin`] against its modal verdict).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Margin {
    pub mean: f64,
    pub sd: f64,
}

impl Margin {
    /// Seed-to-seed standard deviations between the mean margin and a flip; infinite
    /// when the margin does not vary (a deterministic row).
    pub fn z(&self) -> f64 {
        if self.sd > 0.0 {
            self.mean / self.sd
        } else if self.mean > 0.0 {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        }
    }

    /// The chance that a fresh seed's margin is below 0, were it normal.
    pub fn flip_chance(&self) -> f64 {
        let z = self.z();
        if z.is_infinite() {
            return if z > 0.0 { 0.0 } else { 1.0 };
        }
        0.5 * statrs::function::erf::erfc(z / std::f64::consts::SQRT_2)
    }
}

/// Aggregates over seeds (the first is the reference).
#[derive(Clone, Debug)]
pub struct Stability {
    pub profile: String,
    pub seeds: Vec<SeedVerdicts>,
}

const ORDER: [Verdict; 4] = [
    Verdict::Holds,
    Verdict::Refuted,
    Verdict::Inconclusive,
    Verdict::OutOfRegime,
];

impl Stability {
    fn counts(&self, key: &RowKey) -> [usize; 4] {
        let mut c = [0; 4];
        for s in &self.seeds {
            if let Some(SeedRow { verdict: v, .. }) = s.rows.get(key) {
                c[ORDER.iter().position(|o| o == v).expect("listed")] += 1;
            }
        }
        c
    }

    fn keys(&self) -> Vec<RowKey> {
        let mut k: Vec<RowKey> = self
            .seeds
            .iter()
            .flat_map(|s| s.rows.keys().cloned())
            .collect();
        k.sort();
        k.dedup();
        k
    }

    fn is_control(&self, key: &RowKey) -> bool {
        self.seeds
            .iter()
            .any(|s| s.rows.get(key).is_some_and(|r| r.negative_control))
    }

    /// " (control)" after a negative control's variant name, "" otherwise.
    fn control_mark(&self, key: &RowKey) -> &'static str {
        if self.is_control(key) {
            " (control)"
        } else {
            ""
        }
    }

    fn caught(&self, key: &RowKey) -> usize {
        self.seeds
            .iter()
            .filter(|s| s.rows.get(key).is_some_and(|r| r.caught == Some(true)))
            .count()
    }

    /// Main-variant rows that were `holds` at some seed and `refuted` at another.
    pub fn holds_refuted_flips(&self) -> Vec<RowKey> {
        self.keys()
            .into_iter()
            .filter(|k| !self.is_control(k))
            .filter(|k| {
                let c = self.counts(k);
                c[0] > 0 && c[1] > 0
            })
            .collect()
    }

    /// (control row, seeds caught) for every negative control row.
    pub fn controls(&self) -> Vec<(RowKey, usize)> {
        self.keys()
            .into_iter()
            .filter(|k| self.is_control(k))
            .map(|k| {
                let c = self.caught(&k);
                (k, c)
            })
            .collect()
    }

    /// Seeds whose every verdict equals the reference (first) seed's.
    pub fn identical_to_reference(&self) -> usize {
        let Some(first) = self.seeds.first() else {
            return 0;
        };
        self.seeds_equal_to(
            &first
                .rows
                .iter()
                .map(|(k, v)| (k.clone(), v.verdict))
                .collect(),
        )
    }

    /// Seeds with exactly the rows of `reference`, each with its verdict.
    fn seeds_equal_to(&self, reference: &BTreeMap<RowKey, Verdict>) -> usize {
        self.seeds
            .iter()
            .filter(|s| {
                s.rows.len() == reference.len()
                    && reference
                        .iter()
                        .all(|(k, v)| s.rows.get(k).map(|r| r.verdict) == Some(*v))
            })
            .count()
    }

    /// Seeds whose every row has that row's most frequent verdict over the seeds (ties
    /// go to the first in holds, refuted, inconclusive, out of regime order).
    pub fn identical_to_modal(&self) -> usize {
        let modal: BTreeMap<RowKey, Verdict> = self
            .keys()
            .into_iter()
            .map(|key| {
                let v = self.modal(&key);
                (key, v)
            })
            .collect();
        self.seeds_equal_to(&modal)
    }

    /// A row's most frequent verdict (ties: holds, refuted, inconclusive, out of regime).
    fn modal(&self, key: &RowKey) -> Verdict {
        let counts = self.counts(key);
        let best = (0..ORDER.len())
            .max_by_key(|&i| (counts[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        ORDER[best]
    }

    /// A row's flip margin over the seeds, against its modal verdict: `None` when some
    /// seed has no interval for it, or fewer than 2 seeds ran.
    pub fn margin(&self, key: &RowKey) -> Option<Margin> {
        let modal = self.modal(key);
        let m: Vec<f64> = self
            .seeds
            .iter()
            .map(|s| s.rows.get(key)?.edges.and_then(|e| flip_margin(e, modal)))
            .collect::<Option<_>>()?;
        if m.len() < 2 {
            return None;
        }
        let n = m.len() as f64;
        let mean = m.iter().sum::<f64>() / n;
        let var = m.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
        Some(Margin {
            mean,
            sd: var.sqrt(),
        })
    }

    /// `reports/STABILITY.md`.
    pub fn markdown(&self) -> String {
        let k = self.seeds.len();
        let mut s = String::new();
        let seeds: Vec<String> = self.seeds.iter().map(|s| s.seed.to_string()).collect();
        let _ = writeln!(s, "# dpclaims — stability of the verdicts over seeds\n");
        let _ = writeln!(
            s,
            "*Generated by `dpclaims stability --seeds {k} --profile {}` (master seeds {}; reference seed {}). Do not edit.*\n",
            self.profile,
            seeds.join(", "),
            seeds.first().map(String::as_str).unwrap_or("-")
        );
        let rows = self.keys().len();
        let _ = writeln!(
            s,
            "Each verdict is judged on intervals at the family-wise level {:.3}% (Bonferroni over a budget of {} rows at {}%); this suite judges {rows} rows{}.\n",
            100.0 * crate::fit::DEFAULT_CONFIDENCE,
            crate::fit::FAMILY_ROWS,
            100.0 * crate::fit::FAMILY_WISE_ERROR,
            if rows > crate::fit::FAMILY_ROWS {
                ", **more than the budget**: the family-wise error exceeds its bound"
            } else {
                ""
            }
        );
        let flips = self.holds_refuted_flips();
        let controls = self.controls();
        let min_caught = controls.iter().map(|c| c.1).min().unwrap_or(k);
        let same = self.identical_to_reference();
        let runs_ok = self.seeds.iter().filter(|s| s.problems.is_empty()).count();
        let _ = writeln!(s, "## Targets\n");
        let _ = writeln!(s, "| target | measured | met |");
        let _ = writeln!(s, "|---|---|---|");
        let _ = writeln!(
            s,
            "| 0 flips between holds and refuted (main variants) | {} | {} |",
            flips.len(),
            yes(flips.is_empty())
        );
        let _ = writeln!(
            s,
            "| every negative control caught at >= {} of {k} seeds | worst control caught at {min_caught}/{k} | {} |",
            k - k / 20,
            yes(min_caught * 20 >= k * 19)
        );
        let _ = writeln!(
            s,
            "| whole suite's verdicts identical to the reference seed at >= {} of {k} seeds | {same}/{k} | {} |",
            (k * 18).div_ceil(20),
            yes(same * 20 >= k * 18)
        );
        let _ = writeln!(
            s,
            "| runs without a problem (every control caught, no refutation without a finding) | {runs_ok}/{k} | {} |",
            yes(runs_ok == k)
        );
        let _ = writeln!(
            s,
            "\nNot a target, for reading the last row: the whole suite equals every row's most frequent verdict at {}/{k} seeds.",
            self.identical_to_modal()
        );
        let _ = writeln!(s, "\n## Flips\n");
        let unstable: Vec<RowKey> = self
            .keys()
            .into_iter()
            .filter(|key| self.counts(key).iter().filter(|c| **c > 0).count() > 1)
            .collect();
        if unstable.is_empty() {
            let _ = writeln!(s, "No verdict changed with the seed.");
        } else {
            let _ = writeln!(
                s,
                "{} of {} verdict rows changed with the seed:\n",
                unstable.len(),
                self.keys().len()
            );
            for key in &unstable {
                let c = self.counts(key);
                let _ = writeln!(
                    s,
                    "* `{}` / `{}` / `{}`{}: {}",
                    key.0,
                    key.1,
                    key.2,
                    self.control_mark(key),
                    ORDER
                        .iter()
                        .zip(c)
                        .filter(|(_, n)| *n > 0)
                        .map(|(v, n)| format!("{v} {n}/{k}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        self.near_edges(&mut s);
        let problems: Vec<String> = self
            .seeds
            .iter()
            .flat_map(|sv| {
                sv.problems
                    .iter()
                    .map(move |p| format!("seed {}: {p}", sv.seed))
            })
            .collect();
        if !problems.is_empty() {
            let _ = writeln!(s, "\n## Problems at some seeds\n");
            for p in &problems {
                let _ = writeln!(s, "* {p}");
            }
        }
        let _ = writeln!(s, "\n## Every verdict\n");
        let _ = writeln!(
            s,
            "| claim | prediction | variant | holds | refuted | inconclusive | out of regime | caught | reference | margin (sd) |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
        for key in self.keys() {
            let c = self.counts(&key);
            let control = self.is_control(&key);
            let reference = self
                .seeds
                .first()
                .and_then(|f| f.rows.get(&key))
                .map(|r| r.verdict.to_string())
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} |",
                key.0,
                key.1,
                key.2,
                if control { " (control)" } else { "" },
                c[0],
                c[1],
                c[2],
                c[3],
                if control {
                    format!("{}/{k}", self.caught(&key))
                } else {
                    "—".into()
                },
                reference,
                self.margin(&key)
                    .map_or_else(|| "—".to_string(), |m| fmt_z(m.z()))
            );
        }
        s
    }

    /// The section on rows near an edge: every row whose flip margin is within
    /// [`NEAR_EDGE_SD`] seed-to-seed standard deviations of a flip, with its flip chance
    /// per seed (normal approximation), and the chance, over all rows with a margin,
    /// that a fresh seed repeats every modal verdict.
    fn near_edges(&self, s: &mut String) {
        let k = self.seeds.len();
        let margins: Vec<(RowKey, Margin)> = self
            .keys()
            .into_iter()
            .filter_map(|key| self.margin(&key).map(|m| (key, m)))
            .collect();
        if k < 3 || margins.is_empty() {
            return;
        }
        let _ = writeln!(s, "\n## Closest to an edge\n");
        let _ = writeln!(
            s,
            "A row's flip margin at a seed is how far its interval (for an event, its frequency) is inside the region of the row's most frequent verdict, in the estimate's units (negative: that seed gave another verdict); over the {k} seeds, its mean over its standard deviation is the distance from a flip in seed-to-seed standard deviations (the last column of the table below; — when a row has no interval, ∞ when it does not vary). Counts of {k} seeds cannot see a flip chance of a few percent; this can, under a normal approximation. {} of {} rows with a margin are within {NEAR_EDGE_SD} sd of a flip:\n",
            margins.iter().filter(|(_, m)| m.z() < NEAR_EDGE_SD).count(),
            margins.len()
        );
        let mut near: Vec<&(RowKey, Margin)> = margins
            .iter()
            .filter(|(_, m)| m.z() < NEAR_EDGE_SD)
            .collect();
        near.sort_by(|a, b| a.1.z().total_cmp(&b.1.z()).then_with(|| a.0.cmp(&b.0)));
        if !near.is_empty() {
            let _ = writeln!(
                s,
                "| claim | prediction | variant | modal verdict | margin mean | margin sd | margin (sd) | flip chance per seed |"
            );
            let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
            for (key, m) in near {
                let _ = writeln!(
                    s,
                    "| {} | {} | {}{} | {} | {} | {} | {} | {:.1}% |",
                    key.0,
                    key.1,
                    key.2,
                    self.control_mark(key),
                    self.modal(key),
                    crate::report::fmt_num(m.mean),
                    crate::report::fmt_num(m.sd),
                    fmt_z(m.z()),
                    100.0 * m.flip_chance()
                );
            }
        }
        let repeat: f64 = margins.iter().map(|(_, m)| 1.0 - m.flip_chance()).product();
        let _ = writeln!(
            s,
            "\nUnder the same approximation (rows independent), a fresh seed repeats every modal verdict with probability {:.1}%.",
            100.0 * repeat
        );
    }
}

/// Rows whose flip margin is below this many seed-to-seed standard deviations are
/// listed as near an edge (a flip chance above 0.13 % per seed, were it normal).
pub const NEAR_EDGE_SD: f64 = 3.0;

/// A margin in standard deviations: one decimal, `∞` when the margin does not vary.
fn fmt_z(z: f64) -> String {
    if z == f64::INFINITY {
        "∞".into()
    } else if z == f64::NEG_INFINITY {
        "−∞".into()
    } else {
        format!("{z:.1}")
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "**no**"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(seed: u64, verdicts: &[Verdict]) -> SeedVerdicts {
        let rows = verdicts
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let key = ("c".to_string(), format!("p{i}"), "v".to_string());
                (
                    key,
                    SeedRow {
                        verdict: *v,
                        caught: None,
                        negative_control: false,
                        edges: None,
                    },
                )
            })
            .collect();
        SeedVerdicts {
            seed,
            rows,
            problems: vec![],
        }
    }

    #[test]
    fn reference_and_modal_agreement_are_counted_per_seed() {
        use Verdict::*;
        // Seed 0 is atypical on row 1: only seed 0 equals it, three seeds equal the mode.
        let st = Stability {
            profile: "quick".into(),
            seeds: vec![
                seed(0, &[Holds, Refuted]),
                seed(1, &[Holds, Inconclusive]),
                seed(2, &[Holds, Inconclusive]),
                seed(3, &[Holds, Inconclusive]),
            ],
        };
        assert_eq!(st.identical_to_reference(), 1);
        assert_eq!(st.identical_to_modal(), 3);
        assert!(st.holds_refuted_flips().is_empty());
        let md = st.markdown();
        assert!(md.contains("this suite judges 2 rows."), "{md}");
        assert!(md.contains("most frequent verdict at 3/4 seeds"), "{md}");
    }

    fn result(kind: &str, ci: (f64, f64), estimate: f64, p: f64, t: f64) -> Row {
        Row {
            seed: 0,
            claim: "c".into(),
            prediction: "p".into(),
            variant: "v".into(),
            kind: kind.into(),
            verdict: Verdict::Inconclusive,
            negative_control: false,
            caught: None,
            estimate: Some(estimate),
            ci_lo: Some(ci.0),
            ci_hi: Some(ci.1),
            predicted: Some(p),
            tolerance: Some(t),
            problem: None,
        }
    }

    #[test]
    fn edges_agree_with_the_verdict_rules_on_a_grid_of_intervals() {
        // Exponent band [-1.2, -0.8], rate bound -0.8: every interval on a grid, the
        // sign of each edge distance must say what judge_exponent / judge_rate_at_most say.
        // Offset so that no end falls exactly on an edge.
        let grid: Vec<f64> = (0..=24).map(|i| -1.587 + 0.05 * i as f64).collect();
        for &lo in &grid {
            for &hi in grid.iter().filter(|h| **h >= lo) {
                let mid = 0.5 * (lo + hi);
                let e = Edges::of(&result("exponent", (lo, hi), mid, -1.0, 0.2)).unwrap();
                let v = crate::fit::judge_exponent((lo, hi), mid, -1.0, 0.2);
                assert_eq!(e.to_holds < 0.0, v == Verdict::Holds, "{lo} {hi} {e:?}");
                assert_eq!(
                    e.to_refuted < -1e-12,
                    v == Verdict::Refuted,
                    "{lo} {hi} {e:?}"
                );
                let e = Edges::of(&result("rate_at_most", (lo, hi), mid, -1.0, 0.2)).unwrap();
                let v = crate::fit::judge_rate_at_most((lo, hi), -1.0, 0.2);
                assert_eq!(e.to_holds < 0.0, v == Verdict::Holds, "{lo} {hi} {e:?}");
                assert_eq!(
                    e.to_refuted < -1e-12,
                    v == Verdict::Refuted,
                    "{lo} {hi} {e:?}"
                );
                // An inequality's interval is of the violation margin (> 0 violates).
                let e =
                    Edges::of(&result("inequality", (lo + 1.0, hi + 1.0), mid, 0.0, 0.0)).unwrap();
                assert_eq!(e.to_holds < 0.0, hi + 1.0 < 0.0);
                assert_eq!(e.to_refuted < 0.0, lo + 1.0 > 0.0);
            }
        }
        // An event: holds on the frequency, refuted on the interval's upper end.
        let e = Edges::of(&result("event", (0.80, 0.88), 0.85, 0.9, 0.0)).unwrap();
        assert!(e.to_holds > 0.0 && e.to_refuted < 0.0);
        let mut oor = result("exponent", (0.0, 1.0), 0.5, 0.0, 1.0);
        oor.verdict = Verdict::OutOfRegime;
        assert!(Edges::of(&oor).is_none());
    }

    #[test]
    fn margins_list_the_rows_near_an_edge_with_a_flip_chance() {
        use Verdict::*;
        let row = |v: Verdict, to_holds: f64, to_refuted: f64| SeedRow {
            verdict: v,
            caught: None,
            negative_control: false,
            edges: Some(Edges {
                to_holds,
                to_refuted,
            }),
        };
        let key = |p: &str| ("c".to_string(), p.to_string(), "v".to_string());
        // "near" holds at every seed, by 0.1 or 0.2: margin mean 0.15, sd 0.058, z 2.6;
        // "far" holds by 1.0 at every seed: no variation, z infinite, not listed;
        // "inc" is inconclusive, 0.5 from either verdict at every seed but one.
        let seeds = (0..4)
            .map(|i| SeedVerdicts {
                seed: i,
                rows: [
                    (key("near"), row(Holds, -0.1 - 0.1 * (i % 2) as f64, 1.0)),
                    (key("far"), row(Holds, -1.0, 1.0)),
                    (
                        key("inc"),
                        row(Inconclusive, 0.5 + 0.1 * (i == 0) as u8 as f64, 0.6),
                    ),
                ]
                .into_iter()
                .collect(),
                problems: vec![],
            })
            .collect();
        let st = Stability {
            profile: "quick".into(),
            seeds,
        };
        let near = st.margin(&key("near")).unwrap();
        assert!((near.mean - 0.15).abs() < 1e-12);
        assert!((near.z() - 0.15 / (0.01f64 / 3.0).sqrt()).abs() < 1e-9);
        assert!(near.flip_chance() > 0.001 && near.flip_chance() < 0.01);
        assert_eq!(st.margin(&key("far")).unwrap().z(), f64::INFINITY);
        assert_eq!(st.margin(&key("far")).unwrap().flip_chance(), 0.0);
        assert!(st.margin(&key("inc")).unwrap().z() > 10.0);
        let md = st.markdown();
        assert!(
            md.contains("1 of 3 rows with a margin are within 3 sd of a flip"),
            "{md}"
        );
        assert!(
            md.contains("| c | near | v | holds | 0.1500 | 0.05774 | 2.6 | 0.5% |"),
            "{md}"
        );
        assert!(
            md.contains("repeats every modal verdict with probability 99.5%"),
            "{md}"
        );
        assert!(
            md.contains("| c | far | v | 4 | 0 | 0 | 0 | — | holds | ∞ |"),
            "{md}"
        );
    }
}
