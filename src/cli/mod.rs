//! The `dpclaims` command line: a thin dispatcher over the library.
//!
//! Exit status: 0 success; 1 for `run`/`merge` when the regression baseline changed, a
//! negative control was not caught, a main variant was refuted without a finding or a
//! tolerance is vacuous, and for `diff` when anything changed; 2 bad input or a run that could not complete (the message
//! names the file, field or sweep point).
use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod accept;
mod advise;
mod alias;
mod audit_args;
mod audit_null;
mod audit_white_box;
mod cache;
mod check;
mod ci;
mod completions;
mod conclude;
mod demo;
mod diff;
mod external;
mod faults;
mod fig2;
mod init;
mod ledger;
mod new;
mod new_templates;
mod paths;
mod perf;
mod plan;
mod privacy;
mod privacy_report;
mod progress;
mod replay;
mod run;
mod select;
mod shard;
mod signals;
mod slurm;
mod stability;
mod train;

#[derive(Parser, Debug)]
#[command(
    name = "dpclaims",
    version,
    long_version = crate::build_id::LONG_VERSION,
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
    /// Check claim specs without running them: every error of every spec at once, with
    /// its file, field and line (exit 2 if any; default: claims/).
    Check(check::CheckArgs),
    /// Print the JSON Schema of the spec format (docs/claim.schema.json:
    /// `dpclaims schema > docs/claim.schema.json`, or `make schema`), for editors.
    Schema,
    /// Start a project of one's own in DIR: claims/ with an example claim, scorecards/,
    /// a Python core on the adapter, .gitignore and CI files (GitHub Actions, GitLab).
    Init(init::InitArgs),
    /// Scaffold a claim spec that runs as written (claims/<id>.yaml): every field
    /// commented, a sweep, a main variant, a negative control and a prediction.
    New(new::NewArgs),
    /// Estimated work and memory of each claim, without running it (exit 2 when `run`
    /// would refuse it: over --max-hours or --max-memory-gb).
    Plan(plan::PlanArgs),
    /// Run claims, judge them, write reports (exit 1 if the regression baseline changed,
    /// a negative control is not caught or a main variant is refuted without a finding).
    Run(run::RunArgs),
    /// The suite at K master seeds: how often each verdict comes out each way
    /// (reports/STABILITY.md).
    Stability(stability::StabilityArgs),
    /// Merge the partial files of a sharded run (`run --shard`): the same reports,
    /// summary and exit status as the unsharded run.
    Merge(shard::MergeArgs),
    /// The CI workflow's steps here, into a scratch directory (default target/dpclaims-ci):
    /// `check`, `run --require-baseline --junit`, `diff` against the committed verdicts;
    /// the committed reports are not touched (exit: check's when it fails, else the run's).
    Ci(ci::CiArgs),
    /// What changed between two runs (report directories or `run --json` documents):
    /// verdicts, estimates moved beyond their CIs, claims added or removed (exit 1 if any).
    Diff(diff::DiffArgs),
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
    /// reports/PRIVACY.md: accountants side by side, every system audited with all
    /// estimators, the null calibration, the attack's ROC (a measurement page).
    PrivacyReport(privacy_report::PrivacyReportArgs),
    /// Reproduce privacy-for-free Fig. 2 (panels 1-4) as CSV, Markdown and SVG.
    Fig2(fig2::Fig2Args),
    /// One DP-SGD / TP-TopK / TP-Rand / ON-TopK / ON-Rand run: accuracy, epsilon, diagnostics.
    Train(train::TrainArgs),
    /// Measured speed of the DP-GD kernels in one process (direct step vs GEMV floor).
    Perf(perf::PerfArgs),
    /// Fault matrix: the claim suite on each injected fault of the training core or the
    /// accountant; writes reports/FAULTS.md (exit 1 if a fault goes undetected).
    Faults(faults::FaultsArgs),
    /// Panics on purpose: tests check that a panic gives one "internal error" line and
    /// exit status 3.
    #[command(name = "internal-panic", hide = true)]
    InternalPanic,
    /// The result cache of unit results: `stats` (entries and size per build), `prune`
    /// (remove what this build cannot use).
    Cache(cache::CacheCmdArgs),
    /// Print a shell completion script (bash, zsh, fish).
    Completions(completions::CompletionsArgs),
    /// Print the man page dpclaims(1), or write every command's page with --out DIR.
    Man(completions::ManArgs),
    /// For each inconclusive or seed-dependent row of a claim: why, and how many
    /// replicates would decide it at the seed-to-seed spread of the stability records.
    Advise(advise::AdviseArgs),
    /// Accept the pending snapshots of the last runs into the regression baseline (all, or
    /// those of the claims named), as `cargo insta accept`.
    Accept(accept::AcceptArgs),
    /// Show each pending snapshot as the changes of its numbers and verdicts, and accept,
    /// reject or skip it (--accept-all / --reject-all for scripts), as `cargo insta review`.
    Review(accept::ReviewArgs),
    /// The registration ledger: each claim's judged parts as registered with its first
    /// accepted results, and every amendment since (show; backfill from git history).
    Ledger(ledger::LedgerArgs),
}

