//! Algorithm 1 of the blog "Private feature learning for single-index models (part 1)",
//! Sec. 2.2, end to end:
//!
//! 1. init `W0_ij ~ N(0, 1/d)`, `b ~ N(0, I_p)`, `a0` (as printed: `(1/sqrt p) 1`);
//! 2. one full-batch gradient step of the squared loss on the first data set,
//!    `W1 = W0 - eta_W G`;
//! 3. every neuron normalised and noised, `w_j <- w_j/||w_j|| + sigma_W N(0, I_d)`;
//! 4. T steps of DP-GD on the second layer with the ridge loss
//!    `(1/n) sum (f(x_i) - y_i)^2 + lambda ||a||^2` on the second data set
//!    ([`crate::train::dpgd`], with the blog's clip rule and noise constant as variants).
//!
//! The text is ambiguous in places; each reading is a named variant (DESIGN 2.2):
//! * [`A0Init`]: `ones_over_sqrt_p` (as printed), `signs_over_sqrt_p`, `signs_over_p`;
//! * [`GradReduction`]: the printed update sums per-sample gradients
//!   (`W1 = W0 - eta_W sum_i g_W(x_i)`), while the loss L is a mean; `mean` uses
//!   `G = grad_W (1/n) sum_i (f(x_i) - y_i)^2`, `sum` uses n times that;
//! * clip rule and kappa of the second layer live in its [`DpGdConfig`].
//!
//! The formulas an implementation could get wrong come from the caller's [`Recipe`]: the
//! normalisation of step 3 ([`FirstLayerRecipe`]) and the second layer's DP-GD
//! ([`dpgd::DpGdRecipe`]).
use super::dpgd::{self, DpGdConfig, DpGdRun, Problem, RecordPlan};
use super::recipe::FirstLayerRecipe;
use super::{Recipe, TrainError};
use crate::data::{gaussian_matrix, gaussian_vector, Dataset};
use crate::models::TwoLayer;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

/// Initialisation of the second layer a0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum A0Init {
    /// `a0 = (1/sqrt p)(1, ..., 1)` as printed in Algorithm 1.
    OnesOverSqrtP,
    /// `a0_j = s_j / sqrt p`, s_j uniform random signs.
    SignsOverSqrtP,
    /// `a0_j = s_j / p`: network output at initialisation O(1/sqrt p), closer to the
    /// model of Ba et al. (2022) where it is negligible.
    SignsOverP,
}

impl A0Init {
    /// Draws a0 (random signs only for the `signs_*` variants).
    pub fn sample(self, p: usize, rng: &mut impl Rng) -> Array1<f64> {
        let pf = p as f64;
        match self {
            A0Init::OnesOverSqrtP => Array1::from_elem(p, 1.0 / pf.sqrt()),
            A0Init::SignsOverSqrtP | A0Init::SignsOverP => {
                let scale = if self == A0Init::SignsOverSqrtP {
                    1.0 / pf.sqrt()
                } else {
                    1.0 / pf
                };
                (0..p)
                    .map(|_| if rng.random::<bool>() { scale } else { -scale })
                    .collect()
            }
        }
    }
}

/// How the first-layer per-sample gradients are aggregated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GradReduction {
    /// Gradient of the mean loss (the loss L of Sec. 2.2).
    Mean,
    /// Sum of per-sample gradients, as printed in the update line of Algorithm 1.
    Sum,
}

/// Hyper-parameters of Algorithm 1 (values per Assumption 4 are computed by the spec).
#[derive(Clone, Debug)]
pub struct FeatureLearningConfig {
    pub eta_w: f64,
    pub sigma_w: f64,
    pub a0_init: A0Init,
    pub grad_reduction: GradReduction,
    /// Per-neuron normalisation of step 3 (true in Algorithm 1).
    pub normalise: bool,
    /// Second-layer DP-GD: eta_a, T, C_a, sigma_a, kappa, ridge lambda, clip rule.
    pub second: DpGdConfig,
}

/// Output of Algorithm 1.
#[derive(Clone, Debug)]
pub struct FeatureLearningRun {
    /// First-layer gradient G (d x p) at (W0, a0), with the configured reduction.
    pub gradient: Array2<f64>,
    /// Trained network (W1 after normalisation and noise, b, a_T).
    pub net: TwoLayer,
    /// Second-layer DP-GD trajectory.
    pub second: DpGdRun,
    /// Test risk `E_x[(f_NN(x) - f_*(x))^2]` on the test set (blog Theorem 1).
    pub test_risk: f64,
}

