//! The end of a run, the same for `run`, `merge` and `stability`: the verdict lines of
//! each claim, the reports, the summary lines, the baseline's comparison and its pending
//! snapshots, the CI outputs (JUnit, GitHub annotations and job summary) and the exit
//! status.
use crate::judge::ClaimOutcome;
use crate::judge::Tally;
use crate::report::junit::ClaimTime;
use crate::report::{self, baseline, ci, github, junit};
use crate::spec;
use crate::spec::Profile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The regression baseline of a run (the insta snapshots of `tests/claims.rs`).
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The snapshot directory.
    pub baseline: PathBuf,
    /// Do not compare with the baseline.
    pub no_baseline: bool,
    /// A claim without a snapshot fails the run (exit 1).
    pub require_baseline: bool,
}

/// Where and how a run's conclusion is written.
pub struct Outputs<'a> {
    /// The report directory.
    pub out: &'a Path,
    /// One JSON document on stdout instead of the summary lines.
    pub json: bool,
    pub no_reports: bool,
    pub baseline: &'a Baseline,
    /// `--junit FILE`: the verdicts as JUnit XML.
    pub junit: Option<&'a Path>,
    /// The scorecard pages to write with the reports (`run --scorecards`), if any.
    pub scorecards: Option<&'a Scorecards>,
    /// Figure formats written beside the SVG (`run --figures`).
    pub figures: &'a [report::export::FigureFormat],
}

/// The validated scorecards of a run and the claims they may name.
pub struct Scorecards {
    pub cards: Vec<report::scorecard::Scorecard>,
    pub claims: Vec<crate::spec::Claim>,
}

