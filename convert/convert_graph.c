/* The ANN graph walk of nc_convert (convert_graph.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "convert_graph.h"
#include "convert_graph_int.h"
#include "convert_nonlinear.h"
#include "convert_tokens.h"
#include "snn/base/alloc.h"
#include "convert/ann/ann_ops.h"
#include "convert/ann/ann_ops_util.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

/* ---- string lists ---- */

nc_status nc_strlist_addf(nc_strlist *l, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        char **s = nc_realloc(l->s, (size_t)cap * sizeof *s);
        if (!s)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        l->s = s;
        l->cap = cap;
    }
    if (!(l->s[l->n] = nc_strdup(buf)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    l->n++;
    return NC_OK;
}

void nc_strlist_clear(nc_strlist *l)
{
    for (int i = 0; i < l->n; i++)
        nc_free(l->s[i]);
    nc_free(l->s);
    memset(l, 0, sizeof *l);
}

void nc_cgraph_clear(nc_cgraph *c)
{
    nc_snn_free(c->snn);
    for (int i = 0; i < c->n_sites; i++)
        nc_free(c->sites[i].theta0);
    nc_free(c->sites);
    nc_strlist_clear(&c->warnings);
    nc_strlist_clear(&c->notes);
    memset(c, 0, sizeof *c);
}

/* ---- value states ---- */

static void lin_free(lin *l)
{
    if (!l)
        return;
    nc_tensor_free(l->w);
    nc_tensor_free(l->b);
    nc_free(l);
}

static void vst_clear(vst *v)
{
    lin_free(v->ln);
    nc_free(v->pa);
    nc_free(v->pb);
    nc_free(v->sel);
    nc_free(v->pool);
    memset(v, 0, sizeof *v);
}

/* Value v becomes the output of SNN layer `id` (nothing folded into it yet). */
static vst *vst_set_layer(cv *c, int v, int id)
{
    vst *y = &c->vs[v];
    vst_clear(y);
    y->kind = VS_LAYER;
    y->layer = id;
    return y;
}


nc_status nc_cg_node_verr(const cv *c, const nc_node *n, nc_status st, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return nc_errorf(st, "%s: node '%s' (%s): %s", c->g->source, n->name, n->op_type, msg);
}

nc_status nc_cg_node_err(const cv *c, const nc_node *n, nc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = nc_cg_node_verr(c, n, st, fmt, ap);
    va_end(ap);
    return st;
}

/* After a failed builder or helper call: names the node in front of its message. */
static nc_status node_prefix(const cv *c, const nc_node *n, nc_status st)
{
    if (st != NC_OK && st != NC_ERR_NOMEM)
        nc_error_prefix("%s: node '%s' (%s)", c->g->source, n->name, n->op_type);
    return st;
}

/* A layer name not used yet, from `base` (an ANN node name). */
static const char *uniq(const cv *c, const char *base, char *buf, size_t len)
{
    snprintf(buf, len, "%s", base && base[0] ? base : "layer");
    for (int k = 2; nc_snn_find_layer(c->s, buf) >= 0; k++)
        snprintf(buf, len, "%.200s_%d", base && base[0] ? base : "layer", k);
    return buf;
}

static const nc_tensor *const_in(const cv *c, const nc_node *n, int i)
{
    return nc_node_has_input(n, i) ? c->g->values[n->inputs[i]].constant : NULL;
}

static const char *vname(const cv *c, int v)
{
    return c->g->values[v].name;
}

static int64_t state_channels(const cv *c, const vst *x)
{
    if (x->kind == VS_LINEAR)
        return x->ln->channels;
    return x->sel ? x->sn : nc_snn_layer_channels(&c->s->layers[x->layer]);
}

/* The state of input i of n, which must come from the network input. */
static nc_status input_state(cv *c, const nc_node *n, int i, vst **out)
{
    if (!nc_node_has_input(n, i))
        return nc_cg_node_err(c, n, NC_ERR_MODEL, "input %d is missing", i);
    vst *x = &c->vs[n->inputs[i]];
    if (x->kind == VS_NONE)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED,
                        "its input '%s' is not computed from the network input by convertible ops",
                        vname(c, n->inputs[i]));
    *out = x;
    return NC_OK;
}

static nc_status flush_select(cv *c, int v);

/* Appends the pending synaptic layer (or channel selection) of value v, if any. */
static nc_status materialise(cv *c, int v)
{
    vst *x = &c->vs[v];
    if (x->kind == VS_LAYER && x->sel)
        return flush_select(c, v);
    if (x->kind == VS_LAYER && x->pool)
        return nc_pf_flush(c, v);
    if (x->kind != VS_LINEAR)
        return NC_OK;
    lin *l = x->ln;
    char buf[320];
    int id;
    nc_status st;
    uniq(c, l->name, buf, sizeof buf);
    if (l->kind == NC_SNN_AFFINE)
        st = nc_snn_add_affine(c->s, x->layer, l->w, l->b, buf, &id);
    else
        st = nc_snn_add_conv2d(c->s, x->layer, l->w, l->b, &l->cp, buf, &id);
    if (st != NC_OK) {
        if (st != NC_ERR_NOMEM)
            nc_error_prefix("%s: node '%s'", c->g->source, l->name);
        return st;
    }
    lin_free(l);
    x->ln = NULL;
    x->kind = VS_LAYER;
    x->layer = id;
    return NC_OK;
}

/* Value v's pending per-channel a·x + b (a BatchNormalization or constant
 * scaling with no Conv/Gemm right after it to fold into: after a pool, a
 * Concat, before a ReLU or a zero-padded Conv) as a layer of its own: a 1×1
 * depthwise Conv2d (weight a, bias b per channel), or a diagonal Affine for
 * a flat value. Exact, and every backend runs both kinds. */
static nc_status flush_pending(cv *c, const nc_node *n, int v)
{
    vst *x = &c->vs[v];
    if (!x->pa)
        return NC_OK;
    const nc_snn_layer *X = &c->s->layers[x->layer];
    int64_t C = x->pn, size = nc_snn_layer_size(X);
    int conv = X->ndim == 3 && C == X->shape[0];
    if (!conv && !(X->ndim == 1 && C == size && size <= 4096))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input '%s' carries a scaling or BatchNormalization "
                        "with no Conv/Gemm to fold into, on a value of %lld elements", vname(c, v),
                        (long long)size);
    int64_t ws[4] = {C, conv ? 1 : C, 1, 1};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, conv ? 4 : 2, ws), *b = nc_tensor_new(NC_DTYPE_F32, 1, &C);
    if (!w || !b) {
        nc_tensor_free(w);
        nc_tensor_free(b);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int64_t k = 0; k < C; k++) {
        nc_f32(w)[conv ? k : k * C + k] = (float)x->pa[k];
        nc_f32(b)[k] = (float)x->pb[k];
    }
    char base[300], buf[320];
    snprintf(base, sizeof base, "%.200s_affine", vname(c, v));
    nc_conv2d_params cp = {{1, 1}, {0, 0}, {1, 1}, C};
    int id;
    nc_status st = conv ? nc_snn_add_conv2d(c->s, x->layer, w, b, &cp, uniq(c, base, buf, sizeof buf), &id)
                        : nc_snn_add_affine(c->s, x->layer, w, b, uniq(c, base, buf, sizeof buf), &id);
    nc_tensor_free(w);
    nc_tensor_free(b);
    if (st != NC_OK)
        return node_prefix(c, n, st);
    nc_free(x->pa);
    nc_free(x->pb);
    x->pa = x->pb = NULL;
    x->pn = 0;
    x->layer = id;
    return nc_strlist_addf(&c->cg->notes, "the per-channel scaling or BatchNormalization of '%s' has no "
                           "Conv/Gemm to fold into: it is a 1×1 depthwise layer '%s' of its own", vname(c, v), buf);
}

/* Input i of n as a plain SNN layer: no scaling or padding left to fold. */
static nc_status plain_input(cv *c, const nc_node *n, int i, int *layer)
{
    vst *x = NULL;
    nc_status st = input_state(c, n, i, &x);
    if (st != NC_OK || (st = materialise(c, n->inputs[i])) != NC_OK ||
        (st = flush_pending(c, n, n->inputs[i])) != NC_OK)
        return st;
    if (x->pad[0] || x->pad[1])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED,
                        "its input '%s' is zero-padded by a Pad node, which only a Conv or an "
                        "AveragePool can take", vname(c, n->inputs[i]));
    *layer = x->layer;
    return NC_OK;
}

/* vout takes vin's state: moved when vin has no other reader, else shared. */
static nc_status pass(cv *c, const nc_node *n, int vin, int vout)
{
    vst *x = &c->vs[vin], *y = &c->vs[vout];
    if (x->kind == VS_NONE)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED,
                        "its input '%s' is not computed from the network input by convertible ops",
                        vname(c, vin));
    if (nc_consumers_count(&c->cons, vin) == 1) {
        *y = *x;
        memset(x, 0, sizeof *x);
        return NC_OK;
    }
    nc_status st = materialise(c, vin);
    if (st != NC_OK)
        return st;
    *y = *x;
    y->pa = y->pb = NULL;
    if (x->pa) {
        y->pa = nc_malloc((size_t)x->pn * sizeof *y->pa);
        y->pb = nc_malloc((size_t)x->pn * sizeof *y->pb);
        if (!y->pa || !y->pb) {
            vst_clear(y);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        memcpy(y->pa, x->pa, (size_t)x->pn * sizeof *y->pa);
        memcpy(y->pb, x->pb, (size_t)x->pn * sizeof *y->pb);
    }
    return NC_OK;
}

/* ---- per-channel affine maps: BatchNormalization, constant Add/Sub/Mul/Div ---- */

/* The constant t broadcast over the C channels of a value of rank `rank`
 * (dim 0 the batch, dim 1 the channels) into dst[C]. */
