/* The CPU reference backend: plain loops over batch × time, deterministic,
 * the oracle every other backend is tested against. Every layer sees its
 * inputs' outputs of the same step; a recurrent input (id >= own id) still
 * holds the previous step's value when it is read, because layers run in id
 * order and buffers persist across steps (zero before the first). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/clock.h"
#include "snn/run/backend.h"
#include "snn/base/error.h"
#include "kernels/neuron.h"
#include "kernels/nir_neuron.h"
#include "kernels/nonlinear.h"
#include "snn/backends/weight_layout.h"

typedef struct ref_layer {
    int64_t size;      /* neurons per sample */
    float *out;        /* N × size: the layer's output at the current step */
    float *v;          /* membrane (IF/LIF/CubaLIF), N × size */
    float *isyn;       /* CubaLIF synaptic current, N × size */
    float *theta, *v0, *sval;    /* per-neuron parameters, size each */
    float *dt_tau, *vleak, *r, *dt_tau_syn, *w_in; /* dt_tau: the leak coefficient (nc_snn_leak_coefs) */
    float *vreset;     /* NIR semantics: the reset value per neuron */
    int nir;           /* runs nc_nir_neuron_step (NIR semantics, LI, CubaLI, Integrator) */
    float *dbuf;       /* Delay: (d + 1) frames of N × size, a ring */
    int64_t dpos;      /* Delay: the frame step t writes */
    int32_t *net;      /* SignedIF: net spike count per neuron, N × size */
    int32_t *fan;      /* SignedIF or SpikeMaxPool2d of bursts: the synaptic ops an event of each neuron causes
                          (nc_snn_event_fanout) */
    uint32_t *cnt;     /* SpikeMaxPool2d: N × (input size) spike counts, then N × size output counts */
    float *unit;       /* SpikeMaxPool2d of bursts: its input's single-spike values (nc_snn_spike_units) */
    float *nsum[2];    /* Nonlinear: the sums of its inputs over the steps so far, N × (input size) each */
    float *ntot;       /* Nonlinear: the cumulative output t·f(mean) of the last step, N × size */
    float *wt;         /* Affine [in][out], Conv2d [C_in][kH][kW][C_out/groups]: weights
                          transposed so that one input event scatters over contiguous outputs */
} ref_layer;

typedef struct ref_plan {
    const nc_snn *s;
    int N;
    ref_layer *L;
    float *scratch;    /* N × the largest Conv2d output: channel-last accumulators */
    char *is_static;   /* per layer, set per run: output constant over time, computed once */
    char *is_signed;   /* per layer: its spikes may be negative (nc_snn_mark_signed) */
} ref_plan;

static int ref_supports(const nc_snn *s, int id, char *why, size_t len)
{
    if (nc_backend_runs_kind(&nc_backend_cpu_ref, s->layers[id].kind))
        return 1;
    snprintf(why, len, "not a layer kind of the IR");
    return 0;
}

static void ref_plan_free(void *p)
{
    ref_plan *P = p;
    if (!P)
        return;
    for (int i = 0; P->L && i < P->s->n_layers; i++) {
        ref_layer *R = &P->L[i];
        float *bufs[] = {R->out,   R->v,     R->isyn, R->theta,      R->v0,  R->sval,
                         R->dt_tau, R->vleak, R->r,    R->dt_tau_syn, R->w_in, R->wt, R->vreset, R->dbuf};
        for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
            nc_free(bufs[b]);
        nc_free(R->cnt);
        nc_free(R->net);
        nc_free(R->nsum[0]);
        nc_free(R->nsum[1]);
        nc_free(R->ntot);
        nc_free(R->fan);
        nc_free(R->unit);
    }
    nc_free(P->L);
    nc_free(P->scratch);
    nc_free(P->is_static);
    nc_free(P->is_signed);
    nc_free(P);
}

