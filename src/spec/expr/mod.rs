//! Arithmetic expressions over named variables, parsed once and evaluated per sweep point.
//!
//! Hyper-parameters of claim specs are written as expressions of the sweep variables,
//! e.g. `"sqrt(p) * ln(n)^2"`, `"d^1.25"` or `"ceil(d * ln(n)^2 / (eta * p))"`. An
//! [`Expr`] is parsed when the spec is validated (so a typo is reported with its byte
//! position before anything runs) and evaluated later with the values of one sweep point.
//!
//! # Grammar
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/') unary)*
//! unary   := ('-' | '+') unary | power
//! power   := primary ('^' unary)?          -- right-associative
//! primary := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
//! number  := digits ['.' digits] [('e'|'E') ['+'|'-'] digits]  |  '.' digits [...]
//! name    := [A-Za-z_][A-Za-z0-9_]*
//! ```
//!
//! `^` binds tighter than unary minus, as in mathematics: `-2^2 = -4`, and it is
//! right-associative: `2^3^2 = 2^9 = 512`. The exponent may carry its own sign:
//! `2^-1 = 0.5`.
//!
//! Functions (the table in `functions.rs`): `sqrt ln log2 log10 exp ceil floor abs`,
//! `min max` (two or more arguments), `erf erfc Phi Phi_inv`, and the accountants
//! `gdp_epsilon gdp_delta zcdp_epsilon rdp_epsilon pld_epsilon_upper calibrate_sigma
//! calibrate_sigma_pld`. `log` is rejected on purpose: its base is ambiguous across
//! papers; write `ln`, `log2` or `log10`.
//! The only named constant is `pi`. Implicit multiplication (`2x`) is not supported.
//! Input is limited to 2000 tokens and 200 levels of nesting, so that no input can
//! overflow the stack.
//!
//! Evaluation follows IEEE arithmetic: a domain problem such as `sqrt(-1)` or `ln(0)`
//! yields NaN or an infinity, which is *not* an error here — callers check that the
//! value they need is finite. `min`/`max` propagate NaN (unlike [`f64::min`]), so a
//! domain problem in one argument is never hidden.
//!
//! Where things are: this file holds the syntax tree, its evaluation and the serde
//! conversions; `parse.rs` the tokenizer and the recursive-descent parser.
#![deny(clippy::float_cmp)]

mod functions;
pub mod memo;
mod parse;

pub use functions::reference_rows as function_reference;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

/// Errors of parsing or evaluating an expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// The text is not a well-formed expression.
    #[error("syntax error in expression '{expr}' at byte {position}: expected {expected}, found {found}")]
    Syntax {
        /// The whole source text.
        expr: String,
        /// Byte offset of the offending token.
        position: usize,
        /// What the parser expected at that point.
        expected: String,
        /// What it found instead.
        found: String,
    },
    /// A call of a function that does not exist.
    #[error("unknown function '{name}' at byte {position} in '{expr}'; known: {known}{hint}", known = functions::known())]
    UnknownFunction {
        /// The whole source text.
        expr: String,
        /// The name that was called.
        name: String,
        /// Byte offset of the name.
        position: usize,
        /// Extra advice (e.g. for `log`), empty or starting with a separator.
        hint: String,
    },
    /// A known function called with the wrong number of arguments.
    #[error("function '{name}' at byte {position} in '{expr}' takes {expected}, got {got}")]
    Arity {
        /// The whole source text.
        expr: String,
        /// The function name.
        name: String,
        /// Byte offset of the name.
        position: usize,
        /// The accepted number of arguments, in words.
        expected: String,
        /// The number of arguments given.
        got: usize,
    },
    /// Evaluation met a variable that the caller does not define.
    #[error("unknown symbol '{name}' in expression '{expr}'")]
    UnknownSymbol {
        /// The whole source text.
        expr: String,
        /// The undefined variable.
        name: String,
    },
}

