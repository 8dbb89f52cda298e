//! `dpclaims list` and `dpclaims run` (`run --shard` continues in `shard.rs`).
use super::conclude::{BaselineArgs, BudgetArgs, CiArgs};
use super::paths::{committed_or, default_out, default_paths};
use crate::pipeline::conclude::{conclude, print_verdicts, Outputs};
use crate::pipeline::Shard;
use crate::spec::{self, Profile};
use crate::{pipeline, report};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Claim files, ids (claims/<id>.yaml) or directories (default: claims/).
    pub paths: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Claim files, ids (claims/<id>.yaml) or directories (default: claims/).
    pub paths: Vec<PathBuf>,
    /// Profile: quick (CI scale) or full (paper scale).
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Master seed of every random stream.
    #[arg(long, default_value_t = 0, env = "DPCLAIMS_SEED")]
    pub seed: u64,
    /// Directory the reports are written to. Default: `reports/` for the whole `claims/`
    /// directory (the committed report set); for a subset or claims outside `claims/`,
    /// `target/dpclaims/<name>` (the file's stem or the directory's name), so that a
    /// partial run never replaces the committed reports by accident.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print exactly one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Do not write reports.
    #[arg(long)]
    pub no_reports: bool,
    /// Run only shard I of N (numbered from 0, like $SLURM_ARRAY_TASK_ID) and write its
    /// raw unit values to --partial-out; `dpclaims merge` judges and writes the reports.
    #[arg(long, value_name = "I/N", requires = "partial_out", conflicts_with_all = ["out", "no_reports", "junit"])]
    pub shard: Option<Shard>,
    /// Directory of a sharded run's partial files (`shard-<I>-of-<N>.json`).
    #[arg(long, value_name = "DIR", requires = "shard")]
    pub partial_out: Option<PathBuf>,
    /// External cores (`system: external`) answer a sample of their units twice; a core
    /// whose answers differ is an error (exit 2).
    #[arg(long)]
    pub check_determinism: bool,
    /// Scorecards, one `<name>.yaml` per paper, written as `scorecard-<name>.md` (and
    /// `.html`) with the reports; validated against the claims of the run and of the
    /// `claims/` directory beside DIR. None when DIR does not exist.
    #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("scorecards"))]
    pub scorecards: PathBuf,
    /// Figure formats written beside each claim's plot, comma-separated: `svg` (always),
    /// `png` (2x, for slides), `pdf` (vector). Default `svg` only, so the committed
    /// reports stay small text files; text in PNG and PDF uses the embedded DejaVu Sans.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "svg")]
    pub figures: Vec<crate::report::export::FigureFormat>,
    #[command(flatten)]
    pub baseline: BaselineArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    #[command(flatten)]
    pub ci: CiArgs,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
    #[command(flatten)]
    pub select: super::select::SelectArgs,
    /// Replay one work unit (`<claim>/<variant>/<sweep>/<point>/<replicate>`, as failing
    /// and inconclusive rows print it) with its seed, and print its metrics; nothing else
    /// runs and no report is written.
    #[arg(long, value_name = "ID", conflicts_with_all = ["shard", "junit"])]
    pub unit: Option<String>,
}

impl RunArgs {
    /// The report directory: `--out`, or the default of [`RunArgs::out`].
    /// Only the whole suite at the default profile and seed writes the committed
    /// `reports/`; a selection (`-k`, `--last-failed`), another profile or another seed
    /// of it writes to `target/dpclaims/<selection|last-failed|full|seed-N>` (issue 50,
    /// family 4).
    pub fn out_dir(&self) -> PathBuf {
        match &self.out {
            Some(o) => o.clone(),
            None => {
                let subset = if !self.select.keyword.is_empty() {
                    Some("selection".to_string())
                } else if self.select.last_failed {
                    Some("last-failed".to_string())
                } else if self.profile != Profile::Quick {
                    Some(self.profile.to_string())
                } else if self.seed != 0 {
                    Some(format!("seed-{}", self.seed))
                } else {
                    None
                };
                committed_or(default_out(&self.paths), subset)
            }
        }
    }
}

