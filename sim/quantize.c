/* From the SNN IR to Loihi parameters.
 *
 * Structure: every IF layer and the readout become a population; what lies
 * between two populations must be a sum (Add) of terms, each an optional
 * Affine or Conv2d reading a spiking layer (or the input) through Flatten
 * and at most one non-overlapping Pool2d. Pooling is done by the axons: the
 * neurons of one pooling window send their spikes to the same input axon,
 * whose synapses carry the next layer's weights times the pooling scale.
 * A chip carries binary spikes, so each spike's value (θ of its layer) is
 * folded into the weights of the synapses it reaches.
 *
 * Scaling: a neuron's membrane is held in integer units, `scale` of them to
 * one float unit. In an IF layer each output channel has its own scale
 * (thresholds, biases and v(0) are per compartment, so this costs nothing):
 * the channel's largest weight of the main connection, after an MSE-optimal
 * clip α, becomes the largest 8-bit mantissa at the layer's exponent e, and
 * e is the largest exponent (0..7) at which every threshold stays below
 * 2^(23 − headroom), which leaves 2^headroom thresholds of range for u and v.
 * Other connections into the layer (residual paths) keep those scales and
 * search their own exponent for the least squared error. Thresholds become
 * 17-bit mantissas (×64), biases 13-bit mantissas with an exponent, v(0) an
 * integer. A layer fed by the host's bias-coded input keeps room for B + 1
 * thresholds in a bias (B the most spikes a step: twice without bursts).
 * The readout has one scale (its classes compare), the largest that cannot
 * saturate its accumulator: over `timesteps` steps of every input spiking
 * (B spikes each for bursts), or at twice the largest summed float readout
 * on calibration data when there is some.
 *
 * Latency: a population's input first arrives at step `depth` (one step a
 * hop); connections on shorter paths get synaptic delays so that all paths
 * into a population arrive together, and v(0) is lowered by the bias of the
 * steps before the input arrives, so the chip runs the float network
 * shifted by one step a hop. */
#include <math.h>
#include <string.h>

#include "loihi_fixed.h"
#include "sim_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

typedef struct term {
    int syn;       /* IR id of Affine/Conv2d, or -1 */
    int src;       /* IR id of the source spiking layer (IF or Input) */
    int pool;      /* IR id of a Pool2d on the way, or -1 */
} term;

#define MAX_TERMS 64

/* A population of compartments: a layer that integrates over time (an IF
 * layer or the readout here: ls_build refuses LIF and CubaLIF). */
static int is_pop_kind(nc_snn_layer_kind k) { return nc_snn_kind(k)->integrates; }

static nc_status unsupported(const nc_snn_layer *L, const char *why)
{
    return nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s' (%s): %s", L->name, nc_snn_kind_name(L->kind), why);
}

/* Walks from `id` back through Flatten and at most one Pool2d to a spiking
 * layer or the input. */
static nc_status parse_axons(const nc_snn *s, int id, term *t)
{
    t->pool = -1;
    for (;;) {
        const nc_snn_layer *L = &s->layers[id];
        switch (L->kind) {
        case NC_SNN_INPUT:
        case NC_SNN_IF:
        case NC_SNN_SIGNED_IF:
            t->src = id;
            return NC_OK;
        case NC_SNN_FLATTEN:
            break;
        case NC_SNN_POOL2D:
            if (t->pool >= 0)
                return unsupported(L, "two pooling layers in a row between spiking layers");
            t->pool = id;
            break;
        case NC_SNN_AFFINE:
        case NC_SNN_CONV2D:
            return unsupported(L, "two synaptic layers in a row (no spiking layer between them) "
                                  "cannot be one set of synapses");
        default:
            return unsupported(L, "not supported between spiking layers by the Loihi simulator");
        }
        if (L->n_inputs != 1 || L->inputs[0] >= id)
            return unsupported(L, "recurrent or multiple inputs are not supported by the Loihi simulator");
        id = L->inputs[0];
    }
}

static nc_status collect(const nc_snn *s, int id, int user, term *terms, int *n)
{
    const nc_snn_layer *L = &s->layers[id];
    if (id >= user)
        return unsupported(&s->layers[user], "recurrent connections are not supported by the Loihi simulator");
    if (L->kind == NC_SNN_ADD) {
        for (int k = 0; k < L->n_inputs; k++) {
            nc_status st = collect(s, L->inputs[k], id, terms, n);
            if (st != NC_OK)
                return st;
        }
        return NC_OK;
    }
    if (*n >= MAX_TERMS)
        return unsupported(L, "too many terms summed into one layer");
    term *t = &terms[(*n)++];
    t->syn = -1;
    if (nc_snn_kind_is_synaptic(L->kind)) {
        t->syn = id;
        if (L->inputs[0] >= id)
            return unsupported(L, "recurrent connections are not supported by the Loihi simulator");
        return parse_axons(s, L->inputs[0], t);
    }
    if (L->kind == NC_SNN_READOUT)
        return unsupported(L, "a readout feeding another layer");
    return parse_axons(s, id, t);
}

static void shape3(const nc_snn_layer *L, int64_t *c, int64_t *h, int64_t *w)
{
    int64_t n = nc_snn_layer_size(L);
    if (L->ndim == 3) {
        *c = L->shape[0], *h = L->shape[1], *w = L->shape[2];
    } else if (L->ndim == 2) {
        *c = 1, *h = L->shape[0], *w = L->shape[1];
    } else {
        *c = n, *h = 1, *w = 1;
    }
}

/* ---------------------------------------------------------------- connections */

