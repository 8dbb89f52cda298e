//! TP-TopK and its four comparators (fewer-coordinates paper, "When Do Fewer Coordinates
//! Suffice in DP-SGD?"; DESIGN.md section 2.3), driven through
//! [`crate::train::dpsgd::run_method`].
//!
//! Two modes (option `mode`):
//!
//! * `train` — one unit is one run of `method` (dp-sgd, tp-topk, tp-rand, on-topk,
//!   on-rand) on the shipped digits or the synthetic mixture: draw the train/test split
//!   (or the synthetic data) from the stream `data`, then run with the streams under
//!   `run` (`run/init`, `run/train`, `run/support`). Variants of a claim share these
//!   streams, so TP-TopK and TP-Rand share their warm-up bit for bit (common random
//!   numbers). Metrics:
//!   - accuracy (Sec. 7.2, Table 2);
//!   - privacy (Sec. 4, Theorem 4.1): `epsilon_spent` is what the run reports (the RDP
//!     accountant applied to its privacy ledger); `epsilon_composed` is recomputed here
//!     from the schedule alone — q = batch/N, steps per epoch round(N/batch), T1 and T2
//!     from the epochs, the run's noise multipliers — by adding the per-phase RDP curves
//!     ([`crate::privacy::rdp_curve`]) on [`crate::privacy::default_orders`] and the
//!     improved conversion. The deviation `accountant: max` composes the phases by the
//!     order-wise maximum of their curves instead (a wrong accountant).
//!     `epsilon_independent` is the same schedule through the independent quadrature
//!     accountant ([`crate::privacy::rdp_quadrature`]: Rényi divergences integrated
//!     numerically from their definition, its own grid of orders and conversion), which
//!     shares no code with the RDP accountant, ignores the run's recipe and the option
//!     `accountant`: `epsilon_spent <= epsilon` can then fail if that accountant is wrong;
//!   - noise energy (Sec. 3.2, "Phase 2"): the mean injected `||m o z2 C2 xi||^2/(qN)^2`
//!     of the phase-2 steps against `k (z2 C2/(qN))^2` and the dense `P (z2 C2/(qN))^2`;
//!   - support quality at the first support selection (Sec. 7.4): oracle energy capture
//!     Gamma, its random-support expectation k/P (Sec. 5, after Prop. 5.1), the DP-visible
//!     proxy concentration;
//!   - with option `tune: validation`, each method the unit runs picks its learning rate
//!     and clipping norm on a validation split of the training data over a log-spaced
//!     grid, never on test (`selected_lr`, `selected_clip`, the comparators'
//!     `*_selected_lr`, `gap_vs_*_second`); `dense_ceiling_accuracy` is non-private
//!     dense SGD on the same streams ([`super::tp_topk_tuning`]; the metrics above come
//!     from the selected cell's run, `tp_topk_metrics`).
//! * `misranking` — Prop. 5.3 (App. B.1) under the additive model of Sec. 5,
//!   `g~_{t,j} = g_j + sigma xi_{t,j}`: the Chebyshev bound on `P(s_j >= s_i)` for
//!   `g_i^2 > g_j^2` and its Monte Carlo estimate (stream `misranking`).
use super::tp_topk_metrics::{noise_metrics, privacy_metrics, support_metrics, METRICS};
use super::tp_topk_tuning::{Tuner, CLIP_GRID, LR_GRID, VALIDATION_FRACTION};
use super::*;
use crate::train::dpsgd::{
    misranking_bound, misranking_monte_carlo, score_mean_monte_carlo, support_miss_monte_carlo,
    Activation, Classification, Method, MethodConfig, ModelKind, SyntheticSpec,
};

#[derive(Debug)]
pub struct TpTopK;

const fn p(name: &'static str, kind: ParamKind, doc: &'static str) -> ParamInfo {
    ParamInfo {
        name,
        kind,
        optional: true,
        doc,
    }
}

