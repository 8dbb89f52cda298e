//! `dpclaims plan`: the estimated work and memory of each claim, without running
//! anything ([`crate::plan::estimate`]); exit status 2 when `run` would refuse them.
use super::conclude::BudgetArgs;
use super::paths::default_paths;
use crate::pipeline::estimate::gb;
use crate::pipeline::ClaimEstimate;
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
    /// A report directory whose verdicts.json gives the expected work of sequential
    /// sweeps: the replicates each row of that run stopped at.
    #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("reports"))]
    pub last: PathBuf,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Time one calibration unit of each external core that declares no `cost_s`: this
    /// starts the core. Without it `plan` never starts a core (a spec may name any
    /// program) and counts such a core's units at a nominal 1 ms each, and says so.
    #[arg(long)]
    pub calibrate: bool,
    /// Seed of the calibration unit.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The result cache whose history prices claims by their last run (an external
    /// core's seconds per unit, its start-up, the accountants of its expressions).
    #[arg(long, value_name = "DIR", env = "DPCLAIMS_CACHE", default_value_os_t = crate::project::path(crate::pipeline::cache::DEFAULT_DIR))]
    pub cache: PathBuf,
    /// Price claims from their models (and `cost_s`) only: ignore the cache's history.
    #[arg(long)]
    pub no_history: bool,
}

/// (claim id, sweep, variant) -> replicates a point drawn in the recorded run: the most
/// any row of the group stopped at (a group draws until its last row is decided).
type Drawn = std::collections::BTreeMap<(String, String, String), usize>;

/// What the recorded run in `dir` drew, at `profile` (empty when there is none, or it
/// is of another profile or unreadable: the expected work is then not stated).
fn last_run(dir: &std::path::Path, profile: Profile, claims: &[spec::Claim]) -> Drawn {
    let mut out = Drawn::new();
    let Ok(bytes) = std::fs::read(dir.join("verdicts.json")) else {
        return out;
    };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return out;
    };
    if v["profile"].as_str() != Some(&profile.to_string()) {
        return out;
    }
    for c in v["claims"].as_array().into_iter().flatten() {
        let id = c["id"].as_str().unwrap_or_default();
        let Some(claim) = claims.iter().find(|k| k.id == id) else {
            continue;
        };
        for r in c["results"].as_array().into_iter().flatten() {
            let (Some(p), Some(var), Some(n)) = (
                r["prediction"].as_str(),
                r["variant"].as_str(),
                r["replicates"].as_u64(),
            ) else {
                continue;
            };
            let Some(pred) = claim.predictions.iter().find(|q| q.name == p) else {
                continue;
            };
            let e = out
                .entry((id.to_string(), pred.sweep.clone(), var.to_string()))
                .or_insert(0);
            *e = (*e).max(n as usize);
        }
    }
    out
}

/// Expected CPU seconds of a claim from a recorded run: each group's share at the
/// replicates it drew then (`None` when the record lacks a group).
fn expected_cpu(e: &ClaimEstimate, drawn: &Drawn) -> Option<f64> {
    let mut cpu = e.cpu_seconds - e.groups.iter().map(|g| g.cpu_seconds).sum::<f64>();
    for g in &e.groups {
        let n = *drawn.get(&(e.claim.clone(), g.sweep.clone(), g.variant.clone()))?;
        cpu += g.cpu_seconds * n.min(g.max) as f64 / g.max.max(1) as f64;
    }
    Some(cpu)
}

