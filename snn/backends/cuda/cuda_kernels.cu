// The kernels of the cuda backend (see cuda_glue.h for what each computes).
// Per-element and index math comes from the NC_HD headers in kernels/, which
// the CPU tests exercise too; this file adds only the thread mapping.
// Compiled with --fmad=false: a multiply followed by an add stays two
// roundings, as on the CPU (-ffp-contract=off).
#include <stdint.h>

#include "cuda_glue.h"
#include "kernels/event_index.h"
#include "kernels/hash.h"
#include "kernels/nonlinear.h"
#include "kernels/time_loop.h"
#include "kernels/window_index.h"

// The CPU harness (tests/cuda_host/) counts the work of the conv kernels
// (taps visited, events looked at) through this; on a GPU it is nothing.
#ifndef NC_HOST_WORK
#define NC_HOST_WORK(n) ((void)0)
#endif
#ifdef __CUDACC__
#define NC_UNROLL _Pragma("unroll")
#else
#define NC_UNROLL
#endif
// Hides how a pointer was computed from the compiler (an empty asm that
// may change it), so that it stays one register pair.
#ifdef __CUDA_ARCH__
#define NC_OPAQUE(p) asm("" : "+l"(p))
#else
#define NC_OPAQUE(p) ((void)0)
#endif

namespace {

constexpr int kBlock = 256;
static_assert(NC_CU_FC_MAX_OUT == 65535 * kBlock, "fc_event_kernel: an output block per grid.y index");

// Grid of enough blocks of kBlock threads for n items (grid-stride loops
// cover the rest).
unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kBlock - 1) / kBlock;
    return (unsigned)(b < 1 ? 1 : (b > 65535 * 32 ? 65535 * 32 : b));
}

// Adds a per-thread integer to *total, one atomic per warp (integer sums
// are exact in any order, so this stays deterministic).
__device__ void count_add(nc_cu_count *total, nc_cu_count mine)
{
    for (int o = 16; o > 0; o >>= 1)
        mine += __shfl_down_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine)
        atomicAdd(total, mine);
}

// One block per frame; the block walks the frame kBlock values at a time.
__global__ void compact_kernel(const float *x, int size, uint32_t *mask, int32_t *cnt, int32_t *idx, float *val,
                               nc_cu_count *total)
{
    __shared__ int warp_n[kBlock / 32], warp_off[kBlock / 32];
    const int64_t f = blockIdx.x;
    const float *xf = x + f * size;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t words = nc_bit_words(size);
    int base = 0;
    for (int64_t k0 = 0; k0 < size; k0 += kBlock) {
        int64_t k = k0 + threadIdx.x;
        float v = k < size ? xf[k] : 0.0f;
        int on = k < size && nc_is_event(v);
        uint32_t ballot = __ballot_sync(0xffffffffu, on);
        if (lane == 0) {
            if (nc_bit_word(k) < words)
                mask[f * words + nc_bit_word(k)] = ballot;
            warp_n[warp] = nc_popc32(ballot);
        }
        __syncthreads();
        if (threadIdx.x == 0) { // prefix over the block's warps, in warp order
            int s = 0;
            for (int w = 0; w < kBlock / 32; w++) {
                warp_off[w] = s;
                s += warp_n[w];
            }
            warp_n[0] = s; // the chunk's total, read below
        }
        __syncthreads();
        if (on && idx) {
            int slot = base + warp_off[warp] + nc_compact_slot(ballot, lane);
            idx[f * size + slot] = (int32_t)k;
            val[f * size + slot] = v;
        }
        base += warp_n[0];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        cnt[f] = base;
        atomicAdd(total, (nc_cu_count)base);
    }
}

// Block (output chunk, frame): the frame's events are staged in shared
// memory kBlock at a time and every thread adds them to its output in list
// order (nc_fc_gather), so no two threads write one output: no atomics.
__global__ void fc_event_kernel(const int32_t *idx, const float *val, const int32_t *cnt, int in, const float *wt,
                                const float *bias, int out, float *y)
{
    __shared__ int32_t s_idx[kBlock];
    __shared__ float s_val[kBlock];
    const int64_t f = blockIdx.x;
    const int o = blockIdx.y * kBlock + threadIdx.x;
    const int n = cnt[f];
    float acc = o < out ? bias[o] : 0.0f;
    for (int a0 = 0; a0 < n; a0 += kBlock) {
        int m = n - a0 < kBlock ? n - a0 : kBlock;
        if (threadIdx.x < m) {
            s_idx[threadIdx.x] = idx[f * in + a0 + threadIdx.x];
            s_val[threadIdx.x] = val[f * in + a0 + threadIdx.x];
        }
        __syncthreads();
        if (o < out) {
            acc = nc_fc_gather(acc, s_idx, s_val, m, wt, out, o);
            NC_HOST_WORK(m);
        }
        __syncthreads();
    }
    if (o < out)
        y[f * out + o] = acc;
}

// CPT consecutive floats (16-byte aligned for 4 and 8, 8-byte for 2).
template <int CPT> __device__ __forceinline__ void load_chans(const float *src, float (&out)[CPT])
{
    if constexpr (CPT % 4 == 0) {
NC_UNROLL
        for (int q = 0; q < CPT; q += 4) {
            float4 t = *reinterpret_cast<const float4 *>(src + q);
            out[q] = t.x, out[q + 1] = t.y, out[q + 2] = t.z, out[q + 3] = t.w;
        }
    } else if constexpr (CPT == 2) {
        float2 t = *reinterpret_cast<const float2 *>(src);
        out[0] = t.x, out[1] = t.y;
    } else {
        out[0] = src[0];
    }
}

