//! The limits of a run (`--max-hours`, `--max-memory-gb`) and the refusal of estimates
//! ([`super::estimate`]) that exceed them, before anything runs.

use super::estimate::{estimate_claim, ClaimEstimate, Driver};
pub use super::estimate::{gb, hours};
use crate::spec::{Claim, Profile};

/// Limits of a run: wall-clock hours and bytes of memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Wall-clock seconds the whole run may take (`--max-hours`).
    pub max_seconds: f64,
    /// Bytes a claim may hold at once (`--max-memory-gb`).
    pub max_bytes: f64,
    /// Threads the units run on.
    pub threads: usize,
}

/// Default work budget: 24 hours.
pub const DEFAULT_MAX_HOURS: f64 = 24.0;

impl Limits {
    /// Limits from the flags, defaulting to [`DEFAULT_MAX_HOURS`] and the memory this
    /// process may use ([`memory_budget_bytes`]); the threads are rayon's.
    pub fn new(max_hours: Option<f64>, max_memory_gb: Option<f64>) -> Result<Limits, BudgetError> {
        let hours = max_hours.unwrap_or(DEFAULT_MAX_HOURS);
        if !(hours > 0.0 && hours.is_finite()) {
            return Err(BudgetError::Flag(format!(
                "--max-hours must be positive and finite, got {hours}"
            )));
        }
        let bytes = match max_memory_gb {
            Some(gb) if gb > 0.0 && gb.is_finite() => gb * 1e9,
            Some(gb) => {
                return Err(BudgetError::Flag(format!(
                    "--max-memory-gb must be positive and finite, got {gb}"
                )))
            }
            None => memory_budget_bytes(),
        };
        Ok(Limits {
            max_seconds: hours * 3600.0,
            max_bytes: bytes,
            threads: rayon::current_num_threads().max(1),
        })
    }
}

/// The default memory budget: the smallest of half of this machine's memory
/// ([`machine_memory_bytes`]), the memory limit of this process's cgroup
/// ([`cgroup_memory_limit`]) and its address-space limit (`RLIMIT_AS`, `ulimit -v`), so
/// that in a container or under `ulimit` the planner refuses what the allocator would
/// abort on ([`memory_budget`]).
pub fn memory_budget_bytes() -> f64 {
    memory_budget(
        machine_memory_bytes(),
        cgroup_memory_limit(),
        address_space_limit(),
    )
}

/// The rule of [`memory_budget_bytes`] on given values (bytes; `None`: no limit).
pub fn memory_budget(mem_total: f64, cgroup: Option<f64>, rlimit_as: Option<f64>) -> f64 {
    [Some(0.5 * mem_total), cgroup, rlimit_as]
        .into_iter()
        .flatten()
        .filter(|b| *b > 0.0 && b.is_finite())
        .fold(f64::INFINITY, f64::min)
        .clamp(1.0, f64::MAX)
}

/// A cgroup memory limit file's value: bytes, or `None` for "max" (cgroup v2) or a
/// value so large it means none (cgroup v1 prints about 2^63 for no limit).
pub fn parse_cgroup_limit(text: &str) -> Option<f64> {
    let t = text.trim();
    if t == "max" {
        return None;
    }
    let v: u64 = t.parse().ok()?;
    (v > 0 && v < 1 << 60).then_some(v as f64)
}

/// The memory limit of this process's cgroup: cgroup v2 `memory.max` of its own cgroup
/// (from `/proc/self/cgroup`) and of every ancestor up to `/sys/fs/cgroup`, else cgroup
/// v1 `memory/memory.limit_in_bytes`; the smallest, or `None` when there is none.
pub fn cgroup_memory_limit() -> Option<f64> {
    let root = std::path::Path::new("/sys/fs/cgroup");
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("0::").map(|p| p.trim().to_string()))
        })
        .unwrap_or_default();
    let mut dirs = vec![];
    let mut p = Some(root.join(own.trim_start_matches('/')));
    while let Some(d) = p {
        if !d.starts_with(root) {
            break;
        }
        p = d.parent().map(|x| x.to_path_buf());
        dirs.push(d);
    }
    let limits = dirs
        .iter()
        .map(|d| d.join("memory.max"))
        .chain([root.join("memory/memory.limit_in_bytes")])
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter_map(|t| parse_cgroup_limit(&t));
    limits.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))))
}

