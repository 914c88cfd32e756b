"""One NIR file per node type of the nir 1.0.8 spec, written with the nir
package, and what the spec says it computes (a numpy reference of the
node docstrings), for tests/test_nir_spec.sh.

usage: nir_spec_cases.py OUTDIR
Writes OUTDIR/<case>.nir, <case>.x.npy (input, T x 1 x shape) and
<case>.y.npy (the reference output every step, T x 1 x shape), and
OUTDIR/cases.txt: one line per case, "<case> <neuroc run options>".

The reference follows the docstrings with neuroc's documented
discretisation (docs/nir.md): a step of dt; IF and I add r*I a step; LIF,
CubaLIF, LI, CubaLI forward Euler v += dt/tau*(v_leak - v + r*I) (or
exact: 1 - exp(-dt/tau) for dt/tau); a spike when v > v_threshold, then
v = v_reset; v(0) = 0; every node sees its inputs of the same step; Delay
by delay/dt steps. Float32 throughout, in the same order of operations.
"""
import os
import sys

import numpy as np

import nir

F = np.float32
T = 12
rng = np.random.default_rng(1234)
cases = []


def save(name, graph, x, y, opts=""):
    out = sys.argv[1]
    nir.write(os.path.join(out, name + ".nir"), graph)
    np.save(os.path.join(out, name + ".x.npy"), x.astype(F))
    np.save(os.path.join(out, name + ".y.npy"), np.asarray(y, dtype=F))
    cases.append(f"{name} {opts}".strip())


def chain(name, nodes, in_shape, out_shape, x, y, opts=""):
    """Input -> nodes (in order) -> Output."""
    d = {"input": nir.Input(input_type=np.array(in_shape))}
    keys = []
    for k, n in nodes:
        d[k] = n
        keys.append(k)
    d["output"] = nir.Output(output_type=np.array(out_shape))
    names = ["input"] + keys + ["output"]
    edges = list(zip(names[:-1], names[1:]))
    save(name, nir.NIRGraph(nodes=d, edges=edges, type_check=False), x, y, opts)


def series(shape, lo=-0.5, hi=1.0):
    return rng.uniform(lo, hi, size=(T, 1) + tuple(shape)).astype(F)


# ---- neurons (spec semantics) ----


@np.errstate(invalid="ignore")  # 0 * inf where tau = r = inf: np.where picks the limit
def ref_neuron(x, kind, p, dt=F(1e-4), exact=False):
    v = np.zeros(x.shape[1:], F)
    isyn = np.zeros(x.shape[1:], F)
    out = []

    def coef(tau):
        tau = tau.astype(np.float64)
        a = np.where(np.isinf(tau), 0.0, (-np.expm1(-float(dt) / tau)) if exact else float(dt) / tau)
        return a.astype(F)

    for t in range(x.shape[0]):
        cur = x[t]
        if kind in ("CubaLIF", "CubaLI"):
            a_s = coef(p["tau_syn"])
            isyn = np.where(np.isinf(p["w_in"]), isyn + cur, isyn + a_s * (p["w_in"] * cur - isyn)).astype(F)
            cur = isyn
        if kind in ("IF", "I"):
            m = (v + p["r"] * cur).astype(F)
        else:
            a = coef(p["tau"])
            d = np.where(np.isinf(p["r"]), cur, a * ((p["v_leak"] - v) + p["r"] * cur)).astype(F)
            m = (v + d).astype(F)
        if kind in ("IF", "LIF", "CubaLIF"):
            s = m > p["v_threshold"]
            v = np.where(s, p["v_reset"], m).astype(F)
            out.append(s.astype(F))
        else:
            v = m
            out.append(v.copy())
    return np.stack(out)


def full(v, n=4):
    return np.full(n, v, F)


# the one-neuron threshold file: 0.5 a step, theta 1: spikes at steps 3, 6, 9, 12
x = np.full((T, 1, 1), 0.5, F)
p = dict(r=full(1, 1), v_threshold=full(1, 1), v_reset=full(0, 1))
chain("if_threshold", [("if", nir.IF(r=p["r"], v_threshold=p["v_threshold"]))], [1], [1], x,
      ref_neuron(x, "IF", p))

