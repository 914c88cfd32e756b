#!/bin/bash
# HDF5 files that crash the HDF5 library itself (tests/fixtures/hdf5_crash,
# found by fuzz_nir): `neuroc info/run` read them in a child process first,
# so each is a one-line error naming the file and exit status 1, never a
# crash of neuroc; also as file.h5:/dataset data. Good files still load.
# usage: bash test_isolate_cli.sh <neuroc-binary> <source-dir> <build-dir>
set -u
NEUROC=$1
SRC=$2
. "$SRC/tests/cli_lib.sh"
cli_lib_init nc_test_isolate_cli

for f in "$SRC"/tests/fixtures/hdf5_crash/*.nir; do
    check "$(basename "$f"): a clean refusal"
    run_cli 1 info "$f"
    expect_in "$TMP/err" "$(basename "$f")"
    run_cli 1 run "$f" --input "$SRC/examples/data/fmnist_test_x.npy" -T 2 --output "$TMP/y.npy"
    expect_in "$TMP/err" "$(basename "$f")"
    run_cli 1 run "$SRC/examples/models/mlp.onnx" --input "$f:/node/type" --output "$TMP/y.npy"
    expect_in "$TMP/err" "$(basename "$f")"
done

check "a good .nir still loads (through the child first)"
run_cli 0 convert "$SRC/examples/models/mlp.onnx" --calib "$SRC/examples/data/fmnist_test_x.npy" \
    --calib-samples 32 -o "$TMP/m.nir"
run_cli 0 info "$TMP/m.nir"
expect_in "$TMP/out" "spiking network"
run_cli 0 --no-isolate info "$TMP/m.nir"
expect_in "$TMP/out" "spiking network"

cli_finish test_isolate_cli
