//! Running the matrix: the fault-free baseline (once per matrix, shared by every row),
//! then one row per fault — its detectors cheapest first, stopped at the first
//! detection unless [`MatrixConfig::all`] ([`super`] docs).
use super::cell::{compare, AuditCell, Cell, CellStatus};
use super::order::{self, Detector, DetectorCost, AUDIT};
use super::{FaultRow, Matrix, MatrixConfig, MatrixError, Progress};
use crate::execute::{self, RunError};
use crate::faults::{Fault, FaultInfo};
use crate::judge::ClaimOutcome;
use crate::plan;
use crate::privacy::audit::{self, AuditConfig, AuditEngine, AuditSystem};
use crate::spec::Claim;
use rayon::prelude::*;
use std::time::Instant;

/// The system name of the audit mechanisms (faults that reach it get an audit column).
const AUDIT_SYSTEM: &str = "privacy_audit";

/// The fault-free run every row is compared with.
#[derive(Clone, Debug)]
pub struct Baseline {
    /// Outcomes of the claims, in suite order.
    pub outcomes: Vec<ClaimOutcome>,
    /// Audits of the correct core (empty without the audit column).
    pub audit: Vec<AuditCell>,
    /// Wall time of each claim (suite order), then of the audits.
    pub claim_seconds: Vec<f64>,
    pub audit_seconds: f64,
}

/// Number of progress ticks of a matrix over `faults` (units of every claim run, plus
/// one per audit): an upper bound, reached through [`Progress::Skipped`] when rows
/// stop early.
pub fn tick_count(claims: &[Claim], faults: &[Fault], cfg: &MatrixConfig) -> usize {
    let row = |f: Fault| -> usize {
        let units: usize = claims
            .iter()
            .filter(|c| f.affects(c.system.name()))
            .map(|c| plan::unit_count(c, cfg.profile))
            .sum();
        units + audit_mechanisms(f, cfg).len()
    };
    row(Fault::None) + faults.iter().map(|&f| row(f)).sum::<usize>()
}

/// The audited mechanisms of a row (all three for the fault-free run).
pub(super) fn audit_mechanisms(f: Fault, cfg: &MatrixConfig) -> Vec<AuditSystem> {
    if cfg.audit && f.affects(AUDIT_SYSTEM) {
        vec![
            AuditSystem::RfDpgd,
            AuditSystem::FeatureLearningSecondLayer,
            AuditSystem::FeatureLearningFirstLayer,
        ]
    } else {
        vec![]
    }
}

/// The estimated cost of the audit column, `None` without one.
fn audit_cost(cfg: &MatrixConfig) -> Option<f64> {
    let n = audit_mechanisms(Fault::None, cfg).len();
    (n > 0).then(|| order::audit_cost(n, cfg.audit_trials))
}

