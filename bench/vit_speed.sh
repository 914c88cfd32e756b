#!/usr/bin/env bash
# cpu-fast against the reference backend on issue 28's small ViT (patch 4
# on 1x28x28: 49 tokens and a class token, 4 pre-norm blocks, dim 64, 4
# heads, MLP 128, GELU, LayerNorm; random weights, bench/vit_speed_model.py),
# converted with default options (64 Fashion-MNIST calibration images) and
# run at batch 64, one thread, T = 8: images/s and CPU time per image of
# each, and the speed-up both ways (the CPU time ratio is the steadier on a
# busy machine). The acceptance asks cpu-fast for at least 5x.
# usage: bench/vit_speed.sh [BUILD_DIR (default build)] [MIN_SECONDS (default 3)] [--verbose]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
min=${2:-3}
extra=${3:-}
neuroc=$build/neuroc
[ -x "$neuroc" ] || { echo "vit_speed: no $neuroc (build first)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%FT%TZ) $(uname -n); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 bench/vit_speed_model.py "$out" 2>/dev/null
"$neuroc" convert "$out/vit.onnx" --calib "$out/calib.npy" -o "$out/vit.nir" >/dev/null
set -x
"$neuroc" bench "$out/vit.nir" --data "$out/x.npy" --backend cpu,cpu-fast --batch 64 -T 8 --threads 1 \
    --min-time "$min" --json "$out/bench.json" $extra
{ set +x; } 2>/dev/null
/usr/bin/python3 - "$out/bench.json" <<'PY'
import json, sys
runs = {r["backend"]: r for r in json.load(open(sys.argv[1]))["configs"]}
ref, fast = runs["cpu"], runs["cpu-fast"]
for name, r in (("cpu", ref), ("cpu-fast", fast)):
    print("%-8s %7.2f images/s, %6.2f CPU ms/image" % (name, r["images_per_s"], 1e3 * r["cpu_s_per_image"]))
print("speed-up of cpu-fast: %.2fx in images/s, %.2fx in CPU time per image"
      % (fast["images_per_s"] / ref["images_per_s"], ref["cpu_s_per_image"] / fast["cpu_s_per_image"]))
PY
