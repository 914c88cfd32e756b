#!/usr/bin/env bash
# Runs convert / run / eval on the example models under `ulimit -v` caps,
# REPS times each, every run under a timeout, and counts the runs that
# exited (success or a clean error: exit 0 or 1) against those that hung
# (timeout) or crashed. OpenBLAS used to retry its buffer allocation
# forever under such caps (issue 33: 3 of 3 convert runs hung at 200 MB).
#   bash tests/memory_cap_runs.sh NEUROC SRC REPS [CAP_KB...]
# Prints one line per command and cap, then "exited E of N"; exit status 1
# if any run did not exit cleanly.
NEUROC=$1 SRC=$2 REPS=${3:-50}
shift 3
CAPS=("${@:-102400 204800 307200}")
[ $# -gt 0 ] || CAPS=(102400 204800 307200)
E=$SRC/examples
TMP=$(mktemp -d "${TMPDIR:-/tmp}/memory_cap.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$NEUROC" convert "$E/models/cnn.onnx" --calib "$E/data/fmnist_test_x.npy" -o "$TMP/cnn.nir" >/dev/null 2>&1 ||
    { echo "memory_cap_runs: cannot convert cnn.onnx without a cap" >&2; exit 1; }
CMDS=(
    "convert $E/models/resnet.onnx --calib $E/data/fmnist_test_x.npy -o $TMP/r.nir"
    "convert $E/models/vgg.onnx --calib $E/data/fmnist_test_x.npy -o $TMP/v.nir"
    "run $E/models/cnn.onnx --input $E/data/fmnist_test_x.npy"
    "run $TMP/cnn.nir --input $E/data/fmnist_test_x.npy -T 8"
    "eval $TMP/cnn.nir --data $E/data/fmnist_test_x.npy --labels $E/data/fmnist_test_y.npy -T 8"
)
total=0 exited=0
for cap in "${CAPS[@]}"; do
    for cmd in "${CMDS[@]}"; do
        ok=0 codes=""
        for ((i = 0; i < REPS; i++)); do
            (ulimit -v "$cap"; exec timeout -k 5 120 "$NEUROC" $cmd) >/dev/null 2>"$TMP/err"
            rc=$?
            total=$((total + 1))
            if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then ok=$((ok + 1)); exited=$((exited + 1)); else
                codes="$codes $rc"; fi
        done
        echo "ulimit -v $cap: neuroc ${cmd%% *} $(basename "$(echo "$cmd" | cut -d' ' -f2)"): $ok of $REPS exited${codes:+ (others:$codes)}; last: $(tail -1 "$TMP/err" | cut -c1-100)"
    done
done
echo "exited $exited of $total"
[ "$exited" -eq "$total" ]
