#!/usr/bin/python3
"""Writes the tiny PyTorch exports tests/test_convert.c converts.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 scripts/make_convert_fixtures.py

Writes tests/fixtures/convert/:
  bn.onnx          BN at the input (folded forward), Conv-BN-ReLU, AvgPool,
                   Conv-BN-ReLU, Linear-BN1d-ReLU, Linear; BN kept as nodes
  mlp_bn.onnx      Flatten, Linear-BN1d-ReLU, Linear; BN kept as nodes
  qcfs.onnx        Conv-BN-QCFS, AvgPool, Conv-QCFS, Linear-QCFS, Linear:
                   the module of examples/train_fashion.py (L = 8), BN folded
  qcfs_ste.onnx    the same net with L = 4, a straight-through floor written
                   as y + (floor(y) - y).detach(), and the clip after the floor
  qcfs.json        the λ (float32, as stored) and L of each QCFS layer
  relu6.onnx       Conv-ReLU6 (Clip(0, 6), opset 13: bounds as inputs), Linear
  relu6_op9.onnx   the same at opset 9 (bounds as attributes)
  maxpool.onnx     Conv-ReLU-MaxPool, Linear
  maxpool2.onnx    Conv-ReLU-MaxPool(2), Conv-ReLU-MaxPool(3, 2, padding 1),
                   Linear: the second MaxPool pools spikes (SpikeMaxPool2d)
  leaky.onnx       Linear-LeakyReLU-Linear (not convertible)
  bn_pad.onnx      BN at the input before a padded Conv (its shift cannot fold: a layer of its own)
  avgpool_pad.onnx AvgPool(3, padding 1, count_include_pad=False) (per-window divisors)
  avgpool_ceil.onnx AvgPool(2, ceil_mode=True) on an odd size (per-window divisors)
  softmax.onnx     Conv-ReLU-AvgPool, Linear, Softmax (dropped with a note)
  sigmoid.onnx     Linear-Sigmoid-Linear (imports; not convertible)
  x.npy            16 random inputs [16, 1, 8, 8] in [0, 1], float32
Seeded: the same networks every run (bytes may differ across torch versions).
With file names as arguments, writes only those of the networks made by
extra() (so adding one leaves the others' bytes alone):

    /usr/bin/python3 scripts/make_convert_fixtures.py maxpool2.onnx
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "convert")


class QCFS(nn.Module):
    """Bu et al.'s activation as examples/train_fashion.py exports it."""

    def __init__(self, levels=8, init=1.0, ste=False, clip_after=False):
        super().__init__()
        self.levels = levels
        self.lam = nn.Parameter(torch.tensor(float(init)))
        self.ste = ste
        self.clip_after = clip_after

    def forward(self, x):
        x = x / self.lam
        if not self.clip_after:
            x = torch.clamp(x, 0, 1)
        y = x * self.levels + 0.5
        y = y + (torch.floor(y) - y).detach() if self.ste else torch.floor(y)
        x = y / self.levels
        if self.clip_after:
            x = torch.clamp(x, 0, 1)
        return x * self.lam


def randomise_bn(m, gen):
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = mod.num_features
            with torch.no_grad():
                mod.weight.copy_(torch.rand(c, generator=gen) + 0.5)
                mod.bias.copy_(torch.randn(c, generator=gen) * 0.3)
                mod.running_mean.copy_(torch.randn(c, generator=gen) * 0.3)
                mod.running_var.copy_(torch.rand(c, generator=gen) + 0.3)


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn0 = nn.BatchNorm2d(1)
        self.conv1 = nn.Conv2d(1, 4, 3)             # no padding: bn0's shift folds exactly
        self.bn1 = nn.BatchNorm2d(4)
        self.pool = nn.AvgPool2d(2)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(6)
        self.fc1 = nn.Linear(6 * 3 * 3, 8)
        self.bn3 = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(self.bn0(x)))))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = x.view(x.size(0), -1)
        return self.fc2(torch.relu(self.bn3(self.fc1(x))))


class MLPBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.BatchNorm1d(16), nn.ReLU(),
                                 nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)


