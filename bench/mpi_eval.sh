#!/bin/bash
# Data-parallel evaluation under MPI: images/s of `neuroc eval` with 1 and 2
# ranks on this machine, and whether the two reports are identical.
#
#   neuroc convert examples/models/cnn.onnx --calib <first 1000 train images> -o WORK/cnn.nir
#   neuroc eval WORK/cnn.nir --data <test images> --labels <test labels> --limit N -T T --backend B --report WORK/r1.json
#   mpirun -np 2 neuroc eval ... --report WORK/r2.json
#
# Each rank runs one thread (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1) so
# the ratio is that of ranks, not of threads. Wall time of the whole command
# (loading and MPI start-up included), best of --repeat runs.
#
# usage: bench/mpi_eval.sh [--limit 2000] [-T 32] [--backend cpu-fast] [--repeat 1]
#                          [--workdir DIR] [--neuroc PATH]
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
FM=/usr/share/datasets/fashion-mnist
LIMIT=2000
T=32
BACKEND=cpu-fast
REPEAT=1
WORK=""
NEUROC=${NEUROC:-}
while [ $# -gt 0 ]; do
    case $1 in
    --limit) LIMIT=$2; shift 2 ;;
    -T) T=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --workdir) WORK=$2; shift 2 ;;
    --neuroc) NEUROC=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$NEUROC" ] || NEUROC=$HERE/build/neuroc
[ -x "$NEUROC" ] || { echo "no neuroc at $NEUROC (build first or pass --neuroc)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpirun not found (scripts/setup.sh installs Open MPI)" >&2; exit 2; }
"$NEUROC" --version | grep -q '^features:.* mpi' || { echo "$NEUROC was built without MPI" >&2; exit 2; }
if [ -z "$WORK" ]; then
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
CORES=$(nproc) # before OMP_NUM_THREADS, which nproc obeys
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$NEUROC" convert "$HERE/examples/models/cnn.onnx" --calib "$FM/train-images-idx3-ubyte.gz" \
    --calib-samples 1000 -o "$WORK/cnn.nir" >/dev/null
EVAL=(eval "$WORK/cnn.nir" --data "$FM/t10k-images-idx3-ubyte.gz" --labels "$FM/t10k-labels-idx1-ubyte.gz"
      --limit "$LIMIT" -T "$T" --backend "$BACKEND")

best() { # NAME CMD...: the best wall time of REPEAT runs, in seconds
    local b="" t0 t1 s
    for _ in $(seq "$REPEAT"); do
        t0=$(date +%s.%N)
        "${@:2}" >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log" >&2; exit 1; }
        t1=$(date +%s.%N)
        s=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$s < $b" | bc -l)" = 1 ]; then b=$s; fi
    done
    echo "$b"
}
t1=$(best one "$NEUROC" "${EVAL[@]}" --report "$WORK/r1.json")
t2=$(best two mpirun --oversubscribe -np 2 "$NEUROC" "${EVAL[@]}" --report "$WORK/r2.json")
t0=$(best launch mpirun --oversubscribe -np 2 "$NEUROC" --version)
same=no
cmp -s "$WORK/r1.json" "$WORK/r2.json" && same=yes

echo "neuroc eval, data parallel over MPI ($(date -u +%Y-%m-%dT%H:%MZ), $CORES cores, load $(cut -d' ' -f1 /proc/loadavg), $(uname -m))"
echo "  cnn.nir, $LIMIT test images, T = $T, backend $BACKEND, one thread a rank"
printf "  1 process: %7.2f s  %8.1f images/s\n" "$t1" "$(echo "$LIMIT / $t1" | bc -l)"
printf "  2 ranks:   %7.2f s  %8.1f images/s  (x%.2f)\n" "$t2" "$(echo "$LIMIT / $t2" | bc -l)" \
    "$(echo "$t1 / $t2" | bc -l)"
printf "  (mpirun -np 2 neuroc --version alone: %.2f s of start-up)\n" "$t0"
echo "  reports identical: $same"
[ "$same" = yes ]
