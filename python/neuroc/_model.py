"""neuroc.Model: an imported ONNX ANN (nc_model)."""
import contextlib
import ctypes
import os
from collections import namedtuple

import numpy as np

from . import _lib
from ._data import features
from ._errors import InvalidArgument, ParseError, check
from ._tensor import Tensor, take

ValueInfo = namedtuple("ValueInfo", "name dtype shape")
Layer = namedtuple("Layer", "name op input_shape output_shape params macs supported")
_DTYPE_NAMES = {1: "float32", 2: "uint8", 7: "int64"}


def _shape(nd, dims):
    return None if nd < 0 else tuple(int(dims[i]) for i in range(nd))


class Model:
    """An ANN imported from ONNX. Immutable: several threads may run it."""

    def __init__(self, handle, name, onnx=None):
        self._h = handle
        self.name = name
        self.onnx = onnx  # the ONNX bytes when they came from memory (a torch export)

    @classmethod
    def _load(cls, source, name=None, describe_only=False):
        h = ctypes.c_void_p()
        opts = _lib.new(_lib.LoadOptions, _lib.nc_load_options_init)
        opts.describe_only = int(bool(describe_only))
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            name = name or "<memory>"
            with _nir_named(name, data[:8] == _HDF5_SIGNATURE):
                check(_lib.nc_model_load_onnx_memory(data, len(data), name.encode(), ctypes.byref(opts),
                                                     ctypes.byref(h)))
            return cls(h, name, data)
        path = os.fspath(source)
        with _nir_named(path, _is_nir(path)):
            check(_lib.nc_model_load_onnx(path.encode(), ctypes.byref(opts), ctypes.byref(h)))
        return cls(h, name or path)

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.nc_model_free(self._h)
            self._h = None

    def __repr__(self):
        return f"<neuroc.Model {self.name}: {len(self.layers)} layers>"

    def _values(self, count, get):
        out = []
        for i in range(count(self._h)):
            v = _lib.ValueInfo()
            check(get(self._h, i, ctypes.byref(v)))
            out.append(ValueInfo(v.name.decode(), _DTYPE_NAMES.get(v.dtype, str(v.dtype)), _shape(v.ndim, v.shape)))
        return out

    @property
    def inputs(self):
        """Graph inputs; -1 marks a free (symbolic) dimension."""
        return self._values(_lib.nc_model_num_inputs, _lib.nc_model_input)

    @property
    def outputs(self):
        return self._values(_lib.nc_model_num_outputs, _lib.nc_model_output)

    @property
    def layers(self):
        """The computing nodes, with shapes for a batch of one."""
        out = []
        for i in range(_lib.nc_model_num_layers(self._h)):
            L = _lib.LayerInfo()
            check(_lib.nc_model_layer(self._h, i, ctypes.byref(L)))
            out.append(Layer(L.name.decode(), L.op.decode(), _shape(L.in_ndim, L.in_shape),
                             _shape(L.out_ndim, L.out_shape), int(L.params), int(L.macs), bool(L.supported)))
        return out

    def info(self):
        """What `neuroc info` shows, as a dict: inputs, outputs, layers, totals."""
        layers = self.layers
        return {"name": self.name,
                "inputs": [v._asdict() for v in self.inputs],
                "outputs": [v._asdict() for v in self.outputs],
                "layers": [L._asdict() for L in layers],
                "params": sum(L.params for L in layers),
                "macs": sum(L.macs for L in layers)}

    def sample_shape(self):
        """The per-sample shape of the single input (dims after the batch)."""
        ins = self.inputs
        if len(ins) != 1:
            raise InvalidArgument(f"{self.name} has {len(ins)} inputs; this takes a model with one")
        return ins[0].shape[1:] if ins[0].shape else ()

    def run(self, x, batch=256, scale=True):
        """The ANN's output 0 for samples x (N, ...), `batch` rows a call (as
        `neuroc run`; a model with a fixed batch size gets its own, padded).
        A list of arrays feeds a model with several inputs in one call and
        returns the list of its outputs."""
        if isinstance(x, (list, tuple)):
            tensors = [Tensor(features(a, scale=scale)) for a in x]
            return self._call(tensors, _lib.nc_model_num_outputs(self._h))
        x = features(x, self.sample_shape(), scale)
        fixed = self.inputs[0].shape[0] if self.inputs[0].shape else -1
        chunk = fixed if fixed > 0 else int(batch or x.shape[0] or 1)
        outs = []
        for r0 in range(0, x.shape[0], chunk):
            part = x[r0:r0 + chunk]
            used = part.shape[0]
            if fixed > 0 and used < fixed:
                part = np.concatenate([part, np.zeros((fixed - used,) + part.shape[1:], part.dtype)])
            outs.append(self._call([Tensor(part)], 1)[0][:used])
        return outs[0] if len(outs) == 1 else np.concatenate(outs)

    def _call(self, tensors, n_out):
        ins = (ctypes.c_void_p * len(tensors))(*[t.ptr.value for t in tensors])
        outs = (ctypes.c_void_p * n_out)()
        check(_lib.nc_model_run(self._h, ins, len(tensors), outs, n_out))
        return [take(ctypes.c_void_p(p)) for p in outs]


_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"  # a NIR file is an HDF5 file


def _is_nir(path):
    """Whether a file the ONNX reader refused is a NIR file: named .nir or
    holding HDF5's signature."""
    if path.lower().endswith(".nir"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(8) == _HDF5_SIGNATURE
    except OSError:
        return False


@contextlib.contextmanager
def _nir_named(name, is_nir):
    """The ONNX reader's parse error for what is a NIR file says so."""
    try:
        yield
    except ParseError as e:
        if is_nir:
            raise ParseError(f"{name}: a NIR file, not an ONNX model: load it with neuroc.load_nir") from e
        raise


def load(path_or_bytes, name=None):
    """Loads an ONNX model from a path or from bytes: a neuroc.Model."""
    return Model._load(path_or_bytes, name)
