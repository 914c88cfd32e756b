#!/bin/bash
# `neuroc convert model.onnx` with nothing else converts a network exported
# the usual way: torchvision's resnet18 (random weights, seed 0), exported by
# torch.onnx in eval mode, which folds every BatchNorm into its convolution,
# so no BN statistics are left to read. The thresholds are then estimated
# from the weights (the input taken as N(0, 1) a channel, carried through the
# layers): one warning names the layers and recommends --calib, the report
# gives each layer's source as "assumed-input", and the SNN approaches the
# ANN: mean-centred cosine of readout against torch's logits >= 0.9 at
# T = 256 on 16 smooth images (bench/zoo.py's kind, 32 px).
# usage: bash test_convert_datafree.sh <neuroc-binary> <source-dir> <build-dir>
set -u
NEUROC=$(realpath "$1")
SRC=$2
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c "import torch, torchvision, onnx" 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch/torchvision/onnx (scripts/setup.sh --torch)"
    exit 77
fi
. "$SRC/tests/cli_lib.sh"
cli_lib_init nc_test_datafree

check "torchvision resnet18 exported the usual way (eval mode: BatchNorm folded)"
"$PY" - "$TMP" <<'PYEOF' || { echo "FAIL: export"; exit 1; }
import sys, numpy as np, torch, torchvision
import torch.nn.functional as F
out = sys.argv[1]
torch.manual_seed(0)
net = torchvision.models.resnet18(weights=None, num_classes=10).eval()
g = torch.Generator().manual_seed(1)
n, px = 16, 32  # smooth images as bench/zoo.py makes them: not white noise
low = torch.randn(n, 3, 4, 4, generator=g)
x = F.interpolate(low, size=(px, px), mode="bilinear", align_corners=False)
x = x + 0.3 * torch.randn(n, 3, px, px, generator=g) + torch.randn(n, 1, 1, 1, generator=g) * 0.5
torch.onnx.export(net, x[:1], out + "/resnet18.onnx", opset_version=13, input_names=["input"],
                  output_names=["logits"], dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
with torch.no_grad():
    np.save(out + "/ann.npy", net(x).numpy())
np.save(out + "/x.npy", np.ascontiguousarray(x.numpy()))
PYEOF
run_cli 0 info "$TMP/resnet18.onnx"
expect_not_in "$TMP/out" "BatchNormalization"

check "neuroc convert resnet18.onnx, no other option: converts, warns once, names the sources"
mkdir -p "$TMP/cwd"
(cd "$TMP/cwd" && "$NEUROC" convert ../resnet18.onnx >"$TMP/out" 2>"$TMP/err")
RC=$?
if [ "$RC" -eq 0 ]; then pass "exit 0"; else fail "exit $RC"; sed 's/^/    | /' "$TMP/err" | head -5; fi
expect_file "$TMP/cwd/resnet18.nir"
expect_in "$TMP/out" "17 IF layers have no BatchNorm statistics before them"
expect_in "$TMP/out" "'/layer4/layer4.1/relu_1/Relu'"
expect_in "$TMP/out" "--calib"
(cd "$TMP/cwd" && "$NEUROC" convert ../resnet18.onnx -o r.nir --report r.json >/dev/null 2>&1)
n=$(grep -c '"source": "assumed-input"' "$TMP/cwd/r.json")
if [ "$n" -eq 17 ]; then pass "17 layers' source assumed-input"; else fail "$n layers' source assumed-input, expected 17"; fi

check "the SNN approaches the ANN: centred cosine >= 0.9 at T = 256"
run_cli 0 run "$TMP/cwd/resnet18.nir" --input "$TMP/x.npy" -T 256 --backend cpu-fast --output "$TMP/snn.npy"
if "$PY" - "$TMP" <<'PYEOF'; then pass "cosine >= 0.9"; else fail "cosine below 0.9"; fi
import sys, numpy as np
a, b = np.load(sys.argv[1] + "/snn.npy"), np.load(sys.argv[1] + "/ann.npy")
a, b = a - a.mean(0, keepdims=True), b - b.mean(0, keepdims=True)
c = float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))
print(f"  centred cosine at T = 256: {c:.4f}")
sys.exit(0 if c >= 0.9 else 1)
PYEOF

cli_finish test_convert_datafree
