"""neuroc.Error and one subclass per nc_status, carrying the library's message."""
from . import _lib
from ._messages import pythonic


class Error(Exception):
    """A failure reported by libneuroc (or a bad argument caught before the call).

    .status is the nc_status name ("NC_ERR_SHAPE", ...), .code its number and
    .message the library's text (nc_last_error), the program's options in it
    written as the Python arguments that mean the same (backend='cpu')."""
    status = "NC_ERR_INTERNAL"
    code = 11

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


# Subclasses of the built-in that fits too, so `except ValueError` works where it should.
class InvalidArgument(Error, ValueError):
    status, code = "NC_ERR_INVALID_ARG", 1


class OutOfMemory(Error, MemoryError):
    status, code = "NC_ERR_NOMEM", 2


class FileError(Error, OSError):
    status, code = "NC_ERR_IO", 3


class ParseError(Error, ValueError):
    status, code = "NC_ERR_PARSE", 4


class UnsupportedError(Error):
    status, code = "NC_ERR_UNSUPPORTED", 5


class ShapeError(Error, ValueError):
    status, code = "NC_ERR_SHAPE", 6


class ModelError(Error, ValueError):
    status, code = "NC_ERR_MODEL", 7


class LimitError(Error):
    status, code = "NC_ERR_LIMIT", 8


class BackendUnavailable(Error):
    status, code = "NC_ERR_BACKEND_UNAVAILABLE", 9


class DeviceError(Error):
    status, code = "NC_ERR_DEVICE", 10


class InternalError(Error):
    status, code = "NC_ERR_INTERNAL", 11


_BY_CODE = {c.code: c for c in (InvalidArgument, OutOfMemory, FileError, ParseError, UnsupportedError, ShapeError,
                                 ModelError, LimitError, BackendUnavailable, DeviceError, InternalError)}


def error_for(code, message):
    cls = _BY_CODE.get(code, Error)
    return cls(message, code) if cls is Error else cls(message)


def check(status):
    """Raises the exception of a failed call, with nc_last_error's text."""
    if status != 0:
        msg = (_lib.nc_last_error() or b"").decode("utf-8", "replace")
        raise error_for(status, pythonic(msg) or _lib.nc_status_str(status).decode())


def bad_arg(message):
    return InvalidArgument(message)
