"""Bad input raises the neuroc.Error subclass of the library's status, with
the library's own message (nc_last_error)."""
import numpy as np
import pytest

import neuroc
from conftest import model_path


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
    with pytest.raises(neuroc.Error) as e:  # the data-free conversion names every ReLU without BN statistics
        neuroc.convert(model_path("cnn"))
    assert "Relu" in e.value.message
    with pytest.raises(neuroc.InvalidArgument, match="no layer|record|not"):
        cnn_snn.run(x[:2], record=["no-such-layer"])