const PARAMS: &[ParamInfo] = &[
    p("epsilon", ParamKind::Positive, "target epsilon of the whole run (required in mode train)"),
    p("delta", ParamKind::Probability, "target delta (default 1e-5, Sec. 7.1)"),
    p(
        "calibration_epsilon",
        ParamKind::Positive,
        "epsilon the noise is calibrated for (default: epsilon; a different value is a wrong noise multiplier, for negative controls)",
    ),
    p("active_ratio", ParamKind::Positive, "active ratio r in (0, 1], k = floor(r P) (default 0.1)"),
    p(
        "k",
        ParamKind::IntAtLeast(1),
        "active coordinates k <= P; overrides active_ratio (r = (k + 1/2)/P, so floor(r P) = k)",
    ),
    p("epochs", ParamKind::IntAtLeast(1), "total epochs, the same for every method (default 30)"),
    p(
        "phase1_epochs",
        ParamKind::IntAtLeast(1),
        "warm-up epochs T1 of the two-phase methods (default round(0.3 epochs), in [1, epochs - 1])",
    ),
    p("budget_split", ParamKind::Probability, "nominal warm-up share rho of the budget (default 0.3)"),
    p("batch", ParamKind::Positive, "expected batch size qN (default 64)"),
    p("clip", ParamKind::Positive, "clipping norm C (C1 of the warm-up; default 1; tune validation: the grid's clips replace it)"),
    p("clip_phase2", ParamKind::Positive, "clipping norm C2 of phase 2 (default: clip; tune validation: C2 = cell clip * clip_phase2/clip)"),
    p("lr", ParamKind::Positive, "constant learning rate (default 0.5; tune validation: the grid's rates replace it)"),
    p("hidden", ParamKind::IntAtLeast(1), "hidden units of the MLP (default 32)"),
    p("test_fraction", ParamKind::Probability, "share of the digits held out (default 0.2)"),
    p("g_i", ParamKind::Finite, "misranking: the stronger signal, g_i^2 > g_j^2"),
    p("g_j", ParamKind::Finite, "misranking: the weaker signal"),
    p("sigma", ParamKind::NonNegative, "misranking: per-coordinate noise sd of the averaged gradient"),
    p("t1", ParamKind::IntAtLeast(1), "misranking: warm-up steps T1"),
    p("trials", ParamKind::IntAtLeast(1), "misranking, one-step: Monte Carlo trials (one-step: >= 2)"),
    p("features", ParamKind::IntAtLeast(1), "planted: features D (default 50)"),
    p("support_size", ParamKind::IntAtLeast(1), "planted: planted features s (default 5)"),
    p("energy_fraction", ParamKind::NonNegative, "planted: share f <= 1 of the mean energy on the planted features (0.9; s/D: uniform)"),
    p("signal", ParamKind::NonNegative, "planted: squared norm of each class mean (default 4)"),
    p("feature_noise", ParamKind::Positive, "planted: sd of the input noise (default 1)"),
    p("n_train", ParamKind::IntAtLeast(2), "planted: training examples N (default 1000)"),
    p("n_test", ParamKind::IntAtLeast(1), "planted: test examples (default 2000)"),
    p("classes", ParamKind::IntAtLeast(2), "planted: classes K (default 4)"),
    p("tune_lr_min", ParamKind::Positive, "tune validation: smallest learning rate of the log-spaced grid (default 0.02)"),
    p("tune_lr_max", ParamKind::Positive, "tune validation: largest learning rate (default 0.5)"),
    p("tune_lr_points", ParamKind::IntAtLeast(1), "tune validation: learning rates in the grid (default 3: 0.02, 0.1, 0.5; 1: tune_lr_min)"),
    p("tune_clip_min", ParamKind::Positive, "tune validation: smallest clipping norm C1 of the log-spaced grid (default 0.5; C2 keeps its ratio clip_phase2/clip)"),
    p("tune_clip_max", ParamKind::Positive, "tune validation: largest clipping norm (default 2)"),
    p("tune_clip_points", ParamKind::IntAtLeast(1), "tune validation: clipping norms in the grid (default 2: 0.5, 2; 1: tune_clip_min)"),
    p(
        "validation_fraction",
        ParamKind::NonNegative,
        "tune validation: share of the training split held out for the selection (default 0.2, < 1; 0 only with a one-cell grid)",
    ),
    p("noise_multiplier", ParamKind::NonNegative, "one-step: noise multiplier z of the step"),
    p("theta_scale", ParamKind::NonNegative, "one-step: theta ~ theta_scale N(0, I) (default 0: theta = 0); stationarity (synthetic): theta_0 = theta_scale on every coordinate"),
    p("dim", ParamKind::IntAtLeast(1), "stationarity (synthetic): dimension P"),
    p("steps", ParamKind::IntAtLeast(1), "stationarity: phase-2 steps T"),
    p("eta_l", ParamKind::Positive, "stationarity: declared eta L (Theorem 6.3's hypothesis, as derived: <= 1/4)"),
    p("step_factor", ParamKind::Positive, "stationarity: the run's step is step_factor eta_l / L (default 1; else a negative control)"),
    p("noise_scale", ParamKind::NonNegative, "stationarity: the run's noise sd is noise_scale sigma, the bound's is sigma (default 1)"),
    p("smoothness", ParamKind::Positive, "stationarity (quadratic): L, the largest curvature (default 1)"),
    p("spread", ParamKind::Positive, "stationarity (quadratic): curvatures log-spaced from L to L/spread (default 1: isotropic)"),
    p("cos_a", ParamKind::NonNegative, "stationarity (cosine): a of theta^2/2 - a cos theta (default 2; L = 1 + a)"),
    p("rand_1", ParamKind::Finite, "printed-table: Table 3's TP-Rand accuracy at r = 0.2"),
    p("rand_2", ParamKind::Finite, "printed-table: Table 3's TP-Rand accuracy at r = 0.4"),
    p("rand_3", ParamKind::Finite, "printed-table: Table 3's TP-Rand accuracy at r = 0.6"),
    p("rand_4", ParamKind::Finite, "printed-table: Table 3's TP-Rand accuracy at r = 0.8"),
    p("topk_1", ParamKind::Finite, "printed-table: Table 3's TP-TopK accuracy at r = 0.2"),
    p("topk_2", ParamKind::Finite, "printed-table: Table 3's TP-TopK accuracy at r = 0.4"),
    p("topk_3", ParamKind::Finite, "printed-table: Table 3's TP-TopK accuracy at r = 0.6"),
    p("topk_4", ParamKind::Finite, "printed-table: Table 3's TP-TopK accuracy at r = 0.8"),
    p("sensitivity", ParamKind::Finite, "printed-table: a Table 5 row's sensitivity"),
    p("specificity", ParamKind::Finite, "printed-table: a Table 5 row's specificity"),
    p("balanced_accuracy", ParamKind::Finite, "printed-table: a Table 5 row's balanced accuracy"),
    p("score_floor", ParamKind::NonNegative, "misranking: multiplies the sigma^2 subtracted from the scores of Lemma 5.2's check (default 1; 0: no correction, a negative control)"),
];