/* The spike (or payload) value of source neuron i, as a float current unit. */
static float src_factor(const nc_loihi_net *net, const ls_pop *P, int64_t i)
{
    if (P->kind == LS_INPUT)
        return net->input_graded ? (float)P->in_step : 1.0f;
    return P->spike_f[i];
}

static nc_status build_axons(nc_loihi_net *net, const nc_snn *s, ls_conn *c, const term *t, float **fac_out)
{
    const ls_pop *P = &net->pops[c->src];
    int64_t n = P->n;
    c->axon_of = nc_malloc((size_t)n * sizeof *c->axon_of);
    if (!c->axon_of)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (t->pool < 0) {
        c->n_axons = n;
        c->ax_c = P->c, c->ax_h = P->h, c->ax_w = P->w;
        for (int64_t i = 0; i < n; i++)
            c->axon_of[i] = (int32_t)i;
    } else {
        const nc_snn_layer *L = &s->layers[t->pool];
        const nc_snn_layer *X = &s->layers[L->inputs[0]];
        if (L->kernel[0] != L->stride[0] || L->kernel[1] != L->stride[1] || L->padding[0] || L->padding[1])
            return unsupported(L, "only non-overlapping pooling without padding (stride = kernel) can "
                                  "merge spikes onto shared axons");
        if (X->ndim != 3)
            return unsupported(L, "pooling needs a (C, H, W) input");
        c->pool_k[0] = L->kernel[0], c->pool_k[1] = L->kernel[1];
        c->ax_c = L->shape[0], c->ax_h = L->shape[1], c->ax_w = L->shape[2];
        c->n_axons = c->ax_c * c->ax_h * c->ax_w;
        for (int64_t i = 0; i < n; i++) {
            int64_t ch = i / (P->h * P->w), y = i / P->w % P->h, x = i % P->w;
            int64_t ay = y / c->pool_k[0], ax = x / c->pool_k[1];
            c->axon_of[i] = ay < c->ax_h && ax < c->ax_w ? (int32_t)((ch * c->ax_h + ay) * c->ax_w + ax) : -1;
        }
    }
    if (c->n_axons > INT32_MAX)
        return nc_errorf(NC_ERR_LIMIT, "layer '%s': too many axons", P->name);
    /* the float value one message on each axon carries */
    float *fac = nc_malloc((size_t)c->n_axons * sizeof *fac);
    if (!fac)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t a = 0; a < c->n_axons; a++)
        fac[a] = NAN;
    float pscale = t->pool >= 0 ? s->layers[t->pool].scale : 1.0f;
    for (int64_t i = 0; i < n; i++) {
        int32_t a = c->axon_of[i];
        if (a < 0)
            continue;
        float f = src_factor(net, P, i) * pscale;
        if (isnan(fac[a]))
            fac[a] = f;
        else if (fac[a] != f) {
            nc_free(fac);
            return unsupported(&s->layers[t->pool], "the neurons of a pooling window have different spike "
                                                    "values, so they cannot share an axon");
        }
    }
    for (int64_t a = 0; a < c->n_axons; a++)
        if (isnan(fac[a]))
            fac[a] = 0.0f;
    *fac_out = fac;
    return NC_OK;
}

/* Float weights per message (fac folded in), IR layout. */
static nc_status build_synapses(nc_loihi_net *net, const nc_snn *s, ls_conn *c, const term *t, const float *fac)
{
    ls_pop *D = &net->pops[c->dst];
    c->n_out = D->n;
    if (t->syn < 0) {
        if (c->n_axons != D->n)
            return unsupported(&s->layers[D->ir_id], "a one-to-one input whose size differs from the layer's");
        c->kind = LC_ONE2ONE;
        c->wf = nc_malloc((size_t)c->n_axons * sizeof *c->wf);
        if (!c->wf)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        memcpy(c->wf, fac, (size_t)c->n_axons * sizeof *c->wf);
        return NC_OK;
    }
    const nc_snn_layer *L = &s->layers[t->syn];
    const float *W = nc_f32(L->weight), *b = nc_f32(L->bias);
    int64_t nw = L->weight->numel;
    c->wf = nc_malloc((size_t)nw * sizeof *c->wf);
    if (!c->wf)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (L->kind == NC_SNN_AFFINE) {
        int64_t out = L->weight->shape[0], in = L->weight->shape[1];
        if (in != c->n_axons || out != D->n)
            return unsupported(L, "its weight shape does not match the axons it reads");
        c->kind = LC_DENSE;
        for (int64_t o = 0; o < out; o++)
            for (int64_t i = 0; i < in; i++)
                c->wf[o * in + i] = W[o * in + i] * fac[i];
        for (int64_t o = 0; o < out; o++)
            D->bias_f[o] += b[o];
        return NC_OK;
    }
    c->kind = LC_CONV;
    c->K = L->weight->shape[0];
    c->kh = L->weight->shape[2], c->kw = L->weight->shape[3];
    c->OH = L->shape[1], c->OW = L->shape[2];
    c->groups = L->groups;
    for (int k = 0; k < 2; k++)
        c->stride[k] = L->stride[k], c->pad[k] = L->padding[k], c->dil[k] = L->dilation[k];
    int64_t cg = L->weight->shape[1], kk = c->kh * c->kw;
    if (cg * c->groups != c->ax_c || c->K * c->OH * c->OW != D->n)
        return unsupported(L, "its shape does not match the axons it reads");
    /* a convolution shares each weight across positions, so the factor
     * must be one value per input channel */
    int64_t plane = c->ax_h * c->ax_w;
    for (int64_t ch = 0; ch < c->ax_c; ch++)
        for (int64_t p = 1; p < plane; p++)
            if (fac[ch * plane + p] != fac[ch * plane] && fac[ch * plane + p] != 0.0f && fac[ch * plane] != 0.0f)
                return unsupported(L, "per-neuron spike values feeding a convolution");
    int64_t kg = c->K / c->groups;
    for (int64_t k = 0; k < c->K; k++)
        for (int64_t ci = 0; ci < cg; ci++) {
            float f = fac[((k / kg) * cg + ci) * plane];
            for (int64_t e = 0; e < kk; e++)
                c->wf[(k * cg + ci) * kk + e] = W[(k * cg + ci) * kk + e] * f;
        }
    for (int64_t j = 0; j < D->n; j++)
        D->bias_f[j] += b[j / (c->OH * c->OW)];
    return NC_OK;
}