// Output-stationary Conv2d: one thread per output position and CPT
// consecutive output channels (channel group fastest: the lanes of a warp
// share the input position, so their zero tests agree, and read consecutive
// weights, CPT at once). Each output is the bias, then w·x for each non-zero
// input of its window in ascending (c, i, j): the reference scatters each
// non-zero input (c, ih, iw) in ascending order into the outputs it reaches
// (snn/backends/cpu_ref/backend_cpu_ref.c), and ih = oh·s − p + i·d grows
// with i (iw with j), so every output gets its terms in the same order.
template <int CPT>
__global__ void conv_stationary(const float *x, int64_t total, nc_win_geom g, const float *wt, const float *bias,
                                float *y)
{
    const int64_t in_size = (int64_t)g.C * g.H * g.W, P = (int64_t)g.OH * g.OW;
    const int KQ = g.K / CPT, kg = g.K / g.groups, cg = g.C / g.groups;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int k = (int)(e % KQ) * CPT, p = (int)(e / KQ % P), oh = p / g.OW, ow = p % g.OW, kl = k % kg,
                  c0 = k / kg * cg;
        const int64_t f = e / KQ / P;
        const float *xf = x + f * in_size;
        float acc[CPT], w[CPT];
        load_chans<CPT>(bias + k, acc);
        for (int c = c0; c < c0 + cg; c++)
            for (int i = 0; i < g.kh; i++) {
                const int ih = oh * g.sh - g.ph + i * g.dh;
                if ((unsigned)ih >= (unsigned)g.H)
                    continue;
                const float *row = xf + ((int64_t)c * g.H + ih) * g.W, *w_row = wt + ((c * g.kh + i) * g.kw * kg + kl);
                for (int j = 0; j < g.kw; j++) {
                    const int iw = ow * g.sw - g.pw + j * g.dw;
                    if ((unsigned)iw >= (unsigned)g.W)
                        continue;
                    const float xv = row[iw];
                    if (xv != 0.0f) {
                        load_chans<CPT>(w_row + j * kg, w);
NC_UNROLL
                        for (int q = 0; q < CPT; q++)
                            acc[q] += w[q] * xv;
                    }
                }
            }
NC_UNROLL
        for (int q = 0; q < CPT; q++)
            y[(f * g.K + k + q) * P + p] = acc[q];
        NC_HOST_WORK(cg * g.kh * g.kw * CPT);
    }
}

// Per frame, where each segment of each input row (c, ih) starts in the
// frame's event list (ascending input index, so a row's events are
// contiguous): one thread a (frame, row, segment), a binary search. Segment
// t of a row starts at column t·seg_w − pad (clamped to the row); segs = 1,
// seg_w = pad = 0 gives the rows' starts. rows·segs + 1 entries a frame,
// the last cnt[f].
__global__ void row_offsets_kernel(const int32_t *idx, const int32_t *cnt, int64_t in, int W, int rows, int segs,
                                   int seg_w, int pad, int64_t total, int32_t *off)
{
    const int64_t per_frame = (int64_t)rows * segs + 1;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t f = e / per_frame, rs = e % per_frame;
        int r = (int)(rs / segs), col = (int)(rs % segs) * seg_w - pad;
        col = col < 0 ? 0 : col > W ? W : col;
        const int32_t *list = idx + f * in;
        int lo = 0, hi = cnt[f];
        int64_t first = (int64_t)r * W + col; // past every index for the last entry (r = rows)
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (list[mid] < first)
                lo = mid + 1;
            else
                hi = mid;
        }
        off[e] = lo;
    }
}

// ---- Register-tile event Conv2d (conv_tile_kernel) ----
// A warp holds a tile of TR output rows × TW columns × 32·CPT channels in
// registers (CPT consecutive output channels a lane, tile_rows(CPT) rows of
// tile_w(CPT) columns: 8 × 2 for 8 channels, 16 × 2 for 4, 16 × 4 for 2 and 1)
// of a KW×KW convolution of stride S (both directions, no dilation). For
// each input channel of its group, and each of the ND = (TR − 1)·S + KW
// input rows its output rows read (row d of the group: ih = oh0·S − ph + d)
// in ascending order, it reads the row's events in the tile's reach (one
// segment of the frame's event list, from the tile offsets) and adds w·v to
// the outputs they reach.
// - The loop over d is unrolled: in row d, output row r uses tap row
//   d − r·S, known at compile time, so only the rows it lands on get adds
//   (none issued for the others, no bounds test).
// - An event's column relative to the tile picks, through a switch
//   (compare-and-branch steps and jump tables on sm_90; every lane looks at
//   the same event, so no divergence), the registers it adds to.
// - The lanes load a row's events 32 at a time (one coalesced load each of
//   indices and values) and hand them to the warp one by one with shuffles.
// - The products w·v of all KW tap rows of the channel are kept through
//   its rows while the events' value stays the same (a spike value;
//   recomputed when it changes), so a tap is one add a channel.
// An output gets its terms in ascending (c, ih, iw): channels and their
// rows are visited in that order, for one input row each output is reached
// through one tap, and the events come in ascending iw: bit-identical to
// the reference.
// The output columns and rows a warp holds: TR·TW·CPT accumulators a lane
// (128 at most). With 8 channels a lane, 2 rows of 8 columns rather than
// one of 16: each input row is read by 4 row visits for 2 output rows
// rather than 3 for one, and the products of all tap rows are kept
// through a channel.
__host__ __device__ constexpr int tile_w(int cpt) { return cpt >= 8 ? 8 : 16; }
__host__ __device__ constexpr int tile_rows(int cpt) { return cpt >= 4 ? 2 : 4; }
// (TW − 1)·S + KW event columns reach a tile: the switch's 33 cases cover S ≤ 2, KW ≤ 3
static_assert((tile_w(1) - 1) * 2 + 3 == 33, "conv_tile: one switch case an event column");

// The taps of an event at column O of a tile (O = S·column + j).
template <int O, int KW, int S, int TW> __host__ __device__ constexpr int tile_case_taps()
{
    int n = 0;
    for (int j = 0; j < KW; j++)
        n += O - j >= 0 && (O - j) % S == 0 && (O - j) / S < TW;
    return n;
}

// The output rows of a tile that its input row D lands on (tap row D − r·S in [0, KW)).
template <int D, int TR, int KW, int S> __host__ __device__ constexpr int tile_landed()
{
    int n = 0;
    for (int r = 0; r < TR; r++)
        n += D - r * S >= 0 && D - r * S < KW;
    return n;
}

