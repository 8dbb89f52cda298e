//! One external core as a long-lived child process: its stdin takes one request line, its
//! stdout gives one answer line, its stderr is kept (the last [`STDERR_LINES`] lines) for
//! error messages.
//!
//! Every read of an answer waits at most the core's `timeout_s`: a reader thread turns
//! stdout into lines on a channel, and the harness waits on the channel with a deadline,
//! so a core that hangs, loops or never flushes cannot hang the run. A core that fails in
//! any way (exit, crash, timeout) is killed with its whole process group (it is started
//! as a group leader, so a shell script's children go too) and never reused; children
//! that leave the group are dpclaims' own through [`super::reaper`]. On Linux a core
//! also carries a parent-death signal (SIGKILL), so it dies with dpclaims even when
//! dpclaims is killed with SIGKILL; the guard of [`super::reaper`] takes its group.
//!
//! A core's exit is noticed when the process exits, not when its stdout closes: a third
//! thread waits for the exit (`waitid` with `WNOWAIT`, which leaves the status to be
//! collected by [`Worker`]) and posts it on the answer channel. A crashed core whose
//! stdout is still held open by a background child is thus reported at once as a crash
//! with its exit status, never as "no answer" after `timeout_s` (issue 50, family 5).
//!
//! dpclaims ignores SIGPIPE while it talks to cores (`src/cli/signals.rs`): a core that
//! stops reading its stdin makes the next request fail with EPIPE, reported as "the core
//! stopped reading its requests", never a silent death of dpclaims.
use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lines of a core's stderr kept for error messages.
pub const STDERR_LINES: usize = 12;
/// Longest answer line read (bytes): an answer is a few hundred bytes; a core that prints
/// a megabyte without a newline is broken, and is not allowed to fill the memory.
pub const MAX_LINE_BYTES: u64 = 1 << 20;
/// Least time a core gets to start and answer the handshake (seconds): importing numpy,
/// JAX or PyTorch on a loaded machine can take longer than a unit's `timeout_s`.
pub const STARTUP_TIMEOUT_S: u64 = 60;
/// Longest stderr line kept (characters).
const MAX_STDERR_CHARS: usize = 400;

/// How to start a core: its argument vector, the directory it runs in (the spec file's
/// directory, so relative paths in the command resolve there) and the per-answer time limit.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreCommand {
    pub argv: Vec<String>,
    pub dir: PathBuf,
    pub timeout: Duration,
}

impl CoreCommand {
    /// The command as typed (`python3 core.py`).
    pub fn display(&self) -> String {
        self.argv.join(" ")
    }

    /// The file an argument names, as this process reaches it: relative to the spec's
    /// directory (an absolute path stays itself).
    pub fn path_of(&self, arg: &str) -> PathBuf {
        self.dir.join(arg)
    }

    /// The program to execute: a path with a slash (`./core.py`, `bin/core`) is the
    /// spec directory's, made absolute — the core starts *in* that directory, so a
    /// relative `dir/./core.py` would be looked up from there a second time
    /// (`claims/claims/core.py`, issue 58) whenever the spec path is relative; a bare
    /// name (`python3`) is looked up on PATH.
    pub fn program(&self) -> Option<PathBuf> {
        let prog = self.argv.first()?;
        let p = std::path::Path::new(prog);
        Some(if p.is_relative() && p.components().count() > 1 {
            std::path::absolute(&self.dir)
                .unwrap_or_else(|_| self.dir.clone())
                .join(p)
        } else {
            p.to_path_buf()
        })
    }
}

/// A failure of a core: what happened, and the last lines of its stderr.
#[derive(Clone, Debug)]
pub struct CoreFailure {
    pub what: String,
    pub stderr: Vec<String>,
}

impl fmt::Display for CoreFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)?;
        if self.stderr.is_empty() {
            f.write_str(" (its stderr is empty)")
        } else {
            write!(
                f,
                "; last lines of its stderr:\n    {}",
                self.stderr.join("\n    ")
            )
        }
    }
}

enum Msg {
    Line(String),
    Eof,
    Failed(String),
    /// The core process exited (its status is still to be collected).
    Exited,
}

/// Longest wait for an answer line already written by a core that has exited (the
/// reader thread may post the line after the exit is seen).
const LAST_LINE_GRACE: Duration = Duration::from_millis(200);

