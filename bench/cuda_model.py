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
   spiking convolutions), from its SASS:
   - each event loop (one per input row d of a row group, unrolled: an
     innermost loop holding a BRX) is simulated for each column o of the
     tile: from its head to its back edge, the comparisons of o followed,
     the integer arithmetic on o evaluated up to the jump table's entry
     (read from the cubin's .nv.constant2 section) and the BRX's target,
     the case's adds and branches counted as they are; the spike value
     the same as the last one's (the products kept); the warp collectives'
     divergence branches (BRA.DIV) not taken. A branch it cannot decide
     stops the model. The adds found must be CPT × taps × the rows d lands
     on, for every o;
   - the products' recompute: the longer pass when the value changes;
   - an input channel's rows outside the event loops (the segment
     look-ups, the 32-event loads, the loop tests): the static count of the
     channel loop's body less its event loops, an upper bound;
   - the rest of a warp (bias, stores): static.
3. ResNet-18 at 224 px, T = 8, batch 64 (net_resnet18_shapes: 2×2 pool
   after conv1), every spiking layer's input at density D (default: 0.05
   and 0.2), conv1 on the static image once a sample, output-stationary
   (conv_stationary<8>'s tap loop, per channel-tap). The register-tile
   layers: for every warp (row group, tile, channel chunk) and input
   channel, the rows of its group inside the input, density × the reach's
   columns inside the input events each, each costing the mean of its
   event loop's passes over those columns; the products once a channel
   where its rows have events.
   Three bounds:
   - compute: lane instructions (a warp instruction is 32) against an
     H200's rate (132 SMs × 4 schedulers × 32 lanes × 1.98 GHz; one
     instruction a lane a cycle, no latency, full warps);
   - on-chip memory (L1/shared, 128 B a cycle an SM): the loads of the
     register-tile kernel (a lane's row offsets, 8 B; the events from the
     tile's start to the row's end, 32 at most, 8 B each; the weights of
     the products recomputed), the output-stationary kernel's input and
     weight loads;
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
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H200_LANE_INSTR_S = 132 * 4 * 32 * 1.98e9
H200_ONCHIP_B_S = 132 * 128 * 1.98e9  # L1 / shared memory, 128 B a cycle an SM
H200_DRAM_B_S = 4.8e12
SCATTER_K, SCATTER_SHARED = 64, 10240  # cuda_glue.h


def sass():
    """The kernels' SASS listing and their constant banks 2 by kernel name."""
    cuobjdump = os.environ.get("NEUROC_CUOBJDUMP", "cuobjdump")
    with tempfile.TemporaryDirectory() as d:
        cubin = os.path.join(d, "k.cubin")
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "--fmad=false", "-O3", "-I" + ROOT, "-I" + os.path.join(ROOT, "include"),
                        "-I" + os.path.join(ROOT, "snn/backends/cuda"), "-o", cubin,
                        os.path.join(ROOT, "snn/backends/cuda/cuda_kernels.cu")], check=True)
        text = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True, text=True).stdout
        return text, {kernel_name(k): v for k, v in constant2(cubin).items() if kernel_name(k)}


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


def constant2(cubin):
    """{mangled kernel name: its constant bank 2 (the jump tables of its BRX
    instructions: absolute addresses in the kernel, 32 bits each)} from the
    cubin's .nv.constant2.<name> sections (ELF64)."""
    with open(cubin, "rb") as fh:
        elf = fh.read()
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", elf, shoff + k * shentsize) for k in range(shnum)]
    strtab = sections[shstrndx][4]
    out = {}
    for name_at, _, _, _, offset, size in sections:
        name = elf[strtab + name_at:elf.index(b"\0", strtab + name_at)].decode()
        if name.startswith(".nv.constant2."):
            out[name[len(".nv.constant2."):]] = elf[offset:offset + size]
    return out


