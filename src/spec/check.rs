//! `dpclaims check`: every error of every spec at once, each with its file, field path
//! and line:column (issue 33, item 2).
//!
//! The strict loader ([`super::load_claim`]) stops at the first error. Here the spec is
//! parsed into a `serde_yaml::Value` and deserialised again and again: at each serde
//! error at field path P the error is recorded and the value is *repaired* at P (an
//! unknown field deleted; a value of the wrong type or an invalid value replaced by a
//! placeholder of another type, or by one of the values the message says are allowed; a
//! missing field given a placeholder), until the raw spec deserialises (at most
//! [`MAX_ROUNDS`] rounds). Then the semantic validation runs in its collecting mode
//! ([`super::load::validate_all`]). Errors at or below a repaired path are not reported
//! again: they are about the placeholder, not the spec.
//!
//! Lines and columns come from [`super::locate`]: the path walked in the original text.
use super::locate::{locate, parse_path, path_string, Seg};
use super::{raw, SpecError};
use serde_yaml::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Most repairs of one spec before giving up on the rest of its structural errors.
pub const MAX_ROUNDS: usize = 64;

/// One error of a spec, located.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Diagnostic {
    pub file: String,
    pub field: String,
    pub message: String,
    /// 1-based; `None` for an error of the whole file or of the top level.
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let clip = super::echo::clip_echoes;
        // The file name on this line, whatever it holds (issue 58).
        let file = super::echo::escape_controls(&self.file);
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{file}:{l}:{c}: ")?,
            (Some(l), None) => write!(f, "{file}:{l}: ")?,
            _ => write!(f, "{file}: ")?,
        }
        write!(f, "{}: {}", clip(&self.field), clip(&self.message))
    }
}

/// The outcome of checking some spec files.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CheckReport {
    /// Spec files read.
    pub files: usize,
    /// Files whose spec is valid (a claim).
    pub valid: usize,
    pub errors: Vec<Diagnostic>,
    /// `TODO` placeholders left in the specs (scaffold markers, [`placeholders`]): not
    /// errors, but a claim whose statement or quote is one is a draft, never counted.
    pub placeholders: Vec<Diagnostic>,
}

impl CheckReport {
    pub fn ok(&self) -> bool {
        self.errors.is_empty()
    }
    /// How many files have at least one error.
    pub fn bad_files(&self) -> usize {
        self.errors
            .iter()
            .map(|d| d.file.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }
}

/// Checks files and directories (a directory: its `*.yaml` / `*.yml` specs, as
/// [`super::load_claims`] reads them); claim ids must be unique across all of them.
pub fn check_paths(paths: &[PathBuf]) -> CheckReport {
    let mut report = CheckReport::default();
    let mut files = Vec::new();
    for p in paths {
        match super::read::spec_files(p) {
            Ok(v) => files.extend(v),
            Err(e) => report.errors.push(unlocated(e)),
        }
    }
    let mut ids: Vec<(String, PathBuf)> = Vec::new();
    for f in files {
        report.files += 1;
        if let Ok(text) = crate::fsio::read_string(&f, crate::fsio::InputKind::Spec) {
            report.placeholders.extend(placeholders(&f, &text));
        }
        let (id, errors) = check_file(&f);
        if errors.is_empty() {
            report.valid += 1;
        }
        if let Some(id) = id {
            if let Some((_, first)) = ids.iter().find(|(i, _)| *i == id) {
                let text = std::fs::read_to_string(&f).unwrap_or_default();
                let at = locate(&text, &[Seg::Key("id".into())]);
                report.errors.push(Diagnostic {
                    file: f.display().to_string(),
                    field: "id".into(),
                    message: format!("duplicate claim id `{id}` (also in {})", first.display()),
                    line: at.map(|a| a.0),
                    column: at.map(|a| a.1),
                });
            } else {
                ids.push((id, f.clone()));
            }
        }
        report.errors.extend(errors);
    }
    report
}

/// The `TODO` placeholders of a spec's text, one per line that has one outside a
/// comment (`dpclaims new` and `dpclaims init` scaffold them, and say "replace every
/// TODO" in comments, which are not reported), located at the `TODO`.
pub fn placeholders(path: &Path, text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        // The part before a comment (` #`); a `#` inside a quoted string cuts it short,
        // which at worst misses a placeholder after it.
        let code = line.find(" #").map_or(line, |c| &line[..c]);
        let Some(col) = code.find("TODO") else {
            continue;
        };
        let shown: String = code[col..].chars().take(60).collect();
        out.push(Diagnostic {
            file: path.display().to_string(),
            field: "placeholder".into(),
            message: format!(
                "TODO placeholder `{}`: replace it (a claim whose statement or quote is a \
                 placeholder is a draft, never counted)",
                shown.trim_end_matches(['"', '\'', ' '])
            ),
            line: Some(i + 1),
            column: Some(line[..col].chars().count() + 1),
        });
    }
    out
}