int64_t ls_max_fanin(const ls_conn *c)
{
    switch (c->kind) {
    case LC_DENSE: return c->n_axons;
    case LC_CONV: return c->ax_c / c->groups * c->kh * c->kw;
    default: return 1;
    }
}

int64_t ls_fanin(const ls_conn *c, int64_t j, int64_t *buf)
{
    int64_t n = 0;
    if (c->kind == LC_ONE2ONE) {
        if (c->mant[j])
            buf[n++] = j;
        return n;
    }
    if (c->kind == LC_DENSE) {
        const int8_t *m = c->mant + j * c->n_axons;
        for (int64_t a = 0; a < c->n_axons; a++)
            if (m[a])
                buf[n++] = a;
        return n;
    }
    int64_t k = j / (c->OH * c->OW), oh = j / c->OW % c->OH, ow = j % c->OW;
    int64_t cg = c->ax_c / c->groups, g = k / (c->K / c->groups);
    for (int64_t ci = 0; ci < cg; ci++) {
        int64_t ch = g * cg + ci;
        for (int64_t i = 0; i < c->kh; i++) {
            int64_t ih = oh * c->stride[0] - c->pad[0] + i * c->dil[0];
            if (ih < 0 || ih >= c->ax_h)
                continue;
            for (int64_t jj = 0; jj < c->kw; jj++) {
                int64_t iw = ow * c->stride[1] - c->pad[1] + jj * c->dil[1];
                if (iw < 0 || iw >= c->ax_w || !c->mant[((k * cg + ci) * c->kh + i) * c->kw + jj])
                    continue;
                buf[n++] = (ch * c->ax_h + ih) * c->ax_w + iw;
            }
        }
    }
    return n;
}

static int64_t n_weights(const ls_conn *c)
{
    switch (c->kind) {
    case LC_DENSE: return c->n_axons * c->n_out;
    case LC_CONV: return c->K * (c->ax_c / c->groups) * c->kh * c->kw;
    default: return c->n_axons;
    }
}

/* ---------------------------------------------------------------- quantisation */

static double round_away(double x) { return x < 0 ? -floor(-x + 0.5) : floor(x + 0.5); }

/* The clip α of |w| that minimises the squared error of M-level symmetric
 * rounding, among max·(1 − k/64), k = 0..31. */
static double mse_clip(const float *w, int64_t n, int M)
{
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        amax = fmax(amax, fabs((double)w[i]));
    if (amax == 0)
        return 0;
    double best = amax, best_err = INFINITY;
    for (int k = 0; k < 32; k++) {
        double a = amax * (1.0 - k / 64.0), step = a / M, err = 0;
        for (int64_t i = 0; i < n; i++) {
            double m = round_away(w[i] / step);
            m = m > M ? M : (m < -M ? -M : m);
            double d = m * step - w[i];
            err += d * d;
        }
        if (err < best_err) {
            best_err = err;
            best = a;
        }
    }
    return best;
}

/* The target neuron of weight i (IR layout), or the first neuron of its
 * output channel for a convolution (all positions share the scale). */
static int64_t weight_target(const ls_conn *c, int64_t i)
{
    switch (c->kind) {
    case LC_DENSE: return i / c->n_axons;
    case LC_CONV: return i / ((c->ax_c / c->groups) * c->kh * c->kw) * c->OH * c->OW;
    default: return i;
    }
}

/* Mantissas of c at exponent e with the target neurons' scales; fills the
 * quantisation record. */
static void quantize_weights(ls_conn *c, const double *scale, int e, int M, int write)
{
    int64_t n = n_weights(c);
    ls_quant q = {0};
    q.weights = n;
    for (int64_t i = 0; i < n; i++) {
        double unit = 64.0 * ldexp(1.0, e) / scale[weight_target(c, i)]; /* float value of mantissa 1 */
        double x = c->wf[i] / unit, m = round_away(x);
        if (m > M || m < -M) {
            q.clipped++;
            m = m > M ? M : -M;
        }
        if (m == 0 && c->wf[i] != 0.0f)
            q.zeroed++;
        double err = fabs(m * unit - c->wf[i]);
        q.max_err = fmax(q.max_err, err);
        q.sq_err += err * err;
        if (write)
            c->mant[i] = (int8_t)m;
    }
    q.alpha = c->q.alpha;
    c->q = q;
    c->wexp = e;
}

static void add_quant(ls_quant *to, const ls_quant *q)
{
    to->weights += q->weights;
    to->clipped += q->clipped;
    to->zeroed += q->zeroed;
    to->max_err = fmax(to->max_err, q->max_err);
    to->sq_err += q->sq_err;
}

