//! The registration ledger at the command line ([`crate::spec::ledger`]): the check every
//! run makes before it computes, the entries `accept` writes (registration, amendments,
//! the verdicts that moved), and `dpclaims ledger backfill`, which rebuilt the entries of
//! the claims that had results before the ledger existed from git history.
use crate::spec::judged;
use crate::spec::ledger::{self, Amendment, Change, Entry, Move, Registration};
use crate::spec::{self, Claim};
use clap::{Args, Subcommand};

mod backfill;
pub mod scorecards;
use backfill::{backfill, git};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Attaches each claim's ledger entry, and refuses (exit 2, every claim and field named)
/// when a claim with accepted results has a judged field the ledger does not record.
pub fn attach(claims: &mut [Claim], baseline: &Path) -> anyhow::Result<()> {
    let mut refused = Vec::new();
    for c in claims.iter_mut() {
        let entry = ledger::load(baseline, &c.id).map_err(|e| anyhow::anyhow!(e))?;
        if let Some(e) = entry {
            let changes = ledger::unrecorded(c, &e).map_err(|e| anyhow::anyhow!(e))?;
            if !changes.is_empty() {
                refused.push(ledger::refusal(&c.id, &changes));
            }
            c.ledger = Some(Box::new(e));
        }
    }
    if !refused.is_empty() {
        anyhow::bail!("{}", refused.join("\n"));
    }
    Ok(())
}

/// Writes a ledger entry (atomically).
fn save(baseline: &Path, e: &Entry) -> anyhow::Result<()> {
    let f = ledger::file(baseline, &e.claim);
    if let Some(d) = f.parent() {
        std::fs::create_dir_all(d)?;
    }
    crate::report::write_atomic(&f, ledger::to_text(e).as_bytes())
        .map_err(|err| anyhow::anyhow!("writing {}: {err}", f.display()))
}

/// The project's claims, by id (for `accept`, which names claims by id).
fn claims_by_id() -> anyhow::Result<BTreeMap<String, Claim>> {
    let dir = crate::project::path("claims");
    if !dir.is_dir() {
        return Ok(BTreeMap::new());
    }
    Ok(spec::load_claims(&[dir])?
        .into_iter()
        .map(|c| (c.id.clone(), c))
        .collect())
}

/// `git rev-parse --short HEAD` in the project, if any.
fn head_commit() -> Option<String> {
    git(&["rev-parse", "--short", "HEAD"]).map(|s| s.trim().to_string())
}

fn uncommitted() -> String {
    match head_commit() {
        Some(h) => format!("uncommitted (after {h})"),
        None => "uncommitted".into(),
    }
}

/// Records `changes` (the judged fields of `e` that differ from `now`) as one amendment
/// with its reason, printed a line per field, and saves the entry.
fn record(
    baseline: &Path,
    e: &mut Entry,
    now: BTreeMap<String, String>,
    changes: Vec<judged::FieldChange>,
    reason: &str,
    verdicts_note: &str,
) -> anyhow::Result<()> {
    for ch in &changes {
        println!(
            "amendment of {}: {}",
            e.claim,
            Change::from(ch.clone()).line(70)
        );
    }
    e.amendments.push(Amendment {
        date: ledger::today(),
        commit: uncommitted(),
        reason: reason.to_string(),
        changes: changes.into_iter().map(Change::from).collect(),
        moved: None,
        verdicts_note: verdicts_note.into(),
    });
    e.judged = now;
    save(baseline, e)
}

/// `ledger show`'s lines for one claim or scorecard: its registration, one line per
/// amendment (with whether a verdict moved when `verdicts`), and the judged changes
/// `now` has that the entry does not record. True when there are such changes.
fn show_entry(
    id: &str,
    entry: Option<&Entry>,
    now: Option<&BTreeMap<String, String>>,
    verdicts: bool,
) -> bool {
    let (Some(e), Some(now)) = (entry, now) else {
        println!("{id}: no accepted results (not registered)");
        return false;
    };
    println!(
        "{id}: registered {} ({}), {} amendment(s)",
        e.registered.date,
        e.registered.commit,
        e.amendments.len()
    );
    for am in &e.amendments {
        let moved = match (verdicts, am.verdict_moved()) {
            (false, _) => String::new(),
            (true, Some(true)) => ", a verdict moved".into(),
            (true, Some(false)) => ", no verdict moved".into(),
            (true, None) => ", verdicts not known".into(),
        };
        println!(
            "  {} {}: {} field(s){moved}: {}",
            am.date,
            am.commit,
            am.changes.len(),
            crate::report::terminal_text(&am.reason)
        );
    }
    let changes = judged::diff(&e.judged, now);
    if changes.is_empty() {
        return false;
    }
    println!("  NOT RECORDED:");
    for ch in changes {
        println!("    {}", Change::from(ch).line(70));
    }
    true
}

