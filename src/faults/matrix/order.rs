//! The order in which a row tries its detectors: cheapest first, by an estimate of
//! their cost that depends on the specs only.
//!
//! A claim costs `work units × seconds per unit of its system` ([`unit_seconds`]), the
//! audit column `mechanisms × trials × seconds per trial`
//! ([`AUDIT_SECONDS_PER_TRIAL`]). The constants are means measured on the fault-free
//! run of the committed claims at the quick profile (`dpclaims faults --json`:
//! `order[].baseline_seconds / order[].units`); only their ratios matter.
//!
//! Why an estimate and not the measured time of the fault-free run: the order decides
//! which detector a row stops at, so it decides what FAULTS.md says. Measured times
//! move with the machine and its load (two claims a few percent apart swap from run to
//! run), and the report would change with them; the estimate gives the same order, so
//! the same bytes, everywhere. A poor estimate costs time, never a detection: a row
//! still runs until something detects its fault. The measured times are in the JSON
//! next to the estimates, to see when a constant needs updating.
use crate::plan;
use crate::spec::{Claim, Profile};
use serde::Serialize;

/// The name of the audit column where a detector is named (`detected_by`, JSON).
pub const AUDIT: &str = "audit";

/// Seconds of one direct-engine audit run (one trial of one world of one mechanism;
/// the three mechanisms run in parallel), measured as the module docs say.
pub const AUDIT_SECONDS_PER_TRIAL: f64 = 3e-5;

/// Mean seconds of one work unit of each system at the quick profile (module docs;
/// `tests/faults.rs` checks that every system has an entry). Measured on 2 cores shared
/// with other jobs (load 4). Units of a system differ (the first-layer audit runs in
/// 0.05 s a unit, the DP-GD audits in 1.1 s), so these are round means of the claims.
pub const UNIT_SECONDS: &[(&str, f64)] = &[
    ("gaussian_calibration", 2e-5),
    ("gaussian_mechanism", 1e-4),
    ("feature_learning", 0.005),
    ("tp_topk", 0.04),
    ("rf_dpgd", 0.1),
    ("rf_kernel", 0.03),
    ("rf_engines", 0.28),
    ("rf_tuned", 0.3),
    ("rf_fig2", 0.4),
    ("privacy_audit", 0.5),
];

/// Seconds of one work unit of `system` ([`UNIT_SECONDS`]); a system without an entry
/// counts as expensive (1 s per unit) until it is measured.
pub fn unit_seconds(system: &str) -> f64 {
    UNIT_SECONDS
        .iter()
        .find(|(s, _)| *s == system)
        .map_or(1.0, |(_, t)| *t)
}

/// Something a row runs that can detect its fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detector {
    /// The claim at this index of the suite.
    Claim(usize),
    /// The audit column (every audited mechanism the fault reaches).
    Audit,
}

/// A detector's place in the order: its estimated cost, and what the fault-free run
/// measured (JSON only: FAULTS.md has no timings).
#[derive(Clone, Debug, Serialize)]
pub struct DetectorCost {
    /// Claim id, or `audit`.
    pub detector: String,
    /// Work units of the claim at the profile; audited mechanisms for the audit.
    pub units: usize,
    pub estimated_seconds: f64,
    /// Wall time of the fault-free run of this detector.
    pub baseline_seconds: f64,
}

/// Estimated seconds of one run of `claim` at `profile`.
pub fn claim_cost(claim: &Claim, profile: Profile) -> f64 {
    plan::unit_count(claim, profile) as f64 * unit_seconds(claim.system.name())
}

/// Estimated seconds of the audit column over `mechanisms` mechanisms.
pub fn audit_cost(mechanisms: usize, trials: usize) -> f64 {
    (mechanisms * 2 * trials) as f64 * AUDIT_SECONDS_PER_TRIAL
}

/// Every detector of the suite, cheapest first (ties in suite order, the audit after
/// the claims). `audit` is the audit column's cost, `None` without one. A row keeps
/// the detectors its fault reaches, in this order.
pub fn detectors(claims: &[Claim], profile: Profile, audit: Option<f64>) -> Vec<Detector> {
    let mut costs: Vec<(f64, Detector)> = claims
        .iter()
        .enumerate()
        .map(|(i, c)| (claim_cost(c, profile), Detector::Claim(i)))
        .collect();
    if let Some(a) = audit {
        costs.push((a, Detector::Audit));
    }
    // Stable sort: equal costs keep suite order, the audit last.
    costs.sort_by(|a, b| a.0.total_cmp(&b.0));
    costs.into_iter().map(|(_, d)| d).collect()
}
