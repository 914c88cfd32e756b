#!/usr/bin/env bash
# Every .nir neuroc writes opens in every NIR tool (DESIGN §4): /node is the
# standard form (nir 1.0.8 node types only), neuroc's exact network is in
# /neuroc/graph and is what neuroc reads.
#  1. `neuroc convert` with default options writes, for every example
#     model, a file nir.read opens; `neuroc info` says neuroc reads the
#     exact network and what the standard graph loses; the same for
#     --plain-spikes, --portable (a network that is its own standard form)
#     and `neuroc export`; --nir-strict refuses what the standard graph
#     would approximate, naming the layer, and writes nothing; finetune's
#     output is read below.
#  2. nir.read (tests/nir_read_all.py) opens every .nir under the build
#     folder that neuroc wrote (this test's and the other tests' files).
# usage: test_nir_standard.sh <neuroc-binary> <source-dir> <build-dir>
# Skips (77) when the package index is unreachable (outside CI).
set -u
NEUROC=$1
SRC=$2
BUILD=$3
VENV="$BUILD/nir-venv"
OUT="$BUILD/nir-standard"

. "$SRC/tests/nir_venv_needed.sh"
need_nir_venv "$SRC" "$VENV"
rm -rf "$OUT" && mkdir -p "$OUT"
CALIB="$SRC/examples/data/fmnist_test_x.npy"
fail=0

# 1. every example model, default options
for onnx in "$SRC"/examples/models/*.onnx; do
    m=$(basename "$onnx" .onnx)
    if ! "$NEUROC" convert "$onnx" --calib "$CALIB" --calib-samples 64 -o "$OUT/$m.nir" >"$OUT/$m.log" 2>&1; then
        cat "$OUT/$m.log"; echo "FAIL: convert $m"; fail=1; continue
    fi
    "$NEUROC" info "$OUT/$m.nir" >"$OUT/$m.info" 2>&1 || { cat "$OUT/$m.info"; echo "FAIL: info $m"; fail=1; }
    grep -q "neuroc reads its exact network (/neuroc/graph); other NIR tools read /node" "$OUT/$m.info" ||
        { echo "FAIL: info $m does not say which graph it read:"; tail -5 "$OUT/$m.info"; fail=1; }
    grep -q "what the standard graph (/node) loses:" "$OUT/$m.log" ||
        { echo "FAIL: convert $m does not state the loss"; fail=1; }
done
# the conversion report (--report) states the loss too
"$NEUROC" convert "$SRC/examples/models/vgg.onnx" --calib "$CALIB" --calib-samples 64 -o "$OUT/vgg_r.nir" \
    --report "$OUT/vgg_r.json" >/dev/null 2>&1 || { echo "FAIL: convert --report"; fail=1; }
"$VENV/bin/python" -c "
import json, sys
g = json.load(open(sys.argv[1]))['nir_standard_graph']
assert g['neuroc_reads'] == '/neuroc/graph' and any('max pooling is average pooling' in l for l in g['loss']), g
" "$OUT/vgg_r.json" || { echo "FAIL: the report's nir_standard_graph"; fail=1; }
# what is said is what was done: max pooling in the examples that have it
grep -q "max pooling is average pooling" "$OUT/vgg.info" || { echo "FAIL: vgg's max pooling loss unstated"; fail=1; }

# plain spikes, the portable form (nothing lost: one graph for all), export
"$NEUROC" convert "$SRC/examples/models/cnn.onnx" --calib "$CALIB" --calib-samples 64 --plain-spikes \
    -o "$OUT/cnn_plain.nir" >"$OUT/plain.log" 2>&1 || { cat "$OUT/plain.log"; echo "FAIL: --plain-spikes"; fail=1; }
"$NEUROC" convert "$SRC/examples/models/cnn.onnx" --calib "$CALIB" --calib-samples 64 --portable \
    -o "$OUT/cnn_portable.nir" >"$OUT/portable.log" 2>&1 || { cat "$OUT/portable.log"; echo "FAIL: --portable"; fail=1; }
grep -q "NIR graph: /node, standard NIR, read by neuroc and other NIR tools alike" "$OUT/portable.log" &&
    grep -q "the standard graph (/node) loses nothing" "$OUT/portable.log" ||
    { cat "$OUT/portable.log"; echo "FAIL: the portable form is not one graph for all"; fail=1; }
"$NEUROC" export "$OUT/squeezenet.nir" -o "$OUT/squeezenet_export.nir" >"$OUT/export.log" 2>&1 ||
    { cat "$OUT/export.log"; echo "FAIL: export"; fail=1; }
# the exact network survives the round trip: the same outputs
X="$OUT/x8.npy"
"$VENV/bin/python" -c "import numpy as n,sys; n.save(sys.argv[2], n.load(sys.argv[1])[:8])" "$CALIB" "$X"
"$NEUROC" run "$OUT/squeezenet.nir" -i "$X" -o "$OUT/a.npy" >/dev/null 2>&1 &&
    "$NEUROC" run "$OUT/squeezenet_export.nir" -i "$X" -o "$OUT/b.npy" >/dev/null 2>&1 && cmp -s "$OUT/a.npy" "$OUT/b.npy" ||
    { echo "FAIL: export changed what neuroc runs"; fail=1; }

# fine-tuning's output (its checkpoints, removed when it ends, are written
# by the same nc_snn_save_nir)
"$NEUROC" finetune "$OUT/mlp.nir" --train "$CALIB" --labels "$SRC/examples/data/fmnist_test_y.npy" -T 2 --epochs 1 \
    --batch 64 -o "$OUT/mlp_ft.nir" >"$OUT/ft.log" 2>&1 || { cat "$OUT/ft.log"; echo "FAIL: finetune"; fail=1; }
grep -q "neuroc reads its exact network" "$OUT/ft.log" || { echo "FAIL: finetune does not say which graph"; fail=1; }

# strict mode refuses an approximation by name and writes nothing
if "$NEUROC" convert "$SRC/examples/models/vgg.onnx" --calib "$CALIB" --calib-samples 64 --nir-strict \
        -o "$OUT/vgg_strict.nir" >"$OUT/strict.log" 2>&1; then
    echo "FAIL: --nir-strict wrote a network whose max pooling NIR cannot hold"; fail=1
elif ! grep -q "max pooling is average pooling" "$OUT/strict.log" || [ -e "$OUT/vgg_strict.nir" ]; then
    cat "$OUT/strict.log"; echo "FAIL: --nir-strict's refusal"; fail=1
fi

# 2. every file neuroc wrote, this test's and the others'
"$VENV/bin/python" "$SRC/tests/nir_read_all.py" "$BUILD" || fail=1
[ $fail = 0 ] && echo "PASS: nir.read opens every .nir neuroc wrote; neuroc reads its exact network"
exit $fail
