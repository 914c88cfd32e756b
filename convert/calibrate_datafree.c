/* Data-free threshold calibration (calibrate.h, nc_calibrate_data_free).
 *
 * A BatchNormalization normalises its input with its own running statistics
 * and then applies γ·x̂ + β, so under those statistics its output is, per
 * channel, a value of mean β and variance γ² — taken as N(β, γ²), as the
 * BN's premise is. The ReLU after it gives a rectified Gaussian whose
 * percentile is analytic. Statistics then propagate forward only where it
 * needs no knowledge the model does not hold:
 *  - ReLU: the mean and variance of the rectified Gaussian (moment matched
 *    to a Gaussian again for what follows);
 *  - Add of two computed values: means and variances add (the two treated
 *    as independent; the same value twice: 2μ, 4σ²);
 *  - Identity / Dropout, and Pad (its border zeros ignored, like a Conv's): unchanged;
 *  - a MaxPool moved before the neuron: the maximum of its k inputs, taken
 *    as independent (CDF^k);
 *  - Conv (group 1) / Gemm / MatMul with constant weights: the mean exactly
 *    (linearity; zero padding at the borders ignored), the variance as
 *    Σ w²·σ², the inputs taken as independent: their correlations are
 *    what no statistic of the model gives;
 *  - AveragePool / GlobalAveragePool: the mean exactly, the variance kept
 *    (the bound for fully correlated neighbours: a mean of k values varies
 *    at most as much as they do);
 *  - Flatten / Reshape of (N, C, H, W) to (N, C·H·W): per feature.
 *  - MaxPool: the maximum of its k inputs, taken as independent;
 *  - Concat along channels: each part's channels;
 *  - grouped and depthwise Conv: as Conv, each output over its group's inputs.
 * Where no BatchNorm lies upstream (torch.onnx in eval mode folds BN into the
 * convolutions, so most exported networks have none), the model's input is
 * taken as normalised, per channel N(0, 1), as torchvision's normalised
 * images are, and carried the same way: an estimate from the weights alone,
 * marked `assumed` so that its layers are named in one warning and their
 * source is "assumed-input". A BN downstream starts again from its own
 * statistics. An IF layer whose pre-activation has no statistics even so
 * (an op none of the rules above covers) needs data. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

/* "max" has no analytic answer (a Gaussian is unbounded): the quantile one
 * activation in a million exceeds stands for it. */
#define NC_DATAFREE_MAX_Q 0.999999

enum { ST_NONE = 0, ST_EXACT = 1, ST_PROPAGATED = 2 };

typedef struct vstat {
    int kind;        /* ST_*; ST_EXACT: a BN output, exactly N(mean, var) under the BN's premise */
    int assumed;     /* derived from the assumed input statistics, not from a BN's */
    int64_t C;
    double *mean, *var;
} vstat;

static double phi_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* One channel of the site value: a = max over k of max(0, z), z ~ N(mu, sd²). */
typedef struct chan {
    double mu, sd;
    int k;
} chan;

/* P(a <= t), t >= 0. */
static double chan_cdf(const chan *c, double t)
{
    double p = c->sd > 0.0 ? phi_cdf((t - c->mu) / c->sd) : (t >= c->mu ? 1.0 : 0.0);
    return c->k == 1 ? p : pow(p, c->k);
}

/* The smallest t >= 0 where the mixture of the n channels (equal weight, as
 * every channel has the same number of neurons) reaches the quantile q: of
 * every value with count_zeros, else of the positive ones (the convention of
 * nc_hist_percentile). 0 when q falls among the zeros or nothing is positive. */
