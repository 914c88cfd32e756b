/* The vector kernels of the cpu-fast backend (snn/backends/cpu_fast/backend_cpu_fast.c), in a
 * portable version (fast_generic.c) and versions for x86 vector extensions
 * (fast_avx2.c, fast_avx512.c), chosen once per plan from what the CPU has.
 *
 * Every version computes exactly what the reference backend computes: an
 * input event adds w·x to its outputs as a multiply and then an add (never a
 * fused multiply-add: -ffp-contract=off, and the intrinsics are separate),
 * the events of a list are applied in their order, and an IF step is
 * m = v + I, s = m >= θ, v = s ? (reset to zero ? 0 : m − θ) : m. So the
 * result is bit for bit the reference's whatever the vector width. */
#ifndef NC_KERNELS_FAST_KERNELS_H
#define NC_KERNELS_FAST_KERNELS_H

#include <stdint.h>

#include "kernels/neuron.h"
#include "kernels/window_index.h"

/* One tap of a convolution or pooling window seen from an input row (or
 * column): the offset it adds to the weights and to the output accumulators. */
typedef struct nc_fast_tap {
    int64_t w_off, a_off;
} nc_fast_tap;

/* A Conv2d as a scatter of input events into channel-last accumulators
 * acc[OH][OW][K]. Weights wt[C_in][kH][kW][K/groups] (fan-out rows).
 * Input position p = ih·W + iw of a channel; rows[ih·kh ..] holds the
 * n_row[ih] taps (i, oh) that input row ih reaches, in ascending i, with
 * w_off = i·kW·kg and a_off = oh·OW·K; cols likewise with j·kg and ow·K. */
typedef struct nc_fast_conv {
    int64_t HW;            /* input positions per channel */
    int64_t cg, kg;        /* input channels and output channels per group */
    int64_t wc;            /* weights per input channel: kH·kW·kg */
    int kh, kw;
    const int32_t *prow, *pcol;   /* per input position: ih, iw */
    const int32_t *n_row, *n_col; /* per input row / column: taps */
    const nc_fast_tap *rows, *cols;
    /* An input's valid taps reach accumulators at fixed distances below a
     * base of its own: rel[i·kw + j] = (⌊i·dil_h/s_h⌋·OW + ⌊j·dil_w/s_w⌋)·K
     * (with stride 1, below the one of tap (0, 0) of an input whose kh·kw
     * taps are all inside the output). */
    const int64_t *rel;
    /* With kh·kw <= 16: per input position p, the taps that reach an output
     * (bit i·kw + j) and the accumulator offset a0[p] = (⌊(ih + p_h)/s_h⌋·OW
     * + ⌊(iw + p_w)/s_w⌋)·K that tap t's is rel[t] below. */
    const uint16_t *tap_mask;
    const int64_t *a0;
    /* The accumulators this call may add to, [a_lo, a_hi): whole output
     * rows (a thread's band, run_conv_block); a tap that reaches another
     * row is skipped and not counted. 0 and INT64_MAX: all. */
    int64_t a_lo, a_hi;
} nc_fast_conv;

