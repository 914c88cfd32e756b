#!/usr/bin/env bash
# Issue 29's acceptance measured: the shipped CNN, VGG-BN (vgg.onnx) and
# ResNet-18 (resnet18.onnx) converted at their operating point
# (--target-loss, on held-back Fashion-MNIST training images), then
# evaluated on all 10,000 test images at the T chosen: accuracy against the
# ANN and the energy estimate against the ANN's, one row a model.
# usage: bash bench/operating_point.sh [BUILD_DIR] [TARGET_LOSS] [MODELS...]
# Slow (minutes a model: up to 10 conversions, each run on 2000 images).
# NEUROC_CONVERT_OPTS adds options to the conversion, e.g. fine-tuning in the
# search: NEUROC_CONVERT_OPTS="--finetune-epochs 3 --energy-weight 5".
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
P=${2:-0.5}
shift $(($# > 2 ? 2 : $#))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(cnn vgg resnet18)
D=/usr/share/datasets/fashion-mnist
out=$B/bench-operating-point
mkdir -p "$out"
printf '| model | T | SNN %% | ANN %% | loss (points) | energy / ANN | held-back loss | search |\n|---|---|---|---|---|---|---|---|\n' >"$out/table.md"
for m in "${models[@]}"; do
    "$B/neuroc" convert "examples/models/$m.onnx" --calib $D/train-images-idx3-ubyte.gz \
        --labels $D/train-labels-idx1-ubyte.gz --target-loss "$P" ${NEUROC_CONVERT_OPTS:-} \
        -o "$out/$m.nir" --report "$out/$m.convert.json" \
        >"$out/$m.convert.txt"
    "$B/neuroc" eval "$out/$m.nir" --ann "examples/models/$m.onnx" --data $D/t10k-images-idx3-ubyte.gz \
        --labels $D/t10k-labels-idx1-ubyte.gz --backend cpu-fast --report "$out/$m.eval.json" >"$out/$m.eval.txt"
    /usr/bin/python3 - "$m" "$out/$m.convert.json" "$out/$m.eval.json" >>"$out/table.md" <<'PY'
import json, sys
m, conv, ev = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
op = conv["operating_point"]
acc, T = ev["accuracy"], op["timesteps"]
snn, ann = 100 * acc["snn"][-1], 100 * acc["ann"]
ratio = ev["per_t"]["energy_j"][-1] / ev["energy"]["ann_j"]
c = next(c for c in op["candidates"] if c["timesteps"] == T and abs(c["energy_ratio"] - op["energy_ratio"]) < 1e-12)
opts = f"burst {c['burst']}, {c['threshold']}" + (", per channel" if c["per_channel"] else "") + \
       (", bias corr." if c["bias_correction"] else "") + \
       (f", fine-tuned at T = {c['finetune_timesteps']}" if c["finetune_timesteps"] else "")
print(f"| {m} | {T} | {snn:.2f} | {ann:.2f} | {ann - snn:+.2f} | {ratio:.3f} | {op['loss']:+.2f} | {opts} |")
PY
    tail -n 1 "$out/table.md"
done
echo "table: $out/table.md"