static double mixture_quantile(const chan *ch, int64_t n, double q, int count_zeros)
{
    double zeros = 0.0, hi = 0.0;
    for (int64_t i = 0; i < n; i++) {
        zeros += chan_cdf(&ch[i], 0.0);
        double top = ch[i].mu + 40.0 * ch[i].sd;
        hi = top > hi ? top : hi;
    }
    double base = count_zeros ? 0.0 : zeros, total = (double)n - base;
    if (!(total > 1e-300) || !(hi > 0.0))
        return 0.0;
    double target = q * total;
    if (count_zeros && target <= zeros)
        return 0.0;
    double lo = 0.0;
    for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
        double mid = 0.5 * (lo + hi), f = -base;
        for (int64_t i = 0; i < n; i++)
            f += chan_cdf(&ch[i], mid);
        if (f >= target)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* The MSE clip of the modelled distribution: nc_hist_mse_clip on the
 * histogram the distribution would fill (2^32 values a channel), up to the
 * one-in-10^7 quantile: an approximation of the expected squared error to
 * one bin, like the data path's. */
static double mixture_mse(const chan *ch, int64_t n, int T, nc_hist *h)
{
    double top = mixture_quantile(ch, n, 1.0 - 1e-7, 0);
    memset(h, 0, sizeof *h);
    if (!(top > 0.0))
        return 0.0;
    int e;
    frexp(top, &e);
    h->range = ldexp(1.0, e);
    h->max = top;
    const double W = 4294967296.0, w = h->range / NC_CALIB_BINS;
    for (int64_t i = 0; i < n; i++) {
        double prev = chan_cdf(&ch[i], 0.0);
        h->zeros += llround(W * prev);
        for (int b = 0; b < NC_CALIB_BINS; b++) {
            double up = (b + 1) * w > top ? top : (b + 1) * w, cur = chan_cdf(&ch[i], up);
            int64_t cnt = llround(W * (cur - prev));
            h->bins[b] += cnt;
            h->pos += cnt;
            prev = cur;
            if (up >= top)
                break;
        }
    }
    return nc_hist_mse_clip(h, T);
}

static double chans_stat(const chan *ch, int64_t n, const nc_calib_options *o, nc_hist *h)
{
    switch (o->method) {
    case NC_THRESHOLD_MAX: return mixture_quantile(ch, n, NC_DATAFREE_MAX_Q, o->count_zeros);
    case NC_THRESHOLD_MSE: return mixture_mse(ch, n, o->timesteps, h);
    default:
        return mixture_quantile(ch, n, o->percentile >= 100.0 ? NC_DATAFREE_MAX_Q : o->percentile / 100.0,
                                o->count_zeros);
    }
}

/* ---- propagation over the graph ---- */

static nc_status vstat_alloc(vstat *s, int64_t C, int kind)
{
    s->kind = kind;
    s->C = C;
    s->mean = nc_calloc((size_t)C, sizeof *s->mean);
    s->var = nc_calloc((size_t)C, sizeof *s->var);
    return s->mean && s->var ? NC_OK : nc_errorf(NC_ERR_NOMEM, "out of memory");
}

static const nc_tensor *const_input(const nc_graph *g, const nc_node *n, int i)
{
    if (!nc_node_has_input(n, i))
        return NULL;
    const nc_tensor *t = g->values[n->inputs[i]].constant;
    return t && t->dtype == NC_DTYPE_F32 ? t : NULL;
}

static nc_status propagate_conv(const nc_graph *g, const nc_node *n, const vstat *a, vstat *y);
static nc_status propagate_gemm(const nc_graph *g, const nc_node *n, const vstat *a, vstat *y);
static nc_status propagate_flatten(const nc_graph *g, const nc_node *n, const vstat *a, vstat *y);
static nc_status propagate_maxpool(const nc_node *n, const vstat *a, vstat *y);
static nc_status propagate_concat(const nc_graph *g, const nc_node *n, const vstat *st, vstat *y);

static nc_status propagate_node(const nc_graph *g, const nc_node *n, vstat *st)
{
    if (n->n_outputs < 1 || n->outputs[0] < 0 || !nc_node_has_input(n, 0))
        return NC_OK;
    int out = n->outputs[0], in = n->inputs[0];
    const char *op = n->op_type;
    if (strcmp(op, "BatchNormalization") == 0) {
        const nc_tensor *scale = const_input(g, n, 1), *bias = const_input(g, n, 2);
        if (!scale || !bias || scale->numel != bias->numel || scale->numel < 1)
            return NC_OK;
        /* values from the file: a non-finite scale or shift gives no statistics (the layer is named as
           needing --calib) rather than a NaN or infinite threshold */
        for (int64_t c = 0; c < scale->numel; c++)
            if (!isfinite(nc_f32(scale)[c]) || !isfinite(nc_f32(bias)[c]))
                return NC_OK;
        nc_status s = vstat_alloc(&st[out], scale->numel, ST_EXACT);
        for (int64_t c = 0; s == NC_OK && c < scale->numel; c++) {
            st[out].mean[c] = nc_f32(bias)[c];
            st[out].var[c] = (double)nc_f32(scale)[c] * nc_f32(scale)[c];
        }
        return s;
    }
    const vstat *a = &st[in];
    if (a->kind == ST_NONE)
        return NC_OK;
    if (strcmp(op, "Relu") == 0) {
        nc_status s = vstat_alloc(&st[out], a->C, ST_PROPAGATED);
        for (int64_t c = 0; s == NC_OK && c < a->C; c++) {
            double mu = a->mean[c], sd = sqrt(a->var[c]);
            if (!(sd > 0.0)) {
                st[out].mean[c] = mu > 0.0 ? mu : 0.0;
                continue;
            }
            double al = mu / sd, P = phi_cdf(al), p = exp(-0.5 * al * al) / 2.5066282746310002 /* √(2π) */;
            double m = mu * P + sd * p, m2 = (mu * mu + sd * sd) * P + mu * sd * p;
            st[out].mean[c] = m;
            st[out].var[c] = m2 - m * m > 0.0 ? m2 - m * m : 0.0;
        }
        return s;
    }
    if (strcmp(op, "Conv") == 0)
        return propagate_conv(g, n, a, &st[out]);
    if (strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0)
        return propagate_gemm(g, n, a, &st[out]);
    if (strcmp(op, "Flatten") == 0 || strcmp(op, "Reshape") == 0)
        return propagate_flatten(g, n, a, &st[out]);
    if (strcmp(op, "MaxPool") == 0)
        return propagate_maxpool(n, a, &st[out]);
    if (strcmp(op, "Concat") == 0)
        return propagate_concat(g, n, st, &st[out]);
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Dropout") == 0 || strcmp(op, "Pad") == 0 ||
        strcmp(op, "AveragePool") == 0 ||
        strcmp(op, "GlobalAveragePool") == 0) {
        int pool = strstr(op, "Pool") != NULL;
        nc_status s = vstat_alloc(&st[out], a->C, pool ? ST_PROPAGATED : a->kind);
        if (s == NC_OK) {
            memcpy(st[out].mean, a->mean, (size_t)a->C * sizeof *a->mean);
            memcpy(st[out].var, a->var, (size_t)a->C * sizeof *a->var);
        }
        return s;
    }
    if (strcmp(op, "Add") == 0 && nc_node_has_input(n, 1)) {
        const vstat *b = &st[n->inputs[1]];
        if (b->kind == ST_NONE || b->C != a->C)
            return NC_OK;
        int same = n->inputs[1] == in;
        nc_status s = vstat_alloc(&st[out], a->C, ST_PROPAGATED);
        for (int64_t c = 0; s == NC_OK && c < a->C; c++) {
            st[out].mean[c] = a->mean[c] + b->mean[c];
            st[out].var[c] = same ? 4.0 * a->var[c] : a->var[c] + b->var[c];
        }
        return s;
    }
    return NC_OK;
}

