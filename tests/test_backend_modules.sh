#!/bin/bash
# The cuda backend is a module (libneuroc_cuda.so) the core loads on first
# use, and whether it can run here is asked of a small probe module
# (libneuroc_cuda_probe.so, cudart only): the program and the library link
# no CUDA library, neuroc --version lists every backend and whether it can
# run here, and each way a module can fail to load (none in
# NEUROC_BACKEND_PATH, a file that is not a library) is a clean one-line
# error naming the cause.
# usage: bash test_backend_modules.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
BUILD=$3
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
cli_lib_init nc_test_backend_modules
CUDA_LIBS='libcudart|libcublas|libcublasLt|libcusparse|libnvJitLink|libcuda\.so'

if "$NEUROC" --version | grep -q '^features:.* cuda'; then cuda_built=1; else cuda_built=0; fi

check "the program and the core library link no CUDA library"
if command -v ldd >/dev/null; then
    for f in "$NEUROC" "$BUILD/libneuroc.so"; do
        if [ ! -e "$f" ]; then
            fail "$f missing"
        elif ldd "$f" | grep -qE "$CUDA_LIBS"; then
            fail "$(basename "$f") links CUDA: $(ldd "$f" | grep -E "$CUDA_LIBS" | tr -s ' \t' ' ' | tr '\n' ';')"
        else
            pass "$(basename "$f"): no CUDA library"
        fi
    done
else
    pass "no ldd here: not checked"
fi

check "--version lists every backend and whether it can run here"
run_cli 0 --version
expect_in "$TMP/out" "backends: cpu (available), cpu-fast (available), cuda ("
if grep -q 'cuda (unavailable: [^)]' "$TMP/out" || grep -q 'cuda (available)' "$TMP/out"; then
    pass "cuda is available, or unavailable with a reason: $(grep -o 'cuda (.*' "$TMP/out")"
else
    fail "cuda listed without a reason"; sed 's/^/    | /' "$TMP/out"
fi
[ "$cuda_built" = 1 ] || expect_in "$TMP/out" "cuda (unavailable: neuroc was built without CUDA"

X=$SRC/examples/data/fmnist_test_x.npy
"$NEUROC" convert "$SRC/examples/models/mlp.onnx" --calib "$X" --calib-samples 16 -o "$TMP/net.nir" >/dev/null ||
    { echo "conversion failed"; exit 1; }

if [ "$cuda_built" = 1 ]; then
    check "the modules are built next to the program and export their entry point only"
    for m in libneuroc_cuda.so libneuroc_cuda_probe.so; do
        mod=$(dirname "$NEUROC")/$m
        expect_file "$mod"
        if command -v nm >/dev/null; then
            nm -D --defined-only "$mod" | awk '{print $NF}' >"$TMP/exports"
            if [ "$(cat "$TMP/exports")" = nc_backend_module_init ]; then pass "$m exports nc_backend_module_init";
            else fail "$m exports more than the entry point: $(head -5 "$TMP/exports" | tr '\n' ' ')"; fi
        fi
    done
    if command -v ldd >/dev/null; then
        if ldd "$(dirname "$NEUROC")/libneuroc_cuda_probe.so" | grep -qE 'libcublas|libcusparse'; then
            fail "the probe module links cuBLAS or cuSPARSE"
        else
            pass "the probe module links neither cuBLAS nor cuSPARSE"
        fi
    fi

    check "NEUROC_BACKEND_PATH overrides: an empty folder gives 'not found' naming it"
    mkdir "$TMP/empty"
    NEUROC_BACKEND_PATH=$TMP/empty "$NEUROC" --version >"$TMP/out" 2>"$TMP/err"
    expect_in "$TMP/out" "cpu (available), cpu-fast (available), cuda (unavailable: module libneuroc_cuda_probe.so not found (looked in $TMP/empty;"
    NEUROC_BACKEND_PATH=$TMP/empty run_cli 1 run "$TMP/net.nir" -i "$X" -T 2 --backend cuda
    expect_in "$TMP/err" "backend 'cuda' is unavailable: module libneuroc_cuda.so not found (looked in $TMP/empty;"
    expect_one_error_line

    check "the probe module alone: the listing asks it, a session needs the backend's module"
    mkdir "$TMP/probe"
    ln -s "$(cd "$(dirname "$NEUROC")" && pwd)/libneuroc_cuda_probe.so" "$TMP/probe/"
    NEUROC_BACKEND_PATH=$TMP/probe "$NEUROC" --version >"$TMP/out" 2>"$TMP/err"
    expect_not_in "$TMP/out" "not found"
    NEUROC_BACKEND_PATH=$TMP/probe run_cli 1 run "$TMP/net.nir" -i "$X" -T 2 --backend cuda
    expect_in "$TMP/err" "module libneuroc_cuda.so not found (looked in $TMP/probe;"

    check "a module file that is not a library: dlopen's reason, one line"
    mkdir "$TMP/bad"
    echo "not an ELF file" >"$TMP/bad/libneuroc_cuda.so"
    NEUROC_BACKEND_PATH=$TMP/bad run_cli 1 run "$TMP/net.nir" -i "$X" -T 2 --backend cuda
    expect_in "$TMP/err" "cannot load $TMP/bad/libneuroc_cuda.so: "
    expect_one_error_line

    if command -v cc >/dev/null && [ -e "$BUILD/libneuroc.so" ]; then
        check "a program linking libneuroc.so finds the module next to the library, not the program"
        cat >"$TMP/list.c" <<'EOF'
#include <stdio.h>
#include <neuroc/neuroc.h>
int main(void)
{
    for (int i = 0; i < nc_backend_count(); i++) {
        nc_backend_info b;
        if (nc_backend_get_info(i, &b) == NC_OK)
            printf("%s %d %s\n", b.name, b.available, b.reason);
    }
    return 0;
}
EOF
        if cc -std=c11 -I"$SRC/include" "$TMP/list.c" -L"$BUILD" -lneuroc -Wl,-rpath,"$BUILD" -o "$TMP/list" 2>"$TMP/cc.err"
        then
            "$TMP/list" >"$TMP/out" 2>&1
            expect_in "$TMP/out" "cpu 1 "
            expect_in "$TMP/out" "cuda "
            expect_not_in "$TMP/out" "not found"
        else
            pass "cannot build against libneuroc.so here (sanitized build?): not checked"
        fi
    fi
fi

check "--backend cuda: runs on a GPU, else one clean line saying why"
if "$NEUROC" run "$TMP/net.nir" -i "$X" -T 2 --backend cuda >"$TMP/out" 2>"$TMP/err"; then
    pass "ran on a GPU"
else
    expect_in "$TMP/err" "neuroc: backend unavailable: "
    expect_one_error_line
fi
cli_finish test_backend_modules
