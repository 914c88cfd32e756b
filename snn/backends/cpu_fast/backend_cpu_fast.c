/* The cpu-fast backend: event-driven, vectorised, a thread per sample (or
 * a team of threads per sample at batch 1).
 *
 * What makes it fast, against the reference (backend_cpu_ref.c):
 *  - A sample runs all T steps through all layers on one thread, in that
 *    thread's own workspace (small enough to stay in cache); OpenMP spreads
 *    the samples of a batch over threads, with no atomics: counters are kept
 *    per sample and summed in sample order afterwards.
 *  - Spikes are bitmasks in the reference's neuron order (channel-major);
 *    a synaptic layer walks the set bits and adds one fan-out row of weights
 *    per spike (Affine [in][out], Conv2d [C_in][kH][kW][C_out/groups] into
 *    channel-last accumulators), a few contiguous vector adds each.
 *  - Average (sum) pooling of spikes that carry one value per channel is
 *    folded into the events of the next layer: the pool only counts the
 *    spikes of each window, and the next layer receives one event per
 *    non-empty window carrying the pooled value for that count, taken from a
 *    table made at plan time. (Folding the 1/k² into the next layer's
 *    weights instead would change the float sums; this does not, and does
 *    less work: one event per window, not one per spike.)
 *  - Layers whose output is constant (the analog input's first layers under
 *    direct encoding) are computed once per sample, not once per step.
 *  - Where a convolution's weights outgrow the cache and each input channel
 *    sends few events a step (ResNet's and VGG's deep layers), steps run in
 *    blocks, layer by layer within a block, and one pass over the weights
 *    serves every step of the block (fast_ws, run_conv_block): ResNet-18
 *    (Fashion-MNIST, 32 px) 1.37× faster.
 *  - A depthwise convolution of signed spikes gathers each output's taps for
 *    all channels in vectors (plan_depthwise): scattered, a spike would add
 *    one float per tap. MobileNet-V2 (64 px) 1.9× faster.
 *  - A spiking max pool of signed spikes keeps its counts channel-last and
 *    takes each window's maxima for all channels in vectors, looking for
 *    the input that moved a maximum only where one moved (run_spikemax_cl):
 *    the trained VGG 1.75× faster.
 *  - A 1×1 convolution over signed spikes runs as an affine layer per output
 *    position (run_conv1x1), outputs held in registers: MobileNet-V2 1.3×,
 *    the example ResNet (a strided 1×1 shortcut) 1.2× faster.
 *  - A 1×1 convolution that only selects channels (conversion's channel
 *    shuffles and Slices) copies them (plan_selection): ShuffleNet-V2 1.34×.
 *  - With fewer samples than threads (batch 1), the threads share each
 *    sample as a team (fast_plan.team): convolutions split by bands of
 *    output rows, SignedIFs and Adds by the same bands, thread 0 running
 *    the rest; which layers gain is measured on the first samples
 *    (nc_fast_team_choose). At batch 1 on two threads: the example ResNet
 *    and torchvision's MobileNet-V2 (64 px) 1.2× one thread's speed.
 *  - Nonlinear layers (fast_nonlinear.c) keep their sums in the thread's
 *    workspace; a MatMul's rows run as affine layers over the factors'
 *    means (attention's Q·Kᵀ and A·V in a fifth to a tenth of the
 *    reference's time, measured on one attention block).
 *  - Nothing is allocated in run: plan_create sizes every buffer.
 *
 * Results equal the reference's bit for bit: each output accumulates its
 * terms in the reference's order (bias, then ascending input index), the
 * kernels multiply and add separately as the reference does, and the IF
 * arithmetic is the same (a team splits which thread computes an output,
 * never its terms). So spike trains, spike counts, synaptic-op counts and
 * readout sums are identical, for every instruction set and thread count.
 *
 * The kernels (kernels/fast_*.c) are chosen per plan: AVX-512, else AVX2,
 * else portable C; the environment variable NEUROC_CPU_FAST_ISA (generic,
 * avx2, avx512) forces one. A Concat holds its value dense in NCHW order
 * (each input materialised at its channel offset, as the reference
 * copies). A SignedIF holds its value dense (±spike value or 0, in its
 * state layout): its spikes have a sign a bitmask lacks, and its readers
 * take dense values as events anyway. Not supported: recurrent edges (supports_layer says so; the cpu
 * backend runs them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "snn/base/alloc.h"
#include "snn/run/backend.h"
#include "snn/base/error.h"
#include "fast_plan.h"
#include "snn/backends/weight_layout.h"

/* ------------------------------------------------------------ capability */

