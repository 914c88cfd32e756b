#!/bin/bash
# neuroc under `mpirun -np 2` (data parallel) against one process, on the
# shipped models and the 256 shipped Fashion-MNIST images:
#  - eval of the CNN (.onnx, converted in memory: calibration shared by the
#    ranks, per-channel histograms merged), Poisson input, batch 48 (so the
#    ranks' shares are uneven runs of batches): the JSON report is
#    byte-identical to one process's (it has no timing fields);
#  - convert with 3 ranks: the thresholds in the .nir equal one process's;
#  - sim (Loihi fixed point): the report is byte-identical;
#  - finetune, 2 steps (64 samples, 1 epoch): 2 ranks x batch 16 against
#    1 process x batch 32, plain SGD: every weight within 1e-6 (the ranks sum
#    their halves of each gradient, one process sums the whole batch at once:
#    only the float summation order differs; the weights are O(1), so 1e-6 is
#    a few ulps) while the weights moved by more than 1e-4;
#  - QCFS fine-tuning in convert (Adam), 2 x 16 against 1 x 32: within 1e-5
#    (Adam divides by sqrt(v) + 1e-8, which magnifies the order difference of
#    near-zero gradients; measured 8e-7);
#  - a different model file on rank 1, different data on rank 1: non-zero
#    exit with a clear message, no hang (timeout 60 s);
#  - no MPI outside mpirun: neither the program nor libneuroc.so links a
#    libmpi, and a plain run loads none (LD_DEBUG=libs); under mpirun the
#    program loads its MPI module (NEUROC_MPI_MODULE overrides where from)
#    and runs 2 ranks; a module it cannot load ends every rank with one
#    line and a non-zero exit, no hang;
#  - a C program of its own MPI on libneuroc_mpi (tests/mpi_c_user.c):
#    2 ranks write the report 1 rank writes.
# Skipped (77) without mpirun or in a build without MPI.
# usage: bash test_mpi.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
BUILD=$3
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"

if ! command -v mpirun >/dev/null; then
    echo "SKIP: mpirun not found"
    exit 77
fi
if ! "$NEUROC" --version | grep -q '^features:.* mpi'; then
    echo "SKIP: neuroc was built without MPI"
    exit 77
fi
cli_lib_init nc_test_mpi

# as root, Open MPI wants these; --oversubscribe: more ranks than cores is fine here
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# One OpenBLAS thread in every process, single or rank: on some CPUs (this
# AMD EPYC) OpenBLAS's sgemm rounds differently with 1 and 2 threads, which
# moves a calibrated threshold by an ulp and a few spikes with it; what these
# checks compare is the distribution, not BLAS's threading.
export OPENBLAS_NUM_THREADS=1
MPIRUN=(timeout 60 mpirun --oversubscribe)
PY=/usr/bin/python3
X=$SRC/examples/data/fmnist_test_x.npy
Y=$SRC/examples/data/fmnist_test_y.npy
MLP=$SRC/examples/models/mlp.onnx
CNN=$SRC/examples/models/cnn.onnx

