#!/usr/bin/env bash
# neuroc under valgrind (memcheck): start-up, a failing import of hostile
# files and a small conversion show no invalid access and no leak. This is
# also the check that the program loads no CUDA or MPI library when it does
# not need one: their start-up code made every neuroc call report invalid
# reads under valgrind, which hid neuroc's own errors. Skipped (77) where
# valgrind is absent or in a sanitizer build (ASan and valgrind exclude each
# other).
# usage: test_valgrind.sh NEUROC SOURCE_DIR BINARY_DIR
set -u
NEUROC=$1
SRC=$2
. "$SRC/tests/cli_lib.sh"
command -v valgrind >/dev/null || { echo "skipped: valgrind not installed (scripts/setup.sh installs it)"; exit 77; }
if nm -D "$NEUROC" 2>/dev/null | grep -q __asan_init || ldd "$NEUROC" | grep -q libasan; then
    echo "skipped: a sanitizer build"; exit 77
fi
cli_lib_init nc_test_valgrind

vg() { # WANT_RC ARGS...: neuroc under memcheck; 99 means valgrind found an error
    local want=$1
    shift
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --suppressions="$(dirname "${BASH_SOURCE[0]}")/valgrind.supp" \
        "$NEUROC" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ $rc -eq 99 ]; then
        fail "valgrind reports errors for neuroc $*"
        head -20 "$TMP/err" | sed 's/^/    | /'
    elif [ $rc -ne "$want" ]; then
        fail "neuroc $* exited $rc, expected $want"
        head -5 "$TMP/err" | sed 's/^/    | /'
    else
        pass "neuroc $* (exit $rc) clean"
    fi
}

check "start-up"
vg 0 --version
check "hostile ONNX files are refused cleanly"
for f in truncated cycle huge_tensor; do
    [ -f "$SRC/tests/fixtures/bad/$f.onnx" ] && vg 1 info "$SRC/tests/fixtures/bad/$f.onnx"
done
check "a conversion and a run"
vg 0 convert "$SRC/examples/models/mlp.onnx" --calib "$SRC/examples/data/fmnist_test_x.npy" --calib-samples 32 \
    -T 2 -o "$TMP/mlp.nir"
vg 1 run "$TMP/mlp.nir" --input "$SRC/examples/data/fmnist_test_x.npy" --backend cuda -o "$TMP/y.npy"

cli_finish test_valgrind
