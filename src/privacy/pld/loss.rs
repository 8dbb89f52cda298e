//! The privacy loss of one step of the Poisson-subsampled Gaussian mechanism, and its
//! pessimistic "connect-the-dots" discretisation on a grid of spacing `Δ`.
//!
//! Add/remove adjacency with sensitivity 1 and noise standard deviation `σ = z` (the
//! convention of dp_accounting and Opacus for sampling rate `q` and noise multiplier
//! `z`): one step outputs `N(0, σ²)` without the sample and, with it present (included
//! with probability `q`), the mixture `(1 − q) N(0, σ²) + q N(1, σ²)`. The two
//! directions of adjacency give two pairs `(P, Q)`, each with privacy loss
//! `L = ln(dP/dQ)` (Koskela, Jälkö & Honkela 2020, Sec. 3; Zhu, Dong & Wang 2022,
//! "Optimal accounting of differential privacy via characteristic function", Sec. 5):
//!
//! * [`Direction::Remove`]: `P` the mixture, `Q = N(0, σ²)`;
//!   `L(x) = ln(1 − q + q·exp((2x − 1)/(2σ²)))`, increasing in `x`, `L ≥ ln(1 − q)`.
//! * [`Direction::Add`]: `P = N(0, σ²)`, `Q` the mixture; `L(x) = −ln(1 − q + q·exp(…))`,
//!   decreasing in `x`, `L ≤ −ln(1 − q)`.
//!
//! Both are monotone in `x`, so the masses `P(L ∈ cell)` and `Q(L ∈ cell)` of a cell
//! `(ℓ_i, ℓ_{i+1}]` are Gaussian masses of an `x`-interval, in closed form.
//!
//! **Discretisation** (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the
//! dots: tighter discrete approximations of privacy loss distributions", Sec. 3,
//! pessimistic estimate): the `P`-mass of each cell is split between its two end points
//! so that both the cell's `P`-mass and its `Q`-mass `E_P[e^{−L}; cell]` are kept. In the
//! coordinate `U = e^{−L}` this is a mean-preserving spread of every value to the end
//! points of its cell; the hockey-stick divergence `E_P[(1 − e^ε·ΠU_t)_+]` of a
//! composition is convex in each `U_t`, so by Jensen the discretised composition's
//! `δ(ε)` is an **upper bound** of the true one, at every `ε` and for any number of
//! steps. The split raises `E[L]` by at most [`spread_bias`]`(Δ)` per step (second
//! order in `Δ`), which [`super`] uses for the lower end of the bracket.
use crate::privacy::special::ln_erfc;
use statrs::function::erf::erfc;
use std::f64::consts::{LN_2, SQRT_2};

/// Which pair `(P, Q)` of the two adjacent worlds (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `P` with the sample (the mixture), `Q` without.
    Remove,
    /// `P` without the sample, `Q` with it.
    Add,
}

/// `P(a < Z ≤ b)` for a standard normal `Z`, accurate in both tails (differences of
/// `erfc` on the side of zero where the values are small).
pub(crate) fn gauss_mass(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() || a >= b {
        return 0.0;
    }
    let upper = |x: f64| {
        // P(Z > x) = erfc(x/√2)/2, with the infinities explicit.
        if x == f64::NEG_INFINITY {
            1.0
        } else if x == f64::INFINITY {
            0.0
        } else {
            0.5 * erfc(x / SQRT_2)
        }
    };
    let m = if a >= 0.0 {
        upper(a) - upper(b)
    } else if b <= 0.0 {
        upper(-b) - upper(-a)
    } else {
        1.0 - upper(b) - upper(-a)
    };
    m.max(0.0)
}

