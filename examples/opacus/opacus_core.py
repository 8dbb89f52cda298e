#!/usr/bin/env python3
"""An external core on a real DP library: logistic regression trained with Opacus.

The model is `torch.nn.Linear(d + 1, 1, bias=False)` on a synthetic data set (x ~ N(0,
I_d) with a last coordinate left at 0, y = 1[x . w* + noise > 0]), trained with Opacus's
`PrivacyEngine.make_private` (Poisson sampling at rate q = batch_size / n, per-sample
clipping to C = max_grad_norm, Gaussian noise of standard deviation z C on the summed
clipped gradients; Abadi et al., "Deep Learning with Differential Privacy", CCS 2016,
Algorithm 1) for `epochs` epochs, i.e. steps = epochs / q optimizer steps, on CPU.

Two modes, one function:

* training (no `canary` parameter): one training run; the metrics are what Opacus reports
  (`opacus_epsilon`: `PrivacyEngine.get_epsilon(delta)`, its PRV accountant's upper end;
  `opacus_prv_lower`: the lower end of the same PRV bracket; `opacus_rdp_epsilon`: Opacus's
  RDP accountant on the same history) and what the training loop measurably did
  (`steps_taken`; `noise_z2`: the mean squared noise Opacus added to the summed clipped
  gradients, in units of C^2, i.e. z^2 when the noise is right; `clip_excess`: the largest
  distance, in units of C, between Opacus's summed clipped gradient and the sum of the
  per-sample gradients each clipped to C; `train_accuracy`).
* canary mode (`canary` set by `external.audit`, add/remove adjacency as Opacus's
  accountant assumes): with `canary: 1` the last record is a canary, x = M
  e_{d+1}, y = 0 (M = 10, no other record touches coordinate d + 1, so its clipped
  gradient is C e_{d+1} while sigma(10 w_{d+1}) >= 0.1); with `canary: 0` that record is
  the zero vector, whose gradient is 0: the same as removing it, with n fixed. The
  score is -w_T[d+1] / (lr / (q n)): the canary's summed contributions plus the noise on
  that coordinate, Opacus's steps undone; at q = 1 the two worlds' scores are
  N(T C, T z^2 C^2) and N(0, T z^2 C^2): sqrt(T)/z-GDP, exactly what the accountant bounds.

Planted bugs (options, each a negative control of the specs next to this file):
  noise: halved          the noise Opacus adds is silently halved (its `add_noise` called
                         with z / 2), the accountant still told z;
  clipping: disabled     clipping at max_grad_norm = 1e6 while the noise stays z C (the
                         threshold raised for the clip only);
  accounting: per_epoch  the reported epsilon comes from an accountant stepped once per
                         epoch (epochs passed to the accountant as steps);
  accounting: double_counted  every step counted twice (the accountant's hook attached
                         twice): an over-report, conservative, but a wrong number.

Parameters: n, d, q, epochs, z, max_grad_norm, lr, delta; `canary`, `epsilon` in canary
mode. Speaks dpclaims-external/2 through the adapter in python/ (dpclaims_core).
"""
import os
import sys
import warnings

try:
    from dpclaims_core import core
except ImportError:  # the adapter from this repository, without installing it
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    from dpclaims_core import core

import torch
from opacus import PrivacyEngine
from opacus.accountants import PRVAccountant, RDPAccountant

warnings.filterwarnings("ignore")  # Opacus's notes on secure RNG and on empty batches
torch.set_num_threads(1)
CANARY_M = 10.0


def make_data(n, d, gen):
    x = torch.zeros(n, d + 1)
    x[:, :d] = torch.randn(n, d, generator=gen)
    w_star = torch.randn(d, generator=gen)
    y = ((x[:, :d] @ w_star + 0.5 * torch.randn(n, generator=gen)) > 0).float()
    return x, y


