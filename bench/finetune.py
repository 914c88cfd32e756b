#!/usr/bin/python3
"""BPTT fine-tuning of the shipped CNN on Fashion-MNIST: accuracy and speed.

The acceptance measurements of the fine-tuning issue, in one run:

(a) accuracy: examples/models/cnn.onnx converted with the default calibration
    (the first 1000 training images, p99.9), scored with `neuroc eval` on the
    10,000 test images (T = 8 gives t = 1, 2, 4, 8), fine-tuned for one epoch
    at T = 4 (`neuroc finetune -T 4 --epochs 1 --lr 1e-4 --batch 64`) on the
    60,000 training images (or the first --train-limit), scored again. Prints
    a markdown table of accuracy at t = 1, 2, 4, 8 before and after, and
    whether the SNN at T = 4 is within 1.0 point of the ANN after.

(b) speed: one fine-tuning epoch of neuroc against the same BPTT written in
    PyTorch, on the same first --speed-samples training images: the same
    converted network (read from the .nir), T = 4, batch 64, the same thread
    count (torch.set_num_threads, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS),
    OMP_WAIT_POLICY=passive for both; IF neurons with spikes carrying θ,
    reset by subtraction (gradient through it), v0 = θ/2, the triangle
    surrogate of width θ, cross-entropy on the readout averaged over T, Adam
    with a cosine schedule; weights and biases trained. PyTorch runs the
    stateless layers on all T steps at once (time folded into the batch), as
    multi-step SNN libraries do. Prints both times per epoch, the times scaled
    to 60,000 images, and the ratio.

    /usr/bin/python3 bench/finetune.py [--neuroc build/neuroc] [--threads 1]
        [--train-limit N] [--speed-samples 6000] [--lr 1e-4] [--finetune-opts='...']
        [--skip-accuracy] [--skip-speed]

Needs Debian's torch and h5py (only under /usr/bin/python3) for (b).
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/datasets/fashion-mnist"
TRAIN_X = os.path.join(DATA, "train-images-idx3-ubyte.gz")
TRAIN_Y = os.path.join(DATA, "train-labels-idx1-ubyte.gz")
TEST_X = os.path.join(DATA, "t10k-images-idx3-ubyte.gz")
TEST_Y = os.path.join(DATA, "t10k-labels-idx1-ubyte.gz")
MODEL = os.path.join(ROOT, "examples", "models", "cnn.onnx")
SHOWN_T = (1, 2, 4, 8)
T_TUNE, BATCH = 4, 64
FULL_EPOCH = 60000


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd, env=None):
    """Runs a command; returns (stdout, wall seconds); exits on failure."""
    log("$ " + " ".join(shlex.quote(c) for c in cmd))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout, wall


def read_idx(path):
    """(shape, bytes) of a gzipped uint8 IDX file."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        sys.exit(f"{path}: not a uint8 IDX file")
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return shape, data[4 + 4 * ndim:]


def write_npy(path, descr, shape, raw):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{d}, " for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + raw)


def subset(workdir, n):
    """The first n training images (uint8, as the IDX file) and labels (int64) as .npy."""
    (N, H, W), xb = read_idx(TRAIN_X)
    _, yb = read_idx(TRAIN_Y)
    n = min(n, N)
    xp, yp = os.path.join(workdir, f"train{n}_x.npy"), os.path.join(workdir, f"train{n}_y.npy")
    write_npy(xp, "|u1", (n, H, W), xb[:n * H * W])
    write_npy(yp, "<i8", (n,), b"".join(struct.pack("<q", v) for v in yb[:n]))
    return xp, yp, n


