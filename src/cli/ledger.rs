//! The registration ledger at the command line ([`crate::spec::ledger`]): the check every
//! run makes before it computes, the entries `accept` writes (registration, amendments,
//! the verdicts that moved), and `dpclaims ledger backfill`, which rebuilt the entries of
//! the claims that had results before the ledger existed from git history.
use crate::spec::judged;
use crate::spec::ledger::{self, Amendment, Change, Entry, Move, Registration};
use crate::spec::{self, Claim};
use clap::{Args, Subcommand};
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

/// `accept --amend "why" [CLAIM...]`: records the unrecorded judged changes of the named
/// claims (default: every claim that has any) as amendments with `reason`.
pub fn amend(reason: &str, ids: &[String], baseline: &Path) -> anyhow::Result<()> {
    let reason = reason.trim();
    if reason.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
        anyhow::bail!("--amend needs a reason in words (what changed after results, and why)");
    }
    let claims = claims_by_id()?;
    for id in ids {
        if !claims.contains_key(id) {
            anyhow::bail!(
                "--amend: no claim `{}` in the project's claims/",
                crate::report::terminal_text(id)
            );
        }
    }
    let mut recorded = 0;
    for (id, c) in &claims {
        if !ids.is_empty() && !ids.contains(id) {
            continue;
        }
        let Some(mut e) = ledger::load(baseline, id).map_err(|e| anyhow::anyhow!(e))? else {
            if !ids.is_empty() {
                anyhow::bail!(
                    "--amend: claim `{id}` has no accepted results yet (no ledger entry): its \
                     spec is still a draft, nothing to amend"
                );
            }
            continue;
        };
        let now = ledger::fields(c).map_err(|e| anyhow::anyhow!(e))?;
        let changes = judged::diff(&e.judged, &now);
        if changes.is_empty() {
            if !ids.is_empty() {
                anyhow::bail!("--amend: claim `{id}` has no judged change to record");
            }
            continue;
        }
        for ch in &changes {
            println!("amendment of {id}: {}", Change::from(ch.clone()).line(70));
        }
        e.amendments.push(Amendment {
            date: ledger::today(),
            // Starts with "uncommitted": `accept` fills in its verdicts (on_accept).
            commit: uncommitted(),
            reason: reason.to_string(),
            changes: changes.into_iter().map(Change::from).collect(),
            moved: None,
            verdicts_note: "set when the amended claim's next results are accepted".into(),
        });
        e.judged = now;
        save(baseline, &e)?;
        recorded += 1;
    }
    if recorded == 0 {
        anyhow::bail!("--amend: no claim has a judged change to record");
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
            let changes = judged::diff(&e.judged, &now);
            if !changes.is_empty() {
                anyhow::bail!("{}", ledger::refusal(id, &changes));
            }
            // Only an amendment recorded by `accept --amend` waits for its results; a
            // back-filled one whose verdicts history cannot tell stays so.
            if let Some(last) = e
                .amendments
                .last_mut()
                .filter(|a| a.moved.is_none() && a.commit.starts_with("uncommitted"))
            {
                let read =
                    |p: &Path| crate::fsio::read_string(p, crate::fsio::InputKind::Snapshot).ok();
                let moves = match (read(target), read(pending)) {
                    (Some(old), Some(new)) => crate::report::baseline::verdict_moves(&old, &new),
                    _ => None,
                };
                if let Some(m) = moves {
                    last.moved = Some(moves_of(m));
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
        } => backfill(baseline, *force, claims),
    }
}

