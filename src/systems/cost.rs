//! What one work unit costs, estimated before anything runs: CPU seconds on one thread
//! and the bytes of the arrays it holds at once. [`crate::plan::estimate`] adds them up
//! over a claim and refuses absurd sizes (a replicate count of 10^9, `p = n^9`) before
//! any allocation: a size that comes from a spec must never reach an allocation failure,
//! which aborts the process without a message.
//!
//! The model is deliberately simple — operation counts of the dominant steps times
//! the rates below (one thread, measured on the project's 2-core machine, see
//! DEPENDENCIES.md and reports/BENCH.md) — and good to a small factor: it exists to
//! tell an hour from a year, not to schedule. `tests/estimate.rs` compares it with the
//! measured time of every claim at the quick profile.
use std::collections::{BTreeMap, BTreeSet};

/// Multiply-adds per second over a stored matrix (GEMV, clipping passes, updates):
/// about 1.8e9 f64 per second measured over a 640 MB matrix (14.5 GB/s), faster on the
/// cache-sized matrices of most claims.
pub const STREAM_PER_S: f64 = 3.0e9;
/// Flops per second of a large matrix product on one thread (10-40 GFLOP/s measured).
pub const GEMM_FLOPS_PER_S: f64 = 1.0e10;
/// `tanh` evaluations per second.
pub const TANH_PER_S: f64 = 5.0e7;
/// Standard normal draws per second (ChaCha8: about 1e8 measured).
pub const NORMALS_PER_S: f64 = 1.0e8;
/// Fixed cost of a unit: seed derivation (SHA-256), maps, judging, reports.
pub const UNIT_OVERHEAD_S: f64 = 2.0e-4;

/// Estimated cost of one unit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    /// CPU seconds on one thread.
    pub seconds: f64,
    /// Bytes held at the unit's peak.
    pub bytes: f64,
}

impl Cost {
    /// Seconds of `n` matrix-streaming multiply-adds.
    pub fn stream(n: f64) -> f64 {
        n / STREAM_PER_S
    }
    /// Seconds of `flops` in matrix products.
    pub fn gemm(flops: f64) -> f64 {
        flops / GEMM_FLOPS_PER_S
    }
    /// Seconds of `n` tanh evaluations.
    pub fn tanh(n: f64) -> f64 {
        n / TANH_PER_S
    }
    /// Seconds of `n` standard normal draws.
    pub fn normals(n: f64) -> f64 {
        n / NORMALS_PER_S
    }
    /// Seconds of a symmetric eigendecomposition (or SVD) of an `n x n` matrix.
    pub fn eigen(n: f64) -> f64 {
        4.0 * n * n * n / GEMM_FLOPS_PER_S
    }
    /// Bytes of `n` f64.
    pub fn f64s(n: f64) -> f64 {
        8.0 * n
    }
}

/// What a cost estimate reads of a unit: its resolved variables, options and the
/// metrics it must compute (as [`super::UnitInput`], without data, seeds or recipe).
pub struct CostInput<'a> {
    pub vars: &'a BTreeMap<String, f64>,
    pub options: &'a BTreeMap<String, String>,
    pub metrics: &'a BTreeSet<String>,
}

impl CostInput<'_> {
    /// A variable, or `default` when the unit does not set it. Sizes are read as
    /// floats: an absurd value (1e300) gives an absurd estimate, never an overflow.
    pub fn var(&self, name: &str, default: f64) -> f64 {
        self.vars.get(name).copied().unwrap_or(default)
    }
    /// An option's value (validation fills in defaults; "" if absent).
    pub fn option(&self, name: &str) -> &str {
        self.options.get(name).map(String::as_str).unwrap_or("")
    }
    /// Whether any of these metrics is requested.
    pub fn wants(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.metrics.contains(*n))
    }
}

/// Seconds of `steps` steps of full-batch DP-GD on an `n x p` feature matrix (the two
/// passes over Phi per step and p noise draws; [`crate::train::dpgd::run`]).
pub fn dpgd_seconds(n: f64, p: f64, steps: f64) -> f64 {
    (steps + 1.0) * (Cost::stream(2.0 * n * p + 4.0 * p) + Cost::normals(p))
}

/// Seconds and bytes of a random-features matrix of `rows` samples (`rows x p`, from
/// `rows x d` inputs: one GEMM, then tanh).
pub fn features_cost(rows: f64, p: f64, d: f64) -> Cost {
    Cost {
        seconds: Cost::normals(rows * d) + Cost::gemm(2.0 * rows * p * d) + Cost::tanh(rows * p),
        bytes: Cost::f64s(rows * p + rows * d),
    }
}
