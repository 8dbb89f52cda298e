//! GitHub Actions output of a run (when `GITHUB_ACTIONS=true`): workflow-command
//! annotations pointing at the prediction's line in the spec (`::error` for every case
//! that fails the run, `::warning` for inconclusive and out-of-regime verdicts), and the
//! job summary (Markdown appended to `$GITHUB_STEP_SUMMARY`).
use super::ci::{controls, failed_in_order, prediction_line, Case};
use super::summary::{claims_table_marked, verdicts_table};
use crate::judge::ClaimOutcome;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A user value in the job summary: on its line ([`crate::report::escape_controls`]),
/// no backtick to close the code span it sits in.
fn one_line(s: &str) -> String {
    crate::report::escape_controls(s).replace('`', "'")
}

/// A workflow command's message: `%`, CR and LF escaped (the runner's encoding).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value (file, title): also `:` and `,`.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `::<level> file=<file>,line=<line>,title=<title>::<message>`.
pub fn command(level: &str, file: &str, line: usize, title: &str, message: &str) -> String {
    format!(
        "::{level} file={},line={line},title={}::{}",
        escape_property(file),
        escape_property(title),
        escape_data(message)
    )
}

/// Appends `md` to the job summary (`$GITHUB_STEP_SUMMARY`) when the runner set one; a
/// failure is a warning (the verdicts and the exit status stand; the summary is a
/// convenience).
pub fn append_step_summary(md: &str) {
    use std::io::Write as _;
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    // Never waited on: `O_NONBLOCK` opens a FIFO without a reader at once, and anything
    // that is not a regular file is refused (the run checks this up front too).
    use std::os::unix::fs::OpenOptionsExt as _;
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .and_then(|mut f| {
            let t = f.metadata()?.file_type();
            if !t.is_file() {
                return Err(std::io::Error::other(format!(
                    "it is {}, not a regular file",
                    crate::fsio::describe(t)
                )));
            }
            f.write_all(md.as_bytes())
        });
    if let Err(e) = appended {
        crate::report::eprint_line(&format!(
            "warning: could not append the job summary to {}: {e}",
            std::path::Path::new(&path).display()
        ));
    }
}

/// A path as GitHub wants it in an annotation: relative to `$GITHUB_WORKSPACE` (the
/// checkout), whatever directory dpclaims ran in and however the path was given; as
/// given when there is no workspace or the file is outside it.
pub fn workspace_path(p: &std::path::Path) -> String {
    let ws = std::env::var_os("GITHUB_WORKSPACE").filter(|w| !w.is_empty());
    relative_to(p, ws.as_deref().map(std::path::Path::new))
}

/// [`workspace_path`] with the workspace given (`None`: the path as given).
pub fn relative_to(p: &std::path::Path, workspace: Option<&std::path::Path>) -> String {
    use std::path::{Component, PathBuf};
    let Some(ws) = workspace else {
        return p.display().to_string();
    };
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(p),
            Err(_) => return p.display().to_string(),
        }
    };
    // Lexical normalisation (`.` and `..`), on both sides.
    let norm = |q: &std::path::Path| {
        let mut out = PathBuf::new();
        for c in q.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out
    };
    let (abs, ws) = (norm(&abs), norm(ws));
    match abs.strip_prefix(&ws) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

/// The annotations of a run's cases: `::error` for each failed case, regressions first
/// ([`super::ci::failed_in_order`]), then `::warning` for each undecided one in case
/// order (`spec_texts`: the spec files' text by claim id; a claim without text, or a
/// prediction whose line is not found, points at line 1).
pub fn annotations(cases: &[Case], spec_texts: &BTreeMap<String, String>) -> Vec<String> {
    let at = |c: &Case| {
        let id = &c.outcome.claim.id;
        let file = workspace_path(&c.outcome.claim.file);
        let line = c
            .prediction
            .as_deref()
            .and_then(|p| spec_texts.get(id).map(|t| prediction_line(t, p)))
            .unwrap_or(1);
        (file, line, format!("dpclaims: {id} {}", c.name))
    };
    let mut out = Vec::new();
    for c in failed_in_order(cases) {
        let (file, line, title) = at(c);
        out.push(command("error", &file, line, &title, &c.message()));
    }
    for c in cases {
        if let Some(why) = c.undecided() {
            let (file, line, title) = at(c);
            out.push(command("warning", &file, line, &title, &why));
        }
    }
    out
}

