#!/usr/bin/env bash
# The CUDA benchmark on the converted example CNN: images/s and synaptic
# events/s of the cpu reference, cpu-fast and the cuda backend with each
# strategy (event, dense, sparse, auto), at batch 1, 64 and 1024, T = 8,
# with the speed-up over cpu at each batch. The CPU backends run on one
# thread (--threads 1), so the cuda column reads against one core.
# usage: bench/cuda_bench.sh [BUILD_DIR (default build)] [MIN_SECONDS (default 1)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
min=${2:-1}
neuroc=$build/neuroc
[ -x "$neuroc" ] || { echo "cuda_bench: no $neuroc (build first)" >&2; exit 1; }
echo "# $(date -u +%FT%TZ) $(uname -n); $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no nvidia-smi')"
set -x
"$neuroc" bench examples/models/cnn.onnx --data examples/data/fmnist_test_x.npy --calib-samples 256 \
    --backend cpu,cpu-fast,cuda:event,cuda:dense,cuda:sparse,cuda:auto --batch 1,64,1024 -T 8 \
    --threads 1 --min-time "$min"
