//! Removing a directory tree without crossing a mount boundary (issue 50, family 2).
//!
//! `std::fs::remove_dir_all` follows no links but does descend into mount points: a
//! bind-mounted `data/` under an output directory would lose its files. [`remove_tree`]
//! checks each directory's device (`st_dev`) against the root's before it removes
//! anything in it, and the mount table for bind mounts of the same device; a mount point
//! is refused with an error naming it and nothing under it is touched.
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The mount points listed in `/proc/self/mountinfo` (unescaped), for bind mounts whose
/// device equals their parent's.
pub fn mount_points() -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|m| PathBuf::from(unescape_mount(m)))
        .collect()
}

/// The first mount point at or under `dir` (resolved), if any: a directory holding one
/// is never removed as a whole.
pub fn mount_inside(dir: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(dir).ok()?;
    if mount_points().contains(&real) && real != Path::new("/") {
        return Some(real);
    }
    mount_under(&real)
}

/// The first mount point strictly under `dir` (resolved), if any: from the mount table,
/// else a directory on another device than `dir`.
pub fn mount_under(dir: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(dir).ok()?;
    let dev = std::fs::symlink_metadata(&real).ok()?.dev();
    if let Some(m) = mount_points()
        .into_iter()
        .find(|m| m.starts_with(&real) && *m != real)
    {
        return Some(m);
    }
    find_other_device(&real, dev, 0)
}

fn find_other_device(dir: &Path, dev: u64, depth: usize) -> Option<PathBuf> {
    if depth > 64 {
        return None;
    }
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(m) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if m.is_dir() {
            if m.dev() != dev {
                return Some(e.path());
            }
            if let Some(p) = find_other_device(&e.path(), dev, depth + 1) {
                return Some(p);
            }
        }
    }
    None
}

/// Removes `path` and everything under it, never crossing a mount boundary: a directory
/// on another device than `path`, or listed as a mount point, is an error naming it
/// (checked before anything is removed).
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() {
        return std::fs::remove_file(path);
    }
    if let Some(m) = mount_inside(path) {
        return Err(io::Error::other(format!(
            "refusing to remove {}: it holds the mount point {}",
            path.display(),
            m.display()
        )));
    }
    remove_in(path, meta.dev())
}

fn remove_in(dir: &Path, dev: u64) -> io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        let m = std::fs::symlink_metadata(&p)?;
        if m.is_dir() {
            if m.dev() != dev {
                return Err(io::Error::other(format!(
                    "refusing to remove {}: another file system is mounted there",
                    p.display()
                )));
            }
            remove_in(&p, dev)?;
        } else {
            std::fs::remove_file(&p)?;
        }
    }
    std::fs::remove_dir(dir)
}

/// A mount point of `/proc/self/mountinfo` as a path (spaces and such are octal escapes).
pub fn unescape_mount(m: &str) -> String {
    let b = m.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
