//! The protocol overhead of `system: external` per unit: one unit through
//! [`System::run`] of an external system (seed derivation, unit id, the request's JSON,
//! a worker taken from the pool, one line each way over pipes, the answer parsed and
//! checked) against a core that answers at once (a Python loop writing a constant line,
//! so nearly all of the time is the harness's and the pipes'). Target: at most 100 µs per
//! unit on the project's 2-core machine (README, "Checking your own core").
//!
//! Needs `python3` on PATH (no packages).
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use dpclaims::rng::SeedPath;
use dpclaims::spec::{DataSpec, TargetSpec};
use dpclaims::systems::external::worker::CoreCommand;
use dpclaims::systems::external::{ExternalSpec, ExternalSystem};
use dpclaims::systems::{System, UnitInput};
use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::time::Duration;

const FAST_CORE: &str = r#"import sys
w, f = sys.stdout.write, sys.stdout.flush
first = True
for line in sys.stdin:
    if first:
        w('{"protocol": "dpclaims-external/2", "metrics": ["noise_sq"]}\n')
        first = False
    else:
        i = line.index('"unit":"') + 8
        w('{"unit": "%s", "metrics": {"noise_sq": 0.125}}\n' % line[i:line.index('"', i)])
    f()
"#;

fn unit_round_trip(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("core.py"), FAST_CORE).expect("write core");
    // The parameters of the noise-term example: a typical request (about 250 bytes).
    let vars: BTreeMap<String, f64> = [
        ("d", 8.0),
        ("n", 32.0),
        ("p", 1024.0),
        ("n_test", 100.0),
        ("eta", 1.0 / 1024.0),
        ("steps", 97.0),
        ("clip", 384.0),
        ("epsilon", 2.0),
        ("delta", 1e-5),
        ("kappa", 2.0),
        ("sigma_scale", 1.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let sys = ExternalSystem::leaked(ExternalSpec {
        commands: vec![CoreCommand {
            argv: vec!["python3".into(), "core.py".into()],
            dir: dir.path().to_path_buf(),
            timeout: Duration::from_secs(60),
        }],
        files: vec![Vec::new()],
        version: None,
        cost_s: None,
        audit: None,
        variant_command: BTreeMap::new(),
        metrics: vec!["noise_sq".into()],
        params: vars.keys().cloned().collect(),
    });
    sys.prepare().expect("the core starts");
    let options = BTreeMap::from([("clip_rule".to_string(), "divide".to_string())]);
    let data = DataSpec {
        input: dpclaims::data::InputDist::Gaussian,
        target: TargetSpec::None,
        label_noise: 0.0,
    };
    let metrics = BTreeSet::from(["noise_sq".to_string()]);
    let recipe = dpclaims::train::Recipe::PAPER;
    let seeds = SeedPath::new(0)
        .child("external-noise-term")
        .child("vs_n")
        .child("n=32")
        .child("rep0");
    let input = UnitInput {
        vars: &vars,
        options: &options,
        data: &data,
        metrics: &metrics,
        variant: "numpy-dpgd",
        seeds,
        recipe: &recipe,
        shared: None,
    };
    let mut g = c.benchmark_group("external");
    g.bench_function(BenchmarkId::new("unit_round_trip", "instant_core"), |b| {
        b.iter(|| black_box(sys.run(&input).expect("answer")))
    });
    g.finish();
    sys.release();
}

criterion_group!(benches, unit_round_trip);
criterion_main!(benches);