static nc_status ref_plan_create(const nc_snn *s, int N, void **out)
{
    *out = NULL;
    ref_plan *P = nc_calloc(1, sizeof *P);
    if (!P)
        return nc_errorf(NC_ERR_NOMEM, "out of memory creating the cpu plan");
    P->s = s;
    P->N = N;
    P->L = nc_calloc((size_t)s->n_layers, sizeof *P->L);
    P->is_static = nc_calloc((size_t)s->n_layers, 1);
    P->is_signed = nc_calloc((size_t)s->n_layers, 1);
    char *macs = nc_calloc((size_t)s->n_layers, 1);
    int fail = !P->L || !P->is_static || !P->is_signed || !macs;
    if (!fail) {
        nc_snn_mark_signed(s, P->is_signed);
        nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, macs);
    }
    int64_t scratch_n = 0;
    for (int i = 0; !fail && i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        ref_layer *R = &P->L[i];
        R->size = nc_snn_layer_size(L);
        int64_t n;
        if (!nc_mul_i64(R->size, N, &n) || (uint64_t)n > SIZE_MAX / sizeof(float)) {
            nc_free(macs);
            ref_plan_free(P);
            return nc_errorf(NC_ERR_LIMIT, "layer '%s': batch %d × %lld neurons is too large", L->name, N,
                             (long long)R->size);
        }
        R->out = nc_calloc((size_t)n, sizeof(float));
        fail |= !R->out;
        if (nc_snn_kind_is_synaptic(L->kind)) {
            R->wt = nc_snn_fanout_weights(L);
            fail |= !R->wt;
        }
        if (L->kind == NC_SNN_SPIKEMAXPOOL2D) { /* sizes fit: the input's buffer did */
            R->cnt = nc_calloc((size_t)N * (size_t)(P->L[L->inputs[0]].size + R->size), sizeof *R->cnt);
            fail |= !R->cnt;
            R->unit = fail ? NULL : nc_snn_spike_units(s, L->inputs[0], &fail);
            if (R->unit && !fail)
                R->fan = nc_snn_event_fanout(s, macs, i, &fail);
        }
        for (int k = 0; L->kind == NC_SNN_NONLINEAR && k < L->n_inputs; k++) { /* sizes fit: the input's did */
            R->nsum[k] = nc_calloc((size_t)N * (size_t)P->L[L->inputs[k]].size, sizeof(float));
            fail |= !R->nsum[k];
        }
        if (L->kind == NC_SNN_NONLINEAR) {
            R->ntot = nc_calloc((size_t)n, sizeof(float));
            fail |= !R->ntot;
        }
        if (L->kind == NC_SNN_CONV2D && !fail && n > scratch_n) {
            nc_free(P->scratch);
            scratch_n = n;
            P->scratch = nc_malloc((size_t)n * sizeof(float));
            fail |= !P->scratch;
        }
        const nc_snn_kind_traits *K = nc_snn_kind(L->kind);
        int membrane = K->membrane, leaky = K->leaky, syn = K->current;
        R->nir = nc_snn_layer_nir_semantics(L) || (membrane && !nc_snn_kind_is_neuron(L->kind));
        if (membrane) {
            R->v = nc_calloc((size_t)n, sizeof(float));
            fail |= !R->v;
            R->theta = nc_snn_param_expand(L->threshold, L, nc_snn_kind_is_neuron(L->kind) ? 1.0f : INFINITY, 0, &fail);
            R->sval = nc_snn_spike_values(L, 0, &fail);
            R->v0 = nc_snn_v_inits(L, 0, &fail);
            R->vreset = nc_snn_param_expand(L->v_reset, L, 0.0f, 0, &fail);
            R->r = nc_snn_param_expand(L->r, L, 1.0f, 0, &fail);
        }
        if (L->kind == NC_SNN_SIGNED_IF) {
            R->net = nc_calloc((size_t)n, sizeof *R->net);
            fail |= !R->net;
            if (nc_snn_layer_burst(L) > 1 && !fail)
                R->fan = nc_snn_event_fanout(s, macs, i, &fail);
        }
        if (leaky) {
            R->dt_tau = nc_snn_leak_coefs(L, L->tau, 0, &fail);
            R->vleak = nc_snn_param_expand(L->v_leak, L, 0.0f, 0, &fail);
        }
        if (syn) {
            R->isyn = nc_calloc((size_t)n, sizeof(float));
            R->dt_tau_syn = nc_snn_leak_coefs(L, L->tau_syn, 0, &fail);
            R->w_in = nc_snn_param_expand(L->w_in, L, 1.0f, 0, &fail);
            fail |= !R->isyn;
        }
        if (L->kind == NC_SNN_SCALE)
            R->sval = nc_snn_param_expand(L->weight, L, 1.0f, 0, &fail);
        if (L->kind == NC_SNN_THRESHOLD)
            R->theta = nc_snn_param_expand(L->threshold, L, 0.0f, 0, &fail);
        if (L->kind == NC_SNN_DELAY) {
            int64_t frames = L->kernel[0] + 1, nb;
            if (!nc_mul_i64(n, frames, &nb) || (uint64_t)nb > SIZE_MAX / sizeof(float)) {
                nc_free(macs);
                ref_plan_free(P);
                return nc_errorf(NC_ERR_LIMIT, "Delay '%s': %lld steps of batch %d × %lld neurons is too large",
                                 L->name, (long long)L->kernel[0], N, (long long)R->size);
            }
            R->dbuf = nc_calloc((size_t)nb, sizeof(float));
            fail |= !R->dbuf;
        }
    }
    nc_free(macs);
    if (fail) {
        ref_plan_free(P);
        return nc_errorf(NC_ERR_NOMEM, "out of memory creating the cpu plan");
    }
    *out = P;
    return NC_OK;
}