/// The first line of a job summary whose run regressed: the main rows that held on the
/// baseline and no longer do, and how many negative controls moved with the main rows
/// that changed (None when no row held and no longer does).
pub fn regression_line(cases: &[Case]) -> Option<String> {
    let rows: Vec<&Case> = cases.iter().filter(|c| c.regressed()).collect();
    if rows.is_empty() {
        return None;
    }
    let moved: usize = cases
        .iter()
        .filter(|c| c.regression.is_some())
        .map(|c| c.consequences.len())
        .sum();
    let names: Vec<String> = rows
        .iter()
        .filter_map(|c| {
            let g = c.regression.as_ref()?;
            Some(format!(
                "`{}` `{}` ({} -> {})",
                one_line(&c.outcome.claim.id),
                one_line(&c.name),
                one_line(g.before.as_deref().unwrap_or("")),
                one_line(&g.after)
            ))
        })
        .collect();
    let n = rows.len();
    Some(format!(
        "**Regression of the core**: {n} main row{} that held on the baseline no longer {}: \
         {}{}. The core or the spec changed since the baseline.",
        if n == 1 { "" } else { "s" },
        if n == 1 { "does" } else { "do" },
        names.join(", "),
        if moved > 0 {
            format!(
                "; {} moved with the main rows that changed (under them in the failures)",
                controls(moved)
            )
        } else {
            String::new()
        }
    ))
}

/// The job summary: the regression when there is one, the run's conclusion, the
/// failures (one bullet per failed case, its reasons joined, regressions first with the
/// negative controls that moved with them under them), the claims in plain words and,
/// folded, every verdict (Markdown; ids are not links: the pages are artifacts).
pub fn step_summary(
    outcomes: &[ClaimOutcome],
    cases: &[Case],
    tally_line: &str,
    baseline_line: &str,
) -> String {
    let mut s = String::new();
    let (profile, seed) = outcomes
        .first()
        .map(|o| (o.profile.to_string(), o.seed))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "## dpclaims: {} claims, profile `{profile}`, seed {seed}\n",
        outcomes.len()
    );
    if let Some(line) = regression_line(cases) {
        let _ = writeln!(s, "{line}\n");
    }
    let _ = writeln!(s, "{tally_line}; {baseline_line}\n");
    let failed = failed_in_order(cases);
    if !failed.is_empty() {
        let _ = writeln!(s, "**Failures** ({}):\n", failed.len());
        for c in failed {
            // Each user value on its line (issue 58: a newline or carriage return in
            // `--out`, in the report path of the message, forged a summary line).
            let _ = writeln!(
                s,
                "* `{}` `{}`: {}",
                one_line(&c.outcome.claim.id),
                one_line(&c.name),
                one_line(&c.reasons())
            );
            for q in &c.consequences {
                let _ = writeln!(
                    s,
                    "  * moved with it, no failure of its own: `{}` (negative control): {}",
                    one_line(&q.name),
                    one_line(&q.what)
                );
            }
        }
        s.push('\n');
    }
    // A claim with a main row that held on the baseline and no longer does says so
    // first in its row of the table.
    let regressed: BTreeMap<String, String> = cases
        .iter()
        .filter(|c| c.regressed())
        .fold(BTreeMap::new(), |mut m, c| {
            m.entry(c.outcome.claim.id.clone())
                .or_insert_with(Vec::new)
                .push(format!("`{}`", one_line(&c.name)));
            m
        })
        .into_iter()
        .map(|(id, rows)| {
            (
                id,
                format!(
                    "**regressed against the baseline** ({} held there, not now); ",
                    rows.join(", ")
                ),
            )
        })
        .collect();
    s.push_str(&claims_table_marked(outcomes, false, &regressed));
    let _ = writeln!(
        s,
        "\n<details><summary>Every verdict</summary>\n\n{}\n</details>\n",
        verdicts_table(outcomes, false)
    );
    s
}

#[cfg(test)]
mod workspace_tests {
    use super::relative_to;
    use std::path::Path;

    #[test]
    fn annotation_paths_are_relative_to_the_workspace() {
        let ws = Some(Path::new("/home/runner/work/repo"));
        assert_eq!(
            relative_to(Path::new("/home/runner/work/repo/claims/a.yaml"), ws),
            "claims/a.yaml"
        );
        assert_eq!(
            relative_to(
                Path::new("/home/runner/work/repo/sub/../claims/./a.yaml"),
                ws
            ),
            "claims/a.yaml"
        );
        assert_eq!(
            relative_to(Path::new("/elsewhere/a.yaml"), ws),
            "/elsewhere/a.yaml"
        );
        assert_eq!(
            relative_to(Path::new("claims/a.yaml"), None),
            "claims/a.yaml"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{command, escape_data, escape_property};

    #[test]
    fn workflow_commands_escape_percent_line_breaks_and_property_separators() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a: b, c%"), "a%3A b%2C c%25");
        assert_eq!(
            command(
                "error",
                "claims/x,y.yaml",
                12,
                "dpclaims: x p/v",
                "line 1\nline 2"
            ),
            "::error file=claims/x%2Cy.yaml,line=12,title=dpclaims%3A x p/v::line 1%0Aline 2"
        );
        assert_eq!(
            command("warning", "claims/x.yaml", 1, "t", "out_of_regime: 0/3"),
            "::warning file=claims/x.yaml,line=1,title=t::out_of_regime: 0/3"
        );
    }
}