static int fast_supports(const nc_snn *s, int id, char *why, size_t len)
{
    const nc_snn_layer *L = &s->layers[id];
    if (!nc_backend_runs_kind(&nc_backend_cpu_fast, L->kind)) {
        snprintf(why, len, "not a layer kind of the IR");
        return 0;
    }
    for (int k = 0; k < L->n_inputs; k++)
        if (L->inputs[k] >= id) {
            snprintf(why, len, "it reads layer %d's previous step (a recurrent edge); cpu-fast runs "
                               "feed-forward networks only (the cpu backend runs it)", L->inputs[k]);
            return 0;
        }
    if (nc_snn_layer_size(L) > INT32_MAX) {
        snprintf(why, len, "more than 2^31 neurons per sample");
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ plan */

/* Conv2d weights from which on a block's steps share one pass (merge_slots) */
#define NC_FAST_MERGE_BYTES ((int64_t)256 << 10)

static void fast_plan_free(void *p)
{
    fast_plan *P = p;
    if (!P)
        return;
    for (int i = 0; P->L && i < P->s->n_layers; i++) {
        fast_layer *F = &P->L[i];
        void *bufs[] = {F->wt,   F->prow,   F->pcol, F->n_row, F->n_col,      F->rows, F->cols, F->rel, F->pwin, F->a0, F->tap_mask, F->bias_img,
                        F->vtab, F->chmask,   F->theta, F->v0,   F->dt_tau,     F->vleak, F->r,
                        F->dt_tau_syn, F->w_in, F->sval == F->theta ? NULL : F->sval, F->vreset, F->wdw, F->sel, F->bidx,
                        F->fan, F->unit};
        for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
            nc_free(bufs[b]);
    }
    for (int t = 0; P->ws && t < P->n_ws; t++) {
        fast_ws *W = &P->ws[t];
        nc_free(W->arena);
        nc_free(W->dense);
        nc_free(W->bits);
        nc_free(W->cnt);
        nc_free(W->nz);
        nc_free(W->mcnt);
        nc_free(W->v);
        nc_free(W->isyn);
        nc_free(W->net);
        nc_free(W->tmp);
        nc_free(W->ring);
        nc_free(W->ring_pos);
        nc_free(W->nl);
        for (int k = 1; W->slot && k < P->n_slots; k++) {
            nc_free(W->slot[k].dense);
            nc_free(W->slot[k].bits);
            nc_free(W->slot[k].cnt);
            nc_free(W->slot[k].nz);
        }
        nc_free(W->slot);
    }
    nc_free(P->ws);
    nc_free(P->L);
    nc_free(P->spk);
    nc_free(P->ops);
    nc_free(P->sec);
    nc_free(P->is_static);
    nc_free(P->team_on);
    nc_free(P->team_sec);
    nc_free(P->bar);
    nc_free(P);
}

/* For each input coordinate x in [0, n): the taps i in [0, k) (ascending)
 * with x = o·stride − pad + i·dil for an output o in [0, n_out); tap i gets
 * w_off = i·w_mul and a_off = o·a_mul. Returns 0 when out of memory. */
static int build_taps(int64_t n, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t n_out, int64_t w_mul,
                      int64_t a_mul, int32_t **count, nc_fast_tap **taps)
{
    *count = nc_calloc((size_t)n, sizeof **count);
    *taps = nc_calloc((size_t)(n * k), sizeof **taps);
    if (!*count || !*taps)
        return 0;
    for (int64_t x = 0; x < n; x++)
        for (int64_t i = 0; i < k; i++) {
            int64_t t = x + pad - i * dil;
            if (t < 0 || t % stride || t / stride >= n_out)
                continue;
            nc_fast_tap *tp = &(*taps)[x * k + (*count)[x]++];
            tp->w_off = i * w_mul;
            tp->a_off = (t / stride) * a_mul;
        }
    return 1;
}

/* ih and iw of every input position of a (H, W) plane. */
static int build_positions(int64_t H, int64_t W, int32_t **prow, int32_t **pcol)
{
    *prow = nc_malloc((size_t)(H * W) * sizeof **prow);
    *pcol = nc_malloc((size_t)(H * W) * sizeof **pcol);
    if (!*prow || !*pcol)
        return 0;
    for (int64_t p = 0; p < H * W; p++) {
        (*prow)[p] = (int32_t)(p / W);
        (*pcol)[p] = (int32_t)(p % W);
    }
    return 1;
}

static int plan_conv(const nc_snn_layer *L, const nc_snn_layer *X, fast_layer *F)
{
    int64_t H = X->shape[1], Wd = X->shape[2], K = L->shape[0], OH = L->shape[1], OW = L->shape[2];
    int64_t kh = L->weight->shape[2], kw = L->weight->shape[3], kg = K / L->groups;
    if (!(F->wt = nc_snn_fanout_weights(L)) || !build_positions(H, Wd, &F->prow, &F->pcol) ||
        !build_taps(H, kh, L->stride[0], L->padding[0], L->dilation[0], OH, kw * kg, OW * K, &F->n_row, &F->rows) ||
        !build_taps(Wd, kw, L->stride[1], L->padding[1], L->dilation[1], OW, kg, K, &F->n_col, &F->cols))
        return 0;
    /* tap (i, j) of input row ih reaches output row oh = (ih + ph − i·dh)/sh
     * where that divides, = ⌊(ih + ph)/sh⌋ − ⌊i·dh/sh⌋ (both sides agree
     * modulo sh), columns alike: so every valid tap lies rel[t] below a0[p] */
    int64_t sh = L->stride[0], sw = L->stride[1], dh = L->dilation[0], dw = L->dilation[1];
    if (!(F->rel = nc_malloc((size_t)(kh * kw) * sizeof *F->rel)))
        return 0;
    for (int64_t i = 0; i < kh; i++)
        for (int64_t j = 0; j < kw; j++)
            F->rel[i * kw + j] = (i * dh / sh * OW + j * dw / sw) * K;
    if (kh * kw <= 16) {
        F->tap_mask = nc_malloc((size_t)(H * Wd) * sizeof *F->tap_mask);
        F->a0 = nc_malloc((size_t)(H * Wd) * sizeof *F->a0);
        if (!F->tap_mask || !F->a0)
            return 0;
        for (int64_t p = 0; p < H * Wd; p++) {
            int64_t ih = p / Wd, iw = p % Wd;
            uint16_t m = 0;
            for (int r = 0; r < F->n_row[ih]; r++)
                for (int q = 0; q < F->n_col[iw]; q++)
                    m |= (uint16_t)(1u << (F->rows[ih * kh + r].w_off / (kw * kg) * kw + F->cols[iw * kw + q].w_off / kg));
            F->tap_mask[p] = m;
            F->a0[p] = ((ih + L->padding[0]) / sh * OW + (iw + L->padding[1]) / sw) * K;
        }
    }
    F->conv = (nc_fast_conv){.HW = H * Wd, .cg = X->shape[0] / L->groups, .kg = kg, .wc = kh * kw * kg,
                             .kh = (int)kh, .kw = (int)kw, .prow = F->prow, .pcol = F->pcol,
                             .n_row = F->n_row, .n_col = F->n_col, .rows = F->rows, .cols = F->cols,
                             .rel = F->rel, .tap_mask = F->tap_mask, .a0 = F->a0,
                             .a_lo = 0, .a_hi = INT64_MAX};
    return 1;
}

/* A convolution whose steps may share a pass over its weights (scatter_slots):
 * not one that gathers per output position or copies. */
static int mergeable(const fast_layer *F)
{
    return !F->dw && !F->sel;
}

static int is_depthwise(const nc_snn_layer *L)
{
    return L->groups == L->shape[0] && L->weight->shape[1] == 1;
}

/* A depthwise convolution (one input channel an output channel) reading a
 * channel-last dense value (signed spikes) gathers each output's taps for
 * all channels at once (K->dw_cl): scattered, every spike would add one
 * float per tap. One reading graded NCHW values (graded_nchw: a Nonlinear
 * layer's: conversion's LayerNorm γ, attention's score scale, a readout
 * token's Gather) is NCHW too (plan_layers) and gathers a channel at a time
 * (run_dwconv_nchw): scattered, each of its values was an event. Returns 0
 * when out of memory. */
static int plan_depthwise(const nc_snn_layer *L, const fast_layer *X, int graded_nchw, fast_layer *F)
{
    int64_t C = L->shape[0], kh = L->weight->shape[2], kw = L->weight->shape[3];
    if (is_depthwise(L) && graded_nchw) {
        F->dw = 1;
        if (kh * kw > 1 || L->stride[0] != 1 || L->stride[1] != 1 || L->padding[0] || L->padding[1])
            return 1;
        /* one tap at the output's own position: its weight at every
         * position, so the kernel set's depthwise tap runs over a channel's
         * positions as its lanes (run_dwconv_nchw) */
        if (!(F->wdw = nc_malloc((size_t)F->size * sizeof *F->wdw)))
            return 0;
        for (int64_t k = 0; k < F->size; k++)
            F->wdw[k] = nc_f32(L->weight)[k / F->HW];
        return 1;
    }
    if (!is_depthwise(L) || !F->cl || !X->cl)
        return 1;
    if (!(F->wdw = nc_malloc((size_t)(C * kh * kw) * sizeof *F->wdw)))
        return 0;
    for (int64_t c = 0; c < C; c++)
        for (int64_t t = 0; t < kh * kw; t++)
            F->wdw[t * C + c] = nc_f32(L->weight)[c * kh * kw + t];
    F->dw = 1;
    return 1;
}

/* A 1×1 convolution of a dense value that only selects channels
 * (conversion writes a channel shuffle or a Slice so: weights 0 or 1, at
 * most one 1 an output channel, bias +0, stride 1, no padding) copies them
 * (F->sel[o] = the input channel of output o, or -1; run_select): the
 * reference's sum is then exactly that input, or +0. Returns 0 when out of
 * memory. */
static int plan_selection(const nc_snn_layer *L, fast_layer *F)
{
    int64_t K = L->shape[0], C = L->weight->shape[1];
    if (L->stride[0] != 1 || L->stride[1] != 1 || L->padding[0] || L->padding[1])
        return 1;
    const float *w = nc_f32(L->weight), *b = nc_f32(L->bias);
    for (int64_t o = 0; o < K; o++) {
        uint32_t bits;
        memcpy(&bits, &b[o], sizeof bits);
        if (bits != 0)
            return 1;
        int ones = 0;
        for (int64_t c = 0; c < C; c++) {
            if (w[o * C + c] != 0.0f && w[o * C + c] != 1.0f)
                return 1;
            ones += w[o * C + c] == 1.0f;
        }
        if (ones > 1)
            return 1;
    }
    if (!(F->sel = nc_malloc((size_t)K * sizeof *F->sel)))
        return 0;
    for (int64_t o = 0; o < K; o++) {
        F->sel[o] = -1;
        for (int64_t c = 0; c < C; c++)
            if (w[o * C + c] == 1.0f)
                F->sel[o] = (int32_t)c;
    }
    return 1;
}

/* A Pool2d reading spikes whose value is uniform per channel keeps counts
 * (see the file comment); returns 1 when set up that way, 0 when the dense
 * path applies, -1 when out of memory. */
static int plan_pool_counts(const nc_snn *s, const nc_snn_layer *L, fast_plan *P, fast_layer *F)
{
    const nc_snn_layer *X = &s->layers[L->inputs[0]];
    const fast_layer *S = &P->L[P->L[L->inputs[0]].view];
    int64_t kk = L->kernel[0] * L->kernel[1], C = X->shape[0], HWx = X->shape[1] * X->shape[2];
    if (!S->neuron || S->rep != REP_SPIKES || kk > 4096 || !(0.0f * L->scale == 0.0f) || L->div_taps) /* one value per count */
        return 0;
    for (int64_t c = 0; c < C; c++)
        for (int64_t p = 1; p < HWx; p++)
            if (memcmp(&S->sval[c * HWx + p], &S->sval[c * HWx], sizeof(float)) != 0)
                return 0;
    F->kk1 = kk + 1;
    F->vtab = nc_malloc((size_t)(C * F->kk1) * sizeof *F->vtab);
    F->chmask = nc_malloc((size_t)C * sizeof *F->chmask);
    if (!F->vtab || !F->chmask)
        return -1;
    for (int64_t c = 0; c < C; c++) {
        float sv = S->sval[c * HWx], acc = 0.0f; /* the reference sums a window's spikes, then scales */
        F->vtab[c * F->kk1] = acc * L->scale;
        for (int64_t n = 1; n <= kk; n++) {
            acc += sv;
            F->vtab[c * F->kk1 + n] = acc * L->scale;
        }
        F->chmask[c] = sv != 0.0f ? UINT32_MAX : 0;
    }
    int64_t OW = L->shape[2];
    if (!build_positions(X->shape[1], X->shape[2], &F->prow, &F->pcol) ||
        !build_taps(X->shape[1], L->kernel[0], L->stride[0], L->padding[0], 1, L->shape[1], 0, OW, &F->n_row,
                    &F->rows) ||
        !build_taps(X->shape[2], L->kernel[1], L->stride[1], L->padding[1], 1, OW, 0, 1, &F->n_col, &F->cols))
        return -1;
    if (L->stride[0] >= L->kernel[0] && L->stride[1] >= L->kernel[1]) { /* disjoint windows */
        if (!(F->pwin = nc_malloc((size_t)HWx * sizeof *F->pwin)))
            return -1;
        for (int64_t p = 0; p < HWx; p++) {
            int32_t h = F->prow[p], x = F->pcol[p];
            F->pwin[p] = F->n_row[h] && F->n_col[x]
                             ? (int32_t)(F->rows[h * L->kernel[0]].a_off + F->cols[x * L->kernel[1]].a_off)
                             : -1;
        }
    }
    return 1;
}

/* src (C planes of HW values of esize bytes, channel-first) moved into a
 * new channel-last array ([HW][C]); src is freed. NULL when out of memory. */
static void *channel_last(void *src, size_t esize, int64_t C, int64_t HW)
{
    char *dst = src ? nc_malloc((size_t)(C * HW) * esize) : NULL;
    for (int64_t c = 0; dst && c < C; c++)
        for (int64_t p = 0; p < HW; p++)
            memcpy(dst + (size_t)(p * C + c) * esize, (const char *)src + (size_t)(c * HW + p) * esize, esize);
    nc_free(src);
    return dst;
}

/* A SignedIF or SpikeMaxPool2d of bursts: the synaptic ops an event of
 * each neuron causes downstream (nc_snn_event_fanout, macs:
 * nc_snn_mark_macs), channel-last when cl (the layout of its values). 0
 * when out of memory. */
static int plan_burst_fanout(const nc_snn *s, const char *macs, int i, fast_layer *F, int cl)
{
    int fail = 0;
    int32_t *fan = nc_snn_event_fanout(s, macs, i, &fail);
    if (fail)
        return 0;
    F->fan = cl ? channel_last(fan, sizeof *fan, F->C, F->HW) : fan;
    return F->fan != NULL;
}

/* A SpikeMaxPool2d of bursts: its input's single-spike values
 * (nc_snn_spike_units), channel-last (C channels, HW positions) when it
 * reads its input in place, and the fan-out of its events in its own
 * layout. Nothing for a pool of single spikes. 0 when out of memory. */
static int plan_spikemax(const nc_snn *s, const char *macs, int i, fast_layer *F, int64_t C, int64_t HW)
{
    int fail = 0;
    float *u = nc_snn_spike_units(s, s->layers[i].inputs[0], &fail);
    if (!u)
        return !fail;
    F->unit = F->in_dense ? channel_last(u, sizeof *u, C, HW) : u;
    return F->unit && plan_burst_fanout(s, macs, i, F, F->cl);
}

static int plan_neuron(const nc_snn_layer *L, fast_layer *F)
{
    int fail = 0, cl = F->state_cl;
    /* state in the layer's state layout; spike values in the reference's
       order, except a SignedIF's (its dense value is in the state layout) */
    F->theta = nc_snn_param_expand(L->threshold, L, 1.0f, cl, &fail);
    F->v0 = nc_snn_v_inits(L, cl, &fail);
    F->sval = nc_snn_spike_values(L, L->kind == NC_SNN_SIGNED_IF ? cl : 0, &fail);
    F->theta_full = 1;
    /* a SignedIF's spikes carry θ (conversion's default): its kernel then
     * reads one array for both, not two */
    if (!fail && L->kind == NC_SNN_SIGNED_IF && F->theta && F->sval &&
        memcmp(F->theta, F->sval, (size_t)F->size * sizeof *F->sval) == 0) {
        nc_free(F->sval);
        F->sval = F->theta;
    }
    F->nir = nc_snn_layer_nir_semantics(L);
    if (F->nir) { /* the per-neuron loop of kernels/nir_neuron.h: full-size parameters */
        F->vreset = nc_snn_param_expand(L->v_reset, L, 0.0f, cl, &fail);
        F->r = nc_snn_param_expand(L->r, L, 1.0f, cl, &fail);
    }
    if (!fail && L->kind == NC_SNN_IF && !F->nir && cl && L->threshold &&
        (L->threshold->numel == 1 || L->threshold->numel == F->C)) {
        F->theta_full = 0; /* channel-last: the first C values are the channels' */
        float *t = nc_realloc(F->theta, (size_t)F->C * sizeof *t);
        if (t)
            F->theta = t;
    }
    if (nc_snn_kind(L->kind)->leaky) {
        F->dt_tau = nc_snn_leak_coefs(L, L->tau, cl, &fail);
        F->vleak = nc_snn_param_expand(L->v_leak, L, 0.0f, cl, &fail);
        if (!F->r)
            F->r = nc_snn_param_expand(L->r, L, 1.0f, cl, &fail);
    }
    if (nc_snn_kind(L->kind)->current) {
        F->dt_tau_syn = nc_snn_leak_coefs(L, L->tau_syn, cl, &fail);
        F->w_in = nc_snn_param_expand(L->w_in, L, 1.0f, cl, &fail);
    }
    return !fail;
}

/* Decides how each layer holds its value and builds its tables. */
static nc_status plan_layers(fast_plan *P)
{
    const nc_snn *s = P->s;
    nc_snn_mark_signed(s, P->is_static); /* is_static is set per run: scratch until then */
    for (int i = 0; i < s->n_layers; i++)
        P->L[i].is_signed = P->is_static[i];
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, P->is_static); /* scratch again: which layers multiply */
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        fast_layer *F = &P->L[i];
        F->size = nc_snn_layer_size(L);
        F->C = nc_snn_layer_channels(L);
        F->HW = F->C > 0 ? F->size / F->C : 0;
        F->BC = L->ndim == 3 ? F->C : 1;
        F->BHW = L->ndim == 3 ? F->HW : F->size;
        F->wpc = (F->BHW + 63) / 64;
        F->view = i;
        F->neuron = nc_snn_kind_is_neuron(L->kind);
        F->fused_pool = -1;
        F->refill_of = -1;
        const fast_layer *X = L->n_inputs > 0 ? &P->L[P->L[L->inputs[0]].view] : NULL;
        int x_view = L->n_inputs > 0 ? P->L[L->inputs[0]].view : -1;
        /* Read in place: a dense input other than the Input layer (which may
         * hold Poisson spikes, decided per run), stored in an order this
         * layer can index: flat, or channel-last with this layer's geometry
         * (not through a Flatten of a channel-last value). */
        F->in_dense = X && X->rep == REP_DENSE && x_view != 0 && (!X->cl || (X->C == F->C && X->HW == F->HW));
        /* pools index their input by its own geometry (run_pool_dense, run_maxpool) */
        if ((L->kind == NC_SNN_POOL2D || L->kind == NC_SNN_MAXPOOL2D) && X && X->rep == REP_DENSE && x_view != 0 &&
            X->C == F->C && s->layers[x_view].ndim == 3)
            F->in_dense = 1;
        int ok = 1;
        switch (L->kind) {
        case NC_SNN_INPUT: F->rep = REP_DENSE; break;
        case NC_SNN_FLATTEN: case NC_SNN_READOUT: F->view = x_view; break;
        case NC_SNN_AFFINE:
            F->rep = REP_DENSE;
            ok = (F->wt = nc_snn_fanout_weights(L)) != NULL;
            break;
        case NC_SNN_CONV2D: {
            F->rep = REP_DENSE;
            /* the dense input read in place, by the convolution's own geometry:
             * what the gathers and the copy (below) read */
            const nc_snn_layer *XL = &s->layers[L->inputs[0]];
            int in_place = X && x_view != 0 && X->rep == REP_DENSE && X->C == XL->shape[0] &&
                           X->HW == XL->shape[1] * XL->shape[2];
            /* graded NCHW values (P->is_static: nc_snn_mark_macs, its input
             * no spikes), a Nonlinear layer's: all non-zero, so a gather beats
             * scattering each as an event; so do a 1×1 convolution's over an
             * NCHW SignedIF's (after a Nonlinear layer: the ViT's MLP, dense
             * bursts; scattered, the small ViT took 1.3× the time). Other NCHW spikes (a
             * Concat's) keep the scatter: not measured. */
            int graded_nchw = in_place && !X->cl && P->is_static[i];
            int signed_nchw = in_place && !X->cl && s->layers[x_view].kind == NC_SNN_SIGNED_IF;
            F->cl = F->C > 1 && F->HW > 1 && !(graded_nchw && is_depthwise(L)); /* run_dwconv_nchw */
            ok = plan_conv(L, XL, F) &&
                 (F->bias_img = nc_malloc((size_t)F->size * sizeof *F->bias_img)) != NULL;
            for (int64_t c = 0; ok && c < F->C; c++)
                for (int64_t p = 0; p < F->HW; p++)
                    F->bias_img[at(F->cl, F->C, F->HW, c, p)] = nc_f32(L->bias)[c];
            if (ok && in_place) {
                int one = L->weight->shape[2] == 1 && L->weight->shape[3] == 1 && L->groups == 1;
                ok = plan_depthwise(L, X, graded_nchw, F) && (!one || plan_selection(L, F));
                F->pw = one && !F->sel && F->cl && (X->cl || graded_nchw || signed_nchw);
            }
            /* few events a channel per step read a large weight tensor once
             * for a handful of adds: merge the block's steps over it */
            F->merge_slots = ok && mergeable(F) &&
                             s->layers[L->inputs[0]].shape[0] * F->conv.wc * (int64_t)sizeof(float) >= NC_FAST_MERGE_BYTES;
            break;
        }
        case NC_SNN_POOL2D: {
            int r = plan_pool_counts(s, L, P, F);
            ok = r >= 0;
            F->rep = r == 1 ? REP_COUNTS : REP_DENSE;
            F->cl = F->rep == REP_DENSE && F->in_dense && X->cl;
            fast_layer *S = &P->L[x_view];
            /* disjoint windows over a channel-last IF: its kernel counts them */
            if (F->rep == REP_COUNTS && F->pwin && S->state_cl && s->layers[x_view].kind == NC_SNN_IF && !S->nir &&
                S->fused_pool < 0)
                S->fused_pool = i;
            break;
        }
        case NC_SNN_MAXPOOL2D:
            F->rep = REP_DENSE;
            F->cl = F->in_dense && X->cl;
            break;
        case NC_SNN_SPIKEMAXPOOL2D:
            /* signed spikes held channel-last are read in place (run_spikemax_cl);
             * else the reference's loop over an NCHW copy of the input */
            F->rep = REP_DENSE;
            F->in_dense = X && X->rep == REP_DENSE && x_view != 0 && X->cl && X->C == F->C &&
                          X->HW == s->layers[x_view].shape[1] * s->layers[x_view].shape[2];
            F->cl = F->in_dense && F->C > 1 && F->HW > 1;
            ok = plan_spikemax(s, P->is_static, i, F, F->C, nc_snn_layer_size(&s->layers[L->inputs[0]]) / F->C);
            break;
        case NC_SNN_CONCAT: F->rep = REP_DENSE; break; /* NCHW: the inputs one after another */
        case NC_SNN_ADD:
            F->rep = REP_DENSE;
            for (int k = 0; k < L->n_inputs; k++) {
                const fast_layer *Y = &P->L[P->L[L->inputs[k]].view];
                if (Y->rep == REP_DENSE && Y->cl && P->L[L->inputs[k]].view != 0)
                    F->cl = F->C > 1 && F->HW > 1;
            }
            break;
        case NC_SNN_IF: case NC_SNN_LIF: case NC_SNN_CUBALIF:
            F->rep = REP_SPIKES;
            F->state_cl = F->in_dense && X->cl;
            ok = plan_neuron(L, F);
            break;
        case NC_SNN_SIGNED_IF: /* dense ±spike values in the state layout */
            F->rep = REP_DENSE;
            F->state_cl = F->cl = F->in_dense && X->cl;
            ok = plan_neuron(L, F) && (nc_snn_layer_burst(L) == 1 || plan_burst_fanout(s, P->is_static, i, F, F->state_cl));
            break;
        case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR: case NC_SNN_THRESHOLD: case NC_SNN_SCALE:
        case NC_SNN_DELAY: case NC_SNN_RESHAPE: case NC_SNN_GATHER:
            ok = nc_fast_plan_nir(L, F);
            break;
        case NC_SNN_NONLINEAR: ok = nc_fast_plan_nonlinear(s, L, F); break;
        default:
            return nc_errorf(NC_ERR_UNSUPPORTED, "cpu-fast: layer '%s' of kind %s", L->name,
                             nc_snn_kind_name(L->kind));
        }
        if (!ok)
            return nc_errorf(NC_ERR_NOMEM, "out of memory planning layer '%s' for cpu-fast", L->name);
    }
    for (int i = 0; i < s->n_layers; i++) { /* IFs that refill their conv (fast_layer.refill_of) */
        const nc_snn_layer *L = &s->layers[i];
        int j = L->n_inputs > 0 ? L->inputs[0] : -1, readers = 0;
        if (L->kind != NC_SNN_IF || P->L[i].nir || !P->L[i].state_cl || s->layers[j].kind != NC_SNN_CONV2D ||
            j == nc_snn_output_id(s))
            continue;
        for (int k = 0; k < s->n_layers; k++)
            for (int e = 0; e < s->layers[k].n_inputs; e++)
                readers += s->layers[k].inputs[e] == j;
        if (readers == 1) {
            P->L[i].refill_of = j;
            P->L[j].refilled = 1;
        }
    }
    return NC_OK;
}

