//! Scorecards in the registration ledger. A scorecard decides how a paper's results are
//! counted: which checks a result reads, what could make it fail and the control a holds
//! must catch, its key number, the hypotheses it inherits, which results are declared not
//! checkable or not testable ([`crate::spec::judged::SCORECARD_JUDGED`]). Those parts are
//! registered beside the claims' (`<baseline>/ledger/scorecard-<paper>.yaml`) when results
//! are first accepted; a later change is an amendment, refused by `run` until
//! `dpclaims accept --amend "why" scorecard-<paper>` records it, and listed on the
//! scorecard's details page and counted in its box.
use super::backfill::{at, blob, git};
use super::{save, uncommitted};
use crate::report::scorecard::Scorecard;
use crate::spec::judged;
use crate::spec::ledger::{self, Amendment, Change, Entry, Registration};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The ledger id of a scorecard file: `scorecard-<file stem>` (its page's name).
pub fn id_of(file: &Path) -> String {
    format!(
        "scorecard-{}",
        file.file_stem().unwrap_or_default().to_string_lossy()
    )
}

/// The scorecards of `dir` (`*.yaml`), by ledger id.
pub fn in_dir(dir: &Path) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for e in rd {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "yaml") && p.is_file() {
            out.insert(id_of(&p), p);
        }
    }
    Ok(out)
}

/// The project's scorecards, by ledger id.
pub fn project() -> anyhow::Result<BTreeMap<String, PathBuf>> {
    in_dir(&crate::project::path("scorecards"))
}

/// The judged fields of a scorecard file.
pub fn fields(file: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let text = crate::fsio::read_string(file, crate::fsio::InputKind::Spec)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    judged::scorecard_fields(text.strip_prefix('\u{feff}').unwrap_or(&text))
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))
}

/// Attaches each loaded scorecard's ledger entry, and refuses (every scorecard and field
/// named) when a registered scorecard has a judged change its ledger does not record.
pub fn attach(cards: &mut [Scorecard], baseline: &Path) -> anyhow::Result<()> {
    let mut refused = Vec::new();
    for card in cards.iter_mut() {
        let id = id_of(&card.file);
        let Some(e) = ledger::load(baseline, &id).map_err(|e| anyhow::anyhow!(e))? else {
            continue;
        };
        let changes = judged::diff(&e.judged, &fields(&card.file)?);
        if !changes.is_empty() {
            refused.push(ledger::refusal(&id, &changes));
        }
        card.ledger = Some(Box::new(e));
    }
    if !refused.is_empty() {
        anyhow::bail!("{}", refused.join("\n"));
    }
    Ok(())
}

/// `accept`: registers every project scorecard that has no entry yet (its counting is
/// fixed from the first accepted results on), and refuses when a registered one has an
/// unrecorded judged change (before anything is accepted).
pub fn check_before_accept(baseline: &Path) -> anyhow::Result<()> {
    let mut refused = Vec::new();
    for (id, file) in project()? {
        if let Some(e) = ledger::load(baseline, &id).map_err(|e| anyhow::anyhow!(e))? {
            let changes = judged::diff(&e.judged, &fields(&file)?);
            if !changes.is_empty() {
                refused.push(ledger::refusal(&id, &changes));
            }
        }
    }
    if !refused.is_empty() {
        anyhow::bail!("{}", refused.join("\n"));
    }
    Ok(())
}

/// After results are accepted: registers the scorecards that have no entry.
pub fn register_new(baseline: &Path) -> anyhow::Result<()> {
    for (id, file) in project()? {
        if ledger::load(baseline, &id)
            .map_err(|e| anyhow::anyhow!(e))?
            .is_some()
        {
            continue;
        }
        let e = Entry {
            claim: id.clone(),
            registered: Registration {
                commit: uncommitted(),
                date: ledger::today(),
                note: "first results accepted".into(),
            },
            amendments: vec![],
            judged: fields(&file)?,
        };
        save(baseline, &e)?;
        println!("registered {id}: how it counts results is in the ledger from now on");
    }
    Ok(())
}

