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
   global and shared memory ones. For each instantiation conv_tile<CPT,KW,S>
   of the register-tile kernel (the one the backend runs for ResNet-18's
   spiking convolutions): the warp instructions an event looked at costs,
   by its column o in the tile, from a simulation of the event loop's path
   (its exit test and the switch's compare-and-branch tree followed for o,
   the BRX's case counted as its CPT adds a tap and its branch, the spike
   value the same as the last one's so the products are kept); the block
   recomputing the products; and the rest of the tap-row loop (a row
   visited, counted statically: an upper bound).
3. ResNet-18 at 224 px, T = 8, batch 64 (net_resnet18_shapes: 2×2 pool
   after conv1), every spiking layer's input at density D (default: 0.05
   and 0.2), conv1 on the static image once a sample, output-stationary
   (conv_stationary<4>'s tap loop, per channel-tap). Three bounds:
   - compute: lane instructions (a warp instruction is 32) against an
     H200's rate (132 SMs × 4 schedulers × 32 lanes × 1.98 GHz; one
     instruction a lane a cycle, no latency, full warps);
   - on-chip memory (L1/shared, 128 B a cycle an SM): an event's index and
     value (8 B a warp, broadcast) and the weights of the products; the
     output-stationary kernel's input and weight loads (8 B a tap);
   - DRAM (4.8 TB/s): what a layer must move a frame at least: its dense
     input read by the compaction (4 B an input, a mask bit), the event list
     written (8 B an event) and the tile offsets (4 B a row and tile), the
     output written (4 B) and the IF kernel's read of it, membrane read and
     write and spike write (16 B an output); weights and event lists re-read
     from L2 are not counted.
   The prediction is the slowest of the three. Not modelled: latency,
   occupancy, the compaction, offsets and IF kernels' instructions.

usage: python3 bench/cuda_model.py [DENSITY...]
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


def kernel_name(mangled):
    """A kernel's name from its mangled one: conv_tile<CPT,KW,S> for the
    register-tile kernel's instantiations, else the name ending in _kernel."""
    m = re.search(r"9conv_tileILi(\d+)ELi(\d+)ELi(\d+)E", mangled)
    if m:
        return "conv_tile<%s,%s,%s>" % m.groups()
    m = re.search(r"15conv_stationaryILi(\d+)EE", mangled)
    if m:
        return "conv_stationary<%s>" % m.groups()
    for m in re.finditer(r"(?=(\d+)([A-Za-z_]\w*))", mangled):  # every length prefix, overlapping
        name = m.group(2)[:int(m.group(1))]
        if len(name) == int(m.group(1)) and name.endswith("_kernel"):
            return name
    return None


