#!/usr/bin/python3
"""Writes the tiny networks tests/test_convert_nonlinear.c converts: the
non-linear patterns of the CNNs since 2019, built from torchvision's own
blocks so the ONNX has exactly the patterns of efficientnet_b0 and
mobilenet_v3_small, and the element-wise functions on their own.

Run with Debian's Python (its torch, torchvision and onnx live there):

    /usr/bin/python3 scripts/make_nonlinear_fixtures.py

Writes tests/fixtures/nonlinear/:
  effnet.onnx     stem Conv-BN-SiLU [3 → 8, 8×8], torchvision MBConv(expand 4,
                  3×3, stride 2, SqueezeExcitation with SiLU and a Sigmoid gate),
                  MBConv(expand 4, 5×5, residual), Conv-BN-SiLU, mean pool,
                  Linear(16, 5): SiLU as Sigmoid + Mul, the gate's Mul (opset 13)
  mnv3_13.onnx    stem Conv-BN-Hardswish, torchvision's MobileNetV3
  mnv3_17.onnx    InvertedResidual (SE with ReLU and a Hardsigmoid gate, HS
                  activations) ×2, mean pool, Linear-Hardswish-Linear: at opset
                  13 Hardswish is x·HardSigmoid(x), at 17 the HardSwish op
  gelu.onnx       Conv, GELU (erf: Div, Erf, Add, Mul, Mul), Conv, HardSigmoid
                  gate times the Conv's input (a Mul of two activations), Conv,
                  Sigmoid·x with the constant first (0.5 * ...), mean, Linear
  gelu_tanh.onnx  Conv, GELU's Tanh form written out (Pow 3, Mul 0.044715, Add,
                  Mul √(2/π), Tanh, Add 1, Mul x, Mul 0.5), Conv, Tanh, mean, Linear
  linear_se.onnx  Conv-ReLU, squeeze-excitation by Linear layers on the mean,
                  the Sigmoid gate unsqueezed to (N, C, 1, 1), Conv-ReLU, Linear
  not_gelu.onnx   Conv, Erf(x) + x·x, mean, Linear: not convertible
  x.npy           8 random inputs [8, 3, 8, 8], float32
  y_<name>.npy    torch's outputs on x.npy
Seeded: the same networks every run (bytes may differ across torch versions).
"""
import os
from functools import partial

import numpy as np
import torch
import torch.nn as nn
from torchvision.models.efficientnet import MBConv, MBConvConfig
from torchvision.models.mobilenetv3 import InvertedResidual, InvertedResidualConfig

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "nonlinear")


def randomise(net, gen):
    """He-initialised weights, small biases, random BN statistics."""
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            m.weight.data = torch.randn(m.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5
            if m.bias is not None:
                m.bias.data = torch.rand(m.bias.shape, generator=gen) * 0.2 - 0.1
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.weight.data = 0.5 + torch.rand(c, generator=gen)
            m.bias.data = torch.rand(c, generator=gen) * 0.6 - 0.3
            m.running_mean.data = torch.rand(c, generator=gen) * 0.4 - 0.2
            m.running_var.data = 0.5 + torch.rand(c, generator=gen)


def conv_bn(i, o, act):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), act())


class TinyEffNet(nn.Module):
    def __init__(self):
        super().__init__()
        bn = partial(nn.BatchNorm2d, eps=1e-3)
        self.features = nn.Sequential(
            conv_bn(3, 8, nn.SiLU),
            MBConv(MBConvConfig(4, 3, 2, 8, 16, 1), 0.0, bn),
            MBConv(MBConvConfig(4, 5, 1, 16, 16, 1), 0.0, bn),
            nn.Sequential(nn.Conv2d(16, 16, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU()))
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class TinyMobileNetV3(nn.Module):
    def __init__(self):
        super().__init__()
        bn = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        self.features = nn.Sequential(
            conv_bn(3, 8, nn.Hardswish),
            InvertedResidual(InvertedResidualConfig(8, 3, 16, 8, True, "RE", 2, 1, 1.0), bn),
            InvertedResidual(InvertedResidualConfig(8, 5, 24, 8, True, "HS", 1, 1, 1.0), bn))
        self.classifier = nn.Sequential(nn.Linear(8, 16), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(16, 5))

    def forward(self, x):
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class Gelus(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = nn.functional.gelu(self.c1(x))
        x = self.c3(nn.functional.hardsigmoid(self.c2(x)) * x)  # a gate of the same map
        x = 0.5 * (torch.sigmoid(x) * x)  # a SiLU written the other way round, then scaled
        return self.fc(x.mean([2, 3]))


class GeluTanh(nn.Module):
    """GELU's Tanh form (x³ as Mul·Mul at opset 13, Pow at 17 with nothing
    else changed: the same function by other ops), then a Tanh."""
    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.Linear(8, 5)

    def forward(self, x):
        x = self.c1(x)
        x = 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * torch.pow(x, 3))))
        return self.fc(torch.tanh(self.c2(x)).mean([2, 3]))


class LinearSE(nn.Module):
    """Squeeze-excitation with Linear layers on the flattened mean, the gate
    unsqueezed back to (N, C, 1, 1) (two Unsqueeze nodes)."""
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)
        self.fc1, self.fc2, self.fc = nn.Linear(8, 4), nn.Linear(4, 8), nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        gate = torch.sigmoid(self.fc2(torch.relu(self.fc1(x.mean([2, 3])))))
        x = torch.relu(self.c2(x * gate[:, :, None, None]))
        return self.fc(x.mean([2, 3]))


class NotGelu(nn.Module):
    """Erf and x·x outside any function a Nonlinear layer computes: refused."""
    def __init__(self):
        super().__init__()
        self.c1, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8, 5)

    def forward(self, x):
        x = self.c1(x)
        return self.fc((torch.erf(x) + x * x).mean([2, 3]))


def export(model, name, x, opset, gen):
    randomise(model, gen)
    model.eval()
    torch.onnx.export(model, x[:1], os.path.join(OUT, name + ".onnx"), opset_version=opset,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    with torch.no_grad():
        np.save(os.path.join(OUT, "y_" + name + ".npy"), model(x).numpy().astype(np.float32))


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(11)
    torch.manual_seed(11)
    x = torch.rand(8, 3, 8, 8, generator=gen) * 2 - 1
    np.save(os.path.join(OUT, "x.npy"), x.numpy().astype(np.float32))
    export(TinyEffNet(), "effnet", x, 13, gen)
    mnv3 = TinyMobileNetV3()
    export(mnv3, "mnv3_13", x, 13, torch.Generator().manual_seed(12))
    export(mnv3, "mnv3_17", x, 17, torch.Generator().manual_seed(12))
    export(Gelus(), "gelu", x, 13, gen)
    export(LinearSE(), "linear_se", x, 13, gen)
    export(GeluTanh(), "gelu_tanh", x, 13, gen)
    export(NotGelu(), "not_gelu", x, 13, gen)


if __name__ == "__main__":
    main()
