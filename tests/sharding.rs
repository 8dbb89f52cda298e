//! Sharded runs: shards run as separate processes and merged give the unsharded run's
//! reports byte for byte; merge rejects incomplete, duplicated or mixed inputs (exit 2,
//! naming the unit or file); a complete shard is skipped on re-run; the Slurm script is
//! valid bash, and runs end to end against a stand-in `sbatch`.
use crate::util::dpclaims_in;
use dpclaims::execute::shard::{self, Bits, Manifest, Partial, PartialUnit, Shard};
use dpclaims::spec::{self, Profile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A small random-features claim (two sweeps, replicates, bootstrap, a report metric):
/// every unit draws noise, so a unit computed with the wrong seed path would show.
pub(crate) const NOISE: &str = r#"
id: tiny-noise
title: "noise term of DP-GD on random features, tiny sizes (test only)"
source: {paper: "test", section: "s", equation: "Eq. 20"}
statement: "noise term along n and epsilon"
system: rf_dpgd
model: random_features_tanh
adjacency: replace_one
data: {input: gaussian, target: sign}
params:
  d: "4"
  n: "16"
  p: "4 * n"
  n_test: "50"
  eta: "1/p"
  steps: "ceil(d * ln(n)^2 / (eta * p))"
  clip: "sqrt(p) * ln(n)^2"
  epsilon: "2"
  delta: "1.0e-5"
  kappa: "2"
  sigma_scale: "1"
sweeps:
  vs_n:
    quick: {axes: {n: [8, 12, 16, 24]}, replicates: 3}
    full: {axes: {n: [8, 12, 16, 24]}, replicates: 3}
  vs_eps:
    quick: {axes: {epsilon: [1, 2, 4]}, replicates: 2}
    full: {axes: {epsilon: [1, 2, 4]}, replicates: 2}
variants:
  - name: prop22
  - name: huge-noise
    negative_control: true
    caught_by: [finite]
    params: {sigma_scale: "1.0e9"}
predictions:
  - kind: exponent
    evidence: consequence
    name: vs-n
    metric: noise_term
    sweep: vs_n
    x: n
    predicted: -2.0
    tolerance: 0.5
    tolerance_reason: "test only"
    bootstrap: 200
  - kind: inequality
    evidence: consequence
    name: finite
    metric: train_loss
    sweep: vs_n
    op: "<="
    rhs: "1.0e12"
  - kind: exponent
    evidence: consequence
    name: vs-eps
    metric: noise_term
    sweep: vs_eps
    x: epsilon
    predicted: -2.0
    tolerance: 0.5
    tolerance_reason: "test only"
report_metrics: [train_loss]
"#;

/// A deterministic claim (no randomness), so the suite has two claims.
pub(crate) const CALIBRATION: &str = r#"
id: tiny-calibration
title: "tiny calibration (test only)"
source: {paper: "p", section: "s", equation: "e"}
statement: "s"
system: gaussian_calibration
model: none
adjacency: replace_one
params: {epsilon: "1", kappa: "2", eta: "0.1", steps: "10"}
sweeps:
  grid:
    quick: {axes: {delta: [1.0e-5, 1.0e-4, 1.0e-3]}, replicates: 1}
    full: {axes: {delta: [1.0e-5, 1.0e-3]}, replicates: 1}
variants:
  - name: base
  - name: broken
    negative_control: true
    caught_by: [eps-bound]
    options: {calibration: inverse_epsilon}
predictions:
  - kind: inequality
    evidence: consequence
    name: eps-bound
    metric: exact_epsilon
    sweep: grid
    op: "<="
    rhs: "epsilon"
"#;

/// A temporary directory holding `claims/` with the two specs.
pub(crate) fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let claims = dir.path().join("claims");
    std::fs::create_dir(&claims).unwrap();
    std::fs::write(claims.join("tiny-noise.yaml"), NOISE).unwrap();
    std::fs::write(claims.join("tiny-calibration.yaml"), CALIBRATION).unwrap();
    dir
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Runs shard `i` of `n` into `dir/<partials>` (extra args first) and checks it succeeded.
pub(crate) fn run_shard(dir: &Path, i: usize, n: usize, partials: &str, extra: &[&str]) -> Output {
    let spec = format!("{i}/{n}");
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    args.extend(["--shard", &spec, "--partial-out", partials]);
    let out = dpclaims_in(dir, &args);
    assert_eq!(code(&out), 0, "shard {spec}: {}", text(&out.stderr));
    out
}

/// Every file of a directory and of its subdirectories (a report set's `raw/`), path
/// relative to `dir` -> bytes.
pub(crate) fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            for (sub, bytes) in files(&p) {
                out.insert(format!("{name}/{sub}"), bytes);
            }
        } else {
            out.insert(name, std::fs::read(&p).unwrap());
        }
    }
    out
}

