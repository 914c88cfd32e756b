#!/usr/bin/env bash
# The main job on the shipped example CNN: installs what is needed, builds
# neuroc, converts examples/models/cnn.onnx into a spiking network calibrated
# on 1000 Fashion-MNIST training images, and evaluates it on all 10,000 test
# images: the ANN's accuracy against the SNN's at every timestep, spike rates,
# synaptic operations and an energy estimate (data from Debian's package).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target neuroc
data=/usr/share/datasets/fashion-mnist
out=build/demo
mkdir -p "$out"
set -x
./build/neuroc info examples/models/cnn.onnx
./build/neuroc convert examples/models/cnn.onnx --calib $data/train-images-idx3-ubyte.gz \
    --calib-samples 1000 --threshold p99.9 --per-channel --potential-correction -T 8 \
    -o $out/cnn.nir --report $out/convert.json
./build/neuroc eval $out/cnn.nir --ann examples/models/cnn.onnx \
    --data $data/t10k-images-idx3-ubyte.gz --labels $data/t10k-labels-idx1-ubyte.gz \
    -T 32 --backend cpu-fast --report $out/eval.json --plot $out/accuracy.svg
