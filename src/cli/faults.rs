//! `dpclaims faults`: the fault matrix ([`crate::faults::matrix`]).
use crate::faults::matrix::{self, CellStatus, MatrixConfig, Progress};
use crate::faults::{Fault, CATALOGUE};
use crate::report;
use crate::spec::{self, Profile};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct FaultsArgs {
    /// Claim files or directories (default: claims/).
    pub paths: Vec<PathBuf>,
    /// Profile: quick (CI scale) or full (paper scale).
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Master seed of every random stream.
    #[arg(long, default_value_t = 0, env = "DPCLAIMS_SEED")]
    pub seed: u64,
    /// Only these faults (names as in `--list`; repeatable or several values).
    #[arg(long, num_args = 1..)]
    pub only: Vec<String>,
    /// List the catalogue and exit.
    #[arg(long)]
    pub list: bool,
    /// Skip the direct-engine audits.
    #[arg(long)]
    pub no_audit: bool,
    /// Runs per data set of each audit.
    #[arg(long, default_value_t = 20_000)]
    pub audit_trials: usize,
    /// Directory FAULTS.md is written to.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Do not write FAULTS.md.
    #[arg(long)]
    pub no_report: bool,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
    /// Print exactly one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run every cell: do not stop a fault's row at its first detection (the full
    /// matrix, several times slower).
    #[arg(long)]
    pub all: bool,
    /// Print the matrix's estimate against the limits and exit (0 admitted, 2 refused):
    /// nothing runs, nothing is written.
    #[arg(long)]
    pub plan: bool,
    /// The fault-free baseline's units are cached under the papers' recipe (the same
    /// entries as `run`'s), each fault's under the fault's name.
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

/// Exit status: 0 when every fault run is detected, 1 when one is not, 2 on bad input
/// or a fault-free suite that cannot run.
pub fn run(a: &FaultsArgs) -> anyhow::Result<ExitCode> {
    if a.list {
        for i in CATALOGUE {
            println!(
                "{:<28} {}\n{:<28} violates: {}",
                i.name, i.description, "", i.violates
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let faults: Vec<Fault> = if a.only.is_empty() {
        Fault::all().collect()
    } else {
        let wanted = a
            .only
            .iter()
            .map(|s| s.parse::<Fault>().map_err(anyhow::Error::msg))
            .collect::<anyhow::Result<Vec<_>>>()?;
        // Catalogue order, each once.
        Fault::all().filter(|f| wanted.contains(f)).collect()
    };
    let paths = if a.paths.is_empty() {
        vec![crate::project::path("claims")]
    } else {
        a.paths.clone()
    };
    let claims = spec::load_claims(&paths)?;
    if !a.no_report {
        use super::alias::{self, Output};
        alias::guard(
            &[Output::Dir("--out", &a.out)],
            alias::run_inputs(&claims, None, None),
        )?;
    }
    let cfg = MatrixConfig {
        profile: a.profile,
        seed: a.seed,
        audit: !a.no_audit,
        audit_trials: a.audit_trials,
        all: a.all,
        ..MatrixConfig::default()
    };
    // Through the planner before anything runs or is written: every cell the matrix can
    // run, the audit column included (crate::faults::matrix::budget).
    let budget = a.budget.budget();
    let limits = budget.limits()?;
    let estimate = matrix::budget::estimate(&claims, &faults, &cfg, limits.threads);
    let admitted = budget.admit(&estimate);
    if a.plan {
        let line = format!(
            "{}: estimated work {} ({:.1} s) on {} threads (limit {}), memory {} (limit {}), \
             at most; {}",
            estimate.subject,
            crate::pipeline::estimate::hours(estimate.wall_seconds),
            estimate.wall_seconds,
            estimate.threads,
            crate::pipeline::estimate::hours(limits.max_seconds),
            crate::pipeline::estimate::gb(estimate.bytes),
            crate::pipeline::estimate::gb(limits.max_bytes),
            if admitted.is_ok() {
                "admitted"
            } else {
                "refused"
            }
        );
        println!("{}", crate::spec::echo::clip_echoes(&line));
    }
    admitted?;
    if a.plan {
        return Ok(ExitCode::SUCCESS);
    }
    if !a.no_report {
        crate::report::prepare_output_dir(&a.out)?;
    }
    let bar = super::progress::Progress::units(matrix::tick_count(&claims, &faults, &cfg))?;
    let progress = |p: Progress| {
        match p {
        Progress::Fault(f) => bar.set_message(f.name().to_string()),
        Progress::Tick => bar.inc(1),
        Progress::Skipped(n) => bar.inc(n as u64),
        // One line per finished row on stderr, also with --json (stdout stays one document).
        Progress::Done(r) => bar.suspend(|| {
            let cell = |s: CellStatus| {
                r.cells
                    .iter()
                    .filter(|c| c.status == s)
                    .map(|c| c.claim.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            eprintln!(
                "{:<28} {:<9} {:>6.1}s  verdict: [{}]  error: [{}]  snapshot: [{}]  audit: {}  not run: {}",
                r.name,
                if r.detected { "detected" } else { "MISSED" },
                r.seconds,
                cell(CellStatus::Verdict),
                cell(CellStatus::Error),
                cell(CellStatus::Snapshot),
                if r.audit_not_run {
                    "not run"
                } else if r.audit.is_empty() {
                    "-"
                } else if r.audit_violation {
                    "violation"
                } else if r.audit_error {
                    "error"
                } else {
                    "ok"
                },
                r.not_run.len()
            );
        }),
    }
    };
    let m = a
        .cache
        .with(|| matrix::run_matrix(&claims, &faults, &cfg, &progress))??;
    bar.finish_and_clear();
    if !a.no_report {
        let path = a.out.join("FAULTS.md");
        report::write_atomic(&path, m.markdown_in(&a.out).as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        if a.only.is_empty() {
            // The whole catalogue: its wall time goes into BENCH.md (timings never go into
            // FAULTS.md, whose bytes depend only on the spec, seed and build).
            let bench = a.out.join("BENCH.md");
            let old = match crate::fsio::read_string(&bench, crate::fsio::InputKind::Report) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => anyhow::bail!("reading {}: {e}", bench.display()),
            };
            let h = crate::report::bench::FAULTS_HEADING;
            let new = format!(
                "{h}\n\n{}/{} faults detected over {} claims (profile {}, seed {}{}) in \
                 **{:.0} s** of wall time ({:.1} min; target ≤ 10 min) on {} threads, \
                 OpenBLAS core {}, result cache {}. Measured by `dpclaims faults` (the whole catalogue, as `make faults` runs it).\n\n",
                m.detected,
                m.total,
                m.claims.len(),
                m.profile,
                m.seed,
                if m.all {
                    ", all cells"
                } else {
                    ", each row stopped at its first detection"
                },
                m.seconds,
                m.seconds / 60.0,
                rayon::current_num_threads(),
                crate::linalg::blas_core().unwrap_or_else(|| "unknown".into()),
                if a.cache.no_cache {
                    "off"
                } else {
                    "on (entries may have been read)"
                },
            );
            report::write_atomic(
                &bench,
                crate::report::bench::replace_section(&old, h, &new).as_bytes(),
            )
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", bench.display()))?;
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&m.json())?);
    } else {
        println!(
            "{}/{} faults detected ({} claims, profile {}, seed {}{}, {:.0} s){}",
            m.detected,
            m.total,
            m.claims.len(),
            m.profile,
            m.seed,
            if m.all { ", all cells" } else { "" },
            m.seconds,
            if a.no_report {
                String::new()
            } else {
                format!("; matrix in {}", a.out.join("FAULTS.md").display())
            }
        );
    }
    Ok(if m.detected == m.total {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