/// Parse the arguments, run the command, map errors to exit status 2 (a panic: 3).
pub fn main() -> ExitCode {
    signals::install();
    std::panic::set_hook(Box::new(|info| {
        // `println!` panics when standard output cannot be written (a full disk, a
        // closed descriptor): bad surroundings, not a bug, so exit 2 with a message;
        // a reader that went away (`| head -1`) ends the process quietly by SIGPIPE.
        if let Some(why) = stdout_failure(info) {
            if why.contains("Broken pipe") || why.contains("os error 32") {
                signals::stdout_closed();
            }
            signals::finish();
            crate::report::eprint_line(&format!("error: cannot write to standard output: {why}"));
            signals::exit_once(2);
        }
        signals::finish();
        eprintln!("{}", internal_error_line(info));
        // `_exit`, as a stop does: a panic in one worker while another still computes a
        // unit must not run OpenBLAS's destructor under it (signals::exit_once).
        signals::exit_once(3);
    }));
    let code = dispatch();
    signals::finish();
    code
}

fn dispatch() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    crate::linalg::pin_blas_threads();
    if let Err(e) = worker_threads() {
        crate::report::eprint_line(&format!("error: {e}"));
        return ExitCode::from(2);
    }
    let result = match &cli.command {
        Command::List(a) => run::list(a),
        Command::Check(a) => check::run(a),
        Command::Schema => {
            println!("{}", crate::spec::schema::claim_schema_json());
            Ok(ExitCode::SUCCESS)
        }
        Command::Init(a) => init::run(a),
        Command::New(a) => new::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Run(a) => run::run(a),
        Command::Stability(a) => stability::run(a),
        Command::Merge(a) => shard::merge(a),
        Command::Slurm(a) => slurm::slurm(a),
        Command::Demo(a) => demo::run(a),
        Command::Account(a) => privacy::account(a),
        Command::Calibrate(a) => privacy::calibrate(a),
        Command::Audit(a) => privacy::audit(a),
        Command::PrivacyReport(a) => privacy_report::run(a),
        Command::Train(a) => train::run(a),
        Command::Fig2(a) => fig2::run(a),
        Command::Perf(a) => perf::run(a),
        Command::Faults(a) => faults::run(a),
        Command::InternalPanic => panic!("deliberate panic (internal-panic)\nsecond line"),
        Command::Diff(a) => diff::run(a),
        Command::Ci(a) => ci::run(a),
        Command::Cache(a) => cache::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
        Command::Accept(a) => accept::accept(a),
        Command::Advise(a) => advise::run(a),
        Command::Review(a) => accept::review(a),
        Command::Ledger(a) => ledger::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Stopped by a signal: the failures it caused are not reported.
            signals::finish();
            // Spec input quoted anywhere in the chain is clipped (a 200 KB value gives a
            // one-line message).
            let msg = crate::spec::echo::clip_echoes(&format!("{e:#}"));
            // Control characters of spec text, file names or a core's stderr are shown
            // escaped, never sent to the terminal (issue 50, family 7).
            let shown = format!("error: {msg}{}", lookalikes(&msg));
            eprintln!("{}", crate::report::terminal_text(&shown));
            ExitCode::from(2)
        }
    }
}

