//! Progress of long commands on stderr.
//!
//! On a terminal, an indicatif bar. Elsewhere — a CI log, `nohup`, a pipe, a Slurm
//! output file — a bar cannot be drawn, and a run that prints nothing for ten minutes
//! looks hung; so off a terminal one plain line is written at most every
//! `DPCLAIMS_PROGRESS_SECONDS` (default 30; 0 turns the lines off):
//!
//! ```text
//! progress: seed 3: tp-topk-support-quality: 812/5120 units, 1m 05s elapsed (eta 5m 44s)
//! ```
//!
//! Lines go to stderr only, so stdout (`--json`) and the reports stay byte-identical
//! whatever the timing.
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Seconds between two plain lines when `DPCLAIMS_PROGRESS_SECONDS` is not set.
const DEFAULT_PLAIN_INTERVAL_S: f64 = 30.0;

/// A bar on a terminal, periodic plain lines elsewhere.
pub(super) struct Progress {
    bar: indicatif::ProgressBar,
    plain: Option<Mutex<Plain>>,
}

struct Plain {
    /// What is counted, in the plural ("units", "(seed, p) jobs").
    noun: &'static str,
    msg: String,
    pos: u64,
    len: u64,
    start: Instant,
    last: Instant,
    every: Duration,
}

/// The longest interval between plain lines (about 11 days).
const MAX_PLAIN_INTERVAL_S: f64 = 1e6;

/// The interval between plain lines: `DPCLAIMS_PROGRESS_SECONDS` (seconds, may be
/// fractional), none when it is 0, the default when it is unset. A value that is not a
/// number in [0, 1e6] is an error naming the variable.
fn plain_interval() -> anyhow::Result<Option<Duration>> {
    match std::env::var("DPCLAIMS_PROGRESS_SECONDS") {
        Err(_) => Ok(Some(Duration::from_secs_f64(DEFAULT_PLAIN_INTERVAL_S))),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(0.0) => Ok(None),
            Ok(s) if s.is_finite() && s > 0.0 && s <= MAX_PLAIN_INTERVAL_S => {
                Ok(Some(Duration::from_secs_f64(s)))
            }
            _ => anyhow::bail!(
                "the environment variable DPCLAIMS_PROGRESS_SECONDS must be a number of seconds in [0, {MAX_PLAIN_INTERVAL_S}] (0: no progress lines), got {:?}",
                crate::spec::echo::clip_echoes(&v)
            ),
        },
    }
}

/// `75.3` s as `1m 15s`, `3725` s as `1h 02m 05s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, s) => format!("{h}h {m:02}m {s:02}s"),
    }
}

impl Progress {
    /// Progress over `total` things called `noun`, drawn with the indicatif `template`
    /// on a terminal (`{msg}`, `{bar}`, `{pos}`, `{len}`, `{elapsed}`, `{eta}`).
    pub(super) fn new(total: u64, template: &str, noun: &'static str) -> anyhow::Result<Self> {
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(template)
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            return Ok(Progress { bar, plain: None });
        }
        let now = Instant::now();
        Ok(Progress {
            bar: indicatif::ProgressBar::hidden(),
            plain: plain_interval()?.map(|every| {
                Mutex::new(Plain {
                    noun,
                    msg: String::new(),
                    pos: 0,
                    len: total,
                    start: now,
                    last: now,
                    every,
                })
            }),
        })
    }

    /// Progress over `total` units of claims (run, stability, a shard, the fault matrix).
    pub(super) fn units(total: usize) -> anyhow::Result<Self> {
        Self::new(
            total as u64,
            "{msg:28} [{bar:40}] {pos}/{len} units, {elapsed} (eta {eta})",
            "units",
        )
    }

    fn with_plain(&self, f: impl FnOnce(&mut Plain)) {
        if let Some(p) = &self.plain {
            // A poisoned lock only means a worker panicked mid-update; the counts are
            // still fine to print.
            let mut g = p.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut g);
        }
    }

    /// What is being worked on (a claim, a fault, a seed).
    pub(super) fn set_message(&self, msg: impl Into<String>) {
        let msg = msg.into();
        self.with_plain(|p| p.msg.clone_from(&msg));
        self.bar.set_message(msg);
    }

    /// `n` more done.
    pub(super) fn inc(&self, n: u64) {
        self.bar.inc(n);
        self.with_plain(|p| {
            p.pos += n;
            p.maybe_print();
        });
    }

    /// The total and the count done so far, when only the work itself knows them.
    pub(super) fn set(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        self.with_plain(|p| {
            p.len = total;
            p.pos = done;
            p.maybe_print();
        });
    }

    /// Runs `f` (which prints to stderr) with the bar out of the way.
    pub(super) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Removes the bar; the plain lines simply stop.
    pub(super) fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }
}

impl Plain {
    fn maybe_print(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last) < self.every || self.pos >= self.len {
            return;
        }
        self.last = now;
        let elapsed = now.duration_since(self.start);
        let eta = if self.pos > 0 {
            let left = (self.len - self.pos) as f64 / self.pos as f64;
            format!(" (eta {})", clock(elapsed.mul_f64(left)))
        } else {
            String::new()
        };
        let msg = if self.msg.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.msg)
        };
        eprintln!(
            "progress: {msg}{}/{} {}, {} elapsed{eta}",
            self.pos,
            self.len,
            self.noun,
            clock(elapsed)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_reads_like_a_person_would_write_it() {
        assert_eq!(clock(Duration::from_secs_f64(9.7)), "9s");
        assert_eq!(clock(Duration::from_secs(75)), "1m 15s");
        assert_eq!(clock(Duration::from_secs(3725)), "1h 02m 05s");
    }
}
