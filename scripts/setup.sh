#!/usr/bin/env bash
# Installs what neuroc needs to build and test, from Debian's packages.
# Idempotent and quick when everything is already there. Run as root.
# Open MPI is optional for the build (-DNEUROC_MPI=AUTO) but installed here so
# the data-parallel paths and tests/test_mpi.sh run. python3-pytest,
# -setuptools and -wheel: the Python package (python/), installed offline and
# tested by tests/test_python.sh.
#   scripts/setup.sh            build and test dependencies, data sets, and
#                               Debian's PyTorch, torchvision and ONNX: the suite
#                               exports real models (test_zoo_quick) and runs the
#                               NIR tools that need torch (test_nir_peers)
#   scripts/setup.sh --torch    the same (kept for old instructions)
set -euo pipefail

# clang (with its sanitizer and libFuzzer runtimes): the sanitizer pass of
# scripts/test.sh and the fuzzers of scripts/fuzz.sh.
pkgs=(cmake make gcc pkg-config clang libclang-rt-14-dev
      libprotobuf-c-dev protobuf-c-compiler libonnx-dev
      libhdf5-dev libcmocka-dev libopenblas-dev zlib1g-dev
      libonnx-testdata dataset-fashion-mnist
      libopenmpi-dev openmpi-bin
      python3 python3-venv python3-numpy python3-h5py valgrind
      python3-pytest python3-setuptools python3-wheel
      python3-torch python3-torchvision python3-onnx)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: dependencies present"
