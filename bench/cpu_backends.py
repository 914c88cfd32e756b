#!/usr/bin/python3
"""CPU inference speed of the example SNNs: neuroc's reference backend
(`cpu`), its fast backend (`cpu-fast`) and the same SNN stepped in PyTorch
(bench/torch_snn.py, Debian's torch), with the same weights, T, batch and
thread count, in one run. Prints a markdown table of images/s and the
ratios, the machine it ran on, and checks the acceptance targets of the
fast-backend issue on the example CNN at batch 64, T = 8:
cpu-fast >= 10x PyTorch stepping and >= 5x the reference backend.

  bench/cpu_backends.py [--models cnn,resnet,mlp] [-T 8] [--batch 1,64]
                        [--threads N] [--min-time S] [--rounds R]
                        [--workdir DIR] [--neuroc PATH] [--output table.md]

Each example ONNX model is converted once (`neuroc convert`, calibrated on
the first 1000 Fashion-MNIST training images when Debian's
dataset-fashion-mnist is installed, else on examples/data/fmnist_test_x.npy)
into --workdir. Inputs are the 256 test images of examples/data, repeated to
fill a batch. Before timing, the PyTorch stepping's summed readout is
compared with `neuroc run` on the same 64 images (max |difference|) to show
it is the same network. Each contender is then timed R times (default 3),
the rounds alternating between neuroc (both backends) and PyTorch, and the
best round of each counts, so that a burst of other load on the machine
hits one round rather than one contender. CPU time per image (user +
system, all threads) is reported too. Exit status 0 when the targets hold,
1 otherwise.

Every process runs with OMP_WAIT_POLICY=passive (--wait-policy): neuroc and
PyTorch both use OpenMP, whose default is to spin while waiting for work; on
a shared machine a spinning thread takes the core from the thread it waits
for, and PyTorch's many small parallel regions then collapse (tens of
images/s instead of hundreds), which would flatter neuroc. Passive waiting
measures the backends rather than the spinning.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FMNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
TORCH_PY = "/usr/bin/python3"


def find_neuroc(arg):
    for c in [arg, os.environ.get("NEUROC"), os.path.join(ROOT, "build", "neuroc"), shutil.which("neuroc")]:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    sys.exit("neuroc not found: pass --neuroc PATH or set NEUROC")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run(cmd, log):
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout)
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="cnn,resnet,mlp")
    ap.add_argument("-T", type=int, default=8)
    ap.add_argument("--batch", default="1,64")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds to time each configuration")
    ap.add_argument("--rounds", type=int, default=3,
                    help="times each contender is measured, alternating; the best round counts (default 3)")
    ap.add_argument("--workdir", help="keeps the converted .nir files, JSON and logs (default: a temporary dir)")
    ap.add_argument("--neuroc")
    ap.add_argument("--output", help="also write the markdown result here")
    ap.add_argument("--wait-policy", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY of every process (default passive; 'default' leaves it unset)")
    a = ap.parse_args()
    neuroc = find_neuroc(a.neuroc)
    work = a.workdir or tempfile.mkdtemp(prefix="neuroc-bench-")
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(work, "log.txt"), "a")
    data = os.path.join(ROOT, "examples", "data", "fmnist_test_x.npy")
    calib = FMNIST if os.path.exists(FMNIST) else data
    batches = [int(b) for b in a.batch.split(",")]
    if a.wait_policy == "default":
        os.environ.pop("OMP_WAIT_POLICY", None)
    else:
        os.environ["OMP_WAIT_POLICY"] = a.wait_policy.upper()

    x64 = os.path.join(work, "x64.npy")
    subprocess.run([TORCH_PY, "-c", f"import numpy as n; n.save({x64!r}, n.load({data!r})[:64])"], check=True)

    rows, checks = [], {}
    for model in a.models.split(","):
        onnx = os.path.join(ROOT, "examples", "models", model + ".onnx")
        nir = os.path.join(work, model + ".nir")
        if not os.path.exists(nir):
            sys.stderr.write(f"converting {model} ...\n")
            run([neuroc, "convert", onnx, "--calib", calib, "--calib-samples", "1000", "--plain-spikes", "-o", nir], log)
        # the same network? readout sums of neuroc and of the PyTorch stepping
        y = os.path.join(work, model + "_y64.npy")
        run([neuroc, "run", nir, "--input", x64, "-T", str(a.T), "-o", y], log)
        out = run([TORCH_PY, os.path.join(HERE, "torch_snn.py"), nir, "-T", str(a.T), "--batch", "64",
                   "--threads", str(a.threads), "--data", x64, "--check", y, "--iters", "1", "--json"], log)
        checks[model] = json.loads(out.strip().splitlines()[-1])["max_abs_diff"]
        best = {}  # (backend, batch) -> best images/s, least CPU s/image, and the rest of that run

        def keep(backend, b, ips, cpu, extra):
            k = (backend, b)
            if k not in best:
                best[k] = dict(extra, ips=ips, cpu=cpu)
            else:
                best[k]["ips"] = max(best[k]["ips"], ips)
                best[k]["cpu"] = min(best[k]["cpu"], cpu)

        kernels = ""
        for rnd in range(a.rounds):
            sys.stderr.write(f"benchmarking {model}, round {rnd + 1}/{a.rounds} ...\n")
            js = os.path.join(work, f"{model}_bench{rnd}.json")
            run([neuroc, "bench", nir, "--backend", "cpu,cpu-fast", "-T", str(a.T), "--batch", a.batch,
                 "--threads", str(a.threads), "--data", data, "--min-time", str(a.min_time), "--json", js], log)
            with open(js) as f:
                nb = json.load(f)
            kernels = nb.get("cpu_fast_kernels", "")
            for c in nb["configs"]:
                keep(c["backend"], c["batch"], c["images_per_s"], c["cpu_s_per_image"], c)
            for b in batches:
                out = run([TORCH_PY, os.path.join(HERE, "torch_snn.py"), nir, "-T", str(a.T), "--batch", str(b),
                           "--threads", str(a.threads), "--data", data, "--min-time", str(a.min_time), "--json"],
                          log)
                tj = json.loads(out.strip().splitlines()[-1])
                keep("torch", b, tj["images_per_s"], tj["cpu_s_per_image"], tj)
        for b in batches:
            f = best[("cpu-fast", b)]
            rows.append({"model": model, "batch": b, "ref": best[("cpu", b)]["ips"], "fast": f["ips"],
                         "torch": best[("torch", b)]["ips"], "ref_cpu": best[("cpu", b)]["cpu"],
                         "fast_cpu": f["cpu"], "torch_cpu": best[("torch", b)]["cpu"],
                         "events": f["synaptic_events_per_image"] * f["ips"],
                         "events_img": f["synaptic_events_per_image"], "kernels": kernels,
                         "density": f["spike_density"]})

    torch_version = subprocess.run([TORCH_PY, "-c", "import torch; print(torch.__version__)"],
                                   stdout=subprocess.PIPE, text=True).stdout.strip()
    lines = []
    lines.append(f"Machine: {cpu_model()}, {os.cpu_count()} CPUs (nproc), {platform.system()} "
                 f"{platform.release()}; {a.threads} threads for every backend, OMP_WAIT_POLICY="
                 f"{os.environ.get('OMP_WAIT_POLICY', 'unset')}; "
                 f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}.")
    lines.append(f"neuroc cpu-fast kernels: {rows[0]['kernels'] if rows else '?'}; PyTorch {torch_version} "
                 f"(Debian), dense stepping with the static first layers computed once.")
    lines.append(f"Command: bench/cpu_backends.py {' '.join(sys.argv[1:])}".rstrip() +
                 f" (images/s: best of {a.rounds} alternating rounds of at least {a.min_time:g} s each)")
    lines.append("")
    lines.append(f"| model | batch | T | cpu (reference) img/s | cpu-fast img/s | PyTorch img/s | "
                 f"cpu-fast / PyTorch | cpu-fast / cpu | synaptic events/s (cpu-fast) | events/image |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {a.T} | {r['ref']:.1f} | {r['fast']:.1f} | "
                     f"{r['torch']:.1f} | {r['fast'] / r['torch']:.1f}x | {r['fast'] / r['ref']:.1f}x | "
                     f"{r['events'] / 1e9:.2f} G | {r['events_img'] / 1e6:.2f} M |")
    lines.append("")
    lines.append("CPU time per image (user + system, all threads; less distorted by other load than "
                 "wall-clock):")
    lines.append("")
    lines.append("| model | batch | cpu ms | cpu-fast ms | PyTorch ms | PyTorch / cpu-fast | cpu / cpu-fast |")
    lines.append("|---|---|---|---|---|---|---|")
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {1e3 * r['ref_cpu']:.3f} | {1e3 * r['fast_cpu']:.3f} | "
                     f"{1e3 * r['torch_cpu']:.3f} | {r['torch_cpu'] / r['fast_cpu']:.1f}x | "
                     f"{r['ref_cpu'] / r['fast_cpu']:.1f}x |")
    lines.append("")
    lines.append("Spike density per layer (spikes per neuron per step, batch "
                 f"{batches[-1]}): " + "; ".join(
                     f"{r['model']}: " + ", ".join(f"{v:.3f}" for v in r["density"].values())
                     for r in rows if r["batch"] == batches[-1]))
    lines.append("PyTorch stepping vs neuroc, max |difference| of the summed readout over 64 images: " +
                 ", ".join(f"{m} {d:.2g}" for m, d in checks.items()) + ".")
    ok = True
    target = [r for r in rows if r["model"] == "cnn" and r["batch"] == 64]
    if target and a.T == 8:
        r = target[0]
        t1, t2 = r["fast"] / r["torch"] >= 10.0, r["fast"] / r["ref"] >= 5.0
        ok = t1 and t2
        lines.append("")
        lines.append(f"Acceptance (example CNN, batch 64, T = 8): cpu-fast >= 10x PyTorch: "
                     f"{r['fast'] / r['torch']:.1f}x {'pass' if t1 else 'FAIL'}; cpu-fast >= 5x cpu: "
                     f"{r['fast'] / r['ref']:.1f}x {'pass' if t2 else 'FAIL'}.")
    text = "\n".join(lines)
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    sys.stderr.write(f"logs and converted models in {work}\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
