"""A core as a process: stray prints, `python -m dpclaims_core`, and the real binary."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpclaims_core import PROTOCOL

ROOT = Path(__file__).resolve().parents[2]
PYTHON_DIR = ROOT / "python"

CORE = textwrap.dedent(
    '''
    import math, sys
    from dpclaims_core import core

    @core(metrics=["z2", "score"])
    def unit(params, rng, options):
        print("a stray print")              # goes to stderr, not into the protocol
        n, eps, delta = params.int("n"), params["epsilon"], params["delta"]
        sens = 2.0 / n
        sigma = sens * math.sqrt(2 * math.log(1.25 / delta)) / eps
        if options.get("calibration") == "inverse_epsilon":
            sigma = sens / eps
        k = params.int("k")
        x = [rng.normal(0.0, sigma) if hasattr(rng, "normal") else rng.gauss(0.0, sigma) for _ in range(k)]
        return {"z2": sum(v * v for v in x) / (k * sens * sens), "score": x[0]}

    if __name__ == "__main__":
        unit.serve()
    '''
)

SPEC = textwrap.dedent(
    '''
    id: adapter-pytest-gaussian
    title: "dpclaims_core end to end: a Gaussian mechanism's noise"
    source: {paper: "Dwork & Roth 2014", section: "Thm A.1", equation: "sigma >= Delta sqrt(2 ln(1.25/delta))/eps"}
    statement: "The noise multiplier is at least the classical calibration."
    system: external
    external: {command: ["python3", "core.py"], metrics: [z2], timeout_s: 30}
    params: {n: "100", k: "2000", delta: "1.0e-5"}
    sweeps:
      vs_eps:
        quick: {axes: {epsilon: [0.25, 0.5, 0.99]}, replicates: 4}
        full: {axes: {epsilon: [0.25, 0.5, 0.99]}, replicates: 4}
    variants:
      - name: classical
      - name: inverse-epsilon
        negative_control: true
        caught_by: [z2-at-least-classical]
        options: {calibration: inverse_epsilon}
    predictions:
      - kind: inequality
        evidence: consequence
        name: z2-at-least-classical
        metric: z2
        sweep: vs_eps
        op: ">="
        rhs: "0.8 * 2 * ln(1.25/delta) / epsilon^2"
        over: means
    '''
)


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), e.get("PYTHONPATH")]))
    e["OPENBLAS_NUM_THREADS"] = "1"
    return e


def binary():
    """dpclaims: $DPCLAIMS_BIN, else the release build of this checkout (None: skip)."""
    cands = [os.environ.get("DPCLAIMS_BIN")]
    if os.environ.get("CARGO_TARGET_DIR"):
        cands.append(str(Path(os.environ["CARGO_TARGET_DIR"]) / "release/dpclaims"))
    cands.append(str(ROOT / "target/release/dpclaims"))
    for c in cands:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            # Absolute: the tests run the binary from temporary directories, and the
            # Makefile passes a path relative to the checkout.
            return str(Path(c).resolve())
    return None


@pytest.fixture
def core_dir(tmp_path):
    (tmp_path / "core.py").write_text(CORE)
    return tmp_path


def talk(cmd, cwd, lines):
    return subprocess.run(
        cmd, cwd=cwd, env=env(), input="".join(l + "\n" for l in lines),
        capture_output=True, text=True, timeout=60,
    )


def test_the_process_answers_and_a_print_goes_to_stderr(core_dir):
    req = {"unit": "u", "seed": "0000000000000007", "params": {"n": 100.0, "k": 10.0, "epsilon": 1.0, "delta": 1e-5}, "options": {}}
    p = talk([sys.executable, "core.py"], core_dir, [json.dumps({"protocol": PROTOCOL}), json.dumps(req), "garbage", json.dumps(req)])
    assert p.returncode == 0, p.stderr
    out = [json.loads(l) for l in p.stdout.splitlines()]
    assert out[0] == {"protocol": PROTOCOL, "metrics": ["z2", "score"]}
    assert set(out[1]["metrics"]) == {"z2", "score"} and out[3] == out[1]
    assert "not JSON" in out[2]["error"]
    assert "a stray print" in p.stderr and "a stray print" not in p.stdout


def test_python_m_dpclaims_core_serves_and_tries_one_unit(core_dir):
    p = talk([sys.executable, "-m", "dpclaims_core", "core.py:unit"], core_dir, [json.dumps({"protocol": PROTOCOL})])
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"protocol": PROTOCOL, "metrics": ["z2", "score"]}
    args = ["--param", "n=100", "--param", "k=5", "--param", "epsilon=1", "--param", "delta=1e-5", "--seed", "ab"]
    p = talk([sys.executable, "-m", "dpclaims_core", "core.py", *args], core_dir, [])
    assert p.returncode == 0, p.stderr
    assert set(json.loads(p.stdout.splitlines()[-1])) == {"z2", "score"}


@pytest.mark.skipif(binary() is None, reason="no dpclaims binary (set DPCLAIMS_BIN or build target/release/dpclaims)")
def test_dpclaims_run_end_to_end(core_dir):
    (core_dir / "spec.yaml").write_text(SPEC)
    e = env()
    e["DPCLAIMS_NO_CACHE"] = "1"
    p = subprocess.run(
        [binary(), "run", "spec.yaml", "--no-reports", "--no-baseline", "--check-determinism"],
        cwd=core_dir, env=e, capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "negative controls 1/1 caught" in p.stdout + p.stderr


@pytest.mark.skipif(binary() is None, reason="no dpclaims binary")
def test_dpclaims_audit_end_to_end(core_dir):
    p = subprocess.run(
        [binary(), "audit", "--system", "external", "--command", "python3 core.py", "--param", "n=100",
         "--param", "k=1", "--epsilon", "0.9", "--delta", "1e-5", "--trials", "200", "--json"],
        cwd=core_dir, env=env(), capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["epsilon_lower_bound"] <= 0.9
