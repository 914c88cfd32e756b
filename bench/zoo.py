#!/usr/bin/python3
"""The torchvision zoo through every stage of neuroc.

For each architecture: random weights, real BatchNorm statistics (the model
runs in train mode on a few random batches, cumulative averages, then eval()),
exported to ONNX; then, with the built neuroc,

  1 run      `neuroc run model.onnx` equals torch within 1e-4 of the output scale
             (torch in float64: float32 torch itself is 1e-4 off it on EfficientNet)
  2 convert  `neuroc convert model.onnx --calib calib.npy -T 32 -o model.nir`
             (default options, or those of --convert) succeeds; calibration
             samples differ from the held-out ones
  3 load     the .nir's outputs are bit-identical: cpu vs cpu-fast, and cpu-fast twice
  4 cosine   readout/T of `neuroc run model.nir -T t --backend cpu-fast`
             against the ANN's logits on held-out inputs, t = 32, 64, 128, 256:
             cosine after subtracting each logit's mean over the inputs (what
             is common to all inputs, large with random weights, says nothing);
             and the rate limit (`neuroc run --rate-limit`, the clipped ANN that
             calibration defines) against the ANN, and the SNN at the largest T
             against that limit: clipping error and error of the dynamics apart

--backend B runs stages 3 and 4 on B (cpu-fast by default; the Nonlinear
layers of EfficientNet and MobileNet-V3 run on cpu so far). --in-memory
converts and runs through the Python package (neuroc.convert, SNN.run) with
no .nir file: stage 3 is skipped, the conversion the same.

Prints one Markdown table row per model. Run with Debian's Python:

    /usr/bin/python3 bench/zoo.py [build/neuroc] [--models resnet18,alexnet] [--quick]
        [--convert "--plain-spikes --threshold p99.9"]

Inputs are smooth random images (low-frequency noise plus a per-image
brightness), 3 channels, 32 px (64 or 224 where an architecture needs it).
Each model runs in a child process under --timeout seconds.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

# name: (input px, kwargs for the constructor, expected to convert)
MODELS = {
    "resnet18": (32, {}, True),
    "resnet50": (32, {}, True),
    "mobilenet_v2": (32, {}, True),
    "squeezenet1_1": (32, {}, True),
    "densenet121": (32, {}, True),
    "googlenet": (32, {"aux_logits": False, "init_weights": True}, True),
    "shufflenet_v2_x0_5": (32, {}, True),
    "vgg11_bn": (224, {}, True),       # AdaptiveAvgPool(7) exports only from 7k px maps
    "alexnet": (224, {}, True),        # AdaptiveAvgPool(6) likewise; below 63 px the pools empty
    # beyond the nine: grouped convolutions (ResNeXt, RegNet), MnasNet's depthwise blocks
    "resnext50_32x4d": (32, {}, True),
    "regnet_x_400mf": (32, {}, True),
    "mnasnet0_5": (32, {}, True),
    "inception_v3": (96, {"aux_logits": False, "init_weights": True}, True),  # 75 px at least
    "shufflenet_v2_x1_0": (32, {}, True),
    # SiLU, sigmoid gates; hardswish, hardsigmoid gates: Nonlinear layers (the cpu backend runs them)
    "efficientnet_b0": (32, {}, True),
    "mobilenet_v3_small": (32, {}, True),
    "efficientnet_v2_s": (32, {}, True),
    # transformers (issue 28): torchvision's own, random weights, the smallest inputs they export at
    "vit_b_32": (64, {"image_size": 64}, True),
    "convnext_tiny": (32, {"layer_scale": 0.5}, True),  # layer scale 1e-6 would make every block the identity
    "swin_t": (32, {}, True),  # windows, roll, padding and patch merging: Gather layers (routing)
    # torchvision's VisionTransformer, small: LayerNorm, attention, GELU
    "vit": (32, {"image_size": 32, "patch_size": 8, "num_layers": 2, "num_heads": 4, "hidden_dim": 64,
                 "mlp_dim": 128}, True),
}
DEFAULT_T = [32, 64, 128, 256]


def progress(msg):
    if sys.stderr.isatty():
        print(msg, file=sys.stderr, flush=True)


def images(n, px, seed):
    import numpy as np
    import torch
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(seed)
    low = torch.randn(n, 3, 4, 4, generator=g)
    x = F.interpolate(low, size=(px, px), mode="bilinear", align_corners=False)
    x = x + 0.3 * torch.randn(n, 3, px, px, generator=g) + torch.randn(n, 1, 1, 1, generator=g) * 0.5
    return np.ascontiguousarray(x.numpy().astype(np.float32))


def build(name, px, kwargs, classes):
    import torch
    import torchvision
    torch.manual_seed(0)
    if name == "vit":
        net = torchvision.models.VisionTransformer(num_classes=classes, **kwargs)
    else:
        net = getattr(torchvision.models, name)(weights=None, num_classes=classes, **kwargs)
    if isinstance(net, torchvision.models.VisionTransformer):  # torchvision starts the head at zero
        torch.nn.init.normal_(net.heads.head.weight, std=0.2)
    for m in net.modules():  # cumulative averages over the batches below
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = None
            m.reset_running_stats()
    net.train()
    with torch.no_grad():
        for b in range(4):
            net(torch.from_numpy(images(16, px, 1000 + b)))
    return net.eval()


def nc(neuroc, args, timeout):
    """Runs neuroc; its status, its last stderr line (without the files' folder) and the seconds."""
    t0 = time.time()
    p = subprocess.run([neuroc] + args, capture_output=True, text=True, timeout=timeout)
    err = (p.stderr.strip().splitlines() or [""])[-1].replace(os.path.dirname(args[1]) + "/", "")
    return p.returncode, err.removeprefix("neuroc: "), time.time() - t0


def centred_cosine(a, b):
    import numpy as np
    a = a - a.mean(axis=0, keepdims=True)
    b = b - b.mean(axis=0, keepdims=True)
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def one(name, cfg):
    """All stages of one model; returns the row as a dict."""
    import numpy as np
    import torch
    px, kwargs, convertible = MODELS[name]
    if cfg["px"] and px < cfg["px"]:
        px = cfg["px"]
    row = {"model": name, "px": px, "expect_convert": convertible}
    if px >= 224:  # 49 times the work of 32 px: a quarter of the samples
        cfg = dict(cfg, ncalib=max(16, cfg["ncalib"] // 4), neval=max(8, cfg["neval"] // 4))
    row["samples"] = [cfg["ncalib"], cfg["neval"]]
    d = cfg["dir"]
    onnx, nir = os.path.join(d, name + ".onnx"), os.path.join(d, name + ".nir")
    xc, xe = os.path.join(d, name + "_calib.npy"), os.path.join(d, name + "_eval.npy")
    progress(f"{name}: build, BN statistics, export ({px} px)")
    net = build(name, px, kwargs, cfg["classes"])
    x_eval = images(cfg["neval"], px, 7)
    np.save(xc, images(cfg["ncalib"], px, 3))
    np.save(xe, x_eval)
    import copy
    with torch.no_grad():
        ref = net(torch.from_numpy(x_eval)).numpy()
        ref64 = copy.deepcopy(net).double()(torch.from_numpy(x_eval).double()).numpy()
    torch.onnx.export(net, torch.from_numpy(x_eval[:1]), onnx, opset_version=cfg["opset"],
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    row["onnx_bytes"] = os.path.getsize(onnx)
    nrc, to = cfg["neuroc"], cfg["cmd_timeout"]

    # 1: the ANN forward pass
    ya = os.path.join(d, name + "_ann.npy")
    rc, err, _ = nc(nrc, ["run", onnx, "--input", xe, "--output", ya], to)
    if rc != 0:
        row["run"] = "FAIL: " + err
    else:
        y = np.load(ya).reshape(ref.shape)
        dev = float(np.abs(y - ref64).max() / (np.abs(ref64).max() + 1e-30))
        row["run_dev"] = dev
        row["torch_f32_dev"] = float(np.abs(ref - ref64).max() / (np.abs(ref64).max() + 1e-30))
        row["run"] = "ok" if dev <= 1e-4 else f"FAIL: deviation {dev:.2e} of the output scale"

    if cfg["in_memory"]:
        return in_memory(row, cfg, onnx, xc, x_eval, ref, convertible)

    # 2: conversion with default options
    progress(f"{name}: convert")
    rc, err, secs = nc(nrc, ["convert", onnx, "--calib", xc, "-T", "32", "-o", nir] + cfg["convert"], to)
    row["convert_s"] = secs
    if rc != 0:
        row["convert"] = ("refused: " if not convertible else "FAIL: ") + err
        return row
    row["convert"] = "ok"
    row["nir_bytes"] = os.path.getsize(nir)

    # 3: bit-identical outputs of the loaded file
    progress(f"{name}: load (cpu, cpu-fast twice)")
    x3 = os.path.join(d, name + "_eval3.npy")
    np.save(x3, x_eval[:cfg["nload"]])
    outs = []
    for i, be in enumerate(["cpu", cfg["backend"], cfg["backend"]]):
        o = os.path.join(d, f"{name}_load{i}.npy")
        rc, err, _ = nc(nrc, ["run", nir, "--input", x3, "-T", "32", "--backend", be, "--output", o], to)
        if rc != 0:
            row["load"] = f"FAIL ({be}): " + err
            break
        outs.append(np.load(o))
    else:
        same = all(np.array_equal(outs[0], o) for o in outs[1:])
        row["load"] = "ok" if same else "FAIL: outputs differ between runs/backends"

    # the rate limit (`neuroc run --rate-limit`): the clipped ANN calibration defines, what readout/T approaches
    lim = None
    ol = os.path.join(d, f"{name}_limit.npy")
    rc, err, _ = nc(nrc, ["run", nir, "--input", xe, "--rate-limit", "--output", ol], to)
    if rc == 0:
        lim = np.load(ol).reshape(ref.shape)
        row["limit_cos"] = centred_cosine(lim, ref)
    else:
        row["limit_cos"] = "FAIL: " + err

    # 4: convergence towards the ANN (and towards the rate limit)
    row["cos"], row["cos_limit"] = {}, {}
    for t in cfg["T"]:
        progress(f"{name}: T = {t}")
        o = os.path.join(d, f"{name}_T{t}.npy")
        rc, err, _ = nc(nrc, ["run", nir, "--input", xe, "-T", str(t), "--backend", cfg["backend"], "--output", o], to)
        if rc != 0:
            row["cos"][t] = "FAIL: " + err
            continue
        s = np.load(o).reshape(ref.shape) / t
        row["cos"][t] = centred_cosine(s, ref)
        if lim is not None:
            row["cos_limit"][t] = centred_cosine(s, lim)
    return row


def in_memory(row, cfg, onnx, xc, x_eval, ref, convertible):
    """Stages 2 and 4 through the Python package: no .nir written or read."""
    import numpy as np
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    os.environ.setdefault("NEUROC_LIBRARY", os.path.join(os.path.dirname(cfg["neuroc"]), "libneuroc.so"))
    import warnings
    import neuroc
    progress(f"{row['model']}: convert (in memory)")
    t0 = time.time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            snn = neuroc.convert(onnx, np.load(xc), timesteps=32, **cfg["convert_kw"])
    except neuroc.Error as e:
        row["convert"] = ("refused: " if not convertible else "FAIL: ") + str(e).replace(os.path.dirname(onnx) + "/", "")
        return row
    row["convert_s"] = time.time() - t0
    row["convert"] = "ok"
    row["load"] = "skipped (in memory)"
    try:
        lim = snn.rate_limit(x_eval).reshape(ref.shape)
        row["limit_cos"] = centred_cosine(lim, ref)
    except neuroc.Error as e:
        lim, row["limit_cos"] = None, "FAIL: " + str(e)
    row["cos"], row["cos_limit"] = {}, {}
    for t in cfg["T"]:
        progress(f"{row['model']}: T = {t}")
        try:
            s = np.asarray(snn.run(x_eval, timesteps=t, backend=cfg["backend"])).reshape(ref.shape) / t
        except neuroc.Error as e:
            row["cos"][t] = "FAIL: " + str(e)
            continue
        row["cos"][t] = centred_cosine(s, ref)
        if lim is not None:
            row["cos_limit"][t] = centred_cosine(s, lim)
    return row


def fmt_bytes(n):
    return "–" if n is None else (f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.0f} KB")


def table_row(r, ts):
    def stage(k):  # the JSON has the whole message
        v = r.get(k, "–")
        return (v if len(v) <= 200 else v[:200] + " …").replace("|", "\\|")
    cos = []
    for t in ts:
        v = r.get("cos", {}).get(t, "–")
        if isinstance(v, str) and v.startswith("FAIL") and v.split(": ", 1)[-1] in r.get("load", ""):
            v = "FAIL (as 3)"
        cos.append(f"{v:.4f}" if isinstance(v, float) else str(v).replace("|", "\\|"))
    def num(v):
        return f"{v:.4f}" if isinstance(v, float) else ("FAIL" if str(v).startswith("FAIL") else "–")
    lim = [num(r.get("limit_cos")), num(r.get("cos_limit", {}).get(ts[-1]))]
    return "| " + " | ".join([r["model"], str(r.get("px", "–")), stage("run"), stage("convert"),
                              stage("load")] + cos + lim + [fmt_bytes(r.get("onnx_bytes")),
                                                             fmt_bytes(r.get("nir_bytes"))]) + " |"


def table_header(ts):
    return ("| model | px | 1 run | 2 convert | 3 load | " + " | ".join(f"cos T={t}" for t in ts)
            + f" | limit vs ANN | T={ts[-1]} vs limit | .onnx | .nir |\n|" + "---|" * (9 + len(ts)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("neuroc", nargs="?", default="build/neuroc")
    ap.add_argument("--models", help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--quick", action="store_true",
                    help="CI size: 64 calibration and 16 held-out samples, T = 32, 128")
    ap.add_argument("--T", help="comma-separated T of stage 4 (default 32,64,128,256)")
    ap.add_argument("--px", type=int, default=0, help="input size at least this (default: per model)")
    ap.add_argument("--opset", type=int, default=13, choices=[13, 17])
    ap.add_argument("--convert", default="", help="extra `neuroc convert` options, e.g. \"--plain-spikes "
                    "--threshold p99.9\" (default: none, the defaults)")
    ap.add_argument("--backend", default="cpu-fast", help="backend of stages 3 and 4 (default cpu-fast)")
    ap.add_argument("--in-memory", action="store_true", help="convert and run through the Python package, "
                    "no .nir (stage 3 skipped)")
    ap.add_argument("--convert-kw", default="{}", help="with --in-memory: neuroc.convert keyword arguments as "
                    "JSON, e.g. '{\"nonlinear_graded\": true}'")
    ap.add_argument("--classes", type=int, default=10, help="outputs of the classifier (default 10)")
    ap.add_argument("--calib", type=int, help="calibration samples (default 256)")
    ap.add_argument("--eval", type=int, help="held-out samples (default 64)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per model (default 1800)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--keep", help="keep the files in this folder")
    ap.add_argument("--_one", help=argparse.SUPPRESS)
    ap.add_argument("--_cfg", help=argparse.SUPPRESS)
    ap.add_argument("--render", help="print the table of a --json file instead of running")
    a = ap.parse_args()
    if a.render:
        rows = json.load(open(a.render))
        ts = sorted({int(t) for r in rows for t in r.get("cos", {})}) or DEFAULT_T
        print(table_header(ts))
        for r in rows:
            r["cos"] = {int(k): v for k, v in r.get("cos", {}).items()}
            r["cos_limit"] = {int(k): v for k, v in r.get("cos_limit", {}).items()}
            print(table_row(r, ts))
        return 0

    if a._one:  # child: one model, its row as JSON on stdout
        cfg = json.loads(a._cfg)
        cfg["T"] = [int(t) for t in cfg["T"]]
        try:
            row = one(a._one, cfg)
        except Exception as e:  # a failure of torch or of the export: the row says which
            row = {"model": a._one, "run": "FAIL: " + (str(e).strip().splitlines() or [type(e).__name__])[0][:160]}
        print(json.dumps(row))
        return 0

    names = a.models.split(",") if a.models else list(MODELS)
    for n in names:
        if n not in MODELS:
            ap.error(f"unknown model {n} (known: {','.join(MODELS)})")
    neuroc = os.path.abspath(a.neuroc)
    if not os.access(neuroc, os.X_OK):
        ap.error(f"{a.neuroc}: no neuroc binary there (build it, or give its path)")
    ts = [int(t) for t in a.T.split(",")] if a.T else ([32, 128] if a.quick else DEFAULT_T)
    work = a.keep or tempfile.mkdtemp(prefix="neuroc_zoo.")
    os.makedirs(work, exist_ok=True)
    cfg = {"neuroc": neuroc, "dir": work, "T": ts, "px": a.px, "opset": a.opset, "classes": a.classes,
           "ncalib": a.calib or (64 if a.quick else 256), "neval": a.eval or (16 if a.quick else 64),
           "nload": 4, "cmd_timeout": a.timeout, "convert": shlex.split(a.convert), "backend": a.backend,
           "in_memory": a.in_memory, "convert_kw": json.loads(a.convert_kw)}
    print(f"neuroc zoo: opset {a.opset}, convert options: {a.convert or '(defaults)'}, {cfg['ncalib']} calibration / {cfg['neval']} held-out samples, "
          f"{a.classes} classes, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print(table_header(ts))
    rows = []
    for n in names:
        t0 = time.time()
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--_one", n, "--_cfg", json.dumps(cfg)],
                               capture_output=True, text=True, timeout=a.timeout)
            lines = p.stdout.strip().splitlines()
            row = json.loads(lines[-1]) if p.returncode == 0 and lines else \
                {"model": n, "run": "FAIL: " + ((p.stderr.strip().splitlines() or ["crashed"])[-1])[:160]}
        except subprocess.TimeoutExpired:
            row = {"model": n, "run": f"TIMEOUT after {a.timeout:.0f} s"}
        row["seconds"] = time.time() - t0
        row["cos"] = {int(k): v for k, v in row.get("cos", {}).items()}
        row["cos_limit"] = {int(k): v for k, v in row.get("cos_limit", {}).items()}
        rows.append(row)
        print(table_row(row, ts), flush=True)
        progress(f"{n}: {row['seconds']:.0f} s")
        if not a.keep:
            for f in os.listdir(work):
                if f.startswith(n + "_") or f.startswith(n + "."):
                    os.remove(os.path.join(work, f))
    if not a.keep:
        os.rmdir(work)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
