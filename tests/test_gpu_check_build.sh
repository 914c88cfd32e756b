#!/bin/bash
# The core build that scripts/gpu-check falls back to on a GPU machine
# without HDF5, protobuf-c, OpenBLAS or cmocka (cmake/gpu_check.cmake) must
# keep building as the library grows: configure and build it here, then run
# its test_cuda (0 on a GPU, 77 = skipped without one). Skipped without nvcc.
# usage: bash test_gpu_check_build.sh <neuroc-binary> <source-dir> <build-dir>
set -u
SRC=$2
BUILD=$3
command -v nvcc >/dev/null || { echo "SKIP: no nvcc"; exit 77; }
out=$BUILD/gpu-check-core
cmake -S "$SRC" -B "$out" -DCMAKE_BUILD_TYPE=Release -DNEUROC_GPU_CHECK=ON >"$out.log" 2>&1 &&
    cmake --build "$out" -j2 >>"$out.log" 2>&1 || { tail -30 "$out.log"; echo "FAIL: the gpu-check core build"; exit 1; }
[ -f "$out/libneuroc_cuda.so" ] || { echo "FAIL: the cuda module was not built next to test_cuda"; exit 1; }
"$out/test_cuda" | tee "$out.test_cuda.log"
rc=${PIPESTATUS[0]}
# skipped must mean no GPU, never a cuda module the test did not find
if grep -q 'libneuroc_cuda.so not found' "$out.test_cuda.log"; then
    echo "FAIL: test_cuda did not find the cuda module"
    exit 1
fi
case $rc in
0) echo "PASS: gpu-check core build; test_cuda passed on a GPU" ;;
77) echo "PASS: gpu-check core build; test_cuda skipped (no GPU)" ;;
*) echo "FAIL: test_cuda exited $rc"; exit 1 ;;
esac
exit 0
