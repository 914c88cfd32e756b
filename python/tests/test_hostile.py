"""Hostile files through the Python package (issue 33): each raises a
neuroc error naming the file; none may kill the interpreter."""
import os

import numpy as np
import pytest

import neuroc
from conftest import SRC

BAD = os.path.join(SRC, "tests", "fixtures", "bad")


@pytest.mark.parametrize("name", ["deep_sequence_type.onnx", "deep_if_then_branch.onnx"])
def test_deep_nesting_raises(name):
    path = os.path.join(BAD, name)
    with pytest.raises(neuroc.LimitError, match="nested more than 100 deep") as e:
        neuroc.load(path)
    assert path in str(e.value)


def test_directory_and_fifo_are_named(tmp_path):
    """Issue 32 item 1: a directory was 'a file of 9223372036854775807 bytes'."""
    d = tmp_path / "model.onnx"
    d.mkdir()
    with pytest.raises(neuroc.FileError, match="is a directory; a file was expected") as e:
        neuroc.load(str(d))
    assert str(d) in str(e.value)
    fifo = tmp_path / "x.npy"
    os.mkfifo(fifo)  # opening it for reading used to wait for a writer
    with pytest.raises(neuroc.FileError, match=r"is a FIFO \(named pipe\)"):
        neuroc.load_data(str(fifo))
    nir_fifo = tmp_path / "net.nir"
    os.mkfifo(nir_fifo)  # nir_file_info opened it with HDF5, which waited for a writer
    with pytest.raises(neuroc.FileError, match=r"is a FIFO \(named pipe\)"):
        neuroc.nir_file_info(str(nir_fifo))


def test_non_finite_data_is_refused(test_xy):
    """Issue 32 item 5: NaN input ran with exit 0 and NaN logits."""
    x = test_xy[0][:8].copy()
    x[2, 0, 3, 4] = np.nan
    m = neuroc.load(os.path.join(SRC, "examples", "models", "cnn.onnx"))
    with pytest.raises(neuroc.InvalidArgument, match=r"sample 2 holds NaN at index 88"):
        m.run(x)
    with pytest.raises(neuroc.InvalidArgument, match=r"calibration data: sample 2 holds NaN at index 88"):
        neuroc.convert(m, x)
    snn = neuroc.convert(m, test_xy[0][:8])
    with pytest.raises(neuroc.InvalidArgument, match=r"sample 2 holds NaN at index 88"):
        snn.run(x, timesteps=4)
