//! Validation of where a prediction comes from and what a verdict may claim: the
//! evidence kind and the paper's words (`evidence`, `quote`, `proxy`), the registry
//! hypotheses it is judged under (`under`), and the variants' `deviations`, `findings`
//! and `errata` (format and rules: `claims/README.md`, "Evidence").
use super::ctx::Ctx;
use super::evidence::{Confirmation, Erratum, Evidence, Finding, Quote, QuotedNumber};
use super::raw;
use super::registry::Registry;
use super::*;
use crate::systems::System;

/// The validated provenance of one prediction.
pub(super) struct Provenance {
    pub evidence: Evidence,
    pub quote: Option<Quote>,
    pub proxy: String,
    /// The registry's checks of the hypotheses named in `under`.
    pub hypotheses: Vec<Assumption>,
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn quote_ok(q: &Quote) -> bool {
    !q.text.trim().is_empty() && !q.location.trim().is_empty()
}

pub(super) fn prediction(
    ctx: &Ctx,
    field: &str,
    common: &raw::Common,
    registry: Option<&Registry>,
    inline: &[Assumption],
) -> Result<Provenance, SpecError> {
    let evidence = match common.evidence.as_deref() {
        None => {
            return Err(ctx.err(
                format!("{field}.evidence"),
                "missing: every prediction says what it is evidence of: statement (a sentence \
                 of the paper, with `quote`), consequence (derived by the tool), proxy (an \
                 empirical result on another task, named in `proxy`), printed (a sentence \
                 read on the paper's own printed numbers, with `quote`) or self_check (the \
                 tool's own correctness)",
            ))
        }
        Some(e) => Evidence::parse(e).ok_or_else(|| {
            ctx.err(
                format!("{field}.evidence"),
                format!(
                    "unknown evidence `{e}` (statement, consequence, proxy, printed, self_check)"
                ),
            )
        })?,
    };
    if let Some(q) = common.quote {
        if !quote_ok(q) {
            return Err(ctx.err(
                format!("{field}.quote"),
                "needs the paper's words (`text`) and where they stand (`where`)",
            ));
        }
    } else if evidence == Evidence::Statement {
        return Err(ctx.err(
            format!("{field}.quote"),
            "a statement quotes the paper's sentence it tests: quote: {text: \"...\", where: \"Sec. 2, Eq. 5\"}",
        ));
    } else if evidence == Evidence::Printed {
        return Err(ctx.err(
            format!("{field}.quote"),
            "a `printed` prediction quotes the sentence it reads on the paper's printed numbers: quote: {text: \"...\", where: \"Sec. 7, Table 5\"}",
        ));
    }
    let proxy = common.proxy.clone().unwrap_or_default().trim().to_string();
    match (evidence, proxy.is_empty()) {
        (Evidence::Proxy, true) => {
            return Err(ctx.err(
                format!("{field}.proxy"),
                "a proxy names the task or model standing in for the paper's",
            ))
        }
        (Evidence::Proxy, false) | (_, true) => {}
        (_, false) => {
            return Err(ctx.err(
                format!("{field}.proxy"),
                "only a prediction with `evidence: proxy` names a proxy",
            ))
        }
    }
    let mut hypotheses = Vec::new();
    if !common.under.is_empty() {
        let Some(reg) = registry else {
            return Err(ctx.err(
                format!("{field}.under"),
                "names registry hypotheses, but the claim has no `paper:` (whose scorecards/<paper>.yaml holds them)",
            ));
        };
        for (i, name) in common.under.iter().enumerate() {
            if common.under[..i].contains(name) {
                return Err(ctx.err(format!("{field}.under[{i}]"), format!("`{name}` twice")));
            }
            let h = reg.get(name).ok_or_else(|| {
                ctx.err(
                    format!("{field}.under[{i}]"),
                    format!(
                        "unknown hypothesis `{name}` of paper `{}` (known: {})",
                        reg.paper,
                        reg.hypotheses
                            .iter()
                            .map(|h| h.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
            let Some(a) = &h.assumption else {
                return Err(ctx.err(
                    format!("{field}.under[{i}]"),
                    format!(
                        "`{name}` is met by construction ({}): it gates nothing, so no \
                         prediction is judged under it",
                        h.by_construction
                    ),
                ));
            };
            hypotheses.push(a.clone());
        }
    }
    if let Some(reg) = registry {
        for a in inline {
            if let Some(h) = reg.hypotheses.iter().find(|h| {
                h.assumption
                    .as_ref()
                    .is_some_and(|x| squash(&x.text) == squash(&a.text))
            }) {
                return Err(ctx.err(
                    format!("{field}.assumptions"),
                    format!(
                        "`{}` is the registry's hypothesis `{}` ({}): write `under: [{}]` instead \
                         of restating it (the registry is the only place a hypothesis is written)",
                        a.text,
                        h.name,
                        reg.file.display(),
                        h.name
                    ),
                ));
            }
        }
    }
    Ok(Provenance {
        evidence,
        quote: common.quote.clone(),
        proxy,
        hypotheses,
    })
}

fn quoted(
    ctx: &Ctx,
    field: &str,
    system: &dyn System,
    quotes: &[QuotedNumber],
) -> Result<(), SpecError> {
    for (i, q) in quotes.iter().enumerate() {
        if !system.metrics().iter().any(|m| m.name == q.metric.as_str()) {
            return Err(ctx.err(
                format!("{field}.quotes[{i}].metric"),
                format!(
                    "unknown metric `{}` for system `{}`",
                    q.metric,
                    system.name()
                ),
            ));
        }
        if !(q.value.is_finite() && q.rel_tol.is_finite() && q.rel_tol > 0.0) {
            return Err(ctx.err(
                format!("{field}.quotes[{i}]"),
                "value must be finite and rel_tol finite and > 0",
            ));
        }
    }
    Ok(())
}

/// A variant's findings, validated.
pub(super) fn findings(
    ctx: &Ctx,
    field: &str,
    system: &dyn System,
    raw: &BTreeMap<String, raw::RawFinding>,
) -> Result<BTreeMap<String, Finding>, SpecError> {
    let mut out = BTreeMap::new();
    for (k, f) in raw {
        let (text, quotes) = match f {
            raw::RawFinding::Text(t) => (t.clone(), Vec::new()),
            raw::RawFinding::Quoted(q) => (q.text.clone(), q.quotes.clone()),
        };
        quoted(ctx, &format!("{field}.findings.{k}"), system, &quotes)?;
        out.insert(
            k.clone(),
            Finding {
                text: text.trim().to_string(),
                quotes,
            },
        );
    }
    Ok(out)
}

/// A variant's errata, validated: the sentence, the counterexample, and a confirmation by
/// a different computation (a check over metrics) or a proof sketch.
pub(super) fn errata(
    ctx: &Ctx,
    field: &str,
    system: &dyn System,
    raw: &BTreeMap<String, raw::RawErratum>,
) -> Result<BTreeMap<String, Erratum>, SpecError> {
    let mut out = BTreeMap::new();
    for (k, e) in raw {
        let f = format!("{field}.errata.{k}");
        if !quote_ok(&e.sentence) {
            return Err(ctx.err(format!("{f}.sentence"), "needs `text` and `where`"));
        }
        if e.counterexample.trim().is_empty() {
            return Err(ctx.err(format!("{f}.counterexample"), "the point and the numbers"));
        }
        let c = &e.confirmation;
        if c.method.trim().is_empty() {
            return Err(ctx.err(
                format!("{f}.confirmation.method"),
                "name the independent computation",
            ));
        }
        let check = match &c.check {
            Some(t) => {
                let a = Assumption::parse(t, "")
                    .map_err(|m| ctx.err(format!("{f}.confirmation.check"), m))?;
                Some((a.text, a.lhs, a.op, a.rhs))
            }
            None => None,
        };
        let proof = c.proof.clone().unwrap_or_default().trim().to_string();
        if check.is_none() && proof.is_empty() {
            return Err(ctx.err(
                format!("{f}.confirmation"),
                "needs a `check` computed at run time or, where none is computable, a `proof` sketch",
            ));
        }
        quoted(ctx, &f, system, &e.quotes)?;
        out.insert(
            k.clone(),
            Erratum {
                sentence: e.sentence.clone(),
                counterexample: e.counterexample.trim().to_string(),
                reading: e.reading.trim().to_string(),
                confirmation: Confirmation {
                    method: c.method.trim().to_string(),
                    check,
                    proof,
                },
                quotes: e.quotes.clone(),
            },
        );
    }
    Ok(out)
}

/// Cross-checks of variants against predictions: errata only for statements; deviations
/// named with the sentence they change;
/// the metrics that errata checks and quoted numbers read added to the prediction.
pub(super) fn check_variants(
    ctx: &Ctx,
    system: &dyn System,
    variants: &[Variant],
    predictions: &mut [Prediction],
) -> Result<(), SpecError> {
    for (i, v) in variants.iter().enumerate() {
        let field = format!("variants[{i}]");
        for (j, d) in v.deviations.iter().enumerate() {
            if d.change.trim().is_empty() || !quote_ok(&d.sentence) {
                return Err(ctx.err(
                    format!("{field}.deviations[{j}]"),
                    "a deviation names its change and the sentence it changes ({text, where})",
                ));
            }
        }
        for (name, e) in &v.errata {
            let Some(p) = predictions.iter_mut().find(|p| &p.name == name) else {
                continue; // reported by check_roles
            };
            if p.evidence != Evidence::Statement {
                return Err(ctx.err(
                    format!("{field}.errata.{name}"),
                    format!(
                        "only a statement can be an erratum of the paper; `{name}` is a {} \
                         (explain it in `findings`)",
                        p.evidence
                    ),
                ));
            }
            if let Some((_, l, _, r)) = &e.confirmation.check {
                for s in l.variables().into_iter().chain(r.variables()) {
                    if system.metrics().iter().any(|m| m.name == s.as_str()) {
                        p.extra_metrics.insert(s);
                    }
                }
            }
            p.extra_metrics
                .extend(e.quotes.iter().map(|q| q.metric.clone()));
        }
        for (name, f) in &v.findings {
            if let Some(p) = predictions.iter_mut().find(|p| &p.name == name) {
                p.extra_metrics
                    .extend(f.quotes.iter().map(|q| q.metric.clone()));
            }
        }
    }
    Ok(())
}
