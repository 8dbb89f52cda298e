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
