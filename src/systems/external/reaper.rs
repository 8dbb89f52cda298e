//! Nothing an external core starts outlives the run.
//!
//! * Every core is started as the leader of its own process group ([`super::worker`]), so
//!   a shell script's children are killed with it.
//! * A child that leaves the group (`setsid`, a daemonising `fork`) is not in the group;
//!   when its parent dies it would be re-parented to init and survive. [`init`] makes
//!   dpclaims a *child subreaper* (Linux `PR_SET_CHILD_SUBREAPER`): such orphans are
//!   re-parented to dpclaims instead, so that [`kill_all`] finds them among its own
//!   children (scanning `/proc/*/stat` for its pid as the parent: the kernel's
//!   `/proc/<pid>/task/<tid>/children` is not built everywhere).
//! * [`kill_all`] runs at every exit of the CLI — success, error, panic and SIGINT/SIGTERM/
//!   SIGHUP (a signal thread, `src/cli/signals.rs`, then exits with 128 + the signal) —
//!   and kills every registered core group and every remaining child with SIGKILL.
//!
//! * When dpclaims itself is killed with SIGKILL nothing of it runs, so two things that
//!   do not need it act (issue 58, item 3):
//!   - every core gets a *parent-death signal* (Linux `PR_SET_PDEATHSIG`, SIGKILL, set
//!     between `fork` and `exec`, [`super::worker`]): the kernel kills the core when
//!     dpclaims dies. The signal fires when the *thread* that started the core ends, so
//!     every core is started from one thread that lives as long as the process
//!     ([`spawn`]), never from a worker thread that may end first;
//!   - a *guard* (`/bin/sh`, started by [`init`]'s process on the first core, in its own
//!     process group, deaf to SIGINT/SIGTERM/SIGHUP) is told each core group as it
//!     starts and ends on a pipe only dpclaims holds; when the pipe closes without a
//!     `quit` — dpclaims is gone, however it died — the guard kills every group it was
//!     told of with SIGKILL, so a core's children go with it.
//!
//! The library (tests, embedders) does not call [`init`]: without it cores are still
//! killed with their groups when their workers are dropped, as before, and by the
//! parent-death signal when the process dies; no guard is started.
use std::collections::BTreeSet;
use std::io::Write as _;
use std::process::{Child, ChildStdin, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static STOPPING: AtomicBool = AtomicBool::new(false);
/// [`init`] was called: the CLI, which starts a guard with its first core.
static GUARDED: AtomicBool = AtomicBool::new(false);
/// The guard's stdin (`None` before the first core, or when it could not be started).
static GUARD: Mutex<Option<ChildStdin>> = Mutex::new(None);
static GUARD_STARTED: AtomicBool = AtomicBool::new(false);

/// The guard (module docs): `+<pgid>` adds a group, `-<pgid>` forgets one, `quit` ends
/// it without killing; at end of input it kills every group it holds (ids > 1 only:
/// `kill -- -1` would signal every process).
const GUARD_SCRIPT: &str = r#"trap '' HUP INT TERM PIPE
g=' '
while IFS= read -r l; do
  case $l in
    quit) exit 0 ;;
    +*) g="$g${l#+} " ;;
    -*) n=' '; for p in $g; do [ "$p" = "${l#-}" ] || n="$n$p "; done; g=$n ;;
  esac
done
for p in $g; do
  case $p in *[!0-9]*) continue ;; esac
  [ "$p" -gt 1 ] && kill -s KILL -- "-$p" 2>/dev/null
done
exit 0"#;

/// Makes this process the subreaper of its descendants (Linux; elsewhere a no-op), and
/// arms the guard that kills the cores' groups if dpclaims is killed (module docs).
pub fn init() {
    GUARDED.store(true, Ordering::SeqCst);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) only sets a flag of the calling process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