// An event at column O of the tile in its input row D: for each tap j
// landing there and each output row r that D lands on, its CPT adds of the
// products of tap row D − r·S.
template <int O, int D, int J, int R, int TR, int TW, int CPT, int KW, int S>
__device__ __forceinline__ void tile_case(float (&acc)[TR][TW][CPT], const float (&p)[KW][KW][CPT])
{
    if constexpr (J < KW) {
        if constexpr (R < TR) {
            constexpr int t = O - J, i = D - R * S;
            if constexpr (t >= 0 && t % S == 0 && t / S < TW && i >= 0 && i < KW)
NC_UNROLL
                for (int q = 0; q < CPT; q++)
                    acc[R][t / S][q] += p[i][J][q];
            tile_case<O, D, J, R + 1, TR, TW, CPT, KW, S>(acc, p);
        } else {
            tile_case<O, D, J + 1, 0, TR, TW, CPT, KW, S>(acc, p);
        }
    }
}

// Input row D of the tile's row group (its events from a to a_end, the
// row's end; rb: the index of the tile's column 0 in the row): adds its
// events in the tile's reach. vc: the value p was computed for.
template <int D, int TR, int TW, int CPT, int KW, int S>
__device__ __forceinline__ void tile_row(float (&acc)[TR][TW][CPT], float (&p)[KW][KW][CPT], float &vc,
                                         const int32_t *list, const float *vals, int a, int a_end, int rb,
                                         const float *w_c, int kg)
{
    constexpr int ncase = (TW - 1) * S + KW;
    const int lane = threadIdx.x & 31;
    for (; a < a_end; a += 32) {
        int my_o = ncase;
        float my_v = 0.0f;
        if (lane < a_end - a) {
            my_o = list[a + lane] - rb; // >= 0: the tile's segment starts at column rb or after
            my_v = vals[a + lane];
        }
        // the events in the tile's reach: a prefix (ascending columns)
        const int m = __popc(__ballot_sync(0xffffffffu, my_o < ncase));
        for (int e = 0; e < m; e++) {
            const int o = __shfl_sync(0xffffffffu, my_o, e);
            const float v = __shfl_sync(0xffffffffu, my_v, e);
            NC_HOST_WORK(1);
            if (!(v == vc)) { // a new value: the products again
                vc = v;
NC_UNROLL
                for (int i = 0; i < KW; i++)
NC_UNROLL
                    for (int j = 0; j < KW; j++) {
                        float w[CPT];
                        load_chans<CPT>(w_c + (i * KW + j) * kg, w);
NC_UNROLL
                        for (int q = 0; q < CPT; q++)
                            p[i][j][q] = w[q] * v;
                    }
            }
            switch (o) {
#define NC_TILE_CASE(O)                                                                                            \
    case O:                                                                                                        \
        if constexpr (O < ncase) {                                                                                 \
            tile_case<O, D, 0, 0, TR, TW, CPT, KW, S>(acc, p);                                                 \
            NC_HOST_WORK((CPT * tile_case_taps<O, KW, S, TW>() * tile_landed<D, TR, KW, S>()));                   \
        } else { /* past the reach of a narrower tile */                                                          \
            __builtin_unreachable();                                                                               \
        }                                                                                                          \
        break;
                NC_TILE_CASE(0) NC_TILE_CASE(1) NC_TILE_CASE(2) NC_TILE_CASE(3) NC_TILE_CASE(4)
                NC_TILE_CASE(5) NC_TILE_CASE(6) NC_TILE_CASE(7) NC_TILE_CASE(8) NC_TILE_CASE(9)
                NC_TILE_CASE(10) NC_TILE_CASE(11) NC_TILE_CASE(12) NC_TILE_CASE(13) NC_TILE_CASE(14)
                NC_TILE_CASE(15) NC_TILE_CASE(16) NC_TILE_CASE(17) NC_TILE_CASE(18) NC_TILE_CASE(19)
                NC_TILE_CASE(20) NC_TILE_CASE(21) NC_TILE_CASE(22) NC_TILE_CASE(23) NC_TILE_CASE(24)
                NC_TILE_CASE(25) NC_TILE_CASE(26) NC_TILE_CASE(27) NC_TILE_CASE(28) NC_TILE_CASE(29)
                NC_TILE_CASE(30) NC_TILE_CASE(31) NC_TILE_CASE(32)
#undef NC_TILE_CASE
            default: // o is in [0, ncase)
                __builtin_unreachable();
            }
        }
        if (m < 32) // past the reach or the row's end
            break;
    }
}

// The row group's input rows D, D + 1, … ND − 1 of channel c, in order (my_a,
// my_end: lane d's row's segment start and row end; rb: tile column 0 of
// row 0). Rows that land on no output row of the tile are skipped.
template <int D, int ND, int TR, int TW, int CPT, int KW, int S>
__device__ __forceinline__ void tile_rows_from(float (&acc)[TR][TW][CPT], float (&p)[KW][KW][CPT],
                                               float &vc, const int32_t *list, const float *vals, int my_a,
                                               int my_end, int rb, int W, const float *w_c, int kg)
{
    if constexpr (D < ND) {
        if constexpr (tile_landed<D, TR, KW, S>() > 0) {
            const int a = __shfl_sync(0xffffffffu, my_a, D), a_end = __shfl_sync(0xffffffffu, my_end, D);
            if (a < a_end)
                tile_row<D, TR, TW, CPT, KW, S>(acc, p, vc, list, vals, a, a_end, rb + D * W, w_c, kg);
        }
        tile_rows_from<D + 1, ND, TR, TW, CPT, KW, S>(acc, p, vc, list, vals, my_a, my_end, rb, W, w_c, kg);
    }
}

