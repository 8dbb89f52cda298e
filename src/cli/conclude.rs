//! What `run`, `merge` and `stability` share: the progress bar, the verdict lines and the
//! conclusion of a run (reports, summary lines, exit status).
use crate::judge::ClaimOutcome;
use crate::judge::Tally;
use crate::report::junit::ClaimTime;
use crate::report::{self, baseline, ci, github, junit};
use crate::spec::Profile;
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where the regression baseline is (the insta snapshots), or none.
#[derive(Args, Debug, Clone)]
pub struct BaselineArgs {
    /// The regression baseline: the insta snapshots of `tests/claims.rs` (compared when
    /// they record this run's profile and seed).
    #[arg(long, value_name = "DIR", default_value_os_t = crate::project::path("tests/snapshots"))]
    pub baseline: PathBuf,
    /// Do not compare with the regression baseline.
    #[arg(long)]
    pub no_baseline: bool,
    /// A claim that has no snapshot in the baseline fails the run (exit 1), as insta
    /// fails a missing snapshot under CI: `make run` in CI (`.ci/run`) passes it, so a
    /// new claim enters the baseline in the commit that adds it.
    #[arg(long, conflicts_with = "no_baseline")]
    pub require_baseline: bool,
}

/// The work and memory budget of a run: estimates above it are refused before anything
/// runs ([`crate::plan::estimate`]).
#[derive(Args, Debug, Clone, Default)]
pub struct BudgetArgs {
    /// Refuse to start when the estimated wall time exceeds this many hours (default 24).
    #[arg(
        long,
        value_name = "H",
        env = "DPCLAIMS_MAX_HOURS",
        allow_negative_numbers = true
    )]
    pub max_hours: Option<f64>,
    /// Refuse to start when a claim's estimated memory exceeds this many GB (default
    /// half of this machine's memory, from /proc/meminfo, or the cgroup memory limit or
    /// `ulimit -v` when smaller).
    #[arg(
        long,
        value_name = "GB",
        env = "DPCLAIMS_MAX_MEMORY_GB",
        allow_negative_numbers = true
    )]
    pub max_memory_gb: Option<f64>,
}

impl BudgetArgs {
    /// The limits these flags set.
    pub fn limits(&self) -> Result<crate::plan::budget::Limits, crate::plan::budget::BudgetError> {
        crate::plan::budget::Limits::new(self.max_hours, self.max_memory_gb)
    }

    /// Refuses a command whose estimated `cost` (one thread; wall = seconds / `parallel`)
    /// is over budget, naming the flag `field` that drives it.
    pub fn check_command(
        &self,
        command: &str,
        cost: crate::systems::Cost,
        parallel: f64,
        field: &str,
        detail: String,
    ) -> Result<(), crate::plan::budget::BudgetError> {
        let limits = self.limits()?;
        crate::plan::budget::check_command(
            command,
            cost.seconds / parallel.clamp(1.0, limits.threads as f64),
            cost.bytes,
            crate::plan::estimate::Driver {
                field: field.to_string(),
                detail,
            },
            &limits,
        )
    }

    /// Estimates `claims` at `profile` and refuses them when over budget (`repeat` times
    /// the claims; `share` of them for one shard).
    pub fn check(
        &self,
        claims: &[crate::spec::Claim],
        profile: Profile,
        repeat: f64,
        share: f64,
    ) -> Result<(), crate::plan::budget::BudgetError> {
        crate::plan::budget::check_claims(claims, profile, &self.limits()?, repeat, share)
            .map(|_| ())
    }
}

/// Outputs for CI tools.
#[derive(Args, Debug, Clone, Default)]
pub struct CiArgs {
    /// Also write the verdicts as JUnit XML to FILE (one testcase per verdict; a failure
    /// for each reason the run exits 1; inconclusive and out of regime are skipped).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// Where and how a run's conclusion is written.
pub(super) struct Outputs<'a> {
    /// The report directory.
    pub out: &'a Path,
    /// One JSON document on stdout instead of the summary lines.
    pub json: bool,
    pub no_reports: bool,
    pub baseline: &'a BaselineArgs,
    pub ci: &'a CiArgs,
    /// The scorecard pages to write with the reports (`run --scorecards`), if any.
    pub scorecards: Option<&'a Scorecards>,
    /// Figure formats written beside the SVG (`run --figures`).
    pub figures: &'a [report::export::FigureFormat],
}

/// The validated scorecards of a run and the claims they may name.
pub(super) struct Scorecards {
    pub cards: Vec<report::scorecard::Scorecard>,
    pub claims: Vec<crate::spec::Claim>,
}