x = series([4])
p = dict(r=np.array([1, 2, 0.5, 1.5], F), v_threshold=np.array([1, 0.7, 0.3, 2], F),
         v_reset=np.array([0, -0.5, 0.1, 0.25], F))
chain("if_r_vreset", [("if", nir.IF(**p))], [4], [4], x, ref_neuron(x, "IF", p))

dt = F(1e-3)
p = dict(tau=np.array([2e-3, 5e-3, 1e-2, 3e-3], F), r=np.array([1, 2, 5, 3], F),
         v_leak=np.array([0, 0.1, -0.1, 0], F), v_threshold=np.array([0.5, 0.3, 0.8, 0.4], F),
         v_reset=np.array([0, -0.1, 0, 0.05], F))
x = series([4], 0, 1.5)
chain("lif", [("lif", nir.LIF(**p))], [4], [4], x, ref_neuron(x, "LIF", p, dt), "--dt 1e-3")
chain("lif_exact", [("lif", nir.LIF(**p))], [4], [4], x, ref_neuron(x, "LIF", p, dt, True),
      "--dt 1e-3 --integration exact")
pinf = dict(tau=full(np.inf), r=full(np.inf), v_leak=full(0), v_threshold=full(1), v_reset=full(0))
x = series([4], 0, 0.6)
chain("lif_inf", [("lif", nir.LIF(**pinf))], [4], [4], x, ref_neuron(x, "LIF", pinf, dt), "--dt 1e-3")

p = dict(tau_syn=np.array([2e-3, 4e-3, 1e-2, 5e-3], F), tau_mem=np.array([5e-3, 2e-3, 1e-2, 4e-3], F),
         r=np.array([2, 1, 4, 3], F), v_leak=full(0), v_threshold=np.array([0.3, 0.2, 0.5, 0.4], F),
         v_reset=full(0), w_in=np.array([1, 2, 0.5, 1], F))
x = series([4], 0, 2)
q = dict(p, tau=p["tau_mem"])
chain("cubalif", [("n", nir.CubaLIF(**p))], [4], [4], x, ref_neuron(x, "CubaLIF", q, dt), "--dt 1e-3")

p = dict(tau=np.array([2e-3, 5e-3, 1e-2, 3e-3], F), r=np.array([1, 2, 5, 3], F),
         v_leak=np.array([0, 0.1, -0.1, 0], F))
x = series([4])
chain("li", [("li", nir.LI(**p))], [4], [4], x, ref_neuron(x, "LI", p, dt), "--dt 1e-3")

p = dict(tau_syn=np.array([2e-3, 4e-3, 1e-2, 5e-3], F), tau_mem=np.array([5e-3, 2e-3, 1e-2, 4e-3], F),
         r=np.array([2, 1, 4, 3], F), v_leak=full(0), w_in=np.array([1, 2, 0.5, 1], F))
q = dict(p, tau=p["tau_mem"])
chain("cubali", [("li", nir.CubaLI(**p))], [4], [4], x, ref_neuron(x, "CubaLI", q, dt), "--dt 1e-3")

p = dict(r=np.array([1, 2, 0.5, -1], F))
chain("integrator", [("i", nir.I(**p))], [4], [4], x, ref_neuron(x, "I", p))

th = np.array([0, 0.2, 0.5, -0.1], F)
chain("threshold", [("th", nir.Threshold(threshold=th))], [4], [4], x, (x > th).astype(F))

# ---- stateless and structural nodes ----
W = rng.normal(size=(3, 4)).astype(F)
b = rng.normal(size=3).astype(F)
sc = np.array([2, -1, 0.5], F)
y = np.einsum("oi,tni->tno", W, x) + b
chain("affine_scale", [("fc", nir.Affine(weight=W, bias=b)), ("sc", nir.Scale(scale=sc))], [4], [3], x,
      (y * sc).astype(F))
chain("linear", [("fc", nir.Linear(weight=W))], [4], [3], x, np.einsum("oi,tni->tno", W, x).astype(F))

steps = 3
chain("delay", [("d", nir.Delay(delay=np.full(4, steps * 1e-3, F)))], [4], [4], x,
      np.concatenate([np.zeros((steps, 1, 4), F), x[:-steps]]), "--dt 1e-3")
