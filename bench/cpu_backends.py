#!/usr/bin/python3
"""CPU inference speed of converted SNNs: neuroc's reference backend (`cpu`),
its fast backend (`cpu-fast`) and the same SNN run in PyTorch
(bench/torch_snn.py, Debian's torch) in its two modes, step by step and
multi-step, with the same weights, T, batch and thread count, in one run.
Prints a markdown table per thread count (images/s, the ratios, synaptic
events/s of cpu-fast, CPU time per image), the machine it ran on, and checks
the acceptance targets of the fast-backend issue (batch 64, T = 8):
cpu-fast >= 10x the stronger PyTorch mode and >= 5x the reference backend
on every model, and >= 6 G synaptic events/s per core on the example CNN.

  bench/cpu_backends.py [--models cnn,resnet,mlp,vgg,resnet18,tv_resnet18,tv_mobilenet_v2]
                        [-T 8] [--batch 64] [--threads 1,2] [--min-time S]
                        [--rounds R] [--convert "OPTIONS"] [--spike-check N]
                        [--workdir DIR] [--neuroc PATH] [--output table.md]

Models: NAME is examples/models/NAME.onnx (Fashion-MNIST networks: cnn,
resnet, mlp, vgg, resnet18, squeezenet), calibrated on the first 1000
Fashion-MNIST training images when Debian's dataset-fashion-mnist is
installed, else on examples/data/fmnist_test_x.npy, and timed on the 256
test images of examples/data; tv_NAME is torchvision's NAME (resnet18,
mobilenet_v2, ... as bench/zoo.py builds them: random weights, real
BatchNorm statistics) at --px (64) pixels, 3 channels, exported to ONNX
(opset 13) by Debian's /usr/bin/python3, calibrated on 256 smooth random
images and timed on 256 others (zoo.py's images()). Every model is
converted with neuroc's default options (signed spikes in bursts) plus
--convert, once, into --workdir.

Before timing, each PyTorch mode's summed readout is compared with `neuroc
run` on the same 64 inputs (max |difference|, and relative to the largest
readout), and (--spike-check N images, 0 = skip) every spiking layer's
spikes with neuroc's reference backend, driven by neuroc's spikes so that a
float-rounding flip does not cascade (torch_snn.py --check-spikes): spikes
that differ away from a decision boundary would be a wrong rule. In deep
networks with random weights, one flip of a neuron whose membrane sits
within rounding of a boundary changes everything downstream, so there the
free-running readout differs by far more than float rounding while the
driven check shows no rule differs.

Each contender is then timed R times (default 3), the rounds alternating
between neuroc (both backends) and PyTorch (both modes), and the best round
of each counts, so that a burst of other load on the machine hits one round
rather than one contender. CPU time per image (user + system, all threads)
is reported too. Exit status 0 when the targets hold, 1 otherwise.

Every process runs with OMP_WAIT_POLICY=passive (--wait-policy) and
OMP_NUM_THREADS (also OpenBLAS's and MKL's) set to the thread count: neuroc
and PyTorch both use OpenMP, whose default is to spin while waiting for
work; on a shared machine a spinning thread takes the core from the thread
it waits for, and PyTorch's many small parallel regions then collapse, which
would flatter neuroc. Passive waiting measures the backends rather than the
spinning.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FMNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
FMNIST_TEST = os.path.join(ROOT, "examples", "data", "fmnist_test_x.npy")
TORCH_PY = "/usr/bin/python3"
TORCH_SNN = os.path.join(HERE, "torch_snn.py")
MODES = ("step", "multistep")
DEFAULT_MODELS = "cnn,resnet,mlp,vgg,resnet18,tv_resnet18,tv_mobilenet_v2"

# run by TORCH_PY: a torchvision model as bench/zoo.py builds it, exported to
# ONNX, and its calibration and timing inputs (argv: name px onnx calib data)
EXPORT = """
import sys
import numpy as np, torch
sys.path.insert(0, {here!r})
import zoo
name, px, onnx, calib, data = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
net = zoo.build(name, px, {{}}, 10)
torch.onnx.export(net, torch.from_numpy(zoo.images(1, px, 7)), onnx, opset_version=13, input_names=["x"],
                  output_names=["y"], dynamic_axes={{"x": {{0: "n"}}, "y": {{0: "n"}}}})
