//! The JSON Schema of the spec format (docs/claim.schema.json, issue 33 item 2): the
//! committed file is the generated one, every shipped spec validates against it, and
//! specs the loader rejects for their structure are rejected by it too.
//!
//! The validator is a minimal one for the keywords the schema uses (draft 7; an unknown
//! keyword fails the test, so a schema that starts using one is noticed): a validator
//! crate would add its regex and URL stack to every test build for one test.
use dpclaims::spec::schema::{claim_schema, claim_schema_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The errors of `v` against `schema` (`root` resolves `$ref`s), with their JSON paths.
fn validate(root: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{at}: not allowed"));
        }
        return;
    };
    for (k, kw) in s {
        match k.as_str() {
            "$ref" => {
                let name = kw
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/definitions/"))
                    .expect("local $ref");
                validate(root, &root["definitions"][name], v, at, errors);
            }
            "type" => {
                let types: Vec<&str> = match kw {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => panic!("type {kw}"),
                };
                let ok = types.iter().any(|t| match *t {
                    "string" => v.is_string(),
                    "number" => v.is_number(),
                    "integer" => {
                        v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|x| x.fract() == 0.0)
                    }
                    "boolean" => v.is_boolean(),
                    "array" => v.is_array(),
                    "object" => v.is_object(),
                    "null" => v.is_null(),
                    other => panic!("type {other}"),
                });
                if !ok {
                    errors.push(format!("{at}: {v} is not of type {types:?}"));
                }
            }
            "const" => {
                if v != kw {
                    errors.push(format!("{at}: {v} is not {kw}"));
                }
            }
            "enum" => {
                if !kw.as_array().unwrap().contains(v) {
                    errors.push(format!("{at}: {v} not in {kw}"));
                }
            }
            "minimum" => {
                if v.as_f64().is_some_and(|x| x < kw.as_f64().unwrap()) {
                    errors.push(format!("{at}: {v} < {kw}"));
                }
            }
            "maximum" => {
                if v.as_f64().is_some_and(|x| x > kw.as_f64().unwrap()) {
                    errors.push(format!("{at}: {v} > {kw}"));
                }
            }
            "required" => {
                if let Some(o) = v.as_object() {
                    for r in kw.as_array().unwrap() {
                        let r = r.as_str().unwrap();
                        if !o.contains_key(r) {
                            errors.push(format!("{at}: missing `{r}`"));
                        }
                    }
                }
            }
            "properties" => {
                if let Some(o) = v.as_object() {
                    for (name, sub) in kw.as_object().unwrap() {
                        if let Some(x) = o.get(name) {
                            validate(root, sub, x, &format!("{at}.{name}"), errors);
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Some(o) = v.as_object() {
                    let known = s.get("properties").and_then(Value::as_object);
                    for (name, x) in o {
                        if known.is_some_and(|p| p.contains_key(name)) {
                            continue;
                        }
                        if kw == &Value::Bool(false) {
                            errors.push(format!("{at}: unknown field `{name}`"));
                        } else {
                            validate(root, kw, x, &format!("{at}.{name}"), errors);
                        }
                    }
                }
            }
            "items" => {
                if let Some(a) = v.as_array() {
                    for (i, x) in a.iter().enumerate() {
                        validate(root, kw, x, &format!("{at}[{i}]"), errors);
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" => {
                let passing: Vec<Vec<String>> = kw
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|sub| {
                        let mut e = Vec::new();
                        validate(root, sub, v, at, &mut e);
                        e
                    })
                    .collect();
                let n = passing.iter().filter(|e| e.is_empty()).count();
                let ok = match k.as_str() {
                    "anyOf" => n >= 1,
                    "oneOf" => n == 1,
                    _ => n == passing.len(),
                };
                if !ok {
                    errors.push(format!(
                        "{at}: {k} matched {n} of {}: {}",
                        passing.len(),
                        passing
                            .iter()
                            .flatten()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
            // Annotations.
            "$schema" | "definitions" | "title" | "description" | "default" | "format"
            | "examples" => {}
            other => panic!("the test's validator does not know the keyword `{other}`"),
        }
    }
}

fn schema_errors(yaml: &str) -> Vec<String> {
    let schema = claim_schema();
    let v: Value = serde_yaml::from_str(yaml).expect("YAML");
    let mut errors = Vec::new();
    validate(&schema, &schema, &v, "$", &mut errors);
    errors
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    let committed = std::fs::read_to_string(root().join("docs/claim.schema.json"))
        .expect("docs/claim.schema.json");
    assert!(
        committed == format!("{}\n", claim_schema_json()),
        "docs/claim.schema.json is stale: regenerate it with \
         `cargo run --release -- schema > docs/claim.schema.json` (or `make schema`)"
    );
}

#[test]
fn every_shipped_spec_validates_against_the_schema() {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["claims", "examples/external", "examples/opacus"] {
        files.extend(dpclaims::spec::spec_files(&root().join(dir)).unwrap());
    }
    assert!(files.len() > 20, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let errors = schema_errors(&text);
        assert!(errors.is_empty(), "{}: {errors:#?}", f.display());
    }
    let good = crate::check::GOOD;
    assert_eq!(schema_errors(good), Vec::<String>::new());
}

#[test]
fn specs_the_loader_rejects_for_their_structure_the_schema_rejects_too() {
    let good = crate::check::GOOD;
    let bad = [
        // An unknown field at the top level, in a sweep, in a prediction.
        good.replace("statement: \"s\"\n", "statement: \"s\"\ncolour: blue\n"),
        good.replace(
            "replicates: 1}\n    full",
            "replicates: 1, replicate: 2}\n    full",
        ),
        good.replace("    op: \"<=\"\n", "    op: \"<=\"\n    tolerence: 0.1\n"),
        // Wrong types.
        good.replace("replicates: 1}\n    full", "replicates: many}\n    full"),
        good.replace("title: \"tiny\"", "title: [a, b]"),
        good.replace("    negative_control: true", "    negative_control: [yes]"),
        // A required field missing, an unknown kind.
        good.replace("system: gaussian_calibration\n", ""),
        good.replace("kind: inequality", "kind: inequalty"),
        // A field of another kind.
        good.replace("    op: \"<=\"\n", "    op: \"<=\"\n    tolerance: 0.1\n"),
    ];
    for spec in &bad {
        assert!(spec != good);
        let loaded = dpclaims::spec::claim_from_bytes(Path::new("bad.yaml"), spec.as_bytes());
        assert!(loaded.is_err(), "the loader accepts:\n{spec}");
        assert!(
            !schema_errors(spec).is_empty(),
            "the schema accepts:\n{spec}"
        );
    }
}

#[test]
fn the_scaffold_names_the_schema_and_validates_against_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    // Outside a checkout (no docs/claim.schema.json) the scaffold says how to get one
    // rather than pointing at nothing.
    let o = crate::util::dpclaims_in(dir.path(), &["new", "elsewhere"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.path().join("claims/elsewhere.yaml")).unwrap();
    assert!(
        text.starts_with(
            "# Editor completion and validation: `dpclaims schema > claim.schema.json`"
        ),
        "{text}"
    );
    std::fs::remove_file(dir.path().join("claims/elsewhere.yaml")).unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/claim.schema.json"),
        dir.path().join("docs/claim.schema.json"),
    )
    .unwrap();
    let o = crate::util::dpclaims_in(dir.path(), &["new", "mine"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.path().join("claims/mine.yaml")).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("# yaml-language-server: $schema=../docs/claim.schema.json")
    );
    assert_eq!(schema_errors(&text), Vec::<String>::new());
    let o = crate::util::dpclaims_in(dir.path(), &["new", "here", "--out", "here.yaml"]);
    assert!(o.status.success());
    let text = std::fs::read_to_string(dir.path().join("here.yaml")).unwrap();
    assert!(text.starts_with("# yaml-language-server: $schema=docs/claim.schema.json\n"));
}
