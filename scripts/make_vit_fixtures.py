#!/usr/bin/python3
"""Writes the tiny PyTorch exports tests/test_convert_vit.c converts: a
torchvision VisionTransformer of one block (the one-block ViT of
bench/zoo.py, smaller: 16 px, patches of 4, 32 channels, 4 heads) and a
torchvision ConvNeXt of two stages of one block each.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 scripts/make_vit_fixtures.py

Writes tests/fixtures/vit/:
  vit1.onnx        opset 13: LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div, GELU
                   as Erf, attention as MatMul/Softmax with Transpose and
                   Reshape over heads, the class token as Expand + Concat,
                   position embeddings as an Add, the class token's readout
                   as a Gather
  vit1_op17.onnx   the same network at opset 17 (LayerNormalization nodes)
  convnext.onnx    opset 13: ConvNeXt's channels-last permutes around its
                   LayerNorms, depthwise 7×7, Linear layers over channels, GELU,
                   layer scale, and the LayerNorm of the pooled features
  tokmix.onnx      opset 13: element-wise functions and gates on tokens: SiLU
                   (Sigmoid · x), a SwiGLU-like product of two Linear layers,
                   Sigmoid, HardSwish, HardSigmoid, a mean over the tokens
  onehead.onnx     opset 13: single-head attention over the patches (its
                   products have no head axis), mean over the tokens
  swin_block.onnx  opset 13: one shifted-window block of torchvision's Swin
                   (dim 16, 2 heads, window 4, shift 2) on a [N, 8, 8, 16]
                   input: its roll, window partition and attention mask
                   (ScatterND, Range, Mod, Not, Equal, Where)
  x_swin.npy       4 random inputs [4, 8, 8, 16]; y_swin.npy the block's outputs
  swin_small.onnx  opset 13: a two-stage torchvision SwinTransformer (dim 16,
                   depths [2, 1], window 4) on 24 px: window padding (6 × 6
                   tokens to 8 × 8), a shifted block, patch merging
  x_swin_small.npy 16 smooth random images [16, 3, 24, 24]; y_swin_small.npy its logits
  x.npy            16 smooth random images [16, 3, 16, 16] (bench/zoo.py's), float32
  y.npy            the ViT's logits on x.npy (torch's)
  y_convnext.npy   the ConvNeXt's logits on x.npy
  y_tokmix.npy     TokenMix's logits on x.npy
  y_onehead.npy    OneHead's logits on x.npy
Seeded: the same network every run (bytes may differ across torch versions).
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torchvision.models.convnext import CNBlockConfig, ConvNeXt
from torchvision.models.swin_transformer import SwinTransformerBlock

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "vit")


def images(n, px, seed):
    """Low-frequency noise plus a brightness per image (bench/zoo.py's inputs)."""
    g = torch.Generator().manual_seed(seed)
    low = torch.randn(n, 3, 4, 4, generator=g)
    x = F.interpolate(low, size=(px, px), mode="bilinear", align_corners=False)
    x = x + 0.3 * torch.randn(n, 3, px, px, generator=g) + torch.randn(n, 1, 1, 1, generator=g) * 0.5
    return x.float()


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(3)
    net = torchvision.models.VisionTransformer(image_size=16, patch_size=4, num_layers=1, num_heads=4,
                                               hidden_dim=32, mlp_dim=64, num_classes=10)
    torch.nn.init.normal_(net.heads.head.weight, std=0.2)  # torchvision starts it at zero
    torch.nn.init.normal_(net.class_token, std=0.5)        # and the class token
    net.eval()
    x = images(16, 16, 7)
    np.save(os.path.join(OUT, "x.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(OUT, "y.npy"), net(x).numpy().astype(np.float32))
    for name, opset in (("vit1", 13), ("vit1_op17", 17)):
        export(net, x, name, opset)
    cnx = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10)
    for m in cnx.modules():
        if hasattr(m, "layer_scale"):  # torchvision starts it at 1e-6: the blocks would do nothing
            torch.nn.init.constant_(m.layer_scale, 0.5)
    cnx.eval()
    with torch.no_grad():
        np.save(os.path.join(OUT, "y_convnext.npy"), cnx(x).numpy().astype(np.float32))
    export(cnx, x, "convnext", 13)
    mix = TokenMix().eval()
    with torch.no_grad():
        np.save(os.path.join(OUT, "y_tokmix.npy"), mix(x).numpy().astype(np.float32))
    export(mix, x, "tokmix", 13)
    one = OneHead().eval()
    with torch.no_grad():
        np.save(os.path.join(OUT, "y_onehead.npy"), one(x).numpy().astype(np.float32))
    export(one, x, "onehead", 13)
    swin = SwinTransformerBlock(16, 2, [4, 4], [2, 2], mlp_ratio=2.0).eval()
    xs = torch.randn(4, 8, 8, 16, generator=torch.Generator().manual_seed(1))
    np.save(os.path.join(OUT, "x_swin.npy"), xs.numpy())
    with torch.no_grad():
        np.save(os.path.join(OUT, "y_swin.npy"), swin(xs).numpy().astype(np.float32))
    export(swin, xs, "swin_block", 13)
    swin_small()


def swin_small():
    """A two-stage torchvision Swin on 24 px: 6 × 6 tokens padded to 8 × 8
    windows of 4 (a shifted second block), patch merging (step-2 Slices),
    stage 2's 3 × 3 tokens padded to one window."""
    torch.manual_seed(5)
    net = torchvision.models.swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 1], num_heads=[2, 2], window_size=[4, 4], mlp_ratio=2.0,
        stochastic_depth_prob=0.0, num_classes=10).eval()
    torch.nn.init.normal_(net.head.weight, std=0.2)
    x = images(16, 24, 9)
    np.save(os.path.join(OUT, "x_swin_small.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(OUT, "y_swin_small.npy"), net(x).numpy().astype(np.float32))
    export(net, x, "swin_small", 13)


class TokenMix(torch.nn.Module):
    """Patches as tokens, then the element-wise functions and gates a
    transformer's MLP may use, and a mean over the tokens."""

    def __init__(self, c=16):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, c, 4, 4)
        self.a, self.b = torch.nn.Linear(c, c), torch.nn.Linear(c, c)
        self.head = torch.nn.Linear(c, 10)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        a, b = self.a(t), self.b(t)
        g = F.silu(a) * b
        h = torch.sigmoid(g) + F.hardswish(b) + F.hardsigmoid(a)
        return self.head(h.mean(1))


class OneHead(torch.nn.Module):
    """Single-head attention: Q·Kᵀ and A·V of (batch, N, C) values."""

    def __init__(self, c=8):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, c, 4, 4)
        self.q, self.k, self.v = torch.nn.Linear(c, c), torch.nn.Linear(c, c), torch.nn.Linear(c, c)
        self.head = torch.nn.Linear(c, 10)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        a = torch.softmax(self.q(t) @ self.k(t).transpose(1, 2) / t.shape[-1] ** 0.5, dim=-1)
        return self.head((a @ self.v(t)).mean(1))


def export(net, x, name, opset):
    torch.onnx.export(net, x[:1], os.path.join(OUT, name + ".onnx"), opset_version=opset,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})


if __name__ == "__main__":
    main()
