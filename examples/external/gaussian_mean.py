#!/usr/bin/env python3
"""Reference external core: the Gaussian mechanism releasing the mean of n records.

Records are vectors of R^k with ||x|| <= 1; under replace-one adjacency the mean has L2
sensitivity Delta = 2/n. The release is mean + N(0, sigma^2 I_k) with the classical
calibration of Dwork & Roth, "The Algorithmic Foundations of Differential Privacy"
(2014), Thm A.1 (Sec. 3.5.3): sigma = Delta sqrt(2 ln(1.25/delta)) / eps, (eps, delta)-DP
for eps < 1.

Option `calibration`: `classical` (default, above) or `inverse_epsilon`, sigma = Delta/eps:
the sqrt(2 ln(1.25/delta)) factor dropped (a negative control, not DP).

Parameters: n, k, epsilon, delta; for `dpclaims audit`, `canary` (1: the data set holds
the canary record e_1, 0: it is replaced by -e_1, the worst-case adjacent pair).
Metrics:
  z2     ||release - mean||^2 / (k Delta^2): the squared noise multiplier sigma^2/Delta^2,
         estimated from the k coordinates of one release;
  score  the first coordinate of the release (the audit's test statistic).
Speaks dpclaims-external/2 (docs/external-protocol.md); numpy only.
"""
import json
import math
import sys

import numpy as np

PROTOCOL = "dpclaims-external/2"


def sigma_of(eps, delta, sens, calibration):
    if calibration == "classical":
        return sens * math.sqrt(2.0 * math.log(1.25 / delta)) / eps  # Dwork & Roth Thm A.1
    if calibration == "inverse_epsilon":
        return sens / eps  # FAULT (negative control)
    raise ValueError(f"unknown calibration `{calibration}` (classical, inverse_epsilon)")


def run(params, options, seed):
    n, k = int(params["n"]), int(params.get("k", 1))
    eps, delta = params["epsilon"], params["delta"]
    rng = np.random.default_rng(seed)
    # n - 1 fixed records (zero vectors) and the one that differs between the worlds.
    data = np.zeros((n, k))
    data[0, 0] = 1.0 if params.get("canary", 1.0) >= 0.5 else -1.0
    mean = data.mean(axis=0)
    sens = 2.0 / n
    sigma = sigma_of(eps, delta, sens, options.get("calibration", "classical"))
    release = mean + sigma * rng.standard_normal(k)
    return {
        "z2": float(np.sum((release - mean) ** 2)) / (k * sens * sens),
        "score": float(release[0]),
    }


def main():
    for line in sys.stdin:
        msg = json.loads(line)
        if "protocol" in msg:
            ans = {"protocol": PROTOCOL, "metrics": ["z2", "score"]}
        else:
            try:
                ans = {"unit": msg["unit"], "metrics": run(msg["params"], msg["options"], int(msg["seed"], 16))}
            except Exception as e:
                ans = {"unit": msg.get("unit"), "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
