//! The limits of a run (`--max-hours`, `--max-memory-gb`) and the refusal of estimates
//! ([`super::estimate`]) that exceed them, before anything runs.

use super::estimate::{estimate_claim, ClaimEstimate, Driver};
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
    /// Limits from the flags, defaulting to [`DEFAULT_MAX_HOURS`] and half of this
    /// machine's memory ([`machine_memory_bytes`]); the threads are rayon's.
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
            None => 0.5 * machine_memory_bytes(),
        };
        Ok(Limits {
            max_seconds: hours * 3600.0,
            max_bytes: bytes,
            threads: rayon::current_num_threads().max(1),
        })
    }
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

/// A run refused before it starts, or a bad limit flag.
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
         machine's memory); field {}: {}",
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
    /// The claims fit one by one, but not together.
    #[error(
        "estimated work of the run {} on {threads} threads exceeds the limit {} (--max-hours); \
         the largest claim is `{claim}` ({}; field {}: {})",
        hours(*.seconds), hours(*.limit_seconds), hours(*.claim_seconds),
        crate::spec::echo::clip(&.driver.field), crate::spec::echo::clip_echoes(&.driver.detail)
    )]
    RunWork {
        seconds: f64,
        limit_seconds: f64,
        threads: usize,
        claim: String,
        claim_seconds: f64,
        driver: Driver,
    },
    /// A limit flag out of range.
    #[error("{0}")]
    Flag(String),
}

/// Hours, as "3.2 h" or "1.2e+07 h".
pub fn hours(seconds: f64) -> String {
    let h = seconds / 3600.0;
    if h.is_finite() && h < 1e4 {
        format!("{h:.3} h")
    } else {
        format!("{h:.2e} h")
    }
}

/// Gigabytes, as "12.4 GB" or "1.5e+11 GB".
pub fn gb(bytes: f64) -> String {
    let g = bytes / 1e9;
    if g.is_finite() && g < 1e4 {
        format!("{g:.3} GB")
    } else {
        format!("{g:.2e} GB")
    }
}

/// `estimate <= limit`; a NaN estimate is not within any limit.
fn within(estimate: f64, limit: f64) -> bool {
    matches!(
        estimate.partial_cmp(&limit),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    )
}

/// Checks estimates against the limits: each claim's memory, then each claim's wall
/// time and the whole run's (`repeat` times the claims, e.g. the seeds of `stability`;
/// `share` of it, e.g. one shard of N). The first problem names its claim and field.
pub fn check(
    estimates: &[ClaimEstimate],
    limits: &Limits,
    repeat: f64,
    share: f64,
) -> Result<(), BudgetError> {
    for e in estimates {
        if !within(e.memory_bytes, limits.max_bytes) {
            return Err(BudgetError::Memory {
                subject: format!("claim `{}`", e.claim),
                bytes: e.memory_bytes,
                limit_bytes: limits.max_bytes,
                driver: e.memory_driver.clone(),
            });
        }
    }
    let wall = |e: &ClaimEstimate| e.wall_seconds * repeat * share;
    let total: f64 = estimates.iter().map(wall).sum();
    if !within(total, limits.max_seconds) {
        let worst = estimates
            .iter()
            .max_by(|a, b| wall(a).total_cmp(&wall(b)))
            .expect("a total above a positive limit has a claim");
        return Err(if !within(wall(worst), limits.max_seconds) {
            BudgetError::Work {
                subject: format!("claim `{}`", worst.claim),
                seconds: wall(worst),
                limit_seconds: limits.max_seconds,
                threads: worst.threads,
                driver: worst.work_driver.clone(),
            }
        } else {
            BudgetError::RunWork {
                seconds: total,
                limit_seconds: limits.max_seconds,
                threads: worst.threads,
                claim: worst.claim.clone(),
                claim_seconds: wall(worst),
                driver: worst.work_driver.clone(),
            }
        });
    }
    Ok(())
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
/// `train`, `fig2`): `seconds` of wall time and `bytes` at its peak, with the flag that
/// drives them.
pub fn check_command(
    command: &str,
    seconds: f64,
    bytes: f64,
    driver: Driver,
    limits: &Limits,
) -> Result<(), BudgetError> {
    if !within(bytes, limits.max_bytes) {
        return Err(BudgetError::Memory {
            subject: format!("`dpclaims {command}`"),
            bytes,
            limit_bytes: limits.max_bytes,
            driver,
        });
    }
    if !within(seconds, limits.max_seconds) {
        return Err(BudgetError::Work {
            subject: format!("`dpclaims {command}`"),
            seconds,
            limit_seconds: limits.max_seconds,
            threads: limits.threads,
            driver,
        });
    }
    Ok(())
}
