//! The fault matrix: the claim suite (and direct-engine privacy audits) run once on the
//! correct core and once per fault, compared cell by cell.
//!
//! A cell (fault × claim) is
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
//! * `skipped` — the fault cannot reach the claim's system ([`super::FaultInfo::systems`];
//!   `tests/faults.rs` checks the declaration), so the fault-free outcome stands.
//!
//! Each row runs the suite through the door every run uses — [`execute::run_claim`] with
//! the fault's [`super::Fault::recipe`] instead of [`crate::train::Recipe::PAPER`] — and
//! the audit column runs [`crate::privacy::audit::run_audit`] with it and the direct
//! engine (the real training loop) on the three audited mechanisms, correctly
//! configured (exact calibration, kappa = 2, standard clipping; the first layer against
//! its own exact GDP epsilon, which Algorithm 1 as written does not account): a violation
//! is an audited lower bound above the epsilon the mechanism claims.
//!
//! A fault is *detected* when some cell is `verdict`, `error` or `snapshot`, or the audit
//! shows a violation (or cannot run).
use super::{Fault, FaultInfo};
use crate::execute::{self, RunError};
use crate::fit::Verdict;
use crate::judge::ClaimOutcome;
use crate::plan;
use crate::privacy::audit::{self, AuditConfig, AuditEngine, AuditSystem};
use crate::report::snapshot::snapshot;
use crate::spec::{Claim, Profile};
use rayon::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Instant;

/// The system name of the audit mechanisms (faults that reach it get an audit column).
const AUDIT_SYSTEM: &str = "privacy_audit";

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
}

impl Default for MatrixConfig {
    /// Quick profile, seed 0, audits of 20 000 runs per data set at (2, 1e-5).
    fn default() -> Self {
        Self {
            profile: Profile::Quick,
            seed: 0,
            audit: true,
            audit_trials: 20_000,
            audit_epsilon: 2.0,
            audit_delta: 1e-5,
        }
    }
}

/// What a fault did to one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    Unchanged,
    Snapshot,
    Verdict,
    Error,
    Skipped,
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
    /// The symbol of the Markdown matrix: **V** a flip, v only changes to or from
    /// inconclusive, **E** error, s snapshot only, · unchanged, – skipped.
    pub fn symbol(&self) -> &'static str {
        match self.status {
            CellStatus::Unchanged => "·",
            CellStatus::Snapshot => "s",
            CellStatus::Verdict if self.flips > 0 => "**V**",
            CellStatus::Verdict => "v",
            CellStatus::Error => "**E**",
            CellStatus::Skipped => "–",
        }
    }
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

/// One row of the matrix.
#[derive(Clone, Debug, Serialize)]
pub struct FaultRow {
    pub name: &'static str,
    pub description: &'static str,
    pub violates: &'static str,
    pub breaks_privacy: bool,
    pub systems: &'static [&'static str],
    /// Claims that detect the fault (verdict, error or snapshot), plus `audit` on a
    /// violation, in suite order.
    pub detected_by: Vec<String>,
    /// Claims with a changed verdict.
    pub verdict_by: Vec<String>,
    /// Claims with a holds <-> refuted flip (a subset of `verdict_by`).
    pub flip_by: Vec<String>,
    /// Claims that could not run.
    pub error_by: Vec<String>,
    /// Claims whose snapshot changed with the same verdicts.
    pub snapshot_only_by: Vec<String>,
    /// Total number of changed verdicts.
    pub verdict_changes: usize,
    pub audit_violation: bool,
    /// Some audit could not run (a diverged run): detection by error.
    pub audit_error: bool,
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
    pub claims: Vec<String>,
    pub faults: Vec<FaultRow>,
    pub detected: usize,
    pub total: usize,
    /// Audits of the correct core (no violation expected).
    pub baseline_audit: Vec<AuditCell>,
    /// Problems of the fault-free run (uncaught controls, refutations without a
    /// finding; the matrix compares against the fault-free run; normally empty).
    pub baseline_unexpected: Vec<String>,
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
    /// Faults nothing else detects.
    pub sole: usize,
}