// Block (frame, TR output rows × tile, chunk of 32·CPT channels), one warp.
template <int CPT, int KW, int S>
__global__ void conv_tile(const int32_t *idx, const float *val, const int32_t *off, int64_t in, nc_win_geom g,
                          const float *wt, const float *bias, float *y)
{
    constexpr int TR = tile_rows(CPT), TW = tile_w(CPT), ND = (TR - 1) * S + KW;
    static_assert(ND <= 32, "conv_tile: a lane a row of the row group");
    const int64_t f = blockIdx.x;
    const int tiles = (g.OW + TW - 1) / TW, oh0 = blockIdx.y / tiles * TR, tile = blockIdx.y % tiles;
    const int ow0 = tile * TW, lane = threadIdx.x & 31, k = (blockIdx.z * 32 + lane) * CPT,
              kg = g.K / g.groups, cg = g.C / g.groups, kl = k % kg, c0 = k / kg * cg;
    const int base = ow0 * S - g.pw, ihb = oh0 * S - g.ph; // input column of case 0, input row of row 0
    const int rows = g.C * g.H;
    const int32_t *list = idx + f * in, *toff = off + f * ((int64_t)rows * tiles + 1);
    const float *vals = val + f * in;
    NC_OPAQUE(list); // a base pointer kept in registers, not f·in + a recomputed an event
    NC_OPAQUE(vals);
    float acc[TR][TW][CPT], p[KW][KW][CPT] = {}, w[CPT]; // p: set at the first event
    load_chans<CPT>(bias + k, w);
NC_UNROLL
    for (int r = 0; r < TR; r++)
NC_UNROLL
        for (int t = 0; t < TW; t++)
NC_UNROLL
            for (int q = 0; q < CPT; q++)
                acc[r][t][q] = w[q];
    // lane d (< ND) looks up row d of the group where it is inside the input
    const bool inside = lane < ND && ihb + lane >= 0 && ihb + lane < g.H;
    for (int c = c0; c < c0 + cg; c++) { // 32-bit offsets inside the frame (the backend checks sizes)
        const int row = c * g.H + ihb + lane;
        int my_a = 0, my_end = 0;
        if (inside) {
            my_a = toff[row * tiles + tile];
            my_end = toff[(row + 1) * tiles]; // the next row's start
        }
        float vc = NAN; // the value p was computed for (none yet)
        tile_rows_from<0, ND, TR, TW, CPT, KW, S>(acc, p, vc, list, vals, my_a, my_end,
                                                   (c * g.H + ihb) * g.W + base, g.W, wt + (c * KW * KW * kg + kl),
                                                   kg);
    }
    const int64_t P = (int64_t)g.OH * g.OW;
    const int n = g.OW - ow0 < TW ? g.OW - ow0 : TW;
NC_UNROLL
    for (int r = 0; r < TR; r++)
NC_UNROLL
        for (int t = 0; t < TW; t++)
            if (oh0 + r < g.OH && t < n)
NC_UNROLL
                for (int q = 0; q < CPT; q++)
                    y[(f * g.K + k + q) * P + (int64_t)(oh0 + r) * g.OW + ow0 + t] = acc[r][t][q];
}

// Event-driven Conv2d: block (frame, band of output rows, chunk of
// NC_CU_SCATTER_K output channels), thread = output channel. The band's
// outputs are accumulated in shared memory, each column by its own thread,
// starting from the bias. The block reads only the events that reach it:
// for each input channel of its groups, in order, the events of the input
// rows whose taps land in the band (one segment of the list, from the row
// offsets), and each thread adds w·v at their taps. An output gets its terms
// in ascending (c, ih, iw), the reference's order: bit-identical. No
// barrier: a thread touches only its own column of s_acc, and every thread
// reads the same event at once (a broadcast load).
__global__ void conv_scatter_kernel(const int32_t *idx, const float *val, const int32_t *off, int64_t in,
                                    nc_win_geom g, const float *wt, const float *bias, int band, float *y)
{
    __shared__ float s_acc[NC_CU_SCATTER_SHARED];
    const int64_t f = blockIdx.x;
    const int b0 = blockIdx.y * band, rows = g.OH - b0 < band ? g.OH - b0 : band;
    const int kc = NC_CU_SCATTER_K, k0 = blockIdx.z * kc, k = k0 + threadIdx.x, kg = g.K / g.groups,
              cg = g.C / g.groups, kl = k % kg, dq = g.dw / g.sw, dr = g.dw % g.sw;
    const int k_last = g.K - k0 < kc ? g.K - 1 : k0 + kc - 1;
    const int c_lo = k0 / kg * cg, c_hi = (k_last / kg + 1) * cg; // the block's groups' input channels
    int ih_lo = b0 * g.sh - g.ph, ih_hi = (b0 + rows - 1) * g.sh - g.ph + (g.kh - 1) * g.dh;
    ih_lo = ih_lo < 0 ? 0 : ih_lo;
    ih_hi = ih_hi >= g.H ? g.H - 1 : ih_hi;
    const int HW = g.H * g.W;
    const int64_t P = (int64_t)g.OH * g.OW;
    const int32_t *list = idx + f * in, *roff = off + f * ((int64_t)g.C * g.H + 1);
    const float *vals = val + f * in;
    for (int p = 0; p < rows * g.OW; p++) // column threadIdx.x: this thread's own
        s_acc[p * kc + threadIdx.x] = k < g.K ? bias[k] : 0.0f;
    for (int c = c_lo; c < c_hi && k < g.K && ih_lo <= ih_hi; c++) {
        const int a_end = roff[c * g.H + ih_hi + 1];
        for (int a = roff[c * g.H + ih_lo]; a < a_end; a++) {
            int ih = list[a] % HW / g.W, iw = list[a] % g.W;
            float v = vals[a];
            NC_HOST_WORK(1);
            if (c / cg != k / kg)
                continue;
            for (int i = 0; i < g.kh; i++) {
                int t = ih + g.ph - i * g.dh, oh = t / g.sh;
                if (t < 0 || t % g.sh || oh < b0 || oh >= b0 + rows)
                    continue;
                const float *w_row = wt + nc_conv_w_index(g, c, i, 0, kl); // tap j at w_row[j · kg]
                float *acc_row = &s_acc[(oh - b0) * g.OW * kc + threadIdx.x]; // column ow at acc_row[ow · kc]
                if (g.sw == 1) { // no division a tap: u falls by dw, and below 0 stays there
                    const float *w = w_row;
                    float *acc = acc_row + (iw + g.pw) * kc; // column u (may start past the row: not touched)
                    for (int j = 0, u = iw + g.pw; j < g.kw && u >= 0; j++, u -= g.dw, w += kg, acc -= g.dw * kc)
                        if (u < g.OW) {
                            *acc += *w * v;
                            NC_HOST_WORK(1);
                        }
                    continue;
                }
                // strided: u = q·sw + r kept by steps of dw (dq, dr), no division a tap
                int u = iw + g.pw, q = u / g.sw, r = u % g.sw;
                for (int j = 0; j < g.kw && u >= 0; j++, u -= g.dw, q -= dq, r -= dr) {
                    if (r < 0) {
                        r += g.sw;
                        q--;
                    }
                    if (r == 0 && q < g.OW) {
                        acc_row[q * kc] += w_row[(int64_t)j * kg] * v;
                        NC_HOST_WORK(1);
                    }
                }
            }
        }
    }
    if (k < g.K)
        for (int p = 0; p < rows * g.OW; p++)
            y[(f * g.K + k) * P + b0 * g.OW + p] = s_acc[p * kc + threadIdx.x];
}

