#!/bin/bash
# `neuroc convert` and `neuroc eval` end to end on the shipped MLP and a few
# Fashion-MNIST images: a .nir that info reads, accuracy lines at t = 1..T,
# a JSON report and an SVG chart that parse, the .onnx evaluated directly,
# usage errors (exit 2) and file errors (exit 1). Small N and T: fast.
# usage: bash test_convert_cli.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
cli_lib_init nc_test_convert_cli

MODEL=$SRC/examples/models/mlp.onnx
X=$SRC/examples/data/fmnist_test_x.npy
Y=$SRC/examples/data/fmnist_test_y.npy
PY=/usr/bin/python3
[ -x "$PY" ] || PY=

py_check() { # DESCRIPTION PYTHON-CODE (argv[1..] follow)
    local what=$1 code=$2
    shift 2
    if [ -z "$PY" ]; then echo "  skip: $what (no /usr/bin/python3)"; return; fi
    if "$PY" -c "$code" "$@" >"$TMP/py" 2>&1; then pass "$what"; else
        fail "$what"; sed 's/^/    | /' "$TMP/py" | head -8; fi
}

if [ ! -f "$MODEL" ] || [ ! -f "$X" ] || [ ! -f "$Y" ]; then
    echo "SKIP: the example model or data is missing"
    exit 77
fi

# ---------------------------------------------------------------- usage errors: exit 2
check "convert with a bad threshold spec is a usage error"
run_cli 2 convert "$MODEL" --calib "$X" --threshold p99x -o "$TMP/bad.nir"
expect_in "$TMP/err" "--threshold"
expect_no_file "$TMP/bad.nir"
run_cli 2 convert "$MODEL" --calib "$X" --threshold p0 -o "$TMP/bad.nir"
run_cli 2 convert "$MODEL" --calib "$X" --threshold median -o "$TMP/bad.nir"

check "convert with bad option values, or what needs --calib without it, is a usage error"
run_cli 2 convert "$MODEL" -o "$TMP/bad.nir" --bias-correction
expect_in "$TMP/err" "--calib"
run_cli 2 convert "$MODEL" -o "$TMP/bad.nir" --labels "$Y"
expect_no_file "$TMP/bad.nir"
run_cli 2 convert "$MODEL" --calib "$X" -o "$TMP/bad.nir" --reset sometimes
run_cli 2 convert "$MODEL" --calib "$X" -o "$TMP/bad.nir" --levels 0
run_cli 2 convert "$MODEL" --calib "$X" -o "$TMP/bad.nir" --qcfs-epochs 2
expect_in "$TMP/err" "--labels"
run_cli 2 convert "$MODEL" --calib "$X" -o "$TMP/bad.nir" --mean 0.5,x
run_cli 2 convert "$MODEL" --calib "$X" -o "$TMP/bad.nir" --potential-correction --correction-rounds 0
expect_in "$TMP/err" "--correction-rounds"

check "convert without --calib: data-free from BatchNorm or assumed input statistics, or one error naming every layer"
run_cli 0 convert "$MODEL" -o "$TMP/free.nir" --report "$TMP/free.json"
expect_in "$TMP/out" "2 IF layers have no BatchNorm statistics before them"
expect_in "$TMP/out" "'/net/net.2/Relu', '/net/net.4/Relu'"
expect_in "$TMP/out" "calibrate with data (--calib"
expect_in "$TMP/free.json" '"source": "assumed-input"'
expect_file "$TMP/free.nir"
run_cli 1 convert "$SRC/tests/fixtures/shuffle/shuffle.onnx" -o "$TMP/bad.nir"
expect_one_error_line
expect_in "$TMP/err" "7 IF layers need calibration data (--calib)"
expect_no_file "$TMP/bad.nir"
mkdir -p "$TMP/cwd"
(cd "$TMP/cwd" && "$NEUROC" convert "$SRC/tests/fixtures/convert/bn.onnx" --report r.json >"$TMP/out" 2>"$TMP/err")
RC=$?
if [ "$RC" -eq 0 ]; then pass "data-free convert exit 0"; else fail "data-free convert exit $RC"; cat "$TMP/err"; fi
expect_in "$TMP/out" "wrote bn.nir (no -o given: the model's name, in the current directory)"
expect_not_in "$TMP/err" "writing"
expect_file "$TMP/cwd/bn.nir"
expect_in "$TMP/cwd/r.json" '"source": "bn-stats"'
expect_in "$TMP/cwd/r.json" '"data_free": true'
run_cli 0 info "$TMP/cwd/bn.nir"

