#!/bin/bash
# scripts/gpu-check on this machine: its core build (cmake/gpu_check.cmake,
# for a GPU machine without HDF5, protobuf-c, OpenBLAS or cmocka) must keep
# building as the library grows, and its verdicts must be right: with no GPU
# listed, test_cuda skipped and the check passes; with a GPU that nvidia-smi
# lists but CUDA cannot use (here: a stand-in nvidia-smi), the check fails,
# never "skipped"; the log goes under $OUT. On a GPU machine test_cuda runs.
# Skipped without nvcc.
# usage: bash test_gpu_check_build.sh <neuroc-binary> <source-dir> <build-dir>
set -u
SRC=$2
BUILD=$3
command -v nvcc >/dev/null || { echo "SKIP: no nvcc"; exit 77; }
out=$BUILD/gpu-check-core
logs=$BUILD/gpu-check-out
rm -rf "$logs"
mkdir -p "$logs"
OUT=$logs NEUROC_GPU_BUILD=$out bash "$SRC/scripts/gpu-check" build --core >"$out.log" 2>&1
rc=$?
[ -f "$out/libneuroc_cuda.so" ] || { tail -30 "$out.log"; echo "FAIL: the cuda module was not built next to test_cuda"; exit 1; }
[ -s "$logs/gpu-check-build.log" ] || { echo "FAIL: no log under \$OUT"; exit 1; }
grep -q "CUDA toolkit (runtime): " "$logs/gpu-check-build.log" || { echo "FAIL: the versions are not printed first"; exit 1; }
# skipped must mean no GPU, never a cuda module the test did not find
if grep -q 'libneuroc_cuda.so not found' "$out.log"; then
    echo "FAIL: test_cuda did not find the cuda module"
    exit 1
fi
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    [ $rc -eq 0 ] || { tail -30 "$out.log"; echo "FAIL: gpu-check on a GPU exited $rc"; exit 1; }
    echo "PASS: gpu-check core build; test_cuda passed on a GPU"
    exit 0
fi
[ $rc -eq 0 ] && grep -q "no GPU: tests skipped" "$out.log" || { tail -20 "$out.log"; echo "FAIL: without a GPU gpu-check exited $rc"; exit 1; }
# a GPU listed by nvidia-smi that CUDA cannot use
fake=$BUILD/gpu-check-fake-smi
mkdir -p "$fake"
printf '#!/bin/sh\n[ "$1" = -L ] && echo "GPU 0: NVIDIA H200 (UUID: GPU-0)"\nexit 0\n' >"$fake/nvidia-smi"
chmod +x "$fake/nvidia-smi"
PATH=$fake:$PATH OUT=$logs NEUROC_GPU_BUILD=$out bash "$SRC/scripts/gpu-check" build --core >"$out.fake.log" 2>&1
rc=$?
if [ $rc -eq 0 ] || ! grep -q "lists 1 GPU(s) but CUDA cannot use them" "$out.fake.log"; then
    tail -20 "$out.fake.log"
    echo "FAIL: a listed but unusable GPU passed (exit $rc)"
    exit 1
fi
echo "PASS: gpu-check core build; no GPU: skipped; a listed but unusable GPU: failed"
exit 0
