//! The Gaussian mechanism `M(D) = f(D) + N(0, sigma^2 I)` of a query with L2 sensitivity
//! `Delta`, calibrated to `(epsilon, delta)`: sigma as a metric, so a claim can check a
//! calibration formula (or a core's) against the mechanism's exact privacy.
//!
//! Calibrations (option `calibration`):
//! * `analytic` — the smallest sigma with `delta(epsilon) <= delta`, where (Balle &
//!   Wang 2018, "Improving the Gaussian mechanism for differential privacy", Thm. 8)
//!   `delta(epsilon) = Phi(Delta/(2 sigma) - epsilon sigma/Delta)
//!                    - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta)`,
//!   found by bisection on sigma with statrs' normal CDF;
//! * `classic` — `sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon` (Dwork & Roth 2014,
//!   "The algorithmic foundations of differential privacy", Thm. A.1, stated for
//!   `epsilon < 1`).
//!
//! Exact privacy: a Gaussian mechanism of sensitivity `Delta` and std `sigma` is exactly
//! `mu`-GDP with `mu = Delta/sigma` (Dong, Roth & Su 2019, Thm. 2.7); `exact_epsilon` is
//! its epsilon at `delta` by the GDP inversion of `crate::privacy` (log-space erfc, a
//! root search in epsilon) — another code than the analytic calibration's (linear-space
//! normal CDF, a root search in sigma), so `exact_epsilon <= epsilon` of the analytic
//! calibration is a check of one against the other, and of `classic` a check of
//! Dwork & Roth's formula. `empirical_sigma` is the sample standard deviation of
//! `samples` draws of the mechanism's noise from the unit's noise stream: the one
//! metric that varies between replicates. `noise_scale` multiplies the calibrated sigma:
//! the negative control of a calibration claim (too little noise for the claimed
//! epsilon).
use super::*;
use crate::privacy::{gdp_delta, gdp_epsilon};
use rand_distr::{Distribution, StandardNormal};
use statrs::distribution::{ContinuousCDF, Normal};

#[derive(Debug)]
pub struct GaussianMechanism;

/// Name of the system in specs.
pub const NAME: &str = "gaussian_mechanism";

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "sensitivity",
        kind: ParamKind::Positive,
        optional: false,
        doc: "L2 sensitivity Delta of the query",
    },
    ParamInfo {
        name: "epsilon",
        kind: ParamKind::Positive,
        optional: false,
        doc: "target epsilon",
    },
    ParamInfo {
        name: "delta",
        kind: ParamKind::Probability,
        optional: false,
        doc: "target delta",
    },
    ParamInfo {
        name: "noise_scale",
        kind: ParamKind::Positive,
        optional: true,
        doc:
            "multiplies the calibrated sigma (default 1; a negative control: 0.5 halves the noise)",
    },
    ParamInfo {
        name: "samples",
        kind: ParamKind::IntAtLeast(2),
        optional: true,
        doc: "draws of the noise for empirical_sigma (default 1000, at most 1e7)",
    },
];

const OPTIONS: &[OptionInfo] = &[OptionInfo {
    name: "calibration",
    values: &["analytic", "classic"],
    doc: "sigma formula: analytic (Balle & Wang 2018, Thm. 8, exact) or classic \
          (Dwork & Roth 2014, Thm. A.1, for epsilon < 1)",
}];

const METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "sigma",
        doc: "noise standard deviation of the calibrated mechanism",
    },
    MetricInfo {
        name: "noise_multiplier",
        doc: "sigma / sensitivity",
    },
    MetricInfo {
        name: "exact_epsilon",
        doc: "exact epsilon of the mechanism at delta (mu-GDP with mu = Delta/sigma)",
    },
    MetricInfo {
        name: "exact_delta",
        doc: "exact delta of the mechanism at the target epsilon",
    },
    MetricInfo {
        name: "empirical_sigma",
        doc: "sample standard deviation of `samples` draws of the noise",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: NAME,
    model: "none",
    description:
        "the Gaussian mechanism calibrated to (epsilon, delta): sigma and its exact privacy",
    needs_target: false,
    params: PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

const DEFAULT_SAMPLES: f64 = 1000.0;
const MAX_SAMPLES: f64 = 1e7;

/// Balle & Wang 2018, Thm. 8: the delta of the Gaussian mechanism at `epsilon`.
fn analytic_delta(sensitivity: f64, sigma: f64, epsilon: f64) -> f64 {
    let n = Normal::standard();
    let a = sensitivity / (2.0 * sigma);
    let b = epsilon * sigma / sensitivity;
    n.cdf(a - b) - epsilon.exp() * n.cdf(-a - b)
}

/// The smallest sigma (relative precision 1e-12) with `analytic_delta <= delta`: delta
/// decreases in sigma, so a bracket grown by doubling is bisected; the upper end is
/// returned, so the calibration never under-states the noise.
fn analytic_sigma(sensitivity: f64, epsilon: f64, delta: f64) -> Result<f64, SystemError> {
    let ok = |s: f64| analytic_delta(sensitivity, s, epsilon) <= delta;
    let (mut lo, mut hi) = (sensitivity * 1e-3, sensitivity);
    let mut grow = 0;
    while !ok(hi) {
        (lo, hi) = (hi, 2.0 * hi);
        grow += 1;
        if grow > 200 {
            return Err(SystemError::Invalid(format!(
                "analytic calibration: no sigma meets delta = {delta} at epsilon = {epsilon}"
            )));
        }
    }
    while ok(lo) && lo > f64::MIN_POSITIVE {
        lo /= 2.0;
    }
    while hi - lo > 1e-12 * hi {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

impl System for GaussianMechanism {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }
    /// The calibration and its exact accounting; `empirical_sigma` samples.
    fn exact_metrics(&self) -> &'static [&'static str] {
        &["sigma", "noise_multiplier", "exact_epsilon", "exact_delta"]
    }

    fn cost(&self, c: &CostInput) -> Cost {
        let samples = c.var("samples", DEFAULT_SAMPLES);
        Cost {
            seconds: 1e-4 + 1e-8 * samples,
            bytes: 1e3,
        }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (sensitivity, eps, delta) = (u.var("sensitivity")?, u.var("epsilon")?, u.var("delta")?);
        let samples = u.var_or("samples", DEFAULT_SAMPLES);
        if samples > MAX_SAMPLES {
            return Err(SystemError::Invalid(format!(
                "samples = {samples} is over the limit of {MAX_SAMPLES}"
            )));
        }
        let sigma = match u.option("calibration") {
            "classic" => sensitivity * (2.0 * (1.25 / delta).ln()).sqrt() / eps,
            _ => analytic_sigma(sensitivity, eps, delta)?,
        } * u.var_or("noise_scale", 1.0);
        let mu = sensitivity / sigma;
        let mut out = BTreeMap::new();
        out.insert("sigma".into(), sigma);
        out.insert("noise_multiplier".into(), sigma / sensitivity);
        out.insert("exact_epsilon".into(), gdp_epsilon(mu, delta)?);
        out.insert("exact_delta".into(), gdp_delta(mu, eps));
        if u.wants(&["empirical_sigma"]) {
            // The mechanism draws no data, so its noise is its only stream: taken from
            // the unit's seed path directly, not through the recipe's choice between a
            // noise and a data stream (a recipe may seed the noise like the data).
            let mut rng = u.seeds.child("noise").rng();
            let n = samples as usize;
            let (mut sum, mut sum2) = (0.0, 0.0);
            for _ in 0..n {
                let x: f64 = StandardNormal.sample(&mut rng);
                let x = sigma * x;
                sum += x;
                sum2 += x * x;
            }
            let mean = sum / n as f64;
            let var = (sum2 - n as f64 * mean * mean) / (n as f64 - 1.0);
            out.insert("empirical_sigma".into(), var.max(0.0).sqrt());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Balle & Wang's delta at the calibrated sigma is the target, and the exact GDP
    /// epsilon of that sigma (the other code) is the target epsilon.
    #[test]
    fn analytic_calibration_meets_its_target_exactly() {
        for (eps, delta) in [(0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-5), (8.0, 1e-9)] {
            let s = analytic_sigma(1.0, eps, delta).unwrap();
            let d = analytic_delta(1.0, s, eps);
            assert!(d <= delta && d > delta * (1.0 - 1e-6), "{eps} {delta}: {d}");
            let e = gdp_epsilon(1.0 / s, delta).unwrap();
            assert!((e - eps).abs() < 1e-6 * eps, "{eps}: gdp says {e}");
        }
        // Scale: sigma is proportional to the sensitivity.
        let (a, b) = (
            analytic_sigma(1.0, 1.0, 1e-5).unwrap(),
            analytic_sigma(3.0, 1.0, 1e-5).unwrap(),
        );
        assert!((b / a - 3.0).abs() < 1e-9);
    }

    /// Dwork & Roth's classic sigma is (epsilon, delta)-DP for epsilon < 1 (Thm. A.1)
    /// and more noise than needed; at large epsilon it is not enough.
    #[test]
    fn classic_calibration_is_loose_below_one_and_fails_far_above() {
        let classic = |eps: f64, delta: f64| (2.0 * (1.25 / delta).ln()).sqrt() / eps;
        for eps in [0.1, 0.5, 0.9] {
            let s = classic(eps, 1e-5);
            assert!(s > analytic_sigma(1.0, eps, 1e-5).unwrap());
            assert!(gdp_epsilon(1.0 / s, 1e-5).unwrap() <= eps);
        }
        let s = classic(20.0, 1e-5);
        assert!(gdp_epsilon(1.0 / s, 1e-5).unwrap() > 20.0);
    }
}
