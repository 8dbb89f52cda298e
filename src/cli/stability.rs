//! `dpclaims stability`: the claim suite at K master seeds, and how often each verdict
//! came out each way (`reports/STABILITY.md`). Each seed's units run in parallel like
//! `dpclaims run`; a seed's verdicts do not depend on which other seeds run, so each
//! seed's rows are stored as soon as it is judged (`reports/stability/seed-<k>.jsonl`,
//! [`record`]) and a later run reads them instead of running the seed again: a run that
//! is stopped, or spread over machines or sessions, resumes where it stopped.
use super::paths::default_paths;
use crate::report::stability::record::{self, Header, Lookup, Reuse, Row};
use crate::report::stability::{SeedVerdicts, Stability};
use crate::spec::{self, Profile};
use crate::train::Recipe;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct StabilityArgs {
    /// Claim files, ids (claims/<id>.yaml) or directories (default: claims/).
    pub paths: Vec<PathBuf>,
    /// Number of master seeds.
    #[arg(long, default_value_t = 20)]
    pub seeds: u64,
    /// The first master seed (the reference); seeds are first..first+K-1.
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Directory STABILITY.md is written to (default: `reports/` for the whole suite
    /// at the quick profile, `target/dpclaims/<name>` for a subset or another profile:
    /// a subset never replaces the committed STABILITY.md).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write every seed's verdict rows (estimate, interval, prediction, verdict) to
    /// this file as JSON lines, one per (seed, claim, prediction, variant).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Where each seed's rows are stored (`seed-<k>.jsonl`) and read back from: a seed
    /// whose record was made from the same claims by a build that judges them the same
    /// way is not run again (default: `stability/` in the --out directory).
    #[arg(long, value_name = "DIR")]
    pub records: Option<PathBuf>,
    /// Neither read nor write seed records: run every seed.
    #[arg(long, conflicts_with = "records")]
    pub no_records: bool,
    #[command(flatten)]
    pub budget: super::conclude::BudgetArgs,
    /// Print the estimate of what would run (the seeds the records do not hold) against
    /// the limits and exit (0 admitted, 2 refused): nothing runs, nothing is written.
    #[arg(long)]
    pub plan: bool,
    /// Each seed's units are cached under their own keys (the seed is in the key).
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

pub fn run(a: &StabilityArgs) -> anyhow::Result<ExitCode> {
    a.cache.with(|| run_seeds(a))?
}

impl StabilityArgs {
    /// `--out`, or the default above.
    pub fn out_dir(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| {
            let subset =
                (self.profile != Profile::Quick).then(|| format!("stability-{}", self.profile));
            let out = super::paths::default_out(&self.paths);
            if out == crate::project::path("reports") {
                super::paths::committed_or(out, subset)
            } else {
                // A subset: its own directory under target/dpclaims.
                out.with_file_name(format!(
                    "stability-{}",
                    out.file_name().unwrap_or_default().to_string_lossy()
                ))
            }
        })
    }
}

/// How many times each claim would run: once per seed of `a.first_seed..=last` whose
/// usable record does not hold its rows (a seed without a record file: every claim).
/// Only the record files present are read, so a billion seeds cost nothing here.
fn claim_runs(a: &StabilityArgs, claims: &[spec::Claim], last: u64) -> Vec<f64> {
    let mut runs = vec![a.seeds as f64; claims.len()];
    let dir = match (a.no_records, &a.records) {
        (true, _) => return runs,
        (false, Some(d)) => d.clone(),
        (false, None) => a.out_dir().join("stability"),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return runs;
    };
    for e in entries.flatten().take(100_000) {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(seed) = name
            .strip_prefix("seed-")
            .and_then(|s| s.strip_suffix(".jsonl"))
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        if seed < a.first_seed || seed > last || name != format!("seed-{seed}.jsonl") {
            continue;
        }
        if let Lookup::Usable(reuse) = record::read(&dir, &Header::current(seed, a.profile, claims))
        {
            for (i, c) in claims.iter().enumerate() {
                if reuse.kept.contains_key(&c.id) {
                    runs[i] -= 1.0;
                }
            }
        }
    }
    runs
}

fn run_seeds(a: &StabilityArgs) -> anyhow::Result<ExitCode> {
    if a.seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    let last = a.first_seed.checked_add(a.seeds - 1).ok_or_else(|| {
        anyhow::anyhow!(
            "--first-seed {} with --seeds {}: the last seed overflows",
            a.first_seed,
            a.seeds
        )
    })?;
    let claims = spec::load_claims(&default_paths(&a.paths)?)?;
    let out = a.out_dir();
    {
        use super::alias::{self, Output};
        let records_dir = a.records.clone().unwrap_or_else(|| out.join("stability"));
        let mut outs = vec![Output::Dir("--out", &out)];
        if let Some(j) = &a.json {
            outs.push(Output::File("--json", j));
        }
        if !a.no_records {
            outs.push(Output::Dir("--records", &records_dir));
        }
        if !a.cache.no_cache {
            outs.push(Output::Dir("the cache", &a.cache.cache_dir));
        }
        alias::guard(&outs, alias::run_inputs(&claims, None, None))?;
    }
    // Through the planner before anything runs or is written, priced by what will run:
    // each claim once per seed whose record does not hold it (records are only read
    // here; a seed without a record file runs whole, counted without listing the seeds).
    let runs = claim_runs(a, &claims, last);
    let budget = a.budget.budget();
    let admitted = budget.check_runs(&claims, a.profile, &runs);
    if a.plan {
        let limits = budget.limits()?;
        let e = budget.runs_estimate(&claims, a.profile, &runs)?;
        let line = format!(
            "`dpclaims stability` ({} seeds, {} claim runs the records do not hold): estimated wall {} ({:.1} s) on {} threads (limit {}), memory {} (limit {}), at most; {}",
            a.seeds,
            runs.iter().sum::<f64>(),
            crate::pipeline::estimate::hours(e.wall_seconds),
            e.wall_seconds,
            e.threads,
            crate::pipeline::estimate::hours(limits.max_seconds),
            crate::pipeline::estimate::gb(e.bytes),
            crate::pipeline::estimate::gb(limits.max_bytes),
            if admitted.is_ok() { "admitted" } else { "refused" }
        );
        println!("{}", crate::spec::echo::clip_echoes(&line));
    }
    admitted?;
    if a.plan {
        return Ok(ExitCode::SUCCESS);
    }
    crate::report::prepare_output_dir(&out)?;
    let records =
        (!a.no_records).then(|| a.records.clone().unwrap_or_else(|| out.join("stability")));
    if let Some(dir) = &records {
        crate::report::prepare_output_dir(dir)?;
        // A record that is a FIFO, a device or a link is an error now, not a wait or a
        // failed write after the seeds ran (crate::fsio::read).
        for seed in a.first_seed..=last {
            let p = record::path(dir, seed);
            crate::fsio::precheck(&p, crate::fsio::InputKind::Record)
                .map_err(|e| anyhow::anyhow!("stability record {}: {e}", p.display()))?;
        }
    }
    // Seeds with a usable record are read; of a record made by this build, the rows of
    // unchanged claims are read and only the new or changed claims run (and the seed's
    // whole record is rewritten); the other seeds run whole (and are recorded).
    let mut stored: Vec<(u64, Header, Option<Reuse>)> = Vec::new();
    for seed in a.first_seed..=last {
        let header = Header::current(seed, a.profile, &claims);
        let reuse = match records.as_deref().map(|d| record::read(d, &header)) {
            Some(Lookup::Usable(reuse)) => {
                if !reuse.is_complete() {
                    let list: Vec<String> = reuse
                        .rerun
                        .iter()
                        .map(|(id, why)| format!("{id} ({why})"))
                        .collect();
                    let line = format!(
                        "seed {seed}: record used for {} claims; runs again: {}",
                        reuse.kept.len(),
                        list.join(", ")
                    );
                    eprintln!("{}", crate::report::terminal_text(&line));
                }
                Some(reuse)
            }
            Some(Lookup::Unusable(why)) => {
                let line = format!("seed {seed}: record not used, the seed runs again: {why}");
                eprintln!("{}", crate::report::terminal_text(&line));
                None
            }
            Some(Lookup::Missing) | None => None,
        };
        stored.push((seed, header, reuse));
    }
    let runs = |c: &crate::spec::Claim, reuse: &Option<Reuse>| {
        reuse.as_ref().is_none_or(|r| !r.kept.contains_key(&c.id))
    };
    let to_run: usize = stored
        .iter()
        .map(|s| {
            claims
                .iter()
                .filter(|c| runs(c, &s.2))
                .map(|c| crate::pipeline::unit_count(c, a.profile))
                .sum::<usize>()
        })
        .sum();
    let whole = stored.iter().filter(|s| s.2.is_none()).count();
    let partly = stored
        .iter()
        .filter(|s| s.2.as_ref().is_some_and(|r| !r.is_complete()))
        .count();
    if let Some(dir) = &records {
        let line = format!(
            "seed records {}: {} of {} seeds read whole, {partly} in part, {whole} to run",
            dir.display(),
            stored.len() - whole - partly,
            stored.len()
        );
        eprintln!("{}", crate::report::terminal_text(&line));
    }
    let bar = super::progress::Progress::units(to_run)?;
    let mut seeds = Vec::new();
    let mut lines = String::new();
    for (seed, header, reuse) in stored {
        let start = std::time::Instant::now();
        let complete = reuse.as_ref().is_some_and(Reuse::is_complete);
        let mut kept = reuse.map(|r| r.kept).unwrap_or_default();
        let mut rows = Vec::new();
        let mut ran = 0usize;
        for c in &claims {
            if let Some(old) = kept.remove(&c.id) {
                rows.extend(old);
                continue;
            }
            bar.set_message(format!("seed {seed}: {}", c.id));
            let tick = || bar.inc(1);
            let outcome = crate::pipeline::run_claim(c, a.profile, seed, &Recipe::PAPER, &tick)?;
            rows.extend(Row::of(seed, std::slice::from_ref(&outcome)));
            ran += 1;
        }
        let how = if complete {
            "read from its record".to_string()
        } else {
            if let Some(dir) = &records {
                let path = record::path(dir, seed);
                crate::report::write_atomic(&path, record::to_text(&header, &rows).as_bytes())
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            }
            if ran == claims.len() {
                "run".to_string()
            } else {
                format!("{ran} of {} claims run, the others read", claims.len())
            }
        };
        for r in &rows {
            lines.push_str(&r.to_line());
            lines.push('\n');
        }
        let sv = SeedVerdicts::from_rows(seed, &rows);
        let same = seeds
            .first()
            .map(|f: &SeedVerdicts| {
                f.rows
                    .iter()
                    .all(|(k, v)| sv.rows.get(k).map(|s| s.verdict) == Some(v.verdict))
            })
            .unwrap_or(true);
        bar.suspend(|| {
            crate::report::eprint_line(&format!(
                "seed {seed}: {how} ({:.0} s), {} problems, verdicts {} the reference seed's",
                start.elapsed().as_secs_f64(),
                sv.problems.len(),
                if same { "equal to" } else { "differ from" }
            ))
        });
        seeds.push(sv);
    }
    bar.finish_and_clear();
    let st = Stability {
        profile: a.profile.to_string(),
        seeds,
    };
    let path = out.join("STABILITY.md");
    crate::report::write_atomic(&path, st.markdown().as_bytes())
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    if let Some(j) = &a.json {
        crate::report::write_atomic(j, lines.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", j.display()))?;
    }
    let k = st.seeds.len();
    let min_caught = st.controls().iter().map(|c| c.1).min().unwrap_or(k);
    let line = format!(
        "{k} seeds: {} holds<->refuted flips; worst control caught at {min_caught}/{k}; suite identical to seed {} at {}/{k}; written to {}",
        st.holds_refuted_flips().len(),
        a.first_seed,
        st.identical_to_reference(),
        path.display()
    );
    println!("{}", crate::report::terminal_text(&line));
    Ok(ExitCode::SUCCESS)
}
