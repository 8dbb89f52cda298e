//! Statistics of claims: log-log power-law fits with confidence intervals, bootstrap,
//! Clopper-Pearson bounds, and the verdict rules of the prediction kinds.
//!
//! * [`power_law`] — OLS of `ln(mean y)` on `ln x` with a Student-t interval for the
//!   slope, and a percentile bootstrap of the slope.
//! * [`binomial`] — exact (Clopper-Pearson) intervals for a success probability.
//! * [`two_sample`] — Kolmogorov-Smirnov, Welch and Brown-Forsythe two-sample tests.
//! * [`verdict`] — the rules that turn a fit or a count into `holds`, `refuted` or
//!   `inconclusive`.
//!
//! Every function here validates its input and returns a [`FitError`] instead of
//! panicking; the verdict rules never fail and map unusable input to
//! [`Verdict::Inconclusive`].
#![deny(clippy::float_cmp)]

pub mod binomial;
pub mod power_law;
pub mod two_sample;
pub mod verdict;

pub use binomial::{
    clopper_pearson, clopper_pearson_lower_one_sided, clopper_pearson_upper_one_sided,
};
pub use power_law::{bootstrap_slope_ci, fit_power_law, student_t_quantile, Interval, PowerLawFit};

/// Verdict rows the suite's family-wise error budget is spread over (the suite judges
/// 156 at the quick profile; `dpclaims stability` reports the count).
pub const FAMILY_ROWS: usize = 200;

/// Family-wise error of the whole suite: the probability that any verdict row's interval
/// misses its true value.
pub const FAMILY_WISE_ERROR: f64 = 0.05;

/// The confidence level of every interval a verdict is judged on, unless a spec sets its
/// own: Bonferroni over [`FAMILY_ROWS`] rows at [`FAMILY_WISE_ERROR`],
/// `1 - 0.05/200 = 0.99975`. At 95 % per row, 156 rows give ~8 intervals per run that
/// miss their true value, so a true value on a band's edge (a flat curve judged by
/// `rate_at_most 0`) came out refuted at 1 seed in 40 and the suite could never repeat
/// its verdicts from seed to seed (reports/STABILITY.md, 20 seeds). With the budget, any
/// miss anywhere in the suite has probability at most 5 %; the price is wider intervals,
/// so a verdict needs replicates enough to be decided (a `z` of 3.66 instead of 1.96).
pub const DEFAULT_CONFIDENCE: f64 = 1.0 - FAMILY_WISE_ERROR / FAMILY_ROWS as f64;

/// The level of the percentile-bootstrap interval a report shows beside a fit (it never
/// enters a verdict). Not [`DEFAULT_CONFIDENCE`]: its tails of 0.0125 % are beyond what
/// 1000 resamples resolve — the quantile would be the sample's extreme, an interval whose
/// level nobody knows — so the bootstrap is a fixed 95 % cross-check of the t interval's
/// shape, resolved by ~25 resamples in each tail.
pub const BOOTSTRAP_REPORT_CONFIDENCE: f64 = 0.95;
pub use two_sample::{brown_forsythe_test, ks_two_sample, welch_test, TestResult};
pub use verdict::{
    judge_event, judge_exponent, judge_inequality, judge_rate_at_most, try_judge_event, Verdict,
};

/// Errors of the fitting and interval functions (bad input, never a bug).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// `x` and `y` have different lengths.
    #[error("x has {x} points but y has {y} replicate lists")]
    LengthMismatch {
        /// Length of `x`.
        x: usize,
        /// Length of `y`.
        y: usize,
    },
    /// Fewer than three distinct x values: the slope's interval needs `points - 2 >= 1`
    /// degrees of freedom.
    #[error("a power-law fit needs at least 3 distinct x values, got {distinct}")]
    TooFewPoints {
        /// Number of distinct x values.
        distinct: usize,
    },
    /// A point has no replicates.
    #[error("y[{index}] (at x = {x}) has no replicates")]
    EmptyReplicates {
        /// Index of the point.
        index: usize,
        /// Its x value.
        x: f64,
    },
    /// An x value is NaN or infinite.
    #[error("x[{index}] = {value} is not finite")]
    NonFiniteX {
        /// Index of the point.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A replicate is NaN or infinite.
    #[error("y[{index}][{replicate}] = {value} is not finite")]
    NonFiniteY {
        /// Index of the point.
        index: usize,
        /// Index of the replicate.
        replicate: usize,
        /// The value.
        value: f64,
    },
    /// An x value is zero or negative, so its logarithm is undefined.
    #[error("x[{index}] = {value} is not positive; a log-log fit needs x > 0")]
    NonPositiveX {
        /// Index of the point.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A replicate mean is zero or negative, so its logarithm is undefined.
    #[error(
        "mean of y[{index}] (at x = {x}) is {value}, not positive; a log-log fit needs mean y > 0"
    )]
    NonPositiveMean {
        /// Index of the point.
        index: usize,
        /// Its x value.
        x: f64,
        /// The mean of its replicates.
        value: f64,
    },
    /// The confidence level is not in the open interval (0, 1).
    #[error("confidence must lie strictly between 0 and 1, got {0}")]
    Confidence(f64),
    /// A bootstrap was asked for zero resamples.
    #[error("the bootstrap needs at least one resample")]
    NoResamples,
    /// Too many bootstrap resamples had a non-positive mean at some point.
    #[error("only {valid} of {resamples} bootstrap resamples had positive means at every point (need at least half)")]
    BootstrapDegenerate {
        /// Resamples that could be fitted.
        valid: usize,
        /// Resamples drawn.
        resamples: usize,
    },
    /// A binomial interval with zero trials.
    #[error("a binomial interval needs at least one trial")]
    NoTrials,
    /// More successes than trials.
    #[error("successes ({successes}) exceed trials ({trials})")]
    SuccessesExceedTrials {
        /// Successes given.
        successes: u64,
        /// Trials given.
        trials: u64,
    },
    /// statrs rejected the parameters of a distribution (should not happen after the
    /// checks above; kept so that no input can panic).
    #[error("distribution error: {0}")]
    Distribution(String),
    /// A confidence sequence's input is unusable (too few or non-finite values).
    #[error("{0}")]
    Sequence(String),
}

/// `v` in full for a text the judge writes (a violation, an erratum's check): the
/// shortest decimal that reads back to the same bits, positional for 1e-5 <= |v| < 1e6
/// and scientific otherwise (`1.9154419e-7`, never `0.000000`). A committed report
/// rounds it to its significant digits (`report::number::in_text`); a fixed number of
/// decimals would print both sides of `exact_delta > delta` at delta = 1e-8 as 0.
pub fn fmt_exact(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-5..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Formats a number for tables: 4 significant digits, scientific when far from 1.
pub fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if (1e-3..1e5).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    } else {
        format!("{v:.3e}")
    }
}
