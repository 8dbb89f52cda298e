//! `system: external`: the `external:` block of a claim (and of its variants) validated
//! into an [`ExternalSystem`] (see [`crate::systems::external`]).
//!
//! Commands run in the spec file's directory, so `["python3", "core.py"]` finds
//! `core.py` next to the spec wherever `dpclaims` is started; a program path with a slash
//! (`bin/core.sh`) is taken relative to that directory too ([`worker`]).
//!
//! [`worker`]: crate::systems::external::worker
use super::ctx::Ctx;
use super::raw::RawClaim;
use super::SpecError;
use crate::systems::external::worker::CoreCommand;
use crate::systems::external::{ExternalSpec, ExternalSystem};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// Default time limit of one answer (seconds).
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;
/// Longest time limit accepted (a day): beyond, a typo.
pub const MAX_TIMEOUT_S: f64 = 86_400.0;

fn command(
    ctx: &Ctx,
    field: &str,
    argv: &[String],
    dir: &Path,
    timeout: Duration,
) -> Result<CoreCommand, SpecError> {
    if argv.is_empty() || argv[0].trim().is_empty() {
        return Err(ctx.err(
            field,
            "needs a program and its arguments, e.g. [\"python3\", \"core.py\"]",
        ));
    }
    if argv.iter().any(|a| a.contains('\0')) {
        return Err(ctx.err(field, "an argument contains a NUL byte"));
    }
    Ok(CoreCommand {
        argv: argv.to_vec(),
        dir: dir.to_path_buf(),
        timeout,
    })
}

/// The declared files of a core (`field` names them in errors), relative to `dir`: a
/// relative path without NUL bytes (read when the core is prepared,
/// [`crate::systems::external`]).
fn files(
    ctx: &Ctx,
    field: &str,
    names: &[String],
    dir: &Path,
) -> Result<Vec<std::path::PathBuf>, SpecError> {
    let mut out = Vec::new();
    for (i, f) in names.iter().enumerate() {
        let p = Path::new(f);
        if f.trim().is_empty() || f.contains('\0') || p.is_absolute() {
            return Err(ctx.err(
                format!("{field}[{i}]"),
                format!("`{f}` is not a file path relative to the spec's directory"),
            ));
        }
        let full = dir.join(p);
        if !out.contains(&full) {
            out.push(full);
        }
    }
    Ok(out)
}

