#!/bin/bash
# neuroc sim end to end: the shipped MLP converted on a few images, then
# simulated on Loihi 1 and Loihi 2 (tables, JSON report), and usage errors.
# usage: bash test_sim_cli.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
cli_lib_init nc_test_sim_cli

X=$SRC/examples/data/fmnist_test_x.npy
Y=$SRC/examples/data/fmnist_test_y.npy
MODEL=$SRC/examples/models/mlp.onnx
for f in "$X" "$Y" "$MODEL"; do
    [ -f "$f" ] || { echo "skip: $f missing"; exit 77; }
done

run_cli 0 convert "$MODEL" --calib "$X" --calib-samples 64 --plain-spikes -o "$TMP/mlp.nir"
[ -f "$TMP/mlp.nir" ] || { echo "conversion failed"; exit 1; }

check "the default (signed spikes) runs on Loihi 2 as graded spikes of payload ±1; Loihi 1 refuses it by name"
run_cli 0 convert "$MODEL" --calib "$X" --calib-samples 64 -o "$TMP/signed.nir"
run_cli 0 sim "$TMP/signed.nir" --target loihi2 --data "$X" --labels "$Y" -T 8 --limit 24 --report "$TMP/rs.json"
expect_in "$TMP/out" "signed spikes as graded spikes of payload ±1"
expect_in "$TMP/rs.json" '"signed_spikes": true'
run_cli 1 sim "$TMP/signed.nir" --target loihi1 --data "$X" --labels "$Y" -T 4 --limit 8
expect_in "$TMP/err" "SignedIF"
expect_in "$TMP/err" "--plain-spikes"

run_cli 0 sim "$TMP/mlp.nir" --target loihi1 --data "$X" --labels "$Y" -T 8 --limit 24 --report "$TMP/r1.json"
expect_in "$TMP/out" "on Loihi 1 (reset: zero"
expect_in "$TMP/out" "mapping onto cores:"
expect_in "$TMP/out" "smallest named system: Kapoho Bay"
expect_in "$TMP/out" "float SNN"
expect_in "$TMP/out" "energy per inference (estimate)"
expect_in "$TMP/out" "Davies"
expect_in "$TMP/out" "A100"
if /usr/bin/python3 - "$TMP/r1.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["network"]["target"] == "loihi1"
assert len(r["fixed_point"]["accuracy"]) == 8
assert len(r["float_snn"]["accuracy"]["snn"]) == 8
assert r["fixed_point"]["steps_run"] == 8 + r["fixed_point"]["latency_steps"]
assert all(p["source"] and p["grade"] for p in r["network"]["parameters"])
assert r["fixed_point"]["energy"]["joules"] > 0
EOF
then pass "report is JSON with the expected fields"; else fail "report"; fi

run_cli 0 sim "$TMP/mlp.nir" --target loihi1 --mode subtract --data "$X" --labels "$Y" -T 4 --limit 8 --no-float
expect_in "$TMP/out" "two-compartment emulation"
# two threads: in the sanitizer build, no leak check at exit for this one run (clang 14's LeakSanitizer
# tracer can crash on a threaded process here, "Tracer caught signal 11": scripts/sanitize.sh); the
# runs above and below check the same code for leaks on one thread
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    run_cli 0 sim "$TMP/mlp.nir" --target loihi2 --input graded --data "$X" --labels "$Y" -T 4 --limit 8 \
    --no-float --threads 2 --weight-bits 6 --neurons-per-core 128
expect_in "$TMP/out" "graded spikes"
expect_in "$TMP/out" "Oheo Gulch"

# usage errors (exit 2) and failures (exit 1)
run_cli 2 sim "$TMP/mlp.nir" --data "$X" --labels "$Y" --target loihi3
run_cli 2 sim "$TMP/mlp.nir" --data "$X" --labels "$Y" --target loihi1 --input graded
run_cli 2 sim "$TMP/mlp.nir" --data "$X"
run_cli 2 sim "$TMP/mlp.nir" --data "$X" --labels "$Y" --weight-bits 9
run_cli 2 sim "$MODEL" --data "$X" --labels "$Y"
run_cli 1 sim "$TMP/mlp.nir" --data "$X" --labels "$Y" --params "$TMP/missing.json"
expect_in "$TMP/err" "missing.json"
run_cli 0 sim --help
expect_in "$TMP/out" "usage: neuroc sim"

cli_finish test_sim_cli