/* Carves one thread's buffers out of a single arena, each 64-byte aligned:
 * a first pass adds up the sizes, a second sets the pointers. */
static nc_status plan_workspace(fast_plan *P, fast_ws *W, int team)
{
    const nc_snn *s = P->s;
    int n = s->n_layers;
    W->dense = nc_calloc((size_t)n, sizeof *W->dense);
    W->bits = nc_calloc((size_t)n, sizeof *W->bits);
    W->cnt = nc_calloc((size_t)n, sizeof *W->cnt);
    W->nz = nc_calloc((size_t)n, sizeof *W->nz);
    W->mcnt = nc_calloc((size_t)n, sizeof *W->mcnt);
    W->v = nc_calloc((size_t)n, sizeof *W->v);
    W->isyn = nc_calloc((size_t)n, sizeof *W->isyn);
    W->net = nc_calloc((size_t)n, sizeof *W->net);
    W->tmp = nc_calloc((size_t)n, sizeof *W->tmp);
    W->ring = nc_calloc((size_t)n, sizeof *W->ring);
    W->ring_pos = nc_calloc((size_t)n, sizeof *W->ring_pos);
    W->nl = nc_calloc((size_t)n, sizeof *W->nl);
    int S = P->n_slots;
    W->slot = nc_calloc((size_t)S, sizeof *W->slot);
    if (!W->dense || !W->bits || !W->cnt || !W->nz || !W->mcnt || !W->v || !W->isyn || !W->net || !W->tmp ||
        !W->ring || !W->ring_pos || !W->nl || !W->slot)
        return nc_errorf(NC_ERR_NOMEM, "out of memory creating the cpu-fast plan");
    fast_ws *V = W->slot;
    V[0].dense = W->dense, V[0].bits = W->bits, V[0].cnt = W->cnt, V[0].nz = W->nz;
    for (int k = 1; k < S; k++) {
        V[k].dense = nc_calloc((size_t)n, sizeof *V[k].dense);
        V[k].bits = nc_calloc((size_t)n, sizeof *V[k].bits);
        V[k].cnt = nc_calloc((size_t)n, sizeof *V[k].cnt);
        V[k].nz = nc_calloc((size_t)n, sizeof *V[k].nz);
        if (!V[k].dense || !V[k].bits || !V[k].cnt || !V[k].nz)
            return nc_errorf(NC_ERR_NOMEM, "out of memory creating the cpu-fast plan");
    }
    char *base = NULL;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t off = 0;
#define CARVE(ptr, count, type)                                                 \
    do {                                                                        \
        if (pass)                                                               \
            (ptr) = (type *)(void *)(base + off);                               \
        off += nc_fast_carve_bytes(count, sizeof(type));                        \
    } while (0)
/* a value layers pass on: one copy per slot */
#define CARVE_SLOTS(field, i, count, type)                                      \
    do {                                                                        \
        for (int k_ = 0; k_ < S; k_++)                                          \
            CARVE(V[k_].field[i], count, type);                                 \
    } while (0)
        int64_t ev = 0, obuf = 0;
        for (int i = 0; i < n; i++) {
            const nc_snn_layer *L = &s->layers[i];
            const fast_layer *F = &P->L[i];
            int64_t in_size = L->n_inputs > 0 ? P->L[L->inputs[0]].size : 0;
            if (F->size > obuf)
                obuf = F->size;
            if (F->view != i)
                continue;
            if (F->rep == REP_DENSE && i > 0)
                CARVE_SLOTS(dense, i, F->size, float);
            if (F->rep == REP_SPIKES || i == 0)
                CARVE_SLOTS(bits, i, F->BC * F->wpc, uint64_t);
            if (F->rep == REP_COUNTS) {
                CARVE_SLOTS(cnt, i, F->size, uint32_t);
                CARVE_SLOTS(nz, i, F->BC * F->wpc, uint64_t);
            }
            if (nc_snn_kind(L->kind)->membrane)
                CARVE(W->v[i], F->size, float);
            if (nc_snn_kind(L->kind)->current)
                CARVE(W->isyn[i], F->size, float);
            if (L->kind == NC_SNN_DELAY)
                CARVE(W->ring[i], (L->kernel[0] + 1) * F->size, float);
            if (L->kind == NC_SNN_SIGNED_IF)
                CARVE(W->net[i], F->size, int32_t);
            if (((F->neuron || F->nir_kind || L->kind == NC_SNN_MAXPOOL2D ||
                  (L->kind == NC_SNN_POOL2D && F->rep == REP_DENSE)) &&
                 !F->in_dense) ||
                L->kind == NC_SNN_SPIKEMAXPOOL2D) /* in place, the window maxima of a position's channels */
                CARVE(W->tmp[i], in_size, float);
            if (L->kind == NC_SNN_SPIKEMAXPOOL2D)
                CARVE(W->mcnt[i], in_size + F->size, uint32_t);
            if (L->kind == NC_SNN_NONLINEAR) { /* its inputs materialised one at a time; MatMul's events: x's rows */
                int64_t big = in_size;
                for (int k = 1; k < L->n_inputs; k++)
                    if (P->L[L->inputs[k]].size > big)
                        big = P->L[L->inputs[k]].size;
                CARVE(W->tmp[i], big, float);
                CARVE(W->nl[i], nc_fast_nl_floats(s, L), float);
            }
            if ((nc_snn_kind_is_synaptic(L->kind) || L->kind == NC_SNN_NONLINEAR) && in_size > ev)
                ev = in_size;
        }
        W->ev_cap = ((ev + 15) & ~(int64_t)15) + 16; /* + what K->compact may write beyond */
        CARVE(W->ev_idx, W->ev_cap * S * team, int32_t);
        CARVE(W->ev_val, W->ev_cap * S * team, float);
        CARVE(W->obuf, obuf, float);
#undef CARVE_SLOTS
#undef CARVE
        if (pass == 0) {
            if (off > SIZE_MAX - 64 || !(W->arena = nc_malloc((size_t)off + 64)))
                return nc_errorf(NC_ERR_NOMEM, "out of memory creating the cpu-fast plan (%llu bytes a thread)",
                                 (unsigned long long)off);
            base = (char *)W->arena + ((64 - (uintptr_t)W->arena % 64) % 64);
        }
    }
    /* each slot: its own copies of the passed-on values, the rest shared */
    for (int k = 0; k < S; k++) {
        fast_ws v = *W;
        v.dense = V[k].dense, v.bits = V[k].bits, v.cnt = V[k].cnt, v.nz = V[k].nz;
        v.ev_idx = W->ev_idx + k * W->ev_cap;
        v.ev_val = W->ev_val + k * W->ev_cap;
        v.slot = NULL;
        V[k] = v;
    }
    return NC_OK;
}