/// The audits of a row (mechanisms in parallel; each audit's runs are too, and its
/// streams depend on its mechanism and run index only).
fn run_audits(
    f: Fault,
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Vec<AuditCell> {
    let recipe = f.recipe();
    audit_mechanisms(f, cfg)
        .into_par_iter()
        .map(|system| {
            let mut a = AuditConfig::new(system, cfg.audit_epsilon, cfg.audit_delta);
            a.trials = cfg.audit_trials;
            a.engine = AuditEngine::Direct;
            let cell = match audit::run_audit(&a, cfg.seed, &recipe) {
                Ok(r) => {
                    let claimed = r.epsilon_achieved.unwrap_or(cfg.audit_epsilon);
                    AuditCell {
                        mechanism: system.name(),
                        epsilon_lower_bound: Some(r.epsilon_lower_bound),
                        epsilon_claimed: claimed,
                        violation: r.epsilon_lower_bound > claimed,
                        error: None,
                    }
                }
                Err(e) => AuditCell {
                    mechanism: system.name(),
                    epsilon_lower_bound: None,
                    epsilon_claimed: cfg.audit_epsilon,
                    violation: false,
                    error: Some(e.to_string()),
                },
            };
            progress(Progress::Tick);
            cell
        })
        .collect()
}

/// One claim on the core of `f`. Under a result cache ([`execute::cache`]) the units of
/// a faulty core are keyed by the fault's name, so they are never served to a run of the
/// papers' recipe (nor to another fault's); the fault-free run shares `paper` entries
/// with `dpclaims run`.
fn run_claim(
    claim: &Claim,
    f: Fault,
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<ClaimOutcome, RunError> {
    let tick = || progress(Progress::Tick);
    let run = || crate::pipeline::run_claim(claim, cfg.profile, cfg.seed, &f.recipe(), &tick);
    if f.is_none() {
        execute::cache::as_recipe("paper", run)
    } else {
        execute::cache::as_recipe(&format!("fault/{}", f.name()), run)
    }
}

/// The fault-free outcomes of the suite and audits (what each row is compared with).
/// Claims run one after the other (each claim's units in parallel), so each one's wall
/// time is its own.
pub fn baseline(
    claims: &[Claim],
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Baseline, MatrixError> {
    progress(Progress::Fault(Fault::None));
    let mut outcomes = Vec::with_capacity(claims.len());
    let mut claim_seconds = Vec::with_capacity(claims.len());
    for c in claims {
        let start = Instant::now();
        outcomes.push(run_claim(c, Fault::None, cfg, progress)?);
        claim_seconds.push(start.elapsed().as_secs_f64());
    }
    let start = Instant::now();
    let audit = run_audits(Fault::None, cfg, progress);
    let audit_seconds = start.elapsed().as_secs_f64();
    if let Some(a) = audit.iter().find(|a| a.error.is_some()) {
        return Err(MatrixError::BaselineAudit {
            mechanism: a.mechanism,
            message: a.error.clone().unwrap_or_default(),
        });
    }
    Ok(Baseline {
        outcomes,
        audit,
        claim_seconds,
        audit_seconds,
    })
}

fn row(
    info: &FaultInfo,
    cells: Vec<Cell>,
    audit: Vec<AuditCell>,
    audit_not_run: bool,
    first_detector: Option<String>,
    seconds: f64,
) -> FaultRow {
    let ids = |keep: &dyn Fn(&Cell) -> bool| -> Vec<String> {
        cells
            .iter()
            .filter(|c| keep(c))
            .map(|c| c.claim.clone())
            .collect()
    };
    let audit_violation = audit.iter().any(|a| a.violation);
    let audit_error = audit.iter().any(|a| a.error.is_some());
    let mut detected_by = ids(&|c| c.status.detects());
    if audit_violation || audit_error {
        detected_by.push(AUDIT.into());
    }
    FaultRow {
        name: info.name,
        description: info.description,
        violates: info.violates,
        breaks_privacy: info.breaks_privacy,
        systems: info.systems,
        detected: !detected_by.is_empty(),
        detected_by,
        first_detector,
        verdict_by: ids(&|c| c.status == CellStatus::Verdict),
        flip_by: ids(&|c| c.flips > 0),
        error_by: ids(&|c| c.status == CellStatus::Error),
        snapshot_only_by: ids(&|c| c.status == CellStatus::Snapshot),
        not_run: ids(&|c| c.status == CellStatus::NotRun),
        verdict_changes: cells.iter().map(|c| c.verdict_changes).sum(),
        audit_violation,
        audit_error,
        audit_not_run,
        audit,
        cells,
        seconds,
    }
}

/// One row: the claims (and audits) `fault` reaches on the faulty core, compared with
/// `base` (the fault-free outcomes of `claims`, in the same order). Without
/// [`MatrixConfig::all`] the detectors run one at a time, cheapest first
/// ([`order::detectors`]), until one detects the fault; the rest are not run. With it
/// every reachable claim runs (in parallel), then the audits.
pub fn fault_row(
    claims: &[Claim],
    base: &[ClaimOutcome],
    fault: Fault,
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> FaultRow {
    let info = fault.info().expect("a catalogued fault");
    let start = Instant::now();
    progress(Progress::Fault(fault));
    let reaches = |d: &Detector| match *d {
        Detector::Claim(i) => fault.affects(claims[i].system.name()),
        Detector::Audit => !audit_mechanisms(fault, cfg).is_empty(),
    };
    let detectors: Vec<Detector> = order::detectors(claims, cfg.profile, audit_cost(cfg))
        .into_iter()
        .filter(reaches)
        .collect();
    let mut cells: Vec<Cell> = base
        .iter()
        .map(|b| Cell::empty(&b.claim.id, CellStatus::Skipped))
        .collect();
    let mut audit = vec![];
    let mut audit_not_run = false;
    if cfg.all {
        let outs: Vec<Option<Result<ClaimOutcome, RunError>>> = claims
            .par_iter()
            .map(|c| {
                fault
                    .affects(c.system.name())
                    .then(|| run_claim(c, fault, cfg, progress))
            })
            .collect();
        for (i, out) in outs.into_iter().enumerate() {
            if let Some(out) = out {
                cells[i] = compare(&base[i], out);
            }
        }
        audit = run_audits(fault, cfg, progress);
    } else {
        let mut detected = false;
        for d in &detectors {
            match (*d, detected) {
                (Detector::Claim(i), false) => {
                    cells[i] = compare(&base[i], run_claim(&claims[i], fault, cfg, progress));
                    detected = cells[i].status.detects();
                }
                (Detector::Audit, false) => {
                    audit = run_audits(fault, cfg, progress);
                    detected = audit.iter().any(AuditCell::detects);
                }
                (Detector::Claim(i), true) => {
                    cells[i].status = CellStatus::NotRun;
                    progress(Progress::Skipped(plan::unit_count(&claims[i], cfg.profile)));
                }
                (Detector::Audit, true) => {
                    audit_not_run = true;
                    progress(Progress::Skipped(audit_mechanisms(fault, cfg).len()));
                }
            }
        }
    }
    let first_detector = detectors.iter().find_map(|d| match *d {
        Detector::Claim(i) => cells[i].status.detects().then(|| cells[i].claim.clone()),
        Detector::Audit => audit
            .iter()
            .any(AuditCell::detects)
            .then(|| AUDIT.to_string()),
    });
    let r = row(
        info,
        cells,
        audit,
        audit_not_run,
        first_detector,
        start.elapsed().as_secs_f64(),
    );
    progress(Progress::Done(&r));
    r
}

/// The whole matrix over `faults` (the catalogue order is kept): one fault-free run,
/// then one row per fault compared with it.
pub fn run_matrix(
    claims: &[Claim],
    faults: &[Fault],
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Matrix, MatrixError> {
    let start = Instant::now();
    let base = baseline(claims, cfg, progress)?;
    let baseline_seconds = start.elapsed().as_secs_f64();
    let baseline_unexpected = base.outcomes.iter().flat_map(|o| o.problems()).collect();
    let rows: Vec<FaultRow> = faults
        .iter()
        .map(|&f| fault_row(claims, &base.outcomes, f, cfg, progress))
        .collect();
    let order = order::detectors(claims, cfg.profile, audit_cost(cfg))
        .into_iter()
        .map(|d| match d {
            Detector::Claim(i) => DetectorCost {
                detector: claims[i].id.clone(),
                units: plan::unit_count(&claims[i], cfg.profile),
                estimated_seconds: order::claim_cost(&claims[i], cfg.profile),
                baseline_seconds: base.claim_seconds[i],
            },
            Detector::Audit => DetectorCost {
                detector: AUDIT.into(),
                units: base.audit.len(),
                estimated_seconds: audit_cost(cfg).unwrap_or(0.0),
                baseline_seconds: base.audit_seconds,
            },
        })
        .collect();
    Ok(Matrix {
        profile: cfg.profile,
        seed: cfg.seed,
        all: cfg.all,
        claims: claims.iter().map(|c| c.id.clone()).collect(),
        order,
        detected: rows.iter().filter(|r| r.detected).count(),
        total: rows.len(),
        faults: rows,
        baseline_audit: base.audit,
        baseline_unexpected,
        baseline_seconds,
        seconds: start.elapsed().as_secs_f64(),
    })
}
