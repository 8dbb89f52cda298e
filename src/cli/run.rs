//! `dpclaims list` and `dpclaims run` (`run --shard` continues in `shard.rs`).
use super::conclude::{conclude, print_verdicts, BaselineArgs, BudgetArgs, CiArgs, Outputs};
use crate::execute::shard::Shard;
use crate::report::junit::ClaimTime;
use crate::spec::{self, Profile};
use crate::train::Recipe;
use crate::{plan, report};
use clap::Args;
use std::collections::BTreeMap;
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

/// `out`, unless it is the committed `reports` and `subset` names what makes the run
/// less than the whole suite at its defaults: then `target/dpclaims/<subset>`.
pub(super) fn committed_or(out: PathBuf, subset: Option<String>) -> PathBuf {
    match subset {
        Some(name) if out == crate::project::path("reports") => {
            crate::project::path("target").join("dpclaims").join(name)
        }
        _ => out,
    }
}

/// `reports` when `paths` is the `claims/` directory of the working directory (or
/// empty), else `target/dpclaims/<name>`.
pub(super) fn default_out(paths: &[PathBuf]) -> PathBuf {
    let claims = std::fs::canonicalize(crate::project::path("claims")).ok();
    let whole = paths.is_empty()
        || (paths.len() == 1
            && claims.is_some()
            && std::fs::canonicalize(&paths[0]).ok() == claims);
    if whole {
        return crate::project::path("reports");
    }
    let name = match paths {
        [one] => one
            .file_stem()
            .or_else(|| one.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty() && s != "." && s != "..")
            .unwrap_or_else(|| "run".into()),
        _ => "selection".into(),
    };
    // Keep the name a plain directory name (no separators, no leading dot).
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    crate::project::path("target")
        .join("dpclaims")
        .join(name.trim_start_matches('_'))
}