# a delay per neuron: neuron i is x_i(t - d_i)
per = np.array([0, 1, 3, 3])
y = np.stack([np.concatenate([np.zeros((d, 1), F), x[:len(x) - d, :, i]]) for i, d in enumerate(per)], axis=-1)
chain("delay_per_neuron", [("d", nir.Delay(delay=(per * 1e-3).astype(F)))], [4], [4], x, y.astype(F), "--dt 1e-3")


def conv1d(x, w, b, stride, pad, dil, groups):
    C, L = x.shape
    K, cg, k = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad)))
    Lo = (L + 2 * pad - dil * (k - 1) - 1) // stride + 1
    y = np.zeros((K, Lo), F)
    kg = K // groups
    for o in range(K):
        g = o // kg
        for l in range(Lo):
            acc = F(b[o])
            for c in range(cg):
                for j in range(k):
                    acc += w[o, c, j] * xp[g * cg + c, l * stride + j * dil]
            y[o, l] = acc
    return y


w1 = rng.normal(size=(4, 1, 3)).astype(F)
b1 = rng.normal(size=4).astype(F)
x1 = series([2, 9])
y1 = np.stack([conv1d(x1[t, 0], w1, b1, 2, 1, 2, 2)[None] for t in range(T)])
chain("conv1d", [("c", nir.Conv1d(input_shape=9, weight=w1, stride=2, padding=1, dilation=2, groups=2, bias=b1))],
      [2, 9], list(y1.shape[2:]), x1, y1)