def instrument(optimizer, clip, z, options, stats, measure):
    """Measure what Opacus did at each step; plant the bug an option names."""
    clip_orig, noise_orig = optimizer.clip_and_accumulate, optimizer.add_noise

    def clip_and_accumulate():
        if options.get("clipping") == "disabled":  # BUG: clip at 1e6, noise still z C
            optimizer.max_grad_norm = 1e6
            clip_orig()
            optimizer.max_grad_norm = clip
        else:
            clip_orig()
        if not measure:
            return
        # Reference: each per-sample gradient clipped to C, summed (Algorithm 1).
        per = [p.grad_sample.reshape(p.grad_sample.shape[0], -1) for p in optimizer.params]
        norms = torch.cat(per, dim=1).norm(dim=1)
        factor = (clip / (norms + 1e-6)).clamp(max=1.0)
        for p, g in zip(optimizer.params, per):
            ref = (factor[:, None] * g).sum(dim=0)
            excess = (p.summed_grad.reshape(-1) - ref).norm().item() / clip
            stats["clip_excess"] = max(stats["clip_excess"], excess)

    def add_noise():
        before = [p.summed_grad.clone() for p in optimizer.params] if measure else []
        if options.get("noise") == "halved":  # BUG: half the noise, the accountant told z
            optimizer.noise_multiplier = z / 2
            noise_orig()
            optimizer.noise_multiplier = z
        else:
            noise_orig()
        if not measure:
            return
        for p, s in zip(optimizer.params, before):
            noise = p.grad.reshape(-1) - s.reshape(-1)
            stats["noise_sq"] += float((noise * noise).sum()) / clip**2
            stats["noise_count"] += noise.numel()

    optimizer.clip_and_accumulate = clip_and_accumulate
    optimizer.add_noise = add_noise


@core(
    metrics=[
        "opacus_epsilon",
        "opacus_prv_lower",
        "opacus_rdp_epsilon",
        "steps_taken",
        "noise_z2",
        "clip_excess",
        "train_accuracy",
        "score",
    ],
    rng=lambda seed: seed % 2**63,
)
def opacus_unit(params, torch_seed, options):
    torch.manual_seed(torch_seed)  # Opacus's Poisson sampler and noise draw from torch's global RNG
    gen = torch.Generator().manual_seed(torch_seed)
    n, d, epochs = params.int("n"), params.int("d"), params.int("epochs")
    q, z, clip = params["q"], params["z"], params["max_grad_norm"]
    lr, delta = params["lr"], params["delta"]
    batch = round(q * n)
    if batch < 1 or n % batch:
        raise ValueError(f"q n = {q * n} must be an integer dividing n = {n}")
    x, y = make_data(n, d, gen)
    canary = "canary" in params
    if canary:  # the last record: the canary, or the zero vector (zero gradient: removed)
        x[-1], y[-1] = 0.0, 0.0
        if params["canary"] >= 0.5:
            x[-1, d] = CANARY_M
    model = torch.nn.Linear(d + 1, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch)
    engine = PrivacyEngine(accountant="prv")
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        noise_multiplier=z,
        max_grad_norm=clip,
        poisson_sampling=True,
    )
    stats = {"clip_excess": 0.0, "noise_sq": 0.0, "noise_count": 0}
    instrument(optimizer, clip, z, options, stats, measure=not canary)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    steps = 0
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            if len(xb):
                loss_fn(model(xb).squeeze(1), yb).backward()
            optimizer.step()
            steps += 1
    w = model._module.weight.detach()[0]
    if canary:
        return {"score": -float(w[d]) / (lr / (q * n))}
    if options.get("accounting") == "per_epoch":  # BUG: one accountant step per epoch
        acc = PRVAccountant()
        for _ in range(epochs):
            acc.step(noise_multiplier=z, sample_rate=q)
        history = acc.history
        eps = acc.get_epsilon(delta)
    elif options.get("accounting") == "double_counted":  # each step counted twice
        acc = PRVAccountant()
        acc.history = [(zz, qq, 2 * t) for zz, qq, t in engine.accountant.history]
        history = acc.history
        eps = acc.get_epsilon(delta)
    else:
        history = engine.accountant.history
        eps = engine.get_epsilon(delta)
    prv = PRVAccountant()
    prv.history = list(history)
    delta_error = delta / 1000  # Opacus's default in get_epsilon
    prv_lower, _, _ = prv._get_dprv(eps_error=0.01, delta_error=delta_error).compute_epsilon(
        delta, delta_error, 0.01
    )
    rdp = RDPAccountant()
    rdp.history = list(history)
    acc_train = float(((x @ w > 0).float() == y).float().mean())
    return {
        "opacus_epsilon": eps,
        "opacus_prv_lower": float(prv_lower),
        "opacus_rdp_epsilon": rdp.get_epsilon(delta),
        "steps_taken": steps,
        "noise_z2": stats["noise_sq"] / max(stats["noise_count"], 1),
        "clip_excess": stats["clip_excess"],
        "train_accuracy": acc_train,
    }


if __name__ == "__main__":
    opacus_unit.serve()
