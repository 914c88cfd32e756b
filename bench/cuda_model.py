#!/usr/bin/env python3
"""A performance model of the cuda backend's event Conv2d kernels from their
compiled code: a compute bound and two memory bounds (not yet checked
against a GPU).

1. Compiles snn/backends/cuda/cuda_kernels.cu for sm_90 (nvcc -cubin, the
   build's --fmad=false) and reads its SASS (cuobjdump -sass; cuobjdump and
   nvdisasm from the CUDA toolkit, or the PyPI wheels nvidia-cuda-cuobjdump
   and nvidia-cuda-nvdisasm: set NEUROC_CUOBJDUMP / put nvdisasm on PATH).
2. Per kernel: its instructions, and each innermost loop's (a backward
   branch's range holding no other): instructions an iteration, with the
   global and shared memory ones.
3. ResNet-18 at 224 px, T = 8, batch 64 (net_resnet18_shapes: 2×2 pool
   after conv1), every spiking layer's input at density D (default 0.2),
   conv1 on the static image once a sample. Per conv, the thread steps as
   the backend's cost model counts them (choose_conv_kernel: events looked
   at in the input rows that reach each band, row-offset look-ups, taps),
   the cheaper kernel a layer, and three bounds:
   - compute: steps × the instructions a tap of that kernel's tap loop (the
     innermost loop holding the multiply, over the multiplies it holds: the
     compiler unrolls it) against
     an H200's lane-instruction rate (132 SMs × 4 schedulers × 32 lanes ×
     1.98 GHz; one instruction a lane a cycle, no latency);
   - on-chip memory (L1/shared, 128 B a cycle an SM): per tap the weight
     load and the accumulator's shared load and store (scatter, 12 B a lane)
     or the input and weight loads (output-stationary, 8 B); per event
     looked at, its index and value (8 B, one broadcast a warp);
   - DRAM (4.8 TB/s): what a layer must move a frame at least: its dense
     input read by the compaction (4 B an input, a mask bit), the event list
     written (8 B an event) and the row offsets (4 B a row), the output
     written (4 B) and the IF kernel's read of it, membrane read and write
     and spike write (16 B an output); weights and event lists re-read from
     L2 are not counted.
   The prediction is the slowest of the three.

usage: python3 bench/cuda_model.py [DENSITY]
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H200_LANE_INSTR_S = 132 * 4 * 32 * 1.98e9
H200_ONCHIP_B_S = 132 * 128 * 1.98e9  # L1 / shared memory, 128 B a cycle an SM
H200_DRAM_B_S = 4.8e12
SCATTER_K, SCATTER_SHARED = 64, 10240  # cuda_glue.h


def sass():
    cuobjdump = os.environ.get("NEUROC_CUOBJDUMP", "cuobjdump")
    with tempfile.TemporaryDirectory() as d:
        cubin = os.path.join(d, "k.cubin")
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "--fmad=false", "-O3", "-I" + ROOT, "-I" + os.path.join(ROOT, "include"),
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
        # a tap is one FMUL (--fmad=false: FMUL then FADD); the compiler unrolls
        # the tap loop, so its instructions a tap: an iteration's over its FMULs
        taps = [len(body) / fmul for body, fmul in
                ((b, sum(1 for ins in b if re.match(r"(@!?P\d+ )?FMUL\b", ins)))
                 for b in ([ins for a, ins in code[name] if lo <= a <= hi]
                           for lo, hi in innermost_loops(code[name]))) if fmul]
        if taps:  # the cheapest loop (the scatter kernel's stride-1 one) and the dearest (its general one)
            per_step[name] = (min(taps), max(taps))
    T, N = 8, 64
    compute = onchip = dram = taps = 0.0
    print(f"\nResNet-18 224 px, T = {T}, batch {N}, density {density}: per image")
    print("layer  C×H×H → K    kernel       thread steps  instructions  on-chip B     DRAM B")
    for i, (C, H, K, k, s, p, spiking) in enumerate(resnet18()):
        OH = (H + 2 * p - k) // s + 1
        d = density if spiking else 1.0
        frames = T if spiking else 1
        E, out = d * C * H * H, K * OH * OH
        band = min(SCATTER_SHARED // (OH * SCATTER_K), OH)
        stationary = out * C * k * k
        looks = scatter = float("inf")
        if band >= 1:  # as choose_conv_kernel in backend_cuda.c
            reach = sum(max(0, min(H - 1, min(b0 + band, OH) * s - s - p + k - 1) - max(0, b0 * s - p) + 1)
                        for b0 in range(0, OH, band))
            looks = E * reach / H * K + -(-OH // band) * K * C
            scatter = looks + E * (k / s) ** 2 * K
        if scatter < stationary:
            kern, steps, mem = "scatter", scatter, (scatter - looks) * 12 + looks * 8 / 32
        else:
            kern, steps, mem = "stationary", stationary, stationary * 8
        ipc = per_step["conv_scatter_kernel"][s != 1] if kern == "scatter" else per_step["conv_event_kernel"][0]
        # the strided loop walks every j of a landed row, landing on 1/s of them
        iters = looks + E * (k / s) * k * K if kern == "scatter" and s != 1 else steps
        instr = frames * iters * ipc
        moved = frames * (4.5 * C * H * H + 8 * E + 4 * C * H + 20 * out)
        compute += instr
        taps += frames * (steps - looks if kern == "scatter" else stationary)
        onchip += frames * mem
        dram += moved
        print(f"{i:5d}  {C:3d}×{H:3d} → {K:3d}  {kern:10s} {frames * steps:13.4g} {instr:13.4g} "
              f"{frames * mem:10.4g} {moved:10.4g}")
    bounds = {"compute": H200_LANE_INSTR_S / compute, "on-chip memory": H200_ONCHIP_B_S / onchip,
              "DRAM": H200_DRAM_B_S / dram}
    print(f"\na batch: {compute * N:.4g} instructions, {onchip * N:.4g} B on chip, {dram * N:.4g} B of DRAM")
    for name, rate in bounds.items():
        print(f"{name + ' bound:':22s} {rate:8.0f} images/s")
    print(f"taps (synaptic additions, as counted) an image: {taps:.4g}; at 3,000 images/s the H200 has "
          f"{H200_LANE_INSTR_S / 3000 / taps:.2f} lane instructions a tap (the tap loops here: "
          f"scatter {per_step['conv_scatter_kernel'][0]:.1f} (strided {per_step['conv_scatter_kernel'][1]:.1f}), "
          f"output-stationary {per_step['conv_event_kernel'][0]:.1f})")
    name = min(bounds, key=bounds.get)
    print(f"predicted (the slowest): {bounds[name]:.0f} images/s, {name}-bound; the issue's target 3,000 images/s "
          f"is {'reached' if bounds[name] >= 3000 else 'not reached'}")

if __name__ == "__main__":
    main()
