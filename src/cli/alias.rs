//! Inputs and outputs never alias (issue 50, family 2): before anything runs, every path
//! a command will write — `--out`, `--junit`, `--json FILE`, `--partial-out`, the
//! stability records, `$GITHUB_STEP_SUMMARY`, the result cache — is resolved and compared
//! with every file it reads as input — the specs, the scorecard registries, the baseline
//! snapshots — by device and inode (a hard link, a `..` detour or a symbolic link to the
//! same file is caught) and by resolved path (an output that does not exist yet). An
//! output *file* that is an input, or an output *directory* that holds one, is exit 2
//! naming both: `dpclaims run --junit claims/b.yaml` (a forgotten value: the suite would
//! run and the spec be replaced by JUnit XML) is refused before any claim runs.
//!
//! Every command with an output flag goes through [`guard`], which adds the repository's
//! tracked files ([`tracked`]) to its inputs: `run`, `merge`, `stability` (`--out`,
//! `--junit`, `--json`, `--records`), `fig2`, `privacy-report`, `faults` (`--out`),
//! `perf` and `audit` (`--markdown`), `man --out`.
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The refusal of [`check`], [`step_summary`] and [`no_mount_inside`]: typed, so that the
/// run's error outputs (the JUnit error case, the job summary) are not written to the
/// very paths it refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

macro_rules! refuse {
    ($($t:tt)*) => {
        return Err(anyhow::Error::new(Refused(format!($($t)*))))
    };
}

/// What a command writes: a file, or a directory it writes into (or swaps).
pub enum Output<'a> {
    File(&'a str, &'a Path),
    Dir(&'a str, &'a Path),
}

/// One input file: what it is ("the spec", "the scorecard registry") and its path.
pub struct Input {
    pub what: String,
    pub path: PathBuf,
}

impl Input {
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Input {
            what: what.into(),
            path: path.into(),
        }
    }
}

/// `path` made absolute and resolved as far as it exists: the existing prefix
/// canonicalised, the rest appended (an output that does not exist yet).
pub fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut rest = Vec::new();
    let mut p = abs.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(p) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                p = parent;
            }
            _ => return abs,
        }
    }
}

/// An input with its resolved path and its (device, inode) when it exists.
type ResolvedInput<'a> = (&'a Input, PathBuf, Option<(u64, u64)>);