/* The exponent with the least squared error at fixed scales. */
static int search_exp(ls_conn *c, const double *scale, int M, int emin, int emax)
{
    int best = emin;
    double best_err = INFINITY;
    for (int e = emin; e <= emax; e++) {
        quantize_weights(c, scale, e, M, 0);
        if (c->q.sq_err < best_err) {
            best_err = c->q.sq_err;
            best = e;
        }
    }
    return best;
}

/* The clip α for each target neuron of c: per output channel (conv), per
 * output neuron (dense), |w| (one-to-one); or one for the whole layer. */
static void group_alpha(const ls_conn *c, int M, int per_neuron, double *alpha)
{
    int64_t n = c->n_out;
    if (!per_neuron) {
        double a = mse_clip(c->wf, n_weights(c), M);
        for (int64_t j = 0; j < n; j++)
            alpha[j] = a;
        return;
    }
    if (c->kind == LC_ONE2ONE) {
        for (int64_t j = 0; j < n; j++)
            alpha[j] = fabs(c->wf[j]);
    } else if (c->kind == LC_DENSE) {
        for (int64_t j = 0; j < n; j++)
            alpha[j] = mse_clip(c->wf + j * c->n_axons, c->n_axons, M);
    } else {
        int64_t per = (c->ax_c / c->groups) * c->kh * c->kw, plane = c->OH * c->OW;
        for (int64_t k = 0; k < c->K; k++) {
            double a = mse_clip(c->wf + k * per, per, M);
            for (int64_t p = 0; p < plane; p++)
                alpha[k * plane + p] = a;
        }
    }
}

/* Largest per-step |input| to a readout neuron in units of mantissa 1 at
 * clip α, its bias included: every source neuron spiking, so an axon that
 * pools k neurons carries k messages a step (times the largest payload for
 * graded input). */
static double readout_bound(const nc_loihi_net *net, const ls_pop *P, int ci, double alpha, int M)
{
    const ls_conn *c = &net->conns[ci];
    double worst = 0, per_axon = c->pool_k[0] ? (double)(c->pool_k[0] * c->pool_k[1]) : 1.0;
    if (c->src == 0)
        per_axon *= net->pops[0].in_signed ? 127 : 255;
    else
        per_axon *= net->pops[c->src].burst;
    int64_t cap = ls_max_fanin(c);
    for (int64_t j = 0; j < P->n; j++) {
        double sum = fabs(P->bias_f[j]) * M / alpha;
        if (c->kind == LC_DENSE)
            for (int64_t a = 0; a < c->n_axons; a++)
                sum += fmin(M, fabs(round_away(c->wf[j * c->n_axons + a] * M / alpha)));
        else if (c->kind == LC_ONE2ONE)
            sum += fmin(M, fabs(round_away(c->wf[j] * M / alpha)));
        else
            sum += (double)cap * M; /* a bound is enough for sizing */
        worst = fmax(worst, sum);
    }
    return worst * per_axon;
}

/* Integer units per float unit for each neuron of an IF layer, and the
 * main connection's exponent. */
static int if_scales(const nc_loihi_net *net, ls_pop *P, const double *alpha, int M, int emin, int emax)
{
    double P2 = ldexp(1.0, 23 - net->headroom_bits);
    if (!alpha) {
        for (int64_t j = 0; j < P->n; j++)
            P->scale[j] = P2 / P->theta_f[j];
        return emin;
    }
    /* the largest e for which every neuron's threshold stays within 2^P */
    int e = emin;
    for (int k = emax; k >= emin; k--) {
        int fits = 1;
        for (int64_t j = 0; j < P->n && fits; j++)
            if (alpha[j] > 0 && P->theta_f[j] * 64.0 * M * ldexp(1.0, k) / alpha[j] > P2)
                fits = 0;
        if (fits) {
            e = k;
            break;
        }
    }
    for (int64_t j = 0; j < P->n; j++) {
        double s = alpha[j] > 0 ? 64.0 * M * ldexp(1.0, e) / alpha[j] : INFINITY;
        /* at the smallest exponent, tiny weights leave part of the mantissa unused */
        P->scale[j] = fmin(s, P2 / P->theta_f[j]);
    }
    return e;
}

/* A layer fed by the host's bias-coded input must be able to receive a
 * current of B + 1 thresholds as a bias (B the most spikes a step, 1 but
 * for bursts): a constant current of at least Bθ fires B every step, so
 * clipping above that changes no spike. */
static void cap_host_scales(const nc_loihi_net *net, ls_pop *P)
{
    double bmax = NC_LF_BIAS_MANT_MAX * ldexp(1.0, (int)net->params.c[P_BIAS_EXP_MAX].value);
    for (int64_t j = 0; P->has_host && P->kind == LS_IF && j < P->n; j++)
        P->scale[j] = fmin(P->scale[j], bmax / ((P->burst + 1.0) * P->theta_f[j]));
}

