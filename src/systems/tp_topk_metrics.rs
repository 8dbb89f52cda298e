//! The metrics of the `tp_topk` system's run of a method (mode `train`; the module docs of
//! [`super::tp_topk`] define them): privacy against the schedule and the independent
//! accountants (Sec. 4, Theorem 4.1), the phase-2 noise energy (Sec. 3.2), support quality
//! at the first selection (Sec. 7.4).
use super::{MetricInfo, SystemError};
use crate::privacy::pld::pld_epsilon;
use crate::privacy::rdp_quadrature::epsilon_subsampled_gaussian;
use crate::privacy::{default_orders, rdp_curve, AccountantRecipe, Phase};
use crate::train::dpsgd::{Method, MethodConfig, MethodRun};
use std::collections::BTreeMap;

/// Target width of the PLD bracket of the privacy metrics.
const PLD_WIDTH: f64 = 0.01;

fn invalid(e: impl std::fmt::Display) -> SystemError {
    SystemError::Invalid(e.to_string())
}

/// `epsilon_spent` (the run's ledger) against `epsilon_composed`, recomputed from the
/// schedule (Theorem 4.1: RDP curves of the phases add), and against
/// `epsilon_independent`, the schedule through the independent quadrature accountant.
pub(super) fn privacy_metrics(
    run: &MethodRun,
    cfg: &MethodConfig,
    n: usize,
    by_max: bool,
    recipe: &AccountantRecipe,
    with_pld: bool,
    out: &mut BTreeMap<String, f64>,
) -> Result<(), SystemError> {
    let q = cfg.batch_size / n as f64;
    let spe = ((n as f64 / cfg.batch_size).round() as usize).max(1);
    let total = (cfg.epochs * spe) as u64;
    let z = &run.noise_multipliers;
    let phases: Vec<Phase> = if cfg.method.is_two_phase() {
        let t1 = (cfg.phase1_epochs * spe) as u64;
        if z.len() != 2 {
            return Err(invalid(format!(
                "two-phase run reported {} noise multipliers",
                z.len()
            )));
        }
        vec![Phase::new(q, z[0], t1), Phase::new(q, z[1], total - t1)]
    } else {
        vec![Phase::new(q, z[0], total)]
    };
    let orders = default_orders();
    let mut curve = vec![if by_max { f64::NEG_INFINITY } else { 0.0 }; orders.len()];
    for ph in &phases {
        for (c, r) in curve.iter_mut().zip(rdp_curve(&[*ph], &orders, recipe)?) {
            *c = if by_max { c.max(r) } else { *c + r };
        }
    }
    let (composed, _) = recipe.convert(&orders, &curve, cfg.delta)?;
    let (phase1, _) = recipe.convert(
        &orders,
        &rdp_curve(&phases[..1], &orders, recipe)?,
        cfg.delta,
    )?;
    // The independent check: the same schedule, no recipe, no `by_max`.
    let schedule: Vec<(f64, f64, u64)> = phases
        .iter()
        .map(|p| (p.sampling_rate, p.noise_multiplier, p.steps))
        .collect();
    let independent = epsilon_subsampled_gaussian(&schedule, cfg.delta)?;
    let spent = run.privacy.epsilon;
    out.insert("epsilon_independent".into(), independent);
    out.insert("epsilon_independent_gap".into(), spent - independent);
    out.insert("epsilon_spent".into(), spent);
    out.insert("epsilon_composed".into(), composed);
    out.insert("epsilon_error".into(), (spent - composed).abs());
    out.insert("epsilon_phase1".into(), phase1);
    if with_pld {
        // A second independent computation: the tight (PLD) epsilon of the schedule,
        // as a certified bracket; the RDP accountant must never be below its lower end.
        let b = pld_epsilon(&phases, cfg.delta, PLD_WIDTH)?;
        out.insert("epsilon_pld_lower".into(), b.epsilon_lower);
        out.insert("epsilon_pld_upper".into(), b.epsilon_upper);
        out.insert("epsilon_pld_gap".into(), spent - b.epsilon_lower);
    }
    out.insert(
        "noise_multiplier_2".into(),
        *z.last().expect("one phase at least"),
    );
    Ok(())
}

