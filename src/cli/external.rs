//! `dpclaims audit --system external --command "python3 core.py" [--param k=v ...]`:
//! the audit through the external protocol ([`crate::systems::external::audit`]).
use super::audit_args::AuditArgs;
use crate::systems::external::{audit, worker::CoreCommand};
use anyhow::{anyhow, bail};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

fn split<'a>(flag: &str, s: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim(), v.trim())),
        _ => bail!("--{flag} `{s}`: expected NAME=VALUE"),
    }
}

/// The planner's estimate of an external audit: two worlds of `trials` units each, every
/// unit costed as a unit of an external system (`systems::external`: 1 ms of the core's
/// time, its request and answer), plus the scores the bound sorts (8 bytes each, kept
/// with a copy). The core's own cost is unknown; this is a floor, enough to refuse
/// `--trials 1e14` as the built-in audit's huge trials are.
pub fn external_audit_cost(trials: usize) -> crate::systems::Cost {
    let units = 2.0 * trials as f64;
    crate::systems::Cost {
        seconds: units * 1e-3,
        bytes: units * 2.0 * 8.0,
    }
}

pub fn audit(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let e = &args.external;
    // The planner's limits before any core is started (as the built-in audit's).
    args.budget.budget().check_command(
        "audit",
        external_audit_cost(args.trials),
        args.trials as f64,
        "--trials",
        format!("trials = {} (two worlds of external units)", args.trials),
    )?;
    let Some(command) = &e.command else {
        bail!("--system external needs --command \"program args...\"");
    };
    let argv: Vec<String> = command.split_whitespace().map(String::from).collect();
    if argv.is_empty() {
        bail!("--command is empty");
    }
    let max = crate::spec::EXTERNAL_MAX_TIMEOUT_S;
    if !(e.timeout_s.is_finite() && e.timeout_s > 0.0 && e.timeout_s <= max) {
        bail!(
            "--timeout-s must be a number of seconds in (0, {max}], got {}",
            e.timeout_s
        );
    }
    let mut params = BTreeMap::new();
    for p in &e.params {
        let (k, v) = split("param", p)?;
        let x: f64 = v
            .parse()
            .map_err(|_| anyhow!("--param `{p}`: `{v}` is not a number"))?;
        if !x.is_finite() {
            bail!("--param `{p}`: not finite");
        }
        params.insert(k.to_string(), x);
    }
    let mut options = BTreeMap::new();
    for o in &e.options {
        let (k, v) = split("option", o)?;
        options.insert(k.to_string(), v.to_string());
    }
    let cfg = audit::ExternalAudit {
        command: CoreCommand {
            argv,
            dir: std::env::current_dir()?,
            timeout: Duration::from_secs_f64(e.timeout_s),
        },
        params,
        options,
        epsilon: args.epsilon,
        delta: args.delta,
        trials: args.trials,
        confidence: args.confidence,
    };
    let r = audit::run(&cfg, args.seed).map_err(|m| anyhow!("audit of `{command}`: {m}"))?;
    // Exit status 1 when the certified bound exceeds the claimed epsilon.
    let code = if r.epsilon_lower_bound > r.epsilon_claimed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(code);
    }
    println!(
        "audit of external core `{}`: epsilon_lower_bound = {:.4} vs claimed epsilon = {} \
         (delta = {}, confidence {})",
        r.command, r.epsilon_lower_bound, r.epsilon_claimed, r.delta, r.confidence
    );
    println!(
        "  {} runs per data set, {} measured: threshold {:.6}, TPR = {:.5} (>= {:.5}), \
         FPR = {:.5} (<= {:.5})",
        r.trials, r.measured, r.threshold, r.tpr, r.tpr_lower, r.fpr, r.fpr_upper
    );
    let e = &r.estimators;
    println!(
        "  estimators (each at confidence {:.4}): clopper-pearson {:.4}; gdp {}",
        e.clopper_pearson.confidence,
        e.clopper_pearson.epsilon_lower_bound,
        e.gdp
            .as_ref()
            .map_or("none (scores without spread)".into(), |g| format!(
                "{:.4} (mu >= {:.4}, normality KS p = {:.3})",
                g.epsilon_lower_bound, g.mu_lower, g.fit_p_value
            ))
    );
    if r.epsilon_lower_bound > r.epsilon_claimed {
        println!("  the lower bound EXCEEDS the claimed epsilon");
    }
    Ok(code)
}
