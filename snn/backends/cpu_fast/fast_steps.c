/* The per-step work of the cpu-fast backend: how each layer's value is read
 * (as dense values, or as events in the reference's order), the layers
 * that are not plain kernel calls (pooling, max pooling, Add, Concat, LIF), traces,
 * Poisson input, and one sample's run over all steps. See the design notes
 * at the top of snn/backends/cpu_fast/backend_cpu_fast.c. */
#include <math.h>
#include <sched.h>
#include <string.h>

#include "fast_plan.h"
#include "snn/base/clock.h"
#include "kernels/neuron.h"
#include "kernels/nir_neuron.h"
#include "kernels/window_index.h"
#include "snn/backends/weight_layout.h"

/* ------------------------------------------------------------ run: values */

/* The dense value of view layer j (NULL if it holds spikes or counts). */
static const float *dense_of(const fast_ws *W, int j, const fast_layer *F)
{
    if (F->rep != REP_DENSE)
        return NULL;
    return j == 0 ? W->in : W->dense[j];
}

/* Layer j's value (j a view) in NCHW order into dst. */
static void materialize(const fast_plan *P, const fast_ws *W, int j, float *dst)
{
    const fast_layer *F = &P->L[j];
    int64_t size = F->size;
    const float *x = dense_of(W, j, F);
    if (x && !F->cl) {
        memcpy(dst, x, (size_t)size * sizeof *dst);
    } else if (x) {
        for (int64_t c = 0; c < F->C; c++)
            for (int64_t p = 0; p < F->HW; p++)
                dst[c * F->HW + p] = x[p * F->C + c];
    } else if (F->rep == REP_SPIKES) {
        memset(dst, 0, (size_t)size * sizeof *dst);
        const uint64_t *b = W->bits[j];
        for (int64_t c = 0; c < F->BC; c++)
            for (int64_t wi = 0; wi < F->wpc; wi++)
                for (uint64_t m = b[c * F->wpc + wi]; m; m &= m - 1) {
                    int64_t k = c * F->BHW + wi * 64 + __builtin_ctzll(m);
                    dst[k] = F->sval ? F->sval[k] : 1.0f;
                }
    } else {
        const uint32_t *cnt = W->cnt[j];
        for (int64_t c = 0; c < F->C; c++)
            for (int64_t p = 0; p < F->HW; p++)
                dst[c * F->HW + p] = F->vtab[c * F->kk1 + cnt[p * F->C + c]];
    }
}

/* Elements [off, off + n) of view layer j's NCHW order into dst, straight
 * from its dense value (a Reshape's range: attention's heads): copied, or
 * gathered from channel-last; else through a whole materialised copy in tmp. */
static void materialize_range(const fast_plan *P, const fast_ws *W, int j, int64_t off, int64_t n, float *tmp,
                              float *dst)
{
    const fast_layer *F = &P->L[j];
    const float *x = j == 0 ? NULL : dense_of(W, j, F);
    if (x && !F->cl) {
        memcpy(dst, x + off, (size_t)n * sizeof *dst);
    } else if (x) {
        for (int64_t k = off; k < off + n;) { /* a channel at a time */
            int64_t c = k / F->HW, p = k % F->HW, end = (c + 1) * F->HW < off + n ? (c + 1) * F->HW : off + n;
            for (; k < end; k++, p++)
                dst[k - off] = x[p * F->C + c];
        }
    } else {
        materialize(P, W, j, tmp);
        memcpy(dst, tmp + off, (size_t)n * sizeof *dst);
    }
}

/* The bits of word wi (positions wi·64 ..) that lie in [p0, p1). */
static inline uint64_t word_range(int64_t wi, int64_t p0, int64_t p1)
{
    int64_t lo = p0 - wi * 64, hi = p1 - wi * 64;
    uint64_t m = hi >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1;
    return lo > 0 ? m & ~((UINT64_C(1) << lo) - 1) : m;
}

/* The non-zero values of view layer j at positions [p0, p1) of each
 * channel (all: 0 and HW) as events in ascending NCHW index (the order
 * the reference visits them in). Returns their number. Dense values are
 * compacted by K->compact, counts without branches: every element is
 * written and the count advances only for non-zeros (which spikes would
 * otherwise make unpredictable). */
static int64_t events(const fast_plan *P, const fast_ws *W, int j, int64_t p0, int64_t p1, int32_t *idx, float *val)
{
    const fast_layer *F = &P->L[j];
    int64_t n = 0;
    const float *x = dense_of(W, j, F);
    if (x && !F->cl && p0 == 0 && p1 == F->HW) { /* all of it, in storage order */
        n = P->K->compact(x, 1, F->size, 0, idx, val);
    } else if (x) {
        int64_t xc = F->cl ? 1 : F->HW, xp = F->cl ? F->C : 1;
        for (int64_t c = 0; c < F->C; c++)
            n += P->K->compact(x + c * xc + p0 * xp, xp, p1 - p0, (int32_t)(c * F->HW + p0), idx + n, val + n);
    } else if (F->rep == REP_SPIKES) {
        const uint64_t *b = W->bits[j];
        if (F->BC != F->C) { /* one row of all the neurons (not rank 3): the whole range */
            p0 = 0;
            p1 = F->BHW;
        }
        for (int64_t c = 0; c < F->BC; c++)
            for (int64_t wi = p0 / 64; wi * 64 < p1; wi++)
                for (uint64_t m = b[c * F->wpc + wi] & word_range(wi, p0, p1); m; m &= m - 1) {
                    int64_t k = c * F->BHW + wi * 64 + __builtin_ctzll(m);
                    float v = F->sval ? F->sval[k] : 1.0f;
                    idx[n] = (int32_t)k;
                    val[n] = v;
                    n += v != 0.0f;
                }
    } else { /* counts: the non-empty windows */
        const uint32_t *cnt = W->cnt[j];
        const uint64_t *nz = W->nz[j];
        for (int64_t c = 0; c < F->BC; c++) {
            const float *tab = F->vtab + c * F->kk1;
            for (int64_t wi = p0 / 64; wi * 64 < p1; wi++)
                for (uint64_t m = nz[c * F->wpc + wi] & word_range(wi, p0, p1); m; m &= m - 1) {
                    int64_t o = wi * 64 + __builtin_ctzll(m), k = c * F->HW + o;
                    float v = tab[cnt[o * F->C + c]];
                    idx[n] = (int32_t)k;
                    val[n] = v;
                    n += v != 0.0f;
                }
        }
    }
    return n;
}

/* ------------------------------------------------------------ run: layers */

/* The taps [*i0, *i1) of window o (k taps of dilation dil from *start =
 * o·stride − pad) that lie inside [0, n); empty when *i1 <= *i0. */
static inline void win_taps(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t n,
                            int64_t *start, int64_t *i0, int64_t *i1)
{
    int64_t s = o * stride - pad, hi = n - 1 - s < 0 ? 0 : (n - 1 - s) / dil + 1;
    *start = s;
    *i0 = s < 0 ? (-s + dil - 1) / dil : 0;
    *i1 = hi < k ? hi : k;
}

/* Spikes per window (unless the IF kernel counted them already), then which
 * windows got any; the synaptic ops are the counts (a spike is added once
 * per window it falls in). */