/* Steps a block (fast_ws). Blocks pay only where a layer's weights are
 * merged over them (merge_slots): elsewhere one step's values stay in the
 * first cache levels and eight steps' would not (the example CNN: 18 %
 * slower in blocks of 8). Then as many as NC_FAST_SLOT_BYTES of passed-on
 * values allow, at most NC_FAST_MAX_SLOTS. NEUROC_CPU_FAST_SLOTS=k
 * (tests, benchmarks) sets blocks of k steps and merges every convolution
 * over them. */
#define NC_FAST_MAX_SLOTS 8
#define NC_FAST_SLOT_BYTES ((int64_t)32 << 20)
static int plan_slots(fast_plan *P)
{
    const char *env = getenv("NEUROC_CPU_FAST_SLOTS");
    if (env && *env) {
        long v = strtol(env, NULL, 10); /* garbage or out of range: clamped */
        for (int i = 0; i < P->s->n_layers; i++)
            P->L[i].merge_slots = P->s->layers[i].kind == NC_SNN_CONV2D && mergeable(&P->L[i]);
        return v < 1 ? 1 : v > NC_FAST_SLOTS_LIMIT ? NC_FAST_SLOTS_LIMIT : (int)v;
    }
    int64_t bytes = 0, merges = 0;
    for (int i = 0; i < P->s->n_layers; i++) {
        const fast_layer *F = &P->L[i];
        merges += F->merge_slots;
        if (F->view == i)
            bytes += F->rep == REP_SPIKES ? F->BC * F->wpc * 8 : F->size * 4 + (F->rep == REP_COUNTS ? F->BC * F->wpc * 8 : 0);
    }
    if (!merges)
        return 1;
    int64_t n = bytes > 0 ? NC_FAST_SLOT_BYTES / bytes : NC_FAST_MAX_SLOTS;
    return n < 1 ? 1 : n > NC_FAST_MAX_SLOTS ? NC_FAST_MAX_SLOTS : (int)n;
}

