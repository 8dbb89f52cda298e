//! The result cache from the command line: `--cache DIR` / `--no-cache` of the commands
//! that run units (`run`, `run --shard`, `stability`, `faults`), and `dpclaims cache
//! stats|prune` ([`crate::pipeline::cache`]).
use crate::pipeline::cache::{self as maintain, DEFAULT_DIR};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Where unit results are cached.
#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Directory of the result cache (unit results keyed by their content and this
    /// build's engine hash; an unchanged unit is read, not recomputed).
    #[arg(
        long = "cache",
        value_name = "DIR",
        env = "DPCLAIMS_CACHE",
        default_value_os_t = crate::project::path(DEFAULT_DIR)
    )]
    pub cache_dir: PathBuf,
    /// Compute every unit: neither read nor write the result cache.
    #[arg(
        long,
        env = "DPCLAIMS_NO_CACHE",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_cache: bool,
}

impl CacheArgs {
    /// Runs `f` with the units of runs cached (unless
    /// `--no-cache`), then says on stderr what the cache did. A cache directory that
    /// cannot be used is a warning: the run goes on uncached.
    ///
    /// A directory that is not the tool's own cache (it holds other files and no
    /// `CACHEDIR.TAG` of dpclaims) is an error before any work: nothing is written into it.
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> anyhow::Result<R> {
        if self.no_cache {
            return Ok(f());
        }
        crate::pipeline::cache::with_cache(&self.cache_dir, f)
    }
}

#[derive(Args, Debug)]
pub struct CacheCmdArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Subcommand, Debug)]
pub enum CacheAction {
    /// Entries and size of the cache, per build (each entry is read and checked).
    Stats(CacheDirArgs),
    /// Remove the entries this build cannot use: other builds', damaged ones, stale
    /// temporary files (with --all: every entry).
    Prune {
        #[command(flatten)]
        dir: CacheDirArgs,
        /// Remove every entry, this build's too.
        #[arg(long)]
        all: bool,
    },
}

#[derive(Args, Debug)]
pub struct CacheDirArgs {
    /// Directory of the result cache.
    #[arg(
        long = "cache",
        value_name = "DIR",
        env = "DPCLAIMS_CACHE",
        default_value_os_t = crate::project::path(DEFAULT_DIR)
    )]
    pub cache_dir: PathBuf,
    /// Print exactly one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

fn mb(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

pub fn run(a: &CacheCmdArgs) -> anyhow::Result<ExitCode> {
    let build = crate::build_id::ENGINE_HASH;
    match &a.action {
        CacheAction::Stats(d) => {
            let s = maintain::stats(&d.cache_dir, build)?;
            if d.json {
                println!("{}", serde_json::to_string_pretty(&s)?);
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "result cache {}: {} entries, {} in {} builds",
                s.dir,
                s.entries(),
                mb(s.bytes()),
                s.builds.len()
            );
            for b in &s.builds {
                let mut extra = vec![];
                if b.current {
                    extra.push("this build".to_string());
                }
                if b.corrupt > 0 {
                    extra.push(format!("{} damaged", b.corrupt));
                }
                if b.temporary > 0 {
                    extra.push(format!("{} temporary files", b.temporary));
                }
                println!(
                    "  build {:<16} {:>8} entries {:>11}{}",
                    b.build,
                    b.entries,
                    mb(b.bytes),
                    if extra.is_empty() {
                        String::new()
                    } else {
                        format!("  ({})", extra.join(", "))
                    }
                );
            }
        }
        CacheAction::Prune { dir, all } => {
            let p = maintain::prune(&dir.cache_dir, build, *all)?;
            if dir.json {
                println!("{}", serde_json::to_string_pretty(&p)?);
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "result cache {}: removed {} entries of other builds, {} damaged, {} temporary files ({}); {} entries kept",
                p.dir,
                p.other_builds,
                p.corrupt,
                p.temporary,
                mb(p.bytes),
                p.kept
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
