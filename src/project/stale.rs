//! The staging directories that a killed `dpclaims init` left behind (issue 58): a
//! `kill -9` (or a power cut) between the staging directory's creation and its removal
//! leaves `.dpclaims-init-<pid>-<random>` in the directory init wrote into. The next
//! init into the same place removes such a directory when — and only when — all of
//! these hold:
//!
//! * its name is exactly the pattern init gives its own ([`parse_name`]: the process id
//!   in decimal, then 16 lowercase hex digits), and it is a directory itself, not a
//!   link to one, owned by this user (another user's is left alone, silently);
//! * the process that made it is gone (`kill(pid, 0)` fails with `ESRCH`; a process
//!   that exists but is another user's counts as alive, and so does this process);
//! * it holds only what init writes ([`only_init_files`]): directories and regular
//!   files, no link, no device, at the paths of the project below the components of a
//!   target directory that init was creating; at most [`MAX_ENTRIES`] entries.
//!
//! Anything else is left as it is. A directory with a dead owner that fails the last
//! test is reported as kept, with the reason; the removal itself never follows a link
//! nor crosses a mount ([`crate::fsio::remove::remove_tree`]).
use std::io;
use std::path::{Path, PathBuf};

/// The prefix of every staging directory of init.
pub const PREFIX: &str = ".dpclaims-init-";

/// More entries than this and a directory is not init's (the project has a few dozen).
pub const MAX_ENTRIES: usize = 4096;

/// The name of this process's staging directory: [`PREFIX`], its id, a random part.
pub fn stage_name(random: u64) -> String {
    format!("{PREFIX}{}-{random:016x}", std::process::id())
}

/// The owner's process id when `name` is exactly a staging directory's name
/// (`.dpclaims-init-<pid>-<16 lowercase hex digits>`, the pid without leading zeros).
pub fn parse_name(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, random) = rest.split_once('-')?;
    let digits_ok = !pid.is_empty()
        && pid.len() <= 10
        && pid.bytes().all(|b| b.is_ascii_digit())
        && !pid.starts_with('0');
    let random_ok = random.len() == 16
        && random
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !(digits_ok && random_ok) {
        return None;
    }
    pid.parse::<i32>().ok().filter(|p| *p > 0)
}

/// Whether the process `pid` is gone: `kill(pid, 0)` says "no such process". This
/// process is never gone (another thread may be initialising beside it).
pub fn owner_gone(pid: i32) -> bool {
    if u32::try_from(pid).is_ok_and(|p| p == std::process::id()) {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// What was done with one leftover staging directory.
#[derive(Debug)]
pub enum Outcome {
    Removed,
    /// Left in place: why (it holds something init does not write, a link...).
    Kept(String),
    /// Its removal failed (permissions, a mount inside): the error.
    Failed(io::Error),
}

/// One leftover staging directory of a dead init, and what was done with it.
#[derive(Debug)]
pub struct Leftover {
    pub path: PathBuf,
    pub pid: i32,
    pub outcome: Outcome,
}

/// Removes the leftover staging directories in `dir` (module docs), calling `report`
/// for each one whose owner is gone (removed, kept or failed). A directory that cannot
/// be listed has none.
pub fn sweep(dir: &Path, report: &mut dyn FnMut(Leftover)) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(PathBuf, i32)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let pid = parse_name(name.to_str()?)?;
            Some((e.path(), pid))
        })
        .collect();
    found.sort();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    for (path, pid) in found {
        // Another user's (a shared directory): not this user's init, left alone.
        let theirs = path
            .symlink_metadata()
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) != me);
        if theirs || !owner_gone(pid) {
            continue;
        }
        let outcome = match only_init_files(&path) {
            Err(why) => Outcome::Kept(why),
            Ok(()) => match crate::fsio::remove::remove_tree(&path) {
                Ok(()) => Outcome::Removed,
                Err(e) => Outcome::Failed(e),
            },
        };
        report(Leftover { path, pid, outcome });
    }
}

