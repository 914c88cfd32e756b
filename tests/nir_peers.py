"""neuroc and the NIR tools of other projects (tests/test_nir_peers.sh).

usage:
  nir_peers.py export DIR
      Builds small networks in snntorch, sinabs and norse, runs each for T
      steps on a random input, and writes with the tool's own NIR exporter:
      DIR/<case>.nir, <case>.x.npy (T x 1 x n), <case>.y.npy (the tool's
      output every step) and DIR/cases.txt ("<case> <neuroc run options>":
      the options that say what the tool computes but its file does not).
  nir_peers.py portable FILE.nir X.npy NEUROC_Y.npy T
      Imports neuroc's portable export with norse (from_nir) and with
      nirtorch (nir_to_torch, with a NIR-spec IF module), runs T steps on
      the images X, and prints how many argmax predictions agree with
      neuroc's summed output NEUROC_Y.

Debian's torch 1.13 lacks a name norse 1.1 imports (register_pytree_node,
spelled _register_pytree_node there): set here before norse is imported.
"""
import sys

import numpy as np
import torch
import torch.utils._pytree as _pytree

if not hasattr(_pytree, "register_pytree_node"):
    _pytree.register_pytree_node = _pytree._register_pytree_node

import nir

T = 40
torch.manual_seed(0)
rng = np.random.default_rng(7)


def run_steps(step, x):
    return np.stack([step(torch.from_numpy(x[t])).detach().numpy() for t in range(x.shape[0])])


def export(out):
    import snntorch as snn
    import snntorch.utils
    from snntorch.export_nir import export_to_nir
    import sinabs.layers as sl
    import sinabs.nir
    import sinabs.activation as sa
    import norse.torch as nt

    cases = []

    def save(name, graph, x, y, opts=""):
        nir.write(f"{out}/{name}.nir", graph)
        shape = [int(d) for d in graph.nodes["input"].input_type["input"]]  # (1, 4) from sinabs: (time, features)
        np.save(f"{out}/{name}.x.npy", x.reshape([x.shape[0], 1] + shape).astype(np.float32))
        np.save(f"{out}/{name}.y.npy", np.asarray(y, np.float32))
        cases.append(f"{name} {opts}".strip())

    W = torch.nn.Linear(4, 3)
    with torch.no_grad():
        W.weight.copy_(torch.from_numpy(rng.uniform(-0.2, 0.8, (3, 4)).astype(np.float32)))
        W.bias.copy_(torch.tensor([0.05, 0.0, -0.02]))
    x = rng.uniform(0, 1, (T, 1, 4)).astype(np.float32)

    # snntorch: Leaky (zero and subtract reset, reset_delay=False), Synaptic; dt = 1e-4 in its files
    for mech in ("zero", "subtract"):
        net = torch.nn.Sequential(W, snn.Leaky(beta=torch.full((3,), 0.8), threshold=torch.full((3,), 0.6), init_hidden=True, reset_mechanism=mech,
                                               reset_delay=False))
        y = run_steps(net, x)
        snn.utils.reset(net)
        g = export_to_nir(net, torch.from_numpy(x[0]), ignore_dims=[0])
        save(f"snntorch_leaky_{mech}", g, x, y, "--nir-reset subtract-snntorch" if mech == "subtract" else "")
    net = torch.nn.Sequential(W, snn.Synaptic(alpha=torch.full((3,), 0.7), beta=torch.full((3,), 0.8),
                                              threshold=torch.full((3,), 0.6), init_hidden=True,
                                              reset_mechanism="zero", reset_delay=False))
    y = run_steps(net, x)
    snn.utils.reset(net)
    save("snntorch_synaptic", export_to_nir(net, torch.from_numpy(x[0]), ignore_dims=[0]), x, y)

    # sinabs: IAF and LIF with one spike a step and reset by subtraction (m >= θ), τ in steps
    for kind in ("iaf", "lif"):
        if kind == "iaf":
            layer = sl.IAF(spike_threshold=0.6, spike_fn=sa.SingleSpike, reset_fn=sa.MembraneSubtract(),
                           min_v_mem=None)
            opts = "--nir-reset subtract --nir-spike ge"
        else:
            layer = sl.LIF(tau_mem=torch.full((3,), 5.0), spike_threshold=torch.full((3,), 0.3), spike_fn=sa.SingleSpike,
                           reset_fn=sa.MembraneSubtract(), min_v_mem=None, norm_input=True)
            opts = "--nir-reset subtract --nir-spike ge --dt 1 --integration exact"
        net = torch.nn.Sequential(W, layer)
        xs = torch.from_numpy(x).permute(1, 0, 2)  # sinabs: (batch, time, ...)
        y = net(xs).detach().numpy().transpose(1, 0, 2)
        g = sinabs.nir.to_nir(net, xs[:, :1])
        save(f"sinabs_{kind}", g, x, y, opts)

    # norse: IAF and LIFBox cells (dt = 1e-3); its exporter writes tau = dt / tau_mem_inv
    dt = 1e-3
    # (method "heaviside": norse's default SuperSpike is an autograd.Function of torch >= 2's form,
    # which Debian's torch 1.13 cannot call; its forward value is the same step function)
    iaf = nt.IAFCell(nt.IAFParameters(v_th=torch.full((3,), 0.6), method="heaviside"))
    lifb = nt.LIFBoxCell(nt.LIFBoxParameters(tau_mem_inv=torch.full((3,), 100.0), v_th=torch.full((3,), 0.3), v_leak=torch.zeros(3),
                                             method="heaviside"), dt=dt)
    for name, cell, opts in (("norse_iaf", iaf, ""), ("norse_lifbox", lifb, f"--dt {dt * dt:g}")):
        state = None
        ys = []
        for t in range(T):
            z, state = cell(W(torch.from_numpy(x[t])), state)
            ys.append(z.detach().numpy())
        g = nt.to_nir(torch.nn.Sequential(W, cell), torch.from_numpy(x[0, 0]), dt=dt)
        save(name, g, x, np.stack(ys), opts)

    with open(f"{out}/cases.txt", "w") as f:
        f.write("\n".join(cases) + "\n")
    print(f"nir_peers.py: {len(cases)} peer-exported networks in {out}")


