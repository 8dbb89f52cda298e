//! `dpclaims demo`: one DP-GD run on the random-features model (privacy-for-free
//! Algorithm 1 with the hyper-parameters of Eq. 8 and sigma from Prop. 2.2), next to the
//! non-private minimum-norm baseline.
use clap::Args;
use dpclaims_core::*;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Master seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Input dimension d.
    #[arg(long, default_value_t = 50)]
    pub d: usize,
    /// Training samples n.
    #[arg(long, default_value_t = 500)]
    pub n: usize,
    /// Test samples.
    #[arg(long, default_value_t = 1000)]
    pub n_test: usize,
    /// Random features p.
    #[arg(long, default_value_t = 4000)]
    pub p: usize,
    /// Privacy budget epsilon (delta = 1/n).
    #[arg(long, default_value_t = 4.0)]
    pub epsilon: f64,
    /// Clipping threshold C = c_clip * sqrt(p) (privacy-for-free Fig. 2 parametrisation).
    #[arg(long, default_value_t = 0.5)]
    pub c_clip: f64,
    /// Number of steps T = c_time * d (privacy-for-free Fig. 2 parametrisation, eta = 1/p).
    #[arg(long, default_value_t = 5.0)]
    pub c_time: f64,
    /// Use the theorem's hyper-parameters (Eq. 8: T = d ln^2 n/(eta p), C = sqrt(p) ln^2 n)
    /// instead of c_clip and c_time. Their polylogarithmic factors make the noise
    /// dominate at demo sizes.
    #[arg(long)]
    pub eq8: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
}

mod dpclaims_core {
    pub use crate::data::{Dataset, InputDist, Target};
    pub use crate::models::RandomFeatures;
    pub use crate::rng::SeedPath;
    pub use crate::train::{baselines, dpgd};
}

pub fn run(a: &DemoArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        a.d >= 1 && a.n >= 2 && a.p >= 1 && a.n_test >= 1,
        "need d >= 1, n >= 2, p >= 1, n_test >= 1"
    );
    {
        // Refuse absurd sizes before allocating anything (the same cost model as a
        // claim's rf_dpgd unit).
        let (n, p, d) = (a.n as f64, a.p as f64, a.d as f64);
        let steps = if a.eq8 {
            d * n.ln().powi(2)
        } else {
            (a.c_time * d).max(1.0)
        };
        let vars = std::collections::BTreeMap::from([
            ("d".to_string(), d),
            ("n".to_string(), n),
            ("p".to_string(), p),
            ("n_test".to_string(), a.n_test as f64),
            ("steps".to_string(), steps),
        ]);
        let metrics = ["test_loss", "min_norm_test_loss"].map(String::from).into();
        let cost = crate::systems::System::cost(
            &crate::systems::rf_dpgd::RfDpGd,
            &crate::systems::CostInput {
                vars: &vars,
                options: &Default::default(),
                metrics: &metrics,
            },
        );
        a.budget.budget().check_command(
            "demo",
            cost,
            1.0,
            "--d, --n, --n-test, --p, --c-time",
            format!(
                "d = {}, n = {}, n_test = {}, p = {}, T = {steps}",
                a.d, a.n, a.n_test, a.p
            ),
        )?;
    }
    let root = SeedPath::new(a.seed).child("demo");
    let mut data_rng = root.rng_for("data");
    let u = crate::data::unit_vector(a.d, &mut data_rng);
    let target = Target::Sign { u };
    let train = Dataset::sample(a.n, a.d, InputDist::Gaussian, &target, 0.0, &mut data_rng);
    let test = Dataset::sample(
        a.n_test,
        a.d,
        InputDist::Gaussian,
        &target,
        0.0,
        &mut data_rng,
    );
    let model = RandomFeatures::sample(a.p, a.d, &mut root.rng_for("features"));
    let phi = model.features(&train.x.view());
    let phi_test = model.features(&test.x.view());
    let (n, p, d) = (a.n as f64, a.p as f64, a.d as f64);
    let eta = 1.0 / p;
    let (steps, clip) = if a.eq8 {
        // Eq. 8: T = d ln^2 n / (eta p), C = sqrt(p) ln^2 n.
        let ln2n = n.ln().powi(2);
        ((d * ln2n / (eta * p)).ceil() as usize, p.sqrt() * ln2n)
    } else {
        // Fig. 2: T = int(c_time d), C = c_clip sqrt(p).
        ((a.c_time * d) as usize, a.c_clip * p.sqrt())
    };
    anyhow::ensure!(steps >= 1, "T = {steps}: need at least one step");
    let delta = 1.0 / n;
    let sigma = dpgd::prop22_sigma(eta, steps, a.epsilon, delta, &dpgd::DpGdRecipe::PAPER)?;
    let cfg = dpgd::DpGdConfig {
        eta,
        steps,
        clip,
        clip_rule: dpgd::ClipRule::Divide,
        sigma,
        kappa: 2.0,
        ridge: 0.0,
    };
    let problem = dpgd::Problem {
        phi: phi.view(),
        y: train.y.view(),
        test: Some((phi_test.view(), test.y.view())),
    };
    let run = dpgd::run(
        &problem,
        ndarray::Array1::zeros(a.p),
        &cfg,
        &dpgd::RecordPlan::ends(steps),
        &mut root.rng_for("noise"),
        &dpgd::DpGdRecipe::PAPER,
    )?;
    let last = run.trajectory.final_loss().expect("final loss recorded");
    let theta_star = baselines::min_norm(&phi.view(), &train.y.view())?;
    let star_test = problem.test_mse(&theta_star.view()).expect("test set");
    let star_train = problem.train_mse(&theta_star.view());
    let digest = crate::rng::digest_f64s(run.theta.iter().copied());
    if a.json {
        let v = serde_json::json!({
            "d": a.d, "n": a.n, "n_test": a.n_test, "p": a.p, "seed": a.seed,
            "epsilon": a.epsilon, "delta": delta, "eta": eta, "steps": steps, "clip": clip, "sigma": sigma,
            "train_loss": last.train, "test_loss": last.test, "clip_fraction": run.trajectory.overall_clip_fraction(),
            "sup_abs_residual": run.trajectory.sup_abs_residual(),
            "min_norm_train_loss": star_train, "min_norm_test_loss": star_test,
            "theta_digest": digest,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("DP-GD on random features (privacy-for-free Algorithm 1, sigma from Prop. 2.2)");
        println!(
            "  d = {}, n = {}, n_test = {}, p = {}, target y = sign(u.x), seed = {}",
            a.d, a.n, a.n_test, a.p, a.seed
        );
        println!("  eps = {}, delta = 1/n = {delta:.3e}, eta = 1/p, T = {steps}, C = {clip:.2}, sigma = {sigma:.4}", a.epsilon);
        println!(
            "  DP-GD         train loss {:.4}  test loss {:.4}",
            last.train,
            last.test.unwrap_or(f64::NAN)
        );
        println!(
            "  clip fraction {:.4} (over all steps and samples); sup_t max_i |residual| = {:.3}",
            run.trajectory.overall_clip_fraction(),
            run.trajectory.sup_abs_residual()
        );
        println!("  min-norm GD   train loss {star_train:.4}  test loss {star_test:.4}  (non-private baseline pinv(Phi) y)");
        println!("  theta digest  {digest}");
    }
    Ok(ExitCode::SUCCESS)
}