/// `Ok` when `stage` is a directory (not a link) holding only what init writes there
/// (module docs); else why not.
pub fn only_init_files(stage: &Path) -> Result<(), String> {
    let m = stage
        .symlink_metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !m.is_dir() {
        return Err(format!(
            "it is {}, not a directory",
            crate::fsio::describe(m.file_type())
        ));
    }
    // Every entry below the stage: relative path, is it a directory.
    let mut entries: Vec<(PathBuf, bool)> = Vec::new();
    walk(stage, Path::new(""), &mut entries)?;
    // The project's paths: its files, and the directories they are in.
    let files: Vec<PathBuf> = super::templates::files()
        .iter()
        .map(PathBuf::from)
        .collect();
    let dirs: Vec<PathBuf> = files
        .iter()
        .flat_map(|f| f.ancestors().skip(1))
        .filter(|a| !a.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    // The project's root: the stage itself, or one of the missing components of a
    // target that init was creating — a chain of single directories.
    let mut root = PathBuf::new();
    loop {
        let fits = entries
            .iter()
            .all(|(p, is_dir)| match p.strip_prefix(&root) {
                Ok(rel) if rel.as_os_str().is_empty() => true,
                Ok(rel) if *is_dir => dirs.iter().any(|d| d == rel),
                Ok(rel) => files.iter().any(|f| f == rel),
                // Above the root: one of the chain's directories.
                Err(_) => *is_dir && root.starts_with(p),
            });
        if fits {
            return Ok(());
        }
        let below: Vec<&(PathBuf, bool)> = entries
            .iter()
            .filter(|(p, _)| p.parent() == Some(root.as_path()))
            .collect();
        match below.as_slice() {
            [(p, true)] => root = p.clone(),
            _ => {
                let odd = entries
                    .iter()
                    .find(|(p, is_dir)| match p.strip_prefix(&root) {
                        Ok(rel) if rel.as_os_str().is_empty() => false,
                        Ok(rel) if *is_dir => !dirs.iter().any(|d| d == rel),
                        Ok(rel) => !files.iter().any(|f| f == rel),
                        Err(_) => false,
                    })
                    .map(|(p, _)| p.display().to_string())
                    .unwrap_or_default();
                return Err(format!(
                    "it holds {}, which init does not write",
                    crate::spec::echo::escape_controls(&odd)
                ));
            }
        }
    }
}

/// Lists `base/rel` into `out`, refusing links and anything but files and directories.
fn walk(base: &Path, rel: &Path, out: &mut Vec<(PathBuf, bool)>) -> Result<(), String> {
    let dir = base.join(rel);
    let rd = std::fs::read_dir(&dir).map_err(|e| format!("cannot list it: {e}"))?;
    for e in rd {
        let e = e.map_err(|e| format!("cannot list it: {e}"))?;
        let r = rel.join(e.file_name());
        let m = e
            .path()
            .symlink_metadata()
            .map_err(|e| format!("cannot read it: {e}"))?;
        let shown = || crate::spec::echo::escape_controls(&r.display().to_string()).into_owned();
        if m.file_type().is_symlink() {
            return Err(format!("it holds the symbolic link {}", shown()));
        }
        if !m.is_dir() && !m.is_file() {
            return Err(format!(
                "it holds {} ({}), which init does not write",
                shown(),
                crate::fsio::describe(m.file_type())
            ));
        }
        out.push((r.clone(), m.is_dir()));
        if out.len() > MAX_ENTRIES {
            return Err(format!("it holds more than {MAX_ENTRIES} entries"));
        }
        if m.is_dir() {
            walk(base, &r, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_pattern_names_an_owner() {
        assert_eq!(
            parse_name(".dpclaims-init-1234-00ff00ff00ff00ff"),
            Some(1234)
        );
        for bad in [
            ".dpclaims-init-00ff00ff00ff00ff",
            ".dpclaims-init-0123-00ff00ff00ff00ff",
            ".dpclaims-init--1-00ff00ff00ff00ff",
            ".dpclaims-init-12-00FF00FF00FF00FF",
            ".dpclaims-init-12-00ff00ff00ff00f",
            ".dpclaims-init-12-00ff00ff00ff00ff0",
            ".dpclaims-init-12-00ff00ff00ff00ff/",
            ".dpclaims-init-99999999999-00ff00ff00ff00ff",
            "x.dpclaims-init-12-00ff00ff00ff00ff",
        ] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
        let mine = stage_name(7);
        assert_eq!(parse_name(&mine), Some(std::process::id() as i32));
        assert!(!owner_gone(std::process::id() as i32));
    }

    #[test]
    fn a_stage_holds_only_the_project_below_a_chain_of_directories() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("s");
        std::fs::create_dir_all(s.join("new/proj/docs")).unwrap();
        assert_eq!(only_init_files(&s), Ok(()));
        std::fs::write(s.join("new/proj/README.md"), "partial").unwrap();
        std::fs::write(s.join("new/proj/docs/claim.schema.json"), "{").unwrap();
        assert_eq!(only_init_files(&s), Ok(()));
        std::fs::write(s.join("new/proj/docs/mine.txt"), "mine").unwrap();
        let e = only_init_files(&s).unwrap_err();
        assert!(e.contains("docs/mine.txt"), "{e}");
        std::fs::remove_file(s.join("new/proj/docs/mine.txt")).unwrap();
        std::os::unix::fs::symlink("/", s.join("new/proj/claims")).unwrap();
        let e = only_init_files(&s).unwrap_err();
        assert!(e.contains("symbolic link new/proj/claims"), "{e}");
    }
}