/* Conv (weights (O, I/group, kh, kw)) over per-channel statistics: output o
 * reads the input channels of its group. */
static nc_status propagate_conv(const nc_graph *g, const nc_node *n, const vstat *a, vstat *y)
{
    const nc_tensor *W = const_input(g, n, 1), *B = const_input(g, n, 2);
    int64_t groups = nc_attr_int(n, "group", 1);
    if (!W || W->ndim != 4 || groups < 1 || W->shape[1] * groups != a->C || W->shape[0] % groups ||
        (nc_node_has_input(n, 2) && (!B || B->numel != W->shape[0])))
        return NC_OK;
    int64_t O = W->shape[0], I = W->shape[1], k = W->shape[2] * W->shape[3], per_group = O / groups;
    nc_status s = vstat_alloc(y, O, ST_PROPAGATED);
    for (int64_t o = 0; s == NC_OK && o < O; o++) {
        double m = B ? nc_f32(B)[o] : 0.0, v = 0.0;
        for (int64_t i = 0; i < I; i++)
            for (int64_t j = 0; j < k; j++) {
                int64_t c = o / per_group * I + i;
                double w = nc_f32(W)[(o * I + i) * k + j];
                m += w * a->mean[c];
                v += w * w * a->var[c];
            }
        y->mean[o] = m;
        y->var[o] = v;
    }
    return s;
}

