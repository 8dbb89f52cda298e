//! `dpclaims ledger backfill`: the entries of the claims that had results before the
//! ledger existed, rebuilt from git history (registration at the spec's first commit,
//! every later judged change an amendment whose reason is its commit message, the
//! verdicts it moved read from the baseline snapshots around it).
use super::{claims_by_id, moves_of, save};
use crate::spec;
use crate::spec::judged;
use crate::spec::ledger::{self, Amendment, Change, Entry, Registration};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// The stdout of `git <args>` in the project root, if it succeeds.
pub(super) fn git(args: &[&str]) -> Option<String> {
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
pub(super) fn at(commit: &str, path: &str) -> Option<String> {
    git(&["show", &format!("{commit}:{path}")])
}

/// The blob id of `path` at `commit`.
pub(super) fn blob(commit: &str, path: &str) -> Option<String> {
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

pub(super) fn backfill(baseline: &Path, force: bool, only: &[String]) -> anyhow::Result<ExitCode> {
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
