//! Two-sample tests: are two samples draws from the same distribution?
//!
//! Used by the `engine-equivalence` claim to compare the final test losses of the
//! direct and the reduced DP-GD engines over independent seeds.
//!
//! * [`ks_two_sample`] — Kolmogorov-Smirnov: statistic `D = sup |F_a - F_b|` and its
//!   asymptotic p-value `Q_KS((sqrt(N_e) + 0.12 + 0.11/sqrt(N_e)) D)`,
//!   `N_e = n_a n_b/(n_a + n_b)`, `Q_KS(l) = 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 l^2)`
//!   (Stephens 1970; Press et al., *Numerical Recipes*, 3rd ed., Sec. 14.3.3).
//! * [`welch_test`] — difference of means, Welch's t with Welch-Satterthwaite degrees
//!   of freedom.
//! * [`brown_forsythe_test`] — equality of spreads: Welch's t on the absolute deviations
//!   from each sample's median (Brown & Forsythe 1974). Unlike the F-test it stays valid
//!   for skewed samples such as losses.
//!
//! Every p-value is two-sided.
use super::FitError;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A test's statistic and two-sided p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestResult {
    pub statistic: f64,
    pub p_value: f64,
}

fn check(a: &[f64], b: &[f64], min: usize) -> Result<(), FitError> {
    for (s, name) in [(a, 0usize), (b, 1)] {
        if s.len() < min {
            return Err(FitError::Distribution(format!(
                "sample {name} has {} values; the test needs at least {min}",
                s.len()
            )));
        }
        if let Some((i, v)) = s.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(FitError::NonFiniteY {
                index: name,
                replicate: i,
                value: *v,
            });
        }
    }
    Ok(())
}

fn sorted(a: &[f64]) -> Vec<f64> {
    let mut v = a.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Kolmogorov's limiting distribution `Q_KS(l) = P(K > l)`.
fn q_ks(l: f64) -> f64 {
    if l < 1e-3 {
        return 1.0;
    }
    let mut sum = 0.0;
    for k in 1..=200 {
        let kf = k as f64;
        let term = (-2.0 * kf * kf * l * l).exp();
        sum += if k % 2 == 1 { term } else { -term };
        if term < 1e-16 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// Two-sample Kolmogorov-Smirnov test (asymptotic p-value; both samples >= 8).
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> Result<TestResult, FitError> {
    check(a, b, 8)?;
    let (a, b) = (sorted(a), sorted(b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    let ne = na * nb / (na + nb);
    let l = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    Ok(TestResult {
        statistic: d,
        p_value: q_ks(l),
    })
}

fn mean_var(a: &[f64]) -> (f64, f64) {
    let n = a.len() as f64;
    let m = a.iter().sum::<f64>() / n;
    let v = a.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Welch's two-sample t-test for equal means.
pub fn welch_test(a: &[f64], b: &[f64]) -> Result<TestResult, FitError> {
    check(a, b, 2)?;
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se = (sa + sb).sqrt();
    if se <= 0.0 {
        // Both samples constant: equal means iff equal values.
        let same = ma.to_bits() == mb.to_bits();
        return Ok(TestResult {
            statistic: if same { 0.0 } else { f64::INFINITY },
            p_value: if same { 1.0 } else { 0.0 },
        });
    }
    let t = (ma - mb) / se;
    let dof = (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, dof).map_err(|e| FitError::Distribution(e.to_string()))?;
    Ok(TestResult {
        statistic: t,
        p_value: (2.0 * dist.cdf(-t.abs())).min(1.0),
    })
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    }
}

/// Brown-Forsythe test for equal spreads (Welch's t on absolute deviations from the
/// medians).
pub fn brown_forsythe_test(a: &[f64], b: &[f64]) -> Result<TestResult, FitError> {
    check(a, b, 2)?;
    let dev = |s: &[f64]| {
        let m = median(&sorted(s));
        s.iter().map(|x| (x - m).abs()).collect::<Vec<f64>>()
    };
    welch_test(&dev(a), &dev(b))
}
