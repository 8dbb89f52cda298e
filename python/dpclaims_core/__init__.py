"""Write a dpclaims external core as one decorated function.

    from dpclaims_core import core

    @core(metrics=["z2"])
    def unit(params, rng):
        return {"z2": rng.standard_normal() ** 2}

    if __name__ == "__main__":
        unit.serve()

The adapter speaks ``dpclaims-external/2`` (docs/external-protocol.md in the dpclaims
repository) on stdin/stdout: it answers the handshake with the declared metrics, turns
each request's 16-hex-digit seed into a random generator (``numpy.random.Generator(
numpy.random.PCG64(seed))`` when numpy is importable, else ``random.Random(seed)``),
calls the function, checks that its answer is a mapping of declared metric names to
finite numbers, and writes one JSON line per request, flushed. A malformed request, an
exception in the function or a bad answer becomes ``{"error": "..."}`` (the traceback
goes to stderr, which the harness quotes); the loop ends cleanly at end of input.

Standard library only; numpy is optional.
"""

from ._core import (
    PROTOCOL,
    Core,
    Params,
    core,
    jax_key,
    make_rng,
    parse_seed,
    torch_generator,
)

__all__ = [
    "PROTOCOL",
    "Core",
    "Params",
    "core",
    "jax_key",
    "make_rng",
    "parse_seed",
    "torch_generator",
]
__version__ = "0.1.0"
