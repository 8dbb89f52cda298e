#!/usr/bin/env python3
"""A canary-mode core for `dpclaims audit --system external`: full-batch DP-SGD with a
gradient canary, on dpclaims_core.

Logistic regression on n - 1 synthetic records (x ~ N(0, I_d), coordinate d left at 0)
plus one canary: a gradient canary (Nasr et al. 2021's "Dirac canary") whose clipped
per-sample gradient is +C e_d in the world with the canary (`canary: 1`) and -C e_d in the
world where it is replaced (`canary: 0`): replace-one adjacency, sensitivity 2C per step.
Each of `steps` steps clips the per-sample gradients to C, adds N(0, z^2 C^2 I) to the sum
and takes a step of lr / n. The T steps compose to mu-GDP with mu = 2 sqrt(T) / z; z is
calibrated so that mu-GDP gives exactly (epsilon, delta)-DP (Dong, Roth & Su 2022,
Cor. 2.13), then multiplied by `noise_scale` (1; 0.25 is a negative control the audit
must catch). The score is -w_T[d] / (lr / n): the canary coordinate of the final model,
large when the canary is present.

    dpclaims audit --system external --command "python3 dpsgd_canary.py" \
      --epsilon 1 --delta 1e-5 --trials 2000 --param noise_scale=1
Parameters: epsilon, delta, canary (set by the audit); n, d, steps, clip, lr, noise_scale.
"""
import math

import numpy as np

from dpclaims_core import core


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gdp_delta(mu, eps):
    """delta(eps) of mu-GDP (Dong, Roth & Su 2022, Cor. 2.13)."""
    return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)


def gdp_mu(eps, delta):
    """The largest mu whose mu-GDP is (eps, delta)-DP (bisection; delta(eps) grows with mu)."""
    lo, hi = 1e-6, 1.0
    while gdp_delta(hi, eps) < delta:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gdp_delta(mid, eps) < delta else (lo, mid)
    return lo


@core(metrics=["score", "noise_multiplier"])
def canary_dpsgd(params, rng):
    eps, delta, present = params["epsilon"], params["delta"], params["canary"] >= 0.5
    n, d, steps = params.int("n", 100), params.int("d", 5), params.int("steps", 10)
    clip, lr = params.get("clip", 1.0), params.get("lr", 0.5)
    z = 2.0 * math.sqrt(steps) / gdp_mu(eps, delta) * params.get("noise_scale", 1.0)
    x = np.zeros((n - 1, d + 1))
    x[:, :d] = rng.standard_normal((n - 1, d))
    y = (x[:, 0] > 0).astype(float)
    canary = np.zeros(d + 1)
    canary[d] = clip if present else -clip
    w = np.zeros(d + 1)
    for _ in range(steps):
        g = (1.0 / (1.0 + np.exp(-(x @ w))) - y)[:, None] * x  # per-sample gradients
        g /= np.maximum(1.0, np.linalg.norm(g, axis=1) / clip)[:, None]
        total = g.sum(axis=0) + canary + z * clip * rng.standard_normal(d + 1)
        w -= lr * total / n
    return {"score": -w[d] / (lr / n), "noise_multiplier": z}


if __name__ == "__main__":
    canary_dpsgd.serve()
