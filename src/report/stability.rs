//! Error rates of verdicts: the suite at K master seeds, and how often each verdict
//! came out each way (`dpclaims stability`, `reports/STABILITY.md`).
//!
//! A verdict that flips with the seed is not a verdict. The page states, for every
//! (claim, prediction, variant), how often each outcome occurred; for negative controls
//! how often they were caught; the flips between `holds` and `refuted`; and at how many
//! seeds the whole suite gave exactly the reference seed's verdicts.
use crate::fit::Verdict;
use crate::judge::{ClaimOutcome, ControlStatus};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One verdict row's identity: (claim, prediction, variant).
pub type RowKey = (String, String, String);

/// The verdicts of one seed's run.
#[derive(Clone, Debug)]
pub struct SeedVerdicts {
    pub seed: u64,
    /// Row -> (verdict, caught (controls only), negative control?).
    pub rows: BTreeMap<RowKey, (Verdict, Option<bool>, bool)>,
    /// Problems of this run (uncaught controls, refutations without finding, ...).
    pub problems: Vec<String>,
}

impl SeedVerdicts {
    pub fn of(seed: u64, outcomes: &[ClaimOutcome]) -> SeedVerdicts {
        let mut rows = BTreeMap::new();
        for o in outcomes {
            for r in &o.results {
                rows.insert(
                    (
                        o.claim.id.clone(),
                        r.prediction_name.clone(),
                        r.variant.clone(),
                    ),
                    (
                        r.verdict,
                        r.control.as_ref().map(|c| *c == ControlStatus::Caught),
                        r.negative_control,
                    ),
                );
            }
        }
        SeedVerdicts {
            seed,
            rows,
            problems: outcomes.iter().flat_map(|o| o.problems()).collect(),
        }
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
            if let Some((v, _, _)) = s.rows.get(key) {
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
            .any(|s| s.rows.get(key).is_some_and(|r| r.2))
    }

    fn caught(&self, key: &RowKey) -> usize {
        self.seeds
            .iter()
            .filter(|s| s.rows.get(key).is_some_and(|r| r.1 == Some(true)))
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
        self.seeds_equal_to(&first.rows.iter().map(|(k, v)| (k.clone(), v.0)).collect())
    }

    /// Seeds with exactly the rows of `reference`, each with its verdict.
    fn seeds_equal_to(&self, reference: &BTreeMap<RowKey, Verdict>) -> usize {
        self.seeds
            .iter()
            .filter(|s| {
                s.rows.len() == reference.len()
                    && reference
                        .iter()
                        .all(|(k, v)| s.rows.get(k).map(|r| r.0) == Some(*v))
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
                let counts = self.counts(&key);
                let best = (0..ORDER.len())
                    .max_by_key(|&i| (counts[i], std::cmp::Reverse(i)))
                    .unwrap_or(0);
                (key, ORDER[best])
            })
            .collect();
        self.seeds_equal_to(&modal)
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
                    if self.is_control(key) {
                        " (control)"
                    } else {
                        ""
                    },
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
            "| claim | prediction | variant | holds | refuted | inconclusive | out of regime | caught | reference |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
        for key in self.keys() {
            let c = self.counts(&key);
            let control = self.is_control(&key);
            let reference = self
                .seeds
                .first()
                .and_then(|f| f.rows.get(&key))
                .map(|r| r.0.to_string())
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| {} | {} | {}{} | {} | {} | {} | {} | {} | {} |",
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
                reference
            );
        }
        s
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
                (key, (*v, None, false))
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
}
