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
//!
//! The accountants (metrics `*_epsilon` and `*_margin`, computed only when asked for): the
//! same T-step composition, given to each accountant of [`crate::privacy`] as one full-batch
//! phase (`q = 1`, noise multiplier `z`, `T` steps): zCDP (Bun & Steinke 2016, Prop. 1.6:
//! the Gaussian mechanism is `1/(2 z^2)`-zCDP; Lemma 2.3: composition adds rho; converted
//! by Canonne, Kamath & Steinke 2020, Cor. 13), RDP (Mironov 2017, Prop. 7: order-alpha
//! RDP `alpha/(2 z^2)`; Prop. 1: composition adds; converted by CKS 2020, Prop. 12, over
//! the default orders) and the certified PLD bracket (Doroshenko et al. 2022; Koskela et
//! al. 2020). Every sound accountant bounds the exact epsilon from above; the PLD bracket
//! contains it. Option `accounting` feeds the accountants a wrong composition instead, as
//! negative controls: `add_remove_z` (the multiplier of sensitivity C/n while the mechanism
//! is replace-one), `missing_sqrt_eta` (z without its 1/sqrt(eta)) and `rho_without_half`
//! (zCDP's rho = T/z^2, Prop. 1.6's 1/2 dropped).
use super::*;
use crate::privacy::{gdp_delta, gdp_epsilon, pld, Accountant, Phase};

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
    OptionInfo {
        name: "accounting",
        values: &[
            "as_mechanism",
            "add_remove_z",
            "missing_sqrt_eta",
            "rho_without_half",
        ],
        doc: "what the accountants are given: the mechanism's composition, or a negative \
              control's wrong one (module docs)",
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
    MetricInfo {
        name: "zcdp_epsilon",
        doc: "epsilon at delta of the zCDP accountant (rho = T/(2 z^2), CKS Cor. 13)",
    },
    MetricInfo {
        name: "rdp_epsilon",
        doc: "epsilon at delta of the RDP accountant (default orders, CKS Prop. 12)",
    },
    MetricInfo {
        name: "pld_epsilon_upper",
        doc: "upper end of the PLD accountant's certified bracket of epsilon at delta",
    },
    MetricInfo {
        name: "pld_epsilon_lower",
        doc: "lower end of the PLD accountant's certified bracket of epsilon at delta",
    },
    MetricInfo {
        name: "zcdp_margin",
        doc: "zcdp_epsilon - exact_epsilon (>= 0 for a sound accountant)",
    },
    MetricInfo {
        name: "rdp_margin",
        doc: "rdp_epsilon - exact_epsilon (>= 0 for a sound accountant)",
    },
    MetricInfo {
        name: "pld_upper_margin",
        doc: "pld_epsilon_upper - exact_epsilon (>= 0: the bracket's upper end is sound)",
    },
    MetricInfo {
        name: "pld_lower_margin",
        doc: "exact_epsilon - pld_epsilon_lower (>= 0: the bracket's lower end is below it)",
    },
    MetricInfo {
        name: "rdp_minus_zcdp",
        doc: "rdp_epsilon - zcdp_epsilon (>= 0: zCDP's continuous order search is at most \
              the RDP grid's minimum of the same curve alpha T/(2 z^2))",
    },
];

/// Every metric, all exact (the calibration and the accountants draw nothing): the
/// calibration's four, then the accountants' nine ([`ACCOUNTANT_METRICS`]).
const EXACT_METRICS: &[&str] = &[
    "exact_epsilon",
    "slack_ratio",
    "exact_delta",
    "mu",
    "zcdp_epsilon",
    "rdp_epsilon",
    "pld_epsilon_upper",
    "pld_epsilon_lower",
    "zcdp_margin",
    "rdp_margin",
    "pld_upper_margin",
    "pld_lower_margin",
    "rdp_minus_zcdp",
];

/// The accountants' metrics, asked by name: computed only when a claim wants one.
const ACCOUNTANT_METRICS: &[&str] = EXACT_METRICS.split_at(4).1;

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
        EXACT_METRICS
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
        if u.wants(ACCOUNTANT_METRICS) {
            accountants(u, z, steps, delta, exact, &mut out)?;
        }
        Ok(out)
    }
}

/// The accountants' epsilons of the T-step composition with multiplier `z`, and their
/// margins to the exact epsilon (module docs).
fn accountants(
    u: &UnitInput,
    z: f64,
    steps: f64,
    delta: f64,
    exact: f64,
    out: &mut BTreeMap<String, f64>,
) -> Result<(), SystemError> {
    let accounting = u.option("accounting");
    let z = match accounting {
        "add_remove_z" => 2.0 * z,
        "missing_sqrt_eta" => z * u.var("eta")?.sqrt(),
        _ => z,
    };
    let t = steps as u64;
    let recipe = &u.recipe.accounting;
    // The composition every accountant is given: T full-batch steps of multiplier z.
    let phases = |z| [Phase::new(1.0, z, t)];
    let account = |acc, z| -> Result<f64, SystemError> {
        Ok(crate::privacy::epsilon(acc, &phases(z), delta, recipe)?.epsilon)
    };
    // rho = T/(2 z^2) doubled is the rho of the multiplier z/sqrt(2).
    let z_zcdp = if accounting == "rho_without_half" {
        z / std::f64::consts::SQRT_2
    } else {
        z
    };
    let zcdp = account(Accountant::Zcdp, z_zcdp)?;
    let rdp = account(Accountant::Rdp, z)?;
    let bracket = pld::pld_epsilon(&phases(z), delta, pld::DEFAULT_WIDTH)?;
    out.insert("zcdp_epsilon".into(), zcdp);
    out.insert("rdp_epsilon".into(), rdp);
    out.insert("pld_epsilon_upper".into(), bracket.epsilon_upper);
    out.insert("pld_epsilon_lower".into(), bracket.epsilon_lower);
    out.insert("zcdp_margin".into(), zcdp - exact);
    out.insert("rdp_margin".into(), rdp - exact);
    out.insert("pld_upper_margin".into(), bracket.epsilon_upper - exact);
    out.insert("pld_lower_margin".into(), exact - bracket.epsilon_lower);
    out.insert("rdp_minus_zcdp".into(), rdp - zcdp);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every declared metric is exact, in the declared order, and the accountants' list is
    /// the tail that starts at the first accountant's epsilon.
    #[test]
    fn metric_lists_agree() {
        let names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        assert_eq!(names, EXACT_METRICS);
        assert_eq!(ACCOUNTANT_METRICS.first(), Some(&"zcdp_epsilon"));
        assert_eq!(ACCOUNTANT_METRICS.len(), 9);
    }
}
