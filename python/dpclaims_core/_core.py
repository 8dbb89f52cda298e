"""The dpclaims-external/2 loop around one user function (standard library only)."""

import inspect
import io
import json
import math
import os
import random
import sys
import traceback

PROTOCOL = "dpclaims-external/2"

# Keyword arguments a core function may declare besides (params, rng).
_EXTRA = ("options", "seed", "unit")


class Params(dict):
    """The request's `params`: every spec variable at the sweep point, as floats.

    A dict, plus `int(name)` for counts (JSON sends `64.0`) and a KeyError that names
    the parameters the request does hold.
    """

    def __missing__(self, key):
        have = ", ".join(sorted(self)) or "none"
        raise KeyError(
            f"parameter `{key}` is not in the request (it has: {have}); "
            "add it to the spec's `params`"
        )

    def int(self, key, default=None):
        """The parameter as an int; refuses a value that is not a whole number."""
        if key not in self and default is not None:
            return default
        v = self[key]
        if isinstance(v, bool) or not float(v).is_integer():
            raise ValueError(f"parameter `{key}` = {v!r} is not a whole number")
        return int(v)


def parse_seed(seed):
    """The request's seed (16 hex digits, a 64-bit number) as an int."""
    if isinstance(seed, bool):
        raise ValueError(f"`seed` must be 16 hex digits, got {seed!r}")
    if isinstance(seed, int):
        value = seed
    elif isinstance(seed, str) and 0 < len(seed) <= 16:
        try:
            value = int(seed, 16)
        except ValueError:
            raise ValueError(f"`seed` must be 16 hex digits, got {seed!r}") from None
    else:
        raise ValueError(f"`seed` must be 16 hex digits, got {seed!r}")
    if not 0 <= value < 2**64:
        raise ValueError(f"`seed` must be a 64-bit number, got {seed!r}")
    return value


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def make_rng(seed, kind="auto"):
    """The unit's generator from its seed.

    `auto`: `numpy.random.Generator(numpy.random.PCG64(seed))` (the same stream as
    `numpy.random.default_rng(seed)`) when numpy is importable, else
    `random.Random(seed)`; `numpy` or `random` force one; a callable is called with the
    seed (e.g. `torch_generator`, `jax_key`).
    """
    if callable(kind):
        return kind(seed)
    if kind in ("auto", "numpy"):
        np = _numpy()
        if np is not None:
            return np.random.Generator(np.random.PCG64(seed))
        if kind == "numpy":
            raise ImportError("rng='numpy' but numpy is not importable")
        return random.Random(seed)
    if kind == "random":
        return random.Random(seed)
    raise ValueError(f"unknown rng kind {kind!r} (auto, numpy, random, or a callable)")


def torch_generator(seed):
    """A `torch.Generator` seeded from the unit's seed (torch takes seeds below 2**63)."""
    import torch

    return torch.Generator().manual_seed(seed % 2**63)


def jax_key(seed):
    """A JAX PRNG key holding all 64 bits of the unit's seed.

    `jax.random.PRNGKey(seed % 2**32)` is the one-line version; it keeps 32 bits only,
    so two of a run's ~10^5 units may share a key. This folds the rest in.
    """
    import jax

    key = jax.random.PRNGKey(seed & 0x7FFFFFFF)
    key = jax.random.fold_in(key, (seed >> 31) & 0x7FFFFFFF)
    return jax.random.fold_in(key, seed >> 62)


class ProtocolError(Exception):
    """A request the adapter cannot serve (answered as `{"error": ...}`)."""


