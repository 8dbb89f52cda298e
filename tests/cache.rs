//! The result cache (`src/execute/cache/`): hits and misses, what a key covers (build,
//! recipe, the unit, the judged spec but not its prose), damaged entries recomputed, a run from
//! the cache writing the same bytes as an uncached one, `dpclaims cache stats|prune`.
use dpclaims::execute::cache::{self, ResultCache};
use dpclaims::execute::{self, RunError};
use dpclaims::faults::Fault;
use dpclaims::plan::{self, UnitValues};
use dpclaims::spec::{self, Claim, Profile};
use dpclaims::train::Recipe;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

/// A small random-features claim: two sweeps, replicates, a negative control; every unit
/// draws data and noise.
const TINY: &str = r#"
id: tiny-cache
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

/// `TINY` written to `dir/claims/tiny-cache.yaml` (after `edit`) and loaded.
fn claim_in(dir: &Path, edit: impl Fn(&str) -> String) -> Claim {
    let claims = dir.join("claims");
    std::fs::create_dir_all(&claims).unwrap();
    let file = claims.join("tiny-cache.yaml");
    std::fs::write(&file, edit(TINY)).unwrap();
    spec::load_claims(&[file]).unwrap().remove(0)
}

fn units(claim: &Claim) -> usize {
    plan::unit_count(claim, Profile::Quick)
}

fn run(claim: &Claim, recipe: &Recipe) -> Result<UnitValues, RunError> {
    execute::run_units(claim, Profile::Quick, 0, recipe, &|| {})
}

/// A run of the papers' recipe with `c` as this thread's cache.
fn cached_run(c: &Arc<ResultCache>, claim: &Claim) -> UnitValues {
    cache::with_cache(c, "paper", || run(claim, &Recipe::PAPER)).unwrap()
}

/// Unit values as (key, metric, bit pattern): equal means the same bits.
fn bits(v: &UnitValues) -> Vec<(String, String, u64)> {
    v.iter()
        .flat_map(|(k, m)| {
            m.iter()
                .map(move |(name, x)| (format!("{k:?}"), name.clone(), x.to_bits()))
        })
        .collect()
}

fn open(dir: &Path, build: &str) -> Arc<ResultCache> {
    Arc::new(ResultCache::with_build(dir, build).unwrap())
}

/// The entry files of the cache in `dir`, sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.file_name().unwrap().len() == 64 {
                out.push(p);
            }
        }
    }
    let mut out = vec![];
    walk(dir, &mut out);
    out.sort();
    out
}

#[test]
fn a_second_run_is_served_from_the_cache_with_the_same_bits() {
    let w = tempfile::tempdir().unwrap();
    let claim = claim_in(w.path(), str::to_string);
    let n = units(&claim);
    let plain = run(&claim, &Recipe::PAPER).unwrap();
    let c = open(&w.path().join("cache"), "build-a");
    let first = cached_run(&c, &claim);
    let counts = c.counts();
    assert_eq!((counts.hits, counts.misses, counts.stored), (0, n, n));
    let second = cached_run(&c, &claim);
    let counts = c.counts();
    assert_eq!((counts.hits, counts.misses, counts.stored), (n, n, n));
    assert_eq!(bits(&plain), bits(&first));
    assert_eq!(bits(&plain), bits(&second));
    assert_eq!(entries(&w.path().join("cache")).len(), n);
}

#[test]
fn without_a_scope_nothing_is_cached() {
    let w = tempfile::tempdir().unwrap();
    let claim = claim_in(w.path(), str::to_string);
    let c = open(&w.path().join("cache"), "build-a");
    cache::with_cache(&c, "paper", || {
        cache::uncached(|| run(&claim, &Recipe::PAPER)).unwrap();
    });
    // Another thread does not see this thread's scope.
    cache::with_cache(&c, "paper", || {
        std::thread::scope(|s| s.spawn(|| run(&claim, &Recipe::PAPER)).join())
            .unwrap()
            .unwrap();
    });
    assert_eq!(c.counts(), Default::default());
    assert!(entries(&w.path().join("cache")).is_empty());
}