static nc_status quantize_pop(nc_loihi_net *net, int pi)
{
    ls_pop *P = &net->pops[pi];
    const ls_params *pr = &net->params;
    int M = (1 << (net->weight_bits - 1)) - 1;
    int emin = (int)pr->c[P_WEIGHT_EXP_MIN].value, emax = (int)pr->c[P_WEIGHT_EXP_MAX].value;
    if (emin < 0)
        emin = 0;
    if (emax < emin)
        emax = emin;
    int bexp_max = (int)pr->c[P_BIAS_EXP_MAX].value;
    int64_t n = P->n;
    P->scale = nc_malloc((size_t)n * sizeof *P->scale);
    double *alpha = nc_malloc((size_t)n * sizeof *alpha);
    if (!P->scale || !alpha) {
        nc_free(alpha);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    /* the main connection: the one with the largest weight, so that the
     * others (smaller) can pick a finer exponent without clipping */
    int primary = -1;
    double wbig = -1;
    for (int ci = 0; ci < net->n_conns; ci++) {
        ls_conn *c = &net->conns[ci];
        if (c->dst != pi || c->host)
            continue;
        double m = 0;
        for (int64_t i = 0; i < n_weights(c); i++)
            m = fmax(m, fabs(c->wf[i]));
        if (m > wbig) {
            wbig = m;
            primary = ci;
        }
    }
    int e = emin;
    double amax = 0;
    if (primary >= 0) {
        /* IF neurons have their own thresholds, so each output channel can
         * have its own scale; the readout's classes must share one */
        group_alpha(&net->conns[primary], M, P->kind == LS_IF && net->per_channel, alpha);
        for (int64_t j = 0; j < n; j++)
            amax = fmax(amax, alpha[j]);
        net->conns[primary].q.alpha = amax;
    }
    if (P->kind == LS_IF) {
        e = if_scales(net, P, amax > 0 ? alpha : NULL, M, emin, emax);
    } else if (amax > 0) { /* readout: the largest scale that cannot saturate over `timesteps` */
        double bound = readout_bound(net, P, primary, amax, M);
        for (int k = emax; k >= emin; k--)
            if ((double)net->timesteps * 64.0 * ldexp(1.0, k) * bound <= (double)NC_LF_V_LIMIT || k == emin) {
                e = k;
                break;
            }
        double sc = 64.0 * M * ldexp(1.0, e) / amax;
        if (net->readout_max > 0) /* what the calibration data needs, with a factor 2 of margin */
            sc = fmin(sc, 0.5 * (double)NC_LF_V_LIMIT / net->readout_max);
        for (int64_t j = 0; j < n; j++)
            P->scale[j] = sc;
    } else {
        /* a readout fed only by the host: size it on |W|·|x| + |b| */
        double worst = 0, xm = fmax(fabs(net->input_min), fabs(net->input_max));
        for (int ci = 0; ci < net->n_conns; ci++) {
            const ls_conn *c = &net->conns[ci];
            for (int64_t j = 0; c->dst == pi && j < n; j++) {
                double sum = fabs(P->bias_f[j]);
                for (int64_t a = 0; c->kind == LC_DENSE && a < c->n_axons; a++)
                    sum += fabs(c->wf[j * c->n_axons + a]) * xm;
                worst = fmax(worst, sum);
            }
        }
        for (int64_t j = 0; j < n; j++)
            P->scale[j] = worst > 0 ? (double)NC_LF_V_LIMIT / ((double)net->timesteps * worst) : 1.0;
    }
    nc_free(alpha);
    cap_host_scales(net, P);
    for (int64_t j = 0; j < n; j++) {
        P->scale_min = j ? fmin(P->scale_min, P->scale[j]) : P->scale[j];
        P->scale_max = j ? fmax(P->scale_max, P->scale[j]) : P->scale[j];
    }
    /* connections */
    for (int ci = 0; ci < net->n_conns; ci++) {
        ls_conn *c = &net->conns[ci];
        if (c->dst != pi || c->host)
            continue;
        c->mant = nc_malloc((size_t)n_weights(c));
        if (!c->mant)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        int ce = ci == primary ? e : search_exp(c, P->scale, M, emin, emax);
        quantize_weights(c, P->scale, ce, M, 1);
        add_quant(&P->q, &c->q);
        if (ci == primary) {
            P->q.alpha = c->q.alpha;
            P->wexp = ce;
        }
    }
    /* thresholds, biases, v(0) */
    P->vth = nc_calloc((size_t)n, sizeof *P->vth);
    P->bias_mant = nc_calloc((size_t)n, sizeof *P->bias_mant);
    P->bias_exp = nc_calloc((size_t)n, sizeof *P->bias_exp);
    P->v0 = nc_calloc((size_t)n, sizeof *P->v0);
    if (!P->vth || !P->bias_mant || !P->bias_exp || !P->v0)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    int self_e = 0;
    if (P->kind == LS_IF && P->reset == NC_LF_RESET_TWO_COMP) {
        /* the threshold must equal the self-inhibiting weight: a mantissa of
         * up to M+1 (negative) at one exponent */
        double thmax = 0;
        for (int64_t j = 0; j < n; j++)
            thmax = fmax(thmax, P->theta_f[j] * P->scale[j]);
        self_e = emin;
        while (self_e < 30 && thmax / (64.0 * ldexp(1.0, self_e)) > M + 1)
            self_e++;
        if (self_e > emax)
            return nc_errorf(NC_ERR_LIMIT,
                             "layer '%s': a threshold of %.0f units needs a self-inhibiting weight exponent of "
                             "%d (largest %d); use more headroom bits",
                             P->name, thmax, self_e, emax);
    }
    for (int64_t j = 0; j < n; j++) {
        double s = P->scale[j];
        if (P->kind == LS_IF) {
            double th = P->theta_f[j] * s / 64.0, v;
            if (P->reset == NC_LF_RESET_TWO_COMP)
                v = round_away(th / ldexp(1.0, self_e)) * ldexp(1.0, self_e);
            else
                v = round_away(th);
            if (v < 1 || v > NC_LF_VTH_MAX) {
                P->th_clipped++;
                v = v < 1 ? 1 : NC_LF_VTH_MAX;
            }
            P->vth[j] = (int32_t)v;
            P->th_max_rel_err = fmax(P->th_max_rel_err, fabs(v * 64.0 / s - P->theta_f[j]) / P->theta_f[j]);
        }
        double b = round_away(P->bias_f[j] * s);
        int be;
        int64_t bi = fabs(b) < 0x1p62 ? (int64_t)b : (b < 0 ? -((int64_t)1 << 62) : ((int64_t)1 << 62));
        P->bias_clipped += nc_lf_bias_encode(bi, bexp_max, &P->bias_mant[j], &be);
        P->bias_exp[j] = (int8_t)be;
        P->bias_max_err = fmax(P->bias_max_err, fabs((double)nc_lf_bias(P->bias_mant[j], be) / s - P->bias_f[j]));
        /* The bias is integrated from the first step, but the input reaches
         * a layer only at step `depth`: starting from v(0) minus the bias of
         * those steps makes the layer reach v(0) exactly when its input
         * arrives, so the chip runs the float network shifted by one step a
         * hop. An IF neuron must not fire before then (a negative bias could
         * otherwise lift v(0) above the threshold). */
        double v0 = round_away(((P->kind == LS_IF ? P->v0_f[j] : 0.0) - (P->depth - 1) * (double)P->bias_f[j]) * s);
        if (P->kind == LS_IF && v0 > 64.0 * P->vth[j])
            v0 = 64.0 * P->vth[j];
        P->v0[j] = (int32_t)(v0 > NC_LF_V_LIMIT ? NC_LF_V_LIMIT : (v0 < -NC_LF_V_LIMIT ? -NC_LF_V_LIMIT : v0));
    }
    return NC_OK;
}

/* Effective weights laid out for scattering, and stored synapses per axon. */
static nc_status build_wt(ls_conn *c)
{
    int64_t nw = n_weights(c);
    c->wt = nc_malloc((size_t)nw * sizeof *c->wt);
    c->syn_per_axon = nc_calloc((size_t)c->n_axons, sizeof *c->syn_per_axon);
    if (!c->wt || !c->syn_per_axon)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    int e = c->wexp;
    if (c->kind == LC_ONE2ONE) {
        for (int64_t a = 0; a < c->n_axons; a++) {
            c->wt[a] = nc_lf_weight(c->mant[a], e);
            c->syn_per_axon[a] = c->mant[a] != 0;
        }
    } else if (c->kind == LC_DENSE) {
        int64_t in = c->n_axons, out = c->n_out;
        for (int64_t o = 0; o < out; o++)
            for (int64_t a = 0; a < in; a++) {
                int8_t m = c->mant[o * in + a];
                c->wt[a * out + o] = nc_lf_weight(m, e);
                c->syn_per_axon[a] += m != 0;
            }
    } else {
        int64_t cg = c->ax_c / c->groups, kg = c->K / c->groups, kk = c->kh * c->kw;
        int32_t *nz = nc_calloc((size_t)(c->ax_c * kk), sizeof *nz);
        if (!nz)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        for (int64_t k = 0; k < c->K; k++)
            for (int64_t ci = 0; ci < cg; ci++) {
                int64_t ch = (k / kg) * cg + ci;
                for (int64_t p = 0; p < kk; p++) {
                    int8_t m = c->mant[(k * cg + ci) * kk + p];
                    c->wt[(ch * kk + p) * kg + k % kg] = nc_lf_weight(m, e);
                    nz[ch * kk + p] += m != 0;
                }
            }
        for (int64_t ch = 0; ch < c->ax_c; ch++)
            for (int64_t ih = 0; ih < c->ax_h; ih++)
                for (int64_t iw = 0; iw < c->ax_w; iw++) {
                    int32_t cnt = 0;
                    for (int64_t i = 0; i < c->kh; i++) {
                        int64_t th = ih + c->pad[0] - i * c->dil[0];
                        if (th < 0 || th % c->stride[0] || th / c->stride[0] >= c->OH)
                            continue;
                        for (int64_t j = 0; j < c->kw; j++) {
                            int64_t tw = iw + c->pad[1] - j * c->dil[1];
                            if (tw < 0 || tw % c->stride[1] || tw / c->stride[1] >= c->OW)
                                continue;
                            cnt += nz[ch * kk + i * c->kw + j];
                        }
                    }
                    c->syn_per_axon[(ch * c->ax_h + ih) * c->ax_w + iw] = cnt;
                }
        nc_free(nz);
    }
    c->n_synapses = 0;
    for (int64_t a = 0; a < c->n_axons; a++)
        c->n_synapses += c->syn_per_axon[a];
    return NC_OK;
}

/* Dense multiply-accumulates of a connection as an ANN layer. */
static int64_t conn_macs(const ls_conn *c)
{
    switch (c->kind) {
    case LC_DENSE: return c->n_axons * c->n_out;
    case LC_CONV: return c->n_out * (c->ax_c / c->groups) * c->kh * c->kw;
    default: return c->n_out;
    }
}

static nc_status make_pop(nc_loihi_net *net, const nc_snn *s, int id, ls_pop *P)
{
    const nc_snn_layer *L = &s->layers[id];
    P->name = nc_strdup(L->name);
    if (!P->name)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    P->ir_id = id;
    P->kind = L->kind == NC_SNN_INPUT ? LS_INPUT : nc_snn_kind_is_neuron(L->kind) ? LS_IF : LS_READOUT;
    P->sgn = L->kind == NC_SNN_SIGNED_IF;
    P->burst = P->sgn ? nc_snn_layer_burst(L) : 1;
    P->n = nc_snn_layer_size(L);
    shape3(L, &P->c, &P->h, &P->w);
    P->du = 4095; /* the current is cleared every step: an IF neuron */
    P->dv = 0;    /* no leak */
    P->cpn = 1;
    P->reset = NC_LF_RESET_ZERO;
    if (P->n > INT32_MAX)
        return nc_errorf(NC_ERR_LIMIT, "layer '%s': too many neurons", L->name);
    if (P->kind == LS_INPUT)
        return NC_OK;
    P->bias_f = nc_calloc((size_t)P->n, sizeof *P->bias_f);
    if (!P->bias_f)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (P->kind != LS_IF)
        return NC_OK;
    P->reset = net->reset;
    P->cpn = net->reset == NC_LF_RESET_TWO_COMP ? 2 : 1;
    P->theta_f = nc_malloc((size_t)P->n * sizeof *P->theta_f);
    P->spike_f = nc_malloc((size_t)P->n * sizeof *P->spike_f);
    P->v0_f = nc_malloc((size_t)P->n * sizeof *P->v0_f);
    if (!P->theta_f || !P->spike_f || !P->v0_f)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t j = 0; j < P->n; j++) {
        float th = nc_snn_param(L->threshold, L, j, 1.0f);
        if (!(th > 0.0f) || !isfinite(th))
            return nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s': threshold %g of neuron %lld is not positive",
                             L->name, th, (long long)j);
        P->theta_f[j] = th;
        P->spike_f[j] = nc_snn_param(L->spike_value, L, j, th);
        P->v0_f[j] = nc_snn_param(L->v_init, L, j, 0.5f * th);
    }
    return NC_OK;
}