def _where(exc):
    """`file:line in function` of the innermost frame of an exception."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    frame = traceback.extract_tb(tb)[-1]
    return f" (at {os.path.basename(frame.filename)}:{frame.lineno} in {frame.name})"


class Core:
    """A core: one function `fn(params, rng[, options=, seed=, unit=]) -> {metric: number}`.

    Call it as the function itself; `serve()` runs the protocol loop; `run()` computes
    one unit locally (checked as the harness would check it).
    """

    def __init__(self, fn, metrics, rng="auto"):
        if isinstance(metrics, str) or not metrics:
            raise TypeError("metrics must be a non-empty list of names, e.g. metrics=['z2']")
        metrics = list(metrics)
        for m in metrics:
            if not isinstance(m, str) or not m:
                raise TypeError(f"metric names must be non-empty strings, got {m!r}")
        if len(set(metrics)) != len(metrics):
            raise TypeError(f"metrics has duplicates: {metrics}")
        if not (callable(rng) or rng in ("auto", "numpy", "random")):
            raise ValueError(f"unknown rng kind {rng!r} (auto, numpy, random, or a callable)")
        self.fn = fn
        self.metrics = metrics
        self.rng = rng
        self.__name__ = getattr(fn, "__name__", "core")
        self.__doc__ = getattr(fn, "__doc__", None)
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        if sig is None:
            self._extra = ()
        elif any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            self._extra = _EXTRA
        else:
            self._extra = tuple(k for k in _EXTRA if k in sig.parameters)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<dpclaims core {self.__name__} metrics={self.metrics}>"

    # -- one unit ---------------------------------------------------------------------

    def run(self, params, seed=0, options=None, unit="local"):
        """Computes one unit: the checked metrics as floats (raises on a bad answer)."""
        seed = parse_seed(seed)
        params = Params((str(k), v) for k, v in dict(params).items())
        options = dict(options or {})
        extra = {"options": options, "seed": seed, "unit": unit}
        kwargs = {k: extra[k] for k in self._extra}
        out = self.fn(params, make_rng(seed, self.rng), **kwargs)
        return self._check(out)

    def _check(self, out):
        if not hasattr(out, "items"):
            raise ProtocolError(
                f"the core returned {type(out).__name__}, not a dict of metrics {self.metrics}"
            )
        metrics = {}
        for name, value in out.items():
            if name not in self.metrics:
                raise ProtocolError(
                    f"the core returned metric `{name}`, not declared in "
                    f"@core(metrics={self.metrics})"
                )
            try:
                x = float(value)
            except (TypeError, ValueError):
                raise ProtocolError(
                    f"metric `{name}` is {value!r}, not a number"
                ) from None
            if not math.isfinite(x):
                raise ProtocolError(f"metric `{name}` is {x}: every metric must be finite")
            metrics[name] = x
        return metrics

    # -- the protocol -------------------------------------------------------------------

    def handshake(self):
        return {"protocol": PROTOCOL, "metrics": list(self.metrics)}

    def answer(self, msg, log=None):
        """The answer object to one decoded message (never raises on bad input)."""
        if not isinstance(msg, dict):
            return {"error": f"a request must be a JSON object, got {type(msg).__name__}"}
        if "protocol" in msg:
            if msg["protocol"] != PROTOCOL:
                return {
                    "error": f"this core speaks {PROTOCOL} (dpclaims_core), "
                    f"the harness {msg['protocol']!r}"
                }
            return self.handshake()
        unit = msg.get("unit", "?")
        try:
            if not isinstance(unit, str):
                raise ProtocolError(f"`unit` must be a string, got {unit!r}")
            params = msg.get("params")
            if not isinstance(params, dict):
                raise ProtocolError("the request has no `params` object")
            options = msg.get("options", {})
            if not isinstance(options, dict):
                raise ProtocolError("`options` must be an object")
            if "seed" not in msg:
                raise ProtocolError("the request has no `seed`")
            seed = parse_seed(msg["seed"])
        except (ProtocolError, ValueError) as e:
            return {"error": f"malformed request for unit {unit}: {e}"}
        try:
            # Every answer echoes its request's unit id (dpclaims-external/2): the
            # harness pairs answers with requests by it.
            return {"unit": unit, "metrics": self.run(params, seed, options, unit)}
        except Exception as e:  # the harness stops the run and quotes this message
            if log is not None:
                log.write(f"dpclaims_core: unit {unit} (seed {seed:016x}) failed:\n")
                log.write(traceback.format_exc())
                log.flush()
            where = "" if isinstance(e, ProtocolError) else _where(e)
            return {"unit": unit, "error": f"unit {unit}: {type(e).__name__}: {e}{where}"}

    def handle_line(self, line, log=None):
        """One input line to one output line (without the newline), or None for a blank line."""
        if not line.strip():
            return None
        try:
            msg = json.loads(line)
        except ValueError as e:
            ans = {"error": f"the request is not JSON ({e}): {line.strip()[:80]!r}"}
        else:
            ans = self.answer(msg, log)
        return json.dumps(ans, allow_nan=False)

    def serve(self, stdin=None, stdout=None, stderr=None):
        """The loop: one answer line per request line, flushed; returns 0 at end of input.

        With the process's own stdout (no `stdout` given), the protocol keeps file
        descriptor 1 to itself: `print` and C libraries writing to stdout inside the
        function go to stderr instead of corrupting the answers.
        """
        stdin = sys.stdin if stdin is None else stdin
        stderr = sys.stderr if stderr is None else stderr
        if stdout is None:
            stdout = _claim_stdout()
        try:
            while True:
                line = stdin.readline()
                if not line:
                    return 0
                out = self.handle_line(line, stderr)
                if out is None:
                    continue
                stdout.write(out + "\n")
                stdout.flush()
        except BrokenPipeError:  # the harness went away: nothing left to answer
            return 0
        except KeyboardInterrupt:
            return 130


def _claim_stdout():
    """A private copy of fd 1 for the protocol; fd 1 and sys.stdout then point at stderr."""
    try:
        sys.stdout.flush()
        fd = os.dup(sys.stdout.fileno())
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return sys.stdout  # not a real file (embedded, captured): use it as it is
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8")


def core(metrics, rng="auto"):
    """Decorator: `@core(metrics=["z2", ...]) def unit(params, rng): return {...}`.

    The function gets `params` (a dict of floats, `params.int("n")` for counts) and `rng`
    (numpy Generator from the unit's seed, or `random.Random` without numpy; `rng=` may
    force "numpy", "random", or be a callable of the seed such as `torch_generator`).
    Declare `options`, `seed` or `unit` as parameters to receive those as well. Returns
    a dict of the declared metrics (numbers; numpy scalars are fine).
    """
    if callable(metrics) and not isinstance(metrics, (list, tuple)):
        raise TypeError("use @core(metrics=[...]), with the metric names")

    def wrap(fn):
        return Core(fn, metrics, rng)

    return wrap
