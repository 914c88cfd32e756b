#!/bin/bash
# scripts/demo.sh shows results, not the build: the build's output goes to
# the log file it names, and the two lines newcomers ask about (signed
# spikes, the energy ratio) get one plain sentence each, with the run's
# numbers. Quick form: no setup.sh, this build, the 256 shipped test images.
# usage: bash test_demo.sh <neuroc-binary> <source-dir> <build-dir>
set -u
SRC=$2
BUILD=$(cd "$3" && pwd)
. "$SRC/tests/cli_lib.sh"
cli_lib_init nc_test_demo
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    echo "SKIP: Debian's dataset-fashion-mnist is not installed (scripts/setup.sh)"
    exit 77
fi

check "the demo runs and keeps the build off the console"
NEUROC_DEMO_BUILD="$BUILD" NEUROC_DEMO_SETUP=0 NEUROC_DEMO_QUICK=1 bash "$SRC/scripts/demo.sh" >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" -eq 0 ]; then pass "exit 0"; else fail "exit $RC"; sed 's/^/    | /' "$TMP/err" | tail -5; fi
expect_in "$TMP/out" "(output in $BUILD/demo/build.log)"
expect_file "$BUILD/demo/build.log"
if grep -qE '^\[ *[0-9]+%\]|Building C object|Linking C|^-- ' "$TMP/out" "$TMP/err"; then
    fail "build lines on the console"; grep -E '^\[ *[0-9]+%\]|Building C|Linking C|^-- ' "$TMP/out" | head -3
else pass "no build lines on the console"; fi
expect_in "$TMP/out" "ANN accuracy:"

check "the operating point: convert chose T, eval ran to it, the demo says what it costs"
T=$(sed -n 's/^operating point: T = \([0-9]*\), expected loss .*, energy [0-9.]* x the ANN.s.*/\1/p' "$TMP/out" | head -n 1)
if [ -n "$T" ] && [ "$T" -ge 1 ] && [ "$T" -le 8 ]; then pass "operating T = $T"; else fail "no operating point line (T = '$T')"; fi
expect_in "$TMP/out" "T = $T (the network's operating T)"
expect_in "$TMP/out" "- Operating point: convert tried a few conversions"
expect_in "$TMP/out" "the cheapest within 0.5 points of the ANN: T = $T steps"

check "signed spikes and the energy line, explained with this run's numbers"
expect_in "$TMP/out" "- Signed spikes in bursts: a spiking neuron here can also send a negative spike"
ratio=$(sed -n 's/.*(SNN \/ ANN = \([0-9.]*\)).*/\1/p' "$TMP/out" | head -n 1)
ops=$(sed -n 's/.*SNN synaptic ops \/ ANN MACs = \([0-9.]*\)).*/\1/p' "$TMP/out" | head -n 1)
if [ -n "$ratio" ] && [ -n "$ops" ]; then pass "energy ratio $ratio, ops ratio $ops"; else fail "no energy line"; fi
expect_in "$TMP/out" "- Energy: the SNN's estimate is $ratio times the ANN's because over its T = $T steps"
expect_in "$TMP/out" "trigger $ops synaptic operations for each multiply-add of the ANN, and one that reads a graded value"

cli_finish test_demo