static __attribute__((noinline)) int64_t run_pool_counts(const fast_plan *P, const fast_ws *W,
                                                         const nc_snn_layer *L, int i)
{
    const fast_layer *F = &P->L[i];
    int j = P->L[L->inputs[0]].view;
    const fast_layer *S = &P->L[j];
    uint32_t *cnt = W->cnt[i];
    int64_t C = F->C, kh = L->kernel[0], kw = L->kernel[1], wpc = S->wpc;
    if (S->fused_pool != i) {
        memset(cnt, 0, (size_t)F->size * sizeof *cnt);
        const uint64_t *b = W->bits[j];
        for (int64_t c = 0; c < S->BC; c++)
            for (int64_t wi = 0; wi < wpc; wi++)
                for (uint64_t m = b[c * wpc + wi]; m; m &= m - 1) {
                    int64_t p = wi * 64 + __builtin_ctzll(m), h = F->prow[p], x = F->pcol[p];
                    int nr = F->n_row[h], nq = F->n_col[x];
                    for (int r = 0; r < nr; r++)
                        for (int q = 0; q < nq; q++)
                            cnt[(F->rows[h * kh + r].a_off + F->cols[x * kw + q].a_off) * C + c]++;
                }
    }
    return P->K->nz_cl(cnt, F->HW, C, F->chmask, W->nz[i]);
}

/* Sum pooling of a dense value (layout of x: xcl), output in layout F->cl.
 * Each window's taps inside the input are summed in the reference's
 * (i, j) order; adding a zero leaves a sum as the reference's skip of
 * zeros does (it starts at +0, and a sum of non-zeros is never −0). Both
 * channel-last: all channels of a window at once (K->pool_cl); else channel
 * by channel. */
static int64_t run_pool_dense(const nc_fast_kernels *K, const nc_snn_layer *L, const nc_snn_layer *X,
                              const fast_layer *F, const float *restrict x, int xcl, float *restrict y)
{
    int64_t C = X->shape[0], H = X->shape[1], Wd = X->shape[2], OH = L->shape[1], OW = L->shape[2], ops = 0;
    int64_t kh = L->kernel[0], kw = L->kernel[1], sh = L->stride[0], sw = L->stride[1];
    int64_t ph = L->padding[0], pw = L->padding[1];
    int64_t xc = xcl ? 1 : H * Wd, xw = xcl ? C : 1, xh = Wd * xw; /* strides of x */
    int cl = xcl && F->cl;
    nc_win_geom g = nc_snn_win_geom(L, X); /* per-window divisors: the reference's nc_pool_scale */
    for (int64_t c = 0; c < (cl ? 1 : C); c++)
        for (int64_t oh = 0; oh < OH; oh++) {
            int64_t ih0, i0, i1;
            win_taps(oh, kh, sh, ph, 1, H, &ih0, &i0, &i1);
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t iw0, j0, j1;
                win_taps(ow, kw, sw, pw, 1, Wd, &iw0, &j0, &j1);
                float scale = nc_pool_scale(g, L->scale, (int)oh, (int)ow);
                if (cl) {
                    ops += K->pool_cl(y + (oh * OW + ow) * C, x + (ih0 + i0) * xh + (iw0 + j0) * xw, i1 - i0,
                                      j1 - j0, xh, xw, C, scale);
                    continue;
                }
                const float *xb = x + c * xc;
                float acc = 0.0f;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t j = j0; j < j1; j++) {
                        float xv = xb[(ih0 + i) * xh + (iw0 + j) * xw];
                        acc += xv;
                        ops += xv != 0.0f;
                    }
                y[at(F->cl, C, OH * OW, c, oh * OW + ow)] = acc * scale;
            }
        }
    return ops;
}

/* Output rows [oh0, oh1) of a depthwise convolution (plan_depthwise) of the
 * channel-last x into the channel-last acc: each output position's valid
 * taps, all channels at once, after its start (conv_bias) is copied, while
 * the row is in cache. */
static int64_t run_dwconv_nchw(const nc_fast_kernels *K, const nc_snn_layer *L, const nc_snn_layer *X,
                               const fast_layer *F, const float *restrict x, float *restrict acc,
                               const float *restrict start, int64_t oh0, int64_t oh1);

static int64_t run_dwconv(const nc_fast_kernels *K, const nc_snn_layer *L, const nc_snn_layer *X,
                          const fast_layer *F, const float *restrict x, float *restrict acc, const float *start,
                          int64_t oh0, int64_t oh1)
{
    if (!F->cl)
        return run_dwconv_nchw(K, L, X, F, x, acc, start, oh0, oh1);
    int64_t C = F->C, H = X->shape[1], Wd = X->shape[2], OW = L->shape[2], ops = 0;
    int64_t kh = L->weight->shape[2], kw = L->weight->shape[3], sh = L->stride[0], sw = L->stride[1];
    int64_t dh = L->dilation[0], dw = L->dilation[1];
    for (int64_t oh = oh0; oh < oh1; oh++) {
        int64_t ih0, i0, i1;
        win_taps(oh, kh, sh, L->padding[0], dh, H, &ih0, &i0, &i1);
        for (int64_t ow = 0; ow < OW; ow++) {
            int64_t iw0, j0, j1;
            if (start)
                memcpy(acc + (oh * OW + ow) * C, start + (oh * OW + ow) * C, (size_t)C * sizeof *acc);
            win_taps(ow, kw, sw, L->padding[1], dw, Wd, &iw0, &j0, &j1);
            if (i1 <= i0 || j1 <= j0)
                continue;
            ops += K->dw_cl(acc + (oh * OW + ow) * C, x + ((ih0 + i0 * dh) * Wd + iw0 + j0 * dw) * C,
                            F->wdw + (i0 * kw + j0) * C, i1 - i0, j1 - j0, dh * Wd * C, dw * C, kw * C, C);
        }
    }
    return ops;
}

/* Output rows [oh0, oh1) of a depthwise convolution of the NCHW x (a
 * Nonlinear layer's graded value: plan_depthwise) into the NCHW acc, a
 * channel at a time: each output its start (the bias), then the taps whose
 * input is not zero in (i, j) order, as the reference adds them. A 1×1
 * tap of stride 1 (attention's score scale, LayerNorm's γ; F->wdw its
 * weight at every position) is the kernel set's depthwise tap over the
 * channel's positions as lanes (K->dw_cl, which adds a zero input's ±0
 * product: no sum changes but an accumulator of −0 may become +0). */
