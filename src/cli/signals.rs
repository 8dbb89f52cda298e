//! Signals and the end of the process: nothing started by a run outlives it.
//!
//! * SIGPIPE is ignored (as Rust sets it): a core that stops reading its stdin is an
//!   EPIPE error of that core ("the core stopped reading its requests"), never a silent
//!   death of dpclaims by the signal (exit 141). Standard output is the exception: when
//!   the reader of stdout is gone (`dpclaims list | head -1`), the panic hook ([`super::main`])
//!   stops the cores, restores SIGPIPE's default action and raises it, so dpclaims ends
//!   quietly as `cat` or `ls` would.
//! * SIGINT, SIGTERM and SIGHUP get a real handler (`sigaction`), process-wide, so it
//!   runs on whichever thread the kernel picks — the main thread, a rayon worker, or a
//!   thread a library started before `main` (OpenBLAS starts its workers from a library
//!   constructor, so no signal mask set in `main` covers them; issue 50). The handler
//!   only writes the signal's number to a self-pipe (`write` is async-signal-safe); a
//!   thread reading the pipe kills every external core with its process group and its
//!   children ([`crate::systems::external::reaper::kill_all`]), stops the temporaries
//!   ([`crate::fsio::temps::remove_all`]), prints one line and exits with 128 + the
//!   signal (130, 143, 129). No mask is involved, and the three signals are unblocked at
//!   start in case the parent left them blocked.
//! * The report set's staging directory has one owner, the thread swapping it into place
//!   (`report::set`): the stop only marks the run stopped and waits for that owner,
//!   which abandons the swap (before the exchange) or finishes it (after) at its next
//!   step boundary, so the set on disk is the old one or the new one, whole, never one
//!   missing files (issue 58: the signal thread used to delete the staging directory
//!   while the main thread moved it into place).
//! * SIGXFSZ (a file grew past `ulimit -f`) is ignored: the write fails with `EFBIG`
//!   and the error names the file (exit 2), instead of a silent death by the signal.
//! * [`finish`] runs the same cleanup at every other exit (success, error, panic).
use crate::systems::external::reaper;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that is stopping the process (0: none).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// While a signal is stopping the process: its exit status (128 + the signal). The main
/// thread checks it before reporting an error, because the cores it was waiting for were
/// killed by the stop and their failure is not news.
pub fn interrupted() -> Option<i32> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(128 + s),
    }
}

/// The write end of the self-pipe (-1 before [`install`]).
static PIPE_W: AtomicI32 = AtomicI32::new(-1);

/// The handler: async-signal-safe (an atomic load and `write(2)`). A full pipe drops the
/// byte (the stop is under way already).
#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    let fd = PIPE_W.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) of one byte from a live stack variable; async-signal-safe.
        unsafe {
            libc::write(fd, (&b as *const u8).cast(), 1);
        }
    }
}

/// Installs the signal handling above. Runs first in `main`.
pub fn install() {
    reaper::init();
    #[cfg(unix)]
    // SAFETY: `fds`, `set` and `act` are initialised before use; the descriptors are
    // owned by this module for the life of the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut fds = [-1 as libc::c_int; 2];
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return;
        }
        let flags = libc::fcntl(fds[1], libc::F_GETFL);
        libc::fcntl(fds[1], libc::F_SETFL, flags | libc::O_NONBLOCK);
        let read_end = fds[0];
        let waiter = std::thread::Builder::new()
            .name("dpclaims-signals".into())
            .spawn(move || loop {
                let mut b = 0u8;
                // SAFETY: read(2) of one byte into a live stack variable.
                let n = libc::read(read_end, (&mut b as *mut u8).cast(), 1);
                if n == 1 {
                    stop(i32::from(b));
                }
                if n == 0 {
                    return;
                }
            });
        if waiter.is_err() {
            // No thread to stop the run: keep the default actions.
            return;
        }
        PIPE_W.store(fds[1], Ordering::SeqCst);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            act.sa_flags = libc::SA_RESTART;
            libc::sigfillset(&mut act.sa_mask);
            libc::sigaction(s, &act, std::ptr::null_mut());
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

fn name(sig: i32) -> &'static str {
    #[cfg(unix)]
    {
        match sig {
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            libc::SIGHUP => "SIGHUP",
            _ => "a signal",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = sig;
        "a signal"
    }
}

/// Kills the cores and exits with 128 + `sig`.
fn stop(sig: i32) -> ! {
    SIGNALLED.store(sig, Ordering::SeqCst);
    // Before anything else (the line below included): the swap of a report set stops
    // at its next step boundary.
    crate::fsio::temps::mark_stopping();
    let n = reaper::running();
    if n > 0 {
        eprintln!(
            "dpclaims: {} received: stopping {n} external core(s) and their children",
            name(sig)
        );
    } else {
        eprintln!("dpclaims: {} received: stopped", name(sig));
    }
    reaper::kill_all();
    crate::fsio::temps::remove_all();
    exit_once(128 + sig)
}

/// Exits the process after a stop; a second caller (the main thread finishing while the
/// signal thread stops the run) waits for the first instead of racing it.
///
/// `_exit`, not `std::process::exit`: `exit` runs the C library's exit handlers, among
/// them OpenBLAS's destructor, which frees the buffers that a worker thread still
/// computing a unit is using (`cblas_ddot` under `rf_dpgd`): that worker then died of
/// SIGSEGV and the run ended by that signal instead of 128 + the stop's (7 of 100
/// signals while units ran, on a loaded machine). Everything a stop owes is done by now
/// (cores killed, temporaries removed, the set swapped or abandoned); stderr is
/// unbuffered, and stdout (line-buffered) holds at most a partial line, which a stopped
/// run does not owe.
pub(super) fn exit_once(code: i32) -> ! {
    static EXITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if EXITING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    // SAFETY: _exit(2) ends the process at once; it has no preconditions.
    unsafe { libc::_exit(code) }
}

/// The cleanup of every exit: kills what is left of the cores and their children.
/// Under a signal, exits with its status instead (the signal thread may still be
/// killing; this waits for nothing else).
pub fn finish() {
    if let Some(code) = interrupted() {
        // The signal thread is killing and will exit; this thread waits for it (a
        // deadline in case it cannot).
        std::thread::sleep(std::time::Duration::from_secs(10));
        exit_once(code);
    }
    reaper::kill_all();
}

/// Standard output's reader is gone: stop the cores, then die by SIGPIPE as a filter
/// would (the shell sees 141 and prints nothing).
pub fn stdout_closed() -> ! {
    reaper::kill_all();
    #[cfg(unix)]
    // SAFETY: restoring a default disposition and raising a signal at ourselves.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}
