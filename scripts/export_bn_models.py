#!/usr/bin/python3
"""The shipped CNN and ResNet with their BatchNormalization kept as nodes, for
data-free conversion (`neuroc convert MODEL.onnx` without --calib).

The shipped examples/models/{cnn,resnet}.onnx were exported in eval mode,
where torch fuses each BN into the Conv before it: the BN statistics a
data-free conversion reads are gone. This retrains them exactly as
examples/train_fashion.py does (same classes, epochs, seeds) and exports
with training=PRESERVE, do_constant_folding=False (BN as inference-mode
nodes), checking the logits against the shipped model's on the fixture
images. Run with Debian's Python:

    /usr/bin/python3 scripts/export_bn_models.py [--out build/bn-models] [--only cnn]

Writes OUT/{cnn,resnet}_bn.onnx (about 800 KB and 80 KB: not committed).
"""
import argparse
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import train_fashion as tf  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bn-models"))
    ap.add_argument("--only", default="cnn,resnet")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    train_xy, test_xy = tf.load_split("train"), tf.load_split("t10k")
    specs = {"cnn": (tf.CNN, 8, 2), "resnet": (tf.ResNet, 8, 3)}
    fx = torch.from_numpy(np.load(os.path.join(ROOT, "examples", "data", "fmnist_test_x.npy")))
    for name in [n.strip() for n in args.only.split(",") if n.strip()]:
        cls, epochs, seed = specs[name]
        torch.manual_seed(seed)
        model = cls()
        acc = tf.train(name, model, epochs, train_xy, test_xy, seed)
        path = os.path.join(args.out, f"{name}_bn.onnx")
        tf.export(model, path, 13, False, True)
        with torch.no_grad():
            got = model(fx).numpy()
        ref = np.load(os.path.join(ROOT, "examples", "data", f"{name}_logits.npy"))
        print(f"{name}: test accuracy {100 * acc:.2f} %, wrote {path}; max |logits - shipped| "
              f"{np.abs(got - ref).max():.3g}", flush=True)


if __name__ == "__main__":
    main()
