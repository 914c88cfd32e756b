#!/bin/bash
# bench/zoo.py --quick on two small torchvision architectures at 32 px
# (resnet18, squeezenet1_1; random weights, BatchNorm statistics from random
# batches): neuroc run of the .onnx equals torch (stage 1), the default
# conversion succeeds (2), the .nir's outputs are bit-identical across cpu,
# cpu-fast and a second run (3), and the SNN's readout at T = 128 has a
# mean-centred cosine >= 0.93 with the ANN's logits (4); default options
# (signed spikes, max thresholds).
# usage: bash test_zoo_quick.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c "import torch, torchvision, onnx" 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch/torchvision/onnx (scripts/setup.sh installs them)"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nc_test_zoo.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

"$PY" "$SRC/bench/zoo.py" "$NEUROC" --quick --models resnet18,squeezenet1_1 \
    --T 128 --timeout 300 --json "$TMP/rows.json" || { echo "FAIL: bench/zoo.py exited $?"; exit 1; }

"$PY" - "$TMP/rows.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
fails = 0
for r in rows:
    for stage in ("run", "convert", "load"):
        ok = r.get(stage) == "ok"
        print(f"  {'ok' if ok else 'FAIL'}: {r['model']} stage {stage}: {r.get(stage)}")
        fails += not ok
    c = r.get("cos", {}).get("128")
    ok = isinstance(c, float) and c >= 0.93
    print(f"  {'ok' if ok else 'FAIL'}: {r['model']} cosine at T = 128: {c}")
    fails += not ok
    # the rate limit (the clipped ANN) is near the ANN, and the SNN nearer to it than to the ANN
    lc, sc = r.get("limit_cos"), r.get("cos_limit", {}).get("128")
    ok = isinstance(lc, float) and lc >= 0.9 and isinstance(sc, float) and sc >= c
    print(f"  {'ok' if ok else 'FAIL'}: {r['model']} rate limit vs ANN {lc}, T = 128 vs limit {sc}")
    fails += not ok
sys.exit(1 if fails or len(rows) != 2 else 0)
PYEOF