/* How much faster than alone a layer must have run split in the trials. */
#define NC_FAST_TEAM_GAIN 0.9

/* Output rows a thread of a team takes at least (fast_layer.team): in
 * narrower bands the scatter's events whose taps cross into the next band,
 * which both threads handle, cost more than the split saves (tv_resnet18 at
 * 64 px, batch 1, two threads: bands of >= 8 rows 1.16×, >= 4 1.37×, >= 2
 * 1.32× one thread's speed). */
#define NC_FAST_TEAM_ROWS 4
/* Elements from which on an elementwise layer is a team's candidate:
 * below, the two barriers alone cost more than half of it. (Which
 * candidates pay is measured: nc_fast_team_choose.) */
#define NC_FAST_TEAM_ELEMS ((int64_t)4 << 10)

/* An Add whose inputs are all dense in its own layout (elementwise). */
static int add_elementwise(const fast_plan *P, const nc_snn_layer *L, const fast_layer *F)
{
    for (int k = 0; k < L->n_inputs; k++) {
        int j = P->L[L->inputs[k]].view;
        if (j == 0 || P->L[j].rep != REP_DENSE || P->L[j].cl != F->cl || P->L[j].size != F->size)
            return 0;
    }
    return 1;
}

/* How each layer runs, once the blocks are known (plan_slots may merge
 * more): which convolutions scatter events (run_conv_block), and which
 * layers a team of threads may split (fast_layer.team): scatters,
 * depthwise and 1×1 convolutions by bands of output rows; SignedIFs
 * reading their input in place and Adds of same-layout values by the same
 * bands, or ranges of elements (not channel-last). The other convolutions
 * gather or copy, except that a 1×1 convolution merged over blocks
 * scatters (one pass over its weights for a block beats a pass per output
 * position on MobileNet-V2). Without a layer to split, there is no team. */
