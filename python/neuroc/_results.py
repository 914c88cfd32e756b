"""Results of evaluation and of the Loihi-style simulation, read through the
library's accessors (accuracy at every t, spike rates, cost) and its JSON."""
import ctypes
import json
import os
import tempfile

from . import _lib
from ._errors import check
from ._tensor import take


def _s(b):
    return b.decode() if b else ""


class EvalResult:
    """nc_snn_evaluate's result. Accuracies are in percent."""

    def __init__(self, handle):
        self._h = handle
        h = handle
        self.timesteps = _lib.nc_eval_result_timesteps(h)
        self.samples = int(_lib.nc_eval_result_samples(h))
        self.accuracy = {t: 100.0 * _lib.nc_eval_result_accuracy_at(h, t) for t in range(1, self.timesteps + 1)}
        ann = _lib.nc_eval_result_ann_accuracy(h)
        self.ann_accuracy = 100.0 * ann if ann >= 0 else None
        self.layers = []
        for i in range(_lib.nc_eval_result_num_layers(h)):
            L = _lib.EvalLayerStats()
            check(_lib.nc_eval_result_layer(h, i, ctypes.byref(L)))
            self.layers.append({"name": _s(L.name), "kind": _s(_lib.nc_snn_kind_name(L.kind)),
                                "neurons": int(L.neurons), "spikes": int(L.spikes), "spike_rate": L.spike_rate,
                                "synops": L.synops, "macs": bool(L.macs), "burst_synops": L.burst_synops,
                                "is_neuron": bool(_lib.nc_snn_kind_is_neuron(L.kind))})
        self.spike_rates = {L["name"]: L["spike_rate"] for L in self.layers if L["is_neuron"]}
        costs = []
        for t in range(1, self.timesteps + 1):
            c = _lib.EvalCost()
            check(_lib.nc_eval_result_cost_at(h, t, ctypes.byref(c)))
            costs.append(c)
        c = costs[-1]  # steps 1..T: the run's totals
        self.synops = c.synaptic_adds + c.synaptic_macs  # synaptic operations per inference
        self.energy = {"snn_joules": c.snn_joules, "ann_joules": c.ann_joules if c.ann_joules >= 0 else None,
                       "synops": self.synops, "synaptic_adds": c.synaptic_adds, "synaptic_macs": c.synaptic_macs,
                       "ann_macs": c.ann_macs if c.ann_macs >= 0 else None,
                       "energy_per_synop": c.energy_per_synop, "energy_per_mac": c.energy_per_mac,
                       "source": _s(c.energy_source)}
        # What stopping after t steps costs, per inference (steps 1..t), t = 1..T:
        # the names of the JSON report's per_t.
        self.per_t = {"t": list(range(1, self.timesteps + 1)),
                      "synaptic_adds": [k.synaptic_adds for k in costs],
                      "synaptic_macs": [k.synaptic_macs for k in costs],
                      "energy_j": [k.snn_joules for k in costs]}

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.nc_eval_result_free(self._h)
            self._h = None

    def __repr__(self):
        T = self.timesteps
        ann = f", ANN {self.ann_accuracy:.2f} %" if self.ann_accuracy is not None else ""
        return f"<neuroc.EvalResult {self.samples} samples: {self.accuracy[T]:.2f} % at t = {T}{ann}>"

    def to_json(self):
        """The library's report (the same as `neuroc eval --report`)."""
        return _s(_lib.nc_eval_result_json(self._h))

    def svg(self):
        """The library's chart (as `neuroc eval --plot`), as SVG text."""
        fd, path = tempfile.mkstemp(suffix=".svg")
        os.close(fd)
        try:
            check(_lib.nc_eval_result_write_svg(self._h, path.encode()))
            with open(path, encoding="utf-8") as f:
                return f.read()
        finally:
            os.unlink(path)

    def plot(self, path=None):
        """Accuracy against t (the ANN as a line) and spike rates per layer: a
        matplotlib Figure when matplotlib is installed, else the library's SVG
        text. With `path`, written there too."""
        try:
            import matplotlib
            if path:
                matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError:
            svg = self.svg()
            if path:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(svg)
            return svg
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        ts = sorted(self.accuracy)
        a1.plot(ts, [self.accuracy[t] for t in ts], marker=".", label="SNN")
        if self.ann_accuracy is not None:
            a1.axhline(self.ann_accuracy, color="grey", linestyle="--", label="ANN")
        a1.set_xscale("log", base=2)
        a1.set(xlabel="t (steps)", ylabel="accuracy (%)")
        a1.legend()
        names = list(self.spike_rates)
        a2.bar(range(len(names)), [self.spike_rates[n] for n in names])
        a2.set_xticks(range(len(names)), names, rotation=45, ha="right")
        a2.set(ylabel="spikes per neuron per step")
        fig.tight_layout()
        if path:
            fig.savefig(path)
        return fig


class LoihiResult:
    """nc_loihi_run's result, with the compiled network's mapping."""

    def __init__(self, handle, net_json, mapping):
        self._h = handle
        self.timesteps = _lib.nc_loihi_result_timesteps(handle)
        self.samples = int(_lib.nc_loihi_result_samples(handle))
        acc = {t: _lib.nc_loihi_result_accuracy_at(handle, t) for t in range(1, self.timesteps + 1)}
        self.accuracy = {t: 100.0 * a for t, a in acc.items() if a >= 0}  # empty without labels
        c = _lib.LoihiCost()
        check(_lib.nc_loihi_result_cost(handle, ctypes.byref(c)))
        self.cost = {f: (_s(getattr(c, f)) if isinstance(getattr(c, f), bytes) else getattr(c, f))
                     for f, _ in _lib.LoihiCost._fields_}
        self.mapping = mapping
        self.network = json.loads(net_json)

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.nc_loihi_result_free(self._h)
            self._h = None

    def __repr__(self):
        T = self.timesteps
        acc = f"{self.accuracy[T]:.2f} % at t = {T}, " if T in self.accuracy else ""
        return f"<neuroc.LoihiResult {self.samples} samples: {acc}{self.mapping['cores']} cores>"

    def readout(self):
        """The readout's membrane after every chip step: (steps, N, classes), int64."""
        t = ctypes.c_void_p()
        check(_lib.nc_loihi_result_readout(self._h, ctypes.byref(t)))
        return take(t)

    def to_json(self):
        return _s(_lib.nc_loihi_result_json(self._h))
