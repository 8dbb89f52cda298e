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
//! The library (tests, embedders) does not call [`init`]: without it cores are still
//! killed with their groups when their workers are dropped, as before.
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Makes this process the subreaper of its descendants (Linux; elsewhere a no-op).
pub fn init() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) only sets a flag of the calling process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Records a core's process group (its leader's pid). Returns false when the process is
/// already stopping: the caller kills the core at once.
pub fn register(pgid: u32) -> bool {
    if let Ok(mut g) = GROUPS.lock() {
        g.insert(pgid as i32);
    }
    !STOPPING.load(Ordering::SeqCst)
}

/// Forgets a core's group (after it was killed and waited for).
pub fn unregister(pgid: u32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.remove(&(pgid as i32));
    }
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
