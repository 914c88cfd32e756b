"""neuroc.SNN (nc_snn): conversion, running, evaluation, fine-tuning, NIR
and the Loihi-style simulator, each one C call (or one per batch)."""
import ctypes
import json
import logging
import os
import warnings
from collections import namedtuple

import numpy as np

from . import _lib
from ._data import export_onnx, features, gather, is_torch_module, labels as _labels
from ._errors import InvalidArgument, check
from ._messages import pythonic
from ._model import Model
from ._progress import Progress
from ._results import EvalResult, LoihiResult
from ._tensor import Tensor, take, to_numpy_input

_log = logging.getLogger("neuroc")

# function: a Nonlinear layer's ("SiLU", "MatMul", ...; neuroc info's "Nonlinear SiLU"), else None;
# two_sided: a SignedIF whose net count may go below zero
SnnLayer = namedtuple("SnnLayer", "name kind inputs shape params function two_sided", defaults=(None, False))

_RESET = {None: 0, "default": 0, "subtract": 1, "zero": 2}
_ENCODING = {"direct": 0, "poisson": 1}
_MAXPOOL = {"spikes": 0, "currents": 1, "average": 2}
_V0 = {"half": 0, "zero": 1}
_SURROGATE = {"triangle": 0, "rectangle": 1, "sigmoid": 2, "atan": 3}
_OPTIMIZER = {"adam": 0, "sgd": 1}
_TARGET = {"loihi2": 0, "loihi1": 1}
_LOIHI_INPUT = {"bias": 1, "graded": 2}
_STOP = 1  # the status an epoch callback returns to stop fine-tuning (any non-zero does)


def _choice(name, value, table):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise InvalidArgument(f"{name} must be one of {', '.join(repr(k) for k in table if k)}, "
                              f"not {value!r}") from None


def _set(opts, **fields):
    """Sets the fields given (not None); the rest keep the library's defaults."""
    for k, v in fields.items():
        if v is not None:
            setattr(opts, k, int(v) if isinstance(v, bool) else v)


def _threshold(spec, opts):
    """'pN' (a percentile), 'max', 'mse', or a number (a percentile), as `--threshold`."""
    if spec is None:
        return
    if spec in ("max", "mse"):
        opts.method = 2 if spec == "max" else 3  # nc_threshold_method
        return
    try:
        p = float(spec[1:]) if isinstance(spec, str) and spec.startswith("p") else float(spec)
    except (TypeError, ValueError):
        p = float("nan")
    if not 0 < p <= 100:
        raise InvalidArgument(f"threshold must be 'pN' (a percentile, 0 < N <= 100, e.g. 'p99.9'), 'max' or "
                              f"'mse', not {spec!r}")
    opts.method, opts.percentile = 1, p  # NC_THRESHOLD_PERCENTILE