type SpawnJob = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Starts `c` from the one thread that starts cores, which lives as long as the process
/// (module docs: a parent-death signal follows the thread that forked); on the calling
/// thread if that thread could not be started.
pub fn spawn(mut c: Command) -> std::io::Result<Child> {
    static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<SpawnJob>>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("dpclaims-cores".into())
            .spawn(move || {
                for (mut c, reply) in rx {
                    let _ = reply.send(c.spawn());
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let Some(tx) = spawner
        .as_ref()
        .and_then(|m| m.lock().ok().map(|t| t.clone()))
    else {
        return c.spawn();
    };
    let (reply, answer) = mpsc::channel();
    if let Err(mpsc::SendError((mut c, _))) = tx.send((c, reply)) {
        return c.spawn();
    }
    answer.recv().unwrap_or_else(|_| {
        Err(std::io::Error::other(
            "the thread that starts cores is gone",
        ))
    })
}

/// Tells the guard one line (starting it first, once, if [`init`] armed it). A guard
/// that cannot be started or written to is no error: the other mechanisms still stand.
fn tell_guard(line: &str) {
    if !GUARDED.load(Ordering::SeqCst) {
        return;
    }
    let Ok(mut g) = GUARD.lock() else {
        return;
    };
    if g.is_none() && !GUARD_STARTED.swap(true, Ordering::SeqCst) {
        *g = start_guard();
    }
    if let Some(w) = g.as_mut() {
        if w.write_all(format!("{line}\n").as_bytes())
            .and_then(|_| w.flush())
            .is_err()
        {
            *g = None;
        }
    }
}

#[cfg(unix)]
fn start_guard() -> Option<ChildStdin> {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut c = Command::new("/bin/sh");
    c.args(["-c", GUARD_SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    // Not through `spawn`'s thread and with no parent-death signal: the guard must
    // outlive dpclaims to do its work (the pipe, close-on-exec in every core, tells it
    // when).
    let mut child = c.spawn().ok()?;
    let stdin = child.stdin.take();
    // Its exit is collected by `kill_all` (or by init once dpclaims is gone).
    std::mem::forget(child);
    stdin
}

#[cfg(not(unix))]
fn start_guard() -> Option<ChildStdin> {
    None
}

/// Records a core's process group (its leader's pid). Returns false when the process is
/// already stopping: the caller kills the core at once.
pub fn register(pgid: u32) -> bool {
    if let Ok(mut g) = GROUPS.lock() {
        g.insert(pgid as i32);
    }
    tell_guard(&format!("+{pgid}"));
    !STOPPING.load(Ordering::SeqCst)
}

/// Forgets a core's group (once it was killed, before its leader is waited for: a group
/// id is never forgotten after it could be reused).
pub fn unregister(pgid: u32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.remove(&(pgid as i32));
    }
    tell_guard(&format!("-{pgid}"));
}

/// How many core groups are running now.
pub fn running() -> usize {
    GROUPS.lock().map(|g| g.len()).unwrap_or(0)
}

/// Kills every core group and every child of this process (SIGKILL), then reaps them,
/// waiting at most about a second for orphans to be re-parented here. Safe to call more
/// than once and from any thread.
pub fn kill_all() {
    STOPPING.store(true, Ordering::SeqCst);
    #[cfg(unix)]
    {
        let groups: Vec<i32> = GROUPS
            .lock()
            .map(|g| g.iter().copied().collect())
            .unwrap_or_default();
        for g in groups {
            // SAFETY: kill(2) on a process group id; no memory is involved.
            unsafe {
                libc::kill(-g, libc::SIGKILL);
            }
        }
        // Every group is killed: the guard has nothing left to do (and must not signal
        // a group id the kernel may hand out again once the leaders are reaped).
        if let Ok(mut g) = GUARD.lock() {
            if let Some(mut w) = g.take() {
                let _ = w.write_all(b"quit\n").and_then(|_| w.flush());
            }
        }
        let deadline = Instant::now() + Duration::from_millis(1000);
        loop {
            let kids = children();
            if kids.is_empty() {
                break;
            }
            for pid in &kids {
                // SAFETY: as above; a child that is already a zombie ignores the signal.
                unsafe {
                    libc::kill(-*pid, libc::SIGKILL);
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            reap();
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Reaps every child that has exited (zombies: killed cores and adopted orphans).
#[cfg(unix)]
fn reap() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid with WNOHANG on any child; `status` is a valid out pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
    }
}

/// The pids of this process's living children (zombies excluded), from `/proc/*/stat`.
#[cfg(unix)]
pub fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().unwrap_or("");
        let ppid = f.next().and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(me) && state != "Z" && state != "X" {
            out.push(pid);
        }
    }
    out
}