/// `accept --amend "why" [CLAIM...]`: records the unrecorded judged changes of the named
/// claims (default: every claim that has any) as amendments with `reason`.
pub fn amend(reason: &str, ids: &[String], baseline: &Path) -> anyhow::Result<()> {
    let reason = reason.trim();
    if reason.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
        anyhow::bail!("--amend needs a reason in words (what changed after results, and why)");
    }
    let claims = claims_by_id()?;
    let cards = scorecards::project()?;
    for id in ids {
        if !claims.contains_key(id) && !cards.contains_key(id) {
            anyhow::bail!(
                "--amend: no claim `{}` in the project's claims/ (nor a scorecard \
                 `scorecard-<paper>` in its scorecards/)",
                crate::report::terminal_text(id)
            );
        }
    }
    let mut recorded = scorecards::amend(reason, ids, ids.is_empty(), baseline)?;
    // Named scorecards only: no claim is amended.
    let all = ids.is_empty();
    for (id, c) in &claims {
        if !all && !ids.contains(id) {
            continue;
        }
        let Some(mut e) = ledger::load(baseline, id).map_err(|e| anyhow::anyhow!(e))? else {
            if !all {
                anyhow::bail!(
                    "--amend: claim `{id}` has no accepted results yet (no ledger entry): its \
                     spec is still a draft, nothing to amend"
                );
            }
            continue;
        };
        let now = ledger::fields(c).map_err(|e| anyhow::anyhow!(e))?;
        let mut changes = judged::diff(&e.judged, &now);
        if changes.is_empty() {
            // No spec change, but the results waiting to be accepted move a verdict: a
            // change of the tool (its verdict rules or its engine) after results, recorded
            // like any other amendment.
            match tool_moves(id, baseline)? {
                Some(moves) => changes.push(tool_change(&moves)),
                None if !all => anyhow::bail!(
                    "--amend: claim `{id}` has no judged change to record (and no pending \
                     result of it moves a verdict)"
                ),
                None => continue,
            }
        }
        // Its commit starts with "uncommitted": `accept` fills in its verdicts (on_accept).
        record(
            baseline,
            &mut e,
            now,
            changes,
            reason,
            "set when the amended claim's next results are accepted",
        )?;
        recorded += 1;
    }
    if recorded == 0 {
        anyhow::bail!("--amend: no claim or scorecard has a judged change to record");
    }
    println!(
        "recorded {recorded} amendment(s) in {}; run the claim, then `dpclaims accept` its \
         results (the amendment learns whether a verdict moved)",
        baseline.join("ledger").display()
    );
    Ok(())
}

/// Before a pending snapshot of claim `id` enters the baseline: registers the claim
/// (first results) or fills in the verdicts its open amendment moved. Refuses when the
/// spec has a judged change the ledger does not record.
pub fn on_accept(
    id: &str,
    pending: &Path,
    target: &Path,
    baseline: &Path,
    claims: &BTreeMap<String, Claim>,
) -> anyhow::Result<()> {
    let Some(c) = claims.get(id) else {
        // A snapshot of a claim outside the project's claims/ (explicit paths): nothing
        // to register against.
        return Ok(());
    };
    let now = ledger::fields(c).map_err(|e| anyhow::anyhow!(e))?;
    match ledger::load(baseline, id).map_err(|e| anyhow::anyhow!(e))? {
        None => {
            let e = Entry {
                claim: id.to_string(),
                registered: Registration {
                    commit: uncommitted(),
                    date: ledger::today(),
                    note: "first results accepted".into(),
                },
                amendments: vec![],
                judged: now,
            };
            save(baseline, &e)?;
            println!("registered {id}: its judged parts are in the ledger from now on");
        }
        Some(mut e) => {
            check_accept(id, pending, target, baseline, claims)?;
            if let Some(last) = e.amendments.last_mut().filter(|a| waits(a)) {
                if let Some(m) = moves_between(target, pending) {
                    last.moved = Some(m);
                    last.verdicts_note = format!(
                        "the baseline before the amendment against the results accepted on {}",
                        ledger::today()
                    );
                    save(baseline, &e)?;
                }
            }
        }
    }
    Ok(())
}

/// What [`on_accept`] would refuse for this pending snapshot, checked before anything is
/// accepted: a judged change not recorded, or a verdict moved by the tool with no
/// amendment waiting.
pub fn check_accept(
    id: &str,
    pending: &Path,
    target: &Path,
    baseline: &Path,
    claims: &BTreeMap<String, Claim>,
) -> anyhow::Result<()> {
    let Some(c) = claims.get(id) else {
        return Ok(());
    };
    let Some(e) = ledger::load(baseline, id).map_err(|e| anyhow::anyhow!(e))? else {
        return Ok(());
    };
    let now = ledger::fields(c).map_err(|e| anyhow::anyhow!(e))?;
    let changes = judged::diff(&e.judged, &now);
    if !changes.is_empty() {
        anyhow::bail!("{}", ledger::refusal(id, &changes));
    }
    if !e.amendments.last().is_some_and(waits) {
        if let Some(why) = unrecorded_tool_change(id, pending, target) {
            anyhow::bail!("{why}");
        }
    }
    Ok(())
}

