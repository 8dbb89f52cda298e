//! The `dpclaims-external/1` protocol: JSON Lines over a core's stdin/stdout
//! (docs/external-protocol.md is the reference for core authors).
//!
//! ```text
//! harness → core   {"protocol": "dpclaims-external/1"}
//! core → harness   {"protocol": "dpclaims-external/1", "metrics": ["noise_sq", ...]}
//! harness → core   {"options": {...}, "params": {...}, "seed": "<16 hex digits>", "unit": "c/v/s/p/r"}
//! core → harness   {"metrics": {"noise_sq": 0.0123, ...}}   or   {"error": "message"}
//! ```
//!
//! One JSON object per line each way. Keys are written in sorted order (serde_json's
//! map), numbers as the shortest decimal that round-trips, so a request is the same
//! bytes on every run.
use super::worker::{CoreFailure, Worker};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The protocol's name and version, sent and expected in the handshake.
pub const PROTOCOL: &str = "dpclaims-external/1";

/// The request of one unit.
pub struct Request<'a> {
    pub unit: &'a str,
    pub seed: u64,
    pub params: &'a BTreeMap<String, f64>,
    pub options: &'a BTreeMap<String, String>,
}

impl Request<'_> {
    /// The request as one JSON line (without the newline). A non-finite parameter is an
    /// error (JSON has no number for it).
    pub fn line(&self) -> Result<String, String> {
        let mut params = Map::new();
        for (k, v) in self.params {
            let n = serde_json::Number::from_f64(*v)
                .ok_or_else(|| format!("parameter `{k}` = {v} is not finite"))?;
            params.insert(k.clone(), Value::Number(n));
        }
        let options: Map<String, Value> = self
            .options
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let mut m = Map::new();
        m.insert("unit".into(), Value::String(self.unit.to_string()));
        m.insert("seed".into(), Value::String(seed_hex(self.seed)));
        m.insert("params".into(), Value::Object(params));
        m.insert("options".into(), Value::Object(options));
        Ok(Value::Object(m).to_string())
    }
}

/// A 64-bit seed as 16 lowercase hex digits.
pub fn seed_hex(seed: u64) -> String {
    format!("{seed:016x}")
}

/// The first line of a core's answer, clipped, for messages.
fn quote(line: &str) -> String {
    let clipped: String = line.chars().take(200).collect();
    if clipped.len() < line.len() {
        format!("`{clipped}…`")
    } else {
        format!("`{clipped}`")
    }
}

/// Parses one answer line into a JSON object.
fn object(line: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!(
            "the core printed {} on stdout, not a JSON object (one JSON object per line)",
            quote(line)
        )),
        Err(e) => {
            let hint = if ["NaN", "Infinity"].iter().any(|t| line.contains(t)) {
                " (NaN and Infinity are not JSON numbers: the core computed a non-finite metric?)"
            } else {
                ""
            };
            Err(format!(
                "the core printed {} on stdout, which is not one JSON object per line ({e}){hint}",
                quote(line)
            ))
        }
    }
}

/// Greets a freshly started core; returns the metrics it can compute.
pub fn handshake(w: &mut Worker) -> Result<Vec<String>, CoreFailure> {
    let hello = serde_json::json!({ "protocol": PROTOCOL }).to_string();
    let line = w.request(&hello)?;
    let fail = |w: &mut Worker, what: String| {
        w.discard();
        w.failure(what)
    };
    let m = match object(&line) {
        Ok(m) => m,
        Err(e) => return Err(fail(w, format!("handshake: {e}"))),
    };
    if let Some(err) = m.get("error") {
        return Err(fail(
            w,
            format!("handshake: the core answered an error: {}", text(err)),
        ));
    }
    match m.get("protocol") {
        Some(Value::String(p)) if p == PROTOCOL => {}
        Some(p) => {
            return Err(fail(
                w,
                format!("handshake: the core speaks protocol {p}, the harness `{PROTOCOL}`"),
            ))
        }
        None => {
            return Err(fail(
                w,
                format!(
                    "handshake: the answer {} has no `protocol` field",
                    quote(&line)
                ),
            ))
        }
    }
    let metrics = match m.get("metrics") {
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect(),
        _ => {
            return Err(fail(
                w,
                format!(
                    "handshake: the answer {} needs `metrics`: a list of metric names",
                    quote(&line)
                ),
            ))
        }
    };
    Ok(metrics)
}

/// Sends one unit's request and reads the metrics `wanted` from the answer: every one
/// present, a finite number. A core that answers `{"error": ...}` stays usable; any
/// other failure discards it.
pub fn call(
    w: &mut Worker,
    req: &Request,
    wanted: &[&str],
) -> Result<BTreeMap<String, f64>, CoreFailure> {
    let line = req.line().map_err(|what| CoreFailure {
        what,
        stderr: vec![],
    })?;
    let answer = w.request(&line)?;
    let m = match object(&answer) {
        Ok(m) => m,
        Err(e) => {
            w.discard();
            return Err(w.failure(e));
        }
    };
    if let Some(err) = m.get("error") {
        return Err(w.failure(format!("the core answered an error: {}", text(err))));
    }
    let Some(Value::Object(metrics)) = m.get("metrics") else {
        w.discard();
        return Err(w.failure(format!(
            "the answer {} has neither `metrics` (an object of numbers) nor `error`",
            quote(&answer)
        )));
    };
    let mut out = BTreeMap::new();
    for name in wanted {
        let v = match metrics.get(*name) {
            Some(Value::Number(n)) => n.as_f64(),
            Some(_) => None,
            None => {
                return Err(w.failure(format!(
                    "the answer has no metric `{name}` (it gave: {})",
                    metrics.keys().cloned().collect::<Vec<_>>().join(", ")
                )))
            }
        };
        match v {
            Some(x) if x.is_finite() => {
                out.insert(name.to_string(), x);
            }
            _ => {
                return Err(w.failure(format!(
                    "metric `{name}` = {} is not a finite number",
                    metrics[*name]
                )))
            }
        }
    }
    Ok(out)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_one_line_with_sorted_keys() {
        let params = BTreeMap::from([("n".to_string(), 64.0), ("eta".to_string(), 0.25)]);
        let options = BTreeMap::from([("calibration".to_string(), "prop_2_2".to_string())]);
        let r = Request {
            unit: "c/v/s/n=64/0",
            seed: 0xab,
            params: &params,
            options: &options,
        };
        assert_eq!(
            r.line().unwrap(),
            r#"{"options":{"calibration":"prop_2_2"},"params":{"eta":0.25,"n":64.0},"seed":"00000000000000ab","unit":"c/v/s/n=64/0"}"#
        );
    }

    #[test]
    fn a_non_finite_parameter_is_refused() {
        let params = BTreeMap::from([("x".to_string(), f64::INFINITY)]);
        let r = Request {
            unit: "u",
            seed: 1,
            params: &params,
            options: &BTreeMap::new(),
        };
        assert!(r.line().unwrap_err().contains("`x`"));
    }

    #[test]
    fn nan_in_an_answer_is_named() {
        let e = object(r#"{"metrics": {"a": NaN}}"#).unwrap_err();
        assert!(e.contains("non-finite"), "{e}");
    }
}