/* ---- synaptic layers: out = f(inputs), sums in a fixed order ----
 *
 * Only non-zero inputs are visited (an event-driven chip does the same, and
 * spikes are sparse), and each visit is counted as synaptic operations. Every
 * output still accumulates its terms in the order of the dense loop — its
 * bias, then ascending input index (Affine) or ascending (c, i, j) (Conv2d,
 * Pool2d) — so skipping the zero terms leaves every float result unchanged.
 * Samples are independent, so OpenMP over them changes nothing either. */

/* Threads only pay off for a layer with enough work (dense MACs) per call. */
#define NC_OMP_MIN_WORK (1 << 18)
#ifdef _OPENMP
#define NC_OMP_SAMPLES _Pragma("omp parallel for schedule(static) reduction(+ : ops) if (par)")
#else
#define NC_OMP_SAMPLES
#endif

static int64_t run_affine(const nc_snn_layer *L, const ref_layer *R, const float *x, float *y, int N,
                          int64_t in)
{
    const float *b = nc_f32(L->bias);
    int64_t out = L->shape[0], ops = 0;
    int par = N > 1 && (int64_t)N * in * out >= NC_OMP_MIN_WORK;
    (void)par;
    NC_OMP_SAMPLES
    for (int n = 0; n < N; n++) {
        float *yn = y + n * out;
        const float *xn = x + n * in;
        memcpy(yn, b, (size_t)out * sizeof *yn);
        for (int64_t i = 0; i < in; i++) {
            float xv = xn[i];
            if (xv == 0.0f)
                continue;
            const float *w = R->wt + i * out; /* w[o] = W[o][i] */
            for (int64_t o = 0; o < out; o++)
                yn[o] += w[o] * xv;
            ops += out;
        }
    }
    return ops;
}

/* Scatters each non-zero input (c, ih, iw) into the outputs it reaches.
 * Visiting inputs in ascending (c, ih, iw) gives every output its terms in
 * ascending (c, i, j), because ih and iw grow with i and j. */
