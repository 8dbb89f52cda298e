//! `dpclaims init [DIR]`: parses and calls [`crate::project::init`].
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The project's directory (created when missing; default: the current one). A
    /// directory that is already a project, holds a file init would write, or a symbolic
    /// link where init would write, is refused; a failure midway leaves it as it was. The
    /// staging directory a killed init left there (`.dpclaims-init-<pid>-<random>`, its
    /// process gone, only init's files in it) is removed, and named on stderr.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

pub fn run(a: &InitArgs) -> anyhow::Result<ExitCode> {
    // Every path through `shown_path`: a name with a newline or an escape sequence stays
    // on its line and does not drive the terminal (issue 58).
    let shown = crate::report::shown_path;
    let written = crate::project::init::init_with(&a.dir, &mut |l| {
        use crate::project::stale::Outcome;
        let what = format!(
            "{}, the staging directory of an init (process {}) that no longer runs",
            shown(&l.path),
            l.pid
        );
        match l.outcome {
            Outcome::Removed => eprintln!("init: removed {what}"),
            Outcome::Kept(why) => eprintln!("init: left {what}: {why}"),
            Outcome::Failed(e) => eprintln!(
                "init: could not remove {what}: {}",
                crate::spec::echo::escape_controls(&e.to_string())
            ),
        }
    })?;
    println!(
        "created a dpclaims project in {} ({} files):",
        shown(&a.dir),
        written.len()
    );
    for f in &written {
        println!("  {}", shown(f));
    }
    println!("next (the example core needs python3 with numpy):");
    if a.dir != std::path::Path::new(".") {
        println!("  cd {}", shown(&a.dir));
    }
    println!("  dpclaims check       # every spec, every error, TODO placeholders");
    println!("  dpclaims run         # run the example claim, judge it, write reports/");
    println!("  dpclaims accept      # record its snapshot: the regression baseline");
    Ok(ExitCode::SUCCESS)
}
