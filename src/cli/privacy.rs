//! `dpclaims account`, `dpclaims calibrate`, `dpclaims audit`.
//!
//! Thin wrappers: parse the arguments, call [`crate::privacy`], print one line (or
//! one JSON document with `--json`). Library errors (bad q, delta, z, steps) come back
//! as `Err` and are printed by `cli::main` as `error: ...` with exit status 2; a
//! malformed `--phase` is rejected by clap (also exit status 2).
use crate::privacy::{self, Accountant, Phase};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::process::ExitCode;

/// Accountant choice on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AccountantArg {
    /// Exact Gaussian DP (full batch only: q = 1).
    Gdp,
    /// Rényi DP, Poisson-subsampled Gaussian, improved conversion.
    Rdp,
    /// Zero-concentrated DP (full batch only: q = 1).
    Zcdp,
}

impl From<AccountantArg> for Accountant {
    fn from(a: AccountantArg) -> Self {
        match a {
            AccountantArg::Gdp => Accountant::Gdp,
            AccountantArg::Rdp => Accountant::Rdp,
            AccountantArg::Zcdp => Accountant::Zcdp,
        }
    }
}

/// Parse `Q,Z,STEPS` (e.g. `0.01,1.1,6000`). Values are range-checked by the library.
fn parse_phase(s: &str) -> Result<Phase, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(format!(
            "expected Q,Z,STEPS (three comma-separated values), got `{s}`"
        ));
    }
    let q: f64 = parts[0]
        .parse()
        .map_err(|_| format!("sampling rate Q `{}` is not a number", parts[0]))?;
    let z: f64 = parts[1]
        .parse()
        .map_err(|_| format!("noise multiplier Z `{}` is not a number", parts[1]))?;
    let steps: u64 = parts[2]
        .parse()
        .map_err(|_| format!("STEPS `{}` is not a non-negative integer", parts[2]))?;
    Ok(Phase::new(q, z, steps))
}

/// Arguments of `dpclaims account`.
#[derive(Args, Debug)]
pub struct AccountArgs {
    /// Accountant: gdp (exact, q = 1 only), rdp, zcdp (q = 1 only).
    #[arg(long, value_enum)]
    pub accountant: AccountantArg,
    /// Target delta, in (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    pub delta: f64,
    /// A phase `Q,Z,STEPS`: sampling rate, noise multiplier, number of steps.
    /// Repeat for a composition of phases.
    #[arg(
        long = "phase",
        value_name = "Q,Z,STEPS",
        value_parser = parse_phase,
        required = true,
        allow_hyphen_values = true
    )]
    pub phases: Vec<Phase>,
    /// Print one JSON document `{"epsilon", "accountant", "order"}` on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `dpclaims calibrate`.
#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Accountant: gdp (exact, q = 1 only), rdp, zcdp (q = 1 only).
    #[arg(long, value_enum)]
    pub accountant: AccountantArg,
    /// Target delta, in (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    pub delta: f64,
    /// Target epsilon (> 0).
    #[arg(long, allow_negative_numbers = true)]
    pub target_epsilon: f64,
    /// Poisson sampling rate q, in (0, 1].
    #[arg(long, allow_negative_numbers = true)]
    pub sampling_rate: f64,
    /// Number of steps.
    #[arg(long)]
    pub steps: u64,
    /// Print one JSON document `{"noise_multiplier", "epsilon"}` on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `dpclaims audit` (to be completed by the privacy work).
#[derive(Args, Debug)]
pub struct AuditArgs {}

#[derive(Serialize)]
struct AccountOutput {
    epsilon: f64,
    accountant: &'static str,
    order: Option<f64>,
}

pub fn account(args: &AccountArgs) -> anyhow::Result<ExitCode> {
    let acc = Accountant::from(args.accountant);
    let out = privacy::epsilon(acc, &args.phases, args.delta)?;
    if args.json {
        let doc = AccountOutput {
            epsilon: out.epsilon,
            accountant: acc.name(),
            order: out.order,
        };
        println!("{}", serde_json::to_string(&doc)?);
    } else {
        match out.order {
            Some(order) => println!(
                "epsilon = {} at delta = {} ({acc}, optimal order {order})",
                out.epsilon, args.delta
            ),
            None => println!(
                "epsilon = {} at delta = {} ({acc})",
                out.epsilon, args.delta
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn calibrate(args: &CalibrateArgs) -> anyhow::Result<ExitCode> {
    let acc = Accountant::from(args.accountant);
    let out = privacy::calibrate(
        acc,
        args.target_epsilon,
        args.delta,
        args.sampling_rate,
        args.steps,
    )?;
    if args.json {
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!(
            "noise multiplier = {} (epsilon = {} <= {} at delta = {}, {acc})",
            out.noise_multiplier, out.epsilon, args.target_epsilon, args.delta
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn audit(_args: &AuditArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`audit` is not available yet")
}