/* Gemm (alpha, beta, transB) / MatMul over per-feature statistics. */
static nc_status propagate_gemm(const nc_graph *g, const nc_node *n, const vstat *a, vstat *y)
{
    int matmul = strcmp(n->op_type, "MatMul") == 0;
    const nc_tensor *Bm = const_input(g, n, 1), *Cb = matmul ? NULL : const_input(g, n, 2);
    if (!Bm || Bm->ndim != 2 || (!matmul && nc_attr_int(n, "transA", 0)) ||
        (!matmul && nc_node_has_input(n, 2) && !Cb))
        return NC_OK;
    int transB = matmul ? 0 : (int)nc_attr_int(n, "transB", 0);
    double alpha = matmul ? 1.0 : nc_attr_float(n, "alpha", 1.0f);
    double beta = matmul ? 1.0 : nc_attr_float(n, "beta", 1.0f);
    int64_t out = transB ? Bm->shape[0] : Bm->shape[1], in = transB ? Bm->shape[1] : Bm->shape[0];
    if (in != a->C || (Cb && Cb->numel != 1 && Cb->numel != out))
        return NC_OK;
    nc_status s = vstat_alloc(y, out, ST_PROPAGATED);
    const float *bm = nc_f32(Bm);
    for (int64_t o = 0; s == NC_OK && o < out; o++) {
        double m = Cb ? beta * nc_f32(Cb)[Cb->numel == 1 ? 0 : o] : 0.0, v = 0.0;
        for (int64_t i = 0; i < in; i++) {
            double w = alpha * (transB ? bm[o * in + i] : bm[i * out + o]);
            m += w * a->mean[i];
            v += w * w * a->var[i];
        }
        y->mean[o] = m;
        y->var[o] = v;
    }
    return s;
}

/* Flatten / Reshape of (N, C, *spatial) to (N, C·plane): channel c's
 * statistics for each of its plane features. */
static nc_status propagate_flatten(const nc_graph *g, const nc_node *n, const vstat *a, vstat *y)
{
    const nc_value *vi = &g->values[n->inputs[0]], *vo = &g->values[n->outputs[0]];
    if (vi->ndim < 2 || vo->ndim != 2 || vi->shape[1] != a->C)
        return NC_OK;
    int64_t plane = 1;
    for (int d = 2; d < vi->ndim; d++)
        plane *= vi->shape[d];
    if (plane < 1 || vo->shape[1] != a->C * plane)
        return NC_OK;
    nc_status s = vstat_alloc(y, a->C * plane, a->kind);
    for (int64_t f = 0; s == NC_OK && f < a->C * plane; f++) {
        y->mean[f] = a->mean[f / plane];
        y->var[f] = a->var[f / plane];
    }
    return s;
}

/* The maximum of k independent N(m, sd²): its mean and variance from
 * E[X] = ∫ t d(F^k) and E[X²], F the Gaussian CDF, by the midpoint rule over
 * m ± 10 sd. */
static void max_of_k(double m, double var, int k, double *mean, double *v)
{
    double sd = sqrt(var), e1 = 0.0, e2 = 0.0;
    if (!(sd > 0.0) || k <= 1) {
        *mean = m;
        *v = var;
        return;
    }
    const int steps = 4000;
    double lo = -10.0, h = 20.0 / steps, prev = 0.0;
    for (int i = 1; i <= steps; i++) {
        double z = lo + i * h, cur = pow(phi_cdf(z), k), zm = z - 0.5 * h;
        e1 += zm * (cur - prev);
        e2 += zm * zm * (cur - prev);
        prev = cur;
    }
    *mean = m + sd * e1;
    *v = var * (e2 - e1 * e1 > 0.0 ? e2 - e1 * e1 : 0.0);
}

