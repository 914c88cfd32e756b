#!/usr/bin/env bash
# Builds neuroc with AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan: Debug, -DNEUROC_SANITIZE=ON, CUDA off, since the sanitizers
# do not see into the GPU) and runs the whole test suite under them, leak
# detection on. Any report fails the test that caused it.
#
#   bash scripts/sanitize.sh [CTEST_ARGS...]
#
# Arguments go to ctest: `-R REGEX` runs only the matching tests, `-E REGEX`
# leaves some out, `-LE plain_pass` the tests that need no sanitizer pass
# (scripts/test.sh passes that; CMakeLists.txt says which and why). BUILD_DIR
# overrides build-asan. The build's output goes to BUILD_DIR/build.log.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build-asan}
jobs=$(nproc)
# clang's UBSan checks more than gcc's (a zero offset added to a NULL
# pointer, found by fuzz_onnx, passes gcc's): use it when installed.
cc=${CC:-$(command -v clang || command -v cc)}
echo "sanitize: building $B ($cc, ASan + UBSan; output in $B/build.log) ..."
mkdir -p "$B"
if ! { cmake -S . -B "$B" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug -DNEUROC_SANITIZE=ON \
    -DNEUROC_CUDA=OFF -DNEUROC_WERROR=ON && cmake --build "$B" -j"$jobs"; } >"$B/build.log" 2>&1; then
    tail -n 30 "$B/build.log"
    echo "sanitize: the build failed; the whole output is in $B/build.log" >&2
    exit 1
fi
# detect_leaks: every error path must free what it took. The CLI and shell
# tests run the sanitized neuroc too, so their leaks count as well.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# OpenMP regions serial unless a test asks for threads itself: with clang 14's
# LeakSanitizer on this glibc, a process that ran libgomp's default thread
# team can crash the leak check's tracer at exit ("Tracer caught signal 11",
# on a garbage dynamic-TLS range of the main thread: a fatal error of the
# tool, not a leak; test_layer_kinds every time). The threaded paths give
# the serial results bit for bit (tests/test_cpu_fast.c, test_train.c).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# A test that asks for threads itself still starts clang's libomp, which
# dlopens its OMPT tool (libarcher.so): that library's dynamic TLS is the
# garbage range the tracer crashes on (test_convert_shuffle every time).
# No tool is needed here.
export OMP_TOOL=${OMP_TOOL:-disabled}
# Every test has a TIMEOUT sized for this build too (CMakeLists.txt, "test
# timeouts"); skipped tests are listed with their reasons.
echo "sanitize: running the tests under ASan + UBSan ..."
bash scripts/ctest_run.sh "$B" "$@"