static nc_status channel_const(const cv *c, const nc_node *n, const nc_tensor *t, int rank, int64_t C,
                               double *dst)
{
    char b[160];
    if (t->dtype != NC_DTYPE_F32 && t->dtype != NC_DTYPE_I64)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its constant operand is not numeric");
    int per = 0;
    int ok = rank >= 2 && t->ndim <= rank;
    for (int d = 0; ok && d < t->ndim; d++) {
        int vd = rank - t->ndim + d;
        if (vd == 1 && t->shape[d] == C)
            per = 1;
        else if (t->shape[d] != 1)
            ok = 0;
    }
    if (!ok)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED,
                        "its constant operand of shape %s is not one value per channel of its input "
                        "(%lld channels): only such constants fold into the synaptic weights",
                        nc_shape_str(t->ndim, t->shape, b, sizeof b), (long long)C);
    for (int64_t k = 0; k < C; k++) {
        int64_t i = per ? k : 0;
        dst[k] = t->dtype == NC_DTYPE_F32 ? (double)nc_f32(t)[i] : (double)nc_i64(t)[i];
    }
    return NC_OK;
}

/* vout = a ⊙ vin + b per channel (C elements each). Folded into vin's
 * pending synaptic layer when vin has no other reader, else kept pending on
 * top of vin's layer for the next synaptic layer to absorb. */
static nc_status apply_affine(cv *c, const nc_node *n, int vin, int vout, const double *a,
                              const double *b, int64_t C)
{
    vst *x = &c->vs[vin], *y = &c->vs[vout];
    for (int64_t k = 0; k < C; k++)
        if (!isfinite(a[k]) || !isfinite(b[k]))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "the per-channel scale or shift of channel %lld is "
                            "not finite", (long long)k);
    if (x->kind == VS_LINEAR && nc_consumers_count(&c->cons, vin) == 1) {
        *y = *x;
        memset(x, 0, sizeof *x);
        lin *l = y->ln;
        float *w = nc_f32(l->w), *bias = nc_f32(l->b);
        int64_t per = l->w->numel / C;
        for (int64_t k = 0; k < C; k++) {
            for (int64_t j = 0; j < per; j++)
                w[k * per + j] = (float)((double)w[k * per + j] * a[k]);
            bias[k] = (float)(a[k] * (double)bias[k] + b[k]);
        }
        return NC_OK;
    }
    nc_status st = materialise(c, vin);
    if (st != NC_OK)
        return st;
    if (x->pad[0] || x->pad[1])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "it scales a zero-padded value (a Pad before it); "
                        "apply the scaling before the padding");
    double *pa = nc_malloc((size_t)C * sizeof *pa), *pb = nc_malloc((size_t)C * sizeof *pb);
    if (!pa || !pb) {
        nc_free(pa);
        nc_free(pb);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int64_t k = 0; k < C; k++) {
        double oa = x->pa ? x->pa[k] : 1.0, ob = x->pb ? x->pb[k] : 0.0;
        pa[k] = a[k] * oa;
        pb[k] = a[k] * ob + b[k];
    }
    vst_clear(y);
    y->kind = VS_LAYER;
    y->layer = x->layer;
    y->pa = pa;
    y->pb = pb;
    y->pn = C;
    return NC_OK;
}

/* Folds the pending a·x + b of the input state x into new synaptic weights
 * W (Affine [out, in], or Conv2d [K, C/groups, kh, kw]) and bias B. */
static nc_status absorb_pre(const cv *c, const nc_node *n, const vst *x, nc_tensor *W, nc_tensor *B,
                            int conv, int64_t groups, int padded)
{
    if (!x->pa)
        return NC_OK;
    float *w = nc_f32(W), *bias = nc_f32(B);
    if (padded)
        for (int64_t k = 0; k < x->pn; k++)
            if (x->pb[k] != 0.0)
                return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED,
                                "the shift of the BatchNormalization or constant Add before it cannot be "
                                "folded into a zero-padded convolution (the padded border would no longer be "
                                "zero after the shift); fold it in PyTorch or remove the padding");
    if (!conv) {
        int64_t out = W->shape[0], in = W->shape[1];
        if (in != x->pn)
            return nc_errorf(NC_ERR_INTERNAL, "pending scale of %lld for %lld inputs", (long long)x->pn,
                             (long long)in);
        for (int64_t o = 0; o < out; o++) {
            double acc = bias[o];
            for (int64_t i = 0; i < in; i++) {
                acc += (double)w[o * in + i] * x->pb[i];
                w[o * in + i] = (float)((double)w[o * in + i] * x->pa[i]);
            }
            bias[o] = (float)acc;
        }
        return NC_OK;
    }
    int64_t K = W->shape[0], cg = W->shape[1], kk = W->shape[2] * W->shape[3];
    if (groups < 1 || K % groups || cg * groups != x->pn)
        return nc_cg_node_err(c, n, NC_ERR_SHAPE, "weight of %lld×%lld channels (group %lld) does not fit its "
                        "input of %lld channels", (long long)K, (long long)cg, (long long)groups,
                        (long long)x->pn);
    int64_t kg = K / groups;
    for (int64_t k = 0; k < K; k++) {
        double acc = bias[k];
        for (int64_t ci = 0; ci < cg; ci++) {
            int64_t ch = (k / kg) * cg + ci;
            float *wk = w + (k * cg + ci) * kk;
            for (int64_t t = 0; t < kk; t++) {
                acc += (double)wk[t] * x->pb[ch];
                wk[t] = (float)((double)wk[t] * x->pa[ch]);
            }
        }
        bias[k] = (float)acc;
    }
    return NC_OK;
}

static nc_status op_batchnorm(cv *c, const nc_node *n)
{
    static const char *names[] = {"scale", "B", "mean", "var"};
    vst *x = NULL;
    nc_status st = input_state(c, n, 0, &x);
    if (st != NC_OK)
        return st;
    int64_t C = state_channels(c, x);
    const nc_tensor *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = const_in(c, n, i + 1);
        if (!p[i] || p[i]->dtype != NC_DTYPE_F32 || p[i]->numel != C)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its %s is not a constant float32 tensor of %lld "
                            "elements", names[i], (long long)C);
    }
    double eps = nc_attr_float(n, "epsilon", 1e-5f);
    double *a = nc_malloc((size_t)C * 2 * sizeof *a);
    if (!a)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    double *b = a + C;
    for (int64_t k = 0; k < C; k++) {
        /* w' = w·γ/√(σ²+ε), b' = (b − μ)·γ/√(σ²+ε) + β */
        a[k] = (double)nc_f32(p[0])[k] / sqrt((double)nc_f32(p[3])[k] + eps);
        b[k] = (double)nc_f32(p[1])[k] - (double)nc_f32(p[2])[k] * a[k];
    }
    st = apply_affine(c, n, n->inputs[0], n->outputs[0], a, b, C);
    nc_free(a);
    return st;
}

/* ---- synaptic layers ---- */

static nc_status select_into_weights(const cv *c, const nc_node *n, const vst *x, struct lin *l);

static nc_status op_conv(cv *c, const nc_node *n)
{
    char buf[160];
    const nc_tensor *W = const_in(c, n, 1), *B = const_in(c, n, 2);
    if (!W || W->dtype != NC_DTYPE_F32 || W->ndim != 4)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only 2-D convolutions with constant float32 weights "
                        "are convertible");
    if (nc_node_has_input(n, 2) && (!B || B->dtype != NC_DTYPE_F32 || B->numel != W->shape[0]))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its bias is not a constant float32 vector of %lld "
                        "elements", (long long)W->shape[0]);
    vst *x = NULL;
    nc_status st = nc_nl_spike_input(c, n, 0);
    if (st == NC_OK)
        st = input_state(c, n, 0, &x);
    /* a pending channel selection folds into an ungrouped Conv's weights */
    int fold_sel = x && x->kind == VS_LAYER && x->sel && nc_attr_int(n, "group", 1) == 1;
    /* a pending average pooling of spikes folds into the weights (convert_poolfold.c) */
    int pooled = x && x->kind == VS_LAYER && x->pool;
    if (st != NC_OK || (!fold_sel && !pooled && (st = materialise(c, n->inputs[0])) != NC_OK))
        return st;
    const nc_snn_layer *X = &c->s->layers[x->layer];
    if (X->ndim != 3)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input has shape %s; a Conv2d needs (C, H, W)",
                        nc_shape_str(X->ndim, X->shape, buf, sizeof buf));
    nc_tensor fx = {.dtype = NC_DTYPE_F32, .ndim = 4, .shape = {1, X->shape[0], X->shape[1], X->shape[2]}};
    if (pooled) {
        fx.shape[2] = x->pool->out[0];
        fx.shape[3] = x->pool->out[1];
    }
    nc_spatial sp;
    if ((st = nc_spatial_parse(n, &fx, W->shape + 2, 0, &sp)) != NC_OK)
        return node_prefix(c, n, st);
    for (int j = 1; j < 3; j++)
        if (sp.pad_b[j] != sp.pad_e[j])
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "asymmetric padding (%lld before, %lld after): an "
                            "SNN Conv2d pads both sides equally", (long long)sp.pad_b[j],
                            (long long)sp.pad_e[j]);
    nc_conv2d_params cp = {{sp.stride[1], sp.stride[2]},
                           {sp.pad_b[1] + x->pad[0], sp.pad_b[2] + x->pad[1]},
                           {sp.dil[1], sp.dil[2]},
                           nc_attr_int(n, "group", 1)};
    int shifted = 0; /* a shift would make the zero-padded border non-zero: a layer of its own */
    for (int64_t k = 0; x->pa && k < x->pn; k++)
        shifted |= x->pb[k] != 0.0;
    if (shifted && (cp.padding[0] || cp.padding[1]) && (st = flush_pending(c, n, n->inputs[0])) != NC_OK)
        return st;
    lin *l = nc_calloc(1, sizeof *l);
    int64_t K = W->shape[0];
    if (!l || !(l->w = nc_tensor_clone(W)) ||
        !(l->b = B ? nc_tensor_clone(B) : nc_tensor_new(NC_DTYPE_F32, 1, &K))) {
        lin_free(l);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    st = fold_sel ? select_into_weights(c, n, x, l)
                  : absorb_pre(c, n, x, l->w, l->b, 1, cp.groups, cp.padding[0] || cp.padding[1]);
    l->kind = NC_SNN_CONV2D;
    l->cp = cp;
    l->name = n->name;
    l->channels = K;
    if (st == NC_OK && pooled)
        st = nc_pf_into_conv(c, n, n->inputs[0], l);
    if (st != NC_OK) {
        lin_free(l);
        return st;
    }
    vst *y = &c->vs[n->outputs[0]];
    vst_clear(y);
    y->kind = VS_LINEAR;
    y->layer = x->layer;
    y->ln = l;
    return NC_OK;
}

