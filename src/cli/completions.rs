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
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "dpclaims", &mut script);
    let script = String::from_utf8(script)?;
    let script = match a.shell {
        Shell::Bash => bash_claim_ids(&script, &value_options(&cmd)),
        Shell::Zsh => zsh_claim_ids(&script),
        Shell::Fish => fish_claim_ids(&script),
    };
    use std::io::Write as _;
    std::io::stdout().write_all(script.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The commands whose positional arguments are claim files, ids or directories: after
/// them the scripts offer the claim ids of `claims/*.yaml` in the current directory
/// besides file names (clap_complete 4.6 writes static scripts: the ids are listed by
/// the shell function when completing, not by the binary).
const CLAIM_COMMANDS: [&str; 5] = ["run", "plan", "list", "stability", "check"];

/// The options of [`CLAIM_COMMANDS`] that take a value: after them bash completes the
/// value as clap's script does, not a claim id.
fn value_options(cmd: &clap::Command) -> Vec<String> {
    let mut out: Vec<String> = cmd
        .get_subcommands()
        .filter(|c| CLAIM_COMMANDS.contains(&c.get_name()))
        .flat_map(|c| c.get_arguments())
        .filter(|a| !a.is_positional() && a.get_action().takes_values())
        .flat_map(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|s| format!("-{s}"));
            long.into_iter().chain(short)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// clap's bash script, registered through a wrapper that adds the claim ids after the
/// commands of [`CLAIM_COMMANDS`].
fn bash_claim_ids(script: &str, value_options: &[String]) -> String {
    let commands = CLAIM_COMMANDS.join("|");
    let values = if value_options.is_empty() {
        "--".to_string()
    } else {
        value_options.join("|")
    };
    let wrapper = format!(
        r#"
# Claim ids: after `dpclaims {commands}`, the stems of claims/*.yaml in the current
# directory are offered besides file names (`dpclaims run <id>` reads claims/<id>.yaml).
_dpclaims_claim_ids() {{
    local f
    for f in claims/*.yaml; do
        [[ -f "$f" ]] || continue
        f="${{f#claims/}}"
        printf '%s\n' "${{f%.yaml}}"
    done
}}

_dpclaims_with_claim_ids() {{
    _dpclaims "$@"
    local cur="$2" prev="$3" sub="" w
    for w in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        case "$w" in
            -*) ;;
            *) sub="$w"; break ;;
        esac
    done
    case "$sub" in
        {commands}) ;;
        *) return 0 ;;
    esac
    [[ "$cur" == -* ]] && return 0
    case "$prev" in
        {values}) return 0 ;;
    esac
    compopt -o filenames 2>/dev/null
    COMPREPLY=( $(compgen -W "$(_dpclaims_claim_ids)" -- "$cur") $(compgen -f -- "$cur") )
    return 0
}}
"#
    );
    let script = script.replace(
        "complete -F _dpclaims ",
        "complete -F _dpclaims_with_claim_ids ",
    );
    format!(
        "{}{wrapper}",
        script.trim_end_matches('\n').to_string() + "\n"
    )
}

/// clap's zsh script with the claim files of [`CLAIM_COMMANDS`] completed as claim ids
/// or file names.
fn zsh_claim_ids(script: &str) -> String {
    let helper = r#"
# Claim ids (the stems of claims/*.yaml in the current directory) or file names: the
# claim arguments of `dpclaims run`, `plan`, `list`, `stability` and `check`.
_dpclaims_claim_ids() {
    local -a ids
    ids=(claims/*.yaml(N:t:r))
    _alternative "ids:claim id:(${(j: :)${(q)ids[@]}})" 'files:claim file:_files'
}
"#;
    let mut out = String::new();
    for (i, line) in script.lines().enumerate() {
        if line.starts_with("'*::paths -- ") && line.ends_with(":_files' \\") {
            out.push_str(&line.replace(":_files' \\", ":_dpclaims_claim_ids' \\"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
        if i == 0 {
            out.push_str(helper);
        }
    }
    out
}

/// clap's fish script plus the claim ids after [`CLAIM_COMMANDS`] (fish offers the
/// file names as well).
fn fish_claim_ids(script: &str) -> String {
    format!(
        r#"{script}
# Claim ids: the stems of claims/*.yaml in the current directory.
function __fish_dpclaims_claim_ids
    for f in claims/*.yaml
        string replace -r '^claims/(.*)\.yaml$' '$1' -- $f
    end
end
complete -c dpclaims -n "__fish_dpclaims_using_subcommand {}" -a "(__fish_dpclaims_claim_ids)" -d 'claim id'
"#,
        CLAIM_COMMANDS.join(" ")
    )
}

/// Prints dpclaims(1) on stdout, or writes every command's page into `--out`.
pub fn man(a: &ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::Cli::command();
    match &a.out {
        Some(dir) => {
            // Never written through a link: the pages are generated into a fresh
            // directory of their own, then each renamed into place (a rename replaces a
            // link, it does not follow it); a link already at a page's name is refused.
            let fail =
                |e: std::io::Error| anyhow::anyhow!("writing man pages to {}: {e}", dir.display());
            std::fs::create_dir_all(dir).map_err(fail)?;
            let tmp = dir.join(format!(
                ".dpclaims-man-{:016x}",
                crate::fsio::write::random_u64()
            ));
            std::fs::create_dir(&tmp).map_err(fail)?;
            // The pages' names, checked against the inputs before anything is replaced:
            // a page never replaces a tracked file of the repository (`man --out .`).
            let generated = (|| -> std::io::Result<Vec<std::fs::DirEntry>> {
                clap_mangen::generate_to(cmd, &tmp)?;
                let mut pages: Vec<_> = std::fs::read_dir(&tmp)?.flatten().collect();
                pages.sort_by_key(|e| e.file_name());
                Ok(pages)
            })();
            let pages = match generated {
                Ok(p) => p,
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&tmp);
                    return Err(fail(e));
                }
            };
            let targets: Vec<PathBuf> = pages.iter().map(|e| dir.join(e.file_name())).collect();
            let outs: Vec<super::alias::Output<'_>> = targets
                .iter()
                .map(|t| super::alias::Output::File("--out", t))
                .collect();
            if let Err(e) = super::alias::guard(&outs, Vec::new()) {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(e);
            }
            let moved = (|| {
                for e in &pages {
                    let to = dir.join(e.file_name());
                    if let Ok(m) = std::fs::symlink_metadata(&to) {
                        if !m.is_file() {
                            return Err(std::io::Error::other(format!(
                                "{} is {}: refusing to replace it",
                                to.display(),
                                crate::fsio::describe(m.file_type())
                            )));
                        }
                    }
                }
                for e in pages {
                    std::fs::rename(e.path(), dir.join(e.file_name()))?;
                }
                Ok(())
            })();
            let _ = std::fs::remove_dir_all(&tmp);
            moved.map_err(fail)?;
            println!("man pages written to {}", dir.display());
        }
        None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?,
    }
    Ok(ExitCode::SUCCESS)
}
