#!/usr/bin/python3
"""Steps a neuroc spiking network (.nir written by neuroc) in PyTorch, the way
spikingjelly and snntorch run an SNN on a CPU: one dense tensor operation per
layer and step, over the whole batch.

The network is read from the file's /neuroc group (the lossless description
neuroc writes next to the NIR graph, see export/nir/nir_write.c): layer kinds,
inputs, original weights, IF thresholds, v(0), spike values, reset modes and
pool scales; biases and conv/pool geometry come from the NIR nodes it names.
Semantics are neuroc's (DESIGN §3): m = v + I; s = m >= θ; v = m − θ·s (or 0);
a spike carries its spike value (θ by default); the readout sums over steps.

Layers whose output is constant over time (the conv/affine chain fed only by
a direct-encoded static input) are computed once, as neuroc does, so the
baseline does no more work than it has to.

  /usr/bin/python3 bench/torch_snn.py model.nir [-T 8] [--batch 64]
        [--threads 2] [--data x.npy] [--iters N] [--check out.npy] [--json]

Prints images/s; --check compares the summed readout of the first batch with
a (N, out) .npy written by `neuroc run ... --output` (max abs difference).
"""
import argparse
import json
import sys
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F


def _str(ds):
    v = ds[()]
    return v.decode() if isinstance(v, bytes) else str(v)


def _opt(g, name):
    return np.asarray(g[name][()], dtype=np.float32) if name in g else None


def load(path):
    """The network as a list of dicts (kind, inputs, tensors), in IR order."""
    f = h5py.File(path, "r")
    if "neuroc" not in f:
        sys.exit(f"{path}: no /neuroc group (only networks written by neuroc are supported)")
    g = f["neuroc"]
    nodes = f["node/nodes"]
    layers = []
    for i in range(int(g["n_layers"][()])):
        gi = g[f"layers/{i}"]
        L = {"kind": _str(gi["kind"]), "name": _str(gi["name"]),
             "inputs": [int(k) for k in gi["inputs"][()]],
             "shape": tuple(int(d) for d in gi["shape"][()])}
        node = nodes[_str(gi["node"])] if _str(gi["node"]) else None
        k = L["kind"]
        if k in ("Affine", "Conv2d"):
            w = _opt(gi, "weight")
            L["weight"] = torch.from_numpy(w if w is not None else np.asarray(node["weight"], np.float32))
            L["bias"] = torch.from_numpy(np.asarray(node["bias"], np.float32))
        if k == "Conv2d":
            L["stride"] = tuple(int(v) for v in node["stride"][()])
            L["padding"] = tuple(int(v) for v in node["padding"][()])
            L["dilation"] = tuple(int(v) for v in node["dilation"][()])
            L["groups"] = int(gi["groups"][()])
        if k == "Pool2d":
            L["kernel"] = tuple(int(v) for v in node["kernel_size"][()])
            L["stride"] = tuple(int(v) for v in node["stride"][()])
            L["padding"] = tuple(int(v) for v in node["padding"][()])
            L["scale"] = float(gi["scale"][()])
        if k == "IF":
            def param(name, dflt):
                a = _opt(gi, name)
                if a is None:
                    return None if dflt is None else torch.tensor(dflt)
                t = torch.from_numpy(a.reshape(-1))
                if t.numel() == 1:
                    return t.reshape(())
                if t.numel() == L["shape"][0] and len(L["shape"]) > 1:
                    return t.reshape((-1,) + (1,) * (len(L["shape"]) - 1))
                return t.reshape(L["shape"])
            L["theta"] = param("threshold", 1.0)
            v0, sv = param("v_init", None), param("spike_value", None)
            L["v0"] = v0 if v0 is not None else L["theta"] * 0.5
            L["sval"] = sv if sv is not None else L["theta"]
            L["reset_zero"] = int(gi["reset"][()]) == 1
        if k not in ("Input", "Affine", "Conv2d", "Pool2d", "Flatten", "Add", "IF", "Readout"):
            sys.exit(f"{path}: layer '{L['name']}' of kind {k} is not supported by this script")
        layers.append(L)
    out = int(g["output"][()])
    return layers, (out if out >= 0 else len(layers) - 1)


