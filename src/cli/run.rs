//! `dpclaims list` and `dpclaims run`.
use crate::report;
use crate::runner;
use crate::spec::{self, Profile};
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Claim files or directories (default: claims/).
    pub paths: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Claim files or directories (default: claims/).
    pub paths: Vec<PathBuf>,
    /// Profile: quick (CI scale) or full (paper scale).
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Master seed of every random stream.
    #[arg(long, default_value_t = 0, env = "DPCLAIMS_SEED")]
    pub seed: u64,
    /// Directory the reports are written to.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Print exactly one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Do not write reports.
    #[arg(long)]
    pub no_reports: bool,
}

fn default_paths(p: &[PathBuf]) -> Vec<PathBuf> {
    if p.is_empty() {
        vec![PathBuf::from("claims")]
    } else {
        p.to_vec()
    }
}

pub fn list(a: &ListArgs) -> anyhow::Result<ExitCode> {
    let claims = spec::load_claims(&default_paths(&a.paths))?;
    for c in &claims {
        println!("{:<28} {}\n{:<28} source: {}", c.id, c.title, "", c.source);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let claims = spec::load_claims(&default_paths(&a.paths))?;
    let total: usize = claims
        .iter()
        .map(|c| runner::unit_count(c, a.profile))
        .sum();
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(total as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:28} [{bar:40}] {pos}/{len} units, {elapsed} (eta {eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut outcomes = Vec::new();
    for c in &claims {
        bar.set_message(c.id.clone());
        let tick = || bar.inc(1);
        let o = runner::run_claim(c, a.profile, a.seed, &tick)?;
        if !a.json {
            bar.suspend(|| {
                for r in &o.results {
                    eprintln!(
                        "{:<26} {:<24} {:<14} {:<22} {:<12}{}",
                        c.id,
                        r.metric,
                        r.kind,
                        r.variant,
                        r.verdict.to_string(),
                        if r.verdict == r.expected {
                            String::new()
                        } else {
                            format!(" (expected {})", r.expected)
                        }
                    );
                }
            });
        }
        outcomes.push(o);
    }
    bar.finish_and_clear();
    if !a.no_reports {
        report::write_reports(&a.out, &outcomes)
            .map_err(|e| anyhow::anyhow!("writing reports to {}: {e}", a.out.display()))?;
    }
    let ok = outcomes.iter().all(|o| o.as_expected());
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report::run_json(a.profile, a.seed, &outcomes))?
        );
    } else {
        let n: usize = outcomes.iter().map(|o| o.results.len()).sum();
        let same: usize = outcomes
            .iter()
            .map(|o| o.results.iter().filter(|r| r.verdict == r.expected).count())
            .sum();
        println!(
            "{same}/{n} verdicts as expected ({} claims, profile {}, seed {}){}",
            outcomes.len(),
            a.profile,
            a.seed,
            if a.no_reports {
                String::new()
            } else {
                format!("; reports in {}", a.out.display())
            }
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
