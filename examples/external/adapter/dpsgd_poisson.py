#!/usr/bin/env python3
"""DP-SGD with Poisson sampling, written as Opacus users write it, in numpy on dpclaims_core.

Abadi et al., "Deep Learning with Differential Privacy" (CCS 2016), Algorithm 1, as Opacus
implements it (`PrivacyEngine.make_private(module, optimizer, data_loader,
noise_multiplier=z, max_grad_norm=C)` with `poisson_sampling=True`):
  * the data loader draws each batch by Poisson sampling, every example independently with
    probability `sample_rate` q (the batch size varies; the accountant assumes this);
  * per-sample gradients are clipped to norm C, summed, Gaussian noise N(0, z^2 C^2 I) is
    added to the sum, and the result divided by the expected batch size q n;
  * the model is a logistic regression on synthetic data: x ~ N(0, I_d), y = 1[u.x > 0]
    with label noise 10%.
Parameters: n, d, sample_rate, steps, noise_multiplier, max_grad_norm, lr.
Options (each default is DP-SGD; the others are faults a negative control must catch):
  sampling  poisson | shuffle        (fixed-size shuffled batches: not what RDP assumes)
  clipping  per_sample | batch       (clip_grad_norm_ on the batch's mean gradient, as a
                                      non-private training loop does)
  noise     sum | double_divided     (noise z C / (q n) added to the sum, then divided again)
Metrics:
  noise_z2         mean over steps and coordinates of (noise added to the sum / C)^2: the
                   squared noise multiplier the release actually has (z^2 when right);
  max_contribution max over steps and batch members of ||example's term in the sum|| / C:
                   the sensitivity realised, in units of C (<= 1 with per-sample clipping);
  batch_var_ratio  variance of the batch sizes over steps / (n q (1 - q)): 1 for Poisson
                   sampling, 0 for fixed-size batches;
  train_loss, train_accuracy  of the final model on the training set.
"""
import math

import numpy as np

from dpclaims_core import core


class LogisticRegression:
    """A linear model with per-sample gradients (what Opacus's GradSampleModule adds)."""

    def __init__(self, d):
        self.w = np.zeros(d)

    def forward(self, x):
        return 1.0 / (1.0 + np.exp(-(x @ self.w)))

    def loss(self, x, y):
        p = np.clip(self.forward(x), 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

    def grad_sample(self, x, y):
        """Per-sample gradients of the cross-entropy, one row per example."""
        return (self.forward(x) - y)[:, None] * x


def poisson_loader(n, q, steps, rng, sampling):
    """Batches as index arrays: Opacus's UniformWithReplacementSampler, or the fault."""
    b = int(round(q * n))
    for _ in range(steps):
        if sampling == "poisson":
            yield np.flatnonzero(rng.random(n) < q)
        else:  # fixed-size batches: what a DataLoader(shuffle=True) gives
            yield rng.permutation(n)[:b]


def choice(options, key, allowed):
    v = options.get(key, allowed[0])
    if v not in allowed:
        raise ValueError(f"unknown option {key}={v!r} ({', '.join(allowed)})")
    return v


@core(metrics=["noise_z2", "max_contribution", "batch_var_ratio", "train_loss", "train_accuracy"])
def dpsgd(params, rng, options):
    n, d, steps = params.int("n"), params.int("d"), params.int("steps")
    q, z, C, lr = params["sample_rate"], params["noise_multiplier"], params["max_grad_norm"], params["lr"]
    sampling = choice(options, "sampling", ["poisson", "shuffle"])
    clipping = choice(options, "clipping", ["per_sample", "batch"])
    noise_kind = choice(options, "noise", ["sum", "double_divided"])
    r_data, r_batch, r_noise = rng.spawn(3)
    # Synthetic data: a linear rule with 10% of the labels flipped.
    u = r_data.standard_normal(d)
    x = r_data.standard_normal((n, d))
    y = ((x @ u > 0) ^ (r_data.random(n) < 0.1)).astype(float)
    model = LogisticRegression(d)
    expected_batch = q * n
    noise_sq, max_contrib, sizes = 0.0, 0.0, []
    for idx in poisson_loader(n, q, steps, r_batch, sampling):
        sizes.append(len(idx))
        g = model.grad_sample(x[idx], y[idx])  # per-sample gradients, (B, d)
        if clipping == "per_sample":  # Opacus: clip each example's gradient to C
            norms = np.linalg.norm(g, axis=1)
            terms = g / np.maximum(1.0, norms / C)[:, None]
        else:  # FAULT: torch.nn.utils.clip_grad_norm_ on the batch's mean gradient
            mean = g.mean(axis=0) if len(idx) else np.zeros(d)
            terms = g * min(1.0, C / max(np.linalg.norm(mean), 1e-300))
        if len(idx):
            max_contrib = max(max_contrib, float(np.linalg.norm(terms, axis=1).max()) / C)
        std = z * C if noise_kind == "sum" else z * C / expected_batch
        noise = std * r_noise.standard_normal(d)
        noise_sq += float(noise @ noise) / (d * C * C)
        model.w -= lr * (terms.sum(axis=0) + noise) / expected_batch  # optimizer.step()
    sizes = np.asarray(sizes, dtype=float)
    acc = float(np.mean((model.forward(x) > 0.5) == (y > 0.5)))
    return {
        "noise_z2": noise_sq / steps,
        "max_contribution": max_contrib,
        "batch_var_ratio": sizes.var(ddof=1) / (n * q * (1 - q)),
        "train_loss": model.loss(x, y),
        "train_accuracy": acc,
    }


if __name__ == "__main__":
    dpsgd.serve()