/// A built-in function: its index in [`functions::FUNCTIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Func(usize);

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        functions::FUNCTIONS
            .iter()
            .position(|f| f.name == name)
            .map(Func)
    }

    fn info(self) -> &'static functions::FuncInfo {
        &functions::FUNCTIONS[self.0]
    }
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// The syntax tree.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Num(f64),
    Var(String),
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

/// A parsed expression: the syntax tree plus the source text it came from.
///
/// Deserializes from a string (parsed) or from a number (a constant expression), so spec
/// structs can hold `Expr` fields directly; serializes and displays as its source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    source: String,
    root: Node,
}

impl Expr {
    /// Parses `src`; see the [module documentation](self) for the grammar.
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        Ok(Expr {
            source: src.to_string(),
            root: parse::parse(src)?,
        })
    }

    /// A constant expression whose source text is the shortest round-trip form of `value`.
    pub fn constant(value: f64) -> Expr {
        Expr {
            source: format!("{value}"),
            root: Node::Num(value),
        }
    }

    /// The source text, as written in the spec.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The free variables: every name used as a value, excluding function names and `pi`.
    pub fn variables(&self) -> BTreeSet<String> {
        fn walk(node: &Node, out: &mut BTreeSet<String>) {
            match node {
                Node::Num(_) => {}
                Node::Var(name) => {
                    out.insert(name.clone());
                }
                Node::Neg(inner) => walk(inner, out),
                Node::Bin(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = BTreeSet::new();
        walk(&self.root, &mut out);
        out
    }

    /// Evaluates with the variable values given by `vars`.
    ///
    /// A non-finite result is not an error (callers check); the only error is a variable
    /// for which `vars` returns `None`.
    pub fn eval(&self, vars: &dyn Fn(&str) -> Option<f64>) -> Result<f64, ExprError> {
        self.eval_node(&self.root, vars)
    }

    /// [`Expr::eval`] with the variables taken from a map.
    pub fn eval_map(&self, vars: &BTreeMap<String, f64>) -> Result<f64, ExprError> {
        self.eval(&|name: &str| vars.get(name).copied())
    }

    fn eval_node(&self, node: &Node, vars: &dyn Fn(&str) -> Option<f64>) -> Result<f64, ExprError> {
        Ok(match node {
            Node::Num(v) => *v,
            Node::Var(name) => vars(name).ok_or_else(|| ExprError::UnknownSymbol {
                expr: self.source.clone(),
                name: name.clone(),
            })?,
            Node::Neg(inner) => -self.eval_node(inner, vars)?,
            Node::Bin(op, a, b) => {
                let a = self.eval_node(a, vars)?;
                let b = self.eval_node(b, vars)?;
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => a / b,
                    BinOp::Pow => a.powf(b),
                }
            }
            Node::Call(func, args) => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.eval_node(arg, vars)?);
                }
                func.info().apply(&values)
            }
        })
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for Expr {
    type Err = ExprError;
    fn from_str(s: &str) -> Result<Expr, ExprError> {
        Expr::parse(s)
    }
}

impl Serialize for Expr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for Expr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Expr, D::Error> {
        deserializer.deserialize_any(ExprVisitor)
    }
}

struct ExprVisitor;

impl ExprVisitor {
    fn number<E: de::Error>(value: f64) -> Result<Expr, E> {
        if value.is_finite() {
            Ok(Expr::constant(value))
        } else {
            Err(E::custom(format!(
                "expression constant must be finite, got {value}"
            )))
        }
    }
}

