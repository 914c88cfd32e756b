#!/usr/bin/env bash
# neuroc and the NIR tools of other projects (tests/nir_peers.py, venv of
# scripts/nir_peers_venv.sh):
#  1. the portable export of the example CNN (convert --portable --v0 spread
#     -T 32 --threshold-scale 0.9), imported by norse (from_nir) and by
#     nirtorch (nir_to_torch with NIR's IF), gives neuroc's predictions on
#     at least 99 % of 500 Fashion-MNIST test images at T = 32;
#  3. (below) the standard graph of the default file (convert without
#     options) likewise, on at least 99 % of the 500 images;
#  2. networks written by each tool's exporter (snntorch Leaky with zero and
#     subtract reset, reset_delay=False, and Synaptic; sinabs IAF and LIF;
#     norse IAF and LIFBox) run in neuroc through the CLI with the tool's
#     output at every step, within 1e-4.
# usage: test_nir_peers.sh <neuroc-binary> <source-dir> <build-dir>
# Skips (77) when the package index is unreachable (outside CI) or the
# Fashion-MNIST data set (Debian dataset-fashion-mnist) is absent.
set -u
NEUROC=$1
SRC=$2
BUILD=$3
VENV="$BUILD/nir-peers-venv"
OUT="$BUILD/nir-peers"
DATA=/usr/share/datasets/fashion-mnist

bash "$SRC/scripts/nir_peers_venv.sh" "$VENV"
rc=$?
if [ $rc -ne 0 ]; then
    [ "${CI:-}" = "true" ] && { echo "FAIL: the peers' venv could not be made (rc $rc)" >&2; exit 1; }
    [ $rc -eq 3 ] && { echo "SKIP: the package index is unreachable"; exit 77; }
    echo "FAIL: scripts/nir_peers_venv.sh failed (rc $rc)" >&2
    exit 1
fi
PY="$VENV/bin/python"
rm -rf "$OUT" && mkdir -p "$OUT"
fail=0

# 2. the peers' own files
"$PY" "$SRC/tests/nir_peers.py" export "$OUT" || { echo "FAIL: the peers' exports" >&2; exit 1; }
while read -r c opts; do
    # shellcheck disable=SC2086
    if ! "$NEUROC" run "$OUT/$c.nir" -i "$OUT/$c.x.npy" --per-step $opts -o "$OUT/$c.neuroc.npy" \
            >"$OUT/$c.log" 2>&1; then
        echo "FAIL: neuroc run $c.nir $opts:"; cat "$OUT/$c.log"; fail=1; continue
    fi
    "$PY" - "$OUT/$c" "$opts" <<'PY' || fail=1
import sys, numpy as np
base, opts = sys.argv[1], sys.argv[2]
got = np.load(base + ".neuroc.npy")
want = np.load(base + ".y.npy").reshape(got.shape)
ok = np.all(np.abs(got - want) <= 1e-4, axis=tuple(range(1, got.ndim)))
name = base.rsplit("/", 1)[1]
print(f"{'ok  ' if ok.all() else 'FAIL'} {name} ({opts or 'NIR defaults'}): {int(ok.sum())}/{len(ok)} steps "
      f"agree within 1e-4 ({int(want.sum())} spikes)")
sys.exit(0 if ok.all() else 1)
PY
done <"$OUT/cases.txt"
# sinabs's LIF decays by exp(-dt/tau): forward Euler is another neuron (counted, not asserted)
"$NEUROC" run "$OUT/sinabs_lif.nir" -i "$OUT/sinabs_lif.x.npy" --per-step --nir-reset subtract --nir-spike ge \
    --dt 1 -o "$OUT/sinabs_lif.euler.npy" >/dev/null 2>&1 &&
    "$PY" -c "import numpy as n,sys; g=n.load(sys.argv[1]); w=n.load(sys.argv[2]).reshape(g.shape); \
print(f'     sinabs_lif with forward Euler instead: {int(n.all(abs(g-w)<=1e-4,axis=(1,2)).sum())}/{len(g)} steps agree')" \
    "$OUT/sinabs_lif.euler.npy" "$OUT/sinabs_lif.y.npy"

# 1. the portable CNN
if [ ! -f "$DATA/t10k-images-idx3-ubyte.gz" ] || [ ! -f "$DATA/train-images-idx3-ubyte.gz" ]; then
    echo "SKIP (part 1): $DATA is absent (Debian dataset-fashion-mnist)"
    [ $fail = 0 ] && exit 77
    exit 1
fi
"$NEUROC" convert "$SRC/examples/models/cnn.onnx" --calib "$DATA/train-images-idx3-ubyte.gz" --portable \
    --v0 spread -T 32 --threshold-scale 0.9 -o "$OUT/cnn_portable.nir" >"$OUT/convert.log" 2>&1 ||
    { cat "$OUT/convert.log"; echo "FAIL: convert --portable"; exit 1; }
"$PY" -c "
import gzip, numpy as np, sys
d = gzip.open(sys.argv[1]).read()
np.save(sys.argv[2], np.frombuffer(d, np.uint8, offset=16).reshape(-1, 1, 28, 28)[:500].astype(np.float32) / 255)
" "$DATA/t10k-images-idx3-ubyte.gz" "$OUT/x500.npy" || exit 1
"$NEUROC" run "$OUT/cnn_portable.nir" -i "$OUT/x500.npy" -T 32 --backend cpu-fast -o "$OUT/y500.npy" \
    >"$OUT/run.log" 2>&1 || { cat "$OUT/run.log"; echo "FAIL: neuroc run of the portable CNN"; exit 1; }
"$PY" "$SRC/tests/nir_peers.py" portable "$OUT/cnn_portable.nir" "$OUT/x500.npy" "$OUT/y500.npy" 32 || fail=1

# 3. the default file (signed spikes in bursts): the peers run its standard
# graph (/node) as neuroc runs that graph (the file without /neuroc, read as
# plain NIR); neuroc itself runs the exact network
"$NEUROC" convert "$SRC/examples/models/cnn.onnx" --calib "$DATA/train-images-idx3-ubyte.gz" \
    -o "$OUT/cnn_default.nir" >"$OUT/convert_default.log" 2>&1 ||
    { cat "$OUT/convert_default.log"; echo "FAIL: convert (default options)"; exit 1; }
"$PY" -c "
import h5py, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], 'r+') as f:
    del f['neuroc']
" "$OUT/cnn_default.nir" "$OUT/cnn_standard.nir" || exit 1
"$NEUROC" run "$OUT/cnn_standard.nir" -i "$OUT/x500.npy" -T 32 --backend cpu-fast -o "$OUT/y500_std.npy" \
    >"$OUT/run_std.log" 2>&1 || { cat "$OUT/run_std.log"; echo "FAIL: neuroc run of the standard graph"; exit 1; }
"$PY" "$SRC/tests/nir_peers.py" portable "$OUT/cnn_default.nir" "$OUT/x500.npy" "$OUT/y500_std.npy" 32 || fail=1

[ $fail = 0 ] && echo "PASS: the peers run neuroc's portable CNN and the standard graph of its default file as neuroc does, and neuroc runs theirs"
exit $fail