/* Gemm (Y = α·A·B' + β·C) and MatMul (Y = A·B) with constant B and C. */
static nc_status op_gemm(cv *c, const nc_node *n, int matmul)
{
    const nc_tensor *Bm = const_in(c, n, 1), *Cb = matmul ? NULL : const_in(c, n, 2);
    if (!Bm || Bm->dtype != NC_DTYPE_F32 || Bm->ndim != 2)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its weight (input B) is not a constant float32 matrix");
    if (!matmul && nc_node_has_input(n, 2) && (!Cb || Cb->dtype != NC_DTYPE_F32))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its bias (input C) is not a constant float32 tensor");
    if (!matmul && nc_attr_int(n, "transA", 0))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "transA = 1 (the input must be (batch, features))");
    if (c->g->values[n->inputs[0]].ndim != 2)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input has rank %d; only (batch, features) inputs "
                        "are convertible", c->g->values[n->inputs[0]].ndim);
    int transB = matmul ? 0 : (int)nc_attr_int(n, "transB", 0);
    double alpha = matmul ? 1.0 : nc_attr_float(n, "alpha", 1.0f);
    double beta = matmul ? 1.0 : nc_attr_float(n, "beta", 1.0f);
    int64_t out = transB ? Bm->shape[0] : Bm->shape[1], in = transB ? Bm->shape[1] : Bm->shape[0];
    if (Cb && Cb->numel != 1 && Cb->numel != out)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its bias has %lld elements; expected 1 or %lld",
                        (long long)Cb->numel, (long long)out);
    vst *x = NULL;
    nc_status st = nc_nl_spike_input(c, n, 0);
    if (st != NC_OK || (st = input_state(c, n, 0, &x)) != NC_OK)
        return st;
    /* a pending flattened average pooling of spikes folds into the weights (convert_poolfold.c) */
    int pooled = x->kind == VS_LAYER && x->pool && x->pool->flat;
    if (!pooled && (st = materialise(c, n->inputs[0])) != NC_OK)
        return st;
    const nc_snn_layer *X = &c->s->layers[x->layer];
    int64_t have = pooled ? nc_snn_layer_channels(X) * x->pool->out[0] * x->pool->out[1] : nc_snn_layer_size(X);
    if (have != in)
        return nc_cg_node_err(c, n, NC_ERR_SHAPE, "weight takes %lld inputs but its input '%s' has %lld",
                        (long long)in, vname(c, n->inputs[0]), (long long)have);
    int64_t wshape[2] = {out, in};
    lin *l = nc_calloc(1, sizeof *l);
    if (!l || !(l->w = nc_tensor_new(NC_DTYPE_F32, 2, wshape)) ||
        !(l->b = nc_tensor_new(NC_DTYPE_F32, 1, &out))) {
        lin_free(l);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    const float *bm = nc_f32(Bm);
    float *w = nc_f32(l->w), *b = nc_f32(l->b);
    for (int64_t o = 0; o < out; o++)
        for (int64_t i = 0; i < in; i++)
            w[o * in + i] = (float)(alpha * (transB ? bm[o * in + i] : bm[i * out + o]));
    for (int64_t o = 0; Cb && o < out; o++)
        b[o] = (float)(beta * nc_f32(Cb)[Cb->numel == 1 ? 0 : o]);
    st = absorb_pre(c, n, x, l->w, l->b, 0, 1, 0);
    if (st == NC_OK && pooled)
        st = nc_pf_into_affine(c, n, n->inputs[0], l);
    if (st != NC_OK) {
        lin_free(l);
        return st;
    }
    l->kind = NC_SNN_AFFINE;
    l->name = n->name;
    l->channels = out;
    vst *y = &c->vs[n->outputs[0]];
    vst_clear(y);
    y->kind = VS_LINEAR;
    y->layer = x->layer;
    y->ln = l;
    return NC_OK;
}

/* Add, Sub, Mul, Div: with a constant operand a per-channel affine map;
 * Add of two computed values a residual Add layer. */
static nc_status op_arith(cv *c, const nc_node *n)
{
    const char *op = n->op_type;
    if (n->n_inputs != 2)
        return nc_cg_node_err(c, n, NC_ERR_MODEL, "expected two inputs");
    const nc_tensor *k0 = const_in(c, n, 0), *k1 = const_in(c, n, 1);
    nc_status st;
    if (!k0 && !k1) {
        if (strcmp(op, "Add") != 0)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "%s of two computed values is not convertible (of "
                            "such ops only Add, as in a residual connection, is)", op);
        int from[2];
        char buf[320];
        int id;
        if ((st = plain_input(c, n, 0, &from[0])) != NC_OK || (st = plain_input(c, n, 1, &from[1])) != NC_OK)
            return st;
        if ((st = nc_snn_add_add(c->s, 2, from, uniq(c, n->name, buf, sizeof buf), &id)) != NC_OK)
            return node_prefix(c, n, st);
        vst_set_layer(c, n->outputs[0], id);
        return NC_OK;
    }
    if (k0 && strcmp(op, "Div") == 0)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "a constant divided by a computed value is not convertible");
    int vin = k0 ? n->inputs[1] : n->inputs[0];
    const nc_tensor *k = k0 ? k0 : k1;
    vst *x = &c->vs[vin];
    if (x->kind == VS_NONE)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input '%s' is not computed from the network input "
                        "by convertible ops", vname(c, vin));
    int64_t C = state_channels(c, x);
    double *a = nc_malloc((size_t)C * 3 * sizeof *a);
    if (!a)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    double *b = a + C, *kv = a + 2 * C;
    st = channel_const(c, n, k, c->g->values[vin].ndim, C, kv);
    for (int64_t i = 0; st == NC_OK && i < C; i++) {
        a[i] = 1.0;
        b[i] = 0.0;
        if (strcmp(op, "Add") == 0)
            b[i] = kv[i];
        else if (strcmp(op, "Sub") == 0) {
            a[i] = k0 ? -1.0 : 1.0;
            b[i] = k0 ? kv[i] : -kv[i];
        } else if (strcmp(op, "Mul") == 0)
            a[i] = kv[i];
        else
            a[i] = 1.0 / kv[i];
    }
    if (st == NC_OK)
        st = apply_affine(c, n, vin, n->outputs[0], a, b, C);
    nc_free(a);
    return st;
}

/* ---- neurons ---- */

/* 1 if layer id's output carries spikes (an IF, or pooling, flattening,
 * adding or concatenating something that does). */
static int carries_spikes(const nc_snn *s, int id)
{
    const nc_snn_layer *L = &s->layers[id];
    if (nc_snn_kind_is_spiking(L->kind))
        return 1;
    switch (L->kind) {
    case NC_SNN_POOL2D: case NC_SNN_MAXPOOL2D: case NC_SNN_FLATTEN: case NC_SNN_ADD: case NC_SNN_CONCAT: case NC_SNN_GATHER:
        for (int k = 0; k < L->n_inputs; k++)
            if (L->inputs[k] < id && carries_spikes(s, L->inputs[k]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* 1 if layer id's value is spikes alone, 0 or a spike value (an IF, or a
 * Concat of such), as a SpikeMaxPool2d needs: pooled or added spikes are
 * not. */
int nc_cg_is_spike_train(const nc_snn *s, int id)
{
    const nc_snn_layer *L = &s->layers[id];
    if (nc_snn_kind_is_spiking(L->kind))
        return 1;
    if (L->kind != NC_SNN_CONCAT)
        return 0;
    for (int k = 0; k < L->n_inputs; k++)
        if (L->inputs[k] >= id || !nc_cg_is_spike_train(s, L->inputs[k]))
            return 0;
    return 1;
}

/* 1 if any layer upstream of id spikes, so its value changes from step to
 * step (else it is computed from the input alone, constant under direct
 * encoding, where max pooling its currents is exact). */
static int spike_driven(const nc_snn *s, int id)
{
    const nc_snn_layer *L = &s->layers[id];
    if (nc_snn_kind_is_spiking(L->kind))
        return 1;
    for (int k = 0; k < L->n_inputs; k++)
        if (L->inputs[k] >= id || spike_driven(s, L->inputs[k]))
            return 1;
    return 0;
}

/* Kernel, stride and padding of a pooling node reading layer X, zero-padded
 * by pre[] more (a Pad before it, which the caller adds to p). Refuses
 * dilation and asymmetric padding. A ceil_mode that adds a partial window
 * at the bottom/right comes back as that extra end padding, pe[]. */
static nc_status pool_geom(const cv *c, const nc_node *n, const nc_snn_layer *X, const int64_t pre[2],
                           int64_t k[2], int64_t s[2], int64_t p[2], int64_t pe[2])
{
    char buf[160];
    if (X->ndim != 3)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input has shape %s; 2-D pooling needs (C, H, W)",
                        nc_shape_str(X->ndim, X->shape, buf, sizeof buf));
    nc_tensor fx = {.dtype = NC_DTYPE_F32, .ndim = 4,
                    .shape = {1, X->shape[0], X->shape[1] + 2 * pre[0], X->shape[2] + 2 * pre[1]}};
    nc_spatial sp;
    nc_status st = nc_spatial_parse(n, &fx, NULL, 1, &sp);
    if (st != NC_OK)
        return node_prefix(c, n, st);
    for (int j = 1; j < 3; j++) {
        if (sp.dil[j] != 1)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "dilated pooling is not convertible");
        if (sp.pad_b[j] != sp.pad_e[j])
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "asymmetric padding (%lld before, %lld after): an SNN "
                            "pooling layer pads both sides equally", (long long)sp.pad_b[j],
                            (long long)sp.pad_e[j]);
        int64_t extra = (sp.out[j] - 1) * sp.stride[j] + sp.k[j] - (sp.in[j] + 2 * sp.pad_b[j]);
        k[j - 1] = sp.k[j];
        s[j - 1] = sp.stride[j];
        p[j - 1] = sp.pad_b[j];
        pe[j - 1] = extra > 0 ? extra : 0;
    }
    return NC_OK;
}

/* A MaxPool2d of currents, or (spikes) a SpikeMaxPool2d of spikes. Max
 * pooling ignores padding, so ceil mode is extra bottom/right padding. */
