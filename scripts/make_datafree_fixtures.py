#!/usr/bin/python3
"""Writes the fixture of data-free calibration (tests/test_convert.c,
test_data_free) and its analytic reference thresholds.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 scripts/make_datafree_fixtures.py

Writes tests/fixtures/convert/:
  bn_res.onnx   Conv-BN-ReLU (a), Conv-BN + a -> ReLU (b), Conv-BN-ReLU-MaxPool(2),
                Linear; BN kept as nodes (TrainingMode.PRESERVE), with
                non-trivial BN statistics (gamma, beta, running mean/var random)
  bn_res.json   the thresholds data-free calibration must give, computed here
                independently (float64, bisection on the normal CDF): per
                layer / per channel, the 99.9th percentile of the rectified
                Gaussian of each ReLU, of its positive values and counting
                zeros, for the three IF layers:
                  relu1: z = N(beta1, gamma1^2)                     (bn-stats)
                  relu2: z = N(beta2 + m(a), gamma2^2 + v(a))       (propagated:
                         m, v the mean and variance of a = relu(N(beta1, gamma1^2)))
                  relu3: max of 4 independent relu(N(beta3, gamma3^2)), CDF^4
                                                                    (propagated)
  bn_mlp.onnx   Flatten, Linear-BN1d-ReLU (a), Linear-ReLU (b), Linear
  bn_mlp.json   as above for a (bn-stats) and b (propagated through the
                Linear: mean W m(a) + c, variance sum W^2 v(a), inputs independent)
Seeded: the same network every run (bytes may differ across torch versions).
"""
import json
import math
import os

import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "convert")


class BNRes(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(4)
        self.conv3 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn3 = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        a = torch.relu(self.bn1(self.conv1(x)))
        b = torch.relu(self.bn2(self.conv2(a)) + a)
        c = self.pool(torch.relu(self.bn3(self.conv3(b))))
        return self.fc(torch.flatten(c, 1))


class BNMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 6)
        self.bn1 = nn.BatchNorm1d(6)
        self.fc2 = nn.Linear(6, 5)
        self.fc3 = nn.Linear(5, 3)

    def forward(self, x):
        a = torch.relu(self.bn1(self.fc1(torch.flatten(x, 1))))
        return self.fc3(torch.relu(self.fc2(a)))


def randomise_bn(m, gen):
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = mod.num_features
            with torch.no_grad():
                mod.weight.copy_(torch.rand(c, generator=gen) * 1.5 + 0.3)
                mod.bias.copy_(torch.randn(c, generator=gen) * 0.8)
                mod.running_mean.copy_(torch.randn(c, generator=gen) * 0.3)
                mod.running_var.copy_(torch.rand(c, generator=gen) + 0.3)


def ncdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def cdf(mu, sd, k, t):
    return ncdf((t - mu) / sd) ** k


def quantile(chans, q, count_zeros):
    """Smallest t >= 0 with the equal mixture's CDF (of positives, or all) >= q."""
    zeros = sum(cdf(mu, sd, k, 0.0) for mu, sd, k in chans)
    base = 0.0 if count_zeros else zeros
    target = q * (len(chans) - base)
    if count_zeros and target <= zeros:
        return 0.0
    lo, hi = 0.0, max(mu + 40 * sd for mu, sd, _ in chans)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if sum(cdf(mu, sd, k, mid) for mu, sd, k in chans) - base >= target:
            hi = mid
        else:
            lo = mid
    return hi


def relu_moments(mu, sd):
    a = mu / sd
    P, p = ncdf(a), math.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    m = mu * P + sd * p
    m2 = (mu * mu + sd * sd) * P + mu * sd * p
    return m, m2 - m * m


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(5)
    torch.manual_seed(5)
    net = BNRes()
    randomise_bn(net, gen)
    net.eval()
    path = os.path.join(OUT, "bn_res.onnx")
    torch.onnx.export(net, torch.zeros(1, 1, 8, 8), path, opset_version=13, input_names=["input"],
                      output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    g = [bn.weight.double().tolist() for bn in (net.bn1, net.bn2, net.bn3)]
    b = [bn.bias.double().tolist() for bn in (net.bn1, net.bn2, net.bn3)]
    # the float32 values the model stores
    g = [[float(torch.tensor(v, dtype=torch.float32)) for v in row] for row in g]
    b = [[float(torch.tensor(v, dtype=torch.float32)) for v in row] for row in b]
    z1 = [(b[0][c], abs(g[0][c])) for c in range(4)]
    mom = [relu_moments(mu, sd) for mu, sd in z1]
    z2 = [(b[1][c] + mom[c][0], math.sqrt(g[1][c] ** 2 + mom[c][1])) for c in range(4)]
    z3 = [(b[2][c], abs(g[2][c])) for c in range(4)]
    layers = {}
    for name, chans, k in (("relu1", z1, 1), ("relu2", z2, 1), ("relu3", z3, 4)):
        ch = [(mu, sd, k) for mu, sd in chans]
        layers[name] = {
            "layer": quantile(ch, 0.999, False),
            "layer_zeros": quantile(ch, 0.999, True),
            "channel": [quantile([c], 0.999, False) for c in ch],
        }
    with open(os.path.join(OUT, "bn_res.json"), "w") as f:
        json.dump(layers, f, indent=1)
    print(json.dumps(layers, indent=1))

    mlp = BNMLP()
    randomise_bn(mlp, gen)
    mlp.eval()
    torch.onnx.export(mlp, torch.zeros(1, 1, 8, 8), os.path.join(OUT, "bn_mlp.onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    f32 = lambda t: [float(v) for v in t.detach().float().reshape(-1)]
    g1, b1 = f32(mlp.bn1.weight), f32(mlp.bn1.bias)
    za = [(b1[c], abs(g1[c])) for c in range(6)]
    ma = [relu_moments(mu, sd) for mu, sd in za]
    W = mlp.fc2.weight.detach().float().double()
    c2 = f32(mlp.fc2.bias)
    zb = []
    for o in range(5):
        m = c2[o] + sum(float(W[o, i]) * ma[i][0] for i in range(6))
        v = sum(float(W[o, i]) ** 2 * ma[i][1] for i in range(6))
        zb.append((m, math.sqrt(v)))
    ref = {}
    for name, chans in (("a", za), ("b", zb)):
        ch = [(mu, sd, 1) for mu, sd in chans]
        ref[name] = {"layer": quantile(ch, 0.999, False), "channel": [quantile([c], 0.999, False) for c in ch]}
    with open(os.path.join(OUT, "bn_mlp.json"), "w") as f:
        json.dump(ref, f, indent=1)
    print(json.dumps(ref, indent=1))


if __name__ == "__main__":
    main()
