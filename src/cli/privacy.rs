//! `dpclaims account`, `dpclaims calibrate`, `dpclaims audit`.
use clap::Args;

/// Arguments of `dpclaims account` (to be completed by the privacy work).
#[derive(Args, Debug)]
pub struct AccountArgs {}

/// Arguments of `dpclaims calibrate` (to be completed by the privacy work).
#[derive(Args, Debug)]
pub struct CalibrateArgs {}

/// Arguments of `dpclaims audit` (to be completed by the privacy work).
#[derive(Args, Debug)]
pub struct AuditArgs {}

pub fn account(_args: &AccountArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("`account` is not available yet")
}

pub fn calibrate(_args: &CalibrateArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("`calibrate` is not available yet")
}

pub fn audit(_args: &AuditArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("`audit` is not available yet")
}
