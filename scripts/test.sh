#!/usr/bin/env bash
# Installs the dependencies, builds neuroc and runs every test; then rebuilds
# with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan) and runs
# the suite again under them, leak detection on. Exit status non-zero if
# anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)

# -Werror: a warning fails the test command (gcc here, clang in the
# sanitizer pass).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEUROC_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
# Every test has a TIMEOUT of its own (CMakeLists.txt, "test timeouts");
# --timeout is the backstop for one that lacks it.
(cd build && ctest --output-on-failure -j"$jobs" --timeout 300)

# Sanitizer pass (scripts/sanitize.sh runs the whole suite this way): the
# error paths (bad files, wrong shapes, failed allocations, the fuzz corpora)
# must show no leak and no invalid access. CI has time for all but the
# packaging check and the Python NIR interop test, which exercise no input
# handling of neuroc's own (whole suite: about 5 minutes on 2 busy cores plus
# the build, test_convert the longest at 3 minutes), and the Python package's
# test, which cannot run there: python would need libasan preloaded (it
# skips itself in a sanitizer build too).
if [ -n "${NEUROC_ASAN_TESTS:-}" ]; then
    bash scripts/sanitize.sh -R "$NEUROC_ASAN_TESTS"
else
    bash scripts/sanitize.sh -E "${NEUROC_ASAN_SKIP:-^(test_install|test_nir_interop|test_gpu_check_build|test_python)$}"
fi
