#!/usr/bin/env bash
# Issue 29's acceptance measured: the shipped CNN, VGG-BN (vgg.onnx) and
# ResNet-18 (resnet18.onnx) converted at their operating point
# (--target-loss, on held-back Fashion-MNIST training images), then
# evaluated on all 10,000 test images at the T chosen: accuracy against the
# ANN and the energy estimate against the ANN's, one row a model.
# usage: bash bench/operating_point.sh [BUILD_DIR] [TARGET_LOSS] [MODELS...]
# Slow (minutes a model: up to 10 conversions, each run on 2000 images).
# NEUROC_CONVERT_OPTS adds options to the conversion, e.g. fine-tuning in the
# search: NEUROC_CONVERT_OPTS="--finetune-epochs 3 --energy-weight 5 -j 2".
# NEUROC_VALIDATION=1 scores the search on the first 5000 test images
# (--validation), images the ANN did not train on, as a fine-tuned
# candidate did not (held-back training images flatter the ANN by ~2 points
# on the CNN); the table then also gives the accuracy on the other 5000,
# which took no part in the choice.
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
printf '| model | T | SNN %% | ANN %% | loss (points) | energy / ANN | search loss | loss on the unseen 5000 | search |\n|---|---|---|---|---|---|---|---|---|\n' >"$out/table.md"
val=()
if [ "${NEUROC_VALIDATION:-0}" = 1 ]; then
    /usr/bin/python3 - "$D" "$out" <<'PY'
import gzip, sys, numpy as np
d, out = sys.argv[1:]
x = np.frombuffer(gzip.open(f"{d}/t10k-images-idx3-ubyte.gz").read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
y = np.frombuffer(gzip.open(f"{d}/t10k-labels-idx1-ubyte.gz").read(), np.uint8, offset=8).astype(np.int64)
for name, rows in (("val", slice(0, 5000)), ("unseen", slice(5000, None))):
    np.save(f"{out}/{name}_x.npy", x[rows]), np.save(f"{out}/{name}_y.npy", y[rows])
PY
    val=(--validation "$out/val_x.npy" --validation-labels "$out/val_y.npy")
fi
for m in "${models[@]}"; do
    "$B/neuroc" convert "examples/models/$m.onnx" --calib $D/train-images-idx3-ubyte.gz \
        --labels $D/train-labels-idx1-ubyte.gz --target-loss "$P" ${val[@]+"${val[@]}"} ${NEUROC_CONVERT_OPTS:-} \
        -o "$out/$m.nir" --report "$out/$m.convert.json" \
        >"$out/$m.convert.txt"
    "$B/neuroc" eval "$out/$m.nir" --ann "examples/models/$m.onnx" --data $D/t10k-images-idx3-ubyte.gz \
        --labels $D/t10k-labels-idx1-ubyte.gz --backend cpu-fast --report "$out/$m.eval.json" >"$out/$m.eval.txt"
    unseen=none
    if [ ${#val[@]} -gt 0 ]; then
        "$B/neuroc" eval "$out/$m.nir" --ann "examples/models/$m.onnx" --data "$out/unseen_x.npy" \
            --labels "$out/unseen_y.npy" --backend cpu-fast --report "$out/$m.unseen.json" >"$out/$m.unseen.txt"
        unseen=$out/$m.unseen.json
    fi
    /usr/bin/python3 - "$m" "$out/$m.convert.json" "$out/$m.eval.json" "$unseen" >>"$out/table.md" <<'PY'
import json, sys
m, conv, ev = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
un = json.load(open(sys.argv[4]))["accuracy"] if sys.argv[4] != "none" else None
unseen = f"{100 * (un['ann'] - un['snn'][-1]):+.2f}" if un else "-"
op = conv["operating_point"]
acc, T = ev["accuracy"], op["timesteps"]
snn, ann = 100 * acc["snn"][-1], 100 * acc["ann"]
ratio = ev["per_t"]["energy_j"][-1] / ev["energy"]["ann_j"]
c = next(c for c in op["candidates"] if c["timesteps"] == T and abs(c["energy_ratio"] - op["energy_ratio"]) < 1e-12)
opts = f"burst {c['burst']}, {c['threshold']}" + (", per channel" if c["per_channel"] else "") + \
       (", bias corr." if c["bias_correction"] else "") + \
       (f", fine-tuned at T = {c['finetune_timesteps']}" if c["finetune_timesteps"] else "")
print(f"| {m} | {T} | {snn:.2f} | {ann:.2f} | {ann - snn:+.2f} | {ratio:.3f} | {op['loss']:+.2f} | {unseen} | {opts} |")
PY
    tail -n 1 "$out/table.md"
done
echo "table: $out/table.md"
