//! The functions an expression may call: one table, which the parser, the evaluator,
//! the error messages and the spec reference (docs/spec-reference.md) all read.
//!
//! Besides arithmetic (`sqrt ln exp ...`), a DP researcher's vocabulary: the standard
//! normal CDF `Phi` and its quantile `Phi_inv`, `erf`/`erfc`, logarithms with their base
//! in the name (`log2`, `log10`; a bare `log` is refused as ambiguous), and the
//! accountants as functions, so a claim can compare a core's own accountant or a
//! calibration formula with an independent computation without writing Rust:
//!
//! * `gdp_epsilon(mu, delta)`, `gdp_delta(mu, epsilon)` — mu-GDP to `(epsilon, delta)`
//!   (Dong, Roth & Su 2019, Cor. 2.13; exact), and `gdp_mu(epsilon, delta)` its inverse
//!   (the largest mu that is `(epsilon, delta)`-DP);
//! * `zcdp_epsilon(rho, delta)` — rho-zCDP to `(epsilon, delta)` (Bun & Steinke 2016,
//!   Prop. 1.3, and Canonne, Kamath & Steinke 2020, Cor. 13);
//! * `rdp_epsilon(q, z, steps, delta)` — `steps` compositions of the Poisson-subsampled
//!   Gaussian at rate `q`, noise multiplier `z`, under RDP (Mironov 2017; the
//!   subsampled bound of Mironov, Talwar & Zhang 2019; the conversion of Canonne,
//!   Kamath & Steinke 2020, Prop. 12), an upper bound;
//! * `pld_epsilon_upper(q, z, steps, delta)` — the same mechanism under the privacy-loss
//!   distribution accountant (Koskela et al. 2020; pessimistic discretisation), an upper
//!   bound, tighter than RDP, and `pld_epsilon_lower(...)` the lower end of the same
//!   certified bracket: the exact epsilon (what PRV/PLD accountants approximate) lies
//!   between them;
//! * `calibrate_sigma(epsilon, delta, q, steps)` and `calibrate_sigma_pld(...)` — the
//!   smallest noise multiplier `z` (noise std / L2 sensitivity) meeting `(epsilon,
//!   delta)` under RDP or PLD: what `dpclaims calibrate` prints.
//!
//! The accountants are the tool's own (`crate::privacy`) with the paper recipe
//! ([`crate::privacy::AccountantRecipe::PAPER`]): a run's injected faults do not reach
//! them. Outside a function's domain (a probability outside (0, 1), a non-integer or
//! zero step count, a non-positive noise multiplier) the value is NaN, as for `sqrt(-1)`:
//! the caller's finiteness check then names the claim, prediction and point.
use crate::privacy::{self, Accountant, AccountantRecipe, Phase};
use statrs::distribution::{ContinuousCDF, Normal};

/// How many arguments a function takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arity {
    Exactly(usize),
    AtLeast(usize),
}

impl Arity {
    pub(super) fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
        }
    }

    /// In words, for error messages ("1 argument", "2 or more arguments").
    pub(super) fn words(self) -> String {
        match self {
            Arity::Exactly(1) => "1 argument".to_string(),
            Arity::Exactly(k) => format!("{k} arguments"),
            Arity::AtLeast(k) => format!("{k} or more arguments"),
        }
    }
}

/// One function of the expression language.
pub(super) struct FuncInfo {
    pub name: &'static str,
    /// The arguments as written in the docs (`"q, z, steps, delta"`).
    pub args: &'static str,
    pub arity: Arity,
    pub doc: &'static str,
    pub apply: Apply,
}

/// A function's implementation: of one argument, or of the evaluated argument list
/// (whose length the parser checked against [`FuncInfo::arity`]).
#[derive(Clone, Copy)]
pub(super) enum Apply {
    Unary(fn(f64) -> f64),
    Many(fn(&[f64]) -> f64),
}

impl FuncInfo {
    pub(super) fn apply(&self, args: &[f64]) -> f64 {
        let direct = || match self.apply {
            Apply::Unary(f) => args.first().map_or(f64::NAN, |&x| f(x)),
            Apply::Many(f) => f(args),
        };
        if MEMOISED.contains(&self.name) {
            super::memo::memoised(self.name, args, direct)
        } else {
            direct()
        }
    }
}