static int64_t run_conv2d(const nc_snn_layer *L, const ref_layer *R, const nc_snn_layer *X,
                          const float *x, float *y, float *scratch, int N)
{
    const float *b = nc_f32(L->bias);
    int64_t C = X->shape[0], H = X->shape[1], Wd = X->shape[2];
    int64_t K = L->shape[0], OH = L->shape[1], OW = L->shape[2];
    int64_t kh = L->weight->shape[2], kw = L->weight->shape[3], cg = C / L->groups, kg = K / L->groups;
    int64_t size = K * OH * OW, ops = 0;
    int par = N > 1 && (int64_t)N * size * cg * kh * kw >= NC_OMP_MIN_WORK;
    (void)par;
    NC_OMP_SAMPLES
    for (int n = 0; n < N; n++) {
        float *acc = scratch + n * size; /* [OH][OW][K] */
        for (int64_t p = 0; p < OH * OW; p++)
            memcpy(acc + p * K, b, (size_t)K * sizeof *acc);
        for (int64_t c = 0; c < C; c++) {
            int64_t g = c / cg;
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < Wd; iw++) {
                    float xv = x[((n * C + c) * H + ih) * Wd + iw];
                    if (xv == 0.0f)
                        continue;
                    for (int64_t i = 0; i < kh; i++) {
                        int64_t th = ih + L->padding[0] - i * L->dilation[0];
                        if (th < 0 || th % L->stride[0] || th / L->stride[0] >= OH)
                            continue;
                        int64_t oh = th / L->stride[0];
                        for (int64_t j = 0; j < kw; j++) {
                            int64_t tw = iw + L->padding[1] - j * L->dilation[1];
                            if (tw < 0 || tw % L->stride[1] || tw / L->stride[1] >= OW)
                                continue;
                            float *dst = acc + (oh * OW + tw / L->stride[1]) * K + g * kg;
                            const float *w = R->wt + ((c * kh + i) * kw + j) * kg;
                            for (int64_t k = 0; k < kg; k++)
                                dst[k] += w[k] * xv;
                            ops += kg;
                        }
                    }
                }
        }
        float *yn = y + n * size;
        for (int64_t k = 0; k < K; k++)
            for (int64_t p = 0; p < OH * OW; p++)
                yn[k * OH * OW + p] = acc[p * K + k];
    }
    return ops;
}

/* The per-window math is kernels/window_index.h's, which the CUDA kernels
 * run too. */
static int64_t run_pool2d(const nc_snn_layer *L, const nc_snn_layer *X, const float *x, float *y, int N)
{
    nc_win_geom g = nc_snn_win_geom(L, X);
    int64_t in = nc_snn_layer_size(X), out = nc_snn_layer_size(L), ops = 0;
    int par = N > 1 && (int64_t)N * out * g.kh * g.kw >= NC_OMP_MIN_WORK;
    (void)par;
    NC_OMP_SAMPLES
    for (int n = 0; n < N; n++)
        for (int c = 0; c < g.C; c++)
            for (int oh = 0; oh < g.OH; oh++)
                for (int ow = 0; ow < g.OW; ow++) {
                    int k;
                    y[n * out + ((int64_t)c * g.OH + oh) * g.OW + ow] =
                        nc_pool_output(x + n * in, g, L->scale, c, oh, ow, &k);
                    ops += k;
                }
    return ops;
}

/* Max over each window of the input currents; taps in the padding do not
 * count (the builder keeps padding smaller than the kernel, so every window
 * has at least one tap inside the input). */
static void run_maxpool2d(const nc_snn_layer *L, const nc_snn_layer *X, const float *x, float *y, int N)
{
    nc_win_geom g = nc_snn_win_geom(L, X);
    int64_t in = nc_snn_layer_size(X), out = nc_snn_layer_size(L);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < g.C; c++)
            for (int oh = 0; oh < g.OH; oh++)
                for (int ow = 0; ow < g.OW; ow++)
                    y[n * out + ((int64_t)c * g.OH + oh) * g.OW + ow] = nc_maxpool_output(x + n * in, g, c, oh, ow);
}

/* Spiking max pooling (nc_snn_add_spike_maxpool2d): count this step's
 * input spikes (in units of their single spike, R->unit), then let each
 * output's count follow its window's max. Returns the events emitted;
 * *burst_ops gets the synaptic ops its bursts cause downstream. */