def eval_series(neuroc, nir, workdir, tag, env):
    rep = os.path.join(workdir, tag + "-eval.json")
    cmd = [neuroc, "eval", nir, "--data", TEST_X, "--labels", TEST_Y, "-T", "8", "--backend", "cpu-fast",
           "--ann", MODEL, "--report", rep]
    run(cmd, env)
    with open(rep) as f:
        acc = json.load(f)["accuracy"]
    scale = 100.0 if max(acc["snn"], default=0) <= 1.0 else 1.0
    ann = acc.get("ann")
    return cmd, (None if ann is None else ann * scale), {t: a * scale for t, a in zip(acc["t"], acc["snn"])}


def epoch_seconds(stdout):
    m = re.search(r"^epoch 1/1 .*?([0-9.]+) s\s+left", stdout, re.M)
    return float(m.group(1)) if m else None


def convert(neuroc, workdir, env):
    nir = os.path.join(workdir, "cnn.nir")
    cmd = [neuroc, "convert", MODEL, "--calib", TRAIN_X, "--calib-samples", "1000", "--plain-spikes", "-o", nir]
    run(cmd, env)
    return cmd, nir


def accuracy(args, neuroc, workdir, env, nir, conv_cmd):
    if args.train_limit:
        tx, ty, n = subset(workdir, args.train_limit)
    else:
        tx, ty, n = TRAIN_X, TRAIN_Y, FULL_EPOCH
    ev0, ann, before = eval_series(neuroc, nir, workdir, "before", env)
    tuned = os.path.join(workdir, "cnn_tuned.nir")
    ft = [neuroc, "finetune", nir, "--train", tx, "--labels", ty, "-T", str(T_TUNE), "--epochs", "1",
          "--lr", str(args.lr), "--batch", str(BATCH), "-o", tuned] + args.finetune_opts.split()
    out, wall = run(ft, env)
    ev1, _, after = eval_series(neuroc, tuned, workdir, "after", env)
    print(f"## (a) accuracy on the 10,000 test images, fine-tuned one epoch at T = 4 on {n} training images, "
          f"lr {args.lr:g} {args.finetune_opts}\n")
    print("| network | ANN | " + " | ".join(f"T={t}" for t in SHOWN_T) + " |")
    print("|---|---|" + "---|" * len(SHOWN_T))
    for name, s in (("converted (p99.9, 1000 calibration images)", before), ("+ 1 epoch BPTT at T=4", after)):
        print(f"| {name} | {ann:.2f} | " + " | ".join(f"{s.get(t, float('nan')):.2f}" for t in SHOWN_T) + " |")
    gap = ann - after.get(4, float("nan"))
    print(f"\nSNN at T=4 after fine-tuning: {after.get(4):.2f}% vs ANN {ann:.2f}%: gap {gap:.2f} points: "
          f"{'within' if gap <= 1.0 else 'NOT within'} 1.0 point")
    print(f"fine-tuning: {wall:.1f} s wall ({out.strip().splitlines()[0] if out.strip() else ''})\n")
    print("commands:")
    for c in (conv_cmd, ev0, ft, ev1):
        print("    " + " ".join(shlex.quote(x) for x in c))
    print()


# ------------------------------------------------------------------ PyTorch BPTT