/// Gradient with respect to W of `(1/n) sum_i (a^T tanh(W^T x_i + b) - y_i)^2`
/// (or of the sum, for [`GradReduction::Sum`]):
/// `G = (2/n) X^T M`, `M_ij = r_i a_j (1 - tanh^2(z_ij))`, `Z = X W + 1 b^T`.
pub fn first_layer_gradient(
    net: &TwoLayer,
    x: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    reduction: GradReduction,
) -> Array2<f64> {
    let n = y.len() as f64;
    let h = net.features(x);
    let r = h.dot(&net.a) - y;
    let mut m = h;
    Zip::indexed(&mut m).for_each(|(i, j), hij| {
        *hij = r[i] * net.a[j] * (1.0 - *hij * *hij);
    });
    let mut g = x.t().dot(&m);
    let scale = match reduction {
        GradReduction::Mean => 2.0 / n,
        GradReduction::Sum => 2.0,
    };
    g *= scale;
    g
}

/// Activation of the first-layer gradient (the rank-one control needs one with
/// `E sigma'(z + b) = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `tanh`, as printed (Algorithm 1, l. 124-128).
    Tanh,
    /// `z^2 - 1` (He_2): `sigma'(z) = 2z`, so `E_z sigma'(s z + b) = 2b`, zero at `b = 0`:
    /// the Ba-type rank-one term vanishes (a negative control, not the post's network).
    SquareMinusOne,
}

impl Activation {
    fn value(self, z: f64) -> f64 {
        match self {
            Activation::Tanh => crate::linalg::tanh_det(z),
            Activation::SquareMinusOne => z * z - 1.0,
        }
    }

    fn derivative(self, z: f64) -> f64 {
        match self {
            Activation::Tanh => {
                let t = crate::linalg::tanh_det(z);
                1.0 - t * t
            }
            Activation::SquareMinusOne => 2.0 * z,
        }
    }
}

/// The first-layer gradient `G` with the residuals `r = f_0(X) - y` it is built from,
/// for an activation `sigma`: `G = s X^T M`, `M_ij = r_i a_j sigma'(z_ij)`, `s = 2/n`
/// (mean) or 2 (sum). For tanh, `G` equals [`first_layer_gradient`] up to rounding of
/// the activation (this one evaluates [`crate::linalg::tanh_det`] pointwise).
pub fn first_step_with_residual(
    net: &TwoLayer,
    x: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    reduction: GradReduction,
    activation: Activation,
) -> (Array2<f64>, Array1<f64>) {
    let z = net.preactivations(x);
    let r = z.mapv(|v| activation.value(v)).dot(&net.a) - y;
    let mut m = z;
    Zip::indexed(&mut m).for_each(|(i, j), zij| {
        *zij = r[i] * net.a[j] * activation.derivative(*zij);
    });
    let mut g = x.t().dot(&m);
    g *= reduction_scale(reduction, y.len());
    (g, r)
}

fn reduction_scale(reduction: GradReduction, n: usize) -> f64 {
    match reduction {
        GradReduction::Mean => 2.0 / n as f64,
        GradReduction::Sum => 2.0,
    }
}

/// The explicit rank-one approximant of the first gradient step in the form of Ba et al.
/// (2022, Prop. 2), which the post's step 1 invokes (Sec. 2.4, l. 238): writing
/// `sigma'(w_j.x + b_j) = c_j + (remainder with zero mean over x)`, with
/// `c_j = E_z sigma'(||w_j|| z + b_j)` (z ~ N(0, 1), x ~ N(0, I_d)), the gradient's
/// leading term is `A = s (X^T r)(a o c)^T`: its left vector is the residual-weighted
/// input mean `X^T r`. `c_j` by a 64-point Gauss-Hermite rule (independent of the
/// sample: the pointwise `sigma'` of `G` is never used).
pub fn rank_one_approximant(
    net: &TwoLayer,
    x: &ArrayView2<f64>,
    r: &ArrayView1<f64>,
    reduction: GradReduction,
    activation: Activation,
) -> Result<Array2<f64>, crate::linalg::LinalgError> {
    let rule = crate::data::hermite::GaussHermite::new(64)?;
    let col = x.t().dot(r) * reduction_scale(reduction, r.len());
    let row: Array1<f64> = net
        .w
        .axis_iter(Axis(1))
        .zip(net.b.iter().zip(net.a.iter()))
        .map(|(w, (&b, &a))| {
            let s = w.dot(&w).sqrt();
            a * rule.expect(|z| activation.derivative(s * z + b))
        })
        .collect();
    let col2 = col.insert_axis(Axis(1));
    let row2 = row.insert_axis(Axis(0));
    Ok(col2.dot(&row2))
}

