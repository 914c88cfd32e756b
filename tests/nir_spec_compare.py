"""Compares neuroc's per-step outputs with the numpy reference of the NIR
spec (tests/nir_spec_cases.py). usage: nir_spec_compare.py DIR BACKEND
Reads DIR/<case>.<backend>.npy (written by test_nir_spec.sh) and
DIR/<case>.y.npy; prints one line per case; exit 1 on any mismatch."""
import sys

import numpy as np

d, backend = sys.argv[1], sys.argv[2]
bad = 0
for line in open(f"{d}/cases.txt"):
    case = line.split()[0]
    try:
        got = np.load(f"{d}/{case}.{backend}.npy")
    except FileNotFoundError:
        continue  # refused by this backend (the script checked the reason)
    want = np.load(f"{d}/{case}.y.npy")
    if got.shape != want.shape:
        print(f"FAIL {case} ({backend}): shape {got.shape}, reference {want.shape}")
        bad += 1
        continue
    err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
    steps = int(np.sum(np.all(err.reshape(err.shape[0], -1) <= 1e-5, axis=1)))
    ok = steps == want.shape[0]
    print(f"{'ok  ' if ok else 'FAIL'} {case} ({backend}): {steps}/{want.shape[0]} steps agree (max err {err.max():.2e})")
    bad += not ok
sys.exit(1 if bad else 0)
