//! `dpclaims accept` and `dpclaims review`: the pending snapshots a run kept
//! ([`crate::report::pending`]) enter the regression baseline, as with `cargo insta
//! accept` / `cargo insta review`.
use crate::report::pending;
use clap::Args;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct AcceptArgs {
    /// Claim ids whose pending snapshots to accept (default: every pending snapshot).
    pub claims: Vec<String>,
    /// The baseline directory the snapshots go to.
    #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("tests/snapshots"))]
    pub baseline: PathBuf,
    /// Record the judged changes of the named claims (default: every claim with one) as
    /// amendments after results, with this reason, in the ledger (`<baseline>/ledger/`):
    /// a run refuses a changed judged field of a claim with accepted results until then.
    #[arg(long, value_name = "WHY")]
    pub amend: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// Claim ids to review (default: every pending snapshot).
    pub claims: Vec<String>,
    /// The baseline directory the snapshots go to.
    #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("tests/snapshots"))]
    pub baseline: PathBuf,
    /// Accept every pending snapshot shown, without asking (for scripts).
    #[arg(long, conflicts_with = "reject_all")]
    pub accept_all: bool,
    /// Reject (delete) every pending snapshot shown, without asking.
    #[arg(long)]
    pub reject_all: bool,
}

pub fn accept(a: &AcceptArgs) -> anyhow::Result<ExitCode> {
    if let Some(why) = &a.amend {
        super::ledger::amend(why, &a.claims, &a.baseline)?;
        let has_pending = pending::list(&a.baseline, &[])?
            .iter()
            .any(|p| a.claims.is_empty() || a.claims.contains(&p.id));
        if !has_pending {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let all = pending::list(&a.baseline, &a.claims)?;
    if all.is_empty() {
        println!(
            "no pending snapshots in {} (a run keeps one per new or changed claim)",
            pending::dir().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    super::ledger::scorecards::check_before_accept(&a.baseline)?;
    let claims = super::ledger::project_claims()?;
    // Every refusal before anything is accepted: all or nothing.
    for p in &all {
        super::ledger::check_accept(&p.id, &p.file, &p.target, &a.baseline, &claims)?;
    }
    for p in &all {
        super::ledger::on_accept(&p.id, &p.file, &p.target, &a.baseline, &claims)?;
        pending::accept(p)?;
        println!("accepted {} -> {}", p.id, p.target.display());
    }
    super::ledger::scorecards::register_new(&a.baseline)?;
    Ok(ExitCode::SUCCESS)
}

pub fn review(a: &ReviewArgs) -> anyhow::Result<ExitCode> {
    let all = pending::list(&a.baseline, &a.claims)?;
    if all.is_empty() {
        println!("no pending snapshots in {}", pending::dir().display());
        return Ok(ExitCode::SUCCESS);
    }
    let interactive = !a.accept_all && !a.reject_all;
    if interactive && !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "review asks on a terminal; without one pass --accept-all or --reject-all \
             (or `dpclaims accept [CLAIM...]`)"
        );
    }
    super::ledger::scorecards::check_before_accept(&a.baseline)?;
    let claims = super::ledger::project_claims()?;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let (mut accepted, mut rejected, mut skipped) = (0, 0, 0);
    for p in &all {
        println!("{} ({})", p.id, p.target.display());
        for c in pending::changes(p)? {
            println!("    {c}");
        }
        let choice = if a.accept_all {
            'a'
        } else if a.reject_all {
            'r'
        } else {
            print!("  [a]ccept, [r]eject, [s]kip? ");
            std::io::stdout().flush()?;
            match lines.next() {
                Some(Ok(l)) => l.trim().chars().next().unwrap_or('s'),
                _ => 's',
            }
        };
        match choice {
            'a' | 'A' => {
                super::ledger::on_accept(&p.id, &p.file, &p.target, &a.baseline, &claims)?;
                pending::accept(p)?;
                accepted += 1;
                println!("  accepted");
            }
            'r' | 'R' => {
                pending::reject(p)?;
                rejected += 1;
                println!("  rejected");
            }
            _ => {
                skipped += 1;
                println!("  skipped (still pending)");
            }
        }
    }
    println!("{accepted} accepted, {rejected} rejected, {skipped} skipped");
    if accepted > 0 {
        super::ledger::scorecards::register_new(&a.baseline)?;
    }
    Ok(ExitCode::SUCCESS)
}
