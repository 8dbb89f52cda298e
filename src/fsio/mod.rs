//! The tool's one door to the file system for files it is *given* and files it
//! *replaces* (issue 32, families 1 and 2).
//!
//! * [`read`]: every file the tool reads as input or on-disk state — claim specs, hypothesis
//!   registries, shard partials, stability records, the previous `verdicts.json`, cache
//!   entries, diff inputs, baseline snapshots — is opened without blocking, checked to be
//!   a regular file (never a FIFO, device, socket or directory) of bounded size, and read
//!   with a cap, so no path can hang the tool or make it read without end.
//! * [`write`]: every file the tool replaces is written to a temporary file with an
//!   unpredictable name created exclusively in the same directory, then renamed into
//!   place; a device or FIFO is never replaced by a regular file.
//! * [`marker`]: what proves a directory is the tool's own before it deletes anything in
//!   it (the result cache's `CACHEDIR.TAG`).
pub mod marker;
pub mod read;
pub mod remove;
pub mod temps;
pub mod write;
pub mod yaml;

pub use read::{precheck, read, read_string, InputKind};
pub use write::{write_atomic, Durability};

/// What a non-regular file is, in words ("a named pipe (FIFO)", "a character device").
pub fn describe(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// The longest file name (in bytes) of the file systems the tool writes to (`NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// `name` shortened so that a name built from it plus `reserve` bytes of prefix and
/// suffix (a temporary's `.` and `.tmp-<pid>-<random>`, a staging directory's
/// `.dpclaims-staging`) fits [`NAME_MAX`]: unchanged when it fits, else its longest
/// prefix that leaves room (cut at a character boundary), `~` and 16 hex digits of a
/// hash of the whole name (the same name always gives the same short name, so a staging
/// directory left by a killed run is found again; two long names that share the prefix
/// differ). A legal name of 240 bytes is then never refused for its temporary's name,
/// after the work.
pub fn fit_name(name: &str, reserve: usize) -> std::borrow::Cow<'_, str> {
    if name.len() + reserve <= NAME_MAX {
        return std::borrow::Cow::Borrowed(name);
    }
    // FNV-1a: stable across builds and runs (std's hasher is seeded per process).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let room = NAME_MAX.saturating_sub(reserve + 17);
    let mut cut = room.min(name.len());
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    std::borrow::Cow::Owned(format!("{}~{h:016x}", &name[..cut]))
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn a_long_name_is_shortened_to_fit_with_its_reserve() {
        assert_eq!(fit_name("reports", 18), "reports");
        let long = "é".repeat(120); // 240 bytes
        let short = fit_name(&long, 33);
        assert!(short.len() + 33 <= NAME_MAX, "{}", short.len());
        assert_eq!(short, fit_name(&long, 33));
        assert_ne!(short, fit_name(&format!("{long}x"), 33));
    }
}