/// The functions whose values are kept ([`super::memo`]): the accountants and
/// calibrations, each a numerical computation (milliseconds to tens of seconds), where
/// the closed forms (`gdp_*`, `zcdp_epsilon`) cost less than a lookup.
const MEMOISED: &[&str] = &[
    "rdp_epsilon",
    "rdp_epsilon_classic",
    "moments_epsilon",
    "pld_epsilon_upper",
    "pld_epsilon_lower",
    "calibrate_sigma",
    "calibrate_sigma_pld",
];

/// Every function, in the order the docs and error messages list them.
pub(super) const FUNCTIONS: &[FuncInfo] = &[
    f1("sqrt", "square root", f64::sqrt),
    f1("ln", "natural logarithm", f64::ln),
    f1("log2", "base-2 logarithm", f64::log2),
    f1("log10", "base-10 logarithm", f64::log10),
    f1("exp", "exponential", f64::exp),
    f1("ceil", "smallest integer >= x", f64::ceil),
    f1("floor", "largest integer <= x", f64::floor),
    f1("abs", "absolute value", f64::abs),
    FuncInfo {
        name: "min",
        args: "a, b, ...",
        arity: Arity::AtLeast(2),
        doc: "smallest argument (NaN if any argument is NaN)",
        apply: Apply::Many(min),
    },
    FuncInfo {
        name: "max",
        args: "a, b, ...",
        arity: Arity::AtLeast(2),
        doc: "largest argument (NaN if any argument is NaN)",
        apply: Apply::Many(max),
    },
    f1("erf", "error function", statrs::function::erf::erf),
    f1(
        "erfc",
        "complementary error function 1 - erf(x), accurate in the tail",
        statrs::function::erf::erfc,
    ),
    f1("Phi", "standard normal CDF", phi),
    f1(
        "Phi_inv",
        "standard normal quantile (inverse of Phi), for x in (0, 1)",
        phi_inv,
    ),
    FuncInfo {
        name: "gdp_epsilon",
        args: "mu, delta",
        arity: Arity::Exactly(2),
        doc: "epsilon of a mu-GDP mechanism at delta (exact; Dong, Roth & Su 2019, Cor. 2.13)",
        apply: Apply::Many(|a| privacy::gdp_epsilon(a[0], a[1]).unwrap_or(f64::NAN)),
    },
    FuncInfo {
        name: "gdp_mu",
        args: "epsilon, delta",
        arity: Arity::Exactly(2),
        doc: "the largest mu whose mu-GDP mechanism is (epsilon, delta)-DP: the inverse of \
              gdp_epsilon (gdp_mu(gdp_epsilon(mu, delta), delta) = mu)",
        apply: Apply::Many(|a| privacy::gdp::gdp_mu_of(a[0], a[1]).unwrap_or(f64::NAN)),
    },
    FuncInfo {
        name: "gdp_delta",
        args: "mu, epsilon",
        arity: Arity::Exactly(2),
        doc: "delta of a mu-GDP mechanism at epsilon (exact)",
        apply: Apply::Many(gdp_delta),
    },
    FuncInfo {
        name: "zcdp_epsilon",
        args: "rho, delta",
        arity: Arity::Exactly(2),
        doc: "epsilon of a rho-zCDP mechanism at delta",
        apply: Apply::Many(|a| privacy::zcdp_epsilon(a[0], a[1]).unwrap_or(f64::NAN)),
    },
    FuncInfo {
        name: "rdp_epsilon",
        args: "q, z, steps, delta",
        arity: Arity::Exactly(4),
        doc: "epsilon of `steps` Poisson-subsampled Gaussian steps (rate q, noise multiplier z) \
              under RDP, an upper bound",
        apply: Apply::Many(|a| accounted(Accountant::Rdp, a)),
    },
    FuncInfo {
        name: "rdp_epsilon_classic",
        args: "q, z, steps, delta",
        arity: Arity::Exactly(4),
        doc: "the same RDP curve on TF Privacy's default orders with the classic conversion \
              eps = RDP + ln(1/delta)/(alpha - 1) (Mironov 2017, Prop. 3): looser, as papers of \
              2017-2020 report it",
        apply: Apply::Many(|a| older(privacy::rdp_classic_epsilon, a)),
    },
    FuncInfo {
        name: "moments_epsilon",
        args: "q, z, steps, delta",
        arity: Arity::Exactly(4),
        doc: "the same by the moments accountant of Abadi et al. 2016 (log moments at the \
              integer lambda = 1..32, tail bound eps = min (T alpha(lambda) + ln(1/delta))/lambda): \
              a paper's own numbers by its own method, beside the exact epsilon",
        apply: Apply::Many(|a| older(privacy::moments_accountant_epsilon, a)),
    },
    FuncInfo {
        name: "pld_epsilon_upper",
        args: "q, z, steps, delta",
        arity: Arity::Exactly(4),
        doc: "the same under the PLD accountant, an upper bound (tighter than RDP)",
        apply: Apply::Many(|a| accounted(Accountant::Pld, a)),
    },
    FuncInfo {
        name: "pld_epsilon_lower",
        args: "q, z, steps, delta",
        arity: Arity::Exactly(4),
        doc: "the lower end of the PLD accountant's certified bracket: the exact epsilon of the \
              composition (which PRV and PLD accountants such as Opacus' and dp_accounting's \
              approximate) is in [pld_epsilon_lower, pld_epsilon_upper]",
        apply: Apply::Many(pld_lower),
    },
    FuncInfo {
        name: "calibrate_sigma",
        args: "epsilon, delta, q, steps",
        arity: Arity::Exactly(4),
        doc: "smallest noise multiplier z meeting (epsilon, delta) for `steps` steps at rate q, \
              under RDP (as `dpclaims calibrate`)",
        apply: Apply::Many(|a| calibrated(Accountant::Rdp, a)),
    },
    FuncInfo {
        name: "calibrate_sigma_pld",
        args: "epsilon, delta, q, steps",
        arity: Arity::Exactly(4),
        doc: "the same under the PLD accountant",
        apply: Apply::Many(|a| calibrated(Accountant::Pld, a)),
    },
];