/// `accept --amend`: records the unrecorded judged changes of the named scorecards (all
/// when `ids` names none of them and `all` is set). Returns how many were recorded.
pub fn amend(reason: &str, ids: &[String], all: bool, baseline: &Path) -> anyhow::Result<usize> {
    let mut recorded = 0;
    for (id, file) in project()? {
        if !(ids.contains(&id) || all) {
            continue;
        }
        let Some(mut e) = ledger::load(baseline, &id).map_err(|e| anyhow::anyhow!(e))? else {
            if ids.contains(&id) {
                anyhow::bail!(
                    "--amend: scorecard `{id}` has no ledger entry yet (registered when results \
                     are first accepted): nothing to amend"
                );
            }
            continue;
        };
        let now = fields(&file)?;
        let changes = judged::diff(&e.judged, &now);
        if changes.is_empty() {
            if ids.contains(&id) {
                anyhow::bail!("--amend: scorecard `{id}` has no judged change to record");
            }
            continue;
        }
        super::record(baseline, &mut e, now, changes, reason, NOTE)?;
        recorded += 1;
    }
    Ok(recorded)
}

/// What a scorecard amendment moves: how results are counted, not a claim's verdict.
const NOTE: &str = "a change to how the paper's results are counted (no claim's verdict \
    moves with it; the claims' own amendments are on their pages)";

/// `ledger show`: one line per scorecard and its amendments; the number with changes
/// not recorded.
pub fn show(baseline: &Path) -> anyhow::Result<usize> {
    let mut open = 0;
    for (id, file) in project()? {
        let entry = ledger::load(baseline, &id).map_err(|e| anyhow::anyhow!(e))?;
        let now = match &entry {
            Some(_) => Some(fields(&file)?),
            None => None,
        };
        open += usize::from(super::show_entry(&id, entry.as_ref(), now.as_ref(), false));
    }
    Ok(open)
}

/// `ledger backfill`: each project scorecard's entry from git history — registered at its
/// first commit, every later judged change an amendment with its commit message.
pub fn backfill(baseline: &Path, force: bool, only: &[String]) -> anyhow::Result<()> {
    for (id, file) in project()? {
        if !only.is_empty() && !only.contains(&id) {
            continue;
        }
        if !force && ledger::file(baseline, &id).exists() {
            println!("{id}: has an entry (--force to rebuild)");
            continue;
        }
        let path = format!(
            "scorecards/{}",
            file.file_name().unwrap_or_default().to_string_lossy()
        );
        let Some(log) = git(&[
            "log",
            "--reverse",
            "--format=%H%x09%h%x09%cd%x09%s",
            "--date=format:%Y-%m-%d %H:%M",
            "--",
            &path,
        ]) else {
            anyhow::bail!("backfill needs git history (`git log` failed)");
        };
        let parsed = |h: &str| at(h, &path).and_then(|t| judged::scorecard_fields(&t).ok());
        let mut entry: Option<Entry> = None;
        for l in log.lines() {
            let mut it = l.splitn(4, '\t');
            let (Some(h), Some(s), Some(d)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let subject = it.next().unwrap_or("");
            if blob(h, &path).is_none() {
                continue;
            }
            let Some(f) = parsed(h) else { continue };
            match &mut entry {
                None => {
                    entry = Some(Entry {
                        claim: id.clone(),
                        registered: Registration {
                            commit: s.to_string(),
                            date: d.to_string(),
                            note: "back-filled from git history: the first commit holding \
                                   the scorecard"
                                .into(),
                        },
                        amendments: vec![],
                        judged: f,
                    })
                }
                Some(e) => {
                    let changes = judged::diff(&e.judged, &f);
                    if changes.is_empty() {
                        continue;
                    }
                    e.amendments.push(Amendment {
                        date: d.to_string(),
                        commit: s.to_string(),
                        reason: format!("from the commit message (back-filled): {subject}"),
                        changes: changes.into_iter().map(Change::from).collect(),
                        moved: None,
                        verdicts_note: NOTE.into(),
                    });
                    e.judged = f;
                }
            }
        }
        let Some(e) = entry else {
            println!("{id}: no commit holds it: not registered");
            continue;
        };
        let open = judged::diff(&e.judged, &fields(&file)?).len();
        save(baseline, &e)?;
        println!(
            "{id}: registered {} ({}), {} amendment(s){}",
            e.registered.date,
            e.registered.commit,
            e.amendments.len(),
            if open > 0 {
                format!("; {open} judged change(s) in the working tree not recorded")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
