//! A run of a set of claims on this machine: each claim through the loop of
//! [`super::looks`] in turn, the caller told of its progress by an [`Observer`].
use crate::judge::{ClaimOutcome, Tally};
use crate::report::junit::ClaimTime;
use crate::spec::{Claim, Profile};
use crate::train::Recipe;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a run tells its caller as it goes (the command line: a progress bar and the
/// verdict lines).
pub trait Observer: Sync {
    /// `claim` starts.
    fn claim_started(&self, claim: &Claim);
    /// One unit finished.
    fn unit_done(&self);
    /// `n` units of the last claim were not needed (a sequential sweep stopped early):
    /// the count of units planned is the worst case.
    fn units_not_needed(&self, n: usize);
    /// `outcome` is judged.
    fn claim_judged(&self, outcome: &ClaimOutcome);
    /// `--fail-fast` stopped the run after `claim` (`done` of `of` claims run).
    fn stopped_early(&self, claim: &Claim, done: usize, of: usize);
}

/// The judged claims of a run, their wall times (for JUnit only) and the ids of those
/// that fail the run.
pub struct Ran {
    pub outcomes: Vec<ClaimOutcome>,
    pub times: BTreeMap<String, ClaimTime>,
    pub failed: Vec<String>,
    /// `--fail-fast` stopped the run before its last claim: its outcomes are not the
    /// selection's, and the report set is not rewritten from them.
    pub stopped_early: bool,
}

/// The units `claims` plan at `profile` at most (every sweep at its maximum replicates).
pub fn unit_total(claims: &[Claim], profile: Profile) -> usize {
    claims
        .iter()
        .map(|c| crate::plan::unit_count(c, profile))
        .sum()
}

/// Starts and greets every external core before any unit of any claim runs.
/// With a result cache, each external core's start-up time is recorded there (the run
/// reports it and `plan` prices it, [`crate::execute::cache::history`]).
pub fn prepare_cores(claims: &[Claim]) -> anyhow::Result<()> {
    let cache = crate::execute::cache::active();
    for c in claims {
        let start = std::time::Instant::now();
        c.system
            .prepare()
            .map_err(|e| in_claim(c, anyhow::anyhow!("claim `{}`: {e}", c.id)))?;
        if let Some((cache, _)) = cache
            .as_ref()
            .filter(|_| c.system.name() == crate::systems::external::NAME)
        {
            cache.note_startup(&c.id, start.elapsed().as_secs_f64());
        }
    }
    Ok(())
}

/// When a run stops before its last claim (`--fail-fast`).
pub enum Stop<'a> {
    /// Every claim runs.
    Never,
    /// After the first claim that fails the run ([`fails`]).
    AtFailure,
    /// After the first claim that fails the run or for which the rule says so (the
    /// command line's: its results changed against the accepted baseline; the pipeline
    /// knows no baseline).
    AtFailureOr(&'a dyn Fn(&ClaimOutcome) -> bool),
}

impl Stop<'_> {
    fn after(&self, o: &ClaimOutcome) -> bool {
        match self {
            Stop::Never => false,
            Stop::AtFailure => fails(o),
            Stop::AtFailureOr(rule) => fails(o) || rule(o),
        }
    }
}

/// Runs and judges `claims` one after the other with the papers' formulas, stopping as
/// `stop` says. An error of a claim's run is an [`InClaim`].
pub fn run_claims(
    claims: &[Claim],
    profile: Profile,
    seed: u64,
    stop: Stop,
    obs: &dyn Observer,
) -> anyhow::Result<Ran> {
    let mut outcomes = Vec::new();
    let mut times = BTreeMap::new();
    let mut stopped_early = false;
    for c in claims {
        obs.claim_started(c);
        let tick = || obs.unit_done();
        let start = std::time::Instant::now();
        let cache = crate::execute::cache::active().map(|(c, _)| c);
        let before = cache.as_ref().map(|c| c.counts());
        let (o, units) = super::run_claim_timed(c, profile, seed, &Recipe::PAPER, &tick)
            .map_err(|e| in_claim(c, e))?;
        let wall = start.elapsed().as_secs_f64();
        if let (Some(cache), Some(before)) = (&cache, &before) {
            // What the claim's run did in the cache, and why it computed what it did.
            let done = cache.counts().since(before);
            let seconds: f64 = units.iter().map(|(_, t)| t).sum();
            if let Some(line) =
                crate::execute::cache::history::after_claim(cache, c, profile, seed, &done, seconds)
            {
                cache.note_recomputed(line);
            }
        }
        obs.units_not_needed(crate::plan::unit_count(c, profile).saturating_sub(units.len()));
        let mut by_pair = BTreeMap::new();
        for (k, t) in units {
            *by_pair.entry((k.sweep, k.variant)).or_insert(0.0) += t;
        }
        times.insert(
            c.id.clone(),
            ClaimTime {
                wall,
                units: by_pair,
            },
        );
        obs.claim_judged(&o);
        let stops = stop.after(&o);
        outcomes.push(o);
        if stops {
            obs.stopped_early(c, outcomes.len(), claims.len());
            stopped_early = outcomes.len() < claims.len();
            break;
        }
    }
    let failed = outcomes
        .iter()
        .filter(|o| fails(o))
        .map(|o| o.claim.id.clone())
        .collect();
    Ok(Ran {
        outcomes,
        times,
        failed,
        stopped_early,
    })
}

/// Whether a claim's outcome fails the run (a control not caught, a main variant
/// refuted without a finding, ...: [`Tally::ok`]).
pub fn fails(o: &ClaimOutcome) -> bool {
    !Tally::of(std::slice::from_ref(o)).ok()
}

/// An error of a claim's run (its core failed, a unit diverged): the message as it was,
/// and the claim's spec file for CI outputs.
#[derive(Debug)]
pub struct InClaim {
    pub id: String,
    pub file: PathBuf,
    /// The spec field the error belongs to (`external` for a failure of an external
    /// core: its annotation goes on the spec's `external:` line).
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for InClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InClaim {}

/// `e`, an error of `c`'s run, as an [`InClaim`].
pub fn in_claim(c: &Claim, e: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(InClaim {
        id: c.id.clone(),
        file: c.file.clone(),
        field: (c.system.name() == crate::systems::external::NAME).then(|| "external".into()),
        message: format!("{:#}", e.into()),
    })
}
