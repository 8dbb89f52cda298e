//! Key numbers of a scorecard page (issue 49): every number on the page's box and
//! result table is read from this run's verdicts (or the kept ones), never typed into
//! the scorecard file, so it cannot go stale when a verdict changes.
//!
//! A number names one check row (`claim/prediction/variant`) and one of three kinds:
//! * `estimate`: the row's estimate, `scale * x + offset` (a relative margin
//!   `measured/bound - 1` becomes the ratio `measured/bound` with `offset: 1`);
//! * `effect`: the same, signed, with its interval (`+1.7 [-1.7, +5.2]`); a negative
//!   `scale` turns a margin (`> 0` violates) into an effect in the paper's favour
//!   (positive = as the paper says), the interval's ends swapped accordingly;
//! * `implied`: the implied constant of a bound with an interval on a log scale
//!   (`c [c/f, c*f]`, `f = exp(h/c)`, `h` the half-width of the row's interval: the
//!   delta method on `log c`), printed only for a row that is judged (holds or refuted).
//!
//! In text (the page's `summary:` lines, a key's `meaning`) a number is a placeholder
//! `{claim/prediction/variant:kind}` with an optional `*scale` and `+offset`
//! (`{tpk-ranking/topk-beats-rand/digits:effect*-100}`); a key's `meaning` holds `{v}`
//! for its own number. A placeholder that does not parse or names no check of the
//! claims is an error of the scorecard file ([`super::Scorecard::validate`]).
use super::found::{lookup, FoundMap};
use super::{Catalogue, Check};
use serde::Deserialize;

/// Which number of a check row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    Estimate,
    Effect,
    Implied,
}

/// A result's key number on the page's table: the row, the number, what it means.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Key {
    pub from: Check,
    pub value: ValueKind,
    #[serde(default = "one")]
    pub scale: f64,
    #[serde(default)]
    pub offset: f64,
    /// The number's meaning with `{v}` where the number goes: `exact eps / target eps <= {v}`.
    pub meaning: String,
}

// Scale and offset are finite (checked when loaded), so equality is reflexive.
impl Eq for Key {}

fn one() -> f64 {
    1.0
}

/// A resolved reference: the row and how to print its number.
#[derive(Debug, Clone, PartialEq)]
pub struct NumRef {
    pub check: Check,
    pub kind: ValueKind,
    pub scale: f64,
    pub offset: f64,
}

impl Key {
    pub fn num_ref(&self) -> NumRef {
        NumRef {
            check: self.from.clone(),
            kind: self.value,
            scale: self.scale,
            offset: self.offset,
        }
    }
}

/// Parses `claim/prediction/variant:kind[*scale][+offset]` (the inside of `{...}`).
pub fn parse_ref(s: &str) -> Result<NumRef, String> {
    let bad = |why: &str| {
        format!("placeholder `{{{s}}}`: {why} (form: {{claim/prediction/variant:estimate|effect|implied[*scale][+offset]}})")
    };
    let (path, spec) = s.split_once(':').ok_or_else(|| bad("no `:kind`"))?;
    let parts: Vec<&str> = path.split('/').map(str::trim).collect();
    let [claim, prediction, variant] = parts[..] else {
        return Err(bad("the row is claim/prediction/variant"));
    };
    if [claim, prediction, variant].iter().any(|p| p.is_empty()) {
        return Err(bad("an empty name"));
    }
    // kind, then `*scale`, then `+offset` (an offset may be negative: `+-1`).
    let (head, offset) = match spec.split_once('+') {
        Some((h, o)) => (
            h,
            o.trim()
                .parse::<f64>()
                .map_err(|_| bad("offset is not a number"))?,
        ),
        None => (spec, 0.0),
    };
    let (kind, scale) = match head.split_once('*') {
        Some((k, x)) => (
            k,
            x.trim()
                .parse::<f64>()
                .map_err(|_| bad("scale is not a number"))?,
        ),
        None => (head, 1.0),
    };
    let kind = match kind.trim() {
        "estimate" => ValueKind::Estimate,
        "effect" => ValueKind::Effect,
        "implied" => ValueKind::Implied,
        _ => return Err(bad("unknown kind")),
    };
    if !scale.is_finite() || scale == 0.0 || !offset.is_finite() {
        return Err(bad("scale must be finite and non-zero, offset finite"));
    }
    Ok(NumRef {
        check: Check {
            claim: claim.into(),
            prediction: prediction.into(),
            variant: variant.into(),
        },
        kind,
        scale,
        offset,
    })
}