/// Noise energy of the phase-2 segment (Sec. 3.2).
pub(super) fn noise_metrics(
    run: &MethodRun,
    out: &mut BTreeMap<String, f64>,
) -> Result<(), SystemError> {
    let name = match run.method {
        Method::TpTopK | Method::TpRand => "support",
        Method::OnTopK | Method::OnRand => "online-sparse",
        Method::DpSgd => "dense",
    };
    let seg = run
        .diagnostics
        .noise_energy
        .iter()
        .find(|s| s.segment == name)
        .ok_or_else(|| invalid(format!("no `{name}` segment in the run")))?;
    let p = run.diagnostics.params as f64;
    let dense = seg.expected * p / seg.active as f64;
    let se = (2.0 / (seg.active * seg.steps) as f64).sqrt();
    out.insert("phase2_noise_energy".into(), seg.measured);
    out.insert("phase2_noise_energy_expected".into(), seg.expected);
    out.insert("dense_noise_energy".into(), dense);
    out.insert("noise_energy_ratio".into(), seg.measured / dense);
    out.insert(
        "noise_energy_abs_z".into(),
        (seg.measured / seg.expected - 1.0).abs() / se,
    );
    Ok(())
}

/// Support quality at the first support selection (Sec. 7.4). Dense DP-SGD selects no
/// support; its support is all of `0..P`, whose capture is 1 (= k/P).
pub(super) fn support_metrics(run: &MethodRun, out: &mut BTreeMap<String, f64>) {
    let d = &run.diagnostics;
    let rand = d.random_expectation;
    let gamma = d.gamma.unwrap_or(1.0);
    let proxy = d.proxy_concentration.unwrap_or(1.0);
    out.insert("active_k".into(), d.active as f64);
    out.insert("params_p".into(), d.params as f64);
    out.insert("gamma".into(), gamma);
    out.insert("gamma_best".into(), d.gamma_best.unwrap_or(1.0));
    out.insert("random_expectation".into(), rand);
    out.insert("gamma_advantage".into(), gamma - rand);
    out.insert("gamma_ratio".into(), gamma / rand);
    out.insert(
        "gamma_beats_random".into(),
        f64::from(u8::from(gamma > rand)),
    );
    out.insert("proxy_concentration".into(), proxy);
    let traj = d.gamma_trajectory.unwrap_or(1.0);
    out.insert("gamma_trajectory".into(), traj);
    out.insert("gamma_trajectory_ratio".into(), traj / rand);
    out.insert(
        "gamma_trajectory_beats_random".into(),
        f64::from(u8::from(traj > rand)),
    );
    out.insert("proxy_advantage".into(), proxy - rand);
}

const fn m(name: &'static str, doc: &'static str) -> MetricInfo {
    MetricInfo { name, doc }
}

/// The metrics that draw nothing from the unit's seed: the accountants' epsilons of the
/// schedule (the noise multipliers are calibrated from it), and the printed tables.
pub(super) const EXACT: &[&str] = &[
    "epsilon_spent",
    "epsilon_composed",
    "epsilon_error",
    "epsilon_independent",
    "epsilon_independent_gap",
    "epsilon_pld_lower",
    "epsilon_pld_upper",
    "epsilon_pld_gap",
    "epsilon_phase1",
    "noise_multiplier_2",
    "gap_min_drop",
    "gap_first",
    "gap_last",
    "ba_residual",
    "topk_auc_lead",
    "topk_ba_lead",
    "auc_margin_ratio",
    "ba_margin_ratio",
    "sparse_se_gain",
];