#[test]
fn another_build_hash_recomputes_everything() {
    let w = tempfile::tempdir().unwrap();
    let claim = claim_in(w.path(), str::to_string);
    let n = units(&claim);
    let dir = w.path().join("cache");
    let a = cached_run(&open(&dir, "build-a"), &claim);
    let b_cache = open(&dir, "build-b");
    let b = cached_run(&b_cache, &claim);
    assert_eq!((b_cache.counts().hits, b_cache.counts().misses), (0, n));
    assert_eq!(bits(&a), bits(&b));
    // Both builds' entries are there; each build reads only its own.
    let s = cache::maintain::stats(&dir, "build-b").unwrap();
    let per_build: Vec<_> = s
        .builds
        .iter()
        .map(|b| (b.build.as_str(), b.entries, b.current))
        .collect();
    assert_eq!(per_build, [("build-a", n, false), ("build-b", n, true)]);
    let again = open(&dir, "build-a");
    cached_run(&again, &claim);
    assert_eq!((again.counts().hits, again.counts().misses), (n, 0));
}

#[test]
fn another_recipe_is_never_served_to_the_papers() {
    let w = tempfile::tempdir().unwrap();
    let claim = claim_in(w.path(), str::to_string);
    let n = units(&claim);
    let c = open(&w.path().join("cache"), "build-a");
    let faulty = Fault::NoiseCOverN.recipe();
    let bad = cache::with_cache(&c, "paper", || {
        cache::as_recipe("fault/noise-c-over-n", || run(&claim, &faulty))
    })
    .unwrap();
    assert_eq!(c.counts().misses, n);
    let good = cached_run(&c, &claim);
    assert_eq!((c.counts().hits, c.counts().misses), (0, 2 * n));
    assert_eq!(bits(&good), bits(&run(&claim, &Recipe::PAPER).unwrap()));
    assert_ne!(bits(&good), bits(&bad), "the fault changes the numbers");
}

#[test]
fn editing_prose_reruns_nothing_and_a_judged_field_reruns_the_claim() {
    let w = tempfile::tempdir().unwrap();
    let claim = claim_in(w.path(), str::to_string);
    let c = open(&w.path().join("cache"), "build-a");
    cached_run(&c, &claim);
    let before = c.counts();
    // The statement and the title: prose (spec::judged::PROSE_KEYS), in no key.
    let prose = claim_in(w.path(), |s| {
        s.replace("noise term along n and epsilon", "edited statement")
            .replace("tiny sizes (test only)", "tiny sizes, edited")
    });
    cached_run(&c, &prose);
    assert_eq!(c.counts().misses, before.misses);
    // A prediction's tolerance is judged: the key holds every judged field of the spec
    // (issue 58: not a hand-kept list of the fields a unit reads), so the claim reruns.
    let misses = c.counts().misses;
    let tolerance = claim_in(w.path(), |s| s.replace("tolerance: 0.5", "tolerance: 0.25"));
    cached_run(&c, &tolerance);
    assert_eq!(c.counts().misses - misses, units(&tolerance));
    // Raising the replicates of one sweep: every unit again, the same bits as uncached.
    let more = claim_in(w.path(), |s| {
        // (the full profile is raised too: it may not have fewer replicates)
        s.replace(
            "quick: {axes: {n: [8, 12, 16, 24]}, replicates: 3}",
            "quick: {axes: {n: [8, 12, 16, 24]}, replicates: 4}",
        )
        .replace(
            "full: {axes: {n: [8, 12, 16, 24]}, replicates: 3}",
            "full: {axes: {n: [8, 12, 16, 24]}, replicates: 4}",
        )
    });
    let misses = c.counts().misses;
    let values = cached_run(&c, &more);
    assert_eq!(c.counts().misses - misses, units(&more));
    assert_eq!(bits(&values), bits(&run(&more, &Recipe::PAPER).unwrap()));
    // Back to the first spec: every unit is read again.
    let misses = c.counts().misses;
    cached_run(&c, &claim);
    assert_eq!(c.counts().misses, misses);
}