/// Loads the scorecards of `dir` (none when it does not exist) and validates them
/// against the run's `claims` and the claim files of the `claims/` directory beside
/// `dir`: an unknown claim, prediction or variant is an error naming the file and the
/// entry (exit 2), reported before anything runs.
pub(super) fn load_scorecards(
    dir: &Path,
    claims: &[crate::spec::Claim],
) -> anyhow::Result<Option<Scorecards>> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let beside = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("claims");
    let mut all: Vec<crate::spec::Claim> = claims.to_vec();
    if beside.is_dir() {
        for c in crate::spec::load_claims(&[beside])? {
            if !all.iter().any(|a| a.id == c.id) {
                all.push(c);
            }
        }
    }
    let catalogue: report::scorecard::Catalogue = all.iter().map(|c| (c.id.clone(), c)).collect();
    let cards = report::scorecard::load_and_validate(dir, &catalogue)?;
    Ok(Some(Scorecards { cards, claims: all }))
}

/// One line per verdict of a claim, on stderr.
pub(super) fn print_verdicts(o: &ClaimOutcome) {
    for r in &o.results {
        // Padded into columns, but no line ends in spaces (a verdict word is the last
        // column when nothing follows it).
        let line = format!(
            "{:<26} {:<26} {:<22} {:<11} {:<14}{}",
            o.claim.id,
            r.prediction_name,
            r.variant,
            r.evidence.as_str(),
            r.word,
            match (&r.control, &r.problem) {
                (Some(crate::judge::ControlStatus::Caught), _) => " (control caught)".to_string(),
                (_, Some(p)) => format!(" ⚠ {p}"),
                _ => String::new(),
            }
        );
        eprintln!("{}", crate::report::terminal_text(line.trim_end()));
        // A row that fails the run or is undecided names its units and how to replay one.
        let undecided = matches!(r.verdict, crate::fit::Verdict::Inconclusive);
        if r.problem.is_some() || undecided {
            if let Some(h) = super::replay::hint(&o.claim, o.profile, r) {
                eprintln!("    {}", crate::report::terminal_text(&h));
            }
        }
    }
    let spent = o.spent();
    if spent.units < spent.max_units || !spent.at_max.is_empty() {
        eprintln!("    {}", spent.words());
    }
}