fn unlocated(e: SpecError) -> Diagnostic {
    Diagnostic {
        file: e.file,
        field: e.field,
        message: e.message,
        line: None,
        column: None,
    }
}

/// Every error of one spec file, and its claim id when it has one.
pub fn check_file(path: &Path) -> (Option<String>, Vec<Diagnostic>) {
    match crate::fsio::read(path, crate::fsio::InputKind::Spec) {
        Ok(bytes) => check_bytes(path, &bytes),
        Err(e) => (
            None,
            vec![Diagnostic {
                file: path.display().to_string(),
                field: "(file)".into(),
                message: e.to_string(),
                line: None,
                column: None,
            }],
        ),
    }
}

/// Every error of the bytes of a spec file (`path` names it), and its claim id.
pub fn check_bytes(path: &Path, bytes: &[u8]) -> (Option<String>, Vec<Diagnostic>) {
    let file = path.display().to_string();
    let diag = |field: &str, message: String, at: Option<(usize, usize)>| Diagnostic {
        file: file.clone(),
        field: field.to_string(),
        message,
        line: at.map(|a| a.0),
        column: at.map(|a| a.1),
    };
    let text = match super::read::spec_text(bytes) {
        Ok(t) => t,
        Err(m) => return (None, vec![diag("(file)", m, None)]),
    };
    if let Err(m) = crate::fsio::yaml::alias_budget(text) {
        return (None, vec![diag("(top level)", m.to_string(), None)]);
    }
    // Syntax errors (and duplicate keys in the text) stop the file: nothing below them
    // can be read reliably. serde_yaml's position is the file's here.
    let mut value: Value = match raw::from_yaml::<Value>(text) {
        Ok(v) => v,
        Err((field, message)) => {
            let (message, at) = split_location(&message);
            // Duplicate keys come without a position from the generic parse; the typed
            // one names the key and its line.
            if at.is_none() {
                if let Err((f, m)) = raw::claim_from_yaml(text) {
                    if let (m, Some(at)) = split_location(&m) {
                        return (None, vec![diag(&f, m, Some(at))]);
                    }
                }
            }
            return (None, vec![diag(&field, message, at)]);
        }
    };
    let id = value.get("id").and_then(Value::as_str).map(str::to_string);
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut repaired: Vec<Vec<Seg>> = Vec::new();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut raw_claim = None;
    for round in 0..MAX_ROUNDS {
        let current = if round == 0 {
            text.to_string()
        } else {
            match serde_yaml::to_string(&value) {
                Ok(t) => t,
                Err(_) => break,
            }
        };
        let (field, message) = match raw::claim_from_yaml(&current) {
            Ok(r) => {
                raw_claim = Some(r);
                break;
            }
            Err(e) => e,
        };
        let (message, _) = split_location(&message);
        if !seen.insert((field.clone(), message.clone())) {
            break; // the repair did not take: stop here.
        }
        let path = parse_path(&field);
        let problem = Problem::of(&message);
        let at_path = match &problem {
            Problem::Unknown(k) | Problem::Missing(k) => {
                let mut p = path.clone();
                p.push(Seg::Key(k.clone()));
                p
            }
            Problem::Invalid => path.clone(),
        };
        if !under_any(&at_path, &repaired) {
            let at = match &problem {
                // A missing field has no line of its own: its parent's.
                Problem::Missing(_) => locate(text, &path),
                _ => locate(text, &at_path),
            };
            let shown = match &problem {
                Problem::Invalid => field.clone(),
                Problem::Unknown(_) | Problem::Missing(_) => path_string(&at_path),
            };
            out.push(diag(&shown, message.clone(), at));
        }
        let ok = match &problem {
            Problem::Unknown(k) => remove(&mut value, &path, k),
            Problem::Missing(k) => {
                let mut p = path.clone();
                p.push(Seg::Key(k.clone()));
                repair(&mut value, &p, &field, &message, &allowed(&message))
            }
            Problem::Invalid => repair(&mut value, &path, &field, &message, &allowed(&message)),
        };
        if !ok {
            break;
        }
        // What is wrong below a placeholder is the placeholder's; a tag that was wrong
        // (`kind`) makes the rest of its mapping unreadable as written.
        let scope = if message.contains("unknown kind") && at_path.len() > 1 {
            at_path[..at_path.len() - 1].to_vec()
        } else {
            at_path
        };
        repaired.push(scope);
    }
    let Some(raw_claim) = raw_claim else {
        if out.is_empty() {
            out.push(diag(
                "(top level)",
                "the spec could not be read".into(),
                None,
            ));
        }
        return (id, in_text_order(with_slip_hints(out)));
    };
    let (_, errors) = super::load::validate_all(raw_claim, path, String::new());
    let mut shown: BTreeSet<(String, String)> = BTreeSet::new();
    for e in errors {
        let p = parse_path(&e.field);
        if under_any(&p, &repaired) || !shown.insert((e.field.clone(), e.message.clone())) {
            continue;
        }
        out.push(diag(&e.field, e.message, locate(text, &p)));
    }
    (id, in_text_order(with_slip_hints(out)))
}

