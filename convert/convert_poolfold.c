/* Average poolings of spikes folded into the synaptic layer that reads them
 * (convert_graph_int.h: nc_pf_*).
 *
 * A Conv (or a Gemm) reading the average-pooled spikes of an IF layer reads
 * graded sums, so each of its synaptic operations is a multiply-add
 * (docs/energy.md). Pooling is linear, so pooling then convolving is one
 * convolution of the spikes themselves: per spatial dim, a Conv of kernel
 * k, stride s, padding p after a pooling of kernel kp, stride sp, padding
 * pp (the divisor kp for every window) is a Conv of kernel (k − 1)·sp + kp,
 * stride s·sp, padding p·sp + pp, whose tap t·sp + a carries w[t]/kp for
 * each pooling tap a (summed where windows overlap). Each spike then causes
 * as many operations as a non-zero pooled value did (a tap of the pooled
 * conv is kp/sp of its taps), additions instead of multiply-adds; a window
 * of n spikes costs n additions per reader where it cost one multiply-add.
 * With n ≤ NC_POOL_FOLD_MAX_TAPS that is never more energy under the
 * default model (n·0.9 pJ against 4.6 pJ), so larger windows (a global
 * average over a feature map) stay pools. A flattening before a Gemm is a
 * convolution whose kernel is the whole pooled map, so the Gemm's weight
 * spreads the same way over the unpooled spikes. */
#include <stdio.h>
#include <string.h>

#include "convert_graph_int.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

/* The largest window folded: its spikes' additions cost less than the one
 * multiply-add of their sum (0.9 pJ each against 4.6 pJ, docs/energy.md). */
#define NC_POOL_FOLD_MAX_TAPS 5

/* The one node reading v's data (shape-only readers skipped), else -1. */
static int sole_data_reader(const cv *c, int v)
{
    if (c->cons.is_output[v])
        return -1;
    int r = -1;
    for (int k = c->cons.start[v]; k < c->cons.start[v + 1]; k++) {
        int i = c->cons.list[k];
        if (nc_cg_shape_only_node(c->g, &c->g->nodes[i]))
            continue;
        if (r >= 0)
            return -1;
        r = i;
    }
    return r;
}

/* 1 if node i is a Gemm or MatMul whose data input is v. */
static int is_gemm_of(const cv *c, int i, int v)
{
    const nc_node *r = &c->g->nodes[i];
    return (strcmp(r->op_type, "Gemm") == 0 || strcmp(r->op_type, "MatMul") == 0) && r->inputs[0] == v;
}

/* Whether the pooled value vout goes to a layer that folds it: 1 a Conv,
 * 2 a Gemm (directly, for a (batch, C) mean, or after a flattening). */
static int fold_reader(const cv *c, int vout)
{
    int r = sole_data_reader(c, vout);
    if (r < 0 || c->done[r])
        return 0;
    const nc_node *n = &c->g->nodes[r];
    if (strcmp(n->op_type, "Conv") == 0 && n->inputs[0] == vout)
        return c->g->values[vout].ndim == 4 ? 1 : 0;
    if (c->g->values[vout].ndim == 2)
        return is_gemm_of(c, r, vout) ? 2 : 0;
    const char *flat[] = {"Flatten", "Reshape", "Squeeze"};
    for (int k = 0; k < 3; k++)
        if (strcmp(n->op_type, flat[k]) == 0 && n->inputs[0] == vout) {
            int f = n->outputs[0], g = sole_data_reader(c, f);
            return c->g->values[f].ndim == 2 && g >= 0 && !c->done[g] && is_gemm_of(c, g, f) ? 2 : 0;
        }
    return 0;
}

nc_status nc_pf_try_pending(cv *c, const nc_node *n, int from, int vout, const int64_t k[2], const int64_t s[2],
                            const int64_t p[2], int *pending)
{
    *pending = 0;
    const nc_snn_layer *X = &c->s->layers[from];
    int reader = c->o->keep_avgpool ? 0 : fold_reader(c, vout);
    if (!reader || X->ndim != 3 || k[0] * k[1] > NC_POOL_FOLD_MAX_TAPS || !nc_cg_is_spike_train(c->s, from))
        return NC_OK;
    pend_pool *pp = nc_calloc(1, sizeof *pp);
    if (!pp)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int d = 0; d < 2; d++) {
        pp->k[d] = k[d];
        pp->s[d] = s[d];
        pp->p[d] = p[d];
        pp->out[d] = (X->shape[1 + d] + 2 * p[d] - k[d]) / s[d] + 1;
    }
    pp->name = n->name;
    pp->flat = reader == 2 && c->g->values[vout].ndim == 2; /* a (batch, C) mean: no flattening node */
    vst *y = nc_cg_set_layer(c, vout, from);
    y->pool = pp;
    *pending = 1;
    return NC_OK;
}

