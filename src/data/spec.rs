//! What a claim says of its data, validated (a spec's `data:`): the input distribution,
//! the target function and the label noise. A plain value: the spec loader builds it,
//! the systems read it.
use super::InputDist;

/// The target function of a data spec.
#[derive(Clone, Debug, PartialEq)]
pub enum TargetSpec {
    /// `y = sign(u^T x)`.
    Sign,
    /// `y = sigma_*(<x, mu>)` with these normalised Hermite coefficients.
    SingleIndex(Vec<f64>),
    /// No target (systems that do not simulate data).
    None,
}

/// Validated data settings.
#[derive(Clone, Debug, PartialEq)]
pub struct DataSpec {
    pub input: InputDist,
    pub target: TargetSpec,
    pub label_noise: f64,
}
