"""The Opacus worked example (examples/opacus/), short version: the accountant spec end to end.

Needs a python with torch and opacus: $DPCLAIMS_OPACUS_PYTHON, else the venv that `make
opacus-example` creates (target/opacus-venv), else the python running the tests. Without
one the test is skipped, saying so (`make test` runs pytest with -rs). The audit spec
(opacus-audit.yaml, about 35 s more) is left to `make opacus-example`.
"""
import os
import subprocess
from pathlib import Path

import pytest

from test_process import ROOT, binary, env

SPEC = ROOT / "examples" / "opacus" / "opacus-accountant.yaml"


def torch_python():
    """A python that imports torch and opacus, or None."""
    cands = [os.environ.get("DPCLAIMS_OPACUS_PYTHON")]
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    cands += [str(target / "opacus-venv" / "bin" / "python"), "python3"]
    for c in cands:
        if not c:
            continue
        try:
            r = subprocess.run([c, "-c", "import torch, opacus"], capture_output=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return os.path.abspath(c) if os.sep in c else c  # not resolve(): a venv python is a symlink
    return None


def test_opacus_accountant_spec_catches_its_planted_bugs():
    exe = binary()
    if exe is None:
        pytest.skip("dpclaims binary not built (cargo build --release, or set DPCLAIMS_BIN)")
    py = torch_python()
    if py is None:
        pytest.skip(
            "Opacus example skipped: no python with torch and opacus "
            "(set DPCLAIMS_OPACUS_PYTHON, or run `make opacus-example` once to create target/opacus-venv)"
        )
    e = env()
    e["DPCLAIMS_OPACUS_PYTHON"] = py
    r = subprocess.run(
        [exe, "run", str(SPEC), "--no-baseline", "--no-reports", "--no-cache"],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "negative controls 7/7 caught" in out, out[-4000:]
    for control in ["noise-halved", "clipping-disabled", "epochs-as-steps", "steps-counted-twice"]:
        assert any(control in line and "(control caught)" in line for line in out.splitlines()), control
