//! A theorem's hypotheses as checks over a sweep point: `"n >= d*ln(d)^2"`.
//!
//! A claim is judged only at the sweep points where every hypothesis of its theorem
//! holds; a prediction left with too few such points is `out_of_regime` (neither
//! confirmed nor refuted). Asymptotic hypotheses are written as their finite-size
//! necessary form: `n = ω(f)` as `n >= f`, `n = o(f)` as `n <= f`, `n = O(g)` as
//! `n <= g`, constants 1 (the most generous reading; a point that fails it is outside
//! the theorem under any constant the paper could mean).
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
        })
    }

    /// `None` when the hypothesis holds at the point `vars`, else the violation.
    pub fn check(&self, vars: &BTreeMap<String, f64>) -> Result<Option<Violation>, ExprError> {
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
    fn rejects_zero_or_two_comparisons() {
        assert!(Assumption::parse("n + d", "").is_err());
        assert!(Assumption::parse("1 < n < 3", "").is_err());
        assert!(Assumption::parse("n < ", "").is_err());
    }
}
