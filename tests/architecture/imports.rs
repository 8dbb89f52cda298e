//! The file-level import graph of `src/` (issue 48): every `crate::` path a file names —
//! in a `use` line or inline in its code, outside comments, strings and `#[cfg(test)]`
//! items — resolved to the file that defines the item (following `pub use`
//! re-exports), and the circles of that graph (Tarjan's strongly connected components).
//!
//! `crate::`, `super::` and `self::` paths count (and a `use` of a child module); what
//! a module file (`mod.rs`, or `x.rs` of a folder `x/`) names of its own parts does not:
//! a folder's `mod.rs` holds the shared types of its parts and calls them, so a part
//! naming `super::X` and `mod.rs` calling `part::f` is the folder's shape, not a circle
//! between concerns ([`owns`]).
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// One source file of the library: its path under the crate root and module path.
pub struct File {
    /// `src/report/kept.rs`.
    pub path: String,
    /// `["report", "kept"]`; empty for `src/lib.rs`.
    pub module: Vec<String>,
    /// The text with comments, literals and `#[cfg(test)]` items blanked out.
    code: String,
}

impl File {
    /// The top-level module: `report` for `src/report/kept.rs`, `rng` for `src/rng.rs`,
    /// `lib` for `src/lib.rs`.
    pub fn top(&self) -> &str {
        self.module.first().map_or("lib", |s| s.as_str())
    }
}

/// The graph: files and the edges `from -> to` with the first line that makes each.
pub struct Graph {
    pub files: Vec<File>,
    pub edges: BTreeMap<(usize, usize), String>,
}