nc_status nc_pf_flush(cv *c, int v)
{
    vst *x = &c->vs[v];
    pend_pool *pp = x->pool;
    char buf[320];
    int id;
    nc_status st = nc_snn_add_pool2d(c->s, x->layer, pp->k, pp->s, pp->p, (float)(1.0 / (double)(pp->k[0] * pp->k[1])),
                                     nc_cg_uniq(c, pp->name, buf, sizeof buf), &id);
    const char *at = pp->name;
    if (st == NC_OK && pp->flat_name) {
        at = pp->flat_name;
        st = nc_snn_add_flatten(c->s, id, nc_cg_uniq(c, pp->flat_name, buf, sizeof buf), &id);
    }
    if (st != NC_OK) {
        if (st != NC_ERR_NOMEM)
            nc_error_prefix("%s: node '%s'", c->g->source, at);
        return st;
    }
    nc_free(pp);
    x->pool = NULL;
    x->layer = id;
    return NC_OK;
}

nc_status nc_pf_flatten(cv *c, const nc_node *n, int vin, int vout, int *done)
{
    vst *x = &c->vs[vin], *y = &c->vs[vout];
    const nc_value *ov = &c->g->values[vout];
    pend_pool *pp = x->pool;
    int64_t C = nc_snn_layer_channels(&c->s->layers[x->layer]);
    *done = !pp->flat && ov->ndim == 2 && ov->shape[1] == C * pp->out[0] * pp->out[1];
    if (!*done)
        return NC_OK;
    nc_cg_set_layer(c, vout, x->layer);
    y->pool = pp;
    x->pool = NULL;
    pp->flat = 1;
    pp->flat_name = n->name;
    return NC_OK;
}

/* A note that pooling pp folded into the layer of node n. */
static nc_status fold_note(cv *c, const nc_node *n, const pend_pool *pp, int from, const char *what)
{
    return nc_strlist_addf(&c->cg->notes, "AveragePool '%s' is folded into %s '%s' (%s): it reads the spikes of "
                           "'%s' directly, its synaptic operations additions instead of multiply-adds on "
                           "pooled sums (nc_convert_options.keep_avgpool, --keep-avgpool: keep the pool)",
                           pp->name, n->op_type, n->name, what, c->s->layers[from].name);
}