static int64_t run_spikemax(const ref_plan *P, const nc_snn_layer *L, ref_layer *R, const float *x, int N,
                            int64_t *burst_ops)
{
    const nc_snn_layer *X = &P->s->layers[L->inputs[0]];
    nc_win_geom g = nc_snn_win_geom(L, X);
    int sgn = P->is_signed[L->inputs[0]];
    int64_t in = nc_snn_layer_size(X), out = nc_snn_layer_size(L), spikes = 0;
    for (int n = 0; n < N; n++)
        spikes += nc_spikemax_frame(x + n * in, R->unit, R->cnt + n * in, R->cnt + N * in + n * out, g, sgn,
                                    R->out + n * out, R->fan, burst_ops, NULL);
    return spikes;
}

static void run_concat(const nc_snn *s, const nc_snn_layer *L, ref_layer *P, float *y, int N)
{
    int64_t size = nc_snn_layer_size(L), off = 0;
    for (int k = 0; k < L->n_inputs; k++) {
        int64_t part = P[L->inputs[k]].size;
        for (int n = 0; n < N; n++)
            memcpy(y + n * size + off, P[L->inputs[k]].out + n * part, (size_t)part * sizeof *y);
        off += part;
    }
    (void)s;
}

/* ---- Nonlinear layers (kernels/nonlinear.h): the inputs' sums, then the
 * new cumulative outputs t·f(mean), emitted as increments. Returns the
 * multiplications of the products (Mul, MatMul), counted as synaptic
 * operations: a product of two activations is a multiply-accumulate per
 * term, not an event. ---- */

static int64_t run_nonlinear(const nc_snn *s, const nc_snn_layer *L, ref_layer *Ri, const ref_layer *R, int N,
                             int t)
{
    const nc_nonlinear_params *p = &L->nl;
    int64_t size = Ri->size, ops = 0;
    for (int k = 0; k < L->n_inputs; k++) {
        const ref_layer *X = &R[L->inputs[k]];
        for (int64_t e = 0; e < N * X->size; e++)
            Ri->nsum[k][e] += X->out[e];
    }
    float *tot = Ri->out; /* the new totals first, then the increments in place */
    const nc_snn_layer *X = &s->layers[L->inputs[0]];
    int64_t xs = R[L->inputs[0]].size, ys = L->n_inputs > 1 ? R[L->inputs[1]].size : 0;
    for (int n = 0; n < N; n++) {
        const float *sx = Ri->nsum[0] + n * xs, *sy = ys ? Ri->nsum[1] + n * ys : NULL;
        float *o = tot + n * size;
        if (nc_nonlinear_fn_is_elementwise(p->fn)) {
            for (int64_t e = 0; e < size; e++)
                o[e] = (float)t * nc_nl_elem(p->fn, sx[e] / (float)t, p->alpha, p->beta);
        } else if (p->fn == NC_NL_MUL) {
            const nc_snn_layer *Y = &s->layers[L->inputs[1]];
            for (int64_t e = 0; e < size; e++)
                o[e] = nc_nl_mul_total(sx[e], sy[nc_nl_broadcast_index(X->shape, X->ndim, Y->shape, Y->ndim, e)], t);
            ops += size;
        } else if (p->fn == NC_NL_MATMUL) {
            int64_t m, kk, nn;
            nc_nl_matmul_dims(L, X, &s->layers[L->inputs[1]], &m, &kk, &nn);
            /* element (i, q) of x and (q, j) of y in their stored order */
            int64_t xi = p->trans_x ? 1 : kk, xq = p->trans_x ? m : 1, yq = p->trans_y ? 1 : nn, yj = p->trans_y ? kk : 1;
            for (int64_t b = 0; b < size / (m * nn); b++)
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < nn; j++)
                        o[(b * m + i) * nn + j] =
                            nc_nl_dot_total(sx + b * m * kk + i * xi, xq, sy + b * kk * nn + j * yj, yq, kk, t);
            ops += size * kk;
        } else { /* LayerNorm, Softmax: rows along the axis */
            nc_nl_rows_total(p->fn, p->eps, L->shape, L->ndim, p->axis, sx, o, t);
        }
    }
    for (int64_t e = 0; e < N * size; e++) {
        float now = tot[e];
        tot[e] = now - Ri->ntot[e];
        Ri->ntot[e] = now;
    }
    return ops; /* counted per sample above */
}

