//! The `tp_topk` system's mode `printed-table`: arithmetic checks of the fewer-coordinates
//! paper's own printed tables (no simulation, no randomness). The numbers are the spec's
//! parameters, quoted there with their lines; a negative control perturbs one entry.
//!
//! * Table 3 (Sec. 7.3, L167-L176): `rand_1..rand_4`, `topk_1..topk_4` at r = 0.2, 0.4,
//!   0.6, 0.8; `gap_min_drop = min_i [(topk_i - rand_i) - (topk_{i+1} - rand_{i+1})]`
//!   (> 0: the TP-TopK - TP-Rand gap falls at every step of r), `gap_first`, `gap_last`.
//! * Table 5 (Sec. 7.5, L199-L204): one row's `sensitivity`, `specificity`,
//!   `balanced_accuracy`; `ba_residual = |BA - (Se + Sp)/2|` (balanced accuracy is the
//!   mean of sensitivity and specificity).
use super::{SystemError, UnitInput};
use std::collections::BTreeMap;

/// The metrics of the table the unit's parameters describe (module docs).
pub(super) fn run(u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
    let mut out = BTreeMap::new();
    if u.vars.contains_key("rand_1") {
        let mut gaps = Vec::with_capacity(4);
        for i in 1..=4 {
            gaps.push(u.var(&format!("topk_{i}"))? - u.var(&format!("rand_{i}"))?);
        }
        let drop = gaps
            .windows(2)
            .map(|w| w[0] - w[1])
            .fold(f64::INFINITY, f64::min);
        out.insert("gap_min_drop".into(), drop);
        out.insert("gap_first".into(), gaps[0]);
        out.insert("gap_last".into(), gaps[3]);
    }
    if u.vars.contains_key("balanced_accuracy") {
        let (se, sp) = (u.var("sensitivity")?, u.var("specificity")?);
        let ba = u.var("balanced_accuracy")?;
        out.insert("ba_residual".into(), (ba - (se + sp) / 2.0).abs());
    }
    if out.is_empty() {
        return Err(SystemError::Invalid(
            "printed-table: give rand_1..4 and topk_1..4 (Table 3) or sensitivity, specificity and balanced_accuracy (Table 5)".into(),
        ));
    }
    Ok(out)
}
