#!/usr/bin/python3
"""Runs a neuroc spiking network (.nir written by neuroc) in PyTorch, the way
spikingjelly and snntorch run an SNN on a CPU, as the baseline that neuroc's
CPU backends are measured against. Two modes:

  step       (--mode step) one dense tensor operation per layer and step,
             over the whole batch: spikingjelly's single-step mode, snntorch;
  multistep  (--mode multistep, the stronger one) layer by layer over all
             T·N frames at once: every stateless layer (Conv2d, Affine,
             pooling, Flatten, Add, Concat) is one batched operation on
             (T·N, ...), only the neurons loop over T (spikingjelly's
             multi-step mode), and the spiking max pool needs no loop at all
             (its counts are cumulative sums over T).

The network is read from the file's /neuroc group (the lossless description
neuroc writes next to the NIR graph, layout in export/nir/nir_write.c): layer
kinds, inputs, original weights (stored plainly, or as the NIR weight's
columns divided by fold_factor with the bits XOR weight_xor), pool scales and
IF parameters; biases and conv/pool geometry come from the NIR nodes it
names, and every field of a layer NIR cannot express (SignedIF, MaxPool2d,
SpikeMaxPool2d, Concat, ...) from its neuroc.<kind> extension node
(export/nir/nir_ext.c).

Semantics are neuroc's (DESIGN §3, snn/backends/cpu_ref/backend_cpu_ref.c):
  IF        m = v + I; s = m >= θ; v = m − θ·s (or 0); out = s·spike value
  SignedIF  (kernels/neuron.h, nc_signed_if_step) m = v + I; up = m >= θ;
            down = m < 0 while the net count n > 0; s = clamp(floor(m/θ), 1, B)
            where up, clamp(floor(m/θ), −min(n, B), −1) where down, else 0;
            v = m − s·θ; n += s; out = s·spike value (B = max_spikes)
  SpikeMaxPool2d  (kernels/window_index.h) each input's net spike count, in
            units of its single spike (a burst of k adds k); the output's
            count follows its window's largest count and, when that moves by
            d, it sends d times the single spike of the first input, in
            window order, at the new max that moved that way now (else the
            first at the new max)
  MaxPool2d max of currents, padding ignored; Pool2d sum times a scale (or
            per-window divisors); the readout sums over the steps.
v(0) = θ/2 and spike value θ unless the file says otherwise. Layers whose
output is constant over time (the conv/affine chain fed only by the static,
direct-encoded input) are computed once, as neuroc does, so neither mode
does more work than it has to.

  /usr/bin/python3 bench/torch_snn.py model.nir [-T 8] [--batch 64]
        [--mode step|multistep] [--threads 2] [--data x.npy] [--iters N]
        [--check out.npy] [--check-spikes NEUROC] [--json]

Prints images/s; --check compares the summed readout of the first batch with
a (N, out) .npy written by `neuroc run ... --output` (max abs difference);
--check-spikes runs `neuroc run --record` for every spiking layer on the
first batch and counts the (step, sample, neuron) entries whose spikes
differ from this script's.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F

NEURONS = ("IF", "SignedIF")
# no state, output a function of this step's inputs (layer_kinds.c's `stateless`)
STATELESS = ("Affine", "Conv2d", "Pool2d", "Flatten", "Add", "Concat", "MaxPool2d", "Reshape", "Readout")
SUPPORTED = ("Input", "SpikeMaxPool2d") + NEURONS + STATELESS


# ---------------------------------------------------------------- reading

def _str(ds):
    v = ds[()]
    return v.decode() if isinstance(v, bytes) else str(v)


def _f32(g, name):
    return np.asarray(g[name][()], dtype=np.float32) if name in g else None


def _ints(g, name):
    return tuple(int(v) for v in np.asarray(g[name][()]).reshape(-1))


def _original_weight(gi, node, kind, groups):
    """The layer's own weight W. The NIR node's weight F may have the input's
    spike values folded into its columns; then /neuroc holds W plainly, or as
    F's columns divided by fold_factor with the bits XOR weight_xor
    (nir_read_neuroc.c's unfold_weight)."""
    if "weight" in gi:
        return _f32(gi, "weight")
    w = np.asarray(node["weight"], np.float32)
    if "weight_xor" not in gi:
        return w
    rows, cols = w.shape[0], w.shape[1]
    per_group = rows // groups if kind == "Conv2d" else rows
    f = _f32(gi, "fold_factor").reshape(-1, cols)[np.arange(rows) // per_group]  # (rows, cols)
    u = (w / f.reshape(f.shape + (1,) * (w.ndim - 2))).astype(np.float32)
    x = np.asarray(gi["weight_xor"][()], dtype=np.uint32).reshape(w.shape)
    return (u.view(np.uint32) ^ x).view(np.float32)


def _neuron(L, src, ext):
    """θ, v(0), spike value (each broadcastable over a frame), reset, bursts.
    A tensor holds 1 (per layer), C (per channel) or all values."""
    shape = L["shape"]

    def param(name):
        a = _f32(src, name)
        if a is None:
            return None
        t = torch.from_numpy(a.reshape(-1).copy())
        if t.numel() == 1:
            return t.reshape(())
        if t.numel() == shape[0] and len(shape) > 1:
            return t.reshape((-1,) + (1,) * (len(shape) - 1))
        return t.reshape(shape)

    for unsupported in ("v_reset", "r", "spike_gt", "exact", "pretest_sub"):
        if unsupported in src:  # other tools' NIR semantics: not what conversion writes
            sys.exit(f"layer '{L['name']}': '{unsupported}' (NIR neuron semantics) is not supported here")
    theta = param("threshold")
    L["theta"] = theta if theta is not None else torch.tensor(1.0)
    v0, sv = param("v_init"), param("spike_value")
    L["v0"] = v0 if v0 is not None else L["theta"] * 0.5
    L["sval"] = sv if sv is not None else L["theta"]
    # the extension node stores nc_reset_mode (2 = zero), /neuroc a flag (1 = zero)
    L["reset_zero"] = int(src["reset"][()]) == (2 if ext else 1) if "reset" in src else False
    L["burst"] = max(1, int(src["max_spikes"][()])) if "max_spikes" in src else 1
    if L["kind"] == "SignedIF" and L["reset_zero"]:
        sys.exit(f"layer '{L['name']}': a SignedIF with reset to zero (neuroc refuses it too)")


def _geometry(L, node, ext):
    if ext:  # neuroc.<kind>: kernel, stride, padding, dilation as int64 pairs
        L["kernel"] = _ints(node, "kernel")
        L["stride"], L["padding"] = _ints(node, "stride"), _ints(node, "padding")
        L["dilation"] = _ints(node, "dilation") if "dilation" in node else (1, 1)
    else:
        if "kernel_size" in node:
            L["kernel"] = _ints(node, "kernel_size")
        L["stride"], L["padding"] = _ints(node, "stride"), _ints(node, "padding")
        L["dilation"] = _ints(node, "dilation") if "dilation" in node else (1, 1)


def _layer(f, gi):
    L = {"kind": _str(gi["kind"]), "name": _str(gi["name"]),
         "inputs": [int(k) for k in np.asarray(gi["inputs"][()]).reshape(-1)],
         "shape": tuple(int(d) for d in gi["shape"][()])}
    k = L["kind"]
    if k not in SUPPORTED:
        sys.exit(f"layer '{L['name']}' of kind {k} is not supported by this script")
    node, ext = None, False
    if _str(gi["node"]):
        # neuroc's own graph: /neuroc/graph from format 4 (/node is the standard form), else /node
        node = f["neuroc/graph/nodes" if "graph" in f["neuroc"] else "node/nodes"][_str(gi["node"])]
        ext = _str(node["type"]).startswith("neuroc.")
    if k in ("Affine", "Conv2d"):
        L["groups"] = int(gi["groups"][()]) if k == "Conv2d" else 1
        L["weight"] = torch.from_numpy(_original_weight(gi, node, k, L["groups"]).copy())
        L["bias"] = torch.from_numpy(np.asarray(node["bias"], np.float32).copy())
    if k in ("Conv2d", "Pool2d", "MaxPool2d", "SpikeMaxPool2d"):
        _geometry(L, node, ext)
    if k == "Pool2d":
        src = node if ext else gi
        L["scale"] = torch.tensor(float(np.float32(src["scale"][()])), dtype=torch.float32)
        if ext and "div_taps" in node and int(node["div_taps"][()]):
            L["div_pad"] = _ints(node, "div_pad")
    if k == "Reshape":
        L["offset"] = _ints(node, "kernel")[0]
    if k in NEURONS:
        _neuron(L, node if ext else gi, ext)
    return L


def load(path):
    """The network: its layers as dicts (kind, inputs, shape, tensors) in IR
    order, and the output layer's index."""
    with h5py.File(path, "r") as f:
        if "neuroc" not in f:
            sys.exit(f"{path}: no /neuroc group (only networks written by neuroc are supported)")
        g = f["neuroc"]
        layers = [_layer(f, g[f"layers/{i}"]) for i in range(int(g["n_layers"][()]))]
        out = int(g["output"][()])
    _mark(layers)
    return layers, (out if out >= 0 else len(layers) - 1)


def _mark(layers):
    """Per layer: static (constant over the run: nc_snn_mark_static),
    signed (its values may be negative spikes: nc_snn_mark_signed), and for
    pools of every kind the per-window divisors and paddings they need."""
    for i, L in enumerate(layers):
        ins = [layers[j] for j in L["inputs"]]
        L["static"] = L["kind"] == "Input" or (L["kind"] in STATELESS and
                                               all(j < i and layers[j]["static"] for j in L["inputs"]))
        L["signed"] = L["kind"] == "SignedIF" or (L["kind"] in ("SpikeMaxPool2d", "Flatten", "Concat") and
                                                  any(X["signed"] for X in ins))
        if L["kind"] in ("Pool2d", "MaxPool2d", "SpikeMaxPool2d"):
            L["in_hw"] = ins[0]["shape"][1:]
            if "div_pad" in L:
                L["divisor"] = _divisors(L)
        L["unit"] = _units(L, ins)


def _units(L, ins):
    """The single-spike value of each output element that carries a burst
    layer's events (nc_snn_spike_units), 0 elsewhere; None: none does."""
    k = L["kind"]
    if k == "SignedIF":
        return L["sval"].expand(L["shape"]).clone() if L["burst"] > 1 else None
    if k == "Flatten" and ins[0]["unit"] is not None:
        return ins[0]["unit"].reshape(L["shape"])
    if k == "Concat" and any(X["unit"] is not None for X in ins):
        return torch.cat([(X["unit"] if X["unit"] is not None else torch.zeros(X["shape"])).reshape(-1)
                          for X in ins]).reshape(L["shape"])
    if k == "SpikeMaxPool2d" and ins[0]["unit"] is not None:  # the first tap of each window inside the input
        u, (_, OH, OW) = ins[0]["unit"], L["shape"]
        ih = (torch.arange(OH) * L["stride"][0] - L["padding"][0]).clamp(min=0)
        iw = (torch.arange(OW) * L["stride"][1] - L["padding"][1]).clamp(min=0)
        return u[:, ih][:, :, iw].clone()
    return None


def _span(o, k, stride, pad, n, cpad):
    lo, hi = o * stride - pad, o * stride - pad + k
    return max(0, min(hi, n + cpad) - max(lo, -cpad))


def _divisors(L):
    """1/(taps of each window counted within the input widened by div_pad):
    kernels/window_index.h's nc_pool_scale, PyTorch's partial windows."""
    (H, W), (_, OH, OW) = L["in_hw"], L["shape"]
    d = np.zeros((OH, OW), np.float32)
    for oh in range(OH):
        for ow in range(OW):
            n = _span(oh, L["kernel"][0], L["stride"][0], L["padding"][0], H, L["div_pad"][0]) * \
                _span(ow, L["kernel"][1], L["stride"][1], L["padding"][1], W, L["div_pad"][1])
            d[oh, ow] = np.float32(1.0) / np.float32(n) if n else 0.0
    return torch.from_numpy(d)


# ---------------------------------------------------------------- stateless layers
# Every function takes frames (B, *shape) and works for any B: N samples of
# one step, or all T·N frames of the run.

def _pad_windows(x, L, value):
    """x padded so that windows of stride s with no further padding give
    exactly the layer's output size: the padding in front, and at the end
    what a ceil-mode partial window reaches (or a crop of unused rows)."""
    (kh, kw), (sh, sw), (ph, pw) = L["kernel"], L["stride"], L["padding"]
    _, OH, OW = L["shape"]
    H, W = x.shape[-2:]
    need_h, need_w = (OH - 1) * sh + kh, (OW - 1) * sw + kw
    x = F.pad(x, (pw, max(0, need_w - W - pw), ph, max(0, need_h - H - ph)), value=value)
    return x[..., :need_h, :need_w]


def _sum_pool(L, x):
    y = F.avg_pool2d(_pad_windows(x, L, 0.0), L["kernel"], L["stride"], divisor_override=1)
    return y * (L["divisor"] if "divisor" in L else L["scale"])


def _max_pool(L, x):
    # taps in the padding do not count: pad with −inf
    return F.max_pool2d(_pad_windows(x, L, float("-inf")), L["kernel"], L["stride"])


def stateless(L, xs):
    """Output of a stateless layer from its inputs' frames."""
    k, x = L["kind"], xs[0]
    if k == "Affine":
        return F.linear(x, L["weight"], L["bias"])
    if k == "Conv2d":
        return F.conv2d(x, L["weight"], L["bias"], L["stride"], L["padding"], L["dilation"], L["groups"])
    if k == "Pool2d":
        return _sum_pool(L, x)
    if k == "MaxPool2d":
        return _max_pool(L, x)
    if k == "Flatten":
        return x.reshape(x.shape[0], -1)
    if k == "Reshape":  # values [offset, offset + size) of each frame
        size = int(np.prod(L["shape"]))
        return x.reshape(x.shape[0], -1)[:, L["offset"]:L["offset"] + size].reshape((-1,) + L["shape"])
    if k == "Add":
        y = x
        for z in xs[1:]:
            y = y + z
        return y
    if k == "Concat":
        return torch.cat(xs, dim=1)
    if k == "Readout":
        return x
    raise AssertionError(k)


# ---------------------------------------------------------------- neurons

def neuron_state(L, n):
    """Membrane (and net count) of n samples at the start of a run."""
    st = {"v": L["v0"].expand((n,) + L["shape"]).clone()}
    if L["kind"] == "SignedIF":
        st["net"] = torch.zeros((n,) + L["shape"])
    return st


def neuron_step(L, st, current, forced=None):
    """One step of an IF or SignedIF layer over a batch; returns the signed
    spike counts s (float) of the step. forced (the spike check): neuroc's
    spikes of the step, which are tallied against these and then drive the
    state instead, so that a float-rounding flip does not cascade."""
    m = st["v"] + current
    s = _spikes(L, st, m)
    if forced is not None:
        _tally(L, st, m, s, forced)
        s = forced
    if L["reset_zero"]:  # plain IF only: signed spikes need the subtractive reset
        st["v"] = torch.where(s != 0, torch.zeros_like(m), m)
    else:
        st["v"] = m - s * L["theta"]  # s = ±1: m ∓ θ exactly as the C code; s = 0: m
    if "net" in st:
        st["net"].add_(s)
    return s


def _spikes(L, st, m):
    theta = L["theta"]
    up = m >= theta
    if L["kind"] == "IF":
        return up.to(m.dtype)
    net = st["net"]
    down = (m < 0) & (net > 0)
    if L["burst"] == 1:
        return up.to(m.dtype) - down.to(m.dtype)
    # up to B spikes of either sign: floor(m/θ) clipped (nc_signed_if_step)
    B = float(L["burst"])
    q = torch.floor(m / theta)
    s_up = q.clamp(1.0, B)
    s_down = torch.maximum(q, -net.clamp(max=B)).clamp(max=-1.0)
    return torch.where(up, s_up, torch.where(down, s_down, torch.zeros_like(m)))


def _tally(L, st, m, s, ref, rel=1e-4):
    """Counts where s differs from neuroc's spikes ref, and how many of those
    have m within rel·θ of a decision boundary (0 or k·θ, |k| <= B): a
    different float summation order can flip those; a flip elsewhere is a
    wrong rule."""
    differ = s != ref
    theta = L["theta"].expand(m.shape)
    ks = torch.arange(-L["burst"], L["burst"] + 1, dtype=m.dtype)
    gap = (m.unsqueeze(-1) - ks * theta.unsqueeze(-1)).abs().amin(-1)
    near = differ & (gap <= rel * theta)
    t = st.setdefault("tally", [0, 0])
    t[0] += int(differ.sum())
    t[1] += int(near.sum())


# ---------------------------------------------------------------- spiking max pool

def _windows(L, x):
    """(B, C, H, W) -> (B, C, kh·kw, OH·OW), zeros in the padding."""
    B, C = x.shape[:2]
    xw = F.unfold(_pad_windows(x, L, 0.0), L["kernel"], stride=L["stride"])
    return xw.reshape(B, C, L["kernel"][0] * L["kernel"][1], -1)


def spikemax_frames(L, L_in, x, cnt, prev=None, n=0):
    """Output values of a SpikeMaxPool2d for frames x (input spikes), cnt
    (every input's net count including the frame) and prev (the output's
    count before the frame); returns (values, the output's new count).
    Without prev, x holds all T·n frames of a run in time order: the
    output's count follows the window max every step, so its count before a
    frame is the max n frames earlier (0 at the start). Counts are never
    negative, so zeros in the padding never win a max."""
    xw, cw = _windows(L, x), _windows(L, cnt)
    dw = _windows(L, spike_delta(L_in, x))                # each tap's move this frame
    m = cw.amax(dim=2)                                    # (B, C, L): the window's largest count
    prev = prev.reshape(m.shape) if prev is not None else torch.cat([torch.zeros_like(m[:n]), m[:-n]])
    d = m - prev
    # the winner: the first tap (window order) at the new max that moved in d's direction now, else
    # the first at the new max
    at = cw == m.unsqueeze(2)
    cand = at & torch.where((d > 0).unsqueeze(2), dw > 0, dw < 0)
    K = cw.shape[2]
    rank = torch.arange(K, 0, -1, dtype=torch.float32).reshape(1, 1, K, 1)
    first = torch.where(cand.any(dim=2, keepdim=True), (cand * rank).argmax(dim=2, keepdim=True),
                        (at * rank).argmax(dim=2, keepdim=True))  # unique maxima: no reliance on tie order
    xv, dv = xw.gather(2, first).squeeze(2), dw.gather(2, first).squeeze(2)
    if L_in["unit"] is not None:
        uw = _windows(L, L_in["unit"].expand(x.shape).contiguous()).gather(2, first).squeeze(2)
    else:
        uw = torch.zeros_like(xv)
    one = torch.where(uw > 0, uw, torch.where(dv != 0, xv / torch.where(dv != 0, dv, torch.ones_like(dv)),
                                              torch.zeros_like(xv)))
    y = torch.where(d != 0, d * one, torch.zeros_like(one))
    return y.reshape((x.shape[0],) + L["shape"]), m.reshape((x.shape[0],) + L["shape"])


def spike_delta(L_in, x):
    """What a frame adds to each input's count (nc_spike_count_delta): 0 for
    0, else k = |x| / unit rounded (at least 1; 1 without a unit), negative
    for a negative value of a signed input."""
    if L_in["unit"] is None:
        k = (x != 0).to(x.dtype)
    else:
        unit = L_in["unit"].expand(x.shape)
        q = x.abs() / torch.where(unit > 0, unit, torch.ones_like(unit))
        k = torch.where((unit > 0) & (q >= 1.5), torch.floor(q + 0.5), torch.ones_like(q)) * (x != 0)
    return torch.where(x < 0, -k, k) if L_in["signed"] else k


# ---------------------------------------------------------------- runs

def _last_use(layers, out_id):
    last = list(range(len(layers)))
    for i, L in enumerate(layers):
        for j in L["inputs"]:
            last[j] = max(last[j], i)
    last[out_id] = len(layers)
    return last


def run_step(layers, out_id, x, T, record=None, force=None, states=None):
    """Readout summed over T steps for a static direct-encoded batch x: every
    layer once a step (static ones once). record: {layer index: list} gets
    each step's spikes of those layers. force: {layer index: (T, N, ...)
    spikes} drives those neuron layers with neuroc's spikes (the spike
    check); states (a dict) gets every stateful layer's state, whose "tally"
    says where a forced layer's own spikes differed."""
    N = x.shape[0]
    val = [None] * len(layers)
    state = {}
    for i, L in enumerate(layers):
        if L["kind"] in NEURONS:
            state[i] = neuron_state(L, N)
        elif L["kind"] == "SpikeMaxPool2d":
            state[i] = {"cnt": torch.zeros((N,) + layers[L["inputs"][0]]["shape"]),
                        "out": torch.zeros((N,) + L["shape"])}
    if states is not None:
        states.update(state)
    acc = None
    for t in range(T):
        for i, L in enumerate(layers):
            if L["static"] and t > 0:
                continue
            k = L["kind"]
            xs = [val[j] for j in L["inputs"]]
            if k == "Input":
                val[i] = x
            elif k in NEURONS:
                s = neuron_step(L, state[i], xs[0], force[i][t] if force and i in force else None)
                val[i] = s * L["sval"]
                if record is not None and i in record:
                    record[i].append(s)
            elif k == "SpikeMaxPool2d":
                st = state[i]
                st["cnt"] += spike_delta(layers[L["inputs"][0]], xs[0])
                val[i], st["out"] = spikemax_frames(L, layers[L["inputs"][0]], xs[0], st["cnt"], st["out"])
                if force and i in force:  # no rounding here: any difference is a wrong rule
                    st.setdefault("tally", [0, 0])[0] += int((torch.sign(val[i]) != force[i][t]).sum())
                if record is not None and i in record:
                    record[i].append(torch.sign(val[i]))
            else:
                val[i] = stateless(L, xs)
        o = val[out_id]
        acc = o.clone() if acc is None else acc + o
    return acc


def _frames(v, dyn, T):
    """A value as T·N frames: a static (N, ...) value repeated T times."""
    return v if dyn else v.unsqueeze(0).expand((T,) + v.shape).reshape((T * v.shape[0],) + v.shape[1:])


def run_multistep(layers, out_id, x, T, record=None):
    """The same readout, layer by layer over all T·N frames: stateless layers
    as one batched operation on (T·N, ...), neurons looping over T inside the
    layer, the spiking max pool vectorised over T (its input counts are
    cumulative sums). Values are freed after their last reader."""
    N = x.shape[0]
    last = _last_use(layers, out_id)
    val, dyn = [None] * len(layers), [False] * len(layers)
    for i, L in enumerate(layers):
        k = L["kind"]
        if k == "Input":
            val[i] = x
        elif k in NEURONS:
            j = L["inputs"][0]
            cur = val[j].reshape((T, N) + L["shape"]) if dyn[j] else None
            st = neuron_state(L, N)
            s = torch.empty((T, N) + L["shape"])
            for t in range(T):
                s[t] = neuron_step(L, st, cur[t] if cur is not None else val[j])
            if record is not None and i in record:
                record[i].extend(s.unbind(0))
            val[i], dyn[i] = (s * L["sval"]).reshape((T * N,) + L["shape"]), True
        elif k == "SpikeMaxPool2d":
            j = L["inputs"][0]
            xin = _frames(val[j], dyn[j], T)
            cnt = spike_delta(layers[j], xin).reshape((T, N) + layers[j]["shape"]).cumsum(0)
            val[i], _ = spikemax_frames(L, layers[j], xin, cnt.reshape(xin.shape), n=N)
            dyn[i] = True
            if record is not None and i in record:
                record[i].extend(torch.sign(val[i]).reshape((T, N) + L["shape"]).unbind(0))
        else:
            ins = L["inputs"]
            d = any(dyn[j] for j in ins)
            val[i] = stateless(L, [_frames(val[j], dyn[j], T) if d else val[j] for j in ins])
            dyn[i] = d
        for j in L["inputs"]:
            if last[j] == i:
                val[j] = None
    o = val[out_id]
    return o.reshape((T, N) + o.shape[1:]).sum(0) if dyn[out_id] else o * T


RUNS = {"step": run_step, "multistep": run_multistep}


# ---------------------------------------------------------------- checks

def neuroc_spikes(neuroc, model, name, x, T):
    """neuroc's reference backend's spikes of one layer: (T, N, *shape)."""
    with tempfile.TemporaryDirectory() as d:
        xin, rec = os.path.join(d, "x.npy"), os.path.join(d, "rec.npy")
        np.save(xin, x.numpy())
        subprocess.run([neuroc, "run", model, "--backend", "cpu", "--input", xin, "-T", str(T),
                        "--record", rec, "--layer", name], check=True, stdout=subprocess.DEVNULL)
        return torch.from_numpy(np.load(rec).astype(np.float32))


def check_spikes(neuroc, model, layers, out_id, x, T, mode):
    """Spike-level agreement with neuroc's reference backend, two ways:
    free   this script's spikes of every spiking layer against neuroc's:
           (step, sample, neuron) entries that differ. One flip from a
           different float summation order changes everything downstream, so
           in deep random-weight networks this grows with depth;
    forced every spiking layer driven by neuroc's spikes (run_step's force)
           while its own are compared: differing entries, and those not
           within 1e-4·θ of a decision boundary (nonzero = a wrong rule).
    Returns {layer name: (free differing, forced differing, forced not at a
    boundary, compared)} and the forced run's summed readout."""
    spiking = [i for i, L in enumerate(layers) if L["kind"] in NEURONS + ("SpikeMaxPool2d",)]
    ref = {i: neuroc_spikes(neuroc, model, layers[i]["name"], x, T) for i in spiking}
    record = {i: [] for i in spiking}
    RUNS[mode](layers, out_id, x, T, record=record)
    states = {}
    forced_readout = run_step(layers, out_id, x, T, force=ref, states=states)
    res = {}
    for i in spiking:
        free = int((torch.stack(record[i]).reshape(ref[i].shape) != ref[i]).sum())
        differ, near = states[i].get("tally", [0, 0])
        far = differ - near if layers[i]["kind"] in NEURONS else differ
        res[layers[i]["name"]] = (free, differ, far, ref[i].numel())
    return res, forced_readout


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("-T", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--mode", choices=list(RUNS), default="step",
                    help="step: one op per layer and step; multistep: stateless layers over all T·N frames at once")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument("--data", help=".npy of samples (N, *input), float32; default random in [0,1)")
    ap.add_argument("--iters", type=int, default=0, help="batches to time (0 = --min-time worth)")
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds to time when --iters is 0")
    ap.add_argument("--check", help="(N, out) .npy from neuroc run: print the max abs difference")
    ap.add_argument("--check-spikes", metavar="NEUROC",
                    help="compare every spiking layer's spikes with `NEUROC run --record` on the first batch")
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
    run = RUNS[a.mode]
    res = {"backend": "torch-" + a.mode, "model": a.model, "T": a.T, "batch": a.batch}
    with torch.inference_mode():
        y = run(layers, out_id, x, a.T)  # warm-up (and --check)
        if a.check:
            ref = np.load(a.check)
            n = min(ref.shape[0], y.shape[0])
            res["max_abs_diff"] = float(np.abs(ref[:n] - y[:n].numpy()).max())
            res["max_abs_ref"] = float(np.abs(ref[:n]).max())
        if a.check_spikes:
            sp, yf = check_spikes(a.check_spikes, a.model, layers, out_id, x, a.T, a.mode)
            if a.check:
                res["max_abs_diff_forced"] = float(np.abs(ref[:n] - yf[:n].numpy()).max())
            res["spikes_compared"] = sum(v[3] for v in sp.values())
            res["spikes_differing"] = sum(v[0] for v in sp.values())
            res["spikes_differing_forced"] = sum(v[1] for v in sp.values())
            res["spikes_wrong_forced"] = sum(v[2] for v in sp.values())
            res["spikes_per_layer"] = {k: v[:3] for k, v in sp.items()}
        iters = a.iters
        if iters <= 0:
            t0 = time.perf_counter()
            run(layers, out_id, x, a.T)
            iters = max(3, int(a.min_time / max(time.perf_counter() - t0, 1e-6)))
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(iters):
            run(layers, out_id, x, a.T)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    res.update(threads=torch.get_num_threads(), images_per_s=iters * a.batch / dt, iters=iters,
               cpu_s_per_image=cpu / (iters * a.batch), torch=torch.__version__)
    if a.json:
        print(json.dumps(res))
        return
    print(f"torch {torch.__version__} ({a.mode}), {res['threads']} threads: {a.model} T={a.T} "
          f"batch={a.batch}: {res['images_per_s']:.1f} images/s ({iters} batches)")
    if "max_abs_diff" in res:
        print(f"max |torch - neuroc| over the summed readout: {res['max_abs_diff']:.3g} "
              f"(largest |readout| {res['max_abs_ref']:.3g})")
    if "spikes_compared" in res:
        print(f"spikes vs neuroc's, of {res['spikes_compared']} (step, sample, neuron) entries: "
              f"{res['spikes_differing']} differ running freely; driven by neuroc's spikes "
              f"{res['spikes_differing_forced']} differ, {res['spikes_wrong_forced']} of them not at a "
              f"decision boundary (float rounding)" + (f"; readout driven by neuroc's spikes: max |diff| "
                                                        f"{res['max_abs_diff_forced']:.3g}" if a.check else ""))
        differing = [f"{k} {v}" for k, v in res["spikes_per_layer"].items() if any(v)]
        if differing:
            print("layers with differences (free, forced, forced not at a boundary): " + ", ".join(differing))


if __name__ == "__main__":
    main()