class QCFSNet(nn.Module):
    def __init__(self, levels, lams, ste=False):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.act1 = QCFS(levels, lams[0], ste=ste)
        self.pool = nn.AvgPool2d(2)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.act2 = QCFS(levels, lams[1], ste=ste, clip_after=ste)
        self.fc1 = nn.Linear(4 * 4 * 4, 8)
        self.act3 = QCFS(levels, lams[2], ste=ste)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        x = self.pool(self.act1(self.bn1(self.conv1(x))))
        x = self.act2(self.conv2(x))
        x = x.view(x.size(0), -1)
        return self.fc2(self.act3(self.fc1(x)))


class ConvAct(nn.Module):
    def __init__(self, act, pool=None):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.act = act
        self.pool = pool
        self.fc = nn.Linear(4 * (4 if pool else 8) ** 2, 3)

    def forward(self, x):
        x = self.act(self.conv(x))
        if self.pool is not None:
            x = self.pool(x)
        return self.fc(torch.flatten(x, 1))


class Seq(nn.Module):
    def __init__(self, *mods, fc_in):
        super().__init__()
        self.body = nn.Sequential(*mods)
        self.fc = nn.Linear(fc_in, 3)

    def forward(self, x):
        return self.fc(torch.flatten(self.body(x), 1))


class LinAct(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc1 = nn.Linear(64, 8)
        self.act = act
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(torch.flatten(x, 1))))


def export(model, name, keep_bn=False, opset=13):
    model.eval()
    path = os.path.join(OUT, name)
    mode = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), path, opset_version=opset,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=not keep_bn, training=mode)


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(11)
    torch.manual_seed(11)

    net = BNNet()
    randomise_bn(net, gen)
    export(net, "bn.onnx", keep_bn=True)
    net = MLPBN()
    randomise_bn(net, gen)
    export(net, "mlp_bn.onnx", keep_bn=True)

    record = {}
    for name, levels, lams, ste in (("qcfs.onnx", 8, (1.2345678, 0.777, 2.5), False),
                                    ("qcfs_ste.onnx", 4, (0.9876543, 1.5, 3.25), True)):
        net = QCFSNet(levels, lams, ste)
        randomise_bn(net, gen)
        export(net, name)
        record[name] = {"levels": levels,
                        "lambda": [float(m.lam.detach().numpy()) for m in (net.act1, net.act2, net.act3)]}
    with open(os.path.join(OUT, "qcfs.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")

    export(ConvAct(nn.ReLU6()), "relu6.onnx")
    export(ConvAct(nn.ReLU6()), "relu6_op9.onnx", opset=9)
    export(ConvAct(nn.ReLU(), nn.MaxPool2d(2)), "maxpool.onnx")
    export(LinAct(nn.LeakyReLU(0.1)), "leaky.onnx")
    export(LinAct(nn.Sigmoid()), "sigmoid.onnx")
    x = torch.rand(16, 1, 8, 8, generator=gen)
    np.save(os.path.join(OUT, "x.npy"), x.numpy().astype(np.float32))

    net = Seq(nn.BatchNorm2d(1), nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), fc_in=2 * 8 * 8)
    randomise_bn(net, gen)
    export(net, "bn_pad.onnx", keep_bn=True)
    export(Seq(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.AvgPool2d(3, 1, 1, count_include_pad=False), fc_in=2 * 6 * 6),
           "avgpool_pad.onnx")
    export(Seq(nn.Conv2d(1, 2, 2), nn.ReLU(), nn.AvgPool2d(2, ceil_mode=True), fc_in=2 * 4 * 4),
           "avgpool_ceil.onnx")
    export(nn.Sequential(Seq(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.AvgPool2d(2), fc_in=2 * 3 * 3),
                         nn.Softmax(dim=1)), "softmax.onnx")


def extra(only=None):
    """Networks added later, each from its own seed."""
    if only is None or "maxpool2.onnx" in only:
        torch.manual_seed(5)
        net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                            nn.Flatten(), nn.Linear(6 * 2 * 2, 10))
        with torch.no_grad():  # positive biases: every layer is active on x.npy
            net[0].bias.uniform_(0.0, 0.3)
            net[3].bias.uniform_(0.0, 0.3)
        export(net, "maxpool2.onnx")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        extra(set(sys.argv[1:]))
    else:
        main()
        extra()