class SNN:
    """A spiking network: converted (neuroc.convert) or loaded (neuroc.load_nir)."""

    def __init__(self, handle, ann=None, report=None):
        self._h = handle
        self.ann = ann  # the Model it was converted from: evaluate's comparison
        self.report = json.loads(report) if report else None  # the conversion report

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.nc_snn_free(self._h)
            self._h = None

    def __repr__(self):
        return f"<neuroc.SNN {len(self.layers)} layers, input {self.input_shape}, output {self.output_shape}>"

    # ---------------------------------------------------------------- structure

    def _layer(self, i):
        L = _lib.SnnLayerInfo()
        check(_lib.nc_snn_layer_at(self._h, i, ctypes.byref(L)))
        kind = _lib.nc_snn_kind_name(L.kind).decode()
        return SnnLayer(L.name.decode(), kind, tuple(L.inputs[k] for k in range(L.n_inputs)),
                        tuple(L.shape[d] for d in range(L.ndim)), int(L.params),
                        _lib.nc_nonlinear_fn_name(L.nonlinear.fn).decode() if kind == "Nonlinear" else None,
                        bool(L.two_sided))

    @property
    def layers(self):
        return [self._layer(i) for i in range(_lib.nc_snn_num_layers(self._h))]

    @property
    def input_shape(self):
        """The per-sample input shape."""
        return self._layer(0).shape

    @property
    def output_shape(self):
        return self._layer(_lib.nc_snn_output_layer(self._h)).shape

    @property
    def timesteps(self):
        """The operating T (nc_snn_timesteps): what convert(target_loss=...)
        chose, kept in .nir files; run and evaluate use it when timesteps is
        None. None when the network has none."""
        return _lib.nc_snn_timesteps(self._h) or None

    @timesteps.setter
    def timesteps(self, t):
        check(_lib.nc_snn_set_timesteps(self._h, int(t or 0)))

    @property
    def outputs(self):
        """The network's outputs as {name: shape}: one, or each Output node of
        a NIR graph that has several (run returns a dict of them then)."""
        res = {}
        for k in range(_lib.nc_snn_num_outputs(self._h)):
            o = _lib.SnnOutputInfo()
            check(_lib.nc_snn_output_at(self._h, k, ctypes.byref(o)))
            res[o.name.decode()] = tuple(o.shape[d] for d in range(o.ndim))
        return res

    def _split_outputs(self, y):
        """y (..., total) as {name: (..., *shape)} when there are several outputs."""
        if _lib.nc_snn_num_outputs(self._h) < 2:
            return y
        res = {}
        for k in range(_lib.nc_snn_num_outputs(self._h)):
            o = _lib.SnnOutputInfo()
            check(_lib.nc_snn_output_at(self._h, k, ctypes.byref(o)))
            part = y[..., o.offset:o.offset + o.size]
            res[o.name.decode()] = part.reshape(part.shape[:-1] + tuple(o.shape[d] for d in range(o.ndim)))
        return res

    def info(self):
        """What `neuroc info` shows of a spiking network, as a dict."""
        layers = self.layers
        neurons = 0
        for i, L in enumerate(layers):
            raw = _lib.SnnLayerInfo()
            check(_lib.nc_snn_layer_at(self._h, i, ctypes.byref(raw)))
            if _lib.nc_snn_kind_is_neuron(raw.kind):
                neurons += int(np.prod(L.shape))
        return {"layers": [L._asdict() for L in layers], "input_shape": self.input_shape,
                "output_shape": self.output_shape, "output": layers[_lib.nc_snn_output_layer(self._h)].name,
                "outputs": self.outputs,
                "neurons": neurons, "params": sum(L.params for L in layers)}

    # ---------------------------------------------------------------- running

    def rate_limit(self, x, scale=True):
        """What run(x, T) / T approaches as T grows, with no steps
        (nc_snn_rate_limit, `neuroc run --rate-limit`): each IF a ReLU clipped
        at its threshold; for a converted network, the clipped ANN that
        calibration defines. Returns (N, *out)."""
        t_in = Tensor(features(to_numpy_input(x), self.input_shape, scale))  # alive during the call
        y = ctypes.c_void_p()
        check(_lib.nc_snn_rate_limit(self._h, t_in.ptr, ctypes.byref(y)))
        return take(y)

    def run(self, x, timesteps=None, backend="cpu-fast", per_step=False, batch=256, encoding="direct", seed=0,
            record=None, scale=True, profile=False):
        """Runs the network on x: a static batch (N, *input_shape), fed at
        every one of `timesteps` steps (None: the operating T, else 32), or a
        time series (T, N, *input_shape).
        Returns the output layer summed over the steps, (N, *out), or every
        step with per_step, (T, N, *out), as `neuroc run`; a network with
        several outputs (see `outputs`) returns {name: array} of them. With record=[names]
        returns (output, {name: spikes (T, N, *shape)}). With profile=True
        (cpu, cpu-fast) the last item returned is {layer name: seconds it
        took, summed over threads and batches}."""
        in_shape = self.input_shape
        x = to_numpy_input(x)
        series = x.ndim == len(in_shape) + 2 and x.shape[2:] == in_shape
        x = features(x, None if series else in_shape, scale)
        if x.ndim < 1 or x.shape[0] == 0:
            raise InvalidArgument(f"no samples in an input of shape {x.shape}")
        T, N = (x.shape[0], x.shape[1]) if series else (int(timesteps or self.timesteps or 32), x.shape[0])
        so = _lib.new(_lib.SessionOptions, _lib.nc_session_options_init)
        names = [n.encode() for n in (record or [])]
        rec = (ctypes.c_char_p * max(len(names), 1))(*names)
        _set(so, backend=backend.encode(), timesteps=T, encoding=_choice("encoding", encoding, _ENCODING),
             seed=int(seed), per_step=per_step, profile=bool(profile))
        if names:
            so.record, so.n_record = rec, len(names)
        ss = ctypes.c_void_p()
        check(_lib.nc_session_create(self._h, ctypes.byref(so), ctypes.byref(ss)))
        out, traces = None, {n: [] for n in (record or [])}
        layer_names = [L.name for L in self.layers] if profile else []
        times = dict.fromkeys(layer_names, 0.0)
        try:
            b = max(1, min(int(batch), N))
            for r0 in range(0, N, b):
                part = x[:, r0:r0 + b] if series else x[r0:r0 + b]  # a view: no copy for a static batch
                t_in = Tensor(part)
                # each batch its own Poisson seed, as neuroc run and eval give it
                check(_lib.nc_session_set_seed(ss, _lib.nc_batch_seed(int(seed), r0)))
                y = ctypes.c_void_p()
                check(_lib.nc_session_run(ss, t_in.ptr, ctypes.byref(y)))
                y = take(y)
                for i, n in enumerate(layer_names):
                    sec = ctypes.c_double()
                    check(_lib.nc_session_layer_seconds(ss, i, ctypes.byref(sec)))
                    times[n] += sec.value
                if N <= b and not names and not profile:
                    return self._split_outputs(y)  # one batch: the library's own buffer, no copy
                if out is None:
                    out = np.empty(((T,) if per_step else ()) + (N,) + y.shape[2 if per_step else 1:], y.dtype)
                if per_step:
                    out[:, r0:r0 + y.shape[1]] = y
                else:
                    out[r0:r0 + y.shape[0]] = y
                for n in traces:
                    t = ctypes.c_void_p()
                    check(_lib.nc_session_trace(ss, n.encode(), 0, ctypes.byref(t)))
                    traces[n].append(take(t))
        finally:
            _lib.nc_session_free(ss)
        result = (self._split_outputs(out),)
        if names:
            result += ({n: np.concatenate(v, axis=1) for n, v in traces.items()},)
        if profile:
            result += (times,)
        return result if len(result) > 1 else out

    def evaluate(self, x, y=None, timesteps=None, backend="cpu-fast", batch=64, encoding="direct", seed=0,
                 ann=True, progress=None, scale=True):
        """Accuracy at every t ≤ timesteps (None: the operating T, else 64)
        against labels y, the ANN's accuracy
        on the same data (ann: True = the model this was converted from, a
        Model, or None), spike rates, synaptic operations and energy (in
        total, and of steps 1..t for every t: EvalResult.per_t), as
        `neuroc eval`. x may be an iterable of (x, y) batches (y then None)."""
        if y is None:
            x, y = gather(x)
            if y is None:
                raise InvalidArgument("evaluate needs labels: y, or batches of (x, y)")
        x = features(x, self.input_shape, scale)
        y = _labels(y, x.shape[0])
        m = self.ann if ann is True else ann
        if m is not None and not isinstance(m, Model):
            m = Model._load(m)
        eo = _lib.new(_lib.EvalOptions, _lib.nc_eval_options_init)
        _set(eo, backend=backend.encode(), timesteps=int(timesteps or self.timesteps or 64), batch=int(batch),
             encoding=_choice("encoding", encoding, _ENCODING), seed=int(seed))
        tx, ty = Tensor(x), Tensor(y)
        res = ctypes.c_void_p()
        with Progress(progress) as p:
            eo.progress = p.fn
            check(_lib.nc_snn_evaluate(self._h, m._h if m else None, tx.ptr, ty.ptr, ctypes.byref(eo),
                                       ctypes.byref(res)))
        return EvalResult(res)

    # ---------------------------------------------------------------- training

    def finetune(self, x, y=None, timesteps=4, epochs=1, lr=None, batch=None, val=None, callback=None,
                 progress=None, surrogate=None, surrogate_width=None, detach_reset=None, train_thresholds=None,
                 optimizer=None, momentum=None, weight_decay=None, grad_clip=None, seed=None, max_memory=None,
                 threads=None, scale=True, energy_weight=None):
        """BPTT fine-tuning in place (nc_snn_finetune; `neuroc finetune`'s
        options; energy_weight is --energy-weight). callback(epoch) gets a dict after every epoch; returning
        False stops. val=(x, y) adds validation. Returns the epochs' dicts."""
        if y is None:
            x, y = gather(x)
        x = features(x, self.input_shape, scale)
        y = _labels(y, x.shape[0])
        fo = _lib.new(_lib.FinetuneOptions, _lib.nc_finetune_options_init)
        _set(fo, timesteps=timesteps, epochs=epochs, lr=lr, batch=batch, surrogate_width=surrogate_width,
             detach_reset=detach_reset, train_thresholds=train_thresholds, momentum=momentum,
             weight_decay=weight_decay, grad_clip=grad_clip, seed=seed, max_memory=max_memory, threads=threads,
             energy_weight=energy_weight)
        if surrogate is not None:
            fo.surrogate = _choice("surrogate", surrogate, _SURROGATE)
        if optimizer is not None:
            fo.optimizer = _choice("optimizer", optimizer, _OPTIMIZER)
        tx, ty = Tensor(x), Tensor(y)
        vx = vy = None
        if val is not None:
            vx = Tensor(features(val[0], self.input_shape, scale))
            vy = Tensor(_labels(val[1], vx.array.shape[0]))
        epochs_done, state = [], {"stopped": False, "error": None}

        def on_epoch(_snn, e, _user):
            e = e.contents
            d = {"epoch": e.epoch, "epochs": e.epochs, "batch": e.batch, "loss": e.loss,
                 "accuracy": 100.0 * e.accuracy, "samples": int(e.samples), "seconds": e.seconds,
                 "val_loss": e.val_loss if e.val_loss >= 0 else None,
                 "val_accuracy": 100.0 * e.val_accuracy if e.val_accuracy >= 0 else None}
            epochs_done.append(d)
            try:
                if callback is not None and callback(d) is False:
                    state["stopped"] = True
                    return _STOP
            except BaseException as ex:  # raised again once the C call returns
                state["error"] = ex
                return _STOP
            return 0

        cb = _lib.EPOCH_FN(on_epoch)
        fo.on_epoch = cb
        with Progress(progress) as p:
            fo.progress = p.fn
            st = _lib.nc_snn_finetune(self._h, tx.ptr, ty.ptr, vx.ptr if vx else None, vy.ptr if vy else None,
                                      ctypes.byref(fo))
        if state["error"] is not None:
            raise state["error"]
        if not state["stopped"]:
            check(st)
        return epochs_done

    # ---------------------------------------------------------------- files, hardware

    def save(self, path, strict=False):
        """Writes the network as NIR (atomically), as `neuroc convert -o`:
        /node, what other NIR tools read, is its standard form, the exact
        network beside it for neuroc (nir_standard_loss says what the
        standard form loses); strict: refuse to write when the standard
        form would approximate a layer (`--nir-strict`)."""
        so = _lib.new(_lib.NirSaveOptions, _lib.nc_nir_save_options_init)
        so.strict = int(bool(strict))
        check(_lib.nc_snn_save_nir_with(self._h, os.fspath(path).encode(), ctypes.byref(so)))

    def nir_standard_loss(self):
        """What the standard NIR graph of this network (the /node of the
        files save writes) loses against it: a line each, "" for nothing."""
        buf = ctypes.create_string_buffer(8192)
        check(_lib.nc_snn_nir_standard(self._h, None, buf, len(buf)))
        return buf.value.decode()

    def simulate_loihi(self, x, y=None, timesteps=32, target="loihi2", reset=None, input="bias", weight_bits=None,
                       headroom_bits=None, per_layer_scale=False, neurons_per_core=None, params=None, calib=None,
                       input_range=None, threads=None, progress=None, scale=True):
        """The network on the Loihi-style fixed-point simulator, as `neuroc sim`:
        quantised and mapped, run for timesteps plus the pipeline latency."""
        x = features(x, self.input_shape, scale)
        lo = _lib.new(_lib.LoihiOptions, _lib.nc_loihi_options_init)
        lo.target = _choice("target", target, _TARGET)
        lo.input = _choice("input", input, _LOIHI_INPUT)
        if reset is not None:
            lo.reset = _choice("reset", reset, _RESET)
        _set(lo, weight_bits=weight_bits, headroom_bits=headroom_bits, per_layer_scale=per_layer_scale,
             neurons_per_core=neurons_per_core, timesteps=int(timesteps) + 8)  # headroom as neuroc sim gives
        if params is not None:
            lo.params_path = os.fspath(params).encode()
        lo_min, lo_max = input_range if input_range else (min(0.0, float(x.min())), max(0.0, float(x.max())))
        lo.input_min, lo.input_max = lo_min, lo_max if lo_max > lo_min else lo_min + 1
        tc = Tensor(features(calib, self.input_shape, scale) if calib is not None else x)
        lo.calib = tc.ptr
        net = ctypes.c_void_p()
        check(_lib.nc_loihi_compile(self._h, ctypes.byref(lo), ctypes.byref(net)))
        try:
            mp = _lib.LoihiMapping()
            check(_lib.nc_loihi_net_mapping(net, ctypes.byref(mp)))
            mapping = {f: (getattr(mp, f).decode() if isinstance(getattr(mp, f), bytes) else getattr(mp, f))
                       for f, _ in _lib.LoihiMapping._fields_}
            ro = _lib.new(_lib.LoihiRunOptions, _lib.nc_loihi_run_options_init)
            _set(ro, timesteps=int(timesteps), extra_steps=-1, threads=threads)  # -1: the pipeline latency
            tx = Tensor(x)
            ty = Tensor(_labels(y, x.shape[0])) if y is not None else None
            res = ctypes.c_void_p()
            with Progress(progress) as p:
                ro.progress = p.fn
                check(_lib.nc_loihi_run(net, tx.ptr, ty.ptr if ty else None, ctypes.byref(ro), ctypes.byref(res)))
            return LoihiResult(res, _lib.nc_loihi_net_json(net).decode(), mapping)
        finally:
            _lib.nc_loihi_net_free(net)