const OPTIONS: &[OptionInfo] = &[
    OptionInfo {
        name: "mode",
        values: &["train", "misranking", "one-step", "stationarity", "printed-table"],
        doc: "train: one DP-SGD-family run; misranking: Prop. 5.3's bound and its Monte Carlo estimate (and Lemma 5.2's unbiased scores); one-step: Prop. 5.1 and Lemma 6.4 at a fixed theta on the planted task; stationarity: Theorem 6.3, Corollary 6.6 and Lemma 6.4 along a support-restricted trajectory (tp_topk_stationarity); printed-table: arithmetic of the paper's Tables 3 and 5 (tp_topk_tables)",
    },
    OptionInfo {
        name: "problem",
        values: &["quadratic", "cosine", "logreg"],
        doc: "stationarity: a diagonal quadratic, sum theta^2/2 - a cos theta, or logistic regression on the data of option data (digits)",
    },
    OptionInfo {
        name: "lemma64_bound",
        values: &["paper", "jensen-reversed"],
        doc: "stationarity: lemma64_excess against Lemma 6.4's bound, or against (E||g^m|| - C)_+ (wrong, negative control)",
    },
    OptionInfo {
        name: "method",
        values: &["tp-topk", "tp-rand", "dp-sgd", "on-topk", "on-rand"],
        doc: "the method (Sec. 7.1, Table 1)",
    },
    OptionInfo {
        name: "data",
        values: &["digits", "synthetic", "planted"],
        doc: "the shipped 8x8 digits, the synthetic mixture (SyntheticSpec::default), or the planted-support task (data::planted, its parameters)",
    },
    OptionInfo {
        name: "clip_order",
        values: &["mask-then-clip", "clip-then-mask"],
        doc: "the DP step: mask before clipping (Sec. 3.2), or after (wrong, negative control)",
    },
    OptionInfo {
        name: "noise_support",
        values: &["active", "all"],
        doc: "noise on the active coordinates (Sec. 3.2), or on all P (wrong, negative control)",
    },
    OptionInfo {
        name: "ranking",
        values: &["top", "reversed"],
        doc: "the learned supports: top-k of the scores (Sec. 3.2), or bottom-k (a flipped sort, negative control)",
    },
    OptionInfo {
        name: "compare",
        values: &["none", "ranking", "center"],
        doc: "train: ranking also runs TP-Rand and DP-SGD, center the (0.3, 0.3) split, on the same streams",
    },
    OptionInfo {
        name: "tune",
        values: &["none", "validation"],
        doc: "train: none runs each method at the spec's lr and clip; validation gives each method (own and comparators) its (lr, clip) of best validation accuracy over the tune_* grid, on the training split minus validation_fraction (tp_topk_tuning)",
    },
    OptionInfo {
        name: "support",
        values: &["oracle", "random"],
        doc: "one-step: top-k of the full-data clipped gradient, or k random coordinates",
    },
    OptionInfo {
        name: "model",
        values: &["logreg", "mlp"],
        doc: "multinomial logistic regression or a two-layer MLP",
    },
    OptionInfo {
        name: "activation",
        values: &["tanh", "relu"],
        doc: "hidden activation of the MLP",
    },
    OptionInfo {
        name: "accountant",
        values: &["sum", "max"],
        doc: "how epsilon_composed composes the phases' RDP curves: sum (Theorem 4.1) or max (a wrong accountant, negative control)",
    },
];