// One thread per mask word: the operations of each event in it.
__global__ void conv_ops_kernel(const uint32_t *mask, int64_t total_words, int64_t words, nc_win_geom g,
                                nc_cu_count *ops)
{
    const int HW = g.H * g.W;
    for (int64_t e0 = blockIdx.x * (int64_t)blockDim.x; e0 < total_words; e0 += (int64_t)gridDim.x * blockDim.x) {
        int64_t e = e0 + threadIdx.x;
        nc_cu_count mine = 0;
        if (e < total_words) {
            int64_t w = e % words;
            for (uint32_t m = mask[e]; m; m &= m - 1) {
                int pos = (int)(w * 32 + __ffs(m) - 1), p = pos % HW;
                mine += (nc_cu_count)nc_conv_input_ops(g, p / g.W, p % g.W);
            }
        }
        count_add(ops, mine);
    }
}

__global__ void pool_kernel(const float *x, int64_t total, nc_win_geom g, float scale, float *y, nc_cu_count *ops)
{
    const int64_t in_size = (int64_t)g.C * g.H * g.W, P = (int64_t)g.OH * g.OW;
    for (int64_t e0 = blockIdx.x * (int64_t)blockDim.x; e0 < total; e0 += (int64_t)gridDim.x * blockDim.x) {
        int64_t e = e0 + threadIdx.x;
        int n = 0;
        if (e < total) {
            int p = (int)(e % P), c = (int)(e / P % g.C);
            int64_t f = e / P / g.C;
            y[e] = nc_pool_output(x + f * in_size, g, scale, c, p / g.OW, p % g.OW, &n);
        }
        count_add(ops, (nc_cu_count)n);
    }
}

__global__ void maxpool_kernel(const float *x, int64_t total, nc_win_geom g, float *y)
{
    const int64_t in_size = (int64_t)g.C * g.H * g.W, P = (int64_t)g.OH * g.OW;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int p = (int)(e % P), c = (int)(e / P % g.C);
        y[e] = nc_maxpool_output(x + e / P / g.C * in_size, g, c, p / g.OW, p % g.OW);
    }
}

__global__ void add_kernel(float *y, const float *x, int64_t x_elems, int64_t total, int first)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        float xv = x[e % x_elems];
        y[e] = first ? xv : y[e] + xv;
    }
}

__global__ void concat_kernel(float *y, const float *x, int64_t part, int64_t x_frames, int64_t size, int64_t off,
                              int64_t total)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x)
        y[nc_concat_dst(e, part, size, off)] = x[nc_concat_src(e, part, x_frames)];
}

__global__ void if_kernel(const float *x, int x_static, int N, int size, int steps, float *v, int32_t *net,
                          const float *theta, const float *sval, int reset_zero, int burst, float *y, float *rec_s,
                          float *rec_v, nc_cu_count *spikes)
{
    const int64_t total = (int64_t)N * size, stride = (int64_t)N * size;
    for (int64_t e0 = blockIdx.x * (int64_t)blockDim.x; e0 < total; e0 += (int64_t)gridDim.x * blockDim.x) {
        int64_t e = e0 + threadIdx.x;
        int n = 0;
        if (e < total) {
            int j = (int)(e % size);
            n = nc_if_over_time(&v[e], net ? &net[e] : nullptr, x + e, x_static ? 0 : stride, y + e, stride, steps,
                                theta[j], sval[j], reset_zero, burst, rec_s ? rec_s + e : nullptr,
                                rec_v ? rec_v + e : nullptr);
        }
        count_add(spikes, (nc_cu_count)n);
    }
}

// One thread per input neuron (sample, index): its counts after each step.
__global__ void spike_count_kernel(const float *x, int x_static, int N, int64_t in, int steps, const float *unit,
                                   uint32_t *cnt, uint32_t *cum, int signed_in)
{
    const int64_t total = (int64_t)N * in;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x)
        nc_spike_count_over_time(&cnt[e], x + e, x_static ? 0 : total, cum + e, total, steps,
                                 unit ? unit[e % in] : 0.0f, signed_in);
}

// One thread per output (sample, c, oh, ow) through the chunk's steps; the
// events' count into spikes, the ops of its bursts (fan, may be null) into
// burst_ops.
__global__ void spikemax_kernel(const float *x, int x_static, const float *unit, const uint32_t *cum, int N,
                                nc_win_geom g, int signed_in, int steps, uint32_t *out_cnt, float *y, float *rec_s,
                                const int32_t *fan, nc_cu_count *spikes, nc_cu_count *burst_ops)
{
    const int64_t in = (int64_t)g.C * g.H * g.W, P = (int64_t)g.OH * g.OW, out = g.C * P, total = N * out;
    for (int64_t e0 = blockIdx.x * (int64_t)blockDim.x; e0 < total; e0 += (int64_t)gridDim.x * blockDim.x) {
        int64_t e = e0 + threadIdx.x, ops = 0;
        int n = 0;
        if (e < total) {
            int64_t smp = e / out, o = e % out;
            int c = (int)(o / P), p = (int)(o % P);
            n = nc_spikemax_over_time(x + smp * in, x_static ? 0 : N * in, unit, cum + smp * in, N * in, &out_cnt[e],
                                      g, signed_in, c, p / g.OW, p % g.OW, y + e, total,
                                      rec_s ? rec_s + e : nullptr, steps, fan ? fan[o] : 0, &ops);
        }
        count_add(spikes, (nc_cu_count)n);
        if (burst_ops)
            count_add(burst_ops, (nc_cu_count)ops);
    }
}

__global__ void sum_steps_kernel(float *acc, const float *x, int x_static, int64_t total, int steps)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x)
        acc[e] = nc_sum_over_time(acc[e], x + e, x_static ? 0 : total, steps);
}

__global__ void poisson_kernel(const float *x, int x_static, int64_t per_step, int t0, int64_t total, uint64_t seed,
                               float *y)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t t = e / per_step, k = e % per_step; // k = sample·size + index, as the reference
        y[e] = nc_poisson_spike(x[x_static ? k : e], seed, (uint64_t)(t0 + t), (uint64_t)k);
    }
}