static int64_t run_dwconv_nchw(const nc_fast_kernels *K, const nc_snn_layer *L, const nc_snn_layer *X,
                               const fast_layer *F, const float *restrict x, float *restrict acc,
                               const float *restrict start, int64_t oh0, int64_t oh1)
{
    int64_t H = X->shape[1], Wd = X->shape[2], OH = L->shape[1], OW = L->shape[2], ops = 0;
    int64_t kh = L->weight->shape[2], kw = L->weight->shape[3], sh = L->stride[0], sw = L->stride[1];
    int64_t dh = L->dilation[0], dw = L->dilation[1];
    const float *w = nc_f32(L->weight);
    for (int64_t c = 0; c < F->C; c++) {
        const float *xc = x + c * H * Wd, *wc = w + c * kh * kw;
        const float *sc = start + c * OH * OW;
        float *ac = acc + c * OH * OW;
        if (F->wdw) {
            int64_t p0 = oh0 * OW, n = (oh1 - oh0) * OW;
            memcpy(ac + p0, sc + p0, (size_t)n * sizeof *ac);
            ops += K->dw_cl(ac + p0, xc + p0, F->wdw + c * OH * OW + p0, 1, 1, 0, 0, 0, n);
            continue;
        }
        for (int64_t oh = oh0; oh < oh1; oh++) {
            int64_t ih0, i0, i1;
            win_taps(oh, kh, sh, L->padding[0], dh, H, &ih0, &i0, &i1);
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t iw0, j0, j1;
                win_taps(ow, kw, sw, L->padding[1], dw, Wd, &iw0, &j0, &j1);
                float a = sc[oh * OW + ow];
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t j = j0; j < j1; j++) {
                        float v = xc[(ih0 + i * dh) * Wd + iw0 + j * dw];
                        if (v != 0.0f) {
                            a += wc[i * kw + j] * v;
                            ops++;
                        }
                    }
                ac[oh * OW + ow] = a;
            }
        }
    }
    return ops;
}

/* Output rows [oh0, oh1) of a 1×1 convolution (fast_layer.pw) of the
 * dense x (channel-last, or NCHW: xcl 0) into the channel-last acc: each output position gets its
 * start (conv_bias) and then the non-zero channels of its input position,
 * in ascending order, through the affine kernel (the
 * weights are [C_in][C_out] either way), which holds the outputs in
 * registers instead of loading and storing them for every event. (The same
 * gather for a 3×3 window, its inputs compacted in (c, i, j) order, was 2.9×
 * slower than the scatter on the example ResNet.) */
static int64_t run_conv1x1(const nc_fast_kernels *K, const nc_snn_layer *L, const nc_snn_layer *X,
                           const fast_layer *F, const float *restrict x, int xcl, float *restrict acc,
                           const float *start, int64_t oh0, int64_t oh1, int32_t *restrict idx, float *restrict val)
{
    int64_t C = X->shape[0], H = X->shape[1], Wd = X->shape[2], OW = L->shape[2], Ko = F->C;
    int64_t xc = xcl ? 1 : H * Wd, xp = xcl ? C : 1; /* x's channel and position strides */
    int64_t ops = 0;
    for (int64_t oh = oh0; oh < oh1; oh++) {
        int64_t ih = oh * L->stride[0] - L->padding[0];
        for (int64_t ow = 0; ow < OW; ow++) {
            int64_t iw = ow * L->stride[1] - L->padding[1];
            if (start)
                memcpy(acc + (oh * OW + ow) * Ko, start + (oh * OW + ow) * Ko, (size_t)Ko * sizeof *acc);
            if (ih < 0 || ih >= H || iw < 0 || iw >= Wd)
                continue;
            int64_t n = K->compact(x + (ih * Wd + iw) * xp, xc, C, 0, idx, val);
            if (n)
                ops += K->affine(F->wt, Ko, idx, val, n, acc + (oh * OW + ow) * Ko);
        }
    }
    return ops;
}

/* A channel selection (fast_layer.sel) of the dense x (layout xcl) into y
 * (layout F->cl): copies, + 0.0f turning −0 into the reference's +0; the
 * synaptic ops are the reference's, every non-zero input times the outputs. */
static int64_t run_select(const fast_layer *F, const fast_layer *X, const float *restrict x, float *restrict y)
{
    int64_t C = X->C, HW = F->HW, Ko = F->C, nz = 0;
    for (int64_t k = 0; k < C * HW; k++)
        nz += x[k] != 0.0f;
    for (int64_t o = 0; o < Ko; o++) {
        int32_t c = F->sel[o];
        for (int64_t p = 0; p < HW; p++)
            y[at(F->cl, Ko, HW, o, p)] = c >= 0 ? x[at(X->cl, C, HW, c, p)] + 0.0f : 0.0f;
    }
    return nz * Ko;
}

static void run_maxpool(const nc_snn_layer *L, const nc_snn_layer *X, const fast_layer *F, const float *x, int xcl,
                        float *y)
{
    int64_t C = X->shape[0], H = X->shape[1], Wd = X->shape[2], OH = L->shape[1], OW = L->shape[2];
    for (int64_t c = 0; c < C; c++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                float m = -INFINITY;
                for (int64_t i = 0; i < L->kernel[0]; i++) {
                    int64_t ih = oh * L->stride[0] - L->padding[0] + i;
                    for (int64_t j = 0; j < L->kernel[1]; j++) {
                        int64_t iw = ow * L->stride[1] - L->padding[1] + j;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= Wd)
                            continue;
                        float xv = x[at(xcl, C, H * Wd, c, ih * Wd + iw)];
                        if (xv > m)
                            m = xv;
                    }
                }
                y[at(F->cl, C, OH * OW, c, oh * OW + ow)] = m;
            }
}

/* Spiking max pooling: the reference's step (nc_spikemax_frame) over the
 * NCHW input x; counts in cnt (input's, then outputs'). Returns the
 * events; *burst_ops gets the ops its bursts cause downstream (F->fan). */
static int64_t run_spikemax(const fast_plan *P, const nc_snn_layer *L, const fast_layer *F, uint32_t *cnt,
                            const float *x, float *y, int64_t *burst_ops)
{
    const nc_snn_layer *X = &P->s->layers[L->inputs[0]];
    return nc_spikemax_frame(x, F->unit, cnt, cnt + nc_snn_layer_size(X), nc_snn_win_geom(L, X),
                             P->L[L->inputs[0]].is_signed, y, F->fan, burst_ops, NULL);
}

/* The event of channel c of a channel-last spiking max pool whose maximum
 * moved to m from *oc over the window taps [i0, i1) × [j0, j1) at (ih0,
 * iw0): nc_spikemax_output's winner and payload over channel-last counts
 * and values (x, cnt, unit [HW][C]). Returns the event's d. */
static int32_t spikemax_cl_event(const float *restrict x, const float *restrict unit, const uint32_t *restrict cnt,
                                 int signed_in, uint32_t m, uint32_t *oc, int64_t C, int64_t Wd, int64_t c,
                                 int64_t ih0, int64_t i0, int64_t i1, int64_t iw0, int64_t j0, int64_t j1, float *oy)
{
    int32_t d = (int32_t)(m - *oc), dw = 0;
    *oc = m;
    int64_t w = nc_spikemax_winner(x, unit, cnt, signed_in, m, d, (ih0 * Wd + iw0) * C + c, Wd * C, C, i0, i1, j0, j1,
                                   &dw);
    *oy = nc_spikemax_payload(d, x[w], unit ? unit[w] : 0.0f, dw);
    return d;
}

/* Spiking max pooling of signed spikes held channel-last (x [HW][C]):
 * nc_spikemax_frame's rule with the counts kept channel-last, cnt_in [HW][C]
 * then cnt_out [OHW][C] (F->unit channel-last too), and for each output
 * position the window maxima of all channels taken first (a vector max
 * over the taps' rows, into m), so only the channels whose maximum moved
 * look for the input that moved it. y is channel-last too (its readers
 * take either layout; F->fan in that layout). Returns the events;
 * *burst_ops as run_spikemax. */