def torch_network(nir_path, torch):
    """The converted network as a list of (kind, module or params) read from the .nir."""
    import h5py
    nn = torch.nn
    f = h5py.File(nir_path, "r")
    L = f["neuroc/layers"]
    layers = []
    for i in range(int(f["neuroc/n_layers"][()])):
        g = L[str(i)]
        kind = g["kind"][()].decode()
        node = g["node"][()].decode()
        nodes = f["neuroc/graph/nodes" if "graph" in f["neuroc"] else "node/nodes"]  # format 4: neuroc's own graph
        nd = nodes[node] if node and node in nodes else None
        if kind == "Input":
            continue
        # neuroc's own weight is the lossless one (NIR's node has θ folded in)
        wsrc = g if "weight" in g else nd
        if kind == "Conv2d":
            w = torch.tensor(wsrc["weight"][()])
            m = nn.Conv2d(w.shape[1] * int(nd["groups"][()]), w.shape[0], tuple(w.shape[2:]),
                          stride=tuple(int(v) for v in nd["stride"][()]),
                          padding=tuple(int(v) for v in nd["padding"][()]), groups=int(nd["groups"][()]))
            m.weight.data.copy_(w)
            m.bias.data.copy_(torch.tensor(nd["bias"][()]))
            layers.append(("stateless", m))
        elif kind == "Affine":
            w = torch.tensor(wsrc["weight"][()])
            m = nn.Linear(w.shape[1], w.shape[0])
            m.weight.data.copy_(w)
            m.bias.data.copy_(torch.tensor(nd["bias"][()]))
            layers.append(("stateless", m))
        elif kind == "Pool2d":
            k = tuple(int(v) for v in nd["kernel_size"][()])
            s = tuple(int(v) for v in nd["stride"][()])
            scale = float(g["scale"][()]) * k[0] * k[1]
            pool = nn.AvgPool2d(k, s)
            layers.append(("stateless", pool if abs(scale - 1.0) < 1e-6 else (lambda h, p=pool, c=scale: p(h) * c)))
        elif kind == "Flatten":
            layers.append(("stateless", nn.Flatten()))
        elif kind == "IF":
            th = float(g["threshold"][()].reshape(-1)[0])
            layers.append(("if", th))
        elif kind == "Readout":
            pass
        else:
            sys.exit(f"bench: layer kind {kind} not mirrored in PyTorch")
    return layers


def make_spike(torch):
    class Spike(torch.autograd.Function):
        """Heaviside forward; triangle surrogate max(0, 1 - |v - θ|/γ)/γ, γ = θ."""

        @staticmethod
        def forward(ctx, v, th):
            ctx.save_for_backward(v)
            ctx.th = th
            return (v >= th).to(v.dtype)

        @staticmethod
        def backward(ctx, g):
            (v,) = ctx.saved_tensors
            th = ctx.th
            return g * torch.clamp(1.0 - (v - th).abs() / th, min=0.0) / th, None

    return Spike.apply