run_mpi() { # EXPECTED_RC NP ARGS...: mpirun -np NP neuroc ARGS; output in $TMP/out, $TMP/err
    run_mpi_bin "$NEUROC" "$@"
}
run_mpi_bin() { # PROGRAM EXPECTED_RC NP ARGS...: mpirun -np NP PROGRAM ARGS
    local prog=$1 want=$2 np=$3
    shift 3
    # In a sanitized build, Open MPI's own allocations (in plugins it has
    # unloaded, so no suppression can name them) show as leaks at exit: leak
    # detection is off for the ranks only. Memory errors are still caught, and
    # neuroc's data-parallel paths are leak-checked in one process by
    # test_mpi_dist (two threads as two ranks).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        "${MPIRUN[@]}" -np "$np" "$prog" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
    if [ "$RC" -eq "$want" ]; then pass "mpirun -np $np: exit status $RC"; else
        fail "mpirun -np $np: exit status $RC, expected $want ($(basename "$prog") $*)"
        sed 's/^/    stderr: /' "$TMP/err" | head -8
    fi
}
same_file() { # A B WHAT
    if cmp -s "$1" "$2"; then pass "$3: identical"; else
        fail "$3: differs"; diff <(tr ',' '\n' <"$1") <(tr ',' '\n' <"$2") | head -10 | sed 's/^/    /'; fi
}
# Every float dataset of two .nir files within TOL (0 = equal); with BASE,
# also that some weight moved by more than 1e-4 from it.
nir_close() { # A B TOL [BASE]
    "$PY" - "$@" <<'EOF'
import sys
import h5py, numpy as np
def data(path):
    out = {}
    def walk(g, p):
        for k, v in g.items():
            if isinstance(v, h5py.Group): walk(v, p + "/" + k)
            elif v.dtype.kind == "f": out[p + "/" + k] = np.asarray(v[()], dtype=np.float64)
    with h5py.File(path, "r") as f: walk(f, "")
    return out
a, b, tol = data(sys.argv[1]), data(sys.argv[2]), float(sys.argv[3])
assert a.keys() == b.keys(), "different datasets"
worst = max(float(np.max(np.abs(a[k] - b[k]), initial=0.0)) for k in a)
print("max |difference| %.3g (tolerance %g)" % (worst, tol))
ok = worst <= tol
if len(sys.argv) > 4:
    base = data(sys.argv[4])
    moved = max(float(np.max(np.abs(a[k] - base[k]), initial=0.0)) for k in a if "weight" in k)
    print("largest weight change from the start %.3g" % moved)
    ok = ok and moved > 1e-4
sys.exit(0 if ok else 1)
EOF
}
have_h5py=1
"$PY" -c 'import h5py, numpy' 2>/dev/null || have_h5py=0

check "no MPI library linked into the program or libneuroc, none loaded without mpirun"
for bin in "$NEUROC" "$BUILD/libneuroc.so"; do
    if ldd "$bin" >"$TMP/ldd" 2>&1 && ! grep -q libmpi "$TMP/ldd"; then pass "ldd $(basename "$bin"): no libmpi"; else
        fail "ldd $(basename "$bin") names libmpi (or failed)"; grep mpi "$TMP/ldd" | head -3 | sed 's/^/    /'; fi
done
LD_DEBUG=libs "$NEUROC" --version >"$TMP/out" 2>"$TMP/ld"
expect_in "$TMP/ld" "calling init" # LD_DEBUG works here, so the next check means something
expect_not_in "$TMP/ld" "libmpi"
expect_not_in "$TMP/ld" "neuroc_mpi_module"

check "under mpirun the program loads its MPI module and runs 2 ranks"
EV1=(eval "$MLP" --data "$X" --labels "$Y" -T 4 --limit 96)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" LD_DEBUG=libs \
    "${MPIRUN[@]}" -np 2 "$NEUROC" "${EV1[@]}" >"$TMP/out" 2>"$TMP/ld"
RC=$?
if [ "$RC" = 0 ]; then pass "exit status 0"; else fail "exit status $RC"; grep -v '^ *[0-9]*:' "$TMP/ld" | head -5; fi
expect_in "$TMP/out" "(2 ranks)"
if [ "$(grep -c 'calling init: .*/neuroc_mpi_module.so' "$TMP/ld")" = 2 ]; then pass "both ranks loaded the module"
else fail "the module was not loaded by both ranks"; fi
expect_in "$TMP/ld" "libmpi"

check "NEUROC_MPI_MODULE names the module: a copy of the program elsewhere still runs 2 ranks"
mkdir "$TMP/bin" && cp "$NEUROC" "$TMP/bin/neuroc"
NEUROC_MPI_MODULE=$BUILD/neuroc_mpi_module.so run_mpi_bin "$TMP/bin/neuroc" 0 2 "${EV1[@]}"
expect_in "$TMP/out" "(2 ranks)"