/* floor(a / b) for b > 0 */
static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Why the pooling pp of an input of in[] then a Conv of kernel k[], stride
 * s[], padding p[] is not one convolution of kernel K, stride S, padding P,
 * or NULL where it is: the same output size, and every tap of the Conv's
 * zero padding reads a pooling window that holds no input (a row the
 * pooling's floor drops must not enter through the padding). */
static const char *compose_refusal(const pend_pool *pp, const int64_t in[2], const int64_t k[2], const int64_t s[2],
                                   const int64_t p[2], int64_t K[2], int64_t S[2], int64_t P[2])
{
    for (int d = 0; d < 2; d++) {
        K[d] = (k[d] - 1) * pp->s[d] + pp->k[d];
        S[d] = s[d] * pp->s[d];
        P[d] = p[d] * pp->s[d] + pp->p[d];
        int64_t hz = floor_div(pp->out[d] + 2 * p[d] - k[d], s[d]) + 1;
        if (floor_div(in[d] + 2 * P[d] - K[d], S[d]) + 1 != hz)
            return "the composed convolution would have another output size";
        for (int64_t o = 0; o < hz; o++)
            for (int64_t t = 0; t < k[d]; t++) {
                int64_t y = o * s[d] - p[d] + t, lo = y * pp->s[d] - pp->p[d];
                if ((y < 0 || y >= pp->out[d]) && lo + pp->k[d] > 0 && lo < in[d])
                    return "the convolution's zero padding would cover inputs the pooling leaves out";
            }
    }
    return NULL;
}

nc_status nc_pf_into_conv(cv *c, const nc_node *n, int v, lin *l)
{
    vst *x = &c->vs[v];
    pend_pool *pp = x->pool;
    const nc_snn_layer *X = &c->s->layers[x->layer];
    const nc_tensor *W = l->w;
    int64_t in[2] = {X->shape[1], X->shape[2]}, k[2] = {W->shape[2], W->shape[3]};
    int64_t K[2], S[2], P[2];
    const char *why = l->cp.dilation[0] != 1 || l->cp.dilation[1] != 1
                          ? "the convolution is dilated"
                          : compose_refusal(pp, in, k, l->cp.stride, l->cp.padding, K, S, P);
    if (why) {
        nc_status st = nc_strlist_addf(&c->cg->notes, "AveragePool '%s' is not folded into Conv '%s': %s; it stays "
                                       "a Pool2d layer", pp->name, n->name, why);
        return st != NC_OK ? st : nc_pf_flush(c, v);
    }
    int64_t ws[4] = {W->shape[0], W->shape[1], K[0], K[1]};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 4, ws);
    if (!w)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    double scale = 1.0 / (double)(pp->k[0] * pp->k[1]);
    for (int64_t oc = 0; oc < ws[0] * ws[1]; oc++)
        for (int64_t th = 0; th < k[0]; th++)
            for (int64_t tw = 0; tw < k[1]; tw++) {
                float wv = (float)(nc_f32(W)[(oc * k[0] + th) * k[1] + tw] * scale);
                for (int64_t a = 0; a < pp->k[0]; a++)
                    for (int64_t b = 0; b < pp->k[1]; b++)
                        nc_f32(w)[(oc * K[0] + th * pp->s[0] + a) * K[1] + tw * pp->s[1] + b] += wv;
            }
    nc_tensor_free(l->w);
    l->w = w;
    for (int d = 0; d < 2; d++) {
        l->cp.stride[d] = S[d];
        l->cp.padding[d] = P[d];
    }
    char what[160];
    snprintf(what, sizeof what, "now a %lldx%lld convolution of stride %lld, padding %lld", (long long)K[0],
             (long long)K[1], (long long)S[0], (long long)P[0]);
    nc_status st = fold_note(c, n, pp, x->layer, what);
    nc_free(pp);
    x->pool = NULL;
    return st;
}

nc_status nc_pf_into_affine(cv *c, const nc_node *n, int v, lin *l)
{
    vst *x = &c->vs[v];
    pend_pool *pp = x->pool;
    const nc_snn_layer *X = &c->s->layers[x->layer];
    int64_t C = X->shape[0], H = X->shape[1], Wd = X->shape[2], out = l->w->shape[0];
    int64_t pooled = C * pp->out[0] * pp->out[1], ws[2] = {out, C * H * Wd};
    if (l->w->shape[1] != pooled)
        return nc_errorf(NC_ERR_INTERNAL, "Gemm of %lld inputs over a pooling of %lld", (long long)l->w->shape[1],
                         (long long)pooled);
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 2, ws);
    if (!w)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    double scale = 1.0 / (double)(pp->k[0] * pp->k[1]);
    for (int64_t o = 0; o < out; o++)
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t i = 0; i < pp->out[0]; i++)
                for (int64_t j = 0; j < pp->out[1]; j++) {
                    float wv = (float)(nc_f32(l->w)[o * pooled + (ch * pp->out[0] + i) * pp->out[1] + j] * scale);
                    for (int64_t a = 0; a < pp->k[0]; a++)
                        for (int64_t b = 0; b < pp->k[1]; b++) {
                            int64_t h = i * pp->s[0] - pp->p[0] + a, ww = j * pp->s[1] - pp->p[1] + b;
                            if (h >= 0 && h < H && ww >= 0 && ww < Wd) /* padding: zeros */
                                nc_f32(w)[o * ws[1] + (ch * H + h) * Wd + ww] += wv;
                        }
                }
    nc_tensor_free(l->w);
    l->w = w;
    int from = x->layer;
    char buf[320];
    nc_status st = NC_OK;
    if (pp->flat_name &&
        (st = nc_snn_add_flatten(c->s, from, nc_cg_uniq(c, pp->flat_name, buf, sizeof buf), &x->layer)) != NC_OK)
        return nc_cg_node_prefix(c, n, st);
    st = fold_note(c, n, pp, from, "its weights spread over the unpooled spikes");
    nc_free(pp);
    x->pool = NULL;
    return st;
}
