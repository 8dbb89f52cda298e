//! Helpers shared by the test modules: running the built binary.
use std::process::{Command, Output};

/// Runs the built `dpclaims` binary with `args`.
pub fn dpclaims(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .args(args)
        .output()
        .expect("run dpclaims")
}

/// Asserts that a run succeeded (showing its stderr if not) and parses its stdout as JSON.
pub fn ok_json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Runs the built `dpclaims` binary with `args` in the directory `dir`.
pub fn dpclaims_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run dpclaims")
}
