#!/usr/bin/python3
"""Writes the tiny PyTorch exports tests/test_convert_zoo.c converts: the
layer patterns of torchvision's DenseNet, GoogLeNet and Inception that
have nothing to fold a BatchNorm into, or pool in ceil mode.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 scripts/make_zoo_fixtures.py

Writes tests/fixtures/zoo/:
  pool_bn.onnx   Conv-ReLU-MaxPool(3, 2, ceil_mode) [8×8 → 4×4, a partial
                 window], BN-ReLU (pre-activation, after the pool), Conv,
                 ReLU, BN directly before a zero-padded Conv (its shift
                 cannot fold), ReLU, AvgPool(3, 1, padding 1) of a 2×2 map,
                 Linear
  cat_bn.onnx    two Conv-ReLU branches, Concat, BN-ReLU, Conv-ReLU, Linear
  spike_ceil.onnx Conv-ReLU-Conv-ReLU-MaxPool(3, 2, ceil_mode) of spikes
                 [8×8 → 4×4], Conv-ReLU, Linear
  avg_ceil.onnx  Conv-ReLU-MaxPool(3, 2, ceil_mode) [8×8 → 4×4], Conv-ReLU,
                 AvgPool(3, 2, padding 1, ceil_mode) [4×4 → 3×3: partial windows
                 divided by their taps in the padded input], Conv-ReLU,
                 AvgPool(3, 1, padding 1, count_include_pad=False), Linear
  x.npy          8 random inputs [8, 1, 8, 8] in [0, 1] (each its own brightness), float32
  y_*.npy        torch's logits of each model on x.npy
  labels.npy     int64 labels for x.npy (cat_bn's argmax), for `neuroc eval`
Seeded: the same networks every run (bytes may differ across torch versions).
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "zoo")


def randomise_bn(net, gen):
    """He-initialised weights, small biases (the signal survives the ReLUs), random BN statistics."""
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            m.weight.data = torch.randn(m.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5
            m.bias.data = torch.rand(m.bias.shape, generator=gen) * 0.1
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.weight.data = 0.5 + torch.rand(c, generator=gen)
            m.bias.data = torch.rand(c, generator=gen) * 0.6 - 0.2
            m.running_mean.data = torch.rand(c, generator=gen) * 0.4
            m.running_var.data = 0.5 + torch.rand(c, generator=gen)


class PoolBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
        self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 6, 3, stride=2)
        self.bn2 = nn.BatchNorm2d(6)
        self.conv3 = nn.Conv2d(6, 6, 3, padding=1)
        self.fc = nn.Linear(6 * 1 * 1, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))          # 6 × 4 × 4 (floor mode: 3 × 3)
        x = F.relu(self.conv2(F.relu(self.bn1(x))))   # 6 × 1 × 1
        x = F.relu(self.conv3(self.bn2(x)))           # BN then a padded Conv
        x = F.avg_pool2d(x, 3, stride=1, padding=1)   # Inception's pool on a 1 × 1 map
        return self.fc(torch.flatten(x, 1))


class CatBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(1, 3, 3, padding=1)
        self.b = nn.Conv2d(1, 2, 1)
        self.bn = nn.BatchNorm2d(5)
        self.conv = nn.Conv2d(5, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = torch.cat([F.relu(self.a(x)), F.relu(self.b(x))], 1)
        x = F.relu(self.conv(F.relu(self.bn(x))))
        return self.fc(torch.flatten(x, 1))


class AvgCeil(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv3 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 3 * 3, 3)

    def forward(self, x):
        # max pooling of currents is exact on the first conv's (constant) currents only
        x = F.max_pool2d(F.relu(self.conv1(x)), 3, 2, ceil_mode=True)                # 4 × 4 (floor: 3 × 3)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 3, 2, 1, ceil_mode=True)             # 3 × 3 (floor: 2 × 2)
        x = F.avg_pool2d(F.relu(self.conv3(x)), 3, 1, 1, count_include_pad=False)    # 3 × 3
        return self.fc(torch.flatten(x, 1))


class SpikeCeil(nn.Module):
    """A ceil-mode MaxPool of spikes (GoogLeNet's pools sit after ReLUs of
    spiking layers): a SpikeMaxPool2d with a partial window."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1)
        self.conv3 = nn.Conv2d(6, 6, 3, padding=1)
        self.fc = nn.Linear(6 * 4 * 4, 3)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = F.max_pool2d(x, 3, 2, ceil_mode=True)     # spikes: 6 × 4 × 4 (floor: 3 × 3)
        x = F.relu(self.conv3(x))
        return self.fc(torch.flatten(x, 1))


def export(model, name, x):
    model.eval()
    torch.onnx.export(model, x[:1], os.path.join(OUT, name + ".onnx"), opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(OUT, "y_" + name + ".npy"), y.numpy().astype(np.float32))
    return y


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(5)
    torch.manual_seed(5)
    # a brightness per sample: the outputs vary with the input after the pools average the noise out
    x = torch.rand(8, 1, 8, 8, generator=gen) * torch.rand(8, 1, 1, 1, generator=gen)
    np.save(os.path.join(OUT, "x.npy"), x.numpy().astype(np.float32))
    for name, net in (("pool_bn", PoolBN()), ("cat_bn", CatBN()), ("avg_ceil", AvgCeil()),
                      ("spike_ceil", SpikeCeil())):
        randomise_bn(net, gen)
        y = export(net, name, x)
        if name == "cat_bn":
            np.save(os.path.join(OUT, "labels.npy"), y.argmax(1).numpy().astype(np.int64))


if __name__ == "__main__":
    main()
