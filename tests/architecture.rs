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
//! And one rule of size: no source file under `src/` has more than [`MAX_LINES`] lines
//! before its inline tests, so that a file is one concern a reader can hold.
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
