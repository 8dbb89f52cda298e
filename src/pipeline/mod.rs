//! The driver of a run: a claim flows spec → plan → execute → judge → report through
//! the loop of this module, and only here. Each stage takes values and returns values
//! (planned units, measured values, judged rows, a report set); none calls another. The
//! command line, the sharded run and its merge, the stability run and the fault matrix
//! all go through this driver (a stability seed is the driver at another seed; a fault
//! is the driver with another [`crate::train::Recipe`]).
//!
//! * [`looks`] — one claim: the looks of the sequential design until every row is
//!   decided, from units measured here ([`run_claim`]) or read from a sharded run's
//!   values ([`judge`]).
pub mod budget;
pub mod conclude;
mod looks;
pub mod replay;
pub mod run;
pub mod shard;

pub use looks::{judge, run_claim, run_claim_timed};
