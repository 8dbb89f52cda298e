//! A theorem's hypotheses as checks over a sweep point: `"n >= d*ln(d)^2"`.
//!
//! A claim is judged only at the sweep points where every hypothesis of its theorem
//! holds; a prediction left with too few such points is `out_of_regime` (neither
//! confirmed nor refuted).
//!
//! A hypothesis with explicit constants is **finite** and checked at each point. An
//! **asymptotic** one (`n = ω(f)`, `o(f)`, `O(g)`, "as η → 0") has no finite-size content
//! at a single point: reading it with constant 1 is an arbitrary choice that the papers
//! themselves contradict (privacy for free, L115, calls CIFAR-10 an instance of a window
//! that a constant-1 reading says it misses by 3.8x and 156x). It is therefore never a
//! pointwise gate: it is a [`Trend`] of a ratio along the sweep — a sweep is inside it
//! only if, taken in the order of the prediction's x variable, it moves the ratio the
//! way the asymptotic statement needs (`ω`: the ratio grows; `o`: it shrinks; `O`: it
//! does not grow). A sweep along one variable at fixed others that moves a ratio the
//! wrong way (n at fixed d against `n = o(d^1.5)`) is not a path toward the regime.
use super::expr::{Expr, ExprError};
use super::CmpOp;
use std::collections::BTreeMap;
use std::fmt;

/// A validated hypothesis `lhs <op> rhs`.
#[derive(Clone, Debug)]
pub struct Assumption {
    /// As written in the spec.
    pub text: String,
    pub lhs: Expr,
    pub op: CmpOp,
    pub rhs: Expr,
    /// Where the paper states it (may be empty).
    pub source: String,
    /// `Some` for an asymptotic hypothesis: `lhs` is the ratio, `op`/`rhs` are unused,
    /// and the check is along the sweep ([`Trend::check`]), never at a point.
    pub trend: Option<Trend>,
}

/// How an asymptotic hypothesis's ratio must move along a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `f = ω(g)`: f/g → ∞, so along a path toward the regime the ratio grows.
    Grows,
    /// `f = o(g)`: f/g → 0, so the ratio shrinks.
    Shrinks,
    /// `f = O(g)`: f/g stays bounded, so along the path it does not grow.
    Bounded,
}

impl Direction {
    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "grows" => Some(Direction::Grows),
            "shrinks" => Some(Direction::Shrinks),
            "bounded" => Some(Direction::Bounded),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Grows => "grows",
            Direction::Shrinks => "shrinks",
            Direction::Bounded => "bounded",
        }
    }
}

/// The along-the-sweep check of an asymptotic hypothesis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trend {
    pub direction: Direction,
}

impl Trend {
    /// `None` when the ratios (in sweep order) move as the direction needs, else why not.
    /// Relative slack 1e-9 between neighbours (the ratios of a path are computed, not
    /// measured). `grows`/`shrinks` also need the last ratio to differ from the first:
    /// a sweep that leaves the ratio where it is moves nowhere toward the regime.
    pub fn check(self, ratios: &[f64]) -> Option<String> {
        const SLACK: f64 = 1e-9;
        if ratios.len() < 2 {
            return Some("a single point is no path".into());
        }
        if ratios.iter().any(|r| !r.is_finite()) {
            return Some("the ratio is not finite at some point".into());
        }
        let up = |a: f64, b: f64| b > a + SLACK * a.abs().max(b.abs());
        let down = |a: f64, b: f64| b < a - SLACK * a.abs().max(b.abs());
        let (first, last) = (ratios[0], ratios[ratios.len() - 1]);
        let wrong_step = ratios.windows(2).any(|w| match self.direction {
            Direction::Grows => down(w[0], w[1]),
            Direction::Shrinks | Direction::Bounded => up(w[0], w[1]),
        });
        let moved = match self.direction {
            Direction::Grows => up(first, last),
            Direction::Shrinks => down(first, last),
            Direction::Bounded => true,
        };
        if wrong_step {
            Some("the sweep moves the ratio away from the regime".into())
        } else if !moved {
            Some("the sweep leaves the ratio where it is: no path toward the regime".into())
        } else {
            None
        }
    }
}

/// A hypothesis that fails at one sweep point, with both sides' values.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub assumption: String,
    pub lhs: f64,
    pub rhs: f64,
}