impl ClaimWork {
    fn rank(&self) -> (usize, usize, usize, usize) {
        (
            self.flips + self.errors,
            self.border,
            self.snapshot_only,
            self.sole,
        )
    }
}

/// Progress events (the library does no I/O; the CLI draws a bar from them).
pub enum Progress<'a> {
    /// Starting the fault-free run (`Fault::None`) or a fault's row.
    Fault(Fault),
    /// One work unit or one audit finished.
    Tick,
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

/// Number of progress ticks of a matrix over `faults` (units of every claim run, plus
/// one per audit).
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
fn audit_mechanisms(f: Fault, cfg: &MatrixConfig) -> Vec<AuditSystem> {
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

fn run_audits(
    f: Fault,
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Vec<AuditCell> {
    audit_mechanisms(f, cfg)
        .into_iter()
        .map(|system| {
            let mut a = AuditConfig::new(system, cfg.audit_epsilon, cfg.audit_delta);
            a.trials = cfg.audit_trials;
            a.engine = AuditEngine::Direct;
            let cell = match audit::run_audit(&a, cfg.seed, &f.recipe()) {
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

/// Claims in parallel (each claim's units are parallel too); results in suite order.
fn run_claims(
    claims: &[Claim],
    f: Fault,
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Vec<Option<Result<ClaimOutcome, RunError>>> {
    let tick = || progress(Progress::Tick);
    let recipe = f.recipe();
    claims
        .par_iter()
        .map(|c| {
            f.affects(c.system.name())
                .then(|| execute::run_claim(c, cfg.profile, cfg.seed, &recipe, &tick))
        })
        .collect()
}

fn compare(base: &ClaimOutcome, out: Option<Result<ClaimOutcome, RunError>>) -> Cell {
    let claim = base.claim.id.clone();
    let mut cell = Cell {
        claim,
        status: CellStatus::Skipped,
        verdict_changes: 0,
        flips: 0,
        changes: vec![],
        snapshot_changes: 0,
        error: None,
    };
    let out = match out {
        None => return cell,
        Some(Err(e)) => {
            cell.status = CellStatus::Error;
            cell.error = Some(e.to_string());
            return cell;
        }
        Some(Ok(o)) => o,
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

fn row(info: &FaultInfo, cells: Vec<Cell>, audit: Vec<AuditCell>, seconds: f64) -> FaultRow {
    let ids = |s: CellStatus| -> Vec<String> {
        cells
            .iter()
            .filter(|c| c.status == s)
            .map(|c| c.claim.clone())
            .collect()
    };
    let audit_violation = audit.iter().any(|a| a.violation);
    let audit_error = audit.iter().any(|a| a.error.is_some());
    let mut detected_by: Vec<String> = cells
        .iter()
        .filter(|c| c.status.detects())
        .map(|c| c.claim.clone())
        .collect();
    if audit_violation || audit_error {
        detected_by.push("audit".into());
    }
    FaultRow {
        name: info.name,
        description: info.description,
        violates: info.violates,
        breaks_privacy: info.breaks_privacy,
        systems: info.systems,
        detected: !detected_by.is_empty(),
        detected_by,
        verdict_by: ids(CellStatus::Verdict),
        flip_by: cells
            .iter()
            .filter(|c| c.flips > 0)
            .map(|c| c.claim.clone())
            .collect(),
        error_by: ids(CellStatus::Error),
        snapshot_only_by: ids(CellStatus::Snapshot),
        verdict_changes: cells.iter().map(|c| c.verdict_changes).sum(),
        audit_violation,
        audit_error,
        audit,
        cells,
        seconds,
    }
}

/// The fault-free outcomes of the suite (what each row is compared with).
pub fn baseline(
    claims: &[Claim],
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(Vec<ClaimOutcome>, Vec<AuditCell>), MatrixError> {
    progress(Progress::Fault(Fault::None));
    let outs = run_claims(claims, Fault::None, cfg, progress)
        .into_iter()
        .map(|o| o.expect("the correct core reaches every system"))
        .collect::<Result<Vec<_>, _>>()?;
    let audits = run_audits(Fault::None, cfg, progress);
    if let Some(a) = audits.iter().find(|a| a.error.is_some()) {
        return Err(MatrixError::BaselineAudit {
            mechanism: a.mechanism,
            message: a.error.clone().unwrap_or_default(),
        });
    }
    Ok((outs, audits))
}

/// One row: the suite on the core with `fault`, compared with `base`.
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
    let outs = run_claims(claims, fault, cfg, progress);
    let cells = base.iter().zip(outs).map(|(b, o)| compare(b, o)).collect();
    let audit = run_audits(fault, cfg, progress);
    let r = row(info, cells, audit, start.elapsed().as_secs_f64());
    progress(Progress::Done(&r));
    r
}

/// The whole matrix over `faults` (the catalogue order is kept).
pub fn run_matrix(
    claims: &[Claim],
    faults: &[Fault],
    cfg: &MatrixConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Matrix, MatrixError> {
    let start = Instant::now();
    let (base, baseline_audit) = baseline(claims, cfg, progress)?;
    let baseline_unexpected = base.iter().flat_map(|o| o.problems()).collect();
    let rows: Vec<FaultRow> = faults
        .iter()
        .map(|&f| fault_row(claims, &base, f, cfg, progress))
        .collect();
    Ok(Matrix {
        profile: cfg.profile,
        seed: cfg.seed,
        claims: claims.iter().map(|c| c.id.clone()).collect(),
        detected: rows.iter().filter(|r| r.detected).count(),
        total: rows.len(),
        faults: rows,
        baseline_audit,
        baseline_unexpected,
        seconds: start.elapsed().as_secs_f64(),
    })
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
                    if c.status.detects() && r.detected_by.len() == 1 {
                        w.sole += 1;
                    }
                }
                w
            })
            .collect()
    }

    /// `reports/FAULTS.md` (deterministic: no timings).
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# dpclaims — fault matrix\n");
        let _ = writeln!(
            s,
            "*Generated by `dpclaims faults` (profile `{}`, seed {}). Do not edit.*\n",
            self.profile, self.seed
        );
        let _ = writeln!(
            s,
            "Each fault of the catalogue (`src/faults/mod.rs`) is injected into the training \
             core or the accountant, the claim suite is run on the faulty core and compared \
             with the fault-free run. **{}/{} faults are detected.**\n",
            self.detected, self.total
        );
        let _ = writeln!(
            s,
            "Cells: **V** a verdict flipped between holds and refuted, v a verdict moved to \
             or from inconclusive (either way `dpclaims run` exits 1), **E** the claim could \
             not run (exit 2), s only the rounded snapshot numbers changed (the insta test \
             fails, the verdicts do not), · unchanged, – skipped (the fault cannot reach the \
             claim's system; checked by `tests/faults.rs`). Audit: direct-engine audits of \
             the correctly configured mechanisms (rf-dpgd and the blog's second layer at \
             eps = 2, delta = 1e-5; the blog's first layer against its own exact GDP \
             epsilon); **viol.** means an audited lower bound above the claimed epsilon, \
             **E** a run that diverged.\n"
        );
        // Matrix table: columns numbered, legend below.
        let _ = write!(s, "| fault |");
        for i in 0..self.claims.len() {
            let _ = write!(s, " {} |", i + 1);
        }
        let _ = writeln!(s, " audit | detected |");
        let _ = write!(s, "|---|");
        for _ in &self.claims {
            let _ = write!(s, ":-:|");
        }
        let _ = writeln!(s, ":-:|:-:|");
        for r in &self.faults {
            let _ = write!(s, "| [`{}`](#{}) |", r.name, r.name);
            for c in &r.cells {
                let _ = write!(s, " {} |", c.symbol());
            }
            let audit = if r.audit.is_empty() {
                "–"
            } else if r.audit_violation {
                "**viol.**"
            } else if r.audit.iter().any(|a| a.error.is_some()) {
                "**E**"
            } else {
                "ok"
            };
            let _ = writeln!(
                s,
                " {audit} | {} |",
                if r.detected { "yes" } else { "**NO**" }
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "Columns:\n");
        for (i, id) in self.claims.iter().enumerate() {
            let _ = writeln!(s, "{}. [`{id}`]({id}.md)", i + 1);
        }
        let _ = writeln!(s);

        let _ = writeln!(s, "## Which claims do the work\n");
        let _ = writeln!(
            s,
            "Numbers of faults. A flip (holds <-> refuted) or an error is a robust \
             detection; a change to or from inconclusive means the prediction sat near the \
             edge of its tolerance; a snapshot-only change fails the insta test but no \
             verdict.\n"
        );
        let _ = writeln!(
            s,
            "| claim | verdict flip or error | to/from inconclusive only | snapshot only | sole detector |"
        );
        let _ = writeln!(s, "|---|:-:|:-:|:-:|:-:|");
        let mut work = self.claim_work();
        work.sort_by_key(|w| std::cmp::Reverse(w.rank()));
        for w in work {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} |",
                w.claim,
                w.flips + w.errors,
                w.border,
                w.snapshot_only,
                w.sole
            );
        }
        let audit_hits = self
            .faults
            .iter()
            .filter(|r| r.audit_violation || r.audit_error)
            .count();
        let audit_sole = self
            .faults
            .iter()
            .filter(|r| r.detected_by == ["audit"])
            .count();
        let _ = writeln!(
            s,
            "| audit (direct engine): violation or error | {audit_hits} | — | — | {audit_sole} |\n"
        );

        let _ = writeln!(s, "## Fault-free audits\n");
        for a in &self.baseline_audit {
            let _ = writeln!(s, "* {}", audit_line(a));
        }
        if !self.baseline_unexpected.is_empty() {
            let _ = writeln!(
                s,
                "\n**The fault-free run has problems of its own** (rows are \
                 compared with the fault-free run):\n"
            );
            for u in &self.baseline_unexpected {
                let _ = writeln!(s, "* {u}");
            }
        }
        let _ = writeln!(s);

        let _ = writeln!(s, "## The faults\n");
        for r in &self.faults {
            let _ = writeln!(s, "### {}\n", r.name);
            let _ = writeln!(s, "{}.\n", capitalise(r.description));
            let _ = writeln!(s, "* Violates: {}.", r.violates);
            let _ = writeln!(
                s,
                "* Breaks the privacy guarantee: {}.",
                if r.breaks_privacy { "yes" } else { "no" }
            );
            let _ = writeln!(s, "* Reaches: {}.", r.systems.join(", "));
            if !r.detected {
                let _ = writeln!(s, "* **Not detected by any claim or audit.**");
            }
            for c in r.cells.iter().filter(|c| c.status == CellStatus::Verdict) {
                let _ = writeln!(
                    s,
                    "* Verdicts changed in `{}` ({} changed, {} holds <-> refuted): {}.",
                    c.claim,
                    c.verdict_changes,
                    c.flips,
                    c.changes.join("; ")
                );
            }
            for c in r.cells.iter().filter(|c| c.status == CellStatus::Error) {
                let _ = writeln!(
                    s,
                    "* `{}` could not run: {}.",
                    c.claim,
                    c.error.as_deref().unwrap_or("")
                );
            }
            let snap: Vec<String> = r
                .cells
                .iter()
                .filter(|c| c.status == CellStatus::Snapshot)
                .map(|c| format!("`{}` ({} results)", c.claim, c.snapshot_changes))
                .collect();
            if !snap.is_empty() {
                let _ = writeln!(s, "* Snapshot only: {}.", snap.join(", "));
            }
            for a in &r.audit {
                let _ = writeln!(s, "* Audit: {}", audit_line(a));
            }
            let _ = writeln!(s);
        }
        s
    }
}

fn audit_line(a: &AuditCell) -> String {
    match (&a.error, a.epsilon_lower_bound) {
        (Some(e), _) => format!("{}: could not run ({e}).", a.mechanism),
        (None, Some(lb)) => format!(
            "{}: eps_LB = {} vs claimed {}{}.",
            a.mechanism,
            crate::report::fmt_num(lb),
            crate::report::fmt_num(a.epsilon_claimed),
            if a.violation {
                " — **violation**"
            } else {
                ""
            }
        ),
        (None, None) => format!("{}: no result.", a.mechanism),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
