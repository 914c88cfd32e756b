#!/usr/bin/env bash
# The installed headers (include/neuroc/) stand alone: each compiles by
# itself, first in a translation unit, as C99 and as C++11, pedantic and
# warning-free; <neuroc/mpi.h> with MPI's include folder (skipped without
# mpicc). And every options struct of the API has its _init.
# usage: test_public_headers.sh NEUROC SOURCE_DIR BINARY_DIR
set -uo pipefail
src=$2
cc=${CC:-cc}
cxx=${CXX:-c++}
command -v "$cxx" >/dev/null || cxx=g++
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# check HEADER LANG COMPILER FLAGS...
check() {
    local h=$1 lang=$2 comp=$3 out
    shift 3
    out=$(printf '#include <neuroc/%s>\nint nc_header_probe;\n' "$h" |
        "$comp" -x "$lang" -fsyntax-only -pedantic -Wall -Wextra -Werror "$@" -I"$src/include" - 2>&1) ||
        { echo "FAIL: <neuroc/$h> alone does not compile as $lang ($*):"; echo "$out" | head -5; fail=1; }
}

mpi_flags=()
if command -v mpicc >/dev/null && inc=$(mpicc --showme:incdirs 2>/dev/null); then
    for d in $inc; do mpi_flags+=(-isystem "$d"); done
fi
n=0
for path in "$src"/include/neuroc/*.h; do
    h=${path##*/}
    extra=()
    if [ "$h" = mpi.h ]; then
        if [ ${#mpi_flags[@]} -eq 0 ]; then
            echo "skip: <neuroc/mpi.h> needs MPI's headers (no mpicc here)"
            continue
        fi
        extra=("${mpi_flags[@]}" -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX)
    fi
    check "$h" c "$cc" -std=c99 "${extra[@]}"
    check "$h" c++ "$cxx" -std=c++11 "${extra[@]}"
    n=$((n + 1))
done

# every `typedef struct nc_*_options` has its nc_*_options_init
for o in $(grep -ho 'typedef struct nc_[a-z0-9_]*options\b' "$src"/include/neuroc/*.h | awk '{print $3}'); do
    grep -q "NC_API void ${o}_init(${o} \*" "$src"/include/neuroc/*.h ||
        { echo "FAIL: $o has no ${o}_init"; fail=1; }
done

[ $fail -eq 0 ] && echo "public headers: $n compile alone as C99 and C++11; every options struct has its _init"
exit $fail