/// `external.audit` validated: trials, confidence, the estimator; the core must offer
/// `score` (the only metric asked of it in canary mode).
fn audit(
    ctx: &Ctx,
    a: &crate::spec::raw::RawExternalAudit,
    metrics: &[String],
) -> Result<crate::systems::external::audit::SpecAudit, SpecError> {
    use crate::systems::external::audit::{Estimator, SpecAudit};
    if !(4..=10_000_000).contains(&a.trials) {
        return Err(ctx.err(
            "external.audit.trials",
            format!(
                "must be the runs per world, 4 to 10 000 000, got {}",
                a.trials
            ),
        ));
    }
    let confidence = a.confidence.unwrap_or(0.95);
    if !(confidence > 0.5 && confidence < 1.0) {
        return Err(ctx.err(
            "external.audit.confidence",
            format!("must be in (0.5, 1), got {confidence}"),
        ));
    }
    let estimator = match a.estimator.as_deref().unwrap_or("best") {
        "clopper_pearson" => Estimator::ClopperPearson,
        "gdp" => Estimator::Gdp,
        "best" => Estimator::Best,
        other => {
            return Err(ctx.err(
                "external.audit.estimator",
                format!("`{other}` is not an estimator: clopper_pearson, gdp or best"),
            ))
        }
    };
    if metrics.iter().any(|m| m != "score") {
        return Err(ctx.err(
            "external.metrics",
            "in canary mode (`external.audit`) the core is asked for `score` only: leave `metrics` out or write [score]; the predictions use the audit's metrics (epsilon_lower_bound, ...)",
        ));
    }
    Ok(SpecAudit {
        trials: a.trials as usize,
        confidence,
        estimator,
    })
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Builds the external system of a claim; the fields of built-in systems that do not
/// apply are checked by the caller.
pub(super) fn system(
    ctx: &Ctx,
    raw: &RawClaim,
    path: &Path,
) -> Result<&'static ExternalSystem, SpecError> {
    let Some(ext) = &raw.external else {
        return Err(ctx.err(
            "external",
            "`system: external` needs an `external:` block: {command: [program, args...], metrics: [names], timeout_s: seconds}",
        ));
    };
    let timeout_s = ext.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
    if !(timeout_s.is_finite() && timeout_s > 0.0 && timeout_s <= MAX_TIMEOUT_S) {
        return Err(ctx.err(
            "external.timeout_s",
            format!("must be a number of seconds in (0, {MAX_TIMEOUT_S}], got {timeout_s}"),
        ));
    }
    let timeout = Duration::from_secs_f64(timeout_s);
    let audit = match &ext.audit {
        None => None,
        Some(a) => Some(audit(ctx, a, &ext.metrics)?),
    };
    if ext.metrics.is_empty() && audit.is_none() {
        return Err(ctx.err(
            "external.metrics",
            "list the metrics the core computes (at least one)",
        ));
    }
    let mut seen = BTreeSet::new();
    for (i, m) in ext.metrics.iter().enumerate() {
        if !is_name(m) {
            return Err(ctx.err(
                format!("external.metrics[{i}]"),
                format!("`{m}` is not a metric name (letters, digits and '_', not starting with a digit)"),
            ));
        }
        if !seen.insert(m) {
            return Err(ctx.err(
                format!("external.metrics[{i}]"),
                format!("duplicate metric `{m}`"),
            ));
        }
    }
    let mut exact = BTreeSet::new();
    for (i, m) in ext.exact.iter().enumerate() {
        if !ext.metrics.contains(m) {
            return Err(ctx.err(
                format!("external.exact[{i}]"),
                format!(
                    "`{m}` is not one of `external.metrics` ({}): only a metric the core computes can be declared exact",
                    ext.metrics.join(", ")
                ),
            ));
        }
        if !exact.insert(m) {
            return Err(ctx.err(
                format!("external.exact[{i}]"),
                format!("duplicate metric `{m}`"),
            ));
        }
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    if let Some(c) = ext.cost_s {
        if !(c.is_finite() && c > 0.0 && c <= MAX_TIMEOUT_S) {
            return Err(ctx.err(
                "external.cost_s",
                format!("must be the CPU seconds of one unit in (0, {MAX_TIMEOUT_S}], got {c}"),
            ));
        }
    }
    if let Some(v) = &ext.version {
        if v.trim().is_empty() || v.contains('\0') {
            return Err(ctx.err(
                "external.version",
                "must name the core's version (e.g. \"1.2\" or \"opacus 1.5.2, torch 2.5\")",
            ));
        }
    }
    let claim_files = files(ctx, "external.files", &ext.files, &dir)?;
    let mut commands = vec![command(
        ctx,
        "external.command",
        &ext.command,
        &dir,
        timeout,
    )?];
    let mut command_files = vec![claim_files.clone()];
    let mut variant_command = BTreeMap::new();
    for (i, v) in raw.variants.iter().enumerate() {
        let idx = match &v.external {
            None => 0,
            Some(e) => {
                let c = command(
                    ctx,
                    &format!("variants[{i}].external.command"),
                    &e.command,
                    &dir,
                    timeout,
                )?;
                let own = files(
                    ctx,
                    &format!("variants[{i}].external.files"),
                    &e.files,
                    &dir,
                )?;
                let j = match commands.iter().position(|x| *x == c) {
                    Some(j) => j,
                    None => {
                        commands.push(c);
                        command_files.push(claim_files.clone());
                        commands.len() - 1
                    }
                };
                for f in own {
                    if !command_files[j].contains(&f) {
                        command_files[j].push(f);
                    }
                }
                j
            }
        };
        variant_command.insert(v.name.clone(), idx);
    }
    let mut params: BTreeSet<String> = raw.params.keys().cloned().collect();
    for s in raw.sweeps.values() {
        for p in [&s.quick, &s.full] {
            params.extend(p.axes.keys().cloned());
            params.extend(p.coupled.keys().cloned());
        }
    }
    Ok(ExternalSystem::leaked(ExternalSpec {
        commands,
        files: command_files,
        version: ext.version.clone(),
        cost_s: ext.cost_s,
        audit,
        variant_command,
        metrics: ext.metrics.clone(),
        params: params.into_iter().collect(),
    }))
}

/// The files of a claim's core as the result cache hashes them
/// ([`crate::systems::external`], "Cache"): every declared file of the claim and of its
/// variants, then every argument of a command that names a file in the spec's directory
/// (its program, its script), without duplicates, in that order. Empty for a built-in
/// system or a core that declares no file (not cached).
pub(super) fn core_files(raw: &RawClaim, path: &Path) -> Vec<std::path::PathBuf> {
    let Some(ext) = &raw.external else {
        return Vec::new();
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let variants = raw.variants.iter().filter_map(|v| v.external.as_ref());
    let declared = ext
        .files
        .iter()
        .chain(variants.clone().flat_map(|e| e.files.iter()));
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for f in declared {
        let p = dir.join(f);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        return out;
    }
    let args = ext
        .command
        .iter()
        .chain(variants.flat_map(|e| e.command.iter()));
    for a in args {
        let p = dir.join(a);
        if p.is_file() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The fields only `system: external` may use, refused for a built-in system.
pub(super) fn refuse_for_builtin(ctx: &Ctx, raw: &RawClaim) -> Result<(), SpecError> {
    if raw.external.is_some() {
        return Err(ctx.err(
            "external",
            format!(
                "only `system: external` takes an `external:` block (system is `{}`)",
                raw.system
            ),
        ));
    }
    if let Some(i) = raw.variants.iter().position(|v| v.external.is_some()) {
        return Err(ctx.err(
            format!("variants[{i}].external"),
            format!(
                "only `system: external` takes an `external:` block (system is `{}`)",
                raw.system
            ),
        ));
    }
    Ok(())
}