// One thread per input element (sample, index) through the chunk's steps.
__global__ void nl_sums_kernel(const float *x, int x_static, int64_t total, int steps, float *S, float *cum)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x)
        nc_nl_sum_over_time(&S[e], x + e, x_static ? 0 : total, cum + e, total, steps);
}

// One thread per output of a frame (element-wise, Mul, MatMul) or per row
// (LayerNorm, Softmax): the totals t·f, as the reference computes them.
__global__ void nl_totals_kernel(nc_cu_nl p, const float *cx, const float *cy, int N, int t0, int64_t items,
                                 int64_t per_frame, float *y)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < items; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t f = e / per_frame, r = e % per_frame;
        int t = t0 + (int)(f / N) + 1;
        const float *sx = cx + f * p.xsize;
        float *yf = y + f * p.size;
        if (p.fn == NC_NL_MUL) {
            yf[r] = nc_nl_mul_total(sx[r], cy[f * p.ysize + nc_nl_broadcast_index(p.xshape, p.xnd, p.yshape, p.ynd, r)],
                                    t);
        } else if (p.fn == NC_NL_MATMUL) {
            int64_t b = r / (p.m * p.n), i = r / p.n % p.m, j = r % p.n;
            yf[r] = nc_nl_dot_total(sx + b * p.m * p.k + i * p.xi, p.xq, cy + f * p.ysize + b * p.k * p.n + j * p.yj,
                                    p.yq, p.k, t);
        } else if (p.fn == NC_NL_LAYERNORM || p.fn == NC_NL_SOFTMAX) {
            int64_t base = r / p.inner * p.len * p.inner + r % p.inner;
            nc_nl_row_total(p.fn, p.eps, sx + base, yf + base, p.len, p.inner, t);
        } else {
            yf[r] = (float)t * nc_nl_elem(p.fn, sx[r] / (float)t, p.alpha, p.beta);
        }
    }
}

// One thread per output (sample, index): totals into increments over the steps.
__global__ void nl_emit_kernel(float *y, int64_t total, int steps, float *last)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x)
        nc_nl_emit_over_time(y + e, total, steps, &last[e]);
}

__global__ void fill_i32_kernel(int32_t *p, int32_t v, int64_t n)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x)
        p[e] = v;
}

__global__ void fill_rows_kernel(float *v, const float *v0, int64_t total, int size)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x)
        v[e] = v0[e % size];
}

__global__ void burst_ops_kernel(const float *y, int64_t total, int size, const float *sval, const int32_t *fan,
                                 nc_cu_count *ops)
{
    nc_cu_count n = 0;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int j = (int)(e % size);
        float v = y[e];
        if (v != 0.0f && fabsf(v) != fabsf(sval[j]))
            n += (nc_cu_count)fan[j];
    }
    if (n)
        atomicAdd(ops, n);
}

__global__ void im2col_kernel(const float *x, nc_win_geom g, int64_t total, float *col)
{
    const int kk = g.kh * g.kw, cols = g.C * kk;
    const int64_t P = (int64_t)g.OH * g.OW, in_size = (int64_t)g.C * g.H * g.W;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int q = (int)(e % cols);
        int64_t row = e / cols;
        int p = (int)(row % P), c = q / kk, i = q % kk / g.kw, j = q % g.kw;
        int ih = nc_win_in(p / g.OW, i, g.sh, g.ph, g.dh), iw = nc_win_in(p % g.OW, j, g.sw, g.pw, g.dw);
        col[e] = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W ? x[row / P * in_size + ((int64_t)c * g.H + ih) * g.W + iw]
                                                             : 0.0f;
    }
}

__global__ void cl_to_nchw_kernel(const float *ycl, const float *bias, int K, int64_t P, int64_t total, float *y)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = e % P, k = e / P % K, f = e / P / K;
        y[e] = ycl[(f * P + p) * K + k] + bias[k];
    }
}

// One block: exclusive scan of the counts, kBlock at a time, in order.
__global__ void scan_kernel(const int32_t *cnt, int frames, int32_t *rowptr)
{
    __shared__ int32_t s[kBlock];
    int32_t carry = 0;
    for (int f0 = 0; f0 < frames; f0 += kBlock) {
        int f = f0 + threadIdx.x;
        s[threadIdx.x] = f < frames ? cnt[f] : 0;
        __syncthreads();
        for (int o = 1; o < kBlock; o <<= 1) { // Hillis-Steele inclusive scan
            int32_t add = threadIdx.x >= o ? s[threadIdx.x - o] : 0;
            __syncthreads();
            s[threadIdx.x] += add;
            __syncthreads();
        }
        if (f < frames)
            rowptr[f] = carry + s[threadIdx.x] - (f < frames ? cnt[f] : 0);
        carry += s[kBlock - 1];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        rowptr[frames] = carry;
}

__global__ void csr_pack_kernel(const int32_t *idx, const float *val, const int32_t *cnt, int in,
                                const int32_t *rowptr, int32_t *col, float *vals)
{
    const int64_t f = blockIdx.x;
    for (int a = threadIdx.x; a < cnt[f]; a += blockDim.x) {
        col[rowptr[f] + a] = idx[f * in + a];
        vals[rowptr[f] + a] = val[f * in + a];
    }
}

template <int CPT, int KW, int S>
void launch_tile(cudaStream_t st, dim3 grid, const int32_t *idx, const float *val, const int32_t *off, int64_t in,
                 nc_win_geom g, const float *wt, const float *bias, float *y)
{
    auto conv_tile_kernel = conv_tile<CPT, KW, S>; // the harness names a launch by this
    conv_tile_kernel<<<grid, 32, 0, st>>>(idx, val, off, in, g, wt, bias, y);
}

template <int CPT>
void launch_tile_cpt(cudaStream_t st, dim3 grid, const int32_t *idx, const float *val, const int32_t *off,
                     int64_t in, nc_win_geom g, const float *wt, const float *bias, float *y)
{
    if (g.kw == 3)
        (g.sw == 1 ? launch_tile<CPT, 3, 1> : launch_tile<CPT, 3, 2>)(st, grid, idx, val, off, in, g, wt, bias, y);
    else
        (g.sw == 1 ? launch_tile<CPT, 1, 1> : launch_tile<CPT, 1, 2>)(st, grid, idx, val, off, in, g, wt, bias, y);
}
} // namespace