check "convert without -o announces no file it has not written: missing, malformed, refused model, bad flag"
mkdir -p "$TMP/none"
echo "not a model" >"$TMP/none/junk.onnx"
for args in "missing.onnx" "junk.onnx" "$SRC/tests/fixtures/convert/sigmoid.onnx" "$SRC/tests/fixtures/convert/bn.onnx -T abc"; do
    # shellcheck disable=SC2086 # the flag is a separate word on purpose
    (cd "$TMP/none" && "$NEUROC" convert $args >"$TMP/out" 2>"$TMP/err")
    RC=$?
    if [ "$RC" -ne 0 ]; then pass "convert $args fails ($RC)"; else fail "convert $args exit 0"; fi
    expect_not_in "$TMP/err" "writing"
    expect_not_in "$TMP/out" "wrote"
    left=$(cd "$TMP/none" && ls -A | grep -v '^junk.onnx$')
    if [ -z "$left" ]; then pass "nothing written"; else fail "files left: $left"; fi
done
run_cli 0 convert --help
expect_in "$TMP/out" "[--calib DATA] [-o MODEL.nir]"

check "eval usage errors"
run_cli 2 eval "$MODEL" --data "$X"
run_cli 2 eval "$MODEL" --data "$X" --labels "$Y" --threshold max99
run_cli 2 eval "$MODEL" --data "$X" --labels "$Y" -T 0
run_cli 2 eval "$MODEL" --data "$X" --labels "$Y" --encoding morse
run_cli 0 eval --help
expect_in "$TMP/out" "usage: neuroc eval"
run_cli 0 convert --help
expect_in "$TMP/out" "usage: neuroc convert"

check "the data options work for run too (--no-scale, --mean/--std)"
run_cli 0 run "$MODEL" --input "$X" --labels "$Y" --mean 0 --std 1
expect_in "$TMP/out" "accuracy: "
run_cli 2 run "$MODEL" --input "$X" --mean 0.1,0.2 --std 0
run_cli 2 run "$MODEL" --input "$X" --mean 0.1,0.2
expect_in "$TMP/err" "channel(s)"

# ---------------------------------------------------------------- file errors: exit 1
check "a missing model or data file: one error line, exit 1"
run_cli 1 convert "$TMP/missing.onnx" --calib "$X" -o "$TMP/m.nir"
expect_one_error_line
expect_no_file "$TMP/m.nir"
run_cli 1 convert "$MODEL" --calib "$TMP/missing.npy" -o "$TMP/m.nir"
expect_one_error_line
run_cli 1 eval "$TMP/missing.nir" --data "$X" --labels "$Y"
expect_one_error_line
run_cli 1 eval "$MODEL" --data "$X" --labels "$TMP/missing.npy" -T 2
expect_one_error_line

# ---------------------------------------------------------------- convert → info → eval
check "convert the MLP on 64 calibration samples"
run_cli 0 convert "$MODEL" --calib "$X" --calib-samples 64 -o "$TMP/x.nir" --report "$TMP/r.json"
expect_file "$TMP/x.nir"
expect_file "$TMP/r.json"
expect_in "$TMP/out" "IF"
py_check "the conversion report is JSON" 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/r.json"

check "neuroc info reads the converted network"
run_cli 0 info "$TMP/x.nir"
expect_in "$TMP/out" "spiking network"
expect_in "$TMP/out" "IF"

check "eval the .nir: accuracy at t = 1, 2, 4, 8, a report and a chart"
run_cli 0 eval "$TMP/x.nir" --data "$X" --labels "$Y" --limit 64 -T 8 --plot "$TMP/a.svg" \
    --report "$TMP/e.json"
