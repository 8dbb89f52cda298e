//! The core knows no faults (DESIGN 4; docs/fault-matrix.md, "Why the core knows no faults").
//!
//! What a fault of the catalogue changes — a noise formula, a clip rule, an accountant's
//! conversion — reaches the core as a [`dpclaims::train::Recipe`] passed in by whoever
//! builds the run, the same door every run uses; the catalogue lives in `src/faults/`
//! only. These tests keep it that way:
//! * no file of the core (`src/train`, `src/privacy`, `src/models`, `src/data`) nor of
//!   the door the matrix shares with every run (`src/systems`, `src/plan`,
//!   `src/execute`) mentions faults — no import of `crate::faults`, no `Fault`, no
//!   comment about one;
//! * no `fn *_with_fault` twin of an entry point exists anywhere in `src/`.
//!
//! The direction of imports (issue 48, item 2; ARCHITECTURE.md, "Direction of imports"):
//! * no two files of `src/` import each other, directly or around a circle
//!   ([`imports`]: every `crate::`/`super::` path resolved to the file that defines it;
//!   the circles still to break are listed in [`PENDING_CIRCLES`], which only shrinks);
//! * every import between top-level modules is in ARCHITECTURE.md's "may import" table,
//!   and that table keeps the pipeline's direction (spec <- plan <- execute; spec, fit <-
//!   judge; judge <- report) and the core's (it imports no stage).
//!
//! And one rule of size: no source file under `src/` has more than [`MAX_LINES`] lines
//! before its inline tests, so that a file is one concern a reader can hold.
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Folders and files that must not know the fault catalogue.
const FAULT_FREE: &[&str] = &[
    "src/train",
    "src/privacy",
    "src/models",
    "src/data",
    "src/systems",
    "src/plan",
    "src/execute",
];

/// Most lines a file under `src/` may have before its inline tests (`#[cfg(test)]`).
const MAX_LINES: usize = 600;

/// Every file under `path` (or `path` itself), sorted.
fn files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = vec![];
    let mut entries: Vec<_> = fs::read_dir(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        out.extend(files(&p));
    }
    out
}

/// Byte offsets of the words starting with "fault" (any case): `fault`, `Fault`,
/// `faults`, `faulty`, `fault-free`, but not `default`.
fn fault_mentions(text: &str) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices("fault")
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphabetic())
        .collect()
}

/// Names of the functions declared as `fn <name>_with_fault` in `text`.
fn with_fault_fns(text: &str) -> Vec<String> {
    text.split("fn ")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| name.ends_with("_with_fault"))
        .collect()
}

/// Lines of `text` before its first `#[cfg(test)]` line (all of them without one).
fn lines_before_tests(text: &str) -> usize {
    text.lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .count()
}

fn line_of(text: &str, offset: usize) -> (usize, &str) {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    (text[..offset].matches('\n').count() + 1, &text[start..end])
}

