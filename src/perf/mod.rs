//! Measured speed of the DP-GD kernels, side by side in one process (issue 6, part 5).
//!
//! [`measure`] builds one random-features problem (privacy-for-free Fig. 2 at
//! n = 2000, d = 100, p = 40 000: Phi is 640 MB of f64) and times, interleaved round by
//! round so that every kernel sees the same machine state:
//!
//! * `gemv_floor_s` — the two matrix-vector passes over Phi that any direct DP-GD step
//!   must make: `f = Phi theta`, then `Phi^T w` (ndarray `dot`, i.e. the BLAS GEMV the
//!   engine uses, one OpenBLAS thread as pinned by [`crate::linalg::pin_blas_threads`]);
//! * `direct_step_s` — one step of [`dpgd::run`]'s loop: [`dpgd::clipped_mean_gradient`]
//!   then [`dpgd::apply_update`] (update and p Gaussian noise draws), the very functions
//!   `run` calls; split into its gradient (`direct_gradient_s`) and noise
//!   (`noise_draw_s`) parts;
//! * `reference_loop_step_s` — a full step (all n samples, nothing scaled) of a
//!   per-sample loop in the style of the paper's public reference implementation
//!   ([`reference_clipped_mean_gradient`]: every per-sample gradient materialised as a
//!   p-vector, its norm taken, clipped, stored in an n x p matrix, then averaged). The
//!   reference also evaluates train and test loss at every step; that is recording, not
//!   the step, and is left out here as it is for the direct step;
//! * machine ceilings, in the same process: GEMM GFLOP/s (`gemm_n`³ by ndarray `dot`, one
//!   BLAS thread) and memory read GB/s (a sum over Phi).
//!
//! Times are medians over `reps` rounds after one discarded warm-up round; ratios are of
//! medians measured in the same run. Speed is measured here and in `benches/`, never
//! asserted in tests. The kernels are public so that the criterion benches
//! (`benches/perf.rs`) time exactly the same code.
//!
//! `reduced_step_s` and `heatmap_cells_per_s` come from the reduced (kernel-space)
//! engine: see [`measure_reduced`] and [`measure_heatmap`]; `reduced_gemm` compares its
//! per-step product on faer and on OpenBLAS ([`measure_reduced_gemm`]), and
//! `machine.gemm_backend` names the kernels the engine ran.
//!
//! The kernels are in [`kernels`], the measurement in [`measure`]; the Markdown of
//! `reports/BENCH.md` is written on the report side ([`crate::report::bench`]).
pub mod kernels;
pub mod measure;
pub mod privacy;

pub use kernels::*;
pub use measure::*;
