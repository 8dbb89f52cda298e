//! `dpclaims check [PATH|ID...]`: every error of every spec at once, each with its file,
//! field and line:column (the library's [`crate::spec::check`]); on the project's claims
//! directory (no paths given) also what `run` checks before it computes: the scorecards
//! against the claims, and the registration ledger. Exit 2 if any. With
//! `--start-cores`, also what `run` finds only when it starts the cores: every external
//! core is started and greeted (its handshake's metrics against those the spec asks),
//! then stopped; no unit is sent.
use crate::spec::check::{check_paths, CheckReport};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Spec files, directories of specs, or ids of claims in ./claims/ (default: claims/).
    #[arg(value_name = "PATH|ID")]
    pub paths: Vec<PathBuf>,
    /// One JSON document on stdout: {ok, files, valid, errors: [{file, line, column, field,
    /// message}], placeholders, beyond_specs: [message]} (beyond_specs: what `run` would
    /// refuse in the scorecards or the ledger).
    #[arg(long)]
    pub json: bool,
    /// Also start every external core of the claims (this runs their commands), read its
    /// handshake and stop it, without sending a unit: a core that does not start, speaks
    /// another protocol, or no longer offers a metric the spec asks is reported as `run`
    /// would report it (in JSON under beyond_specs, with cores_started).
    #[arg(long)]
    pub start_cores: bool,
}