/// Bias of the first layer at initialisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BiasInit {
    /// `b ~ N(0, I_p)` as printed.
    Gaussian,
    /// `b = 0` (drawn, then zeroed, so the streams stay aligned): the rank-one control.
    Zero,
}

/// Ridge on fixed features: `a = argmin (1/n)||Phi a - y||^2 + lambda ||a||^2`
/// (Algorithm 1's second-layer objective, l. 146, without noise or clipping: the
/// "non-private ridge" of Sec. 2.4, step 3, l. 240).
#[derive(Clone, Debug)]
pub struct RidgeFit {
    pub a: Array1<f64>,
    /// `(1/n)||Phi a - y||^2 + lambda ||a||^2` at the minimiser: no second layer of
    /// penalised training loss below it exists (the certificate of step 2, l. 239).
    pub objective: f64,
    /// `||a||`.
    pub norm: f64,
}

/// [`RidgeFit`] through [`crate::linalg::ridge_solve`].
pub fn ridge_fit(
    phi: &ArrayView2<f64>,
    y: &ArrayView1<f64>,
    lambda: f64,
) -> Result<RidgeFit, crate::linalg::LinalgError> {
    let a = crate::linalg::ridge_solve(phi, y, lambda)?;
    let res = phi.dot(&a) - y;
    let norm2 = a.dot(&a);
    let objective = res.dot(&res) / y.len() as f64 + lambda * norm2;
    Ok(RidgeFit {
        a,
        objective,
        norm: norm2.sqrt(),
    })
}

/// `2 eta (lambda + lambda_max(Phi^T Phi / n))`: full-batch gradient descent on the ridge
/// objective (unclipped, noiseless) contracts iff this is below 2 (step sizes of
/// Assumption 4, l. 191; the Hessian of the objective is `2 (Phi^T Phi/n + lambda I)`).
pub fn ridge_gd_stability(
    phi: &ArrayView2<f64>,
    eta: f64,
    lambda: f64,
) -> Result<f64, crate::linalg::LinalgError> {
    let n = phi.nrows() as f64;
    let h = phi.t().dot(phi) / n;
    let (w, _) = crate::linalg::sym_eig(&h.view())?;
    let lmax = w.iter().copied().fold(0.0f64, f64::max);
    Ok(2.0 * eta * (lambda + lmax))
}

/// Initialisation of Algorithm 1: `W0_ij ~ N(0, 1/d)` (d x p, row by row), then
/// `b ~ N(0, I_p)`, then a0 (random signs only for the `signs_*` variants).
pub fn init_network(d: usize, p: usize, a0_init: A0Init, rng: &mut impl Rng) -> TwoLayer {
    init_network_with(d, p, a0_init, BiasInit::Gaussian, rng)
}

/// [`init_network`] with the bias of `bias` (`Zero` draws b and zeroes it, so the draws
/// of W0 and a0 are those of the printed initialisation).
pub fn init_network_with(
    d: usize,
    p: usize,
    a0_init: A0Init,
    bias: BiasInit,
    rng: &mut impl Rng,
) -> TwoLayer {
    let w = gaussian_matrix(d, p, rng) / (d as f64).sqrt();
    let mut b = gaussian_vector(p, rng);
    if bias == BiasInit::Zero {
        b.fill(0.0);
    }
    let a = a0_init.sample(p, rng);
    TwoLayer { w, b, a }
}

/// The three disjoint data sets of Algorithm 1: `(X^W, y^W)` for the first layer,
/// `(X^a, y^a)` for the second, and a test set with noiseless labels `f_*(x)`.
#[derive(Clone, Debug)]
pub struct FeatureLearningData {
    pub first: Dataset,
    pub second: Dataset,
    pub test: Dataset,
}