static int64_t run_spikemax_cl(const nc_fast_kernels *K, const nc_snn_layer *L, const nc_snn_layer *X,
                               const fast_layer *F, int signed_in, const float *restrict x, uint32_t *restrict cnt,
                               uint32_t *restrict m, float *restrict y, int64_t *burst_ops)
{
    int64_t C = X->shape[0], H = X->shape[1], Wd = X->shape[2], OH = L->shape[1], OW = L->shape[2];
    int64_t kh = L->kernel[0], kw = L->kernel[1], spikes = 0;
    uint32_t *out = cnt + H * Wd * C;
    K->count_spikes(cnt, x, F->unit, H * Wd * C, signed_in);
    for (int64_t oh = 0; oh < OH; oh++) {
        int64_t ih0, i0, i1;
        win_taps(oh, kh, L->stride[0], L->padding[0], 1, H, &ih0, &i0, &i1);
        for (int64_t ow = 0; ow < OW; ow++) {
            int64_t iw0, j0, j1, o = oh * OW + ow;
            win_taps(ow, kw, L->stride[1], L->padding[1], 1, Wd, &iw0, &j0, &j1);
            memset(m, 0, (size_t)C * sizeof *m);
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < j1; j++)
                    K->umax(m, cnt + ((ih0 + i) * Wd + iw0 + j) * C, C);
            uint32_t *oc = out + o * C;
            float *oy = y + o * C;
            memset(oy, 0, (size_t)C * sizeof *oy);
            for (int64_t c0 = 0; c0 < C; c0 += 64) /* the channels whose maximum moved */
                for (uint64_t b = K->ne_mask64(m + c0, oc + c0, C - c0 < 64 ? C - c0 : 64); b; b &= b - 1) {
                    int64_t c = c0 + __builtin_ctzll(b);
                    int32_t d = spikemax_cl_event(x, F->unit, cnt, signed_in, m[c], &oc[c], C, Wd, c, ih0, i0, i1,
                                                  iw0, j0, j1, &oy[c]);
                    if (F->fan && (d > 1 || d < -1))
                        *burst_ops += F->fan[o * C + c];
                    spikes++;
                }
        }
    }
    return spikes;
}

/* y = x0 + x1 + ... in input order, element by element (as the reference);
 * a spike or count input adds only its non-zero elements (adding zero
 * changes nothing). */
/* Elements [lo, hi) of an Add's k-th input x in its own layout: copied for
 * the first, added after (the reference's order). */
static void add_same_layout(float *restrict y, const float *restrict x, int k, int64_t lo, int64_t hi)
{
    if (k == 0)
        memcpy(y + lo, x + lo, (size_t)(hi - lo) * sizeof *y);
    else
        for (int64_t e = lo; e < hi; e++)
            y[e] += x[e];
}

static void run_add(const fast_plan *P, const fast_ws *W, const nc_snn_layer *L, const fast_layer *F, float *y)
{
    for (int k = 0; k < L->n_inputs; k++) {
        int j = P->L[L->inputs[k]].view;
        const fast_layer *X = &P->L[j];
        const float *x = dense_of(W, j, X);
        if (x && X->cl == F->cl) {
            add_same_layout(y, x, k, 0, F->size);
            continue;
        }
        if (x) { /* another layout; when y is channel-last, x has y's geometry */
            for (int64_t c = 0; c < X->C; c++)
                for (int64_t p = 0; p < X->HW; p++) {
                    float xv = x[at(X->cl, X->C, X->HW, c, p)];
                    float *d = &y[F->cl ? p * F->C + c : c * X->HW + p];
                    *d = k == 0 ? xv : *d + xv;
                }
            continue;
        }
        if (k == 0)
            memset(y, 0, (size_t)F->size * sizeof *y);
        if (X->rep == REP_SPIKES) {
            const uint64_t *b = W->bits[j];
            for (int64_t r = 0; r < X->BC; r++)
                for (int64_t wi = 0; wi < X->wpc; wi++)
                    for (uint64_t m = b[r * X->wpc + wi]; m; m &= m - 1) {
                        int64_t e = r * X->BHW + wi * 64 + __builtin_ctzll(m);
                        float xv = X->sval ? X->sval[e] : 1.0f;
                        int64_t c = X->BC > 1 ? r : e / F->HW;
                        y[at(F->cl, F->C, F->HW, c, e - c * F->HW)] += xv;
                    }
        } else {
            const uint32_t *cnt = W->cnt[j];
            for (int64_t c = 0; c < X->C; c++)
                for (int64_t p = 0; p < X->HW; p++)
                    if (cnt[p * X->C + c])
                        y[F->cl ? p * F->C + c : c * X->HW + p] += X->vtab[c * X->kk1 + cnt[p * X->C + c]];
        }
    }
}

/* LIF / CubaLIF: the reference's per-neuron helpers, in the state layout. */
static int64_t run_lif(const nc_snn_layer *L, const fast_layer *F, const fast_ws *W, int i, const float *cur)
{
    float *v = W->v[i], *isyn = W->isyn[i];
    uint64_t *bits = W->bits[i];
    int rz = L->reset == NC_RESET_ZERO;
    int leaky = nc_snn_kind(L->kind)->leaky, syn = nc_snn_kind(L->kind)->current;
    int64_t count = 0;
    memset(bits, 0, (size_t)(F->BC * F->wpc) * sizeof *bits);
    for (int64_t c = 0; c < F->C; c++)
        for (int64_t p = 0; p < F->HW; p++) {
            int64_t k = at(F->state_cl, F->C, F->HW, c, p);
            float x = cur[k];
            int sp;
            if (F->nir) { /* NIR semantics: the reference's kernels/nir_neuron.h step */
                if (syn)
                    x = nc_nir_syn_step(&isyn[k], x, F->dt_tau_syn[k], F->w_in[k]);
                sp = nc_nir_neuron_step(&v[k], x, leaky, leaky ? F->dt_tau[k] : 0.0f, F->r[k],
                                        leaky ? F->vleak[k] : 0.0f, F->theta[k], F->vreset[k], L->spike_gt, rz,
                                        L->pretest_sub);
            } else {
                if (syn)
                    x = nc_cuba_syn_step(&isyn[k], x, F->dt_tau_syn[k], F->w_in[k]);
                sp = nc_lif_step(&v[k], x, F->dt_tau[k], F->vleak[k], F->r[k], F->theta[k], rz);
            }
            if (sp) {
                int64_t o = c * F->HW + p, r = F->BC > 1 ? c : 0, q = F->BC > 1 ? p : o;
                bits[r * F->wpc + (q >> 6)] |= UINT64_C(1) << (q & 63);
                count++;
            }
        }
    return count;
}