#[test]
fn the_scanners_see_what_they_look_for() {
    // Negative controls: a mention in any form is found, `default` is not one.
    assert_eq!(fault_mentions("use crate::faults::Fault;").len(), 2);
    assert_eq!(fault_mentions("a faulty core; fault-free; FAULTS").len(), 3);
    assert!(fault_mentions("#[derive(Default)] fn default() {}").is_empty());
    assert_eq!(
        with_fault_fns("pub fn run_with_fault(x: u8) {}\nfn run(x: u8) {}"),
        vec!["run_with_fault".to_string()]
    );
    assert!(with_fault_fns("fn run(fault: Fault) {}").is_empty());
    assert_eq!(lines_before_tests("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(lines_before_tests("a\nb\nc\n"), 3);
}

#[test]
fn no_file_of_the_core_or_of_the_runner_names_faults() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = vec![];
    let mut scanned = 0;
    for dir in FAULT_FREE {
        for file in files(&root.join(dir)) {
            // Binary files (the compressed digits) cannot name anything.
            let Ok(text) = fs::read_to_string(&file) else {
                continue;
            };
            scanned += 1;
            for i in fault_mentions(&text) {
                let (n, line) = line_of(&text, i);
                offenders.push(format!(
                    "{}:{n}: {}",
                    file.strip_prefix(root).unwrap().display(),
                    line.trim()
                ));
            }
        }
    }
    assert!(scanned > 30, "scanned only {scanned} files: wrong root?");
    assert!(
        offenders.is_empty(),
        "the core must not know the fault catalogue: take the formula from the recipe \
         (src/train/recipe.rs) and put the wrong version in src/faults/. Mentions:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn no_with_fault_entry_point_remains() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = vec![];
    for file in files(&root.join("src")) {
        if file.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        for name in with_fault_fns(&text) {
            offenders.push(format!(
                "{}: fn {name}",
                file.strip_prefix(root).unwrap().display()
            ));
        }
    }
    assert!(
        offenders.is_empty(),
        "one entry point per function, taking a recipe; no `_with_fault` twins:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn no_source_file_exceeds_the_line_limit_before_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = vec![];
    let mut scanned = 0;
    for file in files(&root.join("src")) {
        if file.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        scanned += 1;
        let n = lines_before_tests(&fs::read_to_string(&file).unwrap());
        if n > MAX_LINES {
            offenders.push(format!(
                "{}: {n} lines",
                file.strip_prefix(root).unwrap().display()
            ));
        }
    }
    assert!(scanned > 30, "scanned only {scanned} files: wrong root?");
    assert!(
        offenders.is_empty(),
        "at most {MAX_LINES} lines before the inline tests: split the file by concern (a \
         folder with `mod.rs` and one file per part, as src/faults/matrix/):\n{}",
        offenders.join("\n")
    );
}

mod imports;

/// The circles between files of `src/` that are still to be broken (issue 48), each as
/// its sorted files. The test fails on any other circle and on an entry here that is no
/// longer a circle, so the list only shrinks.
const PENDING_CIRCLES: &[&[&str]] = &[];

/// The stages of a claim's pipeline and the stages each may import (issue 48, item 2:
/// spec <- plan <- execute; spec, fit <- judge; judge <- report). `cli` and `faults`
/// drive the stages and may import every one.
const STAGES: &[(&str, &[&str])] = &[
    ("spec", &[]),
    ("plan", &["spec"]),
    ("execute", &["spec", "plan"]),
    ("judge", &["spec", "fit"]),
    ("report", &["spec", "fit", "judge"]),
];

/// The drivers: they run the stages (the loop of a run is `pipeline`'s; `cli` parses and
/// calls it, `faults` runs it over a wrong Recipe). No stage and no part of the core
/// imports a driver.
const DRIVERS: &[&str] = &["pipeline", "cli", "faults"];

/// The core: imports no stage, no driver.
const CORE: &[&str] = &["train", "privacy", "models", "data", "linalg", "rng"];

fn import_graph() -> imports::Graph {
    imports::Graph::build(imports::load(Path::new(env!("CARGO_MANIFEST_DIR"))))
}

#[test]
fn the_import_scanner_sees_what_it_looks_for() {
    // Negative controls on a crate made here: a circle through `use crate::`, an inline
    // path and a `super::` path is found; a mention in a comment, a string or a test
    // module is not an import; a `mod.rs` calling its own parts is not a circle.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir_all(src.join("a")).unwrap();
    let put = |p: &str, t: &str| fs::write(src.join(p), t).unwrap();
    put("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    put(
        "a/mod.rs",
        "mod x;\nmod y;\npub use x::X;\npub struct S;\nfn f() { y::g(); }\n",
    );
    put("a/x.rs", "use crate::b::B;\npub struct X;\n");
    put("a/y.rs", "use super::S;\npub fn g() {}\n");
    put("b.rs", "pub struct B;\nfn h() -> crate::a::X { todo!() }\n");
    put(
        "c.rs",
        "// use crate::b::B;\nconst T: &str = \"crate::a::X\";\n#[cfg(test)]\nmod t { use crate::b::B; }\n",
    );
    let g = imports::Graph::build(imports::load(dir.path()));
    let name = |i: usize| g.files[i].path.clone();
    let edges: Vec<(String, String)> = g.edges.keys().map(|&(a, b)| (name(a), name(b))).collect();
    assert!(
        edges.contains(&("src/a/x.rs".into(), "src/b.rs".into())),
        "{edges:?}"
    );
    // `crate::a::X` is re-exported by a/mod.rs from a/x.rs: the edge goes to x.rs.
    assert!(
        edges.contains(&("src/b.rs".into(), "src/a/x.rs".into())),
        "{edges:?}"
    );
    assert!(
        edges.contains(&("src/a/y.rs".into(), "src/a/mod.rs".into())),
        "{edges:?}"
    );
    assert!(!edges.iter().any(|(a, _)| a == "src/c.rs"), "{edges:?}");
    assert!(!edges.iter().any(|(a, _)| a == "src/a/mod.rs"), "{edges:?}");
    let circles: Vec<Vec<String>> = g
        .cycles()
        .iter()
        .map(|c| c.iter().map(|&i| name(i)).collect())
        .collect();
    assert_eq!(
        circles,
        vec![vec!["src/a/x.rs".to_string(), "src/b.rs".to_string()]]
    );
    assert_eq!(
        imports::expand_use("a::{b, c::{self, d as e}, f::*}"),
        vec![
            (vec!["a".into(), "b".into()], "b".into()),
            (vec!["a".into(), "c".into()], "c".into()),
            (vec!["a".into(), "c".into(), "d".into()], "e".into()),
            (vec!["a".into(), "f".into()], "*".into()),
        ]
    );
}

#[test]
fn no_circle_between_files_of_src() {
    let g = import_graph();
    assert!(g.files.len() > 150 && g.edges.len() > 500, "wrong root?");
    let found: Vec<Vec<String>> = g
        .cycles()
        .iter()
        .map(|c| c.iter().map(|&i| g.files[i].path.clone()).collect())
        .collect();
    let pending: Vec<Vec<String>> = PENDING_CIRCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let new: Vec<_> = found.iter().filter(|c| !pending.contains(c)).collect();
    let gone: Vec<_> = pending.iter().filter(|c| !found.contains(c)).collect();
    let describe = |c: &Vec<String>| {
        let mut s = c.join(" ");
        for a in c {
            for b in c {
                let (ia, ib) = (g.index(a), g.index(b));
                if let Some(site) = g.edges.get(&(ia, ib)) {
                    s += &format!("\n    {a} -> {b} at {site}");
                }
            }
        }
        s
    };
    assert!(
        new.is_empty(),
        "files that import each other (through `crate::`/`super::` paths, ARCHITECTURE.md, \
         \"Direction of imports\"): move the shared type down into a file both import, do \
         not merge the files:\n{}",
        new.iter()
            .map(|c| describe(c))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        gone.is_empty(),
        "circles broken: remove them from PENDING_CIRCLES:\n{gone:?}"
    );
}

/// The "may import" table of ARCHITECTURE.md: module -> the modules it may import.
fn may_import_table() -> Vec<(String, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("| module | layer | may import |")
        .expect("ARCHITECTURE.md has the table `| module | layer | may import |`");
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let module = ticked(cells[1]).first().cloned().unwrap_or_default();
            (module, ticked(cells[3]))
        })
        .collect()
}

#[test]
fn every_import_follows_the_table_and_the_direction() {
    let g = import_graph();
    let table = may_import_table();
    let modules: BTreeSet<String> = g
        .files
        .iter()
        .map(|f| f.top().to_string())
        .filter(|m| m != "lib")
        .collect();
    let rows: BTreeSet<String> = table.iter().map(|(m, _)| m.clone()).collect();
    assert_eq!(
        rows, modules,
        "one row per top-level module of src/ in ARCHITECTURE.md"
    );
    let allowed = |a: &str, b: &str| {
        table
            .iter()
            .any(|(m, may)| m == a && may.iter().any(|x| x == b))
    };
    let mut offenders = vec![];
    for ((a, b), site) in g.module_edges() {
        if a != "lib" && !allowed(&a, &b) {
            offenders.push(format!(
                "{a} -> {b} (not in its \"may import\" cell): {site}"
            ));
        }
    }
    // The table itself keeps the direction of the pipeline and of the core.
    for (m, may) in &table {
        for t in may {
            let stage_rule = STAGES.iter().find(|(s, _)| s == m);
            let against = stage_rule.is_some_and(|(_, ok)| {
                STAGES.iter().any(|(s, _)| s == t) && !ok.contains(&t.as_str())
            });
            let core_up = CORE.contains(&m.as_str())
                && (STAGES.iter().any(|(s, _)| s == t) || DRIVERS.contains(&t.as_str()));
            let driver_up = (stage_rule.is_some() || CORE.contains(&m.as_str()))
                && DRIVERS.contains(&t.as_str());
            if against || core_up || driver_up {
                offenders.push(format!(
                    "the table lets `{m}` import `{t}`: against the direction"
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "imports against ARCHITECTURE.md's table (\"Direction of imports\"):\n{}",
        offenders.join("\n")
    );
}

/// The command line only parses, calls the driver and prints (issue 48, item 3): no file
/// of `src/cli/` names anything of `plan`, `execute` or `judge` — not a function, not a
/// type (the types of the values the driver returns are named through `pipeline`). A
/// negative control: the same rule finds `pipeline`'s own calls into the stages.
#[test]
fn the_command_line_calls_no_stage() {
    let g = import_graph();
    const STAGE_CALLS: &[&str] = &["plan", "execute", "judge"];
    let offenders = |from: &str| -> Vec<String> {
        g.edges
            .iter()
            .filter(|((a, b), _)| {
                g.files[*a].top() == from && STAGE_CALLS.contains(&g.files[*b].top())
            })
            .map(|((a, b), site)| format!("{site}: {} -> {}", g.files[*a].path, g.files[*b].path))
            .collect()
    };
    let cli = offenders("cli");
    assert!(
        cli.is_empty(),
        "the command line calls a stage (go through src/pipeline/):\n{}",
        cli.join("\n")
    );
    assert!(
        !offenders("pipeline").is_empty(),
        "the rule sees no call of the driver into a stage: it cannot see one of the CLI"
    );
}

/// A quoted list `const NAME: &[&str] = &[ ... ];` of build.rs.
fn build_rs_list(name: &str) -> Vec<String> {
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs")).unwrap();
    let start = text
        .find(&format!("const {name}: &[&str] = &["))
        .unwrap_or_else(|| panic!("build.rs has no list {name}"));
    let body = &text[start..start + text[start..].find("];").unwrap()];
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(|l| l.split('"').skip(1).step_by(2).map(str::to_string))
        .collect()
}

/// Imports out of the engine that cannot change a unit's numbers, with why.
const ENGINE_IMPORTS_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "src/figures",
        "src/report",
        "figure pages: drawing, number formatting and the swap of the figure files, after the units",
    ),
    (
        "src/figures",
        "src/spec/mod.rs",
        "`spec::Profile`, the quick/full switch of a figure's sizes: a type, no computation",
    ),
    (
        "src/systems/external",
        "src/fsio",
        "reads the core's declared files (their bytes are in the unit's cache key)",
    ),
];

/// The result cache reuses a unit's numbers under [`dpclaims::build_id::ENGINE_HASH`],
/// computed by build.rs over its `ENGINE` list: every file of the engine must import only
/// files of the engine (or an import listed with its reason), or a change of an imported
/// file would be served stale from the cache. Found this way: the systems' two-sample
/// tests and the audit's Clopper-Pearson bounds come from `src/fit`, which was not in the
/// list. A negative control: without `src/fit` in the list, the rule finds those imports.
#[test]
fn every_file_the_engine_imports_is_in_the_engine_hash() {
    let engine = build_rs_list("ENGINE");
    let excluded = build_rs_list("ENGINE_EXCLUDED");
    assert!(engine.iter().any(|e| e == "src/train"), "{engine:?}");
    let g = import_graph();
    let offenders = |engine: &[String]| -> Vec<String> {
        let inside = |p: &str| {
            engine
                .iter()
                .any(|e| p == e || p.starts_with(&format!("{e}/")))
                && !excluded.iter().any(|x| p.starts_with(x.as_str()))
        };
        g.edges
            .iter()
            .filter_map(|((from, to), site)| {
                let (a, b) = (&g.files[*from].path, &g.files[*to].path);
                let allowed = ENGINE_IMPORTS_ALLOWED
                    .iter()
                    .any(|(f, t, _)| a.starts_with(f) && b.starts_with(t));
                (inside(a) && !inside(b) && !allowed).then(|| format!("{a} -> {b} ({site})"))
            })
            .collect()
    };
    let found = offenders(&engine);
    assert!(
        found.is_empty(),
        "files of the engine import files outside build.rs's ENGINE (the cache would serve their changes stale):\n{}",
        found.join("\n")
    );
    let without_fit: Vec<String> = engine.into_iter().filter(|e| e != "src/fit").collect();
    let control = offenders(&without_fit);
    assert!(
        control
            .iter()
            .any(|o| o.starts_with("src/systems/engines.rs -> src/fit/"))
            && control.iter().any(|o| o.starts_with("src/privacy/audit/")),
        "{control:?}"
    );
}
