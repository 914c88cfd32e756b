#!/bin/bash
# The Loihi simulator's acceptance measurement on the shipped CNN:
#
#   neuroc convert examples/models/cnn.onnx --calib <first 1000 train images> -o WORK/cnn.nir
#   neuroc sim WORK/cnn.nir --target loihi2 --mode subtract   --data <test images> --labels <test labels> -T 32
#   neuroc sim WORK/cnn.nir --target loihi1 --mode reset-zero ...
#   neuroc sim WORK/cnn.nir --target loihi1 --mode subtract   ...   (two-compartment emulation)
#
# and prints the float SNN's accuracy (reference backend) against each
# fixed-point accuracy at T = 32, with cores, chips, energy and latency.
# Target: Loihi 2 subtract within 1.0 point of the float SNN at T = 32 (exit
# status 1 if not). The readout's range is calibrated on the first 256
# training images (--calib), not on the test set.
#
# usage: bench/loihi.sh [--limit N] [--workdir DIR] [--neuroc PATH] [-T 32]
#   NEUROC=path/to/neuroc also works; default build/neuroc, else neuroc on PATH.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
FM=/usr/share/datasets/fashion-mnist
LIMIT=""
WORK=""
T=32
NEUROC=${NEUROC:-}
while [ $# -gt 0 ]; do
    case $1 in
    --limit) LIMIT=$2; shift 2 ;;
    --workdir) WORK=$2; shift 2 ;;
    --neuroc) NEUROC=$2; shift 2 ;;
    -T) T=$2; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$NEUROC" ]; then
    if [ -x "$HERE/build/neuroc" ]; then NEUROC=$HERE/build/neuroc; else NEUROC=$(command -v neuroc); fi
fi
[ -d "$FM" ] || { echo "Fashion-MNIST not found in $FM (Debian dataset-fashion-mnist)" >&2; exit 2; }
if [ -z "$WORK" ]; then
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/nc_bench_loihi.XXXXXX")
fi
mkdir -p "$WORK"
LIM=()
[ -n "$LIMIT" ] && LIM=(--limit "$LIMIT")

echo "# neuroc Loihi simulator on the shipped CNN"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); machine: $(uname -m), $(nproc) CPUs; $("$NEUROC" --version | head -1)"
echo "work: $WORK"
echo

run() { echo "\$ $*" >&2; "$@"; }
run "$NEUROC" convert "$HERE/examples/models/cnn.onnx" --calib "$FM/train-images-idx3-ubyte.gz" \
    --calib-samples 1000 --plain-spikes -o "$WORK/cnn.nir" >"$WORK/convert.log"
COMMON=(--data "$FM/t10k-images-idx3-ubyte.gz" --labels "$FM/t10k-labels-idx1-ubyte.gz" -T "$T"
    --calib "$FM/train-images-idx3-ubyte.gz" "${LIM[@]}")
run "$NEUROC" sim "$WORK/cnn.nir" --target loihi2 --mode subtract "${COMMON[@]}" \
    --report "$WORK/loihi2-subtract.json" >"$WORK/loihi2-subtract.txt"
run "$NEUROC" sim "$WORK/cnn.nir" --target loihi1 --mode reset-zero --no-float "${COMMON[@]}" \
    --report "$WORK/loihi1-reset-zero.json" >"$WORK/loihi1-reset-zero.txt"
run "$NEUROC" sim "$WORK/cnn.nir" --target loihi1 --mode subtract --no-float "${COMMON[@]}" \
    --report "$WORK/loihi1-subtract.json" >"$WORK/loihi1-subtract.txt"
# the default conversion (signed spikes in bursts of up to 2, max thresholds): Loihi 2 only, graded
# spikes of payload up to ±2; then one spike a step (--burst 1, payload ±1)
run "$NEUROC" convert "$HERE/examples/models/cnn.onnx" --calib "$FM/train-images-idx3-ubyte.gz" \
    --calib-samples 1000 -o "$WORK/cnn_signed.nir" >"$WORK/convert_signed.log"
run "$NEUROC" sim "$WORK/cnn_signed.nir" --target loihi2 "${COMMON[@]}" \
    --report "$WORK/loihi2-signed.json" >"$WORK/loihi2-signed.txt"
run "$NEUROC" convert "$HERE/examples/models/cnn.onnx" --calib "$FM/train-images-idx3-ubyte.gz" \
    --calib-samples 1000 --burst 1 -o "$WORK/cnn_signed1.nir" >"$WORK/convert_signed1.log"
run "$NEUROC" sim "$WORK/cnn_signed1.nir" --target loihi2 "${COMMON[@]}" \
    --report "$WORK/loihi2-signed1.json" >"$WORK/loihi2-signed1.txt"

/usr/bin/env python3 - "$WORK" "$T" <<'EOF'
import json, sys
work, T = sys.argv[1], int(sys.argv[2])
runs = ["loihi2-subtract", "loihi1-reset-zero", "loihi1-subtract", "loihi2-signed", "loihi2-signed1"]
kinds = {"loihi2-signed": ", signed spikes in bursts of 2 (the default)", "loihi2-signed1": ", signed spikes, one a step"}
rep = {r: json.load(open(f"{work}/{r}.json")) for r in runs}
fl = rep["loihi2-subtract"]["float_snn"]["accuracy"]["snn"][T - 1]
n = rep["loihi2-subtract"]["fixed_point"]["samples"]
print(f"samples: {n}, T = {T}; float SNN (reference backend) at T = {T}: {100 * fl:.2f} %\n")
print("| target, reset | fixed-point acc. | vs float | acc. at chip step T | cores | chips | energy / inference | latency / inference |")
print("|---|---|---|---|---|---|---|---|")
for r in runs:
    fp, nw = rep[r]["fixed_point"], rep[r]["network"]
    a = fp["accuracy"][T - 1]
    raw = fp["accuracy_per_step"][T - 1]
    fl_r = rep[r]["float_snn"]["accuracy"]["snn"][T - 1] if r in kinds else fl  # its own float SNN
    kind = kinds.get(r, "")
    print(f"| {nw['target']}, {nw['reset']}{kind} | {100 * a:.2f} % | {100 * (a - fl_r):+.2f} | {100 * raw:.2f} % "
          f"| {nw['mapping']['cores']} | {nw['mapping']['chips']} | {fp['energy']['joules'] * 1e6:.1f} uJ "
          f"| {fp['latency']['seconds'] * 1e3:.2f} ms |")
fp = rep["loihi2-subtract"]["fixed_point"]
print(f"\nThe same network as an ANN: {fp['ann']['macs']:.0f} MACs = {fp['ann']['gpu_joules'] * 1e6:.2f} uJ "
      f"({fp['ann']['e_mac_gpu']['source']})")
print("Energy and latency: " + fp["energy"]["evidence"] + " (" + fp["energy"]["e_synop"]["source"] + ")")
d = 100 * (fp["accuracy"][T - 1] - fl)
ok = abs(d) <= 1.0
print(f"\ntarget: Loihi 2 subtract within 1.0 point of the float SNN at T = {T}: {d:+.2f} points -> "
      + ("pass" if ok else "FAIL"))
sys.exit(0 if ok else 1)
EOF