const fn f1(name: &'static str, doc: &'static str, apply: fn(f64) -> f64) -> FuncInfo {
    FuncInfo {
        name,
        args: "x",
        arity: Arity::Exactly(1),
        doc,
        apply: Apply::Unary(apply),
    }
}

/// The names, comma-separated, as error messages list them.
pub(super) fn known() -> String {
    FUNCTIONS
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table as Markdown rows (`| name(args) | doc |`), for the spec reference.
pub fn reference_rows() -> String {
    FUNCTIONS
        .iter()
        .map(|f| format!("| `{}({})` | {} |\n", f.name, f.args, f.doc))
        .collect()
}

fn min(args: &[f64]) -> f64 {
    // NaN-propagating, unlike f64::min, which drops a NaN argument.
    args.iter().copied().fold(f64::INFINITY, |m, v| {
        if v.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.min(v)
        }
    })
}

fn max(args: &[f64]) -> f64 {
    args.iter().copied().fold(f64::NEG_INFINITY, |m, v| {
        if v.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(v)
        }
    })
}

fn std_normal() -> Normal {
    Normal::standard()
}

fn phi(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    std_normal().cdf(x)
}

fn phi_inv(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return match p {
            0.0 => f64::NEG_INFINITY,
            1.0 => f64::INFINITY,
            _ => f64::NAN,
        };
    }
    std_normal().inverse_cdf(p)
}

fn gdp_delta(a: &[f64]) -> f64 {
    let (mu, eps) = (a[0], a[1]);
    if !(mu >= 0.0 && mu.is_finite() && eps >= 0.0 && eps.is_finite()) {
        return f64::NAN;
    }
    privacy::gdp_delta(mu, eps)
}

/// A step count argument: a positive integer that fits a u64, or `None`.
fn steps(x: f64) -> Option<u64> {
    (x >= 1.0 && x.fract() == 0.0 && x < 1.8e19).then_some(x as u64)
}

fn accounted(acc: Accountant, a: &[f64]) -> f64 {
    let (q, z, delta) = (a[0], a[1], a[3]);
    let Some(t) = steps(a[2]) else {
        return f64::NAN;
    };
    privacy::epsilon(acc, &[Phase::new(q, z, t)], delta, &AccountantRecipe::PAPER)
        .map_or(f64::NAN, |e| e.epsilon)
}

/// An older accountant's epsilon (`f(q, z, steps, delta)`), NaN outside its domain.
fn older(f: fn(f64, f64, u64, f64) -> Result<f64, privacy::PrivacyError>, a: &[f64]) -> f64 {
    let (q, z, delta) = (a[0], a[1], a[3]);
    let Some(t) = steps(a[2]) else {
        return f64::NAN;
    };
    f(q, z, t, delta).unwrap_or(f64::NAN)
}

/// The lower end of the certified PLD bracket ([`privacy::pld::pld_epsilon`] at its
/// default width, the bracket whose upper end `pld_epsilon_upper` is).
fn pld_lower(a: &[f64]) -> f64 {
    let (q, z, delta) = (a[0], a[1], a[3]);
    let Some(t) = steps(a[2]) else {
        return f64::NAN;
    };
    privacy::pld::pld_epsilon(&[Phase::new(q, z, t)], delta, privacy::pld::DEFAULT_WIDTH)
        .map_or(f64::NAN, |b| b.epsilon_lower)
}