/// A note on names that print like ASCII but are not: an "unknown field `stаtement`"
/// whose `а` is Cyrillic reads exactly like the expected `statement`. Every backticked
/// span of an error message that holds a letter outside ASCII is named with its code
/// points ("" when there is none).
fn lookalikes(msg: &str) -> String {
    let mut notes = Vec::new();
    for (i, span) in msg.split('`').enumerate() {
        if i % 2 == 0 || span.chars().count() > 64 {
            continue;
        }
        let odd: Vec<String> = span
            .chars()
            .enumerate()
            .filter(|(_, c)| !c.is_ascii() && c.is_alphabetic())
            .map(|(k, c)| format!("U+{:04X} at character {}", c as u32, k + 1))
            .collect();
        let note = format!("`{span}` holds a non-ASCII letter ({})", odd.join(", "));
        if !odd.is_empty() && !notes.contains(&note) {
            notes.push(note);
        }
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!(
            "\nnote: {}: it may print like an ASCII name but is a different one",
            notes.join("; ")
        )
    }
}

/// Most worker threads: results never depend on the count (each unit runs on one
/// thread), and each thread reserves its stack, so a count far above the cores only
/// costs memory (RAYON_NUM_THREADS=100000 under a memory limit made the pool's creation
/// abort).
pub const MAX_THREADS: usize = 256;

/// Builds the worker pool from `RAYON_NUM_THREADS` (read here, not by rayon, so that a
/// bad value is an error naming the variable and a huge one is clamped to
/// [`MAX_THREADS`] with a note); unset: one thread per core.
fn worker_threads() -> Result<(), String> {
    let n = match std::env::var("RAYON_NUM_THREADS") {
        Err(_) => return Ok(()),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(0) => return Ok(()),
            Ok(n) if n > MAX_THREADS => {
                eprintln!(
                    "note: RAYON_NUM_THREADS={n} is more than {MAX_THREADS}; using {MAX_THREADS} threads"
                );
                MAX_THREADS
            }
            Ok(n) => n,
            Err(_) => {
                return Err(format!(
                    "the environment variable RAYON_NUM_THREADS must be a number of threads (0: one per core), got {:?}",
                    crate::spec::echo::clip_echoes(&v)
                ))
            }
        },
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| format!("cannot start {n} worker threads (RAYON_NUM_THREADS): {e}"))
}

/// The reason of a panic of `print!`/`println!` on standard output, if it is one.
fn stdout_failure(info: &std::panic::PanicHookInfo<'_>) -> Option<String> {
    let payload = info.payload();
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())?;
    msg.strip_prefix("failed printing to stdout: ")
        .map(str::to_string)
}

/// A panic as one line on stderr: "internal error: <message> (at <file>:<line>), please
/// report". A panic is a bug of dpclaims, never a consequence of bad input (that is
/// exit status 2): the hook prints this line and exits with status 3.
pub fn internal_error_line(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into());
    let msg = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = info
        .location()
        .map(|l| format!(" (at {}:{})", l.file(), l.line()))
        .unwrap_or_default();
    format!(
        "internal error: {}{at}, please report",
        crate::spec::echo::clip_echoes(&msg)
    )
}

