//! dpclaims: theorems of differentially private learning papers as executable checks.
//!
//! The pipeline a claim goes through, one module each:
//! [`spec`] (load and validate a YAML claim) → [`plan`] (work units) → [`execute`]
//! (run them here or in shards) → [`judge`] (fits and verdict rules) → [`report`]
//! (Markdown, CSV, SVG, the baseline, stability), driven by one loop in [`pipeline`]
//! (no stage calls another). [`systems`] adapt a claim's unit to the core.
//! ARCHITECTURE.md has the one-page map and the import rules.
//!
//! The core, which knows nothing of specs, reports, the CLI or the fault catalogue:
//! * [`train`] — DP-GD (clipping, noise, recorder), the exact reduced engine,
//!   baselines, Algorithm 1 of the blog, DP-SGD and the TP-TopK family
//!   ([`train::dpsgd`]); the [`train::Recipe`] of every formula a configuration can
//!   replace.
//! * [`privacy`] — accountants (GDP, zCDP, RDP, an independent RDP by quadrature),
//!   calibration, empirical audit.
//! * [`models`] — random features (privacy-for-free) and the two-layer network (blog).
//! * [`data`] — Gaussian inputs, targets (sign, single-index via Hermite coefficients),
//!   the shipped digits data set.
//! * [`rng`] — the only place a generator is built (seed derivation); [`linalg`] —
//!   BLAS/LAPACK helpers.
//!
//! Around them:
//! * [`fit`] — power-law fits with confidence intervals, Clopper-Pearson, the verdict
//!   rule of each fit or count.
//! * [`faults`] — the fault catalogue (plausible bugs of the core, each a wrong
//!   [`train::Recipe`]) and the fault matrix of `dpclaims faults`.
//! * [`figures`] — reproductions of papers' figures (privacy-for-free Fig. 2).
//! * [`perf`] — measured speed of the DP-GD kernels (`dpclaims perf`, `make bench`).
//! * [`build_id`] — content hashes of the sources: what a stored result must match.
//! * [`cli`] — the `dpclaims` command line (the binary only calls [`cli::main`]).
pub mod build_id;
pub mod cli;
pub mod data;
pub mod execute;
pub mod faults;
pub mod figures;
pub mod fit;
pub mod fsio;
pub mod judge;
pub mod linalg;
pub mod models;
pub mod perf;
pub mod pipeline;
pub mod plan;
pub mod privacy;
pub mod project;
pub mod report;
pub mod rng;
pub mod spec;
pub mod systems;
pub mod train;