/* MaxPool over per-channel statistics: the max of its kernel's k values. */
static nc_status propagate_maxpool(const nc_node *n, const vstat *a, vstat *y)
{
    const int64_t *ks;
    int nk = nc_attr_ints(n, "kernel_shape", &ks), k = 1;
    for (int d = 0; d < nk; d++)
        k *= (int)ks[d];
    nc_status s = vstat_alloc(y, a->C, ST_PROPAGATED);
    for (int64_t c = 0; s == NC_OK && c < a->C; c++)
        max_of_k(a->mean[c], a->var[c], k, &y->mean[c], &y->var[c]);
    return s;
}

/* Concat along channels (axis 1) of inputs that all have statistics. */
static nc_status propagate_concat(const nc_graph *g, const nc_node *n, const vstat *st, vstat *y)
{
    int64_t axis = nc_attr_int(n, "axis", 0), C = 0;
    int nd = g->values[n->outputs[0]].ndim;
    if (axis < 0)
        axis += nd;
    if (axis != 1)
        return NC_OK;
    for (int i = 0; i < n->n_inputs; i++) {
        if (!nc_node_has_input(n, i) || st[n->inputs[i]].kind == ST_NONE)
            return NC_OK;
        C += st[n->inputs[i]].C;
    }
    nc_status s = vstat_alloc(y, C, ST_PROPAGATED);
    for (int i = 0, c = 0; s == NC_OK && i < n->n_inputs; i++) {
        const vstat *p = &st[n->inputs[i]];
        memcpy(y->mean + c, p->mean, (size_t)p->C * sizeof *p->mean);
        memcpy(y->var + c, p->var, (size_t)p->C * sizeof *p->var);
        c += (int)p->C;
    }
    return s;
}

static int producer_of(const nc_graph *g, int v)
{
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_outputs; k++)
            if (g->nodes[i].outputs[k] == v)
                return i;
    return -1;
}

/* The ReLU input behind a site's value (its MaxPool's kernel size in *k). */
static int site_preactivation(const nc_graph *g, const nc_if_site *site, int *k)
{
    *k = 1;
    int p = producer_of(g, site->value);
    if (p >= 0 && strcmp(g->nodes[p].op_type, "MaxPool") == 0) {
        const int64_t *ks;
        int nk = nc_attr_ints(&g->nodes[p], "kernel_shape", &ks);
        for (int d = 0; d < nk; d++)
            *k *= (int)ks[d];
        p = nc_node_has_input(&g->nodes[p], 0) ? producer_of(g, g->nodes[p].inputs[0]) : -1;
    }
    if (p < 0 || !nc_node_has_input(&g->nodes[p], 0))
        return -1;
    const char *op = g->nodes[p].op_type;
    return strcmp(op, "Relu") == 0 || strcmp(op, "Clip") == 0 ? g->nodes[p].inputs[0] : -1;
}