fn calibrated(acc: Accountant, a: &[f64]) -> f64 {
    let (eps, delta, q) = (a[0], a[1], a[2]);
    let Some(t) = steps(a[3]) else {
        return f64::NAN;
    };
    privacy::calibrate(acc, eps, delta, q, t, &AccountantRecipe::PAPER)
        .map_or(f64::NAN, |c| c.noise_multiplier)
}

#[cfg(test)]
mod tests {
    fn call(name: &str, args: &[f64]) -> f64 {
        super::FUNCTIONS
            .iter()
            .find(|f| f.name == name)
            .unwrap()
            .apply(args)
    }

    /// gdp_mu inverts gdp_epsilon; gdp_epsilon at values computed independently (Python's
    /// `math.erfc` and a bisection of Cor. 2.13's delta(eps) to 1e-15).
    #[test]
    fn gdp_mu_inverts_gdp_epsilon_at_known_values() {
        for (mu, delta, eps) in [
            (1.0, 1e-5, 4.3771780956812245),
            (0.5, 1e-6, 2.25408465021974),
            (2.0, 1e-3, 7.581279924570115),
        ] {
            let e = call("gdp_epsilon", &[mu, delta]);
            assert!(
                (e - eps).abs() < 1e-9 * eps,
                "gdp_epsilon({mu}, {delta}) = {e}, not {eps}"
            );
            let m = call("gdp_mu", &[e, delta]);
            assert!(
                (m - mu).abs() < 1e-9 * mu,
                "gdp_mu({e}, {delta}) = {m}, not {mu}"
            );
            assert!((call("gdp_mu", &[eps, delta]) - mu).abs() < 1e-9);
        }
        // More epsilon allows more mu; outside the domain, NaN.
        assert!(call("gdp_mu", &[2.0, 1e-5]) < call("gdp_mu", &[4.0, 1e-5]));
        assert!(call("gdp_mu", &[1.0, 0.0]).is_nan());
        assert!(call("gdp_mu", &[-1.0, 1e-5]).is_nan());
    }

    /// At q = 1 the composition is exactly sqrt(T)/z-GDP (Dong, Roth & Su 2019, Cor.
    /// 3.3): the PLD bracket [pld_epsilon_lower, pld_epsilon_upper] must contain its
    /// epsilon, within the bracket's width (about 0.01); a subsampled composition's
    /// bracket lies below RDP's upper bound.
    #[test]
    fn the_pld_bracket_contains_the_exact_gdp_epsilon() {
        for (z, t, delta) in [
            (1.0f64, 10.0f64, 1e-5),
            (2.0, 100.0, 1e-6),
            (5.0, 1000.0, 1e-5),
        ] {
            let exact = call("gdp_epsilon", &[t.sqrt() / z, delta]);
            let lo = call("pld_epsilon_lower", &[1.0, z, t, delta]);
            let hi = call("pld_epsilon_upper", &[1.0, z, t, delta]);
            assert!(lo <= exact && exact <= hi, "{lo} <= {exact} <= {hi}");
            assert!(hi - lo < 0.05, "bracket [{lo}, {hi}] too wide");
        }
        let lo = call("pld_epsilon_lower", &[0.01, 1.0, 1000.0, 1e-5]);
        let hi = call("pld_epsilon_upper", &[0.01, 1.0, 1000.0, 1e-5]);
        let rdp = call("rdp_epsilon", &[0.01, 1.0, 1000.0, 1e-5]);
        assert!(0.0 < lo && lo <= hi && hi <= rdp, "{lo} {hi} {rdp}");
        assert!(call("pld_epsilon_lower", &[0.01, 1.0, 0.5, 1e-5]).is_nan());
    }
    /// The table in claims/README.md ("Expressions") is this module's, row for row.
    #[test]
    fn the_spec_reference_lists_every_function() {
        let readme = include_str!("../../../claims/README.md");
        let start = readme
            .find("| function | value |\n|---|---|\n")
            .expect("claims/README.md: the functions table");
        let rows = &readme[start..];
        let rows = &rows[rows.find("|---|---|\n").unwrap() + 10..];
        let rows = &rows[..rows.find("<!-- end functions -->").unwrap()];
        assert_eq!(
            rows,
            super::reference_rows(),
            "claims/README.md's functions table differs from src/spec/expr/functions.rs"
        );
    }
}
