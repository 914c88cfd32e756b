#!/usr/bin/env bash
# usage: bench/cli_outputs_compare.sh NEUROC OUTDIR [BASELINE]
# Runs neuroc info/run/convert/eval/export on the example models and the NIR
# samples into OUTDIR; with BASELINE, diffs every output against it
# (.nir files compared via h5dump, which excludes nothing: byte-level cmp too).
# A refactor's safety net: run it with the binary of the commit before and
# after (OUTDIR of the first as BASELINE of the second); issue 27 used it.
set -u
nc=$1; out=$2; base=${3:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
ex=$repo/examples; X=$ex/data/fmnist_test_x.npy; Y=$ex/data/fmnist_test_y.npy
mkdir -p "$out"; cd "$out" || exit 1
rm -f ./*
run() { # NAME cmd...
    local name=$1; shift
    "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc"
}
for m in mlp cnn cnn_qcfs resnet squeezenet vgg; do
    run info_$m "$nc" info $ex/models/$m.onnx
    run run_$m "$nc" run $ex/models/$m.onnx --input $X --output run_$m.npy
    run convert_$m "$nc" convert $ex/models/$m.onnx --calib $X --calib-samples 64 -o $m.nir --report conv_$m.json
    run info_${m}_nir "$nc" info $m.nir
    run snnrun_$m "$nc" run $m.nir --input $X -T 8 --output snnrun_$m.npy --batch 32
    run snnrunfast_$m "$nc" run $m.nir --input $X -T 8 --output snnrunfast_$m.npy --backend cpu-fast --batch 32
    run eval_$m "$nc" eval $m.nir --data $X --labels $Y -T 16 --limit 64 --ann $ex/models/$m.onnx --report eval_$m.json
    run export_$m "$nc" export $m.nir -o exp_$m.nir --portable
    run exportsp_$m "$nc" export $m.nir -o expsp_$m.nir --portable --v0 spread -T 8
    run exportre_$m "$nc" export $m.nir -o expre_$m.nir
    run info_exp_$m "$nc" info exp_$m.nir
    run convert_${m}_plain "$nc" convert $ex/models/$m.onnx --calib $X --calib-samples 64 --plain-spikes --maxpool average -o ${m}_plain.nir
    run exportpl_$m "$nc" export ${m}_plain.nir -o exppl_$m.nir --portable
    run exportplsp_$m "$nc" export ${m}_plain.nir -o expplsp_$m.nir --portable --v0 spread -T 8
    run snnrun_exppl_$m "$nc" run exppl_$m.nir --input $X -T 8 --output snnrun_exppl_$m.npy --batch 32
done
run convert_mlp_signed "$nc" convert $ex/models/mlp.onnx --calib $X --calib-samples 64 --signed-spikes --burst 4 -o mlp_signed.nir
run eval_mlp_signed "$nc" eval mlp_signed.nir --data $X --labels $Y -T 8 --limit 64 --backend cpu-fast
run convert_cnn_maxspk "$nc" convert $ex/models/cnn.onnx --calib $X --calib-samples 64 --maxpool spikes -o cnn_maxspk.nir
run eval_cnn_maxspk "$nc" eval cnn_maxspk.nir --data $X --labels $Y -T 8 --limit 64
for f in "$repo"/../shared/nir-samples/*.nir; do
    b=$(basename $f .nir)
    run info_$b "$nc" info $f
    run export_$b "$nc" export $f -o exp_$b.nir
    run info_exp_$b "$nc" info exp_$b.nir
done
# h5 dumps of every .nir (the structural content)
# .nir bytes are compared directly (cmp below)
if [ -n "$base" ]; then
    st=0
    for f in $(cd "$base" && ls); do
        if ! cmp -s "$base/$f" "$out/$f"; then echo "DIFF: $f"; st=1; fi
    done
    for f in $(ls); do [ -e "$base/$f" ] || { echo "NEW: $f"; st=1; }; done
    [ $st = 0 ] && echo "identical: $(ls | wc -l) files"
    exit $st
fi
