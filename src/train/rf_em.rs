//! Euler-Maruyama convergence of Algorithm 1 to the SDE of Eq. 12 (privacy-for-free,
//! Bombari & Mondelli 2025, Sec. 4.1, Eq. 11-12, L175: "The strong convergence of the
//! Euler-Maruyama method guarantees that, for any tau = eta T, theta_T from Algorithm 1
//! approaches Theta(tau) from Eq. 12 as eta gets smaller").
//!
//! Algorithm 1 with clipping, written as Eq. 11:
//! `theta_t = theta_{t-1} - eta grad L_clip(theta_{t-1}) + sqrt(eta) Sigma xi_t`,
//! `Sigma = 2 C sigma / n`, `grad L_clip = (1/n) sum_i 2 c_i phi_i`,
//! `c_i = r_i min(1, C / (2 |r_i| ||phi_i||))` (Eq. 10 with `l(z) = z^2`), `r = Phi theta - y`.
//! Every drift term lies in the row space of Phi, so the run is exactly (in distribution)
//! a process on the train residuals `r` (n) and the test predictions `f = Phi_test theta`
//! (m): `r <- r - eta (2/n) K c + sqrt(eta) Sigma (Phi xi)`, `f <- f - eta (2/n) K_tx c +
//! sqrt(eta) Sigma (Phi_test xi)`, where `(Phi xi, Phi_test xi) ~ N(0, G)`, G the Gram
//! matrix of the stacked train and test features, drawn as `L g` with `L L^T = G`.
//!
//! **Coupling.** [`coupled_pair`] runs step `eta/2` for `2T` steps and step `eta` for `T`
//! steps on the same Brownian path: each coarse increment is the sum of the two fine ones
//! (`sqrt(eta/2) (g_a + g_b) = sqrt(eta) (g_a + g_b)/sqrt(2)`). The components of theta
//! in the null space of Phi are the sum of the noise increments, identical for both runs,
//! so `||theta^(eta) - theta^(eta/2)||^2 = dr^T K^+ dr` with `dr` the difference of the
//! residuals.
use super::TrainError;
use crate::linalg::{self, GRAM_RCOND};
use ndarray::{s, Array1, Array2, ArrayView1};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// How the noise of a step scales with the step size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoiseScaling {
    /// `sqrt(eta) Sigma xi` (Eq. 11).
    SqrtEta,
    /// `Sigma xi` whatever eta (a negative control: the missing sqrt(eta)).
    Constant,
}

/// The result of a coupled pair of runs.
#[derive(Clone, Debug)]
pub struct CoupledPair {
    /// `||theta^(eta) - theta^(eta/2)||_2` at `tau = eta T`.
    pub diff: f64,
    /// Test MSE of the run with step eta.
    pub loss_coarse: f64,
    /// Test MSE of the run with step eta/2.
    pub loss_fine: f64,
    /// Fraction of (step, sample) pairs clipped in the fine run.
    pub clip_fraction: f64,
}

/// The problem of a coupled run: the stacked Gram matrix `G` ((n + m) x (n + m), train
/// rows first), the labels, and the DP-GD constants.
pub struct EmProblem<'a> {
    pub g: &'a Array2<f64>,
    pub y: ArrayView1<'a, f64>,
    pub y_test: ArrayView1<'a, f64>,
    pub clip: f64,
    pub big_sigma: f64,
    pub scaling: NoiseScaling,
}

fn clipped(r: &Array1<f64>, norms: &Array1<f64>, clip: f64, count: &mut usize) -> Array1<f64> {
    Array1::from_iter(r.iter().zip(norms.iter()).map(|(ri, ni)| {
        let g = 2.0 * ri.abs() * ni;
        if g > clip {
            *count += 1;
            ri * clip / g
        } else {
            *ri
        }
    }))
}

