#!/usr/bin/env bash
# NIR's own semantics (nir 1.0.8 docstrings) for other tools' files: one
# file per node type written with the nir package (tests/nir_spec_cases.py,
# in the venv of scripts/nir_venv.sh) runs in neuroc on the cpu and
# cpu-fast backends (the same bits; cpu-fast refuses the recurrent
# subtraction pattern by name) and matches a numpy reference of the spec
# step for step. The one-neuron
# threshold file spikes where the spec says (steps 3, 6, 9, 12), and with
# --nir-reset subtract --nir-spike ge where neuroc's old defaults did.
# usage: test_nir_spec.sh <neuroc-binary> <source-dir> <build-dir>
set -u
NEUROC=$1
SRC=$2
BUILD=$3
VENV="$BUILD/nir-venv"
OUT="$BUILD/nir-spec"

. "$SRC/tests/nir_venv_needed.sh"
need_nir_venv "$SRC" "$VENV"
rm -rf "$OUT" && mkdir -p "$OUT"
"$VENV/bin/python" "$SRC/tests/nir_spec_cases.py" "$OUT" || { echo "FAIL: cases not written" >&2; exit 1; }

fail=0
while read -r c opts; do
    for be in cpu cpu-fast; do
        # shellcheck disable=SC2086
        if ! "$NEUROC" run "$OUT/$c.nir" -i "$OUT/$c.x.npy" --per-step --backend $be $opts \
                -o "$OUT/$c.$be.npy" >"$OUT/$c.$be.log" 2>&1; then
            if [ $be = cpu-fast ] && grep -q "cpu-fast runs feed-forward networks only" \
                    "$OUT/$c.$be.log"; then
                continue  # refused by name, as documented
            fi
            echo "FAIL: $c on $be:"; cat "$OUT/$c.$be.log"; fail=1
        fi
    done
done <"$OUT/cases.txt"
for be in cpu cpu-fast; do
    "$VENV/bin/python" "$SRC/tests/nir_spec_compare.py" "$OUT" $be || fail=1
done
# cpu-fast computes the reference's bits
"$VENV/bin/python" - "$OUT" <<'PY' || fail=1
import os, sys, numpy as np
d, bad = sys.argv[1], 0
for line in open(f"{d}/cases.txt"):
    c = line.split()[0]
    if os.path.exists(f"{d}/{c}.cpu-fast.npy") and not np.array_equal(np.load(f"{d}/{c}.cpu.npy"), np.load(f"{d}/{c}.cpu-fast.npy")):
        print(f"FAIL {c}: cpu-fast differs from cpu"); bad = 1
sys.exit(bad)
PY

# a Delay of a delay per neuron written back (Delay and Scale nodes summed by
# edges: plain NIR) runs the same, read by neuroc or by nir.read
if "$NEUROC" export "$OUT/delay_per_neuron.nir" --dt 1e-3 -o "$OUT/delay_back.nir" >"$OUT/delay_back.log" 2>&1 &&
        "$NEUROC" run "$OUT/delay_back.nir" -i "$OUT/delay_per_neuron.x.npy" --per-step -o "$OUT/delay_back.npy" \
            >>"$OUT/delay_back.log" 2>&1; then
    cmp -s "$OUT/delay_back.npy" "$OUT/delay_per_neuron.cpu.npy" ||
        { echo "FAIL: the per-neuron Delay written back runs differently"; fail=1; }
    "$VENV/bin/python" -c "import nir, sys; nir.read(sys.argv[1])" "$OUT/delay_back.nir" ||
        { echo "FAIL: nir.read refuses the per-neuron Delay written back"; fail=1; }
else
    cat "$OUT/delay_back.log"; echo "FAIL: export of the per-neuron Delay"; fail=1
fi

# two Input and two Output nodes written back as two of each (not as one
# joined input and output), read by nir.read, and by neuroc the same with
# or without its own group; neuroc run writes a file per output
if "$NEUROC" export "$OUT/multi_io.nir" --dt 1e-3 -o "$OUT/mio_back.nir" >"$OUT/mio_back.log" 2>&1 &&
        "$NEUROC" run "$OUT/mio_back.nir" -i "$OUT/multi_io.x.npy" --per-step -o "$OUT/mio_back.npy" \
            >>"$OUT/mio_back.log" 2>&1; then
    "$VENV/bin/python" - "$OUT" <<'PY' || fail=1
