#!/usr/bin/python3
"""Writes the tiny nets of the modern-CNN and transformer ops that
tests/test_ann_ops_models.c runs through the reference forward pass.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 scripts/make_ops_fixtures.py

Writes tests/fixtures/ops/:
  tiny_ops13.onnx  stem Conv-BN-HardSwish; a MobileNetV3 squeeze-excite
                   (Hardsigmoid gate); a ShuffleNet channel shuffle
                   (Reshape-Transpose-Reshape); an EfficientNet SE
                   (Sigmoid gate, SiLU = x * Sigmoid(x)); tokens
                   (Flatten-Transpose), LayerNorm, one-head attention
                   (MatMul, Softmax), GELU (Erf); mean over tokens, Linear.
                   Opset 13: LayerNorm exports as ReduceMean, Sub, Pow,
                   Sqrt, Div.
  tiny_ops17.onnx  the same weights at opset 17 (LayerNormalization)
  softplus.onnx    Conv-Softplus-Flatten-Linear: Softplus is an op neuroc cannot run,
                   so `neuroc info` describes it and `neuroc run` refuses it
  vit13.onnx       torchvision's VisionTransformer (8 px, 4 px patches, one
  vit17.onnx       encoder layer of 2 heads, a random head): the class token
                   expanded to the batch exports as Shape, ConstantOfShape,
                   Equal, Where and Expand
  x.npy            4 random inputs [4, 3, 8, 8], float32
  y.npy            torch's output for x, [4, 10]
  y_vit.npy        the ViT's output for x, [4, 10]
Seeded: the same networks every run (bytes may differ across torch versions).
"""
import math
import os

import numpy as np
import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "ops")


class SE(nn.Module):
    def __init__(self, c, gate):
        super().__init__()
        self.fc1 = nn.Conv2d(c, c // 2, 1)
        self.fc2 = nn.Conv2d(c // 2, c, 1)
        self.gate = gate

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * self.gate(self.fc2(torch.relu(self.fc1(s))))


class Tiny(nn.Module):
    def __init__(self, c=8, groups=2):
        super().__init__()
        self.groups = groups
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.Hardswish())
        self.se_v3 = SE(c, nn.Hardsigmoid())
        self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c)
        self.se_eff = SE(c, nn.Sigmoid())
        self.ln = nn.LayerNorm(c)
        self.q, self.k, self.v = nn.Linear(c, c), nn.Linear(c, c), nn.Linear(c, c)
        self.mlp = nn.Sequential(nn.Linear(c, 2 * c), nn.GELU(), nn.Linear(2 * c, c))
        self.head = nn.Linear(c, 10)

    def shuffle(self, x):
        n, c, h, w = x.shape
        x = x.reshape(n, self.groups, c // self.groups, h, w).transpose(1, 2)
        return x.reshape(n, c, h, w)

    def forward(self, x):
        x = self.stem(x)
        x = self.shuffle(self.se_v3(x))
        x = self.dw(x)
        x = x * torch.sigmoid(x)  # SiLU, as EfficientNet writes it
        x = self.se_eff(x)
        t = x.flatten(2).transpose(1, 2)  # [N, HW, C]
        h = self.ln(t)
        a = torch.softmax(self.q(h) @ self.k(h).transpose(1, 2) / math.sqrt(h.shape[-1]), dim=-1)
        t = t + a @ self.v(h)
        t = t + self.mlp(self.ln(t))
        return self.head(t.mean(1))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    net = Tiny().eval()
    bn = net.stem[1]
    with torch.no_grad():  # a BN that does something
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    x = torch.randn(4, 3, 8, 8)
    with torch.no_grad():
        y = net(x)
    for opset in (13, 17):
        torch.onnx.export(net, x, os.path.join(OUT, "tiny_ops%d.onnx" % opset), opset_version=opset,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    softplus = nn.Sequential(nn.Conv2d(3, 2, 3), nn.Softplus(), nn.Flatten(), nn.Linear(2 * 6 * 6, 4)).eval()
    torch.onnx.export(softplus, x, os.path.join(OUT, "softplus.onnx"), opset_version=13, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    np.save(os.path.join(OUT, "x.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(OUT, "y.npy"), y.numpy().astype(np.float32))
    vit_fixture(x)


def vit_fixture(x):
    import torchvision
    torch.manual_seed(1)
    vit = torchvision.models.VisionTransformer(image_size=8, patch_size=4, num_layers=1, num_heads=2,
                                               hidden_dim=16, mlp_dim=32, num_classes=10).eval()
    nn.init.normal_(vit.heads.head.weight, std=0.5)  # torchvision starts it at zero
    with torch.no_grad():
        y = vit(x)
    for opset in (13, 17):
        torch.onnx.export(vit, x[:1], os.path.join(OUT, "vit%d.onnx" % opset), opset_version=opset,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    np.save(os.path.join(OUT, "y_vit.npy"), y.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
