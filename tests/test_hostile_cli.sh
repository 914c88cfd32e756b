#!/usr/bin/env bash
# Hostile input, round 2 (issue 33): each check is a file or destination
# that crashed, hung, replaced a special file or read outside a model's
# folder before; now each gets one error line naming the file and the
# cause, a non-zero exit and nothing written.
NEUROC=$1 SRC=$2
. "$SRC/tests/cli_lib.sh"
cli_lib_init test_hostile_cli
BAD=$SRC/tests/fixtures/bad

check "protobuf messages nested thousands deep are refused, not a stack overflow"
for f in deep_sequence_type deep_if_then_branch; do
    run_cli 1 info "$BAD/$f.onnx"
    expect_one_error_line
    expect_in "$TMP/err" "$BAD/$f.onnx"
    expect_in "$TMP/err" "nested more than 100 deep"
done
expect_in "$TMP/err" "graph.node.attribute.g.node"

cli_finish test_hostile_cli
