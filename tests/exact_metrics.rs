//! A metric a system declares exact (`System::exact_metrics`: accountant outputs, a
//! printed table's arithmetic) draws nothing from the unit's seed, so its rows carry no
//! power line (`judge::power`). The declaration is checked here, not trusted: for every
//! committed claim that uses an exact metric, the first unit of each variant is run at
//! two master seeds and every exact metric must come back as the same bits. The check
//! can fail: in the same runs, a sampled metric of the suite (a Monte Carlo frequency,
//! a trained model's accuracy) differs between the seeds.
use dpclaims::plan::planned_units;
use dpclaims::spec::{self, Claim, Profile};
use dpclaims::train::Recipe;
use std::collections::{BTreeMap, BTreeSet};

/// The values of the first unit of `variant` on `sweep` (point 0, replicate 0).
fn first_unit(claim: &Claim, sweep: &str, variant: &str, seed: u64) -> BTreeMap<String, f64> {
    let units = planned_units(claim, Profile::Quick);
    let u = units
        .iter()
        .find(|u| {
            u.key.sweep == sweep
                && u.key.variant == variant
                && u.key.point == 0
                && u.key.replicate == 0
        })
        .unwrap_or_else(|| panic!("{}: no unit of {sweep}/{variant}", claim.id));
    let key = u.key.clone();
    let v = dpclaims::execute::run_units_where(
        claim,
        Profile::Quick,
        seed,
        &Recipe::PAPER,
        &|_, k| *k == key,
        &|| {},
    )
    .unwrap_or_else(|e| panic!("{}/{variant}: {e}", claim.id));
    v.into_iter().next().expect("one unit").1
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn every_declared_exact_metric_is_the_same_bits_at_two_seeds() {
    // In-process runs are uncached unless a caller opens a cache scope (execute::cache):
    // no environment variable, which would reach every other test of this binary.
    let claims = spec::load_claims(&["claims".into()]).unwrap();
    let (mut checked, mut sampled_differ) = (BTreeSet::new(), 0);
    for c in &claims {
        let exact = c.system.exact_metrics();
        let used: BTreeSet<&str> = c
            .predictions
            .iter()
            .map(|p| p.metric.as_str())
            .chain(c.report_metrics.iter().map(String::as_str))
            .filter(|m| exact.contains(m))
            .collect();
        if used.is_empty() {
            continue;
        }
        eprintln!("{}: {used:?}", c.id);
        // Every (sweep, variant) a prediction on an exact metric judges.
        let runs: BTreeSet<(&str, &str)> = c
            .predictions
            .iter()
            .filter(|p| exact.contains(&p.metric.as_str()))
            .flat_map(|p| {
                c.variants
                    .iter()
                    .filter(move |v| p.judges(v))
                    .map(move |v| (p.sweep.as_str(), v.name.as_str()))
            })
            .collect();
        for (sweep, v) in runs {
            let (a, b) = (first_unit(c, sweep, v, 0), first_unit(c, sweep, v, 1));
            for m in exact.iter().filter(|m| a.contains_key(**m)) {
                assert!(
                    same(a[*m], b[*m]),
                    "{}/{v}: `{m}` is declared exact but is {} at seed 0 and {} at seed 1",
                    c.id,
                    a[*m],
                    b[*m]
                );
                checked.insert(format!("{}/{m}", c.system.name()));
            }
            // The same comparison on the unit's sampled metrics finds a difference
            // somewhere in the suite (else this test could not fail).
            sampled_differ += a
                .iter()
                .filter(|(m, x)| {
                    !exact.contains(&m.as_str()) && b.get(*m).is_some_and(|y| !same(**x, *y))
                })
                .count();
        }
    }
    eprintln!("exact metrics checked: {checked:?}");
    assert!(
        checked.len() >= 6,
        "too few exact metrics reached: {checked:?}"
    );
    assert!(
        sampled_differ > 0,
        "no sampled metric differs between two seeds: the comparison cannot fail"
    );
}
