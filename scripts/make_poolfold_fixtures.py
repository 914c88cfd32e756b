#!/usr/bin/python3
"""Writes the small networks tests/test_convert_poolfold.c converts: average
poolings of spikes that fold into the Conv or Gemm reading them, and the
ones that must stay pooling layers.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 scripts/make_poolfold_fixtures.py

Writes tests/fixtures/poolfold/ (each Conv/Linear He-initialised, seeded):
  overlap.onnx  Conv3x3-ReLU [1 → 4, 12×12], AvgPool(2, stride 1), Conv3x3
                (no padding)-ReLU, AvgPool(2, stride 2, padding 1,
                count_include_pad) , Conv3x3 (padding 1)-ReLU, Flatten, Linear
                → 5: overlapping windows and a padded pool, both folded
  gap.onnx      Conv3x3 stride 4-ReLU [1 → 6, 8×8 → 2×2], AdaptiveAvgPool(1),
                Flatten, Linear → 5: a global mean of 4 taps folds into the Gemm
  mean.onnx     the same with x.mean([2, 3]) (ReduceMean, no flattening node)
  odd.onnx      Conv3x3-ReLU [1 → 4, 7×7], AvgPool(2) → 3×3, Conv3x3 (padding
                1): the padding would read the row the pool drops: kept
  big.onnx      Conv3x3-ReLU [1 → 4, 12×12], AvgPool(3), Conv3x3: 9 taps: kept
  shared.onnx   Conv3x3-ReLU, AvgPool(2) read by two Convs added: kept
  input.onnx    AvgPool(2) of the input (currents, not spikes), Conv3x3-ReLU: kept
  x12.npy, x8.npy, x7.npy  16 random inputs [16, 1, S, S] in [0, 1], float32,
                for the networks of input size S
"""
import os

import numpy as np
import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "poolfold")


def randomise(net, gen):
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            m.weight.data = torch.randn(m.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5
            m.bias.data = torch.rand(m.bias.shape, generator=gen) * 0.1


def conv_relu(cin, cout, **kw):
    return [nn.Conv2d(cin, cout, 3, **kw), nn.ReLU()]


class Mean(nn.Module):
    def forward(self, x):
        return x.mean([2, 3])


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(*conv_relu(1, 4, padding=1), nn.AvgPool2d(2))
        self.a, self.b = nn.Conv2d(4, 4, 3, padding=1), nn.Conv2d(4, 4, 1)
        self.tail = nn.Sequential(nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))

    def forward(self, x):
        y = self.head(x)
        return self.tail(self.a(y) + self.b(y))


def nets():
    flat = [nn.Flatten()]
    yield "overlap", 12, nn.Sequential(*conv_relu(1, 4, padding=1), nn.AvgPool2d(2, stride=1), *conv_relu(4, 6),
                                       nn.AvgPool2d(2, stride=2, padding=1, count_include_pad=True),
                                       *conv_relu(6, 6, padding=1), *flat, nn.Linear(6 * 5 * 5, 5))
    yield "gap", 8, nn.Sequential(*conv_relu(1, 6, stride=4, padding=1), nn.AdaptiveAvgPool2d(1), *flat,
                                  nn.Linear(6, 5))
    yield "mean", 8, nn.Sequential(*conv_relu(1, 6, stride=4, padding=1), Mean(), nn.Linear(6, 5))
    yield "odd", 7, nn.Sequential(*conv_relu(1, 4, padding=1), nn.AvgPool2d(2), *conv_relu(4, 4, padding=1), *flat,
                                  nn.Linear(4 * 3 * 3, 5))
    yield "big", 12, nn.Sequential(*conv_relu(1, 4, padding=1), nn.AvgPool2d(3), *conv_relu(4, 4, padding=1),
                                   *flat, nn.Linear(4 * 4 * 4, 5))
    yield "shared", 12, Shared()
    yield "input", 12, nn.Sequential(nn.AvgPool2d(2), *conv_relu(1, 4, padding=1), *flat, nn.Linear(4 * 6 * 6, 5))


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(29)
    x = torch.rand(16, 1, 12, 12, generator=gen)
    for size in (12, 8, 7):
        np.save(os.path.join(OUT, "x%d.npy" % size), x[:, :, :size, :size].numpy().astype(np.float32))
    for name, size, net in nets():
        randomise(net, gen)
        net.eval()
        torch.onnx.export(net, x[:1, :, :size, :size], os.path.join(OUT, name + ".onnx"), opset_version=13,
                          input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
        print("wrote", name + ".onnx")


if __name__ == "__main__":
    main()
