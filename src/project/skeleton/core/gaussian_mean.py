#!/usr/bin/env python3
"""An example core: the Gaussian mechanism releasing the mean of n records of R^k with
norm at most 1 (L2 sensitivity Delta = 2/n under replace-one adjacency), calibrated as
Dwork & Roth (2014), Theorem 3.22: sigma = Delta sqrt(2 ln(1.25/delta)) / eps.

Option `calibration`: `classical` (default) or `inverse_epsilon` (sigma = Delta/eps: a
negative control, not DP). Metric z2: ||release - mean||^2 / (k Delta^2), the squared
noise multiplier measured from one release.

One decorated function on the adapter dpclaims_core (beside this file): it speaks
dpclaims-external/2 on stdin/stdout and hands the function the spec's parameters and a
generator seeded from the unit's seed (draw every random number from it).
"""
import math

import numpy as np

from dpclaims_core import core


@core(metrics=["z2"])
def unit(params, rng, options):
    n, k = params.int("n"), params.int("k")
    eps, delta = params["epsilon"], params["delta"]
    sens = 2.0 / n
    if options.get("calibration", "classical") == "classical":
        sigma = sens * math.sqrt(2.0 * math.log(1.25 / delta)) / eps
    else:
        sigma = sens / eps  # the negative control
    mean = np.zeros(k)
    release = mean + sigma * rng.standard_normal(k)
    return {"z2": float(np.sum((release - mean) ** 2)) / (k * sens * sens)}


if __name__ == "__main__":
    unit.serve()
