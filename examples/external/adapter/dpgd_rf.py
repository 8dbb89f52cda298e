#!/usr/bin/env python3
"""DP-GD on random features (examples/external/dpgd_rf.py) written on dpclaims_core.

The same computation as the reference core, draw for draw (`rng.spawn(5)` gives the five
streams `np.random.SeedSequence(seed).spawn(5)` gave it), without the protocol loop:
Bombari & Mondelli, "Privacy for free in the overparameterized regime" (PNAS 2025),
Algorithm 1 with Prop. 2.2's sigma and the noise sqrt(eta) (kappa C / n) sigma of Eq. 11.
Option `noise`: `eq11` (default) or `missing_sqrt_eta` (the fault of
dpgd_rf_missing_sqrt_eta.py: the sqrt(eta) dropped). Metrics as in the reference core.
Needs numpy and dpclaims_core (`pip install ./python` at the repository root).
"""
import math

import numpy as np

from dpclaims_core import core

METRICS = ["noise_sq", "noise_sq_exact", "z2_per_step", "test_loss", "train_loss", "clip_fraction"]


def sum_sq_powers(x, steps):
    """g = sum_{k<T} (1 - x)^{2k} in closed form (T where (1 - x)^2 = 1)."""
    r2 = (1.0 - x) ** 2
    out = np.full_like(x, float(steps))
    ok = np.abs(1.0 - r2) > 1e-12
    out[ok] = (1.0 - r2[ok] ** steps) / (1.0 - r2[ok])
    return out


@core(metrics=METRICS)
def dpgd(params, rng, options):
    d, n, p, n_test = (params.int(k) for k in ("d", "n", "p", "n_test"))
    eta, steps, clip = params["eta"], params.int("steps"), params["clip"]
    eps, delta = params["epsilon"], params["delta"]
    kappa, scale = params.get("kappa", 2.0), params.get("sigma_scale", 1.0)
    noise = options.get("noise", "eq11")
    if noise not in ("eq11", "missing_sqrt_eta"):
        raise ValueError(f"unknown option noise={noise!r} (eq11, missing_sqrt_eta)")
    # One independent stream per purpose (direction, train, test, features, noise).
    r_u, r_x, r_t, r_v, r_xi = rng.spawn(5)
    u = r_u.standard_normal(d)
    u /= np.linalg.norm(u)
    x, xt = r_x.standard_normal((n, d)), r_t.standard_normal((n_test, d))
    y, yt = np.sign(x @ u), np.sign(xt @ u)
    v = r_v.standard_normal((p, d)) / math.sqrt(d)
    phi, phit = np.tanh(x @ v.T), np.tanh(xt @ v.T)
    sigma_prop = math.sqrt(eta * steps) * math.sqrt(8.0 * math.log(1.0 / delta)) / eps  # Eq. 5
    s = kappa * clip * sigma_prop * scale / n
    std = math.sqrt(eta) * s if noise == "eq11" else s  # Eq. 11 (or the fault)
    theta, tnoise = np.zeros(p), np.zeros(p)
    norms = np.linalg.norm(phi, axis=1)
    clipped, z2, sens = 0, 0.0, 2.0 * eta * clip / n
    for _ in range(steps):
        r = phi @ theta - y
        gnorm = 2.0 * np.abs(r) * norms
        factor = 1.0 / np.maximum(1.0, gnorm / clip)  # Algorithm 1's clipping
        clipped += int(np.sum(gnorm > clip))
        gbar = (2.0 / n) * (phi.T @ (r * factor))
        xi = std * r_xi.standard_normal(p)
        theta = theta - eta * gbar + xi
        tnoise = tnoise - eta * (2.0 / n) * (phi.T @ (phi @ tnoise)) + xi
        z2 += float(xi @ xi) / (p * sens * sens)
    # Exact expectation of noise_sq (Prop. 2.2's sigma, the correct sqrt(eta) of Eq. 11).
    s0 = kappa * clip * sigma_prop / n
    mu, uk = np.linalg.eigh(phi @ phi.T)
    keep = mu > 1e-10 * mu.max()
    mu, uk = mu[keep], uk[:, keep]
    a = np.sum((phit @ (phi.T @ uk)) ** 2, axis=0) / mu
    g = sum_sq_powers(eta * 2.0 * mu / n, steps)
    tr = steps * np.sum(phit**2) + np.sum((g - steps) * a)
    return {
        "noise_sq": np.mean((phit @ tnoise) ** 2),
        "noise_sq_exact": eta * s0 * s0 / n_test * tr,
        "z2_per_step": z2 / steps,
        "test_loss": np.mean((phit @ theta - yt) ** 2),
        "train_loss": np.mean((phi @ theta - y) ** 2),
        "clip_fraction": clipped / (n * steps),
    }


if __name__ == "__main__":
    dpgd.serve()