/// The claim paths of `list`, `run`, `plan`, `stability` and `slurm`: `claims/` when
/// none is given (outside a checkout, where there is none, an error that says what to
/// pass), and claim ids read as their files in `claims/` ([`super::select::resolve`]:
/// what the shell completion offers).
pub(super) fn default_paths(p: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    if p.is_empty() {
        let claims = crate::project::path("claims");
        if !claims.is_dir() {
            anyhow::bail!(
                "no claims/ here: pass claim files or ids (or `dpclaims init` a project)"
            );
        }
        return Ok(vec![claims]);
    }
    super::select::resolve(p)
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
    let result = a.cache.with(|| run_claims(a)).and_then(|r| r);
    if let Err(e) = &result {
        ci_error(a, e);
        if let Some(ic) = e.downcast_ref::<InClaim>() {
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

/// An error of a claim's run (its core failed, a unit diverged): the message as it was,
/// and the claim's spec file for CI outputs.
#[derive(Debug)]
pub(super) struct InClaim {
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

fn in_claim(c: &spec::Claim, e: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(InClaim {
        id: c.id.clone(),
        file: c.file.clone(),
        field: (c.system.name() == crate::systems::external::NAME).then(|| "external".into()),
        message: format!("{:#}", e.into()),
    })
}

/// A run that stops with exit 2 still gives CI its outputs (issue 33, item 6): the JUnit
/// file with one `<error>` case naming the file, field and message, and under GitHub
/// Actions an `::error` annotation on the spec's line and the job summary. Failing to
/// write them is a warning: the error itself is what the user must see.
fn ci_error(a: &RunArgs, e: &anyhow::Error) {
    if super::signals::interrupted().is_some()
        || e.downcast_ref::<super::alias::Refused>().is_some()
    {
        return;
    }
    let github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    if a.ci.junit.is_none() && !github {
        return;
    }
    let message = crate::spec::echo::clip_echoes(&format!("{e:#}"));
    // A spec error's "line N" is the YAML parser's; a run error's message may carry a
    // core's traceback ("File \"core.py\", line 12"), never a line of the spec.
    let (file, field, parsed) = if let Some(se) = e.downcast_ref::<spec::SpecError>() {
        (Some(PathBuf::from(&se.file)), Some(se.field.clone()), true)
    } else if let Some(ic) = e.downcast_ref::<InClaim>() {
        (Some(ic.file.clone()), ic.field.clone(), false)
    } else {
        (None, None, false)
    };
    let line = file
        .as_ref()
        .map(|f| error_line(f, field.as_deref(), parsed.then_some(message.as_str())));
    let shown = file.as_ref().map(|f| report::github::workspace_path(f));
    if let Some(path) = &a.ci.junit {
        let xml = report::junit::error_xml(
            shown.as_deref(),
            line,
            field.as_deref(),
            &message,
            &report::junit::Stamp::now(),
        );
        if let Err(w) = report::write_atomic(path, xml.as_bytes()) {
            eprintln!(
                "warning: could not write the JUnit report {}: {w}",
                path.display()
            );
        }
    }
    if github {
        let ann = report::github::command(
            "error",
            shown.as_deref().unwrap_or(""),
            line.unwrap_or(1),
            "dpclaims: the run stopped (exit 2)",
            &message,
        );
        if a.json {
            eprintln!("{}", crate::report::terminal_text(&ann));
        } else {
            println!("{}", crate::report::terminal_text(&ann));
        }
        let place = match (&shown, &field) {
            (Some(f), Some(x)) => format!("In `{f}`, field `{x}`:"),
            (Some(f), None) => format!("In `{f}`:"),
            _ => "No verdict was given:".to_string(),
        };
        report::github::append_step_summary(&format!(
            "## dpclaims: the run stopped (exit 2)\n\n{place}\n\n```text\n{}\n```\n",
            message.replace("```", "'''")
        ));
    }
}

/// The spec line an error points at: "line N" in the message of a spec error (the YAML
/// parser's; `None` for a run error), else
/// the first line that starts the field's last key, else 1.
fn error_line(file: &Path, field: Option<&str>, message: Option<&str>) -> usize {
    let words: Vec<&str> = message.unwrap_or("").split_whitespace().collect();
    for w in words.windows(2) {
        if w[0] == "line" {
            if let Ok(n) = w[1].trim_end_matches([',', ':', '.', ')']).parse::<usize>() {
                if n > 0 {
                    return n;
                }
            }
        }
    }
    let Some(key) = field
        .and_then(|f| f.rsplit('.').next())
        .map(|k| k.split('[').next().unwrap_or(k).trim())
        .filter(|k| !k.is_empty() && !k.starts_with('('))
    else {
        return 1;
    };
    let Ok(text) = crate::fsio::read_string(file, crate::fsio::InputKind::Spec) else {
        return 1;
    };
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with(&format!("{key}:"))
        })
        .map_or(1, |i| i + 1)
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
        precheck(&v, InputKind::Verdicts).map_err(|e| anyhow::anyhow!("{}: {e}", v.display()))?;
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
            precheck(&f, InputKind::Snapshot)
                .map_err(|e| anyhow::anyhow!("baseline snapshot {}: {e}", f.display()))?;
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
    let claims = selected(a)?;
    guard_outputs(a, &claims)?;
    if let Some(id) = &a.unit {
        return super::replay::replay(&claims, id, a.profile, a.seed, a.json);
    }
    if let (Some(shard), Some(dir)) = (a.shard, &a.partial_out) {
        a.budget
            .check(&claims, a.profile, 1.0, 1.0 / shard.count.max(1) as f64)?;
        report::prepare_output_dir(dir)?;
        return super::shard::run_shard(&claims, a.profile, a.seed, shard, dir, a.json);
    }
    a.budget.check(&claims, a.profile, 1.0, 1.0)?;
    let out = a.out_dir();
    preflight(a, &out, &claims)?;
    let scorecards = if a.no_reports {
        None
    } else {
        super::conclude::load_scorecards(&a.scorecards, &claims)?
    };
    crate::systems::external::set_check_determinism(a.check_determinism);
    // External cores are started and greeted before any unit of any claim runs.
    for c in &claims {
        c.system
            .prepare()
            .map_err(|e| in_claim(c, anyhow::anyhow!("claim `{}`: {e}", c.id)))?;
    }
    if !a.no_reports {
        report::prepare_output_dir(&out)?;
    }
    if let Some(junit) = &a.ci.junit {
        report::prepare_output_file(junit)?;
    }
    let total: usize = claims.iter().map(|c| plan::unit_count(c, a.profile)).sum();
    let bar = super::progress::Progress::units(total)?;
    let mut outcomes = Vec::new();
    let mut times = BTreeMap::new();
    for c in &claims {
        bar.set_message(c.id.clone());
        let tick = || bar.inc(1);
        let start = std::time::Instant::now();
        let (o, units) =
            crate::pipeline::run_claim_timed(c, a.profile, a.seed, &Recipe::PAPER, &tick)
                .map_err(|e| in_claim(c, e))?;
        let wall = start.elapsed().as_secs_f64();
        // Units a sequential sweep did not need: the bar counts the worst case.
        bar.inc(plan::unit_count(c, a.profile).saturating_sub(units.len()) as u64);
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
        if !a.json {
            bar.suspend(|| print_verdicts(&o));
        }
        let failed = !crate::judge::Tally::of(std::slice::from_ref(&o)).ok();
        outcomes.push(o);
        if failed && a.select.fail_fast {
            bar.suspend(|| {
                eprintln!(
                    "--fail-fast: stopped after claim `{}` ({} of {} claims run)",
                    c.id,
                    outcomes.len(),
                    claims.len()
                )
            });
            break;
        }
    }
    bar.finish_and_clear();
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| !crate::judge::Tally::of(std::slice::from_ref(*o)).ok())
        .map(|o| o.claim.id.clone())
        .collect();
    record_failed(a, &failed);
    let outputs = Outputs {
        out: &out,
        json: a.json,
        no_reports: a.no_reports,
        baseline: &a.baseline,
        ci: &a.ci,
        scorecards: scorecards.as_ref(),
        figures: &a.figures,
    };
    conclude(&outcomes, a.profile, a.seed, &outputs, &times)
}