/// Writes the reports (unless `no_reports`), prints the conclusion or the JSON
/// document, writes the CI outputs (`--junit`; under GitHub Actions, annotations and the
/// job summary), and gives the exit status: 0 when the baseline is unchanged (or not
/// checked), every negative control is caught, no main variant is refuted without a
/// finding and no tolerance is vacuous; 1 otherwise. `times`: the claims' wall times,
/// by id (empty when unknown, e.g. after a merge), for JUnit only.
pub(super) fn conclude(
    outcomes: &[ClaimOutcome],
    profile: Profile,
    seed: u64,
    o: &Outputs,
    times: &BTreeMap<String, ClaimTime>,
) -> anyhow::Result<ExitCode> {
    let (out, json, no_reports, base) = (o.out, o.json, o.no_reports, o.baseline);
    if !no_reports {
        match o.scorecards {
            Some(sc) => {
                let catalogue: report::scorecard::Catalogue =
                    sc.claims.iter().map(|c| (c.id.clone(), c)).collect();
                report::write_reports_figures(out, outcomes, &sc.cards, &catalogue, o.figures)
            }
            None => report::write_reports_figures(
                out,
                outcomes,
                &[],
                &report::scorecard::Catalogue::new(),
                o.figures,
            ),
        }
        .map_err(|e| anyhow::anyhow!("writing reports to {}: {e}", out.display()))?;
    }
    let tally = Tally::of(outcomes);
    let baseline = if base.no_baseline {
        baseline::Baseline::NotChecked("--no-baseline".into())
    } else {
        baseline::compare(&base.baseline, outcomes, profile, seed)
    };
    if json {
        let mut doc = report::run_json(profile, seed, outcomes);
        doc["baseline"] = serde_json::Value::String(baseline.line());
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for p in &tally.problems {
            eprintln!("FAIL {}", crate::report::terminal_text(&p.to_string()));
        }
        let summary = format!(
            "{} claims, profile {profile}, seed {seed}{}",
            outcomes.len(),
            if no_reports {
                String::new()
            } else {
                format!("; reports in {}", out.display())
            }
        );
        println!("{}", crate::report::terminal_text(&summary));
        let base_line = baseline.line();
        let base_line = crate::report::terminal_text(&base_line);
        println!("{base_line}");
        println!("{}; {base_line}", tally.line());
        for line in report::apart_lines(outcomes) {
            println!("{}", crate::report::terminal_text(&line));
        }
    }
    // Pending snapshots (insta's .snap.new): the new and changed claims' snapshots, from
    // this run's own results, for `dpclaims accept` / `dpclaims review`.
    if !base.no_baseline {
        // No baseline directory yet: at the baseline's profile and seed (quick, 0), every
        // claim's snapshot is new. A baseline of another profile or seed: nothing.
        let fresh = !base.baseline.exists() && profile == Profile::Quick && seed == 0;
        let ids: Vec<String> = match &baseline {
            baseline::Baseline::Changed(v) => v.iter().map(|c| c.claim.clone()).collect(),
            baseline::Baseline::Unchanged { new, .. } => new.clone(),
            baseline::Baseline::NotChecked(_) if fresh => {
                outcomes.iter().map(|o| o.claim.id.clone()).collect()
            }
            baseline::Baseline::NotChecked(_) => Vec::new(),
        };
        let checked = !matches!(baseline, baseline::Baseline::NotChecked(_)) || fresh;
        if checked {
            let kept = report::pending::record(outcomes, &ids, profile, seed);
            if let baseline::Baseline::Changed(v) = &baseline {
                for c in v {
                    eprintln!(
                        "baseline CHANGED: {}",
                        crate::report::terminal_text(&c.line())
                    );
                    for r in &c.results {
                        let what = format!("    {} / {}: {}", r.prediction, r.variant, r.what);
                        eprintln!("{}", crate::report::terminal_text(&what));
                    }
                }
            }
            if !kept.is_empty() {
                eprintln!(
                    "{} snapshot(s) pending in {}: review them with `dpclaims review`, or accept with `dpclaims accept {}`",
                    kept.len(),
                    report::pending::dir().display(),
                    kept.join(" ")
                );
            }
        }
    }
    let unrecorded = match &baseline {
        baseline::Baseline::Unchanged { new, .. } if base.require_baseline && !new.is_empty() => {
            eprintln!(
                "FAIL --require-baseline: {} claim(s) have no snapshot in {}: {} (record them \
                 from this run: dpclaims accept {})",
                new.len(),
                base.baseline.display(),
                new.join(", "),
                new.join(" ")
            );
            true
        }
        baseline::Baseline::NotChecked(why) if base.require_baseline => {
            let why = crate::report::terminal_text(why);
            eprintln!("FAIL --require-baseline: the baseline was not checked ({why})");
            true
        }
        _ => false,
    };
    ci_outputs(outcomes, &tally, &baseline, o, times)?;
    Ok(if tally.ok() && baseline.ok() && !unrecorded {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--junit FILE`, and under GitHub Actions (`GITHUB_ACTIONS=true`) the annotations (on
/// stdout, on stderr with `--json`, whose stdout is one document) and the job summary
/// appended to `$GITHUB_STEP_SUMMARY`. The cases fail for exactly the reasons the exit
/// status is 1 ([`ci::cases`]).
fn ci_outputs(
    outcomes: &[ClaimOutcome],
    tally: &Tally,
    baseline: &baseline::Baseline,
    o: &Outputs,
    times: &BTreeMap<String, ClaimTime>,
) -> anyhow::Result<()> {
    let github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    if o.ci.junit.is_none() && !github {
        return Ok(());
    }
    let mut cases = ci::cases(outcomes, baseline, (!o.no_reports).then_some(o.out));
    // `--require-baseline`'s failures are reasons of exit 1 too: failed cases of their own.
    if o.baseline.require_baseline {
        cases.extend(ci::unrecorded(outcomes, baseline, &o.baseline.baseline));
    }
    // A spec that cannot be read any more points at line 1.
    let spec_texts: BTreeMap<String, String> = outcomes
        .iter()
        .filter_map(|c| {
            let t = crate::fsio::read_string(&c.claim.file, crate::fsio::InputKind::Spec).ok()?;
            Some((c.claim.id.clone(), t))
        })
        .collect();
    if let Some(path) = &o.ci.junit {
        let xml = junit::junit_xml(outcomes, &cases, times, &spec_texts, &junit::Stamp::now());
        report::write_atomic(path, xml.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing the JUnit report {}: {e}", path.display()))?;
    }
    if github {
        for line in github::annotations(&cases, &spec_texts) {
            if o.json {
                eprintln!("{}", crate::report::terminal_text(&line));
            } else {
                println!("{}", crate::report::terminal_text(&line));
            }
        }
        github::append_step_summary(&github::step_summary(
            outcomes,
            &cases,
            &tally.line(),
            &baseline.line(),
        ));
    }
    Ok(())
}
