#!/usr/bin/env bash
# The main job on the shipped example CNN: installs what is needed, builds
# neuroc, shows the model and measures its accuracy on the full
# Fashion-MNIST test set (10,000 images, read from Debian's package).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target neuroc
data=/usr/share/datasets/fashion-mnist
set -x
./build/neuroc info examples/models/cnn.onnx
./build/neuroc run examples/models/cnn.onnx \
    --input $data/t10k-images-idx3-ubyte.gz --labels $data/t10k-labels-idx1-ubyte.gz