/// Errors by line (those without a line, of the whole file, last); the order they were
/// found in otherwise.
fn in_text_order(mut out: Vec<Diagnostic>) -> Vec<Diagnostic> {
    out.sort_by_key(|d| (d.line.is_none(), d.line, d.column));
    out
}

/// A missing field that was found as an unknown field elsewhere was probably indented
/// under the wrong parent: the missing one is located at the slipped key.
fn with_slip_hints(mut out: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let unknown: Vec<(String, String, Option<usize>, Option<usize>)> = out
        .iter()
        .filter_map(|d| {
            let k = Problem::of(&d.message);
            match k {
                Problem::Unknown(k) => Some((k, d.field.clone(), d.line, d.column)),
                _ => None,
            }
        })
        .collect();
    for d in &mut out {
        if let Problem::Missing(k) = Problem::of(&d.message) {
            if let Some((_, field, line, column)) = unknown.iter().find(|u| u.0 == k) {
                d.message = format!(
                    "{}; `{k}` was found as `{field}`{}: indented under the wrong parent?",
                    d.message,
                    line.map(|l| format!(" at line {l}")).unwrap_or_default()
                );
                d.line = *line;
                d.column = *column;
            }
        }
    }
    out
}

/// What a serde error says is wrong.
enum Problem {
    /// `unknown field `k``: the key `k` of the mapping at the error's path.
    Unknown(String),
    /// `missing field `k``: the mapping at the error's path lacks `k`.
    Missing(String),
    /// Anything else: the value at the error's path.
    Invalid,
}

impl Problem {
    fn of(message: &str) -> Problem {
        let ticked = |prefix: &str| {
            message
                .strip_prefix(prefix)
                .and_then(|r| r.split('`').next())
                .map(str::to_string)
        };
        if let Some(k) = ticked("unknown field `") {
            Problem::Unknown(k)
        } else if let Some(k) = ticked("missing field `") {
            Problem::Missing(k)
        } else {
            Problem::Invalid
        }
    }
}

/// serde_yaml ends a message with its position (`... at line 3 column 5`): the message
/// without it, and the position. A syntax error of the YAML parser names two (`PROBLEM at
/// line A column B, while parsing CONTEXT at line C column D`): the problem's is taken.
fn split_location(message: &str) -> (String, Option<(usize, usize)>) {
    const AT: &str = " at line ";
    let parse = |tail: &str| -> Option<(usize, usize, usize)> {
        let (l, rest) = tail.split_once(" column ")?;
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        Some((l.trim().parse().ok()?, rest[..digits].parse().ok()?, digits))
    };
    let mut first = None;
    let mut stripped = message.to_string();
    for (i, _) in message.match_indices(AT) {
        let tail = &message[i + AT.len()..];
        if let Some((l, c, digits)) = parse(tail) {
            first.get_or_insert((l, c));
            let end = i + AT.len() + tail.find(" column ").unwrap_or(0) + " column ".len() + digits;
            if end == message.len() {
                stripped = message[..i].to_string();
            }
        }
    }
    (stripped, first)
}

