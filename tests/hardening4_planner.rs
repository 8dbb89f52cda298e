//! Issue 58, item 4: one planner for every path. Every command and spec form that
//! computes passes the same gate (`plan::budget::admit`) before any work, and a refusal
//! is exit 2 naming the limit, its flag and the estimate. "Refused before work" is shown
//! by what did not happen — no core started, no unit in the run's own result cache, no
//! file written, no allocation of the absurd size under a 1.5 GiB address space
//! (`hardening3_util::refused_before_work`) — never by a wall time. And the reverse: the
//! documented `make faults` is admitted at its defaults.
use crate::hardening3_util::{computed_units, digest, exit2, refused_before_work, run};
use std::path::Path;

const CALIBRATION: &str = "claims/sigma-a-calibration.yaml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A claim auditing an external core in canary mode: `trials` requests per world in each
/// of 2 points x `replicates` units; its core records that it started.
fn audit_spec(trials: &str, replicates: &str) -> String {
    format!(
        r#"id: ext-audit-planner
title: "audit priced by its requests"
source: {{paper: "p", section: "s", equation: "e"}}
statement: "s"
system: external
external:
  command: ["python3", "core.py"]
  timeout_s: 30
  audit: {{trials: {trials}, estimator: gdp, confidence: 0.95}}
params:
  delta: "1.0e-5"
sweeps:
  s:
    quick: {{axes: {{epsilon: [0.5, 0.9]}}, replicates: {replicates}}}
    full: {{axes: {{epsilon: [0.5, 0.9]}}, replicates: {replicates}}}
variants:
  - name: main
  - name: control
    negative_control: true
    caught_by: [audit-within-claim]
    options: {{calibration: inverse_epsilon}}
predictions:
  - kind: inequality
    evidence: consequence
    name: audit-within-claim
    metric: epsilon_lower_bound
    sweep: s
    op: "<="
    rhs: "epsilon"
"#
    )
}

/// A project with `claims/audit.yaml` (the spec above) and a core that marks its start.
fn audit_project(trials: &str, replicates: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    std::fs::write(
        dir.path().join("claims/core.py"),
        "open('started', 'a').close()\nimport sys\nfor line in sys.stdin: pass\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("claims/audit.yaml"),
        audit_spec(trials, replicates),
    )
    .unwrap();
    dir
}

/// (a) 2 000 units (2 points x 500 replicates x 2 variants) of 2 x 1e7 core requests: priced by the requests (months of work),
/// refused by `run` and `plan` before the core starts; a small audit of the same core
/// is admitted and its cost basis counts the requests.
#[test]
fn a_spec_audit_is_priced_by_its_core_requests_and_refused_before_the_core_starts() {
    let dir = audit_project("10000000", "500");
    let before = digest(dir.path(), &["cache"]);
    let cache = dir.path().join("cache");
    for args in [
        vec!["run", "--no-baseline", "--no-reports", "claims/audit.yaml"],
        vec!["plan", "claims/audit.yaml"],
    ] {
        let o = refused_before_work(dir.path(), &args, &cache);
        exit2(
            &o,
            &[
                "ext-audit-planner",
                "exceeds the limit",
                "(--max-",
                "external.audit.trials",
            ],
        );
        assert!(
            !dir.path().join("claims/started").exists(),
            "{args:?}: the core was started"
        );
        assert_eq!(computed_units(&cache), 0, "{args:?}: units computed");
        assert_eq!(
            digest(dir.path(), &["cache"]),
            before,
            "{args:?}: files changed"
        );
    }
    // The estimate counts the requests: 2 000 units x 2e7 requests at the nominal 1 ms is
    // 4e7 s, not the 2.4 s of one nominal millisecond per unit.
    let o = run(
        dir.path(),
        &[
            "plan",
            "--json",
            "claims/audit.yaml",
            "--max-hours",
            "1e9",
            "--max-memory-gb",
            "1e6",
        ],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let doc: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let cpu = doc["claims"][0]["cpu_seconds"].as_f64().unwrap();
    assert!(cpu >= 2000.0 * 2e7 * 1e-3, "cpu {cpu}");
    // `plan --calibrate` times one unit, and one unit of 2e7 requests (5.6 h at the
    // nominal 1 ms) is itself over a limit of 1 h: the calibration unit passes the gate
    // first, so the core never starts.
    let huge = audit_project("10000000", "1");
    let cache = huge.path().join("cache");
    let o = refused_before_work(
        huge.path(),
        &[
            "plan",
            "--calibrate",
            "claims/audit.yaml",
            "--max-hours",
            "1",
        ],
        &cache,
    );
    exit2(
        &o,
        &[
            "the calibration unit",
            "ext-audit-planner",
            "exceeds the limit",
            "--max-hours",
        ],
    );
    assert!(
        !huge.path().join("claims/started").exists(),
        "the core was started"
    );
    // A small audit (4 units of 2 x 2 000 requests) is admitted, and says how it is priced.
    let small = audit_project("2000", "1");
    let o = run(small.path(), &["plan", "claims/audit.yaml"]);
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("4000 requests a unit"), "{}", o.stdout);
    assert!(!small.path().join("claims/started").exists());
}