/// The placeholders of `text` in order (`{v}` excluded), or the first that does not parse.
pub fn placeholders(text: &str) -> Result<Vec<NumRef>, String> {
    let mut out = vec![];
    let mut rest = text;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        let j = after
            .find('}')
            .ok_or_else(|| format!("`{{` without `}}` in \"{text}\""))?;
        let inner = &after[..j];
        if inner != "v" {
            out.push(parse_ref(inner)?);
        }
        rest = &after[j + 1..];
    }
    Ok(out)
}

/// Checks that a reference names a prediction and a variant of a claim of `claims`.
pub fn check_ref(r: &NumRef, claims: &Catalogue) -> Result<(), String> {
    let c = &r.check;
    let claim = claims
        .get(&c.claim)
        .ok_or_else(|| format!("`{}`: no such claim", c.claim))?;
    if !claim.predictions.iter().any(|p| p.name == c.prediction) {
        return Err(format!(
            "`{}` has no prediction `{}`",
            c.claim, c.prediction
        ));
    }
    if !claim.variants.iter().any(|v| v.name == c.variant) {
        return Err(format!("`{}` has no variant `{}`", c.claim, c.variant));
    }
    Ok(())
}

/// Three significant digits; `e` notation outside [1e-3, 1e5).
pub fn sig(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{x:.1e}");
        return s.replace(".0e", "e");
    }
    let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn signed(x: f64) -> String {
    let s = sig(x);
    if x > 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

/// The number a reference names in this run's verdicts, as text; `None` when the row is
/// not in the report set.
pub(super) fn resolve(r: &NumRef, found: &FoundMap) -> Option<String> {
    let f = lookup(found, &r.check)?;
    let row = f.r;
    let t = |x: f64| r.scale * x + r.offset;
    match r.kind {
        ValueKind::Estimate => row["estimate"].as_f64().map(|x| sig(t(x))),
        ValueKind::Effect => {
            let e = signed(t(row["estimate"].as_f64()?));
            Some(
                match row["ci"].as_array().map(|a| {
                    (
                        a.first().and_then(|x| x.as_f64()),
                        a.get(1).and_then(|x| x.as_f64()),
                    )
                }) {
                    Some((Some(lo), Some(hi))) => {
                        let (a, b) = (t(lo), t(hi));
                        format!("{e} [{}, {}]", signed(a.min(b)), signed(a.max(b)))
                    }
                    _ => e,
                },
            )
        }
        ValueKind::Implied => {
            if !matches!(row["verdict"].as_str(), Some("holds" | "refuted")) {
                return Some("not judged (no constant shown)".into());
            }
            let a = row["implied_constant"].as_array()?;
            let (c, lo, hi) = (
                a.first()?.as_f64()?,
                a.get(1)?.as_f64()?,
                a.get(2)?.as_f64()?,
            );
            // The interval the judge decided on, as verdicts.json carries it (one
            // interval per implied constant, wherever it is shown).
            let (c, a, b) = (r.scale * c, r.scale * lo, r.scale * hi);
            Some(format!("{} [{}, {}]", sig(c), sig(a.min(b)), sig(a.max(b))))
        }
    }
}

/// `text` with every placeholder replaced by its number (`n/a` when its row is not in
/// the report set) and `{v}` by `v`.
pub(super) fn fill(text: &str, v: Option<&str>, found: &FoundMap) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(j) = after.find('}') else {
            break;
        };
        let inner = &after[..j];
        let num = if inner == "v" {
            v.map(str::to_string)
        } else {
            parse_ref(inner).ok().and_then(|r| resolve(&r, found))
        };
        out.push_str(num.as_deref().unwrap_or("n/a"));
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_parse_with_scale_and_offset() {
        let r = parse_ref("a/b/c:effect*-100").unwrap();
        assert_eq!(
            (r.kind, r.scale, r.offset),
            (ValueKind::Effect, -100.0, 0.0)
        );
        let r = parse_ref("a/b/c:estimate+1").unwrap();
        assert_eq!((r.kind, r.scale, r.offset), (ValueKind::Estimate, 1.0, 1.0));
        assert!(parse_ref("a/b:estimate").is_err());
        assert!(parse_ref("a/b/c:mean").is_err());
        assert!(parse_ref("a/b/c:estimate*0").is_err());
        assert!(placeholders("x {v} and {a/b/c:implied}").unwrap().len() == 1);
        assert!(placeholders("open {a/b/c:estimate").is_err());
    }

    #[test]
    fn three_significant_digits() {
        assert_eq!(sig(0.952), "0.952");
        assert_eq!(sig(1.7349), "1.73");
        assert_eq!(sig(-119.243), "-119");
        assert_eq!(sig(3.4e15), "3.4e15");
        assert_eq!(sig(2.0), "2");
        assert_eq!(signed(1.7), "+1.7");
    }
}
