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
    if ext.metrics.is_empty() {
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
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let mut commands = vec![command(
        ctx,
        "external.command",
        &ext.command,
        &dir,
        timeout,
    )?];
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
                match commands.iter().position(|x| *x == c) {
                    Some(j) => j,
                    None => {
                        commands.push(c);
                        commands.len() - 1
                    }
                }
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
        variant_command,
        metrics: ext.metrics.clone(),
        params: params.into_iter().collect(),
    }))
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