import sys, h5py, nir, numpy as np
d = sys.argv[1]
g = nir.read(f"{d}/mio_back.nir")
kinds = sorted(f"{k}:{type(n).__name__}" for k, n in g.nodes.items() if type(n).__name__ in ("Input", "Output"))
if kinds != ["in_a:Input", "in_b:Input", "out_a:Output", "out_b:Output"]:
    print("FAIL: the written-back graph's Input/Output nodes:", kinds); sys.exit(1)
a, b, whole = (np.load(f"{d}/{n}.npy") for n in ("mio_back.out_a", "mio_back.out_b", "mio_back"))
if not np.array_equal(whole, np.load(f"{d}/multi_io.cpu.npy")):
    print("FAIL: the written-back network runs differently"); sys.exit(1)
if a.shape != (whole.shape[0], 1, 2) or b.shape != (whole.shape[0], 1, 4) or \
        not np.array_equal(np.concatenate([a, b], axis=2), whole):
    print("FAIL: the per-output files are not the outputs", a.shape, b.shape, whole.shape); sys.exit(1)
with h5py.File(f"{d}/mio_back.nir", "r") as src, h5py.File(f"{d}/mio_plain.nir", "w") as dst:
    for k in src:  # the standard graph alone: what another tool's file would hold
        if k != "neuroc":
            src.copy(k, dst)
PY
    "$NEUROC" run "$OUT/mio_plain.nir" -i "$OUT/multi_io.x.npy" --per-step --dt 1e-3 -o "$OUT/mio_plain.npy" \
        >>"$OUT/mio_back.log" 2>&1 &&
        cmp -s "$OUT/mio_plain.out_b.npy" "$OUT/mio_back.out_b.npy" && cmp -s "$OUT/mio_plain.out_a.npy" "$OUT/mio_back.out_a.npy" ||
        { echo "FAIL: the standard graph of two outputs runs differently"; cat "$OUT/mio_back.log"; fail=1; }
else
    cat "$OUT/mio_back.log"; echo "FAIL: export of two Input and two Output nodes"; fail=1
fi

# the one-neuron file: spec spikes at 3, 6, 9, 12; neuroc's old rules at 2, 4, 6, ...
spikes() { "$VENV/bin/python" -c "import numpy as n,sys; y=n.load(sys.argv[1]).ravel(); print(' '.join(str(i+1) for i in n.flatnonzero(y)))" "$1"; }
got=$(spikes "$OUT/if_threshold.cpu.npy")
[ "$got" = "3 6 9 12" ] || { echo "FAIL: the threshold neuron spikes at '$got', the spec at 3 6 9 12"; fail=1; }
"$NEUROC" run "$OUT/if_threshold.nir" -i "$OUT/if_threshold.x.npy" --per-step --nir-reset subtract --nir-spike ge \
    -o "$OUT/old.npy" >/dev/null || fail=1
got=$(spikes "$OUT/old.npy")
[ "$got" = "2 4 6 8 10 12" ] || { echo "FAIL: with subtract and >=: '$got', expected 2 4 6 8 10 12"; fail=1; }
"$NEUROC" info "$OUT/if_threshold.nir" | grep -q "spike when v > θ, then v = 0; v(0) = as stored" ||
    { echo "FAIL: neuroc info does not show the spec semantics"; "$NEUROC" info "$OUT/if_threshold.nir"; fail=1; }
"$NEUROC" info "$OUT/if_threshold.nir" --nir-reset subtract --nir-spike ge | grep -q "spike when v >= θ, then v -= θ" ||
    { echo "FAIL: neuroc info does not show the chosen semantics"; fail=1; }
# a NaN parameter: refused naming file, node and field
"$VENV/bin/python" - "$OUT/nan.nir" <<'PY'
import sys, numpy as np, nir
g = nir.NIRGraph(nodes={"input": nir.Input(input_type=np.array([2])),
                        "lif": nir.LIF(tau=np.array([1e-3, np.nan], np.float32), r=np.ones(2, np.float32),
                                       v_leak=np.zeros(2, np.float32), v_threshold=np.ones(2, np.float32)),
                        "output": nir.Output(output_type=np.array([2]))},
                 edges=[("input", "lif"), ("lif", "output")])
nir.write(sys.argv[1], g)
PY
if "$NEUROC" info "$OUT/nan.nir" >"$OUT/nan.log" 2>&1 || ! grep -q "nan.nir.*node 'lif'.*'tau' holds NaN" "$OUT/nan.log"; then
    echo "FAIL: a NaN tau is not refused by name:"; cat "$OUT/nan.log"; fail=1
fi
[ $fail = 0 ] && echo "PASS: every node type runs as the spec says"
exit $fail
