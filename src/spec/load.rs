//! Validating raw claims into [`Claim`]s (files are read in [`super::read`]): the
//! top-level fields, data, sweeps, options and variants here; predictions in
//! [`super::predictions`]; every sweep point in [`super::points`].
use super::ctx::Ctx;
use super::points::check_points;
use super::predictions::{assumptions, check_roles, prediction};
use super::raw::{self, RawClaim, RawProfile, RawTarget};
use super::*;
use crate::data::InputDist;
use crate::systems::{self, System};
use std::collections::BTreeSet;
use std::path::Path;

fn data_spec(ctx: &Ctx, field: &str, raw: &raw::RawData) -> Result<DataSpec, SpecError> {
    let input = match raw.input.as_deref().unwrap_or("gaussian") {
        "gaussian" => InputDist::Gaussian,
        "sphere" => InputDist::Sphere,
        other => {
            return Err(ctx.err(
                format!("{field}.input"),
                format!("unknown input distribution `{other}` (known: gaussian, sphere)"),
            ))
        }
    };
    let target = match &raw.target {
        None => TargetSpec::None,
        Some(RawTarget::Name(s)) if s == "sign" => TargetSpec::Sign,
        Some(RawTarget::Name(s)) if s == "none" => TargetSpec::None,
        Some(RawTarget::Name(s)) => {
            return Err(ctx.err(
                format!("{field}.target"),
                format!("unknown target `{s}` (known: sign, none, {{single_index: [hermite coefficients]}})"),
            ))
        }
        Some(RawTarget::SingleIndex { single_index }) => {
            if single_index.is_empty() || single_index.iter().any(|c| !c.is_finite()) {
                return Err(ctx.err(
                    format!("{field}.target.single_index"),
                    "needs a non-empty list of finite Hermite coefficients",
                ));
            }
            TargetSpec::SingleIndex(single_index.clone())
        }
    };
    let label_noise = raw.label_noise.unwrap_or(0.0);
    if !(label_noise.is_finite() && label_noise >= 0.0) {
        return Err(ctx.err(format!("{field}.label_noise"), "must be finite and >= 0"));
    }
    Ok(DataSpec {
        input,
        target,
        label_noise,
    })
}

/// Most points a sweep may have at one profile (the product of its axes' lengths):
/// every point is resolved and checked when the claim loads, and a claim's sweep is a
/// handful of points per axis; beyond this a spec is almost surely a mistake (and its
/// cartesian product could exhaust memory before anything is checked).
pub const MAX_SWEEP_POINTS: usize = 10_000;

fn sweep_profile(ctx: &Ctx, field: &str, raw: &RawProfile) -> Result<SweepProfile, SpecError> {
    if raw.axes.is_empty() {
        return Err(ctx.err(format!("{field}.axes"), "a sweep needs at least one axis"));
    }
    let points = raw
        .axes
        .values()
        .fold(1usize, |n, v| n.saturating_mul(v.len()));
    if points > MAX_SWEEP_POINTS {
        let sizes: Vec<String> = raw
            .axes
            .iter()
            .map(|(k, v)| format!("{k}: {}", v.len()))
            .collect();
        return Err(ctx.err(
            format!("{field}.axes"),
            format!(
                "{} sweep points ({}) exceed the limit {MAX_SWEEP_POINTS}",
                if points == usize::MAX {
                    "too many".to_string()
                } else {
                    points.to_string()
                },
                sizes.join(", ")
            ),
        ));
    }
    let mut axes = Vec::new();
    for (k, v) in &raw.axes {
        if v.is_empty() {
            return Err(ctx.err(format!("{field}.axes.{k}"), "empty sweep axis"));
        }
        if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
            return Err(ctx.err(
                format!("{field}.axes.{k}"),
                format!("non-finite value {bad}"),
            ));
        }
        axes.push((k.clone(), v.clone()));
    }
    let (min, max) = raw.replicates.range();
    if min == 0 {
        return Err(ctx.err(format!("{field}.replicates"), "must be at least 1"));
    }
    if max < min {
        return Err(ctx.err(
            format!("{field}.replicates.max"),
            format!("{max} is below min {min}"),
        ));
    }
    for k in raw.coupled.keys() {
        if raw.axes.contains_key(k) {
            return Err(ctx.err(
                format!("{field}.coupled.{k}"),
                "a variable cannot be both an axis and coupled",
            ));
        }
    }
    Ok(SweepProfile {
        axes,
        coupled: raw.coupled.clone(),
        replicates: super::Replicates { min, max },
    })
}