typedef struct nc_fast_kernels {
    const char *name; /* "generic", "avx2", "avx512" */
    /* Adds each event (flat input index idx[e], ascending, value val[e]) to
     * the accumulators; returns the synaptic operations (multiply-adds). */
    int64_t (*conv)(const nc_fast_conv *g, const float *wt, const int32_t *idx, const float *val,
                    int64_t n, float *acc);
    /* y[0..out) += wt[idx[e]·out ..] · val[e] for each event, in order. */
    int64_t (*affine)(const float *wt, int64_t out, const int32_t *idx, const float *val, int64_t n,
                      float *y);
    /* IF step over n neurons stored in flat order; bit k of bits is neuron
     * k's spike (every word of the ceil(n/64) is written). Returns the spikes. */
    int64_t (*if_flat)(float *v, const float *cur, const float *theta, int64_t n, int reset_zero,
                       uint64_t *bits);
    /* IF step over neurons stored channel-last, [HW][C]. Spikes go to bits
     * in channel-major order with each channel padded to whole words: the
     * spike of channel c at position p is bit p % 64 of word c·wpc + p / 64
     * (wpc = ceil(HW / 64) words a channel); every word is written.
     * theta is per neuron ([HW][C]) with theta_full, else per channel (C).
     * With pwin (the window of a following pooling that each position falls
     * in, windows disjoint; -1 for none) it also counts every window's
     * spikes: cnt[pwin[p]·C + c] += 1 (cnt is cleared by the caller).
     * With refill (C values), each current is set to refill[c] once read:
     * the bias a convolution's accumulators start the next step from. */
    int64_t (*if_cl)(float *v, float *cur, const float *theta, int theta_full, int64_t HW, int64_t C,
                     int reset_zero, uint64_t *bits, const int32_t *pwin, uint32_t *cnt, const float *refill);
    /* For counts cnt[o·C + c] (o < n): sets bit o % 64 of word c·wpc + o / 64
     * of nz where the count is not zero (every word is written; wpc =
     * ceil(n / 64)), and returns the sum of the counts of the channels whose
     * chmask[c] is all ones (chmask[c] is 0 or ~0). */
    int64_t (*nz_cl)(const uint32_t *cnt, int64_t n, int64_t C, const uint32_t *chmask, uint64_t *nz);
    /* Signed IF step (nc_signed_if_step) over n neurons, any one layout for
     * all arrays: y[k] = s·sv[k] (±spike value, or +0). Returns the spikes
     * of either sign. */
    int64_t (*signed_if)(float *v, int32_t *net, const float *cur, const float *theta, const float *sv, int64_t n,
                         float *y);
    /* The same with bursts of up to `burst` (> 1) spikes a step: y[k] =
     * s·sv[k], s in −burst … burst. Returns the neurons that spiked. */
    int64_t (*signed_burst)(float *v, int32_t *net, const float *cur, const float *theta, const float *sv,
                            int64_t n, int burst, float *y);
    /* One window of a sum pool over channel-last values: y[k] = (+0 + the
     * rows × cols taps x[i·xh + j·xw + k], in (i, j) order) · scale for
     * k < C, as the reference sums them. Returns the taps not zero. */
    int64_t (*pool_cl)(float *y, const float *x, int64_t rows, int64_t cols, int64_t xh, int64_t xw, int64_t C,
                       float scale);
    /* One output position of a depthwise convolution over channel-last
     * values: y[k] += x[i·xh + j·xw + k] · w[i·wh + j·C + k] for the rows ×
     * cols taps in (i, j) order, k < C (a multiply, then an add). The
     * reference skips a zero input; adding its ±0 product changes no sum
     * (an accumulator of −0 may become +0, equal in every comparison).
     * Returns the taps whose input is not zero. */
    int64_t (*dw_cl)(float *y, const float *x, const float *w, int64_t rows, int64_t cols, int64_t xh, int64_t xw,
                     int64_t wh, int64_t C);
    /* The non-zero x[k·stride] (k < n) as events, in ascending k: idx =
     * base + k, val = the value; returns their number. Writes up to 16
     * entries beyond it (the event buffers have room). */
    int64_t (*compact)(const float *x, int64_t stride, int64_t n, int32_t base, int32_t *idx, float *val);
    /* Spiking max pooling's counts (run_spikemax_cl): cnt[k] += the spike
     * count delta of x[k] (nc_spike_count_delta; unit may be NULL: all
     * 0, one spike per non-zero value) for k < n; m[k] =
     * max(m[k], row[k]) for k < n; the bits k of the n <= 64 entries where
     * a[k] != b[k]. */
    void (*count_spikes)(uint32_t *cnt, const float *x, const float *unit, int64_t n, int signed_in);
    /* A Nonlinear layer's loops (fast_nonlinear_impl.h): sum[e] += x[e];
     * totals y into increments over tot (tot the totals); y = t·f(S/t) of
     * an element-wise function; the rows of a LayerNorm or Softmax of one
     * sample (nc_nl_rows_total). */
    void (*nl_sum)(float *restrict sum, const float *restrict x, int64_t n);
    void (*nl_emit)(float *restrict y, float *restrict tot, int64_t n);
    void (*nl_elem)(int fn, float alpha, float beta, const float *S, float *y, int64_t n, float tf);
    void (*nl_rows)(int fn, float eps, const int64_t *shape, int ndim, int axis, const float *S, float *p, int t);
    void (*umax)(uint32_t *m, const uint32_t *row, int64_t n);
    uint64_t (*ne_mask64)(const uint32_t *a, const uint32_t *b, int64_t n);
} nc_fast_kernels;

/* compact from element k0 on, one at a time (branchless: every entry is
 * written, the count advances only for non-zeros): every version's tail. */
static inline int64_t nc_fast_compact_scalar(const float *x, int64_t stride, int64_t n, int32_t base, int32_t *idx,
                                             float *val, int64_t k0)
{
    int64_t m = 0;
    for (int64_t k = k0; k < n; k++) {
        float v = x[k * stride];
        idx[m] = base + (int32_t)k;
        val[m] = v;
        m += v != 0.0f;
    }
    return m;
}

static inline int64_t nc_fast_compact_generic(const float *x, int64_t stride, int64_t n, int32_t base, int32_t *idx,
                                              float *val)
{
    return nc_fast_compact_scalar(x, stride, n, base, idx, val, 0);
}

/* count_spikes, umax and ne_mask64 from entry k0 on, one at a time: every
 * version's tail. */
static inline void nc_fast_count_spikes_scalar(uint32_t *cnt, const float *x, const float *unit, int64_t n,
                                               int signed_in, int64_t k0)
{
    for (int64_t k = k0; k < n; k++)
        cnt[k] += (uint32_t)nc_spike_count_delta(x[k], unit ? unit[k] : 0.0f, signed_in);
}