static nc_status build_maxpool(cv *c, const nc_node *n, int from, int spikes, int *id)
{
    int64_t k[2], s[2], p[2], pe[2], none[2] = {0, 0};
    char buf[320];
    nc_status st = pool_geom(c, n, &c->s->layers[from], none, k, s, p, pe);
    if (st != NC_OK)
        return st;
    const char *nm = uniq(c, n->name, buf, sizeof buf);
    st = spikes ? nc_snn_add_spike_maxpool2d_ceil(c->s, from, k, s, p, pe, nm, id)
                : nc_snn_add_maxpool2d_ceil(c->s, from, k, s, p, pe, nm, id);
    return node_prefix(c, n, st);
}

static nc_status add_site(cv *c, const nc_if_site *site)
{
    nc_cgraph *g = c->cg;
    if (g->n_sites == g->cap_sites) {
        int cap = g->cap_sites ? 2 * g->cap_sites : 8;
        nc_if_site *p = nc_realloc(g->sites, (size_t)cap * sizeof *p);
        if (!p)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        g->sites = p;
        g->cap_sites = cap;
    }
    g->sites[g->n_sites++] = *site;
    return NC_OK;
}

/* An IF layer for the activation vout = f(vin) made of `nodes`; θ is
 * `theta` (Clip, QCFS) or a placeholder for calibration. A MaxPool that is
 * the activation's only reader moves before the neuron (max commutes with
 * any non-decreasing activation), so the SNN pools currents, not spikes:
 * always with --maxpool currents, and by default (spikes) where the
 * currents come from the input alone, constant over time, where it is
 * exact (a SpikeMaxPool2d after the neuron would only approach it). */
static nc_status emit_if(cv *c, const nc_node *n, int vin, int vout, nc_theta_rule rule,
                         const nc_tensor *theta, double cap, int levels, const int *nodes, int n_nodes)
{
    const nc_graph *g = c->g;
    vst *x = &c->vs[vin];
    if (x->kind == VS_NONE)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input '%s' is not computed from the network input "
                        "by convertible ops", vname(c, vin));
    nc_status st = materialise(c, vin);
    if (st != NC_OK || (st = flush_pending(c, n, vin)) != NC_OK)
        return st;
    if (x->pad[0] || x->pad[1])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "the padding before it has no Conv/AveragePool to fold into");
    int src = x->layer;
    nc_if_site site = {0};
    site.rule = rule;
    site.cap = cap;
    site.value = rule == NC_THETA_CALIB ? vout : -1;
    site.levels = levels;
    for (int k = 0; k < n_nodes && site.n_nodes < NC_SITE_MAX_NODES; k++)
        site.nodes[site.n_nodes++] = g->nodes[nodes[k]].name;
    if (theta) {
        int64_t C = nc_snn_layer_channels(&c->s->layers[src]);
        if (theta->numel != 1 && theta->numel != C)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its threshold has %lld values; expected 1 or one "
                            "per channel (%lld)", (long long)theta->numel, (long long)C);
    }

    int r = nc_consumers_count(&c->cons, vout) == 1 && !c->cons.is_output[vout]
                ? c->cons.list[c->cons.start[vout]] : -1;
    int currents = c->o->maxpool == NC_MAXPOOL_CURRENTS ||
                   (c->o->maxpool == NC_MAXPOOL_SPIKES && !spike_driven(c->s, src));
    if (currents && r >= 0 && !c->done[r] &&
        strcmp(g->nodes[r].op_type, "MaxPool") == 0 && g->nodes[r].inputs[0] == vout) {
        const nc_node *mp = &g->nodes[r];
        int exact = !spike_driven(c->s, src);
        if ((st = build_maxpool(c, mp, src, 0, &src)) != NC_OK)
            return st;
        c->done[r] = 1;
        c->cg->n_maxpool++;
        vout = mp->outputs[0];
        if (rule == NC_THETA_CALIB)
            site.value = vout;
        site.maxpool = 1;
        if (site.n_nodes < NC_SITE_MAX_NODES)
            site.nodes[site.n_nodes++] = mp->name;
        if (exact)
            st = nc_strlist_addf(&c->cg->warnings,
                                 "MaxPool '%s' pools the input currents of IF layer '%s' (--maxpool %s): max "
                                 "pooling does not commute with rate coding, but these currents come from the "
                                 "network input alone, so (directly encoded) they are constant and pooling them "
                                 "before the neuron is exact (max commutes with ReLU); the "
                                 "MaxPool2d layer is saved as a neuroc extension node, which --nir-strict refuses",
                                 mp->name, n->name, c->o->maxpool == NC_MAXPOOL_SPIKES ? "spikes" : "currents");
        else
            st = nc_strlist_addf(&c->cg->warnings,
                                 "MaxPool '%s' pools the input currents of IF layer '%s' (--maxpool currents): "
                                 "they are driven by spikes, so the max of each step's currents exceeds the "
                                 "current of the ANN's max and the neuron overshoots (it does not converge "
                                 "with T; the default --maxpool spikes does); the MaxPool2d layer is saved "
                                 "as a neuroc extension node, which --nir-strict refuses", mp->name, n->name);
        if (st != NC_OK)
            return st;
    }

    /* QCFS layers are named after their module (the scope of the node names) */
    char base[256], buf[320];
    snprintf(base, sizeof base, "%s", n->name);
    char *slash = strrchr(base, '/');
    if (rule == NC_THETA_QCFS && slash && slash != base)
        *slash = '\0';
    float one = 1.0f, zero = 0.0f;
    int64_t one_shape = 1;
    nc_tensor *th = NULL, *v0 = NULL;
    if (!theta && nc_tensor_create_from(NC_DTYPE_F32, 1, &one_shape, &one, &th) != NC_OK)
        return NC_ERR_NOMEM;
    if (c->o->v_init_zero && nc_tensor_create_from(NC_DTYPE_F32, 1, &one_shape, &zero, &v0) != NC_OK) {
        nc_tensor_free(th);
        return NC_ERR_NOMEM;
    }
    /* bursts come after calibration (nc_convert), where every reader is known */
    nc_if_params p = {theta ? theta : th, v0, NULL, c->o->reset, c->o->spikes == NC_SPIKES_SIGNED, 0};
    int id;
    st = nc_snn_add_if(c->s, src, &p, uniq(c, base, buf, sizeof buf), &id);
    nc_tensor_free(th);
    nc_tensor_free(v0);
    if (st != NC_OK)
        return node_prefix(c, n, st);
    site.layer = id;
    site.out_value = vout;
    site.bias_shift = NAN;
    site.v0_shift = NAN;
    if ((st = add_site(c, &site)) != NC_OK)
        return st;
    vst_set_layer(c, vout, id);
    return NC_OK;
}

static nc_status op_clip(cv *c, const nc_node *n, int idx)
{
    double lo, hi;
    nc_status st = nc_clip_bounds(c->g, n, &lo, &hi);
    if (st != NC_OK)
        return st;
    if (lo != 0.0 || !(hi > 0.0))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "Clip(%g, %g) is not convertible to IF neurons: only "
                        "Clip(0, c) with c > 0 (a ReLU6-like clip, c the threshold) or Clip(0) (a ReLU) is",
                        lo, hi);
    /* ReLU6 and its kin: c caps θ, the data (or BN statistics) choose it
     * below that; θ = c outright would leave neurons whose activations stay
     * far below c nearly silent (MobileNet-V2 at T = 256: cosine 0.27) */
    return emit_if(c, n, n->inputs[0], n->outputs[0], NC_THETA_CALIB, NULL, (double)(float)hi, 0, &idx, 1);
}

static nc_status op_qcfs(cv *c, const nc_node *n, const nc_qcfs_match *m)
{
    for (int64_t k = 0; k < m->lambda->numel; k++)
        if (!(nc_f32(m->lambda)[k] > 0.0f) || !isfinite(nc_f32(m->lambda)[k]))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "QCFS activation with threshold λ = %g: λ must be "
                            "positive", (double)nc_f32(m->lambda)[k]);
    nc_status st = emit_if(c, n, m->in_value, m->out_value, NC_THETA_QCFS, m->lambda, INFINITY, m->levels, m->nodes,
                           m->n_nodes);
    for (int k = 0; st == NC_OK && k < m->n_nodes; k++)
        c->done[m->nodes[k]] = 1;
    return st;
}

/* ---- what the non-linear patterns (convert_nonlinear.c) use of the walk ---- */

const nc_graph *nc_cv_graph(const cv *c) { return c->g; }
const nc_consumers *nc_cv_consumers(const cv *c) { return &c->cons; }
const nc_convert_options *nc_cv_options(const cv *c) { return c->o; }
nc_snn *nc_cv_snn(cv *c) { return c->s; }
void nc_cv_mark_done(cv *c, int node) { c->done[node] = 1; }
nc_status nc_cv_plain_input(cv *c, const nc_node *n, int i, int *layer) { return plain_input(c, n, i, layer); }
void nc_cv_set_layer(cv *c, int v, int id) { vst_set_layer(c, v, id); }
void nc_cv_replace_layer(cv *c, int v, int id) { c->vs[v].layer = id; }
int nc_cv_peek_layer(const cv *c, int v)
{
    const vst *x = &c->vs[v];
    return x->kind == VS_LAYER && !x->pad[0] && !x->pad[1] && !x->pool ? x->layer : -1;
}
nc_status nc_cv_add_site(cv *c, const nc_if_site *site) { return add_site(c, site); }
const char *nc_cv_uniq(const cv *c, const char *base, char *buf, size_t len) { return uniq(c, base, buf, len); }

nc_status nc_cv_value_layer(cv *c, const nc_node *n, int v, int *layer)
{
    vst *x = &c->vs[v];
    *layer = -1;
    if (x->kind != VS_LAYER || x->pad[0] || x->pad[1])
        return NC_OK;
    nc_status st = materialise(c, v);
    if (st == NC_OK && (st = flush_pending(c, n, v)) == NC_OK)
        *layer = x->layer;
    return st;
}

/* ---- pooling, padding, reshaping ---- */

