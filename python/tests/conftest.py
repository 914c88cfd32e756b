"""Shared data for the neuroc package's tests. Run by tests/test_python.sh
(ctest test_python) with NEUROC_CLI (the neuroc program of the same build)
and NEUROC_SRC (the repository) set; small subsets keep the run short."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import neuroc

SRC = os.environ.get("NEUROC_SRC") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(SRC, "examples", "models")
DATA = os.path.join(SRC, "examples", "data")
FMNIST = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def model_path(name):
    return os.path.join(MODELS, name + ".onnx")


@pytest.fixture(scope="session")
def test_xy():
    """The 256 shipped test images (float32, (N, 1, 28, 28)) and labels."""
    return np.load(os.path.join(DATA, "fmnist_test_x.npy")), np.load(os.path.join(DATA, "fmnist_test_y.npy"))


@pytest.fixture(scope="session")
def fmnist():
    """Fashion-MNIST as uint8 arrays through the library's IDX reader:
    (train_x, train_y, test_x, test_y); skipped without the Debian package."""
    names = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
             "t10k-labels-idx1-ubyte.gz"]
    paths = [os.path.join(FMNIST, n) for n in names]
    if not all(os.path.exists(p) for p in paths):
        pytest.skip(f"Fashion-MNIST not found in {FMNIST} (Debian's dataset-fashion-mnist)")
    return tuple(neuroc.load_data(p) for p in paths)


@pytest.fixture(scope="session")
def cli():
    """A function running the neuroc program: cli(*args) -> CompletedProcess."""
    exe = os.environ.get("NEUROC_CLI") or shutil.which("neuroc")
    if not exe:
        pytest.skip("the neuroc program is not known (set NEUROC_CLI)")

    def run(*args, check=True):
        p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=600)
        if check and p.returncode != 0:
            raise AssertionError(f"neuroc {' '.join(map(str, args))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p
    return run


@pytest.fixture(scope="session")
def cnn():
    return neuroc.load(model_path("cnn"))


@pytest.fixture(scope="session")
def cnn_snn(cnn, test_xy):
    return neuroc.convert(cnn, calib=test_xy[0], per_channel=True, progress=False)


def eval_figures(stdout):
    """{t: 'xx.xx'} and the ANN's 'xx.xx' from `neuroc eval`'s printout."""
    acc, ann = {}, None
    for line in stdout.splitlines():
        parts = line.split()
        if line.startswith("ANN accuracy:"):
            ann = parts[2]
        elif len(parts) > 3 and parts[0] == "t" and parts[1] == "=":
            acc[int(parts[2])] = parts[3]
    return acc, ann
