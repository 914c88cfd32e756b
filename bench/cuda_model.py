#!/usr/bin/env python3
"""A first performance model of the cuda backend's event Conv2d kernels
from their compiled code (partial: compute only, one instruction a lane a
cycle, no memory or latency term; not yet checked against a GPU).

1. Compiles snn/backends/cuda/cuda_kernels.cu for sm_90 (nvcc -cubin, the
   build's --fmad=false) and reads its SASS (cuobjdump -sass; cuobjdump and
   nvdisasm from the CUDA toolkit, or the PyPI wheels nvidia-cuda-cuobjdump
   and nvidia-cuda-nvdisasm: set NEUROC_CUOBJDUMP / put nvdisasm on PATH).
2. Per kernel: its instructions, and each innermost loop's (a backward
   branch's range holding no other): instructions an iteration, with the
   global and shared memory ones.
3. ResNet-18 at 224 px, T = 8, batch 64 (net_resnet18_shapes: 2×2 pool
   after conv1), every spiking layer's input at density D (default 0.2),
   conv1 on the static image once a sample: the thread steps of each conv
   as the backend's cost model counts them (choose_conv_kernel), the cheaper
   kernel a layer, times the instructions of that kernel's tap loop (the
   smallest innermost loop with three memory instructions or more: weight
   load, accumulator read and write), against an H200's lane-instruction rate
   (132 SMs × 4 schedulers × 32 lanes × 1.98 GHz).

usage: python3 bench/cuda_model.py [DENSITY]
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H200_LANE_INSTR_S = 132 * 4 * 32 * 1.98e9
SCATTER_K, SCATTER_SHARED = 64, 10240  # cuda_glue.h


def sass():
    cuobjdump = os.environ.get("NEUROC_CUOBJDUMP", "cuobjdump")
    with tempfile.TemporaryDirectory() as d:
        cubin = os.path.join(d, "k.cubin")
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "--fmad=false", "-O3", "-I" + ROOT,
                        "-I" + os.path.join(ROOT, "snn/backends/cuda"), "-o", cubin,
                        os.path.join(ROOT, "snn/backends/cuda/cuda_kernels.cu")], check=True)
        return subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True, text=True).stdout


def kernels(text):
    """{name: [(address, opcode line)]} from cuobjdump's listing."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.search(r"Function : .*?(?<=\d)([a-z_]+_kernel)E", line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4})\*/\s+(.*?);", line)
        if name and m:
            out[name].append((int(m.group(1), 16), m.group(2)))
    return out


def innermost_loops(code):
    """(first, last) address ranges of the backward branches holding no other."""
    loops = []
    for addr, ins in code:
        t = re.search(r"0x([0-9a-f]+)", ins) if "BRA" in ins else None
        if t and int(t.group(1), 16) < addr:
            loops.append((int(t.group(1), 16), addr))
    return [l for l in loops if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]


def loop_stats(code, lo, hi):
    body = [ins for a, ins in code if lo <= a <= hi]
    mem = sum(1 for ins in body if re.search(r"\b(LDG|STG|LDS|STS|ATOMS|RED)\b", ins))
    return len(body), mem


def resnet18(px=224):
    """Conv layers: (C, H, K, k, stride, pad, spiking input)."""
    layers, c, h = [(3, px, 64, 7, 2, 3, False)], 64, px // 4
    for stage, width in enumerate((64, 128, 256, 512)):
        for b in range(2):
            s = 2 if stage and not b else 1
            layers.append((c, h, width, 3, s, 1, True))
            if s == 2:
                layers.append((c, h, width, 1, 2, 0, True))
            h //= s
            layers.append((width, h, width, 3, 1, 1, True))
            c = width
    return layers


def main():
    density = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
    code = kernels(sass())
    per_step = {}
    print("kernel                  SASS   innermost loops (instructions an iteration / memory ones)")
    for name in sorted(code):
        loops = [loop_stats(code[name], lo, hi) for lo, hi in innermost_loops(code[name])]
        print(f"{name:22s} {len(code[name]):6d}   {loops}")
        taps = [n for n, mem in loops if mem >= 3]  # a tap: weight load, accumulator load and store
        if taps:
            per_step[name] = min(taps)
    T, N = 8, 64
    total = 0.0
    print(f"\nResNet-18 224 px, T = {T}, batch {N}, density {density}: per image")
    print("layer  C×H×H → K    kernel       thread steps   instructions")
    for i, (C, H, K, k, s, p, spiking) in enumerate(resnet18()):
        OH = (H + 2 * p - k) // s + 1
        d = density if spiking else 1.0
        frames = T if spiking else 1
        E = d * C * H * H
        band = min(SCATTER_SHARED // (OH * SCATTER_K), OH)
        stationary = K * OH * OH * C * k * k
        scatter = E * -(-OH // band) * K + E * k * k * K if band >= 1 else float("inf")
        kern, steps = ("scatter", scatter) if scatter < stationary else ("stationary", stationary)
        ipc = per_step["conv_scatter_kernel" if kern == "scatter" else "conv_event_kernel"]
        instr = frames * steps * ipc
        total += instr
        print(f"{i:5d}  {C:3d}×{H:3d} → {K:3d}  {kern:10s} {frames * steps:14.4g} {instr:14.4g}")
    print(f"\nconv instructions a batch: {total * N:.4g}; H200 at {H200_LANE_INSTR_S:.3g} lane instructions/s: "
          f"{H200_LANE_INSTR_S / total:.0f} images/s (compute bound of these kernels; memory not modelled)")


if __name__ == "__main__":
    main()