fn show(baseline: &Path) -> anyhow::Result<ExitCode> {
    let claims = claims_by_id()?;
    let mut open = 0;
    for (id, c) in &claims {
        match ledger::load(baseline, id).map_err(|e| anyhow::anyhow!(e))? {
            None => println!("{id}: no accepted results (not registered)"),
            Some(e) => {
                println!(
                    "{id}: registered {} ({}), {} amendment(s)",
                    e.registered.date,
                    e.registered.commit,
                    e.amendments.len()
                );
                for am in &e.amendments {
                    let moved = match am.verdict_moved() {
                        Some(true) => "a verdict moved",
                        Some(false) => "no verdict moved",
                        None => "verdicts not known",
                    };
                    println!(
                        "  {} {}: {} field(s), {moved}: {}",
                        am.date,
                        am.commit,
                        am.changes.len(),
                        crate::report::terminal_text(&am.reason)
                    );
                }
                let now = ledger::fields(c).map_err(|e| anyhow::anyhow!(e))?;
                let changes = judged::diff(&e.judged, &now);
                if !changes.is_empty() {
                    open += 1;
                    println!("  NOT RECORDED:");
                    for ch in changes {
                        println!("    {}", Change::from(ch).line(70));
                    }
                }
            }
        }
    }
    Ok(if open == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The stdout of `git <args>` in the project root, if it succeeds.
fn git(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(crate::project::path("."))
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The text of `path` at `commit`, if it exists there.
fn at(commit: &str, path: &str) -> Option<String> {
    git(&["show", &format!("{commit}:{path}")])
}

/// The blob id of `path` at `commit`.
fn blob(commit: &str, path: &str) -> Option<String> {
    git(&["rev-parse", &format!("{commit}:{path}")]).map(|s| s.trim().to_string())
}

/// The judged fields of the claim at `commit`, its premises read from the paper's
/// registry at the same commit.
fn fields_at(commit: &str, spec_path: &str, paper: &str) -> Option<BTreeMap<String, String>> {
    let text = at(commit, spec_path)?;
    let mut f = judged::judged_fields(&text).ok()?;
    let names = ledger::under_names(&f);
    if !names.is_empty() && !paper.is_empty() {
        let sc_path = format!("scorecards/{paper}.yaml");
        if let Some(reg) = at(commit, &sc_path)
            .and_then(|t| spec::registry::parse(&t, Path::new(&sc_path), paper).ok())
        {
            for (n, t) in ledger::premise_text(&reg, &names) {
                f.insert(format!("premise[{n}]"), t);
            }
        }
    }
    Some(f)
}

fn backfill(baseline: &Path, force: bool, only: &[String]) -> anyhow::Result<ExitCode> {
    let claims = claims_by_id()?;
    let root = crate::project::path(".");
    let rel = |p: &Path| -> String {
        let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let r = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        abs.strip_prefix(&r)
            .unwrap_or(&abs)
            .to_string_lossy()
            .into_owned()
    };
    for (id, c) in &claims {
        if !only.is_empty() && !only.contains(id) {
            continue;
        }
        if !force && ledger::file(baseline, id).exists() {
            println!("{id}: has an entry (--force to rebuild)");
            continue;
        }
        let spec_path = rel(&c.file);
        let snap_path = rel(&crate::report::baseline::snapshot_file(baseline, id));
        let sc_path = format!("scorecards/{}.yaml", c.paper);
        let mut paths = vec![spec_path.as_str(), snap_path.as_str()];
        if !c.paper.is_empty() {
            paths.push(&sc_path);
        }
        let mut args = vec![
            "log",
            "--reverse",
            "--format=%H%x09%h%x09%cd%x09%s",
            "--date=format:%Y-%m-%d %H:%M",
            "--",
        ];
        args.extend(paths.iter().copied());
        let Some(log) = git(&args) else {
            anyhow::bail!(
                "backfill needs git history (`git log` failed in {})",
                root.display()
            );
        };
        let commits: Vec<(String, String, String, String)> = log
            .lines()
            .filter_map(|l| {
                let mut it = l.splitn(4, '\t');
                Some((
                    it.next()?.to_string(),
                    it.next()?.to_string(),
                    it.next()?.to_string(),
                    it.next().unwrap_or("").to_string(),
                ))
            })
            .collect();
        // Registration: the first commit holding the spec (its predictions were committed
        // before its results: every later judged change is listed, and where no baseline
        // snapshot existed yet the amendment says that history cannot tell whether results
        // had been seen).
        let Some(start) = commits
            .iter()
            .position(|(h, ..)| blob(h, &spec_path).is_some())
        else {
            println!("{id}: no commit holds its spec: not registered");
            continue;
        };
        let (h0, s0, d0, _) = &commits[start];
        let Some(mut state) = fields_at(h0, &spec_path, &c.paper) else {
            println!("{id}: its spec at {s0} does not parse: not registered");
            continue;
        };
        let mut entry = Entry {
            claim: id.clone(),
            registered: Registration {
                commit: s0.clone(),
                date: d0.clone(),
                note: "back-filled from git history: the first commit holding the spec".into(),
            },
            amendments: vec![],
            judged: BTreeMap::new(),
        };
        // Each amendment's commit index, to find when its results were accepted.
        let mut at_index: Vec<usize> = Vec::new();
        for (i, (h, s, d, subject)) in commits.iter().enumerate().skip(start + 1) {
            let Some(f) = fields_at(h, &spec_path, &c.paper) else {
                continue;
            };
            let changes = judged::diff(&state, &f);
            if changes.is_empty() {
                continue;
            }
            entry.amendments.push(Amendment {
                date: d.clone(),
                commit: s.clone(),
                reason: format!("from the commit message (back-filled): {subject}"),
                changes: changes.into_iter().map(Change::from).collect(),
                moved: None,
                verdicts_note: String::new(),
            });
            at_index.push(i);
            state = f;
        }
        // Whether a verdict moved: the snapshot before the amending commit against the
        // first snapshot accepted at or after it, up to and including the next
        // amendment's commit (then the two changes' effects are not told apart, and the
        // note says so).
        for k in 0..entry.amendments.len() {
            let i = at_index[k];
            let end = at_index.get(k + 1).map(|n| n + 1).unwrap_or(commits.len());
            let parent = format!("{}^", commits[i].0);
            let before_blob = blob(&parent, &snap_path);
            let accepted = (i..end).find(|&j| blob(&commits[j].0, &snap_path) != before_blob);
            let am = &mut entry.amendments[k];
            match (accepted, at(&parent, &snap_path)) {
                (Some(j), Some(old)) => {
                    let new = at(&commits[j].0, &snap_path).unwrap_or_default();
                    match crate::report::baseline::verdict_moves(&old, &new) {
                        Some(m) => {
                            am.moved = Some(moves_of(m));
                            am.verdicts_note = if j == i {
                                "the baseline snapshot before this commit against the one it accepted".into()
                            } else if at_index.get(k + 1) == Some(&j) {
                                format!(
                                    "the baseline snapshot before this commit against the one accepted with the next change ({}): the two changes' effects are not told apart",
                                    commits[j].1
                                )
                            } else {
                                format!(
                                    "the baseline snapshot before this commit against the one accepted at {}",
                                    commits[j].1
                                )
                            };
                        }
                        None => {
                            am.verdicts_note =
                                "history cannot say: a snapshot of that time does not parse".into()
                        }
                    }
                }
                (None, Some(_)) => {
                    am.moved = Some(vec![]);
                    am.verdicts_note = format!(
                        "the baseline snapshot did not change from this commit to {}: history shows no verdict moving with it (a snapshot accepted in an earlier commit than the spec change would not be seen; the reason may say more)",
                        if end < commits.len() { commits[end - 1].1.clone() } else { "the back-fill".into() }
                    );
                }
                _ => {
                    am.verdicts_note = "history cannot say: no baseline snapshot before this \
                         commit (a change before the first accepted results; whether a run had \
                         been seen is not recorded)"
                        .into()
                }
            }
        }
        entry.judged = state;
        let live = ledger::fields(c).map_err(|e| anyhow::anyhow!(e))?;
        let open = judged::diff(&entry.judged, &live).len();
        save(baseline, &entry)?;
        println!(
            "{id}: registered {} ({}), {} amendment(s){}",
            entry.registered.date,
            entry.registered.commit,
            entry.amendments.len(),
            if open > 0 {
                format!("; {open} judged change(s) in the working tree not recorded")
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