pub fn run(a: &PlanArgs) -> anyhow::Result<ExitCode> {
    let claims = spec::load_claims(&default_paths(&a.paths)?)?;
    let crate::pipeline::estimate::Estimated {
        limits,
        claims: est,
        refused,
    } = crate::pipeline::estimate::estimate(
        &claims,
        a.profile,
        a.seed,
        &a.budget.budget(),
        a.calibrate,
        (!a.no_history).then_some(a.cache.as_path()),
    )?;
    let drawn = last_run(&a.last, a.profile, &claims);
    let expected: Vec<Option<f64>> = est.iter().map(|e| expected_cpu(e, &drawn)).collect();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "profile": a.profile,
                "threads": limits.threads,
                "limits": {"max_hours": limits.max_seconds / 3600.0,
                           "max_memory_gb": limits.max_bytes / 1e9},
                "claims": est,
                "cost_basis": claims.iter().map(|c| (c.id.clone(), c.system.cost_basis())).collect::<std::collections::BTreeMap<_, _>>(),
                "expected_cpu_seconds_from_last_run": expected,
                "total_wall_hours": est.iter().map(|e| e.wall_seconds).sum::<f64>() / 3600.0,
                "refused": refused,
            }))?
        );
    } else {
        for (e, x) in est.iter().zip(&expected) {
            println!("{}", crate::report::terminal_text(&claim_line(e)));
            let claim = claims.iter().find(|c| c.id == e.claim);
            // A core priced from its history: the history's line says the basis (the
            // system's own line would call the mean a calibration unit).
            let from_history = e.measured.is_some()
                && !a.calibrate
                && claim.is_some_and(|c| c.system.wants_cost_measurement());
            if let Some(b) = claim
                .filter(|_| !from_history)
                .and_then(|c| c.system.cost_basis())
            {
                println!("{:<28} cost: {}", "", crate::report::terminal_text(&b));
            }
            if let Some(m) = &e.measured {
                let label = if from_history { "cost" } else { "measured" };
                println!("{:<28} {label}: {}", "", crate::report::terminal_text(m));
            }
            let work = format!(
                "{:<28} work: {}: {}",
                "", e.work_driver.field, e.work_driver.detail
            );
            println!("{}", crate::report::terminal_text(&work));
            if e.first_look_units < e.units {
                let seq = format!(
                    "{:<28} sequential: cpu {} if every row decides at its first look, {} if every group runs to its maximum{}",
                    "",
                    duration(e.first_look_cpu_seconds),
                    duration(e.cpu_seconds),
                    x.map(|c| format!("; expected {} (the replicates of the run in {})", duration(c), a.last.display()))
                        .unwrap_or_default()
                );
                println!("{}", crate::report::terminal_text(&seq));
            }
        }
        let total: f64 = est.iter().map(|e| e.wall_seconds).sum();
        let first: f64 = est.iter().map(|e| e.first_look_cpu_seconds).sum();
        let worst: f64 = est.iter().map(|e| e.cpu_seconds).sum();
        let exp: Option<f64> = expected.iter().copied().sum();
        let work = format!(
            "work (cpu, one thread): {} if every row decides at its first look, {} worst case{}",
            duration(first),
            duration(worst),
            exp.map(|c| format!(
                ", {} expected from the run in {}",
                duration(c),
                a.last.display()
            ))
            .unwrap_or_default()
        );
        println!("{}", crate::report::terminal_text(&work));
        println!(
            "{} claims, profile {}: wall {} on {} threads (limit {}), largest claim memory {} (limit {})",
            est.len(),
            a.profile,
            duration(total),
            limits.threads,
            duration(limits.max_seconds),
            gb(est.iter().map(|e| e.memory_bytes).fold(0.0, f64::max)),
            gb(limits.max_bytes),
        );
    }
    if let Some(why) = refused {
        anyhow::bail!("{why}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A claim's estimate on one line, its times as [`duration`] writes them.
fn claim_line(e: &ClaimEstimate) -> String {
    let units = if e.units.is_finite() && e.units.abs() < 1e7 {
        format!("{}", e.units)
    } else {
        format!("{:e}", e.units)
    };
    format!(
        "{:<28} {:>10} units  cpu {:>9}  wall {:>9} on {} threads  memory {:>10} (largest unit {})",
        e.claim,
        units,
        duration(e.cpu_seconds),
        duration(e.wall_seconds),
        e.threads,
        gb(e.memory_bytes),
        gb(e.max_unit_bytes),
    )
}

/// A time in the unit that fits it: "0.042 s", "12.3 s", "5.9 min", "2.35 h", "24.0 h", and
/// "1.20e5 h" for the absurd (a NaN or an infinity as such).
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return format!("{seconds} s");
    }
    let s = seconds.max(0.0);
    if s < 1.0 {
        format!("{s:.3} s")
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else if s < 3600.0 * 10.0 {
        format!("{:.2} h", s / 3600.0)
    } else if s < 3600.0 * 100.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s < 3600.0 * 1e4 {
        format!("{:.0} h", s / 3600.0)
    } else {
        format!("{:.2e} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn times_in_the_unit_that_fits() {
        assert_eq!(duration(0.0421), "0.042 s");
        assert_eq!(duration(12.34), "12.3 s");
        assert_eq!(duration(354.0), "5.9 min");
        assert_eq!(duration(1270.8), "21.2 min");
        assert_eq!(duration(8460.0), "2.35 h");
        assert_eq!(duration(86400.0), "24.0 h");
        assert_eq!(duration(3600.0 * 1234.4), "1234 h");
        assert_eq!(duration(3600.0 * 2e5), "2.00e5 h");
        assert_eq!(duration(f64::INFINITY), "inf s");
    }
}
