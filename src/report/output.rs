//! The output directory of a command, checked before any work: a run that simulates
//! for an hour and then cannot write its reports has lost that hour.
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// An output location that cannot be written: names the path and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to {}: {reason}", shown_path(path))]
pub struct OutputError {
    pub path: PathBuf,
    pub reason: String,
}

/// Creates `dir` (and its parents) and checks that a file can be created in it, by
/// writing and removing a probe file. Fails naming `dir` when it cannot be created
/// (under /proc, a file where a directory is expected, no permission) or written.
pub fn prepare_output_dir(dir: &Path) -> Result<(), OutputError> {
    let fail = |reason: String| OutputError {
        path: dir.to_path_buf(),
        reason,
    };
    if let Some(file) = file_in_the_way(dir) {
        return Err(fail(if file == dir {
            "it is a file, not a directory".into()
        } else {
            format!("{} is a file, not a directory", file.display())
        }));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory: {e}")))?;
    if !dir.is_dir() {
        return Err(fail("not a directory".into()));
    }
    // An unpredictable name created exclusively: a link planted at the name is never
    // written through, and a file that is already there is never removed.
    let probe = dir.join(format!(
        ".dpclaims-write-probe-{}-{:016x}",
        std::process::id(),
        crate::fsio::write::random_u64()
    ));
    use std::os::unix::fs::OpenOptionsExt as _;
    // Registered before it exists, so a stop by a signal waits for its removal instead
    // of leaving it in the output directory (issue 58).
    crate::fsio::temps::begin(&probe)
        .map_err(|e| fail(format!("the directory was not probed: {e}")))?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&probe)
        .and_then(|mut f| {
            let r = f.write_all(b"probe").and_then(|()| f.sync_all());
            let _ = std::fs::remove_file(&probe);
            r
        });
    crate::fsio::temps::unregister(&probe);
    written.map_err(|e| fail(format!("the directory is not writable: {e}")))
}

/// Checks that `file` can be written: its directory is prepared as by
/// [`prepare_output_dir`] and `file` itself is not a directory.
pub fn prepare_output_file(file: &Path) -> Result<(), OutputError> {
    if file.is_dir() {
        return Err(OutputError {
            path: file.to_path_buf(),
            reason: "it is a directory, not a file".into(),
        });
    }
    // A character device or FIFO (`/dev/null`, `/dev/stdout`) is written in place, never
    // replaced (crate::fsio::write): nothing is created beside it, so nothing to probe.
    if let Ok(m) = std::fs::metadata(file) {
        use std::os::unix::fs::FileTypeExt as _;
        let t = m.file_type();
        if t.is_char_device() || t.is_fifo() {
            return Ok(());
        }
        if !t.is_file() {
            return Err(OutputError {
                path: file.to_path_buf(),
                reason: format!(
                    "it is {}: refusing to replace it with a file",
                    crate::fsio::describe(t)
                ),
            });
        }
    }
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    prepare_output_dir(dir)
}

/// The first existing non-directory among `dir` and its ancestors (following symlinks).
fn file_in_the_way(dir: &Path) -> Option<PathBuf> {
    let mut p = Some(dir);
    while let Some(q) = p {
        if !q.as_os_str().is_empty() {
            if let Ok(m) = std::fs::metadata(q) {
                return (!m.is_dir()).then(|| q.to_path_buf());
            }
        }
        p = q.parent();
    }
    None
}

/// Prints `s` on stderr as one terminal line ([`terminal_text`]): every warning, note
/// and error line that names a path, an id or another program's text goes through it.
pub fn eprint_line(s: &str) {
    eprintln!("{}", terminal_text(s));
}

/// `s` as printed on a terminal: every line escaped by [`escape_controls`], the newlines
/// and tabs kept (a message of several lines is ours: each user value in it is escaped
/// where it is inserted, newlines included), and no line able to act as a GitHub
/// Actions workflow command: a line that starts with `::` (after blanks) has that first
/// `:` written `\x3a`, so a newline that slipped into a message from a user value (a
/// spec value, a path, a core's stderr) cannot forge `::warning file=...::` (issue 58).
/// dpclaims' own annotations are printed by [`print_command`], never through here. The
/// one helper every terminal line of the CLI goes through when it echoes spec text,
/// file names or a core's stderr (error messages, verdict lines, `check`, `plan`,
/// `diff`, `stability`).
pub fn terminal_text(s: &str) -> std::borrow::Cow<'_, str> {
    let command = |l: &str| l.trim_start().starts_with("::");
    if !s
        .chars()
        .any(|c| c != '\n' && c != '\t' && crate::spec::echo::is_terminal_control(c))
        && !s.split('\n').any(command)
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let lines: Vec<String> = s
        .split('\n')
        .map(|l| {
            let l = l
                .split('\t')
                .map(|p| escape_controls(p).into_owned())
                .collect::<Vec<_>>()
                .join("\t");
            if command(&l) {
                l.replacen(':', "\\x3a", 1)
            } else {
                l
            }
        })
        .collect();
    std::borrow::Cow::Owned(lines.join("\n"))
}

/// Prints one GitHub Actions workflow command (built by [`super::github::command`],
/// whose values are escaped there) on stdout, or on stderr when stdout is a JSON
/// document: the only lines dpclaims prints that start with `::`. Control characters
/// left in it are escaped ([`escape_controls`]): it stays one line.
pub fn print_command(line: &str, on_stderr: bool) {
    let line = escape_controls(line);
    if on_stderr {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// A path as shown in a line (a message, a summary): [`escape_controls`] of its display,
/// so a newline or escape sequence in a name given by the user (`--out`, `--junit`, a
/// spec's file name) is shown escaped and never starts a line of its own.
pub fn shown_path(p: &Path) -> String {
    escape_controls(&p.display().to_string()).into_owned()
}

pub use crate::spec::echo::escape_controls;
