//! What a verdict may claim about the paper (issue 31): the words of each evidence kind,
//! errata confirmed by an independent computation, findings and errata checked against
//! the numbers they quote, and whether a statement that holds could have failed (it
//! counts only if the same prediction catches a negative control).
use super::regime::point_values;
use super::{ControlStatus, PointRecord, PredictionResult};
use crate::fit::{fmt_exact, Verdict};
use crate::spec::{Erratum, Evidence, QuotedNumber};
use serde::Serialize;

/// How an erratum stands in this run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ErratumStatus {
    pub confirmed: bool,
    /// How: the check and the point where it holds, the proof sketch, or why not.
    pub how: String,
}

/// Whether the record `r` is at the quoted number's point (its variables include `at`).
fn is_at(q: &QuotedNumber, r: &PointRecord) -> bool {
    q.at.iter().all(|(k, v)| {
        r.vars
            .get(k)
            .is_some_and(|x| (x - v).abs() <= 1e-9 * v.abs().max(1.0))
    })
}

/// Checks a quoted number against the run: the mean of its metric at the one point
/// whose variables include `at`.
pub fn check_quote(q: &QuotedNumber, points: &[&PointRecord]) -> Result<(), String> {
    let matching: Vec<&&PointRecord> = points.iter().filter(|r| is_at(q, r)).collect();
    let [r] = matching.as_slice() else {
        return Err(format!(
            "quotes `{}` = {} at {}: {} points of the run match (need exactly 1)",
            q.metric,
            q.value,
            at_label(q),
            matching.len()
        ));
    };
    let Some(ys) = r.metrics.get(&q.metric).filter(|y| !y.is_empty()) else {
        return Err(format!(
            "quotes `{}`, which the run did not compute",
            q.metric
        ));
    };
    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
    if mean.is_finite() && (mean - q.value).abs() <= q.rel_tol * q.value.abs() {
        Ok(())
    } else {
        Err(format!(
            "quotes `{}` = {} at {} but the run measured {} (tolerance {} relative)",
            q.metric,
            q.value,
            r.label,
            fmt_exact(mean),
            q.rel_tol
        ))
    }
}

fn at_label(q: &QuotedNumber) -> String {
    if q.at.is_empty() {
        "(any point)".into()
    } else {
        q.at.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The erratum's confirmation at the judged points: its check must hold at one point
/// at least (a different computation that exhibits the violation); without a check, the
/// proof sketch confirms it. The counterexample's point (the point of the erratum's first
/// quoted number) is tried first, so the confirmation is shown where the counterexample is.
pub fn confirm(e: &Erratum, judged: &[&PointRecord]) -> ErratumStatus {
    let c = &e.confirmation;
    let Some((text, lhs, op, rhs)) = &c.check else {
        return ErratumStatus {
            confirmed: true,
            how: format!("{} (proof sketch: {})", c.method, c.proof),
        };
    };
    let mut errors = Vec::new();
    let first = e.quotes.first().filter(|q| !q.at.is_empty());
    let (mut at, rest): (Vec<&&PointRecord>, Vec<&&PointRecord>) = judged
        .iter()
        .partition(|r| first.is_some_and(|q| is_at(q, r)));
    at.extend(rest);
    for r in at {
        let vars = point_values(r);
        match (lhs.eval_map(&vars), rhs.eval_map(&vars)) {
            (Ok(a), Ok(b)) if op.holds(a, b) => {
                return ErratumStatus {
                    confirmed: true,
                    how: format!(
                        "{}: `{text}` at {} ({} {} {})",
                        c.method,
                        r.label,
                        fmt_exact(a),
                        op.symbol(),
                        fmt_exact(b)
                    ),
                }
            }
            (Ok(_), Ok(_)) => {}
            (Err(e), _) | (_, Err(e)) => errors.push(format!("{}: {e}", r.label)),
        }
    }
    ErratumStatus {
        confirmed: false,
        how: if errors.is_empty() {
            format!(
                "{}: `{text}` holds at none of the {} judged points",
                c.method,
                judged.len()
            )
        } else {
            format!(
                "{}: `{text}` cannot be computed ({})",
                c.method,
                errors.join("; ")
            )
        },
    }
}

/// Marks each main-variant `holds` of a statement, consequence or proxy as discriminating
/// when the same prediction catches a negative control of the claim.
pub fn mark_discriminating(results: &mut [PredictionResult]) {
    let caught: Vec<String> = results
        .iter()
        .filter(|r| r.negative_control && r.control == Some(ControlStatus::Caught))
        .map(|r| r.prediction_name.clone())
        .collect();
    for r in results.iter_mut() {
        if !r.negative_control && r.evidence != Evidence::SelfCheck && r.verdict == Verdict::Holds {
            r.discriminating = Some(caught.contains(&r.prediction_name));
        }
    }
}

/// The row's word: the verdict in the vocabulary of its evidence kind, with what it
/// claims (an erratum confirmed or not, a holds that could not have failed, an ablation).
pub fn word(r: &PredictionResult, proxy: &str) -> String {
    let mut w = r.evidence.word(r.verdict, proxy);
    if r.negative_control {
        return w;
    }
    if let Some(e) = &r.erratum {
        w = if e.confirmed {
            "refuted (erratum, confirmed)".into()
        } else {
            "refuted, unconfirmed".into()
        };
    } else if r.evidence == Evidence::Statement && r.verdict == Verdict::Refuted {
        w = "refuted, unconfirmed".into();
    }
    if r.discriminating == Some(false) {
        w.push_str(" (not discriminating)");
    }
    if r.ablation {
        w = format!("ablation: {w}");
    }
    if r.exploratory {
        w = format!("exploratory: {w}");
    }
    w
}
