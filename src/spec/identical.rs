//! A negative control that cannot differ from a main variant ([`identical_main`]): read
//! from the claim alone, by the plan (which skips the control's units) and by the judge
//! (which reports the control as identical). Here, below both, so that the plan does not
//! import the judge.
use super::{Claim, Profile, Variant};
use std::collections::BTreeMap;

/// The main variant a negative control cannot differ from on a sweep, if any: same
/// options, same data and the same resolved variables at every point of the sweep at
/// this profile. Variants share their random streams, so such a control computes
/// exactly what the main variant does. Needs no simulation (the runner skips its units).
pub fn identical_main(
    claim: &Claim,
    control: &str,
    sweep: &str,
    profile: Profile,
) -> Option<String> {
    let ctrl = claim.variants.iter().find(|v| v.name == control)?;
    let prof = claim.sweep(sweep).profile(profile);
    let points = prof.axis_points();
    let resolved = |v: &Variant| -> Option<Vec<BTreeMap<String, f64>>> {
        points
            .iter()
            .map(|pt| claim.resolve(v, prof, pt).ok())
            .collect()
    };
    let mine = resolved(ctrl)?;
    claim
        .variants
        .iter()
        .filter(|m| {
            !m.negative_control
                && m.options == ctrl.options
                && m.data == ctrl.data
                && claim.system.variant_tag(&m.name) == claim.system.variant_tag(&ctrl.name)
        })
        .find(|m| {
            resolved(m).is_some_and(|theirs| theirs.iter().zip(&mine).all(|(a, b)| same_vars(a, b)))
        })
        .map(|m| m.name.clone())
}

fn same_vars(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && va.to_bits() == vb.to_bits())
}
