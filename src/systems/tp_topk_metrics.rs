//! The metrics of the `tp_topk` system's run of a method (mode `train`; the module docs of
//! [`super::tp_topk`] define them): privacy against the schedule and the independent
//! accountants (Sec. 4, Theorem 4.1), the phase-2 noise energy (Sec. 3.2), support quality
//! at the first selection (Sec. 7.4).
use super::SystemError;
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
