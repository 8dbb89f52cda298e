#!/usr/bin/env python3
"""Regression power measured by mutation testing (issue 57; `make mutants`).

cargo-mutants lists the mutants of the core and the verdict layer; this script keeps a
seeded random sample of them (committed: mutants/sample.json), runs each sampled mutant
against the oracle CI uses, cheapest detector first, and writes one line per mutant to
mutants/results/shard-<I>-of-<N>.jsonl as soon as it is judged, so a killed run resumes
where it stopped. reports/MUTANTS.md is generated from those committed files and the
survivors' fates (mutants/fates.json).

    scripts/mutants.py sample [--seed S] [--size K] [--force]
    scripts/mutants.py sample --refresh [--size K]
    scripts/mutants.py run [--shard I/N] [--limit K]
    scripts/mutants.py coverage
    scripts/mutants.py status
    touch target/mutants/shard-<I>-of-<N>/stop   (the run stops after the mutant it judges)
    scripts/mutants.py report [--out reports/MUTANTS.md]
    scripts/mutants.py slurm --shards N [--time HH:MM:SS] [--cpus-per-task K] [--partition P]

A mutant is applied in a scratch copy of the tracked files (target/mutants/shard-<I>-of-<N>/
tree, its own target directory), never in the checkout: nothing outside target/mutants/,
mutants/results/ and the report changes. Python standard library only.
"""
import argparse
import fcntl
import filecmp
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The sampled modules: the core and the verdict layer (issue 57).
MODULES = [
    "src/train",
    "src/privacy",
    "src/linalg",
    "src/models",
    "src/data",
    "src/rng.rs",
    "src/fit",
    "src/judge",
]
DEFAULT_SEED = 57
DEFAULT_SIZE = 160
SAMPLE = "mutants/sample.json"
RESULTS = "mutants/results"
FATES = "mutants/fates.json"
REPORT = "reports/MUTANTS.md"
WORK = "target/mutants"
# The build profile of the scratch copy's builds (incremental: see default_config).
PROFILE = "release"

# The oracle. Each step: an optional build (a failing first build makes the mutant
# unviable) and a detector command; `{profile}` and `{work}` are filled in. A mutant is
# caught by the first detector that fails. The claim suite runs first and on every viable
# mutant (what a user's CI runs: the suite-alone score), so it costs nothing to ask it
# first; the unit tests (a build of their own), the fault sentinels and the other
# integration tests run only on what it missed, cheapest first.
def default_config():
    cargo = ["cargo"]
    prof = ["--release"]
    return {
        # Incremental release builds of dpclaims (not of its dependencies: cargo applies
        # `incremental` to workspace members only, so the copied target/release serves):
        # measured with one mutant of src/fit, the rebuild of lib + binary took 126 s
        # instead of 535 s and of the unit-test build 40 s instead of 407 s (2 shared
        # cores, load about 10). Codegen is split into more units; the binary ran
        # engine-equivalence in a median 5.5 s against 5.3 s (3 runs each, alternated), so
        # the suite costs about what it did. The unmutated run checks that every detector
        # still passes with it.
        "env": {"OPENBLAS_NUM_THREADS": "1", "CI": "true", "INSTA_UPDATE": "no",
                "CARGO_PROFILE_RELEASE_INCREMENTAL": "true"},
        "seed_target": True,
        "steps": [
            {
                # The suite CI runs (`make run --require-baseline`, uncached), one claim
                # per process, cheapest first (the unmutated run's times), stopping at the
                # first claim that fails: a baseline change, an uncaught control or a
                # refuted main row. Each claim's verdict does not depend on the others or
                # on the order (the tool's determinism), so "some claim fails" is the
                # whole suite's exit status; one process per claim is what lets the suite
                # stop at the first regression (`run --fail-fast` stops at a failing
                # verdict, not at a baseline change).
                #
                # CI also requires the committed reports byte for byte (`git diff
                # --exit-code -- reports/` after `make run`): every metric of every point at
                # 6 significant figures, far more than the snapshot's verdict rows. So each
                # claim writes its reports into a fresh directory ({out}) and every file it
                # writes must equal the committed one in `reports`, except the files a
                # one-claim run cannot reproduce (the summary, index and scorecards, which
                # gather every claim): those the unmutated run finds different, per claim,
                # are listed in its baseline and not compared.
                "name": "claim suite",
                "kind": "suite-claims",
                "always": True,
                "claims": "claims",
                "reports": "reports",
                "build": cargo + ["build"] + prof + ["--locked", "--bin", "dpclaims"],
                "test": [
                    "target/{profile}/dpclaims", "run", "{claim}", "--profile", "quick",
                    "--no-cache", "--require-baseline", "--out", "{out}",
                ],
            },
            {
                "name": "unit tests",
                "kind": "cargo-test",
                "build": cargo + ["test"] + prof + ["--locked", "--lib", "--no-run"],
                "test": cargo + ["test"] + prof + ["--locked", "--lib"],
            },
            {
                "name": "fault sentinels",
                "kind": "cargo-test",
                "build": cargo + ["test"] + prof + ["--locked", "--test", "tests", "--no-run"],
                "test": cargo + ["test"] + prof + ["--locked", "--test", "tests", "--", "faults::"],
            },
            {
                "name": "integration tests",
                "kind": "cargo-test",
                "build": None,
                "test": cargo + ["test"] + prof
                + ["--locked", "--test", "tests", "--", "--skip", "faults::"],
            },
        ],
    }


def load_config(path):
    """The detector configuration: a JSON file (`--config`, MUTANTS_CONFIG) or the default."""
    return read_json(path, "the detector configuration") if path else default_config()


class Refused(Exception):
    """Bad input or a state the run cannot start from: message on stderr, exit 2."""


def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def sha256_file(path):
    with open(path, "rb") as f:
        return sha256_bytes(f.read())


def plural(n, one, many):
    """`n` and the noun phrase that agrees with it."""
    return f"{n} {one if n == 1 else many}"


def module_of(path):
    for m in MODULES:
        if path == m or path.startswith(m + "/"):
            return m
    return None


def read_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise Refused(f"{what} {path} does not exist")
    except (OSError, ValueError) as e:
        raise Refused(f"{what} {path} is unreadable: {e}")


