//! The privacy plan of a run: each phase's steps and noise multiplier, calibrated to
//! the target epsilon with the RDP accountant — one phase ([`calibrate`]) for DP-SGD and
//! the online methods, two ([`calibrate_two_phase`], the budget split rule) for
//! TP-TopK and TP-Rand — and the step parameters each phase runs with. The run checks
//! its ledger against this plan.
use super::config::MethodConfig;
use super::mechanism::StepParams;
use super::outcome::PhaseReport;
use super::DpSgdError;
use crate::privacy::{calibrate, calibrate_two_phase, Accountant, PhasePlan};
use crate::train::Recipe;

/// The plan of a run: the privacy segments and their step parameters.
pub(super) struct Plan {
    pub(super) phases: Vec<(PhaseReport, StepParams)>,
}

pub(super) fn plan(
    cfg: &MethodConfig,
    q: f64,
    spe: usize,
    recipe: &Recipe,
) -> Result<Plan, DpSgdError> {
    let total = (cfg.epochs * spe) as u64;
    let step = |z: f64, clip: f64| StepParams {
        sampling_rate: q,
        clip,
        noise_multiplier: z,
        lr: cfg.lr,
        recipe: recipe.dpsgd,
    };
    let report = |name, steps, z, clip| PhaseReport {
        name,
        steps,
        sampling_rate: q,
        noise_multiplier: z,
        clip,
        epsilon_alone: f64::NAN,
    };
    let phases = if cfg.method.is_two_phase() {
        let t1 = (cfg.phase1_epochs * spe) as u64;
        let t2 = total - t1;
        let cal = calibrate_two_phase(
            Accountant::Rdp,
            cfg.epsilon,
            cfg.delta,
            cfg.budget_split,
            PhasePlan {
                sampling_rate: q,
                steps: t1,
            },
            PhasePlan {
                sampling_rate: q,
                steps: t2,
            },
            &recipe.accounting,
        )?;
        let (z1, z2) = (cal.noise_multiplier_1, cal.noise_multiplier_2);
        vec![
            (report("warm-up", t1, z1, cfg.clip), step(z1, cfg.clip)),
            (
                report("support", t2, z2, cfg.clip_phase2),
                step(z2, cfg.clip_phase2),
            ),
        ]
    } else {
        let cal = calibrate(
            Accountant::Rdp,
            cfg.epsilon,
            cfg.delta,
            q,
            total,
            &recipe.accounting,
        )?;
        let z = cal.noise_multiplier;
        let name = if cfg.method.is_online() {
            "online"
        } else {
            "dense"
        };
        vec![(report(name, total, z, cfg.clip), step(z, cfg.clip))]
    };
    Ok(Plan { phases })
}
