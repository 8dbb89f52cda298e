//! The `tp_topk` system's mode `stationarity`: Theorem 6.3, Corollary 6.6 and Lemma 6.4
//! of the fewer-coordinates paper (Sec. 6, L105-L123; App. C) along one
//! support-restricted DP-SGD trajectory ([`crate::train::dpsgd::stationarity`], where
//! display (1) is derived from App. C.1 and every constant is stated).
//!
//! Option `problem`:
//! * `quadratic` — `dim`, `k`, `smoothness` (L), `spread`, `theta_scale` (theta_0 on
//!   every coordinate), `sigma` (per-coordinate noise sd of the step);
//! * `cosine` — the same with `cos_a` (L = 1 + a);
//! * `logreg` — multinomial logistic regression on the digits (option `data`; the split
//!   of stream `data` as mode `train`), `k` (default round(0.1 P)), `batch` (qN),
//!   `clip` (C), `noise_multiplier` (z; sigma = z C/(qN)), support option `support`:
//!   `oracle` (top-k of |grad F(0)|, fixed before the run) or `random` (stream
//!   `support`).
//!
//! Common: `steps`, `eta_l` (declared eta L), `step_factor`, `noise_scale`; the noise and
//! the Poisson samples come from the stream `noise`.
use super::{Cost, CostInput, SystemError, UnitInput};
use crate::train::dpsgd::stationarity::{
    initial_gradient_support, logreg_run, synthetic_run, Problem, StationarityConfig,
    StationarityRun,
};
use crate::train::dpsgd::{support, Classification};
use std::collections::BTreeMap;

fn invalid(e: impl std::fmt::Display) -> SystemError {
    SystemError::Invalid(e.to_string())
}

/// The work of one unit: per step O(P) for the synthetic problems; for logistic
/// regression a full-data backward pass and three weighted gradient sums (about 8
/// multiply-adds per parameter and example) and N uniforms.
pub(super) fn cost(u: &CostInput) -> Cost {
    let steps = u.var("steps", 1.0);
    if u.option("problem") == "logreg" {
        let (n, p) = (1797.0, 650.0);
        return Cost {
            seconds: steps * (Cost::stream(8.0 * n * p) + Cost::normals(n + p)) + 0.01,
            bytes: Cost::f64s(6.0 * n * 64.0 + 10.0 * n * 10.0 + 20.0 * p),
        };
    }
    let p = u.var("dim", 1.0);
    Cost {
        seconds: steps * (Cost::stream(8.0 * p) + Cost::normals(u.var("k", p))) + 1e-3,
        bytes: Cost::f64s(4.0 * p),
    }
}

fn config(u: &UnitInput, k: usize) -> StationarityConfig {
    StationarityConfig {
        steps: u.var_or("steps", 1.0) as usize,
        k,
        eta_l: u.var_or("eta_l", 0.25),
        step_factor: u.var_or("step_factor", 1.0),
        noise_scale: u.var_or("noise_scale", 1.0),
    }
}

/// One trajectory and its metrics (module docs).
pub(super) fn run(u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
    let mut rng = u.noise_rng("noise");
    let mut out = BTreeMap::new();
    let run: StationarityRun = if u.option("problem") == "logreg" {
        let data =
            Classification::digits(u.var_or("test_fraction", 0.2), &mut u.seeds.rng_for("data"))
                .map_err(invalid)?;
        let p = (data.features() + 1) * data.classes;
        let k = u.var_or("k", (0.1 * p as f64).round()) as usize;
        let supp = match u.option("support") {
            "random" => support::random_support(p, k, &mut u.seeds.rng_for("support")),
            _ => initial_gradient_support(&data, k),
        }
        .map_err(invalid)?;
        let run = logreg_run(
            &data,
            &supp,
            u.var_or("batch", 64.0),
            u.var_or("clip", 1.0),
            u.var("noise_multiplier")?,
            &config(u, k),
            &mut rng,
        )
        .map_err(invalid)?;
        let excess = if u.option("lemma64_bound") == "jensen-reversed" {
            run.lemma64_reversed_excess
        } else {
            run.lemma64_excess
        };
        out.insert("lemma64_excess".into(), excess);
        out.insert("clipped_fraction".into(), run.clipped_fraction);
        run
    } else {
        let problem = if u.option("problem") == "cosine" {
            Problem::Cosine {
                a: u.var_or("cos_a", 2.0),
            }
        } else {
            Problem::Quadratic {
                spread: u.var_or("spread", 1.0),
            }
        };
        // Exact gradients, no clipping: b_t = 0 and Lemma 6.4's bound is 0 (its
        // equality case).
        out.insert("lemma64_excess".into(), 0.0);
        out.insert("clipped_fraction".into(), 0.0);
        let dim = u.count("dim")?;
        let k = u.var_or("k", dim as f64) as usize;
        synthetic_run(
            problem,
            dim,
            u.var_or("smoothness", 1.0),
            u.var_or("theta_scale", 0.0),
            u.var("sigma")?,
            &config(u, k),
            &mut rng,
        )
        .map_err(invalid)?
    };
    let (lhs, rhs, gamma) = (run.lhs(), run.rhs(), run.gamma());
    let full = run.full / run.sum_eta;
    let dp = 2.0 * run.smoothness * run.sum_eta2 * run.k as f64 * run.sigma2 / run.sum_eta;
    out.insert("thm63_lhs".into(), lhs);
    out.insert("thm63_rhs".into(), rhs);
    out.insert("thm63_margin".into(), lhs - rhs);
    out.insert("thm63_ratio".into(), lhs / rhs);
    out.insert("thm63_dp_share".into(), dp / rhs);
    out.insert("cor66_lhs".into(), full);
    out.insert("cor66_rhs".into(), rhs / gamma);
    out.insert("cor66_margin".into(), full - rhs / gamma);
    out.insert("cor66_ratio".into(), full * gamma / rhs);
    out.insert("gamma_path".into(), gamma);
    out.insert(
        "gamma_path_ratio".into(),
        gamma / (run.k as f64 / run.p as f64),
    );
    out.insert("smoothness_l".into(), run.smoothness);
    // Constant steps: eta L = (sum eta / T) L.
    out.insert(
        "step_l".into(),
        run.sum_eta / u.var_or("steps", 1.0) * run.smoothness,
    );
    out.insert("stationarity_final_gap".into(), run.final_loss);
    Ok(out)
}