static nc_status op_avgpool(cv *c, const nc_node *n, int from_maxpool)
{
    vst *x = NULL;
    nc_status st = input_state(c, n, 0, &x);
    if (st != NC_OK || (st = materialise(c, n->inputs[0])) != NC_OK ||
        (st = flush_pending(c, n, n->inputs[0])) != NC_OK)
        return st;
    int64_t k[2], s[2], p[2], pe[2];
    if ((st = pool_geom(c, n, &c->s->layers[x->layer], x->pad, k, s, p, pe)) != NC_OK)
        return st;
    /* The ANN divides each window by its taps inside the input (a Pad
     * node's zeros are input) or, with count_include_pad, inside the padded
     * input; windows that cut the border short (ceil mode, or padding not
     * counted) need per-window divisors, others the one scale 1/k². */
    int include_pad = from_maxpool || nc_attr_int(n, "count_include_pad", 0) != 0;
    int64_t div_pad[2] = {x->pad[0] + (include_pad ? p[0] : 0), x->pad[1] + (include_pad ? p[1] : 0)};
    p[0] += x->pad[0];
    p[1] += x->pad[1];
    int partial = pe[0] || pe[1] || div_pad[0] < p[0] || div_pad[1] < p[1];
    int pending = 0;
    if (!partial && (st = nc_pf_try_pending(c, n, x->layer, n->outputs[0], k, s, p, &pending)) != NC_OK)
        return st;
    if (pending)
        return NC_OK;
    char buf[320];
    int id;
    if (partial)
        st = nc_snn_add_pool2d_div(c->s, x->layer, k, s, p, pe, div_pad, uniq(c, n->name, buf, sizeof buf), &id);
    else
        st = nc_snn_add_pool2d(c->s, x->layer, k, s, p, (float)(1.0 / (double)(k[0] * k[1])),
                               uniq(c, n->name, buf, sizeof buf), &id);
    if (st != NC_OK)
        return node_prefix(c, n, st);
    vst_set_layer(c, n->outputs[0], id);
    return NC_OK;
}

static nc_status op_maxpool(cv *c, const nc_node *n)
{
    int src;
    nc_status st = plain_input(c, n, 0, &src);
    if (st != NC_OK)
        return st;
    c->cg->n_maxpool++;
    if (c->o->maxpool == NC_MAXPOOL_AVERAGE) {
        if ((st = op_avgpool(c, n, 1)) != NC_OK)
            return st;
        return nc_strlist_addf(&c->cg->warnings,
                               "MaxPool '%s' is replaced by average pooling (--maxpool average): max pooling "
                               "does not commute with rate coding; thresholds are calibrated on the ANN with "
                               "that replacement, whose accuracy may differ from the original's", n->name);
    }
    int id;
    if (c->o->maxpool == NC_MAXPOOL_SPIKES && carries_spikes(c->s, src)) {
        if (!nc_cg_is_spike_train(c->s, src))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "it would max-pool '%s', which sums or pools spikes: a "
                            "SpikeMaxPool2d needs spikes (an IF layer's); convert with --maxpool average",
                            c->s->layers[src].name);
        if ((st = build_maxpool(c, n, src, 1, &id)) != NC_OK)
            return st;
        vst_set_layer(c, n->outputs[0], id);
        return nc_strlist_addf(&c->cg->warnings,
                               "MaxPool '%s' pools the spikes of '%s' (--maxpool spikes): a SpikeMaxPool2d "
                               "whose spike count follows the largest of its inputs' counts, so its rate is "
                               "the max of their rates (the ANN's max as T grows)", n->name,
                               c->s->layers[src].name);
    }
    if (carries_spikes(c->s, src))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "it would max-pool spikes of '%s' (the activation before "
                        "it has other readers): max pooling does not commute with rate coding; convert with "
                        "--maxpool spikes or average", c->s->layers[src].name);
    if ((st = build_maxpool(c, n, src, 0, &id)) != NC_OK)
        return st;
    vst_set_layer(c, n->outputs[0], id);
    return nc_strlist_addf(&c->cg->warnings,
                           "MaxPool '%s' pools currents (--maxpool %s): max pooling does not commute "
                           "with rate coding, so it acts before the neurons that follow; the MaxPool2d layer "
                           "is saved as a neuroc extension node, which --nir-strict refuses", n->name,
                           c->o->maxpool == NC_MAXPOOL_SPIKES ? "spikes" : "currents");
}

static nc_status op_global_avgpool(cv *c, const nc_node *n)
{
    int src;
    char buf[320];
    nc_status st = plain_input(c, n, 0, &src);
    if (st != NC_OK)
        return st;
    const nc_snn_layer *X = &c->s->layers[src];
    if (X->ndim != 3)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input has shape %s; 2-D pooling needs (C, H, W)",
                        nc_shape_str(X->ndim, X->shape, buf, sizeof buf));
    int64_t k[2] = {X->shape[1], X->shape[2]}, p[2] = {0, 0};
    int id, pending;
    if ((st = nc_pf_try_pending(c, n, src, n->outputs[0], k, k, p, &pending)) != NC_OK || pending)
        return st;
    st = nc_snn_add_pool2d(c->s, src, k, k, p, (float)(1.0 / (double)(k[0] * k[1])),
                           uniq(c, n->name, buf, sizeof buf), &id);
    if (st != NC_OK)
        return node_prefix(c, n, st);
    vst_set_layer(c, n->outputs[0], id);
    return NC_OK;
}

static nc_status op_pad(cv *c, const nc_node *n)
{
    const char *mode = nc_attr_str(n, "mode", "constant");
    if (strcmp(mode, "constant") != 0)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "mode \"%s\": only zero padding is convertible", mode);
    int rank = c->g->values[n->inputs[0]].ndim;
    const int64_t *pads = NULL;
    int np = -1;
    double value = 0.0;
    if (n->opset < 11) {
        np = nc_attr_ints(n, "pads", &pads);
        value = nc_attr_float(n, "value", 0.0f);
    } else {
        const nc_tensor *t = const_in(c, n, 1);
        if (!t || t->dtype != NC_DTYPE_I64)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its pads are not a constant int64 tensor");
        pads = nc_i64(t);
        np = (int)t->numel;
        if (nc_node_has_input(n, 2) && !nc_const_scalar(const_in(c, n, 2), &value))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its padding value is not a constant scalar");
        if (nc_node_has_input(n, 3))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "the axes input is not supported");
    }
    if (np != 2 * rank || rank != 4) {
        int zero = np >= 0;
        for (int i = 0; i < np; i++)
            zero &= pads[i] == 0;
        if (zero)
            return pass(c, n, n->inputs[0], n->outputs[0]);
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only padding of the spatial dims of a (N, C, H, W) value "
                        "is convertible");
    }
    int64_t ph = pads[2], pw = pads[3];
    if (pads[0] || pads[1] || pads[4] || pads[5] || pads[6] != ph || pads[7] != pw || ph < 0 || pw < 0)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only equal, non-negative padding of H and W on both sides "
                        "is convertible");
    if ((ph || pw) && value != 0.0)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "padding with %g: only zero padding is convertible", value);
    nc_status st = pass(c, n, n->inputs[0], n->outputs[0]);
    if (st != NC_OK || (!ph && !pw))
        return st;
    vst *y = &c->vs[n->outputs[0]];
    if ((st = materialise(c, n->outputs[0])) != NC_OK)
        return st;
    y->pad[0] += ph;
    y->pad[1] += pw;
    return NC_OK;
}

/* Flatten, Reshape, Squeeze, Unsqueeze: the identity, or a flattening to (batch, features). */
static nc_status op_reshape(cv *c, const nc_node *n)
{
    char b1[160], b2[160];
    int vin = n->inputs[0], vout = n->outputs[0];
    vst *x = NULL;
    nc_status st = input_state(c, n, 0, &x);
    int flattened = 0; /* a pending pooling that a Gemm folds (convert_poolfold.c) keeps its flattening pending */
    if (st == NC_OK && x->kind == VS_LAYER && x->pool && (st = nc_pf_flatten(c, n, vin, vout, &flattened)) == NC_OK &&
        flattened)
        return NC_OK;
    if (st != NC_OK || (st = materialise(c, vin)) != NC_OK)
        return st;
    if (x->pad[0] || x->pad[1])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "it reshapes a zero-padded value (a Pad before it)");
    const nc_snn_layer *X = &c->s->layers[x->layer];
    const nc_value *ov = &c->g->values[vout];
    int64_t size = nc_snn_layer_size(X);
    int same = ov->ndim - 1 == X->ndim;
    for (int d = 1; same && d < ov->ndim; d++)
        same = ov->shape[d] == X->shape[d - 1];
    if (same || (ov->ndim == 2 && ov->shape[1] == size && X->ndim == 1))
        return pass(c, n, vin, vout);
    if (ov->ndim != 2 || ov->shape[1] != size)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "reshaping %s to %s is not convertible: only flattening "
                        "to (batch, features) is", nc_shape_str(X->ndim, X->shape, b1, sizeof b1),
                        nc_shape_str(ov->ndim, ov->shape, b2, sizeof b2));
    double *pa = NULL, *pb = NULL;
    if (x->pa) {
        int64_t C = x->pn, per = size / C;
        pa = nc_malloc((size_t)size * sizeof *pa);
        pb = nc_malloc((size_t)size * sizeof *pb);
        if (!pa || !pb) {
            nc_free(pa);
            nc_free(pb);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        for (int64_t i = 0; i < size; i++) {
            pa[i] = x->pa[i / per];
            pb[i] = x->pb[i / per];
        }
    }
    char buf[320];
    int id;
    if ((st = nc_snn_add_flatten(c->s, x->layer, uniq(c, n->name, buf, sizeof buf), &id)) != NC_OK) {
        nc_free(pa);
        nc_free(pb);
        return node_prefix(c, n, st);
    }
    vst *y = vst_set_layer(c, vout, id);
    y->pa = pa;
    y->pb = pb;
    y->pn = pa ? size : 0;
    return NC_OK;
}

static nc_status op_concat(cv *c, const nc_node *n)
{
    int rank = c->g->values[n->outputs[0]].ndim;
    int64_t axis = nc_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += rank;
    if (axis != 1)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "concatenation along axis %lld: only the channel axis (1) "
                        "is convertible", (long long)axis);
    int *from = nc_calloc((size_t)n->n_inputs, sizeof *from);
    if (!from)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_status st = NC_OK;
    for (int i = 0; st == NC_OK && i < n->n_inputs; i++)
        st = plain_input(c, n, i, &from[i]);
    char buf[320];
    int id;
    if (st == NC_OK && (st = nc_snn_add_concat(c->s, n->n_inputs, from, uniq(c, n->name, buf, sizeof buf),
                                               &id)) != NC_OK)
        node_prefix(c, n, st);
    nc_free(from);
    if (st != NC_OK)
        return st;
    vst_set_layer(c, n->outputs[0], id);
    return NC_OK;
}

