#!/usr/bin/env python3
"""The small ViT of issue 28 (patch 4 on 1x28x28: 49 tokens and a class token,
learned position embeddings, 4 pre-norm blocks, dim 64, 4 heads, MLP 128,
GELU, LayerNorm, head Linear(64, 10)) with random weights, exported as ONNX
(opset 13) for bench/vit_speed.sh, with calibration and benchmark inputs from
Fashion-MNIST (or random images where the data set is absent).

usage: vit_speed_model.py OUT_DIR   (writes vit.onnx, calib.npy, x.npy)
Run with Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14)."""
import gzip
import os
import sys

import numpy as np
import torch
import torchvision

FMNIST = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"


def small_vit():
    """torchvision's VisionTransformer with a one-channel patch embedding."""
    net = torchvision.models.VisionTransformer(image_size=28, patch_size=4, num_layers=4, num_heads=4,
                                               hidden_dim=64, mlp_dim=128, num_classes=10)
    net.conv_proj = torch.nn.Conv2d(1, 64, kernel_size=4, stride=4)
    torch.nn.init.normal_(net.heads.head.weight, std=0.2)  # torchvision starts it at zero
    torch.nn.init.normal_(net.class_token, std=0.5)        # and the class token
    return net.eval()


def images(n):
    if os.path.exists(FMNIST):
        with gzip.open(FMNIST) as f:
            raw = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
        return (raw[:n].astype(np.float32) / 255.0)
    return np.random.default_rng(0).random((n, 1, 28, 28), dtype=np.float32)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    net = small_vit()
    x = images(128)
    np.save(os.path.join(out, "calib.npy"), x[:64])
    np.save(os.path.join(out, "x.npy"), x[64:])
    # grad enabled: under torch.no_grad() torch 1.13's MultiheadAttention takes
    # a fused path that has no ONNX export
    torch.onnx.export(net, torch.from_numpy(x[:1]), os.path.join(out, "vit.onnx"), opset_version=13,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})


if __name__ == "__main__":
    main()