/// A running core.
pub struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Msg>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    stderr_done: Receiver<()>,
    timeout: Duration,
    greeted: bool,
    dead: bool,
    /// The process has exited (after writing one last answer): the next request fails
    /// at once.
    gone: bool,
}

impl Worker {
    /// Starts the core (not yet greeted: see [`super::protocol::handshake`]).
    pub fn spawn(cmd: &CoreCommand) -> Result<Worker, CoreFailure> {
        let (Some(program), Some((_, args))) = (cmd.program(), cmd.argv.split_first()) else {
            return Err(CoreFailure {
                what: "the command is empty".into(),
                stderr: vec![],
            });
        };
        let mut c = Command::new(program);
        c.args(args)
            .current_dir(&cmd.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            c.process_group(0);
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: the hook runs in the child between fork and exec and calls only
            // async-signal-safe functions (prctl, getppid), touching no lock or heap.
            unsafe {
                c.pre_exec(move || {
                    // The kernel kills the core when the thread that started it ends
                    // (super::reaper::spawn: one that lives as long as dpclaims), also
                    // when dpclaims is killed with SIGKILL and cleans up nothing.
                    if libc::prctl(
                        libc::PR_SET_PDEATHSIG,
                        libc::SIGKILL as libc::c_ulong,
                        0,
                        0,
                        0,
                    ) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    // dpclaims died between fork and prctl: nobody will talk to this core.
                    if libc::getppid() != parent {
                        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                    }
                    Ok(())
                });
            }
        }
        let mut child = super::reaper::spawn(c).map_err(|e| CoreFailure {
            what: format!(
                "cannot start `{}` in {}: {e}",
                cmd.display(),
                cmd.dir.display()
            ),
            stderr: vec![],
        })?;
        if !super::reaper::register(child.id()) {
            // The run is being stopped (a signal): this core must not outlive it.
            #[cfg(unix)]
            // SAFETY: kill(2) on the group the child leads; no memory is involved.
            unsafe {
                libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
            }
            let _ = child.kill();
            super::reaper::unregister(child.id());
            let _ = child.wait();
            return Err(CoreFailure {
                what: "the run is stopping (interrupted)".into(),
                stderr: vec![],
            });
        }
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::channel();
        let exit_tx = tx.clone();
        std::thread::spawn(move || read_lines(stdout, tx));
        let pid = child.id() as i32;
        std::thread::spawn(move || watch_exit(pid, exit_tx));
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let (done_tx, stderr_done) = mpsc::channel();
        let keep = Arc::clone(&stderr);
        std::thread::spawn(move || {
            read_stderr(stderr_pipe, &keep);
            let _ = done_tx.send(());
        });
        Ok(Worker {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            stderr_done,
            timeout: cmd.timeout,
            greeted: false,
            dead: false,
            gone: false,
        })
    }