/* The largest |readout summed over t ≤ timesteps| of the float network on
 * the calibration samples. */
static nc_status calib_readout(const nc_snn *s, const nc_loihi_options *o, nc_loihi_net *net)
{
    const nc_tensor *x = o->calib;
    int64_t in = nc_snn_layer_size(&s->layers[0]);
    if (x->dtype != NC_DTYPE_F32 || x->ndim < 1 || x->shape[0] < 1 || x->numel != x->shape[0] * in)
        return nc_errorf(NC_ERR_SHAPE, "Loihi calibration data: expected float32 (N, %lld values a sample)",
                         (long long)in);
    int64_t n = x->shape[0], cap = o->calib_samples > 0 ? o->calib_samples : 256;
    if (n > cap)
        n = cap;
    nc_tensor view = *x; /* the first n samples, sharing x's data */
    view.shape[0] = n;
    view.numel = n * in;
    nc_session_options so = {.timesteps = net->timesteps, .per_step = 1};
    nc_session *ss = NULL;
    nc_tensor *y = NULL;
    nc_status st = nc_session_create(s, &so, &ss);
    if (st == NC_OK)
        st = nc_session_run(ss, &view, &y);
    if (st == NC_OK) {
        const float *v = nc_f32(y);
        int64_t per = y->numel / ((int64_t)net->timesteps * n);
        double *sum = nc_calloc((size_t)(n * per), sizeof *sum);
        if (!sum)
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        for (int t = 0; sum && t < net->timesteps; t++)
            for (int64_t k = 0; k < n * per; k++) {
                sum[k] += v[(int64_t)t * n * per + k];
                net->readout_max = fmax(net->readout_max, fabs(sum[k]));
            }
        nc_free(sum);
        net->calib_n = n;
    }
    nc_tensor_free(y);
    nc_session_free(ss);
    if (st != NC_OK)
        nc_error_prefix("running the float network on the Loihi calibration data");
    return st;
}

