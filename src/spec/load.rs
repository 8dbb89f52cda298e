//! Reading claim files and validating them into [`Claim`]s: the top-level fields,
//! data, sweeps, options and variants here; predictions in [`super::predictions`];
//! every sweep point in [`super::points`].
use super::points::check_points;
use super::predictions::{assumptions, check_roles, prediction};
use super::raw::{self, RawClaim, RawProfile, RawTarget};
use super::*;
use crate::data::InputDist;
use crate::systems::{self, System};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Loads and validates every `*.yaml` file of a directory (sorted by file name), or the
/// given files.
pub fn load_claims(paths: &[PathBuf]) -> Result<Vec<Claim>, SpecError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let rd = std::fs::read_dir(p).map_err(|e| SpecError {
                file: p.display().to_string(),
                field: "(directory)".into(),
                message: e.to_string(),
            })?;
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                // Hidden files and editor lock files (`.#a.yaml`, `#a.yaml#`, `.a.yaml`):
                // not claims.
                .filter(|f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| !n.starts_with('.') && !n.starts_with('#'))
                })
                .collect();
            if v.is_empty() {
                // A run of nothing would "succeed" with 0 claims: almost always a wrong
                // directory.
                return Err(SpecError {
                    file: p.display().to_string(),
                    field: "(directory)".into(),
                    message: format!(
                        "no claim specs in {} (no *.yaml or *.yml file)",
                        p.display()
                    ),
                });
            }
            v.sort();
            files.extend(v);
        } else {
            files.push(p.clone());
        }
    }
    let mut claims = Vec::new();
    let mut ids = BTreeSet::new();
    for f in files {
        let c = load_claim(&f)?;
        if !ids.insert(c.id.clone()) {
            return Err(SpecError {
                file: f.display().to_string(),
                field: "id".into(),
                message: format!("duplicate claim id `{}`", c.id),
            });
        }
        claims.push(c);
    }
    Ok(claims)
}

/// Reads and validates one claim file.
pub fn load_claim(path: &Path) -> Result<Claim, SpecError> {
    let file = path.display().to_string();
    let err = |message: String| SpecError {
        file: file.clone(),
        field: "(file)".into(),
        message,
    };
    // Not a FIFO, device or directory; at most 16 MiB (crate::fsio::InputKind::Spec).
    let bytes =
        crate::fsio::read(path, crate::fsio::InputKind::Spec).map_err(|e| err(e.to_string()))?;
    claim_from_bytes(path, &bytes)
}

/// Validates the bytes of a claim file (`path` names it in errors and is recorded as its
/// file): what [`load_claim`] does once the file is read. Any bytes give a claim or a
/// [`SpecError`], never a panic (the fuzz target `fuzz/fuzz_targets/spec_load.rs`).
pub fn claim_from_bytes(path: &Path, bytes: &[u8]) -> Result<Claim, SpecError> {
    let file = path.display().to_string();
    let err = |message: String| SpecError {
        file: file.clone(),
        field: "(file)".into(),
        message,
    };
    let text = spec_text(bytes).map_err(err)?;
    crate::fsio::yaml::alias_budget(text).map_err(|message| SpecError {
        file: file.clone(),
        field: "(top level)".into(),
        message,
    })?;
    let raw: RawClaim = raw::claim_from_yaml(text).map_err(|(field, message)| SpecError {
        file: file.clone(),
        field,
        message,
    })?;
    let sha = |b: &[u8]| {
        use sha2::{Digest, Sha256};
        Sha256::digest(b)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let mut judged = raw::without_discussion(text).unwrap_or_else(|| text.to_string());
    let mut claim = validate(raw, path, sha(bytes))?;
    // An external claim's rows also depend on the protocol code, which the build's
    // verdict hash leaves out (build.rs, `EXTERNAL`).
    if claim.system.name() == crate::systems::external::NAME {
        judged.push_str("\n# external protocol ");
        judged.push_str(crate::build_id::EXTERNAL_HASH);
    }
    claim.judged_hash = sha(judged.as_bytes());
    Ok(claim)
}

/// The text of a spec file: UTF-8, a leading byte-order mark dropped (editors on some
/// systems write one; it is not part of the YAML). The spec hash stays the hash of the
/// file's bytes.
fn spec_text(bytes: &[u8]) -> Result<&str, String> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(body).map_err(|e| {
        let utf16 = bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF");
        format!(
            "the file is not UTF-8 (invalid byte at offset {}{}); save it as UTF-8",
            e.valid_up_to() + (bytes.len() - body.len()),
            if utf16 { ", it looks like UTF-16" } else { "" }
        )
    })
}