/* Writes step t's traces of layer i for sample n. */
static void record(const fast_plan *P, const fast_ws *W, const nc_run_request *q, int i, int t, int n)
{
    const fast_layer *F = &P->L[i];
    int64_t off = ((int64_t)t * P->N + n) * F->size;
    if (!F->neuron) {
        if (q->rec_membrane && q->rec_membrane[i])
            materialize(P, W, F->view, q->rec_membrane[i] + off);
        if (q->rec_spikes && q->rec_spikes[i] && P->s->layers[i].kind == NC_SNN_SPIKEMAXPOOL2D)
            for (int64_t c = 0; c < F->C; c++)
                for (int64_t p = 0; p < F->HW; p++) {
                    float x = W->dense[i][at(F->cl, F->C, F->HW, c, p)];
                    q->rec_spikes[i][off + c * F->HW + p] = (float)((x > 0.0f) - (x < 0.0f));
                }
        return;
    }
    if (q->rec_spikes && q->rec_spikes[i] && F->rep == REP_DENSE) { /* SignedIF: s·(spike value) */
        float *d = q->rec_spikes[i] + off;
        int burst = P->s->layers[i].max_spikes > 1;
        for (int64_t c = 0; c < F->C; c++)
            for (int64_t p = 0; p < F->HW; p++) {
                int64_t k = at(F->cl, F->C, F->HW, c, p);
                float x = W->dense[i][k];
                d[c * F->HW + p] = burst ? roundf(x / F->sval[k]) : (float)((x > 0.0f) - (x < 0.0f));
            }
    } else if (q->rec_spikes && q->rec_spikes[i]) {
        float *d = q->rec_spikes[i] + off;
        memset(d, 0, (size_t)F->size * sizeof *d);
        for (int64_t r = 0; r < F->BC; r++)
            for (int64_t wi = 0; wi < F->wpc; wi++)
                for (uint64_t m = W->bits[i][r * F->wpc + wi]; m; m &= m - 1)
                    d[r * F->BHW + wi * 64 + __builtin_ctzll(m)] = 1.0f;
    }
    if (q->rec_membrane && q->rec_membrane[i]) {
        float *d = q->rec_membrane[i] + off;
        for (int64_t c = 0; c < F->C; c++)
            for (int64_t p = 0; p < F->HW; p++)
                d[c * F->HW + p] = W->v[i][at(F->state_cl, F->C, F->HW, c, p)];
    }
}

/* Poisson spikes of the input for sample n at step t (the reference's hash,
 * indexed by position in the batch). */
static void poisson(const fast_plan *P, const nc_run_request *q, const float *src, uint64_t *bits, int t, int n)
{
    const fast_layer *F = &P->L[0];
    int64_t k0 = (int64_t)n * F->size;
    for (int64_t r = 0; r < F->BC; r++)
        for (int64_t wi = 0; wi < F->wpc; wi++) {
            uint64_t word = 0;
            for (int64_t b = 0; b < 64 && wi * 64 + b < F->BHW; b++) {
                int64_t k = r * F->BHW + wi * 64 + b;
                float p = src[k] < 0 ? 0 : (src[k] > 1 ? 1 : src[k]);
                word |= (uint64_t)(nc_uniform_hash(q->seed, (uint64_t)t, (uint64_t)(k0 + k)) < p) << b;
            }
            bits[r * F->wpc + wi] = word;
        }
}

void nc_fast_bind_slots(const fast_plan *P, fast_ws *W)
{
    fast_ws *V = W->slot;
    for (int i = 0; i < P->s->n_layers; i++) {
        const fast_layer *F = &P->L[i];
        int64_t k_off = !F->is_static;
        for (int k = 1; k < P->n_slots; k++) {
            if (V[0].dense[i])
                V[k].dense[i] = V[0].dense[i] + k * k_off * nc_fast_slot_stride(F->size, sizeof(float));
            if (V[0].bits[i])
                V[k].bits[i] = V[0].bits[i] + k * k_off * nc_fast_slot_stride(F->BC * F->wpc, sizeof(uint64_t));
            if (V[0].cnt[i])
                V[k].cnt[i] = V[0].cnt[i] + k * k_off * nc_fast_slot_stride(F->size, sizeof(uint32_t));
            if (V[0].nz[i])
                V[k].nz[i] = V[0].nz[i] + k * k_off * nc_fast_slot_stride(F->BC * F->wpc, sizeof(uint64_t));
        }
    }
}

/* A convolution's accumulators at step t start from its bias: copied
 * (conv_bias gives it), or put back by the IF that reads them (refilled),
 * which it does from the second use of a slot's buffer on (conv_bias:
 * NULL). conv_start copies [lo, hi). */
static const float *conv_bias(const fast_plan *P, const fast_layer *F, int t)
{
    return !F->refilled || t < P->n_slots ? F->bias_img : NULL;
}

static void conv_start(const fast_plan *P, const fast_layer *F, float *acc, int t, int64_t lo, int64_t hi)
{
    const float *b = conv_bias(P, F, t);
    if (b)
        memcpy(acc + lo, b + lo, (size_t)(hi - lo) * sizeof *acc);
}

/* A SignedIF's step for the neurons [lo, hi) of its state layout, from
 * the currents cur (same layout); returns the spikes. */
static int64_t signed_if_range(const fast_plan *P, fast_ws *W, int i, const float *cur, int64_t lo, int64_t hi)
{
    const fast_layer *F = &P->L[i];
    int burst = P->s->layers[i].max_spikes;
    if (burst > 1)
        return P->K->signed_burst(W->v[i] + lo, W->net[i] + lo, cur + lo, F->theta + lo, F->sval + lo, hi - lo,
                                  burst, W->dense[i] + lo);
    return P->K->signed_if(W->v[i] + lo, W->net[i] + lo, cur + lo, F->theta + lo, F->sval + lo, hi - lo,
                           W->dense[i] + lo);
}

/* Adds to the request's per-step counts, if it asks for them, the synaptic
 * ops that the bursts (events of k ≥ 2 spikes: a value other than ±sval)
 * of SignedIF i among its neurons [lo, hi) at step t cause downstream
 * (fast_layer.fan). Samples and a team's threads add there at once. */
static void count_burst_ops(const fast_plan *P, const fast_ws *W, const nc_run_request *q, int i, int t,
                            int64_t lo, int64_t hi)
{
    const fast_layer *F = &P->L[i];
    if (!F->fan || !q->synops_step || !q->burst_ops_step)
        return;
    const float *y = W->dense[i];
    int64_t n = 0;
    for (int64_t j = lo; j < hi; j++)
        if (y[j] != 0.0f && fabsf(y[j]) != fabsf(F->sval[j]))
            n += F->fan[j];
    if (n)
        __atomic_add_fetch(&q->burst_ops_step[(int64_t)t * P->s->n_layers + i], n, __ATOMIC_RELAXED);
}

/* Spins before a barrier's waiter yields its core: a few milliseconds. */
#define NC_FAST_SPINS (1u << 16)

void nc_fast_team_barrier(const fast_plan *P, int nt)
{
    nc_fast_barrier *b = P->bar;
    unsigned gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == (unsigned)nt) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED); /* before the release: the next barrier counts from 0 */
        __atomic_add_fetch(&b->gen, 1, __ATOMIC_RELEASE);
        return;
    }
    for (unsigned spins = 0; __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen; spins++) {
        if (spins >= NC_FAST_SPINS)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
}

/* Thread tid's event buffers for slot k: in a team, each thread has its own
 * in ws[0] (plan_workspace); thread 0's are the slot's. */
static int32_t *team_idx(const fast_plan *P, const fast_ws *W, int tid, int k)
{
    return W->ev_idx + ((int64_t)tid * P->n_slots + k) * W->ev_cap;
}

static float *team_val(const fast_plan *P, const fast_ws *W, int tid, int k)
{
    return W->ev_val + ((int64_t)tid * P->n_slots + k) * W->ev_cap;
}

/* Adds n synaptic ops of layer i to step t's row of the request's per-step
 * counts, if it asks for them: samples (and a team's threads) add there
 * at once. */