/* ---- channel selections: ShuffleNet's channel shuffle, channel slices ---- */

/* A channel shuffle or a channel Slice of a (C, H, W) value selects, for
 * each output channel k, input channel sel[k]. It commutes with everything
 * per element, so it is exact on spikes and currents alike. It is kept
 * pending on the value (vst.sel) and composed with the selections after it
 * (a shuffle then a chunk is one selection); a Conv reading it folds it
 * into its weights, as a re-indexing of its input channels, so it adds no
 * layer, no synaptic operation and no spike; any other reader (Concat,
 * a grouped or depthwise Conv, pooling, a neuron) gets it as a 1×1 Conv2d
 * whose weight is the 0/1 selection matrix, a kind every backend and NIR
 * run, which routes each input spike once. */

/* A 1×1 Conv2d reading layer `from`: output k = a[sel[k]]·(channel sel[k]) + b[sel[k]] (a, b NULL: 1, 0). */
static nc_status add_select_conv(cv *c, const char *name, int from, const int64_t *sel, int64_t K,
                                 const double *a, const double *b, int *id)
{
    int64_t C = nc_snn_layer_channels(&c->s->layers[from]), ws[4] = {K, C, 1, 1};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 4, ws), *bias = nc_tensor_new(NC_DTYPE_F32, 1, &K);
    if (!w || !bias) {
        nc_tensor_free(w);
        nc_tensor_free(bias);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int64_t k = 0; k < K; k++) {
        nc_f32(w)[k * C + sel[k]] = a ? (float)a[sel[k]] : 1.0f;
        nc_f32(bias)[k] = b ? (float)b[sel[k]] : 0.0f;
    }
    char buf[320];
    nc_conv2d_params cp = {{1, 1}, {0, 0}, {1, 1}, 1};
    nc_status st = nc_snn_add_conv2d(c->s, from, w, bias, &cp, uniq(c, name, buf, sizeof buf), id);
    nc_tensor_free(w);
    nc_tensor_free(bias);
    if (st != NC_OK && st != NC_ERR_NOMEM)
        nc_error_prefix("%s: node '%s'", c->g->source, name);
    return st;
}

/* Value v's pending channel selection as a layer of its own. */
static nc_status flush_select(cv *c, int v)
{
    vst *x = &c->vs[v];
    int id;
    nc_status st = add_select_conv(c, x->sel_name, x->layer, x->sel, x->sn, NULL, NULL, &id);
    if (st != NC_OK)
        return st;
    nc_free(x->sel);
    x->sel = NULL;
    x->sn = 0;
    x->layer = id;
    return NC_OK;
}

/* The Conv l reads channels x->sel of x's layer: its weight [K, sn, kh, kw]
 * becomes [K, C, kh, kw] over all C channels of the layer. */
static nc_status select_into_weights(const cv *c, const nc_node *n, const vst *x, lin *l)
{
    const nc_tensor *W = l->w;
    int64_t K = W->shape[0], kk = W->shape[2] * W->shape[3];
    int64_t C = nc_snn_layer_channels(&c->s->layers[x->layer]);
    if (W->shape[1] != x->sn)
        return nc_cg_node_err(c, n, NC_ERR_SHAPE, "weight of %lld input channels for an input of %lld",
                        (long long)W->shape[1], (long long)x->sn);
    int64_t ws[4] = {K, C, W->shape[2], W->shape[3]};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 4, ws);
    if (!w)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < x->sn; j++)
            for (int64_t t = 0; t < kk; t++)
                nc_f32(w)[(k * C + x->sel[j]) * kk + t] += nc_f32(W)[(k * x->sn + j) * kk + t];
    nc_tensor_free(l->w);
    l->w = w;
    return NC_OK;
}

/* vout = channels idx[0..K) of vin, a (C, H, W) value: pending on vin's
 * layer (composed with vin's own selection), or, when vin carries a
 * pending a·x + b or padding, a 1×1 selection layer that takes the a·x + b. */
static nc_status channel_select(cv *c, const nc_node *n, int vin, int vout, const int64_t *idx, int64_t K)
{
    char b1[160];
    vst *x = NULL;
    nc_status st = input_state(c, n, 0, &x);
    if (st != NC_OK || ((x->kind == VS_LINEAR || x->pool) && (st = materialise(c, vin)) != NC_OK))
        return st;
    if (x->pad[0] || x->pad[1])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "it selects channels of a zero-padded value (a Pad before it)");
    const nc_snn_layer *X = &c->s->layers[x->layer];
    if (X->ndim != 3)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input has shape %s; a channel selection needs (C, H, W)",
                        nc_shape_str(X->ndim, X->shape, b1, sizeof b1));
    int64_t C = X->shape[0];
    for (int64_t k = 0; k < K; k++)
        if (idx[k] < 0 || idx[k] >= (x->sel ? x->sn : C))
            return nc_errorf(NC_ERR_INTERNAL, "channel selection out of range");
    if (x->pa) {
        int id;
        if ((st = add_select_conv(c, n->name, x->layer, idx, K, x->pa, x->pb, &id)) != NC_OK)
            return st;
        vst_set_layer(c, vout, id);
        return NC_OK;
    }
    int64_t *sel = nc_malloc((size_t)K * sizeof *sel);
    if (!sel)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    int identity = K == C;
    for (int64_t k = 0; k < K; k++) {
        sel[k] = x->sel ? x->sel[idx[k]] : idx[k];
        identity &= sel[k] == k;
    }
    int from = x->layer;
    const char *name = n->name;
    vst *y = vst_set_layer(c, vout, from);
    if (identity) { /* e.g. a shuffle undone */
        nc_free(sel);
        return NC_OK;
    }
    y->sel = sel;
    y->sn = K;
    y->sel_name = name;
    return NC_OK;
}

/* The node reading value v alone (v no graph output), else -1. */
static int sole_reader(const cv *c, int v)
{
    if (v < 0 || c->cons.is_output[v] || nc_consumers_count(&c->cons, v) != 1)
        return -1;
    return c->cons.list[c->cons.start[v]];
}

/* 1 if Reshape node i starts a channel shuffle,
 *   Reshape (N, C, H, W) → (N, g, C/g, H, W) → Transpose(0, 2, 1, 3, 4)
 *   → Reshape (N, C, H, W),
 * with the transpose and final reshape in *t, *r and g in *groups. */
static int shuffle_match_at(const cv *c, int i, int *t, int *r, int64_t *groups)
{
    const nc_graph *g = c->g;
    const nc_node *n = &g->nodes[i];
    if (strcmp(n->op_type, "Reshape") != 0 || n->outputs[0] < 0)
        return 0;
    const nc_value *in = &g->values[n->inputs[0]], *mid = &g->values[n->outputs[0]];
    if (in->ndim != 4 || mid->ndim != 5 || mid->shape[1] <= 0 || mid->shape[1] * mid->shape[2] != in->shape[1] ||
        mid->shape[3] != in->shape[2] || mid->shape[4] != in->shape[3])
        return 0;
    int ti = sole_reader(c, n->outputs[0]);
    if (ti < 0 || strcmp(g->nodes[ti].op_type, "Transpose") != 0 || g->nodes[ti].outputs[0] < 0)
        return 0;
    const int64_t *perm = NULL;
    static const int64_t want[5] = {0, 2, 1, 3, 4};
    if (nc_attr_ints(&g->nodes[ti], "perm", &perm) != 5 || memcmp(perm, want, sizeof want) != 0)
        return 0;
    int ri = sole_reader(c, g->nodes[ti].outputs[0]);
    if (ri < 0 || strcmp(g->nodes[ri].op_type, "Reshape") != 0 || g->nodes[ri].outputs[0] < 0)
        return 0;
    const nc_value *out = &g->values[g->nodes[ri].outputs[0]];
    for (int d = 1; d < 4; d++)
        if (out->ndim != 4 || out->shape[d] != in->shape[d])
            return 0;
    *t = ti;
    *r = ri;
    *groups = mid->shape[1];
    return 1;
}

/* A channel shuffle of g groups: output channel j·g + q is input channel q·(C/g) + j. */
static nc_status op_shuffle(cv *c, const nc_node *n, int t, int r, int64_t groups)
{
    int64_t C = c->g->values[n->inputs[0]].shape[1], per = C / groups;
    int64_t *idx = nc_malloc((size_t)C * sizeof *idx);
    if (!idx)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t j = 0; j < per; j++)
        for (int64_t q = 0; q < groups; q++)
            idx[j * groups + q] = q * per + j;
    nc_status st = channel_select(c, n, n->inputs[0], c->g->nodes[r].outputs[0], idx, C);
    nc_free(idx);
    if (st != NC_OK)
        return st;
    c->done[t] = c->done[r] = 1;
    if (c->n_shuffles++)
        return NC_OK;
    return nc_strlist_addf(&c->cg->notes, "channel shuffles (the first '%s', %lld groups) are channel "
                           "permutations, folded into the weights of the Convs reading them (a 1×1 selection "
                           "Conv2d before other readers)", n->name, (long long)groups);
}

/* The one int64 of a constant input, or of element k of it. */
static int const_int_at(const nc_tensor *t, int64_t k, int64_t *v)
{
    if (!t || t->dtype != NC_DTYPE_I64 || k >= t->numel)
        return 0;
    *v = nc_i64(t)[k];
    return 1;
}

/* Slice along the channel axis (1) with constant bounds (opset ≥ 10 inputs). */
static nc_status op_slice(cv *c, const nc_node *n)
{
    int rank = c->g->values[n->inputs[0]].ndim;
    const nc_tensor *ts = const_in(c, n, 1), *te = const_in(c, n, 2), *ta = const_in(c, n, 3), *tp = const_in(c, n, 4);
    int64_t start, end, axis = 0, step = 1;
    if (n->opset < 10 || !ts || !te || ts->numel != 1 || !const_int_at(ts, 0, &start) || !const_int_at(te, 0, &end) ||
        (ta && !const_int_at(ta, 0, &axis)) || (tp && !const_int_at(tp, 0, &step)) ||
        (nc_node_has_input(n, 3) && !ta) || (nc_node_has_input(n, 4) && !tp))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a Slice of one axis with constant bounds is convertible");
    if (axis < 0)
        axis += rank;
    if (axis != 1 || rank != 4 || step != 1)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a Slice of contiguous channels (axis 1, step 1) of a "
                        "(N, C, H, W) value is convertible");
    int64_t C = c->g->values[n->inputs[0]].shape[1];
    start = start < 0 ? start + C : start;
    end = end < 0 ? end + C : end;
    start = start < 0 ? 0 : start > C ? C : start;
    end = end < start ? start : end > C ? C : end;
    if (end == start)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "it selects no channel");
    int64_t *idx = nc_malloc((size_t)(end - start) * sizeof *idx);
    if (!idx)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t k = start; k < end; k++)
        idx[k - start] = k;
    nc_status st = channel_select(c, n, n->inputs[0], n->outputs[0], idx, end - start);
    nc_free(idx);
    return st;
}

