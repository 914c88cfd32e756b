"""numpy arrays to and from nc_tensor, without copies where the layout allows."""
import ctypes

import numpy as np

from . import _lib
from ._errors import InvalidArgument, check

F32, U8, I64 = 1, 2, 7
_DTYPES = {np.dtype(np.float32): F32, np.dtype(np.uint8): U8, np.dtype(np.int64): I64}
_NUMPY = {F32: np.float32, U8: np.uint8, I64: np.int64}


def is_torch_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "numpy")


def to_numpy_input(x):
    """A numpy array from an array, a torch tensor or a list (torch imported only if x is one)."""
    if isinstance(x, np.ndarray):
        return x
    if is_torch_tensor(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


class Tensor:
    """An nc_tensor viewing a numpy array (nc_tensor_wrap): no copy when the
    array is C-contiguous, aligned and of a dtype the library takes; the
    array is kept alive as long as the tensor."""

    def __init__(self, array):
        a = np.asarray(array)
        if a.dtype not in _DTYPES:
            raise InvalidArgument(f"arrays handed to neuroc are float32, uint8 or int64, not {a.dtype}")
        if not (a.flags.c_contiguous and a.flags.aligned):
            a = np.ascontiguousarray(a)
        self.array = a
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        self.ptr = ctypes.c_void_p()
        check(_lib.nc_tensor_wrap(_DTYPES[a.dtype], a.ndim, shape, a.ctypes.data if a.size else None,
                                  ctypes.byref(self.ptr)))

    def __del__(self):
        if getattr(self, "ptr", None):
            _lib.nc_tensor_free(self.ptr)
            self.ptr = None


class _Owner:
    """Lends a library-owned nc_tensor's buffer to numpy and frees the tensor
    when the last array viewing it goes."""

    def __init__(self, ptr):
        self.ptr = ptr
        dt = _lib.nc_tensor_dtype(ptr)
        nd = _lib.nc_tensor_ndim(ptr)
        sh = _lib.nc_tensor_shape(ptr)
        self.__array_interface__ = {
            "shape": tuple(sh[i] for i in range(nd)), "typestr": np.dtype(_NUMPY[dt]).str,
            "data": (_lib.nc_tensor_data(ptr) or 0, False), "version": 3}

    def __del__(self):
        _lib.nc_tensor_free(self.ptr)


def take(ptr):
    """A numpy array over a tensor the library handed us (we own it): no copy."""
    if _lib.nc_tensor_numel(ptr) == 0:
        o = _Owner(ptr)
        return np.empty(o.__array_interface__["shape"], _NUMPY[_lib.nc_tensor_dtype(ptr)])
    return np.asarray(_Owner(ptr))
