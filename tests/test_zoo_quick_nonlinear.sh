#!/bin/bash
# bench/zoo.py --quick on torchvision's mobilenet_v3_small at 32 px (random
# weights, BatchNorm statistics from random batches; HardSwish, HardSigmoid
# squeeze-excitation gates): neuroc run of the .onnx equals torch (stage 1),
# the default conversion succeeds (2), and the SNN's readout on the reference
# backend at T = 256 has a mean-centred cosine >= 0.95 with the ANN's logits
# (4). Converted and run in memory through the Python package (--in-memory):
# the Nonlinear layers have no NIR form yet. The full-size sweep, with
# efficientnet_b0 and efficientnet_v2_s, is bench/zoo.py's.
# usage: bash test_zoo_quick_nonlinear.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c "import torch, torchvision, onnx" 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch/torchvision/onnx (scripts/setup.sh installs them)"
    exit 77
fi
if [ ! -e "$(dirname "$NEUROC")/libneuroc.so" ]; then
    echo "SKIP: no libneuroc.so next to $NEUROC (a static-only build)"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nc_test_zoo_nl.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

NEUROC_LIBRARY="$(dirname "$NEUROC")/libneuroc.so" "$PY" "$SRC/bench/zoo.py" "$NEUROC" --quick \
    --models mobilenet_v3_small --in-memory --backend cpu --calib 32 --eval 8 --T 256 --timeout 300 \
    --json "$TMP/rows.json" || { echo "FAIL: bench/zoo.py exited $?"; exit 1; }

"$PY" - "$TMP/rows.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
fails = 0
for r in rows:
    for stage in ("run", "convert"):
        ok = r.get(stage) == "ok"
        print(f"  {'ok' if ok else 'FAIL'}: {r['model']} stage {stage}: {r.get(stage)}")
        fails += not ok
    c = r.get("cos", {}).get("256")
    ok = isinstance(c, float) and c >= 0.95
    print(f"  {'ok' if ok else 'FAIL'}: {r['model']} cosine at T = 256: {c}")
    fails += not ok
sys.exit(1 if fails or len(rows) != 1 else 0)
PYEOF
