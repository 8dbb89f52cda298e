//! What the fault matrix would cost, before it runs: the estimate `dpclaims faults`
//! passes through the planner's gate ([`crate::plan::budget::admit`]), as `run` does.
//!
//! The matrix runs the suite once without a fault, then each fault's row: the claims
//! whose system the fault reaches ([`Fault::affects`]) and, where it reaches the audited
//! mechanisms, the audit column ([`super::run`]). The estimate counts exactly those
//! cells, each claim at its worst case (every sequential group to its `max`), every row
//! run to its end (a missed fault stops nowhere; `--all` stops nowhere), and no unit
//! read from the result cache: an upper bound, never refused where the matrix fits. It
//! once multiplied the whole suite by the rows (31 h on 2 threads against the 24 h
//! limit, for a matrix that ran in 269 s): issue 58.
use super::run::audit_mechanisms;
use super::MatrixConfig;
use crate::faults::Fault;
use crate::plan::budget::Estimate;
use crate::plan::estimate::{estimate_claim, hours, Driver};
use crate::privacy::audit::{AuditConfig, AuditEngine};
use crate::spec::Claim;

/// The estimate of the matrix over `faults` (the fault-free row included) on `threads`
/// threads.
pub fn estimate(
    claims: &[Claim],
    faults: &[Fault],
    cfg: &MatrixConfig,
    threads: usize,
) -> Estimate {
    let threads = threads.max(1);
    let est: Vec<_> = claims
        .iter()
        .map(|c| estimate_claim(c, cfg.profile, threads))
        .collect();
    let rows: Vec<Fault> = std::iter::once(Fault::None)
        .chain(faults.iter().copied())
        .collect();
    // Each claim's wall time times the rows that run it.
    let mut claim_rows = vec![0.0f64; claims.len()];
    let mut audit_rows = 0.0;
    for &f in &rows {
        for (i, c) in claims.iter().enumerate() {
            if f.is_none() || f.affects(c.system.name()) {
                claim_rows[i] += 1.0;
            }
        }
        if !audit_mechanisms(f, cfg).is_empty() {
            audit_rows += 1.0;
        }
    }
    let claims_s: f64 = est
        .iter()
        .zip(&claim_rows)
        .map(|(e, r)| e.wall_seconds * r)
        .sum();
    // An audit row: the three mechanisms side by side, each audit's runs in parallel.
    let audits = audit_mechanisms(Fault::None, cfg)
        .into_iter()
        .map(|system| {
            let mut a = AuditConfig::new(system, cfg.audit_epsilon, cfg.audit_delta);
            a.trials = cfg.audit_trials;
            a.engine = AuditEngine::Direct;
            crate::systems::audit::config_cost(&a)
        })
        .fold((0.0, 0.0), |(s, b), c| (s + c.seconds, b + c.bytes));
    let audit_s = audit_rows * audits.0 / threads as f64;
    let worst = est
        .iter()
        .zip(&claim_rows)
        .max_by(|a, b| (a.0.wall_seconds * a.1).total_cmp(&(b.0.wall_seconds * b.1)));
    let largest = est
        .iter()
        .max_by(|a, b| a.memory_bytes.total_cmp(&b.memory_bytes));
    let audit_driver = || Driver {
        field: "--audit-trials".into(),
        detail: format!(
            "{} runs per data set, {} rows x {} audited mechanisms",
            cfg.audit_trials,
            audit_rows,
            audit_mechanisms(Fault::None, cfg).len()
        ),
    };
    let work_driver = match worst {
        Some((e, r)) if claims_s >= audit_s => Driver {
            field: e.work_driver.field.clone(),
            detail: format!(
                "the largest claim is `{}` ({} in each of {r} rows): {}",
                e.claim,
                hours(e.wall_seconds),
                e.work_driver.detail
            ),
        },
        _ => audit_driver(),
    };
    let claim_bytes = largest.map_or(0.0, |e| e.memory_bytes);
    let memory_driver = match largest {
        Some(e) if claim_bytes >= audits.1 => e.memory_driver.clone(),
        _ => audit_driver(),
    };
    Estimate {
        subject: format!(
            "`dpclaims faults` ({} rows over {} claims)",
            rows.len(),
            claims.len()
        ),
        wall_seconds: claims_s + audit_s,
        bytes: claim_bytes.max(audits.1),
        threads,
        work_driver,
        memory_driver,
    }
}
