//! `dpclaims train`: one run of DP-SGD / TP-TopK / TP-Rand / ON-TopK / ON-Rand
//! (fewer-coordinates paper, Sec. 7) on the shipped digits or the synthetic mixture:
//! test accuracy, epsilon per phase and total, support-quality diagnostics.
//!
//! Every method of one seed sees the same data split and the same random streams
//! (`<seed>/train/data`, `<seed>/train/run/...`), so TP-TopK and TP-Rand share their
//! warm-up bit for bit. The wall time goes to stderr (stdout stays deterministic).
use crate::rng::SeedPath;
use crate::train::dpsgd::{
    run_method_observed, Activation, Classification, Method, MethodConfig, MethodRun, ModelKind,
    SyntheticSpec,
};
use clap::{Args, ValueEnum};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    #[value(name = "dp-sgd")]
    DpSgd,
    #[value(name = "tp-topk")]
    TpTopk,
    #[value(name = "tp-rand")]
    TpRand,
    #[value(name = "on-topk")]
    OnTopk,
    #[value(name = "on-rand")]
    OnRand,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::DpSgd => Method::DpSgd,
            MethodArg::TpTopk => Method::TpTopK,
            MethodArg::TpRand => Method::TpRand,
            MethodArg::OnTopk => Method::OnTopK,
            MethodArg::OnRand => Method::OnRand,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DataArg {
    /// The 8x8 digits shipped with the crate (1797 images, 64 features, 10 classes).
    Digits,
    /// Gaussian mixture: 200 features, 8 informative, 4 classes, 2000 training + 4000 test examples.
    Synthetic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    Logreg,
    Mlp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ActivationArg {
    Tanh,
    Relu,
}

#[derive(Args, Debug)]
pub struct TrainArgs {
    #[arg(long, value_enum)]
    pub method: MethodArg,
    #[arg(long, value_enum, default_value = "digits")]
    pub data: DataArg,
    /// Target epsilon of the whole run.
    #[arg(long, allow_negative_numbers = true)]
    pub epsilon: f64,
    #[arg(long, default_value_t = 1e-5, allow_negative_numbers = true)]
    pub delta: f64,
    /// Active ratio r: k = floor(r P) coordinates are trained (ignored by dp-sgd).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    pub active_ratio: f64,
    /// Total epochs (the same for every method).
    #[arg(long, default_value_t = 30)]
    pub epochs: usize,
    /// Warm-up epochs of tp-topk / tp-rand [default: 30% of the epochs, at least 1].
    #[arg(long)]
    pub phase1_epochs: Option<usize>,
    /// Nominal share of the budget spent by the warm-up (two-phase methods).
    #[arg(long, default_value_t = 0.3, allow_negative_numbers = true)]
    pub budget_split: f64,
    #[arg(long, value_enum, default_value = "logreg")]
    pub model: ModelArg,
    /// Hidden units of the MLP.
    #[arg(long, default_value_t = 32)]
    pub hidden: usize,
    #[arg(long, value_enum, default_value = "tanh")]
    pub activation: ActivationArg,
    /// Expected batch size qN (Poisson sampling).
    #[arg(long, default_value_t = 64.0, allow_negative_numbers = true)]
    pub batch_size: f64,
    /// Clipping norm C (phase 2 uses --clip-phase2 if given).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub clip: f64,
    #[arg(long, allow_negative_numbers = true)]
    pub clip_phase2: Option<f64>,
    /// Constant learning rate.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub lr: f64,
    /// Share of the digits held out for testing.
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    pub test_fraction: f64,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
}

impl TrainArgs {
    fn config(&self) -> MethodConfig {
        let model = match self.model {
            ModelArg::Logreg => ModelKind::Logreg,
            ModelArg::Mlp => ModelKind::Mlp {
                hidden: self.hidden,
                activation: match self.activation {
                    ActivationArg::Tanh => Activation::Tanh,
                    ActivationArg::Relu => Activation::Relu,
                },
            },
        };
        let phase1 = self.phase1_epochs.unwrap_or_else(|| {
            ((0.3 * self.epochs as f64).round() as usize)
                .clamp(1, self.epochs.saturating_sub(1).max(1))
        });
        let mut cfg = MethodConfig::new(self.method.into(), model, self.epsilon);
        cfg.delta = self.delta;
        cfg.active_ratio = self.active_ratio;
        cfg.epochs = self.epochs;
        cfg.phase1_epochs = phase1;
        cfg.budget_split = self.budget_split;
        cfg.batch_size = self.batch_size;
        cfg.clip = self.clip;
        cfg.clip_phase2 = self.clip_phase2.unwrap_or(self.clip);
        cfg.lr = self.lr;
        cfg
    }
}

pub fn run(a: &TrainArgs) -> anyhow::Result<ExitCode> {
    {
        // Refuse absurd sizes before allocating (the cost model of a tp_topk unit).
        let vars = std::collections::BTreeMap::from([
            ("epochs".to_string(), a.epochs as f64),
            ("batch".to_string(), a.batch_size),
            ("hidden".to_string(), a.hidden as f64),
            ("test_fraction".to_string(), a.test_fraction),
        ]);
        let options = std::collections::BTreeMap::from([
            ("mode".to_string(), "train".to_string()),
            (
                "data".to_string(),
                match a.data {
                    DataArg::Digits => "digits",
                    DataArg::Synthetic => "synthetic",
                }
                .to_string(),
            ),
            (
                "model".to_string(),
                match a.model {
                    ModelArg::Mlp => "mlp",
                    ModelArg::Logreg => "logreg",
                }
                .to_string(),
            ),
        ]);
        let cost = crate::systems::System::cost(
            &crate::systems::tp_topk::TpTopK,
            &crate::systems::CostInput {
                vars: &vars,
                options: &options,
                metrics: &Default::default(),
            },
        );
        a.budget.budget().check_command(
            "train",
            cost,
            1.0,
            "--epochs, --batch-size, --hidden",
            format!(
                "epochs = {}, batch size = {}, hidden = {}",
                a.epochs, a.batch_size, a.hidden
            ),
        )?;
    }
    let root = SeedPath::new(a.seed).child("train");
    let mut data_rng = root.rng_for("data");
    let (data, data_name) = match a.data {
        DataArg::Digits => (
            Classification::digits(a.test_fraction, &mut data_rng)?,
            "digits",
        ),
        DataArg::Synthetic => (
            Classification::synthetic(&SyntheticSpec::default(), &mut data_rng)?,
            "synthetic",
        ),
    };
    let cfg = a.config();
    let bar = super::progress::Progress::new(
        0,
        "{msg} [{bar:40}] {pos}/{len} steps, {elapsed} (eta {eta})",
        "steps",
    )?;
    bar.set_message(cfg.method.name());
    let started = std::time::Instant::now();
    let result = run_method_observed(
        &data,
        &cfg,
        &root.child("run"),
        &mut |done, total| {
            bar.set(done as u64, total as u64);
        },
        &crate::train::Recipe::PAPER,
    );
    bar.finish_and_clear();
    let run = result?;
    let elapsed = started.elapsed().as_secs_f64();
    if a.json {
        let v = serde_json::json!({
            "data": data_name,
            "seed": a.seed,
            "config": cfg,
            "result": run,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_text(&run, &cfg, data_name, a.seed);
    }
    eprintln!("time: {elapsed:.2} s");
    Ok(ExitCode::SUCCESS)
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.4}"))
}

fn print_text(run: &MethodRun, cfg: &MethodConfig, data: &str, seed: u64) {
    let d = &run.diagnostics;
    let pr = &run.privacy;
    println!(
        "{} on {data} ({:?}), seed {seed}: P = {}, k = {}, {} steps",
        run.method, cfg.model, d.params, d.active, run.steps
    );
    println!(
        "test accuracy       {:.4}   (train {:.4})",
        run.test_accuracy, run.train_accuracy
    );
    println!(
        "epsilon (total)     {:.6}   target {} at delta {:e} (RDP, order {})",
        pr.epsilon, pr.target_epsilon, pr.delta, pr.order
    );
    for ph in &pr.phases {
        println!(
            "  phase {:<8}    {} steps, q = {:.5}, z = {:.4}, C = {}, epsilon alone {:.4}",
            ph.name, ph.steps, ph.sampling_rate, ph.noise_multiplier, ph.clip, ph.epsilon_alone
        );
    }
    match d.checkpoint_step {
        Some(s) => println!("diagnostics at the first support selection (after step {s}):"),
        None => println!("diagnostics: dense method, no support selected"),
    }
    println!(
        "  Gamma (oracle energy capture)   {}   random k/P = {:.4}, best k-support {}",
        opt(d.gamma),
        d.random_expectation,
        opt(d.gamma_best)
    );
    println!(
        "  proxy concentration             {}   random k/P = {:.4}",
        opt(d.proxy_concentration),
        d.random_expectation
    );
    println!("noise energy per step (||noise||^2 of the averaged gradient):");
    for e in &d.noise_energy {
        println!(
            "  {:<14} {:>5} steps, {:>5} coords: expected {:.4e}, measured {:.4e}",
            e.segment, e.steps, e.active, e.expected, e.measured
        );
    }
}
