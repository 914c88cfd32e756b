#!/usr/bin/env bash
# neuroc --max-tensor-size: the global option bounds every tensor a command
# reads or computes; a file beyond it fails with one clear error line naming
# the file; a malformed size is a usage error.
NEUROC=$1 SRC=$2
. "$SRC/tests/cli_lib.sh"
cli_lib_init test_limits_cli
MLP=$SRC/examples/models/mlp.onnx

check "info within the default limit"
run_cli 0 info "$MLP"

check "--max-tensor-size 1K refuses the model's weights"
run_cli 1 --max-tensor-size 1K info "$MLP"
expect_one_error_line
expect_in "$TMP/err" "size limit exceeded"
expect_in "$TMP/err" "$MLP"
expect_in "$TMP/err" "1024 bytes"

check "a larger limit reads it"
run_cli 0 --max-tensor-size 64M info "$MLP"

check "a hostile file is refused by the default limit"
run_cli 1 info "$SRC/tests/fixtures/bad/huge_pad.onnx"
expect_one_error_line
expect_in "$TMP/err" "node 'pad'"

check "malformed size"
run_cli 2 --max-tensor-size lots info "$MLP"
expect_in "$TMP/err" "--max-tensor-size"

cli_finish test_limits_cli