def conv2d(x, w, b, stride, pad, dil, groups):
    C, H, Wd = x.shape
    K, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    Ho = (H + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    Wo = (Wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((K, Ho, Wo), F)
    kg = K // groups
    for o in range(K):
        g = o // kg
        for i in range(Ho):
            for j in range(Wo):
                patch = xp[g * cg:(g + 1) * cg, i * stride[0]:i * stride[0] + dil[0] * (kh - 1) + 1:dil[0],
                           j * stride[1]:j * stride[1] + dil[1] * (kw - 1) + 1:dil[1]]
                y[o, i, j] = b[o] + np.sum(patch * w[o])
    return y


w2 = rng.normal(size=(4, 1, 3, 3)).astype(F)
b2 = rng.normal(size=4).astype(F)
x2 = series([2, 7, 7])
y2 = np.stack([conv2d(x2[t, 0], w2, b2, (1, 2), (1, 1), (2, 1), 2)[None] for t in range(T)])
chain("conv2d", [("c", nir.Conv2d(input_shape=(7, 7), weight=w2, stride=(1, 2), padding=(1, 1), dilation=(2, 1),
                                  groups=2, bias=b2))], [2, 7, 7], list(y2.shape[2:]), x2, y2)


def pool(x, k, s, p, avg):
    C, H, Wd = x.shape
    xp = np.pad(x, ((0, 0), (p, p), (p, p)))
    Ho, Wo = (H + 2 * p - k) // s + 1, (Wd + 2 * p - k) // s + 1
    y = np.zeros((C, Ho, Wo), F)
    for i in range(Ho):
        for j in range(Wo):
            y[:, i, j] = xp[:, i * s:i * s + k, j * s:j * s + k].sum(axis=(1, 2))
    return y / F(k * k) if avg else y


x3 = series([2, 6, 6])
for avg, nm, cls in ((0, "sumpool2d", nir.SumPool2d), (1, "avgpool2d", nir.AvgPool2d)):
    y3 = np.stack([pool(x3[t, 0], 3, 2, 1, avg)[None] for t in range(T)])
    chain(nm, [("p", cls(kernel_size=np.array([3, 3]), stride=np.array([2, 2]), padding=np.array([1, 1])))],
          [2, 6, 6], list(y3.shape[2:]), x3, y3)

# a partial Flatten (dims 1..2 of (C, H, W)) before an Affine over C*H*W values
wf = rng.normal(size=(3, 72)).astype(F)
bf = np.zeros(3, F)
yf = np.einsum("oi,tni->tno", wf, x3.reshape(T, 1, 72)).astype(F)
chain("flatten_partial", [("f", nir.Flatten(input_type={"input": np.array([2, 6, 6])}, start_dim=1, end_dim=2)),
                          ("fc", nir.Affine(weight=wf, bias=bf))], [2, 6, 6], [3], x3, yf)

# a nested graph: Input -> [sub: Input -> Affine -> IF -> Output] -> Affine -> Output
Wa = rng.normal(size=(4, 4)).astype(F)
ba = np.zeros(4, F)
sub = nir.NIRGraph(nodes={"input": nir.Input(input_type=np.array([4])), "fc": nir.Affine(weight=Wa, bias=ba),
                          "if": nir.IF(r=full(1), v_threshold=full(0.5)), "output": nir.Output(output_type=np.array([4]))},
                   edges=[("input", "fc"), ("fc", "if"), ("if", "output")])
Wb = rng.normal(size=(2, 4)).astype(F)
bb = np.zeros(2, F)
g = nir.NIRGraph(nodes={"input": nir.Input(input_type=np.array([4])), "sub": sub, "fc2": nir.Affine(weight=Wb, bias=bb),
                        "output": nir.Output(output_type=np.array([2]))},
                 edges=[("input", "sub"), ("sub", "fc2"), ("fc2", "output")])
cur = (np.einsum("oi,tni->tno", Wa, x) + ba).astype(F)
spk = ref_neuron(cur, "IF", dict(r=full(1), v_threshold=full(0.5), v_reset=full(0)))
save("nested", g, x, (np.einsum("oi,tni->tno", Wb, spk) + bb).astype(F))

# two Input and two Output nodes: neuroc's input is their values flattened
# and concatenated in the order of the nodes' names, its output likewise
Wc = rng.normal(size=(2, 3)).astype(F)
bc = rng.normal(size=2).astype(F)
g = nir.NIRGraph(nodes={"in_a": nir.Input(input_type=np.array([3])), "in_b": nir.Input(input_type=np.array([2, 2])),
                        "fc": nir.Affine(weight=Wc, bias=bc), "fl": nir.Flatten(input_type={"input": np.array([2, 2])},
                                                                              start_dim=0, end_dim=-1),
                        "li": nir.LI(tau=full(2e-3), r=full(1), v_leak=full(0)),
                        "out_a": nir.Output(output_type=np.array([2])), "out_b": nir.Output(output_type=np.array([4]))},
                 edges=[("in_a", "fc"), ("fc", "out_a"), ("in_b", "fl"), ("fl", "li"), ("li", "out_b")],
                 type_check=False)
xa, xb = series([3]), series([2, 2])
ya = (np.einsum("oi,tni->tno", Wc, xa) + bc).astype(F)
yb = ref_neuron(xb.reshape(T, 1, 4), "LI", dict(tau=full(2e-3), r=full(1), v_leak=full(0)), F(1e-3))
save("multi_io", g, np.concatenate([xa, xb.reshape(T, 1, 4)], axis=2), np.concatenate([ya, yb], axis=2), "--dt 1e-3")

# reset by subtraction in plain NIR: an I (no reset) summing its input and,
# over a recurrent edge (the previous step), -theta times the spikes of a
# Threshold reading it; the Threshold's output is an IF's with subtraction
th = np.array([0.5, 0.8, 1.0, 0.3], F)
Wd = rng.uniform(0, 0.6, size=(4, 4)).astype(F)
g = nir.NIRGraph(nodes={"input": nir.Input(input_type=np.array([4])), "fc": nir.Affine(weight=Wd, bias=np.zeros(4, F)),
                        "i": nir.I(r=full(1)), "th": nir.Threshold(threshold=th), "sub": nir.Scale(scale=-th),
                        "output": nir.Output(output_type=np.array([4]))},
                 edges=[("input", "fc"), ("fc", "i"), ("i", "th"), ("th", "sub"), ("sub", "i"), ("th", "output")],
                 type_check=False)
xs = series([4], 0, 1)
cur = np.einsum("oi,tni->tno", Wd, xs).astype(F)
v = np.zeros((1, 4), F)
prev = np.zeros((1, 4), F)
ys = []
for t in range(T):
    v = (v + (cur[t] + prev * -th)).astype(F)  # the sum of the two edges, then I's v += r * x
    prev = (v > th).astype(F)
    ys.append(prev)
save("subtract_pattern", g, xs, np.stack(ys))

with open(os.path.join(sys.argv[1], "cases.txt"), "w") as f:
    f.write("\n".join(cases) + "\n")
print(f"nir_spec_cases.py: {len(cases)} cases in {sys.argv[1]}")
