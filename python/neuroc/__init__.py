"""neuroc: convert trained ANNs (ONNX, or a torch.nn.Module) into spiking
networks and run them, over the neuroc C library (ctypes; no second
implementation). numpy in and out; torch is imported only when a torch
object is passed.

    import neuroc
    snn = neuroc.convert(model, calib=x_train[:1000], timesteps=8)
    print(snn.evaluate(x_test, y_test, timesteps=32).accuracy[32])
"""
import atexit
import ctypes
import logging
import os

from . import _lib
from ._data import export_onnx
from ._errors import check as _check
from ._errors import (BackendUnavailable, DeviceError, Error, FileError, InternalError, InvalidArgument,
                      LimitError, ModelError, OutOfMemory, ParseError, ShapeError, UnsupportedError)
from ._model import Layer, Model, ValueInfo, load
from ._results import EvalResult, LoihiResult
from ._snn import SNN, ConversionWarning, SnnLayer, convert, load_nir, nir_file_info
from ._tensor import Tensor, take

__version__ = _lib.nc_version().decode()
library_path = _lib.path          # the libneuroc in use
library_found_by = _lib.found_by  # "NEUROC_LIBRARY", "bundled", "system (ctypes.util)" or "pkg-config"

__all__ = ["load", "convert", "load_nir", "nir_file_info", "backends", "load_data", "export_onnx", "Model", "SNN", "EvalResult",
           "LoihiResult", "Layer", "SnnLayer", "ValueInfo", "Error", "InvalidArgument", "OutOfMemory",
           "FileError", "ParseError", "UnsupportedError", "ShapeError", "ModelError", "LimitError",
           "BackendUnavailable", "DeviceError", "InternalError", "ConversionWarning", "features", "version", "Tensor"]

# The library's warnings and notes go to the "neuroc" logger (the library never prints).
_log = logging.getLogger("neuroc")
_LEVELS = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}
_LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


@_LOG_FN
def _on_log(level, msg, _user):
    try:
        _log.log(_LEVELS.get(level, logging.INFO), "%s", msg.decode("utf-8", "replace"))
    except Exception:  # never let an exception reach C
        pass


_lib.nc_set_log_callback(ctypes.cast(_on_log, ctypes.c_void_p), None)
# unhooked before the interpreter tears the callback down
atexit.register(_lib.nc_set_log_callback, None, None)


def version():
    """The C library's version and build features, e.g. ('0.1.0', 'cpu blas cuda')."""
    return _lib.nc_version().decode(), _lib.nc_build_features().decode()


def backends():
    """The backends the library knows, and whether each can run here (and why not)."""
    out = []
    for i in range(_lib.nc_backend_count()):
        b = _lib.BackendInfo()
        _check(_lib.nc_backend_get_info(i, ctypes.byref(b)))
        out.append({"name": b.name.decode(), "available": bool(b.available),
                    "reason": (b.reason or b"").decode()})
    return out


def load_data(path):
    """A data file as the library reads it (nc_data_load: .npy, IDX, gzip'd or
    not, file.h5:/dataset), in its own dtype (float64 becomes float32)."""
    t = ctypes.c_void_p()
    _check(_lib.nc_data_load(os.fspath(path).encode(), 0, ctypes.byref(t)))
    return take(t)


def features(x, sample_shape=None, scale=True):
    """x as the library is fed it: float32, uint8 scaled by 1/255 (unless
    scale=False), reshaped to sample_shape when the value counts agree."""
    from ._data import features as f
    return f(x, sample_shape, scale)