pub(super) struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    pub(super) fn err(&self, field: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }
}

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
    if raw.replicates == 0 {
        return Err(ctx.err(format!("{field}.replicates"), "must be at least 1"));
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
        replicates: raw.replicates,
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

fn validate(raw: RawClaim, path: &Path, spec_hash: String) -> Result<Claim, SpecError> {
    let file = path.display().to_string();
    let ctx = Ctx { file: &file };
    super::names::claim_id(&raw.id).map_err(|m| ctx.err("id", m))?;
    let system: &'static dyn System = if raw.system == systems::external::NAME {
        super::external::system(&ctx, &raw, path)?
    } else {
        super::external::refuse_for_builtin(&ctx, &raw)?;
        systems::by_name(&raw.system).ok_or_else(|| {
            ctx.err(
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
            )
        })?
    };
    let external = raw.system == systems::external::NAME;
    // For an external core, `model` and `adjacency` are descriptive and optional.
    let required = |field: &str, v: &Option<String>| match v {
        Some(v) => Ok(v.clone()),
        None if external => Ok("not_applicable".to_string()),
        None => Err(ctx.err(field, format!("missing field `{field}`"))),
    };
    let model = required("model", &raw.model)?;
    if !external && model != system.model() {
        return Err(ctx.err(
            "model",
            format!(
                "system `{}` simulates model `{}`, not `{}`",
                system.name(),
                system.model(),
                model
            ),
        ));
    }
    let adjacency = required("adjacency", &raw.adjacency)?;
    if !["replace_one", "add_remove", "not_applicable"].contains(&adjacency.as_str()) {
        return Err(ctx.err(
            "adjacency",
            "must be replace_one (sensitivity 2C/n of the clipped mean), add_remove (C/n) or not_applicable",
        ));
    }
    for (k, v) in &raw.options {
        check_option(&ctx, "options", system, k, v)?;
    }
    let base_data = data_spec(&ctx, "data", &raw.data)?;
    // Sweeps.
    if raw.sweeps.is_empty() {
        return Err(ctx.err("sweeps", "at least one sweep is needed"));
    }
    let mut sweeps = Vec::new();
    for (name, s) in &raw.sweeps {
        super::names::name(name).map_err(|m| ctx.err(format!("sweeps.{name}"), m))?;
        if s.full.replicates < s.quick.replicates {
            return Err(ctx.err(
                format!("sweeps.{name}.full.replicates"),
                format!(
                    "{} at the full profile, fewer than the quick profile's {}: the paper-scale \
                     profile may not have less power than CI's",
                    s.full.replicates, s.quick.replicates
                ),
            ));
        }
        sweeps.push(Sweep {
            name: name.clone(),
            quick: sweep_profile(&ctx, &format!("sweeps.{name}.quick"), &s.quick)?,
            full: sweep_profile(&ctx, &format!("sweeps.{name}.full"), &s.full)?,
        });
    }
    let registry = match &raw.paper {
        Some(paper) => Some(super::registry::find(path, paper).map_err(|m| ctx.err("paper", m))?),
        None => None,
    };
    // Variants.
    if raw.variants.is_empty() {
        return Err(ctx.err("variants", "at least one variant is needed"));
    }
    let mut variants: Vec<Variant> = Vec::new();
    for (i, v) in raw.variants.iter().enumerate() {
        let field = format!("variants[{i}]");
        super::names::name(&v.name).map_err(|m| ctx.err(format!("{field}.name"), m))?;
        if variants.iter().any(|w| w.name == v.name) {
            return Err(ctx.err(
                format!("{field}.name"),
                format!("duplicate variant name `{}`", v.name),
            ));
        }
        for k in v.params.keys() {
            if !raw.params.contains_key(k) {
                return Err(ctx.err(
                    format!("{field}.params.{k}"),
                    "a variant may only override a parameter defined in `params`",
                ));
            }
        }
        let mut options = raw.options.clone();
        for (k, val) in &v.options {
            check_option(&ctx, &format!("{field}.options"), system, k, val)?;
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
                data_spec(&ctx, &format!("{field}.data"), &merged)?
            }
            None => base_data.clone(),
        };
        variants.push(Variant {
            name: v.name.clone(),
            description: v.description.clone(),
            negative_control: v.negative_control,
            params: v.params.clone(),
            options,
            data,
            caught_by: v.caught_by.clone(),
            findings: super::provenance::findings(&ctx, &field, system, &v.findings)?,
            errata: super::provenance::errata(&ctx, &field, system, &v.errata)?,
            deviations: v.deviations.clone(),
        });
    }
    if !variants.iter().any(|v| v.negative_control) {
        return Err(ctx.err(
            "variants",
            "every claim carries at least one negative control (a variant with negative_control: true)",
        ));
    }
    if system.needs_target() {
        for v in &variants {
            if v.data.target == TargetSpec::None {
                return Err(ctx.err(
                    "data.target",
                    format!("system `{}` needs a target", system.name()),
                ));
            }
        }
    }
    let assumptions = assumptions(&ctx, "assumptions", &raw.assumptions)?;
    // Predictions.
    if raw.predictions.is_empty() {
        return Err(ctx.err("predictions", "at least one prediction is needed"));
    }
    let mut predictions: Vec<Prediction> = Vec::new();
    for (i, p) in raw.predictions.into_iter().enumerate() {
        let field = format!("predictions[{i}]");
        let p = prediction(
            &ctx,
            &field,
            p,
            system,
            &sweeps,
            &assumptions,
            registry.as_ref(),
        )?;
        if predictions.iter().any(|q| q.name == p.name) {
            return Err(ctx.err(
                format!("{field}.name"),
                format!("duplicate prediction name `{}`", p.name),
            ));
        }
        predictions.push(p);
    }
    for p in &mut predictions {
        if p.source.is_empty() {
            p.source = raw.source.equation.clone();
        }
    }
    check_roles(&ctx, &variants, &predictions)?;
    super::provenance::check_variants(&ctx, system, &variants, &mut predictions)?;
    for (i, m) in raw.report_metrics.iter().enumerate() {
        if !system.metrics().iter().any(|x| x.name == m.as_str()) {
            return Err(ctx.err(
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
            return Err(ctx.err(
                format!("labels.{key}"),
                format!(
                    "`{key}` is neither a metric of system `{}` nor a sweep variable",
                    system.name()
                ),
            ));
        }
        if text.trim().is_empty() {
            return Err(ctx.err(format!("labels.{key}"), "an empty label".to_string()));
        }
    }
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
        labels: raw.labels,
        discussion: raw.discussion.unwrap_or_default().trim().to_string(),
        spec_hash,
        judged_hash: String::new(),
    };
    check_points(&ctx, &claim)?;
    Ok(claim)
}
