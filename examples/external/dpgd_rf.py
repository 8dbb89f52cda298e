#!/usr/bin/env python3
"""Reference external core: DP-GD on the random-features model, in numpy.

Bombari & Mondelli, "Privacy for free in the overparameterized regime" (PNAS 2025):
  * model (Sec. 2.2, Eq. 2): f(x) = tanh(V x)^T theta, V_ij ~ N(0, 1/d), theta_0 = 0,
    inputs x ~ N(0, I_d), labels y = sign(u^T x) with u uniform on the sphere (Fig. 2);
  * Algorithm 1 (DP-GD): per-sample gradient g_i of (phi_i^T theta - y_i)^2, clipped to
    g_i / max(1, ||g_i|| / C), averaged over the n samples, and
    theta_t = theta_{t-1} - eta * gbar + sqrt(eta) * (2 C / n) * sigma * N(0, I_p)   (Eq. 11);
  * sigma from Proposition 2.2 (Eq. 5): sigma = sqrt(eta T) sqrt(8 ln(1/delta)) / eps.

Speaks dpclaims-external/2 (docs/external-protocol.md). Parameters: d, n, p, n_test, eta,
steps (T), clip (C), epsilon, delta, kappa (2 in Eq. 11), sigma_scale (1: Prop. 2.2).
Metrics:
  noise_sq        (1/n_test) ||Phi_test Theta~_T||^2: the noise term of Sec. 4.3, Eq. 20,
                  with Theta~ the noise-only recursion
                  Theta~_t = (I - eta H) Theta~_{t-1} + noise_t,  H = (2/n) Phi^T Phi,
                  driven by the same noise draws as the run (exactly theta_T minus its
                  expectation over the noise when nothing is clipped);
  noise_sq_exact  its exact expectation over the noise, Prop. 2.2's sigma, spectral form
                  (eta s^2 / n_test) [T ||Phi_test||_F^2 + sum_j (g(2 mu_j / n) - T) a_j],
                  s = kappa C sigma / n, g(l) = sum_{k<T} (1 - eta l)^{2k}, mu_j, u_j the
                  eigenpairs of Phi Phi^T, a_j = ||Phi_test Phi^T u_j||^2 / mu_j;
  z2_per_step     mean over steps and coordinates of noise_t^2 / (2 eta C / n)^2: the
                  squared noise multiplier of one step, whose sensitivity is 2 eta C / n
                  (replace-one adjacency, Definition 2.1); Prop. 2.2 makes it 8 T ln(1/delta)/eps^2;
  test_loss, train_loss, clip_fraction (per-sample gradients clipped, over all steps).
"""
import json
import math
import sys

import numpy as np

PROTOCOL = "dpclaims-external/2"
METRICS = ["noise_sq", "noise_sq_exact", "z2_per_step", "test_loss", "train_loss", "clip_fraction"]


def noise_std(eta, s):
    """Std of one coordinate of the step's noise: sqrt(eta) (kappa C / n) sigma (Eq. 11)."""
    return math.sqrt(eta) * s


def sum_sq_powers(x, steps):
    """g = sum_{k<T} (1 - x)^{2k} in closed form (T where (1 - x)^2 = 1)."""
    r2 = (1.0 - x) ** 2
    out = np.full_like(x, float(steps))
    ok = np.abs(1.0 - r2) > 1e-12
    out[ok] = (1.0 - r2[ok] ** steps) / (1.0 - r2[ok])
    return out


def run(params, seed):
    d, n, p, n_test = (int(params[k]) for k in ("d", "n", "p", "n_test"))
    eta, steps, clip = params["eta"], int(params["steps"]), params["clip"]
    eps, delta = params["epsilon"], params["delta"]
    kappa, scale = params.get("kappa", 2.0), params.get("sigma_scale", 1.0)
    # One independent stream per purpose (direction, train, test, features, noise).
    r_u, r_x, r_t, r_v, r_xi = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(5))
    u = r_u.standard_normal(d)
    u /= np.linalg.norm(u)
    x = r_x.standard_normal((n, d))
    xt = r_t.standard_normal((n_test, d))
    y, yt = np.sign(x @ u), np.sign(xt @ u)
    v = r_v.standard_normal((p, d)) / math.sqrt(d)
    phi, phit = np.tanh(x @ v.T), np.tanh(xt @ v.T)
    # Prop. 2.2, Eq. 5.
    sigma_prop = math.sqrt(eta * steps) * math.sqrt(8.0 * math.log(1.0 / delta)) / eps
    s = kappa * clip * sigma_prop * scale / n
    theta, tnoise = np.zeros(p), np.zeros(p)
    norms = np.linalg.norm(phi, axis=1)
    clipped, z2 = 0, 0.0
    sens = 2.0 * eta * clip / n
    for _ in range(steps):
        r = phi @ theta - y
        gnorm = 2.0 * np.abs(r) * norms
        factor = 1.0 / np.maximum(1.0, gnorm / clip)  # Algorithm 1's clipping
        clipped += int(np.sum(gnorm > clip))
        gbar = (2.0 / n) * (phi.T @ (r * factor))
        noise = noise_std(eta, s) * r_xi.standard_normal(p)
        theta = theta - eta * gbar + noise  # Eq. 11
        tnoise = tnoise - eta * (2.0 / n) * (phi.T @ (phi @ tnoise)) + noise
        z2 += float(noise @ noise) / (p * sens * sens)
    out = {
        "noise_sq": float(np.mean((phit @ tnoise) ** 2)),
        "z2_per_step": z2 / steps,
        "test_loss": float(np.mean((phit @ theta - yt) ** 2)),
        "train_loss": float(np.mean((phi @ theta - y) ** 2)),
        "clip_fraction": clipped / (n * steps),
    }
    # Exact expectation of noise_sq (Prop. 2.2's sigma, the correct sqrt(eta) of Eq. 11).
    s0 = kappa * clip * sigma_prop / n
    mu, uk = np.linalg.eigh(phi @ phi.T)
    keep = mu > 1e-10 * mu.max()
    mu, uk = mu[keep], uk[:, keep]
    a = np.sum((phit @ (phi.T @ uk)) ** 2, axis=0) / mu
    g = sum_sq_powers(eta * 2.0 * mu / n, steps)
    tr = steps * np.sum(phit**2) + np.sum((g - steps) * a)
    out["noise_sq_exact"] = float(eta * s0 * s0 / n_test * tr)
    return out


def main():
    for line in sys.stdin:
        msg = json.loads(line)
        if "protocol" in msg:
            ans = {"protocol": PROTOCOL, "metrics": METRICS}
        else:
            try:
                ans = {"unit": msg["unit"], "metrics": run(msg["params"], int(msg["seed"], 16))}
            except Exception as e:  # reported to the harness, which stops the run
                ans = {"unit": msg.get("unit"), "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
