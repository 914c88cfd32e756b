"""Hostile files through the Python package (issue 33): each raises a
neuroc error naming the file; none may kill the interpreter."""
import os

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
