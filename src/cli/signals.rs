//! Signals and the end of the process: nothing started by a run outlives it.
//!
//! * SIGPIPE is ignored (as Rust sets it): a core that stops reading its stdin is an
//!   EPIPE error of that core ("the core stopped reading its requests"), never a silent
//!   death of dpclaims by the signal (exit 141). Standard output is the exception: when
//!   the reader of stdout is gone (`dpclaims list | head -1`), the panic hook ([`super::main`])
//!   stops the cores, restores SIGPIPE's default action and raises it, so dpclaims ends
//!   quietly as `cat` or `ls` would.
//! * SIGINT, SIGTERM and SIGHUP are blocked in every thread and taken by one thread with
//!   `sigwait`: it kills every external core and their children
//!   ([`crate::systems::external::reaper::kill_all`]) and exits with 128 + the signal
//!   (130, 143, 129).
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

/// Installs the signal handling above. Must run first in `main`, before any other thread
/// exists (threads inherit the signal mask at their creation).
pub fn install() {
    reaper::init();
    #[cfg(unix)]
    // SAFETY: called before any other thread exists. `set` is initialised by
    // sigemptyset before use; sigaddset/pthread_sigmask/signal take valid arguments.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let waiter = std::thread::Builder::new()
            .name("dpclaims-signals".into())
            .spawn(move || loop {
                let mut sig: libc::c_int = 0;
                // SAFETY: `set` is a valid signal set owned by this closure.
                if libc::sigwait(&set, &mut sig) == 0 {
                    stop(sig);
                }
            });
        if waiter.is_err() {
            // No thread: restore the default actions rather than ignore the signals.
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
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
    std::process::exit(128 + sig)
}

/// The cleanup of every exit: kills what is left of the cores and their children.
/// Under a signal, exits with its status instead (the signal thread may still be
/// killing; this waits for nothing else).
pub fn finish() {
    reaper::kill_all();
    if let Some(code) = interrupted() {
        std::process::exit(code);
    }
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
