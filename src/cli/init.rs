//! `dpclaims init [DIR]`: parses and calls [`crate::project::init`].
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The project's directory (created when missing; default: the current one). A
    /// directory that is already a project, or holds a file init would write, is refused.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

pub fn run(a: &InitArgs) -> anyhow::Result<ExitCode> {
    let written = crate::project::init::init(&a.dir)?;
    println!(
        "created a dpclaims project in {} ({} files):",
        a.dir.display(),
        written.len()
    );
    for f in &written {
        println!("  {}", f.display());
    }
    println!("next (the example core needs python3 with numpy):");
    if a.dir != std::path::Path::new(".") {
        println!("  cd {}", a.dir.display());
    }
    println!("  dpclaims check       # every spec, every error, TODO placeholders");
    println!("  dpclaims run         # run the example claim, judge it, write reports/");
    println!("  dpclaims accept      # record its snapshot: the regression baseline");
    Ok(ExitCode::SUCCESS)
}