static void plan_paths(fast_plan *P)
{
    /* NEUROC_CPU_FAST_TEAM (tests, benchmarks): "all" splits every layer a
     * team can split, whatever its size, in every sample; "off": no team */
    const char *env = getenv("NEUROC_CPU_FAST_TEAM");
    int all = env && !strcmp(env, "all"), candidates = 0;
    if (env && !strcmp(env, "off"))
        P->team = 1;
    else if (env && *env && !all)
        nc_log(NC_LOG_WARN, "cpu-fast: NEUROC_CPU_FAST_TEAM=%s is neither all nor off; ignored", env);
    int64_t rows = all ? 1 : NC_FAST_TEAM_ROWS, elems = all ? 1 : NC_FAST_TEAM_ELEMS;
    for (int i = 0; i < P->s->n_layers; i++) {
        const nc_snn_layer *L = &P->s->layers[i];
        fast_layer *F = &P->L[i];
        F->scatter = L->kind == NC_SNN_CONV2D && mergeable(F) && (!F->pw || F->merge_slots);
        if (P->team < 2)
            continue;
        if (L->kind == NC_SNN_CONV2D)
            F->team = (F->scatter || F->dw || F->pw) && L->shape[1] >= 2 * rows;
        else if (L->kind == NC_SNN_SIGNED_IF)
            F->team = F->in_dense && F->size >= elems;
        else if (L->kind == NC_SNN_ADD)
            F->team = add_elementwise(P, L, F) && F->size >= elems;
        P->team_on[i] = (char)(all && F->team);
        candidates += F->team;
    }
    if (!candidates) /* nothing to share: no parallel region for each sample */
        P->team = 1;
    if (all) /* decided */
        P->team_trials = NC_FAST_TEAM_SAMPLES;
}

