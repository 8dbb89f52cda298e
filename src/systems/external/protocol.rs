//! The `dpclaims-external/2` protocol: JSON Lines over a core's stdin/stdout
//! (docs/external-protocol.md is the reference for core authors).
//!
//! ```text
//! harness → core   {"protocol": "dpclaims-external/2"}
//! core → harness   {"protocol": "dpclaims-external/2", "metrics": ["noise_sq", ...]}
//! harness → core   {"options": {...}, "params": {...}, "seed": "<16 hex digits>", "unit": "c/v/s/p/r"}
//! core → harness   {"unit": "c/v/s/p/r", "metrics": {"noise_sq": 0.0123, ...}}   or   {"unit": "c/v/s/p/r", "error": "message"}
//! ```
//!
//! One JSON object per line each way. Keys are written in sorted order (serde_json's
//! map), numbers as the shortest decimal that round-trips, so a request is the same
//! bytes on every run.
//!
//! Pairing: every answer to a unit echoes the request's `unit` (version 2; version 1
//! answers carried no id, so a core that printed one answer twice shifted every later
//! answer onto the next unit and the run still passed). An answer for another unit than
//! the one asked — a duplicate, a skipped or a reordered answer — is an error naming
//! both units, and the worker is discarded. An error answer may omit the id (a core that
//! could not parse the request does not know it); `"error": null` means no error.
use super::worker::{CoreFailure, Worker};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The protocol's name and version, sent and expected in the handshake.
pub const PROTOCOL: &str = "dpclaims-external/2";
/// The previous version (answers without a unit id), named in the handshake's message.
pub const PROTOCOL_V1: &str = "dpclaims-external/1";

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
    if let Some(err) = error_of(&m) {
        return Err(fail(
            w,
            format!("handshake: the core answered an error: {}", text(err)),
        ));
    }
    match m.get("protocol") {
        Some(Value::String(p)) if p == PROTOCOL => {}
        Some(Value::String(p)) if p == PROTOCOL_V1 => {
            return Err(fail(
                w,
                format!(
                    "handshake: the core speaks `{PROTOCOL_V1}`, the harness `{PROTOCOL}`: \
                     in version 2 every answer echoes its request's `unit` \
                     (`{{\"unit\": ..., \"metrics\": ...}}`) and the handshake names \
                     `{PROTOCOL}` (docs/external-protocol.md, \"Versions\")"
                ),
            ))
        }
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
    read_answer(&answer, req.unit, wanted).map_err(|e| {
        if e.discard {
            w.discard();
        }
        w.failure(e.what)
    })
}

/// Why an answer line was not accepted, and whether the core's state is now unknown
/// (`discard`: a malformed or mispaired answer) or it merely reported a problem with
/// this unit (an error answer, a missing or non-finite metric).
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerError {
    pub what: String,
    pub discard: bool,
}

/// Reads one answer line to the request for `unit`: the metrics `wanted`, each present
/// and finite. Pure (no process involved), so it is fuzzed on its own
/// (fuzz/fuzz_targets/external_answer.rs, replayed by tests/fuzz_corpus.rs).
pub fn read_answer(
    answer: &str,
    unit: &str,
    wanted: &[&str],
) -> Result<BTreeMap<String, f64>, AnswerError> {
    let fatal = |what: String| AnswerError {
        what,
        discard: true,
    };
    let soft = |what: String| AnswerError {
        what,
        discard: false,
    };
    let m = object(answer).map_err(fatal)?;
    // Pairing (module docs): the answer must be this unit's.
    match m.get("unit") {
        Some(Value::String(u)) if u == unit => {}
        Some(other) => {
            return Err(fatal(format!(
                "the answer is for unit {}, but the request was for unit `{unit}`: the \
                 core answered a unit twice, skipped one or answered out of order (the \
                 worker was stopped)",
                match other {
                    Value::String(s) => quote(s),
                    v => quote(&v.to_string()),
                },
            )));
        }
        None if error_of(&m).is_some() => {}
        None => {
            return Err(fatal(format!(
                "the answer {} has no `unit`: in {PROTOCOL} every answer echoes its \
                 request's `unit` (here `{unit}`), so that a duplicate or missing answer \
                 cannot shift the answers onto other units",
                quote(answer),
            )));
        }
    }
    if let Some(err) = error_of(&m) {
        return Err(soft(format!("the core answered an error: {}", text(err))));
    }
    let Some(Value::Object(metrics)) = m.get("metrics") else {
        return Err(fatal(format!(
            "the answer {} has neither `metrics` (an object of numbers) nor `error`",
            quote(answer)
        )));
    };
    let mut out = BTreeMap::new();
    for name in wanted {
        let v = match metrics.get(*name) {
            Some(Value::Number(n)) => n.as_f64(),
            Some(_) => None,
            None => {
                return Err(soft(format!(
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
                return Err(soft(format!(
                    "metric `{name}` = {} is not a finite number",
                    metrics[*name]
                        .to_string()
                        .chars()
                        .take(200)
                        .collect::<String>()
                )))
            }
        }
    }
    Ok(out)
}

/// The answer's error, if it has one: `"error": null` is no error.
fn error_of(m: &Map<String, Value>) -> Option<&Value> {
    m.get("error").filter(|v| !v.is_null())
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
    fn an_answer_is_paired_with_its_request_by_unit_id() {
        let ok = read_answer(r#"{"unit": "a/1", "metrics": {"x": 1.5}}"#, "a/1", &["x"]);
        assert_eq!(ok.unwrap()["x"], 1.5);
        let other = read_answer(r#"{"unit": "a/0", "metrics": {"x": 1.5}}"#, "a/1", &["x"]);
        let e = other.unwrap_err();
        assert!(
            e.discard && e.what.contains("`a/0`") && e.what.contains("`a/1`"),
            "{e:?}"
        );
        let none = read_answer(r#"{"metrics": {"x": 1.5}}"#, "a/1", &["x"]).unwrap_err();
        assert!(none.discard && none.what.contains("no `unit`"), "{none:?}");
        // An error answer need not know its unit; one for another unit is mispaired.
        let e = read_answer(r#"{"error": "bad request"}"#, "a/1", &["x"]).unwrap_err();
        assert!(!e.discard && e.what.contains("bad request"));
    }

    #[test]
    fn a_null_error_is_no_error() {
        let ok = read_answer(
            r#"{"unit": "u", "error": null, "metrics": {"x": 2}}"#,
            "u",
            &["x"],
        );
        assert_eq!(ok.unwrap()["x"], 2.0);
    }

    #[test]
    fn nan_in_an_answer_is_named() {
        let e = object(r#"{"metrics": {"a": NaN}}"#).unwrap_err();
        assert!(e.contains("non-finite"), "{e}");
    }
}