def nir_file_info(path):
    """Which graph of a .nir file neuroc reads and what its standard graph
    loses, as `neuroc info` says: a dict of neuroc_format (0: another
    tool's file), exact_graph (neuroc reads /neuroc/graph, other tools
    /node), loss_known and standard_loss."""
    info = _lib.NirFileInfo()
    check(_lib.nc_nir_file_info_read(os.fspath(path).encode(), ctypes.byref(info)))
    return {"neuroc_format": info.neuroc_format, "exact_graph": bool(info.exact_graph),
            "loss_known": bool(info.loss_known), "standard_loss": info.standard_loss.decode()}


def load_nir(path, reset=None, dt=None, spike=None, integration=None):
    """Loads a .nir file (neuroc's or another tool's) as an SNN. For other
    tools' files (neuroc's carry their own rules), as `neuroc run`'s
    --nir-reset / --nir-spike / --dt / --integration: reset 'spec' (NIR's
    reset to v_reset, the default), 'zero', 'subtract' or 'subtract-snntorch';
    spike 'gt' (NIR's v > threshold, the default) or 'ge'; dt in seconds;
    integration 'euler' (the default) or 'exact'."""
    no = _lib.new(_lib.NirOptions, _lib.nc_nir_options_init)
    if reset == "subtract-snntorch":
        no.reset, no.snntorch_subtract = _RESET["subtract"], 1
    elif reset is not None:
        no.reset = _choice("reset", reset, dict(_RESET, spec=0))
    if spike is not None:
        no.spike = _choice("spike", spike, {"gt": 1, "ge": 2})
    if integration is not None:
        no.integration = _choice("integration", integration, {"euler": 0, "exact": 1})
    _set(no, dt=dt)
    h = ctypes.c_void_p()
    check(_lib.nc_snn_load_nir(os.fspath(path).encode(), ctypes.byref(no), ctypes.byref(h)))
    return SNN(h)