#[test]
fn damaged_entries_are_recomputed_and_overwritten() {
    let w = tempfile::tempdir().unwrap();
    let claim = claim_in(w.path(), str::to_string);
    let n = units(&claim);
    let dir = w.path().join("cache");
    let c = open(&dir, "build-a");
    let clean = cached_run(&c, &claim);
    let files = entries(&dir);
    // One value's bits changed (checksum no longer matches), one entry cut short, one
    // emptied, one replaced by another unit's entry (wrong key).
    let mut flipped = std::fs::read(&files[0]).unwrap();
    let at = flipped.iter().position(|&b| b == b'\n').unwrap() + 10;
    flipped[at] ^= 0x01;
    std::fs::write(&files[0], flipped).unwrap();
    let whole = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[1], &whole[..whole.len() / 2]).unwrap();
    std::fs::write(&files[2], b"").unwrap();
    std::fs::copy(&files[4], &files[3]).unwrap();
    let c = open(&dir, "build-a");
    let again = cached_run(&c, &claim);
    let counts = c.counts();
    assert_eq!(
        (counts.hits, counts.misses, counts.corrupt, counts.stored),
        (n - 4, 4, 4, 4)
    );
    assert_eq!(bits(&clean), bits(&again));
    // Overwritten: the next run reads every unit.
    let c = open(&dir, "build-a");
    cached_run(&c, &claim);
    assert_eq!((c.counts().hits, c.counts().corrupt), (n, 0));
}

/// Issue 32 (messages): an entry that passes its checksum but lacks a metric the unit
/// reads failed the run ("system did not produce metric"). It is now a miss: computed
/// again and overwritten. The entries are re-sealed with a recomputed SHA-256, as a
/// forger (or an older core with fewer metrics) would write them.
#[test]
fn entries_sealed_without_a_wanted_metric_or_with_nan_are_recomputed() {
    use sha2::{Digest, Sha256};
    let w = tempfile::tempdir().unwrap();
    let claim = claim_in(w.path(), str::to_string);
    let n = units(&claim);
    let dir = w.path().join("cache");
    let c = open(&dir, "build-a");
    let clean = cached_run(&c, &claim);
    let files = entries(&dir);
    let reseal = |path: &Path, edit: &dyn Fn(Vec<&str>) -> Vec<String>| {
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("sha256 ")).collect();
        let mut body = edit(lines).join("\n");
        body.push('\n');
        let sum: String = Sha256::digest(body.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        std::fs::write(path, format!("{body}sha256 {sum}\n")).unwrap();
    };
    // Every metric line dropped; every metric set to NaN.
    reseal(&files[0], &|l| {
        l.into_iter()
            .filter(|x| !x.starts_with("metric "))
            .map(str::to_string)
            .collect()
    });
    reseal(&files[1], &|l| {
        l.into_iter()
            .map(|x| match x.strip_prefix("metric ") {
                Some(m) => {
                    let name = m.split(' ').next().unwrap();
                    format!("metric {name} {:016x}", f64::NAN.to_bits())
                }
                None => x.to_string(),
            })
            .collect()
    });
    let c = open(&dir, "build-a");
    let again = cached_run(&c, &claim);
    let counts = c.counts();
    assert_eq!(
        (counts.hits, counts.misses, counts.corrupt, counts.stored),
        (n - 2, 2, 2, 2)
    );
    assert_eq!(bits(&clean), bits(&again));
    let c = open(&dir, "build-a");
    cached_run(&c, &claim);
    assert_eq!((c.counts().hits, c.counts().corrupt), (n, 0));
}

