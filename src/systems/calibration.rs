//! Exact privacy of a sigma calibration for full-batch DP-GD (DESIGN 3).
//!
//! DP-GD's step `theta <- theta - eta gbar + sqrt(eta) (kappa C/n) sigma xi` is a Gaussian
//! mechanism on the clipped mean gbar, whose sensitivity is `Delta C/n` with Delta = 2
//! (replace-one adjacency) or 1 (add/remove). Its noise multiplier is therefore
//! `z = sqrt(eta) kappa C sigma/n / (eta Delta C/n) = kappa sigma / (Delta sqrt(eta))`, and T
//! steps compose exactly to mu-GDP with `mu = sqrt(T)/z` (Dong, Roth & Su 2019,
//! Cor. 3.3). The exact epsilon at delta is the GDP inversion (`privacy::gdp_epsilon`).
//!
//! Calibrations: `prop_2_2`, `sigma = sqrt(eta T) sqrt(8 ln(1/delta))/eps`
//! (privacy-for-free Prop. 2.2; blog Assumption 4's sigma_a), and `inverse_epsilon`,
//! `sigma = sqrt(eta T)/eps` — a plausible slip that drops the `sqrt(8 ln(1/delta))`.
use super::*;
use crate::privacy::{gdp_delta, gdp_epsilon};

#[derive(Debug)]
pub struct Calibration;

const PARAMS: &[ParamInfo] = &[
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
        name: "steps",
        kind: ParamKind::IntAtLeast(1),
        optional: false,
        doc: "number of steps T",
    },
    ParamInfo {
        name: "eta",
        kind: ParamKind::Positive,
        optional: false,
        doc: "step size",
    },
    ParamInfo {
        name: "kappa",
        kind: ParamKind::Positive,
        optional: false,
        doc: "noise constant in sqrt(eta)(kappa C/n) sigma",
    },
];

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "sensitivity",
        values: &["replace_one", "add_remove"],
        doc: "adjacency: replace-one (2C/n) or add/remove (C/n)",
    },
    OptionInfo {
        name: "calibration",
        values: &["prop_2_2", "inverse_epsilon"],
        doc: "sigma formula",
    },
];

const METRICS: &[MetricInfo] = &[
    MetricInfo {
        name: "exact_epsilon",
        doc: "exact epsilon (GDP) of the calibrated mechanism at delta",
    },
    MetricInfo {
        name: "slack_ratio",
        doc: "exact_epsilon / target epsilon (< 1: over-noised)",
    },
    MetricInfo {
        name: "exact_delta",
        doc: "exact delta of the mechanism at the target epsilon",
    },
    MetricInfo {
        name: "mu",
        doc: "GDP parameter mu = sqrt(T)/z",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: "gaussian_calibration",
    model: "none",
    description: "exact Gaussian-DP accounting of a full-batch DP-GD sigma calibration",
    needs_target: false,
    params: PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

impl System for Calibration {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }
    /// Every metric: the calibration and the exact GDP accounting draw nothing.
    fn exact_metrics(&self) -> &'static [&'static str] {
        &["exact_epsilon", "slack_ratio", "exact_delta", "mu"]
    }

    fn cost(&self, _: &CostInput) -> Cost {
        // A closed form and a GDP conversion.
        Cost {
            seconds: 1e-5,
            bytes: 1e3,
        }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        let (eps, delta, eta, kappa) = (
            u.var("epsilon")?,
            u.var("delta")?,
            u.var("eta")?,
            u.var("kappa")?,
        );
        let steps = u.var("steps")?;
        let sigma = match u.option("calibration") {
            "inverse_epsilon" => (eta * steps).sqrt() / eps,
            // The training core's implementation of Prop. 2.2, with the run's recipe (so a
            // wrong formula there shows).
            _ => crate::train::dpgd::prop22_sigma(eta, steps as usize, eps, delta, &u.recipe.dpgd)
                .map_err(|e| SystemError::Invalid(e.to_string()))?,
        };
        let big_delta = if u.option("sensitivity") == "add_remove" {
            1.0
        } else {
            2.0
        };
        let z = kappa * sigma / (big_delta * eta.sqrt());
        let mu = steps.sqrt() / z;
        let exact = gdp_epsilon(mu, delta)?;
        let mut out = BTreeMap::new();
        out.insert("exact_epsilon".into(), exact);
        out.insert("slack_ratio".into(), exact / eps);
        out.insert("exact_delta".into(), gdp_delta(mu, eps));
        out.insert("mu".into(), mu);
        Ok(out)
    }
}