/// `ln P(a < Z ≤ b)`, accurate where the mass underflows (far tails): through
/// `ln Φ̄(x) = ln erfc(x/√2) − ln 2` on the side of zero where the values are small.
pub(crate) fn ln_gauss_mass(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() || a >= b {
        return f64::NEG_INFINITY;
    }
    // ln P(Z > x), with the infinities explicit.
    let ln_upper = |x: f64| {
        if x == f64::NEG_INFINITY {
            0.0
        } else if x == f64::INFINITY {
            f64::NEG_INFINITY
        } else {
            ln_erfc(x / SQRT_2) - LN_2
        }
    };
    let diff = |hi: f64, lo: f64| {
        // ln(e^hi − e^lo), hi ≥ lo.
        if lo == f64::NEG_INFINITY {
            hi
        } else {
            hi + (-(lo - hi).exp()).ln_1p()
        }
    };
    if a >= 0.0 {
        diff(ln_upper(a), ln_upper(b))
    } else if b <= 0.0 {
        diff(ln_upper(-b), ln_upper(-a))
    } else {
        gauss_mass(a, b).ln()
    }
}

/// One step's privacy loss for sampling rate `q` in (0, 1] and noise `σ > 0`.
#[derive(Debug, Clone, Copy)]
pub struct StepLoss {
    pub q: f64,
    pub sigma: f64,
    pub direction: Direction,
}

impl StepLoss {
    /// The `x` at which `L(x) = ℓ`; `−∞` / `+∞` where `ℓ` is outside `L`'s range (the
    /// end of the `x`-line the loss approaches there).
    fn x_of(&self, l: f64) -> f64 {
        let q = self.q;
        // Remove: e^ℓ = 1 − q + q e^{(2x−1)/(2σ²)};  Add: e^{−ℓ} = the same. With
        // m = ±ℓ: x = σ² (ln(e^m − (1 − q)) − ln q) + 1/2, written as
        // ln(e^m − (1 − q)) = m + ln(1 − (1 − q) e^{−m}) so that e^m never overflows.
        let m = match self.direction {
            Direction::Remove => l,
            Direction::Add => -l,
        };
        if m == f64::INFINITY {
            return f64::INFINITY;
        }
        let r = (-(1.0 - q) * (-m).exp()).ln_1p();
        if m == f64::NEG_INFINITY || r.is_nan() || r == f64::NEG_INFINITY {
            // m ≤ ln(1 − q): below the range (Remove: ℓ ≤ ln(1−q)) or above it (Add:
            // ℓ ≥ −ln(1−q)); either way the end x → −∞ of the x-line.
            return f64::NEG_INFINITY;
        }
        self.sigma * self.sigma * (m + r - q.ln()) + 0.5
    }

    /// `(P, Q)` masses of the loss interval `(l0, l1]` (`l0 < l1`; infinities allowed).
    pub fn masses(&self, l0: f64, l1: f64) -> (f64, f64) {
        let s = self.sigma;
        // The x-interval of the cell, and the weights of N(0,σ²) and N(1,σ²) in P and Q.
        let (xa, xb) = match self.direction {
            Direction::Remove => (self.x_of(l0), self.x_of(l1)),
            // L decreasing in x: (l0, l1] ↔ [x(l1), x(l0)).
            Direction::Add => (self.x_of(l1), self.x_of(l0)),
        };
        let m0 = gauss_mass(xa / s, xb / s);
        let m1 = gauss_mass((xa - 1.0) / s, (xb - 1.0) / s);
        let mix = (1.0 - self.q) * m0 + self.q * m1;
        match self.direction {
            Direction::Remove => (mix, m0),
            Direction::Add => (m0, mix),
        }
    }