/// The binary in `dir` with the cache flags of `args` only (the environment's cache
/// variables removed).
fn dpclaims(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_dpclaims"))
        .current_dir(dir)
        .args(args)
        .env_remove("DPCLAIMS_CACHE")
        .env_remove("DPCLAIMS_NO_CACHE")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("run dpclaims");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every file under `dir` with its bytes, by relative path.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_run_from_the_cache_writes_the_uncached_runs_reports_byte_for_byte() {
    let w = tempfile::tempdir().unwrap();
    let d = w.path();
    let claim = claim_in(d, str::to_string);
    let n = units(&claim);
    let common = ["run", "claims", "--no-baseline", "--out"];
    let plain = dpclaims(d, &[&common[..], &["plain", "--no-cache"]].concat());
    assert!(
        !stderr(&plain).contains("result cache"),
        "{}",
        stderr(&plain)
    );
    assert!(!d.join(".dpclaims-cache").exists());
    let cold = dpclaims(d, &[&common[..], &["cold"]].concat());
    assert!(
        stderr(&cold).contains(&format!(
            "result cache .dpclaims-cache: 0 of {n} units read, {n} computed"
        )),
        "{}",
        stderr(&cold)
    );
    let warm = dpclaims(d, &[&common[..], &["warm"]].concat());
    assert!(
        stderr(&warm).contains(&format!("{n} of {n} units read, 0 computed")),
        "{}",
        stderr(&warm)
    );
    assert_eq!(
        stdout(&plain).replace("reports in plain", "reports in warm"),
        stdout(&warm)
    );
    let reports = tree(&d.join("plain"));
    assert!(reports.len() > 3, "{reports:?}");
    assert!(reports == tree(&d.join("cold")), "cold cache run differs");
    assert!(
        reports == tree(&d.join("warm")),
        "run from the cache differs"
    );
    // A shard reads the same entries; --cache DIR elsewhere starts empty.
    let shard = dpclaims(
        d,
        &["run", "claims", "--shard", "0/1", "--partial-out", "s"],
    );
    assert!(stderr(&shard).contains(&format!("{n} of {n} units read")));
    let other = dpclaims(
        d,
        &[&common[..], &["other", "--cache", "elsewhere"]].concat(),
    );
    assert!(stderr(&other).contains(&format!("0 of {n} units read")));
    assert!(d.join("elsewhere/CACHEDIR.TAG").is_file());
}

#[test]
fn cache_stats_and_prune_report_and_remove_what_this_build_cannot_use() {
    let w = tempfile::tempdir().unwrap();
    let d = w.path();
    let claim = claim_in(d, str::to_string);
    let n = units(&claim);
    dpclaims(d, &["run", "claims", "--no-reports", "--cache", "c"]);
    let s = dpclaims(d, &["cache", "stats", "--cache", "c"]);
    assert!(
        stdout(&s).starts_with(&format!("result cache c: {n} entries, ")),
        "{}",
        stdout(&s)
    );
    assert!(stdout(&s).contains("(this build)"), "{}", stdout(&s));
    // Another build's entries, a damaged entry of this build, an old temporary file.
    let files = entries(&d.join("c"));
    let this_build = files[0].parent().unwrap().parent().unwrap().to_path_buf();
    let other = d.join("c/other-build/00");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(&files[0], other.join(files[0].file_name().unwrap())).unwrap();
    std::fs::write(&files[1], b"dpclaims-cache/1\n").unwrap();
    let tmp = files[2].with_file_name(".tmp-left-behind");
    std::fs::write(&tmp, b"x").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let j = dpclaims(d, &["cache", "stats", "--cache", "c", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let builds = j["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 2);
    let other = builds.iter().find(|b| b["build"] == "other-build").unwrap();
    assert_eq!(
        (&other["current"], &other["entries"]),
        (&false.into(), &1.into())
    );
    let this = builds.iter().find(|b| b["current"] == true).unwrap();
    assert_eq!(
        (&this["corrupt"], &this["temporary"]),
        (&1.into(), &1.into())
    );
    let p = dpclaims(d, &["cache", "prune", "--cache", "c"]);
    assert!(
        stdout(&p).contains("removed 1 entries of other builds, 1 damaged, 1 temporary files")
            && stdout(&p).ends_with(&format!("; {} entries kept\n", n - 1)),
        "{}",
        stdout(&p)
    );
    assert!(!d.join("c/other-build").exists());
    assert!(!tmp.exists());
    assert_eq!(entries(&d.join("c")).len(), n - 1);
    // The pruned cache still serves this build.
    let again = dpclaims(d, &["run", "claims", "--no-reports", "--cache", "c"]);
    assert!(
        stderr(&again).contains(&format!("{} of {n} units read, 1 computed", n - 1)),
        "{}",
        stderr(&again)
    );
    let all = dpclaims(d, &["cache", "prune", "--all", "--cache", "c"]);
    assert!(
        stdout(&all).ends_with("; 0 entries kept\n"),
        "{}",
        stdout(&all)
    );
    assert!(entries(&d.join("c")).is_empty());
    assert!(this_build.parent().unwrap().join("CACHEDIR.TAG").is_file());
}

#[test]
fn two_processes_filling_one_cache_together_write_the_same_reports() {
    let w = tempfile::tempdir().unwrap();
    let d = w.path();
    let claim = claim_in(d, str::to_string);
    let n = units(&claim);
    let children: Vec<_> = ["one", "two"]
        .iter()
        .map(|out| {
            Command::new(env!("CARGO_BIN_EXE_dpclaims"))
                .current_dir(d)
                .args([
                    "run",
                    "claims",
                    "--no-baseline",
                    "--cache",
                    "shared",
                    "--out",
                    out,
                ])
                .env_remove("DPCLAIMS_CACHE")
                .env_remove("DPCLAIMS_NO_CACHE")
                .env_remove("GITHUB_ACTIONS")
                .env_remove("GITHUB_STEP_SUMMARY")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("damaged"), "{}", stderr(&o));
    }
    assert!(tree(&d.join("one")) == tree(&d.join("two")));
    let after = dpclaims(d, &["run", "claims", "--no-reports", "--cache", "shared"]);
    assert!(
        stderr(&after).contains(&format!("{n} of {n} units read, 0 computed")),
        "{}",
        stderr(&after)
    );
}

/// An accountant in an `rhs` is computed once and then read from the cache (issue 59: a
/// calibration under the PLD accountant at 1.6e5 steps cost 44 s on every run): the first
/// run computes it once for its four points, the second computes nothing.
#[test]
fn an_accountant_in_an_rhs_is_computed_once_and_read_on_the_next_run() {
    let w = tempfile::tempdir().unwrap();
    let d = w.path();
    claim_in(d, |t| {
        t.replace(
            r#"rhs: "1.0e12""#,
            r#"rhs: "1.0e12 * calibrate_sigma_pld(1, 1.0e-5, 0.01, 1000)""#,
        )
    });
    let line = |o: &Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .find(|l| l.starts_with("accountants of expressions: "))
            .map(|l| l.split(" (").next().unwrap().to_string())
    };
    let args = [
        "run",
        "claims",
        "--no-reports",
        "--no-baseline",
        "--cache",
        "c",
    ];
    let first = dpclaims(d, &args);
    assert_eq!(
        line(&first).as_deref(),
        Some("accountants of expressions: 0 read from the cache, 1 computed"),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let second = dpclaims(d, &args);
    assert_eq!(
        line(&second).as_deref(),
        Some("accountants of expressions: 1 read from the cache, 0 computed"),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    // The same verdicts either way.
    let verdicts = |o: &Output| String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(verdicts(&first), verdicts(&second));
}
