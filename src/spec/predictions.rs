//! Validation of a claim's predictions, hypotheses and variant roles (negative
//! controls' `caught_by`, main variants' `findings`).
use super::ctx::Ctx;
use super::raw::{self, RawPrediction};
use super::*;
use crate::systems::System;

pub(super) fn prediction(
    ctx: &Ctx,
    field: &str,
    p: RawPrediction,
    system: &dyn System,
    sweeps: &[Sweep],
    claim_assumptions: &[Assumption],
    registry: Option<&registry::Registry>,
) -> Result<Prediction, SpecError> {
    let common = p.common();
    if common.legacy_expected {
        return Err(ctx.err(
            format!("{field}.expected"),
            "`expected`/`expected_full` were removed: a verdict comes from the prediction \
             (registered from the paper) and the measurement, never from a recorded outcome. \
             Name the predictions that must catch each negative control in its `caught_by`, \
             and explain a refuted main variant in its `findings` (see claims/README.md)",
        ));
    }
    // Independent mistakes of one prediction are all reported (`dpclaims check`): each
    // is noted here and the prediction fails at the end with every one, in check order.
    let errs = std::cell::RefCell::new(Vec::<SpecError>::new());
    let note = |e: SpecError| errs.borrow_mut().push(e);
    // An error that stops this prediction: the noted ones are reported first.
    let fail = |e: SpecError| -> SpecError {
        errs.take().into_iter().for_each(|x| ctx.report(x));
        e
    };
    if let Err(m) = super::names::name(common.name) {
        note(ctx.err(format!("{field}.name"), m));
    }
    if !system
        .metrics()
        .iter()
        .any(|m| m.name == common.metric.as_str())
    {
        note(ctx.err(
            format!("{field}.metric"),
            format!(
                "unknown metric `{}` for system `{}` (known: {})",
                common.metric,
                system.name(),
                system
                    .metrics()
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if let Some(m) = system
        .metrics()
        .iter()
        .find(|m| m.name == common.metric.as_str() && system.self_checks().contains(&m.name))
    {
        note(ctx.err(
            format!("{field}.metric"),
            format!(
                "`{}` is computed by the same code that set the quantity it is compared with \
                 ({}); a check on it cannot fail. Judge an independent computation instead",
                m.name, m.doc
            ),
        ));
    }
    let Some(sweep) = sweeps.iter().find(|s| &s.name == common.sweep) else {
        return Err(fail(ctx.err(
            format!("{field}.sweep"),
            format!("unknown sweep `{}`", common.sweep),
        )));
    };
    let mut all_assumptions = claim_assumptions.to_vec();
    all_assumptions.extend(
        assumptions(ctx, &format!("{field}.assumptions"), common.assumptions).map_err(&fail)?,
    );
    let prov = super::provenance::prediction(ctx, field, &common, registry, &all_assumptions)
        .map_err(&fail)?;
    all_assumptions.extend(prov.hypotheses.iter().cloned());
    let fit_spec = |f: &raw::RawFit| -> Result<FitSpec, SpecError> {
        let is_var = |prof: &SweepProfile| {
            prof.axes.iter().any(|(k, _)| k == &f.x) || prof.coupled.contains_key(&f.x)
        };
        if !(is_var(&sweep.quick) && is_var(&sweep.full)) {
            note(ctx.err(
                format!("{field}.x"),
                format!(
                    "`{}` is not an axis or coupled variable of sweep `{}` at both profiles",
                    f.x, sweep.name
                ),
            ));
        }
        let predicted = match (&f.predicted, &f.predicted_rate_of, &f.predicted_value_of) {
            (Some(v), None, None) if v.is_finite() => Some(Predicted::Value(*v)),
            (None, Some(_), None) => {
                note(ctx.err(
                    format!("{field}.predicted_rate_of"),
                    "was removed: the local slope of a bound with its constants set to 1 is not \
                     what an O() statement asserts. Judge the bound by its implied constant \
                     (`kind: bound`), each term's exponent on the quantity that isolates it \
                     (`exponent`), or a finite-size form (`predicted_value_of`)",
                ));
                None
            }
            (None, None, Some(e)) => Some(Predicted::ValueOf(e.clone())),
            _ => {
                note(ctx.err(
                    format!("{field}.predicted"),
                    "give exactly one of `predicted` (a number) or `predicted_value_of` (an \
                     exact finite-size value)",
                ));
                None
            }
        };
        let tolerance_ok = f.tolerance.is_finite() && f.tolerance >= 0.0;
        if !tolerance_ok {
            note(ctx.err(format!("{field}.tolerance"), "must be finite and >= 0"));
        }
        let tolerance_reason = match &f.tolerance_reason {
            Some(r) if !r.trim().is_empty() => r.trim().to_string(),
            _ => {
                note(ctx.err(
                    format!("{field}.tolerance_reason"),
                    "every tolerance needs a one-line reason (CI width, a known log correction, \
                     ...)",
                ));
                String::new()
            }
        };
        if let (Some(Predicted::Value(v)), true) = (&predicted, tolerance_ok) {
            let rate = matches!(p, RawPrediction::RateAtMost(_));
            if vacuous(rate, *v, f.tolerance) {
                note(ctx.err(
                    format!("{field}.tolerance"),
                    format!(
                        "tolerance {} makes the prediction vacuous: it admits a zero slope \
                         as well as the predicted {v}",
                        f.tolerance
                    ),
                ));
            }
        }
        let confidence = f.confidence.unwrap_or(crate::fit::DEFAULT_CONFIDENCE);
        if !(confidence > 0.0 && confidence < 1.0) {
            note(ctx.err(format!("{field}.confidence"), "must be in (0, 1)"));
        }
        if [&sweep.quick, &sweep.full]
            .iter()
            .any(|prof| prof.axes.iter().map(|(_, v)| v.len()).product::<usize>() < 3)
        {
            note(ctx.err(
                format!("{field}.sweep"),
                "a fit needs at least 3 sweep points",
            ));
        }
        // With an error noted the prediction fails at the end (`finish`); the value here
        // only lets the other checks run.
        Ok(FitSpec {
            x: f.x.clone(),
            predicted: predicted.unwrap_or(Predicted::Value(0.0)),
            tolerance: f.tolerance,
            divide_by: f.divide_by.clone(),
            confidence,
            bootstrap: f.bootstrap.unwrap_or(1000),
            tolerance_reason,
        })
    };
    // `minus` of an inequality (a paired contrast); checked against the variants in
    // [`check_roles`].
    let mut minus: Option<String> = None;
    let mut only: Option<String> = None;
    let kind = match &p {
        RawPrediction::Exponent(f) | RawPrediction::RateAtMost(f) => {
            minus.clone_from(&f.minus);
            only.clone_from(&f.variant);
            let fit = fit_spec(f)?;
            if matches!(p, RawPrediction::Exponent(_)) {
                PredictionKind::Exponent(fit)
            } else {
                PredictionKind::RateAtMost(fit)
            }
        }
        RawPrediction::Bound(b) => {
            let upper = match b.direction.as_str() {
                "upper" => true,
                "lower" => false,
                o => {
                    return Err(fail(ctx.err(
                        format!("{field}.direction"),
                        format!("unknown direction `{o}` (upper: O(), O~(); lower: Omega())"),
                    )))
                }
            };
            let raw_fit = raw::RawFit {
                name: b.name.clone(),
                metric: b.metric.clone(),
                sweep: b.sweep.clone(),
                source: None,
                assumptions: Vec::new(),
                expected: None,
                expected_full: None,
                evidence: None,
                quote: None,
                proxy: None,
                under: Vec::new(),
                note: None,
                x: b.x.clone(),
                predicted: Some(0.0),
                predicted_rate_of: None,
                predicted_value_of: None,
                tolerance: b.tolerance,
                tolerance_reason: b.tolerance_reason.clone(),
                divide_by: Some(b.bound.clone()),
                confidence: b.confidence,
                bootstrap: Some(0),
                minus: None,
                variant: None,
            };
            let constant = match &b.constant {
                None => None,
                Some(c) => {
                    let (value, key, other) = if upper {
                        (c.at_most, "at_most", c.at_least)
                    } else {
                        (c.at_least, "at_least", c.at_most)
                    };
                    let v = match (value, other) {
                        (Some(v), None) if v.is_finite() && v > 0.0 => v,
                        _ => {
                            return Err(fail(ctx.err(
                                format!("{field}.constant"),
                                format!(
                                "a{} bound registers `{key}: <a positive number>` (and only that)",
                                if upper { "n upper" } else { " lower" }
                            ),
                            )))
                        }
                    };
                    if c.source.trim().is_empty() {
                        return Err(fail(ctx.err(
                            format!("{field}.constant.source"),
                            "say where the constant comes from (the paper's or its proof's equation and line)",
                        )));
                    }
                    Some(crate::spec::RegisteredConstant {
                        value: v,
                        source: c.source.clone(),
                    })
                }
            };
            PredictionKind::Bound {
                fit: fit_spec(&raw_fit)?,
                upper,
                constant,
            }
        }
        RawPrediction::Event(raw::RawEvent {
            alpha, confidence, ..
        }) => {
            if !(*alpha > 0.0 && *alpha < 1.0) {
                return Err(fail(ctx.err(format!("{field}.alpha"), "must be in (0, 1)")));
            }
            let confidence = confidence.unwrap_or(crate::fit::DEFAULT_CONFIDENCE);
            if !(confidence > 0.0 && confidence < 1.0) {
                return Err(fail(
                    ctx.err(format!("{field}.confidence"), "must be in (0, 1)"),
                ));
            }
            PredictionKind::Event {
                alpha: *alpha,
                confidence,
            }
        }
        RawPrediction::Inequality(raw::RawInequality {
            op,
            rhs,
            over,
            confidence,
            minus: m,
            variant: only_v,
            ..
        }) => {
            let op = match op.as_str() {
                "<=" => CmpOp::Le,
                "<" => CmpOp::Lt,
                ">=" => CmpOp::Ge,
                ">" => CmpOp::Gt,
                o => {
                    return Err(fail(ctx.err(
                        format!("{field}.op"),
                        format!("unknown operator `{o}` (use <=, <, >=, >)"),
                    )))
                }
            };
            let over = match (over.as_deref(), confidence) {
                (None | Some("runs"), None) => InequalityOver::Runs,
                (None | Some("runs"), Some(_)) => return Err(fail(ctx.err(
                    format!("{field}.confidence"),
                    "only meaningful with `over: means` (a check over every run has no interval)",
                ))),
                (Some("means"), c) => {
                    let confidence = c.unwrap_or(crate::fit::DEFAULT_CONFIDENCE);
                    if !(confidence > 0.0 && confidence < 1.0) {
                        return Err(fail(
                            ctx.err(format!("{field}.confidence"), "must be in (0, 1)"),
                        ));
                    }
                    InequalityOver::Means { confidence }
                }
                (Some(o), _) => {
                    return Err(fail(ctx.err(
                        format!("{field}.over"),
                        format!("unknown value `{o}` (use runs or means)"),
                    )))
                }
            };
            if m.is_some() && !matches!(over, InequalityOver::Means { .. }) {
                note(ctx.err(
                    format!("{field}.minus"),
                    "a contrast is judged on the mean paired difference at each point: set `over: means`",
                ));
            }
            minus.clone_from(m);
            only.clone_from(only_v);
            PredictionKind::Inequality {
                op,
                rhs: rhs.clone(),
                over,
            }
        }
    };
    // Every noted mistake of this prediction: reported, the last one as its error.
    let noted = errs.take();
    if let Some((last, rest)) = noted.split_last() {
        rest.iter().cloned().for_each(|e| ctx.report(e));
        return Err(last.clone());
    }
    let common = p.common();
    // Metrics the assumptions and an inequality's rhs name: computed at every unit.
    let rhs_vars = match &kind {
        PredictionKind::Inequality { rhs, .. } => rhs.variables(),
        _ => Default::default(),
    };
    let extra_metrics = all_assumptions
        .iter()
        .flat_map(|a| a.variables())
        .chain(rhs_vars)
        .filter(|v| system.metrics().iter().any(|m| m.name == v.as_str()))
        .collect();
    Ok(Prediction {
        name: common.name.clone(),
        metric: common.metric.clone(),
        sweep: common.sweep.clone(),
        kind,
        assumptions: all_assumptions,
        source: common.source.clone().unwrap_or_default(),
        note: common.note.clone().unwrap_or_default(),
        evidence: prov.evidence,
        quote: prov.quote,
        proxy: prov.proxy,
        under: common.under.clone(),
        extra_metrics,
        minus,
        only,
    })
}

pub(super) fn assumptions(
    ctx: &Ctx,
    field: &str,
    raw: &[raw::RawAssumption],
) -> Result<Vec<Assumption>, SpecError> {
    raw.iter()
        .enumerate()
        .map(|(i, a)| {
            let (text, source) = match a {
                raw::RawAssumption::Plain(t) => (t.as_str(), ""),
                raw::RawAssumption::Sourced(s) => (s.require.as_str(), s.source.as_str()),
            };
            Assumption::parse(text, source).map_err(|m| ctx.err(format!("{field}[{i}]"), m))
        })
        .collect()
}

/// Negative controls name the predictions that must catch them; main variants may
/// explain a refutation with a finding; both reference existing predictions.
pub(super) fn check_roles(
    ctx: &Ctx,
    variants: &[Variant],
    predictions: &[Prediction],
    all_names: &[String],
) -> Result<(), SpecError> {
    // Every prediction of the spec counts as known, also one that failed validation (its
    // own error is reported; naming it is not a second error).
    let known = |n: &String| all_names.contains(n) || predictions.iter().any(|p| &p.name == n);
    let names = || {
        all_names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, v) in variants.iter().enumerate() {
        let field = format!("variants[{i}]");
        if v.negative_control {
            if v.caught_by.is_empty() {
                return Err(ctx.err(
                    format!("{field}.caught_by"),
                    format!(
                        "negative control `{}` must name the predictions that must catch it (known: {})",
                        v.name,
                        names()
                    ),
                ));
            }
            if !v.findings.is_empty() || !v.errata.is_empty() {
                return Err(ctx.err(
                    format!("{field}.findings"),
                    "a negative control has no findings or errata: its refutation is what it is for",
                ));
            }
        } else if !v.caught_by.is_empty() {
            return Err(ctx.err(
                format!("{field}.caught_by"),
                "only a negative control (negative_control: true) is caught",
            ));
        }
        for n in v
            .caught_by
            .iter()
            .chain(v.findings.keys())
            .chain(v.errata.keys())
        {
            if !known(n) {
                return Err(ctx.err(
                    field.to_string(),
                    format!("unknown prediction `{n}` (known: {})", names()),
                ));
            }
        }
        for (n, f) in &v.findings {
            if f.text.trim().is_empty() {
                return Err(ctx.err(format!("{field}.findings.{n}"), "empty finding"));
            }
        }
    }
    let main_named = |field: String, n: &String| -> Result<(), SpecError> {
        match variants.iter().find(|v| &v.name == n) {
            Some(v) if !v.negative_control => Ok(()),
            Some(_) => Err(ctx.err(
                field,
                format!("`{n}` is a negative control: name a main variant (the comparator or the method the paper names)"),
            )),
            None => Err(ctx.err(
                field,
                format!(
                    "unknown variant `{n}` (known: {})",
                    variants.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    };
    for (i, p) in predictions.iter().enumerate() {
        if let Some(o) = &p.only {
            main_named(format!("predictions[{i}].variant"), o)?;
            if p.minus.as_ref() == Some(o) {
                return Err(ctx.err(
                    format!("predictions[{i}].variant"),
                    format!(
                        "`{o}` is the variant the contrast subtracts: a variant minus itself is 0"
                    ),
                ));
            }
        }
        let Some(m) = &p.minus else { continue };
        let field = format!("predictions[{i}].minus");
        main_named(field.clone(), m)?;
        if !variants.iter().any(|v| p.judges(v) && !v.negative_control) {
            return Err(ctx.err(
                field,
                format!("`{m}` is the only main variant: a contrast needs another to judge"),
            ));
        }
    }
    Ok(())
}
