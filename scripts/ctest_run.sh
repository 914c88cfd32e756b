#!/usr/bin/env bash
# Runs ctest in BUILD_DIR (-j as many jobs as cores, failures' output shown)
# and then says why each skipped test was skipped: ctest's console says only
# "NAME (Skipped)", the reason is in the test's own output, which ctest keeps
# in Testing/Temporary/LastTest.log. A skipping test prints its reason (shell
# tests "SKIP: ...", cmocka tests a line ending in "skipped"): the first line
# of its output that says skip is shown, else its last line. Exit status:
# ctest's.
#   bash scripts/ctest_run.sh BUILD_DIR [CTEST_ARGS...]
set -uo pipefail
dir=$1
shift
console=$(mktemp)
trap 'rm -f "$console"' EXIT
# Every test has a TIMEOUT of its own (CMakeLists.txt, "test timeouts");
# --timeout is the backstop for one that lacks it.
# The cores, not the OpenMP setting: GNU nproc answers OMP_NUM_THREADS, which
# the sanitizer pass sets to 1 for the tests' own processes (that ran the
# whole pass one test at a time).
jobs=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 300 "$@") | tee "$console"
rc=${PIPESTATUS[0]}
names=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$console")
log=$dir/Testing/Temporary/LastTest.log
if [ -n "$names" ] && [ -f "$log" ]; then
    echo "Why the skipped tests were skipped:"
    awk -v names="$names" '
        BEGIN               { split(names, list, "\n"); for (k in list) skipped[list[k]] = 1 }
        / Testing: /        { name = $NF; n = 0; inout = 0; next }
        /^Output:$/         { inout = 1; getline; next }   # the dashed line after it
        /^<end of output>$/ {
            inout = 0
            if (!(name in skipped)) next
            why = ""
            for (i = 0; i < n && why == ""; i++)
                if (tolower(out[i]) ~ /skip/) why = out[i]
            if (why == "" && n > 0) why = out[n - 1]
            if (why == "") why = "(the test printed no reason)"
            sub(/^SKIP: /, "", why)
            printf "  %s: %s\n", name, why
            next
        }
        inout               { out[n++] = $0 }
    ' "$log"
fi
exit "$rc"