fn check_option(
    ctx: &Ctx,
    field: &str,
    system: &dyn System,
    key: &str,
    value: &str,
) -> Result<(), SpecError> {
    if system.accepts_any_option() {
        return Ok(());
    }
    match system.options().iter().find(|o| o.name == key) {
        None => Err(ctx.err(
            format!("{field}.{key}"),
            format!(
                "unknown option for system `{}` (known: {})",
                system.name(),
                system
                    .options()
                    .iter()
                    .map(|o| o.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        Some(o) if !o.values.contains(&value) => Err(ctx.err(
            format!("{field}.{key}"),
            format!("unknown value `{value}` (allowed: {})", o.values.join(", ")),
        )),
        Some(_) => Ok(()),
    }
}

/// Validates a raw claim: its first error ([`validate_all`] collects them all).
pub(super) fn validate(raw: RawClaim, path: &Path, spec_hash: String) -> Result<Claim, SpecError> {
    let (claim, mut errors) = validate_all(raw, path, spec_hash);
    match claim {
        Some(c) if errors.is_empty() => Ok(c),
        _ => Err(if errors.is_empty() {
            // Unreachable: a claim is withheld only with an error.
            SpecError {
                file: path.display().to_string(),
                field: "(file)".into(),
                message: "invalid spec".into(),
            }
        } else {
            errors.swap_remove(0)
        }),
    }
}

/// Validates a raw claim, collecting every error in the order the checks run (so the
/// first is the one [`super::load_claim`] reports): after an error the validation goes on with
/// what does not depend on the failed part (a failed sweep's predictions are skipped, a
/// failed prediction is left out of the later checks). The claim is `None` when an error
/// stops everything after it (an unknown system); with errors it is partial.
pub(super) fn validate_all(
    raw: RawClaim,
    path: &Path,
    spec_hash: String,
) -> (Option<Claim>, Vec<SpecError>) {
    let file = path.display().to_string();
    let ctx = Ctx {
        file: &file,
        errors: Default::default(),
    };
    let claim = validate_into(&ctx, raw, path, spec_hash);
    (claim, ctx.errors.into_inner())
}

fn validate_into(ctx: &Ctx, raw: RawClaim, path: &Path, spec_hash: String) -> Option<Claim> {
    ctx.keep(super::names::claim_id(&raw.id).map_err(|m| ctx.err("id", m)));
    let system: &'static dyn System = if raw.system == systems::external::NAME {
        super::external::system(ctx, &raw, path)
            .map_err(|e| ctx.report(e))
            .ok()?
    } else {
        ctx.keep(super::external::refuse_for_builtin(ctx, &raw));
        let Some(s) = systems::by_name(&raw.system) else {
            ctx.report(ctx.err(
                "system",
                format!(
                    "unknown system `{}` (known: {}, {})",
                    raw.system,
                    systems::all()
                        .iter()
                        .map(|s| s.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    systems::external::NAME
                ),
            ));
            return None;
        };
        s
    };
    let external = raw.system == systems::external::NAME;
    let core_files = super::external::core_files(&raw, path);
    // `model` is fixed by the system: it may be left out (then it is the system's), and
    // when given it must say the same. For an external core it is descriptive.
    let model = match &raw.model {
        Some(m) => m.clone(),
        None if external => "not_applicable".to_string(),
        None => system.model().to_string(),
    };
    if !external && model != system.model() {
        ctx.report(ctx.err(
            "model",
            format!(
                "system `{}` simulates model `{}`, not `{}`",
                system.name(),
                system.model(),
                model
            ),
        ));
    }
    // `adjacency` is a reading of the paper, not fixed by the system (DESIGN 3: explicit
    // in every spec of a built-in system; optional for `system: external`).
    let adjacency = match &raw.adjacency {
        Some(v) => v.clone(),
        None if external => "not_applicable".to_string(),
        None => {
            ctx.report(ctx.err("adjacency", "missing field `adjacency`"));
            "not_applicable".to_string()
        }
    };
    if !["replace_one", "add_remove", "not_applicable"].contains(&adjacency.as_str()) {
        ctx.report(ctx.err(
            "adjacency",
            "must be replace_one (sensitivity 2C/n of the clipped mean), add_remove (C/n) or not_applicable",
        ));
    }
    for (k, v) in &raw.options {
        ctx.keep(check_option(ctx, "options", system, k, v));
    }
    let base_data = ctx.keep(data_spec(ctx, "data", &raw.data));
    // Sweeps.
    if raw.sweeps.is_empty() {
        ctx.report(ctx.err("sweeps", "at least one sweep is needed"));
    }
    let mut sweeps = Vec::new();
    // Sweeps with an error: the predictions on them are not checked further.
    let mut bad_sweeps = BTreeSet::new();
    for (name, s) in &raw.sweeps {
        let mut ok = ctx
            .keep(super::names::name(name).map_err(|m| ctx.err(format!("sweeps.{name}"), m)))
            .is_some();
        let (full, quick) = (s.full.replicates.range(), s.quick.replicates.range());
        if full.1 < quick.1 {
            ok = false;
            ctx.report(ctx.err(
                format!("sweeps.{name}.full.replicates"),
                format!(
                    "at most {} at the full profile, fewer than the quick profile's {}: the \
                     paper-scale profile may not have less power than CI's",
                    full.1, quick.1
                ),
            ));
        }
        let quick = ctx.keep(sweep_profile(
            ctx,
            &format!("sweeps.{name}.quick"),
            &s.quick,
        ));
        let full = ctx.keep(sweep_profile(ctx, &format!("sweeps.{name}.full"), &s.full));
        match (quick, full) {
            (Some(quick), Some(full)) if ok => sweeps.push(Sweep {
                name: name.clone(),
                quick,
                full,
            }),
            _ => {
                bad_sweeps.insert(name.clone());
            }
        }
    }
    let registry = match &raw.paper {
        Some(paper) => {
            ctx.keep(super::registry::find(path, paper).map_err(|m| ctx.err("paper", m)))
        }
        None => None,
    };
    // Variants.
    if raw.variants.is_empty() {
        ctx.report(ctx.err("variants", "at least one variant is needed"));
    }
    // A variant may override a parameter of `params` or any documented parameter of its
    // system (its `params()`), except a sweep variable (the axis value would win).
    let sweep_vars: BTreeSet<&String> = raw
        .sweeps
        .values()
        .flat_map(|s| [&s.quick, &s.full])
        .flat_map(|p| p.axes.keys().chain(p.coupled.keys()))
        .collect();
    let mut variants: Vec<Variant> = Vec::new();
    for (i, v) in raw.variants.iter().enumerate() {
        let field = format!("variants[{i}]");
        let errors_before = ctx.errors.borrow().len();
        ctx.keep(super::names::name(&v.name).map_err(|m| ctx.err(format!("{field}.name"), m)));
        if variants.iter().any(|w| w.name == v.name) {
            ctx.report(ctx.err(
                format!("{field}.name"),
                format!("duplicate variant name `{}`", v.name),
            ));
        }
        for k in v.params.keys() {
            if raw.params.contains_key(k) {
                continue;
            }
            let documented = system.params().iter().any(|p| p.name == k.as_str());
            if !documented {
                ctx.report(ctx.err(
                    format!("{field}.params.{k}"),
                    format!(
                        "a variant may only override a parameter defined in `params` or a \
                         parameter of system `{}` (known: {})",
                        system.name(),
                        system
                            .params()
                            .iter()
                            .map(|p| p.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            } else if sweep_vars.contains(k) {
                ctx.report(ctx.err(
                    format!("{field}.params.{k}"),
                    "is a sweep variable (an axis or coupled): its sweep value would win over \
                     the variant's",
                ));
            }
        }
        let mut options = raw.options.clone();
        for (k, val) in &v.options {
            ctx.keep(check_option(
                ctx,
                &format!("{field}.options"),
                system,
                k,
                val,
            ));
            options.insert(k.clone(), val.clone());
        }
        for o in system.options() {
            options
                .entry(o.name.to_string())
                .or_insert_with(|| o.values[0].to_string());
        }
        let data = match &v.data {
            Some(d) => {
                let merged = raw::RawData {
                    input: d.input.clone().or(raw.data.input.clone()),
                    target: d.target.clone().or(raw.data.target.clone()),
                    label_noise: d.label_noise.or(raw.data.label_noise),
                };
                ctx.keep(data_spec(ctx, &format!("{field}.data"), &merged))
            }
            None => base_data.clone(),
        };
        let findings = ctx.keep(super::provenance::findings(
            ctx,
            &field,
            system,
            &v.findings,
        ));
        let errata = ctx.keep(super::provenance::errata(ctx, &field, system, &v.errata));
        let (Some(data), Some(findings), Some(errata)) = (data, findings, errata) else {
            continue;
        };
        if ctx.errors.borrow().len() > errors_before {
            continue;
        }
        variants.push(Variant {
            name: v.name.clone(),
            description: v.description.clone(),
            negative_control: v.negative_control,
            exploratory: v.exploratory,
            proxy: v.proxy.clone(),
            params: v.params.clone(),
            options,
            data,
            caught_by: v.caught_by.clone(),
            findings,
            errata,
            deviations: v.deviations.clone(),
        });
    }
    for (i, v) in raw.variants.iter().enumerate() {
        if v.exploratory && v.negative_control {
            ctx.report(ctx.err(
                format!("variants[{i}].exploratory"),
                "a negative control is not exploratory: it must be caught (drop one of the two)",
            ));
        }
    }
    if !raw.variants.iter().any(|v| v.negative_control) {
        ctx.report(ctx.err(
            "variants",
            "every claim carries at least one negative control (a variant with negative_control: true)",
        ));
    }
    if system.needs_target() && variants.iter().any(|v| v.data.target == TargetSpec::None) {
        ctx.report(ctx.err(
            "data.target",
            format!("system `{}` needs a target", system.name()),
        ));
    }
    let assumptions = ctx
        .keep(assumptions(ctx, "assumptions", &raw.assumptions))
        .unwrap_or_default();
    // Predictions.
    if raw.predictions.is_empty() {
        ctx.report(ctx.err("predictions", "at least one prediction is needed"));
    }
    let all_names: Vec<String> = raw
        .predictions
        .iter()
        .map(|p| p.common().name.clone())
        .collect();
    let mut predictions: Vec<Prediction> = Vec::new();
    for (i, p) in raw.predictions.into_iter().enumerate() {
        let field = format!("predictions[{i}]");
        if bad_sweeps.contains(p.common().sweep) {
            continue;
        }
        let Some(p) = ctx.keep(prediction(
            ctx,
            &field,
            p,
            system,
            &sweeps,
            &assumptions,
            registry.as_ref(),
        )) else {
            continue;
        };
        if predictions.iter().any(|q| q.name == p.name) {
            ctx.report(ctx.err(
                format!("{field}.name"),
                format!("duplicate prediction name `{}`", p.name),
            ));
            continue;
        }
        predictions.push(p);
    }
    for p in &mut predictions {
        if p.source.is_empty() {
            p.source = raw.source.equation.clone();
        }
    }
    ctx.keep(check_roles(ctx, &variants, &predictions, &all_names));
    ctx.keep(super::provenance::check_variants(
        ctx,
        system,
        &variants,
        &mut predictions,
    ));
    for (i, m) in raw.report_metrics.iter().enumerate() {
        if !system.metrics().iter().any(|x| x.name == m.as_str()) {
            ctx.report(ctx.err(
                format!("report_metrics[{i}]"),
                format!("unknown metric `{m}` for system `{}`", system.name()),
            ));
        }
    }
    // A label names a metric of the system or a variable of a sweep (an axis or a coupled
    // variable), and says something: a typo in a key would otherwise label nothing.
    for (key, text) in &raw.labels {
        let metric = system.metrics().iter().any(|x| x.name == key.as_str());
        let variable = sweeps.iter().any(|sw| {
            [&sw.quick, &sw.full].iter().any(|pr| {
                pr.axes.iter().any(|(a, _)| a == key) || pr.coupled.contains_key(key.as_str())
            })
        });
        if !(metric || variable) {
            ctx.report(ctx.err(
                format!("labels.{key}"),
                format!(
                    "`{key}` is neither a metric of system `{}` nor a sweep variable",
                    system.name()
                ),
            ));
        }
        if text.trim().is_empty() {
            ctx.report(ctx.err(format!("labels.{key}"), "an empty label".to_string()));
        }
    }
    let exact_metrics: BTreeSet<String> = system
        .exact_metrics()
        .iter()
        .map(|m| m.to_string())
        .chain(raw.external.iter().flat_map(|e| e.exact.iter().cloned()))
        .collect();
    let claim = Claim {
        file: path.to_path_buf(),
        id: raw.id,
        title: raw.title,
        source: Source {
            paper: raw.source.paper,
            section: raw.source.section,
            equation: raw.source.equation,
        },
        statement: raw.statement.trim().to_string(),
        system,
        paper: raw.paper.clone().unwrap_or_default(),
        model,
        adjacency,
        params: raw.params,
        assumptions,
        sweeps,
        variants,
        predictions,
        report_metrics: raw.report_metrics,
        exact_metrics,
        labels: raw.labels,
        discussion: raw.discussion.unwrap_or_default().trim().to_string(),
        spec_hash,
        judged_hash: String::new(),
        ledger: None,
        key_hash: String::new(),
        core_files,
    };
    check_points(ctx, &claim);
    Some(claim)
}