/// Whether an amendment waits for its results: only one recorded by `accept --amend`
/// does; a back-filled one whose verdicts history cannot tell stays so.
fn waits(a: &Amendment) -> bool {
    a.waits_for_results()
}

/// The field of a tool amendment: what changed is the build, not the spec.
pub const TOOL_FIELD: &str = "(the tool: verdict rules or engine; the spec is unchanged)";

/// The verdict moves of `id`'s pending results against its accepted ones (`None`: no
/// pending snapshot, or no verdict moves).
fn tool_moves(id: &str, baseline: &Path) -> anyhow::Result<Option<Vec<Move>>> {
    let pending = crate::report::pending::list(baseline, &[id.to_string()])?;
    let Some(p) = pending.first() else {
        return Ok(None);
    };
    Ok(moves_between(&p.target, &p.file).filter(|m| !m.is_empty()))
}

fn moves_between(accepted: &Path, pending: &Path) -> Option<Vec<Move>> {
    let read = |p: &Path| crate::fsio::read_string(p, crate::fsio::InputKind::Snapshot).ok();
    let (old, new) = (read(accepted)?, read(pending)?);
    crate::report::baseline::verdict_moves(&old, &new).map(moves_of)
}

fn tool_change(moves: &[Move]) -> judged::FieldChange {
    judged::FieldChange {
        field: TOOL_FIELD.into(),
        old: Some(format!("{} verdict(s) as accepted", moves.len())),
        // The commit column of the amendment names the build; a hash here would name a
        // build that the next edit of the verdict layer replaces.
        new: Some("the tool at this amendment's commit".into()),
    }
}

/// Why accepting `pending` over `target` needs `--amend`: the claim's spec is unchanged
/// (the caller checked) and no amendment waits for these results, yet a verdict moved —
/// the tool changed after results. `None`: no verdict moved.
pub fn unrecorded_tool_change(id: &str, pending: &Path, target: &Path) -> Option<String> {
    let moves = moves_between(target, pending).filter(|m| !m.is_empty())?;
    let list = moves
        .iter()
        .map(|m| {
            format!(
                "{} / {}: {} -> {}",
                m.prediction, m.variant, m.before, m.after
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(format!(
        "claim `{}`: its spec is unchanged but {} verdict(s) moved ({}): a change of the tool \
         (its verdict rules or engine) after results is an amendment too. Record why with \
         `dpclaims accept --amend \"<why>\" {}`, and it is shown on the claim's page and \
         scorecard (nothing was accepted)",
        crate::report::terminal_text(id),
        moves.len(),
        crate::report::terminal_text(&list),
        crate::report::terminal_text(id)
    ))
}

/// The rows of [`crate::report::baseline::verdict_moves`] as the ledger records them.
fn moves_of(m: Vec<(String, String, String, String)>) -> Vec<Move> {
    m.into_iter()
        .map(|(prediction, variant, before, after)| Move {
            prediction,
            variant,
            before,
            after,
        })
        .collect()
}

/// The claims of the project, for [`on_accept`].
pub fn project_claims() -> anyhow::Result<BTreeMap<String, Claim>> {
    claims_by_id()
}

#[derive(Args, Debug)]
pub struct LedgerArgs {
    #[command(subcommand)]
    pub what: LedgerCommand,
}

#[derive(Subcommand, Debug)]
pub enum LedgerCommand {
    /// List each claim's registration and amendments, and any judged change not yet
    /// recorded (exit 1 when there is one).
    Show {
        /// The baseline directory (its ledger/ holds the entries).
        #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("tests/snapshots"))]
        baseline: PathBuf,
    },
    /// Rebuild every claim's entry from git history (once, for claims whose results
    /// predate the ledger): registration at the first commit with a baseline snapshot,
    /// an amendment per later commit that changed a judged field, and whether a verdict
    /// moved, from the snapshots; where history cannot say, the entry says so.
    Backfill {
        #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("tests/snapshots"))]
        baseline: PathBuf,
        /// Overwrite existing entries.
        #[arg(long)]
        force: bool,
        /// Only these claims (default: every claim of the project).
        claims: Vec<String>,
    },
}

pub fn run(a: &LedgerArgs) -> anyhow::Result<ExitCode> {
    match &a.what {
        LedgerCommand::Show { baseline } => show(baseline),
        LedgerCommand::Backfill {
            baseline,
            force,
            claims,
        } => {
            let code = backfill(baseline, *force, claims)?;
            scorecards::backfill(baseline, *force, claims)?;
            Ok(code)
        }
    }
}

fn show(baseline: &Path) -> anyhow::Result<ExitCode> {
    let claims = claims_by_id()?;
    let mut open = 0;
    for (id, c) in &claims {
        let entry = ledger::load(baseline, id).map_err(|e| anyhow::anyhow!(e))?;
        let now = match &entry {
            Some(_) => Some(ledger::fields(c).map_err(|e| anyhow::anyhow!(e))?),
            None => None,
        };
        open += usize::from(show_entry(id, entry.as_ref(), now.as_ref(), true));
    }
    open += scorecards::show(baseline)?;
    Ok(if open == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
