#!/usr/bin/env bash
# Installs the dependencies, builds neuroc and runs every test; then rebuilds
# with AddressSanitizer + UndefinedBehaviorSanitizer and runs the tests that
# feed it hostile input. Exit status non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

# Sanitizer pass: the error paths (bad files, wrong shapes) must show no leak
# and no invalid access. CUDA is left out: the sanitizers do not cover it.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNEUROC_SANITIZE=ON -DNEUROC_CUDA=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs" -R "${NEUROC_ASAN_TESTS:-^(test_core|test_data_io|test_data_h5|test_json|test_onnx_import|test_onnx_conformance|test_ann_ops_linear|test_ann_ops_shape|test_snn|test_nir|test_examples|test_convert|test_eval|test_train|test_finetune|test_sim|test_cpu_fast|test_mpi_dist|test_hd_math)$}")
