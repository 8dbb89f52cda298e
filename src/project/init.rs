//! `dpclaims init [DIR]`: a project of one's own ([`super::templates`]), all or nothing
//! (issue 58, item 5).
//!
//! 1. **Checked first.** A directory that is already a project (it holds
//!    [`super::MARKER`]) is refused; so is any path init would write that exists (a
//!    file, or a plain file where init makes a directory, such as a file named `core`),
//!    and any symbolic link among the components of those paths below `DIR` (`claims`
//!    linked elsewhere would be written through, outside the project). Each is exit 2
//!    naming the paths, with nothing written.
//! 2. **Written aside.** The whole project is written into a staging directory
//!    `.dpclaims-init-<pid>-<random>` on the same file system: in `DIR` when it exists
//!    (its parent may not be writable, or be another file system), else in its nearest
//!    existing ancestor. This thread owns it ([`crate::fsio::temps::own`]): a signal
//!    waits for it, and it stops at the next file. A `kill -9` cannot be waited for:
//!    the staging directory it leaves is removed by the next init there, once its
//!    process is gone ([`super::stale`]).
//! 3. **Moved into place.** A `DIR` that did not exist appears in one rename, whole. Into
//!    an existing `DIR` each new entry is renamed in ([`crate::fsio::write::rename_new`]:
//!    never over a file created meanwhile), into the directories already there (`docs/`)
//!    file by file, the marker last.
//!
//! On any failure (a full disk, a file created meanwhile, a signal) what was moved in
//! is removed again and the staging directory with it: `DIR` is left as it was, and a
//! retry is not told "already a dpclaims project".
use super::templates::{FILES, SCHEMA};
use crate::spec::echo::escape_controls;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a project could not be created (the CLI exits 2 with this message). Paths are
/// shown with their control characters escaped.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(
        "{0} is already a dpclaims project (it holds {marker}): nothing written; \
         add claims with `dpclaims new <id>` there",
        marker = super::MARKER
    )]
    AlreadyAProject(String),
    #[error("{dir} holds {which} already: nothing written (init never replaces a file; choose an empty directory)")]
    WouldOverwrite { dir: String, which: String },
    #[error(
        "{0} is a symbolic link where init would write: nothing written (init never \
         writes through a link, which may lead outside the project; remove the link)"
    )]
    Link(String),
    #[error("{0} is not a directory: nothing written")]
    NotADirectory(String),
    #[error("cannot write {path}: {source}; {left}")]
    Io {
        path: String,
        source: io::Error,
        /// What the failure left: "nothing written" once everything was removed again.
        left: String,
    },
}

/// A path as shown in a message: its control characters escaped.
fn shown(p: &Path) -> String {
    escape_controls(&p.display().to_string()).into_owned()
}

/// The files written, relative to the project's root, in order.
pub use super::templates::files;

/// Creates the project in `dir` (created when missing); returns the files written.
pub fn init(dir: &Path) -> Result<Vec<PathBuf>, InitError> {
    init_with(dir, &mut |_| {})
}

