#!/usr/bin/env bash
# The Python package (python/): pip-installs it into a venv over Debian's
# python3 (its numpy and torch visible), bundling this build's libneuroc
# (NEUROC_BUILD_DIR: setup.py runs `cmake --install` of it), offline, then
# runs its pytest suite against this build's neuroc program.
# usage: test_python.sh <neuroc-binary> <source-dir> <build-dir>
# Skips (77) when python3's venv, numpy or pytest are missing outside CI
# (scripts/setup.sh installs them), and in a sanitizer build: a Python
# process cannot load an ASan-instrumented library unless the ASan runtime
# is preloaded into the interpreter, which then reports CPython's own leaks.
set -u
NEUROC=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
BUILD=$(cd "$3" && pwd)
PY=${NEUROC_PYTHON:-/usr/bin/python3}
VENV="$BUILD/python-venv"

skip() {
    if [ "${CI:-}" = "true" ]; then
        echo "FAIL: $* (CI needs it: scripts/setup.sh installs it)" >&2
        exit 1
    fi
    echo "SKIP: $*"
    exit 77
}

if grep -q '^NEUROC_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "SKIP: a sanitizer build (libasan would have to be preloaded into python)"
    exit 77
fi
[ -x "$PY" ] || skip "$PY not found"
"$PY" -c "import venv, ensurepip" 2>/dev/null || skip "python3-venv is not installed"
"$PY" -c "import numpy" 2>/dev/null || skip "python3-numpy is not installed"
"$PY" -c "import pytest" 2>/dev/null || skip "python3-pytest is not installed"

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv --system-site-packages "$VENV" || { echo "FAIL: python3 -m venv" >&2; exit 1; }
fi
# A copy of the package, so that the build's leftovers stay out of the source tree.
rm -rf "$BUILD/python-src"
cp -r "$SRC/python" "$BUILD/python-src"
rm -rf "$BUILD/python-src/build" "$BUILD/python-src/neuroc/_lib" "$BUILD/python-src"/*.egg-info
# on a terminal (script(1) gives pip one), as a user runs it: pip hides the
# build's output, so setup.py says on the terminal what it is doing
PIP=("$VENV/bin/pip" install --quiet --disable-pip-version-check --no-index --no-deps --force-reinstall
     "$BUILD/python-src")
if command -v script >/dev/null; then
    NEUROC_BUILD_DIR="$BUILD" script -qec "${PIP[*]}" /dev/null </dev/null >"$BUILD/python-pip.log" 2>&1
else
    NEUROC_BUILD_DIR="$BUILD" "${PIP[@]}" >"$BUILD/python-pip.log" 2>&1
fi || {
    cat "$BUILD/python-pip.log"
    echo "FAIL: pip install ./python (offline, NEUROC_BUILD_DIR=$BUILD)" >&2
    exit 1
}
if command -v script >/dev/null && ! grep -q "neuroc setup: bundling libneuroc from $BUILD" "$BUILD/python-pip.log"; then
    cat "$BUILD/python-pip.log"
    echo "FAIL: pip install ./python said nothing on the terminal about the library it bundles" >&2
    exit 1
fi

cd "$BUILD" || exit 1
# the bundled library, not one from the environment
unset NEUROC_LIBRARY
"$VENV/bin/python" -c "import neuroc; assert neuroc.library_found_by == 'bundled', neuroc.library_path" || exit 1
NEUROC_CLI="$NEUROC" NEUROC_SRC="$SRC" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    --basetemp="$BUILD/python-pytest" -o "testpaths=" "$SRC/python/tests"