/// An invalid value that clap read from an environment variable (a flag's `env`) while
/// the flag itself is not on the command line: the message names the variable, not a
/// flag the user never typed.
fn from_environment(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    use clap::CommandFactory as _;
    let ContextValue::String(arg) = e.get(ContextKind::InvalidArg)? else {
        return None;
    };
    let long = arg
        .strip_prefix("--")?
        .split([' ', '='])
        .next()?
        .to_string();
    let typed = std::env::args_os()
        .skip(1)
        .any(|a| a.to_string_lossy().split('=').next() == Some(&format!("--{long}")));
    if typed {
        return None;
    }
    let cmd = Cli::command();
    let var = cmd
        .get_subcommands()
        .flat_map(|c| c.get_arguments())
        .chain(cmd.get_arguments())
        .filter(|a| a.get_long() == Some(long.as_str()))
        .find_map(|a| a.get_env())?
        .to_string_lossy()
        .into_owned();
    let value = std::env::var_os(&var)?;
    let why = e
        .get(ContextKind::InvalidValue)
        .map(|_| "not a valid value".to_string())
        .unwrap_or_default();
    let detail = std::error::Error::source(e)
        .map(|s| format!(": {s}"))
        .unwrap_or_default();
    Some(format!(
        "error: the environment variable {var}={:?} (read for --{long}): {why}{detail}; unset it or fix its value",
        value.to_string_lossy()
    ))
}

/// A command-line error of clap as one line on stderr, exit status 2 (`--help` and
/// `--version` print as usual, exit 0; a missing subcommand prints the help, exit 2):
/// clap's message, its hints joined with "; ", then "(see --help)".
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        _ => {}
    }
    if let Some(line) = from_environment(&e) {
        eprintln!("{}", crate::spec::echo::clip_echoes(&line));
        return ExitCode::from(2);
    }
    let mut rendered = e.render().to_string();
    if let Some(tip) = nearest_command_tip(&e) {
        rendered.push('\n');
        rendered.push_str(&tip);
    }
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    eprintln!(
        "{} (see --help)",
        crate::spec::echo::clip_echoes(&parts.join("; "))
    );
    ExitCode::from(2)
}

/// For an unknown subcommand that clap finds nothing like (its Jaro similarity misses
/// short slips: `rn`, `rnu`), the visible subcommand within [`slip_limit`] edits of it
/// (a swap of neighbouring letters is one edit), in clap's words.
fn nearest_command_tip(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory as _;
    if e.kind() != ErrorKind::InvalidSubcommand || e.get(ContextKind::SuggestedSubcommand).is_some()
    {
        return None;
    }
    let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let cmd = Cli::command();
    let (d, name) = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| (edits(typed, c.get_name()), c.get_name().to_string()))
        .min()?;
    (d <= slip_limit(typed)).then(|| format!("tip: a similar subcommand exists: '{name}'"))
}

/// Edits allowed for a slip: 1 in a word of up to 4 letters, else 2.
fn slip_limit(typed: &str) -> usize {
    if typed.chars().count() <= 4 {
        1
    } else {
        2
    }
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbouring characters, each one edit.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod slip_tests {
    #[test]
    fn edit_distance_counts_a_swap_once() {
        assert_eq!(super::edits("rnu", "run"), 1);
        assert_eq!(super::edits("rn", "run"), 1);
        assert_eq!(super::edits("plan", "plan"), 0);
        assert_eq!(super::edits("xyz", "run"), 3);
    }
}

#[cfg(test)]
mod lookalike_tests {
    #[test]
    fn a_cyrillic_letter_in_a_key_is_named() {
        let n = super::lookalikes("c.yaml: unknown field `st\u{430}tement`, expected `statement`");
        assert!(n.contains("U+0430 at character 3"), "{n}");
        assert_eq!(super::lookalikes("unknown field `statment`"), "");
        // Prose in other scripts is not flagged: only names in backticks.
        assert_eq!(super::lookalikes("probabilité `x`"), "");
    }
}
