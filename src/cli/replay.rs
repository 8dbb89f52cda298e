//! `dpclaims run --unit ID`: one work unit replayed with its seed
//! ([`crate::pipeline::replay`]), its metrics printed.
use crate::spec::{Claim, Profile};
use std::process::ExitCode;

/// Replays the unit `id` of one of `claims` and prints its metrics (`json`: one JSON
/// object).
pub fn replay(
    claims: &[Claim],
    id: &str,
    profile: Profile,
    seed: u64,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (system, metrics) = crate::pipeline::replay::replay_unit(claims, id, profile, seed)?;
    if json {
        let doc = serde_json::json!({
            "unit": id,
            "profile": profile.to_string(),
            "seed": seed,
            "system": system,
            "metrics": metrics,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!("unit {id} (profile {profile}, master seed {seed}, system {system}):");
        for (k, v) in &metrics {
            println!("  {k} = {v:e}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