    /// Sends one line and waits for one line of answer (at most the timeout).
    pub fn request(&mut self, line: &str) -> Result<String, CoreFailure> {
        if self.gone {
            return Err(self.exited("exited without answering"));
        }
        let sent = match self.stdin.as_mut() {
            Some(w) => w
                .write_all(line.as_bytes())
                .and_then(|_| w.write_all(b"\n"))
                .and_then(|_| w.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        if let Err(e) = sent {
            return Err(if e.kind() == std::io::ErrorKind::BrokenPipe {
                self.exited("stopped reading its requests (its stdin is closed: EPIPE)")
            } else {
                self.exited(&format!("could not be sent the request ({e})"))
            });
        }
        // The first request is the handshake: it may also wait for the core to start.
        let (limit, which) = if self.greeted {
            (self.timeout, "timeout_s")
        } else {
            let startup = Duration::from_secs(STARTUP_TIMEOUT_S);
            (self.timeout.max(startup), "the startup limit")
        };
        self.greeted = true;
        match self.lines.recv_timeout(limit) {
            Ok(Msg::Line(s)) => Ok(s),
            Ok(Msg::Eof) | Err(RecvTimeoutError::Disconnected) => {
                Err(self.exited("exited without answering"))
            }
            Ok(Msg::Exited) => match self.lines.recv_timeout(LAST_LINE_GRACE) {
                // An answer written just before the exit: this request is answered, the
                // next one fails at once.
                Ok(Msg::Line(s)) => {
                    self.gone = true;
                    Ok(s)
                }
                _ => Err(self.exited("exited without answering")),
            },
            Ok(Msg::Failed(e)) => {
                let what = format!("its stdout could not be read: {e}");
                self.kill();
                Err(self.failure(what))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                let what = format!(
                    "no answer within {} s ({which}); the core was killed",
                    limit.as_secs_f64()
                );
                Err(self.failure(what))
            }
        }
    }

    /// Marks the worker as unusable and kills it (after a protocol error: its state is
    /// unknown).
    pub fn discard(&mut self) {
        self.kill();
    }

    /// Whether the worker may serve another request.
    pub fn alive(&self) -> bool {
        !self.dead
    }

    /// The last lines of stderr (waiting briefly for the pipe to close if the core exited).
    pub fn failure(&mut self, what: String) -> CoreFailure {
        if self.dead {
            let _ = self.stderr_done.recv_timeout(Duration::from_millis(300));
        }
        let stderr = self
            .stderr
            .lock()
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default();
        CoreFailure { what, stderr }
    }

    /// The core exited (or closed stdout): wait for its status (briefly), then describe.
    fn exited(&mut self, what: &str) -> CoreFailure {
        let deadline = Instant::now() + Duration::from_secs(1);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => break None,
            }
        };
        self.kill();
        let how = match status {
            Some(s) => format!(" ({})", describe_status(s)),
            None => String::new(),
        };
        self.failure(format!("the core {what}{how}"))
    }

    fn kill(&mut self) {
        if self.dead {
            return;
        }
        self.dead = true;
        self.stdin = None;
        #[cfg(unix)]
        {
            // SAFETY: kill(2) with a negative pid signals the process group the child
            // leads (spawned with process_group(0)); no memory is involved.
            unsafe {
                libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        // Forgotten while the leader is a zombie (its id cannot be reused yet).
        super::reaper::unregister(self.child.id());
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing stdin lets a well-behaved core end its loop; the group is killed anyway
        // so that nothing outlives the run.
        self.stdin = None;
        self.kill();
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("killed by signal {sig}");
        }
    }
    match s.code() {
        Some(c) => format!("exit status {c}"),
        None => "no exit status".into(),
    }
}

/// Posts [`Msg::Exited`] when the process `pid` (a child of this process) exits.
/// `WNOWAIT` leaves it a zombie, so its pid is not reused before [`Worker`] collects the
/// status; once collected, `waitid` fails (`ECHILD`) and the thread ends.
fn watch_exit(pid: i32, tx: mpsc::Sender<Msg>) {
    #[cfg(unix)]
    loop {
        // SAFETY: waitid(2) with a valid out pointer to a zeroed siginfo_t.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            let _ = tx.send(Msg::Exited);
            return;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

fn read_lines(stdout: impl Read, tx: mpsc::Sender<Msg>) {
    let mut r = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        let msg = match r.by_ref().take(MAX_LINE_BYTES).read_until(b'\n', &mut buf) {
            Ok(0) => Msg::Eof,
            Ok(_) if !buf.ends_with(b"\n") && buf.len() as u64 >= MAX_LINE_BYTES => {
                Msg::Failed(format!("an answer line longer than {MAX_LINE_BYTES} bytes"))
            }
            Ok(_) => Msg::Line(String::from_utf8_lossy(&buf).trim_end().to_string()),
            Err(e) => Msg::Failed(e.to_string()),
        };
        let end = !matches!(msg, Msg::Line(_));
        if tx.send(msg).is_err() || end {
            return;
        }
    }
}

fn read_stderr(stderr: impl Read, keep: &Mutex<VecDeque<String>>) {
    let mut r = BufReader::new(stderr);
    loop {
        let mut buf = Vec::new();
        match r.by_ref().take(MAX_LINE_BYTES).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let mut line: String = line.trim_end().chars().take(MAX_STDERR_CHARS).collect();
                if line.is_empty() {
                    continue;
                }
                if buf.len() > MAX_STDERR_CHARS {
                    line.push('…');
                }
                if let Ok(mut q) = keep.lock() {
                    if q.len() == STDERR_LINES {
                        q.pop_front();
                    }
                    q.push_back(line);
                }
            }
        }
    }
}
