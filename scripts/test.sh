#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): installs the dependencies,
# builds neuroc and runs every test; then rebuilds with AddressSanitizer +
# UndefinedBehaviorSanitizer (build-asan) and runs the tests of memory and
# input handling again under them, leak detection on (the tests labelled
# plain_pass run in the first pass only: CMakeLists.txt, "two passes").
# Exit status non-zero if anything fails.
#
# NEUROC_ASAN_TESTS=REGEX runs only those tests in the sanitizer pass;
# NEUROC_ASAN_SKIP=REGEX leaves more out of it.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
t0=$SECONDS
elapsed() { local s=$((SECONDS - t0)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
phase() { printf '\n==== [%s] %s\n' "$(elapsed)" "$*"; }

cat <<EOF
neuroc test: the whole test suite in two passes, 8 to 12 minutes on 2 idle cores from a fresh
clone (docs/testing.md has the measurement; $jobs cores here):
  1. installs the Debian packages neuroc needs (scripts/setup.sh) and builds neuroc
     (gcc, -Werror, into build/; its output in build/build.log)
  2. runs every test with ctest
  3. rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer (clang, into build-asan/;
     its output in build-asan/build.log) and runs the tests of memory and input handling
     again under them (not the accuracy sweeps and packaging checks: the first pass runs those)
Each pass lists its skipped tests with their reasons. Exit status non-zero if anything fails.
EOF

phase "1/3 installing dependencies and building neuroc (build/build.log) ..."
bash scripts/setup.sh
mkdir -p build
# -Werror: a warning fails the test command (gcc here, clang in the
# sanitizer pass).
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEUROC_WERROR=ON &&
    cmake --build build -j"$jobs"; } >build/build.log 2>&1; then
    tail -n 30 build/build.log
    echo "neuroc test: the build failed; the whole output is in build/build.log" >&2
    exit 1
fi

phase "2/3 the tests ($(cd build && ctest -N | sed -n 's/^Total Tests: //p') of them) ..."
bash scripts/ctest_run.sh build

phase "3/3 the sanitizer pass: ASan + UBSan build, then the tests of memory and input handling ..."
if [ -n "${NEUROC_ASAN_TESTS:-}" ]; then
    bash scripts/sanitize.sh -R "$NEUROC_ASAN_TESTS"
else
    bash scripts/sanitize.sh -LE plain_pass ${NEUROC_ASAN_SKIP:+-E "$NEUROC_ASAN_SKIP"}
fi
phase "all tests passed"