/* ReduceMean over (H, W) of a (N, C, H, W) value: a global average pool. */
static int is_spatial_mean(const nc_graph *g, const nc_node *n)
{
    const int64_t *axes = NULL;
    int na = nc_attr_ints(n, "axes", &axes);
    if (g->values[n->inputs[0]].ndim != 4 || na != 2 || nc_node_has_input(n, 1))
        return 0;
    int64_t a0 = axes[0] < 0 ? axes[0] + 4 : axes[0], a1 = axes[1] < 0 ? axes[1] + 4 : axes[1];
    return (a0 == 2 && a1 == 3) || (a0 == 3 && a1 == 2);
}

/* ---- the walk ---- */

static int is_one_of(const char *op, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(op, *list) == 0)
            return 1;
    return 0;
}

/* Shape arithmetic (Shape → Gather → Concat → Reshape on int64) only
 * feeds Reshape's shape input, which the converter reads from the output's
 * inferred shape instead. */
int nc_cg_shape_only_node(const nc_graph *g, const nc_node *n)
{
    int any = 0;
    for (int o = 0; o < n->n_outputs; o++) {
        if (n->outputs[o] < 0)
            continue;
        if (g->values[n->outputs[o]].dtype != NC_DTYPE_I64)
            return 0;
        any = 1;
    }
    return any;
}

/* Activations neither an IF neuron nor a Nonlinear layer computes,
 * whatever surrounds them (Erf, Sqrt: unless inside a GELU pattern). */
static const char *const k_activations[] = {"LeakyRelu", "Elu", "Selu", "Celu", "Softplus", "Softsign",
                                            "PRelu", "ThresholdedRelu", "Mish", "Floor", "Ceil",
                                            "Round", "Sign", "Abs", "Exp", "Log", "Sqrt", "Erf", NULL};
static const char k_if_hint[] = "(an IF neuron's firing rate is a clipped ReLU of its input current, and "
                                "Nonlinear layers compute Sigmoid, SiLU, Tanh, HardSigmoid, HardSwish and "
                                "GELU: use ReLU, Clip(0, c), a QCFS activation or one of those)";

/* The ops convert_node turns into SNN layers (under conditions of their own;
 * unconvertible_why checks those that do not depend on what precedes). */
static const char *const k_convertible[] = {"Conv", "Gemm", "MatMul", "BatchNormalization", "Relu", "Clip",
                                            "Div", "Mul", "Add", "Sub", "AveragePool", "MaxPool",
                                            "GlobalAveragePool", "Pad", "Flatten", "Reshape", "Squeeze",
                                            "Unsqueeze", "Slice", "ReduceMean", "Concat", "Identity", "Dropout",
                                            "Cast", "Softmax", "LogSoftmax", "Sigmoid", "Tanh", "HardSigmoid",
                                            "HardSwish", "Gelu", NULL};

/* Why node i can become no part of an SNN, whatever surrounds it, or NULL.
 * in_pattern marks nodes of a convertible pattern (QCFS chains, channel
 * shuffles), whose ops alone would not convert. */
static const char *unconvertible_why(const cv *c, const char *in_pattern, int i)
{
    const nc_graph *g = c->g;
    const nc_node *n = &g->nodes[i];
    const char *op = n->op_type;
    if (in_pattern[i] || nc_cg_shape_only_node(g, n) || nc_tok_convertible(c, i))
        return NULL;
    if (is_one_of(op, k_activations))
        return "activation";
    if ((strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0) && !const_in(c, n, 1))
        return "its second input is an activation, not constant weights";
    if ((strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0) && n->outputs[0] >= 0 &&
        (!c->cons.is_output[n->outputs[0]] || nc_consumers_count(&c->cons, n->outputs[0]) != 1))
        return "a Softmax inside the graph (only a final one is dropped)";
    if (strcmp(op, "ReduceMean") == 0 && !is_spatial_mean(g, n))
        return "a mean over other axes than (H, W) of (N, C, H, W)";
    if (!is_one_of(op, k_convertible))
        return "no SNN layer computes it";
    return NULL;
}

/* Refuses, in one message, every node unconvertible_why names, so a user
 * sees all the layers to replace at once rather than one per attempt: per
 * op type (in order of appearance), then the nodes, then what each kind of
 * refusal means. The list is cut (with a count of the rest) where the
 * message would overflow the error buffer. */
static nc_status refuse_unconvertible(const cv *c)
{
    const nc_graph *g = c->g;
    char *in_pattern = nc_calloc((size_t)g->n_nodes + 1, 1);
    if (!in_pattern)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        nc_qcfs_match m;
        int t, r;
        int64_t groups;
        const char *op = g->nodes[i].op_type;
        if ((strcmp(op, "Div") == 0 || strcmp(op, "Mul") == 0) && nc_qcfs_match_at(g, &c->cons, i, &m))
            for (int k = 0; k < m.n_nodes; k++) /* Floor inside a QCFS chain is part of an activation */
                in_pattern[m.nodes[k]] = 1;
        if (shuffle_match_at(c, i, &t, &r, &groups))
            in_pattern[i] = in_pattern[t] = in_pattern[r] = 1;
        nc_nl_match nm; /* Erf, Pow inside a GELU */
        if (!in_pattern[i] && nc_nl_match_at(g, &c->cons, i, &nm))
            for (int k = 0; k < nm.n_nodes; k++)
                in_pattern[nm.nodes[k]] = 1;
    }
    /* each node's reason once: the message walks them several times */
    const char **why = nc_calloc((size_t)g->n_nodes + 1, sizeof *why);
    if (!why) {
        nc_free(in_pattern);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    int count = 0, first = -1, acts = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!(why[i] = unconvertible_why(c, in_pattern, i)))
            continue;
        if (first < 0)
            first = i;
        count++;
        acts += strcmp(why[i], "activation") == 0;
    }
    int others = count - acts;
    nc_status st = NC_OK;
    if (count == 1 && acts == 1) {
        st = nc_cg_node_err(c, &g->nodes[first], NC_ERR_UNSUPPORTED, "not convertible to IF neurons %s", k_if_hint);
    } else if (count == 1) {
        st = nc_cg_node_err(c, &g->nodes[first], NC_ERR_UNSUPPORTED, "not convertible to an SNN layer: %s", why[first]);
    } else if (count > 1) {
        char kinds[256], list[560], more[48] = "";
        size_t off = 0;
        int shown = 0;
        kinds[0] = list[0] = '\0';
        for (int i = first; i < g->n_nodes; i++) { /* "2 Sigmoid, 1 Erf": each op type at its first node */
            const char *op = g->nodes[i].op_type;
            if (!why[i])
                continue;
            int seen = 0, nk = 0;
            for (int j = first; j < i && !seen; j++)
                seen = why[j] && strcmp(g->nodes[j].op_type, op) == 0;
            for (int j = i; j < g->n_nodes && !seen; j++)
                nk += why[j] && strcmp(g->nodes[j].op_type, op) == 0;
            size_t kl = strlen(kinds);
            if (nk && kl < sizeof kinds)
                snprintf(kinds + kl, sizeof kinds - kl, "%s%d %s", kl ? ", " : "", nk, op);
        }
        for (int i = first; i < g->n_nodes; i++) {
            if (!why[i])
                continue;
            const nc_node *n = &g->nodes[i];
            int w = snprintf(list + off, sizeof list - off, "%s%s '%s'", shown ? ", " : "", n->op_type, n->name);
            if (w < 0 || (size_t)w >= sizeof list - off) {
                list[off] = '\0';
                break;
            }
            off += (size_t)w;
            shown++;
        }
        if (shown < count)
            snprintf(more, sizeof more, ", and %d more", count - shown);
        st = nc_errorf(NC_ERR_UNSUPPORTED, "%s: %d nodes are not convertible to IF neurons or SNN layers (%s): "
                       "%s%s%s%s%s", g->source, count, kinds, list, more, acts ? " " : "", acts ? k_if_hint : "",
                       others ? " (no SNN layer computes a mean other than over (H, W) or over the tokens, "
                                "Pow, Sqrt or Erf outside a LayerNorm or GELU, or ops neuroc does not "
                                "convert)" : "");
    }
    nc_free(why);
    nc_free(in_pattern);
    return st;
}