/// Blanks comments, string and char literals with spaces (newlines kept).
pub fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = text[i..].find('\n').map_or(b.len(), |k| i + k);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (b[i] == b'r' || b[i] == b'b')
            && (i == 0 || !is_ident(b[i - 1]))
            && raw_string_at(b, i).is_some()
        {
            let end = raw_string_at(b, i).unwrap();
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let close = if b.get(i + 1) == Some(&b'\\') {
                (i + 2..b.len().min(i + 12)).find(|&j| b[j] == b'\'')
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match close {
                Some(j) => {
                    blank(&mut out, i, j + 1);
                    i = j + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8: only whole literals are replaced")
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The end of a raw (byte) string starting at `i` (`r"`, `r#"`, `br##"`), if one does.
fn raw_string_at(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + usize::from(b[i] == b'b');
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let k = b[j + 1..].windows(close.len()).position(|w| w == close)?;
    Some(j + 1 + k + close.len())
}

/// Blanks every item under `#[cfg(test)]` (a test module, a test-only `use`).
pub fn drop_test_items(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(test)]") {
        let start = from + k;
        let mut j = start + "#[cfg(test)]".len();
        let mut depth = 0usize;
        while j < b.len() {
            match b[j] {
                b';' if depth == 0 => break,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let end = (j + 1).min(b.len());
        for c in &mut out[start..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    String::from_utf8(out).unwrap()
}

/// The paths of a `use` tree (`a::{b, c::{self, d}}` -> `a::b`, `a::c`, `a::c::d`), each
/// with the name it binds (the last segment or its `as` alias; `*` for a glob).
pub fn expand_use(tree: &str) -> Vec<(Vec<String>, String)> {
    let toks = tokens(tree);
    let mut out = vec![];
    let mut pos = 0;
    use_tree(&toks, &mut pos, &[], &mut out);
    out
}

fn tokens(s: &str) -> Vec<String> {
    let mut toks = vec![];
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if is_ident(b[i]) {
            let j = (i..b.len()).find(|&j| !is_ident(b[j])).unwrap_or(b.len());
            toks.push(s[i..j].to_string());
            i = j;
        } else if b[i..].starts_with(b"::") {
            toks.push("::".into());
            i += 2;
        } else if b"{},*".contains(&b[i]) {
            toks.push((b[i] as char).to_string());
            i += 1;
        } else {
            i += 1;
        }
    }
    toks
}

fn use_tree(
    t: &[String],
    pos: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut path = prefix.to_vec();
    loop {
        match t.get(*pos).map(String::as_str) {
            Some("{") => {
                *pos += 1;
                while !matches!(t.get(*pos).map(String::as_str), Some("}") | None) {
                    use_tree(t, pos, &path, out);
                    if t.get(*pos).map(String::as_str) == Some(",") {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            }
            Some("*") => {
                *pos += 1;
                out.push((path, "*".into()));
                return;
            }
            Some("self") if !path.is_empty() => *pos += 1,
            Some(seg) if seg != "," && seg != "}" && seg != "::" => {
                path.push(seg.to_string());
                *pos += 1;
            }
            _ => {}
        }
        if t.get(*pos).map(String::as_str) == Some("::") {
            *pos += 1;
            continue;
        }
        let mut name = path.last().cloned().unwrap_or_default();
        if t.get(*pos).map(String::as_str) == Some("as") {
            name = t.get(*pos + 1).cloned().unwrap_or_default();
            *pos += 2;
        }
        out.push((path, name));
        return;
    }
}

/// The `use` statements of `code`: (byte offset, is `pub`, the tree's text).
fn use_statements(code: &str) -> Vec<(usize, bool, String)> {
    let b = code.as_bytes();
    let mut out = vec![];
    let mut from = 0;
    while let Some(k) = code[from..].find("use") {
        let i = from + k;
        from = i + 3;
        let before_ok = i == 0 || !is_ident(b[i - 1]);
        let after_ok = b.get(i + 3).is_some_and(|c| c.is_ascii_whitespace());
        if !before_ok || !after_ok {
            continue;
        }
        let Some(end) = code[i..].find(';').map(|e| i + e) else {
            continue;
        };
        let head = code[..i].trim_end();
        let is_pub = head.ends_with("pub") || head.ends_with(')') && head.contains("pub(");
        out.push((i, is_pub, code[i + 3..end].to_string()));
        from = end;
    }
    out
}

/// Inline paths of `code` outside `use` statements that start with `crate::`,
/// `super::` or `self::`: (offset, segments).
fn inline_paths(code: &str, uses: &[(usize, bool, String)]) -> Vec<(usize, Vec<String>)> {
    let b = code.as_bytes();
    let inside_use = |i: usize| uses.iter().any(|(s, _, t)| i >= *s && i < s + 3 + t.len());
    let mut out = vec![];
    for head in ["crate::", "super::", "self::"] {
        for (i, _) in code.match_indices(head) {
            let glued = i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b':');
            if glued || inside_use(i) {
                continue;
            }
            let mut j = i;
            while j < b.len() && (is_ident(b[j]) || b[j..].starts_with(b"::")) {
                j += if b[j] == b':' { 2 } else { 1 };
            }
            let segs = code[i..j]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            out.push((i, segs));
        }
    }
    out
}

/// Whether `from` is the module file of a folder holding `to` (`report/mod.rs` owns
/// `report/kept.rs`; `audit/white_box.rs` owns `audit/white_box/driver.rs`): a folder's
/// `mod.rs` calling its parts is the folder's shape, not an import between concerns.
pub fn owns(from: &File, to: &File) -> bool {
    to.module.len() > from.module.len() && to.module.starts_with(&from.module)
}

/// Every `.rs` file under `src/` except the binary's `main.rs`, sorted.
pub fn load(root: &Path) -> Vec<File> {
    let mut paths = vec![];
    collect(&root.join("src"), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| p != &root.join("src/main.rs"))
        .map(|p| {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mut module: Vec<String> = rel
                .trim_start_matches("src/")
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let code = drop_test_items(&strip(&fs::read_to_string(&p).unwrap()));
            File {
                path: rel,
                module,
                code,
            }
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

impl Graph {
    pub fn build(files: Vec<File>) -> Graph {
        let by_module: BTreeMap<Vec<String>, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        // Re-exports of each file: bound name -> absolute target path.
        let mut reexports: Vec<BTreeMap<String, Vec<Vec<String>>>> = vec![];
        for f in &files {
            let mut map: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
            for (_, is_pub, tree) in use_statements(&f.code) {
                if !is_pub {
                    continue;
                }
                for (path, name) in expand_use(&tree) {
                    if let Some(abs) = absolute(&path, f, &by_module) {
                        map.entry(name).or_default().push(abs);
                    }
                }
            }
            reexports.push(map);
        }
        let mut edges = BTreeMap::new();
        for (from, f) in files.iter().enumerate() {
            let uses = use_statements(&f.code);
            let mut found: Vec<(usize, Vec<String>)> = vec![];
            for (at, _, tree) in &uses {
                for (path, _) in expand_use(tree) {
                    if let Some(abs) = absolute(&path, f, &by_module) {
                        found.push((*at, abs));
                    }
                }
            }
            for (at, path) in inline_paths(&f.code, &uses) {
                if let Some(abs) = absolute(&path, f, &by_module) {
                    found.push((at, abs));
                }
            }
            for (at, path) in found {
                for to in resolve(&path, &files, &by_module, &reexports, 0) {
                    if to != from && !owns(&files[from], &files[to]) {
                        let line = f.code[..at].matches('\n').count() + 1;
                        edges
                            .entry((from, to))
                            .or_insert_with(|| format!("{}:{line}", f.path));
                    }
                }
            }
        }
        Graph { files, edges }
    }

    /// The index of the file at `path` (panics on an unknown path).
    pub fn index(&self, path: &str) -> usize {
        self.files.iter().position(|f| f.path == path).expect(path)
    }

    /// The strongly connected components with more than one file (Tarjan), each sorted.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let n = self.files.len();
        let mut adj = vec![vec![]; n];
        for &(a, b) in self.edges.keys() {
            adj[a].push(b);
        }
        let mut t = Tarjan {
            adj,
            index: vec![None; n],
            low: vec![0; n],
            on: vec![false; n],
            stack: vec![],
            next: 0,
            out: vec![],
        };
        for v in 0..n {
            if t.index[v].is_none() {
                t.visit(v);
            }
        }
        let mut out: Vec<Vec<usize>> = t.out.into_iter().filter(|c| c.len() > 1).collect();
        for c in &mut out {
            c.sort();
        }
        out.sort();
        out
    }

    /// Edges between top-level modules: (from, to) -> the first file edge making it.
    pub fn module_edges(&self) -> BTreeMap<(String, String), String> {
        let mut out = BTreeMap::new();
        for (&(a, b), site) in &self.edges {
            let (ma, mb) = (self.files[a].top(), self.files[b].top());
            if ma != mb {
                out.entry((ma.to_string(), mb.to_string()))
                    .or_insert_with(|| {
                        format!("{site} ({} -> {})", self.files[a].path, self.files[b].path)
                    });
            }
        }
        out
    }
}

/// A `use` path made absolute (without `crate`), or `None` for another crate's path.
fn absolute(
    path: &[String],
    f: &File,
    by_module: &BTreeMap<Vec<String>, usize>,
) -> Option<Vec<String>> {
    let first = path.first()?.as_str();
    let mut here = f.module.clone();
    let rest = match first {
        "crate" => return Some(path[1..].to_vec()),
        "self" => &path[1..],
        "super" => {
            let mut p = path;
            while p.first().is_some_and(|s| s == "super") {
                here.pop();
                p = &p[1..];
            }
            p
        }
        _ => {
            let mut child = here.clone();
            child.push(first.to_string());
            if !by_module.contains_key(&child) {
                return None;
            }
            path
        }
    };
    here.extend(rest.iter().cloned());
    Some(here)
}

/// The files a path (without `crate`) names: the longest module prefix, then the
/// re-exports of its next segment, followed.
fn resolve(
    path: &[String],
    files: &[File],
    by_module: &BTreeMap<Vec<String>, usize>,
    reexports: &[BTreeMap<String, Vec<Vec<String>>>],
    depth: usize,
) -> Vec<usize> {
    let Some(k) = (0..=path.len())
        .rev()
        .find(|&k| by_module.contains_key(&path[..k]))
    else {
        return vec![];
    };
    let file = by_module[&path[..k]];
    let Some(name) = path.get(k) else {
        return vec![file];
    };
    if depth > 8 || defines(&files[file].code, name) {
        return vec![file];
    }
    let targets: Vec<Vec<String>> = match reexports[file].get(name) {
        Some(t) => t.clone(),
        None => reexports[file]
            .get("*")
            .map(|globs| {
                globs
                    .iter()
                    .map(|g| [g.clone(), vec![name.clone()]].concat())
                    .collect()
            })
            .unwrap_or_default(),
    };
    let mut out: Vec<usize> = targets
        .iter()
        .flat_map(|t| resolve(t, files, by_module, reexports, depth + 1))
        .collect();
    if out.is_empty() {
        out.push(file);
    }
    out
}

/// Whether `code` declares an item called `name`.
fn defines(code: &str, name: &str) -> bool {
    [
        "fn",
        "struct",
        "enum",
        "const",
        "static",
        "type",
        "trait",
        "mod",
        "union",
        "macro_rules!",
    ]
    .iter()
    .any(|kw| {
        let pat = format!("{kw} {name}");
        code.match_indices(&pat).any(|(i, _)| {
            let b = code.as_bytes();
            let before = i == 0 || !is_ident(b[i - 1]);
            let after = b.get(i + pat.len()).is_none_or(|&c| !is_ident(c));
            before && after
        })
    })
}

struct Tarjan {
    adj: Vec<Vec<usize>>,
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    out: Vec<Vec<usize>>,
}

impl Tarjan {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on[v] = true;
        for w in self.adj[v].clone() {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(iw) if self.on[w] => self.low[v] = self.low[v].min(iw),
                _ => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut comp = vec![];
            loop {
                let w = self.stack.pop().unwrap();
                self.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            self.out.push(comp);
        }
    }
}