def torch_epoch(nir, x_u8, y, threads, lr):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    spike = make_spike(torch)
    layers = torch_network(nir, torch)
    params = [p for kind, m in layers if isinstance(m, torch.nn.Module) for p in m.parameters()]
    opt = torch.optim.Adam(params, lr=lr)
    N = x_u8.shape[0]
    steps = (N + BATCH - 1) // BATCH
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)

    def forward(xb):
        B = xb.shape[0]
        h = xb.unsqueeze(0).expand(T_TUNE, *xb.shape).reshape(T_TUNE * B, *xb.shape[1:])
        for kind, m in layers:
            if kind == "stateless":
                h = m(h)
            else:
                th = m
                cur = h.view(T_TUNE, B, *h.shape[1:])
                v = torch.full_like(cur[0], th / 2)
                out = []
                for t in range(T_TUNE):
                    v = v + cur[t]
                    s = spike(v, th) * th
                    v = v - s
                    out.append(s)
                h = torch.stack(out).view(T_TUNE * B, *h.shape[1:])
        return h.view(T_TUNE, B, -1).mean(0)

    gen = torch.Generator().manual_seed(0)
    t0 = time.perf_counter()
    perm = torch.randperm(N, generator=gen)
    tot_loss = correct = 0.0
    for b in range(steps):
        idx = perm[b * BATCH:(b + 1) * BATCH]
        xb = x_u8[idx].float().div_(255.0).unsqueeze(1)
        yb = y[idx]
        logits = forward(xb)
        loss = torch.nn.functional.cross_entropy(logits, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        tot_loss += loss.item() * len(idx)
        correct += (logits.argmax(1) == yb).sum().item()
    return time.perf_counter() - t0, tot_loss / N, 100.0 * correct / N


def speed(args, neuroc, workdir, env, nir):
    import torch
    tx, ty, n = subset(workdir, args.speed_samples)
    tuned = os.path.join(workdir, "cnn_speed.nir")
    ft = [neuroc, "finetune", nir, "--train", tx, "--labels", ty, "-T", str(T_TUNE), "--epochs", "1",
          "--lr", str(args.lr), "--batch", str(BATCH), "-j", str(args.threads), "-o", tuned]
    out, wall = run(ft, env)
    nc_s = epoch_seconds(out) or wall
    m = re.search(r"loss ([0-9.]+)\s+acc ([0-9.]+)%", out)
    (N, H, W), xb = read_idx(TRAIN_X)
    _, yb = read_idx(TRAIN_Y)
    x = torch.frombuffer(bytearray(xb[:n * H * W]), dtype=torch.uint8).view(n, H, W)
    y = torch.tensor(list(yb[:n]), dtype=torch.int64)
    log(f"PyTorch BPTT epoch on {n} images, {args.threads} thread(s)")
    pt_s, pt_loss, pt_acc = torch_epoch(nir, x, y, args.threads, args.lr)
    scale = FULL_EPOCH / n
    print(f"## (b) speed: one fine-tuning epoch on the first {n} training images, T = {T_TUNE}, batch {BATCH}, "
          f"{args.threads} thread(s)\n")
    print("| | s per epoch | s per 60k epoch (scaled x%.1f) | samples/s | loss | train acc |" % scale)
    print("|---|---|---|---|---|---|")
    print(f"| neuroc | {nc_s:.2f} | {nc_s * scale:.1f} | {n / nc_s:.0f} | "
          f"{m.group(1) if m else '-'} | {m.group(2) + '%' if m else '-'} |")
    print(f"| PyTorch {torch.__version__} | {pt_s:.2f} | {pt_s * scale:.1f} | {n / pt_s:.0f} | "
          f"{pt_loss:.4f} | {pt_acc:.2f}% |")
    ratio = pt_s / nc_s
    print(f"\nPyTorch time / neuroc time = {ratio:.2f} (target >= 1: neuroc at least as fast): "
          f"{'met' if ratio >= 1.0 else 'NOT met'}")
    print(f"neuroc: epoch time as neuroc reports it (training only); {wall:.2f} s wall with loading. "
          "PyTorch: the epoch loop, data already in memory.")
    print("command:\n    " + " ".join(shlex.quote(c) for c in ft) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--neuroc", default=os.path.join(ROOT, "build", "neuroc"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--train-limit", type=int, default=0, help="(a): fine-tune on the first N training images")
    ap.add_argument("--speed-samples", type=int, default=6000)
    ap.add_argument("--lr", type=float, default=1e-4, help="peak learning rate (both parts)")
    ap.add_argument("--finetune-opts", default="",
                    help="(a): more `neuroc finetune` options: --finetune-opts='--train-thresholds ...'")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--workdir")
    args = ap.parse_args()
    # before torch is imported, so both sides see the same OpenMP / BLAS settings
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = str(args.threads)
    os.environ["OMP_WAIT_POLICY"] = "passive"
    env = dict(os.environ)
    neuroc = os.path.abspath(args.neuroc)
    workdir = args.workdir or tempfile.mkdtemp(prefix="nc_bench_finetune_")
    os.makedirs(workdir, exist_ok=True)
    print(f"# neuroc BPTT fine-tuning bench, {datetime.datetime.now():%Y-%m-%d %H:%M}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, "
          f"threads {args.threads}, OMP_WAIT_POLICY=passive\n")
    conv_cmd, nir = convert(neuroc, workdir, env)
    if not args.skip_accuracy:
        accuracy(args, neuroc, workdir, env, nir, conv_cmd)
    if not args.skip_speed:
        speed(args, neuroc, workdir, env, nir)
    print(f"(files in {workdir})")


if __name__ == "__main__":
    main()
