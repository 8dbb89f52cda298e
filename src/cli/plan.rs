//! `dpclaims plan`: the estimated work and memory of each claim, without running
//! anything ([`crate::plan::estimate`]); exit status 2 when `run` would refuse them.
use super::conclude::BudgetArgs;
use super::run::default_paths;
use crate::plan::estimate::{self, ClaimEstimate};
use crate::spec::{self, Profile};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Claim files, ids (claims/<id>.yaml) or directories (default: claims/).
    pub paths: Vec<PathBuf>,
    /// Profile: quick (CI scale) or full (paper scale).
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

pub fn run(a: &PlanArgs) -> anyhow::Result<ExitCode> {
    let claims = spec::load_claims(&default_paths(&a.paths)?)?;
    let limits = a.budget.limits()?;
    let est: Vec<ClaimEstimate> = claims
        .iter()
        .map(|c| estimate::estimate_claim(c, a.profile, limits.threads))
        .collect();
    let verdict = estimate::check(&est, &limits, 1.0, 1.0);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "profile": a.profile,
                "threads": limits.threads,
                "limits": {"max_hours": limits.max_seconds / 3600.0,
                           "max_memory_gb": limits.max_bytes / 1e9},
                "claims": est,
                "total_wall_hours": est.iter().map(|e| e.wall_seconds).sum::<f64>() / 3600.0,
                "refused": verdict.as_ref().err().map(|e| e.to_string()),
            }))?
        );
    } else {
        for e in &est {
            println!("{e}");
            println!(
                "{:<28} work: {}: {}",
                "", e.work_driver.field, e.work_driver.detail
            );
        }
        let total: f64 = est.iter().map(|e| e.wall_seconds).sum();
        println!(
            "{} claims, profile {}: wall {} on {} threads (limit {}), largest claim memory {} (limit {})",
            est.len(),
            a.profile,
            estimate::hours(total),
            limits.threads,
            estimate::hours(limits.max_seconds),
            estimate::gb(est.iter().map(|e| e.memory_bytes).fold(0.0, f64::max)),
            estimate::gb(limits.max_bytes),
        );
    }
    verdict?;
    Ok(ExitCode::SUCCESS)
}