static nc_status set_site(nc_snn *s, nc_if_site *site, const vstat *v, int k, const nc_calib_options *o,
                          nc_hist *h, nc_strlist *warnings)
{
    nc_snn_layer *L = &s->layers[site->layer];
    int64_t C = v->C;
    if (o->per_channel && C != nc_snn_layer_channels(L))
        return nc_errorf(NC_ERR_MODEL, "IF layer '%s': its statistics have %lld channels, the layer %lld",
                         L->name, (long long)C, (long long)nc_snn_layer_channels(L));
    chan *ch = nc_malloc((size_t)C * sizeof *ch);
    if (!ch)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t c = 0; c < C; c++)
        ch[c] = (chan){v->mean[c], sqrt(v->var[c]), k};
    double layer_theta = chans_stat(ch, C, o, h);
    nc_status st = NC_OK;
    if (!(layer_theta > 0.0)) {
        st = nc_strlist_addf(warnings, "IF layer '%s': by its modelled statistics its activations are "
                             "(almost) never positive (or the statistic falls among the zeros); θ = 1", L->name);
        layer_theta = 1.0;
    }
    site->stat = layer_theta;
    site->act_max = NAN;
    site->n_values = site->n_zeros = 0;
    site->source = v->assumed                     ? NC_SOURCE_ASSUMED_INPUT
                   : v->kind == ST_EXACT && k == 1 ? NC_SOURCE_BN_STATS
                                                   : NC_SOURCE_PROPAGATED;
    int64_t n = o->per_channel ? C : 1;
    nc_tensor *t = st == NC_OK ? nc_tensor_new(NC_DTYPE_F32, 1, &n) : NULL;
    if (st == NC_OK && !t)
        st = NC_ERR_NOMEM;
    for (int64_t c = 0; st == NC_OK && c < n; c++) {
        double th = o->per_channel ? chans_stat(&ch[c], 1, o, h) : layer_theta;
        if (!(th > 0.0)) {
            th = layer_theta;
            site->fallback_channels++;
        }
        nc_f32(t)[c] = (float)th;
        if (!(nc_f32(t)[c] > 0.0f))
            nc_f32(t)[c] = (float)layer_theta;
    }
    if (st == NC_OK) {
        nc_site_cap_theta(site, t);
        nc_tensor_free(L->threshold);
        L->threshold = t;
    }
    nc_free(ch);
    return st;
}

/* A Clip(0, c) without statistics: θ = c, the clip's own range. */
static nc_status set_clip_site(nc_snn *s, nc_if_site *site)
{
    nc_snn_layer *L = &s->layers[site->layer];
    float c = (float)site->cap;
    int64_t one = 1;
    nc_tensor *t;
    if (nc_tensor_create_from(NC_DTYPE_F32, 1, &one, &c, &t) != NC_OK)
        return NC_ERR_NOMEM;
    site->stat = site->cap;
    site->act_max = NAN;
    site->n_values = site->n_zeros = 0;
    site->source = NC_SOURCE_CLIP;
    nc_tensor_free(L->threshold);
    L->threshold = t;
    return NC_OK;
}

/* The model input's assumed statistics: N(0, 1) per channel (dimension 1). */
static nc_status seed_input(const nc_graph *g, int v, vstat *st)
{
    const nc_value *val = &g->values[v];
    if (val->ndim < 2 || val->shape[1] < 1)
        return NC_OK;
    nc_status s = vstat_alloc(st, val->shape[1], ST_PROPAGATED);
    for (int64_t c = 0; s == NC_OK && c < st->C; c++)
        st->var[c] = 1.0;
    st->assumed = 1;
    return s;
}

/* A node's output statistics are assumed when any input's are (a BN's are its own). */
static void mark_assumed(const nc_node *n, vstat *st)
{
    if (n->n_outputs < 1 || n->outputs[0] < 0 || st[n->outputs[0]].kind == ST_NONE ||
        strcmp(n->op_type, "BatchNormalization") == 0)
        return;
    for (int i = 0; i < n->n_inputs; i++)
        if (nc_node_has_input(n, i) && st[n->inputs[i]].assumed)
            st[n->outputs[0]].assumed = 1;
}

/* One warning naming the layers whose θ rests on the assumed input statistics. */
static nc_status warn_assumed(const nc_snn *s, const nc_if_site *sites, int n_sites, nc_strlist *warnings)
{
    char names[768] = "";
    size_t len = 0;
    int n = 0;
    for (int i = 0; i < n_sites; i++) {
        if (sites[i].rule != NC_THETA_CALIB || sites[i].source != NC_SOURCE_ASSUMED_INPUT)
            continue;
        if (len < sizeof names - 1) {
            int w = snprintf(names + len, sizeof names - len, "%s'%s'", n ? ", " : "", s->layers[sites[i].layer].name);
            len += w > 0 ? (size_t)w : 0;
        }
        n++;
    }
    if (!n)
        return NC_OK;
    return nc_strlist_addf(warnings, "%d IF layer%s no BatchNorm statistics before %s, so %s threshold%s %s estimated "
                           "from the weights alone, taking the input as normalised (mean 0, variance 1 a channel): "
                           "%s%s; calibrate with data (--calib) for thresholds that fit your inputs",
                           n, n == 1 ? " has" : "s have", n == 1 ? "it" : "them", n == 1 ? "its" : "their",
                           n == 1 ? "" : "s", n == 1 ? "is" : "are", names, len >= sizeof names - 1 ? "..." : "");
}