/* ---- neurons ---- */

/* Adds the spikes to *spikes; returns the synaptic ops its bursts cause
 * downstream (ref_layer.fan). */
static int64_t run_neuron(const nc_snn_layer *L, ref_layer *R, const float *I, int N, int t,
                          int64_t *spikes, float *rec_s, float *rec_v)
{
    int64_t size = R->size;
    int reset_zero = L->reset == NC_RESET_ZERO;
    int64_t count = 0, burst_ops = 0;
    for (int n = 0; n < N; n++)
        for (int64_t j = 0; j < size; j++) {
            int64_t k = n * size + j;
            float *v = &R->v[k];
            int s;
            if (R->nir) {
                float cur = I[k];
                int leaky = R->dt_tau != NULL;
                if (R->isyn)
                    cur = nc_nir_syn_step(&R->isyn[k], cur, R->dt_tau_syn[j], R->w_in[j]);
                s = nc_nir_neuron_step(v, cur, leaky, leaky ? R->dt_tau[j] : 0.0f, R->r[j], leaky ? R->vleak[j] : 0.0f,
                                       R->theta[j], R->vreset[j], L->spike_gt, reset_zero, L->pretest_sub);
                if (!nc_snn_kind_is_neuron(L->kind)) { /* LI, CubaLI, Integrator: the output is v */
                    R->out[k] = *v;
                    if (rec_v)
                        rec_v[(int64_t)t * N * size + k] = *v;
                    continue;
                }
            } else if (L->kind == NC_SNN_IF)
                s = nc_if_step(v, I[k], R->theta[j], reset_zero);
            else if (L->kind == NC_SNN_SIGNED_IF) {
                s = nc_signed_if_step(v, &R->net[k], I[k], R->theta[j], nc_snn_layer_burst(L));
                if (R->fan && (s > 1 || s < -1))
                    burst_ops += R->fan[j];
            }
            else {
                float cur = I[k];
                if (L->kind == NC_SNN_CUBALIF)
                    cur = nc_cuba_syn_step(&R->isyn[k], cur, R->dt_tau_syn[j], R->w_in[j]);
                s = nc_lif_step(v, cur, R->dt_tau[j], R->vleak[j], R->r[j], R->theta[j], reset_zero);
            }
            if (!R->sval)
                continue;
            R->out[k] = s ? (float)s * R->sval[j] : 0.0f;
            count += s != 0;
            if (rec_s)
                rec_s[(int64_t)t * N * size + k] = (float)s;
            if (rec_v)
                rec_v[(int64_t)t * N * size + k] = *v;
        }
    *spikes += count;
    return burst_ops;
}