const INFO: SystemInfo = SystemInfo {
    name: "tp_topk",
    model: "dpsgd_classifier",
    description: "DP-SGD / TP-TopK / TP-Rand / ON-TopK / ON-Rand on digits, a synthetic mixture or the planted-support task (fewer-coordinates paper), Prop. 5.3's misranking model, or Prop. 5.1's one-step criterion",
    needs_target: false,
    params: PARAMS,
    options: OPTIONS,
    metrics: METRICS,
};

impl System for TpTopK {
    fn info(&self) -> &'static SystemInfo {
        &INFO
    }
    /// The accountants' epsilons of the schedule, the calibrated phase-2 noise
    /// multiplier and the printed tables' arithmetic ([`super::tp_topk_metrics`]).
    fn exact_metrics(&self) -> &'static [&'static str] {
        super::tp_topk_metrics::EXACT
    }
    /// `epsilon_spent` and `epsilon_error` come from the accountant that calibrated the
    /// noise, so comparing them with the target or with each other cannot fail.
    fn self_checks(&self) -> &'static [&'static str] {
        &["epsilon_spent", "epsilon_error", "epsilon_composed"]
    }

    fn cost(&self, u: &CostInput) -> Cost {
        if u.option("mode") == "misranking" {
            let (t1, trials) = (u.var("t1", 1.0), u.var("trials", 1.0));
            let scores = if u.wants(&["score_bias_z", "score_unbiased"]) {
                2.0
            } else {
                0.0
            };
            let set = if u.wants(&["support_miss_mc", "support_miss_mc_se"]) {
                u.var("set_trials", 1.0) * u.var("set_p", 1.0)
            } else {
                0.0
            };
            return Cost {
                seconds: Cost::normals(((2.0 + scores) * trials + set) * t1) + 1e-3,
                bytes: 1e3,
            };
        }
        let synthetic = u.option("data") == "synthetic";
        let spec = SyntheticSpec::default();
        if u.option("mode") == "one-step" {
            return super::tp_topk_planted::one_step_cost(u);
        }
        if u.option("mode") == "printed-table" {
            return Cost {
                seconds: 1e-6,
                bytes: 1e3,
            };
        }
        if u.option("mode") == "stationarity" {
            return super::tp_topk_stationarity::cost(u);
        }
        let planted_sizes = super::tp_topk_planted::planted_sizes(u);
        let (n_all, features, classes) = if u.option("data") == "planted" {
            let (n, nt, d, k) = planted_sizes;
            (n + nt, d, k)
        } else if synthetic {
            (
                (spec.n_train + spec.n_test) as f64,
                spec.features as f64,
                spec.classes as f64,
            )
        } else {
            (1797.0, 64.0, 10.0)
        };
        let n_train = if u.option("data") == "planted" {
            planted_sizes.0
        } else if synthetic {
            spec.n_train as f64
        } else {
            n_all * (1.0 - u.var("test_fraction", 0.2))
        };
        let mlp = u.option("model") == "mlp";
        let hidden = u.var("hidden", 32.0);
        let params = if mlp {
            (features + 1.0) * hidden + (hidden + 1.0) * classes
        } else {
            (features + 1.0) * classes
        };
        // tune: validation runs every method at each of the grid's cells, on the
        // training split minus the validation part (tp_topk_tuning).
        let (cells, lr_points, fit) = if u.option("tune") == "validation" {
            let points = |name: &str, default: usize| u.var(name, default as f64).max(1.0);
            let lr = points("tune_lr_points", LR_GRID.2);
            let fraction = u.var("validation_fraction", VALIDATION_FRACTION);
            (
                lr * points("tune_clip_points", CLIP_GRID.2),
                lr,
                1.0 - fraction,
            )
        } else {
            (1.0, 1.0, 1.0)
        };
        let (epochs, batch) = (u.var("epochs", 30.0), u.var("batch", 64.0));
        let steps_per_epoch = (fit * n_train / batch).round().max(1.0);
        let steps = epochs * steps_per_epoch;
        // Per step: per-sample gradients of the batch (forward and backward, about 4
        // multiply-adds per parameter and sample), clipping, masking, noise on up to P
        // coordinates; per epoch: the scores and an evaluation; once: the calibration
        // (bisections over the RDP accountant) and the independent accountant.
        // The PLD bracket, when asked for: about 1e6 FFT points at 1e4 steps (0.3 s),
        // fewer at fewer steps.
        let pld = if u.wants(&["epsilon_pld_lower", "epsilon_pld_upper", "epsilon_pld_gap"]) {
            0.3 * (steps / 1e4).sqrt().max(0.1)
        } else {
            0.0
        };
        // The MLP's step is three matrix products over the batch (forward, back-propagated
        // errors, the clipped sum with rescaled errors: model.rs), priced as 2 B P flops
        // at GEMM speed: a full-batch width-1024 unit of pff-fig1-width-digits (B = 1150,
        // P = 76 810, 150 steps) took 2.4 s of CPU against 2.9 s priced so (the
        // streaming price put it at 18 s).
        let step = if mlp {
            Cost::gemm(2.0 * batch * params) + Cost::stream(10.0 * params)
        } else {
            Cost::stream(4.0 * batch * params + 10.0 * params)
        };
        // Per step also one uniform per training example (Poisson sampling, about a
        // normal's cost); once per run the evaluation (validation and test accuracy, and
        // the diagnostics' full-data gradient at most once more). The calibration (0.03 s)
        // is the schedule's, the same for every cell of the grid (the accountant's memo):
        // once per method below. Measured against this model (reports/BENCH.md, "Estimate
        // against actual"): counting the calibration at every cell and an evaluation at
        // every epoch put tuned units 5-12 times over their CPU time.
        let run = steps * (step + Cost::normals(params) + Cost::normals(fit * n_train))
            + 2.0 * Cost::stream(4.0 * n_all * params);
        let calibration = 0.03;
        // compare: ranking runs two more methods on the same data, center one; each
        // method at every cell.
        let methods = match u.option("compare") {
            "ranking" => 3.0,
            // The premise's dense run (tp_topk_planted::center), when asked for.
            "center" if u.wants(&["premise_gap_vs_dense"]) => 3.0,
            "center" => 2.0,
            _ => 1.0,
        };
        let mut seconds = methods * (cells * run + calibration + pld);
        // The non-private ceiling, when asked for: dense steps without noise, at each
        // learning rate of the grid.
        if u.wants(&["dense_ceiling_accuracy", "dense_ceiling_gap"]) {
            seconds += lr_points * (steps * step + Cost::stream(4.0 * n_all * params));
        }
        // Per-example gradients are never held as a B x P matrix by the MLP (model.rs:
        // per-example norms from the layers' errors and inputs): its peak is the batch's
        // activations and errors, about 10 B (features + hidden + classes) values (the
        // unit above peaked at 80 MB resident, the whole process).
        let batch_values = if mlp {
            10.0 * batch * (features + hidden + classes)
        } else {
            3.0 * batch * params
        };
        let mut bytes =
            Cost::f64s(batch_values + 2.0 * n_all * features + 20.0 * params + 8.0 * steps);
        if cells > 1.0 || fit < 1.0 {
            // Every cell's run of a method is held until the selection; the split copies.
            bytes += Cost::f64s(cells * (params + 8.0 * steps) + n_all * features);
        }
        Cost { seconds, bytes }
    }

    fn run(&self, u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
        match u.option("mode") {
            "misranking" => misranking(u),
            "one-step" => super::tp_topk_planted::one_step(u),
            "stationarity" => super::tp_topk_stationarity::run(u),
            "printed-table" => super::tp_topk_tables::run(u),
            _ => train(u),
        }
    }
}

