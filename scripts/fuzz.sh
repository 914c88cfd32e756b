#!/usr/bin/env bash
# Builds neuroc's libFuzzer targets (clang, -DNEUROC_FUZZ=ON: ASan + UBSan +
# coverage) in build-libfuzzer and fuzzes each reader for a given time.
#
#   bash scripts/fuzz.sh [-t SECONDS] [-j JOBS] [--no-merge] [--minimise] [--triage] [TARGET...]
#
# TARGETs: onnx nir npy idx json (default: all). Each runs for SECONDS (default
# 300; 0 only merges the inputs earlier runs found) on a working corpus in build-libfuzzer/fuzz/<target>/corpus seeded
# from fuzz/corpus/<target>; JOBS targets run at once (default 1), at
# nice 19. Crashes are written to build-libfuzzer/fuzz/<target>/crash-*;
# the log (with libFuzzer's final stats: runs, exec/s) to
# build-libfuzzer/fuzz/<target>/fuzz.log. Afterwards new inputs that add
# coverage are merged into fuzz/corpus/<target> (libFuzzer -merge=1) unless
# --no-merge. --minimise instead rewrites fuzz/corpus/<target> as the
# smallest subset with the same coverage and exits.
# --triage replays every crash/leak/oom/timeout input kept so far with the
# current build and says, per input, whether it still fails and whether the
# failure is inside HDF5 (its top frames in libhdf5) or in neuroc.
# A crash input becomes a regression test by copying it into
# fuzz/regressions/<target>/ (ctest's fuzz_replay_<target> runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=300 jobs=1 merge=1 minimise=0 triage=0 targets=()
while [ $# -gt 0 ]; do
    case "$1" in
    -t) secs=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --no-merge) merge=0; shift ;;
    --minimise|--minimize) minimise=1; shift ;;
    --triage) triage=1; shift ;;
    onnx|nir|npy|idx|json) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(onnx nir npy idx json)
B=build-libfuzzer
command -v clang >/dev/null || { echo "fuzz.sh: clang is needed (apt-get install clang)" >&2; exit 1; }
cmake -S . -B $B -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEUROC_FUZZ=ON \
    -DNEUROC_TESTS=OFF -DNEUROC_CUDA=OFF -DNEUROC_OPENMP=OFF >/dev/null
nice -n 10 cmake --build $B -j2 --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null

# Largest input worth mutating: the biggest seed of each kind, not more.
max_len() { case "$1" in onnx|nir) echo 131072 ;; *) echo 8192 ;; esac; }
# Fuzzing feeds a thousand broken files a second: leaks are checked, HDF5's
# own error stack is quiet already (neuroc turns its printing off).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ $triage = 1 ]; then
    for t in "${targets[@]}"; do
        for f in $B/fuzz/$t/crash-* $B/fuzz/$t/leak-* $B/fuzz/$t/oom-* $B/fuzz/$t/timeout-*; do
            [ -e "$f" ] || continue
            out=$(timeout 120 $B/fuzz_$t -rss_limit_mb=2048 -timeout=10 "$f" 2>&1) && {
                echo "$t $(basename "$f"): fixed"; continue; }
            kind=$(echo "$out" | grep -m1 -oE "ERROR: [A-Za-z]+: [a-z-]+|SEGV|timeout|out-of-memory" || echo failed)
            # The first stack frame that is not the sanitizer's, libFuzzer's or libc's.
            top=$(echo "$out" | grep -E "^ +#[0-9]+ " |
                grep -vE "sanitizer|fuzzer::|asan|interceptor|malloc|calloc|realloc|libc\.so|H5FL_|H5MM_" | head -1)
            where=neuroc
            case "$top" in *libhdf5*) where=HDF5 ;; esac
            echo "$t $(basename "$f"): $kind in $where: $(echo "$top" | sed 's/^ *#[0-9]* 0x[0-9a-f]* in //; s/ (.*//')"
        done
    done
    exit 0
fi