/// [`init`], telling `leftover` of each staging directory of a killed init that it found
/// where it stages (removed, or kept and why: [`super::stale`]). The sweep comes after
/// the checks: a refused init changes nothing.
pub fn init_with(
    dir: &Path,
    leftover: &mut dyn FnMut(super::stale::Leftover),
) -> Result<Vec<PathBuf>, InitError> {
    let (base, missing) = existing_base(dir)?;
    if missing.is_empty() {
        if dir.join(super::MARKER).symlink_metadata().is_ok() {
            return Err(InitError::AlreadyAProject(shown(dir)));
        }
        check_paths(dir)?;
    }
    super::stale::sweep(&base, leftover);
    let name = project_name(dir);
    let schema = crate::spec::schema::claim_schema_json() + "\n";
    let all: Vec<(&str, String)> = FILES
        .iter()
        .map(|(p, t)| (*p, t.replace("{{name}}", &name)))
        .chain(std::iter::once((SCHEMA, schema)))
        .collect();
    let io_err = |path: &Path, source| InitError::Io {
        path: shown(path),
        source,
        left: "nothing written".into(),
    };
    // The staging directory: in `dir` when it exists, else beside the first missing
    // component (in `base`); this thread its one owner.
    let stage = base.join(super::stale::stage_name(crate::fsio::write::random_u64()));
    let owned = crate::fsio::temps::own(&stage).map_err(|e| io_err(&stage, e))?;
    std::fs::create_dir(&stage).map_err(|e| io_err(&base, e))?;
    let root: PathBuf = missing.iter().fold(stage.clone(), |p, c| p.join(c));
    let result = write_all(&stage, &root, &all).and_then(|()| {
        if let Some(first) = missing.first() {
            step(&stage)?;
            crate::fsio::write::rename_new(&stage.join(first), &base.join(first))
                .map_err(|e| (base.join(first), e))
        } else {
            move_in(&stage, dir)
        }
    });
    let cleaned = crate::fsio::remove::remove_tree(&stage);
    drop(owned);
    match (result, cleaned) {
        (Ok(()), _) => Ok(all.iter().map(|(rel, _)| dir.join(rel)).collect()),
        (Err((path, source)), cleaned) => Err(InitError::Io {
            path: shown(&path),
            source,
            left: match cleaned {
                Ok(()) => "nothing written".into(),
                Err(e) => format!(
                    "nothing written, but the staging directory {} could not be removed: {e}",
                    shown(&stage)
                ),
            },
        }),
    }
}

/// `dir`'s nearest existing ancestor (itself when it exists) and the components below
/// it that init creates. An existing `dir` (or ancestor) that is not a directory is
/// refused; a link to a directory is followed (the user named it).
fn existing_base(dir: &Path) -> Result<(PathBuf, Vec<std::ffi::OsString>), InitError> {
    let mut base = dir.to_path_buf();
    let mut missing = Vec::new();
    loop {
        if base.as_os_str().is_empty() {
            base = PathBuf::from(".");
        }
        match base.symlink_metadata() {
            Ok(_) if base.is_dir() => break,
            Ok(_) => return Err(InitError::NotADirectory(shown(&base))),
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(InitError::Io {
                    path: shown(&base),
                    source: e,
                    left: "nothing written".into(),
                })
            }
            Err(e) => {
                let last = base.components().next_back();
                let (Some(Component::Normal(name)), Some(parent)) = (last, base.parent()) else {
                    return Err(InitError::Io {
                        path: shown(dir),
                        source: e,
                        left: "nothing written".into(),
                    });
                };
                missing.push(name.to_os_string());
                base = parent.to_path_buf();
            }
        }
    }
    missing.reverse();
    Ok((base, missing))
}

/// Step 1 of the module docs for an existing `dir`: no link among the components below
/// `dir` of a path init writes, none of those paths there already.
fn check_paths(dir: &Path) -> Result<(), InitError> {
    let mut links = std::collections::BTreeSet::new();
    let mut taken = std::collections::BTreeSet::new();
    for rel in files() {
        let parts: Vec<Component> = Path::new(rel).components().collect();
        let mut p = dir.to_path_buf();
        for (i, c) in parts.iter().enumerate() {
            p.push(c);
            let rel_here: PathBuf = parts[..=i].iter().collect();
            let m = match p.symlink_metadata() {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => {
                    return Err(InitError::Io {
                        path: shown(&p),
                        source: e,
                        left: "nothing written".into(),
                    })
                }
            };
            if m.file_type().is_symlink() {
                links.insert(p.clone());
                break;
            }
            if i + 1 == parts.len() {
                taken.insert(shown(&rel_here));
            } else if !m.is_dir() {
                taken.insert(format!(
                    "{} ({}, where init makes a directory)",
                    shown(&rel_here),
                    crate::fsio::describe(m.file_type())
                ));
                break;
            }
        }
    }
    if !links.is_empty() {
        let all: Vec<String> = links.iter().map(|p| shown(p)).collect();
        return Err(InitError::Link(all.join(", ")));
    }
    if !taken.is_empty() {
        return Err(InitError::WouldOverwrite {
            dir: shown(dir),
            which: taken.into_iter().collect::<Vec<_>>().join(", "),
        });
    }
    Ok(())
}