def convert(model, calib=None, labels=None, *, timesteps=None, threshold=None, per_channel=None, count_zeros=None,
            levels=None, calib_samples=None, reset=None, v0=None, binary_spikes=None, spikes=None,
            signed_spikes=None, burst=None, maxpool=None, bias_correction=None, potential_correction=None, correction_rounds=None,
            nonlinear_graded=None, qcfs_epochs=None, lr=None, batch=None, seed=None, progress=None, scale=True, opset=13,
            target_loss=None, target_max_timesteps=None, holdout=None, keep_avgpool=None, finetune_epochs=None,
            finetune_lr=None, energy_weight=None, validation=None, validation_labels=None, threads=None,
            finetune_timesteps=None):
    """Converts an ANN into an SNN (nc_convert), with `neuroc convert`'s options
    under their names (timesteps is -T; an option left None keeps the
    library's default, as an option left off the command line does).

    model: a neuroc.Model, an ONNX path or bytes, or a torch.nn.Module
    (exported to ONNX in memory with a sample of calib). calib: an array, a
    tensor or an iterable of batches (a DataLoader); None converts data-free.
    labels: of calib, for qcfs_epochs (batches of (x, y) carry their own).
    spikes: 'signed' (the default) or 'plain' (--plain-spikes: other NIR tools'
    and Loihi 1's neuron); signed_spikes=True/False says the same. burst: up to
    that many signed spikes a step (--burst; None: with signed spikes 2, or
    the power of two up to 64 a deep network needs, measured on calib).
    nonlinear_graded: synaptic layers read the graded outputs of the
    non-linear layers (SiLU, sigmoid gates, GELU) as multiply-adds
    (--graded-nonlinear) instead of their two-sided spikes.
    target_loss: choose the operating point (--target-loss): the conversion
    of least energy within that many accuracy points of the ANN at some T ≤
    target_max_timesteps (32), measured on the last `holdout` rows of calib
    (half, at most 2000) against labels, or the ANN's own predictions; the
    T found is snn.timesteps and snn.report["operating_point"] says what
    was tried. finetune_epochs (with target_loss and labels): the search
    then fine-tunes its best conversion by BPTT at T = 1, 2, 4, … below the
    T it found, that many epochs on the rows it does not hold back, and keeps
    the first T within the target (--finetune-epochs with --target-loss;
    finetune_lr, 3e-3 by default; energy_weight, the energy term of that
    training as in SNN.finetune; threads, its element-wise threads, -j;
    finetune_timesteps, the one T to fine-tune at, --finetune-T).
    validation (with validation_labels, else scored against the ANN's
    predictions): the rows the search scores candidates on instead of
    held-back calib rows (--validation); give data the ANN did not train
    on, or fine-tuned candidates look worse than they are. keep_avgpool:
    every average pooling stays a pooling layer (--keep-avgpool); by default
    one of spikes folds into the Conv/Gemm reading it (additions, not
    multiply-adds on pooled sums)."""
    co = _lib.new(_lib.ConvertOptions, _lib.nc_convert_options_init)
    _threshold(threshold, co)
    _set(co, timesteps=timesteps, per_channel=per_channel, count_zeros=count_zeros, levels=levels,
         calib_samples=calib_samples, binary_spikes=binary_spikes, burst=burst,
         bias_correction=bias_correction, potential_correction=potential_correction,
         correction_rounds=correction_rounds, nonlinear_graded=nonlinear_graded, qcfs_epochs=qcfs_epochs, qcfs_lr=lr, qcfs_batch=batch, seed=seed,
         target_loss=target_loss, max_timesteps=target_max_timesteps, holdout_samples=holdout,
         keep_avgpool=keep_avgpool, finetune_epochs=finetune_epochs, finetune_lr=finetune_lr,
         finetune_energy_weight=energy_weight, threads=threads, finetune_timesteps=finetune_timesteps)
    if reset is not None:
        co.reset = _choice("reset", reset, _RESET)
    if signed_spikes is not None:
        if spikes is not None:
            raise InvalidArgument("give spikes or signed_spikes, not both")
        spikes = "signed" if signed_spikes else "plain"
    if spikes is not None:
        co.spikes = _choice("spikes", spikes, {"signed": 1, "plain": 2})  # nc_spike_kind
    if v0 is not None:
        co.v_init_zero = _choice("v0", v0, _V0)
    if maxpool is not None:
        co.maxpool = _choice("maxpool", maxpool, _MAXPOOL)
    x = y = None
    if calib is not None:
        # batches: only as many as calibration (and the search's held-back rows) take
        x, y = gather(calib, None if target_loss else co.calib_samples)
        if labels is not None:
            y = labels
    if is_torch_module(model):
        if x is None:
            raise InvalidArgument("converting a torch.nn.Module needs calib: a sample of it is the export's input")
        model = Model._load(export_onnx(model, features(x[:1], scale=scale), opset), type(model).__name__)
    elif not isinstance(model, Model):
        model = Model._load(model)
    tx = Tensor(features(x, model.sample_shape(), scale)) if x is not None else None
    use_labels = co.qcfs_epochs > 0 or bool(target_loss)
    ty = Tensor(_labels(y, tx.array.shape[0])) if (y is not None and tx is not None and use_labels) else None
    if validation_labels is not None and validation is None:
        raise InvalidArgument("validation_labels without validation: they label no samples")
    if validation is not None:
        if not target_loss:
            raise InvalidArgument("validation is what the operating point search scores on: give target_loss")
        vx, vy = gather(validation, None)
        vy = validation_labels if validation_labels is not None else vy
        tv = Tensor(features(vx, model.sample_shape(), scale))
        tvy = Tensor(_labels(vy, tv.array.shape[0])) if vy is not None else None
        co.validation, co.validation_labels = tv.ptr.value, tvy.ptr.value if tvy else None
    h, rep = ctypes.c_void_p(), ctypes.c_void_p()
    with Progress(progress) as p:
        co.progress = p.fn
        check(_lib.nc_convert(model._h, tx.ptr if tx else None, ty.ptr if ty else None, ctypes.byref(co),
                              ctypes.byref(h), ctypes.byref(rep)))
    try:
        report = _lib.nc_convert_report_json(rep).decode() if rep.value else None
    finally:
        _lib.nc_convert_report_free(rep)
    snn = SNN(h, model, report)
    _announce(snn.report)
    return snn


class ConversionWarning(UserWarning):
    """A warning of neuroc.convert (the same text `neuroc convert` prints)."""


def _announce(report):
    """The conversion's warnings, as the program prints them: to the "neuroc"
    logger (WARNING) and to Python's warnings (ConversionWarning); its notes
    to the logger (INFO). Each also stays in snn.report."""
    for w in (report or {}).get("warnings", []):
        w = pythonic(w)
        _log.warning("%s", w)
        warnings.warn(w, ConversionWarning, stacklevel=3)
    for n in (report or {}).get("notes", []):
        _log.info("%s", pythonic(n))
