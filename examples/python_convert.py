#!/usr/bin/env python3
"""Converts a PyTorch network into a spiking one with the neuroc package and
scores it, the Python side of `neuroc convert` + `neuroc eval`.

Trains a small CNN on Fashion-MNIST for one epoch (Debian's python3-torch
and dataset-fashion-mnist; about half a minute on one core), converts it
with 1000 training images for calibration, evaluates the SNN on the 10,000
test images for 32 steps and writes it as NIR. Without torch it converts
the shipped examples/models/cnn.onnx instead.

    pip install ./python        # once (see docs/python.md)
    python examples/python_convert.py [-o cnn.nir]
"""
import argparse
import os

import neuroc

DATA = "/usr/share/datasets/fashion-mnist"
HERE = os.path.dirname(os.path.abspath(__file__))


def fashion_mnist():
    """(train_x, train_y, test_x, test_y): float32 images (N, 1, 28, 28) in [0, 1], int64 labels."""
    def load(name):
        return neuroc.load_data(os.path.join(DATA, name))  # the library's IDX reader
    return (neuroc.features(load("train-images-idx3-ubyte.gz"), (1, 28, 28)), load("train-labels-idx1-ubyte.gz"),
            neuroc.features(load("t10k-images-idx3-ubyte.gz"), (1, 28, 28)), load("t10k-labels-idx1-ubyte.gz"))


def train(x, y):
    import torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 7 * 7, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    X, Y = torch.from_numpy(x), torch.from_numpy(y)
    perm = torch.randperm(len(X))
    for i in range(0, len(X), 128):
        idx = perm[i:i + 128]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(X[idx]), Y[idx]).backward()
        opt.step()
    return net


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default="cnn.nir")
    a = ap.parse_args()
    x, y, x_test, y_test = fashion_mnist()
    try:
        model = train(x, y)  # a torch.nn.Module: exported to ONNX in memory by convert
    except ImportError:
        model = os.path.join(HERE, "models", "cnn.onnx")
    print("converting", type(model).__name__ if not isinstance(model, str) else model)

    snn = neuroc.convert(model, calib=x[:1000], timesteps=8)
    result = snn.evaluate(x_test, y_test, timesteps=32)

    print(f"ANN accuracy: {result.ann_accuracy:.2f} %")
    for t in (1, 2, 4, 8, 16, 32):
        print(f"  SNN after t = {t:<2}  {result.accuracy[t]:6.2f} %")
    print("spike rates:", {k: round(v, 4) for k, v in result.spike_rates.items()})
    print(f"synaptic operations per inference: {result.synops:.3g}; energy (estimate): "
          f"SNN {result.energy['snn_joules'] * 1e6:.2f} µJ, ANN {result.energy['ann_joules'] * 1e6:.2f} µJ")
    snn.save(a.output)
    print("wrote", a.output)


if __name__ == "__main__":
    main()
