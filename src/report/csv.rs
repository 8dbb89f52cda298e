//! `reports/<id>.csv`: every replicate's raw metric value.
use crate::judge::ClaimOutcome;
use std::fmt::Write as _;

/// `reports/<id>.csv`: one row per (sweep, variant, point, replicate, metric).
pub fn claim_csv(o: &ClaimOutcome) -> String {
    let mut s = String::from("claim,sweep,variant,point,vars,replicate,metric,value\n");
    for p in &o.points {
        let vars = p
            .vars
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";");
        for (m, vals) in &p.metrics {
            for (r, v) in vals.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "{},{},{},{},\"{}\",{},{},{}",
                    o.claim.id, p.sweep, p.variant, p.label, vars, r, m, v
                );
            }
        }
    }
    s
}