fn assert_same_reports(a: &Path, b: &Path) {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "report file names"
    );
    for (name, bytes) in &fa {
        assert!(bytes == &fb[name], "{name} differs between {a:?} and {b:?}");
    }
}

/// Runs the three shards of a work dir into `shards/`, one after another.
pub(crate) fn three_shards(dir: &Path) {
    for i in 0..3 {
        run_shard(dir, i, 3, "shards", &[]);
    }
}

#[test]
fn three_shard_processes_merge_into_the_unsharded_reports_byte_for_byte() {
    let w = workdir();
    let dir = w.path();
    let whole = dpclaims_in(dir, &["run", "--out", "one"]);
    assert_eq!(code(&whole), 0, "{}", text(&whole.stderr));
    // Separate processes, started together, writing into one directory.
    let children: Vec<std::process::Child> = (0..3)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_dpclaims"))
                // Never the user's result cache (tests/cache.rs tests the cache).
                .env("DPCLAIMS_NO_CACHE", "1")
                .current_dir(dir)
                .args([
                    "run",
                    "--shard",
                    &format!("{i}/3"),
                    "--partial-out",
                    "shards",
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert_eq!(code(&out), 0, "shard {i}/3: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains(&format!("shard {i}/3: ")));
    }
    let merged = dpclaims_in(dir, &["merge", "shards", "--out", "two"]);
    assert_eq!(code(&merged), 0, "{}", text(&merged.stderr));
    assert_same_reports(&dir.join("one"), &dir.join("two"));
    // The same verdict lines and summary (up to the report directory's name).
    assert_eq!(text(&merged.stderr), text(&whole.stderr));
    assert_eq!(
        text(&merged.stdout),
        text(&whole.stdout).replace("reports in one", "reports in two")
    );
    // And the same --json document.
    let j1 = dpclaims_in(dir, &["run", "--json", "--no-reports"]);
    let j2 = dpclaims_in(dir, &["merge", "shards", "--json", "--no-reports"]);
    assert_eq!(code(&j2), 0, "{}", text(&j2.stderr));
    assert_eq!(j1.stdout, j2.stdout);
    // Every unit is in exactly one shard, and the shards are balanced.
    let sizes: Vec<usize> = (0..3)
        .map(|i| {
            Partial::read(&dir.join(format!("shards/shard-{i}-of-3.json")))
                .unwrap()
                .units
                .len()
        })
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 4 * 3 * 2 + 3 * 2 + 6);
    assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 2);
}

#[test]
fn merge_exits_1_like_run_when_a_negative_control_is_not_caught() {
    let w = workdir();
    let dir = w.path();
    std::fs::write(
        dir.join("claims/tiny-calibration.yaml"),
        CALIBRATION.replace("    options: {calibration: inverse_epsilon}\n", ""),
    )
    .unwrap();
    std::fs::remove_file(dir.join("claims/tiny-noise.yaml")).unwrap();
    let whole = dpclaims_in(dir, &["run", "--out", "one"]);
    assert_eq!(code(&whole), 1);
    for i in 0..2 {
        run_shard(dir, i, 2, "shards", &[]);
    }
    let merged = dpclaims_in(dir, &["merge", "shards", "--out", "two"]);
    assert_eq!(code(&merged), 1, "{}", text(&merged.stderr));
    assert!(text(&merged.stderr).contains("identical to main variant `base`"));
    assert_same_reports(&dir.join("one"), &dir.join("two"));
}