static void add_step_ops(const fast_plan *P, const nc_run_request *q, int t, int i, int64_t n)
{
    if (q->synops_step && n)
        __atomic_add_fetch(&q->synops_step[(int64_t)t * P->s->n_layers + i], n, __ATOMIC_RELAXED);
}

/* Output rows [*r0, *r1) of thread tid's band of OH among nt: as even as
 * they go, empty for a thread beyond OH bands. */
static void team_rows(int64_t OH, int tid, int nt, int64_t *r0, int64_t *r1)
{
    int64_t bands = OH < nt ? OH : nt;
    *r0 = *r1 = 0;
    if (tid < bands) {
        *r0 = OH * tid / bands;
        *r1 = OH * (tid + 1) / bands;
    }
}

/* Events of slots 0 .. nb - 1 (one list each) scattered into each slot's
 * accumulators of convolution i with geometry g (whose band of rows they
 * may be); slot k's synaptic ops are added to slot_ops[k]. Merged: in one pass over the weights, input channel by input
 * channel, each slot's events of that channel; each slot's accumulators
 * still get their terms in ascending input index, so the sums are those of
 * a step at a time. */
static void scatter_slots(const fast_plan *P, fast_ws *V, int i, int nb, int merged, const nc_fast_conv *g,
                          int32_t *const *idx, float *const *val, const int64_t *ne, int64_t *slot_ops)
{
    const float *wt = P->L[i].wt;
    if (!merged) {
        for (int k = 0; k < nb; k++)
            slot_ops[k] += P->K->conv(g, wt, idx[k], val[k], ne[k], V[k].dense[i]);
        return;
    }
    int64_t pos[NC_FAST_SLOTS_LIMIT], HW = g->HW, C = P->s->layers[P->s->layers[i].inputs[0]].shape[0];
    for (int k = 0; k < nb; k++)
        pos[k] = 0;
    for (int64_t c = 0; c < C; c++) { /* channel by channel: no division to find one */
        int64_t end_idx = (c + 1) * HW;
        for (int k = 0; k < nb; k++) {
            int64_t e = pos[k];
            while (e < ne[k] && idx[k][e] < end_idx)
                e++;
            if (e > pos[k])
                slot_ops[k] += P->K->conv(g, wt, idx[k] + pos[k], val[k] + pos[k], e - pos[k], V[k].dense[i]);
            pos[k] = e;
        }
    }
}

/* Output rows [r0, r1) of the scattering convolution i for slots 0 .. nb - 1
 * (steps t0 ..), by thread tid: the events of the input rows that reach
 * them into the thread's event buffers, the rows' accumulators started,
 * the events scattered, skipping the taps that leave the rows. Adds slot
 * k's synaptic ops to slot_ops[k]. */
static void conv_rows(const fast_plan *P, fast_ws *W, int i, int t0, int nb, int merged, int tid, int64_t r0,
                      int64_t r1, int64_t *slot_ops)
{
    const fast_layer *F = &P->L[i];
    const nc_snn_layer *L = &P->s->layers[i], *X = &P->s->layers[L->inputs[0]];
    int x_view = P->L[L->inputs[0]].view;
    int64_t H = X->shape[1], Wd = X->shape[2], row = F->size / L->shape[1];
    int64_t ih0 = r0 * L->stride[0] - L->padding[0];
    int64_t ih1 = (r1 - 1) * L->stride[0] - L->padding[0] + (L->weight->shape[2] - 1) * L->dilation[0] + 1;
    ih0 = ih0 < 0 ? 0 : ih0;
    ih1 = ih1 > H ? H : ih1;
    int32_t *idx[NC_FAST_SLOTS_LIMIT];
    float *val[NC_FAST_SLOTS_LIMIT];
    int64_t ne[NC_FAST_SLOTS_LIMIT];
    fast_ws *V = W->slot;
    for (int k = 0; k < nb; k++) {
        idx[k] = team_idx(P, W, tid, k);
        val[k] = team_val(P, W, tid, k);
        ne[k] = ih1 > ih0 ? events(P, &V[k], x_view, ih0 * Wd, ih1 * Wd, idx[k], val[k]) : 0;
        conv_start(P, F, V[k].dense[i], t0 + k, r0 * row, r1 * row);
    }
    nc_fast_conv g = F->conv;
    g.a_lo = r0 * row;
    g.a_hi = r1 * row;
    scatter_slots(P, V, i, nb, merged, &g, idx, val, ne, slot_ops);
}

/* Steps t0 .. t0 + nb - 1 (slots 0 .. nb - 1) of the scattering convolution
 * i, merged over its weights (fast_layer.merge_slots) or slot by slot, by
 * thread tid of a team of nt (nt = 1: alone): each thread a band of the
 * output rows (team_rows, conv_rows). Every output still gets its terms in
 * ascending input index, from one thread: the bands change which thread
 * adds, not what or in which order. A band is contiguous in the
 * channel-last accumulators, so the threads share no cache line of them
 * (splitting the channels instead did, and made the scatter slower than
 * one thread's). Run alone in bands small enough for the accumulators to
 * stay in the first-level cache, it was no faster (tv_resnet18, 64 px). */
static void run_conv_block(const fast_plan *P, fast_ws *W, const nc_run_request *q, int i, int t0, int nb,
                           int merged, int tid, int nt, int64_t *ops)
{
    int64_t OH = P->s->layers[i].shape[1], r0 = 0, r1 = OH, part = 0, slot_ops[NC_FAST_SLOTS_LIMIT] = {0};
    if (nt > 1) {
        nc_fast_team_barrier(P, nt);
        team_rows(OH, tid, nt, &r0, &r1);
    }
    if (r1 > r0)
        conv_rows(P, W, i, t0, nb, merged, tid, r0, r1, slot_ops);
    for (int k = 0; k < nb; k++) {
        part += slot_ops[k];
        add_step_ops(P, q, t0 + k, i, slot_ops[k]);
    }
    if (nt == 1) {
        ops[i] += part;
        return;
    }
    __atomic_add_fetch(&ops[i], part, __ATOMIC_RELAXED);
    nc_fast_team_barrier(P, nt);
}

/* Thread tid's part [*lo, *hi) of n elements among nt: team_rows over
 * units of 16 (64 bytes: no cache line is two threads'). */
static void team_elems(int64_t n, int tid, int nt, int64_t *lo, int64_t *hi)
{
    team_rows((n + 15) / 16, tid, nt, lo, hi);
    *lo = *lo * 16 < n ? *lo * 16 : n;
    *hi = *hi * 16 < n ? *hi * 16 : n;
}

/* Thread tid's part of layer i's step t on slot view W, for the layers a
 * team splits besides the scatters (fast_layer.team): a depthwise or 1×1
 * convolution by bands of output rows, a SignedIF or an Add of same-layout
 * values by ranges of elements (each element independent of the others):
 * channel-last ones by the same bands of rows.
 * idx, val: the thread's event buffers. Adds its synaptic ops to *ops;
 * returns its spikes. */