static inline void nc_fast_umax_scalar(uint32_t *m, const uint32_t *row, int64_t n, int64_t k0)
{
    for (int64_t k = k0; k < n; k++)
        m[k] = row[k] > m[k] ? row[k] : m[k];
}

static inline uint64_t nc_fast_ne_mask64_scalar(const uint32_t *a, const uint32_t *b, int64_t n, int64_t k0)
{
    uint64_t bits = 0;
    for (int64_t k = k0; k < n; k++)
        bits |= (uint64_t)(a[k] != b[k]) << k;
    return bits;
}

static inline void nc_fast_count_spikes_generic(uint32_t *cnt, const float *x, const float *unit, int64_t n,
                                                int signed_in)
{
    nc_fast_count_spikes_scalar(cnt, x, unit, n, signed_in, 0);
}

static inline void nc_fast_umax_generic(uint32_t *m, const uint32_t *row, int64_t n)
{
    nc_fast_umax_scalar(m, row, n, 0);
}

static inline uint64_t nc_fast_ne_mask64_generic(const uint32_t *a, const uint32_t *b, int64_t n)
{
    return nc_fast_ne_mask64_scalar(a, b, n, 0);
}

/* pool_cl for channels [k0, C), one at a time: every version's tail. */
static inline int64_t nc_fast_pool_cl_scalar(float *y, const float *x, int64_t rows, int64_t cols, int64_t xh,
                                             int64_t xw, int64_t C, float scale, int64_t k0)
{
    int64_t nz = 0;
    for (int64_t k = k0; k < C; k++) {
        float acc = 0.0f;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                float v = x[i * xh + j * xw + k];
                acc += v;
                nz += v != 0.0f;
            }
        y[k] = acc * scale;
    }
    return nz;
}

static inline int64_t nc_fast_pool_cl_generic(float *y, const float *x, int64_t rows, int64_t cols, int64_t xh,
                                              int64_t xw, int64_t C, float scale)
{
    return nc_fast_pool_cl_scalar(y, x, rows, cols, xh, xw, C, scale, 0);
}

/* dw_cl for channels [k0, C), one at a time: every version's tail. */
static inline int64_t nc_fast_dw_cl_scalar(float *y, const float *x, const float *w, int64_t rows, int64_t cols,
                                           int64_t xh, int64_t xw, int64_t wh, int64_t C, int64_t k0)
{
    int64_t nz = 0;
    for (int64_t k = k0; k < C; k++) {
        float acc = y[k];
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                float v = x[i * xh + j * xw + k], p = v * w[i * wh + j * C + k];
                acc += p;
                nz += v != 0.0f;
            }
        y[k] = acc;
    }
    return nz;
}

static inline int64_t nc_fast_dw_cl_generic(float *y, const float *x, const float *w, int64_t rows, int64_t cols,
                                            int64_t xh, int64_t xw, int64_t wh, int64_t C)
{
    return nc_fast_dw_cl_scalar(y, x, w, rows, cols, xh, xw, wh, C, 0);
}

/* The signed IF step without branches, for every version's tail:
 * v = m − s·θ is m − θ, m + θ or m − (+0) = m exactly, and s·(spike value)
 * is ±value or +0 (spike values are positive), as the reference's branches
 * give. */
static inline int64_t nc_fast_signed_if_scalar(float *v, int32_t *net, const float *cur, const float *theta,
                                               const float *sv, int64_t n, float *y)
{
    int64_t count = 0;
    for (int64_t k = 0; k < n; k++) {
        float m = v[k] + cur[k], t = theta[k];
        int32_t s = (int32_t)(m >= t) - (int32_t)((m < 0.0f) & (net[k] > 0));
        v[k] = m - (float)s * t;
        net[k] += s;
        y[k] = (float)s * sv[k];
        count += s & 1;
    }
    return count;
}

/* The signed IF step with bursts of up to `burst` spikes (nc_signed_if_step),
 * one neuron at a time: y[k] = s·sv[k]. Returns the neurons that spiked. */
static inline int64_t nc_fast_signed_burst_scalar(float *v, int32_t *net, const float *cur, const float *theta,
                                                  const float *sv, int64_t n, int burst, float *y)
{
    int64_t count = 0;
    for (int64_t k = 0; k < n; k++) {
        int s = nc_signed_if_step(&v[k], &net[k], cur[k], theta[k], burst);
        y[k] = s ? (float)s * sv[k] : 0.0f;
        count += s != 0;
    }
    return count;
}

extern const nc_fast_kernels nc_fast_generic;
/* NULL when not compiled in (not x86-64 or not GCC/Clang). */
const nc_fast_kernels *nc_fast_avx2(void);
const nc_fast_kernels *nc_fast_avx512(void);

/* The kernels to use: `want` ("generic", "avx2", "avx512") if the CPU runs
 * them, else NULL; with want NULL, the widest the CPU runs. */
const nc_fast_kernels *nc_fast_kernels_select(const char *want);

#endif