extern "C" {

cudaError_t nc_cu_compact(cudaStream_t st, const float *x, int frames, int size, uint32_t *mask, int32_t *cnt,
                          int32_t *idx, float *val, nc_cu_count *total)
{
    compact_kernel<<<frames, kBlock, 0, st>>>(x, size, mask, cnt, idx, val, total);
    return cudaGetLastError();
}

cudaError_t nc_cu_fc_event(cudaStream_t st, const int32_t *idx, const float *val, const int32_t *cnt, int in,
                           const float *wt, const float *bias, int frames, int out, float *y)
{
    dim3 grid((unsigned)frames, (unsigned)((out + kBlock - 1) / kBlock)); // frames may pass 65535: x
    fc_event_kernel<<<grid, kBlock, 0, st>>>(idx, val, cnt, in, wt, bias, out, y);
    return cudaGetLastError();
}

cudaError_t nc_cu_conv_event(cudaStream_t st, const float *x, int frames, nc_win_geom g, const float *wt,
                             const float *bias, float *y)
{
    const int kg = g.K / g.groups, cpt = kg % 8 == 0 ? 8 : kg % 4 == 0 ? 4 : 1;
    int64_t total = (int64_t)frames * g.K / cpt * g.OH * g.OW;
    auto conv_event_kernel = cpt == 8   ? conv_stationary<8> // the harness's name for it
                             : cpt == 4 ? conv_stationary<4>
                                        : conv_stationary<1>;
    conv_event_kernel<<<blocks_for(total), kBlock, 0, st>>>(x, total, g, wt, bias, y);
    return cudaGetLastError();
}

int nc_cu_scatter_band(nc_win_geom g)
{
    int band = NC_CU_SCATTER_SHARED / (g.OW * NC_CU_SCATTER_K);
    return band < 1 ? 0 : band > g.OH ? g.OH : band;
}

int nc_cu_conv_tile_cpt(nc_win_geom g)
{
    int kg = g.K / g.groups;
    if ((g.kw != 1 && g.kw != 3) || (g.sw != 1 && g.sw != 2) || g.kh != g.kw || g.sh != g.sw || g.dw != 1 ||
        g.dh != 1)
        return 0;
    int cpt = kg % 256 == 0 ? 8 : kg % 128 == 0 ? 4 : kg % 64 == 0 ? 2 : kg % 32 == 0 ? 1 : 0;
    int64_t tiles = (g.OH + tile_rows(cpt) - 1) / tile_rows(cpt) * (int64_t)((g.OW + tile_w(cpt) - 1) / tile_w(cpt));
    return tiles > 65535 ? 0 : cpt;
}

int nc_cu_conv_tile_rows(int cpt) { return tile_rows(cpt); }

int nc_cu_conv_tile_w(int cpt) { return tile_w(cpt); }

int64_t nc_cu_scatter_offsets(nc_win_geom g)
{
    int64_t rows = (int64_t)g.C * g.H;
    int cpt = nc_cu_conv_tile_cpt(g);
    return cpt ? rows * ((g.OW + tile_w(cpt) - 1) / tile_w(cpt)) + 1
           : nc_cu_scatter_band(g) ? rows + 1
                                   : 0;
}

cudaError_t nc_cu_conv_scatter(cudaStream_t st, const int32_t *idx, const float *val, const int32_t *cnt,
                               int32_t *row_off, int frames, nc_win_geom g, const float *wt, const float *bias,
                               float *y)
{
    int band = nc_cu_scatter_band(g), cpt = nc_cu_conv_tile_cpt(g);
    if (band < 1 && !cpt)
        return cudaErrorInvalidValue;
    int tw = cpt ? tile_w(cpt) : 0, tiles = cpt ? (g.OW + tw - 1) / tw : 1;
    int64_t in = (int64_t)g.C * g.H * g.W, offs = (int64_t)frames * nc_cu_scatter_offsets(g);
    row_offsets_kernel<<<blocks_for(offs), kBlock, 0, st>>>(idx, cnt, in, g.W, g.C * g.H, tiles,
                                                            tw * g.sw, cpt ? g.pw : 0, offs, row_off);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    if (cpt) {
        dim3 grid((unsigned)frames, (unsigned)((g.OH + tile_rows(cpt) - 1) / tile_rows(cpt) * tiles),
                  (unsigned)(g.K / (32 * cpt)));
        (cpt == 8   ? launch_tile_cpt<8>
         : cpt == 4 ? launch_tile_cpt<4>
         : cpt == 2 ? launch_tile_cpt<2>
                    : launch_tile_cpt<1>)(st, grid, idx, val, row_off, in, g, wt, bias, y);
        return cudaGetLastError();
    }
    dim3 grid((unsigned)frames, (unsigned)((g.OH + band - 1) / band),
              (unsigned)((g.K + NC_CU_SCATTER_K - 1) / NC_CU_SCATTER_K));
    conv_scatter_kernel<<<grid, NC_CU_SCATTER_K, 0, st>>>(idx, val, row_off, in, g, wt, bias, band, y);
    return cudaGetLastError();
}

cudaError_t nc_cu_conv_ops(cudaStream_t st, const uint32_t *mask, int frames, nc_win_geom g, nc_cu_count *ops)
{
    int64_t words = nc_bit_words((int64_t)g.C * g.H * g.W), total = words * frames;
    conv_ops_kernel<<<blocks_for(total), kBlock, 0, st>>>(mask, total, words, g, ops);
    return cudaGetLastError();
}

cudaError_t nc_cu_pool(cudaStream_t st, const float *x, int frames, nc_win_geom g, float scale, float *y,
                       nc_cu_count *ops)
{
    int64_t total = (int64_t)frames * g.C * g.OH * g.OW;
    pool_kernel<<<blocks_for(total), kBlock, 0, st>>>(x, total, g, scale, y, ops);
    return cudaGetLastError();
}

cudaError_t nc_cu_maxpool(cudaStream_t st, const float *x, int frames, nc_win_geom g, float *y)
{
    int64_t total = (int64_t)frames * g.C * g.OH * g.OW;
    maxpool_kernel<<<blocks_for(total), kBlock, 0, st>>>(x, total, g, y);
    return cudaGetLastError();
}

cudaError_t nc_cu_concat(cudaStream_t st, float *y, const float *x, int x_frames, int frames, int64_t part,
                         int64_t size, int64_t off)
{
    int64_t total = (int64_t)frames * part;
    concat_kernel<<<blocks_for(total), kBlock, 0, st>>>(y, x, part, x_frames, size, off, total);
    return cudaGetLastError();
}

cudaError_t nc_cu_add(cudaStream_t st, float *y, const float *x, int x_frames, int frames, int64_t size, int first)
{
    int64_t total = (int64_t)frames * size;
    add_kernel<<<blocks_for(total), kBlock, 0, st>>>(y, x, (int64_t)x_frames * size, total, first);
    return cudaGetLastError();
}

cudaError_t nc_cu_if(cudaStream_t st, const float *x, int x_static, int N, int size, int steps, float *v,
                     int32_t *net, const float *theta, const float *sval, int reset_zero, int burst, float *y,
                     float *rec_s, float *rec_v, nc_cu_count *spikes)
{
    if_kernel<<<blocks_for((int64_t)N * size), kBlock, 0, st>>>(x, x_static, N, size, steps, v, net, theta, sval,
                                                                reset_zero, burst, y, rec_s, rec_v, spikes);
    return cudaGetLastError();
}

cudaError_t nc_cu_spikemax(cudaStream_t st, const float *x, int x_static, int N, nc_win_geom g, int steps,
                           int signed_in, const float *unit, uint32_t *in_cnt, uint32_t *cum, uint32_t *out_cnt,
                           float *y, float *rec_s, const int32_t *fan, nc_cu_count *spikes, nc_cu_count *burst_ops)
{
    int64_t in = (int64_t)g.C * g.H * g.W, out = (int64_t)g.C * g.OH * g.OW;
    spike_count_kernel<<<blocks_for(N * in), kBlock, 0, st>>>(x, x_static, N, in, steps, unit, in_cnt, cum,
                                                              signed_in);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    spikemax_kernel<<<blocks_for(N * out), kBlock, 0, st>>>(x, x_static, unit, cum, N, g, signed_in, steps, out_cnt,
                                                            y, rec_s, fan, spikes, burst_ops);
    return cudaGetLastError();
}

cudaError_t nc_cu_sum_steps(cudaStream_t st, float *acc, const float *x, int x_static, int N, int size, int steps)
{
    int64_t total = (int64_t)N * size;
    sum_steps_kernel<<<blocks_for(total), kBlock, 0, st>>>(acc, x, x_static, total, steps);
    return cudaGetLastError();
}

cudaError_t nc_cu_poisson(cudaStream_t st, const float *x, int x_static, int N, int size, int t0, int steps,
                          uint64_t seed, float *y)
{
    int64_t per_step = (int64_t)N * size, total = per_step * steps;
    poisson_kernel<<<blocks_for(total), kBlock, 0, st>>>(x, x_static, per_step, t0, total, seed, y);
    return cudaGetLastError();
}

cudaError_t nc_cu_nl_sums(cudaStream_t st, const float *x, int x_static, int N, int64_t size, int steps, float *S,
                          float *cum)
{
    int64_t total = (int64_t)N * size;
    nl_sums_kernel<<<blocks_for(total), kBlock, 0, st>>>(x, x_static, total, steps, S, cum);
    return cudaGetLastError();
}

cudaError_t nc_cu_nonlinear(cudaStream_t st, const nc_cu_nl *p, const float *cx, const float *cy, int N, int t0,
                            int steps, float *last, float *y)
{
    int row = p->fn == NC_NL_LAYERNORM || p->fn == NC_NL_SOFTMAX;
    int64_t per_frame = row ? p->size / p->len : p->size, frames = (int64_t)steps * N;
    nl_totals_kernel<<<blocks_for(frames * per_frame), kBlock, 0, st>>>(*p, cx, cy, N, t0, frames * per_frame,
                                                                        per_frame, y);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    nl_emit_kernel<<<blocks_for((int64_t)N * p->size), kBlock, 0, st>>>(y, (int64_t)N * p->size, steps, last);
    return cudaGetLastError();
}

cudaError_t nc_cu_fill_i32(cudaStream_t st, int32_t *p, int32_t v, int64_t n)
{
    fill_i32_kernel<<<blocks_for(n), kBlock, 0, st>>>(p, v, n);
    return cudaGetLastError();
}

cudaError_t nc_cu_fill_rows(cudaStream_t st, float *v, const float *v0, int rows, int size)
{
    int64_t total = (int64_t)rows * size;
    fill_rows_kernel<<<blocks_for(total), kBlock, 0, st>>>(v, v0, total, size);
    return cudaGetLastError();
}

cudaError_t nc_cu_burst_ops(cudaStream_t st, const float *y, int frames, int size, const float *sval,
                            const int32_t *fan, nc_cu_count *ops)
{
    int64_t total = (int64_t)frames * size;
    burst_ops_kernel<<<blocks_for(total), kBlock, 0, st>>>(y, total, size, sval, fan, ops);
    return cudaGetLastError();
}

cudaError_t nc_cu_im2col(cudaStream_t st, const float *x, nc_win_geom g, int nf, float *col)
{
    int64_t total = (int64_t)nf * g.OH * g.OW * g.C * g.kh * g.kw;
    im2col_kernel<<<blocks_for(total), kBlock, 0, st>>>(x, g, total, col);
    return cudaGetLastError();
}

cudaError_t nc_cu_cl_to_nchw_bias(cudaStream_t st, const float *ycl, const float *bias, int nf, int K, int P,
                                  float *y)
{
    int64_t total = (int64_t)nf * K * P;
    cl_to_nchw_kernel<<<blocks_for(total), kBlock, 0, st>>>(ycl, bias, K, P, total, y);
    return cudaGetLastError();
}

cudaError_t nc_cu_csr_pack(cudaStream_t st, const int32_t *idx, const float *val, const int32_t *cnt, int in,
                           int frames, int32_t *rowptr, int32_t *col, float *vals)
{
    scan_kernel<<<1, kBlock, 0, st>>>(cnt, frames, rowptr);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    csr_pack_kernel<<<frames, kBlock, 0, st>>>(idx, val, cnt, in, rowptr, col, vals);
    return cudaGetLastError();
}

} // extern "C"
