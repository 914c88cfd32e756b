#!/usr/bin/python3
"""Train three real architectures (VGG, ResNet-18, SqueezeNet) on Fashion-MNIST and export them as ONNX.

Run with Debian's Python (its torch, torchvision and onnx live there):

    /usr/bin/python3 examples/train_zoo.py

Writes, relative to the repository root:
  examples/models/{vgg,resnet18,squeezenet}.onnx  opset 13, dynamic batch, input "input", output "logits"
  examples/data/<model>_logits.npy                PyTorch's float32 output for examples/data/fmnist_test_x.npy

The images are the standard 28x28 ones scaled to [0,1] (x/255, no mean/std
normalisation), as `neuroc eval --data t10k-images-idx3-ubyte.gz` feeds them;
each model's first op zero-pads them to 32x32 (nn.ZeroPad2d(2)), which neuroc
folds into the first convolution's padding.

  vgg         [Conv3x3-BN-ReLU]x2, MaxPool, [Conv3x3-BN-ReLU]x2, MaxPool,
              Conv3x3-BN-ReLU, MaxPool, Flatten, Linear-ReLU, Linear (16-64 channels)
  resnet18    torchvision.models.resnet18(weights=None, num_classes=10) with a
              1-channel conv1 (7x7/2 stem, BN, ReLU, 3x3/2 MaxPool kept)
  squeezenet  squeezenet1_1-style: Fire modules (squeeze 1x1 -> ReLU, expand 1x1 and
              expand 3x3 -> ReLU -> Concat), BN after every conv, ceil-mode 3x3/2
              MaxPools, a 1x1 conv to the 10 classes and global average pooling

Adam (lr 1e-3) with cosine decay to zero, batch 128, seeded, one thread
(--threads); the training loop, data reader and export are those of
examples/train_fashion.py. The default epoch counts fit about five minutes of
training per model on one core of the 2-core Xeon this was written on.
`--only NAMES` trains a comma-separated subset.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_fashion import ROOT, N_FIXTURE, load_split, train, export  # noqa: E402


# ---------------------------------------------------------------- networks

class _Pad2(torch.autograd.Function):
    """F.pad(x, (2, 2, 2, 2)) that exports as one ONNX Pad node with constant pads."""

    @staticmethod
    def forward(ctx, x):
        return F.pad(x, (2, 2, 2, 2))

    @staticmethod
    def symbolic(g, x):
        # torch 1.13 warns that g.op is deprecated (for 1.14); it is how 1.13 writes symbolics.
        warnings.filterwarnings("ignore", message=".*_graph_op' is deprecated", category=FutureWarning)
        pads = g.op("Constant", value_t=torch.tensor([0, 0, 2, 2, 0, 0, 2, 2], dtype=torch.int64))
        return g.op("Pad", x, pads, mode_s="constant")


class ZeroPad2(nn.ZeroPad2d):
    """nn.ZeroPad2d(2), 28x28 -> 32x32. torch 1.13 exports F.pad at opset 13 as
    ConstantOfShape, Concat, Reshape, Slice, Transpose, Reshape, Cast computing
    the pads of a Pad node, and neuroc refuses ConstantOfShape; exporting the
    same zero padding as a single Pad with constant pads (ONNX's own form)
    gives a graph neuroc runs, and converts with the padding folded into the
    first convolution."""

    def __init__(self):
        super().__init__(2)

    def forward(self, x):
        if torch.onnx.is_in_onnx_export():
            return _Pad2.apply(x)
        return super().forward(x)


def conv_bn_relu(cin, cout, k=3, padding=1):
    return [nn.Conv2d(cin, cout, k, padding=padding, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class VGG(nn.Module):
    """A small VGG: 3x3 Conv-BN-ReLU stages with max pooling between them."""

    def __init__(self, widths=(16, 16, "M", 32, 32, "M", 64, "M"), hidden=128):
        super().__init__()
        layers = [ZeroPad2()]  # 28x28 -> 32x32
        cin, size = 1, 32
        for w in widths:
            if w == "M":
                layers.append(nn.MaxPool2d(2))
                size //= 2
            else:
                layers += conv_bn_relu(cin, w)
                cin = w
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(cin * size * size, hidden), nn.ReLU(),
                                        nn.Linear(hidden, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class ResNet18(nn.Module):
    """torchvision's ResNet-18 on 1-channel 28x28 images zero-padded to 32x32."""

    def __init__(self):
        super().__init__()
        self.pad = ZeroPad2()
        self.net = torchvision.models.resnet18(weights=None, num_classes=10)
        self.net.conv1 = nn.Conv2d(1, 64, 7, 2, 3, bias=False)

    def forward(self, x):
        return self.net(self.pad(x))


class Fire(nn.Module):
    """SqueezeNet's Fire module (as torchvision's), with BN after each conv."""

    def __init__(self, cin, squeeze, e1, e3):
        super().__init__()
        self.squeeze = nn.Sequential(*conv_bn_relu(cin, squeeze, 1, 0))
        self.expand1x1 = nn.Sequential(*conv_bn_relu(squeeze, e1, 1, 0))
        self.expand3x3 = nn.Sequential(*conv_bn_relu(squeeze, e3, 3, 1))

    def forward(self, x):
        x = self.squeeze(x)
        return torch.cat([self.expand1x1(x), self.expand3x3(x)], 1)


class SqueezeNet(nn.Module):
    """squeezenet1_1's layout at 32x32: a 3x3 conv, ceil-mode 3x3/2 max pools
    between pairs of Fire modules, a 1x1 conv to the classes, global average
    pooling (no ReLU on the logits)."""

    def __init__(self):
        super().__init__()
        pool = lambda: nn.MaxPool2d(3, 2, ceil_mode=True)  # noqa: E731  32 -> 16 -> 8 -> 4
        self.features = nn.Sequential(
            ZeroPad2(), *conv_bn_relu(1, 32), pool(),
            Fire(32, 8, 32, 32), Fire(64, 8, 32, 32), pool(),
            Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), pool(),
            Fire(128, 24, 96, 96), Fire(192, 24, 96, 96))
        self.classifier = nn.Sequential(nn.Conv2d(192, 10, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x):
        return self.classifier(self.features(x))


# (name, class, default epochs, seed)
SPECS = [("vgg", VGG, 3, 11), ("resnet18", ResNet18, 1, 12), ("squeezenet", SqueezeNet, 2, 13)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, _, epochs, _ in SPECS:
        ap.add_argument(f"--epochs-{name}", type=int, default=epochs, metavar="N",
                        help=f"training epochs of {name} (default {epochs})")
    ap.add_argument("--only", metavar="NAMES",
                    help="comma-separated models to train (" + ", ".join(s[0] for s in SPECS) + ")")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = ap.parse_args()

    specs = SPECS
    if args.only:
        only = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(only) - {s[0] for s in SPECS})
        if unknown:
            ap.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(s[0] for s in SPECS)}")
        specs = [s for s in SPECS if s[0] in only]

    torch.set_num_threads(args.threads)
    train_xy = load_split("train")
    test_xy = load_split("t10k")
    models_dir = os.path.join(ROOT, "examples", "models")
    data_dir = os.path.join(ROOT, "examples", "data")
    fx = torch.from_numpy(np.load(os.path.join(data_dir, "fmnist_test_x.npy")))
    if fx.shape != (N_FIXTURE, 1, 28, 28) or not torch.equal(fx, test_xy[0][:N_FIXTURE]):
        raise SystemExit("examples/data/fmnist_test_x.npy is not the first 256 test images")

    rows = []
    for name, cls, _, seed in specs:
        epochs = getattr(args, f"epochs_{name}")
        torch.manual_seed(seed)
        model = cls()
        params = sum(p.numel() for p in model.parameters())
        print(f"{name}: {params:,} parameters, {epochs} epochs, {torch.get_num_threads()} thread(s)",
              flush=True)
        t0 = time.time()
        acc = train(name, model, epochs, train_xy, test_xy, seed)
        minutes = (time.time() - t0) / 60
        path = os.path.join(models_dir, f"{name}.onnx")
        export(model, path, 13, True, True)
        with torch.no_grad():
            logits = model(fx).numpy().astype(np.float32)
        np.save(os.path.join(data_dir, f"{name}_logits.npy"), logits)
        ops = {}
        for n in onnx.load(path).graph.node:
            ops[n.op_type] = ops.get(n.op_type, 0) + 1
        print(f"{name}: ONNX nodes: " + ", ".join(f"{k} x{v}" for k, v in ops.items()))
        print(f"{name}: test accuracy (10k) {100 * acc:.2f} %, {minutes:.1f} min of training", flush=True)
        rows.append((name, epochs, params, acc, os.path.getsize(path), minutes))

    print("| model | epochs | parameters | test accuracy (10k) | ONNX size | training |")
    for name, epochs, params, acc, size, minutes in rows:
        shown = f"{size / 1024:.0f} KiB" if size < (1 << 20) else f"{size / (1 << 20):.1f} MiB"
        print(f"| `{name}` | {epochs} | {params:,} | {100 * acc:.2f} % | {shown} | {minutes:.1f} min |")


if __name__ == "__main__":
    main()