if [ $minimise = 1 ]; then
    for t in "${targets[@]}"; do
        tmp=$(mktemp -d)
        $B/fuzz_$t -merge=1 -max_len=$(max_len $t) "$tmp" fuzz/corpus/$t 2>/dev/null
        rm -f fuzz/corpus/$t/*
        cp "$tmp"/* fuzz/corpus/$t/
        rm -rf "$tmp"
        echo "$t: $(ls fuzz/corpus/$t | wc -l) inputs, $(du -sh --apparent-size fuzz/corpus/$t | cut -f1)"
    done
    exit 0
fi

# Runs target $1 until its time is up. A crash ends a libFuzzer run (the
# input is kept as $w/crash-*); the loop starts it again for the time left.
# NIR goes through HDF5, which itself crashes and hangs on some corrupt
# files (docs/hostile-input.md): that target runs in libFuzzer's fork mode,
# which records such inputs and carries on. Runs, executions and exec/s
# are summed from the log: libFuzzer's final stats (stat::*) in plain
# mode, the last "#N: ... exec/s E ... time: Ts" line in fork mode.
run_one() {
    local t=$1 w=$B/fuzz/$1 end=$(( $(date +%s) + secs )) left mode=()
    [ $t = nir ] && mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    mkdir -p $w/corpus
    cp -n fuzz/corpus/$t/* $w/corpus/ 2>/dev/null || true
    # A private copy, so that rebuilding while fuzzing does not pull the
    # binary from under a running fuzzer.
    cp $B/fuzz_$t $w/fuzz_$t
    : >$w/fuzz.log
    while left=$(( end - $(date +%s) )); [ $left -gt 5 ]; do
        (cd $w && nice -n 19 ./fuzz_$t "${mode[@]}" -max_total_time=$left -max_len=$(max_len $t) \
            -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 corpus ../../../fuzz/regressions/$t \
            >>fuzz.log 2>&1) || echo "fuzz.sh: $t: a run stopped early (crash?): see $w/fuzz.log" >&2
    done
    awk -v t=$t -v wall=$secs '
        /^stat::number_of_executed_units/ {runs += $2; n++}
        /^#[0-9]+: cov:/ {fr = substr($1, 2) + 0}
        /^INFO: exiting: .* time: / {fruns += fr; fr = 0; n++}
        END {runs += fruns + fr
             printf "%s: %d libFuzzer run(s) in %d s, %d executions, %.0f exec/s\n", t, n, wall, runs, runs / wall}' $w/fuzz.log
}

running=0
for t in "${targets[@]}"; do
    [ "$secs" -gt 0 ] || break # -t 0: only merge what earlier runs found
    run_one $t &
    running=$((running + 1))
    if [ $running -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

crashes=$(ls $B/fuzz/*/crash-* $B/fuzz/*/leak-* $B/fuzz/*/oom-* $B/fuzz/*/timeout-* 2>/dev/null || true)
# New inputs that add coverage go into fuzz/corpus/<target>, smallest
# first, while the folder stays within its budget (the committed corpora
# together stay under 2 MB; NIR files are tens of KB each).
budget_kb() { case "$1" in onnx) echo 700 ;; nir) echo 600 ;; *) echo 100 ;; esac; }
if [ $merge = 1 ]; then
    for t in "${targets[@]}"; do
        before=$(ls fuzz/corpus/$t | wc -l)
        ls fuzz/corpus/$t | sort >"$B/fuzz/$t.seeds"
        $B/fuzz_$t -merge=1 -max_len=$(max_len $t) fuzz/corpus/$t $B/fuzz/$t/corpus >/dev/null 2>&1 || true
        # the added inputs, largest first, leave again while over budget
        for f in $(ls -S fuzz/corpus/$t | sort | comm -23 - "$B/fuzz/$t.seeds" |
                   xargs -r -I{} stat -c '%s {}' fuzz/corpus/$t/{} | sort -rn | cut -d' ' -f2); do
            [ "$(du -sk --apparent-size fuzz/corpus/$t | cut -f1)" -le "$(budget_kb $t)" ] && break
            rm -f "fuzz/corpus/$t/$f"
        done
        echo "$t: corpus $before -> $(ls fuzz/corpus/$t | wc -l) inputs, $(du -sh --apparent-size fuzz/corpus/$t | cut -f1)"
    done
fi
if [ -n "$crashes" ]; then
    echo "fuzz.sh: inputs that crashed (copy each into fuzz/regressions/<target>/ once fixed):" >&2
    echo "$crashes" >&2
    exit 1
fi
