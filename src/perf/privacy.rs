//! Measured speed and tightness of the privacy accountants on standard cases (the
//! accountants' rows of `reports/BENCH.md`): RDP and the certified PLD bracket side by
//! side, each timed in this process (median of 3 after one warm-up).
use crate::privacy::pld::{pld_epsilon, DEFAULT_WIDTH};
use crate::privacy::{self, Accountant, AccountantRecipe, Phase};
use serde::Serialize;
use std::time::Instant;

/// One standard case: `steps` steps of the Poisson-subsampled Gaussian at `(q, z)`.
#[derive(Clone, Debug, Serialize)]
pub struct AccountantTiming {
    pub q: f64,
    pub z: f64,
    pub steps: u64,
    pub delta: f64,
    /// Exact Gaussian DP and zCDP (full batch only: `None` when `q < 1`), with times.
    pub gdp_epsilon: Option<f64>,
    pub gdp_s: Option<f64>,
    pub zcdp_epsilon: Option<f64>,
    pub zcdp_s: Option<f64>,
    pub rdp_epsilon: f64,
    pub rdp_s: f64,
    pub pld_lower: f64,
    pub pld_upper: f64,
    pub pld_s: f64,
    /// The PLD's FFT length.
    pub pld_points: usize,
}

/// The standard cases: the (q = 0.01, z = 1, 10 000 steps), a TP-TopK-like
/// schedule (q = 0.045, 660 steps), a long small-q run and full-batch DP-GD.
pub const CASES: &[(f64, f64, u64, f64)] = &[
    (0.01, 1.0, 10_000, 1e-5),
    (0.045, 1.1, 660, 1e-5),
    (0.001, 0.8, 100_000, 1e-6),
    (1.0, 10.0, 1_000, 1e-5),
];

fn median_time<T>(f: impl Fn() -> T) -> (T, f64) {
    let mut out = f();
    let mut t = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        out = f();
        t.push(start.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    (out, t[1])
}

/// Times the accountants on [`CASES`].
pub fn measure_accountants() -> Result<Vec<AccountantTiming>, privacy::PrivacyError> {
    measure_accountants_on(CASES)
}

/// Times every accountant that applies on `cases` (`(q, z, steps, delta)`): GDP and zCDP
/// at `q = 1` only, RDP and the PLD bracket everywhere.
pub fn measure_accountants_on(
    cases: &[(f64, f64, u64, f64)],
) -> Result<Vec<AccountantTiming>, privacy::PrivacyError> {
    cases
        .iter()
        .map(|&(q, z, steps, delta)| {
            let phases = [Phase::new(q, z, steps)];
            let (rdp, rdp_s) = median_time(|| {
                privacy::epsilon(Accountant::Rdp, &phases, delta, &AccountantRecipe::PAPER)
            });
            let (pld, pld_s) = median_time(|| pld_epsilon(&phases, delta, DEFAULT_WIDTH));
            let pld = pld?;
            let full = |acc| {
                let (v, t) =
                    median_time(|| privacy::epsilon(acc, &phases, delta, &AccountantRecipe::PAPER));
                v.ok().map(|a| (a.epsilon, t))
            };
            let (gdp, zcdp) = (full(Accountant::Gdp), full(Accountant::Zcdp));
            Ok(AccountantTiming {
                q,
                z,
                steps,
                delta,
                gdp_epsilon: gdp.map(|g| g.0),
                gdp_s: gdp.map(|g| g.1),
                zcdp_epsilon: zcdp.map(|g| g.0),
                zcdp_s: zcdp.map(|g| g.1),
                rdp_epsilon: rdp?.epsilon,
                rdp_s,
                pld_lower: pld.epsilon_lower,
                pld_upper: pld.epsilon_upper,
                pld_s,
                pld_points: pld.discretisation.points,
            })
        })
        .collect()
}