/// `RLIMIT_AS` of this process in bytes, `None` when unlimited.
pub fn address_space_limit() -> Option<f64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit struct this function owns.
    let r = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) };
    (r == 0 && rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur as f64)
}

/// This machine's memory: `MemTotal` of `/proc/meminfo`, or 8 GB where it cannot be read.
pub fn machine_memory_bytes() -> f64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb * 1024.0)
        .filter(|b| *b > 0.0)
        .unwrap_or(8e9)
}

/// What a command would do, estimated before it does anything: the one input of
/// [`admit`], the gate every path that computes passes first (`run`, `run --unit`,
/// `plan --calibrate`, `stability`, the matrix of injected errors, `privacy-report`,
/// `audit`, `train`, `demo`, `fig2`, `audit --system external`).
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// What is estimated: "claim `id`", "the run of 33 claim runs (33 claims)", a command.
    pub subject: String,
    /// Wall-clock seconds on `threads` threads.
    pub wall_seconds: f64,
    /// Bytes held at the peak.
    pub bytes: f64,
    pub threads: usize,
    /// The field or flag that drives the work (with its value), and the memory.
    pub work_driver: Driver,
    pub memory_driver: Driver,
}

/// A run refused before it starts, or a bad limit flag. Every refusal has one format:
/// the subject, the estimate, the limit with the flag that raises it, and the field or
/// flag that drives the estimate.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BudgetError {
    /// The estimated wall time exceeds `--max-hours`.
    #[error(
        "{subject}: estimated work {} on {threads} threads exceeds the limit {} (--max-hours); \
         field {}: {}",
        hours(*.seconds), hours(*.limit_seconds), crate::spec::echo::clip(&.driver.field),
        crate::spec::echo::clip_echoes(&.driver.detail)
    )]
    Work {
        /// "claim `id`", or the command.
        subject: String,
        seconds: f64,
        limit_seconds: f64,
        threads: usize,
        driver: Driver,
    },
    /// The estimated memory exceeds `--max-memory-gb`.
    #[error(
        "{subject}: estimated memory {} exceeds the limit {} (--max-memory-gb; default half of this \
         machine's memory, or less under a cgroup or ulimit -v limit); field {}: {}",
        gb(*.bytes), gb(*.limit_bytes), crate::spec::echo::clip(&.driver.field),
        crate::spec::echo::clip_echoes(&.driver.detail)
    )]
    Memory {
        /// "claim `id`", or the command.
        subject: String,
        bytes: f64,
        limit_bytes: f64,
        driver: Driver,
    },
    /// A limit flag out of range.
    #[error("{0}")]
    Flag(String),
}

/// `estimate <= limit`; a NaN estimate is not within any limit.
fn within(estimate: f64, limit: f64) -> bool {
    matches!(
        estimate.partial_cmp(&limit),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    )
}

/// The gate: `e` within `limits` (memory first, then wall time), or the refusal that
/// names the limit, its flag, the estimate and what drives it.
pub fn admit(e: &Estimate, limits: &Limits) -> Result<(), BudgetError> {
    if !within(e.bytes, limits.max_bytes) {
        return Err(BudgetError::Memory {
            subject: e.subject.clone(),
            bytes: e.bytes,
            limit_bytes: limits.max_bytes,
            driver: e.memory_driver.clone(),
        });
    }
    if !within(e.wall_seconds, limits.max_seconds) {
        return Err(BudgetError::Work {
            subject: e.subject.clone(),
            seconds: e.wall_seconds,
            limit_seconds: limits.max_seconds,
            threads: e.threads,
            driver: e.work_driver.clone(),
        });
    }
    Ok(())
}

impl ClaimEstimate {
    /// This claim run `repeat` times (`share` of it: one shard of N), as [`admit`] reads it.
    pub fn admitted_as(&self, repeat: f64, share: f64) -> Estimate {
        Estimate {
            subject: format!("claim `{}`", self.claim),
            wall_seconds: self.wall_seconds * repeat * share,
            bytes: self.memory_bytes,
            threads: self.threads,
            work_driver: self.work_driver.clone(),
            memory_driver: self.memory_driver.clone(),
        }
    }
}

/// Seconds to list one planned unit (its key, label, resolved variables and seed path):
/// a replay or a calibration lists the whole plan to find its one unit.
pub const LIST_UNIT_S: f64 = 2e-6;