/// Runs the coupled pair (step `eta` for `steps` steps and `eta/2` for `2 steps`).
pub fn coupled_pair(
    pb: &EmProblem,
    eta: f64,
    steps: usize,
    rng: &mut impl Rng,
) -> Result<CoupledPair, TrainError> {
    let n = pb.y.len();
    let nm = pb.g.nrows();
    if nm <= n || pb.g.ncols() != nm || pb.y_test.len() != nm - n {
        return Err(TrainError::InvalidConfig(format!(
            "coupled_pair: Gram {}x{}, n = {n}, m = {}",
            pb.g.nrows(),
            pb.g.ncols(),
            pb.y_test.len()
        )));
    }
    if !(eta.is_finite() && eta > 0.0) || steps == 0 {
        return Err(TrainError::InvalidConfig(format!(
            "coupled_pair: eta = {eta}, steps = {steps}"
        )));
    }
    linalg::pin_blas_threads();
    // L = U diag(sqrt(w)), L L^T = G.
    let (w, q) = linalg::sym_eig(&pb.g.view())?;
    let mut l = q;
    for (j, mut col) in l.columns_mut().into_iter().enumerate() {
        col *= w[j].max(0.0).sqrt();
    }
    // The drift's kernel rows: [K; K_tx] (nm x n).
    let kk = pb.g.slice(s![.., ..n]).to_owned();
    let norms = Array1::from_iter((0..n).map(|i| pb.g[[i, i]].max(0.0).sqrt()));
    let fine = eta / 2.0;
    let scale_fine = match pb.scaling {
        NoiseScaling::SqrtEta => fine.sqrt() * pb.big_sigma,
        NoiseScaling::Constant => pb.big_sigma,
    };
    // Under the control, a coarse increment is Sigma (g_a + g_b)/sqrt(2), not the sum.
    let coarse_factor = match pb.scaling {
        NoiseScaling::SqrtEta => 1.0,
        NoiseScaling::Constant => std::f64::consts::FRAC_1_SQRT_2,
    };
    // State: [r; f] for both runs (r = Phi theta - y, f = Phi_test theta), theta_0 = 0.
    let mut sc = Array1::<f64>::zeros(nm);
    sc.slice_mut(s![..n]).assign(&pb.y.mapv(|v| -v));
    let mut sf = sc.clone();
    let (mut clips, mut clip_count_coarse) = (0usize, 0usize);
    let mut gsum = Array1::<f64>::zeros(nm);
    for t in 0..2 * steps {
        let g = Array1::from_iter((0..nm).map(|_| StandardNormal.sample(rng)));
        gsum += &g;
        let noise = l.dot(&g) * scale_fine;
        let c = clipped(&sf.slice(s![..n]).to_owned(), &norms, pb.clip, &mut clips);
        sf = sf - kk.dot(&c) * (fine * 2.0 / n as f64) + noise;
        if t % 2 == 1 {
            let c = clipped(
                &sc.slice(s![..n]).to_owned(),
                &norms,
                pb.clip,
                &mut clip_count_coarse,
            );
            let noise = l.dot(&gsum) * (scale_fine * coarse_factor);
            sc = sc - kk.dot(&c) * (eta * 2.0 / n as f64) + noise;
            gsum.fill(0.0);
        }
        if !sf.iter().chain(sc.iter()).all(|v| v.is_finite()) {
            return Err(TrainError::Diverged {
                step: t,
                what: "coupled Euler-Maruyama state".into(),
            });
        }
    }
    // ||dtheta||^2 = dr^T K^+ dr.
    let dr = &sc.slice(s![..n]) - &sf.slice(s![..n]);
    let (mu, u) = linalg::sym_eig(&pb.g.slice(s![..n, ..n]))?;
    let cut = GRAM_RCOND * mu.iter().copied().fold(0.0, f64::max);
    let ud = u.t().dot(&dr);
    let diff2: f64 = (0..n)
        .filter(|j| mu[*j] > cut)
        .map(|j| ud[j] * ud[j] / mu[j])
        .sum();
    let mse = |st: &Array1<f64>| {
        let f = st.slice(s![n..]);
        f.iter()
            .zip(pb.y_test.iter())
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            / (nm - n) as f64
    };
    Ok(CoupledPair {
        diff: diff2.sqrt(),
        loss_coarse: mse(&sc),
        loss_fine: mse(&sf),
        clip_fraction: clips as f64 / (2 * steps * n) as f64,
    })
}