/// Loads the scorecards of `dir` (none when it does not exist) and validates them
/// against the run's `claims` and the claim files of the `claims/` directory beside
/// `dir`: an unknown claim, prediction or variant is an error naming the file and the
/// entry (exit 2), reported before anything runs.
pub fn load_scorecards(
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
pub fn print_verdicts(o: &ClaimOutcome) {
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
pub fn conclude(
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
        .map_err(|e| anyhow::anyhow!("writing reports to {}: {e}", report::shown_path(out)))?;
    }
    let tally = Tally::of(outcomes);
    let baseline = if base.no_baseline {
        baseline::Baseline::NotChecked("--no-baseline".into())
    } else {
        baseline::compare(&base.baseline, outcomes, profile, seed)
    };
    // `--require-baseline`'s failure, decided before anything is printed: the JSON
    // document lists it with the other reasons of exit 1.
    let unrecorded = match &baseline {
        baseline::Baseline::Unchanged { new, .. } if base.require_baseline && !new.is_empty() => {
            Some(format!(
                "FAIL --require-baseline: {} claim(s) have no snapshot in {}: {} (record them \
                 from this run: dpclaims accept {})",
                new.len(),
                report::shown_path(&base.baseline),
                new.join(", "),
                new.join(" ")
            ))
        }
        baseline::Baseline::NotChecked(why) if base.require_baseline => Some(format!(
            "FAIL --require-baseline: the baseline was not checked ({})",
            crate::report::escape_controls(why)
        )),
        _ => None,
    };
    if json {
        let mut doc = report::run_json(profile, seed, outcomes);
        doc["baseline"] = serde_json::Value::String(baseline.line());
        // Every reason of exit 1 is in `tally.problems` (issue 58: `--require-baseline`
        // exited 1 while the document said `problems: []`), the baseline's too.
        if let Some(p) = doc["tally"]["problems"].as_array_mut() {
            if !baseline.ok() {
                p.push(serde_json::Value::String(format!(
                    "baseline: {}",
                    baseline.line()
                )));
            }
            if let Some(line) = &unrecorded {
                let reason = line.strip_prefix("FAIL ").unwrap_or(line);
                p.push(serde_json::Value::String(reason.to_string()));
            }
        }
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
                format!("; reports in {}", report::shown_path(out))
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
        let mut ids: Vec<String> = match &baseline {
            baseline::Baseline::Changed(v) => v.iter().map(|c| c.claim.clone()).collect(),
            baseline::Baseline::Unchanged { new, .. } => new.clone(),
            baseline::Baseline::NotChecked(_) if fresh => {
                outcomes.iter().map(|o| o.claim.id.clone()).collect()
            }
            baseline::Baseline::NotChecked(_) => Vec::new(),
        };
        // A claim whose amendment waits for its next results keeps its snapshot pending
        // even when it equals the baseline: accepting it records that no verdict moved.
        if matches!(baseline, baseline::Baseline::Unchanged { .. }) {
            ids.extend(
                outcomes
                    .iter()
                    .filter(|o| {
                        crate::spec::ledger::awaits_results(o.claim.ledger.as_deref())
                            && !ids.contains(&o.claim.id)
                    })
                    .map(|o| o.claim.id.clone())
                    .collect::<Vec<_>>(),
            );
        }
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
                crate::report::eprint_line(&format!(
                    "{} snapshot(s) pending in {}: review them with `dpclaims review`, or accept with `dpclaims accept {}`",
                    kept.len(),
                    report::shown_path(&report::pending::dir()),
                    kept.join(" ")
                ));
            }
        }
    }
    if let Some(line) = &unrecorded {
        crate::report::eprint_line(line);
    }
    ci_outputs(outcomes, &tally, &baseline, o, times)?;
    Ok(if tally.ok() && baseline.ok() && unrecorded.is_none() {
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
    if o.junit.is_none() && !github {
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
    if let Some(path) = o.junit {
        let xml = junit::junit_xml(outcomes, &cases, times, &spec_texts, &junit::Stamp::now());
        report::write_atomic(path, xml.as_bytes()).map_err(|e| {
            anyhow::anyhow!("writing the JUnit report {}: {e}", report::shown_path(path))
        })?;
    }
    if github {
        for line in github::annotations(&cases, &spec_texts) {
            report::print_command(&line, o.json);
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

/// A run that stops with exit 2 still gives CI its outputs (issue 33, item 6): the JUnit
/// file with one `<error>` case naming the file, field and message, and under GitHub
/// Actions an `::error` annotation on the spec's line and the job summary. Failing to
/// write them is a warning: the error itself is what the user must see.
pub fn stopped(junit: Option<&Path>, json: bool, e: &anyhow::Error) {
    let github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    if junit.is_none() && !github {
        return;
    }
    let message = crate::spec::echo::clip_echoes(&format!("{e:#}"));
    // A spec error's "line N" is the YAML parser's; a run error's message may carry a
    // core's traceback ("File \"core.py\", line 12"), never a line of the spec.
    let (file, field, parsed) = if let Some(se) = e.downcast_ref::<spec::SpecError>() {
        (Some(PathBuf::from(&se.file)), Some(se.field.clone()), true)
    } else if let Some(ic) = e.downcast_ref::<super::run::InClaim>() {
        (Some(ic.file.clone()), ic.field.clone(), false)
    } else {
        (None, None, false)
    };
    let line = file
        .as_ref()
        .map(|f| error_line(f, field.as_deref(), parsed.then_some(message.as_str())));
    let shown = file.as_ref().map(|f| report::github::workspace_path(f));
    if let Some(path) = junit {
        let xml = report::junit::error_xml(
            shown.as_deref(),
            line,
            field.as_deref(),
            &message,
            &report::junit::Stamp::now(),
        );
        if let Err(w) = report::write_atomic(path, xml.as_bytes()) {
            crate::report::eprint_line(&format!(
                "warning: could not write the JUnit report {}: {w}",
                report::shown_path(path)
            ));
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
        report::print_command(&ann, json);
        // Every user value of the summary on one line (the file, the field); the message
        // inside a fence, its controls escaped, no fence of its own.
        let one = |s: &str| report::escape_controls(s).replace('`', "'");
        let shown = shown.as_deref().map(one);
        let field = field.as_deref().map(one);
        let place = match (&shown, &field) {
            (Some(f), Some(x)) => format!("In `{f}`, field `{x}`:"),
            (Some(f), None) => format!("In `{f}`:"),
            _ => "No verdict was given:".to_string(),
        };
        report::github::append_step_summary(&format!(
            "## dpclaims: the run stopped (exit 2)\n\n{place}\n\n```text\n{}\n```\n",
            report::terminal_text(&message).replace("```", "'''")
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
