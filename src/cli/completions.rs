//! `dpclaims completions SHELL` and `dpclaims man`: generated from the parser's own
//! definitions (clap_complete, clap_mangen), so they list exactly the commands and
//! options the binary accepts.
use clap::{Args, CommandFactory, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write one page per command (dpclaims.1, dpclaims-run.1, ...) into DIR instead of
    /// printing dpclaims(1).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Prints the completion script on stdout.
pub fn completions(a: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    use clap_complete::Shell as S;
    let shell = match a.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
    };
    let mut cmd = super::Cli::command();
    clap_complete::generate(shell, &mut cmd, "dpclaims", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// Prints dpclaims(1) on stdout, or writes every command's page into `--out`.
pub fn man(a: &ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::Cli::command();
    match &a.out {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .and_then(|_| clap_mangen::generate_to(cmd, dir))
                .map_err(|e| anyhow::anyhow!("writing man pages to {}: {e}", dir.display()))?;
            println!("man pages written to {}", dir.display());
        }
        None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?,
    }
    Ok(ExitCode::SUCCESS)
}
