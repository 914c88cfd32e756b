"""Bad input raises the neuroc.Error subclass of the library's status, with
the library's own message (nc_last_error)."""
import logging
import os

import numpy as np
import pytest

import neuroc
from conftest import SRC, model_path


@pytest.fixture
def truncated(tmp_path):
    p = tmp_path / "truncated.onnx"
    with open(model_path("cnn"), "rb") as f:
        p.write_bytes(f.read()[:5000])
    return p


def test_truncated_onnx(truncated):
    with pytest.raises(neuroc.ParseError) as e:
        neuroc.load(truncated)
    err = e.value
    assert isinstance(err, neuroc.Error) and isinstance(err, ValueError)
    assert err.status == "NC_ERR_PARSE" and err.code == 4
    assert err.message == str(err) and str(truncated) in err.message and "truncated" in err.message
    with pytest.raises(neuroc.ParseError, match="truncated"):
        neuroc.load(truncated.read_bytes())
    with pytest.raises(neuroc.ParseError, match="truncated"):
        neuroc.convert(truncated.read_bytes(), calib=np.zeros((2, 1, 28, 28), np.float32))


def test_missing_and_wrong_files(tmp_path, truncated):
    with pytest.raises(neuroc.FileError, match="cannot open") as e:
        neuroc.load(tmp_path / "missing.onnx")
    assert isinstance(e.value, OSError) and e.value.status == "NC_ERR_IO"
    with pytest.raises(neuroc.ParseError, match="not an HDF5 file"):
        neuroc.load_nir(truncated)
    with pytest.raises(neuroc.Error):
        neuroc.load_data(truncated)


def test_wrong_shapes(cnn, cnn_snn):
    bad = np.zeros((2, 1, 27, 27), np.float32)
    with pytest.raises(neuroc.ShapeError, match=r"27, 27\]"):
        cnn.run(bad)
    with pytest.raises(neuroc.ShapeError, match="time series"):
        cnn_snn.run(bad)
    with pytest.raises(neuroc.ShapeError):
        cnn_snn.evaluate(bad, np.zeros(2, np.int64))
    with pytest.raises(neuroc.Error):
        neuroc.convert(cnn, calib=bad)


def test_bad_options(cnn, cnn_snn):
    x = np.zeros((2, 1, 28, 28), np.float32)
    with pytest.raises(neuroc.BackendUnavailable, match="unknown backend 'gpu9'"):
        cnn_snn.run(x, backend="gpu9")
    with pytest.raises(neuroc.InvalidArgument, match="threshold"):
        neuroc.convert(cnn, calib=x, threshold="p200")
    with pytest.raises(neuroc.InvalidArgument, match="maxpool"):
        neuroc.convert(cnn, calib=x, maxpool="median")
    with pytest.raises(neuroc.InvalidArgument, match="labels"):
        cnn_snn.evaluate(x, np.zeros(2, np.float32))
    with pytest.raises(neuroc.InvalidArgument, match="2 labels for"):
        cnn_snn.evaluate(np.zeros((3, 1, 28, 28), np.float32), np.zeros(2, np.int64))


def test_library_refusals_keep_their_message(cnn_snn, test_xy):
    """Errors the library finds deep inside a call (not argument checks)."""
    x, y = test_xy
    with pytest.raises(neuroc.Error) as e:  # the data-free conversion names every ReLU it has no statistics for
        neuroc.convert(os.path.join(SRC, "tests", "fixtures", "shuffle", "shuffle.onnx"))
    assert "Relu" in e.value.message
    with pytest.raises(neuroc.InvalidArgument, match="no layer|record|not"):
        cnn_snn.run(x[:2], record=["no-such-layer"])


def test_conversion_warnings_reach_logging_and_warnings(caplog):
    """What `neuroc convert` prints as warnings reaches the "neuroc" logger and
    Python's warnings (data-free: the cnn has no BatchNorm statistics)."""
    caplog.set_level(logging.DEBUG, logger="neuroc")
    with pytest.warns(neuroc.ConversionWarning, match="no BatchNorm statistics") as w:
        snn = neuroc.convert(model_path("cnn"))
    logged = [r for r in caplog.records if r.name == "neuroc" and r.levelno == logging.WARNING]
    assert any("no BatchNorm statistics" in r.getMessage() for r in logged), caplog.records
    assert len(logged) == len(snn.report["warnings"]) == len(w)
    # in Python's words: calib=, not the program's --calib
    assert all("--calib" not in r.getMessage() for r in logged)
    assert any("calib=" in r.getMessage() for r in logged)


def test_errors_name_python_arguments(cnn_snn):
    """The library's messages name the program's options; Python's name the arguments."""
    x = np.zeros((2, 1, 28, 28), np.float32)
    with pytest.raises(neuroc.ShapeError) as e:
        cnn_snn.run(np.zeros((4, 3, 32, 32), np.float32), timesteps=2)
    assert "(N, 1, 28, 28) or a time series (T, N, 1, 28, 28)" in e.value.message
    assert "])" not in e.value.message
    if any(b["name"] == "cuda" and b["available"] for b in neuroc.backends()):
        pytest.skip("a GPU is here: the cuda backend is available")
    with pytest.raises(neuroc.BackendUnavailable) as e:
        cnn_snn.run(x, timesteps=2, backend="cuda")
    assert "--backend" not in e.value.message
    assert "backend='cpu'" in e.value.message and "backend='cpu-fast'" in e.value.message


def test_program_options_in_python_words():
    """The rule that rewrites the library's messages (neuroc._messages)."""
    from neuroc._messages import pythonic
    assert pythonic("load it with --nir-reset subtract --nir-spike ge)") == \
        "load it with reset='subtract', spike='ge')"
    assert pythonic("convert with --plain-spikes, -T 8 and --maxpool average") == \
        "convert with spikes='plain', timesteps=8 and maxpool='average'"
    assert pythonic("need data (--calib)") == "need data (calib=)"
    assert pythonic("a file.h5:/x-T path, neuroc --max-tensor-size 1G") == \
        "a file.h5:/x-T path, neuroc --max-tensor-size 1G"