void nc_fast_team_choose(fast_plan *P)
{
    /* the warm-up alone (a process that runs one sample runs it as a
     * thread per sample would), then split, alone, ... */
    int mode = nc_fast_team_mode(P);
    for (int i = 0; mode >= 0 && i < P->s->n_layers; i++)
        P->team_on[i] = (char)(P->L[i].team && mode);
}

void nc_fast_team_learn(fast_plan *P)
{
    int nl = P->s->n_layers;
    if (nc_fast_team_mode(P) < 0)
        return;
    if (P->team_trials++ == 0) /* the warm-up's times: not a trial's */
        memset(P->team_sec, 0, (size_t)(2 * nl) * sizeof *P->team_sec);
    if (P->team_trials < NC_FAST_TEAM_SAMPLES)
        return;
    int split = 0;
    for (int i = 0; i < nl; i++) {
        P->team_on[i] = (char)(P->L[i].team && P->team_sec[nl + i] < NC_FAST_TEAM_GAIN * P->team_sec[i]);
        split += P->team_on[i];
    }
    nc_log(NC_LOG_DEBUG, "cpu-fast: a team of %d threads splits %d layers of each sample", P->team, split);
    if (!split) /* from the next run on, one thread a sample again */
        P->team = 1;
}

static nc_status fast_plan_create(const nc_snn *s, int N, void **out)
{
    *out = NULL;
    const char *want = getenv("NEUROC_CPU_FAST_ISA");
    const nc_fast_kernels *K = nc_fast_kernels_select(want && *want ? want : NULL);
    if (!K)
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE,
                         "cpu-fast: NEUROC_CPU_FAST_ISA=%s is not available on this CPU or build "
                         "(generic, avx2 or avx512)", want);
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    int n_ws = N < threads ? N : threads;
    if (n_ws < 1)
        n_ws = 1;
    int64_t counters;
    if (!nc_mul_i64(N, s->n_layers, &counters))
        return nc_errorf(NC_ERR_LIMIT, "cpu-fast: batch %d is too large", N);
    fast_plan *P = nc_calloc(1, sizeof *P);
    if (!P)
        return nc_errorf(NC_ERR_NOMEM, "out of memory creating the cpu-fast plan");
    P->s = s;
    P->N = N;
    P->K = K;
    P->L = nc_calloc((size_t)s->n_layers, sizeof *P->L);
    P->ws = nc_calloc((size_t)n_ws, sizeof *P->ws);
    P->spk = nc_calloc((size_t)counters, sizeof *P->spk);
    P->ops = nc_calloc((size_t)counters, sizeof *P->ops);
    P->sec = nc_calloc((size_t)counters, sizeof *P->sec);
    P->is_static = nc_calloc((size_t)s->n_layers, 1);
    P->team_on = nc_calloc((size_t)s->n_layers, 1);
    P->team_sec = nc_calloc((size_t)(2 * s->n_layers), sizeof *P->team_sec);
    P->bar = nc_calloc(1, sizeof *P->bar);
    nc_status st = NC_OK;
    if (!P->L || !P->ws || !P->spk || !P->ops || !P->sec || !P->is_static || !P->team_on || !P->team_sec ||
        !P->bar)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory creating the cpu-fast plan");
    if (st == NC_OK)
        st = plan_layers(P);
    P->team = N < threads ? threads : 1;
    if (st == NC_OK) {
        P->n_slots = plan_slots(P);
        plan_paths(P);
    }
    for (int t = 0; st == NC_OK && t < n_ws; t++) {
        P->n_ws = t + 1;
        st = plan_workspace(P, &P->ws[t], t == 0 ? P->team : 1);
    }
    if (st != NC_OK) {
        fast_plan_free(P);
        return st;
    }
    nc_log(NC_LOG_DEBUG, "cpu-fast: %s kernels, %d thread workspaces for batch %d, blocks of %d steps", K->name,
           n_ws, N, P->n_slots);
    if (P->team > 1)
        nc_log(NC_LOG_DEBUG, "cpu-fast: %d threads share each sample as a team", P->team);
    *out = P;
    return NC_OK;
}