/// (b) `privacy-report --trials 1e12` and `--null-audits 1e9` (and `audit --null-audits`)
/// are refused before anything runs or is written: no `--out` directory appears.
#[test]
fn privacy_report_and_null_audits_of_absurd_size_are_refused_before_writing() {
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "privacy-report",
                "--trials",
                "1000000000000",
                "--out",
                "out",
            ],
            "--trials",
        ),
        (
            &[
                "privacy-report",
                "--null-audits",
                "1000000000",
                "--out",
                "out",
            ],
            "--null-audits",
        ),
        (
            &[
                "audit",
                "--system",
                "rf-dpgd",
                "--epsilon",
                "2",
                "--delta",
                "1e-5",
                "--null-audits",
                "1000000000",
                "--markdown",
                "out/AUDIT.md",
            ],
            "--null-audits",
        ),
    ];
    for (args, flag) in cases {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let o = refused_before_work(dir.path(), args, &cache);
        exit2(&o, &[flag, "exceeds the limit", "(--max-"]);
        assert!(!dir.path().join("out").exists(), "{args:?}: --out written");
        assert_eq!(
            digest(dir.path(), &["cache"]),
            Default::default(),
            "{args:?}: files written"
        );
    }
}

/// (c) `run --unit` of a claim whose plan is absurd (replicates 1e12: listing it to
/// find the unit would allocate about 1e14 bytes, and once aborted with exit 134) is
/// refused with exit 2 before listing; a unit of the claim as shipped still replays.
#[test]
fn run_unit_goes_through_the_planner_and_is_refused_before_listing_its_plan() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("claims")).unwrap();
    let text = std::fs::read_to_string(root().join(CALIBRATION)).unwrap();
    let absurd = text.replace("replicates: 1\n", "replicates: 1000000000000\n");
    assert_ne!(absurd, text, "the mutation does not apply");
    std::fs::write(dir.path().join(CALIBRATION), &absurd).unwrap();
    let claim = dpclaims::spec::claim_from_bytes(Path::new(CALIBRATION), text.as_bytes()).unwrap();
    let unit = dpclaims::plan::planned_units(&claim, dpclaims::spec::Profile::Quick)
        .into_iter()
        .next()
        .unwrap();
    let id = dpclaims::pipeline::replay::unit_id(&claim.id, &unit);
    let before = digest(dir.path(), &["cache"]);
    let cache = dir.path().join("cache");
    let args = ["run", "--no-baseline", CALIBRATION, "--unit", id.as_str()];
    let o = refused_before_work(dir.path(), &args, &cache);
    exit2(
        &o,
        &[
            "`dpclaims run --unit`",
            "sigma-a-calibration",
            "exceeds the limit",
            "(--max-",
        ],
    );
    assert_eq!(computed_units(&cache), 0);
    assert_eq!(digest(dir.path(), &["cache"]), before, "files changed");
    // The claim as shipped: its unit passes the gate and replays.
    std::fs::write(dir.path().join(CALIBRATION), &text).unwrap();
    let o = refused_before_work(dir.path(), &args, &cache);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains(&format!("unit {id}")), "{}", o.stdout);
}

