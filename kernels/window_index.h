/* Index math of windowed layers (Conv2d, Pool2d, MaxPool2d, SpikeMaxPool2d)
 * for the CUDA kernels, shared, for SpikeMaxPool2d, with the CPU backends;
 * the kernels run on the CPU in test_cuda_host (tests/cuda_host/).
 *
 * The cuda backend's Conv2d kernels (cuda_kernels.cu) keep the reference's
 * order of each output's terms (snn/backends/cpu_ref/backend_cpu_ref.c). */
#ifndef NC_KERNELS_WINDOW_INDEX_H
#define NC_KERNELS_WINDOW_INDEX_H

#include <math.h>
#include <stdint.h>

#include "neuron.h"

/* The geometry of a windowed layer. Input (C, H, W), output (K, OH, OW);
 * window kh × kw, stride, padding, dilation (1 for pooling), groups (1 for
 * pooling, where K = C). Sizes fit in int: the backend checks. */
typedef struct nc_win_geom {
    int C, H, W, K, OH, OW;
    int kh, kw, sh, sw, ph, pw, dh, dw;
    int groups;
    int div, dph, dpw; /* Pool2d: per-window divisors counted within the input widened by (dph, dpw) */
} nc_win_geom;

/* Input coordinate of tap i of output coordinate o. */
NC_HD int nc_win_in(int o, int i, int stride, int pad, int dil) { return o * stride - pad + i * dil; }

/* Taps of a window of k that read input coordinate x: the i in [0, k) with
 * x = o·stride − pad + i·dil for an output o in [0, n_out). */
NC_HD int nc_win_taps(int x, int k, int stride, int pad, int dil, int n_out)
{
    int n = 0;
    for (int i = 0; i < k; i++) {
        int t = x + pad - i * dil;
        n += t >= 0 && t % stride == 0 && t / stride < n_out;
    }
    return n;
}

/* Synaptic operations caused by a non-zero input at (ih, iw) of a Conv2d:
 * one multiply-accumulate per tap and output channel of its group. */
NC_HD int64_t nc_conv_input_ops(nc_win_geom g, int ih, int iw)
{
    return (int64_t)nc_win_taps(ih, g.kh, g.sh, g.ph, g.dh, g.OH) * nc_win_taps(iw, g.kw, g.sw, g.pw, g.dw, g.OW) *
           (g.K / g.groups);
}

/* Index of weight (c, i, j, k) in the layout [C_in][kH][kW][C_out/groups]
 * (c the input channel, kl the output channel within its group). */
NC_HD int64_t nc_conv_w_index(nc_win_geom g, int c, int i, int j, int kl)
{
    return (((int64_t)c * g.kh + i) * g.kw + j) * (g.K / g.groups) + kl;
}

/* Taps of window o (k taps from o·stride − pad) inside [−cpad, n + cpad). */
NC_HD int nc_win_span(int o, int k, int stride, int pad, int n, int cpad)
{
    int lo = o * stride - pad, hi = lo + k;
    lo = lo < -cpad ? -cpad : lo;
    hi = hi > n + cpad ? n + cpad : hi;
    return hi > lo ? hi - lo : 0;
}

/* What a sum-pooling window (oh, ow) is multiplied by: scale, or with
 * per-window divisors 1/(its taps counted within the widened input), the
 * divisor of PyTorch's partial windows. */
NC_HD float nc_pool_scale(nc_win_geom g, float scale, int oh, int ow)
{
    if (!g.div)
        return scale;
    int n = nc_win_span(oh, g.kh, g.sh, g.ph, g.H, g.dph) * nc_win_span(ow, g.kw, g.sw, g.pw, g.W, g.dpw);
    return n > 0 ? 1.0f / (float)n : 0.0f;
}

/* Index in a (C, H, W) frame of tap (i, j) of pooling window (oh, ow) of
 * channel c, or -1 where the tap lies in the padding (pools never dilate). */
NC_HD int64_t nc_win_tap(nc_win_geom g, int c, int oh, int ow, int i, int j)
{
    int ih = nc_win_in(oh, i, g.sh, g.ph, 1), iw = nc_win_in(ow, j, g.sw, g.pw, 1);
    return ih < 0 || ih >= g.H || iw < 0 || iw >= g.W ? -1 : ((int64_t)c * g.H + ih) * g.W + iw;
}