fn under_any(path: &[Seg], scopes: &[Vec<Seg>]) -> bool {
    scopes.iter().any(|s| path.starts_with(s))
}

/// The values a message says are allowed: the backticked words after `expected one of`
/// or `known:` (e.g. the kinds of a prediction).
fn allowed(message: &str) -> Vec<String> {
    let tail = ["expected one of ", "known: ", "(known: "]
        .iter()
        .find_map(|m| message.find(m).map(|i| &message[i + m.len()..]));
    let Some(tail) = tail else {
        return Vec::new();
    };
    if tail.contains('`') {
        tail.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    } else {
        tail.trim_end_matches(')')
            .split(", ")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && !s.contains(' '))
            .collect()
    }
}

/// The mapping at `path` (or `None`).
fn at_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut cur = v;
    for seg in path {
        cur = match seg {
            Seg::Key(k) => cur.as_mapping_mut()?.get_mut(k.as_str())?,
            Seg::Index(i) => cur.as_sequence_mut()?.get_mut(*i)?,
        };
    }
    Some(cur)
}

fn remove(v: &mut Value, path: &[Seg], key: &str) -> bool {
    at_mut(v, path)
        .and_then(Value::as_mapping_mut)
        .and_then(|m| m.remove(key))
        .is_some()
}

fn set(v: &mut Value, path: &[Seg], new: Value) -> bool {
    let Some((last, parent)) = path.split_last() else {
        return false;
    };
    let Some(p) = at_mut(v, parent) else {
        return false;
    };
    match (last, p) {
        (Seg::Key(k), Value::Mapping(m)) => {
            m.insert(Value::String(k.clone()), new);
            true
        }
        (Seg::Index(i), Value::Sequence(s)) if *i < s.len() => {
            s[*i] = new;
            true
        }
        _ => false,
    }
}

/// Replaces the value at `path` with the first placeholder after which the raw spec no
/// longer fails at `field` (nor below it): the allowed values first, then one value of
/// each type.
fn repair(v: &mut Value, path: &[Seg], field: &str, message: &str, allowed: &[String]) -> bool {
    let mut candidates: Vec<Value> = allowed.iter().map(|a| Value::String(a.clone())).collect();
    candidates.extend([
        Value::Number(1.into()),
        Value::String("x".into()),
        Value::Sequence(Vec::new()),
        Value::Mapping(Default::default()),
        Value::Bool(false),
        Value::Null,
    ]);
    for c in candidates {
        let mut trial = v.clone();
        if !set(&mut trial, path, c) {
            return false;
        }
        let Ok(text) = serde_yaml::to_string(&trial) else {
            continue;
        };
        let fixed = match raw::claim_from_yaml(&text) {
            Ok(_) => true,
            Err((f, m)) => {
                // Not fixed: the same error, or a value still of the wrong type here.
                // Fixed enough: a placeholder mapping now lacking fields (filled in by
                // the next rounds, silently: they are below the repaired path).
                let (m, _) = split_location(&m);
                let same = f == field && m == message;
                let still_wrong = parse_path(&f).as_slice() == path
                    && matches!(Problem::of(&m), Problem::Invalid);
                !(same || still_wrong)
            }
        };
        if fixed {
            *v = trial;
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_classified() {
        assert!(matches!(
            Problem::of("unknown field `bogus`, expected one of `id`"),
            Problem::Unknown(k) if k == "bogus"
        ));
        assert!(matches!(
            Problem::of("missing field `title`"),
            Problem::Missing(k) if k == "title"
        ));
        assert_eq!(
            allowed("kind: unknown kind `x` (known: exponent, rate_at_most, event)"),
            ["exponent", "rate_at_most", "event"]
        );
        assert_eq!(
            split_location("invalid type: string \"a\", expected f64 at line 3 column 12"),
            (
                "invalid type: string \"a\", expected f64".to_string(),
                Some((3, 12))
            )
        );
        let m = "did not find expected key at line 5 column 3, while parsing a block mapping \
                 at line 1 column 1";
        assert_eq!(
            split_location(m),
            (
                "did not find expected key at line 5 column 3, while parsing a block mapping"
                    .to_string(),
                Some((5, 3))
            )
        );
    }
}
