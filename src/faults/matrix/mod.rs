//! The fault matrix: the claim suite (and direct-engine privacy audits) run once on the
//! correct core and then per fault, compared cell by cell with that one fault-free run.
//!
//! A cell (fault × claim) says what the fault did to the claim ([`CellStatus`]: a
//! changed verdict, an error, a changed snapshot, nothing; or that the cell was
//! skipped, because the fault cannot reach the claim's system, or not run, because a
//! cheaper claim had already detected the fault). A fault is *detected* when some cell
//! is `verdict`, `error` or `snapshot`, or the audit shows a violation (or cannot run).
//!
//! Each row runs the suite through the door every run uses — [`pipeline::run_claim`] with
//! the fault's [`super::Fault::recipe`] instead of [`crate::train::Recipe::PAPER`] — and
//! the audit column runs [`crate::privacy::audit::run_audit`] with it and the direct
//! engine (the real training loop) on the three audited mechanisms, correctly
//! configured (exact calibration, kappa = 2, standard clipping; the first layer against
//! its own exact GDP epsilon, which Algorithm 1 as written does not account): a violation
//! is an audited lower bound above the epsilon the mechanism claims.
//!
//! **Early stop.** The question the matrix answers is "does the suite catch this
//! fault?", and one detection answers it. So a row runs the detectors the fault can
//! reach (its claims and the audit) one at a time, cheapest first ([`order`]), and stops
//! at the first that detects the fault; the cells after it are [`CellStatus::NotRun`].
//! [`MatrixConfig::all`] (`dpclaims faults --all`) runs every reachable cell instead,
//! for the full picture of which claims see which faults.
//!
//! Where things are: [`cell`] compares one claim (or audit) with the fault-free run,
//! [`order`] estimates what each detector costs, [`run`] runs the baseline and the rows,
//! [`markdown`] renders `reports/FAULTS.md`; this file holds the types they share.
//!
//! [`pipeline::run_claim`]: crate::pipeline::run_claim
pub mod budget;
pub mod cell;
pub mod markdown;
pub mod order;
pub mod run;

pub use cell::{AuditCell, Cell, CellStatus};
pub use order::DetectorCost;
pub use run::{baseline, fault_row, run_matrix, tick_count, Baseline};

use super::Fault;
use crate::execute::RunError;
use crate::spec::Profile;
use serde::Serialize;

/// How the matrix is run.
#[derive(Clone, Debug)]
pub struct MatrixConfig {
    pub profile: Profile,
    pub seed: u64,
    /// Run the audit column.
    pub audit: bool,
    /// Runs per data set of each audit.
    pub audit_trials: usize,
    /// Claimed epsilon of the DP-GD audits.
    pub audit_epsilon: f64,
    pub audit_delta: f64,
    /// Run every reachable cell (`--all`); otherwise a row stops at its first detection
    /// (module docs).
    pub all: bool,
}

impl Default for MatrixConfig {
    /// Quick profile, seed 0, audits of 20 000 runs per data set at (2, 1e-5), rows
    /// stopped at their first detection.
    fn default() -> Self {
        Self {
            profile: Profile::Quick,
            seed: 0,
            audit: true,
            audit_trials: 20_000,
            audit_epsilon: 2.0,
            audit_delta: 1e-5,
            all: false,
        }
    }
}

/// One row of the matrix.
#[derive(Clone, Debug, Serialize)]
pub struct FaultRow {
    pub name: &'static str,
    pub description: &'static str,
    pub violates: &'static str,
    pub breaks_privacy: bool,
    pub systems: &'static [&'static str],
    /// Claims that detect the fault (verdict, error or snapshot), plus `audit` on a
    /// violation or an error, in suite order. Without `--all`, at most one.
    pub detected_by: Vec<String>,
    /// The first detector in the order of cost ([`order`]): where the row stopped
    /// without `--all`.
    pub first_detector: Option<String>,
    /// Claims with a changed verdict.
    pub verdict_by: Vec<String>,
    /// Claims with a holds <-> refuted flip (a subset of `verdict_by`).
    pub flip_by: Vec<String>,
    /// Claims that could not run.
    pub error_by: Vec<String>,
    /// Claims whose snapshot changed with the same verdicts.
    pub snapshot_only_by: Vec<String>,
    /// Claims the fault reaches that were not run: the row stopped before them.
    pub not_run: Vec<String>,
    /// Total number of changed verdicts.
    pub verdict_changes: usize,
    pub audit_violation: bool,
    /// Some audit could not run (a diverged run): detection by error.
    pub audit_error: bool,
    /// The fault reaches the audit but the row stopped before it.
    pub audit_not_run: bool,
    pub audit: Vec<AuditCell>,
    pub detected: bool,
    pub cells: Vec<Cell>,
    /// Wall time of this row (not in FAULTS.md, which is deterministic).
    pub seconds: f64,
}