pub(super) const METRICS: &[MetricInfo] = &[
    m("test_accuracy", "test accuracy of the final parameters"),
    m("train_accuracy", "training accuracy of the final parameters (tune validation: on the training split without the validation part)"),
    m("epsilon_spent", "epsilon the run reports: RDP accountant on its privacy ledger"),
    m(
        "epsilon_composed",
        "epsilon recomputed from the schedule (q, T1, T2, the run's z): per-phase RDP curves composed (option accountant), improved conversion",
    ),
    m("epsilon_error", "|epsilon_spent - epsilon_composed|"),
    m(
        "epsilon_independent",
        "epsilon of the same schedule (q, z1, T1, z2, T2) by the independent quadrature accountant (privacy::rdp_quadrature): no recipe, no option accountant, its own order grid (1.01..10 by 0.01, 11..256)",
    ),
    m(
        "epsilon_independent_gap",
        "epsilon_spent - epsilon_independent (signed; about +1e-3 relative when correct: the independent grid of orders is finer)",
    ),
    m(
        "epsilon_pld_lower",
        "lower end of the certified PLD bracket (privacy::pld, width 0.01) of the schedule (q, z1, T1, z2, T2): the exact epsilon of the composed subsampled Gaussian is at least this",
    ),
    m(
        "epsilon_pld_upper",
        "upper end of the certified PLD bracket of the same schedule: the exact epsilon is at most this",
    ),
    m(
        "epsilon_pld_gap",
        "epsilon_spent - epsilon_pld_lower (>= 0 when the RDP accountant is a sound upper bound)",
    ),
    m("epsilon_phase1", "epsilon of the warm-up alone (two-phase; else of the whole run)"),
    m("noise_multiplier_2", "noise multiplier of phase 2 (the only one for one-phase methods)"),
    m(
        "phase2_noise_energy",
        "mean over the phase-2 steps (two-phase: support; online: epochs >= 2; dense: all) of the injected ||m o z C xi||^2/(qN)^2",
    ),
    m("phase2_noise_energy_expected", "k (z2 C2/(qN))^2 (P for dense DP-SGD)"),
    m("dense_noise_energy", "P (z2 C2/(qN))^2: a dense step at phase 2's (z2, C2)"),
    m("noise_energy_ratio", "phase2_noise_energy / dense_noise_energy (paper: r, precisely k/P)"),
    m(
        "noise_energy_abs_z",
        "|measured/expected - 1| / sqrt(2/(k T2)): the deviation in standard errors (k T2 chi-square(1) draws)",
    ),
    m("active_k", "k (P for dense DP-SGD)"),
    m("params_p", "number of parameters P"),
    m(
        "gamma",
        "oracle energy capture ||m o g||^2/||g||^2 of the first selected support (held-out noiseless gradient; 1 for dense DP-SGD)",
    ),
    m("gamma_best", "energy capture of the best support of size k (ceiling of gamma)"),
    m("random_expectation", "k/P: expected gamma of a uniformly random support"),
    m("gamma_advantage", "gamma - k/P"),
    m("gamma_ratio", "gamma / (k/P)"),
    m("gamma_beats_random", "1 if gamma > k/P, else 0 (an event per run)"),
    m("proxy_concentration", "DP-visible proxy concentration of the selected support (Sec. 7.4)"),
    m("proxy_advantage", "proxy_concentration - k/P"),
    m("misranking_bound", "Prop. 5.3: 4 sigma^2 (g_i^2 + g_j^2 + sigma^2) / (T1 (g_i^2 - g_j^2)^2)"),
    m("misranking_mc", "Monte Carlo estimate of P(s_j >= s_i) under the additive model"),
    m("misranking_excess", "misranking_mc - misranking_bound (> 0 violates Prop. 5.3)"),
    m("misranking_mc_se", "binomial standard error of misranking_mc"),
    m("onestep_restricted_error", "one-step: mean ||u_S - gbar||^2 over the trials (Prop. 5.1)"),
    m("onestep_dense_error", "one-step: mean ||u_[P] - gbar||^2 over the trials"),
    m("onestep_difference", "one-step: mean of restricted minus dense error"),
    m("onestep_difference_se", "one-step: its Monte Carlo standard error"),
    m("criterion_discarded", "one-step: ||P_{S^c} gbar||^2, discarded clipped-gradient energy"),
    m("criterion_saved", "one-step: (P - k) (z C/N)^2, noise energy saved"),
    m("criterion_margin", "one-step: criterion_discarded - criterion_saved (Prop. 5.1's prediction of the difference)"),
    m("onestep_residual_z", "one-step: (onestep_difference - criterion_margin) / se"),
    m("onestep_identity_holds", "one-step: 1 if |onestep_residual_z| <= 4 (an event per run)"),
    m("onestep_sign_agrees", "one-step: 1 if the measured difference has the criterion's sign"),
    m("restriction_predicted_better", "one-step: 1 if criterion_margin < 0"),
    m("restriction_measured_better", "one-step: 1 if onestep_difference < 0"),
    m("clip_order_term", "one-step: ||P_S(a_S - gbar)||^2, masking before clipping's addition to Prop. 5.1"),
    m("clip_bias_norm", "one-step: ||a_S - m o mean grad||, Lemma 6.4's left side"),
    m("clip_bias_bound", "one-step: mean (||m o grad l_i|| - C)_+, Lemma 6.4's right side"),
    m("clip_bias_excess", "one-step: clip_bias_norm - clip_bias_bound (> 0 violates Lemma 6.4)"),
    m("gamma_trajectory", "Def. 6.5: sum_t ||m o g_t||^2 / sum_t ||g_t||^2 over phase 2 (held-out noiseless gradients, each epoch; 1 if not two-phase)"),
    m("gamma_trajectory_ratio", "gamma_trajectory / (k/P)"),
    m("gamma_trajectory_beats_random", "1 if gamma_trajectory > k/P (Cor. 6.6's condition), else 0"),
    m("accuracy_ratio_vs_rand", "compare ranking: test_accuracy / rand_accuracy"),
    m("gap_vs_center", "compare center: test_accuracy - that of the split (0.3 epochs, rho 0.3)"),
    m("rand_accuracy", "compare ranking: TP-Rand's test accuracy on the same streams"),
    m("dense_accuracy", "compare ranking: dense DP-SGD's test accuracy on the same streams"),
    m("gap_vs_rand", "compare ranking: test_accuracy - rand_accuracy (paired)"),
    m("gap_vs_dense", "compare ranking: test_accuracy - dense_accuracy (paired)"),
    m("clipped_fraction", "one-step: share of examples whose full gradient is clipped; stationarity (logreg): share of (step, example) pairs with ||P_S g_i|| > C"),
    m("selected_lr", "train: learning rate of the method's selected cell (tune none: lr)"),
    m("selected_clip", "train: clipping norm C1 of the method's selected cell (tune none: clip)"),
    m("rand_selected_lr", "compare ranking: TP-Rand's selected learning rate"),
    m("dense_selected_lr", "compare ranking: dense DP-SGD's selected learning rate"),
    m("selected_at_edge", "train, tune validation: 1 if the method's selected cell is the first or last of a grid axis of at least 3 points (tp_topk_tuning), else 0; its mean is the share of units selected at the grid's edge"),
    m("rand_selected_at_edge", "compare ranking: selected_at_edge of TP-Rand's selection"),
    m("dense_selected_at_edge", "compare ranking: selected_at_edge of dense DP-SGD's selection"),
    m("premise_gap_vs_dense", "compare center: accuracy of the reference split (0.3, 0.3) minus dense DP-SGD's at the same target eps, data, streams and tuning (Table 4's premise: phase 2's restriction pays off)"),
    m(
        "dense_ceiling_accuracy",
        "train: test accuracy of non-private dense SGD (no clipping, no noise) on the same streams, its lr tuned on validation like the methods (tune none: at lr)",
    ),
    m("dense_ceiling_gap", "compare ranking: dense_ceiling_accuracy - dense_accuracy"),
    m(
        "gap_vs_rand_second",
        "compare ranking: gap_vs_rand with both methods at their second-best validation cell (tune none or one cell: gap_vs_rand)",
    ),
    m(
        "gap_vs_dense_second",
        "compare ranking: gap_vs_dense with both methods at their second-best validation cell (tune none or one cell: gap_vs_dense)",
    ),
    m("thm63_lhs", "stationarity: sum_t eta_t ||P_S grad F(theta_t)||^2 / sum_t eta_t, display (1)'s left side (Theorem 6.3)"),
    m("thm63_rhs", "stationarity: display (1)'s right side as derived from App. C.1 (train::dpsgd::stationarity): [4 (F0 - F*) + 3 sum eta ||b_t||^2 + 2 L sum eta^2 (G^2 + k sigma^2)] / sum eta"),
    m("thm63_margin", "stationarity: thm63_lhs - thm63_rhs (> 0 violates Theorem 6.3)"),
    m("thm63_ratio", "stationarity: thm63_lhs / thm63_rhs"),
    m("thm63_dp_share", "stationarity: the DP term 2 L k sigma^2 sum eta^2 / sum eta over thm63_rhs"),
    m("cor66_lhs", "stationarity: sum_t eta_t ||grad F(theta_t)||^2 / sum_t eta_t (Corollary 6.6's left side)"),
    m("cor66_rhs", "stationarity: thm63_rhs / gamma_path (Corollary 6.6's right side)"),
    m("cor66_margin", "stationarity: cor66_lhs - cor66_rhs (> 0 violates Corollary 6.6)"),
    m("cor66_ratio", "stationarity: cor66_lhs / cor66_rhs (per run equal to thm63_ratio: the corollary is Theorem 6.3 divided by Gamma)"),
    m("gamma_path", "stationarity: Definition 6.5's Gamma along the run, sum eta ||P_S grad F||^2 / sum eta ||grad F||^2"),
    m("gamma_path_ratio", "stationarity: gamma_path / (k/P)"),
    m("smoothness_l", "stationarity: the smoothness constant L of the problem"),
    m("step_l", "stationarity: eta L of the steps the run takes"),
    m("stationarity_final_gap", "stationarity: F(theta_T) - F* (logreg: the final training loss)"),
    m("lemma64_excess", "stationarity, logreg: max over steps of ||b_t|| - Lemma 6.4's bound mean_i (||P_S g_i|| - C)_+ (option lemma64_bound: jensen-reversed uses (mean_i ||P_S g_i|| - C)_+, a negative control)"),
    m("gap_min_drop", "printed-table (Table 3): the smallest fall of the TP-TopK - TP-Rand gap between neighbouring r (> 0: falls at every step)"),
    m("gap_first", "printed-table (Table 3): the gap at r = 0.2"),
    m("gap_last", "printed-table (Table 3): the gap at r = 0.8"),
    m("ba_residual", "printed-table (Table 5): |BA - (Se + Sp)/2| of a row"),
    m("topk_auc_lead", "printed-table (Table 5's sentences): TP-TopK's AUC minus the best other DP method's"),
    m("topk_ba_lead", "printed-table (Table 5's sentences): TP-TopK's balanced accuracy minus the best other DP method's"),
    m("auc_margin_ratio", "printed-table (Table 5's sentences): (Non-DP - TP-TopK AUC) / (Non-DP - DP Full AUC)"),
    m("ba_margin_ratio", "printed-table (Table 5's sentences): (Non-DP - TP-TopK BA) / (Non-DP - DP Full BA)"),
    m("sparse_se_gain", "printed-table (Table 5's sentences): min(Se TP-Rand, Se TP-TopK) - Se DP Full"),
    m("support_miss_mc", "misranking: Monte Carlo share of set_trials draws in which the top set_k of set_p scores (set_k coordinates at g_i, the rest at g_j) is not the oracle support (the union bound after Prop. 5.3)"),
    m("support_miss_mc_se", "misranking: binomial standard error of support_miss_mc"),
    m("score_bias_z", "misranking: (mean of the Monte Carlo scores s_j - g_j^2) / its standard error, the larger |z| of the two coordinates (Lemma 5.2)"),
    m("score_unbiased", "misranking: 1 if |score_bias_z| <= 5 (5 standard errors: about 1e-4 false alarms over the 160 means of an 80-point grid)"),
];
