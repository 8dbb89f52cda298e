//! `dpclaims stability`: the claim suite at K master seeds, and how often each verdict
//! came out each way (`reports/STABILITY.md`). Each seed's units run in parallel like
//! `dpclaims run`; a seed's verdicts do not depend on which other seeds run.
use super::run::default_paths;
use crate::report::stability::{SeedVerdicts, Stability};
use crate::spec::{self, Profile};
use crate::train::Recipe;
use crate::{execute, plan};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct StabilityArgs {
    /// Claim files or directories (default: claims/).
    pub paths: Vec<PathBuf>,
    /// Number of master seeds.
    #[arg(long, default_value_t = 20)]
    pub seeds: u64,
    /// The first master seed (the reference); seeds are first..first+K-1.
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Directory STABILITY.md is written to.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Also write every seed's verdict rows (estimate, interval, prediction, verdict) to
    /// this file as JSON lines, one per (seed, claim, prediction, variant).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
    /// Each seed's units are cached under their own keys (the seed is in the key).
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

pub fn run(a: &StabilityArgs) -> anyhow::Result<ExitCode> {
    a.cache.with(|| run_seeds(a))
}

fn run_seeds(a: &StabilityArgs) -> anyhow::Result<ExitCode> {
    if a.seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    let claims = spec::load_claims(&default_paths(&a.paths))?;
    a.budget.check(&claims, a.profile, a.seeds as f64, 1.0)?;
    crate::report::prepare_output_dir(&a.out)?;
    let per_seed: usize = claims.iter().map(|c| plan::unit_count(c, a.profile)).sum();
    let bar = super::progress::Progress::units(per_seed * a.seeds as usize)?;
    let mut seeds = Vec::new();
    let mut lines = String::new();
    for seed in a.first_seed..a.first_seed + a.seeds {
        let start = std::time::Instant::now();
        let mut outcomes = Vec::new();
        for c in &claims {
            bar.set_message(format!("seed {seed}: {}", c.id));
            let tick = || bar.inc(1);
            outcomes.push(execute::run_claim(
                c,
                a.profile,
                seed,
                &Recipe::PAPER,
                &tick,
            )?);
        }
        if a.json.is_some() {
            for o in &outcomes {
                for r in &o.results {
                    let row = serde_json::json!({"seed": seed, "claim": o.claim.id, "result": r});
                    lines.push_str(&row.to_string());
                    lines.push('\n');
                }
            }
        }
        let sv = SeedVerdicts::of(seed, &outcomes);
        let same = seeds
            .first()
            .map(|f: &SeedVerdicts| {
                f.rows
                    .iter()
                    .all(|(k, v)| sv.rows.get(k).map(|s| s.verdict) == Some(v.verdict))
            })
            .unwrap_or(true);
        bar.suspend(|| {
            eprintln!(
                "seed {seed}: {:.0} s, {} problems, verdicts {} the reference seed's",
                start.elapsed().as_secs_f64(),
                sv.problems.len(),
                if same { "equal to" } else { "differ from" }
            )
        });
        seeds.push(sv);
    }
    bar.finish_and_clear();
    let st = Stability {
        profile: a.profile.to_string(),
        seeds,
    };
    let path = a.out.join("STABILITY.md");
    crate::report::write_atomic(&path, st.markdown().as_bytes())
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    if let Some(j) = &a.json {
        crate::report::write_atomic(j, lines.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", j.display()))?;
    }
    let k = st.seeds.len();
    let min_caught = st.controls().iter().map(|c| c.1).min().unwrap_or(k);
    println!(
        "{k} seeds: {} holds<->refuted flips; worst control caught at {min_caught}/{k}; suite identical to seed {} at {}/{k}; written to {}",
        st.holds_refuted_flips().len(),
        a.first_seed,
        st.identical_to_reference(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