impl ClaimEstimate {
    /// One unit of this claim computed after its plan is listed (`run --unit`, `plan
    /// --calibrate`): the costliest unit, and the bookkeeping of every planned unit.
    pub fn one_unit(&self, what: &str) -> Estimate {
        let list = Driver {
            field: self.memory_driver.field.clone(),
            detail: format!(
                "{what} lists the claim's {} planned units to find its one",
                if self.units.is_finite() && self.units < 1e7 {
                    format!("{}", self.units)
                } else {
                    format!("{:e}", self.units)
                }
            ),
        };
        let listing = self.units * LIST_UNIT_S;
        Estimate {
            subject: format!("{what} of claim `{}`", self.claim),
            wall_seconds: self.max_unit_seconds + listing,
            bytes: self.max_unit_bytes + self.bookkeeping_bytes,
            threads: 1,
            work_driver: if listing > self.max_unit_seconds {
                list.clone()
            } else {
                self.work_driver.clone()
            },
            memory_driver: if self.bookkeeping_bytes > self.max_unit_bytes {
                list
            } else {
                self.memory_driver.clone()
            },
        }
    }
}

/// The estimate of a set of claims run `repeat` times (e.g. the seeds of `stability`),
/// `share` of it (e.g. one shard of N): [`of_claim_runs`] with every claim run as often.
pub fn of_claims(estimates: &[ClaimEstimate], repeat: f64, share: f64) -> Estimate {
    of_claim_runs(estimates, &vec![repeat * share; estimates.len()])
}

/// The estimate of claim `i` run `runs[i]` times (a float: counted, never listed): the
/// claims' wall times add up, memory is the largest claim's that runs (claims run one
/// after the other); the work driver is the claim with the most work.
pub fn of_claim_runs(estimates: &[ClaimEstimate], runs: &[f64]) -> Estimate {
    let pairs: Vec<(&ClaimEstimate, f64)> = estimates
        .iter()
        .zip(runs.iter().copied())
        .filter(|(_, r)| *r > 0.0)
        .collect();
    let wall = |(e, r): &(&ClaimEstimate, f64)| e.wall_seconds * r;
    let total: f64 = pairs.iter().map(wall).sum();
    let worst = pairs.iter().max_by(|a, b| wall(a).total_cmp(&wall(b)));
    let largest = pairs
        .iter()
        .max_by(|a, b| a.0.memory_bytes.total_cmp(&b.0.memory_bytes));
    let none = || Driver {
        field: "(none)".into(),
        detail: "nothing to run".into(),
    };
    let count: f64 = pairs.iter().map(|p| p.1).sum();
    Estimate {
        subject: format!(
            "the run of {} claim runs ({} claims)",
            if count.is_finite() && count < 1e7 {
                format!("{count}")
            } else {
                format!("{count:e}")
            },
            pairs.len()
        ),
        wall_seconds: total,
        bytes: largest.map_or(0.0, |p| p.0.memory_bytes),
        threads: worst.map_or(1, |p| p.0.threads),
        work_driver: worst.map_or_else(none, |w| Driver {
            field: w.0.work_driver.field.clone(),
            detail: format!(
                "the largest claim is `{}` ({} over {} runs): {}",
                w.0.claim,
                hours(wall(w)),
                w.1,
                w.0.work_driver.detail
            ),
        }),
        memory_driver: largest.map_or_else(none, |p| p.0.memory_driver.clone()),
    }
}

/// Checks estimates against the limits through [`admit`]: each claim (its memory first,
/// then its wall time, so that the refusal names the claim), then the whole run's
/// ([`of_claims`]).
pub fn check(
    estimates: &[ClaimEstimate],
    limits: &Limits,
    repeat: f64,
    share: f64,
) -> Result<(), BudgetError> {
    check_runs(estimates, &vec![repeat * share; estimates.len()], limits)
}

/// [`check`] with claim `i` run `runs[i]` times (`stability`: only the seeds and claims
/// its records do not hold).
pub fn check_runs(
    estimates: &[ClaimEstimate],
    runs: &[f64],
    limits: &Limits,
) -> Result<(), BudgetError> {
    let pairs = || {
        estimates
            .iter()
            .zip(runs.iter().copied())
            .filter(|p| p.1 > 0.0)
    };
    for (e, _) in pairs() {
        admit(
            &Estimate {
                wall_seconds: 0.0,
                ..e.admitted_as(1.0, 1.0)
            },
            limits,
        )?;
    }
    for (e, r) in pairs() {
        admit(&e.admitted_as(r, 1.0), limits)?;
    }
    admit(&of_claim_runs(estimates, runs), limits)
}