#[test]
fn merge_rejects_a_missing_shard_naming_units_and_the_absent_file() {
    let w = workdir();
    let dir = w.path();
    run_shard(dir, 0, 3, "shards", &[]);
    run_shard(dir, 2, 3, "shards", &[]);
    let out = dpclaims_in(dir, &["merge", "shards", "--out", "two"]);
    let err = text(&out.stderr);
    assert_eq!(code(&out), 2, "{err}");
    for w in [
        "missing",
        "claim `",
        "variant `",
        "replicate",
        "shard-1-of-3.json",
    ] {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
    assert!(
        !dir.join("two").exists(),
        "no reports from an incomplete run"
    );
}

#[test]
fn merge_rejects_a_duplicated_shard_naming_both_files() {
    let w = workdir();
    let dir = w.path();
    three_shards(dir);
    std::fs::create_dir(dir.join("again")).unwrap();
    std::fs::copy(
        dir.join("shards/shard-1-of-3.json"),
        dir.join("again/shard-1-of-3.json"),
    )
    .unwrap();
    let out = dpclaims_in(dir, &["merge", "shards", "again", "--out", "two"]);
    let err = text(&out.stderr);
    assert_eq!(code(&out), 2, "{err}");
    for w in [
        "duplicated shard",
        "shards/shard-1-of-3.json",
        "again/shard-1-of-3.json",
    ] {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
}

#[test]
fn merge_rejects_a_manifest_from_another_seed() {
    let w = workdir();
    let dir = w.path();
    run_shard(dir, 0, 3, "shards", &[]);
    run_shard(dir, 1, 3, "shards", &[]);
    run_shard(dir, 2, 3, "shards", &["--seed", "1"]);
    let out = dpclaims_in(dir, &["merge", "shards", "--out", "two"]);
    let err = text(&out.stderr);
    assert_eq!(code(&out), 2, "{err}");
    for w in [
        "shard-2-of-3.json has seed 1",
        "has seed 0",
        "different runs",
    ] {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
}

#[test]
fn merge_rejects_a_spec_that_changed_since_the_shards_ran() {
    let w = workdir();
    let dir = w.path();
    three_shards(dir);
    let f = dir.join("claims/tiny-calibration.yaml");
    std::fs::write(&f, format!("{CALIBRATION}# edited\n")).unwrap();
    let out = dpclaims_in(dir, &["merge", "shards", "--out", "two"]);
    let err = text(&out.stderr);
    assert_eq!(code(&out), 2, "{err}");
    for w in ["tiny-calibration.yaml", "spec hash", "changed"] {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
}

#[test]
fn a_complete_shard_is_skipped_and_a_foreign_one_is_neither_reused_nor_overwritten() {
    let w = workdir();
    let dir = w.path();
    run_shard(dir, 1, 3, "shards", &[]);
    let f = dir.join("shards/shard-1-of-3.json");
    let before = std::fs::read(&f).unwrap();
    let again = run_shard(dir, 1, 3, "shards", &[]);
    assert!(
        text(&again.stdout).contains("is complete and matches this run")
            && text(&again.stdout).contains("skipped"),
        "{}",
        text(&again.stdout)
    );
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // Another seed must not take over the file.
    let other = dpclaims_in(
        dir,
        &[
            "run",
            "--seed",
            "7",
            "--shard",
            "1/3",
            "--partial-out",
            "shards",
        ],
    );
    let err = text(&other.stderr);
    assert_eq!(code(&other), 2, "{err}");
    for w in ["shard-1-of-3.json", "another run", "seed 0", "refusing"] {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // No temporary file is left behind by the atomic write.
    let names: Vec<String> = files(&dir.join("shards")).into_keys().collect();
    assert_eq!(names, vec!["shard-1-of-3.json".to_string()]);
}

#[test]
fn shards_are_numbered_from_0_like_slurm_array_task_ids() {
    let w = workdir();
    for bad in ["3/3", "0/0", "1", "a/3"] {
        let out = dpclaims_in(
            w.path(),
            &["run", "--shard", bad, "--partial-out", "shards"],
        );
        assert_eq!(code(&out), 2, "--shard {bad}");
        assert!(
            text(&out.stderr).contains("--shard"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = dpclaims_in(w.path(), &["run", "--shard", "3/3", "--partial-out", "s"]);
    assert!(text(&out.stderr).contains("numbered from 0"));
    assert_eq!(
        "2/3".parse::<Shard>().unwrap(),
        Shard { index: 2, count: 3 }
    );
}

#[test]
fn metric_values_round_trip_bit_for_bit_through_a_partial_file() {
    let tricky = [
        0.1 + 0.2,
        1.0 / 3.0,
        -0.0,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        f64::from_bits(0x000f_ffff_ffff_ffff), // largest subnormal
        1e23,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        std::f64::consts::PI * 1e-200,
    ];
    let p = Partial {
        manifest: Manifest::new(&[], Profile::Quick, 3, Shard { index: 0, count: 1 }),
        units: vec![PartialUnit {
            claim: "c".into(),
            sweep: "s".into(),
            variant: "v".into(),
            point: 0,
            replicate: 0,
            metrics: tricky
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("m{i:02}"), Bits(*v)))
                .collect(),
        }],
    };
    let json = p.to_json();
    let back = Partial::from_json(Path::new("x.json"), &json).unwrap();
    let got: Vec<u64> = back.units[0]
        .metrics
        .values()
        .map(|b| b.0.to_bits())
        .collect();
    let want: Vec<u64> = tricky.iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);
    assert_eq!(back.to_json(), json, "same file, same bytes");
    // A damaged value names the problem.
    let bad = json.replacen(&format!("{:016x}", (0.1f64 + 0.2).to_bits()), "0.3", 1);
    let e = Partial::from_json(Path::new("x.json"), &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.json") && e.contains("16 hex digits"), "{e}");
}

#[test]
fn a_units_shard_does_not_depend_on_the_other_claims() {
    let w = workdir();
    let noise: PathBuf = w.path().join("claims/tiny-noise.yaml");
    let alone = spec::load_claims(std::slice::from_ref(&noise)).unwrap();
    let with_other = spec::load_claims(&[w.path().join("claims")]).unwrap();
    assert_eq!(with_other.len(), 2);
    for n in [1, 2, 3, 5, 64] {
        let counts: Vec<usize> = (0..n)
            .map(|i| {
                let s = Shard { index: i, count: n };
                let a = shard::shard_units(&alone, Profile::Quick, s);
                let b: Vec<_> = shard::shard_units(&with_other, Profile::Quick, s)
                    .into_iter()
                    .filter(|(c, _)| c == "tiny-noise")
                    .collect();
                assert_eq!(a, b, "shard {s}");
                a.len()
            })
            .collect();
        // One claim is dealt round robin: shard sizes differ by at most one.
        assert_eq!(counts.iter().sum::<usize>(), 30);
        assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
    }
}

#[test]
fn the_slurm_script_is_valid_bash_with_the_array_and_the_afterok_merge() {
    let w = workdir();
    let out = dpclaims_in(
        w.path(),
        &[
            "slurm",
            "claims",
            "--shards",
            "3",
            "--time",
            "00:30:00",
            "--cpus-per-task",
            "2",
            "--partition",
            "short",
            "--seed",
            "5",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let script = text(&out.stdout);
    let f = w.path().join("job.sh");
    std::fs::write(&f, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&f).output().unwrap();
    assert!(check.status.success(), "bash -n: {}", text(&check.stderr));
    for line in [
        "#!/bin/bash",
        "#SBATCH --array=0-2",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --time=00:30:00",
        "#SBATCH --partition=short",
        "ARRAY_JOB_ID=$(sbatch --parsable --array=0-2 \"$0\")",
        "  --dependency=afterok:$ARRAY_JOB_ID \\",
        "  exec \"$DPCLAIMS\" run claims --profile quick --seed 5 \\",
        "    --shard \"$SLURM_ARRAY_TASK_ID/$SHARDS\" --partial-out shards",
        "  --wrap='exec \"${DPCLAIMS:-dpclaims}\" merge shards --claims claims --out target/dpclaims/merge-seed-5')",
    ] {
        assert!(
            script.lines().any(|l| l == line),
            "line `{line}` not in:\n{script}"
        );
    }
    // Bad options are refused before anything is printed.
    for bad in [
        &["--shards", "0"][..],
        &["--shards", "2", "--time", "1h"],
        &["--shards", "2", "--partition", "a b"],
    ] {
        let mut args = vec!["slurm", "claims"];
        args.extend_from_slice(bad);
        let out = dpclaims_in(w.path(), &args);
        assert_eq!(code(&out), 2, "{bad:?}");
        assert!(out.stdout.is_empty());
    }
}

/// Stands in for Slurm's `sbatch`: runs an array job's tasks at once (in order, with
/// `SLURM_ARRAY_TASK_ID`), and a `--wrap` job only if its dependency is the array's id.
const FAKE_SBATCH: &str = r#"#!/bin/bash
set -eu
array=""; wrap=""; dep=""; script=""
for a in "$@"; do
  case "$a" in
    --array=*) array="${a#--array=}" ;;
    --wrap=*) wrap="${a#--wrap=}" ;;
    --dependency=*) dep="${a#--dependency=}" ;;
    --*) ;;
    *) script="$a" ;;
  esac
done
echo "sbatch $*" >> sbatch.log
if [ -n "$wrap" ]; then
  [ "$dep" = "afterok:4242" ] || { echo "unexpected dependency '$dep'" >&2; exit 1; }
  sh -c "$wrap" > merge.out 2>&1
  echo "4243"
else
  for i in $(seq "${array%-*}" "${array#*-}"); do
    SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_JOB_ID=4242 bash "$script" > "task-$i.out" 2>&1
  done
  echo "4242;cluster"
fi
"#;

#[test]
fn the_slurm_script_runs_end_to_end_against_a_stand_in_sbatch() {
    let w = workdir();
    let dir = w.path();
    let whole = dpclaims_in(dir, &["run", "--out", "one"]);
    assert_eq!(code(&whole), 0, "{}", text(&whole.stderr));
    let gen = dpclaims_in(
        dir,
        &["slurm", "--shards", "4", "--dir", "parts", "--out", "two"],
    );
    assert_eq!(code(&gen), 0, "{}", text(&gen.stderr));
    std::fs::write(dir.join("job.sh"), &gen.stdout).unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("sbatch"), FAKE_SBATCH).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("sbatch"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("job.sh")
        .current_dir(dir)
        .env("PATH", path)
        .env("DPCLAIMS", env!("CARGO_BIN_EXE_dpclaims"))
        .env("DPCLAIMS_NO_CACHE", "1")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    let log = std::fs::read_to_string(dir.join("sbatch.log")).unwrap_or_default();
    assert!(
        out.status.success(),
        "{}\n{log}\n{}",
        text(&out.stderr),
        std::fs::read_to_string(dir.join("merge.out")).unwrap_or_default()
    );
    assert!(
        text(&out.stdout).contains("submitted shard array 4242 (4 tasks) and merge job 4243"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(shard::partial_files(&dir.join("parts")).unwrap().len(), 4);
    assert_same_reports(&dir.join("one"), &dir.join("two"));
}
