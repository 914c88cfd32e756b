#!/bin/bash
# The neuroc program end to end: help and version, usage errors, file errors,
# and (with the shipped example model and data) info and run.
# usage: bash test_cli.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
BUILD=$3
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
cli_lib_init nc_test_cli

# run_cli EXPECTED_RC ARGS... : runs neuroc, keeps stdout/stderr in $TMP/out, $TMP/err.

# A float32 .npy file of the given shape tuple text and element count, zeros.
write_npy_f32() { # PATH SHAPE_TEXT NUMEL
    local dict="{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
    local total=$(( (10 + ${#dict} + 1 + 63) / 64 * 64 ))
    local hl=$((total - 10))
    {
        printf '\x93NUMPY\x01\x00'
        printf "\\x$(printf %02x $((hl & 255)))\\x$(printf %02x $((hl >> 8)))"
        printf '%s' "$dict"
        printf "%$((hl - ${#dict} - 1))s\n" ""
        head -c $(($3 * 4)) /dev/zero
    } >"$1"
}

# ---------------------------------------------------------------- no model needed
check "--help prints usage, exit 0"
run_cli 0 --help
expect_in "$TMP/out" "usage: neuroc"
expect_in "$TMP/out" "run"

check "--version prints version and features, exit 0"
run_cli 0 --version
expect_in "$TMP/out" "neuroc 0."
expect_in "$TMP/out" "features: cpu"

check "run --help documents the uint8 scaling, exit 0"
run_cli 0 run --help
expect_in "$TMP/out" "--raw-input"
expect_in "$TMP/out" "1/255"

check "info --help, exit 0"
run_cli 0 info --help
expect_in "$TMP/out" "usage: neuroc info"

check "no arguments: usage on stderr, exit 2"
run_cli 2
expect_in "$TMP/err" "usage: neuroc"

check "unknown command: usage on stderr, exit 2"
run_cli 2 frobnicate
expect_in "$TMP/err" "unknown command 'frobnicate'"
expect_in "$TMP/err" "usage: neuroc"

check "unknown option: exit 2"
run_cli 2 run model.onnx --input x.npy --bogus
expect_in "$TMP/err" "unknown option '--bogus'"
run_cli 2 --bogus

check "bad --batch, missing --input: exit 2"
run_cli 2 run model.onnx --input x.npy --batch 0
expect_in "$TMP/err" "--batch"
run_cli 2 run model.onnx
expect_in "$TMP/err" "--input is required"

check "missing model file: exit 1, file named"
run_cli 1 info "$TMP/no-such-model.onnx"
expect_in "$TMP/err" "no-such-model.onnx"
expect_one_error_line

check "random bytes as a model: exit 1, malformed"
head -c 4096 /dev/urandom >"$TMP/random.onnx"
run_cli 1 info "$TMP/random.onnx"
expect_in "$TMP/err" "malformed"
expect_in "$TMP/err" "random.onnx"
expect_one_error_line
run_cli 1 run "$TMP/random.onnx" --input "$TMP/x.npy" --output "$TMP/never.npy"
[ ! -e "$TMP/never.npy" ] && pass "no output file" || fail "output file created"

check "a damaged .nir is a bad NIR file, for every command (not a bad ONNX model)"
head -c 4096 /dev/urandom >"$TMP/random.nir"
printf '\x89HDF\r\n\x1a\n' >"$TMP/truncated.nir" # HDF5's signature and nothing after it
for f in random truncated; do
    for cmd in "info" "run --input $TMP/x.npy -T 2" "eval --data $TMP/x.npy --labels $TMP/x.npy -T 2" \
        "sim --data $TMP/x.npy --labels $TMP/x.npy" "finetune --train $TMP/x.npy --labels $TMP/x.npy -o $TMP/ft.nir"; do
        # shellcheck disable=SC2086 # the command's options are separate words
        run_cli 1 ${cmd%% *} "$TMP/$f.nir" $(echo "$cmd" | cut -s -d' ' -f2-)
        expect_in "$TMP/err" "$f.nir: bad NIR file"
        expect_not_in "$TMP/err" "ONNX"
    done
done

check "info describes a model with an op neuroc cannot run (exit 0); run refuses it"
run_cli 0 info "$SRC/tests/fixtures/ops/softplus.onnx"
expect_in "$TMP/out" "Softplus*"
expect_in "$TMP/out" "[1, 2, 6, 6] -> ?"
expect_in "$TMP/out" "1 layer(s) of ops neuroc cannot run: Softplus '/1/Softplus'"
run_cli 1 run "$SRC/tests/fixtures/ops/softplus.onnx" --input "$SRC/tests/fixtures/ops/x.npy"
expect_in "$TMP/err" "Softplus"

# ---------------------------------------------------------------- with the example model
MLP=$SRC/examples/models/mlp.onnx
X=$SRC/examples/data/fmnist_test_x.npy
Y=$SRC/examples/data/fmnist_test_y.npy
REF=$SRC/examples/data/mlp_logits.npy
check "example files exist (part of the repository)"
missing=0
for f in "$MLP" "$X" "$Y" "$REF"; do
    if [ -f "$f" ]; then pass "$f"; else fail "missing $f"; missing=1; fi
done

if [ $missing -eq 0 ]; then
    check "info prints the layer table, totals, inputs and outputs"
    run_cli 0 info "$MLP"
    expect_in "$TMP/out" "input -> output"
    expect_in "$TMP/out" "Gemm"
    expect_in "$TMP/out" "[1, 784] -> [1, 256]"
    expect_in "$TMP/out" "total: "
    expect_in "$TMP/out" "[N, 1, 28, 28]"

    check "run with a wrong-shape input: exit 1, both shapes named, no output file"
    write_npy_f32 "$TMP/wrong.npy" "(2, 5)" 10
    run_cli 1 run "$MLP" --input "$TMP/wrong.npy" --output "$TMP/wrong_out.npy"
    expect_in "$TMP/err" "[2, 5]"
    expect_in "$TMP/err" "[N, 1, 28, 28]"
    expect_one_error_line
    [ ! -e "$TMP/wrong_out.npy" ] && pass "no output file" || fail "output file created"

    check "run on a flat [N, 784] input reshapes it to the model's [N, 1, 28, 28]"
    write_npy_f32 "$TMP/flat.npy" "(3, 784)" $((3 * 784))
    run_cli 0 run "$MLP" --input "$TMP/flat.npy" --output "$TMP/flat_out.npy"

    check "run with missing input / labels files: exit 1, file named"
    run_cli 1 run "$MLP" --input "$TMP/absent.npy"
    expect_in "$TMP/err" "absent.npy"
    run_cli 1 run "$MLP" --input "$X" --labels "$TMP/absent_labels.npy"
    expect_in "$TMP/err" "absent_labels.npy"

    check "run with labels of the wrong count: exit 1"
    run_cli 1 run "$MLP" --input "$TMP/flat.npy" --labels "$Y"
    expect_in "$TMP/err" "labels"

    check "run --labels prints accuracy; --output writes a [256, 10] npy"
    run_cli 0 run "$MLP" --input "$X" --labels "$Y" --output "$TMP/logits.npy" --batch 100
    if grep -qE '^accuracy: [01]\.[0-9]{4} \([0-9]+/256\)$' "$TMP/out"; then
        pass "$(cat "$TMP/out")"
    else
        fail "no accuracy line"; sed 's/^/    | /' "$TMP/out"
    fi
    [ ! -s "$TMP/err" ] && pass "stderr quiet (not a terminal)" || fail "stderr not empty"
    if [ -f "$TMP/logits.npy" ]; then
        if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
            /usr/bin/python3 - "$TMP/logits.npy" "$REF" <<'EOF' && pass "numpy: shape (256, 10), matches the reference logits" || fail "numpy check"
import sys, numpy as np
a, r = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.dtype == np.float32 and a.shape == (256, 10), (a.dtype, a.shape)
d = float(np.abs(a - r).max())
print("    max |neuroc - torch| =", d)
assert d < 1e-3
EOF
        else
            head -c 128 "$TMP/logits.npy" | grep -qaF "'shape': (256, 10)" &&
                pass "npy header says shape (256, 10)" || fail "npy header shape"
        fi
    else
        fail "no output file"
    fi
    ls "$TMP" | grep -q '\.tmp\.' && fail "temporary file left behind" || pass "no temporary files left"

    check "run --output into a missing folder: exit 1, nothing written"
    run_cli 1 run "$MLP" --input "$X" --output "$TMP/nodir/out.npy"
    expect_in "$TMP/err" "nodir/out.npy"

    FM=/usr/share/datasets/fashion-mnist
    if [ -f "$FM/t10k-images-idx3-ubyte.gz" ]; then
        check "run on the gzip IDX Fashion-MNIST test set (uint8 scaled by 1/255)"
        run_cli 0 run "$MLP" --input "$FM/t10k-images-idx3-ubyte.gz" --labels "$FM/t10k-labels-idx1-ubyte.gz"
        if grep -qE '^accuracy: 0\.(8[0-9]|9[0-9])[0-9]{2} \([0-9]+/10000\)$' "$TMP/out"; then
            pass "$(cat "$TMP/out")"
        else
            fail "accuracy on 10000 images not in 0.80..0.99"; sed 's/^/    | /' "$TMP/out"
        fi
    else
        echo "  note: $FM absent; IDX run not checked"
    fi
fi

# ---------------------------------------------------------------- spiking networks (.nir)
SINABS="$SRC/../shared/nir-samples/cnn_sinabs.nir"
npy_shape() { # the shape tuple in an npy header
    head -c 200 "$1" | tr -d '\0' | grep -aoE "'shape': \([0-9, ]*\)" | sed "s/'shape': //"
}
expect_shape() { # FILE TUPLE
    local got; got=$(npy_shape "$1")
    if [ "$got" = "$2" ]; then pass "$(basename "$1") has shape $2"; else fail "$(basename "$1") has shape '$got', expected $2"; fi
}
if [ ! -f "$SINABS" ]; then
    echo "  note: ../shared/nir-samples is absent (a user's clone): .nir CLI checks skipped"
else
    check "info on a NIR file written by sinabs"
    run_cli 0 info "$SINABS"
    expect_in "$TMP/out" "Conv2d"
    expect_in "$TMP/out" "<- output"
    expect_in "$TMP/out" "8970 spiking neurons"

    check "run a static batch for T steps: output summed, shape (N, 10)"
    write_npy_f32 "$TMP/static.npy" "(3, 2, 34, 34)" $((3 * 2 * 34 * 34))
    run_cli 0 run "$SINABS" --input "$TMP/static.npy" -T 4 --output "$TMP/y.npy"
    expect_shape "$TMP/y.npy" "(3, 10)"
    expect_in "$TMP/out" "ran 3 samples for 4 steps"

    check "run a time series (T, N, C, H, W) per step, recording a layer's spikes"
    write_npy_f32 "$TMP/series.npy" "(5, 3, 2, 34, 34)" $((5 * 3 * 2 * 34 * 34))
    run_cli 0 run "$SINABS" --input "$TMP/series.npy" --per-step --output "$TMP/ys.npy" \
        --record "$TMP/spk.npy" --layer 1 --batch 2
    expect_shape "$TMP/ys.npy" "(5, 3, 10)"
    expect_shape "$TMP/spk.npy" "(5, 3, 16, 16, 16)"

    check "a wrong input shape names both shapes and writes nothing"
    write_npy_f32 "$TMP/bad.npy" "(3, 1, 28, 28)" $((3 * 28 * 28))
    run_cli 1 run "$SINABS" --input "$TMP/bad.npy" --output "$TMP/none.npy"
    expect_one_error_line
    expect_in "$TMP/err" "[N, 2, 34, 34]"
    if [ -e "$TMP/none.npy" ]; then fail "output file written on failure"; else pass "no output file"; fi

    check "unknown layer to record, bad options"
    run_cli 1 run "$SINABS" --input "$TMP/static.npy" --record "$TMP/r.npy" --layer nosuch
    expect_in "$TMP/err" "nosuch"
    run_cli 2 run "$SINABS" --input "$TMP/static.npy" --nir-reset sideways
    run_cli 2 run "$SINABS" --input "$TMP/static.npy" --encoding morse
fi

cli_finish test_cli
