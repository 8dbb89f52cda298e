//! `dpclaims perf`: measured speed of the DP-GD kernels, side by side in one process
//! (see [`crate::perf`] for what each number is).
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct PerfArgs {
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Small sizes (n = 200, p = 2000) for tests; not a measurement of the targets.
    #[arg(long)]
    pub quick: bool,
    /// Also write the report as Markdown to this file, atomically (`make bench` writes
    /// reports/BENCH.md).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Append criterion's saved medians for the `perf` bench group found under this
    /// directory (`<target dir>/criterion`) to the Markdown page.
    #[arg(long, value_name = "DIR", requires = "markdown")]
    pub criterion: Option<PathBuf>,
    /// Master seed of the data.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

pub fn run(a: &PerfArgs) -> anyhow::Result<ExitCode> {
    let sizes = if a.quick {
        crate::perf::PerfSizes::quick()
    } else {
        crate::perf::PerfSizes::full()
    };
    let seed = crate::rng::SeedPath::new(a.seed).child("perf");
    if let Some(path) = &a.markdown {
        use super::alias::{self, Input, Output};
        let ins = a
            .criterion
            .iter()
            .map(|c| Input::new("the criterion directory", c.clone()))
            .collect();
        alias::guard(&[Output::File("--markdown", path)], ins)?;
        crate::report::prepare_output_file(path)?;
    }
    // Read criterion's results first: a wrong directory fails before the measurement.
    let criterion = match &a.criterion {
        Some(dir) => {
            let rows = crate::report::bench::criterion_estimates(dir, "perf");
            anyhow::ensure!(
                !rows.is_empty(),
                "no criterion results for the perf benches under {} (run `cargo bench --bench perf` first)",
                dir.display()
            );
            crate::report::bench::criterion_markdown(&rows)
        }
        None => String::new(),
    };
    let report = crate::perf::measure(&sizes, &seed, a.quick)?;
    let mut md = crate::report::bench::markdown(&report) + &criterion;
    if let Some(path) = &a.markdown {
        // The fault matrix's and the suite's sections are measured elsewhere: kept.
        let old = match crate::fsio::read_string(path, crate::fsio::InputKind::Report) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => anyhow::bail!("reading {}: {e}", path.display()),
        };
        for h in crate::report::bench::KEPT_HEADINGS {
            if let Some(kept) = crate::report::bench::section(&old, h) {
                md = crate::report::bench::replace_section(&md, h, kept);
            }
        }
        crate::report::write_atomic(path, md.as_bytes())
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", crate::report::bench::markdown(&report));
    }
    Ok(ExitCode::SUCCESS)
}