/// Estimates every claim and checks them ([`check`]).
pub fn check_claims(
    claims: &[Claim],
    profile: Profile,
    limits: &Limits,
    repeat: f64,
    share: f64,
) -> Result<Vec<ClaimEstimate>, BudgetError> {
    let est: Vec<ClaimEstimate> = claims
        .iter()
        .map(|c| estimate_claim(c, profile, limits.threads))
        .collect();
    check(&est, limits, repeat, share)?;
    Ok(est)
}

/// Checks the estimate of a command that is not a claim run (`dpclaims demo`, `audit`,
/// `train`, `fig2`, `privacy-report`): `seconds` of wall time and `bytes` at its peak,
/// with the flag that drives them, through [`admit`].
pub fn check_command(
    command: &str,
    seconds: f64,
    bytes: f64,
    driver: Driver,
    limits: &Limits,
) -> Result<(), BudgetError> {
    admit(
        &Estimate {
            subject: format!("`dpclaims {command}`"),
            wall_seconds: seconds,
            bytes,
            threads: limits.threads,
            work_driver: driver.clone(),
            memory_driver: driver,
        },
        limits,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_budget_is_the_smallest_limit() {
        let gb = 1e9;
        // No container limit: half of the machine.
        assert_eq!(memory_budget(16.0 * gb, None, None), 8.0 * gb);
        // A cgroup limit below half of the machine wins.
        assert_eq!(memory_budget(16.0 * gb, Some(2.0 * gb), None), 2.0 * gb);
        // ulimit -v below both wins.
        assert_eq!(
            memory_budget(16.0 * gb, Some(2.0 * gb), Some(1.0 * gb)),
            1.0 * gb
        );
        // A limit above half of the machine does not raise the budget.
        assert_eq!(
            memory_budget(16.0 * gb, Some(64.0 * gb), Some(1e18)),
            8.0 * gb
        );
    }

    #[test]
    fn cgroup_files_are_read_as_limits() {
        assert_eq!(parse_cgroup_limit("max\n"), None);
        assert_eq!(parse_cgroup_limit("4294967296\n"), Some(4294967296.0));
        // cgroup v1 without a limit.
        assert_eq!(parse_cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_limit("garbage"), None);
    }

    fn driver(field: &str) -> Driver {
        Driver {
            field: field.into(),
            detail: "d".into(),
        }
    }

    fn limits() -> Limits {
        Limits {
            max_seconds: 3600.0,
            max_bytes: 1e9,
            threads: 2,
        }
    }

    /// One format for every refusal: the subject, the estimate, the limit with its flag
    /// and the driving field; memory is checked before work, and NaN is never within.
    #[test]
    fn admit_names_the_limit_its_flag_and_the_driver() {
        let e = Estimate {
            subject: "`dpclaims x`".into(),
            wall_seconds: 7200.0,
            bytes: 2e9,
            threads: 2,
            work_driver: driver("--trials"),
            memory_driver: driver("--null-audits"),
        };
        let m = admit(&e, &limits()).unwrap_err().to_string();
        assert!(m.starts_with("`dpclaims x`: estimated memory 2.000 GB exceeds the limit 1.000 GB (--max-memory-gb"), "{m}");
        assert!(m.contains("field --null-audits"), "{m}");
        let w = admit(
            &Estimate {
                bytes: 1.0,
                ..e.clone()
            },
            &limits(),
        )
        .unwrap_err()
        .to_string();
        assert!(w.starts_with("`dpclaims x`: estimated work 2.000 h on 2 threads exceeds the limit 1.000 h (--max-hours)"), "{w}");
        assert!(w.contains("field --trials"), "{w}");
        let nan = Estimate {
            wall_seconds: f64::NAN,
            bytes: 1.0,
            ..e.clone()
        };
        assert!(admit(&nan, &limits()).is_err());
        let ok = Estimate {
            wall_seconds: 3600.0,
            bytes: 1e9,
            ..e
        };
        assert!(admit(&ok, &limits()).is_ok());
    }
}