/* Output (c, oh, ow) of sum pooling times scale over one frame: the window's
 * non-zero inputs summed from 0 in ascending (i, j), then scaled (by
 * nc_pool_scale); *ops gets
 * their number (padding counts as zeros). */
NC_HD float nc_pool_output(const float *x, nc_win_geom g, float scale, int c, int oh, int ow, int *ops)
{
    float acc = 0.0f;
    int n = 0;
    for (int i = 0; i < g.kh; i++)
        for (int j = 0; j < g.kw; j++) {
            int64_t k = nc_win_tap(g, c, oh, ow, i, j);
            float xv = k < 0 ? 0.0f : x[k];
            if (xv != 0.0f) {
                acc += xv;
                n++;
            }
        }
    *ops = n;
    return acc * nc_pool_scale(g, scale, oh, ow);
}

/* Output (c, oh, ow) of max pooling of currents: the largest input of the
 * window, taps in the padding ignored. */
NC_HD float nc_maxpool_output(const float *x, nc_win_geom g, int c, int oh, int ow)
{
    float m = -INFINITY;
    for (int i = 0; i < g.kh; i++)
        for (int j = 0; j < g.kw; j++) {
            int64_t k = nc_win_tap(g, c, oh, ow, i, j);
            if (k >= 0 && x[k] > m)
                m = x[k];
        }
    return m;
}

/* Spiking max pooling counts each input neuron's spikes in units of that
 * neuron's single spike: unit > 0 is the value one spike of it carries (a
 * SignedIF of bursts, whose event of payload k·unit is a burst of k), 0
 * where any non-zero value is one spike (every other input: one spike a
 * step). What an input value x adds to its count: 0 for x = 0, else k =
 * |x| / unit rounded to the nearest integer (at least 1; 1 when unit is 0),
 * negative (−k, taking k back) for a negative value of a signed input
 * (signed_in); an unsigned input counts any non-zero value as +k. Counts
 * never go below 0: a SignedIF takes back at most the spikes it sent. */
NC_HD int32_t nc_spike_count_delta(float x, float unit, int signed_in)
{
    if (x == 0.0f)
        return 0;
    int32_t k = 1;
    if (unit > 0.0f) {
        float q = fabsf(x) / unit;
        k = q >= 1.5f ? (int32_t)(q + 0.5f) : 1;
    }
    return signed_in && x < 0.0f ? -k : k;
}

/* The payload of a spiking max pool's event when its count moves by d and
 * its winner has value xw this step, single-spike value uw (0: unknown) and
 * moved by dw: d times the winner's single spike, uw, or xw / dw (exact:
 * dw is ±1 where uw is 0), so d = dw = ±1 gives xw exactly. */
NC_HD float nc_spikemax_payload(int32_t d, float xw, float uw, int32_t dw)
{
    float one = uw > 0.0f ? uw : (dw ? xw / (float)dw : 0.0f);
    return (float)d * one;
}

/* The input whose count a spiking max pool's output follows when its
 * window's largest count m moved by d: the first tap (ascending i, j) at m
 * whose count moved this step in d's direction, else the first at m. The
 * taps are base + i·rs + j·cs for i in [i0, i1), j in [j0, j1): the window
 * clipped to the input, in any layout (channel-first or channel-last).
 * *dw gets the winner's move. */
NC_HD int64_t nc_spikemax_winner(const float *x, const float *unit, const uint32_t *cnt, int signed_in, uint32_t m,
                                 int32_t d, int64_t base, int64_t rs, int64_t cs, int64_t i0, int64_t i1, int64_t j0,
                                 int64_t j1, int32_t *dw)
{
    int64_t first = -1;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j1; j++) {
            int64_t k = base + i * rs + j * cs;
            if (cnt[k] != m)
                continue;
            int32_t dk = nc_spike_count_delta(x[k], unit ? unit[k] : 0.0f, signed_in);
            if (d > 0 ? dk > 0 : dk < 0) {
                *dw = dk;
                return k;
            }
            if (first < 0) {
                first = k;
                *dw = dk;
            }
        }
    return first;
}

