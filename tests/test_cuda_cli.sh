#!/bin/bash
# neuroc run --backend cuda from the command line: bad strategies are named,
# a machine without a usable GPU (or a build without CUDA) gets a clear
# message and exit 1, and with a GPU --verbose reports each layer's strategy.
# usage: bash test_cuda_cli.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
cli_lib_init nc_test_cuda_cli

X=$SRC/examples/data/fmnist_test_x.npy
"$NEUROC" convert "$SRC/examples/models/mlp.onnx" --calib "$X" --calib-samples 32 -o "$TMP/net.nir" >/dev/null ||
    { echo "conversion failed"; exit 1; }

if ! "$NEUROC" --version | grep -q "features:.* cuda"; then
    check "a build without CUDA knows the backend and says why it cannot run"
    run_cli 1 run "$TMP/net.nir" -i "$X" -T 2 --backend cuda:event
    expect_in "$TMP/err" "built without CUDA"
    expect_one_error_line
    cli_finish test_cuda_cli
fi

check "an unknown strategy is named"
run_cli 1 run "$TMP/net.nir" -i "$X" -T 2 --backend cuda:sideways
expect_in "$TMP/err" "cuda strategy 'sideways'"
expect_one_error_line

check "a per-layer strategy for a layer that does not exist"
run_cli 1 run "$TMP/net.nir" -i "$X" -T 2 --backend cuda --cuda-strategy "event,nolayer=dense"
expect_in "$TMP/err" "no layer named 'nolayer'"

check "--cuda-precision takes fp32, tf32 or bf16"
run_cli 2 run "$TMP/net.nir" -i "$X" -T 2 --backend cuda --cuda-precision fp64
expect_in "$TMP/err" "fp32, tf32 or bf16"

check "--backend cuda runs on a GPU, else says why"
if "$NEUROC" run "$TMP/net.nir" -i "$X" -T 2 --batch 64 --backend cuda -v >"$TMP/out" 2>"$TMP/err"; then
    expect_in "$TMP/err" "(Affine): "
else
    expect_in "$TMP/err" "backend unavailable: "
    expect_in "$TMP/err" "use --backend cpu or cpu-fast"
    expect_one_error_line
fi
cli_finish test_cuda_cli
