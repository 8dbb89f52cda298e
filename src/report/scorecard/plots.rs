//! The small multiples of a scorecard's HTML page (issue 49, item 5): one plot per
//! numbered result with a key number ([`super::Key`]), the number with its interval
//! against the threshold of its row drawn as a line ([`crate::report::svg::KeyStrip`]).
//! The threshold is where the row's statement ends, in the key's units
//! (`scale * x + offset`): an inequality's margin 0 (a ratio's 1), a slope's predicted
//! value with its tolerance band, a rate's or a bound's allowed slope, an event's
//! required frequency, an implied constant's registered ceiling (or floor). A result
//! whose number is not in the report set, or an implied constant that is not judged or
//! has no registered constant, has no plot (the table says why).
use super::found::{lookup, FoundMap};
use super::keynum::{fill, resolve, sig, ValueKind};
use super::{Catalogue, Key, Scorecard};
use crate::report::svg::KeyStrip;
use crate::spec::PredictionKind;
use serde_json::Value;

fn pair(v: &Value) -> Option<(f64, f64)> {
    let a = v.as_array()?;
    Some((a.first()?.as_f64()?, a.get(1)?.as_f64()?))
}

/// The plot of one key number, or why it has none (module docs).
fn strip(
    result: &str,
    k: &Key,
    claims: &Catalogue,
    found: &FoundMap,
) -> Result<KeyStrip, &'static str> {
    const NOT_IN_SET: &str = "its check is not in this report set";
    let row = lookup(found, &k.from).ok_or(NOT_IN_SET)?.r;
    let v = resolve(&k.num_ref(), found).ok_or(NOT_IN_SET)?;
    drawn(
        result,
        k,
        claims,
        row,
        fill(k.meaning.trim(), Some(&v), found),
    )
    .ok_or("its number or threshold is missing from the row")
    .and_then(|s| s)
}

fn drawn(
    result: &str,
    k: &Key,
    claims: &Catalogue,
    row: &Value,
    caption: String,
) -> Option<Result<KeyStrip, &'static str>> {
    let t = |x: f64| k.scale * x + k.offset;
    let base = |value, interval, threshold, threshold_label, band, log| KeyStrip {
        title: result.to_string(),
        caption: caption.clone(),
        value,
        interval,
        threshold,
        threshold_label,
        band,
        log,
    };
    if k.value == ValueKind::Implied {
        if !matches!(row["verdict"].as_str(), Some("holds" | "refuted")) {
            return Some(Err("not judged, so no implied constant is shown"));
        }
        let a = row["implied_constant"].as_array()?;
        let (c, lo, hi) = (
            a.first()?.as_f64()?,
            a.get(1)?.as_f64()?,
            a.get(2)?.as_f64()?,
        );
        let c = k.scale * c;
        let p = claims
            .get(&k.from.claim)?
            .predictions
            .iter()
            .find(|p| p.name == k.from.prediction)?;
        let PredictionKind::Bound {
            constant: Some(reg),
            upper,
            ..
        } = &p.kind
        else {
            return Some(Err(
                "an implied constant with no registered ceiling or floor to draw it against",
            ));
        };
        let f = ((hi - lo).abs() * k.scale.abs() / 2.0 / c.abs()).exp();
        let interval = (c > 0.0).then_some((c / f, c * f));
        let v = k.scale * reg.value;
        let label = format!(
            "registered {} {}",
            if *upper { "ceiling" } else { "floor" },
            sig(v)
        );
        return Some(Ok(base(c, interval, v, label, None, true)));
    }
    let estimate = row["estimate"].as_f64()?;
    let interval = pair(&row["ci"]).map(|(a, b)| (t(a), t(b)));
    let predicted = row["predicted"].as_f64();
    let tolerance = row["tolerance"].as_f64();
    let (boundary, band, what) = match row["kind"].as_str().unwrap_or("") {
        "exponent" => {
            let (p, tol) = (predicted?, tolerance.unwrap_or(0.0));
            (p, Some((t(p - tol), t(p + tol))), "predicted slope")
        }
        "rate_at_most" => (predicted? + tolerance.unwrap_or(0.0), None, "allowed slope"),
        "bound" => (tolerance?, None, "allowed slope"),
        "event" => (predicted?, None, "required frequency"),
        _ => (0.0, None, "bound"),
    };
    let threshold = t(boundary);
    // A relative margin read as a ratio (`offset: 1`): a positive ratio, on a log axis.
    let ratio = k.value == ValueKind::Estimate && k.offset == 1.0 && k.scale == 1.0;
    let label = format!("{what} {}", sig(threshold));
    Some(Ok(base(
        t(estimate),
        interval,
        threshold,
        label,
        band,
        ratio,
    )))
}

/// The key plots of `card`, one per result with a key number: drawn, or
/// `(result, why not)`.
pub(super) type Strips = Vec<Result<KeyStrip, (String, &'static str)>>;

pub(super) fn strips(card: &Scorecard, claims: &Catalogue, found: &FoundMap) -> Strips {
    card.results
        .iter()
        .filter_map(|r| {
            let k = r.key.as_ref()?;
            Some(strip(&r.result, k, claims, found).map_err(|why| (r.result.clone(), why)))
        })
        .collect()
}

/// The HTML section of the small multiples: a heading, one sentence, the plots, and the
/// results whose number is not drawn with why.
pub(super) fn section(strips: &Strips) -> String {
    if strips.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<section class=\"keyplots\"><h2 id=\"key-numbers-drawn\">Key numbers, drawn</h2>\
         <p>Each result's key number (dot) with its interval (bar) against the threshold \
         of its check (red dashed line; grey: the tolerance around a predicted slope). \
         Ratios and implied constants are on a log scale.</p><div class=\"multiples\">",
    );
    for k in strips.iter().flatten() {
        s.push_str(&k.render());
    }
    s.push_str("</div>");
    let missing: Vec<String> = strips
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(|(result, why)| format!("<li>{}: {why}.</li>", crate::report::svg::esc(result)))
        .collect();
    if !missing.is_empty() {
        s.push_str(&format!("<p>Not drawn:</p><ul>{}</ul>", missing.concat()));
    }
    s.push_str("</section>");
    s
}