np.save(calib, zoo.images(256, px, 3))
np.save(data, zoo.images(256, px, 7))
"""


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


def run(cmd, log, threads=None):
    """Runs cmd (logged); with threads, every thread pool of the child sized to it."""
    env = dict(os.environ)
    if threads:
        for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[v] = str(threads)
    log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
    log.flush()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    log.write(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout)
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}")
    return p.stdout


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def prepare(model, a, neuroc, work, log):
    """The converted .nir of a model and the inputs to time it on."""
    tag = hashlib.sha1(a.convert.encode()).hexdigest()[:8] if a.convert else "default"
    nir = os.path.join(work, f"{model}_{tag}.nir")
    if model.startswith("tv_"):
        name = model[3:]
        onnx, calib, data = (os.path.join(work, f"{model}_{a.px}{s}") for s in (".onnx", "_calib.npy", "_data.npy"))
        nir = nir.replace(".nir", f"_{a.px}.nir")
        if not os.path.exists(onnx):
            sys.stderr.write(f"exporting torchvision {name} ({a.px} px) ...\n")
            run([TORCH_PY, "-c", EXPORT.format(here=HERE), name, str(a.px), onnx, calib, data], log)
        extra = []
    else:
        onnx, calib, data = os.path.join(ROOT, "examples", "models", model + ".onnx"), a.fmnist_calib, FMNIST_TEST
        if not os.path.exists(onnx):
            sys.exit(f"{onnx}: no such model (examples/models/NAME or tv_NAME for torchvision's NAME)")
        extra = ["--calib-samples", "1000"]
    if not os.path.exists(nir):
        sys.stderr.write(f"converting {model} ...\n")
        run([neuroc, "convert", onnx, "--calib", calib] + extra + shlex.split(a.convert) + ["-o", nir], log)
    return nir, data


def check(model, nir, data, a, neuroc, work, log):
    """Readout agreement of both PyTorch modes with neuroc on 64 inputs, and
    the driven spike check on --spike-check inputs."""
    x64, y = os.path.join(work, f"{model}_x64.npy"), os.path.join(work, f"{model}_y64.npy")
    run([TORCH_PY, "-c", f"import numpy as n; n.save({x64!r}, n.load({data!r})[:64])"], log)
    run([neuroc, "run", nir, "--input", x64, "-T", str(a.T), "-o", y], log)
    res = {}
    for mode in MODES:
        out = run([TORCH_PY, TORCH_SNN, nir, "-T", str(a.T), "--batch", "64", "--mode", mode, "--threads",
                   str(a.thread_list[-1]), "--data", x64, "--check", y, "--iters", "1", "--json"], log)
        j = last_json(out)
        res[mode] = (j["max_abs_diff"], j["max_abs_diff"] / max(j["max_abs_ref"], 1e-30))
    if a.spike_check > 0:
        sys.stderr.write(f"spike check of {model} ({a.spike_check} inputs) ...\n")
        out = run([TORCH_PY, TORCH_SNN, nir, "-T", str(a.T), "--batch", str(a.spike_check), "--mode", "multistep",
                   "--threads", str(a.thread_list[-1]), "--data", x64, "--check-spikes", neuroc,
                   "--iters", "1", "--json"], log)
        j = last_json(out)
        res["spikes"] = (j["spikes_differing"], j["spikes_differing_forced"], j["spikes_wrong_forced"],
                         j["spikes_compared"])
    return res


def measure(model, nir, data, threads, a, neuroc, work, log):
    """Best of a.rounds alternating rounds: {(contender, batch): result}."""
    best = {}

    def keep(who, b, ips, cpu, extra):
        k = (who, b)
        if k not in best:
            best[k] = dict(extra, ips=ips, cpu=cpu)
        else:
            best[k]["ips"] = max(best[k]["ips"], ips)
            best[k]["cpu"] = min(best[k]["cpu"], cpu)

    for rnd in range(a.rounds):
        sys.stderr.write(f"benchmarking {model}, {threads} thread(s), round {rnd + 1}/{a.rounds} ...\n")
        js = os.path.join(work, f"{model}_t{threads}_bench{rnd}.json")
        run([neuroc, "bench", nir, "--backend", "cpu,cpu-fast", "-T", str(a.T), "--batch", a.batch,
             "--threads", str(threads), "--data", data, "--min-time", str(a.min_time), "--json", js], log, threads)
        with open(js) as f:
            nb = json.load(f)
        for c in nb["configs"]:
            keep(c["backend"], c["batch"], c["images_per_s"], c["cpu_s_per_image"],
                 dict(c, kernels=nb.get("cpu_fast_kernels", "")))
        for b in a.batches:
            for mode in MODES:
                out = run([TORCH_PY, TORCH_SNN, nir, "-T", str(a.T), "--batch", str(b), "--mode", mode,
                           "--threads", str(threads), "--data", data, "--min-time", str(a.min_time), "--json"],
                          log, threads)
                j = last_json(out)
                keep(mode, b, j["images_per_s"], j["cpu_s_per_image"], j)
    return best


def row(model, threads, b, best):
    f, ref = best[("cpu-fast", b)], best[("cpu", b)]
    step, multi = best[("step", b)], best[("multistep", b)]
    torch_best = max((step, multi), key=lambda r: r["ips"])
    return {"model": model, "threads": threads, "batch": b, "ref": ref["ips"], "fast": f["ips"],
            "step": step["ips"], "multi": multi["ips"], "torch": torch_best["ips"],
            "torch_mode": "step" if torch_best is step else "multistep",
            "ref_cpu": ref["cpu"], "fast_cpu": f["cpu"], "torch_cpu": torch_best["cpu"],
            "events": f["synaptic_events_per_image"] * f["ips"], "events_img": f["synaptic_events_per_image"],
            "kernels": f["kernels"], "density": f["spike_density"]}


def table(rows, a):
    lines = ["| model | threads | batch | cpu img/s | cpu-fast img/s | torch step img/s | torch multistep img/s | "
             "cpu-fast / best torch | cpu-fast / cpu | synaptic events/s (cpu-fast) | per core | "
             "CPU ms/img cpu | cpu-fast | best torch |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['threads']} | {r['batch']} | {r['ref']:.1f} | {r['fast']:.1f} | "
                     f"{r['step']:.1f} | {r['multi']:.1f} | {r['fast'] / r['torch']:.1f}x | "
                     f"{r['fast'] / r['ref']:.1f}x | {r['events'] / 1e9:.2f} G | "
                     f"{r['events'] / r['threads'] / 1e9:.2f} G | {1e3 * r['ref_cpu']:.3f} | "
                     f"{1e3 * r['fast_cpu']:.3f} | {1e3 * r['torch_cpu']:.3f} |")
    return lines


def acceptance(rows, a):
    """The issue's targets at batch 64, T = 8, every model and thread count:
    (lines, all pass). A run that measures neither is not judged."""
    if a.T != 8 or 64 not in a.batches:
        return [f"- not checked: the targets are defined at batch 64 and T = 8 (this run: batch {a.batch}, "
                f"T = {a.T})"], True
    rs = [r for r in rows if r["batch"] == 64]
    targets = [("cpu-fast >= 10x the stronger PyTorch mode, every model", rs,
                lambda r: r["fast"] / r["torch"], 10.0, "x"),
               ("cpu-fast >= 5x the reference backend, every model", rs, lambda r: r["fast"] / r["ref"], 5.0, "x"),
               ("cpu-fast >= 6 G synaptic events/s per core, example cnn", [r for r in rs if r["model"] == "cnn"],
                lambda r: r["events"] / r["threads"] / 1e9, 6.0, " G")]
    lines, ok = [], True
    for what, sel, value, target, unit in targets:
        if not sel:
            lines.append(f"- {what}: not measured in this run: FAIL")
            ok = False
            continue
        fails = [r for r in sel if value(r) < target]
        worst = min(sel, key=value)
        ok &= not fails
        lines.append(f"- {what}: {'pass' if not fails else 'FAIL'} (lowest {value(worst):.2f}{unit}, "
                     f"{worst['model']} with {worst['threads']} thread(s)" +
                     (f"; {len(fails)} of {len(sel)} rows below: " +
                      ", ".join(f"{r['model']}/{r['threads']}t {value(r):.2f}{unit}" for r in fails) if fails else "")
                     + ")")
    return lines, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help=f"comma-separated examples/models names, tv_NAME for torchvision's NAME "
                    f"(default {DEFAULT_MODELS})")
    ap.add_argument("-T", type=int, default=8)
    ap.add_argument("--batch", default="64", help="comma-separated batch sizes (default 64)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts, one table each (default 1,2)")
    ap.add_argument("--px", type=int, default=64, help="input size of the torchvision models (default 64)")
    ap.add_argument("--convert", default="", help="more `neuroc convert` options, e.g. \"--plain-spikes\" "
                    "(default: none, neuroc's defaults)")
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds to time each configuration")
    ap.add_argument("--rounds", type=int, default=3,
                    help="times each contender is measured, alternating; the best round counts (default 3)")
    ap.add_argument("--spike-check", type=int, default=8, metavar="N",
                    help="inputs of the driven spike-level check per model (default 8; 0 = skip)")
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
    a.fmnist_calib = FMNIST if os.path.exists(FMNIST) else FMNIST_TEST
    a.batches = [int(b) for b in a.batch.split(",")]
    a.thread_list = [int(t) for t in a.threads.split(",")]
    if a.wait_policy == "default":
        os.environ.pop("OMP_WAIT_POLICY", None)
    else:
        os.environ["OMP_WAIT_POLICY"] = a.wait_policy.upper()

    rows, checks = [], {}
    models = a.models.split(",")
    for model in models:
        nir, data = prepare(model, a, neuroc, work, log)
        checks[model] = check(model, nir, data, a, neuroc, work, log)
        for threads in a.thread_list:
            best = measure(model, nir, data, threads, a, neuroc, work, log)
            rows += [row(model, threads, b, best) for b in a.batches]

    torch_version = subprocess.run([TORCH_PY, "-c", "import torch; print(torch.__version__)"],
                                   stdout=subprocess.PIPE, text=True).stdout.strip()
    lines = [f"Machine: {cpu_model()}, {os.cpu_count()} CPUs (nproc), {platform.system()} {platform.release()}; "
             f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}; "
             f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}.",
             f"neuroc cpu-fast kernels: {rows[0]['kernels'] if rows else '?'}; PyTorch {torch_version} (Debian): "
             f"step = one op per layer and step, multistep = stateless layers over all T·N frames at once; "
             f"static first layers computed once in both. Conversion: neuroc's defaults"
             f"{' + ' + a.convert if a.convert else ''}; T = {a.T}.",
             f"Command: bench/cpu_backends.py {' '.join(shlex.quote(x) for x in sys.argv[1:])}".rstrip() +
             f" (images/s: best of {a.rounds} alternating rounds of at least {a.min_time:g} s each)", ""]
    lines += table(rows, a)
    lines.append("")
    lines.append("Spike density per layer (spikes per neuron per step, cpu-fast, batch "
                 f"{a.batches[-1]}): " + "; ".join(
                     f"{r['model']}: " + ", ".join(f"{v:.3f}" for v in r["density"].values())
                     for r in rows if r["batch"] == a.batches[-1] and r["threads"] == a.thread_list[0]) + ".")
    lines.append("PyTorch vs neuroc, max |difference| of the summed readout over 64 inputs (relative to the "
                 "largest |readout|), step / multistep: " +
                 ", ".join(f"{m} {c['step'][0]:.2g} ({c['step'][1]:.1e}) / {c['multistep'][0]:.2g} "
                           f"({c['multistep'][1]:.1e})" for m, c in checks.items()) + ".")
    if a.spike_check > 0:
        lines.append(f"Spikes vs neuroc's reference backend on {a.spike_check} inputs, (step, sample, neuron) "
                     "entries differing running freely / driven by neuroc's spikes / of those not at a decision "
                     "boundary (a wrong rule) / compared: " +
                     ", ".join(f"{m} {c['spikes'][0]} / {c['spikes'][1]} / {c['spikes'][2]} / {c['spikes'][3]}"
                               for m, c in checks.items()) + ".")
    acc, ok = acceptance(rows, a)
    lines += ["", "Acceptance (batch 64, T = 8):"] + acc
    wrong = [m for m, c in checks.items() if "spikes" in c and c["spikes"][2]]
    if wrong:
        ok = False
        lines.append(f"- PyTorch spike rule differs from neuroc's on: {', '.join(wrong)}: FAIL")
    text = "\n".join(lines)
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    sys.stderr.write(f"logs and converted models in {work}\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
