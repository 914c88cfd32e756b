#!/usr/bin/python3
"""Train neuroc's example networks on Fashion-MNIST and export them as ONNX.

Run with Debian's Python (its torch and onnx live there):

    /usr/bin/python3 examples/train_fashion.py

Writes, relative to the repository root:
  examples/models/{mlp,cnn,resnet,cnn_qcfs}.onnx  opset 13, dynamic batch, input "input", output "logits"
  examples/data/fmnist_test_x.npy            first 256 test images, float32 [256,1,28,28] in [0,1]
  examples/data/fmnist_test_y.npy            their labels, int64 [256]
  examples/data/<model>_logits.npy           PyTorch's float32 output for those images
  examples/README-accuracy.md                full-test-set accuracy table
  tests/fixtures/opsets/cnn_op{9,13,17}_{fold,nofold}_{fixed,dyn}.onnx, input.npy, expected.npy

`--only cnn_qcfs` (a comma-separated list of model names) trains and exports only
those models and their logits, leaving every other file alone.

Images are only scaled to [0,1] (x/255), with no mean/std normalisation, so the
CLI's uint8 -> /255 convention feeds the models exactly what they were trained on.
Everything is seeded; the full run takes about ten minutes on two CPU cores.
"""
import argparse
import gzip
import os
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_DIR = "/usr/share/datasets/fashion-mnist"
N_FIXTURE = 256


