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

MODEL=$SRC/examples/models/cnn.onnx
X=$SRC/tests/fixtures/convert/x.npy
/usr/bin/python3 -c "import numpy as np; np.save('$TMP/x8.npy', np.load('$SRC/examples/data/fmnist_test_x.npy')[:8])"
X8=$TMP/x8.npy

check "an output that exists and is not a regular file is refused, not replaced"
mkfifo "$TMP/fifo"
ln -s "$TMP/elsewhere.nir" "$TMP/link.nir"
mkdir "$TMP/dir.nir"
for dst in fifo link.nir dir.nir; do
    run_cli 1 convert "$MODEL" --calib "$X8" -o "$TMP/$dst"
    expect_one_error_line
    expect_in "$TMP/err" "$TMP/$dst: is a"
done
expect_in "$TMP/err" "a directory"
[ -p "$TMP/fifo" ] && pass "the FIFO is still a FIFO" || fail "the FIFO was replaced"
[ -L "$TMP/link.nir" ] && pass "the link is still a link" || fail "the link was replaced"
expect_no_file "$TMP/elsewhere.nir"
run_cli 1 convert "$MODEL" --calib "$X8" -o /dev/null
expect_in "$TMP/err" "/dev/null: is a character device"
run_cli 1 run "$MODEL" --input "$X8" --output "$TMP/fifo"
expect_in "$TMP/err" "$TMP/fifo: is a FIFO"
run_cli 1 convert "$MODEL" --calib "$X8" -o "$TMP/ok.nir" --report "$TMP/fifo"
expect_in "$TMP/err" "$TMP/fifo: is a FIFO"
expect_no_file "$TMP/ok.nir"

check "a report that cannot be written leaves no model written"
run_cli 1 convert "$MODEL" --calib "$X8" -o "$TMP/ok.nir" --report /dev/full/r.json
expect_one_error_line
expect_in "$TMP/err" "/dev/full/r.json"
expect_no_file "$TMP/ok.nir"

check "an empty output name is a usage error"
run_cli 2 convert "$MODEL" --calib "$X8" -o ''
expect_in "$TMP/err" "needs a value, not an empty string"
run_cli 2 info ''
expect_in "$TMP/err" "empty argument"

cli_finish test_hostile_cli
