//! One cell of the fault matrix: what a fault did to one claim, found by comparing the
//! claim's outcome on the faulty core with the fault-free outcome, and what it did to
//! one audited mechanism.
//!
//! A claim cell is
//! * `verdict` — some verdict differs from the fault-free run's (which equals the
//!   spec's expected verdict when the suite is green): `dpclaims run` exits 1 and the
//!   snapshot test fails. A *flip* (holds <-> refuted) is robust; a change to or from
//!   `inconclusive` means the prediction sat near the edge of its tolerance or its
//!   confidence interval (counted apart as `flips` vs `verdict_changes`);
//! * `error` — the claim could not run (a diverged unit, an invalid configuration):
//!   `dpclaims run` exits 2;
//! * `snapshot` — the verdicts are the same but the rounded rendering the insta
//!   snapshots hold ([`crate::report::snapshot`]) changed: only the snapshot test fails
//!   (weaker: a snapshot change can be re-accepted as a refactor's side effect);
//! * `unchanged` — the claim does not see the fault;
//! * `skipped` — the fault cannot reach the claim's system
//!   ([`crate::faults::FaultInfo::systems`]; `tests/faults.rs` checks the declaration),
//!   so the fault-free outcome stands;
//! * `not_run` — the fault reaches the claim, but its row stopped at an earlier (cheaper)
//!   detection ([`super`] docs, "early stop").
use crate::execute::RunError;
use crate::fit::Verdict;
use crate::judge::ClaimOutcome;
use crate::report::snapshot::snapshot;
use serde::Serialize;

/// What a fault did to one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    Unchanged,
    Snapshot,
    Verdict,
    Error,
    Skipped,
    NotRun,
}

impl CellStatus {
    /// True for `verdict`, `error` and `snapshot`.
    pub fn detects(self) -> bool {
        matches!(
            self,
            CellStatus::Verdict | CellStatus::Error | CellStatus::Snapshot
        )
    }
}

/// One cell of the matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub claim: String,
    pub status: CellStatus,
    /// Number of judged predictions whose verdict differs from the fault-free run's.
    pub verdict_changes: usize,
    /// Of those, holds <-> refuted flips (the rest move to or from `inconclusive`).
    pub flips: usize,
    /// `metric / variant: before -> after` for every changed verdict.
    pub changes: Vec<String>,
    /// Number of judged predictions whose rounded rendering changed.
    pub snapshot_changes: usize,
    pub error: Option<String>,
}

impl Cell {
    /// A cell of `claim` with nothing measured (skipped or not run).
    pub fn empty(claim: &str, status: CellStatus) -> Self {
        Self {
            claim: claim.to_string(),
            status,
            verdict_changes: 0,
            flips: 0,
            changes: vec![],
            snapshot_changes: 0,
            error: None,
        }
    }

    /// The symbol of the Markdown matrix: **V** a flip, v only changes to or from
    /// inconclusive, **E** error, s snapshot only, · unchanged, – skipped, … not run.
    pub fn symbol(&self) -> &'static str {
        match self.status {
            CellStatus::Unchanged => "·",
            CellStatus::Snapshot => "s",
            CellStatus::Verdict if self.flips > 0 => "**V**",
            CellStatus::Verdict => "v",
            CellStatus::Error => "**E**",
            CellStatus::Skipped => "–",
            CellStatus::NotRun => "…",
        }
    }
}

/// The cell of a claim the fault reaches: its outcome on the faulty core `out`
/// compared with the fault-free outcome `base`.
pub fn compare(base: &ClaimOutcome, out: Result<ClaimOutcome, RunError>) -> Cell {
    let mut cell = Cell::empty(&base.claim.id, CellStatus::Unchanged);
    let out = match out {
        Err(e) => {
            cell.status = CellStatus::Error;
            cell.error = Some(e.to_string());
            return cell;
        }
        Ok(o) => o,
    };
    let (sb, sf) = (snapshot(base), snapshot(&out));
    for (i, (b, r)) in base.results.iter().zip(&out.results).enumerate() {
        if b.verdict != r.verdict {
            cell.verdict_changes += 1;
            if b.verdict != Verdict::Inconclusive && r.verdict != Verdict::Inconclusive {
                cell.flips += 1;
            }
            cell.changes.push(format!(
                "{} / {}: {} -> {}",
                r.metric, r.variant, b.verdict, r.verdict
            ));
        }
        if sb.results.get(i) != sf.results.get(i) {
            cell.snapshot_changes += 1;
        }
    }
    cell.status = if cell.verdict_changes > 0 {
        CellStatus::Verdict
    } else if sb != sf {
        CellStatus::Snapshot
    } else {
        CellStatus::Unchanged
    };
    cell
}

/// One audited mechanism under a fault.
#[derive(Clone, Debug, Serialize)]
pub struct AuditCell {
    pub mechanism: &'static str,
    pub epsilon_lower_bound: Option<f64>,
    /// What the correctly configured mechanism claims (its exact GDP epsilon).
    pub epsilon_claimed: f64,
    pub violation: bool,
    pub error: Option<String>,
}

impl AuditCell {
    /// A violation or an error: the audit detects the fault.
    pub fn detects(&self) -> bool {
        self.violation || self.error.is_some()
    }
}
