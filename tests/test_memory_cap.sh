#!/usr/bin/env bash
# Under `ulimit -v` every command exits (issue 33: OpenBLAS retried its
# allocation forever, so convert, run and even `neuroc --version` hung).
# One run of each command at two caps here; the 50-run figure
# comes from `bash tests/memory_cap_runs.sh build/neuroc . 50`.
NEUROC=$1 SRC=$2
if grep -q '^NEUROC_SANITIZE:BOOL=ON' "$3/CMakeCache.txt" 2>/dev/null; then
    echo "SKIP: a sanitizer build reserves terabytes of address space: ulimit -v cannot apply"
    exit 77
fi
(ulimit -v 102400; exec timeout 20 "$NEUROC" --version) >/dev/null || { echo "FAIL: neuroc --version under 100 MB"; exit 1; }
exec bash "$SRC/tests/memory_cap_runs.sh" "$NEUROC" "$SRC" 1 102400 204800
