#!/usr/bin/env bash
# The main job on the shipped example CNN: installs what is needed, builds
# neuroc, converts examples/models/cnn.onnx into a spiking network calibrated
# on 1000 Fashion-MNIST training images, and evaluates it on all 10,000 test
# images: the ANN's accuracy against the SNN's at every timestep, spike rates,
# synaptic operations and an energy estimate (data from Debian's package).
# The console shows the commands and their results; the installation and the
# build write to build/demo/build.log.
#
# Environment (tests/test_demo.sh uses them): NEUROC_DEMO_BUILD, the build
# folder (build); NEUROC_DEMO_SETUP=0 skips scripts/setup.sh;
# NEUROC_DEMO_QUICK=1 evaluates the 256 shipped test images instead (and
# searches the operating point on 500 held-back images up to T = 8).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${NEUROC_DEMO_BUILD:-build}
data=/usr/share/datasets/fashion-mnist
out=$B/demo
mkdir -p "$out"
log=$out/build.log

echo "neuroc demo: installing what is needed and building neuroc (output in $log) ..."
: >"$log"
if ! { [ "${NEUROC_DEMO_SETUP:-1}" = 0 ] || bash scripts/setup.sh; } >>"$log" 2>&1 ||
    ! { [ -f "$B/CMakeCache.txt" ] || cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo; } >>"$log" 2>&1 ||
    ! cmake --build "$B" -j"$(nproc)" --target neuroc >>"$log" 2>&1; then
    tail -n 20 "$log"
    echo "neuroc demo: installing or building failed; the whole output is in $log" >&2
    exit 1
fi
echo "neuroc demo: built $B/neuroc"

step() { # shows a command, then runs it
    echo
    echo "\$ $*"
    "$@"
}
test_x=$data/t10k-images-idx3-ubyte.gz
test_y=$data/t10k-labels-idx1-ubyte.gz
if [ "${NEUROC_DEMO_QUICK:-0}" = 1 ]; then
    test_x=examples/data/fmnist_test_x.npy
    test_y=examples/data/fmnist_test_y.npy
fi

step "$B/neuroc" info examples/models/cnn.onnx
# The operating point: the conversion of least energy within 0.5 points of the ANN on held-back
# training images (burst, threshold, corrections and T searched; T is stored in the .nir).
search=(--target-loss 0.5)
if [ "${NEUROC_DEMO_QUICK:-0}" = 1 ]; then
    search+=(--holdout 500 --target-max-T 8)
fi
step "$B/neuroc" convert examples/models/cnn.onnx --calib $data/train-images-idx3-ubyte.gz \
    --labels $data/train-labels-idx1-ubyte.gz "${search[@]}" \
    -o "$out/cnn.nir" --report "$out/convert.json" | tee "$out/convert.txt"
step "$B/neuroc" eval "$out/cnn.nir" --ann examples/models/cnn.onnx --data "$test_x" --labels "$test_y" \
    --backend cpu-fast --report "$out/eval.json" --plot "$out/accuracy.svg" | tee "$out/eval.txt"

# The lines a newcomer asks about, each in one plain sentence, with this run's numbers.
num() { sed -n "s/.*$1.*/\\1/p" "$2" | head -n 1; } # PATTERN FILE: what its first group matched
T=$(num 'operating point: T = \([0-9]*\),' "$out/convert.txt")
loss=$(num 'expected loss \([0-9.-]*\) points' "$out/convert.txt")
held=$(num ', \([0-9]*\) held-back samples' "$out/convert.txt")
energy=$(num '(SNN \/ ANN = \([0-9.]*\))' "$out/eval.txt")
ops=$(num 'SNN synaptic ops \/ ANN MACs = \([0-9.]*\))' "$out/eval.txt")
pj_add=$(num 'at \([0-9.]*\) pJ an addition' "$out/eval.txt")
pj_mac=$(num 'pJ an addition and \([0-9.]*\) pJ a multiply-add' "$out/eval.txt")
gap=$(num "t = $T  *[0-9.]* % ([0-9/]*) *\\([-+0-9.]*\\) points vs the ANN" "$out/eval.txt")
echo
echo "What the lines above mean:"
echo "- Operating point: convert tried a few conversions (bursts, thresholds, corrections) on ${held} training"
echo "  images it held back and kept the cheapest within 0.5 points of the ANN: T = ${T} steps (expected"
echo "  loss ${loss} points there); the .nir keeps T, so eval ran ${T} steps (test set: ${gap} points)."
echo "- Signed spikes in bursts: a spiking neuron here can also send a negative spike to take back one it"
echo "  sent too early, and several spikes in a step, so its count of spikes follows the ANN's activation"
echo "  in few steps; other NIR tools and Loihi 1 only run plain spikes (neuroc convert --plain-spikes)."
echo "- Energy: the SNN's estimate is ${energy} times the ANN's because over its T = ${T} steps the spikes"
echo "  trigger ${ops} synaptic operations for each multiply-add of the ANN, and one that reads a graded value"
echo "  (the image, a burst of spikes, an average-pooled sum of spikes) is a multiply-add (${pj_mac} pJ) as the"
echo "  ANN's; only those of single spikes are additions (${pj_add} pJ)."
echo
echo "neuroc demo: files in $out: cnn.nir (the spiking network), convert.json and eval.json (the reports),"
echo "accuracy.svg (accuracy at every step), build.log (installation and build)."