def read_idx(path):
    """An IDX file (gzip-compressed) as a numpy array."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    return data.reshape(dims)


def load_split(prefix):
    x = read_idx(os.path.join(DATA_DIR, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(DATA_DIR, f"{prefix}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    return x, torch.from_numpy(y.astype(np.int64))


# ---------------------------------------------------------------- networks

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
            nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    """Conv-BN-ReLU-AvgPool blocks; flattened with x.view(x.size(0), -1), as users write it."""

    def __init__(self, c1=16, c2=32, hidden=128):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.BatchNorm2d(c1), nn.ReLU(), nn.AvgPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.BatchNorm2d(c2), nn.ReLU(), nn.AvgPool2d(2))
        self.fc1 = nn.Linear(c2 * 7 * 7, hidden)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.fc2(F.relu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU())
        self.block1 = Block(16, 16, 1)   # identity shortcut
        self.block2 = Block(16, 32, 2)   # 1x1-conv shortcut, stride 2
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.block2(self.block1(self.stem(x)))
        x = self.pool(x)
        return self.fc(torch.flatten(x, 1))


class FloorSTE(torch.autograd.Function):
    """floor() whose gradient is the identity (straight-through)."""

    @staticmethod
    def forward(ctx, x):
        return torch.floor(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class QCFS(nn.Module):
    """The quantisation-clip-floor-shift activation of Bu et al. (ICLR 2022),
    written as their code writes it, with a trainable threshold lam (λ):
        h(z) = λ · floor(clamp(z / λ, 0, 1) · L + 0.5) / L
    It exports as Div, Clip, Mul, Add, Floor, Div, Mul, the pattern neuroc's
    converter reads λ and L from. While `calibrating` is set it acts as a ReLU
    and sets λ to a high percentile of what it sees (λ must start large, never
    near 0, or the layer passes nothing and learns nothing)."""

    def __init__(self, levels=8, init=8.0):
        super().__init__()
        self.levels = levels
        self.lam = nn.Parameter(torch.tensor(float(init)))
        self.calibrating = False

    def forward(self, x):
        if self.calibrating:
            x = F.relu(x)
            with torch.no_grad():
                self.lam.fill_(max(torch.quantile(x.flatten()[:1 << 24], 0.999).item(), 1e-3))
            return x
        x = x / self.lam
        x = torch.clamp(x, 0, 1)
        # The export traces a plain floor, so the graph holds one Floor node
        # where the straight-through function would leave an opaque op.
        floor = torch.floor if torch.onnx.is_in_onnx_export() else FloorSTE.apply
        x = floor(x * self.levels + 0.5) / self.levels
        return x * self.lam


class CNNQCFS(nn.Module):
    """The shipped CNN with every ReLU replaced by a QCFS activation (L = 8)."""

    def __init__(self, c1=16, c2=32, hidden=128, levels=8):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.BatchNorm2d(c1), QCFS(levels), nn.AvgPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.BatchNorm2d(c2), QCFS(levels), nn.AvgPool2d(2))
        self.fc1 = nn.Linear(c2 * 7 * 7, hidden)
        self.act = QCFS(levels)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.fc2(self.act(self.fc1(x)))

    def init_thresholds(self, x):
        """λ of every layer from the 99.9th percentile of its ReLU activations
        on the batch x (BN in training mode; its running statistics are put
        back, so this pass leaves no other trace)."""
        buffers = {k: v.clone() for k, v in self.named_buffers()}
        acts = [m for m in self.modules() if isinstance(m, QCFS)]
        for m in acts:
            m.calibrating = True
        self.train()
        with torch.no_grad():
            self(x)
            for k, v in self.named_buffers():
                v.copy_(buffers[k])
        for m in acts:
            m.calibrating = False
        return [m.lam.item() for m in acts]

# ---------------------------------------------------------------- training

def accuracy(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct / len(x)


def train(name, model, epochs, train_xy, test_xy, seed):
    torch.manual_seed(seed)
    x, y = train_xy
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    # Decaying the rate to zero settles the weights and BN statistics, so the
    # last epoch's accuracy (the one shipped) is not a lucky or unlucky sample.
    steps = epochs * ((len(x) + 127) // 128)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(1, epochs + 1):
        model.train()
        t0 = time.time()
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), 128):
            idx = perm[i:i + 128]
            opt.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            sched.step()
        acc = accuracy(model, *test_xy)
        print(f"{name}: epoch {epoch}/{epochs}  loss {loss.item():.4f}  "
              f"test acc {acc:.4f}  ({time.time() - t0:.0f} s)", flush=True)
    model.eval()
    return acc


def export(model, path, opset, fold, dynamic, batch=1):
    """fold=False also keeps BatchNormalization nodes: in EVAL mode torch fuses
    BN into the Conv before export whatever do_constant_folding says, while
    PRESERVE (with the model in eval mode) exports them as inference-mode BN."""
    model.eval()
    dummy = torch.zeros(batch, 1, 28, 28)
    kwargs = {"training": torch.onnx.TrainingMode.EVAL if fold else torch.onnx.TrainingMode.PRESERVE}
    if dynamic:
        kwargs["dynamic_axes"] = {"input": {0: "batch"}, "logits": {0: "batch"}}
    torch.onnx.export(model, dummy, path, opset_version=opset, input_names=["input"],
                      output_names=["logits"], do_constant_folding=fold, **kwargs)
    onnx.checker.check_model(onnx.load(path), full_check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs-mlp", type=int, default=10)
    ap.add_argument("--epochs-cnn", type=int, default=8)
    ap.add_argument("--epochs-resnet", type=int, default=8)
    ap.add_argument("--epochs-cnn-qcfs", type=int, default=8)
    ap.add_argument("--only", metavar="NAMES",
                    help="comma-separated models to train (mlp, cnn, resnet, cnn_qcfs); only their "
                         ".onnx and logits files are written")
    args = ap.parse_args()

    # Each model keeps its own seed, so training one alone gives the same
    # network as training them all.
    specs = [("mlp", MLP, args.epochs_mlp, 1), ("cnn", CNN, args.epochs_cnn, 2),
             ("resnet", ResNet, args.epochs_resnet, 3),
             ("cnn_qcfs", CNNQCFS, args.epochs_cnn_qcfs, 4)]
    only = None
    if args.only:
        only = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(only) - {s[0] for s in specs})
        if unknown:
            ap.error(f"unknown model(s) {', '.join(unknown)}; choose from "
                     f"{', '.join(s[0] for s in specs)}")
        specs = [s for s in specs if s[0] in only]

    torch.set_num_threads(2)
    torch.manual_seed(0)
    np.random.seed(0)
    train_xy = load_split("train")
    test_xy = load_split("t10k")

    models_dir = os.path.join(ROOT, "examples", "models")
    data_dir = os.path.join(ROOT, "examples", "data")
    opsets_dir = os.path.join(ROOT, "tests", "fixtures", "opsets")
    for d in (models_dir, data_dir, opsets_dir):
        os.makedirs(d, exist_ok=True)

    fx = test_xy[0][:N_FIXTURE].contiguous()
    if only is None:
        np.save(os.path.join(data_dir, "fmnist_test_x.npy"), fx.numpy().astype(np.float32))
        np.save(os.path.join(data_dir, "fmnist_test_y.npy"),
                test_xy[1][:N_FIXTURE].numpy().astype(np.int64))

    rows = []
    for name, cls, epochs, seed in specs:
        torch.manual_seed(seed)
        model = cls()
        qcfs = [m for m in model.modules() if isinstance(m, QCFS)]
        if qcfs:
            lams = model.init_thresholds(train_xy[0][:1000])
            print(f"{name}: initial λ " + ", ".join(f"{v:.4f}" for v in lams), flush=True)
        acc = train(name, model, epochs, train_xy, test_xy, seed)
        path = os.path.join(models_dir, f"{name}.onnx")
        export(model, path, 13, True, True)
        with torch.no_grad():
            logits = model(fx).numpy().astype(np.float32)
        np.save(os.path.join(data_dir, f"{name}_logits.npy"), logits)
        params = sum(p.numel() for p in model.parameters())
        rows.append((name, epochs, params, acc, os.path.getsize(path)))
        if qcfs:
            print(f"{name}: trained λ " + ", ".join(f"{m.lam.item():.6f}" for m in qcfs))
        print(f"{name}: ONNX nodes: " + ", ".join(n.op_type for n in onnx.load(path).graph.node))
        print(f"{name}: test accuracy (10k) {100 * acc:.2f} %", flush=True)

    if only is not None:
        for name, epochs, params, acc, size in rows:
            print(f"| `{name}` | {epochs} | {params:,} | {100 * acc:.2f} % | {size / 1024:.0f} KiB |")
        return

    # The opset variants only need equal outputs, not accuracy: a narrow CNN
    # trained for one epoch keeps the twelve files small while still carrying
    # BN (folding) and the x.view(x.size(0), -1) shape arithmetic.
    torch.manual_seed(7)
    variant = CNN(c1=4, c2=8, hidden=32)
    train("cnn-variant", variant, 1, train_xy, test_xy, 7)
    vx = fx[:4].contiguous()
    with torch.no_grad():
        expected = variant(vx).numpy().astype(np.float32)
    np.save(os.path.join(opsets_dir, "input.npy"), vx.numpy().astype(np.float32))
    np.save(os.path.join(opsets_dir, "expected.npy"), expected)
    for opset in (9, 13, 17):
        for fold in (True, False):
            for dynamic in (False, True):
                fname = f"cnn_op{opset}_{'fold' if fold else 'nofold'}_{'dyn' if dynamic else 'fixed'}.onnx"
                export(variant, os.path.join(opsets_dir, fname), opset, fold, dynamic, batch=4)

    with open(os.path.join(ROOT, "examples", "README-accuracy.md"), "w") as f:
        f.write("| model | epochs | parameters | test accuracy (10k) | ONNX size |\n")
        f.write("|---|---:|---:|---:|---:|\n")
        for name, epochs, params, acc, size in rows:
            f.write(f"| `{name}` | {epochs} | {params:,} | {100 * acc:.2f} % | {size / 1024:.0f} KiB |\n")
        f.write("\nTrained by `examples/train_fashion.py` (PyTorch "
                f"{torch.__version__.split('a')[0]}, Adam lr 1e-3 with cosine decay, batch 128, inputs x/255, "
                "seeded) and exported with opset 13.\n")
    for r in rows:
        print(*r)


if __name__ == "__main__":
    main()
