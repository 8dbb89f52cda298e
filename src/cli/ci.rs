//! `dpclaims ci`: the steps of the CI workflow `dpclaims init` writes
//! (src/project/skeleton/github/dpclaims.yml) run here, into a scratch directory, so a
//! user sees what CI will say before pushing, without touching the committed reports:
//! `check`, then `run --require-baseline --junit` into `<out>/reports`, then `diff`
//! against the committed `reports/verdicts.json` into `<out>/diff.md`. Each step is this
//! same binary started as a child (the same code as the workflow's step, its exit status
//! kept); with `--github` the run also writes the job summary the workflow would show
//! (`<out>/step-summary.md`) and prints the annotations.
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[derive(Args, Debug)]
pub struct CiArgs {
    /// Claim files or directories (default: claims/), as `run` takes them.
    pub paths: Vec<PathBuf>,
    /// The scratch directory: `reports/`, `junit.xml`, `diff.md` and, with --github,
    /// `step-summary.md` go there. It must not be the committed report set or inside it.
    #[arg(long, default_value = "target/dpclaims-ci")]
    pub out: PathBuf,
    /// The committed report set the run is compared with (its verdicts.json).
    #[arg(long, default_value = "reports")]
    pub committed: PathBuf,
    /// Also what GitHub Actions shows: annotations on stdout and the job summary in
    /// `<out>/step-summary.md` (GITHUB_ACTIONS=true for the run).
    #[arg(long)]
    pub github: bool,
}

/// The absolute, lexically normalised form of `p` (`.` and `..` resolved without the
/// file system: the scratch directory may not exist yet).
fn absolute(p: &Path) -> PathBuf {
    let base = std::env::current_dir().unwrap_or_default();
    let mut out = PathBuf::new();
    for c in base.join(p).components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn step(name: &str, args: &[std::ffi::OsString], envs: &[(&str, PathBuf)]) -> anyhow::Result<i32> {
    eprintln!("ci: {name}");
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let status = cmd.status()?;
    // A child stopped by a signal has no code: reported as the shell would (128 + n).
    Ok(status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt as _;
        128 + status.signal().unwrap_or(0)
    }))
}

/// Runs the workflow's steps; the exit status is `check`'s when it fails (the run is then
/// skipped, as in the workflow), else the run's.
pub fn run(a: &CiArgs) -> anyhow::Result<ExitCode> {
    let out = absolute(&a.out);
    let committed = absolute(&a.committed);
    if out.starts_with(&committed) || committed.starts_with(&out) {
        eprintln!(
            "error: --out {} would write into the committed report set {} (or contain it): \
             choose a scratch directory (the default is target/dpclaims-ci)",
            crate::report::escape_controls(&a.out.display().to_string()),
            crate::report::escape_controls(&a.committed.display().to_string())
        );
        return Ok(ExitCode::from(2));
    }
    std::fs::create_dir_all(&out).map_err(|e| {
        anyhow::anyhow!(
            "cannot create the scratch directory {}: {e}",
            crate::report::escape_controls(&out.display().to_string())
        )
    })?;
    let os = |s: &str| std::ffi::OsString::from(s);
    let paths: Vec<std::ffi::OsString> =
        a.paths.iter().map(|p| p.clone().into_os_string()).collect();

    let mut check = vec![os("check")];
    check.extend(paths.iter().cloned());
    let code = step("dpclaims check", &check, &[])?;
    if code != 0 {
        eprintln!("ci: check failed (exit {code}); the run is skipped, as in the workflow");
        return Ok(ExitCode::from(code.clamp(1, 255) as u8));
    }

    let reports = out.join("reports");
    let junit = out.join("junit.xml");
    let mut run = vec![
        os("run"),
        os("--require-baseline"),
        os("--junit"),
        junit.clone().into_os_string(),
        os("--out"),
        reports.clone().into_os_string(),
    ];
    run.extend(paths.iter().cloned());
    let summary = out.join("step-summary.md");
    let mut envs: Vec<(&str, PathBuf)> = Vec::new();
    if a.github {
        // A fresh summary per run, as a job starts with an empty one.
        let _ = std::fs::remove_file(&summary);
        envs.push(("GITHUB_ACTIONS", PathBuf::from("true")));
        envs.push(("GITHUB_STEP_SUMMARY", summary.clone()));
        envs.push(("GITHUB_WORKSPACE", std::env::current_dir()?));
    }
    let run_code = step("dpclaims run --require-baseline --junit", &run, &envs)?;

    let committed_verdicts = committed.join("verdicts.json");
    let diff_md = out.join("diff.md");
    if committed_verdicts.is_file() && reports.join("verdicts.json").is_file() {
        let exe = std::env::current_exe()?;
        let o = Command::new(exe)
            .arg("diff")
            .arg(&committed_verdicts)
            .arg(&reports)
            .arg("--markdown")
            .output()?;
        std::fs::write(&diff_md, &o.stdout)?;
        eprintln!(
            "ci: what changed against {}: {}",
            crate::report::escape_controls(&committed_verdicts.display().to_string()),
            crate::report::escape_controls(&diff_md.display().to_string())
        );
    } else {
        eprintln!("ci: no committed verdicts.json to compare with (or no run output): no diff");
    }
    eprintln!(
        "ci: run exit {run_code}; reports {}, JUnit {}{}",
        crate::report::escape_controls(&reports.display().to_string()),
        crate::report::escape_controls(&junit.display().to_string()),
        if a.github {
            format!(
                ", job summary {}",
                crate::report::escape_controls(&summary.display().to_string())
            )
        } else {
            String::new()
        }
    );
    Ok(ExitCode::from(run_code.clamp(0, 255) as u8))
}
