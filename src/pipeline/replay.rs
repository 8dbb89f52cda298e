//! `dpclaims run --unit ID`: one work unit replayed with its seed against the same
//! system or external core — the minimal reproducer of a row. A unit's numbers depend on its own seed path only, so the replay
//! gives the bits the run used.
//!
//! A unit id is `<claim>/<variant>/<sweep>/<point>/<replicate>`, the point as its axis
//! values (`n=64`, `d=10 n=64`): the id the external protocol sends, and the one failing
//! and inconclusive rows print ([`hint`]).
use crate::judge::PredictionResult;
use crate::plan::{planned_units, UnitPlan};
use crate::spec::{Claim, Profile};
use crate::train::Recipe;
use std::collections::BTreeMap;

/// The id of a planned unit.
pub fn unit_id(claim: &str, u: &UnitPlan) -> String {
    format!(
        "{claim}/{}/{}/{}/{}",
        u.key.variant, u.key.sweep, u.label, u.key.replicate
    )
}

/// The claim id a unit id starts with.
pub fn claim_of(id: &str) -> &str {
    id.split('/').next().unwrap_or("")
}

/// "units: <first id> ... (P points x R replicates): replay one with `dpclaims run <claim>
/// --unit '<id>'`", for a row of `claim`; R is the replicates the row was judged on.
pub fn hint(claim: &Claim, profile: Profile, r: &PredictionResult) -> Option<String> {
    let units: Vec<UnitPlan> = planned_units(claim, profile)
        .into_iter()
        .filter(|u| u.key.sweep == r.sweep && u.key.variant == r.variant)
        .collect();
    let first = units.first()?;
    let points = units
        .iter()
        .map(|u| u.key.point)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    // The replicates the row was judged on (its stopping look for a sequential sweep,
    // not the sweep's maximum: units beyond it may never have been drawn).
    let planned = units.len() / points.max(1);
    let reps = if r.replicates > 0 {
        r.replicates.min(planned)
    } else {
        planned
    };
    Some(format!(
        "units {}/{}/{}/<point>/<0..{}> ({points} points x {reps} replicates); replay one: dpclaims run {} --unit '{}'",
        claim.id,
        r.variant,
        r.sweep,
        reps.saturating_sub(1),
        replay_target(claim),
        unit_id(&claim.id, first)
    ))
}

/// What `dpclaims run` is given to find `claim` again: its id when it is
/// `claims/<id>.yaml` (what an id resolves to), else its file's path as it was loaded
/// (quoted for a shell when it needs to be), so the hint works for a spec anywhere.
pub fn replay_target(claim: &Claim) -> String {
    let by_id = std::path::Path::new("claims").join(format!("{}.yaml", claim.id));
    if claim.file == by_id {
        return claim.id.clone();
    }
    let f = claim.file.display().to_string();
    if !f.is_empty()
        && f.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@=".contains(c))
    {
        f
    } else {
        format!("'{}'", f.replace('\'', "'\\''"))
    }
}

/// Replays the unit `id` of one of `claims` with its seed: its system's name and its
/// metrics.
pub fn replay_unit(
    claims: &[Claim],
    id: &str,
    profile: Profile,
    seed: u64,
) -> anyhow::Result<(String, BTreeMap<String, f64>)> {
    let cid = claim_of(id);
    let Some(claim) = claims.iter().find(|c| c.id == cid) else {
        anyhow::bail!(
            "--unit `{id}`: no claim `{cid}` among the claims given (a unit id is \
             <claim>/<variant>/<sweep>/<point>/<replicate>)"
        );
    };
    let units = planned_units(claim, profile);
    let Some(u) = units.iter().find(|u| unit_id(&claim.id, u) == id) else {
        let same: Vec<String> = units
            .iter()
            .filter(|u| u.key.replicate == 0)
            .map(|u| unit_id(&claim.id, u))
            .take(12)
            .collect();
        anyhow::bail!(
            "--unit `{id}`: claim `{cid}` has no such unit at the {profile} profile; its \
             units are, at replicate 0: {}{}",
            same.join(", "),
            if units.len() > same.len() {
                ", ..."
            } else {
                ""
            }
        );
    };
    let key = u.key.clone();
    let values = crate::execute::run_units_where(
        claim,
        profile,
        seed,
        &Recipe::PAPER,
        &|_, k| *k == key,
        &|| {},
    )?;
    let Some((_, metrics)) = values.into_iter().next() else {
        anyhow::bail!("--unit `{id}`: the unit did not run");
    };
    Ok((claim.system.name().to_string(), metrics))
}

#[cfg(test)]
mod tests {
    use crate::spec::Profile;

    /// A sequential row's hint names the units it was judged on (a control caught at the
    /// first look: 2 replicates), not the sweep's maximum (64).
    #[test]
    fn the_hint_of_a_row_stopped_early_names_the_replicates_it_was_judged_on() {
        let text = include_str!("../../tests/data/sequential-demo.yaml");
        let claim = crate::spec::claim_from_bytes(
            std::path::Path::new("sequential-demo.yaml"),
            text.as_bytes(),
        )
        .unwrap();
        let o = crate::pipeline::run_claim(
            &claim,
            Profile::Quick,
            0,
            &crate::train::Recipe::PAPER,
            &|| {},
        )
        .unwrap();
        let control = o
            .results
            .iter()
            .find(|r| r.prediction_name == "loose" && r.variant == "flat-noise")
            .unwrap();
        assert_eq!(control.replicates, 2);
        let hint = super::hint(&claim, Profile::Quick, control).unwrap();
        assert!(hint.contains("/<point>/<0..1> ("), "{hint}");
        assert!(hint.contains("x 2 replicates)"), "{hint}");
    }
}