nc_status nc_calibrate_data_free(const nc_graph *g, const nc_calib_options *o, nc_snn *s, nc_if_site *sites,
                                 int n_sites, nc_strlist *warnings)
{
    vstat *st = nc_calloc((size_t)g->n_values + 1, sizeof *st);
    nc_hist *h = nc_calloc(1, sizeof *h);
    int *pre = nc_calloc((size_t)n_sites + 1, sizeof *pre), *kk = nc_calloc((size_t)n_sites + 1, sizeof *kk);
    nc_status rc = st && h && pre && kk ? NC_OK : nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int i = 0; rc == NC_OK && i < g->n_inputs; i++)
        rc = seed_input(g, g->inputs[i], &st[g->inputs[i]]);
    for (int i = 0; rc == NC_OK && i < g->n_nodes; i++) {
        rc = propagate_node(g, &g->nodes[i], st);
        mark_assumed(&g->nodes[i], st);
    }
    /* every layer without statistics, named in one message */
    char missing[768] = "";
    size_t len = 0;
    int n_missing = 0;
    for (int i = 0; rc == NC_OK && i < n_sites; i++) {
        if (sites[i].rule != NC_THETA_CALIB)
            continue;
        pre[i] = site_preactivation(g, &sites[i], &kk[i]);
        const nc_snn_layer *L = &s->layers[sites[i].layer];
        /* a Clip(0, c) keeps θ = c rather than a guess from assumed input statistics */
        if (pre[i] >= 0 && st[pre[i]].kind != ST_NONE && st[pre[i]].C == nc_snn_layer_channels(L) &&
            !(st[pre[i]].assumed && !isinf(sites[i].cap)))
            continue;
        pre[i] = -1;
        if (!isinf(sites[i].cap))
            continue; /* θ = c (set_clip_site) */
        if (len < sizeof missing - 1) {
            const char *node = sites[i].n_nodes ? sites[i].nodes[0] : L->name;
            int same = strcmp(node, L->name) == 0;
            int w = snprintf(missing + len, sizeof missing - len, "%s'%s'%s%s%s", n_missing ? ", " : "", L->name,
                             same ? "" : " (node ", same ? "" : node, same ? "" : ")");
            len += w > 0 ? (size_t)w : 0;
        }
        n_missing++;
    }
    if (rc == NC_OK && n_missing)
        rc = nc_errorf(NC_ERR_INVALID_ARG,
                       "%s: %d IF layer%s need%s calibration data (--calib): without data, thresholds come from "
                       "Clip/QCFS patterns or from BatchNormalization or input statistics carried to the ReLU "
                       "(through ReLU, Add, Concat, Conv/Gemm, pooling), and %s no such statistics: %s%s", g->source, n_missing, n_missing == 1 ? "" : "s",
                       n_missing == 1 ? "s" : "", n_missing == 1 ? "it has" : "they have", missing,
                       len >= sizeof missing - 1 ? "..." : "");
    for (int i = 0; rc == NC_OK && i < n_sites; i++)
        if (sites[i].rule == NC_THETA_CALIB)
            rc = pre[i] >= 0 ? set_site(s, &sites[i], &st[pre[i]], kk[i], o, h, warnings)
                             : set_clip_site(s, &sites[i]);
    if (rc == NC_OK)
        rc = warn_assumed(s, sites, n_sites, warnings);
    for (int v = 0; st && v < g->n_values; v++) {
        nc_free(st[v].mean);
        nc_free(st[v].var);
    }
    nc_free(st);
    nc_free(h);
    nc_free(pre);
    nc_free(kk);
    return rc;
}