/// Steps 2-3 of Algorithm 1 before the noise: `W1 = W0 - eta_W G`, then, if `normalise`
/// (as the recipe applies it), every neuron `w_j <- w_j/||w_j||`. The audit of the first
/// layer ([`crate::privacy::audit::canary`]) runs this same function.
pub fn first_layer_step(
    w: &mut Array2<f64>,
    gradient: &Array2<f64>,
    eta_w: f64,
    normalise: bool,
    recipe: &FirstLayerRecipe,
) {
    w.scaled_add(-eta_w, gradient);
    if (recipe.normalise)(normalise) {
        for mut col in w.axis_iter_mut(Axis(1)) {
            let norm = col.dot(&col).sqrt();
            if norm > 0.0 {
                col /= norm;
            }
        }
    }
}

/// Runs Algorithm 1 with the formulas of `recipe` (its first layer and DP-GD parts).
/// Random draws, in order: `init_rng` gives W0 (d x p, row by row), b (p), then a0's
/// signs if any; `noise_w_rng` gives the first-layer noise (d x p); `noise_a_rng` the
/// second-layer DP-GD noise.
pub fn run(
    data: &FeatureLearningData,
    p: usize,
    cfg: &FeatureLearningConfig,
    init_rng: &mut impl Rng,
    noise_w_rng: &mut impl Rng,
    noise_a_rng: &mut impl Rng,
    recipe: &Recipe,
) -> Result<FeatureLearningRun, TrainError> {
    let (net, gradient) = first_layer(&data.first, p, cfg, init_rng, noise_w_rng, recipe)?;
    second_layer(data, net, gradient, cfg, noise_a_rng, recipe)
}

/// Steps 1-3 of Algorithm 1 (initialisation, the first-layer step, normalisation and
/// noise): the network with `W_1` and `a_0`, and the gradient `G`. Same draws as [`run`].
pub fn first_layer(
    first: &Dataset,
    p: usize,
    cfg: &FeatureLearningConfig,
    init_rng: &mut impl Rng,
    noise_w_rng: &mut impl Rng,
    recipe: &Recipe,
) -> Result<(TwoLayer, Array2<f64>), TrainError> {
    crate::linalg::pin_blas_threads();
    let d = first.x.ncols();
    let mut net = init_network(d, p, cfg.a0_init, init_rng);
    let gradient = first_layer_gradient(&net, &first.x.view(), &first.y.view(), cfg.grad_reduction);
    first_layer_step(
        &mut net.w,
        &gradient,
        cfg.eta_w,
        cfg.normalise,
        &recipe.first_layer,
    );
    if cfg.sigma_w > 0.0 {
        let noise = gaussian_matrix(d, p, noise_w_rng);
        net.w.scaled_add(cfg.sigma_w, &noise);
    }
    if !net.w.iter().all(|v| v.is_finite()) {
        return Err(TrainError::Diverged {
            step: 0,
            what: "first-layer weights".into(),
        });
    }
    Ok((net, gradient))
}

/// Step 4 of Algorithm 1 (DP-GD on the second layer) from the output of [`first_layer`].
pub fn second_layer(
    data: &FeatureLearningData,
    mut net: TwoLayer,
    gradient: Array2<f64>,
    cfg: &FeatureLearningConfig,
    noise_a_rng: &mut impl Rng,
    recipe: &Recipe,
) -> Result<FeatureLearningRun, TrainError> {
    crate::linalg::pin_blas_threads();
    let (second, test) = (&data.second, &data.test);
    let phi = net.features(&second.x.view());
    let phi_test = net.features(&test.x.view());
    let problem = Problem {
        phi: phi.view(),
        y: second.y.view(),
        test: Some((phi_test.view(), test.y.view())),
    };
    let plan = RecordPlan::ends(cfg.second.steps);
    let run = dpgd::run(
        &problem,
        net.a.clone(),
        &cfg.second,
        &plan,
        noise_a_rng,
        &recipe.dpgd,
    )?;
    net.a = run.theta.clone();
    let test_risk = problem
        .test_mse(&net.a.view())
        .expect("test set is present");
    Ok(FeatureLearningRun {
        gradient,
        net,
        second: run,
        test_risk,
    })
}