check "a module that cannot be loaded: every rank says so in one line and exits non-zero, no hang"
NEUROC_MPI_MODULE=$TMP/missing.so "${MPIRUN[@]}" -np 2 "$NEUROC" "${EV1[@]}" >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC (124: it hung)"; fi
if [ "$(grep -c '^neuroc: rank [01]: started by an MPI launcher, but cannot load the MPI module: .*missing.so' \
    "$TMP/err")" = 2 ]; then pass "one line from each rank"; else
    fail "expected one line from each rank"; sed 's/^/    | /' "$TMP/err" | head -8; fi
expect_not_in "$TMP/out" "SNN accuracy"

check "a C program with its own MPI on libneuroc_mpi: 2 ranks = 1 rank"
if [ -x "$BUILD/mpi_c_user" ]; then
    U=("$MLP" "$X" "$Y")
    run_mpi_bin "$BUILD/mpi_c_user" 0 1 "${U[@]}" "$TMP/u1.json"
    run_mpi_bin "$BUILD/mpi_c_user" 0 2 "${U[@]}" "$TMP/u2.json"
    expect_in "$TMP/out" "mpi_c_user: 2 ranks, 256 samples"
    same_file "$TMP/u1.json" "$TMP/u2.json" "the C program's eval report"
else
    fail "$BUILD/mpi_c_user was not built"
fi

check "eval (CNN converted in memory, per channel, Poisson, batch 48): 2 ranks = 1 process"
EV=(eval "$CNN" --data "$X" --labels "$Y" --per-channel -T 8 --encoding poisson --seed 3 --batch 48)
run_cli 0 "${EV[@]}" --report "$TMP/e1.json"
run_mpi 0 2 "${EV[@]}" --report "$TMP/e2.json"
expect_in "$TMP/out" "(2 ranks)"
same_file "$TMP/e1.json" "$TMP/e2.json" "eval report"

check "convert (MSE clip per channel, 200 samples): 3 ranks = 1 process"
CV=(convert "$CNN" --calib "$X" --calib-samples 200 --per-channel --threshold mse)
run_cli 0 "${CV[@]}" -o "$TMP/c1.nir" --report "$TMP/c1.json"
run_mpi 0 3 "${CV[@]}" -o "$TMP/c3.nir" --report "$TMP/c3.json"
same_file "$TMP/c1.json" "$TMP/c3.json" "conversion report (thresholds)"
if [ $have_h5py = 1 ]; then
    if nir_close "$TMP/c1.nir" "$TMP/c3.nir" 0 >"$TMP/cmp"; then pass "the .nir files hold equal values"; else
        fail "the .nir files differ: $(cat "$TMP/cmp")"; fi
fi

check "convert with bias and potential correction: 2 ranks = 1 process (within 1e-5: double sums)"
PV=(convert "$MLP" --calib "$X" --calib-samples 96 -T 4 --bias-correction --potential-correction)
run_cli 0 "${PV[@]}" -o "$TMP/p1.nir"
run_mpi 0 2 "${PV[@]}" -o "$TMP/p2.nir"
if [ $have_h5py = 1 ]; then
    if nir_close "$TMP/p1.nir" "$TMP/p2.nir" 1e-5 >"$TMP/cmp"; then pass "the corrected .nir files agree"; else
        fail "the corrected .nir files differ: $(cat "$TMP/cmp")"; fi
fi

check "sim (Loihi fixed point): 2 ranks = 1 process"
run_cli 0 convert "$MLP" --calib "$X" --calib-samples 64 --plain-spikes -o "$TMP/mlp.nir"
SV=(sim "$TMP/mlp.nir" --data "$X" --labels "$Y" -T 8 --limit 100 --threads 1)
run_cli 0 "${SV[@]}" --report "$TMP/s1.json"
run_mpi 0 2 "${SV[@]}" --report "$TMP/s2.json"
same_file "$TMP/s1.json" "$TMP/s2.json" "sim report"

check "finetune, 2 SGD steps: 2 ranks x batch 16 = 1 process x batch 32 (within 1e-6)"
"$PY" -c "import numpy as np; np.save('$TMP/x64.npy', np.load('$X')[:64]); np.save('$TMP/y64.npy', np.load('$Y')[:64])" ||
    fail "cannot cut the data"