static int64_t run_layer_part(const fast_plan *P, fast_ws *W, const nc_run_request *q, int i, int t, int tid, int nt,
                              int32_t *idx, float *val, int64_t *ops)
{
    const nc_snn_layer *L = &P->s->layers[i], *XL = &P->s->layers[L->inputs[0]];
    const fast_layer *F = &P->L[i];
    int x_view = P->L[L->inputs[0]].view;
    const float *x = dense_of(W, x_view, &P->L[x_view]);
    float *y = W->dense[i];
    int64_t lo, hi;
    if (L->kind == NC_SNN_CONV2D) {
        int64_t OH = L->shape[1];
        team_rows(OH, tid, nt, &lo, &hi);
        if (hi <= lo)
            return 0;
        if (F->dw)
            *ops += run_dwconv(P->K, L, XL, F, x, y, conv_bias(P, F, t), lo, hi);
        else
            *ops += run_conv1x1(P->K, L, XL, F, x, P->L[x_view].cl, y, conv_bias(P, F, t), lo, hi, idx, val);
        return 0;
    }
    if (L->ndim == 3 && F->cl) { /* the bands of the convolutions: each thread's values stay in its cache */
        int64_t row = F->size / L->shape[1];
        team_rows(L->shape[1], tid, nt, &lo, &hi);
        lo *= row;
        hi *= row;
    } else {
        team_elems(F->size, tid, nt, &lo, &hi);
    }
    if (hi <= lo)
        return 0;
    if (L->kind == NC_SNN_ADD) {
        for (int k = 0; k < L->n_inputs; k++) {
            int j = P->L[L->inputs[k]].view;
            add_same_layout(y, dense_of(W, j, &P->L[j]), k, lo, hi);
        }
        return 0;
    }
    int64_t spikes = signed_if_range(P, W, i, x, lo, hi);
    count_burst_ops(P, W, q, i, t, lo, hi);
    return spikes;
}

/* Step t (slot k) of layer i (one a team splits, not a scatter), by thread
 * tid of a team of nt: each thread its part. */
static void run_part_step(const fast_plan *P, fast_ws *W, const nc_run_request *q, int i, int t, int k, int tid,
                          int nt, int64_t *spk, int64_t *ops)
{
    int64_t o = 0;
    nc_fast_team_barrier(P, nt);
    int64_t s = run_layer_part(P, &W->slot[k], q, i, t, tid, nt, team_idx(P, W, tid, k), team_val(P, W, tid, k), &o);
    __atomic_add_fetch(&spk[i], s, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ops[i], o, __ATOMIC_RELAXED);
    nc_fast_team_barrier(P, nt);
}

/* Layer i's step t of sample n, on slot view W. */
static void run_layer(const fast_plan *P, fast_ws *W, const nc_run_request *q, int i, int t, int n, int64_t *spk,
                      int64_t *ops)
{
    const nc_snn *s = P->s;
    const nc_fast_kernels *K = P->K;
    const nc_snn_layer *L = &s->layers[i];
    const fast_layer *F = &P->L[i];
    int x_view = L->n_inputs > 0 ? P->L[L->inputs[0]].view : -1;
    const fast_layer *X = x_view >= 0 ? &P->L[x_view] : NULL;
    switch (L->kind) {
    case NC_SNN_INPUT: {
        const float *src = q->input + ((q->series ? (int64_t)t * P->N : 0) + n) * F->size;
        if (F->rep == REP_SPIKES)
            poisson(P, q, src, W->bits[0], t, n);
        else
            W->in = src;
        break;
    }
    case NC_SNN_AFFINE: {
        float *y = W->dense[i];
        memcpy(y, nc_f32(L->bias), (size_t)F->size * sizeof *y);
        int64_t ne = events(P, W, x_view, 0, X->HW, W->ev_idx, W->ev_val);
        ops[i] += K->affine(F->wt, F->size, W->ev_idx, W->ev_val, ne, y);
        break;
    }
    case NC_SNN_CONV2D: { /* one that scatters runs in run_conv_block */
        float *acc = W->dense[i];
        if (F->sel) { /* writes every output: no bias (+0) to start from */
            ops[i] += run_select(F, X, dense_of(W, x_view, X), acc);
            break;
        }
        if (F->dw)
            ops[i] += run_dwconv(K, L, &s->layers[L->inputs[0]], F, dense_of(W, x_view, X), acc,
                                 conv_bias(P, F, t), 0, L->shape[1]);
        else
            ops[i] += run_conv1x1(K, L, &s->layers[L->inputs[0]], F, dense_of(W, x_view, X), X->cl, acc,
                                  conv_bias(P, F, t), 0, L->shape[1], W->ev_idx, W->ev_val);
        break;
    }
    case NC_SNN_POOL2D:
        if (F->rep == REP_COUNTS) {
            ops[i] += run_pool_counts(P, W, L, i);
        } else {
            const float *x = F->in_dense ? dense_of(W, x_view, X) : W->tmp[i];
            if (!F->in_dense)
                materialize(P, W, x_view, W->tmp[i]);
            ops[i] += run_pool_dense(K, L, &s->layers[L->inputs[0]], F, x, F->in_dense && X->cl, W->dense[i]);
        }
        break;
    case NC_SNN_MAXPOOL2D: {
        const float *x = F->in_dense ? dense_of(W, x_view, X) : W->tmp[i];
        if (!F->in_dense)
            materialize(P, W, x_view, W->tmp[i]);
        run_maxpool(L, &s->layers[L->inputs[0]], F, x, F->in_dense && X->cl, W->dense[i]);
        break;
    }
    case NC_SNN_SPIKEMAXPOOL2D: {
        int64_t bops = 0;
        if (F->in_dense) {
            spk[i] += run_spikemax_cl(K, L, &s->layers[L->inputs[0]], F, P->L[L->inputs[0]].is_signed,
                                      dense_of(W, x_view, X), W->mcnt[i], (uint32_t *)(void *)W->tmp[i],
                                      W->dense[i], &bops);
        } else {
            materialize(P, W, x_view, W->tmp[i]);
            spk[i] += run_spikemax(P, L, F, W->mcnt[i], W->tmp[i], W->dense[i], &bops);
        }
        if (bops && q->synops_step && q->burst_ops_step) /* samples add there at once */
            __atomic_add_fetch(&q->burst_ops_step[(int64_t)t * s->n_layers + i], bops, __ATOMIC_RELAXED);
        break;
    }
    case NC_SNN_ADD: run_add(P, W, L, F, W->dense[i]); break;
    case NC_SNN_CONCAT: { /* along channels of NCHW values: the inputs' values one after another */
        int64_t off = 0;
        for (int k = 0; k < L->n_inputs; k++) {
            int j = P->L[L->inputs[k]].view;
            materialize(P, W, j, W->dense[i] + off);
            off += P->L[j].size;
        }
        break;
    }
    case NC_SNN_IF: case NC_SNN_SIGNED_IF: case NC_SNN_LIF: case NC_SNN_CUBALIF: {
        const float *cur = F->in_dense ? dense_of(W, x_view, X) : W->tmp[i];
        if (!F->in_dense)
            materialize(P, W, x_view, W->tmp[i]);
        int rz = L->reset == NC_RESET_ZERO;
        if (L->kind == NC_SNN_SIGNED_IF) {
            spk[i] += signed_if_range(P, W, i, cur, 0, F->size);
            count_burst_ops(P, W, q, i, t, 0, F->size);
        } else if (L->kind != NC_SNN_IF || F->nir) {
            spk[i] += run_lif(L, F, W, i, cur);
        } else if (F->state_cl) {
            int fp = F->fused_pool;
            if (fp >= 0)
                memset(W->cnt[fp], 0, (size_t)P->L[fp].size * sizeof(uint32_t));
            int rf = F->refill_of >= 0 && !P->L[F->refill_of].is_static ? F->refill_of : -1;
            spk[i] += K->if_cl(W->v[i], rf >= 0 ? W->dense[rf] : (float *)cur, F->theta, F->theta_full, F->HW,
                               F->C, rz, W->bits[i], fp >= 0 ? P->L[fp].pwin : NULL, fp >= 0 ? W->cnt[fp] : NULL,
                               rf >= 0 ? nc_f32(s->layers[rf].bias) : NULL);
        } else {
            for (int64_t r = 0; r < F->BC; r++) /* a row of bits per channel */
                spk[i] += K->if_flat(W->v[i] + r * F->BHW, cur + r * F->BHW, F->theta + r * F->BHW, F->BHW, rz,
                                     W->bits[i] + r * F->wpc);
        }
        break;
    }
    case NC_SNN_RESHAPE: materialize_range(P, W, x_view, L->kernel[0], F->size, W->tmp[i], W->dense[i]); break;
    case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR: case NC_SNN_THRESHOLD: case NC_SNN_SCALE:
    case NC_SNN_DELAY: case NC_SNN_GATHER:
        materialize(P, W, x_view, W->tmp[i]);
        nc_fast_nir_step(L, F, W, i);
        break;
    case NC_SNN_NONLINEAR: /* the inputs' sums (NCHW order), then the layer from them */
        for (int k = 0; k < L->n_inputs; k++) {
            int j = P->L[L->inputs[k]].view;
            const float *x = dense_of(W, j, &P->L[j]);
            if (!x || P->L[j].cl) {
                materialize(P, W, j, W->tmp[i]);
                x = W->tmp[i];
            }
            K->nl_sum(nc_fast_nl_sums(s, L, W, i, k), x, P->L[j].size);
        }
        ops[i] += nc_fast_nl_step(P, W, i, t + 1);
        break;
    default: /* Flatten, Readout: views of their input */
        break;
    }
}