static nc_status convert_node(cv *c, int i)
{
    const nc_node *n = &c->g->nodes[i];
    const char *op = n->op_type;
    nc_qcfs_match m;
    if (nc_cg_shape_only_node(c->g, n))
        return NC_OK;
    if (n->n_inputs < 1 || n->n_outputs < 1 || n->outputs[0] < 0)
        return nc_cg_node_err(c, n, NC_ERR_MODEL, "a node without input or output");
    if (nc_tok_takes(c, i))
        return nc_tok_convert(c, i);
    if (strcmp(op, "Conv") == 0)
        return op_conv(c, n);
    if (strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0)
        return op_gemm(c, n, op[0] == 'M');
    if (strcmp(op, "BatchNormalization") == 0)
        return op_batchnorm(c, n);
    if (strcmp(op, "Relu") == 0)
        return emit_if(c, n, n->inputs[0], n->outputs[0], NC_THETA_CALIB, NULL, INFINITY, 0, &i, 1);
    if (strcmp(op, "Clip") == 0)
        return op_clip(c, n, i);
    if ((strcmp(op, "Div") == 0 || strcmp(op, "Mul") == 0) && nc_qcfs_match_at(c->g, &c->cons, i, &m))
        return op_qcfs(c, n, &m);
    int handled;
    nc_status nst = nc_convert_nonlinear(c, i, &handled);
    if (handled || nst != NC_OK)
        return nst;
    if (is_one_of(op, (const char *const[]){"Add", "Sub", "Mul", "Div", NULL}))
        return op_arith(c, n);
    if (strcmp(op, "AveragePool") == 0)
        return op_avgpool(c, n, 0);
    if (strcmp(op, "MaxPool") == 0)
        return op_maxpool(c, n);
    if (strcmp(op, "GlobalAveragePool") == 0)
        return op_global_avgpool(c, n);
    if (strcmp(op, "Pad") == 0)
        return op_pad(c, n);
    int t, r;
    int64_t groups;
    if (shuffle_match_at(c, i, &t, &r, &groups))
        return op_shuffle(c, n, t, r, groups);
    if (is_one_of(op, (const char *const[]){"Flatten", "Reshape", "Squeeze", "Unsqueeze", NULL}))
        return op_reshape(c, n);
    if (strcmp(op, "Slice") == 0)
        return op_slice(c, n);
    if (strcmp(op, "ReduceMean") == 0 && is_spatial_mean(c->g, n))
        return op_global_avgpool(c, n);
    if (strcmp(op, "Concat") == 0)
        return op_concat(c, n);
    if (is_one_of(op, (const char *const[]){"Identity", "Dropout", "Cast", NULL}))
        return pass(c, n, n->inputs[0], n->outputs[0]);
    if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0) {
        int v = n->outputs[0];
        if (!c->cons.is_output[v] || nc_consumers_count(&c->cons, v) != 1)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "not convertible: only a final %s (dropped, as the "
                            "readout's argmax is the same) is", op);
        nc_status st = pass(c, n, n->inputs[0], v);
        if (st == NC_OK)
            st = nc_strlist_addf(&c->cg->notes, "the final %s '%s' was dropped: the readout's argmax is the "
                                 "same", op, n->name);
        return st;
    }
    if (is_one_of(op, k_activations))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "not convertible to IF neurons %s", k_if_hint);
    return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "not convertible to an SNN layer");
}

static nc_status add_readout(cv *c)
{
    const nc_graph *g = c->g;
    int v = g->outputs[0];
    vst *x = &c->vs[v];
    if (x->kind == VS_NONE)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: the output '%s' is not computed from the network input by "
                         "convertible ops", g->source, vname(c, v));
    nc_status st = materialise(c, v);
    if (st != NC_OK)
        return st;
    if (x->pa || x->pad[0] || x->pad[1])
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: the output '%s' is scaled or padded after the last "
                         "synaptic layer, which the readout cannot express", g->source, vname(c, v));
    if (nc_snn_kind_is_if(c->s->layers[x->layer].kind) &&
        (st = nc_strlist_addf(&c->cg->notes, "the network ends with an activation: the readout sums the "
                              "spikes of '%s'", c->s->layers[x->layer].name)) != NC_OK)
        return st;
    char buf[320];
    if ((st = nc_snn_add_readout(c->s, x->layer, uniq(c, "readout", buf, sizeof buf), &c->cg->readout)) != NC_OK)
        return st;
    return nc_snn_set_output(c->s, c->cg->readout);
}

static nc_status drop_unread_gathers(nc_cgraph *cg)
{
    int *map = nc_malloc((size_t)cg->snn->n_layers * sizeof *map);
    if (!map)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_snn_drop_unread(cg->snn, NC_SNN_GATHER, map);
    for (int k = 0; k < cg->n_sites; k++)
        cg->sites[k].layer = map[cg->sites[k].layer];
    cg->readout = map[cg->readout];
    nc_free(map);
    return NC_OK;
}

nc_status nc_cgraph_build(const nc_graph *g, const nc_convert_options *o, nc_cgraph *cg)
{
    char b[160];
    memset(cg, 0, sizeof *cg);
    if (g->n_inputs != 1)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: the model has %d inputs; conversion needs exactly one",
                         g->source, g->n_inputs);
    if (g->n_outputs < 1)
        return nc_errorf(NC_ERR_MODEL, "%s: the model has no output", g->source);
    const nc_value *in = &g->values[g->inputs[0]];
    if (in->ndim < 2 || in->dtype != NC_DTYPE_F32)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: input '%s' must be float32 (batch, ...), it is %s", g->source,
                         in->name, nc_shape_str(in->ndim, in->shape, b, sizeof b));
    for (int d = 1; d < in->ndim; d++)
        if (in->shape[d] <= 0)
            return nc_errorf(NC_ERR_UNSUPPORTED, "%s: input '%s' of shape %s has a symbolic dimension other "
                             "than the batch", g->source, in->name, nc_shape_str(in->ndim, in->shape, b, sizeof b));
    cg->input_ndim = in->ndim - 1;
    memcpy(cg->input_shape, in->shape + 1, (size_t)cg->input_ndim * sizeof *cg->input_shape);
    nc_status st = nc_snn_create(cg->input_ndim, cg->input_shape, &cg->snn);
    if (st != NC_OK)
        return st;

    cv c = {g, o, cg, cg->snn, NULL, {0}, NULL, 0, NULL};
    c.vs = nc_calloc((size_t)g->n_values + 1, sizeof *c.vs);
    c.done = nc_calloc((size_t)g->n_nodes + 1, 1);
    if (!c.vs || !c.done)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (st == NC_OK)
        st = nc_consumers_build(g, &c.cons);
    if (st == NC_OK) {
        c.vs[g->inputs[0]].kind = VS_LAYER;
        c.vs[g->inputs[0]].layer = 0;
        if (g->n_outputs > 1)
            st = nc_strlist_addf(&cg->warnings, "the model has %d outputs; only the first, '%s', is converted",
                                 g->n_outputs, g->values[g->outputs[0]].name);
    }
    if (st == NC_OK)
        st = refuse_unconvertible(&c);
    for (int i = 0; st == NC_OK && i < g->n_nodes; i++)
        if (!c.done[i])
            st = convert_node(&c, i);
    if (st == NC_OK)
        st = add_readout(&c);
    if (st == NC_OK && c.tok) /* Gathers a later Gather composed away (convert_tokens.c) */
        st = drop_unread_gathers(cg);

    for (int v = 0; c.vs && v < g->n_values; v++)
        vst_clear(&c.vs[v]);
    nc_tok_free(c.tok);
    nc_free(c.vs);
    nc_free(c.done);
    nc_consumers_free(&c.cons);
    if (st != NC_OK)
        nc_cgraph_clear(cg);
    return st;
}

/* ---- the helpers the pattern converters share (convert_graph_int.h) ---- */

nc_status nc_cg_node_prefix(const cv *c, const nc_node *n, nc_status st) { return node_prefix(c, n, st); }
const char *nc_cg_uniq(const cv *c, const char *base, char *buf, size_t len) { return uniq(c, base, buf, len); }
nc_status nc_cg_materialise(cv *c, int v) { return materialise(c, v); }
nc_status nc_cg_flush_pending(cv *c, const nc_node *n, int v) { return flush_pending(c, n, v); }
nc_status nc_cg_pass(cv *c, const nc_node *n, int vin, int vout) { return pass(c, n, vin, vout); }
vst *nc_cg_set_layer(cv *c, int v, int id) { return vst_set_layer(c, v, id); }

nc_status nc_cg_apply_affine(cv *c, const nc_node *n, int vin, int vout, const double *a, const double *b,
                             int64_t C)
{
    return apply_affine(c, n, vin, vout, a, b, C);
}

nc_status nc_cg_pending_conv(cv *c, const nc_node *n, int vin, int vout, nc_tensor *w, nc_tensor *b,
                             const nc_conv2d_params *cp)
{
    vst *x = &c->vs[vin];
    lin *l = nc_calloc(1, sizeof *l);
    nc_status st = !l ? nc_errorf(NC_ERR_NOMEM, "out of memory") : materialise(c, vin);
    if (st == NC_OK)
        st = absorb_pre(c, n, x, w, b, 1, cp->groups ? cp->groups : 1, cp->padding[0] || cp->padding[1]);
    if (st != NC_OK) {
        nc_free(l);
        nc_tensor_free(w);
        nc_tensor_free(b);
        return st;
    }
    *l = (lin){NC_SNN_CONV2D, w, b, *cp, n->name, w->shape[0]};
    int from = x->layer;
    vst *y = &c->vs[vout];
    vst_clear(y);
    y->kind = VS_LINEAR;
    y->layer = from;
    y->ln = l;
    return NC_OK;
}

/* ---- the average-pooling view for calibration ---- */

static char g_avgpool_op[] = "AveragePool";
static char g_include_pad[] = "count_include_pad";

nc_status nc_graph_avgpool_view(const nc_graph *g, nc_graph **out)
{
    *out = NULL;
    const nc_op_def *avg = nc_op_lookup("AveragePool");
    nc_graph *v = nc_malloc(sizeof *v);
    nc_node *nodes = nc_malloc((size_t)(g->n_nodes + 1) * sizeof *nodes);
    if (!v || !nodes || !avg) {
        nc_free(v);
        nc_free(nodes);
        return nc_errorf(avg ? NC_ERR_NOMEM : NC_ERR_INTERNAL, "out of memory");
    }
    *v = *g;
    memcpy(nodes, g->nodes, (size_t)g->n_nodes * sizeof *nodes);
    v->nodes = nodes;
    for (int i = 0; i < g->n_nodes; i++) {
        nc_node *n = &nodes[i];
        if (strcmp(n->op_type, "MaxPool") != 0)
            continue;
        nc_attr *a = nc_calloc((size_t)n->n_attrs + 1, sizeof *a);
        if (!a) {
            nc_graph_view_free(v);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        if (n->n_attrs)
            memcpy(a, n->attrs, (size_t)n->n_attrs * sizeof *a);
        a[n->n_attrs].name = g_include_pad;
        a[n->n_attrs].type = NC_ATTR_INT;
        a[n->n_attrs].i = 1;
        n->attrs = a;
        n->n_attrs++;
        n->op_type = g_avgpool_op;
        n->def = avg;
        n->n_outputs = 1; /* MaxPool's optional Indices output is never produced here */
    }
    *out = v;
    return NC_OK;
}

void nc_graph_view_free(nc_graph *view)
{
    if (!view)
        return;
    for (int i = 0; i < view->n_nodes; i++)
        if (view->nodes[i].op_type == g_avgpool_op)
            nc_free(view->nodes[i].attrs);
    nc_free(view->nodes);
    nc_free(view);
}