nc_status ls_build(const nc_snn *s, const nc_loihi_options *o, nc_loihi_net *net)
{
    int nl = s->n_layers;
    for (int i = 0; i < nl; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind == NC_SNN_SPIKEMAXPOOL2D)
            return unsupported(L, "spiking max pooling is not mapped onto Loihi cores (its spike counts "
                                  "are no compartment); convert with --maxpool average for the simulator");
        if (L->kind == NC_SNN_SIGNED_IF && net->loihi1)
            return unsupported(L, "signed spikes are not mapped onto Loihi 1 cores (a Loihi 1 spike has no "
                                  "sign); simulate Loihi 2 (--target loihi2) or convert with --plain-spikes "
                                  "(nc_convert_options.spikes)");
        if (L->kind == NC_SNN_SIGNED_IF && net->reset != NC_LF_RESET_SUBTRACT)
            return unsupported(L, "signed spikes need the subtractive reset (a negative spike gives back the "
                                  "threshold a spike took): simulate with --mode subtract, or convert with "
                                  "--plain-spikes");
        if (L->kind == NC_SNN_NONLINEAR)
            return nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s' (%s): %s of its inputs' running means (expectation "
                             "compensation) is no Loihi compartment, which integrates and fires, and its graded "
                             "output is no spike (run the network on the cpu, cpu-fast or cuda backend)", L->name,
                             nc_snn_kind_name(L->kind), nc_nonlinear_fn_name(L->nl.fn));
        if (L->two_sided)
            return unsupported(L, "a two-sided SignedIF (net counts below zero, after a Nonlinear layer) is not "
                                  "mapped: the simulator's signed compartments stop negative spikes at a net "
                                  "count of zero");
        if (nc_snn_layer_nir_semantics(L))
            return unsupported(L, "IF neurons with NIR's semantics (a spike when v > θ, v_reset, r; read from "
                                  "another tool's file) are not DESIGN §3's IF the simulator maps (load the file "
                                  "with --nir-reset subtract --nir-spike ge)");
        if (L->kind >= NC_SNN_LI)
            return unsupported(L, "a NIR node type the Loihi simulator does not map (it maps IF layers with "
                                  "Affine, Conv2d, non-overlapping Pool2d, Flatten and Add between them)");
        if (L->kind == NC_SNN_LIF || L->kind == NC_SNN_CUBALIF || L->kind == NC_SNN_MAXPOOL2D ||
            L->kind == NC_SNN_CONCAT || (L->kind == NC_SNN_POOL2D && L->div_taps))
            return unsupported(L, "not supported by the Loihi simulator (IF layers with Affine, Conv2d, "
                                  "non-overlapping Pool2d, Flatten and Add between them)");
    }
    int out = nc_snn_output_id(s);
    if (s->layers[out].kind != NC_SNN_READOUT)
        return unsupported(&s->layers[out], "the simulator needs a readout as the network's output");
    int *pop_of = nc_malloc((size_t)nl * sizeof *pop_of);
    if (!pop_of)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    int np = 0;
    for (int i = 0; i < nl; i++)
        pop_of[i] = i == 0 || is_pop_kind(s->layers[i].kind) ? np++ : -1;
    nc_status st = NC_OK;
    net->pops = nc_calloc((size_t)np, sizeof *net->pops);
    if (!net->pops) {
        nc_free(pop_of);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    net->n_pops = np;
    for (int i = 0; i < nl && st == NC_OK; i++)
        if (pop_of[i] >= 0)
            st = make_pop(net, s, i, &net->pops[pop_of[i]]);
    net->readout = pop_of[out];
    net->in_size = net->pops[0].n;
    ls_pop *In = &net->pops[0];
    In->in_signed = net->input_min < 0;
    In->in_step = In->in_signed ? fmax(fabs(net->input_min), fabs(net->input_max)) / 127.0 : net->input_max / 255.0;
    if (st == NC_OK && !(In->in_step > 0))
        st = nc_errorf(NC_ERR_INVALID_ARG, "the input range [%g, %g] is empty", net->input_min, net->input_max);

    /* connections */
    for (int i = 1; i < nl && st == NC_OK; i++) {
        if (pop_of[i] < 0)
            continue;
        const nc_snn_layer *L = &s->layers[i];
        term terms[MAX_TERMS];
        int nt = 0;
        if (L->n_inputs != 1) {
            st = unsupported(L, "expected one input");
            break;
        }
        st = collect(s, L->inputs[0], i, terms, &nt);
        for (int k = 0; k < nt && st == NC_OK; k++) {
            ls_conn *nc = nc_realloc(net->conns, (size_t)(net->n_conns + 1) * sizeof *nc);
            if (!nc) {
                st = nc_errorf(NC_ERR_NOMEM, "out of memory");
                break;
            }
            net->conns = nc;
            ls_conn *c = &net->conns[net->n_conns++];
            memset(c, 0, sizeof *c);
            c->src = pop_of[terms[k].src];
            c->dst = pop_of[i];
            c->syn_layer = terms[k].syn;
            c->host = c->src == 0 && !net->input_graded;
            net->pops[c->dst].has_host |= c->host;
            int via = terms[k].syn >= 0 ? terms[k].syn : terms[k].pool >= 0 ? terms[k].pool : terms[k].src;
            c->via = nc_strdup(s->layers[via].name);
            float *fac = NULL;
            if (!c->via)
                st = nc_errorf(NC_ERR_NOMEM, "out of memory");
            if (st == NC_OK)
                st = build_axons(net, s, c, &terms[k], &fac);
            if (st == NC_OK)
                st = build_synapses(net, s, c, &terms[k], fac);
            nc_free(fac);
        }
    }
    nc_free(pop_of);
    if (st != NC_OK)
        return st;

    /* depth: the step at which a population's input first arrives; delays
     * make every path into a population arrive together */
    net->pops[0].depth = net->input_graded ? 1 : 0;
    for (int p = 1; p < np; p++) {
        int d = 1;
        for (int ci = 0; ci < net->n_conns; ci++) {
            const ls_conn *c = &net->conns[ci];
            if (c->dst == p && !c->host && net->pops[c->src].depth + 1 > d)
                d = net->pops[c->src].depth + 1;
        }
        net->pops[p].depth = d;
    }
    net->max_delay = 0;
    for (int ci = 0; ci < net->n_conns; ci++) {
        ls_conn *c = &net->conns[ci];
        c->delay = c->host ? 0 : net->pops[c->dst].depth - net->pops[c->src].depth - 1;
        if (c->delay > 62)
            return nc_errorf(NC_ERR_LIMIT, "layer '%s': paths of unequal length need a synaptic delay of %d "
                                           "steps (Loihi allows 62)", net->pops[c->dst].name, c->delay);
        if (c->delay > net->max_delay)
            net->max_delay = c->delay;
    }
    net->latency = net->pops[net->readout].depth - 1;

    if (o->calib && (st = calib_readout(s, o, net)) != NC_OK)
        return st;
    for (int p = 1; p < np && st == NC_OK; p++)
        st = quantize_pop(net, p);
    net->ann_macs = net->host_macs = 0;
    for (int ci = 0; ci < net->n_conns && st == NC_OK; ci++) {
        ls_conn *c = &net->conns[ci];
        net->ann_macs += conn_macs(c);
        if (c->host)
            net->host_macs += conn_macs(c);
        else
            st = build_wt(c);
    }
    return st;
}