/// The whole matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    pub profile: Profile,
    pub seed: u64,
    /// Every reachable cell was run (`--all`).
    pub all: bool,
    pub claims: Vec<String>,
    /// The detectors in the order rows try them, cheapest first, with their estimated
    /// and measured (fault-free) cost.
    pub order: Vec<DetectorCost>,
    pub faults: Vec<FaultRow>,
    pub detected: usize,
    pub total: usize,
    /// Audits of the correct core (no violation expected).
    pub baseline_audit: Vec<AuditCell>,
    /// Problems of the fault-free run (uncaught controls, refutations without a
    /// finding; the matrix compares against the fault-free run; normally empty).
    pub baseline_unexpected: Vec<String>,
    /// Wall time of the fault-free run (claims and audits).
    pub baseline_seconds: f64,
    pub seconds: f64,
}

/// What one claim caught over the rows of a matrix (numbers of faults).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClaimWork {
    pub claim: String,
    /// Faults that flip one of its verdicts (holds <-> refuted).
    pub flips: usize,
    /// Faults that only move a verdict to or from inconclusive.
    pub border: usize,
    /// Faults under which it cannot run.
    pub errors: usize,
    /// Faults that change only its snapshot.
    pub snapshot_only: usize,
    /// Faults it is the first detector of (the cheapest claim that detects them).
    pub first: usize,
    /// Faults nothing else detects (known only when every cell ran: `--all`).
    pub sole: Option<usize>,
}

impl ClaimWork {
    /// The order of FAULTS.md's table: first detections (what the early-stopped matrix
    /// is made of), then the strength of the detections.
    fn rank(&self) -> (usize, usize, usize, usize, usize) {
        (
            self.first,
            self.flips + self.errors,
            self.border,
            self.snapshot_only,
            self.sole.unwrap_or(0),
        )
    }
}

/// Progress events (the library does no I/O; the CLI draws a bar from them).
pub enum Progress<'a> {
    /// Starting the fault-free run (`Fault::None`) or a fault's row.
    Fault(Fault),
    /// One work unit or one audit finished.
    Tick,
    /// Units (or audits) a row did not run because it stopped early: their ticks.
    Skipped(usize),
    /// A row finished.
    Done(&'a FaultRow),
}

/// Errors of the matrix: the fault-free suite itself could not run.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    #[error("fault-free run: {0}")]
    Baseline(#[from] RunError),
    #[error("fault-free audit of {mechanism}: {message}")]
    BaselineAudit {
        mechanism: &'static str,
        message: String,
    },
}

impl Matrix {
    /// The `--json` document: `{"faults": [...], "detected": K, "total": M, ...}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("serialisable")
    }

    /// What each claim caught, in suite order.
    pub fn claim_work(&self) -> Vec<ClaimWork> {
        self.claims
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let mut w = ClaimWork {
                    claim: id.clone(),
                    sole: self.all.then_some(0),
                    ..ClaimWork::default()
                };
                for r in &self.faults {
                    let c = &r.cells[i];
                    match c.status {
                        CellStatus::Verdict if c.flips > 0 => w.flips += 1,
                        CellStatus::Verdict => w.border += 1,
                        CellStatus::Error => w.errors += 1,
                        CellStatus::Snapshot => w.snapshot_only += 1,
                        _ => {}
                    }
                    if r.first_detector.as_deref() == Some(id.as_str()) {
                        w.first += 1;
                    }
                    if let Some(sole) = &mut w.sole {
                        if c.status.detects() && r.detected_by.len() == 1 {
                            *sole += 1;
                        }
                    }
                }
                w
            })
            .collect()
    }
}