FT=(finetune "$TMP/mlp.nir" --train "$TMP/x64.npy" --labels "$TMP/y64.npy" --epochs 1 --lr 0.01 --optimizer sgd)
run_cli 0 "${FT[@]}" --batch 32 -o "$TMP/t1.nir"
run_mpi 0 2 "${FT[@]}" --batch 16 -o "$TMP/t2.nir"
expect_in "$TMP/out" "effective batch 32"
expect_in "$TMP/out" "not scaled"
if [ "$(grep -c '^wrote ' "$TMP/out")" = 1 ]; then pass "one rank printed"; else fail "more than one rank printed"; fi
if [ $have_h5py = 1 ]; then
    if nir_close "$TMP/t1.nir" "$TMP/t2.nir" 1e-6 "$TMP/mlp.nir" >"$TMP/cmp"; then pass "$(tr '\n' ';' <"$TMP/cmp")"; else
        fail "weights: $(tr '\n' ';' <"$TMP/cmp")"; fi
fi

check "QCFS fine-tuning in convert (Adam): 2 ranks x 16 = 1 process x 32 (within 1e-5)"
QV=(convert "$MLP" --calib "$TMP/x64.npy" --labels "$TMP/y64.npy" --qcfs-epochs 1)
run_cli 0 "${QV[@]}" --qcfs-batch 32 -o "$TMP/q1.nir"
run_mpi 0 2 "${QV[@]}" --qcfs-batch 16 -o "$TMP/q2.nir"
if [ $have_h5py = 1 ]; then
    if nir_close "$TMP/q1.nir" "$TMP/q2.nir" 1e-5 >"$TMP/cmp"; then pass "$(cat "$TMP/cmp")"; else
        fail "weights: $(cat "$TMP/cmp")"; fi
fi

check "a different model file on rank 1 ends the job with a clear error"
"${MPIRUN[@]}" -np 1 "$NEUROC" eval "$MLP" --data "$X" --labels "$Y" -T 4 : \
    -np 1 "$NEUROC" eval "$CNN" --data "$X" --labels "$Y" -T 4 >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC (124: it hung)"; fi
expect_in "$TMP/err" "differs between ranks: rank 1's file"
expect_not_in "$TMP/out" "SNN accuracy"

check "different data on rank 1 ends the job with a clear error"
"${MPIRUN[@]}" -np 1 "$NEUROC" eval "$TMP/mlp.nir" --data "$X" --labels "$Y" -T 4 : \
    -np 1 "$NEUROC" eval "$TMP/mlp.nir" --data "$X" --labels "$Y" -T 4 --limit 100 >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC (124: it hung)"; fi
expect_in "$TMP/err" "not the same on every rank: the evaluation data or labels (rank 1's hash"

check "a bad label on rank 1 only: both ranks fail, rank 0 with rank 1's message"
"$PY" -c "import numpy as np; y = np.load('$TMP/y64.npy'); y[3] = 99; np.save('$TMP/y64bad.npy', y)" ||
    fail "cannot write the labels"
FB=(finetune "$TMP/mlp.nir" --train "$TMP/x64.npy" --epochs 1 -o "$TMP/fb.nir")
"${MPIRUN[@]}" -np 1 "$NEUROC" "${FB[@]}" --labels "$TMP/y64.npy" : \
    -np 1 "$NEUROC" "${FB[@]}" --labels "$TMP/y64bad.npy" >"$TMP/out" 2>"$TMP/err"
RC=$?
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then pass "exit status $RC"; else fail "exit status $RC (124: it hung)"; fi
# rank 1 refuses its labels as it loads them (naming the file and sample);
# rank 0 stops with it, pointing at that message
expect_in "$TMP/err" "labels $TMP/y64bad.npy: sample 3 has label 99"
expect_in "$TMP/err" "rank 1 of 2 failed"

cli_finish test_mpi
