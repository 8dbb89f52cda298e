//! dpclaims: theorems of differentially private learning papers as executable checks.
//!
//! Where to find things:
//! * [`rng`] — the only place a generator is built (seed derivation).
//! * [`data`] — Gaussian inputs, targets (sign, single-index via Hermite coefficients),
//!   the shipped digits data set.
//! * [`models`] — random features (privacy-for-free) and the two-layer network (blog).
//! * [`faults`] — the fault catalogue (plausible bugs of the core, each a wrong
//!   [`train::Recipe`]) and the fault matrix of `dpclaims faults`.
//! * [`train`] — DP-GD (clipping, noise, recorder), baselines, Algorithm 1 of the blog,
//!   DP-SGD and the TP-TopK family ([`train::dpsgd`]); the [`train::Recipe`] of every
//!   formula a configuration can replace.
//! * [`privacy`] — accountants (GDP, zCDP, RDP), calibration, empirical audit.
//! * [`fit`] — power-law fits with confidence intervals, Clopper-Pearson, verdict rules.
//! * [`spec`] — claim specs: raw YAML → validated claims; expressions.
//! * [`systems`] — what a claim can simulate, each with its metric registry.
//! * [`runner`] — work units, parallel seeded execution.
//! * [`judge`] — verdicts from predictions: hypotheses (out of regime), the prediction
//!   kinds' rules, negative controls that must be caught, findings.
//! * [`figures`] — reproductions of papers' figures (privacy-for-free Fig. 2) as CSV,
//!   Markdown and SVG.
//! * [`report`] — Markdown, CSV and SVG reports, written atomically.
//! * [`shard`] — sharded runs (Slurm job arrays): unit assignment, partial files, merge.
//! * [`perf`] — measured speed of the DP-GD kernels (`dpclaims perf`, `make bench`).
//! * [`cli`] — the `dpclaims` command line (the binary only calls [`cli::main`]).
pub mod cli;
pub mod data;
pub mod faults;
pub mod figures;
pub mod fit;
pub mod judge;
pub mod linalg;
pub mod models;
pub mod perf;
pub mod privacy;
pub mod report;
pub mod rng;
pub mod runner;
pub mod shard;
pub mod spec;
pub mod systems;
pub mod train;
