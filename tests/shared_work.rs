//! Issue 34, item 2: the units of one (sweep, point, replicate) share their expensive
//! parts (`systems::shared`). Sharing must not change a single bit: each unit's metrics
//! computed in its group equal those computed alone (a group of one shares nothing).
//! Checked on every claim whose system shares a part, at the first point and replicate
//! of every sweep, every variant.
use dpclaims::execute::run_units_where;
use dpclaims::spec::{self, Profile};
use dpclaims::train::Recipe;
use std::collections::BTreeMap;

fn bits(m: &BTreeMap<String, f64>) -> BTreeMap<String, u64> {
    m.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect()
}

#[test]
fn a_unit_computes_the_same_bits_in_its_group_as_alone() {
    for id in [
        "pff-fig2-overparameterization",
        "noise-term-scaling",
        "tpk-budget-split",
    ] {
        let claim = spec::load_claim(format!("claims/{id}.yaml").as_ref()).unwrap();
        let first = |_: usize, k: &dpclaims::plan::UnitKey| k.point == 0 && k.replicate == 0;
        let together =
            run_units_where(&claim, Profile::Quick, 0, &Recipe::PAPER, &first, &|| {}).unwrap();
        let variants: std::collections::BTreeSet<&str> =
            together.iter().map(|(k, _)| k.variant.as_str()).collect();
        assert!(
            variants.len() >= 2,
            "{id}: a group of one variant shares nothing"
        );
        for (key, metrics) in &together {
            let alone = run_units_where(
                &claim,
                Profile::Quick,
                0,
                &Recipe::PAPER,
                &|_, k| k == key,
                &|| {},
            )
            .unwrap();
            assert_eq!(alone.len(), 1);
            assert_eq!(bits(&alone[0].1), bits(metrics), "{id}: {key:?}");
        }
    }
}
