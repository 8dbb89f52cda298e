//! `dpclaims demo`: one DP-GD run on the random-features model.
use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Master seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

pub fn run(_args: &DemoArgs) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
