//! `dpclaims fig2`: the privacy-for-free Fig. 2 reproduction (CSV + Markdown + SVG).
use crate::figures::{self, fig2};
use crate::spec::Profile;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct Fig2Args {
    /// quick: a coarse version (d = 20, n = 200) in seconds; full: the paper's sizes
    /// (d = 100, n = 2000, p up to 100 000, the 1200-cell heat map).
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Master seed.
    #[arg(long, default_value_t = 0, env = "DPCLAIMS_SEED")]
    pub seed: u64,
    /// Override the number of seeds of panels 1-3.
    #[arg(long)]
    pub seeds: Option<usize>,
    /// Directory the files are written to.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Run nothing: re-draw the heat-map SVGs from `<out>/fig2-heatmap.csv` of an earlier
    /// run of the same profile (after a change of the drawing).
    #[arg(long)]
    pub replot: bool,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
}

pub fn run(a: &Fig2Args) -> anyhow::Result<ExitCode> {
    super::alias::guard(&[super::alias::Output::Dir("--out", &a.out)], Vec::new())?;
    let mut cfg = fig2::Fig2Config::new(a.profile, a.seed);
    if a.replot {
        let n = figures::replot_heat_maps(&a.out, &cfg)?;
        println!(
            "fig2 --replot: {n} heat-map cells re-drawn into {}",
            a.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(s) = a.seeds {
        anyhow::ensure!(s >= 1, "--seeds must be at least 1");
        // Panels 1-3 cost about 20 min per seed at the full profile on 2 cores (the
        // heat map is one seed's), a few seconds at quick: refuse absurd seed counts
        // before the job list is built.
        let per_seed = match a.profile {
            crate::spec::Profile::Full => 2400.0,
            crate::spec::Profile::Quick => 10.0,
        };
        a.budget.budget().check_command(
            "fig2",
            crate::systems::Cost {
                seconds: per_seed * s as f64,
                bytes: 2e9 + 1e4 * s as f64,
            },
            2.0,
            "--seeds",
            format!("{s} seeds"),
        )?;
        cfg.seeds = s;
    }
    crate::report::prepare_output_dir(&a.out)?;
    let total = fig2::job_count(&cfg) as u64;
    let bar = super::progress::Progress::new(
        total,
        "fig2 {msg:16} [{bar:40}] {pos}/{len} (seed, p) jobs, {elapsed} (eta {eta})",
        "(seed, p) jobs",
    )?;
    let tick = |label: &str| {
        bar.set_message(label);
        bar.inc(1);
    };
    let res = fig2::run(&cfg, &tick)?;
    bar.finish_and_clear();
    figures::write_fig2(&a.out, &cfg, &res)
        .map_err(|e| anyhow::anyhow!("writing Fig. 2 files to {}: {e}", a.out.display()))?;
    println!(
        "fig2 ({} profile, seed {}): {} loss-vs-p rows, {} loss-vs-T rows, {} heat-map cells; files in {}",
        cfg.profile,
        cfg.seed,
        res.loss_vs_p.len(),
        res.loss_vs_t.len(),
        res.heatmap.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
