//! Every sweep point of every variant and profile, evaluated when a claim is loaded:
//! unknown symbols (with the field that uses them), cycles, non-finite values and the
//! system's parameter constraints are reported before anything runs.
use super::ctx::Ctx;
use super::*;
use std::collections::BTreeSet;

/// Evaluates every point of every sweep, variant and profile: unknown symbols, cycles,
/// non-finite values and the system's parameter constraints are reported here, before
/// anything runs.
pub(super) fn check_points(ctx: &Ctx, claim: &Claim) {
    if let Err(e) = check_points_first(ctx, claim) {
        ctx.report(e);
    }
}

fn check_points_first(ctx: &Ctx, claim: &Claim) -> Result<(), SpecError> {
    // Unknown symbols, with the field that uses them.
    let mut symbols_bad = false;
    for sweep in &claim.sweeps {
        for (pname, prof) in [("quick", &sweep.quick), ("full", &sweep.full)] {
            let mut defined: BTreeSet<String> = claim.params.keys().cloned().collect();
            defined.extend(prof.axes.iter().map(|(k, _)| k.clone()));
            defined.extend(prof.coupled.keys().cloned());
            let mut exprs: Vec<(String, &Expr)> = Vec::new();
            for (k, e) in &claim.params {
                exprs.push((format!("params.{k}"), e));
            }
            for v in &claim.variants {
                for (k, e) in &v.params {
                    exprs.push((format!("variants.{}.params.{k}", v.name), e));
                }
            }
            for (k, e) in &prof.coupled {
                exprs.push((format!("sweeps.{}.{pname}.coupled.{k}", sweep.name), e));
            }
            for (i, p) in claim.predictions.iter().enumerate() {
                if p.sweep != sweep.name {
                    continue;
                }
                match &p.kind {
                    PredictionKind::Exponent(f)
                    | PredictionKind::RateAtMost(f)
                    | PredictionKind::Bound { fit: f, .. } => {
                        if let Some(e) = &f.divide_by {
                            let what = if matches!(p.kind, PredictionKind::Bound { .. }) {
                                "bound"
                            } else {
                                "divide_by"
                            };
                            exprs.push((format!("predictions[{i}].{what}"), e));
                        }
                        if let Predicted::ValueOf(e) = &f.predicted {
                            for s in e.variables() {
                                let metric =
                                    claim.system.metrics().iter().any(|m| m.name == s.as_str());
                                if !metric && !defined.contains(&s) {
                                    symbols_bad = true;
                                    ctx.report(ctx.err(
                                        format!("predictions[{i}].predicted_value_of"),
                                        format!("unknown symbol `{s}` in `{e}` (neither a variable nor a metric of system `{}`)", claim.system.name()),
                                    ));
                                    break;
                                }
                            }
                        }
                    }
                    PredictionKind::Inequality { rhs, .. } => {
                        // An rhs may name metrics (evaluated per replicate by the judge):
                        // then its symbols are checked here and it is not evaluated at
                        // the points.
                        let is_metric =
                            |s: &str| claim.system.metrics().iter().any(|m| m.name == s);
                        let vars = rhs.variables();
                        if vars.iter().any(|s| !defined.contains(s) && is_metric(s)) {
                            if let Some(s) =
                                vars.iter().find(|s| !defined.contains(*s) && !is_metric(s))
                            {
                                symbols_bad = true;
                                ctx.report(ctx.err(
                                    format!("predictions[{i}].rhs"),
                                    format!("unknown symbol `{s}` in `{rhs}` (neither a variable nor a metric of system `{}`)", claim.system.name()),
                                ));
                            }
                        } else {
                            exprs.push((format!("predictions[{i}].rhs"), rhs))
                        }
                    }
                    PredictionKind::Event { .. } => {}
                }
                for (j, a) in p.assumptions.iter().enumerate() {
                    for s in a.variables() {
                        let metric = claim.system.metrics().iter().any(|m| m.name == s.as_str());
                        if !defined.contains(&s) && !metric {
                            symbols_bad = true;
                            ctx.report(ctx.err(
                                format!("predictions[{i}].assumptions[{j}]"),
                                format!("unknown symbol `{s}` in `{}`", a.text),
                            ));
                            break;
                        }
                    }
                }
            }
            for (field, e) in exprs {
                for s in e.variables() {
                    if !defined.contains(&s) {
                        symbols_bad = true;
                        ctx.report(ctx.err(field, format!("unknown symbol `{s}` in `{e}`")));
                        break;
                    }
                }
            }
            // Unknown symbols reported (all of them, above): the values cannot be
            // evaluated.
            if symbols_bad {
                return Ok(());
            }
            for pinfo in claim.system.params() {
                if !pinfo.optional && !defined.contains(pinfo.name) {
                    return Err(ctx.err(
                        "params",
                        format!(
                            "system `{}` needs parameter `{}` ({})",
                            claim.system.name(),
                            pinfo.name,
                            pinfo.doc
                        ),
                    ));
                }
            }
            // Values at every point.
            for v in &claim.variants {
                for pt in prof.axis_points() {
                    let label = point_label(&pt);
                    let vals = claim.resolve(v, prof, &pt).map_err(|m| {
                        ctx.err(
                            format!("sweeps.{}.{pname}", sweep.name),
                            format!("variant `{}`, point {label}: {m}", v.name),
                        )
                    })?;
                    for pinfo in claim.system.params() {
                        let Some(&x) = vals.get(pinfo.name) else {
                            continue;
                        };
                        if let Err(m) = pinfo.kind.check(x) {
                            return Err(ctx.err(
                                format!("params.{}", pinfo.name),
                                format!("{m} (got {x} at sweep `{}` {pname}, variant `{}`, point {label})", sweep.name, v.name),
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