static nc_status ref_run(void *plan, const nc_run_request *q)
{
    ref_plan *P = plan;
    const nc_snn *s = P->s;
    int N = q->N;
    if (N != P->N)
        return nc_errorf(NC_ERR_INTERNAL, "cpu plan made for batch %d run with %d", P->N, N);
    ref_layer *R = P->L;
    int out_id = nc_snn_output_id(s);
    int64_t out_size = R[out_id].size;

    nc_snn_mark_static(s, q->series, q->encoding, P->is_static);
    for (int i = 0; i < s->n_layers; i++) {
        int64_t n = R[i].size * N;
        memset(R[i].out, 0, (size_t)n * sizeof(float));
        if (R[i].v)
            for (int64_t k = 0; k < n; k++)
                R[i].v[k] = R[i].v0[k % R[i].size];
        if (R[i].isyn)
            memset(R[i].isyn, 0, (size_t)n * sizeof(float));
        if (R[i].dbuf) {
            memset(R[i].dbuf, 0, (size_t)(n * (s->layers[i].kernel[0] + 1)) * sizeof(float));
            R[i].dpos = 0;
        }
        for (int64_t k = 0; R[i].net && k < n; k++)
            R[i].net[k] = nc_snn_net0(&s->layers[i]);
        for (int k = 0; k < 2; k++)
            if (R[i].nsum[k])
                memset(R[i].nsum[k], 0, (size_t)(N * R[s->layers[i].inputs[k]].size) * sizeof(float));
        if (R[i].ntot)
            memset(R[i].ntot, 0, (size_t)n * sizeof(float));
        if (R[i].cnt)
            memset(R[i].cnt, 0, (size_t)(N * (R[s->layers[i].inputs[0]].size + R[i].size)) * sizeof *R[i].cnt);
        q->spike_counts[i] = 0;
        if (q->synops)
            q->synops[i] = 0;
    }
    if (!q->per_step)
        memset(q->output, 0, (size_t)(N * out_size) * sizeof(float));
    if (q->synops_step)
        memset(q->synops_step, 0, (size_t)q->T * (size_t)s->n_layers * sizeof *q->synops_step);
    if (q->synops_step && q->burst_ops_step)
        memset(q->burst_ops_step, 0, (size_t)q->T * (size_t)s->n_layers * sizeof *q->burst_ops_step);

    int64_t in_size = R[0].size;
    for (int t = 0; t < q->T; t++) {
        for (int i = 0; i < s->n_layers; i++) {
            const nc_snn_layer *L = &s->layers[i];
            ref_layer *Ri = &R[i];
            double t0 = q->layer_seconds ? nc_monotonic_s() : 0.0;
            if (P->is_static[i] && t > 0)
                goto record;
            const float *x = L->n_inputs > 0 ? R[L->inputs[0]].out : NULL;
            int64_t ops = 0;
            int64_t xsize = L->n_inputs > 0 ? R[L->inputs[0]].size : 0;
            switch (L->kind) {
            case NC_SNN_INPUT: {
                const float *src = q->input + (q->series ? (int64_t)t * N * in_size : 0);
                if (q->encoding == NC_ENCODING_POISSON)
                    for (int64_t k = 0; k < N * in_size; k++) {
                        float p = src[k] < 0 ? 0 : (src[k] > 1 ? 1 : src[k]);
                        Ri->out[k] = nc_uniform_hash(q->seed, (uint64_t)t, (uint64_t)k) < p ? 1.0f : 0.0f;
                    }
                else
                    memcpy(Ri->out, src, (size_t)(N * in_size) * sizeof(float));
                break;
            }
            case NC_SNN_AFFINE: ops = run_affine(L, Ri, x, Ri->out, N, xsize); break;
            case NC_SNN_CONV2D:
                ops = run_conv2d(L, Ri, &s->layers[L->inputs[0]], x, Ri->out, P->scratch, N);
                break;
            case NC_SNN_POOL2D: ops = run_pool2d(L, &s->layers[L->inputs[0]], x, Ri->out, N); break;
            case NC_SNN_MAXPOOL2D: run_maxpool2d(L, &s->layers[L->inputs[0]], x, Ri->out, N); break;
            case NC_SNN_SPIKEMAXPOOL2D:
            {
                int64_t bops = 0;
                q->spike_counts[i] += run_spikemax(P, L, Ri, x, N, &bops);
                if (q->synops_step && q->burst_ops_step)
                    q->burst_ops_step[(int64_t)t * s->n_layers + i] = bops;
                if (q->rec_spikes && q->rec_spikes[i]) /* its spikes: the signs of the non-zero outputs */
                    for (int64_t k = 0; k < N * Ri->size; k++)
                        q->rec_spikes[i][(int64_t)t * N * Ri->size + k] =
                            (float)((Ri->out[k] > 0.0f) - (Ri->out[k] < 0.0f));
                break;
            }
            case NC_SNN_FLATTEN:
            case NC_SNN_READOUT:
                memcpy(Ri->out, x, (size_t)(N * Ri->size) * sizeof(float));
                break;
            case NC_SNN_ADD:
                memcpy(Ri->out, x, (size_t)(N * Ri->size) * sizeof(float));
                for (int k = 1; k < L->n_inputs; k++) {
                    const float *xk = R[L->inputs[k]].out;
                    for (int64_t e = 0; e < N * Ri->size; e++)
                        Ri->out[e] += xk[e];
                }
                break;
            case NC_SNN_CONCAT: run_concat(s, L, R, Ri->out, N); break;
            case NC_SNN_RESHAPE: /* values [kernel[0], kernel[0] + size) of each sample */
                for (int n = 0; n < N; n++)
                    memcpy(Ri->out + n * Ri->size, x + n * xsize + L->kernel[0], (size_t)Ri->size * sizeof(float));
                break;
            case NC_SNN_GATHER: /* output e of each sample is its input index[e], or 0 */
                for (int n = 0; n < N; n++)
                    for (int64_t e = 0; e < Ri->size; e++) {
                        int64_t k = nc_i64(L->index)[e];
                        Ri->out[n * Ri->size + e] = k < 0 ? 0.0f : x[n * xsize + k];
                    }
                break;
            case NC_SNN_SCALE:
                for (int64_t e = 0; e < N * Ri->size; e++)
                    Ri->out[e] = x[e] * Ri->sval[e % Ri->size];
                break;
            case NC_SNN_THRESHOLD:
                for (int64_t e = 0; e < N * Ri->size; e++) {
                    float th = Ri->theta[e % Ri->size];
                    Ri->out[e] = (L->spike_gt ? x[e] > th : x[e] >= th) ? 1.0f : 0.0f;
                }
                break;
            case NC_SNN_DELAY: { /* write x(t) into the ring, read x(t − d) */
                int64_t fr = N * Ri->size, d = L->kernel[0];
                memcpy(Ri->dbuf + Ri->dpos * fr, x, (size_t)fr * sizeof(float));
                int64_t rpos = (Ri->dpos + 1) % (d + 1); /* the oldest frame: step t − d (zero before the start) */
                memcpy(Ri->out, Ri->dbuf + rpos * fr, (size_t)fr * sizeof(float));
                Ri->dpos = rpos;
                break;
            }
            case NC_SNN_IF: case NC_SNN_SIGNED_IF: case NC_SNN_LIF: case NC_SNN_CUBALIF:
            case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR:
                ops = run_neuron(L, Ri, x, N, t, &q->spike_counts[i], q->rec_spikes ? q->rec_spikes[i] : NULL,
                                 q->rec_membrane ? q->rec_membrane[i] : NULL);
                if (q->synops_step && q->burst_ops_step)
                    q->burst_ops_step[(int64_t)t * s->n_layers + i] = ops;
                goto timed; /* a neuron records its own traces */
            case NC_SNN_NONLINEAR: ops = run_nonlinear(s, L, Ri, R, N, t + 1); break;
            case NC_SNN_KIND_COUNT: /* not a kind: refused by the validation of every layer */
                break;
            }
            if (q->synops)
                q->synops[i] += ops;
            if (q->synops_step)
                q->synops_step[(int64_t)t * s->n_layers + i] = ops;
        record: /* non-neuron layers: their output is recorded as the "membrane" trace */
            if (q->rec_membrane && q->rec_membrane[i])
                memcpy(q->rec_membrane[i] + (int64_t)t * N * Ri->size, Ri->out,
                       (size_t)(N * Ri->size) * sizeof(float));
        timed:
            if (q->layer_seconds)
                q->layer_seconds[i] += nc_monotonic_s() - t0;
        }
        const float *o = R[out_id].out;
        if (q->per_step)
            memcpy(q->output + (int64_t)t * N * out_size, o, (size_t)(N * out_size) * sizeof(float));
        else
            for (int64_t k = 0; k < N * out_size; k++)
                q->output[k] += o[k];
    }
    return NC_OK;
}

const nc_backend nc_backend_cpu_ref = {
    .name = "cpu",
    .kinds = NC_ALL_KINDS, /* the reference runs every layer kind of the IR */
    .supports_layer = ref_supports,
    .plan_create = ref_plan_create,
    .run = ref_run,
    .plan_free = ref_plan_free,
    .profiles = 1,
};
