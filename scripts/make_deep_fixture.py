#!/usr/bin/python3
"""Writes the deep network tests/test_convert_resolution.c converts: deep
enough that the readout's error from quantising every layer adds up, as in
torchvision's RegNet and MnasNet (docs/zoo.md), small enough for a test.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 scripts/make_deep_fixture.py

Writes tests/fixtures/deep/:
  deep.onnx  Conv(3→16)-BN-ReLU, then 24 residual blocks (Conv 1×1-BN-ReLU,
             grouped Conv 3×3-BN-ReLU, Conv 1×1-BN, + the block's input, ReLU:
             73 ReLUs in series), Flatten, Linear(16·8·8→10) (no pooling that
             would average the errors of the positions away); random
             weights (PyTorch's initialisation), BatchNorm statistics from
             random batches (train mode, cumulative averages) as bench/zoo.py
  calib.npy  64 smooth random 3×8×8 images (calibration)
  x.npy      16 other such images (held out)
  y.npy      torch's logits on x.npy
Seeded: the same network every run (bytes may differ across torch versions).
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "deep")
C, BLOCKS, PX = 16, 24, 8


def images(n, seed):
    """Low-frequency noise plus fine noise plus a per-image brightness (bench/zoo.py's images)."""
    g = torch.Generator().manual_seed(seed)
    low = torch.randn(n, 3, 4, 4, generator=g)
    x = F.interpolate(low, size=(PX, PX), mode="bilinear", align_corners=False)
    return x + 0.3 * torch.randn(n, 3, PX, PX, generator=g) + torch.randn(n, 1, 1, 1, generator=g) * 0.5


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(C, C, 1, bias=False), nn.BatchNorm2d(C), nn.ReLU())
        self.b = nn.Sequential(nn.Conv2d(C, C, 3, padding=1, groups=4, bias=False), nn.BatchNorm2d(C), nn.ReLU())
        self.c = nn.Sequential(nn.Conv2d(C, C, 1, bias=False), nn.BatchNorm2d(C))

    def forward(self, x):
        return F.relu(x + self.c(self.b(self.a(x))))


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, C, 3, padding=1, bias=False), nn.BatchNorm2d(C), nn.ReLU())
        self.blocks = nn.Sequential(*[Block() for _ in range(BLOCKS)])
        self.fc = nn.Linear(C * PX * PX, 10)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).flatten(1))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    net = Deep()
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = None
            m.reset_running_stats()
    net.train()
    with torch.no_grad():
        for b in range(4):
            net(images(32, 1000 + b))
    net.eval()
    calib, x = images(64, 3), images(16, 7)
    with torch.no_grad():
        y = net(x)
    torch.onnx.export(net, x[:1], os.path.join(OUT, "deep.onnx"), opset_version=13, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    np.save(os.path.join(OUT, "calib.npy"), calib.numpy().astype(np.float32))
    np.save(os.path.join(OUT, "x.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(OUT, "y.npy"), y.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