pub fn list(a: &ListArgs) -> anyhow::Result<ExitCode> {
    let claims = spec::load_claims(&default_paths(&a.paths)?)?;
    for c in &claims {
        println!(
            "{:<28} {}\n{:<28} source: {}",
            c.id,
            crate::report::escape_controls(&c.title),
            "",
            crate::report::escape_controls(&c.source.to_string())
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    // `--check-determinism` asks the cores again: a unit read from the result cache
    // would check nothing (issue 58), so the cache is neither read nor written.
    let result = if a.check_determinism && !a.cache.no_cache {
        eprintln!(
            "note: --check-determinism: the result cache is not used; every unit is computed"
        );
        run_claims(a)
    } else {
        a.cache.with(|| run_claims(a)).and_then(|r| r)
    };
    if let Err(e) = &result {
        ci_error(a, e);
        if let Some(ic) = e.downcast_ref::<pipeline::run::InClaim>() {
            record_failed(a, std::slice::from_ref(&ic.id));
        }
    }
    result
}

/// `--last-failed`'s record (not with --no-cache, which neither reads nor writes the
/// cache directory).
fn record_failed(a: &RunArgs, ids: &[String]) {
    if !a.cache.no_cache {
        super::select::write_last_failed(&a.cache.cache_dir, ids);
    }
}

/// A run that stops with exit 2 still gives CI its outputs
/// ([`crate::pipeline::conclude::stopped`]), unless the user stopped it or an output
/// was refused before anything ran.
fn ci_error(a: &RunArgs, e: &anyhow::Error) {
    if super::signals::interrupted().is_some()
        || e.downcast_ref::<super::alias::Refused>().is_some()
    {
        return;
    }
    crate::pipeline::conclude::stopped(a.ci.junit.as_deref(), a.json, e);
}

/// The files a run reads only after simulating — the previous `verdicts.json` of the
/// report set, the baseline snapshots — checked before it (a FIFO or device there is an
/// error now, not after an hour of work); and how the report set will be replaced.
fn preflight(a: &RunArgs, out: &Path, claims: &[spec::Claim]) -> anyhow::Result<()> {
    use crate::fsio::{precheck, InputKind};
    // An `--out` that is not a directory yet is checked (and created) later, by
    // `prepare_output_dir`, which names what is in the way.
    if !a.no_reports && out.is_dir() {
        let v = out.join(report::diff::VERDICTS_FILE);
        precheck(&v, InputKind::Verdicts)
            .map_err(|e| anyhow::anyhow!("{}: {e}", crate::report::shown_path(&v)))?;
        if let Some(why) = report::set::swap_impossible(out) {
            let why = report::terminal_text(&why);
            eprintln!(
                "note: {why}; the report set will be written file by file (each file atomic, \
                 the set not)"
            );
        }
    }
    if !a.baseline.no_baseline {
        for c in claims {
            let f = report::baseline::snapshot_file(&a.baseline.baseline, &c.id);
            precheck(&f, InputKind::Snapshot).map_err(|e| {
                anyhow::anyhow!("baseline snapshot {}: {e}", crate::report::shown_path(&f))
            })?;
        }
    }
    Ok(())
}

/// Before anything runs: no output is or holds an input, no output directory holds a
/// mount point, the job summary is a regular file ([`super::alias`]).
fn guard_outputs(a: &RunArgs, claims: &[spec::Claim]) -> anyhow::Result<()> {
    use super::alias::{self, Output};
    let summary = alias::step_summary()?;
    let out = a.out_dir();
    let reports = !a.no_reports && a.shard.is_none() && a.unit.is_none();
    let mut outs = Vec::new();
    if reports {
        outs.push(Output::Dir("--out", &out));
        alias::no_mount_inside("--out", &out)?;
        alias::no_special_files("--out", &out)?;
    }
    if let Some(j) = &a.ci.junit {
        if a.json {
            alias::not_stdout_with_json("--junit", j)?;
        }
        outs.push(Output::File("--junit", j));
    }
    if let Some(p) = &a.partial_out {
        outs.push(Output::Dir("--partial-out", p));
        alias::no_mount_inside("--partial-out", p)?;
    }
    if !a.cache.no_cache {
        outs.push(Output::Dir("the cache", &a.cache.cache_dir));
    }
    if let Some(s) = &summary {
        outs.push(Output::File("$GITHUB_STEP_SUMMARY", s));
    }
    let baseline = (!a.baseline.no_baseline).then_some(a.baseline.baseline.as_path());
    let scorecards = reports.then_some(a.scorecards.as_path());
    alias::guard(&outs, alias::run_inputs(claims, scorecards, baseline))
}

/// Runs `claims`. With `--fail-fast` the run stops after the first claim that fails it,
/// and, with a baseline to compare, also after the first that changed against the
/// baseline (or, with `--require-baseline`, has no snapshot): a regression of the core
/// mostly shows as a baseline change, not as a failing verdict.
fn run_stopping_at_regressions(
    a: &RunArgs,
    claims: &[spec::Claim],
    obs: &dyn pipeline::run::Observer,
) -> anyhow::Result<pipeline::run::Ran> {
    use pipeline::run::Stop;
    let baseline = a.baseline.baseline();
    let moved = |o: &pipeline::ClaimOutcome| -> bool {
        match report::baseline::compare(
            &baseline.baseline,
            std::slice::from_ref(o),
            a.profile,
            a.seed,
        ) {
            report::baseline::Baseline::Changed(_) => true,
            report::baseline::Baseline::Unchanged { new, .. } => {
                baseline.require_baseline && !new.is_empty()
            }
            report::baseline::Baseline::NotChecked(_) => false,
        }
    };
    let stop = match (a.select.fail_fast, baseline.no_baseline) {
        (false, _) => Stop::Never,
        (true, true) => Stop::AtFailure,
        (true, false) => Stop::AtFailureOr(&moved),
    };
    pipeline::run::run_claims(claims, a.profile, a.seed, stop, obs)
}

/// The claims a run runs: its paths or ids, filtered by `-k` and `--last-failed`.
fn selected(a: &RunArgs) -> anyhow::Result<Vec<spec::Claim>> {
    let paths = default_paths(&a.paths)?;
    let mut claims = spec::load_claims(&paths)?;
    claims.retain(|c| super::select::matches(c, &a.select.keyword));
    if a.select.last_failed {
        let failed = super::select::read_last_failed(&a.cache.cache_dir);
        if failed.is_empty() {
            eprintln!(
                "note: --last-failed: no failed claims recorded; running every selected claim"
            );
        } else {
            claims.retain(|c| failed.contains(&c.id));
        }
    }
    if claims.is_empty() {
        anyhow::bail!(
            "no claim selected{}",
            if a.select.keyword.is_empty() {
                String::new()
            } else {
                format!(" (-k {})", a.select.keyword.join(", -k "))
            }
        );
    }
    Ok(claims)
}

fn run_claims(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let mut claims = selected(a)?;
    guard_outputs(a, &claims)?;
    // A claim with accepted results runs only as registered, or as amended with a reason
    // (the ledger is part of the baseline: `--no-baseline` runs outside it and its pages
    // show no amendments).
    if !a.baseline.no_baseline {
        super::ledger::attach(&mut claims, &a.baseline.baseline)?;
    }
    if let Some(id) = &a.unit {
        // Through the planner like every path: the unit and the plan listed to find it.
        a.budget.budget().check_unit(&claims, id, a.profile)?;
        return super::replay::replay(&claims, id, a.profile, a.seed, a.json);
    }
    if let (Some(shard), Some(dir)) = (a.shard, &a.partial_out) {
        a.budget
            .budget()
            .check(&claims, a.profile, 1.0, 1.0 / shard.count.max(1) as f64)?;
        report::prepare_output_dir(dir)?;
        return super::shard::run_shard(&claims, a.profile, a.seed, shard, dir, a.json);
    }
    a.budget.budget().check(&claims, a.profile, 1.0, 1.0)?;
    let out = a.out_dir();
    preflight(a, &out, &claims)?;
    let mut scorecards = if a.no_reports {
        None
    } else {
        pipeline::conclude::load_scorecards(&a.scorecards, &claims)?
    };
    // How the scorecards count results is registered too (refused like a claim's change).
    if let Some(sc) = scorecards.as_mut().filter(|_| !a.baseline.no_baseline) {
        super::ledger::scorecards::attach(&mut sc.cards, &a.baseline.baseline)?;
    }
    crate::systems::external::set_check_determinism(a.check_determinism);
    pipeline::run::prepare_cores(&claims)?;
    if !a.no_reports {
        report::prepare_output_dir(&out)?;
    }
    if let Some(junit) = &a.ci.junit {
        report::prepare_output_file(junit)?;
    }
    let bar = super::progress::Progress::units(pipeline::run::unit_total(&claims, a.profile))?;
    let ran = run_stopping_at_regressions(
        a,
        &claims,
        &Shown {
            bar: &bar,
            json: a.json,
        },
    )?;
    bar.finish_and_clear();
    // The external cores' workers were shared by the claims; the run is over.
    crate::systems::external::release_all();
    let baseline = a.baseline.baseline();
    // A main row that changed against the baseline is a regression of the core or the
    // spec: no line of the run advises a `finding` for it.
    let mut ran = ran;
    // `--last-failed` reruns every claim that failed the run: a failing verdict, or a
    // change against the baseline (a missing snapshot under --require-baseline).
    let mut failed = ran.failed.clone();
    if !baseline.no_baseline {
        let compared =
            crate::report::baseline::compare(&baseline.baseline, &ran.outcomes, a.profile, a.seed);
        match &compared {
            report::baseline::Baseline::Changed(changes) => {
                failed.extend(changes.iter().map(|c| c.claim.clone()))
            }
            report::baseline::Baseline::Unchanged { new, .. } if baseline.require_baseline => {
                failed.extend(new.iter().cloned())
            }
            _ => {}
        }
        crate::report::ci::drop_finding_advice_of_regressions(&mut ran.outcomes, &compared);
    }
    failed.sort();
    failed.dedup();
    record_failed(a, &failed);
    // Stopped early by --fail-fast: the report set (committed, often) is not rewritten
    // from part of the selection (issue 58).
    if ran.stopped_early && !a.no_reports {
        crate::report::eprint_line(&format!(
            "--fail-fast: the report set in {} is left as it was (the run stopped early)",
            report::shown_path(&out)
        ));
    }
    let outputs = Outputs {
        out: &out,
        json: a.json,
        no_reports: a.no_reports || ran.stopped_early,
        baseline: &baseline,
        junit: a.ci.junit.as_deref(),
        scorecards: scorecards.as_ref(),
        figures: &a.figures,
    };
    let code = conclude(&ran.outcomes, a.profile, a.seed, &outputs, &ran.times)?;
    super::conclude::regression_notes(&ran.outcomes, a.profile, a.seed, &baseline, a.json);
    Ok(code)
}

/// The run as the terminal shows it: the progress bar, each claim's verdict lines (not
/// with `--json`, whose stdout is one document) and `--fail-fast`'s stop.
struct Shown<'a> {
    bar: &'a super::progress::Progress,
    json: bool,
}

impl pipeline::run::Observer for Shown<'_> {
    fn claim_started(&self, claim: &spec::Claim) {
        self.bar.set_message(claim.id.clone());
    }
    fn unit_done(&self) {
        self.bar.inc(1);
    }
    fn units_not_needed(&self, n: usize) {
        self.bar.inc(n as u64);
    }
    fn claim_judged(&self, outcome: &pipeline::ClaimOutcome) {
        if !self.json {
            self.bar.suspend(|| print_verdicts(outcome));
        }
    }
    fn stopped_early(&self, claim: &spec::Claim, done: usize, of: usize) {
        self.bar.suspend(|| {
            eprintln!(
                "--fail-fast: stopped after claim `{}` ({done} of {of} claims run)",
                claim.id
            )
        });
    }
}