/// (d) `stability` and `faults` are priced by the same planner: over the limit, exit 2
/// naming it, before any seed or row runs and before their output directories exist.
#[test]
fn stability_and_faults_are_refused_by_the_same_gate_before_writing() {
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &[
                "stability",
                CALIBRATION,
                "--seeds",
                "100000000",
                "--out",
                "out",
            ],
            &["claim `sigma-a-calibration`", "--max-hours"],
        ),
        (
            &[
                "faults",
                CALIBRATION,
                "--out",
                "out",
                "--max-hours",
                "0.000001",
            ],
            &["`dpclaims faults`", "--max-hours"],
        ),
        (
            &[
                "faults",
                CALIBRATION,
                "--out",
                "out",
                "--max-memory-gb",
                "0.000001",
            ],
            &["`dpclaims faults`", "--max-memory-gb"],
        ),
    ];
    for (args, words) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("claims")).unwrap();
        std::fs::copy(root().join(CALIBRATION), dir.path().join(CALIBRATION)).unwrap();
        let before = digest(dir.path(), &["cache"]);
        let cache = dir.path().join("cache");
        let o = refused_before_work(dir.path(), args, &cache);
        exit2(&o, words);
        exit2(&o, &["exceeds the limit"]);
        assert_eq!(computed_units(&cache), 0, "{args:?}: units computed");
        assert!(!dir.path().join("out").exists(), "{args:?}: --out written");
        assert_eq!(
            digest(dir.path(), &["cache"]),
            before,
            "{args:?}: files changed"
        );
    }
}

/// (e) The documented `make faults` (`faults --profile quick --out reports`) is admitted
/// at its defaults on the documented machine (2 threads, 24 h): only the planning step
/// (`--plan`), which runs nothing and writes nothing.
#[test]
fn make_faults_at_its_defaults_is_admitted_by_the_planner() {
    let reports = digest(&root().join("reports"), &[]);
    let cache = tempfile::tempdir().unwrap();
    let o = refused_before_work(
        root(),
        &["faults", "--profile", "quick", "--out", "reports", "--plan"],
        cache.path(),
    );
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("admitted"), "{}", o.stdout);
    assert!(o.stdout.contains("`dpclaims faults`"), "{}", o.stdout);
    assert_eq!(computed_units(cache.path()), 0);
    assert_eq!(
        digest(&root().join("reports"), &[]),
        reports,
        "reports/ changed"
    );
    // The same planning step refuses under a limit the matrix exceeds: the gate is real.
    let o = refused_before_work(
        root(),
        &[
            "faults",
            "--profile",
            "quick",
            "--out",
            "reports",
            "--plan",
            "--max-hours",
            "0.01",
        ],
        cache.path(),
    );
    exit2(
        &o,
        &["`dpclaims faults`", "exceeds the limit", "--max-hours"],
    );
}

/// (f) The documented `make stability` (`stability --seeds 20 --profile quick --out
/// reports $(STABILITY_FLAGS)`, the flags' default read from the Makefile) is admitted at
/// its defaults even when no record holds a seed (after a change of the verdict hash
/// every seed runs): the planning step only (`--plan`), which runs nothing and writes
/// nothing. Under a limit it exceeds, the same step refuses.
#[test]
fn make_stability_at_its_defaults_is_admitted_by_the_planner_when_every_seed_runs() {
    let reports = digest(&root().join("reports"), &[]);
    let cache = tempfile::tempdir().unwrap();
    let makefile = std::fs::read_to_string(root().join("Makefile")).unwrap();
    let flags: Vec<&str> = makefile
        .lines()
        .find_map(|l| l.strip_prefix("STABILITY_FLAGS ?="))
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let base = [
        "stability",
        "--seeds",
        "20",
        "--profile",
        "quick",
        "--out",
        "reports",
        "--no-records",
        "--plan",
    ];
    let args: Vec<&str> = base.iter().copied().chain(flags.iter().copied()).collect();
    let o = refused_before_work(root(), &args, cache.path());
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("admitted"), "{}", o.stdout);
    assert!(
        o.stdout.contains("`dpclaims stability` (20 seeds"),
        "{}",
        o.stdout
    );
    assert_eq!(computed_units(cache.path()), 0);
    let mut tight = base.to_vec();
    tight.extend(["--max-hours", "0.01"]);
    let o = refused_before_work(root(), &tight, cache.path());
    exit2(&o, &["exceeds the limit", "--max-hours"]);
    assert_eq!(computed_units(cache.path()), 0);
    assert_eq!(
        digest(&root().join("reports"), &[]),
        reports,
        "reports/ changed"
    );
}