/* Output (c, oh, ow) of spiking max pooling at one step over a frame x
 * (the input's values), unit (each input's single-spike value,
 * nc_spike_count_delta; NULL: all 0) and cnt (every input's count
 * including this step's); *out_cnt holds the output's count up to the last
 * step. The output's count follows the window's largest input count m:
 * when m moves by d = m − *out_cnt (|d| at most the input's burst B: each
 * input's count moves by at most B a step), the output sends one event of
 * payload d times the single-spike value of the winner: the first input
 * (ascending i, j) at the new max whose count moved this step in d's
 * direction (one did when the max grew; when it fell, every input at the
 * old max fell, and with bursts the one now at the max may have risen to
 * it or stood still: then the first at the new max). The winner's
 * single-spike value is its unit, or (unit 0) its value this step divided
 * by its count's move (±1), so with one spike a step (d = ±1) the output
 * is exactly the winner's value x[k], as ever. Returns the output's value
 * (0 without an event); *delta gets d;
 * *winner (may be NULL: the backends) gets the winner's index in x, and
 * on a step without an event the first input at the window's max count
 * (the one the output's count follows): BPTT training routes each step's
 * gradient there (convert/train/train_spikemax.c). */
NC_HD float nc_spikemax_output(const float *x, const float *unit, const uint32_t *cnt, uint32_t *out_cnt,
                               nc_win_geom g, int signed_in, int c, int oh, int ow, int *delta, int64_t *winner)
{
    uint32_t m = 0;
    for (int i = 0; i < g.kh; i++)
        for (int j = 0; j < g.kw; j++) {
            int64_t k = nc_win_tap(g, c, oh, ow, i, j);
            if (k >= 0 && cnt[k] > m)
                m = cnt[k];
        }
    int32_t d = (int32_t)(m - *out_cnt); /* counts are below 2^31: the difference fits */
    *delta = (int)d;
    if (!d && !winner)
        return 0.0f;
    *out_cnt = m;
    int ih0 = nc_win_in(oh, 0, g.sh, g.ph, 1), iw0 = nc_win_in(ow, 0, g.sw, g.pw, 1);
    int i0 = ih0 < 0 ? -ih0 : 0, i1 = g.H - ih0 < g.kh ? g.H - ih0 : g.kh;
    int j0 = iw0 < 0 ? -iw0 : 0, j1 = g.W - iw0 < g.kw ? g.W - iw0 : g.kw;
    int32_t dw = 0;
    int64_t w = nc_spikemax_winner(x, unit, cnt, signed_in, m, d, ((int64_t)c * g.H + ih0) * g.W + iw0, g.W, 1, i0,
                                   i1, j0, j1, &dw);
    if (winner)
        *winner = w;
    return d ? nc_spikemax_payload(d, x[w], unit ? unit[w] : 0.0f, dw) : 0.0f;
}

/* One step of spiking max pooling over one frame: counts x's spikes into
 * cnt_in (nc_spike_count_delta, in units of unit, may be NULL), then every
 * output (c, oh, ow) in order through nc_spikemax_output into y, its count
 * in cnt_out. Returns the events sent; *burst_ops (may be NULL) gets
 * fan[o] added for each event of |payload| at least two units (fan: the synaptic ops an event of output
 * o causes downstream, nc_snn_event_fanout; NULL: none). win (may be NULL)
 * gets each output's winner (nc_spikemax_output's *winner). */
NC_HD int64_t nc_spikemax_frame(const float *x, const float *unit, uint32_t *cnt_in, uint32_t *cnt_out,
                                nc_win_geom g, int signed_in, float *y, const int32_t *fan, int64_t *burst_ops,
                                int32_t *win)
{
    int64_t spikes = 0;
    for (int64_t k = 0; k < (int64_t)g.C * g.H * g.W; k++)
        cnt_in[k] += (uint32_t)nc_spike_count_delta(x[k], unit ? unit[k] : 0.0f, signed_in);
    for (int c = 0; c < g.C; c++)
        for (int oh = 0; oh < g.OH; oh++)
            for (int ow = 0; ow < g.OW; ow++) {
                int64_t o = ((int64_t)c * g.OH + oh) * g.OW + ow;
                int d;
                int64_t w = -1;
                y[o] = nc_spikemax_output(x, unit, cnt_in, &cnt_out[o], g, signed_in, c, oh, ow, &d, win ? &w : 0);
                if (win)
                    win[o] = (int32_t)w; /* frames fit in int (nc_win_geom) */
                spikes += d != 0;
                if (fan && burst_ops && (d > 1 || d < -1))
                    *burst_ops += fan[o];
            }
    return spikes;
}

#endif