impl Violation {
    /// How far the point is from the hypothesis: `lhs/rhs` when both sides are positive
    /// (the factor by which it fails), else `lhs - rhs`.
    pub fn margin(&self) -> String {
        if self.lhs > 0.0 && self.rhs > 0.0 {
            format!("lhs/rhs = {:.3}", self.lhs / self.rhs)
        } else {
            format!("lhs - rhs = {:.4}", self.lhs - self.rhs)
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` fails ({:.4} vs {:.4}; {})",
            self.assumption,
            self.lhs,
            self.rhs,
            self.margin()
        )
    }
}

impl Assumption {
    /// Parses `"lhs <op> rhs"` with exactly one of `<= < >= >`.
    pub fn parse(text: &str, source: &str) -> Result<Assumption, String> {
        let ops: Vec<(usize, char)> = text
            .char_indices()
            .filter(|(_, c)| *c == '<' || *c == '>')
            .collect();
        let [(at, c)] = ops.as_slice() else {
            return Err(format!(
                "`{text}`: write one comparison `lhs <op> rhs` with exactly one of <=, <, >=, >"
            ));
        };
        let eq = text[at + 1..].starts_with('=');
        let op = match (c, eq) {
            ('<', true) => CmpOp::Le,
            ('<', false) => CmpOp::Lt,
            ('>', true) => CmpOp::Ge,
            _ => CmpOp::Gt,
        };
        let rest = at + 1 + usize::from(eq);
        let side = |s: &str, which: &str| {
            Expr::parse(s.trim()).map_err(|e| format!("`{text}`, {which} side: {e}"))
        };
        Ok(Assumption {
            text: text.trim().to_string(),
            lhs: side(&text[..*at], "left")?,
            op,
            rhs: side(&text[rest..], "right")?,
            source: source.trim().to_string(),
            trend: None,
        })
    }

    /// An asymptotic hypothesis: `ratio` must move in `direction` along the sweep.
    pub fn asymptotic(
        ratio: &str,
        direction: Direction,
        source: &str,
    ) -> Result<Assumption, String> {
        let lhs = Expr::parse(ratio.trim()).map_err(|e| format!("`{ratio}`: {e}"))?;
        let rhs = Expr::parse("0").map_err(|e| e.to_string())?;
        Ok(Assumption {
            text: format!("{} {} along the sweep", ratio.trim(), direction.as_str()),
            lhs,
            op: CmpOp::Ge,
            rhs,
            source: source.trim().to_string(),
            trend: Some(Trend { direction }),
        })
    }

    /// `None` when the hypothesis holds at the point `vars`, else the violation. An
    /// asymptotic hypothesis holds at every point (it is checked along the sweep).
    pub fn check(&self, vars: &BTreeMap<String, f64>) -> Result<Option<Violation>, ExprError> {
        if self.trend.is_some() {
            return Ok(None);
        }
        let lhs = self.lhs.eval_map(vars)?;
        let rhs = self.rhs.eval_map(vars)?;
        Ok(if self.op.holds(lhs, rhs) {
            None
        } else {
            Some(Violation {
                assumption: self.text.clone(),
                lhs,
                rhs,
            })
        })
    }

    /// Both sides' free variables.
    pub fn variables(&self) -> std::collections::BTreeSet<String> {
        let mut v = self.lhs.variables();
        v.extend(self.rhs.variables());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let a = Assumption::parse("n >= d*ln(d)^2", "Eq. 6").unwrap();
        let vars: BTreeMap<String, f64> = [("n".to_string(), 25.0), ("d".to_string(), 25.0)]
            .into_iter()
            .collect();
        let v = a.check(&vars).unwrap().expect("violated");
        assert!(v.to_string().contains("n >= d*ln(d)^2"));
        assert!(v.lhs < v.rhs);
        let vars: BTreeMap<String, f64> = [("n".to_string(), 1e4), ("d".to_string(), 25.0)]
            .into_iter()
            .collect();
        assert!(a.check(&vars).unwrap().is_none());
    }

    #[test]
    fn an_asymptotic_hypothesis_is_a_direction_along_the_sweep() {
        let t = |d| Trend { direction: d };
        use Direction::*;
        assert_eq!(t(Grows).check(&[1.0, 2.0, 2.0, 3.0]), None);
        assert!(t(Grows).check(&[1.0, 2.0, 1.5]).unwrap().contains("away"));
        assert!(t(Grows).check(&[2.0, 2.0]).unwrap().contains("where it is"));
        assert_eq!(t(Shrinks).check(&[3.0, 1.0]), None);
        assert!(t(Shrinks).check(&[1.0, 3.0]).is_some());
        // O(1): a constant ratio (p = n^2 against n = O(sqrt p)) is inside; a growing one is not.
        assert_eq!(t(Bounded).check(&[1.0, 1.0, 1.0]), None);
        assert!(t(Bounded).check(&[1.0, 1.1]).is_some());
        assert!(t(Grows).check(&[1.0]).is_some());
        let a = Assumption::asymptotic("n*ln(d)^3/d^1.5", Shrinks, "Eq. 6").unwrap();
        let vars: BTreeMap<String, f64> = [("n".to_string(), 1e9), ("d".to_string(), 2.0)]
            .into_iter()
            .collect();
        // Never a pointwise gate, however far the point is from a constant-1 reading.
        assert!(a.check(&vars).unwrap().is_none());
        assert_eq!(a.text, "n*ln(d)^3/d^1.5 shrinks along the sweep");
    }

    #[test]
    fn rejects_zero_or_two_comparisons() {
        assert!(Assumption::parse("n + d", "").is_err());
        assert!(Assumption::parse("1 < n < 3", "").is_err());
        assert!(Assumption::parse("n < ", "").is_err());
    }
}
