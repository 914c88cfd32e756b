#!/usr/bin/env bash
# The nir package (PyPI, in a venv) reads the .nir files neuroc writes:
# test_nir writes them to <build>/nir-out/ (with JSON sidecars of the
# expected graph) and tests/nir_check.py checks each with nir.read.
# usage: test_nir_interop.sh <neuroc-binary> <source-dir> <build-dir>
# Skips (77) only when the package index is unreachable outside CI.
set -u
SRC=$2
BUILD=$3
VENV="$BUILD/nir-venv"

. "$SRC/tests/nir_venv_needed.sh"
need_nir_venv "$SRC" "$VENV"

# Fresh files, whatever order ctest picked.
if ! "$BUILD/test_nir" >"$BUILD/nir-out.log" 2>&1; then
    cat "$BUILD/nir-out.log"
    echo "FAIL: test_nir failed, so its files cannot be checked" >&2
    exit 1
fi

files=("$BUILD/nir-out/cnn.nir" "$BUILD/nir-out/mlp.nir" "$BUILD/nir-out/cnn_plain.nir"
       "$BUILD/nir-out/depthwise.nir" "$BUILD/nir-out/maxpool.nir" "$BUILD/nir-out/pool_div.nir"
       "$BUILD/nir-out/xor.nir")
for f in cnn_sinabs_rt.nir braille_rt.nir; do  # only when ../shared had the samples
    [ -f "$BUILD/nir-out/$f" ] && files+=("$BUILD/nir-out/$f")
done
for f in "${files[@]}"; do
    [ -f "$f" ] || { echo "FAIL: $f was not written" >&2; exit 1; }
done
for f in cnn.nir mlp.nir depthwise.nir maxpool.nir pool_div.nir xor.nir; do
    [ -f "$BUILD/nir-out/$f.json" ] || { echo "FAIL: no sidecar for $f" >&2; exit 1; }
done
"$VENV/bin/python" "$SRC/tests/nir_check.py" "${files[@]}"