def kernels(text):
    """{name: [(address, opcode line)]} from cuobjdump's listing."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = kernel_name(m.group(1))
            if name:
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


def branch_target(ins):
    t = re.search(r"BRA 0x([0-9a-f]+)", ins)
    return int(t.group(1), 16) if t else None


def tile_taps(o, kw, s, tile_w=16):
    return sum(1 for j in range(kw) if o - j >= 0 and (o - j) % s == 0 and (o - j) // s < tile_w)


def tile_rows(cpt):
    """tile_rows (cuda_kernels.cu): the output rows a warp holds."""
    return 1 if cpt >= 8 else 2 if cpt == 4 else 4


def tile_costs(code, cpt, kw, s, tile_w=16):
    """The register-tile kernel's costs from its SASS, in warp instructions:
    (a list, per event column o of a tile, of the instructions an event there
    executes: the path through the event loop, simulated; its switch's
    compare-and-branch tree followed for o, the case body counted as its CPT
    adds a tap and its branch; the spike value as the last one's, so the
    products are kept), the block that recomputes the products, and the rest
    of the tap-row loop (visiting a row, the event loop aside)."""
    ncase = (tile_w - 1) * s + kw
    ins = dict(code)
    addrs = [a for a, _ in code]
    nxt = {a: addrs[i + 1] for i, a in enumerate(addrs[:-1])}
    # o's register: the one the loop's exit test compares with ncase − 1
    o_reg = exit_at = None
    for a, i in code:
        m = re.match(r"ISETP\.GT\.AND (P\d), PT, (R\d+), 0x([0-9a-f]+), PT", i)
        if m and int(m.group(3), 16) == ncase - 1:
            o_reg, exit_at = m.group(2), a
            break
    loops = [(branch_target(i), a) for a, i in code if branch_target(i) is not None and branch_target(i) < a]
    event_loop = min((l for l in loops if l[0] <= exit_at <= l[1]), key=lambda l: l[1] - l[0])
    row_loop = min((l for l in loops if l[0] < event_loop[0] and event_loop[1] < l[1]), key=lambda l: l[1] - l[0])
    recompute = 0
    paths = []
    for o in range(ncase):
        pc, n, preds = event_loop[0], 0, {}
        while True:
            i = ins[pc]
            n += 1
            if pc == event_loop[1]:
                break
            g = re.match(r"@(!?)(P\d) (.*)", i)
            body = g.group(3) if g else i
            m = re.match(r"ISETP\.(GT|GE|LT|LE|EQ|NE)(?:\.U32)?\.AND (P\d), PT, (R\d+), 0x([0-9a-f]+), PT", body)
            if m and m.group(3) == o_reg:
                v = int(m.group(4), 16)
                preds[m.group(2)] = {"GT": o > v, "GE": o >= v, "LT": o < v, "LE": o <= v, "EQ": o == v,
                                     "NE": o != v}[m.group(1)]
            m = re.match(r"FSETP\.NEU\.AND (P\d)", body)
            if m:
                preds[m.group(1)] = False  # the same spike value: products kept
            if body.startswith("BRX"):
                # the case's adds, predicated on the rows landing (all issued), and its branch to the join
                n += tile_rows(cpt) * cpt * tile_taps(o, kw, s, tile_w) + 1
                a = nxt[pc]
                while not re.match(r"BRA 0x", ins[a]):
                    a = nxt[a]
                pc = branch_target(ins[a])
                continue
            t = branch_target(body)
            if t is not None:
                taken = True if not g else preds.get(g.group(2), False) != (g.group(1) == "!")
                if g and m is None and g.group(2) not in preds:
                    taken = False
                if taken:
                    if g and g.group(1) == "!" and re.match(r"FSETP", ins.get(prev, "")) and not recompute:
                        recompute = sum(1 for a, _ in code if pc < a < t)
                    pc = t
                    continue
            prev = pc
            pc = nxt[pc]
        paths.append(n)
    event_body = sum(1 for a, _ in code if event_loop[0] <= a <= event_loop[1])
    row = sum(1 for a, _ in code if row_loop[0] <= a <= row_loop[1]) - event_body
    return paths, recompute, row


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


def tile_cpt(K, k, s):
    """nc_cu_conv_tile_cpt (cuda_kernels.cu), groups 1."""
    if k not in (1, 3) or s not in (1, 2):
        return 0
    return 8 if K % 256 == 0 else 4 if K % 128 == 0 else 2 if K % 64 == 0 else 1 if K % 32 == 0 else 0


def tile_layer(costs, C, H, K, k, s, p, d, tile_w=16):
    """Warp instructions a frame of the register-tile kernel, and the events
    its warps look at (each once an input row and tile whose reach holds it,
    for the TR output rows a warp holds)."""
    paths, recompute, row = costs
    cpt = tile_cpt(K, k, s)
    TR = tile_rows(cpt)
    OH = (H + 2 * p - k) // s + 1
    ncase = (tile_w - 1) * s + k
    tiles = -(-OH // tile_w)
    # the input rows a row group reads: those some output row of it lands on (the others are skipped)
    rows = sum(1 for g in range(0, OH, TR) for ih in range(H)
               if any(g + r < OH and 0 <= ih - ((g + r) * s - p) < k for r in range(TR)))
    cols = [max(0, min(H - 1, t * tile_w * s - p + ncase - 1) - max(0, t * tile_w * s - p) + 1) for t in range(tiles)]
    event = sum(paths) / len(paths)
    warps_rows = K // (32 * cpt) * C * rows  # (channel chunk, c, row group, input row)
    looks = warps_rows * d * sum(cols)
    nonempty = sum(1 - (1 - d) ** n for n in cols)
    return warps_rows * (tiles * row + nonempty * recompute) + looks * event, looks


def main():
    densities = [float(a) for a in sys.argv[1:]] or [0.05, 0.2]
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
    tile = {}
    print("\nregister-tile kernel (warp instructions): an event looked at, by its column in the tile "
          "(min / mean / max, adds included); products recomputed; an input row visited (static count)")
    for name in sorted(n for n in code if n.startswith("conv_tile<")):
        cpt, kw, s = (int(x) for x in re.findall(r"\d+", name))
        tile[(cpt, kw, s)] = c = tile_costs(code[name], cpt, kw, s)
        taps = sum(cpt * tile_taps(o, kw, s) for o in range(len(c[0])))  # one row's
        print(f"{name:18s} event {min(c[0])}/{sum(c[0]) / len(c[0]):.1f}/{max(c[0])}, "
              f"{sum(c[0]) / taps / tile_rows(cpt):.2f} a channel-tap landed on every row; "
              f"recompute {c[1]}; row {c[2]}")
    for density in densities:
        predict(density, per_step, tile)


def predict(density, per_step, tile):
    T, N = 8, 64
    compute = onchip = dram = taps = 0.0
    print(f"\nResNet-18 224 px, T = {T}, batch {N}, density {density}: per image")
    print("layer  C×H×H → K    kernel          steps/looks  instructions  on-chip B     DRAM B")
    for i, (C, H, K, k, s, p, spiking) in enumerate(resnet18()):
        OH = (H + 2 * p - k) // s + 1
        d = density if spiking else 1.0
        frames = T if spiking else 1
        E, out = d * C * H * H, K * OH * OH
        adds = E * (k / s) ** 2 * K  # synaptic additions (channel-taps), on average
        stationary = out * C * k * k
        cpt = tile_cpt(K, k, s)
        offsets = C * H
        warp_instr, looks = tile_layer(tile[(cpt, k, s)], C, H, K, k, s, p, d) if cpt else (float("inf"), 0)
        stationary_instr = stationary * per_step["conv_stationary<4>"][0]  # 4 channels a thread
        if spiking and 32 * warp_instr < stationary_instr:  # the cheaper kernel, as choose_conv_kernel
            kern, steps, instr = f"tile<{cpt},{k},{s}>", looks, 32 * warp_instr
            offsets = C * H * -(-OH // 16)
            # on chip: an event's index and value (a broadcast, 8 B a warp); products' weights
            # (CPT floats a lane a tap column, once a non-empty row segment: at most once a look)
            mem = looks * 8 + min(looks, K // (32 * cpt) * C * OH * k) * 32 * cpt * 4 * k * tile_rows(cpt)
        else:
            kern, steps = "stationary", stationary
            instr = stationary_instr
            mem = stationary * 5  # a lane: the input (4 B) and 4 weights (16 B) a 4-channel tap
            adds = stationary
        moved = frames * (4.5 * C * H * H + 8 * E + 4 * offsets + 20 * out)
        compute += frames * instr
        taps += frames * adds
        onchip += frames * mem
        dram += moved
        print(f"{i:5d}  {C:3d}×{H:3d} → {K:3d}  {kern:12s} {frames * steps:13.4g} {frames * instr:13.4g} "
              f"{frames * mem:10.4g} {moved:10.4g}")
    bounds = {"compute": H200_LANE_INSTR_S / compute, "on-chip memory": H200_ONCHIP_B_S / onchip,
              "DRAM": H200_DRAM_B_S / dram}
    print(f"a batch: {compute * N:.4g} instructions, {onchip * N:.4g} B on chip, {dram * N:.4g} B of DRAM")
    for name, rate in bounds.items():
        print(f"{name + ' bound:':22s} {rate:8.0f} images/s")
    print(f"synaptic additions an image: {taps:.4g}; {compute / taps:.2f} lane instructions each on average "
          f"(3,000 images/s allows {H200_LANE_INSTR_S / 3000 / taps:.2f})")
    name = min(bounds, key=bounds.get)
    print(f"predicted (the slowest) at density {density}: {bounds[name]:.0f} images/s, {name}-bound; "
          f"the issue's target 3,000 images/s is {'reached' if bounds[name] >= 3000 else 'not reached'}")


if __name__ == "__main__":
    main()