fn invalid(e: impl std::fmt::Display) -> SystemError {
    SystemError::Invalid(e.to_string())
}

/// Prop. 5.3 at one (g_i, g_j, sigma, T1) point.
fn misranking(u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
    let (gi, gj, sigma) = (u.var("g_i")?, u.var("g_j")?, u.var("sigma")?);
    let (t1, trials) = (u.count("t1")?, u.count("trials")?);
    let bound = misranking_bound(gi, gj, sigma, t1).map_err(invalid)?;
    let mc = misranking_monte_carlo(
        gi,
        gj,
        sigma,
        t1,
        trials,
        &mut u.seeds.rng_for("misranking"),
    )
    .map_err(invalid)?;
    let p = mc.probability;
    let mut out = BTreeMap::new();
    out.insert("misranking_bound".into(), bound);
    out.insert("misranking_mc".into(), p);
    out.insert("misranking_excess".into(), p - bound);
    out.insert(
        "misranking_mc_se".into(),
        (p * (1.0 - p) / trials as f64).sqrt(),
    );
    // The union bound after Prop. 5.3 (L90-L91), only when asked for (its own stream):
    // `set_k` coordinates at g_i and `set_p - set_k` at g_j, `set_trials` draws.
    if u.wants(&["support_miss_mc", "support_miss_mc_se"]) {
        let (k, p) = (u.count("set_k")?, u.count("set_p")?);
        let set_trials = u.count("set_trials")?;
        let miss = support_miss_monte_carlo(
            gi,
            gj,
            sigma,
            t1,
            k,
            p,
            set_trials,
            &mut u.seeds.rng_for("support-miss"),
        )
        .map_err(invalid)?;
        let q = miss.probability;
        out.insert("support_miss_mc".into(), q);
        out.insert(
            "support_miss_mc_se".into(),
            (q * (1.0 - q) / set_trials as f64).sqrt(),
        );
    }
    // Lemma 5.2, only when asked for (its own stream, so Prop. 5.3's draws are unchanged):
    // both coordinates' mean scores against g^2, the larger |z|.
    if u.wants(&["score_bias_z", "score_unbiased"]) {
        let mut rng = u.seeds.rng_for("scores");
        let floor = u.var_or("score_floor", 1.0);
        let mut worst = 0.0f64;
        for g in [gi, gj] {
            let (mean, se) =
                score_mean_monte_carlo(g, sigma, t1, trials, floor, &mut rng).map_err(invalid)?;
            let z = if se > 0.0 { (mean - g * g) / se } else { 0.0 };
            if z.abs() >= worst.abs() {
                worst = z;
            }
        }
        out.insert("score_bias_z".into(), worst);
        out.insert(
            "score_unbiased".into(),
            f64::from(u8::from(worst.abs() <= 5.0)),
        );
    }
    Ok(out)
}