impl Visitor<'_> for ExprVisitor {
    type Value = Expr;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an arithmetic expression (string) or a number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Expr, E> {
        Expr::parse(v).map_err(E::custom)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Expr, E> {
        Self::number(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Expr, E> {
        // Integers of a spec are small; the conversion is exact below 2^53.
        Ok(Expr {
            source: v.to_string(),
            root: Node::Num(v as f64),
        })
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Expr, E> {
        Ok(Expr {
            source: v.to_string(),
            root: Node::Num(v as f64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Absolute tolerance of the exact-arithmetic checks below.
    const TOL: f64 = 1e-12;

    fn eval(src: &str, vars: &[(&str, f64)]) -> f64 {
        let map: BTreeMap<String, f64> = vars.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Expr::parse(src)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
            .eval_map(&map)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= TOL * (1.0 + b.abs())
    }

    #[test]
    fn precedence_and_associativity() {
        let cases: [(&str, f64); 16] = [
            ("1 + 2 * 3", 7.0),
            ("(1 + 2) * 3", 9.0),
            ("-2^2", -4.0),
            ("(-2)^2", 4.0),
            ("2^3^2", 512.0),
            ("2^-1", 0.5),
            ("8 / 4 / 2", 1.0),
            ("10 - 4 - 3", 3.0),
            ("2 * 3 ^ 2", 18.0),
            ("--3", 3.0),
            ("+3 - -3", 6.0),
            ("-x^2", -9.0),
            ("1e-5 * 1e5", 1.0),
            (".5 + 2.5", 3.0),
            ("1.5E+2", 150.0),
            ("4^0.5^2", 4f64.powf(0.25)),
        ];
        for (src, want) in cases {
            let got = eval(src, &[("x", 3.0)]);
            assert!(close(got, want), "{src}: got {got}, want {want}");
        }
    }

    #[test]
    fn all_functions() {
        let cases: [(&str, f64); 12] = [
            ("sqrt(16)", 4.0),
            ("ln(exp(2))", 2.0),
            ("exp(0)", 1.0),
            ("ceil(2.1)", 3.0),
            ("floor(2.9)", 2.0),
            ("abs(-3)", 3.0),
            ("min(1, 2*x)", 1.0),
            ("max(1, 2*x)", 6.0),
            ("min(5, 4, 3)", 3.0),
            ("max(1, 2, 7, 3)", 7.0),
            ("pi", std::f64::consts::PI),
            (
                "ceil(d * ln(n)^2 / (eta * p))",
                (100.0 * 1000f64.ln().powi(2) / 5.0).ceil(),
            ),
        ];
        for (src, want) in cases {
            let got = eval(
                src,
                &[
                    ("x", 3.0),
                    ("d", 100.0),
                    ("n", 1000.0),
                    ("eta", 0.5),
                    ("p", 10.0),
                ],
            );
            assert!(close(got, want), "{src}: got {got}, want {want}");
        }
        let got = eval(
            "sqrt(p) * ln(n)^2",
            &[("p", 4.0), ("n", std::f64::consts::E)],
        );
        assert!(close(got, 2.0));
        let got = eval("d^1.25", &[("d", 16.0)]);
        assert!(close(got, 32.0));
    }

    /// Issue 33 item 3: the normal distribution, explicit logarithms and the
    /// accountants as functions.
    #[test]
    fn dp_functions() {
        let cases: [(&str, f64); 8] = [
            ("Phi(0)", 0.5),
            ("Phi(1.959963984540054)", 0.975),
            ("Phi_inv(0.975)", 1.959963984540054),
            ("erf(1)", 0.842_700_792_949_714_9),
            ("erfc(3)", 2.209_049_699_858_544e-5),
            ("log2(8)", 3.0),
            ("log10(1000)", 3.0),
            ("Phi_inv(Phi(-2.5))", -2.5),
        ];
        for (src, want) in cases {
            let got = eval(src, &[]);
            assert!(
                (got - want).abs() <= 1e-10 * want.abs(),
                "{src}: got {got}, want {want}"
            );
        }
        // GDP: the library's values, and delta(epsilon(delta)) = delta.
        let eps = eval("gdp_epsilon(1, 1e-5)", &[]);
        assert_eq!(
            eps.to_bits(),
            crate::privacy::gdp_epsilon(1.0, 1e-5).unwrap().to_bits()
        );
        let back = eval("gdp_delta(1, gdp_epsilon(1, 1e-5))", &[]);
        assert!((back - 1e-5).abs() < 1e-9, "{back}");
        // Full batch (q = 1): T Gaussian steps at multiplier z are exactly
        // sqrt(T)/z-GDP, so the PLD upper bound lies just above the exact GDP epsilon
        // and RDP above both — three computations by different code.
        let vars = [("z", 2.0), ("t", 50.0), ("delta", 1e-5)];
        let gdp = eval("gdp_epsilon(sqrt(t) / z, delta)", &vars);
        let pld = eval("pld_epsilon_upper(1, z, t, delta)", &vars);
        let rdp = eval("rdp_epsilon(1, z, t, delta)", &vars);
        assert!(gdp <= pld && pld <= gdp * 1.01, "gdp {gdp}, pld {pld}");
        assert!(pld < rdp, "pld {pld}, rdp {rdp}");
        // Calibration: the calibrated multiplier meets the target, and barely.
        let vars = [("eps", 2.0), ("delta", 1e-5), ("q", 0.01), ("t", 1000.0)];
        let z = eval("calibrate_sigma(eps, delta, q, t)", &vars);
        let at = eval(&format!("rdp_epsilon(q, {z}, t, delta)"), &vars);
        assert!(at <= 2.0 && at > 1.99, "z {z}: epsilon {at}");
        let z_pld = eval("calibrate_sigma_pld(eps, delta, q, t)", &vars);
        assert!(z_pld < z, "PLD is tighter: {z_pld} < {z}");
        // Outside the domain: NaN, as sqrt(-1).
        for src in [
            "rdp_epsilon(2, 1, 10, 1e-5)",
            "rdp_epsilon(0.1, 1, 10.5, 1e-5)",
            "rdp_epsilon(0.1, -1, 10, 1e-5)",
            "pld_epsilon_upper(0.1, 1, 0, 1e-5)",
            "calibrate_sigma(-1, 1e-5, 0.1, 10)",
            "gdp_epsilon(1, 2)",
            "gdp_delta(-1, 1)",
            "Phi_inv(1.5)",
        ] {
            assert!(eval(src, &[]).is_nan(), "{src}");
        }
        let msg = Expr::parse("rdp_epsilon(0.1, 1)").unwrap_err().to_string();
        assert!(msg.contains("takes 4 arguments, got 2"), "{msg}");
        assert!(function_reference().contains("| `pld_epsilon_upper(q, z, steps, delta)` |"));
    }

    #[test]
    fn domain_problems_are_nan_not_errors() {
        assert!(eval("sqrt(-1)", &[]).is_nan());
        assert!(eval("min(sqrt(-1), 1)", &[]).is_nan());
        assert!(eval("max(1, sqrt(-1))", &[]).is_nan());
        assert!(eval("ln(0)", &[]).is_infinite());
        assert!(eval("1/0", &[]).is_infinite());
    }

    #[test]
    fn variables_exclude_functions_and_pi() {
        let e = Expr::parse("sqrt(p) * ln(n)^2 + pi * max(d, eta_2) - p").unwrap();
        let vars: Vec<String> = e.variables().into_iter().collect();
        assert_eq!(vars, ["d", "eta_2", "n", "p"]);
        assert!(Expr::parse("2 * pi").unwrap().variables().is_empty());
    }

    fn syntax_position(src: &str) -> usize {
        match Expr::parse(src) {
            Err(ExprError::Syntax { position, .. }) => position,
            other => panic!("{src}: expected a syntax error, got {other:?}"),
        }
    }

    #[test]
    fn syntax_errors_carry_position() {
        assert_eq!(syntax_position(""), 0);
        assert_eq!(syntax_position("   "), 3);
        assert_eq!(syntax_position("1 +"), 3);
        assert_eq!(syntax_position("(1 + 2"), 6);
        assert_eq!(syntax_position("1 + 2)"), 5);
        assert_eq!(syntax_position("2 x"), 2);
        assert_eq!(syntax_position("2e"), 1);
        assert_eq!(syntax_position("3 $ 4"), 2);
        assert_eq!(syntax_position("sqrt + 1"), 5);
        assert_eq!(syntax_position("max(1, 2"), 8);
        assert_eq!(syntax_position("."), 0);
        assert_eq!(syntax_position("()"), 1);
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(matches!(Expr::parse(&deep), Err(ExprError::Syntax { .. })));
        assert!(matches!(
            Expr::parse(&"-".repeat(10_000)),
            Err(ExprError::Syntax { .. })
        ));
        let long = vec!["1"; 5000].join("+");
        assert!(matches!(Expr::parse(&long), Err(ExprError::Syntax { .. })));
        let nested = format!("{}1{}", "(".repeat(50), ")".repeat(50));
        assert!(Expr::parse(&nested).is_ok());
        let msg = Expr::parse("2 x").unwrap_err().to_string();
        assert!(msg.contains("implicit multiplication"), "{msg}");
        let msg = Expr::parse("(1 + 2").unwrap_err().to_string();
        assert!(
            msg.contains("byte 6") && msg.contains("expected ')'"),
            "{msg}"
        );
    }

    #[test]
    fn unknown_function_lists_known_ones() {
        let err = Expr::parse("1 + lg(x)").unwrap_err();
        assert!(
            matches!(&err, ExprError::UnknownFunction { name, position: 4, .. } if name == "lg")
        );
        let msg = err.to_string();
        assert!(
            msg.contains("unknown function 'lg'") && msg.contains("known: sqrt, ln,"),
            "{msg}"
        );
        let msg = Expr::parse("log(n)").unwrap_err().to_string();
        assert!(msg.contains("use ln"), "{msg}");
    }

    #[test]
    fn wrong_arity() {
        for src in ["sqrt(1, 2)", "min(1)", "max(3)", "ln(1,2,3)"] {
            assert!(
                matches!(Expr::parse(src), Err(ExprError::Arity { .. })),
                "{src}"
            );
        }
        let msg = Expr::parse("min(1)").unwrap_err().to_string();
        assert!(msg.contains("takes 2 or more arguments, got 1"), "{msg}");
    }

    #[test]
    fn unknown_symbol_at_eval() {
        let e = Expr::parse("p + q").unwrap();
        let err = e
            .eval(&|name: &str| (name == "p").then_some(1.0))
            .unwrap_err();
        assert_eq!(err.to_string(), "unknown symbol 'q' in expression 'p + q'");
    }

    #[test]
    fn display_source_and_serde() {
        let e = Expr::parse(" d^1.25 ").unwrap();
        assert_eq!(e.to_string(), " d^1.25 ");
        assert_eq!(e.source(), " d^1.25 ");
        let parsed: Vec<Expr> = serde_yaml::from_str("[\"sqrt(p)\", 3, 2.5, -1]").unwrap();
        let sources: Vec<&str> = parsed.iter().map(Expr::source).collect();
        assert_eq!(sources, ["sqrt(p)", "3", "2.5", "-1"]);
        assert!(close(parsed[2].eval(&|_| None).unwrap(), 2.5));
        let parsed: Expr = serde_json::from_str("1e-5").unwrap();
        assert!(close(parsed.eval(&|_| None).unwrap(), 1e-5));
        let bad: Result<Expr, _> = serde_yaml::from_str("\"log(n)\"");
        assert!(bad.unwrap_err().to_string().contains("use ln"));
        let bad: Result<Expr, _> = serde_yaml::from_str(".inf");
        assert!(bad.is_err());
        assert_eq!(serde_json::to_string(&e).unwrap(), "\" d^1.25 \"");
    }
}