for t in 1 2 4 8; do expect_in "$TMP/out" "t = $t "; done
expect_in "$TMP/out" "SNN accuracy"
expect_in "$TMP/out" "spike rates"
expect_in "$TMP/out" "synaptic operations per inference"
expect_in "$TMP/out" "ISSCC 2014"
expect_file "$TMP/a.svg"
if [ "$(head -c 4 "$TMP/a.svg")" = "<svg" ]; then pass "a.svg starts with <svg"; else fail "a.svg does not start with <svg"; fi
py_check "a.svg is well-formed XML" 'import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])' "$TMP/a.svg"
py_check "e.json: 64 samples, T = 8, accuracy at every t" '
import json,sys
j = json.load(open(sys.argv[1]))
assert j["samples"] == 64 and j["timesteps"] == 8, (j["samples"], j["timesteps"])
acc = j["accuracy"]["snn"]
assert len(acc) == 8 and all(0 <= a <= 1 for a in acc), acc
assert j["accuracy"]["t"] == list(range(1, 9))
assert j["energy"]["evidence"] == "estimate" and "Horowitz" in j["energy"]["source"]
rates = [l["spike_rate"] for l in j["layers"] if "spike_rate" in l]
assert rates and all(0 <= r <= 1 for r in rates), rates
assert j["totals"]["synops_per_inference"] > 0
# the cost of stopping after t: one entry per t, growing, the last the totals
p, tot = j["per_t"], j["totals"]
for k in ("synaptic_adds", "synaptic_macs", "energy_j"):
    assert len(p[k]) == 8 and all(a <= b for a, b in zip(p[k], p[k][1:])), (k, p[k])
assert abs(p["synaptic_adds"][-1] - tot["synaptic_adds_per_inference"]) <= 1e-6 * tot["synops_per_inference"]
assert abs(p["synaptic_macs"][-1] - tot["synaptic_macs_per_inference"]) <= 1e-6 * tot["synops_per_inference"]
assert abs(p["energy_j"][-1] - j["energy"]["snn_joules_per_inference"]) <= 1e-6 * p["energy_j"][-1]
assert p["synaptic_macs"][0] > 0  # the first layer reads the analog image
assert j["energy"]["ann_j"] is None  # no ANN given
' "$TMP/e.json"
py_check "a.svg plots accuracy against energy" 'import sys; assert "Accuracy against energy" in open(sys.argv[1]).read()' "$TMP/a.svg"

check "eval with --ann compares with the ANN"
run_cli 0 eval "$TMP/x.nir" --data "$X" --labels "$Y" --limit 32 -T 4 --ann "$MODEL"
expect_in "$TMP/out" "ANN accuracy"
expect_in "$TMP/out" "points vs the ANN"
expect_in "$TMP/out" "ANN multiply-accumulates per inference: 234.75 K"
expect_in "$TMP/out" "x ANN) from "
expect_in "$TMP/out" "operating point: "

check "eval of the .onnx converts in memory and reports the ANN"
run_cli 0 eval "$MODEL" --data "$X" --labels "$Y" --limit 64 -T 8 --calib-samples 64
expect_in "$TMP/out" "converted"
expect_in "$TMP/out" "ANN accuracy"
for t in 1 2 4 8; do expect_in "$TMP/out" "t = $t "; done
expect_in "$TMP/err" "calibrating on the evaluation data"
run_cli 0 eval "$MODEL" --data "$X" --labels "$Y" --limit 32 -T 2 --calib "$X" --calib-samples 32
expect_not_in "$TMP/err" "calibrating on the evaluation data"

check "potential correction: per-neuron v0 in the .nir, stated in the report, also from eval"
run_cli 0 convert "$MODEL" --calib "$X" --calib-samples 64 -T 4 --potential-correction --correction-rounds 2 \
    -o "$TMP/pc.nir" --report "$TMP/pc.json"
py_check "pc.json: the options and a v0 shift per IF layer" '
import json,sys
j = json.load(open(sys.argv[1]))
o = j["options"]
assert o["potential_correction"] is True and o["correction_rounds"] == 2 and o["timesteps"] == 4, o
shifts = [l["potential_correction_mean_shift"] for l in j["layers"] if "potential_correction_mean_shift" in l]
assert len(shifts) == 2 and all(s > 0 for s in shifts), shifts
' "$TMP/pc.json"
run_cli 0 eval "$TMP/pc.nir" --data "$X" --labels "$Y" --limit 32 -T 4
expect_in "$TMP/out" "t = 4 "
run_cli 0 eval "$MODEL" --data "$X" --labels "$Y" --limit 32 -T 4 --calib-samples 64 --potential-correction
expect_in "$TMP/out" "t = 4 "

check "conversion options do not apply to a .nir"
run_cli 2 eval "$TMP/x.nir" --data "$X" --labels "$Y" --threshold max

