//! The `dpclaims` command line: a thin dispatcher over the library.
//!
//! Exit status: 0 success; 1 for `run`/`merge` when the regression baseline changed, a
//! negative control was not caught, a main variant was refuted without a finding or a
//! tolerance is vacuous; 2 bad input or a run that could not complete (the message
//! names the file, field or sweep point).
use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod conclude;
mod demo;
mod faults;
mod fig2;
mod perf;
mod privacy;
mod run;
mod shard;
mod slurm;
mod stability;
mod train;

#[derive(Parser, Debug)]
#[command(
    name = "dpclaims",
    version,
    about = "Executable checks of DP learning theorems"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the claims: ids, titles, sources.
    List(run::ListArgs),
    /// Run claims, judge them, write reports (exit 1 if the regression baseline changed,
    /// a negative control is not caught or a main variant is refuted without a finding).
    Run(run::RunArgs),
    /// The suite at K master seeds: how often each verdict comes out each way
    /// (reports/STABILITY.md).
    Stability(stability::StabilityArgs),
    /// Merge the partial files of a sharded run (`run --shard`): the same reports,
    /// summary and exit status as the unsharded run.
    Merge(shard::MergeArgs),
    /// Print a Slurm script running claims as a job array of shards plus the merge.
    Slurm(slurm::SlurmArgs),
    /// One DP-GD run on the random-features model: train/test loss and clip fraction.
    Demo(demo::DemoArgs),
    /// Privacy of a composition of (sub)sampled Gaussian phases.
    Account(privacy::AccountArgs),
    /// Smallest noise multiplier meeting a target epsilon.
    Calibrate(privacy::CalibrateArgs),
    /// Empirical privacy audit: a lower bound on epsilon from a canary attack.
    Audit(privacy::AuditArgs),
    /// Reproduce privacy-for-free Fig. 2 (panels 1-4) as CSV, Markdown and SVG.
    Fig2(fig2::Fig2Args),
    /// One DP-SGD / TP-TopK / TP-Rand / ON-TopK / ON-Rand run: accuracy, epsilon, diagnostics.
    Train(train::TrainArgs),
    /// Measured speed of the DP-GD kernels in one process (direct step vs GEMV floor).
    Perf(perf::PerfArgs),
    /// Fault matrix: the claim suite on each injected fault of the training core or the
    /// accountant; writes reports/FAULTS.md (exit 1 if a fault goes undetected).
    Faults(faults::FaultsArgs),
}

/// Parse the arguments, run the command, map errors to exit status 2.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    crate::linalg::pin_blas_threads();
    let result = match &cli.command {
        Command::List(a) => run::list(a),
        Command::Run(a) => run::run(a),
        Command::Stability(a) => stability::run(a),
        Command::Merge(a) => shard::merge(a),
        Command::Slurm(a) => slurm::slurm(a),
        Command::Demo(a) => demo::run(a),
        Command::Account(a) => privacy::account(a),
        Command::Calibrate(a) => privacy::calibrate(a),
        Command::Audit(a) => privacy::audit(a),
        Command::Train(a) => train::run(a),
        Command::Fig2(a) => fig2::run(a),
        Command::Perf(a) => perf::run(a),
        Command::Faults(a) => faults::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Spec input quoted anywhere in the chain is clipped (a 200 KB value gives a
            // one-line message).
            eprintln!("error: {}", crate::spec::echo::clip_echoes(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}
