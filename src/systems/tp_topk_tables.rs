//! The `tp_topk` system's mode `printed-table`: arithmetic checks of the fewer-coordinates
//! paper's own printed tables (no simulation, no randomness). The numbers are the spec's
//! parameters, quoted there with their lines; a negative control perturbs one entry.
//!
//! * Table 3 (Sec. 7.3, L167-L176): `rand_1..rand_4`, `topk_1..topk_4` at r = 0.2, 0.4,
//!   0.6, 0.8; `gap_min_drop = min_i [(topk_i - rand_i) - (topk_{i+1} - rand_{i+1})]`
//!   (positive: the TP-TopK - TP-Rand gap falls at every step of r), `gap_first`,
//!   `gap_last`.
//! * Table 5 (Sec. 7.5, L199-L204): one row's `sensitivity`, `specificity`,
//!   `balanced_accuracy`; `ba_residual = |BA - (Se + Sp)/2|` (balanced accuracy is the
//!   mean of sensitivity and specificity).
//! * Table 5's sentences (Sec. 7.5, L199): the whole table, `auc_<row>`, `ba_<row>`,
//!   `se_<row>` for rows `nondp`, `dpfull`, `rand`, `topk`: `topk_auc_lead` and
//!   `topk_ba_lead` (TP-TopK's AUC and balanced accuracy minus the best other DP row's,
//!   positive when TP-TopK has "the highest AUC and balanced accuracy among DP methods"),
//!   `auc_margin_ratio` and `ba_margin_ratio` (Non-DP - TP-TopK over Non-DP - DP Full: < 1
//!   when "the margin over TP-TopK is ... smaller than the gap between Non-DP and full
//!   DP-SGD"), and `sparse_se_gain` (the smaller sensitivity of TP-Rand and TP-TopK minus
//!   DP Full's, positive when the coordinate-sparse methods "recover minority-class
//!   sensitivity").
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
    if u.vars.contains_key("auc_topk") {
        let v = |name: &str| u.var(name);
        let (auc_n, auc_f, auc_r, auc_t) = (
            v("auc_nondp")?,
            v("auc_dpfull")?,
            v("auc_rand")?,
            v("auc_topk")?,
        );
        let (ba_n, ba_f, ba_r, ba_t) = (
            v("ba_nondp")?,
            v("ba_dpfull")?,
            v("ba_rand")?,
            v("ba_topk")?,
        );
        let (se_f, se_r, se_t) = (v("se_dpfull")?, v("se_rand")?, v("se_topk")?);
        out.insert("topk_auc_lead".into(), auc_t - auc_f.max(auc_r));
        out.insert("topk_ba_lead".into(), ba_t - ba_f.max(ba_r));
        out.insert("auc_margin_ratio".into(), (auc_n - auc_t) / (auc_n - auc_f));
        out.insert("ba_margin_ratio".into(), (ba_n - ba_t) / (ba_n - ba_f));
        out.insert("sparse_se_gain".into(), se_r.min(se_t) - se_f);
    }
    if out.is_empty() {
        return Err(SystemError::Invalid(
            "printed-table: give rand_1..4 and topk_1..4 (Table 3), sensitivity, specificity and balanced_accuracy (a Table 5 row) or auc_, ba_, se_ of the rows nondp, dpfull, rand, topk (Table 5's sentences)".into(),
        ));
    }
    Ok(out)
}