check "a MaxPool model is saved as NIR (average pooling in the standard graph, a neuroc extension node in the exact one); --nir-strict refuses the approximation, naming the layer"
MP=$SRC/tests/fixtures/convert/maxpool.onnx
MPX=$SRC/tests/fixtures/convert/x.npy
run_cli 0 convert "$MP" --calib "$MPX" -o "$TMP/mp.nir"
expect_file "$TMP/mp.nir"
run_cli 0 info "$TMP/mp.nir"
expect_in "$TMP/out" "MaxPool2d"
run_cli 1 convert "$MP" --calib "$MPX" -o "$TMP/mp_strict.nir" --nir-strict
expect_in "$TMP/err" "'/pool/MaxPool'): max pooling is average pooling"
expect_no_file "$TMP/mp_strict.nir"
run_cli 0 convert "$MP" --calib "$MPX" -o "$TMP/mp_avg.nir" --maxpool average --nir-strict
expect_file "$TMP/mp_avg.nir"

check "signed spikes in bursts of 2 and max thresholds by default: SignedIF layers in the .nir, the same file as asking for them; --plain-spikes, --nir-strict, --portable and --reset zero give plain IF"
run_cli 0 convert "$MODEL" --calib "$X" -o "$TMP/default.nir" --report "$TMP/default.json"
expect_in "$TMP/out" "other NIR tools and Loihi 1 need --plain-spikes"
expect_in "$TMP/default.json" '"spikes": "signed"'
expect_in "$TMP/default.json" '"method": "max"'
expect_in "$TMP/default.json" '"burst": 2'
expect_in "$TMP/default.json" '"max_spikes": 2'
run_cli 0 convert "$MODEL" --calib "$X" --signed-spikes --threshold max --burst 2 -o "$TMP/signed.nir"
if cmp -s "$TMP/default.nir" "$TMP/signed.nir"; then pass "default.nir = --signed-spikes --threshold max --burst 2"
else fail "default.nir differs from --signed-spikes --threshold max --burst 2"; fi
run_cli 0 convert "$MODEL" --calib "$X" --burst 1 -o "$TMP/single.nir"
if cmp -s "$TMP/default.nir" "$TMP/single.nir"; then fail "--burst 1 gives the default file"
else pass "--burst 1 differs from the default"; fi
run_cli 0 info "$TMP/signed.nir"
expect_in "$TMP/out" "SignedIF"
for form in --plain-spikes --nir-strict --portable; do
    run_cli 0 convert "$MODEL" --calib "$X" $form -o "$TMP/plain.nir" --report "$TMP/plain.json"
    expect_in "$TMP/plain.json" '"spikes": "plain"'
    expect_not_in "$TMP/out" "need --plain-spikes"
    run_cli 0 info "$TMP/plain.nir"
    expect_not_in "$TMP/out" "SignedIF"
done
expect_in "$TMP/plain.json" '"method": "percentile"'
run_cli 2 convert "$MODEL" --calib "$X" --signed-spikes --plain-spikes -o "$TMP/both.nir"
expect_in "$TMP/err" "choose one"
run_cli 0 eval "$TMP/signed.nir" --data "$X" --labels "$Y" --limit 32 -T 8 --backend cpu-fast
expect_in "$TMP/out" "t = 8 "
run_cli 0 convert "$SRC/examples/models/resnet.onnx" --calib "$X" --plain-spikes -o "$TMP/resnet.nir"
expect_in "$TMP/out" "5 IF layers: a plain IF neuron keeps the spikes"
run_cli 0 convert "$SRC/examples/models/resnet.onnx" --calib "$X" -o "$TMP/resnet_signed.nir"
expect_not_in "$TMP/out" "a plain IF neuron keeps"
run_cli 0 finetune "$TMP/signed.nir" --train "$X" --labels "$Y" -T 2 --epochs 1 -o "$TMP/signed_ft.nir"
run_cli 0 info "$TMP/signed_ft.nir"
expect_in "$TMP/out" "SignedIF"
run_cli 1 convert "$MODEL" --calib "$X" --signed-spikes --nir-strict -o "$TMP/signed_strict.nir"
expect_in "$TMP/err" "signed IF neurons"
expect_no_file "$TMP/signed_strict.nir"
run_cli 0 convert "$MODEL" --calib "$X" --reset zero -o "$TMP/zero.nir" --report "$TMP/zero.json"
expect_in "$TMP/zero.json" '"reset": "zero"'
run_cli 1 convert "$MODEL" --calib "$X" --signed-spikes --reset zero -o "$TMP/signed_zero.nir"
expect_in "$TMP/err" "subtractive reset"
expect_no_file "$TMP/signed_zero.nir"