/// Refuses (exit 2, through the caller's error) an output that is or holds an input.
pub fn check(outputs: &[Output<'_>], inputs: &[Input]) -> anyhow::Result<()> {
    let ins: Vec<ResolvedInput> = inputs
        .iter()
        .map(|i| {
            let id = std::fs::metadata(&i.path).ok().map(|m| (m.dev(), m.ino()));
            (i, resolve(&i.path), id)
        })
        .collect();
    for o in outputs {
        match o {
            Output::File(what, path) => {
                let real = resolve(path);
                // `lstat`: a link at the output is replaced, never written through, but
                // a link to an input is still a forgotten value; both are refused.
                let ids: Vec<(u64, u64)> = [
                    std::fs::symlink_metadata(path).ok(),
                    std::fs::metadata(path).ok(),
                ]
                .into_iter()
                .flatten()
                .filter(|m| m.is_file())
                .map(|m| (m.dev(), m.ino()))
                .collect();
                for (i, ip, iid) in &ins {
                    if *ip == real || iid.is_some_and(|x| ids.contains(&x)) {
                        refuse!(
                            "{what} {} is {} {}: an output never replaces an input \
                             (a forgotten value after {what}?)",
                            crate::report::shown_path(path),
                            i.what,
                            crate::report::shown_path(&i.path)
                        );
                    }
                }
            }
            Output::Dir(what, path) => {
                let real = resolve(path);
                let dir_id = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
                for (i, ip, _) in &ins {
                    let inside =
                        ip.starts_with(&real) || dir_id.is_some_and(|d| ancestors_hold(&i.path, d));
                    if inside {
                        refuse!(
                            "{what} {} holds {} {}: an output directory never holds an \
                             input (choose another directory)",
                            crate::report::shown_path(path),
                            i.what,
                            crate::report::shown_path(&i.path)
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether a directory of device+inode `dir` is among the ancestors of `path`.
fn ancestors_hold(path: &Path, dir: (u64, u64)) -> bool {
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    real.ancestors().skip(1).any(|a| {
        std::fs::metadata(a)
            .map(|m| (m.dev(), m.ino()) == dir)
            .unwrap_or(false)
    })
}

/// [`check`] with the repository's tracked files ([`tracked`]) among the inputs.
pub fn guard(outputs: &[Output<'_>], mut inputs: Vec<Input>) -> anyhow::Result<()> {
    inputs.extend(tracked());
    check(outputs, &inputs)
}

/// The files git tracks in the checkout that holds the working directory — the
/// project's sources, specs, registries, snapshots and docs — minus the generated
/// report sets the report-writing commands replace: the repository's `reports/` and
/// the project's own (`<project root>/reports`, issue 58: a project made by
/// `dpclaims init` in a subdirectory of a repository, whose root is not the
/// repository's). Outside a checkout, or without git, none: the check is skipped
/// silently.
pub fn tracked() -> Vec<Input> {
    use std::os::unix::ffi::OsStrExt as _;
    let git = |dir: Option<&Path>, args: &[&str]| -> Option<Vec<u8>> {
        let mut c = std::process::Command::new("git");
        if let Some(d) = dir {
            c.arg("-C").arg(d);
        }
        let o = c
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        o.status.success().then_some(o.stdout)
    };
    let Some(mut top) = git(None, &["rev-parse", "--show-toplevel"]) else {
        return Vec::new();
    };
    while top.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        top.pop();
    }
    let top = PathBuf::from(std::ffi::OsStr::from_bytes(&top));
    let Some(list) = git(Some(&top), &["ls-files", "-z"]) else {
        return Vec::new();
    };
    // `git ls-files` names paths relative to the repository's top; the project's
    // reports are compared as absolute paths, resolved as git resolves its top.
    let generated = [
        top.join("reports"),
        resolve(&crate::project::path("reports")),
    ];
    list.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| top.join(Path::new(std::ffi::OsStr::from_bytes(p))))
        .filter(|p| !generated.iter().any(|g| p.starts_with(g)))
        .map(|p| Input::new("the tracked file", p))
        .collect()
}

/// The registries of a `scorecards` directory (`*.yaml` directly in it).
pub fn registries(dir: &Path) -> Vec<Input> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(Input::new("the scorecard registry", p));
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// `$GITHUB_STEP_SUMMARY` when set: it must be a regular file or not exist yet (a FIFO
/// would hang the run when appended to, a device is not a summary). Checked before
/// anything runs; exit 2 naming it.
pub fn step_summary() -> anyhow::Result<Option<PathBuf>> {
    let Some(p) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let p = PathBuf::from(p);
    if let Ok(m) = std::fs::metadata(&p) {
        if !m.is_file() {
            refuse!(
                "$GITHUB_STEP_SUMMARY {} is {}: the job summary must be a regular file",
                crate::report::shown_path(&p),
                crate::fsio::describe(m.file_type())
            );
        }
    }
    Ok(Some(p))
}

/// An output directory that holds a mount point is refused before anything runs: the
/// report swap would carry the mounted files over and remove them with the old set
/// (a directory that *is* a mount point is written file by file instead).
pub fn no_mount_inside(what: &str, dir: &Path) -> anyhow::Result<()> {
    if let Some(m) = crate::fsio::remove::mount_under(dir) {
        refuse!(
            "{what} {} holds the mount point {}: dpclaims never writes or removes across a \
             mount boundary (choose another output directory)",
            crate::report::shown_path(dir),
            crate::report::shown_path(&m)
        );
    }
    Ok(())
}

/// The inputs of a run over `claims`: their specs, the registries of `scorecards`, and
/// the baseline snapshots of `baseline` (when compared).
pub fn run_inputs(
    claims: &[crate::spec::Claim],
    scorecards: Option<&Path>,
    baseline: Option<&Path>,
) -> Vec<Input> {
    let mut ins: Vec<Input> = claims
        .iter()
        .map(|c| Input::new("the spec", c.file.clone()))
        .collect();
    if let Some(dir) = scorecards {
        ins.extend(registries(dir));
    }
    if let Some(b) = baseline {
        for c in claims {
            let f = crate::report::baseline::snapshot_file(b, &c.id);
            if f.exists() {
                ins.push(Input::new("the baseline snapshot", f));
            }
        }
    }
    ins
}

/// A FIFO, device or socket inside an output directory is found before anything runs
/// (the report swap carries every entry over, and would fail on it after the whole
/// simulation): exit 2 naming it. Links are not followed.
pub fn no_special_files(what: &str, dir: &Path) -> anyhow::Result<()> {
    fn walk(d: &Path, depth: usize) -> Option<(PathBuf, std::fs::FileType)> {
        if depth > 64 {
            return None;
        }
        for e in std::fs::read_dir(d).ok()?.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                if let Some(f) = walk(&e.path(), depth + 1) {
                    return Some(f);
                }
            } else if !t.is_file() && !t.is_symlink() {
                return Some((e.path(), t));
            }
        }
        None
    }
    if let Some((p, t)) = walk(dir, 0) {
        // Not a `Refused`: neither the JUnit file nor the job summary is refused, so the
        // run's exit-2 outputs are written as for any other refusal (issue 58).
        anyhow::bail!(
            "{what} {} holds {}, which is {}, not a regular file: a report set holds \
             only files and directories (remove it)",
            crate::report::shown_path(dir),
            crate::report::shown_path(&p),
            crate::fsio::describe(t)
        );
    }
    Ok(())
}

/// `--json` makes standard output one JSON document: an output file that *is* standard
/// output (`--junit /dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`, or the very file or
/// pipe stdout is redirected to) would mix a second document into it. Refused before
/// anything runs (exit 2); a shared character device (`/dev/null` for both) is no mix.
pub fn not_stdout_with_json(what: &str, path: &Path) -> anyhow::Result<()> {
    let alias = matches!(
        path.to_str(),
        Some("/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1")
    );
    let same = || -> Option<bool> {
        use std::os::unix::fs::FileTypeExt as _;
        let p = std::fs::metadata(path).ok()?;
        if p.file_type().is_char_device() {
            return Some(false);
        }
        // SAFETY: fstat of descriptor 1 into a zeroed struct this function owns.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(1, &mut st) } != 0 {
            return None;
        }
        Some(p.dev() == st.st_dev as u64 && p.ino() == st.st_ino as u64)
    };
    if alias || same().unwrap_or(false) {
        refuse!(
            "{what} {} is standard output, which --json makes one JSON document: the two \
             would mix (write {what} to a file, or drop --json)",
            crate::report::shown_path(path)
        );
    }
    Ok(())
}