class SpecIF(torch.nn.Module):
    """NIR's IF as its docstring defines it: v += r·I; z = v > v_threshold; v = v_reset after z."""

    def __init__(self, node):
        super().__init__()
        self.r = torch.as_tensor(node.r, dtype=torch.float32)
        self.th = torch.as_tensor(node.v_threshold, dtype=torch.float32)
        self.vr = torch.as_tensor(node.v_reset, dtype=torch.float32)

    def forward(self, x, state=None):
        v = torch.zeros_like(x) if state is None else state
        v = v + self.r * x
        z = v > self.th
        v = torch.where(z, self.vr.expand_as(v), v)
        return z.to(x.dtype), v


def portable(path, xpath, ypath, steps):
    g = nir.read(path)
    x = torch.from_numpy(np.load(xpath).astype(np.float32))
    if x.ndim == 3:
        x = x[:, None]
    want = np.load(ypath).argmax(axis=1)
    results = {}

    # norse: from_nir, its IAFCell for IF (v + I, z = v − θ > 0, then v_reset 0)
    import norse.torch as nt

    m = nt.from_nir(g, dt=1e-3)
    for mod in m.modules():
        if isinstance(mod, torch.nn.Flatten) and mod.start_dim == 0:
            mod.start_dim = 1  # NIR's Flatten counts the dims of a sample, torch's those of the batch
        if hasattr(mod, "p") and hasattr(mod.p, "method"):
            mod.p = mod.p._replace(method="heaviside")  # see export(): torch 1.13
    state, acc = None, 0
    with torch.no_grad():
        for t in range(steps):
            y, state = m(x, state)
            acc = acc + y
    results["norse"] = acc.numpy().argmax(axis=1)

    # nirtorch's interpreter, with the spec IF above and torch modules for the rest
    import nirtorch

    def flatten(node):
        return torch.nn.Flatten(int(node.start_dim) + 1, int(node.end_dim))

    def sumpool(node):
        k = tuple(int(v) for v in node.kernel_size)
        s = tuple(int(v) for v in node.stride)
        p = tuple(int(v) for v in node.padding)

        class SumPool(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.avg_pool2d(x, k, s, p, divisor_override=1)

        return SumPool()

    def affine(node):  # nirtorch 2.6's own sets module.weight.bias, leaving the bias random
        m = torch.nn.Linear(node.weight.shape[-1], node.weight.shape[-2])
        m.weight.data = torch.from_numpy(node.weight)
        m.bias.data = torch.from_numpy(node.bias)
        return m

    m2 = nirtorch.nir_to_torch(g, {nir.IF: SpecIF, nir.Flatten: flatten, nir.SumPool2d: sumpool, nir.Affine: affine})
    state, acc = None, 0
    with torch.no_grad():
        for t in range(steps):
            y, state = m2(x, state=state)
            acc = acc + y
    results["nirtorch"] = acc.numpy().argmax(axis=1)
    n = len(want)
    worst = 100.0
    for k, pred in results.items():
        agree = 100.0 * np.sum(pred == want) / n
        worst = min(worst, agree)
        print(f"{k}: {agree:.1f} % of {n} predictions agree with neuroc's at T = {steps}")
    return worst


if __name__ == "__main__":
    if sys.argv[1] == "export":
        export(sys.argv[2])
    elif sys.argv[1] == "portable":
        worst = portable(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        sys.exit(0 if worst >= 99.0 else 1)
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