check "--burst 2: the report says it, cpu = cpu-fast, layers a spiking max pool reads send bursts too, BPTT trains it, Loihi 2 runs it (graded payloads), Loihi 1 and plain spikes refuse it"
ZB=$SRC/tests/fixtures/zoo
run_cli 0 convert "$ZB/spike_ceil.onnx" --calib "$ZB/x.npy" --burst 2 -o "$TMP/burst.nir" --report "$TMP/burst.json"
expect_in "$TMP/burst.json" '"burst": 2'
expect_not_in "$TMP/out" "send one spike a step"
expect_not_in "$TMP/burst.json" '"max_spikes": 1'
expect_in "$TMP/burst.json" '"max_spikes": 2'
run_cli 0 run "$TMP/burst.nir" --input "$ZB/x.npy" -T 8 --backend cpu -o "$TMP/b_cpu.npy"
run_cli 0 run "$TMP/burst.nir" --input "$ZB/x.npy" -T 8 --backend cpu-fast -o "$TMP/b_fast.npy"
if cmp -s "$TMP/b_cpu.npy" "$TMP/b_fast.npy"; then pass "burst: cpu = cpu-fast"; else fail "burst: cpu and cpu-fast differ"; fi
run_cli 0 convert "$MODEL" --calib "$X" --calib-samples 64 --burst 3 -o "$TMP/mburst.nir"
run_cli 0 finetune "$TMP/mburst.nir" --train "$X" --labels "$Y" -T 2 --epochs 1 -o "$TMP/burst_ft.nir"
expect_file "$TMP/burst_ft.nir"
run_cli 0 info "$TMP/burst_ft.nir"
expect_in "$TMP/out" "SignedIF"
run_cli 0 sim "$TMP/mburst.nir" --data "$X" --labels "$Y" -T 4 --limit 8 --report "$TMP/mburst_sim.json"
expect_in "$TMP/mburst_sim.json" '"max_spikes": 3'
run_cli 1 sim "$TMP/mburst.nir" --target loihi1 --mode subtract --data "$X" --labels "$Y" -T 4 --limit 8
expect_in "$TMP/err" "Loihi 1"
run_cli 2 convert "$MODEL" --calib "$X" --burst 2 --plain-spikes -o "$TMP/bp.nir"
run_cli 2 convert "$MODEL" --calib "$X" --burst 0 -o "$TMP/b0.nir"

# ---------------------------------------------------------------- torchvision-zoo layer patterns
check "Concat, a BN with nothing to fold into, ceil-mode and partial-window pools convert and run; partial-window pools save as NIR (not --nir-strict)"
ZOO=$SRC/tests/fixtures/zoo
for m in cat_bn pool_bn avg_ceil; do
    run_cli 0 eval "$ZOO/$m.onnx" --data "$ZOO/x.npy" --labels "$ZOO/labels.npy" -T 16 --backend cpu-fast
    expect_in "$TMP/out" "SNN accuracy"
done
# partial-window average pools: neuroc.Pool2d extension nodes (NIR's SumPool2d has one scale)
run_cli 0 convert "$ZOO/avg_ceil.onnx" --calib "$ZOO/x.npy" --maxpool average -o "$TMP/z.nir"
run_cli 0 eval "$TMP/z.nir" --data "$ZOO/x.npy" --labels "$ZOO/labels.npy" -T 16
expect_in "$TMP/out" "SNN accuracy"
rm -f "$TMP/z.nir"
run_cli 1 convert "$ZOO/avg_ceil.onnx" --calib "$ZOO/x.npy" --maxpool average --nir-strict -o "$TMP/z.nir"
expect_in "$TMP/err" "divisors"
expect_no_file "$TMP/z.nir"

# ---------------------------------------------------------------- the operating point (--target-loss)
check "convert --target-loss: usage errors name the option"
run_cli 2 convert "$MODEL" --calib "$X" --target-loss 0 -o "$TMP/op.nir"
expect_in "$TMP/err" "--target-loss"
run_cli 2 convert "$MODEL" --calib "$X" --target-max-T 8 -o "$TMP/op.nir"
expect_in "$TMP/err" "--target-loss"
run_cli 2 convert "$MODEL" --calib "$X" --target-loss 0.5 --holdout 10 -o "$TMP/op.nir"
run_cli 1 convert "$MODEL" --target-loss 0.5 -o "$TMP/op.nir"
expect_in "$TMP/err" "calibration data"
expect_no_file "$TMP/op.nir"