/// A step boundary: a signal's stop abandons the init here.
fn step(at: &Path) -> Result<(), (PathBuf, io::Error)> {
    if crate::fsio::temps::stopping() {
        return Err((at.to_path_buf(), crate::fsio::temps::stopped_error()));
    }
    Ok(())
}

/// Writes every file under `root` (the staging directory's copy of the project, `stage`
/// or below it), then checks that each is still there whole: a staging directory removed
/// under init (by another machine's init sweeping a shared directory, [`super::stale`])
/// fails the init instead of moving half a project into place.
fn write_all(
    stage: &Path,
    root: &Path,
    all: &[(&str, String)],
) -> Result<(), (PathBuf, io::Error)> {
    for (rel, text) in all {
        step(root)?;
        let path = root.join(rel);
        write_new(stage, &path, text).map_err(|e| (path, e))?;
    }
    for (rel, text) in all {
        let path = root.join(rel);
        match path.symlink_metadata() {
            Ok(m) if m.is_file() && m.len() == text.len() as u64 => {}
            Ok(_) => return Err((path, io::Error::other("changed under init"))),
            Err(e) => return Err((path, e)),
        }
    }
    Ok(())
}

/// Writes a new file below `stage` (its directories created, never `stage` itself: a
/// staging directory removed meanwhile is an error, not made again), never replacing
/// one.
fn write_new(stage: &Path, path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write as _;
    if let Some(parent) = path.parent() {
        let mut below: Vec<&Path> = parent
            .ancestors()
            .take_while(|a| a.starts_with(stage) && *a != stage)
            .collect();
        below.reverse();
        for d in below {
            match std::fs::create_dir(d) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// Step 3 of the module docs into an existing `dir`; on a failure every entry moved in
/// is removed again (`dir` as it was) and the failure returned.
fn move_in(stage: &Path, dir: &Path) -> Result<(), (PathBuf, io::Error)> {
    let mut moved = Vec::new();
    let r = move_tree(stage, dir, Path::new(""), &mut moved);
    if r.is_err() {
        for p in moved.iter().rev() {
            let _ = crate::fsio::remove::remove_tree(p);
        }
    }
    r
}

/// Moves the entries of `stage/rel` to `dir/rel`: renamed whole where `dir` has none,
/// merged into a directory `dir` has; the marker last. Records what it moved.
fn move_tree(
    stage: &Path,
    dir: &Path,
    rel: &Path,
    moved: &mut Vec<PathBuf>,
) -> Result<(), (PathBuf, io::Error)> {
    let from_dir = stage.join(rel);
    let read = |e| (from_dir.clone(), e);
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(&from_dir)
        .map_err(read)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()
        .map_err(read)?;
    names.sort();
    names.sort_by_key(|n| n == super::MARKER);
    for name in names {
        let r = rel.join(&name);
        let (from, to) = (stage.join(&r), dir.join(&r));
        step(&to)?;
        match to.symlink_metadata() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                crate::fsio::write::rename_new(&from, &to).map_err(|e| (to.clone(), e))?;
                moved.push(to);
            }
            Ok(m) if m.is_dir() && from.symlink_metadata().is_ok_and(|f| f.is_dir()) => {
                move_tree(stage, dir, &r, moved)?;
            }
            Ok(_) => return Err((to, io::Error::from(io::ErrorKind::AlreadyExists))),
            Err(e) => return Err((to, e)),
        }
    }
    Ok(())
}

/// The directory's name, as the project's name (`my-project` when it has none),
/// without the characters that would break out of the TOML string or the README's
/// heading (quotes, backslashes, control characters, newlines included).
fn project_name(dir: &Path) -> String {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    abs.file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .filter(|c| !matches!(c, '"' | '\\') && !crate::spec::echo::is_terminal_control(*c))
                .collect::<String>()
        })
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "my-project".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_written_once_and_never_over_a_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("paper");
        let written = init(&dir).unwrap();
        assert_eq!(written.len(), files().len());
        // Every claim of the project loads as written.
        let claims = crate::spec::load_claims(&[dir.join("claims")]).unwrap();
        assert_eq!(claims.len(), 1);
        assert!(claims[0].draft().is_none());
        let again = init(&dir).unwrap_err().to_string();
        assert!(again.contains("already a dpclaims project"), "{again}");
        // Not a project, but a file init would write: nothing written.
        let other = d.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("README.md"), "mine").unwrap();
        let e = init(&other).unwrap_err().to_string();
        assert!(
            e.contains("README.md") && e.contains("nothing written"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(other.join("README.md")).unwrap(),
            "mine"
        );
        assert!(!other.join(crate::project::MARKER).exists());
        // No staging directory is left anywhere.
        for p in [d.path(), &dir, &other] {
            let left: Vec<_> = std::fs::read_dir(p)
                .unwrap()
                .flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(".dpclaims-init")
                })
                .collect();
            assert!(left.is_empty(), "{left:?}");
        }
    }

    #[test]
    fn a_move_that_fails_midway_takes_back_what_it_moved() {
        // The staging copy of a project, moved into a directory where `b` appeared
        // after the check: `a` (moved first) is removed again, the marker never moved.
        let d = tempfile::tempdir().unwrap();
        let (stage, dir) = (d.path().join("stage"), d.path().join("dir"));
        std::fs::create_dir(&stage).unwrap();
        for rel in ["a/x", "b", "docs/s.json", crate::project::MARKER] {
            write_new(&stage, &stage.join(rel), "new").unwrap();
        }
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        std::fs::write(dir.join("docs/mine"), "mine").unwrap();
        std::fs::write(dir.join("b"), "mine").unwrap();
        let (at, e) = move_in(&stage, &dir).unwrap_err();
        assert_eq!(
            (at, e.kind()),
            (dir.join("b"), io::ErrorKind::AlreadyExists)
        );
        let mut left: Vec<String> = walk(&dir);
        left.sort();
        assert_eq!(left, ["b", "docs", "docs/mine"]);
        assert_eq!(std::fs::read_to_string(dir.join("b")).unwrap(), "mine");
        // Without the obstacle, everything is moved, the existing `docs/` merged into.
        std::fs::remove_file(dir.join("b")).unwrap();
        let stage2 = d.path().join("stage2");
        std::fs::create_dir(&stage2).unwrap();
        for rel in ["a/x", "b", "docs/s.json", crate::project::MARKER] {
            write_new(&stage2, &stage2.join(rel), "new").unwrap();
        }
        move_in(&stage2, &dir).unwrap();
        let mut all = walk(&dir);
        all.sort();
        assert_eq!(
            all,
            [
                "a",
                "a/x",
                "b",
                "docs",
                "docs/mine",
                "docs/s.json",
                crate::project::MARKER
            ]
        );
    }

    fn walk(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                out.extend(walk(&e.path()).into_iter().map(|s| format!("{name}/{s}")));
            }
            out.push(name);
        }
        out
    }

    #[test]
    fn the_name_in_the_files_has_no_control_character() {
        let n = project_name(Path::new("/tmp/a\nb\"c\\d\u{1b}[31m"));
        assert_eq!(n, "abcd[31m");
        assert_eq!(project_name(Path::new("/tmp/\n")), "my-project");
    }
}