def write_atomic(path, text):
    d = os.path.dirname(path) or "."
    os.makedirs(d, exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------
# sample


def tool_version():
    if os.environ.get("MUTANTS_LISTING"):  # a listing from a file (the script's tests)
        return read_json(os.environ["MUTANTS_LISTING"], "the listing")["tool"]
    try:
        out = subprocess.run(
            ["cargo", "mutants", "--version"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError as e:
        raise Refused(f"cargo mutants: {e}")
    if out.returncode != 0:
        raise Refused("cargo-mutants is not installed (`make mutants` installs it)")
    return out.stdout.strip()


def list_mutants(root):
    if os.environ.get("MUTANTS_LISTING"):
        return read_json(os.environ["MUTANTS_LISTING"], "the listing")["mutants"]
    args = ["cargo", "mutants", "--list", "--json", "--diff"]
    for m in MODULES:
        args += ["--file", m if m.endswith(".rs") else m + "/**/*.rs"]
    out = subprocess.run(args, cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        raise Refused("cargo mutants --list failed:\n" + out.stderr[-2000:])
    return json.loads(out.stdout)


def normalise(m):
    """One cargo-mutants mutant as the sample stores it."""
    span = m.get("span") or {}
    start = span.get("start") or {}
    end = span.get("end") or {}
    fn = m.get("function") or {}
    f = m["file"]
    line, col = start.get("line", 0), start.get("column", 0)
    name = m.get("name") or f"{f}:{line}:{col}: replace with {m.get('replacement')}"
    return {
        "id": name,
        "file": f,
        "module": module_of(f),
        "line": line,
        "column": col,
        "end_line": end.get("line", line),
        "end_column": end.get("column", col),
        "function": fn.get("function_name"),
        "genre": m.get("genre"),
        "replacement": m.get("replacement"),
        "diff": m.get("diff", ""),
    }


def listed_population(root):
    """cargo-mutants' listing of the sampled modules, normalised, in a fixed order."""
    population = [normalise(m) for m in list_mutants(root)]
    population = [m for m in population if m["module"] is not None]
    population.sort(key=lambda m: (m["file"], m["line"], m["column"], m["id"]))
    return population


def cmd_sample(a):
    path = os.path.join(ROOT, SAMPLE)
    if a.refresh:
        return refresh_sample(a, path)
    if os.path.exists(path) and not a.force:
        raise Refused(f"{SAMPLE} exists (the committed sample); --force draws a new one")
    version = tool_version()
    population = listed_population(ROOT)
    ids = [m["id"] for m in population]
    if len(set(ids)) != len(ids):
        raise Refused("cargo mutants listed two mutants under one name")
    if a.size > len(population):
        raise Refused(f"--size {a.size} exceeds the {len(population)} mutants listed")
    # Random order: the run goes through the sample in this order, so the mutants judged
    # after any stop are themselves a random sample of it.
    chosen = random.Random(a.seed).sample(population, a.size)
    files = sorted({m["file"] for m in chosen})
    per_module = {}
    for m in population:
        per_module[m["module"]] = per_module.get(m["module"], 0) + 1
    doc = {
        "tool": version,
        "seed": a.seed,
        "size": a.size,
        "modules": MODULES,
        "population": len(population),
        "population_per_module": per_module,
        "source_sha256": {f: sha256_file(os.path.join(ROOT, f)) for f in files},
        "mutants": chosen,
    }
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"sample: {a.size} of {len(population)} mutants (seed {a.seed}, {version}) -> {SAMPLE}")
    return 0


def refresh_sample(a, path):
    """The committed sample brought up to the current sources without throwing away what is
    judged. A sampled mutant whose file is unchanged stays (its record still counts); the
    mutants of a changed file are replaced, slot for slot (so the run order stays random),
    by as many drawn at random from that file's current mutants, the generator seeded by
    the sample's seed, the file and its new contents; a file that is gone gives its slots
    up. `--size K` above the sample's size appends K - size more, drawn from the current
    population outside the sample. Each refresh is recorded in the sample."""
    sample = read_json(path, "the sample")
    version = tool_version()
    if version != sample["tool"]:
        raise Refused(f"the sample was listed by {sample['tool']}, this is {version}: "
                      "another version lists other mutants; draw a new sample (--force)")
    population = listed_population(ROOT)
    by_file = {}
    for m in population:
        by_file.setdefault(m["file"], []).append(m)
    now = {}
    for f in sample["source_sha256"]:
        p = os.path.join(ROOT, f)
        now[f] = sha256_file(p) if os.path.isfile(p) else None
    changed = sorted(f for f, h in sample["source_sha256"].items() if now[f] != h)
    taken = {m["id"] for m in sample["mutants"] if m["file"] not in changed}
    fresh = {}
    for f in changed:
        want = sum(1 for m in sample["mutants"] if m["file"] == f)
        pool = [m for m in by_file.get(f, []) if m["id"] not in taken] if now[f] else []
        fresh[f] = random.Random(f"{sample['seed']}:{f}:{now[f]}").sample(pool, min(want, len(pool)))
        taken |= {m["id"] for m in fresh[f]}
    mutants = []
    for m in sample["mutants"]:
        if m["file"] in changed:
            if fresh[m["file"]]:
                mutants.append(fresh[m["file"]].pop(0))
        else:
            mutants.append(m)
    replaced = sum(1 for m in sample["mutants"] if m["file"] in changed)
    added = 0
    size = a.size if a.size_given else len(mutants)
    if size > len(mutants):
        rest = [m for m in population if m["id"] not in taken]
        if size - len(mutants) > len(rest):
            raise Refused(f"--size {size}: only {len(rest)} listed mutants are outside the sample")
        extra = random.Random(f"{sample['seed']}:extend:{len(mutants)}:{size}").sample(
            rest, size - len(mutants))
        added = len(extra)
        mutants += extra
    elif size < len(mutants):
        raise Refused(f"--size {size} is below the sample's {len(mutants)}: a sample only grows")
    if not changed and not added:
        print(f"sample: {len(mutants)} mutants, every sampled source unchanged; nothing to do")
        return 0
    per_module = {}
    for m in population:
        per_module[m["module"]] = per_module.get(m["module"], 0) + 1
    files = sorted({m["file"] for m in mutants})
    sample.setdefault("refreshed", []).append({
        "commit": head_commit(ROOT), "changed_files": changed, "replaced": replaced,
        "added": added, "population": len(population)})
    sample.update(size=len(mutants), mutants=mutants, population=len(population),
                  population_per_module=per_module,
                  source_sha256={f: sha256_file(os.path.join(ROOT, f)) for f in files})
    write_atomic(path, json.dumps(sample, indent=1, sort_keys=True) + "\n")
    print(f"sample: refreshed: {replaced} mutants of {len(changed)} changed files redrawn, "
          f"{added} added; {len(mutants)} in all -> {SAMPLE}")
    return 0


# ---------------------------------------------------------------------------------------
# results


def all_records(root):
    """Every record of every results file, in the order written. A truncated last line (a
    run killed while writing) is skipped."""
    d = os.path.join(root, RESULTS)
    if not os.path.isdir(d):
        return
    for name in sorted(os.listdir(d)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(d, name), encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    print(f"mutants: skipped a damaged line of {RESULTS}/{name}", file=sys.stderr)
                    continue
                if isinstance(r, dict) and "id" in r:
                    yield r


def load_records(root, history=None):
    """The records keyed by mutant id (the last one wins); from `history` when given."""
    return {r["id"]: r for r in (all_records(root) if history is None else history)}


def survived_before(history, sample):
    """The mutants that some record shows surviving every detector, on the sampled source
    of their file: a later catch of one of them is by a check added after it survived
    (the page counts those apart: a sample that taught its own checks flatters them)."""
    return {r["id"] for r in history if r.get("outcome") == "missed"
            and r.get("source_sha256") == sample["source_sha256"].get(r.get("file"))}


def retired_survivors(history, sample, current):
    """Mutants that survived every detector on a source of their file that the sample no
    longer holds (the file changed since; `sample --refresh` redrew its mutants), and that
    have no usable record now: {id: the last such record}. The page lists them, so a
    survivor never leaves the count unseen when its file is changed."""
    last = {}
    for r in history:
        if r.get("id") not in current and r.get("source_sha256") != sample["source_sha256"].get(r.get("file")):
            last[r["id"]] = r
    return {k: r for k, r in last.items() if r.get("outcome") == "missed"}


def usable(rec, sample, suite=None):
    """A record counts when it was made on the sampled source of its file, and, when the
    claim suite did not catch its mutant, by the current suite (`suite`, from
    `current_suite`): the same step, and no claim added or changed since that could reach
    the mutant (per the coverage; without it, any). A suite that grew may catch it now. A
    catch stands (the suite only ever gains detectors)."""
    if rec is None or rec.get("source_sha256") != sample["source_sha256"].get(rec.get("file")):
        return False
    if suite is None or rec.get("suite") in ("caught", "not run"):
        return True
    if rec.get("oracle") != suite["oracle"]:
        return False
    seen = rec.get("suite_claims")
    if seen is None:  # made before claims were recorded (2026-12-03): the same claims
        return True
    cov = suite.get("coverage")
    return not any(
        seen.get(c) != h and (cov is None or c not in cov["claims"] or reaches(cov["claims"][c], rec))
        for c, h in suite["claims"].items())


def suite_step(config):
    """The configuration's `suite-claims` step (None when it has none)."""
    return next((s for s in config["steps"] if s.get("kind") == "suite-claims"), None)


def suite_oracle(config):
    """The claim suite's identity: its step as configured (what it runs and compares)."""
    step = suite_step(config)
    return sha256_bytes(json.dumps(step, sort_keys=True).encode())[:12] if step else None


def current_suite(root, config, cov):
    """The suite a record is checked against: its step's identity, its claims (path ->
    SHA-256 of the file, shortened) and the coverage (None when not current)."""
    step = suite_step(config)
    claims = {c: sha256_file(os.path.join(root, c))[:16] for c in suite_claims(root, step)} if step else {}
    return {"oracle": suite_oracle(config), "claims": claims, "coverage": cov}


def append_record(path, rec):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        # A line torn by a kill is ended first, so this record starts a line of its own.
        size = os.fstat(fd).st_size
        prefix = b""
        if size:
            with open(path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    prefix = b"\n"
        os.write(fd, prefix + (json.dumps(rec, sort_keys=True) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def parse_shard(s):
    m = re.fullmatch(r"(\d+)/(\d+)", s or "")
    if not m or int(m.group(2)) < 1 or int(m.group(1)) >= int(m.group(2)):
        raise Refused(f"--shard {s!r}: expected I/N with 0 <= I < N")
    return int(m.group(1)), int(m.group(2))


def check_sample_current(root, sample):
    stale = [
        f for f, h in sorted(sample["source_sha256"].items())
        if not os.path.isfile(os.path.join(root, f)) or sha256_file(os.path.join(root, f)) != h
    ]
    if stale:
        raise Refused(
            "the sample was drawn from other sources of "
            + ", ".join(stale)
            + f": its diffs no longer apply; redraw their mutants (`scripts/mutants.py sample --refresh`; records of unchanged files still count)"
        )


# ---------------------------------------------------------------------------------------
# the scratch copy


def tracked_files(root):
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if out.returncode != 0:
        raise Refused(f"git ls-files failed in {root}: {out.stderr.decode(errors='replace')}")
    return [p for p in out.stdout.decode().split("\0") if p]


def own_file(f):
    """The driver's own files and records: not copied into the scratch tree, and no part of
    the unmutated run's key (committing results must not measure the baseline again)."""
    return f.startswith(("mutants/", "scripts/mutants.py", "scripts/tests/")) or f == REPORT


def env_of(steps, env):
    """The environment variables that can change a detector's result or time."""
    return sorted((k, v) for k, v in env.items()
                  if k.startswith(("CARGO_", "RUST", "OPENBLAS", "DPCLAIMS", "INSTA"))
                  or k in ("CI", "LOGDIR"))


def sync_tree(root, tree):
    """The tracked files of `root` in `tree`, copied only where they differ (unchanged files
    keep their times, so cargo rebuilds only what changed); a file left mutated by a killed
    run is restored here. Files no longer tracked are removed (target/ is the tree's own)."""
    files = [f for f in tracked_files(root)
             if not own_file(f) and os.path.isfile(os.path.join(root, f))]
    keep = set(files)
    for f in files:
        src, dst = os.path.join(root, f), os.path.join(tree, f)
        with open(src, "rb") as s:
            data = s.read()
        try:
            with open(dst, "rb") as d:
                same = d.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as d:
                d.write(data)
            shutil.copymode(src, dst)
    remove_strays(tree, keep)
    return keep


def remove_strays(tree, keep):
    """Files a detector left in the scratch tree outside target/ (a pending snapshot of a
    failing suite, say): removed, so the next mutant meets the checkout's files only."""
    for dirpath, dirnames, filenames in os.walk(tree):
        rel = os.path.relpath(dirpath, tree)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d != "target"]
        for n in filenames:
            r = os.path.normpath(os.path.join(rel, n))
            if r not in keep:
                os.remove(os.path.join(dirpath, n))


def seed_target(root, tree):
    """The checkout's release build copied once into the scratch copy's target directory,
    so its first build recompiles only dpclaims, not the dependencies."""
    src = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(root, "target"), "release")
    dst = os.path.join(tree, "target", PROFILE)
    if os.path.isdir(dst) or not os.path.isdir(src):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    subprocess.run(["cp", "-a", src, dst + ".partial"], check=True)
    os.replace(dst + ".partial", dst)


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted(signum)


def stop_on_signals():
    """SIGTERM, SIGINT and SIGHUP stop the command: the step under way is killed with its
    process group (run_step), and the same command resumes."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)


# A step of cargo's under way in a target directory: left behind when the step was killed
# (a timeout, a stop signal, the machine going down), when cargo may have left its
# incremental cache half written.
INTERRUPTED = ".mutants-step-running"
CRATE = "dpclaims"


def clear_interrupted_build(target):
    """When a step was killed in `target` (its marker is there), the crate's incremental
    caches and fingerprints go, so cargo compiles the crate afresh (its dependencies stay).
    A half-written cache makes the next build fail to link (seen 2026-12-04: every build
    then failed with `undefined hidden symbol`), which would judge an unmutated tree
    failing or a mutant unviable. Returns whether anything was cleared."""
    marker = os.path.join(target, INTERRUPTED)
    if not os.path.exists(marker):
        return False
    for profile in sorted(os.listdir(target)) if os.path.isdir(target) else []:
        d = os.path.join(target, profile)
        if not os.path.isdir(d):
            continue
        shutil.rmtree(os.path.join(d, "incremental"), ignore_errors=True)
        fp = os.path.join(d, ".fingerprint")
        for name in sorted(os.listdir(fp)) if os.path.isdir(fp) else []:
            if name.startswith(CRATE + "-"):
                shutil.rmtree(os.path.join(fp, name), ignore_errors=True)
    os.remove(marker)
    print(f"mutants: a step was killed in {os.path.basename(target)}/ before: its incremental "
          "caches are cleared (the crate is compiled afresh)", flush=True)
    return True


def run_step(cmd, cwd, env, timeout, log):
    """Runs one command in its own process group; returns (status, seconds, output) with
    status "ok", "fail" or "timeout". A timeout kills the whole group. A step that does
    not end by itself leaves a marker in the target directory, and the next step clears
    the caches it may have broken first ([`clear_interrupted_build`])."""
    target = env.get("CARGO_TARGET_DIR") or os.path.join(cwd, "target")
    clear_interrupted_build(target)
    # Only a step that runs cargo can break its caches (a claim runs the built binary).
    marker = os.path.join(target, INTERRUPTED) if any("cargo" in str(c) for c in cmd) else None
    if marker:
        os.makedirs(target, exist_ok=True)
        with open(marker, "w") as f:
            f.write(f"{os.getpid()}\n")
    t0 = time.monotonic()
    with open(log, "wb") as out:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
            status = "ok" if rc == 0 else "fail"
        except subprocess.TimeoutExpired:
            status = "timeout"
        except BaseException:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.wait()
            raise
        if status == "timeout":
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.wait()
    if marker and status != "timeout":
        os.remove(marker)  # it ended by itself: its caches are whole
    secs = time.monotonic() - t0
    with open(log, "rb") as f:
        # Paths of the scratch copy named relative to it: the page names no local path.
        text = f.read().decode(errors="replace").replace(os.path.abspath(cwd) + os.sep, "")
    return status, secs, text


def failure_detail(kind, text):
    """What a failing detector names: the failing tests, or the suite's FAIL lines."""
    if kind in ("suite", "suite-claims"):
        # A changed baseline names the claim, then its moved rows, indented.
        lines, follow = [], 0
        for l in text.splitlines():
            if l.startswith(("FAIL", "error", "baseline CHANGED:", "reports differ:")):
                lines.append(l.strip())
                follow = 2 if l.startswith("baseline CHANGED:") else 0
            elif follow and l.startswith("    "):
                lines.append(l.strip())
                follow -= 1
            else:
                follow = 0
    else:
        lines = re.findall(r"^test (\S+) \.\.\. FAILED", text, flags=re.M)
        if not lines:
            lines = [l.strip() for l in text.splitlines() if l.startswith("error")][:3]
    if not lines:
        tail = [l.strip() for l in text.splitlines() if l.strip()]
        lines = tail[-1:] if tail else []
    return "; ".join(lines[:5])[:600]


def out_dir(work):
    """Where a claim of the suite writes its reports ({out}): emptied before each claim."""
    return os.path.join(work, "out")


def fill(cmd, work, claim=""):
    return [c.replace("{profile}", PROFILE).replace("{work}", work).replace("{claim}", claim)
            .replace("{out}", out_dir(work)) for c in cmd]


def written_files(d):
    """The files under `d` (relative paths, sorted), raw/ aside (the raw f64, never
    committed)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(d):
        rel = os.path.relpath(dirpath, d)
        if rel == ".":
            dirnames[:] = [n for n in dirnames if n != "raw"]
        out.extend(os.path.normpath(os.path.join(rel, n)) for n in filenames)
    return sorted(out)


def first_difference(a, b):
    """Where two files first differ: `line K: <old> -> <new>` (shortened), or why not."""
    try:
        with open(a, "rb") as f:
            x = f.read().decode(errors="replace").splitlines()
    except OSError:
        return "not committed"
    try:
        with open(b, "rb") as f:
            y = f.read().decode(errors="replace").splitlines()
    except OSError:
        return "not written"
    for k, (u, v) in enumerate(zip(x, y)):
        if u != v:
            # From a little before the first differing character: a long CSV row differs
            # far from its start.
            c = next((i for i, (p, q) in enumerate(zip(u, v)) if p != q), min(len(u), len(v)))
            s = max(0, c - 30)
            return f"line {k + 1}, column {c + 1}: {u[s:s + 100]!r} -> {v[s:s + 100]!r}"
    return f"{len(x)} lines -> {len(y)} lines"


def compare_reports(step, tree, work, expected, skip):
    """The files of a claim's run ({out}) that differ from the committed reports:
    `expected` is what the unmutated run wrote (a file it wrote and this run did not is a
    difference, and so is a new one); `skip` is what a one-claim run cannot reproduce."""
    if not step.get("reports"):
        return []
    out, committed = out_dir(work), os.path.join(tree, step["reports"])
    have = set(written_files(out))
    differ = []
    for f in sorted(have | set(expected or have)):
        if f in skip:
            continue
        a, b = os.path.join(committed, f), os.path.join(out, f)
        if f not in have or not os.path.isfile(a) or not filecmp.cmp(a, b, shallow=False):
            differ.append((f, first_difference(a, b)))
    return differ


def run_claim(step, claim, tree, env, work, timeout, log, expected=None, skip=(), compare=True):
    """One claim of a `suite-claims` step, its reports written into a fresh {out} and
    compared with the committed ones; returns (status, seconds, output, differing files).
    A run that passes but writes other report bytes fails, as CI's `git diff` does."""
    shutil.rmtree(out_dir(work), ignore_errors=True)
    status, secs, text = run_step(fill(step["test"], work, claim), tree, env, timeout, log)
    differ = []
    if status == "ok" and compare:
        differ = compare_reports(step, tree, work, expected, set(skip))
        if differ:
            status = "fail"
            text += "".join(f"\nreports differ: {step['reports']}/{f} ({how})" for f, how in differ)
    return status, secs, text, differ


def suite_claims(tree, step):
    """The claim files of a `suite-claims` step, by name (the unmutated run orders them)."""
    d = os.path.join(tree, step.get("claims", "claims"))
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith((".yaml", ".yml")))
    except OSError as e:
        raise Refused(f"the claim suite's directory {d}: {e}")
    if not names:
        raise Refused(f"the claim suite's directory {d} holds no claim")
    return [os.path.join(step.get("claims", "claims"), n) for n in names]


def run_suite_claims(step, order, tree, env, work, timeouts, log, reports):
    """One claim per process in `order`, stopping at the first that fails or times out;
    returns (status, seconds, output, claim, claims run, differing report files).
    `reports` is the unmutated run's {"written": {claim: files}, "skip": {claim: files}}."""
    total = 0.0
    for k, claim in enumerate(order):
        status, secs, text, differ = run_claim(
            step, claim, tree, env, work, timeouts.get(f"{step['name']}/test/{claim}"), log,
            reports.get("written", {}).get(claim), reports.get("skip", {}).get(claim, ()))
        total += secs
        if status != "ok":
            return status, total, text, claim, k + 1, differ
    return "ok", total, "", None, len(order), []


def learned_order(order, m, records):
    """The claims of the suite in the order to try them on mutant `m`: first those that
    caught an earlier mutant of the same file, then of the same module, then of any file
    (most catches first within each tier), then the rest; ties (and the rest) cheapest
    first, as `order` (the unmutated run's) has them. Only the time to the first failure
    depends on the order: the suite catches a mutant when any of its claims fails, and
    each claim's verdict does not depend on the others (the tool's determinism)."""
    rank = {c: k for k, c in enumerate(order)}
    tiers = ({}, {}, {})
    for r in records.values():
        c = r.get("suite_claim")
        if r.get("suite") != "caught" or c not in rank or r.get("id") == m["id"]:
            continue
        for t, same in enumerate((r.get("file") == m["file"],
                                  r.get("module") == m.get("module"), True)):
            if same:
                tiers[t][c] = tiers[t].get(c, 0) + 1

    def key(c):
        for t, tier in enumerate(tiers):
            if c in tier:
                return (t, -tier[c], rank[c])
        return (len(tiers), 0, rank[c])
    return sorted(order, key=key)


# ---------------------------------------------------------------------------------------
# coverage: which claims reach which lines

COVERAGE = "mutants/coverage.json"
# Where every listed mutant of the sampled modules sits (file and line span), to measure
# the suite's reach over the whole population, not only the sample.
POPULATION = "mutants/population.json"
# Coverage stores the executed lines of every file of the sampled modules (version 2; the
# first stored only the sampled files).
COVERAGE_VERSION = "2: every file of the sampled modules"
LLVM_TOOLS = ("llvm-profdata", "llvm-cov")
LLVM_VERSIONS = ("-22", "-21", "-20", "-19", "")  # the newest first (an unversioned one may be old)


def llvm_tool(name):
    """An llvm tool able to read this rustc's coverage (LLVM 19 reads rustc 1.95's)."""
    for v in LLVM_VERSIONS:
        path = shutil.which(name + v)
        if path:
            return path
    return None


# What a claim's run reads (its inputs): the sources, the claims and what they load. The
# docs, the tests, the committed reports and baseline snapshots are not among them, so a
# change there keeps the coverage (the baseline snapshots only decide whether the run
# passes, and the unmutated run is checked against them anyway).
COVERAGE_INPUTS = ("src/", "claims/", "assets/", "python/", "scorecards/", "build.rs",
                   "Cargo.toml", "Cargo.lock", "dpclaims.toml")


def source_key(root, tree):
    """The checkout's tracked inputs of a claim's run, as copied into `tree`, hashed:
    coverage measured on them holds for a tree with the same key."""
    return sha256_bytes(json.dumps(sorted(
        (f, sha256_file(os.path.join(tree, f))) for f in tracked_files(root)
        if f.startswith(COVERAGE_INPUTS) and os.path.isfile(os.path.join(tree, f)))).encode())


def coverage_key(root, tree, config):
    """Coverage holds for the same inputs and the same suite command (writing the reports,
    say, executes lines that a run without them does not)."""
    return sha256_bytes((source_key(root, tree) + (suite_oracle(config) or "")
                         + COVERAGE_VERSION).encode())


def module_files(root):
    """The tracked .rs files of the sampled modules."""
    return sorted(f for f in tracked_files(root) if f.endswith(".rs") and module_of(f))


def modules_key(root):
    return sha256_bytes(json.dumps([(f, sha256_file(os.path.join(root, f)))
                                    for f in module_files(root)]).encode())


def write_population(root):
    """mutants/population.json: the line span of every mutant cargo-mutants lists in the
    sampled modules, keyed by their sources (listed again only when they change)."""
    path = os.path.join(root, POPULATION)
    key = modules_key(root)
    if os.path.exists(path) and read_json(path, "the population").get("key") == key:
        return
    spans = {}
    for m in listed_population(root):
        spans.setdefault(m["file"], []).append([m["line"], max(m["end_line"], m["line"])])
    write_atomic(path, json.dumps({"key": key, "tool": tool_version(),
                                   "spans": {f: sorted(v) for f, v in sorted(spans.items())}},
                                  separators=(",", ":"), sort_keys=True) + "\n")
    print(f"mutants: {POPULATION}: {sum(len(v) for v in spans.values())} mutants listed",
          flush=True)


def covered_lines(lcov, files):
    """{file: sorted lines executed at least once} from an lcov export, for `files` only."""
    out, cur = {}, None
    for line in lcov.splitlines():
        if line.startswith("SF:"):
            path = line[3:]
            cur = next((f for f in files if path.endswith("/" + f) or path == f), None)
        elif line.startswith("DA:") and cur:
            ln, count = line[3:].split(",")[:2]
            if int(count) > 0:
                out.setdefault(cur, set()).add(int(ln))
        elif line == "end_of_record":
            cur = None
    return {f: sorted(v) for f, v in out.items()}


def ranges(lines):
    out = []
    for l in lines:
        if out and out[-1][1] == l - 1:
            out[-1][1] = l
        else:
            out.append([l, l])
    return out


def cmd_coverage(a):
    """Each claim of the suite run once on an instrumented build of the unmutated tree;
    the lines of the sampled files it executes are stored in mutants/coverage.json, keyed
    by the sources. A claim that never executes a mutant's lines computes the same bytes
    with the mutant as without it (the tool is deterministic), so the suite step runs only
    the claims that reach the mutant; a mutant no claim reaches is missed by the suite
    without running it."""
    root = ROOT
    sample = read_json(os.path.join(root, SAMPLE), "the sample")
    check_sample_current(root, sample)
    tools = {t: llvm_tool(t) for t in LLVM_TOOLS}
    if not all(tools.values()):
        raise Refused("llvm-profdata and llvm-cov are needed (Debian: apt-get install llvm-19)")
    config = load_config(a.config)
    step = suite_step(config)
    if step is None:
        raise Refused("the oracle has no `suite-claims` step to measure")
    work = os.path.join(root, WORK, "coverage")
    tree = os.path.join(work, "tree")
    os.makedirs(tree, exist_ok=True)
    # Stopped, a measurement kills the claim it runs (its process group), as `run` does.
    stop_on_signals()
    lock = open(os.path.join(work, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise Refused(f"another `mutants.py coverage` holds {WORK}/coverage/lock")
    sync_tree(root, tree)
    write_population(root)
    key = coverage_key(root, tree, config)
    env = dict(os.environ)
    env.update(config.get("env", {}))
    env["CARGO_TARGET_DIR"] = os.path.join(tree, "target")
    # Only the crate is instrumented (its dependencies keep the copied build): a wrapper
    # adds the flag to rustc when it compiles `dpclaims`.
    wrap = os.path.join(work, "rustc-coverage")
    with open(wrap, "w") as f:
        f.write('#!/bin/sh\ncase " $* " in *" --crate-name dpclaims "*) exec "$@" '
                '-C instrument-coverage ;; esac\nexec "$@"\n')
    os.chmod(wrap, 0o755)
    env["RUSTC_WRAPPER"] = wrap
    if config.get("seed_target"):
        seed_target(root, tree)
    claims = suite_claims(tree, step)
    path = os.path.join(root, COVERAGE)
    old = read_json(path, "the coverage") if os.path.exists(path) else {}
    done = old.get("claims", {}) if old.get("key") == key else {}
    todo = [c for c in claims if c not in done]
    # Cheapest first (an unmutated run's order, when one is stored): a measurement still
    # under way already spares the most claims.
    known = unmutated_order(root, step["name"])
    todo.sort(key=lambda c: (known.index(c) if c in known else len(known), c))
    print(f"mutants: coverage: {len(claims) - len(todo)} of {len(claims)} claims measured "
          f"on these sources, {len(todo)} to run", flush=True)
    if not todo:
        return 0
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    log = os.path.join(work, "logs", "build.log")
    status, secs, text = run_step(fill(step["build"], work), tree, env, None, log)
    if status != "ok":
        raise Refused(f"the instrumented build failed: {failure_detail('build', text)} (log: {log})")
    print(f"mutants: coverage: instrumented build {secs:.0f} s", flush=True)
    binary = os.path.join(tree, "target", PROFILE, "dpclaims")
    files = module_files(root)
    raw = os.path.join(work, "raw")
    for claim in todo:
        shutil.rmtree(raw, ignore_errors=True)
        os.makedirs(raw)
        cenv = dict(env, LLVM_PROFILE_FILE=os.path.join(raw, "%p-%m.profraw"))
        log = os.path.join(work, "logs", "claim.log")
        shutil.rmtree(out_dir(work), ignore_errors=True)
        status, secs, text = run_step(fill(step["test"], work, claim), tree, cenv, None, log)
        if status != "ok":
            raise Refused(f"the unmutated, instrumented tree fails {claim}: "
                          f"{failure_detail('suite-claims', text)} (log: {log})")
        merged = os.path.join(work, "merged.profdata")
        profs = sorted(os.path.join(raw, n) for n in os.listdir(raw))
        out = subprocess.run([tools["llvm-profdata"], "merge", "-sparse", *profs, "-o", merged],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise Refused(f"llvm-profdata merge failed: {out.stderr[-500:]}")
        out = subprocess.run([tools["llvm-cov"], "export", "--format=lcov",
                              f"--instr-profile={merged}", binary],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise Refused(f"llvm-cov export failed: {out.stderr[-500:]}")
        cov = covered_lines(out.stdout, files)
        done[claim] = {"seconds": round(secs, 1),
                       "lines": {f: ranges(v) for f, v in sorted(cov.items())}}
        # Written after each claim: a stopped measurement resumes.
        write_atomic(path, json.dumps({"key": key, "tool": os.path.basename(tools["llvm-cov"]),
                                       "claims": done}, indent=None, sort_keys=True) + "\n")
        reached = sum(1 for m in sample["mutants"] if reaches(done[claim], m))
        print(f"mutants: coverage: {claim}: {secs:.0f} s, reaches {reached} sampled mutants",
              flush=True)
    return 0


def unmutated_order(root, name):
    """The claims of suite step `name`, cheapest first, from the newest stored unmutated
    run of any shard ([] when none)."""
    best, when = [], -1.0
    d = os.path.join(root, WORK)
    for shard in (os.listdir(d) if os.path.isdir(d) else []):
        p = os.path.join(d, shard, "baseline.json")
        try:
            t = os.path.getmtime(p)
            with open(p, encoding="utf-8") as f:
                order = json.load(f).get("orders", {}).get(name, [])
        except (OSError, ValueError):
            continue
        if order and t > when:
            best, when = order, t
    return best


def in_const_fn(text, m):
    """Whether the mutant's function may be a `const fn`: one evaluated at compile time
    (a static's initialiser) runs without a counter, so coverage cannot rule out a claim
    for it, and every claim runs."""
    name = re.sub(r"<.*?>", "", (m.get("function") or "")).split("::")[-1].strip()
    return bool(name) and re.search(r"\bconst\s+fn\s+" + re.escape(name) + r"\b", text) is not None


def reaches(entry, m):
    """Whether a claim's coverage entry executes any line of the mutant's span."""
    lo, hi = m["line"], max(m.get("end_line") or m["line"], m["line"])
    return any(a <= hi and lo <= b for a, b in entry["lines"].get(m["file"], []))


def coverage_for(root, tree, config):
    """The stored coverage when it was measured on the tree's sources, else None (then
    every claim runs on every mutant). It may hold some claims only (a measurement still
    under way): a claim it does not hold runs on every mutant."""
    path = os.path.join(root, COVERAGE)
    if not os.path.exists(path):
        return None
    c = read_json(path, "the coverage")
    return c if c.get("key") == coverage_key(root, tree, config) else None


def may_reach(cov, claim, m):
    """Whether `claim` can see mutant `m`: unknown (not measured) counts as yes."""
    return cov is None or claim not in cov["claims"] or reaches(cov["claims"][claim], m)


def head_commit(root):
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def patch_text(text, diff):
    """`text` with the unified diff's hunks applied exactly: every context and removed line
    must be where the hunk says (no fuzz), else None. Python only (no `patch` needed)."""
    src = text.splitlines(keepends=True)
    out, pos = [], 0
    lines = diff.splitlines(keepends=True)
    k = 0
    while k < len(lines):
        h = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[k])
        k += 1
        if not h:
            continue
        start = int(h.group(1)) - 1 if h.group(2) != "0" else int(h.group(1))
        if start < pos:
            return None
        out.extend(src[pos:start])
        pos = start
        while k < len(lines) and not lines[k].startswith("@@"):
            l = lines[k]
            k += 1
            tag, body = l[:1], l[1:]
            if tag in (" ", "-"):
                if pos >= len(src) or src[pos].rstrip("\n") != body.rstrip("\n"):
                    return None
                if tag == " ":
                    out.append(src[pos])
                pos += 1
            elif tag == "+":
                out.append(body if body.endswith("\n") else body + "\n")
            elif tag == "\\":
                continue  # "\ No newline at end of file"
    out.extend(src[pos:])
    return "".join(out)


def apply_diff(tree, m):
    """The mutant's diff, exactly as cargo-mutants printed it, applied to its file."""
    path = os.path.join(tree, m["file"])
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = patch_text(text, m["diff"])
    if new is None or new == text:
        return False, "a hunk does not match the file"
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return True, ""


def cmd_run(a):
    root = ROOT
    i, n = parse_shard(a.shard)
    sample = read_json(os.path.join(root, SAMPLE), "the sample")
    check_sample_current(root, sample)
    config = load_config(a.config)
    steps = config["steps"]
    name = f"shard-{i}-of-{n}"
    results = os.path.join(root, RESULTS, f"{name}.jsonl")
    work = os.path.join(root, WORK, name)
    tree = os.path.join(work, "tree")
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    lock = open(os.path.join(work, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise Refused(f"another `mutants.py run --shard {i}/{n}` holds {WORK}/{name}/lock")

    records = load_records(root)
    judging = current_suite(root, config, coverage_for(root, root, config))
    mine = [m for k, m in enumerate(sample["mutants"]) if k % n == i]
    unknown = sorted(set(a.rerun) - {m["id"] for m in sample["mutants"]})
    if unknown:
        raise Refused("--rerun names no sampled mutant: " + ", ".join(unknown))
    todo = [m for m in mine
            if m["id"] in a.rerun or not usable(records.get(m["id"]), sample, judging)]
    print(f"mutants: shard {i}/{n}: {len(mine)} sampled, {len(mine) - len(todo)} already judged, "
          f"{len(todo)} to run", flush=True)
    if not todo:
        return 0
    if a.limit is not None:
        todo = todo[: a.limit]

    stop_on_signals()
    env = dict(os.environ)
    env.update(config.get("env", {}))
    env["CARGO_TARGET_DIR"] = os.path.join(tree, "target")
    env["MUTANTS_DRIVER_PID"] = str(os.getpid())

    os.makedirs(tree, exist_ok=True)
    keep = sync_tree(root, tree)
    if config.get("seed_target"):
        seed_target(root, tree)

    timeouts, orders, reports = baseline(root, work, tree, env, steps, sample, a.timeout_factor,
                                         config.get("min_timeout", {}))
    remove_strays(tree, keep)
    suite = suite_step(config)
    cov = coverage_for(root, tree, config) if suite else None
    if suite:
        claims = suite_claims(tree, suite)
        measured = sum(1 for c in claims if cov and c in cov["claims"])
        print("mutants: the suite runs " + (
            f"only the claims that reach a mutant's lines ({COVERAGE}; {measured} of "
            f"{len(claims)} claims measured, the others run on every mutant)" if cov else
            f"every claim on every mutant ({COVERAGE} is missing or of other sources: "
            "`scripts/mutants.py coverage` measures it)"), flush=True)
    commit = head_commit(root)
    cov_path = os.path.join(root, COVERAGE)
    cov_stamp = os.path.getmtime(cov_path) if os.path.exists(cov_path) else None
    stop = os.path.join(work, "stop")
    if os.path.exists(stop):
        os.remove(stop)
    for m in todo:
        if os.path.exists(stop):
            os.remove(stop)
            print(f"mutants: stopped between mutants ({WORK}/{name}/stop); the same command resumes",
                  flush=True)
            break
        stamp = os.path.getmtime(cov_path) if os.path.exists(cov_path) else None
        if suite and stamp != cov_stamp:
            # A coverage measurement still under way adds claims: read it again (only when
            # the file changed: the check hashes every source).
            cov_stamp = stamp
            again = coverage_for(root, tree, config)
            if again and len(again["claims"]) > len(cov["claims"] if cov else {}):
                print(f"mutants: coverage now holds {len(again['claims'])} claims", flush=True)
                cov = again
        rec = judge_mutant(tree, work, env, steps, m, timeouts, orders, cov, reports)
        remove_strays(tree, keep)
        rec["source_sha256"] = sample["source_sha256"][m["file"]]
        rec["commit"] = commit
        rec["tool"] = sample["tool"]
        rec["timeouts"] = timeouts
        rec["oracle"] = judging["oracle"]
        rec["suite_claims"] = judging["claims"]
        append_record(results, rec)
        print(f"mutants: {rec['outcome']:<8} {rec.get('detector') or '-':<18} {m['id']}", flush=True)
    return 0


def baseline(root, work, tree, env, steps, sample, factor, floors):
    """The unmutated run: every detector must pass on it, and its times give each step's
    timeout (`factor` times the unmutated time, at least a minimum). Stored per tree, so a
    resumed run on unchanged sources does not measure again."""
    files = sorted((f, sha256_file(os.path.join(tree, f)))
                   for f in tracked_files(root) if not own_file(f))

    def key_of(w):
        # The environment names the shard's own target directory: another shard's key is
        # the same computation with its directory.
        e = dict(env, CARGO_TARGET_DIR=os.path.join(w, "tree", "target"))
        return sha256_bytes(json.dumps([files, steps, env_of(steps, e), PROFILE, factor,
                                        floors]).encode())

    key = key_of(work)
    path = os.path.join(work, "baseline.json")
    # Its own, else another shard's made on the same sources, steps and environment (the
    # tool is deterministic: the same unmutated run passes in every copy of them).
    shards = os.path.dirname(work)
    others = sorted(os.path.join(shards, d) for d in os.listdir(shards)
                    if os.path.join(shards, d) != work) if os.path.isdir(shards) else []
    for w in [work] + others:
        p = os.path.join(w, "baseline.json")
        try:
            with open(p, encoding="utf-8") as f:
                b = json.load(f)
        except (OSError, ValueError):
            continue
        if b.get("key") == key_of(w):
            if p != path:
                print(f"mutants: the unmutated run of {os.path.relpath(p, root)} serves "
                      "(same sources, steps and environment)", flush=True)
                write_atomic(path, json.dumps(dict(b, key=key), indent=1) + "\n")
            return b["timeouts"], b.get("orders", {}), b.get("reports", {})
    # A mutant's build recompiles the crate: so does the unmutated build measured here.
    first = os.path.join(tree, sample["mutants"][0]["file"])
    os.utime(first)
    times, timeouts, orders, reports = {}, {}, {}, {"written": {}, "skip": {}}
    print("mutants: the unmutated run (every detector must pass; it sets the timeouts)", flush=True)
    for s in steps:
        for phase in ("build", "test"):
            cmd = s.get(phase)
            if not cmd:
                continue
            log = os.path.join(work, "logs", f"baseline-{s['name'].replace(' ', '-')}-{phase}.log")
            floor = floors.get(phase, 300 if phase == "build" else 60)
            if phase == "test" and s.get("kind") == "suite-claims":
                # Each claim timed alone: its own timeout, and the order (cheapest first);
                # and what it writes, against the committed reports.
                per = {}
                for claim in suite_claims(tree, s):
                    # Nothing compared yet: this run learns what a claim writes.
                    status, secs, text, _ = run_claim(s, claim, tree, env, work, None, log,
                                                      compare=False)
                    if status != "ok":
                        raise Refused(f"the unmutated tree fails `{s['name']}` at {claim}: "
                                      f"{failure_detail(s.get('kind'), text)} (log: {log})")
                    per[claim] = secs
                    if s.get("reports"):
                        learn_reports(s, claim, tree, work, reports)
                orders[s["name"]] = sorted(per, key=lambda c: (per[c], c))
                for c, t in per.items():
                    timeouts[f"{s['name']}/test/{c}"] = round(max(floor, factor * t), 1)
                secs = sum(per.values())
            else:
                status, secs, text = run_step(fill(cmd, work), tree, env, None, log)
                if status != "ok":
                    raise Refused(f"the unmutated tree fails `{s['name']}` ({phase}): "
                                  f"{failure_detail(s.get('kind'), text)} (log: {log})")
            times[f"{s['name']}/{phase}"] = round(secs, 1)
            timeouts[f"{s['name']}/{phase}"] = round(max(floor, factor * secs), 1)
            print(f"mutants:   {s['name']} {phase}: {secs:.0f} s", flush=True)
    write_atomic(path, json.dumps({"key": key, "seconds": times, "timeouts": timeouts,
                                   "orders": orders, "reports": reports}, indent=1) + "\n")
    return timeouts, orders, reports


def learn_reports(step, claim, tree, work, reports):
    """What the unmutated one-claim run writes, and which of those files differ from the
    committed reports (the files that gather every claim: the summary, the index, the
    scorecards): those are not compared for this claim. The claim's own files (named after
    its spec) must be reproduced, else the committed reports are not this tree's."""
    out = out_dir(work)
    written = written_files(out)
    differ = [f for f, _ in compare_reports(step, tree, work, written, ())]
    stem = os.path.splitext(os.path.basename(claim))[0]
    own = [f for f in differ if os.path.basename(f).startswith(stem + ".")]
    if own or len(differ) == len(written):
        f = (own or differ or ["nothing"])[0]
        raise Refused(f"the unmutated run of {claim} does not reproduce the committed "
                      f"{step['reports']}/{f} ({first_difference(os.path.join(tree, step['reports'], f), os.path.join(out, f))}): "
                      "run `make run` and commit its reports first")
    reports["written"][claim] = written
    reports["skip"][claim] = differ


def judge_mutant(tree, work, env, steps, m, timeouts, orders, cov=None, reports=None):
    path = os.path.join(tree, m["file"])
    with open(path, "rb") as f:
        original = f.read()
    rec = {k: m[k] for k in ("id", "file", "module", "line", "function", "genre", "diff")}
    rec.update(outcome=None, detector=None, detail=None, suite="not run", steps=[])
    try:
        ok, msg = apply_diff(tree, m)
        if not ok:
            raise Refused(f"the diff of `{m['id']}` does not apply to {m['file']}: {msg.strip()}")
        built = set()
        for s in steps:
            if rec["outcome"] is not None and not s.get("always"):
                continue
            status = "ok"
            if s.get("build"):
                key = f"{s['name']}/build"
                status, secs, text = run_step(fill(s["build"], work), tree, env, timeouts.get(key),
                                              os.path.join(work, "logs", "mutant-build.log"))
                rec["steps"].append({"step": key, "status": status, "seconds": round(secs, 1)})
                if status != "ok":
                    if rec["outcome"] is None:
                        rec["outcome"] = "unviable" if status == "fail" else "timeout"
                        rec["detail"] = failure_detail("build", text)
                    break
                built.add(s["name"])
            key = f"{s['name']}/test"
            log = os.path.join(work, "logs", "mutant-test.log")
            if s.get("kind") == "suite-claims":
                order = learned_order(orders[s["name"]], m, load_records(ROOT))
                if cov is not None and not in_const_fn(original.decode(errors="replace"), m):
                    order = [c for c in order if may_reach(cov, c, m)]
                status, secs, text, claim, ran, differ = run_suite_claims(
                    s, order, tree, env, work, timeouts, log, reports or {})
                entry = {"step": key, "status": status, "seconds": round(secs, 1),
                         "claims_run": ran}
                if differ:
                    # The run itself passed: only its report bytes moved.
                    entry["reports_differ"] = [f for f, _ in differ]
                if cov is not None:
                    entry["claims_reaching"] = len(order)
                if claim:
                    entry["claim"] = claim
            else:
                status, secs, text = run_step(fill(s["test"], work), tree, env, timeouts.get(key), log)
                entry = {"step": key, "status": status, "seconds": round(secs, 1)}
                names = re.findall(r"^test (\S+) \.\.\. FAILED", text, flags=re.M)
                if status == "fail" and s.get("kind") == "cargo-test" and names:
                    # A test that fails only once (a wait under load) is not a catch: the
                    # failing tests run again, alone; the mutant counts as caught by them
                    # only if one fails again.
                    again = fill(s["test"], work)
                    again = (again[:again.index("--")] if "--" in again else again) + [
                        "--", "--exact", *names]
                    st2, secs2, text2 = run_step(again, tree, env, timeouts.get(key), log)
                    entry["rerun"] = {"tests": names, "status": st2, "seconds": round(secs2, 1)}
                    if st2 == "ok":
                        status = "ok"
                        entry["status"] = "flaky"
                    else:
                        text = text2 if re.search(r"^test \S+ \.\.\. FAILED", text2, re.M) else text
            rec["steps"].append(entry)
            verdict = {"ok": "missed", "fail": "caught", "timeout": "timeout"}[status]
            if s.get("kind") in ("suite", "suite-claims"):
                rec["suite"] = verdict
                if entry.get("claim"):
                    rec["suite_claim"] = entry["claim"]
            if rec["outcome"] is None and verdict != "missed":
                rec["outcome"], rec["detector"] = verdict, s["name"]
                rec["detail"] = failure_detail(s.get("kind"), text) if verdict == "caught" else None
        if rec["outcome"] is None:
            rec["outcome"] = "missed"
    finally:
        with open(path, "wb") as f:
            f.write(original)
    return rec


def cmd_status(a):
    sample = read_json(os.path.join(ROOT, SAMPLE), "the sample")
    recs = load_records(ROOT)
    config = load_config(os.environ.get("MUTANTS_CONFIG"))
    suite = current_suite(ROOT, config, coverage_for(ROOT, ROOT, config))
    counts = {}
    for m in sample["mutants"]:
        r = recs.get(m["id"])
        o = r["outcome"] if usable(r, sample, suite) else "not yet run"
        counts[o] = counts.get(o, 0) + 1
    print(f"mutants: {len(sample['mutants'])} sampled: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


# ---------------------------------------------------------------------------------------
# report

def md_code(s):
    """Inline code that no backtick, pipe or line break of `s` can end or split."""
    s = " ".join(str(s).split()).replace("|", "\\|")
    run = max((len(x) for x in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def md_block(s, lang=""):
    run = max((len(x) for x in re.findall(r"`+", s)), default=0)
    fence = "`" * max(3, run + 1)
    return f"{fence}{lang}\n{s.rstrip()}\n{fence}\n"


def scrub(s):
    """A detector's message without local absolute paths (a temporary directory a failing
    test printed, say): the page names no path of the machine that judged it."""
    return re.sub(r"(?:file://)?/(?:work|home|tmp|root|var|usr)/\S*", "<path>", s or "")


def pct(a, b):
    return "—" if b == 0 else f"{100.0 * a / b:.1f} %"


def cmd_report(a):
    sample = read_json(os.path.join(ROOT, SAMPLE), "the sample")
    fates_path = os.path.join(ROOT, FATES)
    fates = read_json(fates_path, "the fates file") if os.path.exists(fates_path) else {}
    history = list(all_records(ROOT))
    recs = load_records(ROOT, history)
    config = load_config(os.environ.get("MUTANTS_CONFIG"))
    cov = coverage_for(ROOT, ROOT, config)
    suite = current_suite(ROOT, config, cov)
    oracle = suite["oracle"]
    rows = []
    for m in sample["mutants"]:
        r = recs.get(m["id"])
        rows.append((m, r if usable(r, sample, suite) else None))
    equivalent = {k for k, v in fates.items() if v.get("fate") == "equivalent"}
    judged = [(m, r) for m, r in rows if r]
    out = []
    w = out.append
    w("# Mutation testing: regression power of the core and the verdict layer\n")
    w("*Generated by `make mutants` (`scripts/mutants.py report`) from `mutants/sample.json`, "
      "`mutants/results/*.jsonl` and `mutants/fates.json`. Do not edit.*\n")
    left = len(rows) - len(judged)
    # Records of the sampled source that the grown (or changed) suite must judge again:
    # the suite missed them before it changed. Leaving them out biases the numbers up.
    waiting = [(m, recs[m["id"]]) for m, r in rows if r is None and recs.get(m["id"])
               and usable(recs[m["id"]], sample)]
    if left:
        w(f"**Partial:** {len(judged)} of the {len(rows)} sampled mutants are judged; {left} "
          "are not yet run (`make mutants` resumes). The numbers below are those of the judged "
          "ones; the sample is run in its random order, so they are a random sub-sample"
          + (", except for the records below that wait for the changed suite.\n" if waiting else ".\n"))
    def tally(sel):
        c = {"sampled": len(sel), "judged": 0, "caught": 0, "missed": 0, "equivalent": 0,
             "unviable": 0, "timeout": 0, "suite_caught": 0, "suite_viable": 0}
        for m, r in sel:
            if not r:
                continue
            c["judged"] += 1
            o = r["outcome"]
            if o == "missed" and m["id"] in equivalent:
                c["equivalent"] += 1
                continue
            c[o] += 1
            if o in ("caught", "missed") and r.get("suite") in ("caught", "missed"):
                c["suite_viable"] += 1
                c["suite_caught"] += r["suite"] == "caught"
        return c

    tot = tally(rows)
    viable = tot["caught"] + tot["missed"]
    # The waiting records at their earlier outcomes, each a miss of the suite.
    wt = tally(waiting)
    with_waiting = viable + wt["caught"] + wt["missed"]
    if waiting:
        w(f"**Waiting for the changed suite:** {len(waiting)} of the not-yet-run mutants were "
          "judged before the claim suite gained or changed claims, and the suite missed them "
          "then; they are judged again at the next run (the suite may catch them now). Their "
          f"earlier outcomes: caught by the tests {wt['caught']}, missed {wt['missed']}, "
          f"equivalent {wt['equivalent']}, timed out {wt['timeout']}. Leaving them out biases "
          "the numbers below upward (every one of them was a miss of the suite); counted with "
          "their earlier outcomes, the score would be "
          f"{pct(tot['caught'] + wt['caught'], with_waiting)} and the suite alone "
          f"{pct(tot['suite_caught'], tot['suite_viable'] + wt['caught'] + wt['missed'])}.\n")
    w("## The sample\n")
    w(f"* tool: {md_code(sample['tool'])}; seed {sample['seed']}; {sample['size']} mutants drawn "
      f"at random from the {sample['population']} that cargo-mutants lists in "
      + ", ".join(md_code(x) for x in sample["modules"]) + ".")
    w("* oracle: the claim suite first, on every viable mutant (`dpclaims run <claim> "
      "--profile quick --no-cache --require-baseline --out <dir>`, one claim a process, up "
      "to the first claim that fails: the suite-alone score). A claim fails as CI fails it: "
      "a refuted row, an uncaught control, a changed baseline, or report bytes other than "
      "the committed `reports/` (CI's `git diff`; the files a one-claim run cannot "
      "reproduce, the summary, index and scorecards, are not compared; CI's second pass "
      "with OpenBLAS's generic kernels is not repeated, the report bytes being rounded so "
      "as not to depend on them). Then, for what it "
      "missed, the unit tests "
      "(`cargo test --release --lib`), the fault sentinels (`tests/faults.rs`) and the "
      "other integration tests. A step times out at 5 times its unmutated time (builds at "
      "least 300 s, tests and each claim at least 60 s).")
    w("* which claims run: only those that execute at least one line of the mutant in the "
      "unmutated run (`mutants/coverage.json`, from `scripts/mutants.py coverage`: each "
      "claim run once on a build instrumented with `-C instrument-coverage`). A claim that "
      "never reaches the mutated lines computes the same bytes with the mutant (the tool "
      "is deterministic), so it cannot catch it; a mutant no claim reaches is missed by the "
      "suite without running one. Among the reaching claims, those that caught earlier "
      "mutants of the same file, then module, go first, then the cheapest: only the time "
      "to the first failure depends on the order.")
    early = [r for m, r in judged if r.get("steps") and not r["steps"][0]["step"].startswith("claim suite")]
    if early:
        w(f"* {len(early)} records were made before this order: they ran the unit tests and "
          "the fault sentinels before the suite, and the suite as one `run --fail-fast` on "
          "every claim: the same detectors, so the same outcome; only which detector is named "
          "first can differ.")
    older = [r for m, r in judged if r.get("suite") == "caught" and r.get("oracle") != oracle]
    if older:
        w(f"* {len(older)} catches of the suite were made by an earlier suite that compared "
          "the snapshot only, not the report bytes: a catch stands (the suite only gained a "
          "detector); what that suite missed is judged again.")
    w("* score = caught / (caught + missed), equivalent survivors (their fate below) left "
      "out; unviable mutants (they do not compile) and timeouts are counted apart.\n")
    w("## Per module\n")
    w("| module | listed | sampled | judged | caught | missed | equivalent | unviable | timed out | score | suite alone |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mod in sample["modules"]:
        c = tally([(m, r) for m, r in rows if m["module"] == mod])
        w(f"| {md_code(mod)} | {sample['population_per_module'].get(mod, 0)} | {c['sampled']} | {c['judged']} | {c['caught']} | {c['missed']} | "
          f"{c['equivalent']} | {c['unviable']} | {c['timeout']} | "
          f"{pct(c['caught'], c['caught'] + c['missed'])} | {pct(c['suite_caught'], c['suite_viable'])} |")
    w(f"| **all** | {sample['population']} | {tot['sampled']} | {tot['judged']} | {tot['caught']} | {tot['missed']} | "
      f"{tot['equivalent']} | {tot['unviable']} | {tot['timeout']} | "
      f"**{pct(tot['caught'], tot['caught'] + tot['missed'])}** | "
      f"**{pct(tot['suite_caught'], tot['suite_viable'])}** |\n")
    unreached = [r for m, r in judged if r["outcome"] in ("caught", "missed")
                 and any(st.get("claims_reaching") == 0 for st in r.get("steps", []))]
    by_reports = [r for m, r in judged if r.get("suite") == "caught" and any(
        st.get("reports_differ") for st in r.get("steps", []))]
    if tot["suite_caught"]:
        w(f"Of the suite's {tot['suite_caught']} catches, {len(by_reports)} "
          f"{'was' if len(by_reports) == 1 else 'were'} by report "
          "bytes alone (the claim's run passed its verdicts and its baseline; only CI's "
          "comparison of `reports/` fails).\n")
    if unreached:
        caught = sum(r["outcome"] == "caught" for r in unreached)
        rest = len(unreached) - caught
        w(f"{plural(len(unreached), 'viable mutant is', 'viable mutants are')} reached by no claim of the suite (coverage): "
          + ("all of them are caught by the tests.\n" if not rest else
             f"{caught} of them caught by the tests, {plural(rest, 'survivor', 'survivors')} below.\n"))
    once = survived_before(history, sample)
    killed = [(m, r) for m, r in judged if r["outcome"] == "caught" and m["id"] in once]
    if killed:
        w(f"Caught only by a check added after the mutant survived every detector: "
          f"{len(killed)} (listed under the survivors); before those checks the score was "
          f"{pct(tot['caught'] - len(killed), viable)}.\n")
    w(f"Goal: at least 100 viable, non-equivalent mutants judged (now {viable}), "
      f"score at least 90 % (now {pct(tot['caught'], viable)}), claim suite alone at least 80 % "
      f"(now {pct(tot['suite_caught'], tot['suite_viable'])})"
      + (f"; with the {len(waiting)} records waiting for the changed suite at their earlier "
         f"outcomes: {with_waiting} viable, score {pct(tot['caught'] + wt['caught'], with_waiting)}, "
         f"suite alone {pct(tot['suite_caught'], tot['suite_viable'] + wt['caught'] + wt['missed'])}"
         if waiting else "")
      + ".\n")
    # Coverage's soundness, checked where it can be: a mutant judged with every claim run
    # (before coverage, or without it) and caught by a named claim must be reached by it.
    if cov:
        full = [(m, r) for m, r in judged if r.get("suite") == "caught" and r.get("suite_claim")
                and not any("claims_reaching" in st for st in r.get("steps", []))
                and r["suite_claim"] in cov["claims"]]
        bad = [m["id"] for m, r in full if not reaches(cov["claims"][r["suite_claim"]], m)]
        w(f"Coverage cross-check: of the {plural(len(full), 'mutant', 'mutants')} caught by a named claim while every "
          f"claim ran (no coverage used), the catching claim executes the mutated lines in "
          f"{len(full) - len(bad)}" + (": all.\n" if not bad else
                                       ". Not: " + ", ".join(md_code(b) for b in bad) + ".\n"))
    reach_section(w, sample, cov)
    w("## Caught: by which detector\n")
    caught = [(m, r) for m, r in judged if r["outcome"] == "caught"]
    if caught:
        w("| mutant | first detector | what failed | claim suite |")
        w("|---|---|---|---|")
        for m, r in caught:
            w(f"| {md_code(m['id'])} | {r['detector']} | {md_code(scrub(r.get('detail')))} | {r.get('suite')} |")
    else:
        w("None yet.")
    w("")
    w("## Survivors and their fates\n")
    survivors = [(m, r) for m, r in judged if r["outcome"] == "missed"]
    if not survivors:
        w("None yet.\n")
    else:
        w("A survivor's fate is read from `mutants/fates.json`: equivalent (why, and the "
          "check that shows both versions give the same bits where one exists), killed "
          "(by which new check), or open when none is recorded. Each diff follows.\n")
        w("| mutant | fate | why | check |")
        w("|---|---|---|---|")
        for m, r in survivors:
            f = fates.get(m["id"], {})
            fate = f.get("fate", "open")
            fate = fate if fate in ("equivalent", "killed") else "open"
            w(f"| {md_code(m['id'])} | **{fate}** | {md_code(f.get('why', '')) if f.get('why') else ''} | "
              f"{md_code(f['check']) if f.get('check') else ''} |")
        w("")
    for m, r in survivors:
        w(f"### {md_code(m['id'])}\n")
        w(md_block(m["diff"], "diff"))
    if killed:
        w("### Killed after they survived\n")
        w("Each survived every detector when first judged; the check named here was added "
          "after and catches it now (the mutant judged again with `run --rerun`).\n")
        w("| mutant | caught now by | what failed | why the check belongs |")
        w("|---|---|---|---|")
        for m, r in killed:
            why = fates.get(m["id"], {}).get("why")
            w(f"| {md_code(m['id'])} | {r['detector']} | {md_code(scrub(r.get('detail')))} | "
              f"{md_code(why) if why else ''} |")
        w("")
    retired = retired_survivors(history, sample, {m["id"] for m, r in judged})
    if retired:
        w("### Retired with their source\n")
        w("Each survived every detector on a source of its file that has changed since; "
          "`sample --refresh` gave its slot to a mutant of the new source, judged anew. "
          "They are not in the score above; counted there as missed, the score would be "
          f"{pct(tot['caught'], viable + len(retired))}. Their fate is read from "
          "`mutants/fates.json` (fixed: the change of the source was made because of it).\n")
        w("| mutant | judged at | fate | why |")
        w("|---|---|---|---|")
        for k, r in sorted(retired.items()):
            f = fates.get(k, {})
            w(f"| {md_code(k)} | {md_code((r.get('commit') or '')[:12])} | "
              f"**{f.get('fate', 'open')}** | {md_code(f['why']) if f.get('why') else ''} |")
        w("")
    refreshes = sample.get("refreshed", [])
    if refreshes:
        w("### Refreshes of the sample\n")
        w("| at commit | changed files | mutants redrawn | added |")
        w("|---|---|---:|---:|")
        for x in refreshes:
            w(f"| {md_code((x.get('commit') or '')[:12])} | "
              + ", ".join(md_code(f) for f in x.get("changed_files", []))
              + f" | {x.get('replaced', 0)} | {x.get('added', 0)} |")
        w("")
    w("## Unviable and timed out\n")
    other = [(m, r) for m, r in judged if r["outcome"] in ("unviable", "timeout")]
    if other:
        w("| mutant | outcome | detail |")
        w("|---|---|---|")
        for m, r in other:
            w(f"| {md_code(m['id'])} | {r['outcome']} | {md_code(scrub(r.get('detail')))} |")
    else:
        w("None yet.")
    w("")
    w("## Cost\n")
    per_step = {}
    for m, r in judged:
        for st in r.get("steps", []):
            per_step.setdefault(st["step"], []).append(st["seconds"])
    if per_step:
        hours = sum(sum(v) for v in per_step.values()) / 3600
        w(f"Measured on the machine that judged them: {hours:.1f} hours for {len(judged)} mutants.\n")
        w("| step | runs | median seconds | longest |")
        w("|---|---:|---:|---:|")
        for k, v in per_step.items():  # in the order the steps first ran
            v = sorted(v)
            w(f"| {md_code(k)} | {len(v)} | {v[len(v) // 2]:.0f} | {v[-1]:.0f} |")
    else:
        w("None yet.")
    text = "\n".join(out).rstrip() + "\n"
    write_atomic(os.path.join(ROOT, a.out) if not os.path.isabs(a.out) else a.out, text)
    print(f"mutants: wrote {a.out} ({len(judged)} of {len(rows)} judged)")
    return 0


def reach_section(w, sample, cov):
    """The suite's reach over every listed mutant (not only the sample): how many sit in
    lines that no claim executes (the suite cannot catch those; only the tests can), per
    module and for the files with the most. From mutants/population.json and the
    coverage, when both are of the current sources."""
    path = os.path.join(ROOT, POPULATION)
    if not cov or not os.path.exists(path):
        return
    pop = read_json(path, "the population")
    if pop.get("key") != modules_key(ROOT):
        return
    claims = cov["claims"]
    w("## Reach of the claim suite over the whole population\n")
    step = suite_step(load_config(os.environ.get("MUTANTS_CONFIG")))
    total = len(suite_claims(ROOT, step)) if step else len(claims)
    partial = len(claims) < total
    w(f"Every mutant cargo-mutants lists in the sampled modules ({sum(len(v) for v in pop['spans'].values())}), "
      "placed on the lines each claim executes in the unmutated run (`mutants/coverage.json`). "
      "A mutant in lines no claim executes cannot be caught by the suite, only by the tests: "
      "this bounds the suite-alone score from above, before any mutant is run."
      + (f" **Coverage is partial** ({len(claims)} of {total} claims measured): the counts of "
         "unreached mutants are upper bounds." if partial else "") + "\n")
    per_mod, per_file = {}, {}
    for f, spans in pop["spans"].items():
        mod = module_of(f)
        for lo, hi in spans:
            m = {"file": f, "line": lo, "end_line": hi}
            hit = any(reaches(e, m) for e in claims.values())
            a = per_mod.setdefault(mod, [0, 0])
            a[0] += 1
            a[1] += not hit
            b = per_file.setdefault(f, [0, 0])
            b[0] += 1
            b[1] += not hit
    w("| module | listed | in lines no claim executes | share |")
    w("|---|---:|---:|---:|")
    for mod in sample["modules"]:
        n, u = per_mod.get(mod, [0, 0])
        w(f"| {md_code(mod)} | {n} | {u} | {pct(u, n)} |")
    n, u = sum(v[0] for v in per_mod.values()), sum(v[1] for v in per_mod.values())
    w(f"| **all** | {n} | {u} | **{pct(u, n)}** |\n")
    top = sorted(per_file.items(), key=lambda kv: (-kv[1][1], kv[0]))[:12]
    w("The files with the most unreached mutants:\n")
    w("| file | listed | unreached |")
    w("|---|---:|---:|")
    for f, (n, u) in top:
        w(f"| {md_code(f)} | {n} | {u} |")
    w("")


# ---------------------------------------------------------------------------------------
# slurm

def cmd_slurm(a):
    if a.shards < 1 or a.shards > 10000:
        raise Refused("--shards must be between 1 and 10000")
    if a.time and not re.fullmatch(r"(\d+-)?\d{1,3}:\d{2}:\d{2}", a.time):
        raise Refused(f"--time {a.time!r}: expected HH:MM:SS or D-HH:MM:SS")
    if a.partition and not re.fullmatch(r"[A-Za-z0-9_.,-]+", a.partition):
        raise Refused(f"--partition {a.partition!r}: letters, digits, `_.,-` only")
    if a.cpus_per_task < 1:
        raise Refused("--cpus-per-task must be at least 1")
    if any(ord(c) < 32 or ord(c) == 127 for c in ROOT):
        raise Refused("the checkout's path holds a control character")
    last = a.shards - 1
    lines = [
        "#!/bin/bash",
        "# Mutation testing in shards (generated by `scripts/mutants.py slurm`): run it with",
        "# `bash`; it submits itself as an array of shard jobs and a report job after them.",
        "# Each shard runs every N-th sampled mutant in its own scratch copy and appends to",
        "# mutants/results/shard-<I>-of-<N>.jsonl; a shard stopped by its time limit resumes",
        "# when the script is submitted again.",
        "#SBATCH --job-name=dpclaims-mutants",
        f"#SBATCH --array=0-{last}",
        f"#SBATCH --cpus-per-task={a.cpus_per_task}",
    ]
    if a.time:
        lines.append(f"#SBATCH --time={a.time}")
    if a.partition:
        lines.append(f"#SBATCH --partition={a.partition}")
    lines += [
        "#SBATCH --output=dpclaims-mutants-%A-%a.out",
        "set -euo pipefail",
        '# This script by an absolute path, before the cd below (it may be given relatively).',
        'SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"',
        f"cd {shlex.quote(ROOT)}",
        f"SHARDS={a.shards}",
        'PYTHON="${PYTHON:-python3}"',
        'if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then',
        f'  ARRAY_JOB_ID=$(sbatch --parsable --array=0-{last} "$SELF")',
        '  ARRAY_JOB_ID="${ARRAY_JOB_ID%%;*}"',
        "  REPORT_JOB_ID=$(sbatch --parsable --job-name=dpclaims-mutants-report \\",
        '  --dependency=afterany:$ARRAY_JOB_ID --output=dpclaims-mutants-report-%j.out \\',
        "  --wrap='exec \"${PYTHON:-python3}\" scripts/mutants.py report')",
        '  REPORT_JOB_ID="${REPORT_JOB_ID%%;*}"',
        '  echo "submitted mutant array $ARRAY_JOB_ID ($SHARDS tasks) and report job $REPORT_JOB_ID"',
        "  exit 0",
        "fi",
        'exec "$PYTHON" scripts/mutants.py run --shard "$SLURM_ARRAY_TASK_ID/$SHARDS"',
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="mutants.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="draw the seeded sample (mutants/sample.json)")
    s.add_argument("--seed", type=int, default=DEFAULT_SEED)
    s.add_argument("--size", type=int)
    s.add_argument("--force", action="store_true")
    s.add_argument("--refresh", action="store_true",
                   help="redraw only the mutants of changed files (records of the others still "
                        "count); with --size, grow the sample")
    r = sub.add_parser("run", help="judge the sampled mutants not yet judged")
    r.add_argument("--shard", default="0/1")
    r.add_argument("--limit", type=int, help="judge at most this many, then stop")
    r.add_argument("--rerun", action="append", default=[], metavar="ID",
                   help="judge this sampled mutant again though it has a record (after a new check)")
    r.add_argument("--timeout-factor", type=float, default=5.0)
    r.add_argument("--config", default=os.environ.get("MUTANTS_CONFIG"),
                   help="detector configuration (JSON; default $MUTANTS_CONFIG, else the built-in oracle)")
    sub.add_parser("status", help="how many sampled mutants are judged, by outcome")
    g = sub.add_parser("report", help="write reports/MUTANTS.md")
    g.add_argument("--out", default=REPORT)
    c = sub.add_parser("coverage", help="which claims reach which lines (mutants/coverage.json)")
    c.add_argument("--config", default=os.environ.get("MUTANTS_CONFIG"))
    sl = sub.add_parser("slurm", help="print an sbatch script running the sample in shards")
    sl.add_argument("--shards", type=int, required=True)
    sl.add_argument("--time")
    sl.add_argument("--cpus-per-task", type=int, default=2)
    sl.add_argument("--partition")
    a = p.parse_args(argv)
    if a.cmd == "sample":
        a.size_given = a.size is not None
        a.size = DEFAULT_SIZE if a.size is None else a.size
    try:
        return {"sample": cmd_sample, "run": cmd_run, "status": cmd_status,
                "report": cmd_report, "slurm": cmd_slurm, "coverage": cmd_coverage}[a.cmd](a)
    except Refused as e:
        print(f"mutants: {e}", file=sys.stderr)
        return 2
    except Interrupted as e:
        print(f"mutants: stopped by signal {e.args[0]}; the same command resumes", file=sys.stderr)
        return 128 + e.args[0]


if __name__ == "__main__":
    sys.exit(main())