check "convert --target-loss chooses T; info shows it; eval and run use it without -T"
run_cli 0 convert "$MODEL" --calib "$X" --labels "$Y" --target-loss 1 --target-max-T 6 --holdout 128 \
    -o "$TMP/op.nir" --report "$TMP/op.json"
expect_in "$TMP/out" "operating point: T = "
opT=$(sed -n 's/^operating point: T = \([0-9]*\),.*/\1/p' "$TMP/out")
run_cli 0 info "$TMP/op.nir"
expect_in "$TMP/out" "operating T: $opT"
run_cli 0 eval "$TMP/op.nir" --data "$X" --labels "$Y" --ann "$MODEL"
expect_in "$TMP/out" "T = $opT (the network's operating T)"
run_cli 0 eval "$TMP/op.nir" --data "$X" --labels "$Y" -T 3
expect_in "$TMP/out" "T = 3, backend"
py_check "the report's operating point names T, loss, energy and the candidates" '
import json, sys
op = json.load(open(sys.argv[1]))["operating_point"]
assert op["timesteps"] == int(sys.argv[2]) and op["loss"] <= 1 and op["energy_ratio"] > 0, op
assert op["holdout_samples"] == 128 and len(op["candidates"]) == 9, op
' "$TMP/op.json" "$opT"

check "convert --validation: the search scores on those samples; usage errors name the option"
rm -f "$TMP/op.nir"
run_cli 2 convert "$MODEL" --calib "$X" --validation "$X" -o "$TMP/op.nir"
expect_in "$TMP/err" "--target-loss"
run_cli 2 convert "$MODEL" --calib "$X" --target-loss 1 --validation "$X" --holdout 128 -o "$TMP/op.nir"
expect_in "$TMP/err" "--holdout"
run_cli 2 convert "$MODEL" --calib "$X" --target-loss 1 --validation-labels "$Y" -o "$TMP/op.nir"
expect_in "$TMP/err" "--validation-labels without --validation"
run_cli 2 convert "$MODEL" --calib "$X" --target-loss 1 -j 0 -o "$TMP/op.nir"
expect_in "$TMP/err" "--threads"
run_cli 2 convert "$MODEL" --calib "$X" --labels "$Y" --target-loss 1 --finetune-T 4 -o "$TMP/op.nir"
expect_in "$TMP/err" "--finetune-epochs"
run_cli 1 convert "$MODEL" --calib "$X" --labels "$Y" --target-loss 1 --finetune-epochs 1 --finetune-T 64 \
    -o "$TMP/op.nir"
expect_in "$TMP/err" "largest T"
expect_no_file "$TMP/op.nir"
run_cli 0 convert "$MODEL" --calib "$X" --labels "$Y" --target-loss 1 --target-max-T 6 --burst 1 --threshold max \
    --per-channel --validation "$X" --validation-labels "$Y" -o "$TMP/op.nir" --report "$TMP/op.json"
expect_in "$TMP/out" "(labels, 256 validation samples)"
py_check "the report says the search scored on the validation samples, all of --calib calibrating" '
import json, sys
op = json.load(open(sys.argv[1]))["operating_point"]
assert op["scored_on"] == "validation samples" and op["holdout_samples"] == 256, op
assert op["calibration_samples"] == 256 and len(op["candidates"]) == 2, op
' "$TMP/op.json"

# ---------------------------------------------------------------- average pools folded (issue 29)
check "the shipped CNN's average pools fold into the layers reading them (a note each); --keep-avgpool keeps them"
CNN=$SRC/examples/models/cnn.onnx
run_cli 0 convert "$CNN" --calib "$X" --calib-samples 64 -o "$TMP/fold.nir"
expect_in "$TMP/out" "is folded into Conv '/features/features.4/Conv' (now a 6x6 convolution of stride 2, padding 2)"
expect_in "$TMP/out" "is folded into Gemm '/fc1/Gemm'"
expect_not_in "$TMP/out" "Pool2d"
run_cli 0 convert "$CNN" --calib "$X" --calib-samples 64 --keep-avgpool -o "$TMP/keep.nir"
expect_in "$TMP/out" "Pool2d"
expect_not_in "$TMP/out" "is folded into"
rm -f "$TMP/fold.nir" "$TMP/keep.nir"

cli_finish test_convert_cli