pub fn run(a: &CheckArgs) -> anyhow::Result<ExitCode> {
    let paths = if a.paths.is_empty() {
        let claims = crate::project::path("claims");
        if !claims.is_dir() {
            anyhow::bail!(
                "no claims/ here: pass claim files or ids (or `dpclaims init` a project)"
            );
        }
        vec![claims]
    } else {
        super::select::resolve(&a.paths)?
    };
    let report = check_paths(&paths);
    // What `run` checks before it computes, beyond the specs: the project's scorecards
    // against the claims, and the registration ledger (a judged change after results
    // that no amendment records). Only when every spec loads.
    let mut beyond: Vec<String> = Vec::new();
    if report.ok() && a.paths.is_empty() {
        beyond = run_checks();
    }
    // The claims, loaded once for the notes and the cores (every spec checked ok).
    let claims = report.ok().then(|| crate::spec::load_claims(&paths));
    if let Some(Ok(claims)) = &claims {
        for n in power_notes(claims) {
            crate::report::eprint_line(&n);
        }
    }
    let mut started = None;
    if let Some(claims) = claims.filter(|_| a.start_cores) {
        let (n, problems) = match claims {
            Ok(c) => start_cores(&c),
            Err(e) => (0, vec![format!("{e:#}")]),
        };
        started = Some(n);
        beyond.extend(problems);
    }
    if a.json {
        println!("{}", json(&report, &beyond, started));
    } else {
        for d in &report.errors {
            println!("{}", crate::report::terminal_text(&d.to_string()));
        }
        for d in &report.placeholders {
            println!("{d}");
        }
        if !report.placeholders.is_empty() {
            println!(
                "{} TODO placeholder{} left (not errors; a claim whose statement or quote is \
                 one is a draft: reported apart, never counted)",
                report.placeholders.len(),
                if report.placeholders.len() == 1 {
                    ""
                } else {
                    "s"
                }
            );
        }
        for b in &beyond {
            println!("{}", crate::report::terminal_text(b));
        }
        if report.ok() && beyond.is_empty() {
            println!(
                "ok: {} claim{} checked{}{}",
                report.files,
                if report.files == 1 { "" } else { "s" },
                if a.paths.is_empty() {
                    ", with the scorecards and the ledger"
                } else {
                    ""
                },
                match started {
                    None => String::new(),
                    Some(n) => format!(
                        "; the cores of {n} external claim{} started, every metric asked offered",
                        if n == 1 { "" } else { "s" }
                    ),
                }
            );
        } else if report.ok() {
            println!(
                "{} problem{} `run` would refuse (exit 2) beyond the specs",
                beyond.len(),
                if beyond.len() == 1 { "" } else { "s" }
            );
        } else {
            println!(
                "{} error{} in {} of {} spec file{}",
                report.errors.len(),
                if report.errors.len() == 1 { "" } else { "s" },
                report.bad_files(),
                report.files,
                if report.files == 1 { "" } else { "s" }
            );
        }
    }
    Ok(if report.ok() && beyond.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The checks `run` makes before computing that are not a spec's own: the scorecards of
/// the project against its claims, and the registration ledger of claims and scorecards.
/// Each problem as one message.
fn run_checks() -> Vec<String> {
    let mut out = Vec::new();
    let Ok(mut claims) = crate::spec::load_claims(&[crate::project::path("claims")]) else {
        return out;
    };
    let baseline = crate::project::path("tests/snapshots");
    if let Err(e) = super::ledger::attach(&mut claims, &baseline) {
        out.push(format!("{e:#}"));
    }
    match crate::pipeline::conclude::load_scorecards(&crate::project::path("scorecards"), &claims) {
        Ok(Some(mut sc)) => {
            if let Err(e) = super::ledger::scorecards::attach(&mut sc.cards, &baseline) {
                out.push(format!("{e:#}"));
            }
        }
        Ok(None) => {}
        Err(e) => out.push(format!("{e:#}")),
    }
    out
}

/// Most replicates a point of a fixed quick count that [`power_notes`] remarks on.
const FEW_REPLICATES: usize = 8;

/// Notes (not errors) on rows that are likely to come out inconclusive for want of
/// replicates: a mean over replicates (`over: means`) of a metric not declared exact,
/// judged on simultaneous intervals, at a fixed quick count of [`FEW_REPLICATES`] or
/// fewer. Such a row decides when the effect is large against its spread (an average of
/// many draws, as `init`'s example) and not otherwise; a sequential schedule draws more
/// only where a row is undecided (issue 59: a new user's run came out inconclusive with a
/// control uncaught at 8 replicates, and a full rerun was needed to learn it).
fn power_notes(claims: &[crate::spec::Claim]) -> Vec<String> {
    let mut out = Vec::new();
    for c in claims {
        for p in &c.predictions {
            let crate::spec::PredictionKind::Inequality {
                over: crate::spec::InequalityOver::Means { .. },
                ..
            } = p.kind
            else {
                continue;
            };
            if c.is_exact(&p.metric) {
                continue;
            }
            let r = c
                .sweep(&p.sweep)
                .profile(crate::spec::Profile::Quick)
                .replicates;
            if r.min == r.max && r.max <= FEW_REPLICATES {
                out.push(format!(
                    "note: {}: `{}` judges the mean of `{}` over {} replicates a point on simultaneous intervals: a mean with spread comparable to its margin comes out inconclusive at so few (the run's power line then says how many would decide it). `replicates: {{min: {}, max: {}}}` (sweeps.{}.quick; the full profile at least as many) draws more only where a row is undecided (claims/README.md, \"Sequential replicates\").",
                    crate::report::shown_path(&c.file),
                    p.name,
                    p.metric,
                    r.max,
                    r.max.max(2),
                    4 * r.max.max(2),
                    p.sweep
                ));
            }
        }
    }
    out
}

/// `--start-cores`: starts and greets every core of every external claim of `claims` as
/// `run` does before its first unit ([`crate::systems::System::prepare`]: the declared
/// files read, each command started, its handshake's metrics against the spec's), then
/// stops them. Returns the number of external claims and each failure, as `run` words
/// it, prefixed by the claim's file and id.
fn start_cores(claims: &[crate::spec::Claim]) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut problems = Vec::new();
    for c in claims
        .iter()
        .filter(|c| c.system.info().name == crate::systems::external::NAME)
    {
        n += 1;
        let greeted = c.system.prepare();
        c.system.release();
        if let Err(e) = greeted {
            problems.push(format!(
                "{}: claim `{}`: {e}",
                crate::report::shown_path(&c.file),
                c.id
            ));
        }
    }
    // Claims that run one command greeted one worker; it ends here.
    crate::systems::external::release_all();
    (n, problems)
}

fn json(r: &CheckReport, beyond: &[String], started: Option<usize>) -> String {
    serde_json::json!({
        "ok": r.ok() && beyond.is_empty(),
        "beyond_specs": beyond,
        "cores_started": started,
        "files": r.files,
        "valid": r.valid,
        "errors": r.errors,
        "placeholders": r.placeholders,
    })
    .to_string()
}