    /// The cell `(l0, l1]`'s `P`-mass `m` and `n·e^{l0}`, `n` its `Q`-mass, the latter
    /// in log space so that neither `n` underflows nor `e^{l0}` overflows when the loss
    /// is in the hundreds (noise multipliers below about 0.05).
    fn split_masses(&self, l0: f64, l1: f64) -> (f64, f64) {
        let s = self.sigma;
        let (xa, xb) = match self.direction {
            Direction::Remove => (self.x_of(l0), self.x_of(l1)),
            Direction::Add => (self.x_of(l1), self.x_of(l0)),
        };
        let ln0 = ln_gauss_mass(xa / s, xb / s);
        let ln1 = ln_gauss_mass((xa - 1.0) / s, (xb - 1.0) / s);
        let ln_mix = if self.q >= 1.0 {
            ln1
        } else {
            crate::privacy::special::log_add((1.0 - self.q).ln() + ln0, self.q.ln() + ln1)
        };
        let (ln_p, ln_q) = match self.direction {
            Direction::Remove => (ln_mix, ln0),
            Direction::Add => (ln0, ln_mix),
        };
        (ln_p.exp(), (ln_q + l0).exp())
    }

    /// `P(L > l)`.
    pub fn p_above(&self, l: f64) -> f64 {
        self.masses(l, f64::INFINITY).0
    }

    /// `P(L ≤ l)`.
    pub fn p_below(&self, l: f64) -> f64 {
        self.masses(f64::NEG_INFINITY, l).0
    }

    /// Exact `δ(ε) = P(L > ε) − e^ε Q(L > ε)` of one step (the hockey-stick divergence
    /// `H_{e^ε}(P‖Q)`), for tests and for the direct integration check.
    pub fn delta(&self, eps: f64) -> f64 {
        let (p, q) = self.masses(eps, f64::INFINITY);
        (p - eps.exp() * q).max(0.0)
    }

    /// The smallest loss the grid must reach: `ln(1 − q)` (Remove), or a point with
    /// `P(L ≤ ℓ) ≤ tail` (Add, whose loss is unbounded below).
    pub fn lower_end(&self, tail: f64) -> f64 {
        match self.direction {
            Direction::Remove if self.q < 1.0 => (1.0 - self.q).ln(),
            _ => search(|l| self.p_below(l) <= tail, false),
        }
    }

    /// A loss `ℓ` with `P(L > ℓ) ≤ tail` (the grid's upper end; the rest is charged in
    /// full to `δ`).
    pub fn upper_end(&self, tail: f64) -> f64 {
        match self.direction {
            Direction::Add if self.q < 1.0 => -(1.0 - self.q).ln(),
            _ => search(|l| self.p_above(l) <= tail, true),
        }
    }
}

/// A point where the monotone predicate `ok` holds: searching upwards (`up`) from 1 by
/// doubling, or downwards from −1, then bisecting back towards the switch.
fn search(ok: impl Fn(f64) -> bool, up: bool) -> f64 {
    let sign = if up { 1.0 } else { -1.0 };
    let mut far = sign;
    let mut near = 0.0;
    for _ in 0..2000 {
        if ok(far) {
            break;
        }
        near = far;
        far *= 2.0;
    }
    // ok(far) holds (or far is astronomically large); tighten towards `near`.
    for _ in 0..60 {
        let mid = 0.5 * (near + far);
        if ok(mid) {
            far = mid;
        } else {
            near = mid;
        }
    }
    far
}

/// The largest rise of `E[L]` one connect-the-dots split can cause on a grid of spacing
/// `Δ`: a loss at `ℓ_i + t` (`0 ≤ t ≤ Δ`) goes to `ℓ_{i+1}` with probability
/// `w = (1 − e^{−t})/(1 − e^{−Δ})` (this keeps `E[e^{−L}]`), so `E[L̃] − L = wΔ − t`,
/// which is concave… maximal at `e^{−t*} = (1 − e^{−Δ})/Δ`. About `Δ²/8`.
pub fn spread_bias(delta_grid: f64) -> f64 {
    let d = delta_grid;
    let em = -(-d).exp_m1(); // 1 − e^{−Δ}
    let t = -(em / d).ln();
    let w = -(-t).exp_m1() / em;
    (w * d - t).max(0.0)
}