def static_layers(layers):
    """Layers whose output is constant over time with a direct static input."""
    st = []
    for i, L in enumerate(layers):
        if L["kind"] == "Input":
            st.append(True)
        elif L["kind"] in ("Affine", "Conv2d", "Pool2d", "Flatten", "Add"):
            st.append(all(j < i and st[j] for j in L["inputs"]))
        else:
            st.append(False)
    return st


def run(layers, out_id, x, T):
    """Readout summed over T steps for a static direct-encoded batch x."""
    st = static_layers(layers)
    N = x.shape[0]
    val = [None] * len(layers)
    v = {}
    for i, L in enumerate(layers):
        if L["kind"] == "IF":
            v[i] = L["v0"].expand((N,) + L["shape"]).clone()
    acc = None
    for t in range(T):
        for i, L in enumerate(layers):
            if st[i] and t > 0:
                continue
            k = L["kind"]
            xs = [val[j] if val[j] is not None else None for j in L["inputs"]]
            if k == "Input":
                val[i] = x
            elif k == "Affine":
                val[i] = F.linear(xs[0], L["weight"], L["bias"])
            elif k == "Conv2d":
                val[i] = F.conv2d(xs[0], L["weight"], L["bias"], L["stride"], L["padding"],
                                  L["dilation"], L["groups"])
            elif k == "Pool2d":
                val[i] = F.avg_pool2d(xs[0], L["kernel"], L["stride"], L["padding"],
                                      count_include_pad=True, divisor_override=1) * L["scale"]
            elif k == "Flatten":
                val[i] = xs[0].reshape(N, -1)
            elif k == "Add":
                y = xs[0]
                for z in xs[1:]:
                    y = y + z
                val[i] = y
            elif k == "IF":
                m = v[i] + xs[0]
                s = m >= L["theta"]
                if L["reset_zero"]:
                    v[i] = torch.where(s, torch.zeros_like(m), m)
                else:
                    v[i] = m - L["theta"] * s
                val[i] = s * L["sval"]
            elif k == "Readout":
                val[i] = xs[0]
        o = val[out_id]
        acc = o.clone() if acc is None else acc + o
    return acc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("-T", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument("--data", help=".npy of samples (N, *input) as float32 in [0,1]; default random")
    ap.add_argument("--iters", type=int, default=0, help="batches to time (0 = --min-time worth)")
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds to time when --iters is 0")
    ap.add_argument("--check", help="(N, out) .npy from neuroc run: print the max abs difference")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    layers, out_id = load(a.model)
    in_shape = layers[0]["shape"]
    if a.data:
        d = np.load(a.data).astype(np.float32)
        d = d.reshape((d.shape[0],) + in_shape)
    else:
        d = np.random.default_rng(0).random((a.batch,) + in_shape, dtype=np.float32)
    reps = -(-a.batch // d.shape[0])
    x = torch.from_numpy(np.concatenate([d] * reps)[: a.batch].copy())
    with torch.inference_mode():
        y = run(layers, out_id, x, a.T)  # warm-up (and --check)
        diff = None
        if a.check:
            ref = np.load(a.check)
            n = min(ref.shape[0], y.shape[0])
            diff = float(np.abs(ref[:n] - y[:n].numpy()).max())
        iters = a.iters
        if iters <= 0:
            t0 = time.perf_counter()
            run(layers, out_id, x, a.T)
            iters = max(3, int(a.min_time / max(time.perf_counter() - t0, 1e-6)))
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(iters):
            run(layers, out_id, x, a.T)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    ips = iters * a.batch / dt
    res = {"backend": "torch", "model": a.model, "T": a.T, "batch": a.batch,
           "threads": torch.get_num_threads(), "images_per_s": ips, "iters": iters,
           "cpu_s_per_image": cpu / (iters * a.batch),
           "torch": torch.__version__}
    if diff is not None:
        res["max_abs_diff"] = diff
    if a.json:
        print(json.dumps(res))
    else:
        print(f"torch {torch.__version__}, {res['threads']} threads: {a.model} T={a.T} batch={a.batch}: "
              f"{ips:.1f} images/s ({iters} batches)")
        if diff is not None:
            print(f"max |torch - neuroc| over the summed readout: {diff:.3g}")


if __name__ == "__main__":
    main()
