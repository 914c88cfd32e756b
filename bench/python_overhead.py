#!/usr/bin/env python3
"""The Python layer's overhead on SNN.run: 10,000 Fashion-MNIST test images
through neuroc.SNN.run (cpu-fast, T = 8, batch 256) against the same C
calls timed in C.

Two references:
  in-process  the time spent inside nc_session_run during SNN.run itself
              (each ctypes call timed), so the difference is exactly what
              the Python layer adds: slicing, wrapping arrays (no copies),
              seeding, collecting outputs.
  neuroc bench  `neuroc bench` of the same .nir on the same images, batch
              and T (C timing, runs a batch repeatedly), CPU seconds per image.
Rounds alternate the two so that a busy machine weighs on both alike; the
best round of each is kept.

usage: python bench/python_overhead.py [--neuroc build/neuroc] [--rounds 5]
       (with the package installed, or PYTHONPATH=python NEUROC_LIBRARY=build/libneuroc.so)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import neuroc
from neuroc import _lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FMNIST = "/usr/share/datasets/fashion-mnist"


def images():
    """10,000 test images (float32, (N, 1, 28, 28)) and 1000 calibration images."""
    test = os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz")
    train = os.path.join(FMNIST, "train-images-idx3-ubyte.gz")
    if os.path.exists(test) and os.path.exists(train):
        return neuroc.features(neuroc.load_data(test), (1, 28, 28)), neuroc.load_data(train)[:1000]
    x = np.load(os.path.join(ROOT, "examples", "data", "fmnist_test_x.npy"))
    print("Fashion-MNIST not installed: the 256 shipped test images, repeated", file=sys.stderr)
    return np.resize(x, (10000,) + x.shape[1:]), x


def timed_c_calls():
    """Wraps nc_session_run (looked up by SNN.run at each call) to sum its time."""
    real = _lib.nc_session_run
    spent = [0.0]

    def wrapper(*args):
        t0 = time.perf_counter()
        try:
            return real(*args)
        finally:
            spent[0] += time.perf_counter() - t0
    _lib.nc_session_run = wrapper
    return spent, lambda: setattr(_lib, "nc_session_run", real)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--neuroc", default=os.path.join(ROOT, "build", "neuroc"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-T", type=int, default=8)
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()

    x, calib = images()
    snn = neuroc.convert(os.path.join(ROOT, "examples", "models", "cnn.onnx"), calib=calib, progress=False)
    tmp = tempfile.mkdtemp()
    net, data, rep = (os.path.join(tmp, n) for n in ("cnn.nir", "x.npy", "bench.json"))
    snn.save(net)
    np.save(data, x)
    snn.run(x[:a.batch], timesteps=a.T, batch=a.batch)  # warm-up: the backend's plan, page faults

    best = {"py": 1e9, "py_cpu": 1e9, "inproc": 1e9, "overhead": 1e9, "bench_cpu": 1e9, "bench_wall": 1e9}
    for r in range(a.rounds):
        spent, restore = timed_c_calls()
        c0, t0 = time.process_time(), time.perf_counter()
        out = snn.run(x, timesteps=a.T, backend="cpu-fast", batch=a.batch)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        restore()
        assert out.shape == (len(x), 10)
        best["py"], best["py_cpu"] = min(best["py"], wall), min(best["py_cpu"], cpu)
        best["inproc"] = min(best["inproc"], spent[0])
        best["overhead"] = min(best["overhead"], (wall - spent[0]) / spent[0])
        subprocess.run([a.neuroc, "bench", net, "--backend", "cpu-fast", "-T", str(a.T), "--batch", str(a.batch),
                        "--data", data, "--min-time", str(max(1.0, wall)), "--json", rep], check=True,
                       capture_output=True)
        cfg = json.load(open(rep))["configs"][0]
        best["bench_cpu"] = min(best["bench_cpu"], cfg["cpu_s_per_image"] * len(x))
        best["bench_wall"] = min(best["bench_wall"], len(x) / cfg["images_per_s"])
        print(f"round {r + 1}: SNN.run {wall:.3f} s wall, {cpu:.3f} s CPU (in nc_session_run {spent[0]:.3f} s); "
              f"neuroc bench {len(x) / cfg['images_per_s']:.3f} s wall, {cfg['cpu_s_per_image'] * len(x):.3f} s CPU",
              flush=True)

    n = len(x)
    print(f"\n{n} images, cnn, cpu-fast, T = {a.T}, batch {a.batch}, best of {a.rounds} rounds, "
          f"neuroc {neuroc.__version__}, {os.cpu_count()} CPUs")
    print(f"  SNN.run (Python):               {best['py']:.3f} s wall, {best['py_cpu']:.3f} s CPU")
    print(f"  inside nc_session_run:          {best['inproc']:.3f} s wall")
    print(f"  neuroc bench (C):               {best['bench_wall']:.3f} s wall, {best['bench_cpu']:.3f} s CPU")
    print(f"  Python overhead, in process:    {100 * best['overhead']:.3f} % of the C time")
    print(f"  SNN.run / neuroc bench:         {best['py'] / best['bench_wall']:.3f} wall, "
          f"{best['py_cpu'] / best['bench_cpu']:.3f} CPU")


if __name__ == "__main__":
    main()