/* Sample n's start: neuron state reset, counters cleared. */
static void reset_sample(const fast_plan *P, fast_ws *W, int64_t *spk, int64_t *ops, double *sec)
{
    const nc_snn *s = P->s;
    int nl = s->n_layers;
    if (sec)
        memset(sec, 0, (size_t)nl * sizeof *sec);
    memset(spk, 0, (size_t)nl * sizeof *spk);
    memset(ops, 0, (size_t)nl * sizeof *ops);
    for (int i = 0; i < nl; i++) {
        const fast_layer *F = &P->L[i];
        if ((F->neuron || (F->nir_kind && W->v[i])) && F->view == i)
            memcpy(W->v[i], F->v0, (size_t)F->size * sizeof(float));
        if (W->ring[i]) {
            memset(W->ring[i], 0, (size_t)((s->layers[i].kernel[0] + 1) * F->size) * sizeof(float));
            W->ring_pos[i] = 0;
        }
        if (W->isyn[i])
            memset(W->isyn[i], 0, (size_t)F->size * sizeof(float));
        if (W->nl[i])
            nc_fast_nl_reset(s, &s->layers[i], W, i);
        for (int64_t k = 0; W->net[i] && k < F->size; k++)
            W->net[i][k] = nc_snn_net0(&s->layers[i]);
        if (W->mcnt[i])
            memset(W->mcnt[i], 0, (size_t)(P->L[s->layers[i].inputs[0]].size + F->size) * sizeof(uint32_t));
    }
}

/* The readout of steps t0 .. t0 + nb - 1 of sample n: into the per-step
 * output, or added to acc_out. */
static void add_output(const fast_plan *P, fast_ws *W, const nc_run_request *q, int n, int t0, int nb,
                       float *acc_out)
{
    int out_id = nc_snn_output_id(P->s), ov = P->L[out_id].view;
    int64_t out_size = P->L[out_id].size;
    for (int k = 0; k < nb; k++) {
        if (q->per_step) {
            materialize(P, &W->slot[k], ov, q->output + ((int64_t)(t0 + k) * P->N + n) * out_size);
        } else {
            materialize(P, &W->slot[k], ov, W->obuf);
            for (int64_t o = 0; o < out_size; o++)
                acc_out[o] += W->obuf[o];
        }
    }
}

void nc_fast_run_sample(const fast_plan *P, fast_ws *W, const nc_run_request *q, int n, int tid, int nt)
{
    const nc_snn *s = P->s;
    int nl = s->n_layers, out_id = nc_snn_output_id(s);
    int64_t *spk = P->spk + (int64_t)n * nl, *ops = P->ops + (int64_t)n * nl;
    double *sec = q->layer_seconds ? P->sec + (int64_t)n * nl : NULL;
    int trial = nt > 1 ? nc_fast_team_mode(P) : -1; /* a team's trial: thread 0 times each layer */
    if (tid == 0)
        reset_sample(P, W, spk, ops, sec);
    fast_ws *V = W->slot;
    float *acc_out = q->per_step ? NULL : q->output + (int64_t)n * P->L[out_id].size;
    for (int t0 = 0; t0 < q->T; t0 += P->n_slots) {
        int nb = q->T - t0 < P->n_slots ? q->T - t0 : P->n_slots;
        for (int i = 0; i < nl; i++) {
            const fast_layer *F = &P->L[i];
            int steps = F->is_static ? t0 == 0 : nb; /* of this block, from slot 0 */
            double start = (sec || trial >= 0) && tid == 0 ? nc_monotonic_s() : 0.0;
            int team = P->team_on[i] && nt > 1 && steps, merged = !F->is_static && F->merge_slots && nb > 1;
            if (team && F->scatter)
                run_conv_block(P, W, q, i, t0, steps, merged, tid, nt, ops);
            else if (F->scatter && steps && tid == 0)
                run_conv_block(P, W, q, i, t0, steps, merged, 0, 1, ops);
            for (int k = 0; k < nb; k++) {
                int64_t ops_before = tid == 0 ? ops[i] : 0; /* the team's threads add after a barrier */
                if (team && !F->scatter && k < steps) /* a step at a time: a membrane's trace is between them */
                    run_part_step(P, W, q, i, t0 + k, k, tid, nt, spk, ops);
                if (tid != 0)
                    continue;
                if (!F->scatter && !team && k < steps) {
                    run_layer(P, &V[k], q, i, t0 + k, n, spk, ops);
                    for (int j = 1; i == 0 && F->is_static && j < P->n_slots; j++) /* the one value not in a slot's buffers */
                        V[j].in = V[0].in;
                }
                add_step_ops(P, q, t0 + k, i, ops[i] - ops_before);
                /* a membrane is state: its trace is taken before the next step */
                if ((q->rec_spikes && q->rec_spikes[i]) || (q->rec_membrane && q->rec_membrane[i]))
                    record(P, &V[k], q, i, t0 + k, n);
            }
            if (tid == 0 && (sec || trial >= 0)) {
                double dt = nc_monotonic_s() - start;
                if (sec)
                    sec[i] += dt;
                if (trial >= 0)
                    P->team_sec[trial * nl + i] += dt;
            }
        }
        if (tid == 0)
            add_output(P, W, q, n, t0, nb, acc_out);
    }
}