/// The discretised sub-probability mass function of one step on the grid `ℓ_i = iΔ`,
/// `i` from `first` to `first + mass.len() − 1`: the connect-the-dots split of every cell
/// between the grid's two ends, the mass below the lower end clamped up onto the first
/// point (which only raises `L`: still an upper bound), and the mass above the upper end
/// left out (`beyond`: charged to `δ` in full by the caller).
#[derive(Debug, Clone)]
pub struct StepPmf {
    pub first: i64,
    pub mass: Vec<f64>,
    /// `P(L > upper end)`: dropped from `mass`.
    pub beyond: f64,
    /// `P(L < lower end)`: clamped up onto the first point.
    pub below: f64,
}

impl StepLoss {
    /// [`StepPmf`] on the grid of spacing `dl`, covering `[lower_end, upper_end]` with the
    /// tails beyond each end at most `tail`.
    pub fn discretise(&self, dl: f64, tail: f64) -> StepPmf {
        let lo = self.lower_end(tail);
        let hi = self.upper_end(tail);
        let i0 = (lo / dl).floor() as i64;
        let i1 = ((hi / dl).ceil() as i64).max(i0 + 1);
        let cells = (i1 - i0) as usize;
        let mut mass = vec![0.0; cells + 1];
        let em = -(-dl).exp_m1(); // 1 − e^{−Δ}
        for c in 0..cells {
            let l0 = (i0 + c as i64) as f64 * dl;
            let l1 = l0 + dl;
            let (m, ne) = self.split_masses(l0, l1);
            if m.is_nan() || m <= 0.0 {
                continue;
            }
            // Keep P-mass m and Q-mass n: a at ℓ_i, b at ℓ_{i+1} with
            // a + b = m and a e^{−ℓ_i} + b e^{−ℓ_{i+1}} = n, i.e.
            // b = (m − n e^{ℓ_i}) / (1 − e^{−Δ}), clamped to [0, m] against rounding.
            let b = ((m - ne) / em).clamp(0.0, m);
            mass[c] += m - b;
            mass[c + 1] += b;
        }
        let below = self.p_below(i0 as f64 * dl);
        mass[0] += below;
        let beyond = self.p_above(i1 as f64 * dl);
        StepPmf {
            first: i0,
            mass,
            beyond,
            below,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masses_of_the_whole_line_are_one() {
        for &direction in &[Direction::Remove, Direction::Add] {
            for &(q, sigma) in &[(0.01, 1.0), (0.5, 0.7), (1.0, 2.0)] {
                let s = StepLoss {
                    q,
                    sigma,
                    direction,
                };
                let (p, qq) = s.masses(f64::NEG_INFINITY, f64::INFINITY);
                assert!(
                    (p - 1.0).abs() < 1e-12 && (qq - 1.0).abs() < 1e-12,
                    "{p} {qq}"
                );
            }
        }
    }

    #[test]
    fn spread_bias_is_about_delta_squared_over_eight() {
        for &d in &[1e-2, 1e-3, 1e-4] {
            let b = spread_bias(d);
            assert!((b / (d * d / 8.0) - 1.0).abs() < 0.05, "{d}: {b}");
        }
    }

    #[test]
    fn discretisation_keeps_p_and_q_mass() {
        let s = StepLoss {
            q: 0.05,
            sigma: 0.9,
            direction: Direction::Remove,
        };
        let dl = 1e-3;
        let pmf = s.discretise(dl, 1e-14);
        let p: f64 = pmf.mass.iter().sum::<f64>() + pmf.beyond;
        assert!((p - 1.0).abs() < 1e-10, "{p}");
        // Q-mass kept up to the tails: sum of mass · e^{−ℓ}.
        let q: f64 = pmf
            .mass
            .iter()
            .enumerate()
            .map(|(k, m)| m * (-((pmf.first + k as i64) as f64 * dl)).exp())
            .sum();
        assert!((q - 1.0).abs() < 1e-6, "{q}");
    }
}