static nc_status fast_run(void *plan, const nc_run_request *q)
{
    fast_plan *P = plan;
    const nc_snn *s = P->s;
    int N = q->N, nl = s->n_layers;
    if (N != P->N)
        return nc_errorf(NC_ERR_INTERNAL, "cpu-fast plan made for batch %d run with %d", P->N, N);
    nc_snn_mark_static(s, q->series, q->encoding, P->is_static);
    for (int i = 0; i < nl; i++)
        P->L[i].is_static = P->is_static[i];
    P->L[0].rep = q->encoding == NC_ENCODING_POISSON ? REP_SPIKES : REP_DENSE;
    int64_t out_size = P->L[nc_snn_output_id(s)].size;
    if (!q->per_step)
        memset(q->output, 0, (size_t)(N * out_size) * sizeof(float));
    if (q->synops_step) /* the samples add to them as they go (add_step_ops, count_burst_ops) */
        memset(q->synops_step, 0, (size_t)q->T * (size_t)nl * sizeof *q->synops_step);
    if (q->synops_step && q->burst_ops_step)
        memset(q->burst_ops_step, 0, (size_t)q->T * (size_t)nl * sizeof *q->burst_ops_step);
    for (int w = 0; w < P->n_ws; w++)
        nc_fast_bind_slots(P, &P->ws[w]);
    int nt = P->n_ws;
#ifdef _OPENMP
    if (omp_get_max_threads() < nt)
        nt = omp_get_max_threads();
    int team = P->team < omp_get_max_threads() ? P->team : omp_get_max_threads(); /* the caller's threads now */
    if (team > 1) { /* fewer samples than threads: a team runs each sample */
#pragma omp parallel num_threads(team)
        for (int n = 0; n < N; n++) {
            int tid = omp_get_thread_num();
            if (tid == 0)
                nc_fast_team_choose(P);
            nc_fast_team_barrier(P, omp_get_num_threads());
            nc_fast_run_sample(P, &P->ws[0], q, n, tid, omp_get_num_threads());
            /* every thread past the sample's last layer before thread 0
             * changes which layers are split */
            nc_fast_team_barrier(P, omp_get_num_threads());
            if (tid == 0)
                nc_fast_team_learn(P);
        }
    } else {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
        for (int n = 0; n < N; n++)
            nc_fast_run_sample(P, &P->ws[omp_get_thread_num()], q, n, 0, 1);
    }
#else
    for (int n = 0; n < N; n++)
        nc_fast_run_sample(P, &P->ws[0], q, n, 0, 1);
#endif
    (void)nt;
    for (int i = 0; i < nl; i++) {
        q->spike_counts[i] = 0;
        if (q->synops)
            q->synops[i] = 0;
        for (int n = 0; n < N; n++) {
            q->spike_counts[i] += P->spk[(int64_t)n * nl + i];
            if (q->synops)
                q->synops[i] += P->ops[(int64_t)n * nl + i];
            if (q->layer_seconds)
                q->layer_seconds[i] += P->sec[(int64_t)n * nl + i];
        }
    }
    return NC_OK;
}

const nc_backend nc_backend_cpu_fast = {
    .name = "cpu-fast",
    .kinds = NC_ALL_KINDS, /* every kind of the IR, feed-forward (fast_supports) */
    .supports_layer = fast_supports,
    .plan_create = fast_plan_create,
    .run = fast_run,
    .plan_free = fast_plan_free,
    .profiles = 1,
};