fn method(s: &str) -> Method {
    match s {
        "tp-rand" => Method::TpRand,
        "dp-sgd" => Method::DpSgd,
        "on-topk" => Method::OnTopK,
        "on-rand" => Method::OnRand,
        _ => Method::TpTopK,
    }
}

/// Everything a unit's [`Tuner`] reads besides the unit's seed path: the data set (its
/// option, the planted task's parameters, the digits' test share) and the tuning (its
/// option, grid and validation share). Runs on the same tuner with the same
/// configuration and recipe give the same bits (what [`super::shared`] keys on).
fn data_key(u: &UnitInput) -> String {
    let var = |name: &str| u.vars.get(name).map(|v| v.to_bits());
    format!(
        "data={} planted={:?} test_fraction={:?} tune={} grid={:?} validation_fraction={:?}",
        u.option("data"),
        super::tp_topk_planted::planted_spec(u),
        var("test_fraction"),
        u.option("tune"),
        [
            "tune_lr_min",
            "tune_lr_max",
            "tune_lr_points",
            "tune_clip_min",
            "tune_clip_max",
            "tune_clip_points",
        ]
        .map(var),
        var("validation_fraction"),
    )
}

/// One run of a method and its metrics (module docs).
fn train(u: &UnitInput) -> Result<BTreeMap<String, f64>, SystemError> {
    let epsilon = u.var("epsilon")?;
    let model = match u.option("model") {
        "mlp" => ModelKind::Mlp {
            hidden: u.var_or("hidden", 32.0) as usize,
            activation: if u.option("activation") == "relu" {
                Activation::Relu
            } else {
                Activation::Tanh
            },
        },
        _ => ModelKind::Logreg,
    };
    let mut data_rng = u.seeds.rng_for("data");
    let data = match u.option("data") {
        "synthetic" => Classification::synthetic(&SyntheticSpec::default(), &mut data_rng),
        "planted" => {
            Classification::planted(&super::tp_topk_planted::planted_spec(u), &mut data_rng)
        }
        _ => Classification::digits(u.var_or("test_fraction", 0.2), &mut data_rng),
    }
    .map_err(invalid)?;
    let params = crate::train::dpsgd::Model::new(model, data.features(), data.classes).num_params();

    let mut cfg = MethodConfig::new(
        method(u.option("method")),
        model,
        u.var_or("calibration_epsilon", epsilon),
    );
    cfg.delta = u.var_or("delta", cfg.delta);
    cfg.active_ratio = u.var_or("active_ratio", cfg.active_ratio);
    if let Some(&k) = u.vars.get("k") {
        if k > params as f64 {
            return Err(invalid(format!("k = {k} exceeds P = {params}")));
        }
        cfg.active_ratio = ((k + 0.5) / params as f64).min(1.0);
    }
    cfg.epochs = u.var_or("epochs", cfg.epochs as f64) as usize;
    cfg.phase1_epochs = match u.vars.get("phase1_epochs") {
        Some(&e) => e as usize,
        None => ((0.3 * cfg.epochs as f64).round() as usize)
            .clamp(1, cfg.epochs.saturating_sub(1).max(1)),
    };
    cfg.budget_split = u.var_or("budget_split", cfg.budget_split);
    cfg.batch_size = u.var_or("batch", cfg.batch_size);
    cfg.clip = u.var_or("clip", cfg.clip);
    cfg.clip_phase2 = u.var_or("clip_phase2", cfg.clip);
    cfg.lr = u.var_or("lr", cfg.lr);

    let recipe = super::tp_topk_planted::recipe(u);
    // Option tune (tp_topk_tuning): under `none` one run at (lr, clip) on all of `data`.
    let tuner = Tuner::new(data, u, u.seeds.child("run"))?;
    let n = tuner.data().train_y.len();
    let own = tuner.method(&cfg, &recipe)?;
    let run = &own.run;
    let mut out = BTreeMap::new();
    out.insert("test_accuracy".into(), run.test_accuracy);
    out.insert("train_accuracy".into(), run.train_accuracy);
    out.insert("selected_lr".into(), own.best.lr);
    out.insert("selected_clip".into(), own.best.clip);
    out.insert(
        "selected_at_edge".into(),
        f64::from(u8::from(own.best.at_edge)),
    );
    match u.option("compare") {
        "ranking" => super::tp_topk_planted::ranking(&tuner, &cfg, u.recipe, &own, &mut out)?,
        "center" => super::tp_topk_planted::center(
            u,
            &data_key(u),
            &tuner,
            &cfg,
            epsilon,
            u.recipe,
            &own,
            &mut out,
        )?,
        _ => {}
    }
    if u.wants(&["dense_ceiling_accuracy", "dense_ceiling_gap"]) {
        let ceiling = tuner.ceiling(&cfg)?;
        out.insert("dense_ceiling_accuracy".into(), ceiling);
        if let Some(dense) = out.get("dense_accuracy").copied() {
            out.insert("dense_ceiling_gap".into(), ceiling - dense);
        }
    }
    privacy_metrics(
        run,
        &cfg,
        n,
        u.option("accountant") == "max",
        &u.recipe.accounting,
        u.wants(&["epsilon_pld_lower", "epsilon_pld_upper", "epsilon_pld_gap"]),
        &mut out,
    )?;
    noise_metrics(run, &mut out)?;
    support_metrics(run, &mut out);
    Ok(out)
}
