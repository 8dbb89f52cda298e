"""scripts/mutants.py (`make mutants`, issue 57): the resumable run, its timeouts, the
report and the Slurm script, on a toy tree whose "detectors" are shell one-liners (a
detector fails when the mutated file holds a marker), so no cargo build runs here.

Every command runs under a timeout; each test checks the exit status, the message, and
that nothing outside target/mutants/, mutants/results/ and the report changed.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "mutants.py"
LIMIT = 120  # seconds: a hung driver fails the test instead of hanging it

SOURCE = "".join(f"line {k}\n" for k in range(1, 11))


def diff(line, new):
    """A unified diff of src/train/a.rs replacing `line k` by `new`."""
    return (
        "--- a/src/train/a.rs\n+++ b/src/train/a.rs\n"
        f"@@ -{line},1 +{line},1 @@\n-line {line}\n+{new}\n"
    )


# id -> (line, replacement). The markers decide what the toy detectors do.
MUTANTS = {
    "m1 caught by unit": (1, "UNIT_FAILS"),
    "m2 survives": (2, "HARMLESS"),
    "m3 unviable": (3, "NO_BUILD"),
    "m4 caught by suite": (4, "SUITE_FAILS"),
    "m5 kills the driver once": (5, "KILL_DRIVER"),
    "m6 hangs": (6, "HANG"),
    "m7 caught by integration": (7, "INTEGRATION_FAILS"),
}

# Each step logs the mutant it sees (the replaced line), then fails on its marker.
SEEN = "grep -o -E '^[A-Z_]+$' src/train/a.rs | head -1 >> \"$LOGDIR/{step}.log\"; "


def step(name, kind, test, build=None, always=False):
    s = {"name": name, "kind": kind, "test": ["sh", "-c", SEEN.format(step=name.replace(" ", "-")) + test]}
    s["build"] = ["sh", "-c", build] if build else None
    if always:
        s["always"] = True
    return s


def config(logdir):
    return {
        "env": {"LOGDIR": str(logdir)},
        "min_timeout": {"build": 5, "test": 3},
        "steps": [
            step("unit tests", "cargo-test",
                 "if grep -q UNIT_FAILS src/train/a.rs; then echo 'test unit::x ... FAILED'; exit 101; fi",
                 build="! grep -q NO_BUILD src/train/a.rs"),
            step("claim suite", "suite",
                 # The first time it meets KILL_DRIVER it kills the driver (as `kill -9`
                 # or a lost node would), leaving the mutated file in the scratch tree.
                 "if grep -q KILL_DRIVER src/train/a.rs && [ ! -e \"$LOGDIR/killed\" ]; then "
                 "touch \"$LOGDIR/killed\"; kill -9 \"$MUTANTS_DRIVER_PID\"; sleep 5; fi; "
                 "if grep -q HANG src/train/a.rs; then sleep 61; fi; "
                 "if grep -q SUITE_FAILS src/train/a.rs; then echo 'FAIL claim x: row y'; exit 1; fi",
                 always=True),
            step("integration tests", "cargo-test",
                 "if grep -q INTEGRATION_FAILS src/train/a.rs; then echo 'test hardening::z ... FAILED'; exit 101; fi"),
        ],
    }


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True, timeout=LIMIT)


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "scripts" / "mutants.py")
    (root / "src" / "train").mkdir(parents=True)
    (root / "src" / "train" / "a.rs").write_text(SOURCE)
    (root / "README").write_text("a toy checkout\n")
    mutants = [
        {"id": k, "file": "src/train/a.rs", "module": "src/train", "line": l, "column": 1,
         "function": "f", "genre": "FnValue", "replacement": r, "diff": diff(l, r)}
        for k, (l, r) in MUTANTS.items()
    ]
    sample = {
        "tool": "cargo-mutants 0.0.0-test", "seed": 1, "size": len(mutants),
        "modules": ["src/train"], "population": 20, "population_per_module": {"src/train": 20},
        "source_sha256": {"src/train/a.rs": hashlib.sha256(SOURCE.encode()).hexdigest()},
        "mutants": mutants,
    }
    (root / "mutants").mkdir()
    (root / "mutants" / "sample.json").write_text(json.dumps(sample, indent=1))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "toy")
    logs = tmp_path / "logs"
    logs.mkdir()
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config(logs)))
    return root, logs, cfg


def snapshot(root):
    """Every file outside what the driver may write: path -> SHA-256."""
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in ("target", ".git")]
        if rel == "mutants":
            dirnames[:] = [d for d in dirnames if d != "results"]
        for f in files:
            p = os.path.join(dirpath, f)
            if os.path.relpath(p, root) == os.path.join("reports", "MUTANTS.md"):
                continue
            out[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def run(root, cfg, *args, env=None):
    e = dict(os.environ)
    e.pop("MUTANTS_CONFIG", None)
    if cfg is not None:
        e["MUTANTS_CONFIG"] = str(cfg)
    e.update(env or {})
    return subprocess.run([sys.executable, str(root / "scripts" / "mutants.py"), *args], cwd=root,
                          env=e, capture_output=True, text=True, timeout=LIMIT)


def records(root):
    out = {}
    for f in sorted((root / "mutants" / "results").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out.setdefault(r["id"], []).append(r)
    return out


def gone(pattern):
    """No process runs `pattern` within a few seconds (SIGKILL is delivered asynchronously)."""
    for _ in range(50):
        if not any(pattern in cmdline(p) for p in os.listdir("/proc") if p.isdigit()):
            return True
        time.sleep(0.1)
    return False


def cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def seen(logs, step):
    p = logs / f"{step}.log"
    return p.read_text().split() if p.exists() else []


def with_claim_suite(tree, claims, run_claim, keep):
    """The toy tree with claim files (name -> text), a `suite-claims` step running
    `run_claim` (sh, the claim's path as $1) one claim a process, and the sample cut to
    the mutants named in `keep`; committed. Returns the claims directory."""
    root, logs, cfg = tree
    d = root / "claims"
    d.mkdir()
    for name, text in claims.items():
        (d / f"{name}.yaml").write_text(text)
    c = json.loads(cfg.read_text())
    c["steps"][1] = {"name": "claim suite", "kind": "suite-claims", "always": True,
                     "claims": "claims", "build": None,
                     "test": ["sh", "-c", run_claim, "sh", "{claim}"]}
    cfg.write_text(json.dumps(c))
    sample = json.loads((root / "mutants/sample.json").read_text())
    sample["mutants"] = [m for m in sample["mutants"] if m["id"] in keep]
    (root / "mutants/sample.json").write_text(json.dumps(sample, indent=1))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "claims and mutants")
    return d


def test_a_killed_run_resumes_where_it_stopped(tree):
    root, logs, cfg = tree
    before = snapshot(root)
    first = run(root, cfg, "run")
    # m5's suite step killed the driver with SIGKILL: no cleanup ran.
    assert first.returncode == -9, first.stderr
    done = records(root)
    assert set(done) == {"m1 caught by unit", "m2 survives", "m3 unviable", "m4 caught by suite"}
    # The kill left m5 applied in the scratch tree; the next run restores it first.
    scratch = root / "target/mutants/shard-0-of-1/tree/src/train/a.rs"
    assert "KILL_DRIVER" in scratch.read_text()

    second = run(root, cfg, "run")
    assert second.returncode == 0, second.stderr
    assert "4 already judged, 3 to run" in second.stdout
    recs = records(root)
    assert set(recs) == set(MUTANTS)
    assert all(len(v) == 1 for v in recs.values()), "a judged mutant ran again"
    # The unit tests saw each viable mutant once; m5 twice (killed mid-way, then again).
    unit = seen(logs, "unit-tests")
    assert unit.count("KILL_DRIVER") == 2
    # UNIT_FAILS twice: its failing test runs again, alone, to tell a catch from a flake.
    assert unit.count("UNIT_FAILS") == 2, unit
    for marker in ("HARMLESS", "SUITE_FAILS", "HANG", "INTEGRATION_FAILS"):
        assert unit.count(marker) == 1, (marker, unit)
    assert "NO_BUILD" not in unit
    r = {k: v[0] for k, v in recs.items()}
    assert (r["m1 caught by unit"]["outcome"], r["m1 caught by unit"]["detector"]) == ("caught", "unit tests")
    assert r["m1 caught by unit"]["detail"] == "unit::x"
    # The claim suite runs on every viable mutant (the suite-alone score) ...
    assert r["m1 caught by unit"]["suite"] == "missed"
    assert (r["m4 caught by suite"]["outcome"], r["m4 caught by suite"]["detector"]) == ("caught", "claim suite")
    assert r["m4 caught by suite"]["detail"] == "FAIL claim x: row y"
    # ... the integration tests only on what survived the others.
    assert seen(logs, "integration-tests").count("UNIT_FAILS") == 0
    assert (r["m7 caught by integration"]["outcome"], r["m7 caught by integration"]["detector"]) == (
        "caught", "integration tests")
    assert r["m2 survives"]["outcome"] == "missed"
    assert r["m3 unviable"]["outcome"] == "unviable"
    assert r["m5 kills the driver once"]["outcome"] == "missed"
    # The hung detector was stopped at its timeout (floor 3 s), its sleep killed with it.
    assert r["m6 hangs"]["outcome"] == "timeout"
    assert r["m6 hangs"]["suite"] == "timeout"
    assert gone("sleep 61")
    # The scratch copy is the checkout again; nothing outside the driver's files changed.
    assert scratch.read_text() == SOURCE
    assert snapshot(root) == before

    third = run(root, cfg, "run")
    assert third.returncode == 0 and "0 to run" in third.stdout
    # After a new check, one mutant is judged again on request; its new line wins.
    again = run(root, cfg, "run", "--rerun", "m2 survives")
    assert again.returncode == 0 and "1 to run" in again.stdout, again.stdout
    assert len(records(root)["m2 survives"]) == 2
    assert seen(logs, "unit-tests").count("HARMLESS") == 2


def test_the_report_counts_scores_and_lists_survivors_with_their_fates(tree):
    root, logs, cfg = tree
    # A partial run first: the report says so.
    assert run(root, cfg, "run", "--limit", "2").returncode == 0
    rep = run(root, cfg, "report")
    assert rep.returncode == 0, rep.stderr
    text = (root / "reports/MUTANTS.md").read_text()
    assert "**Partial:** 2 of the 7 sampled mutants are judged; 5 are not yet run" in text
    (logs / "killed").touch()  # no kill this time
    assert run(root, cfg, "run").returncode == 0
    (root / "mutants/fates.json").write_text(json.dumps(
        {"m2 survives": {"fate": "equivalent", "why": "a | pipe and `ticks` stay text"}}))
    rep = run(root, cfg, "report")
    assert rep.returncode == 0, rep.stderr
    text = (root / "reports/MUTANTS.md").read_text()
    assert "Partial" not in text
    # caught m1 m4 m7; missed m5 (open); m2 equivalent; m3 unviable; m6 timeout.
    assert "| `src/train` | 20 | 7 | 7 | 3 | 1 | 1 | 1 | 1 | 75.0 % | 25.0 % |" in text, text
    assert "| `m2 survives` | **equivalent** | ``a \\| pipe and `ticks` stay text`` |  |" in text
    assert "| `m5 kills the driver once` | **open** |  |  |" in text
    assert "+KILL_DRIVER" in text  # the open survivor's diff
    assert "| `m4 caught by suite` | claim suite | `FAIL claim x: row y` | caught |" in text
    # Generated from the committed files alone: the same bytes again.
    assert run(root, cfg, "report").returncode == 0
    assert (root / "reports/MUTANTS.md").read_text() == text


def test_bad_input_is_refused_with_exit_2_before_any_work(tree):
    root, logs, cfg = tree
    before = snapshot(root)
    for args, words in [
        (["run", "--shard", "2/2"], "expected I/N with 0 <= I < N"),
        (["run", "--shard", "x"], "expected I/N"),
        (["run", "--rerun", "no such mutant"], "--rerun names no sampled mutant: no such mutant"),
        (["slurm", "--shards", "0"], "--shards must be between"),
        (["slurm", "--shards", "2", "--time", "1h"], "expected HH:MM:SS"),
        (["slurm", "--shards", "2", "--partition", "a b"], "letters, digits"),
    ]:
        out = run(root, cfg, *args)
        assert out.returncode == 2, (args, out.stderr)
        assert words in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr
        assert out.stdout == ""
    # A sample drawn from other sources: refused, nothing applied.
    (root / "src/train/a.rs").write_text(SOURCE + "line 11\n")
    out = run(root, cfg, "run")
    assert out.returncode == 2
    assert "the sample was drawn from other sources of src/train/a.rs" in out.stderr
    (root / "src/train/a.rs").write_text(SOURCE)
    # A diff that does not match its file (a hand-edited sample): refused, the file intact.
    sample_path = root / "mutants/sample.json"
    good = sample_path.read_text()
    broken = json.loads(good)
    broken["mutants"][0]["diff"] = broken["mutants"][0]["diff"].replace("-line 1", "-line one")
    sample_path.write_text(json.dumps(broken))
    out = run(root, cfg, "run")
    assert out.returncode == 2
    assert "the diff of `m1 caught by unit` does not apply to src/train/a.rs" in out.stderr
    assert (root / "target/mutants/shard-0-of-1/tree/src/train/a.rs").read_text() == SOURCE
    sample_path.write_text(good)
    (logs / "claim-suite.log").unlink()
    # An unmutated tree that fails a detector: refused before any mutant is judged.
    bad = json.loads(cfg.read_text())
    bad["steps"][0]["test"] = ["sh", "-c", "echo 'test unit::flaky ... FAILED'; exit 101"]
    cfg.write_text(json.dumps(bad))
    out = run(root, cfg, "run")
    assert out.returncode == 2
    assert "the unmutated tree fails `unit tests` (test): unit::flaky" in out.stderr
    assert records(root) == {}
    assert not (logs / "claim-suite.log").exists()
    assert snapshot(root) == before


FAKE_SBATCH = textwrap.dedent(r"""
    #!/bin/bash
    # Stands in for Slurm's sbatch (as tests/sharding.rs's): runs an array job's tasks in
    # order with SLURM_ARRAY_TASK_ID, and a --wrap job only if it depends on the array.
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
    echo "sbatch $*" >> "$SBATCH_LOG"
    if [ -n "$wrap" ]; then
      [ "$dep" = "afterany:4242" ] || { echo "unexpected dependency '$dep'" >&2; exit 1; }
      sh -c "$wrap" > "$SBATCH_DIR/report.out" 2>&1
      echo "4243"
    else
      for i in $(seq "${array%-*}" "${array#*-}"); do
        SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_JOB_ID=4242 bash "$script" > "$SBATCH_DIR/task-$i.out" 2>&1 || true
      done
      echo "4242;cluster"
    fi
    """).lstrip()


def test_the_slurm_script_runs_end_to_end_against_a_stand_in_sbatch(tree, tmp_path):
    root, logs, cfg = tree
    (logs / "killed").touch()  # no kill in this test
    before = snapshot(root)
    gen = run(root, cfg, "slurm", "--shards", "3", "--time", "02:00:00", "--partition", "short")
    assert gen.returncode == 0, gen.stderr
    script = gen.stdout
    for line in ["#SBATCH --array=0-2", "#SBATCH --time=02:00:00", "#SBATCH --partition=short",
                 "#SBATCH --cpus-per-task=2",
                 'exec "$PYTHON" scripts/mutants.py run --shard "$SLURM_ARRAY_TASK_ID/$SHARDS"']:
        assert line in script.splitlines(), (line, script)
    job = tmp_path / "job.sh"
    job.write_text(script)
    assert subprocess.run(["bash", "-n", str(job)], timeout=LIMIT).returncode == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(FAKE_SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", MUTANTS_CONFIG=str(cfg),
               SBATCH_LOG=str(tmp_path / "sbatch.log"), SBATCH_DIR=str(tmp_path),
               PYTHON=sys.executable)
    env.pop("SLURM_ARRAY_TASK_ID", None)
    # Run as a user would, by a relative path from the directory holding it.
    out = subprocess.run(["bash", "job.sh"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=LIMIT)
    assert out.returncode == 0, out.stderr + (tmp_path / "sbatch.log").read_text()
    assert "submitted mutant array 4242 (3 tasks) and report job 4243" in out.stdout
    # Each shard judged every third mutant into its own file; the report job read them all.
    files = sorted(p.name for p in (root / "mutants/results").glob("*.jsonl"))
    assert files == ["shard-0-of-3.jsonl", "shard-1-of-3.jsonl", "shard-2-of-3.jsonl"]
    assert set(records(root)) == set(MUTANTS)
    text = (root / "reports/MUTANTS.md").read_text()
    assert "Partial" not in text and "| `src/train` | 20 | 7 | 7 |" in text
    assert snapshot(root) == before
    # Submitted again, every shard finds its mutants judged and runs none.
    (tmp_path / "sbatch.log").unlink()
    again = subprocess.run(["bash", str(job)], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=LIMIT)
    assert again.returncode == 0
    for i in range(3):
        assert "0 to run" in (tmp_path / f"task-{i}.out").read_text()


def test_the_page_names_no_local_path_and_no_markup_from_a_message():
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants

    msg = "panicked at /tmp/.tmpX/out/a.csv | see `/work/wt/x` and file:///home/u"
    assert mutants.scrub(msg) == "panicked at <path> | see `<path> and <path>"
    code = mutants.md_code(mutants.scrub(msg))
    assert code == "``panicked at <path> \\| see `<path> and <path>``"
    # A fence longer than any run of backticks in the diff it holds.
    assert mutants.md_block("a ``` b\n").startswith("````\n")


def test_the_claim_suite_runs_one_claim_a_process_cheapest_first_and_stops_at_the_first_failure(tree):
    """The default oracle's suite step (`suite-claims`): the unmutated run times each claim
    and orders them cheapest first; a mutant's suite stops at the first claim that fails
    (a regression of any kind), names it, and a claim that hangs times out on its own
    limit."""
    root, logs, cfg = tree
    run_claim = (
        "c=$1; echo \"$c\" >> \"$LOGDIR/claims.log\"; sleep $(sed -n 's/^sleep: //p' \"$c\"); "
        "if grep -q SUITE_FAILS src/train/a.rs && [ \"$c\" = claims/c-mid.yaml ]; then "
        "echo 'baseline CHANGED: c-mid: differs from its snapshot'; exit 1; fi; "
        "if grep -q HANG src/train/a.rs && [ \"$c\" = claims/b-fast.yaml ]; then sleep 61; fi"
    )
    # a-slow takes longest, b-fast least; c-mid in between.
    with_claim_suite(tree, {n: f"id: {n}\nsleep: {t}\n" for n, t in
                            [("a-slow", 0.6), ("b-fast", 0.0), ("c-mid", 0.3)]},
                     run_claim, ("m2 survives", "m4 caught by suite", "m6 hangs"))
    out = run(root, cfg, "run")
    assert out.returncode == 0, out.stderr
    base = json.loads((root / "target/mutants/shard-0-of-1/baseline.json").read_text())
    assert base["orders"]["claim suite"] == ["claims/b-fast.yaml", "claims/c-mid.yaml",
                                             "claims/a-slow.yaml"]
    r = {k: v[0] for k, v in records(root).items()}
    # m4 fails at c-mid: a-slow never runs for it; the claim and the line are named.
    s4 = [s for s in r["m4 caught by suite"]["steps"] if s["step"] == "claim suite/test"][0]
    assert (s4["status"], s4["claims_run"], s4["claim"]) == ("fail", 2, "claims/c-mid.yaml")
    assert r["m4 caught by suite"]["suite_claim"] == "claims/c-mid.yaml"
    assert r["m4 caught by suite"]["detail"] == "baseline CHANGED: c-mid: differs from its snapshot"
    # m2 survives: every claim ran, in the registered order.
    s2 = [s for s in r["m2 survives"]["steps"] if s["step"] == "claim suite/test"][0]
    assert (s2["status"], s2["claims_run"]) == ("ok", 3)
    # m6 hangs at b-fast, the first claim: stopped at that claim's own limit (floor 3 s).
    assert r["m6 hangs"]["outcome"] == "timeout"
    assert r["m6 hangs"]["suite_claim"] == "claims/b-fast.yaml"
    assert gone("sleep 61")
    # The log of claims run: the baseline's three by name, then m2's and m4's (the
    # sample's order) cheapest first, each up to its first failure; m6 comes after m4 was
    # caught by c-mid in the same file, so it tries c-mid first (learned order), then
    # b-fast, where it hangs.
    ran = (logs / "claims.log").read_text().split()
    assert ran == ["claims/a-slow.yaml", "claims/b-fast.yaml", "claims/c-mid.yaml",
                   "claims/b-fast.yaml", "claims/c-mid.yaml", "claims/a-slow.yaml",
                   "claims/b-fast.yaml", "claims/c-mid.yaml",
                   "claims/c-mid.yaml", "claims/b-fast.yaml"]
    s6 = [s for s in r["m6 hangs"]["steps"] if s["step"] == "claim suite/test"][0]
    assert (s6["status"], s6["claims_run"]) == ("timeout", 2)


def test_the_learned_order_tries_claims_that_caught_the_same_file_then_module_first():
    """Only the time to the first failure depends on the order; it is learned from the
    records: same file, then same module, then any, by catches; the rest cheapest first."""
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    order = ["a", "b", "c", "d", "e"]
    recs = {
        "x1": {"id": "x1", "file": "src/fit/p.rs", "module": "src/fit", "suite": "caught", "suite_claim": "e"},
        "x2": {"id": "x2", "file": "src/fit/q.rs", "module": "src/fit", "suite": "caught", "suite_claim": "d"},
        "x3": {"id": "x3", "file": "src/fit/q.rs", "module": "src/fit", "suite": "caught", "suite_claim": "d"},
        "x4": {"id": "x4", "file": "src/train/r.rs", "module": "src/train", "suite": "caught", "suite_claim": "c"},
        "x5": {"id": "x5", "file": "src/fit/p.rs", "module": "src/fit", "suite": "missed"},
        "x6": {"id": "x6", "file": "src/fit/p.rs", "module": "src/fit", "suite": "timeout", "suite_claim": "b"},
        "x7": {"id": "x7", "file": "src/fit/p.rs", "module": "src/fit", "suite": "caught", "suite_claim": "gone"},
    }
    m = {"id": "new", "file": "src/fit/p.rs", "module": "src/fit"}
    assert mutants.learned_order(order, m, recs) == ["e", "d", "c", "a", "b"]
    assert mutants.learned_order(order, {"id": "n", "file": "src/data/z.rs", "module": "src/data"},
                                 recs) == ["d", "c", "e", "a", "b"]
    assert mutants.learned_order(order, m, {}) == order
    # a mutant's own earlier record does not order its own run again
    assert mutants.learned_order(order, {"id": "x1", "file": "src/other.rs", "module": "m"},
                                 {"x1": recs["x1"]}) == order


def listing(mutants_by_file, tool="cargo-mutants 0.0.0-test"):
    return {"tool": tool, "mutants": [
        {"name": f"{f}:{l}:1: replace line {l}", "file": f, "genre": "FnValue",
         "replacement": "X", "span": {"start": {"line": l, "column": 1}, "end": {"line": l, "column": 5}},
         "function": {"function_name": "f"}, "diff": diff(l, "X").replace("src/train/a.rs", f)}
        for f, lines in mutants_by_file.items() for l in lines]}


def test_a_refresh_redraws_only_the_mutants_of_changed_files_and_keeps_the_records_of_the_rest(tree, tmp_path):
    root, logs, cfg = tree
    (root / "src/train/b.rs").write_text(SOURCE)
    sample = json.loads((root / "mutants/sample.json").read_text())
    sample["mutants"] = [m for m in sample["mutants"] if m["id"] in ("m1 caught by unit", "m2 survives")]
    extra = {"id": "src/train/b.rs:3:1: replace line 3", "file": "src/train/b.rs", "module": "src/train",
             "line": 3, "column": 1, "function": "f", "genre": "FnValue", "replacement": "X",
             "diff": diff(3, "X").replace("src/train/a.rs", "src/train/b.rs")}
    sample["mutants"].insert(1, extra)
    sample["size"] = 3
    sample["source_sha256"]["src/train/b.rs"] = hashlib.sha256(SOURCE.encode()).hexdigest()
    (root / "mutants/sample.json").write_text(json.dumps(sample, indent=1))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "two files")
    out = run(root, cfg, "run")
    assert out.returncode == 0, out.stderr
    # b.rs changes: its one sampled mutant is stale, and the run says how to refresh.
    (root / "src/train/b.rs").write_text("line 0\n" + SOURCE)
    out = run(root, cfg, "run")
    assert out.returncode == 2 and "src/train/b.rs" in out.stderr and "--refresh" in out.stderr
    lst = tmp_path / "listing.json"
    lst.write_text(json.dumps(listing({"src/train/a.rs": range(1, 11), "src/train/b.rs": range(1, 12)})))
    env = {"MUTANTS_LISTING": str(lst)}
    out = run(root, cfg, "sample", "--refresh", env=env)
    assert out.returncode == 0, out.stderr
    new = json.loads((root / "mutants/sample.json").read_text())
    ids = [m["id"] for m in new["mutants"]]
    # a.rs's two keep their slots (and records); b.rs's slot holds one of b.rs's mutants.
    assert ids[0] == "m1 caught by unit" and ids[2] == "m2 survives"
    assert ids[1].startswith("src/train/b.rs:")
    assert new["source_sha256"]["src/train/b.rs"] == hashlib.sha256(("line 0\n" + SOURCE).encode()).hexdigest()
    assert new["refreshed"][-1]["changed_files"] == ["src/train/b.rs"] and new["refreshed"][-1]["replaced"] == 1
    # The same refresh again is a no-op; growing draws from outside the sample only.
    again = run(root, cfg, "sample", "--refresh", env=env)
    assert again.returncode == 0 and "nothing to do" in again.stdout
    out = run(root, cfg, "sample", "--refresh", "--size", "6", env=env)
    assert out.returncode == 0, out.stderr
    grown = json.loads((root / "mutants/sample.json").read_text())
    assert [m["id"] for m in grown["mutants"]][:3] == ids and len(set(m["id"] for m in grown["mutants"])) == 6
    assert run(root, cfg, "sample", "--refresh", "--size", "2", env=env).returncode == 2
    # a listing by another tool version is refused
    lst.write_text(json.dumps(listing({"src/train/a.rs": [1]}, tool="cargo-mutants 9")))
    bad = run(root, cfg, "sample", "--refresh", env=env)
    assert bad.returncode == 2 and "another version" in bad.stderr
    # The records of a.rs's mutants still count; b.rs's old record does not (even were
    # the same id redrawn: it was judged on other sources).
    st = run(root, cfg, "status")
    assert "caught 1" in st.stdout and "missed 1" in st.stdout and "not yet run 4" in st.stdout
    # b.rs's old mutant survived on the old source: the page lists it as retired, with
    # its fate, and the score it would have counted as missed; the refresh is listed too.
    (root / "mutants/fates.json").write_text(json.dumps(
        {"src/train/b.rs:3:1: replace line 3": {"fate": "fixed", "why": "b.rs mended"}}))
    rep = run(root, cfg, "report")
    assert rep.returncode == 0, rep.stderr
    text = (root / "reports/MUTANTS.md").read_text()
    assert "### Retired with their source" in text
    assert "| `src/train/b.rs:3:1: replace line 3` |" in text and "| **fixed** | `b.rs mended` |" in text
    assert "counted there as missed, the score would be 33.3 %" in text, text
    assert "| `src/train/b.rs` | 1 | 0 |" in text


def test_with_coverage_the_suite_runs_only_the_claims_that_reach_a_mutant(tree):
    """mutants/coverage.json (measured on the same sources) says which claims execute which
    lines; a claim that never executes a mutant's lines is not run for it, and a mutant no
    claim reaches is missed by the suite without running any. Coverage of other sources is
    ignored (every claim runs)."""
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    root, logs, cfg = tree
    run_claim = (
        "c=$1; echo \"$c\" >> \"$LOGDIR/claims.log\"; "
        "if grep -q SUITE_FAILS src/train/a.rs && [ \"$c\" = claims/c.yaml ]; then "
        "echo 'baseline CHANGED: c'; exit 1; fi"
    )
    claims = with_claim_suite(tree, {n: f"id: {n}\n" for n in ("a", "b", "c")}, run_claim,
                              ("m2 survives", "m4 caught by suite"))
    # a and c execute lines 3-5 of a.rs, b none of them: m4 (line 4) meets a and c only;
    # m2 (line 2) meets none.
    key = mutants.coverage_key(str(root), str(root), json.loads(cfg.read_text()))
    cov = {"key": key, "claims": {
        "claims/a.yaml": {"seconds": 1, "lines": {"src/train/a.rs": [[3, 5]]}},
        "claims/b.yaml": {"seconds": 1, "lines": {"src/other.rs": [[1, 9]]}},
        "claims/c.yaml": {"seconds": 1, "lines": {"src/train/a.rs": [[4, 4], [8, 9]]}}}}
    (root / "mutants/coverage.json").write_text(json.dumps(cov))
    out = run(root, cfg, "run")
    assert out.returncode == 0, out.stderr
    assert "only the claims that reach" in out.stdout
    r = {k: v[0] for k, v in records(root).items()}
    s4 = [s for s in r["m4 caught by suite"]["steps"] if s["step"] == "claim suite/test"][0]
    assert (s4["status"], s4["claims_reaching"], s4["claim"]) == ("fail", 2, "claims/c.yaml")
    s2 = [s for s in r["m2 survives"]["steps"] if s["step"] == "claim suite/test"][0]
    assert (s2["status"], s2["claims_reaching"], s2["claims_run"]) == ("ok", 0, 0)
    assert r["m2 survives"]["suite"] == "missed" and r["m2 survives"]["outcome"] == "missed"
    ran = (logs / "claims.log").read_text().split()
    # the unmutated run, then m4's reaching claims up to c (their order is the unmutated
    # times'); m2 ran none, and b never ran for a mutant
    assert ran[:3] == ["claims/a.yaml", "claims/b.yaml", "claims/c.yaml"]
    assert ran[-1] == "claims/c.yaml" and set(ran[3:]) <= {"claims/a.yaml", "claims/c.yaml"}
    assert len(ran) - 3 == s4["claims_run"]
    # A change no claim reads (docs, tests) keeps the coverage; of a claim, it is not used.
    (root / "README").write_text("changed\n")
    git(root, "commit", "-q", "-am", "docs")
    out = run(root, cfg, "run", "--rerun", "m2 survives")
    assert out.returncode == 0, out.stderr
    assert "only the claims that reach" in out.stdout
    (claims / "b.yaml").write_text("id: b\nchanged: true\n")
    git(root, "commit", "-q", "-am", "a claim")
    out = run(root, cfg, "run", "--rerun", "m2 survives")
    assert out.returncode == 0, out.stderr
    assert "every claim on every mutant" in out.stdout


def test_lcov_lines_and_spans():
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    lcov = ("SF:/x/src/fit/p.rs\nDA:3,1\nDA:4,0\nDA:5,7\nend_of_record\n"
            "SF:/x/src/other.rs\nDA:1,1\nend_of_record\n")
    cov = mutants.covered_lines(lcov, ["src/fit/p.rs"])
    assert cov == {"src/fit/p.rs": [3, 5]}
    assert mutants.ranges([1, 2, 3, 7, 9, 10]) == [[1, 3], [7, 7], [9, 10]]
    e = {"lines": {"src/fit/p.rs": [[3, 3], [5, 9]]}}
    assert mutants.reaches(e, {"file": "src/fit/p.rs", "line": 4, "end_line": 4}) is False
    assert mutants.reaches(e, {"file": "src/fit/p.rs", "line": 1, "end_line": 3}) is True
    assert mutants.reaches(e, {"file": "src/fit/p.rs", "line": 9}) is True
    assert mutants.reaches(e, {"file": "src/fit/q.rs", "line": 3}) is False
    # A claim the coverage does not hold (a measurement under way) may reach anything.
    cov = {"claims": {"measured": e}}
    m = {"file": "src/fit/q.rs", "line": 3}
    assert mutants.may_reach(cov, "measured", m) is False
    assert mutants.may_reach(cov, "not measured", m) is True
    assert mutants.may_reach(None, "measured", m) is True


def test_a_changed_baseline_is_named_with_its_moved_rows():
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    text = ("running...\nbaseline CHANGED: pff-proof-ingredients: 2 rows moved\n"
            "    Eq. 12 / main: estimate 0.31 -> 0.52\n    Eq. 14 / main: holds -> refuted\n"
            "    Eq. 15 / main: third\nnot indented\n    indented but not after a change\n")
    d = mutants.failure_detail("suite-claims", text)
    assert d == ("baseline CHANGED: pff-proof-ingredients: 2 rows moved; "
                 "Eq. 12 / main: estimate 0.31 -> 0.52; Eq. 14 / main: holds -> refuted")


def test_a_const_fn_mutant_is_run_by_every_claim():
    """A const fn may run at compile time, where coverage has no counter."""
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    text = "impl Memo {\n    pub(super) const fn new() -> Self { Memo { x: 1 } }\n}\nfn newer() {}\n"
    assert mutants.in_const_fn(text, {"function": "Memo::new"}) is True
    assert mutants.in_const_fn(text, {"function": "newer"}) is False
    assert mutants.in_const_fn(text, {"function": "LogregPass<'f>::run"}) is False
    assert mutants.in_const_fn(text, {"function": None}) is False


def test_a_test_that_fails_once_and_passes_alone_is_not_a_catch(tree):
    """A detector's failing tests run again, alone (`-- --exact <names>`): a test that failed
    only under load (a wait on a child process, say) does not count the mutant caught."""
    root, logs, cfg = tree
    c = json.loads(cfg.read_text())
    c["steps"][0]["test"][2] = (
        "echo \"$*\" >> \"$LOGDIR/unit-args.log\"; "
        "if grep -q FLAKY_ONCE src/train/a.rs && [ ! -e \"$LOGDIR/flaked\" ]; then "
        "touch \"$LOGDIR/flaked\"; echo 'test unit::w ... FAILED'; exit 101; fi; "
        + c["steps"][0]["test"][2])
    cfg.write_text(json.dumps(c))
    sample = json.loads((root / "mutants/sample.json").read_text())
    m1 = [m for m in sample["mutants"] if m["id"] == "m1 caught by unit"][0]
    flaky = dict(m1, id="m8 flaky once", line=8, replacement="FLAKY_ONCE", diff=diff(8, "FLAKY_ONCE"))
    sample["mutants"] = [m1, flaky]
    (root / "mutants/sample.json").write_text(json.dumps(sample, indent=1))
    git(root, "commit", "-q", "-am", "a flaky mutant")
    out = run(root, cfg, "run")
    assert out.returncode == 0, out.stderr
    r = {k: v[0] for k, v in records(root).items()}
    f = r["m8 flaky once"]
    unit = [s for s in f["steps"] if s["step"] == "unit tests/test"][0]
    assert unit["status"] == "flaky" and unit["rerun"]["tests"] == ["unit::w"]
    assert f["outcome"] == "missed" and f["detector"] is None
    # A test that fails again alone is a catch.
    c1 = r["m1 caught by unit"]
    unit1 = [s for s in c1["steps"] if s["step"] == "unit tests/test"][0]
    assert c1["outcome"] == "caught" and unit1["rerun"]["status"] == "fail"
    # (sh -c takes the `--` as $0: the rest are the arguments cargo test would get)
    assert "--exact unit::x" in (logs / "unit-args.log").read_text().split("\n")


def test_the_suite_compares_each_claims_reports_and_judges_again_what_an_older_suite_missed(tree):
    """CI requires the committed reports byte for byte, so a claim whose run passes but
    whose report bytes move fails the suite (the files a one-claim run cannot reproduce,
    learned from the unmutated run, aside). A mutant an older suite missed is judged again
    by the current one; a catch stands. An unmutated run that does not reproduce a claim's
    own report is refused."""
    root, logs, cfg = tree
    sample = json.loads((root / "mutants/sample.json").read_text())
    sample["mutants"].append({
        "id": "m8 moves a report", "file": "src/train/a.rs", "module": "src/train", "line": 8,
        "column": 1, "function": "f", "genre": "FnValue", "replacement": "REPORT_MOVES",
        "diff": diff(8, "REPORT_MOVES")})
    (root / "mutants/sample.json").write_text(json.dumps(sample, indent=1))
    (root / "reports").mkdir()
    for n in ("a", "b"):
        (root / "reports" / f"{n}.csv").write_text(f"{n} 1\n")
    (root / "reports/SUMMARY.md").write_text("every claim\n")
    # Each claim writes its own CSV and a summary of itself only (as a one-claim run does);
    # m8 moves claim a's CSV only.
    run_claim = (
        "c=$(basename \"$1\" .yaml); v=1; "
        "if [ $c = a ] && grep -q REPORT_MOVES src/train/a.rs; then v=2; fi; "
        "if grep -q SUITE_FAILS src/train/a.rs; then echo 'FAIL claim x: row y'; exit 1; fi; "
        "if [ -n \"$2\" ]; then mkdir -p \"$2\"; echo \"$c $v\" > \"$2/$c.csv\"; "
        "echo \"$c only\" > \"$2/SUMMARY.md\"; fi"
    )
    with_claim_suite(tree, {n: f"id: {n}\n" for n in ("a", "b")}, run_claim,
                     ("m2 survives", "m4 caught by suite", "m8 moves a report"))
    # First the older suite, which writes no reports: m8 gets past it.
    c = json.loads(cfg.read_text())
    c["steps"][1]["test"] = ["sh", "-c", run_claim, "sh", "{claim}"]
    cfg.write_text(json.dumps(c))
    assert run(root, cfg, "run").returncode == 0
    old = records(root)
    assert old["m8 moves a report"][-1]["suite"] == "missed"
    assert old["m4 caught by suite"][-1]["suite"] == "caught"

    # The suite as configured now: each claim's reports in {out}, compared with reports/.
    c["steps"][1]["test"] = ["sh", "-c", run_claim, "sh", "{claim}", "{out}"]
    c["steps"][1]["reports"] = "reports"
    cfg.write_text(json.dumps(c))
    # Before the changed suite has run, the page counts what it missed apart, and says
    # what leaving those out does to the numbers.
    rep = run(root, cfg, "report")
    assert rep.returncode == 0, rep.stderr
    text = (root / "reports/MUTANTS.md").read_text()
    assert ("**Waiting for the changed suite:** 2 of the not-yet-run mutants were judged "
            "before the claim suite gained or changed claims") in text, text
    assert "caught by the tests 0, missed 2, equivalent 0, timed out 0" in text, text
    assert "the score would be 33.3 % and the suite alone 33.3 %" in text, text
    (root / "reports/MUTANTS.md").unlink()
    before = snapshot(root)
    out = run(root, cfg, "run")
    assert out.returncode == 0, out.stderr
    assert "1 already judged, 2 to run" in out.stdout, out.stdout
    recs = records(root)
    assert len(recs["m4 caught by suite"]) == 1, "a catch was judged again"
    m8 = recs["m8 moves a report"][-1]
    assert (m8["outcome"], m8["detector"], m8["suite"]) == ("caught", "claim suite", "caught")
    assert "reports differ: reports/a.csv (line 1, column 3: 'a 1' -> 'a 2')" in m8["detail"], m8["detail"]
    suite = next(s for s in m8["steps"] if s["step"] == "claim suite/test")
    assert suite["reports_differ"] == ["a.csv"]
    m2 = recs["m2 survives"][-1]
    assert (m2["suite"], m2["outcome"]) == ("missed", "missed")
    # The summary (which gathers every claim) was learned as not reproducible, so not compared.
    b = json.loads((root / "target/mutants/shard-0-of-1/baseline.json").read_text())
    assert b["reports"]["skip"] == {"claims/a.yaml": ["SUMMARY.md"], "claims/b.yaml": ["SUMMARY.md"]}
    assert snapshot(root) == before
    assert run(root, cfg, "status").stdout.strip().endswith("caught 2, missed 1")

    # Committed reports that this tree does not write: refused before any mutant runs.
    (root / "reports/b.csv").write_text("b stale\n")
    git(root, "commit", "-q", "-am", "stale report")
    out = run(root, cfg, "run", "--rerun", "m2 survives")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "does not reproduce the committed reports/b.csv (line 1, column 3: 'b stale' -> 'b 1')" in out.stderr


def test_a_shard_uses_another_shards_unmutated_run_made_on_the_same_sources(tree):
    root, logs, cfg = tree
    (logs / "killed").touch()  # no kill in this test
    first = run(root, cfg, "run", "--limit", "1")
    assert first.returncode == 0, first.stderr
    assert "the unmutated run (every detector must pass" in first.stdout
    second = run(root, cfg, "run", "--shard", "1/2", "--limit", "1")
    assert second.returncode == 0, second.stderr
    assert "the unmutated run (every detector must pass" not in second.stdout, second.stdout
    assert ("the unmutated run of target/mutants/shard-0-of-1/baseline.json serves"
            in second.stdout), second.stdout
    # Other sources: each shard measures its own again.
    (root / "README").write_text("changed\n")
    git(root, "commit", "-q", "-am", "readme")
    third = run(root, cfg, "run", "--shard", "1/2", "--limit", "1")
    assert third.returncode == 0, third.stderr
    assert "the unmutated run (every detector must pass" in third.stdout


def test_the_page_bounds_the_suites_reach_over_the_whole_population(tree):
    """mutants/population.json places every listed mutant; with the coverage, the page
    counts those in lines no claim executes, per module and per file, and says when the
    coverage is partial."""
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    root, logs, cfg = tree
    claims = with_claim_suite(tree, {n: f"id: {n}\n" for n in ("a", "b")}, "true", ("m2 survives",))
    pop = {"key": mutants.modules_key(str(root)), "tool": "t",
           "spans": {"src/train/a.rs": [[1, 1], [2, 2], [4, 5], [9, 9]]}}
    (root / "mutants/population.json").write_text(json.dumps(pop))
    key = mutants.coverage_key(str(root), str(root), json.loads(cfg.read_text()))
    cov = {"key": key, "claims": {
        "claims/a.yaml": {"seconds": 1, "lines": {"src/train/a.rs": [[2, 2]]}},
        "claims/b.yaml": {"seconds": 1, "lines": {"src/train/a.rs": [[5, 6]]}}}}
    (root / "mutants/coverage.json").write_text(json.dumps(cov))
    assert run(root, cfg, "report").returncode == 0
    text = (root / "reports/MUTANTS.md").read_text()
    assert "## Reach of the claim suite over the whole population" in text
    assert "| `src/train` | 4 | 2 | 50.0 % |" in text, text
    assert "| `src/train/a.rs` | 4 | 2 |" in text
    assert "Coverage is partial" not in text


def test_a_claim_added_to_the_suite_judges_again_only_the_suite_misses_it_can_reach(tree):
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    root, logs, cfg = tree
    claims = with_claim_suite(tree, {"a": "id: a\n"}, "true", ("m2 survives", "m4 caught by suite"))
    assert run(root, cfg, "run").returncode == 0
    assert records(root)["m2 survives"][-1]["suite_claims"] == {
        "claims/a.yaml": hashlib.sha256(b"id: a\n").hexdigest()[:16]}
    (claims / "b.yaml").write_text("id: b\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "claim b")
    key = mutants.coverage_key(str(root), str(root), json.loads(cfg.read_text()))

    def coverage(b_lines):
        (root / "mutants/coverage.json").write_text(json.dumps({"key": key, "claims": {
            "claims/a.yaml": {"seconds": 1, "lines": {"src/train/a.rs": [[1, 9]]}},
            "claims/b.yaml": {"seconds": 1, "lines": {"src/train/a.rs": b_lines}}}}))

    # b executes none of m2's line: what the suite missed stands.
    coverage([[7, 9]])
    assert "0 to run" in run(root, cfg, "run").stdout
    # Where b reaches line 2, m2 is judged again; m4 (line 4, missed too: this suite
    # catches nothing) stands, b not reaching it.
    coverage([[1, 3]])
    assert run(root, cfg, "status").stdout.strip().endswith("missed 1, not yet run 1")
    out = run(root, cfg, "run")
    assert "1 already judged, 1 to run" in out.stdout, out.stdout
    assert len(records(root)["m2 survives"]) == 2


def test_a_survivor_killed_by_a_later_check_is_counted_apart_with_the_score_before_it(tree):
    root, logs, cfg = tree
    (logs / "killed").touch()  # no kill this time
    assert run(root, cfg, "run").returncode == 0
    # A new unit test catches m2, which survived; judged again on request.
    c = json.loads(cfg.read_text())
    c["steps"][0]["test"][2] = c["steps"][0]["test"][2].replace(
        "grep -q UNIT_FAILS", "grep -q -e UNIT_FAILS -e HARMLESS")
    cfg.write_text(json.dumps(c))
    (root / "mutants/fates.json").write_text(json.dumps(
        {"m2 survives": {"fate": "killed", "why": "a property the code documents"}}))
    assert run(root, cfg, "run", "--rerun", "m2 survives").returncode == 0
    assert run(root, cfg, "report").returncode == 0
    text = (root / "reports/MUTANTS.md").read_text()
    # caught m1 m2 m4 m7, missed m5: 80 %; before the new check m2 was missed: 60 %.
    assert "| **all** | 20 | 7 | 7 | 4 | 1 | 0 | 1 | 1 | **80.0 %** |" in text, text
    assert "Caught only by a check added after the mutant survived every detector: 1" in text
    assert "before those checks the score was 60.0 %" in text
    assert ("| `m2 survives` | unit tests | `unit::x` | `a property the code documents` |"
            in text), text


def test_a_differing_report_line_is_shown_from_its_first_difference(tmp_path):
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("h\n" + "x" * 200 + ",0.125,z\n")
    b.write_text("h\n" + "x" * 200 + ",-1,z\n")
    d = mutants.first_difference(str(a), str(b))
    assert d.startswith("line 2, column 202: "), d
    assert "0.125" in d and "-1" in d, d


def test_a_step_killed_mid_build_has_the_crates_caches_cleared_before_the_next(tmp_path):
    """A cargo step that did not end by itself (a timeout here; a kill or the machine going
    down alike) may leave a half-written incremental cache, with which every later build
    fails to link: the next step clears the crate's caches first, its dependencies' stay.
    A step that ends by itself, failing or not, leaves nothing to clear."""
    sys.path.insert(0, str(SCRIPT.parent))
    import mutants
    target = tmp_path / "target"
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    log = str(tmp_path / "log")
    marker = target / mutants.INTERRUPTED

    def caches():
        for d in ["release/incremental/dpclaims-1", "release/.fingerprint/dpclaims-2",
                  "release/.fingerprint/ndarray-3", "debug/incremental/x"]:
            (target / d).mkdir(parents=True, exist_ok=True)

    caches()
    # Ends by itself (failing): no marker, nothing cleared by the next step.
    st, _, _ = mutants.run_step(["sh", "-c", "exit 3 # cargo"], str(tmp_path), env, 30, log)
    assert st == "fail" and not marker.exists()
    mutants.run_step(["sh", "-c", "true # cargo"], str(tmp_path), env, 30, log)
    assert (target / "release/incremental/dpclaims-1").is_dir()
    # Killed by its timeout: the marker stays, and the next step clears the crate's caches.
    st, _, _ = mutants.run_step(["sh", "-c", "sleep 30 # cargo"], str(tmp_path), env, 0.5, log)
    assert st == "timeout" and marker.exists()
    st, _, _ = mutants.run_step(["sh", "-c", "true # cargo"], str(tmp_path), env, 30, log)
    assert st == "ok" and not marker.exists()
    assert not (target / "release/incremental").exists()
    assert not (target / "debug/incremental").exists()
    assert not (target / "release/.fingerprint/dpclaims-2").exists()
    assert (target / "release/.fingerprint/ndarray-3").is_dir()
    # A step that runs no cargo (a claim run by the built binary) leaves no marker.
    caches()
    st, _, _ = mutants.run_step(["sh", "-c", "sleep 30"], str(tmp_path), env, 0.5, log)
    assert st == "timeout" and not marker.exists()
