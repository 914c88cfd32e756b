#!/usr/bin/python3
"""Writes the tiny ShuffleNet v2 export tests/test_convert_shuffle.c
converts: torchvision's own InvertedResidual blocks, so the ONNX has the
exact patterns of shufflenet_v2_x0_5 (x.chunk(2, 1) as two channel Slices,
torch.cat as Concat, the channel shuffle as Reshape(N, 2, C/2, H, W) →
Transpose(0, 2, 1, 3, 4) → Reshape(N, C, H, W), x.mean([2, 3]) as
ReduceMean).

Run with Debian's Python (its torch, torchvision and onnx live there):

    /usr/bin/python3 scripts/make_shuffle_fixtures.py

Writes tests/fixtures/shuffle/:
  shuffle.onnx  Conv-BN-ReLU [3 → 8, 8×8], InvertedResidual(8, 8, 1) (chunk,
                branch Conv-BN-ReLU, DWConv-BN, Conv-BN-ReLU, Concat,
                shuffle), InvertedResidual(8, 16, 2) (two branches, Concat,
                shuffle) [4×4], InvertedResidual(16, 16, 1), mean over
                (H, W), Linear(16, 5)
  x.npy         8 random inputs [8, 3, 8, 8] in [0, 1], float32
  y.npy         torch's logits on x.npy
Seeded: the same network every run (bytes may differ across torch versions).
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.shufflenetv2 import InvertedResidual

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "shuffle")


def randomise(net, gen):
    """He-initialised weights, small biases, random BN statistics."""
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            m.weight.data = torch.randn(m.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5
            if m.bias is not None:
                m.bias.data = torch.rand(m.bias.shape, generator=gen) * 0.1
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.weight.data = 0.5 + torch.rand(c, generator=gen)
            m.bias.data = torch.rand(c, generator=gen) * 0.6 - 0.2
            m.running_mean.data = torch.rand(c, generator=gen) * 0.4
            m.running_var.data = 0.5 + torch.rand(c, generator=gen)


class TinyShuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1), InvertedResidual(8, 16, 2),
                                    InvertedResidual(16, 16, 1))
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.blocks(self.conv1(x))
        return self.fc(x.mean([2, 3]))


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(7)
    torch.manual_seed(7)
    x = torch.rand(8, 3, 8, 8, generator=gen)
    model = TinyShuffle()
    randomise(model, gen)
    model.eval()
    torch.onnx.export(model, x[:1], os.path.join(OUT, "shuffle.onnx"), opset_version=13,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(OUT, "x.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(OUT, "y.npy"), y.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
