#!/bin/bash
# `neuroc finetune` end to end on the shipped MLP converted with 64
# calibration samples and the 256 shipped Fashion-MNIST images: the tuned
# .nir that info reads, a checkpoint after every epoch, the loss falling from
# epoch 1 to 2, --resume running only the remaining epoch (and refusing other
# options or a checkpoint whose files do not match its JSON), a memory budget
# too small for one sample (exit 1 naming it), a missing --labels (exit 2);
# `convert --finetune-epochs 1` writing a tuned .nir; the VGG-BN example
# (spiking max pools) fine-tuned for an epoch.
# usage: bash test_finetune_cli.sh <neuroc-binary> <source-dir> <build-dir>
set -u

NEUROC=$1
SRC=$2
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
cli_lib_init nc_test_finetune_cli

MODEL=$SRC/examples/models/mlp.onnx
X=$SRC/examples/data/fmnist_test_x.npy
Y=$SRC/examples/data/fmnist_test_y.npy

loss_of() { # EPOCH-TEXT ("1/2"): the loss printed on that epoch's line of $TMP/out
    awk -v e="$1" '$1 == "epoch" && $2 == e { for (i = 3; i < NF; i++) if ($i == "loss") print $(i + 1) }' "$TMP/out"
}

check "convert the MLP"
run_cli 0 convert "$MODEL" --calib "$X" --calib-samples 64 -o "$TMP/m.nir"
expect_file "$TMP/m.nir"

check "fine-tune 2 epochs at T = 4"
run_cli 0 finetune "$TMP/m.nir" --train "$X" --labels "$Y" -T 4 --epochs 2 --batch 32 -o "$TMP/t.nir"
expect_file "$TMP/t.nir"
expect_file "$TMP/t.nir.ckpt.nir"
expect_file "$TMP/t.nir.ckpt.json"
expect_in "$TMP/t.nir.ckpt.json" '"epoch": 2'
expect_in "$TMP/out" "epoch 1/2"
expect_in "$TMP/out" "samples/s"
L1=$(loss_of 1/2)
L2=$(loss_of 2/2)
if [ -n "$L1" ] && [ -n "$L2" ] && awk -v a="$L1" -v b="$L2" 'BEGIN { exit !(b < a) }'; then
    pass "loss falls: epoch 1 $L1, epoch 2 $L2"
else
    fail "loss does not fall: epoch 1 '$L1', epoch 2 '$L2'"
fi

check "info reads the tuned network"
run_cli 0 info "$TMP/t.nir"
expect_in "$TMP/out" "spiking network"

check "--resume runs the remaining epoch only"
run_cli 0 finetune "$TMP/m.nir" --train "$X" --labels "$Y" -T 4 --epochs 3 --batch 32 -o "$TMP/t.nir" --resume
expect_in "$TMP/out" "epoch 3/3"
expect_not_in "$TMP/out" "epoch 1/3"
expect_not_in "$TMP/out" "epoch 2/3"
expect_in "$TMP/t.nir.ckpt.json" '"epoch": 3'
expect_in "$TMP/err" "after epoch 2"

expect_file "$TMP/t.nir.ckpt.optim.npy"
expect_in "$TMP/t.nir.ckpt.json" '"optimizer_steps": 24'

check "--resume refuses other options and a checkpoint whose files changed"
run_cli 1 finetune "$TMP/m.nir" --train "$X" --labels "$Y" -T 4 --epochs 4 --batch 32 --lr 1e-3 -o "$TMP/t.nir" --resume
expect_in "$TMP/err" "other options"
cp "$TMP/m.nir" "$TMP/t.nir.ckpt.nir"
run_cli 1 finetune "$TMP/m.nir" --train "$X" --labels "$Y" -T 4 --epochs 4 --batch 32 -o "$TMP/t.nir" --resume
expect_in "$TMP/err" "does not match"
expect_in "$TMP/err" "t.nir.ckpt.nir"

check "--resume with every epoch done fails"
run_cli 1 finetune "$TMP/m.nir" --train "$X" --labels "$Y" --epochs 3 -o "$TMP/t.nir" --resume

check "--max-memory 1K: one sample does not fit"
run_cli 1 finetune "$TMP/m.nir" --train "$X" --labels "$Y" --max-memory 1K -o "$TMP/u.nir"
expect_in "$TMP/err" "1024 bytes"
if [ -e "$TMP/u.nir" ]; then fail "u.nir written after a failure"; else pass "no u.nir"; fi

check "usage errors"
run_cli 2 finetune "$TMP/m.nir" --train "$X" -o "$TMP/u.nir"
expect_in "$TMP/err" "--labels"
run_cli 2 finetune "$TMP/m.nir" --train "$X" --labels "$Y" -o "$TMP/u.nir" --surrogate nope
run_cli 2 finetune "$TMP/m.nir" --train "$X" --labels "$Y" -o "$TMP/u.nir" --max-memory lots

check "convert --finetune-epochs 1 (on the calibration samples)"
run_cli 0 convert "$MODEL" --calib "$X" --labels "$Y" --calib-samples 64 -T 4 --finetune-epochs 1 -o "$TMP/cf.nir"
expect_file "$TMP/cf.nir"
expect_in "$TMP/out" "fine-tune epoch 1/1"
run_cli 0 info "$TMP/cf.nir"
run_cli 2 convert "$MODEL" --calib "$X" --finetune-epochs 1 -o "$TMP/u.nir"
expect_in "$TMP/err" "--labels"

check "--nir-strict: a plain-spiking MLP is all NIR, written as such; the default signed one is refused by name"
run_cli 0 convert "$MODEL" --calib "$X" --calib-samples 64 --plain-spikes -o "$TMP/mp.nir"
run_cli 0 finetune "$TMP/mp.nir" --train "$X" --labels "$Y" -T 2 --epochs 1 --batch 32 -o "$TMP/ts.nir" --nir-strict
expect_file "$TMP/ts.nir"
run_cli 1 finetune "$TMP/m.nir" --train "$X" --labels "$Y" -T 2 --epochs 1 --batch 32 -o "$TMP/tss.nir" --nir-strict
expect_in "$TMP/err" "signed IF neurons"
expect_no_file "$TMP/tss.nir"

check "the VGG-BN example, whose max pools are spiking (SpikeMaxPool2d), fine-tunes with BPTT"
run_cli 0 convert "$SRC/examples/models/vgg.onnx" --calib "$X" --calib-samples 64 --burst 1 --threshold mse -T 4 \
    -o "$TMP/vgg.nir"
run_cli 0 finetune "$TMP/vgg.nir" --train "$X" --labels "$Y" -T 4 --epochs 1 -o "$TMP/vggt.nir"
expect_in "$TMP/out" "epoch 1/1"
expect_file "$TMP/vggt.nir"

cli_finish test_finetune_cli