def tile_taps(o, kw, s, tile_w=16):
    return sum(1 for j in range(kw) if o - j >= 0 and (o - j) % s == 0 and (o - j) // s < tile_w)


def tile_rows(cpt):
    """tile_rows (cuda_kernels.cu): the output rows a warp holds."""
    return 2 if cpt >= 4 else 4


def tile_w(cpt):
    """tile_w (cuda_kernels.cu): the output columns a warp holds."""
    return 8 if cpt >= 8 else 16


def tile_landed(d, tr, kw, s):
    """tile_landed (cuda_kernels.cu): the output rows input row d of a row group lands on."""
    return sum(1 for r in range(tr) if 0 <= d - r * s < kw)


def main_end(code):
    """The address of the kernel's last EXIT: past it, only the warp
    collectives' divergent fallbacks (BRA.DIV targets, never taken here)."""
    return max(a for a, i in code if re.match(r"(@!?P\d+ )?EXIT", i))


def loops_of(code):
    end = main_end(code)
    return [(branch_target(i), a) for a, i in code
            if a <= end and branch_target(i) is not None and branch_target(i) < a]


def simulate(code, bank, loop, o_reg, o, changed):
    """Warp instructions of one pass through the event loop `loop` for an
    event at column o of the tile, from the loop's head to its back edge:
    the comparisons of o followed, integer arithmetic on o evaluated up to
    the jump table's load (c[0x2]) and the BRX's target; the value test
    (FSETP) true where `changed`, else false (products kept); the
    divergence branches (BRA.DIV) not taken. Returns (instructions, FADDs).
    Anything else it cannot decide stops the model."""
    ins = dict(code)
    addrs = [a for a, _ in code]
    nxt = {a: addrs[k + 1] for k, a in enumerate(addrs[:-1])}
    regs, preds = {o_reg: o}, {"PT": True}
    cmp = {"GT": lambda x, y: x > y, "GE": lambda x, y: x >= y, "LT": lambda x, y: x < y,
           "LE": lambda x, y: x <= y, "EQ": lambda x, y: x == y, "NE": lambda x, y: x != y}

    def val(tok, unsigned=False):
        tok = tok.strip()
        if tok.startswith("-") and not tok.startswith("-0x"):
            v = val(tok[1:])
            return None if v is None else val(hex(-v) if v > 0 else hex(-v))
        if tok == "RZ":
            v = 0
        elif tok in regs:
            v = regs[tok]
        elif re.match(r"-?0x[0-9a-f]+$", tok):
            v = int(tok, 16)
        else:
            return None
        return v & 0xFFFFFFFF if unsigned else ((v + 2 ** 31) % 2 ** 32) - 2 ** 31

    pc, n, fadd = loop[0], 0, 0
    for _ in range(100000):
        i = ins[pc]
        n += 1
        if pc == loop[1]:
            return n, fadd
        g = re.match(r"@(!?)(U?P\w+) (.*)", i)
        body = g.group(3) if g else i
        op = body.split(" ")[0]
        args = [x.strip() for x in body[len(op):].split(",")]
        dest = args[0] if args and re.match(r"R\d+$", args[0]) else None
        if op == "FADD":
            fadd += 1
        m = re.match(r"ISETP\.(GT|GE|LT|LE|EQ|NE)(\.U32)?\.AND$", op)
        if m and val(args[2]) is not None and val(args[3]) is not None and args[4] == "PT":
            u = m.group(2) is not None
            preds[args[0]] = cmp[m.group(1)](val(args[2], u), val(args[3], u))
        elif m:
            preds.pop(args[0], None)
        elif op.startswith("FSETP.NEU"):
            preds[args[0]] = changed
        elif op.startswith("FSETP") or op.startswith("ISETP"):
            preds.pop(args[0], None)
        elif op in ("MOV", "IADD3", "VIADD", "SHF.L.U32", "LDC", "VIMNMX", "VIMNMX.U32", "VIADDMNMX",
                    "VIADDMNMX.U32", "IMAD", "IMAD.MOV", "IMAD.MOV.U32", "IMAD.SHL.U32", "IMAD.IADD") \
                and dest and not g:
            u = op.endswith(".U32") and not op.startswith("IMAD")
            if op == "MOV":
                v = val(args[1])
            elif op.startswith("IMAD"):  # a·b + c
                xs = [val(x) for x in args[1:4]]
                v = None if None in xs else xs[0] * xs[1] + xs[2]
            elif op == "IADD3":
                xs = [val(x) for x in args[1:4]]
                v = None if None in xs else sum(xs)
            elif op == "VIADD":
                x, y = val(args[1]), val(args[2])
                v = None if None in (x, y) else x + y
            elif op == "SHF.L.U32":
                x, y = val(args[1]), val(args[2])
                v = None if None in (x, y) else x << y
            elif op == "LDC":
                mm = re.match(r"c\[0x2\]\[(R\d+)\+?(0x[0-9a-f]+)?\]", args[1])
                x = val(mm.group(1)) if mm else None
                v = None if x is None else struct.unpack_from("<i", bank, x + int(mm.group(2) or "0", 16))[0]
            else:  # min (PT) or max (!PT) of a (+ b)
                xs = [val(x, u) for x in args[1:-1]]
                if None in xs:
                    v = None
                else:
                    a_ = xs[0] + xs[1] if op.startswith("VIADDMNMX") else xs[0]
                    a_ = a_ & 0xFFFFFFFF if u else a_
                    v = (min if args[-1] == "PT" else max)(a_, xs[-1])
            if v is None:
                regs.pop(dest, None)
            else:
                regs[dest] = v
        elif dest == o_reg and op.startswith("LDS"):  # the event's load: its column
            regs[dest] = o
        elif dest:
            regs.pop(dest, None)
        if op == "BRX":
            t = val(args[0].split()[0])
            if t is None:
                sys.exit("cuda_model: a BRX whose target is not known at 0x%x" % pc)
            pc = t
            continue
        if op.startswith("BRA") and not op.startswith("BRA.DIV"):
            taken = True
            if g:
                if g.group(2) not in preds:
                    sys.exit("cuda_model: a branch on an unknown predicate at 0x%x: %s" % (pc, i))
                taken = preds[g.group(2)] != (g.group(1) == "!")
            if taken:
                pc = branch_target(body)
                continue
        if op == "EXIT":
            sys.exit("cuda_model: the event loop exits at 0x%x" % pc)
        pc = nxt[pc]
    sys.exit("cuda_model: no way out of the event loop at 0x%x" % loop[0])


def tile_costs(code, bank, cpt, kw, s):
    """The register-tile kernel's costs from its SASS, in warp instructions:
    {landed rows: [per event column o: the event loop's instructions]} (one
    event loop per input row d of a row group, simulated for each o; loops
    of rows landing on as many output rows side by side), the products'
    recompute (the longer pass when the value changes), an input channel's
    rows outside the event loops (a static count of the channel loop's
    body: an upper bound), and the rest of the kernel a warp (static)."""
    tw = tile_w(cpt)
    ncase = (tw - 1) * s + kw
    loops = loops_of(code)
    event_loops = [l for l in loops if any("BRX" in i for a, i in code if l[0] <= a <= l[1])
                   and not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]
    c_loop = max(loops, key=lambda l: l[1] - l[0])  # the input channels' loop: the outermost
    paths, recompute = {}, 0
    for lo, hi in sorted(event_loops):
        # o: loaded from shared memory (or shuffled) in the loop and compared with the cases
        got = [re.match(r"(?:LDS(?:\.64)?|SHFL\.IDX PT,) (R\d+)", i) for a, i in code if lo <= a <= hi]
        o_reg = next(r.group(1) for r in got if r and any(re.match(r"ISETP\.\w+\.AND P\d, PT, %s, 0x" % r.group(1), i)
                                                           for a, i in code if lo <= a <= hi))
        runs = [simulate(code, bank, (lo, hi), o_reg, o, False) for o in range(ncase)]
        landed = {f // (cpt * tile_taps(o, kw, s, tw)) for o, (_, f) in enumerate(runs) if tile_taps(o, kw, s, tw)}
        if len(landed) != 1 or any(f != cpt * tile_taps(o, kw, s, tw) * min(landed) for o, (_, f) in enumerate(runs)):
            sys.exit("cuda_model: an event loop of conv_tile<%d,%d,%d> whose adds are not CPT × taps × rows"
                     % (cpt, kw, s))
        paths.setdefault(landed.pop(), []).append([n for n, _ in runs])
        recompute = max(recompute, simulate(code, bank, (lo, hi), o_reg, ncase // 2, True)[0] - runs[ncase // 2][0])
    body = sum(1 for a, _ in code if c_loop[0] <= a <= c_loop[1])
    channel = body - sum(sum(1 for a, _ in code if lo <= a <= hi) for lo, hi in event_loops)
    rest = sum(1 for a, _ in code if a <= main_end(code)) - body
    return paths, recompute, channel, rest
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


def tile_layer(costs, C, H, K, k, s, p, d):
    """Warp instructions a frame of the register-tile kernel, the events
    its warps look at, and the bytes they load (event lists, offsets,
    weights). A warp (TR output rows × a tile × 32·CPT channels) goes
    through the input channels; for each, the rows d of its row group that
    are inside the input and land on one of its rows, and in each the
    events in the tile's reach (density × its columns), each costing its
    event loop's pass for its column."""
    paths, recompute, channel, rest = costs
    cpt = tile_cpt(K, k, s)
    TR, TW = tile_rows(cpt), tile_w(cpt)
    ND = (TR - 1) * s + k
    OH = (H + 2 * p - k) // s + 1
    ncase = (TW - 1) * s + k
    tiles = -(-OH // TW)
    chunks = K // (32 * cpt)
    # the event loop of row d: the loops landing on as many rows, in the order of d
    seen, loop_of = {}, {}
    for dd in range(ND):
        n = tile_landed(dd, TR, k, s)
        if n:
            loop_of[dd] = paths[n][seen.get(n, 0)]
            seen[n] = seen.get(n, 0) + 1
    instr = looks = loaded = 0.0
    for g in range(0, OH, TR):
        ihb = g * s - p
        for t in range(tiles):
            base = t * TW * s - p
            cols = [o for o in range(ncase) if 0 <= base + o < H]  # the reach's columns inside the input
            rows = [dd for dd in loop_of if 0 <= ihb + dd < H]
            row_events = d * len(cols)
            # a channel: its rows' events, the rest of the channel loop, the products where some row has events
            ev = sum(row_events * sum(loop_of[dd][o] for o in cols) / len(cols) for dd in rows)
            rec = 1 - (1 - d) ** (len(cols) * len(rows))
            instr += chunks * (C * (channel + ev + rec * recompute) + rest)
            looks += chunks * C * row_events * len(rows)
            # loads a channel: lanes' offsets (8 B each of ND lanes), the events from the tile's start to the
            # row's end, 32 at most a pass (8 B each), the products' weights (k·k·CPT floats a lane)
            tail = d * (H - max(0, base))
            loaded += chunks * C * (ND * 8 + len(rows) * min(32, tail) * 8 + rec * 32 * k * k * cpt * 4)
    return instr, looks, loaded


def main():
    densities = [float(a) for a in sys.argv[1:]] or [0.05, 0.2]
    text, banks = sass()
    code = kernels(text)
    per_step = {}
    print("kernel                  SASS   innermost loops (instructions an iteration / memory ones)")
    for name in sorted(code):
        loops = [loop_stats(code[name], lo, hi) for lo, hi in innermost_loops(code[name])]
        print(f"{name:22s} {len(code[name]):6d}   {loops[:8]}{' …' if len(loops) > 8 else ''}")
        # a tap is one FMUL (--fmad=false: FMUL then FADD); the compiler unrolls
        # the tap loop, so its instructions a tap: an iteration's over its FMULs
        taps = [len(body) / fmul for body, fmul in
                ((b, sum(1 for ins in b if re.match(r"(@!?P\d+ )?FMUL\b", ins)))
                 for b in ([ins for a, ins in code[name] if lo <= a <= hi]
                           for lo, hi in innermost_loops(code[name]))) if fmul]
        if taps and not name.startswith("conv_tile<"):  # the cheapest loop and the dearest
            per_step[name] = (min(taps), max(taps))
    tile = {}
    print("\nregister-tile kernel (warp instructions), simulated on its SASS: an event looked at in an input "
          "row landing on n output rows, one event loop each (min / mean / max over its column in the tile, "
          "adds included; in brackets a channel-tap, every column with all its taps); its instructions "
          "besides the adds; products recomputed; an input channel's rows outside the event loops (static); "
          "the rest of a warp (static)")
    for name in sorted(n for n in code if n.startswith("conv_tile<")):
        cpt, kw, s = (int(x) for x in re.findall(r"\d+", name))
        tile[(cpt, kw, s)] = c = tile_costs(code[name], banks[name], cpt, kw, s)
        taps = sum(cpt * tile_taps(o, kw, s, tile_w(cpt)) for o in range(len(next(iter(c[0].values()))[0])))
        rows = "; ".join(f"n = {n}: " + ", ".join(f"{min(q)}/{sum(q) / len(q):.1f}/{max(q)} ({sum(q) / taps / n:.2f})"
                                                     for q in ps) for n, ps in sorted(c[0].items()))
        besides = [(sum(q) - taps * n) / len(q) for n, ps in c[0].items() for q in ps]  # all but the adds
        print(f"{name:18s} {rows}; besides the adds {min(besides):.1f}-{max(besides):.1f} an event; "
              f"recompute {c[1]}; channel {c[2]}; rest {c[3]}")
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
        warp_instr, looks, loaded = tile_layer(tile[(cpt, k, s)], C, H, K, k, s, p, d) if cpt else (float("inf"), 0, 0)
        spt = 8 if K % 8 == 0 else 4 if K % 4 == 0 else 1  # channels a thread, as nc_cu_conv_event
        stationary_instr = stationary * per_step[f"conv_stationary<{spt}>"][0]
        if spiking and 32 * warp_instr < stationary_instr:  # the cheaper kernel, as choose_conv_kernel
            kern, steps, instr = f"tile<{cpt},{k},{s}>", looks, 32 * warp_instr
            offsets = C * H * -(-OH // tile_w(cpt))
            mem = loaded
        else:
            kern, steps = "stationary", stationary
            instr = stationary_instr
            mem = stationary * (4 + 4 * spt) / spt  # a lane: the input (4 B) and its weights a tap
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
