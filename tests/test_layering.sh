#!/usr/bin/env bash
# The layering the build enforces (cmake/rooms.cmake, docs/layout.md):
#  - every room compiles against an include tree holding only the headers of
#    the rooms it may reach, so a header of a room above it (or beside it)
#    is not found: probed here for each room, with a header it may include
#    (must compile) and one it may not (must fail with "No such file");
#  - no source reaches around the trees with a relative "../" include;
#  - the program (cli/) sees the public headers only;
#  - no function of the program is over 150 lines (tests/cli_function_length.sh).
# usage: test_layering.sh NEUROC SOURCE_DIR BINARY_DIR
set -uo pipefail
src=$2
bin=$3
cc=${CC:-cc}
fail=0
rooms=$bin/rooms
# compile from an empty folder: a quoted include is looked up beside the
# including file first, and stdin's "folder" is the working directory
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
[ -d "$rooms/base" ] || { echo "FAIL: no room include trees under $rooms"; exit 1; }

# probe ROOM HEADER yes|no
probe() {
    local room=$1 header=$2 want=$3 out
    out=$(printf '#include "%s"\nint nc_probe;\n' "$header" |
        "$cc" -fsyntax-only -I"$rooms/$room" -I"$src/include" -x c - 2>&1)
    local rc=$?
    if [ "$want" = yes ] && [ $rc -ne 0 ]; then
        echo "FAIL: room $room cannot include $header: $out" | head -3
        fail=1
    elif [ "$want" = no ]; then
        if [ $rc -eq 0 ]; then
            echo "FAIL: room $room may include $header, a room it does not depend on"
            fail=1
        elif ! grep -q "No such file" <<<"$out"; then
            echo "FAIL: room $room including $header failed for another reason: $out" | head -3
            fail=1
        fi
    fi
}

#      room      may include                         may not include
probe  kernels   kernels/neuron.h yes
probe  kernels   snn/base/alloc.h no
probe  base      snn/base/tensor.h yes
probe  base      snn/ir/snn_ir.h no
probe  base      kernels/neuron.h no
probe  ir        snn/base/alloc.h yes
probe  ir        snn/run/backend.h no
probe  run       snn/ir/snn_ir.h yes
probe  run       snn/backends/weight_layout.h no
probe  run       snn/session/eval.h no
probe  run       convert/calibrate.h no
probe  backends  snn/run/backend.h yes
probe  backends  snn/backends/cpu_fast/fast_plan.h no
probe  cpu_ref   snn/backends/weight_layout.h yes
probe  cpu_ref   snn/backends/cuda/cuda_glue.h no
probe  cpu_fast  snn/backends/cpu_fast/fast_plan.h yes
probe  cpu_fast  snn/backends/cpu_ref/none.h no
probe  cpu_fast  snn/session/registry.h no
probe  session   snn/backends/cpu_fast/fast_plan.h yes
probe  session   snn/backends/cuda/cuda_kinds.h yes
probe  session   convert/calibrate.h no
probe  session   export/data/data_io.h no
probe  data      snn/base/tensor.h yes
probe  data      snn/ir/snn_ir.h no
probe  nir       export/data/data_io.h yes
probe  nir       convert/calibrate.h no
probe  nir       snn/session/eval.h no
probe  svg       snn/session/eval.h yes
probe  svg       export/nir/nir_internal.h no
probe  ann       convert/ann/graph.h yes
probe  ann       snn/ir/snn_ir.h no
probe  ann       convert/calibrate.h no
probe  train     snn/ir/snn_ir.h yes
probe  train     convert/ann/graph.h no
probe  convert   convert/ann/graph.h yes
probe  convert   convert/train/train.h yes
probe  convert   sim/sim_internal.h no
probe  convert   export/nir/nir_internal.h no
probe  sim       snn/run/backend.h yes
probe  sim       snn/session/registry.h no
probe  sim       convert/calibrate.h no
probe  sim       snn/backends/weight_layout.h no

# the program: public headers only
out=$(printf '#include "snn/base/alloc.h"\n' | "$cc" -fsyntax-only -I"$src/include" -I"$src/cli" -x c - 2>&1) &&
    { echo "FAIL: cli can reach snn/base"; fail=1; }

# the link check (cmake/rooms.cmake, nc_room_link_checks): every room with
# sources was linked alone with --no-undefined, so none calls a room above
# it (not in sanitizer builds, whose objects need the program's runtime)
if ! grep -qE '^NEUROC_(SANITIZE|FUZZ):BOOL=ON' "$bin/CMakeCache.txt" 2>/dev/null; then
    if [ ! -s "$bin/rooms-link/rooms.txt" ]; then
        echo "FAIL: no link check ($bin/rooms-link/rooms.txt)"
        fail=1
    fi
    while read -r r; do
        [ -f "$bin/rooms-link/libneuroc_room_$r.so" ] ||
            { echo "FAIL: room $r has no link check ($bin/rooms-link/libneuroc_room_$r.so)"; fail=1; }
    done <"$bin/rooms-link/rooms.txt"
    grep -qx session "$bin/rooms-link/rooms.txt" || { echo "FAIL: room session is not link-checked"; fail=1; }
fi

# no relative include reaches around the trees, the fuzz harnesses included
rel=$(cd "$src" && grep -rnE '#[[:space:]]*include[[:space:]]*"[^"]*\.\./' \
    --include='*.c' --include='*.h' --include='*.cu' include snn kernels convert export sim cli fuzz 2>/dev/null)
if [ -n "$rel" ]; then
    echo "FAIL: relative includes:"
    echo "$rel"
    fail=1
fi

# the program's commands stay readable: no function in cli/ over 150 lines
bash "$src/tests/cli_function_length.sh" "$src" 150 || fail=1

if [ $fail -eq 0 ]; then
    echo "layering: every room sees only the rooms below it"
fi
exit $fail
