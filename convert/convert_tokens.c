/* Token tensors of transformers in the ANN → SNN walk (convert_tokens.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convert_nonlinear.h"
#include "convert_route.h"
#include "convert_tokens.h"
#include "convert_tokens_match.h"
#include "convert/ann/model.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"

/* How an ONNX value (at batch 1, every axis, the batch's included) lies in
 * the values of the layer that holds it (its vst's layer, or the pending
 * synaptic layer's output): element (i0, i1, …) is value offset + Σ ik·stride[k]
 * of a layer of shape ir_shape. */
typedef struct tview {
    int set;                 /* 0: not a token view (convert_graph.c's value: per-sample shape = layer shape) */
    int ndim;
    int64_t shape[NC_MAX_DIMS], stride[NC_MAX_DIMS];
    int64_t offset;
    int ir_ndim;
    int64_t ir_shape[NC_MAX_DIMS];
    double scale;            /* a constant factor not applied yet (attention's 1/√d), 1: none */
    nc_tensor *k;            /* a constant known at batch 1 only (an Expand of a constant), else NULL */
} tview;

/* A value's shape at batch 1 (ndim -1: unknown). */
typedef struct vshape {
    int ndim;
    int64_t shape[NC_MAX_DIMS];
} vshape;

struct nc_tok {
    int n_values;
    vshape *b1;              /* every value's shape at batch 1: where the batch axis went */
    tview *tv;               /* per value */
    int unit;                /* a layer of one input value, which constant layers read; -1 until made */
};

void nc_tok_free(struct nc_tok *t)
{
    if (!t)
        return;
    for (int v = 0; t->tv && v < t->n_values; v++)
        nc_tensor_free(t->tv[v].k);
    nc_free(t->b1);
    nc_free(t->tv);
    nc_free(t);
}

/* ---- views ---- */

static void contiguous(int ndim, const int64_t *shape, int64_t *stride)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        stride[d] = s;
        s *= shape[d];
    }
}

static int64_t prod(int ndim, const int64_t *shape)
{
    int64_t p = 1;
    for (int d = 0; d < ndim; d++)
        p *= shape[d];
    return p;
}

static nc_status tok_state(cv *c)
{
    if (c->tok)
        return NC_OK;
    const nc_graph *g = c->g;
    struct nc_tok *T = nc_calloc(1, sizeof *T);
    if (!T)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    T->unit = -1;
    T->n_values = g->n_values;
    T->b1 = nc_calloc((size_t)g->n_values + 1, sizeof *T->b1);
    T->tv = nc_calloc((size_t)g->n_values + 1, sizeof *T->tv);
    c->tok = T;
    if (!T->b1 || !T->tv)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_tensor **all = nc_calloc((size_t)g->n_values + 1, sizeof *all);
    if (!all)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_status st = nc_graph_infer(g, 1, all);
    for (int v = 0; v < g->n_values; v++) {
        T->b1[v].ndim = all[v] ? all[v]->ndim : -1;
        if (all[v])
            memcpy(T->b1[v].shape, all[v]->shape, (size_t)all[v]->ndim * sizeof *all[v]->shape);
        nc_tensor_free(all[v]);
    }
    nc_free(all);
    return st;
}

/* Value v's view: its own, or (a value of convert_graph.c) the layer's shape behind a batch axis. */
static tview view_of(const cv *c, int v)
{
    const struct nc_tok *T = c->tok;
    if (T->tv[v].set)
        return T->tv[v];
    tview t = {0};
    const vshape *b = &T->b1[v];
    t.ndim = b->ndim > 0 ? b->ndim : 0;
    if (t.ndim)
        memcpy(t.shape, b->shape, (size_t)t.ndim * sizeof *t.shape);
    contiguous(t.ndim, t.shape, t.stride);
    t.ir_ndim = t.ndim > 1 ? t.ndim - 1 : t.ndim;
    memcpy(t.ir_shape, t.shape + (t.ndim - t.ir_ndim), (size_t)t.ir_ndim * sizeof *t.shape);
    t.scale = 1.0;
    return t;
}

static const vshape *b1(const cv *c, int v) { return c->tok->b1[v].ndim >= 0 ? &c->tok->b1[v] : NULL; }

/* 1 if t is how convert_graph.c holds a value: the batch axis, then the layer's shape, in order. */
static int plain_view(const tview *t)
{
    if (t->k || t->scale != 1.0 || t->offset || t->ndim != t->ir_ndim + 1 || t->shape[0] != 1)
        return 0;
    int64_t st[NC_MAX_DIMS];
    contiguous(t->ir_ndim, t->ir_shape, st);
    for (int d = 0; d < t->ir_ndim; d++)
        if (t->shape[d + 1] != t->ir_shape[d] || (t->ir_shape[d] > 1 && t->stride[d + 1] != st[d]))
            return 0;
    return 1;
}

/* Value v takes view t (its constant, if any, moves with it); a plain
 * view goes back to convert_graph.c (ConvNeXt's permutes around its
 * LayerNorms end where they began). */
static void set_view(cv *c, int v, const tview *t)
{
    tview *d = &c->tok->tv[v];
    nc_tensor_free(d->k);
    *d = *t;
    d->set = !plain_view(t);
}

/* The axes of t of size > 1, slowest first (ord), if t is a dense block of
 * its layer (each stride the product of the sizes after it): their
 * number, else -1. */
static int dense_order(const tview *t, int *ord)
{
    int r = 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] > 1)
            ord[r++] = d;
    for (int a = 1; a < r; a++) /* insertion sort by stride, descending */
        for (int b = a; b > 0 && t->stride[ord[b]] > t->stride[ord[b - 1]]; b--) {
            int s = ord[b];
            ord[b] = ord[b - 1];
            ord[b - 1] = s;
        }
    int64_t s = 1;
    for (int a = r - 1; a >= 0; a--) {
        if (t->stride[ord[a]] != s)
            return -1;
        s *= t->shape[ord[a]];
    }
    return r;
}

/* The axis of t's layer that ONNX axis k is (same size and stride, the view the whole layer), else -1. */
static int layer_axis(const tview *t, int k)
{
    int64_t st[NC_MAX_DIMS];
    contiguous(t->ir_ndim, t->ir_shape, st);
    if (t->offset != 0 || prod(t->ndim, t->shape) != prod(t->ir_ndim, t->ir_shape))
        return -1;
    for (int a = 0; a < t->ir_ndim; a++)
        if (t->ir_shape[a] == t->shape[k] && st[a] == t->stride[k] && t->shape[k] > 1)
            return a;
    return -1;
}

/* Value v (a plain layer) times a[ch] plus b[ch] per channel of its layer, on top of what is pending. */
static nc_status compose_pending(cv *c, int v, const double *a, const double *b, int64_t C)
{
    vst *x = &c->vs[v];
    double *pa = nc_malloc((size_t)C * sizeof *pa), *pb = nc_malloc((size_t)C * sizeof *pb);
    if (!pa || !pb) {
        nc_free(pa);
        nc_free(pb);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int64_t k = 0; k < C; k++) {
        pa[k] = a[k] * (x->pa ? x->pa[k] : 1.0);
        pb[k] = a[k] * (x->pb ? x->pb[k] : 0.0) + b[k];
    }
    nc_free(x->pa);
    nc_free(x->pb);
    x->pa = pa;
    x->pb = pb;
    x->pn = C;
    return NC_OK;
}

/* Folds t's pending scalar factor into value v's pending synaptic layer or per-channel affine. */
static nc_status realise_scale(cv *c, int v, tview *t)
{
    if (t->scale == 1.0)
        return NC_OK;
    vst *x = &c->vs[v];
    nc_status st = NC_OK;
    if (x->kind == VS_LINEAR) {
        for (int64_t e = 0; e < x->ln->w->numel; e++)
            nc_f32(x->ln->w)[e] = (float)(t->scale * nc_f32(x->ln->w)[e]);
        for (int64_t e = 0; e < x->ln->b->numel; e++)
            nc_f32(x->ln->b)[e] = (float)(t->scale * nc_f32(x->ln->b)[e]);
    } else {
        if ((st = nc_cg_materialise(c, v)) != NC_OK)
            return st;
        int64_t C = nc_snn_layer_channels(&c->s->layers[x->layer]);
        double *ab = nc_malloc((size_t)C * 2 * sizeof *ab);
        if (!ab)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        for (int64_t k = 0; k < C; k++) {
            ab[k] = t->scale;
            ab[C + k] = 0.0;
        }
        st = compose_pending(c, v, ab, ab + C, C);
        nc_free(ab);
        if (st != NC_OK)
            return st;
    }
    t->scale = 1.0;
    if (c->tok->tv[v].set)
        c->tok->tv[v].scale = 1.0;
    return NC_OK;
}

/* The layer holding value v (view t), its pending layers and scalings appended. */
static nc_status held_layer(cv *c, const nc_node *n, int v, tview *t)
{
    vst *x = &c->vs[v];
    if (t->k || x->kind == VS_NONE)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input '%s' is not computed from the network input by "
                       "convertible ops", c->g->values[v].name);
    nc_status st = realise_scale(c, v, t);
    if (st != NC_OK || (st = nc_cg_materialise(c, v)) != NC_OK || (st = nc_cg_flush_pending(c, n, v)) != NC_OK)
        return st;
    if (x->pad[0] || x->pad[1])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input is zero-padded by a Pad node");
    return NC_OK;
}

/* Value v (view t) as a plain layer of shape `shape`: its pending layers
 * and scalings appended, then a Reshape (a view) where the offset or
 * shape differ. */
static nc_status layer_as(cv *c, const nc_node *n, int v, tview *t, int ndim, const int64_t *shape, int *layer)
{
    vst *x = &c->vs[v];
    nc_status st = held_layer(c, n, v, t);
    if (st != NC_OK)
        return st;
    const nc_snn_layer *L = &c->s->layers[x->layer];
    int same = t->offset == 0 && L->ndim == ndim;
    for (int d = 0; same && d < ndim; d++)
        same = L->shape[d] == shape[d];
    if (same) {
        *layer = x->layer;
        return NC_OK;
    }
    char base[300], buf[320];
    snprintf(base, sizeof base, "%.200s_view", c->g->values[v].name);
    st = nc_snn_add_reshape(c->s, x->layer, ndim, shape, t->offset, nc_cg_uniq(c, base, buf, sizeof buf), layer);
    return nc_cg_node_prefix(c, n, st);
}

/* The canonical layer shape of a dense view: its axes slowest first, a
 * pair (A, B) written (A, 1, B) so that per-token Linear layers (1×1
 * Conv2d) read it; the ONNX axis `first` (-1: any) must be the slowest. */
static nc_status canonical(const cv *c, const nc_node *n, const tview *t, int first, int *ndim, int64_t *shape)
{
    int ord[NC_MAX_DIMS];
    int r = dense_order(t, ord);
    if (r < 0 || (first >= 0 && t->shape[first] > 1 && ord[0] != first))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its input is laid out across its layer in a way no view "
                       "of the layer expresses (the SNN would have to move data)");
    if (r == 2) {
        shape[0] = t->shape[ord[0]];
        shape[1] = 1;
        shape[2] = t->shape[ord[1]];
        *ndim = 3;
        return NC_OK;
    }
    for (int a = 0; a < r; a++)
        shape[a] = t->shape[ord[a]];
    if (r == 0)
        shape[r++] = 1;
    *ndim = r;
    return NC_OK;
}

/* t, once layer_as gave its values a layer of their own of shape (ndim,
 * shape): a dense view keeps its strides there, with no offset. */
static void relaid(tview *t, int ndim, const int64_t *shape)
{
    t->offset = 0;
    t->ir_ndim = ndim;
    memcpy(t->ir_shape, shape, (size_t)ndim * sizeof *shape);
}

/* ---- routing: data movement as one Gather layer ---- */

/* What no view of a layer expresses (a Pad, a Slice of step 2, a Concat of
 * slices, torch.roll, Swin's window partition and its reverse, a reader
 * needing another layout) becomes a Gather layer (NC_SNN_GATHER): each
 * element one element of the layer it reads, or 0, by an index map made
 * here by running the op on indices (convert_route.h). Maps compose: a
 * Gather reading a Gather reads the first one's input instead, so a chain
 * of such ops is one Gather (the ones composed away are dropped at the end
 * of the walk). */

static int64_t *new_map(int64_t n)
{
    int64_t *m = nc_malloc((size_t)(n > 0 ? n : 1) * sizeof *m);
    if (!m)
        nc_errorf(NC_ERR_NOMEM, "out of memory");
    return m;
}

/* Value v's elements (view t, C order) as indices into layer *base: the
 * layer holding v, or its input where that layer is a Gather. */
static nc_status route_src(cv *c, const nc_node *n, int v, tview *t, int *base, int64_t **src)
{
    nc_status st = held_layer(c, n, v, t);
    if (st != NC_OK)
        return st;
    const nc_snn_layer *L = &c->s->layers[c->vs[v].layer];
    const int64_t *via = L->kind == NC_SNN_GATHER ? nc_i64(L->index) : NULL;
    if (!(*src = new_map(prod(t->ndim, t->shape))))
        return NC_ERR_NOMEM;
    nc_route_view(t->ndim, t->shape, t->stride, t->offset, via, *src);
    *base = via ? L->inputs[0] : c->vs[v].layer;
    return NC_OK;
}

/* The ONNX axes of size > 1, the last one first (channels slowest: a
 * per-token Linear layer reads the layer as (C, H, W)), into order. */
static int channels_first(int ndim, const int64_t *shape, int *order)
{
    int no = 0;
    if (ndim > 0 && shape[ndim - 1] > 1)
        order[no++] = ndim - 1;
    for (int d = 0; d < ndim - 1; d++)
        if (shape[d] > 1)
            order[no++] = d;
    return no;
}

/* Value v (ONNX shape (ndim, shape)) := elements src (C order) of layer
 * base, as a Gather whose layer holds the ONNX axes order[0..no) slowest
 * first (one or two axes as (A, 1, 1) and (A, 1, B)). */
static nc_status route(cv *c, const nc_node *n, int v, int base, const int64_t *src, int ndim, const int64_t *shape,
                       const int *order, int no)
{
    int64_t lsh[NC_MAX_DIMS], lst[NC_MAX_DIMS], sh[NC_MAX_DIMS];
    for (int k = 0; k < no; k++)
        lsh[k] = shape[order[k]];
    contiguous(no, lsh, lst);
    int nd = no > 2 ? no : 3;
    sh[0] = no > 0 ? lsh[0] : 1;
    sh[1] = no > 2 ? lsh[1] : 1;
    sh[2] = no == 2 ? lsh[1] : no > 2 ? lsh[2] : 1;
    for (int k = 3; k < no; k++)
        sh[k] = lsh[k];
    tview t = {0};
    t.ndim = ndim;
    memcpy(t.shape, shape, (size_t)ndim * sizeof *shape);
    for (int d = 0; d < ndim; d++)
        t.stride[d] = 1;
    for (int k = 0; k < no; k++)
        t.stride[order[k]] = lst[k];
    t.ir_ndim = nd;
    memcpy(t.ir_shape, sh, (size_t)nd * sizeof *sh);
    t.scale = 1.0;
    int64_t *ix = new_map(prod(ndim, shape));
    if (!ix)
        return NC_ERR_NOMEM;
    nc_route_lay(ndim, shape, t.stride, src, ix);
    char nbase[300], buf[320];
    int id;
    snprintf(nbase, sizeof nbase, "%.200s_route", n->name);
    nc_status st = nc_snn_add_gather(c->s, base, nd, sh, ix, nc_cg_uniq(c, nbase, buf, sizeof buf), &id);
    nc_free(ix);
    if (st != NC_OK)
        return nc_cg_node_prefix(c, n, st);
    nc_cg_set_layer(c, v, id);
    set_view(c, v, &t);
    return NC_OK;
}

/* The output value of n := map out (C order over its shape) of layer base, laid out channels first. */
static nc_status route_out(cv *c, const nc_node *n, int base, const int64_t *out)
{
    const vshape *o = b1(c, n->outputs[0]);
    int order[NC_MAX_DIMS], no = channels_first(o->ndim, o->shape, order);
    return route(c, n, n->outputs[0], base, out, o->ndim, o->shape, order, no);
}

/* Value v (view *t) moved into a Gather laid out as order[0..no) (route):
 * for a reader that needs a layout no view of v's layer has. *t becomes
 * v's new view. */
static nc_status relayout(cv *c, const nc_node *n, int v, tview *t, const int *order, int no)
{
    int base;
    int64_t *src = NULL;
    nc_status st = route_src(c, n, v, t, &base, &src);
    if (st == NC_OK)
        st = route(c, n, v, base, src, t->ndim, t->shape, order, no);
    nc_free(src);
    if (st == NC_OK)
        *t = view_of(c, v);
    return st;
}

/* 1 if canonical() takes t: a dense block of its layer, ONNX axis `first`
 * (-1: any) the slowest. */
static int canonical_ok(const tview *t, int first)
{
    int ord[NC_MAX_DIMS], r = dense_order(t, ord);
    return r >= 0 && !(first >= 0 && t->shape[first] > 1 && ord[0] != first);
}

/* canonical() of value v's view t, moved into a Gather first (channels
 * slowest, or `first`) where no view of its layer is canonical. */
static nc_status canonical_of(cv *c, const nc_node *n, int v, tview *t, int first, int *ndim, int64_t *shape)
{
    if (!canonical_ok(t, first)) {
        int order[NC_MAX_DIMS], no = 0;
        if (first >= 0 && t->shape[first] > 1)
            order[no++] = first;
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] > 1 && d != first)
                order[no++] = d;
        if (first < 0)
            no = channels_first(t->ndim, t->shape, order);
        nc_status st = relayout(c, n, v, t, order, no);
        if (st != NC_OK)
            return st;
    }
    return canonical(c, n, t, first, ndim, shape);
}

/* A Slice of any step (patch merging's step 2) or a Pad (step 1 from
 * −pad; zeros outside) of value vin: the output routed from its map. */
static nc_status window_route(cv *c, const nc_node *n, const int64_t *start, const int64_t *step)
{
    int vin = n->inputs[0], base;
    tview t = view_of(c, vin);
    const vshape *o = b1(c, n->outputs[0]);
    if (!o || o->ndim != t.ndim)
        return nc_cg_node_err(c, n, NC_ERR_INTERNAL, "no shape at batch 1");
    int64_t *src = NULL, *out = NULL;
    nc_status st = route_src(c, n, vin, &t, &base, &src);
    if (st == NC_OK && !(out = new_map(prod(o->ndim, o->shape))))
        st = NC_ERR_NOMEM;
    if (st == NC_OK) {
        nc_route_window(t.ndim, t.shape, o->shape, start, step, src, out);
        st = route_out(c, n, base, out);
    }
    nc_free(src);
    nc_free(out);
    return st;
}

/* Pad (constant zeros, any axes but the batch's, negative pads crop) of token values. */
static nc_status op_pad_route(cv *c, const nc_node *n)
{
    const nc_tensor *tp = tok_kin(c, n, 1);
    double value = 0.0;
    int r = view_of(c, n->inputs[0]).ndim;
    if (strcmp(nc_attr_str(n, "mode", "constant"), "constant") != 0 || n->opset < 11)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a constant-mode Pad of opset 11 or later is convertible");
    if (!tp || tp->dtype != NC_DTYPE_I64 || tp->numel != 2 * r || nc_node_has_input(n, 3) ||
        (nc_node_has_input(n, 2) && (!nc_const_scalar(tok_kin(c, n, 2), &value) || value != 0.0)))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only zero padding by constant pads over every axis is "
                              "convertible");
    if (nc_i64(tp)[0] || nc_i64(tp)[r])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "a Pad of the batch axis");
    int64_t start[NC_MAX_DIMS], step[NC_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        start[d] = -nc_i64(tp)[d];
        step[d] = 1;
    }
    return window_route(c, n, start, step);
}

/* Slice of constant bounds with steps other than 1 (patch merging's step 2, negative steps). */
static nc_status op_slice_route(cv *c, const nc_node *n, const nc_tensor *ts, const nc_tensor *ta, const nc_tensor *tp)
{
    tview t = view_of(c, n->inputs[0]);
    int64_t start[NC_MAX_DIMS] = {0}, step[NC_MAX_DIMS];
    for (int d = 0; d < t.ndim; d++)
        step[d] = 1;
    for (int64_t j = 0; j < ts->numel; j++) {
        int64_t ax = ta ? nc_i64(ta)[j] : j, p = tp ? nc_i64(tp)[j] : 1;
        ax = ax < 0 ? ax + t.ndim : ax;
        if (ax < 0 || ax >= t.ndim || p == 0)
            return nc_cg_node_err(c, n, NC_ERR_MODEL, "a Slice axis or step out of range");
        int64_t size = t.shape[ax], s = nc_i64(ts)[j];
        s = s < 0 ? s + size : s;
        s = p > 0 ? (s < 0 ? 0 : s > size ? size : s) : (s < 0 ? 0 : s > size - 1 ? size - 1 : s);
        start[ax] = s;
        step[ax] = p;
    }
    return window_route(c, n, start, step);
}

/* A Reshape no view expresses: the same elements in C order, routed. */
static nc_status op_reshape_route(cv *c, const nc_node *n, tview *t)
{
    int base;
    int64_t *src = NULL;
    nc_status st = route_src(c, n, n->inputs[0], t, &base, &src);
    if (st == NC_OK)
        st = route_out(c, n, base, src);
    nc_free(src);
    return st;
}

/* Concat of computed values along any axis (torch.roll's two slices, patch
 * merging's four) whose elements all come from one layer. */
static nc_status op_concat_route(cv *c, const nc_node *n)
{
    const vshape *o = b1(c, n->outputs[0]);
    int axis = (int)nc_attr_int(n, "axis", 0);
    axis = axis < 0 ? axis + o->ndim : axis;
    int64_t at = 0, *out = new_map(prod(o->ndim, o->shape));
    if (!out)
        return NC_ERR_NOMEM;
    int base = -1;
    nc_status st = NC_OK;
    for (int k = 0; st == NC_OK && k < n->n_inputs; k++) {
        int v = n->inputs[k], b;
        tview t = view_of(c, v);
        int64_t *src = NULL;
        if ((st = route_src(c, n, v, &t, &b, &src)) != NC_OK)
            break;
        if (base >= 0 && b != base)
            st = nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its inputs come from different layers ('%s' and '%s'): "
                                "only a Concat of parts of one layer is routed", c->s->layers[base].name,
                                c->s->layers[b].name);
        else
            nc_route_place(o->ndim, t.shape, o->shape, axis, at, src, out);
        base = b;
        at += t.shape[axis];
        nc_free(src);
    }
    if (st == NC_OK)
        st = route_out(c, n, base, out);
    nc_free(out);
    return st;
}

/* ---- constants ---- */

/* A layer holding constant values `vals` in shape (ndim, shape): an Affine
 * with zero weights (its bias the values) reading one value of the
 * network's input, then a Reshape. Every backend runs both kinds; the
 * layers are static, computed once a run. */
static nc_status const_layer(cv *c, const nc_node *n, const float *vals, int ndim, const int64_t *shape, int *id)
{
    struct nc_tok *T = c->tok;
    char base[300], buf[320];
    nc_status st = NC_OK;
    if (T->unit < 0) {
        int64_t one = 1;
        st = nc_snn_add_reshape(c->s, 0, 1, &one, 0, nc_cg_uniq(c, "input_unit", buf, sizeof buf), &T->unit);
        if (st != NC_OK)
            return nc_cg_node_prefix(c, n, st);
    }
    int64_t size = prod(ndim, shape), ws[2] = {size, 1};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 2, ws), *b = nc_tensor_new(NC_DTYPE_F32, 1, &size);
    if (!w || !b) {
        nc_tensor_free(w);
        nc_tensor_free(b);
        return NC_ERR_NOMEM;
    }
    memcpy(nc_f32(b), vals, (size_t)size * sizeof *vals);
    int flat;
    snprintf(base, sizeof base, "%.200s_const", n->name);
    st = nc_snn_add_affine(c->s, T->unit, w, b, nc_cg_uniq(c, base, buf, sizeof buf), &flat);
    nc_tensor_free(w);
    nc_tensor_free(b);
    if (st == NC_OK)
        st = nc_snn_add_reshape(c->s, flat, ndim, shape, 0, nc_cg_uniq(c, base, buf, sizeof buf), id);
    return nc_cg_node_prefix(c, n, st);
}

/* The constant k broadcast (right-aligned) over view t, written at each
 * element's place in t's layer: full[ir size], NAN where t does not reach. */
static nc_status spread(const cv *c, const nc_node *n, const tview *t, const nc_tensor *k, float *full)
{
    int64_t irsize = prod(t->ir_ndim, t->ir_shape), numel = prod(t->ndim, t->shape);
    if (k->ndim > t->ndim)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its constant has more axes than its input");
    for (int d = 0; d < k->ndim; d++) {
        int64_t kd = k->shape[d], td = t->shape[t->ndim - k->ndim + d];
        if (kd != 1 && kd != td)
            return nc_cg_node_err(c, n, NC_ERR_SHAPE, "its constant does not broadcast over its input");
    }
    for (int64_t e = 0; e < irsize; e++)
        full[e] = NAN;
    for (int64_t e = 0; e < numel; e++) {
        int64_t rem = e, pos = t->offset, ki = 0, kstride = 1;
        for (int d = t->ndim - 1; d >= 0; d--) {
            int64_t i = rem % t->shape[d];
            rem /= t->shape[d];
            pos += i * t->stride[d];
            int kd = d - (t->ndim - k->ndim);
            if (kd >= 0) {
                ki += (k->shape[kd] == 1 ? 0 : i) * kstride;
                kstride *= k->shape[kd];
            }
        }
        full[pos] = k->dtype == NC_DTYPE_F32 ? nc_f32(k)[ki] : (float)nc_i64(k)[ki];
    }
    return NC_OK;
}

/* ---- view ops ---- */

/* New strides for t reshaped to (ndim, shape) without moving data (numpy's rule); 0 if impossible. */
static int reshape_view(tview *t, int ndim, const int64_t *shape)
{
    int64_t od[NC_MAX_DIMS], os[NC_MAX_DIMS], nd[NC_MAX_DIMS], ns[NC_MAX_DIMS];
    int on = 0, nn = 0, nmap[NC_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != 1) {
            od[on] = t->shape[d];
            os[on++] = t->stride[d];
        }
    for (int d = 0; d < ndim; d++)
        if (shape[d] != 1) {
            nmap[nn] = d;
            nd[nn++] = shape[d];
        }
    int oi = 0, ni = 0;
    while (ni < nn && oi < on) {
        int nj = ni + 1, oj = oi + 1;
        int64_t np = nd[ni], op = od[oi];
        while (np != op) {
            if (np < op) {
                if (nj >= nn)
                    return 0;
                np *= nd[nj++];
            } else {
                if (oj >= on)
                    return 0;
                op *= od[oj++];
            }
        }
        for (int ok = oi; ok < oj - 1; ok++)
            if (os[ok] != od[ok + 1] * os[ok + 1])
                return 0;
        ns[nj - 1] = os[oj - 1];
        for (int nk = nj - 1; nk > ni; nk--)
            ns[nk - 1] = ns[nk] * nd[nk];
        ni = nj;
        oi = oj;
    }
    if (ni != nn || oi != on)
        return 0;
    int64_t stride[NC_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        stride[d] = 1;
    for (int k = 0; k < nn; k++)
        stride[nmap[k]] = ns[k];
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    memcpy(t->stride, stride, (size_t)ndim * sizeof *stride);
    return 1;
}

/* Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity, Dropout, Cast, Slice: a new view, no layer. */
static nc_status op_view(cv *c, const nc_node *n)
{
    int vin = n->inputs[0], vout = n->outputs[0];
    tview t = view_of(c, vin);
    const vshape *o = b1(c, vout);
    if (!o)
        return nc_cg_node_err(c, n, NC_ERR_INTERNAL, "no shape at batch 1");
    if (tok_is_op(n, "Transpose")) {
        const int64_t *perm = NULL;
        int np = nc_attr_ints(n, "perm", &perm);
        tview u = t;
        for (int d = 0; d < t.ndim; d++) {
            int p = np == t.ndim ? (int)perm[d] : t.ndim - 1 - d;
            u.shape[d] = t.shape[p];
            u.stride[d] = t.stride[p];
        }
        t = u;
    } else if (tok_is_op(n, "Slice")) {
        const nc_tensor *ts = tok_kin(c, n, 1), *te = tok_kin(c, n, 2), *ta = tok_kin(c, n, 3), *tp = tok_kin(c, n, 4);
        if (!ts || !te || ts->dtype != NC_DTYPE_I64 || te->numel != ts->numel || (nc_node_has_input(n, 3) && !ta) ||
            (nc_node_has_input(n, 4) && !tp) || (ta && ta->numel != ts->numel) || (tp && tp->numel != ts->numel))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a Slice with constant bounds is convertible");
        for (int64_t j = 0; j < ts->numel; j++) {
            int64_t ax = ta ? nc_i64(ta)[j] : j, step = tp ? nc_i64(tp)[j] : 1;
            ax = ax < 0 ? ax + t.ndim : ax;
            if (step != 1 && !t.k)
                return op_slice_route(c, n, ts, ta, tp);
            if (ax < 0 || ax >= t.ndim || step != 1)
                return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a Slice of step 1 is convertible");
            int64_t size = t.shape[ax], s = nc_i64(ts)[j], e = nc_i64(te)[j];
            s = s < 0 ? s + size : s;
            e = e < 0 ? e + size : e;
            s = s < 0 ? 0 : s > size ? size : s;
            e = e < s ? s : e > size ? size : e;
            t.offset += s * t.stride[ax];
            t.shape[ax] = e - s;
        }
    } else if (!reshape_view(&t, o->ndim, o->shape)) {
        if (!t.k) /* values from different blocks of the layer: routed */
            return op_reshape_route(c, n, &t);
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "this reshape regroups values that do not lie in one "
                       "block of the layer that holds them: no view of the layer expresses it");
    }
    if (t.ndim != o->ndim || memcmp(t.shape, o->shape, (size_t)t.ndim * sizeof *t.shape) != 0)
        return nc_cg_node_err(c, n, NC_ERR_INTERNAL, "view shape differs from the output's");
    nc_tensor *k = NULL;
    if (t.k) { /* a constant: the same values in the output's shape */
        if (tok_is_op(n, "Transpose") || tok_is_op(n, "Slice"))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "a %s of a constant expanded over the batch", n->op_type);
        if (!(k = nc_tensor_clone(t.k)))
            return NC_ERR_NOMEM;
        k->ndim = o->ndim;
        memcpy(k->shape, o->shape, (size_t)o->ndim * sizeof *k->shape);
    }
    t.k = k;
    nc_status st = t.k || c->vs[vin].kind == VS_NONE ? NC_OK : nc_cg_pass(c, n, vin, vout);
    if (st != NC_OK) {
        nc_tensor_free(k);
        return st;
    }
    set_view(c, vout, &t);
    return NC_OK;
}

/* Expand of a constant: the constant at batch 1, placed where it is read (Concat). */
static nc_status op_expand(cv *c, const nc_node *n)
{
    const nc_tensor *k = tok_kin(c, n, 0);
    const vshape *o = b1(c, n->outputs[0]);
    if (!k || k->dtype != NC_DTYPE_F32 || !o)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only an Expand of a constant is convertible");
    tview t = view_of(c, n->outputs[0]);
    nc_tensor *e = nc_tensor_new(NC_DTYPE_F32, o->ndim, o->shape);
    if (!e)
        return NC_ERR_NOMEM;
    tview whole = t;
    whole.ir_ndim = o->ndim;
    memcpy(whole.ir_shape, o->shape, (size_t)o->ndim * sizeof *o->shape);
    nc_status st = spread(c, n, &whole, k, nc_f32(e));
    if (st != NC_OK) {
        nc_tensor_free(e);
        return st;
    }
    t.k = e;
    set_view(c, n->outputs[0], &t);
    return NC_OK;
}

/* ---- synaptic layers ---- */

/* vout = x·W (+ b): x's last axis the features. W [in, out] (MatMul) or [out, in] (transposed). */
static nc_status linear(cv *c, const nc_node *n, int vin, int vout, const nc_tensor *W, int trans, double alpha,
                        const nc_tensor *bias, double beta)
{
    /* spikes, not graded values, into the Linear layer (as into a Conv or Gemm: convert_nonlinear.c),
       where the ANN value keeps its batch first and the layer's size per sample (calibration reads it
       so); a value whose batch axis a Transpose moved or merged (attention's heads joined back) stays
       graded */
    const nc_value *vv = &c->g->values[vin];
    int holder = nc_cv_peek_layer(c, vin), batch_first = vv->ndim >= 1 && holder >= 0;
    int64_t per_sample = 1;
    for (int d = 1; d < vv->ndim; d++) {
        batch_first &= vv->shape[d] > 0;
        per_sample *= vv->shape[d] > 0 ? vv->shape[d] : 1;
    }
    batch_first &= holder >= 0 && per_sample == nc_snn_layer_size(&c->s->layers[holder]);
    for (int i = 0; batch_first && i < n->n_inputs; i++)
        if (n->inputs[i] == vin) {
            nc_status sst = nc_nl_spike_input(c, n, i);
            if (sst != NC_OK)
                return sst;
            break;
        }
    tview t = view_of(c, vin);
    int last = t.ndim - 1;
    int64_t in = t.shape[last], out = trans ? W->shape[0] : W->shape[1];
    if ((trans ? W->shape[1] : W->shape[0]) != in)
        return nc_cg_node_err(c, n, NC_ERR_SHAPE, "its weight does not take %lld features", (long long)in);
    if (bias && bias->numel != 1 && bias->numel != out)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its bias has %lld values for %lld outputs", (long long)bias->numel,
                       (long long)out);
    int64_t ws[4] = {out, in, 1, 1};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 4, ws), *b = nc_tensor_new(NC_DTYPE_F32, 1, &out);
    if (!w || !b) {
        nc_tensor_free(w);
        nc_tensor_free(b);
        return NC_ERR_NOMEM;
    }
    double f = alpha * t.scale;
    for (int64_t o = 0; o < out; o++) {
        for (int64_t i = 0; i < in; i++)
            nc_f32(w)[o * in + i] = (float)(f * nc_f32(W)[trans ? o * in + i : i * out + o]);
        nc_f32(b)[o] = bias ? (float)(beta * nc_f32(bias)[bias->numel == 1 ? 0 : o]) : 0.0f;
    }
    t.scale = 1.0; /* in the weights */
    nc_conv2d_params cp = {{1, 1}, {0, 0}, {1, 1}, 1};
    nc_status st;
    int a = layer_axis(&t, last);
    if (a == 0 && t.ir_ndim == 3) { /* already (C, H, W): a pending a·x + b folds into the weights */
        st = nc_cg_pending_conv(c, n, vin, vout, w, b, &cp);
    } else {
        int nd, layer;
        int64_t sh[NC_MAX_DIMS];
        st = canonical_of(c, n, vin, &t, last, &nd, sh);
        if (st == NC_OK && nd != 3)
            st = nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "a Linear layer over a value of rank %d", nd);
        if (st == NC_OK)
            st = layer_as(c, n, vin, &t, nd, sh, &layer);
        if (st != NC_OK) {
            nc_tensor_free(w);
            nc_tensor_free(b);
            return st;
        }
        relaid(&t, nd, sh);
        nc_cg_set_layer(c, vout, layer);
        st = nc_cg_pending_conv(c, n, vout, vout, w, b, &cp);
    }
    if (st != NC_OK)
        return st;
    t.shape[last] = out;
    t.ir_shape[0] = out;
    set_view(c, vout, &t);
    return NC_OK;
}

static nc_status op_linear(cv *c, const nc_node *n)
{
    const nc_tensor *W = tok_kin(c, n, 1);
    if (!W || W->dtype != NC_DTYPE_F32 || W->ndim != 2)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its weight is not a constant float32 matrix");
    if (tok_is_op(n, "MatMul"))
        return linear(c, n, n->inputs[0], n->outputs[0], W, 0, 1.0, NULL, 1.0);
    const nc_tensor *B = tok_kin(c, n, 2);
    if (nc_attr_int(n, "transA", 0) || (nc_node_has_input(n, 2) && (!B || B->dtype != NC_DTYPE_F32)))
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only Gemm with transA = 0 and a constant bias is convertible");
    return linear(c, n, n->inputs[0], n->outputs[0], W, (int)nc_attr_int(n, "transB", 0), nc_attr_float(n, "alpha", 1.0f),
                  B, nc_attr_float(n, "beta", 1.0f));
}

/* ---- element-wise ops with a constant, residual Adds ---- */

static nc_status op_arith(cv *c, const nc_node *n)
{
    const nc_tensor *k0 = tok_kin(c, n, 0), *k1 = tok_kin(c, n, 1);
    int add = tok_is_op(n, "Add"), sub = tok_is_op(n, "Sub"), mul = tok_is_op(n, "Mul");
    if (n->n_inputs != 2)
        return nc_cg_node_err(c, n, NC_ERR_MODEL, "expected two inputs");
    nc_status st;
    if (!k0 && !k1) {
        if (!add && !mul)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "%s of two computed token values is not convertible",
                           n->op_type);
        tview a = view_of(c, n->inputs[0]), b = view_of(c, n->inputs[1]);
        int ord[NC_MAX_DIMS], same = 0;
        for (int pass = 0; pass < 2 && !same; pass++) {
            same = a.ndim == b.ndim && dense_order(&a, ord) >= 0 && dense_order(&b, ord) >= 0;
            for (int d = 0; same && d < a.ndim; d++)
                same = a.shape[d] == b.shape[d] && (a.shape[d] == 1 || a.stride[d] == b.stride[d]);
            if (same || pass || a.ndim != b.ndim)
                break;
            /* laid out differently: b routed into a's order (a dense), else both channels first */
            int no = dense_order(&a, ord);
            if (no < 0) {
                no = channels_first(a.ndim, a.shape, ord);
                if ((st = relayout(c, n, n->inputs[0], &a, ord, no)) != NC_OK)
                    return st;
            }
            if ((st = relayout(c, n, n->inputs[1], &b, ord, no)) != NC_OK)
                return st;
        }
        if (!same)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its two inputs are laid out differently in their layers");
        int nd = a.ir_ndim, from[2], id;
        int64_t sh[NC_MAX_DIMS];
        memcpy(sh, a.ir_shape, sizeof sh);
        if (a.offset || prod(a.ndim, a.shape) != prod(a.ir_ndim, a.ir_shape))
            if ((st = canonical(c, n, &a, -1, &nd, sh)) != NC_OK)
                return st;
        if ((st = layer_as(c, n, n->inputs[0], &a, nd, sh, &from[0])) != NC_OK ||
            (st = layer_as(c, n, n->inputs[1], &b, nd, sh, &from[1])) != NC_OK)
            return st;
        char buf[320];
        nc_nonlinear_params p = {.fn = NC_NL_MUL}; /* a gate: x ⊙ y of the two running means */
        if ((st = mul ? nc_snn_add_nonlinear(c->s, 2, from, &p, nc_cg_uniq(c, n->name, buf, sizeof buf), &id)
                      : nc_snn_add_add(c->s, 2, from, nc_cg_uniq(c, n->name, buf, sizeof buf), &id)) != NC_OK)
            return nc_cg_node_prefix(c, n, st);
        relaid(&a, nd, sh);
        a.scale = 1.0;
        nc_cg_set_layer(c, n->outputs[0], id);
        set_view(c, n->outputs[0], &a);
        return NC_OK;
    }
    if (k0 && !add && !mul && !sub)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "a constant divided by a computed value is not convertible");
    int vin = k0 ? n->inputs[1] : n->inputs[0];
    const nc_tensor *k = k0 ? k0 : k1;
    tview t = view_of(c, vin);
    double kv;
    if ((mul || tok_is_op(n, "Div")) && nc_const_scalar(k, &kv)) { /* kept pending: it may fold through a MatMul */
        if ((st = nc_cg_pass(c, n, vin, n->outputs[0])) != NC_OK)
            return st;
        t.scale *= mul ? kv : 1.0 / kv;
        set_view(c, n->outputs[0], &t);
        return NC_OK;
    }
    /* a constant along the channels (the last axis) that are not its layer's first axis, or one per element
       of a view that is not its whole layer: the value routed channels first (a Gather) so that it is */
    int along_last = k->ndim >= 1 && k->shape[k->ndim - 1] > 1 && k->numel == k->shape[k->ndim - 1];
    int partial = t.offset || prod(t.ndim, t.shape) != prod(t.ir_ndim, t.ir_shape);
    if (!t.k && c->vs[vin].kind != VS_NONE &&
        ((along_last && layer_axis(&t, t.ndim - 1) != 0) || (!along_last && k->numel > 1 && partial))) {
        int order[NC_MAX_DIMS], no = channels_first(t.ndim, t.shape, order);
        if ((st = relayout(c, n, vin, &t, order, no)) != NC_OK)
            return st;
    }
    int64_t irsize = prod(t.ir_ndim, t.ir_shape), C = t.ir_ndim ? t.ir_shape[0] : 1, per = irsize / C;
    float *full = nc_malloc((size_t)irsize * sizeof *full);
    double *ab = nc_malloc((size_t)C * 2 * sizeof *ab);
    if (!full || !ab) {
        nc_free(full);
        nc_free(ab);
        return NC_ERR_NOMEM;
    }
    st = spread(c, n, &t, k, full);
    int per_channel = 1;
    for (int64_t ch = 0; st == NC_OK && ch < C; ch++) {
        double v = NAN;
        for (int64_t e = 0; e < per && per_channel; e++) {
            float f = full[ch * per + e];
            if (isnan(f))
                continue;
            if (isnan(v))
                v = f;
            per_channel = v == f;
        }
        double a = 1.0, b = 0.0;
        if (!isnan(v)) {
            if (add)
                b = v;
            else if (sub)
                a = k0 ? -1.0 : 1.0, b = k0 ? v : -v;
            else if (mul)
                a = v;
            else
                a = 1.0 / v;
        }
        ab[ch] = a * t.scale;
        ab[C + ch] = b;
    }
    if (st == NC_OK && per_channel) {
        st = nc_cg_apply_affine(c, n, vin, n->outputs[0], ab, ab + C, C);
        t.scale = 1.0;
        if (st == NC_OK)
            set_view(c, n->outputs[0], &t);
    } else if (st == NC_OK && (add || (sub && !k0)) && t.offset == 0 && prod(t.ndim, t.shape) == irsize) {
        /* a constant per element (position embeddings): a constant layer added in */
        for (int64_t e = 0; e < irsize; e++)
            full[e] = sub ? -full[e] : full[e];
        int from[2], id;
        char buf[320];
        if ((st = layer_as(c, n, vin, &t, t.ir_ndim, t.ir_shape, &from[0])) == NC_OK &&
            (st = const_layer(c, n, full, t.ir_ndim, t.ir_shape, &from[1])) == NC_OK &&
            (st = nc_cg_node_prefix(c, n, nc_snn_add_add(c->s, 2, from, nc_cg_uniq(c, n->name, buf, sizeof buf),
                                                         &id))) == NC_OK) {
            nc_cg_set_layer(c, n->outputs[0], id);
            set_view(c, n->outputs[0], &t);
        }
    } else if (st == NC_OK) {
        st = nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "%s by a constant that differs along the tokens is not convertible "
                     "(only Add and Sub of one is)", n->op_type);
    }
    nc_free(full);
    nc_free(ab);
    return st;
}

/* ---- Nonlinear layers ---- */

/* vout = f(vin) for a Nonlinear f of one input; axis: the ONNX axis of LayerNorm and Softmax, else -1. */
static nc_status nonlinear1(cv *c, const nc_node *n, int vin, int vout, nc_nonlinear_params p, int axis)
{
    tview t = view_of(c, vin);
    int nd = t.ir_ndim, layer, id;
    int64_t sh[NC_MAX_DIMS];
    memcpy(sh, t.ir_shape, sizeof sh);
    nc_status st = NC_OK;
    if (axis >= 0) {
        int a = layer_axis(&t, axis);
        if (a < 0) {
            if ((st = canonical_of(c, n, vin, &t, -1, &nd, sh)) != NC_OK)
                return st;
            tview u = t;
            relaid(&u, nd, sh);
            int64_t st2[NC_MAX_DIMS];
            contiguous(nd, sh, st2);
            for (a = 0; a < nd && !(sh[a] == t.shape[axis] && st2[a] == t.stride[axis]); a++)
                ;
            if (a == nd)
                return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its axis is not an axis of its input's layer");
        }
        p.axis = a;
    } else if (t.offset || prod(t.ndim, t.shape) != prod(t.ir_ndim, t.ir_shape)) {
        if ((st = canonical_of(c, n, vin, &t, -1, &nd, sh)) != NC_OK)
            return st;
    }
    if ((st = layer_as(c, n, vin, &t, nd, sh, &layer)) != NC_OK)
        return st;
    char buf[320];
    if ((st = nc_snn_add_nonlinear(c->s, 1, &layer, &p, nc_cg_uniq(c, n->name, buf, sizeof buf), &id)) != NC_OK)
        return nc_cg_node_prefix(c, n, st);
    relaid(&t, nd, sh);
    nc_cg_set_layer(c, vout, id);
    set_view(c, vout, &t);
    return NC_OK;
}

static nc_status op_layernorm(cv *c, const nc_node *n)
{
    int axis = (int)nc_attr_int(n, "axis", -1), rank = view_of(c, n->inputs[0]).ndim;
    axis = axis < 0 ? axis + rank : axis;
    if (axis != rank - 1)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a LayerNormalization over the last axis is convertible");
    nc_nonlinear_params p = {.fn = NC_NL_LAYERNORM, .eps = nc_attr_float(n, "epsilon", 1e-5f)};
    int mid = n->outputs[0];
    nc_status st = nonlinear1(c, n, n->inputs[0], mid, p, axis);
    const nc_tensor *g = tok_kin(c, n, 1), *b = tok_kin(c, n, 2);
    if (st != NC_OK || (!g && !b))
        return st;
    tview t = view_of(c, mid);
    int64_t C = t.ir_shape[0];
    double *ab = nc_malloc((size_t)C * 2 * sizeof *ab);
    float *full = nc_malloc((size_t)prod(t.ir_ndim, t.ir_shape) * sizeof *full);
    if (!ab || !full) {
        nc_free(ab);
        nc_free(full);
        return NC_ERR_NOMEM;
    }
    int64_t per = prod(t.ir_ndim, t.ir_shape) / C;
    for (int pass = 0; pass < 2 && st == NC_OK; pass++) {
        const nc_tensor *k = pass ? b : g;
        for (int64_t ch = 0; ch < C; ch++)
            ab[pass * C + ch] = pass ? 0.0 : 1.0;
        if (k && (st = spread(c, n, &t, k, full)) == NC_OK)
            for (int64_t ch = 0; ch < C; ch++)
                ab[pass * C + ch] = full[ch * per];
    }
    if (st == NC_OK && layer_axis(&t, t.ndim - 1) != 0)
        st = nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its scale and bias are not one value per channel of its layer");
    if (st == NC_OK)
        st = compose_pending(c, mid, ab, ab + C, C);
    nc_free(ab);
    nc_free(full);
    return st;
}

/* MatMul of two computed values: a Nonlinear MatMul over the last two axes
 * of layers laid out (…, m, k) or (…, k, m) (x) and (…, k, n) or (…, n, k)
 * (y). It computes Yᵀ·Xᵀ (a (…, n, m) layer) instead where y holds n before k,
 * so that what a head computes stays channels first (A·V as (…, d, N)). */
static nc_status op_matmul2(cv *c, const nc_node *n)
{
    int vx = n->inputs[0], vy = n->inputs[1], vout = n->outputs[0];
    tview x = view_of(c, vx), y = view_of(c, vy), o = view_of(c, vout);
    if (x.ndim < 2 || y.ndim < 2 || x.ndim != o.ndim || y.ndim != o.ndim)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a MatMul of two values of the same rank (>= 2) is convertible");
    int r = o.ndim;
    /* each operand in the layout "leading axes in order, then its last two in either order" */
    tview *ops[2] = {&x, &y};
    int trans[2], nd[2], from[2];
    int64_t sh[2][NC_MAX_DIMS];
    for (int q = 0; q < 2; q++) {
        tview *t = ops[q];
        int ord[NC_MAX_DIMS], cnt = dense_order(t, ord), outer = cnt >= 0;
        for (int d = 0, lead = 0; outer && d < r - 2; d++)
            if (t->shape[d] > 1)
                outer = ord[lead++] == d;
        if (!outer && vx != vy) { /* windows and heads inside the tokens (Swin): routed into that layout */
            int order[NC_MAX_DIMS], no = 0;
            for (int d = 0; d < r; d++)
                if (t->shape[d] > 1)
                    order[no++] = d;
            nc_status rst = relayout(c, n, n->inputs[q], t, order, no);
            if (rst != NC_OK)
                return rst;
            cnt = dense_order(t, ord);
        }
        if (cnt < 0)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "input %d is not a dense block of its layer", q);
        int lead = 0;
        for (int d = 0; d < r - 2; d++)
            if (t->shape[d] > 1) {
                if (ord[lead] != d)
                    return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "input %d's leading axes are not outermost in its "
                                   "layer", q);
                lead++;
            }
        int64_t st[2] = {t->stride[r - 2], t->stride[r - 1]};
        trans[q] = t->shape[r - 2] > 1 && t->shape[r - 1] > 1 ? st[0] < st[1] : 0;
        nd[q] = 0;
        for (int d = 0; d < r - 2; d++)
            if (t->shape[d] > 1)
                sh[q][nd[q]++] = t->shape[d];
        sh[q][nd[q]++] = t->shape[trans[q] ? r - 1 : r - 2];
        sh[q][nd[q]++] = t->shape[trans[q] ? r - 2 : r - 1];
    }
    if (nd[0] != nd[1])
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "its inputs' leading axes differ (broadcasting is not convertible)");
    int one_head = nd[0] == 2;
    for (int q = 0; one_head && q < 2; q++) { /* one head: (1, m, k), so the product's scale can be a layer */
        memmove(sh[q] + 1, sh[q], 2 * sizeof sh[q][0]);
        sh[q][0] = 1;
        nd[q] = 3;
    }
    int flip = trans[1]; /* y holds n before k: compute Yᵀ·Xᵀ */
    double scale = x.scale * y.scale; /* a product's factors move to its output */
    x.scale = y.scale = 1.0;
    nc_status st;
    if ((st = layer_as(c, n, vx, &x, nd[0], sh[0], &from[0])) != NC_OK ||
        (st = layer_as(c, n, vy, &y, nd[1], sh[1], &from[1])) != NC_OK)
        return st;
    nc_nonlinear_params p = {.fn = NC_NL_MATMUL};
    int in[2];
    if (flip) {
        in[0] = from[1];
        in[1] = from[0];
        p.trans_x = !trans[1];
        p.trans_y = !trans[0];
    } else {
        in[0] = from[0];
        in[1] = from[1];
        p.trans_x = trans[0];
        p.trans_y = trans[1];
    }
    char buf[320];
    int id;
    if ((st = nc_snn_add_nonlinear(c->s, 2, in, &p, nc_cg_uniq(c, n->name, buf, sizeof buf), &id)) != NC_OK)
        return nc_cg_node_prefix(c, n, st);
    const nc_snn_layer *L = &c->s->layers[id];
    o.ir_ndim = L->ndim;
    memcpy(o.ir_shape, L->shape, (size_t)L->ndim * sizeof *L->shape);
    int64_t lst[NC_MAX_DIMS];
    contiguous(L->ndim, L->shape, lst);
    int la = L->ndim - 2; /* the layer's leading axes: the ONNX ones of size > 1 (or one of size 1) */
    for (int d = 0; d < r - 2; d++)
        la -= o.shape[d] > 1;
    for (int d = 0; d < r - 2; d++)
        o.stride[d] = o.shape[d] > 1 ? lst[la++] : 1;
    int last = L->ndim - 1;
    o.stride[r - 2] = flip ? lst[last] : lst[last - 1];
    o.stride[r - 1] = flip ? lst[last - 1] : lst[last];
    o.offset = 0;
    o.scale = scale;
    o.k = NULL;
    nc_cg_set_layer(c, vout, id);
    set_view(c, vout, &o);
    return NC_OK;
}

/* ---- the class token, the readout token ---- */

/* Concat of one computed value and constants along an axis that is the
 * last of its (C, 1, N) layer: a depthwise Conv2d of kernel (1, K) with
 * padding places the value's tokens (its one non-zero tap) and leaves
 * zeros where the constants go, which a constant layer adds in. */
static nc_status op_concat(cv *c, const nc_node *n)
{
    const vshape *o = b1(c, n->outputs[0]);
    int axis = (int)nc_attr_int(n, "axis", 0), vin = -1;
    axis = axis < 0 ? axis + o->ndim : axis;
    int64_t before = 0, after = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        int v = n->inputs[i];
        int computed = !c->g->values[v].constant && !(c->tok->tv[v].set && c->tok->tv[v].k);
        if (computed && vin >= 0)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "a Concat of two computed token values is not convertible");
        if (computed)
            vin = v;
        else
            *(vin < 0 ? &before : &after) += b1(c, v)->shape[axis];
    }
    if (vin < 0)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "no input is computed");
    tview t = view_of(c, vin);
    int ord[NC_MAX_DIMS], cnt = dense_order(&t, ord);
    if (cnt != 2 || ord[1] != axis)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a Concat along the token axis of (tokens, channels) values "
                       "is convertible");
    int64_t C = t.shape[ord[0]], N = t.shape[axis], sh[3] = {C, 1, N};
    int layer;
    nc_status st = layer_as(c, n, vin, &t, 3, sh, &layer);
    if (st != NC_OK)
        return st;
    int64_t p = before > after ? before : after, K = 2 * p + 1 - before - after, ws[4] = {C, 1, 1, K};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 4, ws), *b = nc_tensor_new(NC_DTYPE_F32, 1, &C);
    if (!w || !b) {
        nc_tensor_free(w);
        nc_tensor_free(b);
        return NC_ERR_NOMEM;
    }
    for (int64_t ch = 0; ch < C; ch++)
        nc_f32(w)[ch * K + (p - before)] = 1.0f;
    nc_conv2d_params cp = {{1, 1}, {0, p}, {1, 1}, C};
    char buf[320];
    int placed, id;
    st = nc_snn_add_conv2d(c->s, layer, w, b, &cp, nc_cg_uniq(c, n->name, buf, sizeof buf), &placed);
    nc_tensor_free(w);
    nc_tensor_free(b);
    if (st != NC_OK)
        return nc_cg_node_prefix(c, n, st);
    /* the output's view: channels slowest, tokens along the layer's last axis */
    tview u = view_of(c, n->outputs[0]);
    int64_t Nt = N + before + after;
    u.ir_ndim = 3;
    u.ir_shape[0] = C;
    u.ir_shape[1] = 1;
    u.ir_shape[2] = Nt;
    for (int d = 0; d < u.ndim; d++)
        u.stride[d] = d == axis ? 1 : u.shape[d] > 1 ? Nt : 1;
    u.offset = 0;
    u.scale = 1.0;
    /* the constants, at their places */
    float *full = nc_calloc((size_t)(C * Nt), sizeof *full), *part = nc_malloc((size_t)(C * Nt) * sizeof *part);
    if (!full || !part) {
        nc_free(full);
        nc_free(part);
        return NC_ERR_NOMEM;
    }
    int64_t at = 0;
    for (int i = 0; i < n->n_inputs && st == NC_OK; i++) {
        int v = n->inputs[i];
        const nc_tensor *k = c->g->values[v].constant ? c->g->values[v].constant : c->tok->tv[v].k;
        int64_t len = b1(c, v)->shape[axis];
        if (k) {
            tview kv = u;
            kv.shape[axis] = len;
            kv.offset = at;
            if ((st = spread(c, n, &kv, k, part)) == NC_OK)
                for (int64_t e = 0; e < C * Nt; e++)
                    full[e] += isnan(part[e]) ? 0.0f : part[e];
        }
        at += len;
    }
    int from[2] = {placed, -1};
    if (st == NC_OK && (st = const_layer(c, n, full, 3, u.ir_shape, &from[1])) == NC_OK &&
        (st = nc_cg_node_prefix(c, n, nc_snn_add_add(c->s, 2, from, nc_cg_uniq(c, n->name, buf, sizeof buf), &id))) ==
            NC_OK) {
        nc_cg_set_layer(c, n->outputs[0], id);
        set_view(c, n->outputs[0], &u);
    }
    nc_free(full);
    nc_free(part);
    return st;
}

/* vout, held by an (R, 1, 1) layer, is t without its fastest axis `axis`
 * (kept as size 1 with keep): a flat layer of R values, which
 * convert_graph.c reads as it is where vout is (batch, R). */
static nc_status reduced(cv *c, const nc_node *n, int vout, const tview *t, int axis, int keep)
{
    char buf[320];
    int id;
    nc_status st = nc_cg_materialise(c, vout);
    if (st != NC_OK)
        return st;
    if ((st = nc_snn_add_flatten(c->s, c->vs[vout].layer, nc_cg_uniq(c, n->name, buf, sizeof buf), &id)) != NC_OK)
        return nc_cg_node_prefix(c, n, st);
    nc_cg_set_layer(c, vout, id);
    tview u = view_of(c, vout);
    int64_t N = t->shape[axis];
    for (int d = 0, e = 0; d < t->ndim; d++) {
        if (d == axis && !keep)
            continue;
        u.stride[e++] = d == axis ? 1 : t->stride[d] / N;
    }
    u.ir_ndim = 1;
    u.ir_shape[0] = prod(t->ndim, t->shape) / N;
    u.offset = 0;
    u.scale = 1.0;
    set_view(c, vout, &u);
    return NC_OK;
}

/* Gather of one index along an axis that is the last of the value's (R, 1, N)
 * layer: a depthwise Conv2d of kernel (1, N) whose one tap is the index. */
static nc_status op_gather(cv *c, const nc_node *n)
{
    const nc_tensor *ix = tok_kin(c, n, 1);
    int vin = n->inputs[0], vout = n->outputs[0];
    tview t = view_of(c, vin);
    int axis = (int)nc_attr_int(n, "axis", 0);
    axis = axis < 0 ? axis + t.ndim : axis;
    int64_t idx;
    if (!ix || ix->dtype != NC_DTYPE_I64 || ix->numel != 1 || ix->ndim != 0)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a Gather of one constant index is convertible");
    idx = nc_i64(ix)[0];
    int64_t N = t.shape[axis];
    idx = idx < 0 ? idx + N : idx;
    int ord[NC_MAX_DIMS], cnt = dense_order(&t, ord);
    if (idx >= 0 && idx < N && !t.k && (cnt < 1 || ord[cnt - 1] != axis)) { /* Swin's qkv[0]: a view without the axis */
        t.offset += idx * t.stride[axis];
        for (int d = axis; d + 1 < t.ndim; d++) {
            t.shape[d] = t.shape[d + 1];
            t.stride[d] = t.stride[d + 1];
        }
        t.ndim--;
        nc_status st = c->vs[vin].kind == VS_NONE ? NC_OK : nc_cg_pass(c, n, vin, vout);
        if (st == NC_OK)
            set_view(c, vout, &t);
        return st;
    }
    if (cnt < 1 || ord[cnt - 1] != axis || idx < 0 || idx >= N)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a Gather along the fastest axis of its input's layer (the "
                       "tokens) is convertible");
    int64_t R = prod(t.ndim, t.shape) / N, sh[3] = {R, 1, N}, ws[4] = {R, 1, 1, N};
    nc_tensor *w = nc_tensor_new(NC_DTYPE_F32, 4, ws), *b = nc_tensor_new(NC_DTYPE_F32, 1, &R);
    if (!w || !b) {
        nc_tensor_free(w);
        nc_tensor_free(b);
        return NC_ERR_NOMEM;
    }
    for (int64_t r = 0; r < R; r++)
        nc_f32(w)[r * N + idx] = (float)t.scale;
    nc_conv2d_params cp = {{1, 1}, {0, 0}, {1, 1}, R};
    nc_status st;
    int same = t.ir_ndim == 3 && t.ir_shape[0] == R && t.ir_shape[1] == 1 && t.ir_shape[2] == N && t.offset == 0;
    t.scale = 1.0; /* in the weights */
    if (same) {
        st = nc_cg_pending_conv(c, n, vin, vout, w, b, &cp);
    } else {
        int layer;
        if ((st = layer_as(c, n, vin, &t, 3, sh, &layer)) != NC_OK) {
            nc_tensor_free(w);
            nc_tensor_free(b);
            return st;
        }
        nc_cg_set_layer(c, vout, layer);
        st = nc_cg_pending_conv(c, n, vout, vout, w, b, &cp);
    }
    if (st != NC_OK)
        return st;
    return reduced(c, n, vout, &t, axis, 0);
}

/* ReduceMean over the tokens (a ViT without class token pools them): a
 * Pool2d of kernel (1, N) and scale 1/N over the value's (R, 1, N) layer. */
static nc_status op_token_mean(cv *c, const nc_node *n)
{
    int vin = n->inputs[0], vout = n->outputs[0];
    tview t = view_of(c, vin);
    const int64_t *ax = NULL;
    int na = nc_attr_ints(n, "axes", &ax), ord[NC_MAX_DIMS], cnt = dense_order(&t, ord);
    const nc_tensor *ta = tok_kin(c, n, 1);
    if (na < 0 && ta && ta->dtype == NC_DTYPE_I64) {
        ax = nc_i64(ta);
        na = (int)ta->numel;
    }
    int axis = na == 1 ? (int)(ax[0] < 0 ? ax[0] + t.ndim : ax[0]) : -1;
    if (axis < 0 || axis >= t.ndim || cnt < 1 || ord[cnt - 1] != axis)
        return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "only a mean over one axis that is the fastest of its input's "
                       "layer (the tokens) is convertible");
    int64_t N = t.shape[axis], R = prod(t.ndim, t.shape) / N, sh[3] = {R, 1, N}, k[2] = {1, N}, p[2] = {0, 0};
    int layer, id;
    char buf[320];
    nc_status st = layer_as(c, n, vin, &t, 3, sh, &layer);
    if (st != NC_OK || (st = nc_snn_add_pool2d(c->s, layer, k, k, p, (float)(1.0 / (double)N),
                                               nc_cg_uniq(c, n->name, buf, sizeof buf), &id)) != NC_OK)
        return nc_cg_node_prefix(c, n, st);
    nc_cg_set_layer(c, vout, id);
    return reduced(c, n, vout, &t, axis, nc_attr_int(n, "keepdims", 1) != 0);
}

/* ---- dispatch ---- */

static int reads_view(const cv *c, const nc_node *n)
{
    for (int j = 0; c->tok && j < n->n_inputs; j++)
        if (n->inputs[j] >= 0 && c->tok->tv[n->inputs[j]].set)
            return 1;
    return 0;
}

/* An element-wise op with a constant other than one value per channel on a
 * value of rank >= 3 (a channels-last input (N, H, W, C), Swin's; its
 * attention mask over (windows, heads, N, N)): taken here, where values
 * are routed channels first or constants added as layers. */
static int channels_last_const(const cv *c, const nc_node *n)
{
    if (!(tok_is_op(n, "Add") || tok_is_op(n, "Sub") || tok_is_op(n, "Mul") || tok_is_op(n, "Div")) || n->n_inputs != 2)
        return 0;
    const nc_tensor *k = tok_kin(c, n, 1) ? tok_kin(c, n, 1) : tok_kin(c, n, 0);
    int v = tok_kin(c, n, 1) ? n->inputs[0] : n->inputs[1];
    const nc_value *x = &c->g->values[v];
    if (!k || (tok_kin(c, n, 0) && tok_kin(c, n, 1)) || x->ndim < 3 || c->vs[v].kind != VS_LAYER)
        return 0;
    int64_t C = nc_snn_layer_channels(&c->s->layers[c->vs[v].layer]);
    int per_channel = 1; /* one value per channel of a (N, C, …) value: convert_graph.c's */
    for (int d = 0; d < k->ndim; d++) {
        int at = x->ndim - k->ndim + d;
        per_channel &= k->shape[d] == 1 || (at == 1 && k->shape[d] == C);
    }
    return k->numel > 1 && !per_channel;
}

int nc_tok_takes(const cv *c, int i)
{
    const nc_node *n = &c->g->nodes[i];
    int nodes[NC_TOK_LN_NODES];
    double eps;
    return reads_view(c, n) || channels_last_const(c, n) || nc_tok_token_reshape(c, n) || tok_is_op(n, "Transpose") || tok_is_op(n, "Expand") ||
           tok_is_op(n, "LayerNormalization") || nc_tok_data_gather(c, n) || nc_tok_inner_softmax(c, n) ||
           ((tok_is_op(n, "MatMul") || tok_is_op(n, "Gemm")) && !tok_kin(c, n, 1)) || nc_tok_ln_match(c, i, nodes, &eps) >= 0 ||
           nc_tok_gelu_match(c, i, nodes) >= 0;
}

nc_status nc_tok_convert(cv *c, int i)
{
    const nc_node *n = &c->g->nodes[i];
    nc_status st = tok_state(c);
    if (st != NC_OK)
        return st;
    for (int j = 0; j < n->n_inputs + n->n_outputs; j++) {
        int v = j < n->n_inputs ? n->inputs[j] : n->outputs[j - n->n_inputs];
        if (v >= 0 && !c->g->values[v].constant && (!b1(c, v) || b1(c, v)->ndim < 1))
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "the shape of '%s' is not known at batch 1",
                           c->g->values[v].name);
    }
    int nodes[NC_TOK_LN_NODES], out;
    double eps;
    if ((out = nc_tok_ln_match(c, i, nodes, &eps)) >= 0) {
        nc_nonlinear_params p = {.fn = NC_NL_LAYERNORM, .eps = (float)eps};
        st = nonlinear1(c, n, n->inputs[0], out, p, view_of(c, n->inputs[0]).ndim - 1);
        for (int k = 0; st == NC_OK && k < NC_TOK_LN_NODES; k++)
            c->done[nodes[k]] = 1;
        return st;
    }
    if ((out = nc_tok_gelu_match(c, i, nodes)) >= 0) {
        nc_nonlinear_params p = {.fn = NC_NL_GELU};
        st = nonlinear1(c, n, n->inputs[0], out, p, -1);
        for (int k = 0; st == NC_OK && k < NC_TOK_GELU_NODES; k++)
            c->done[nodes[k]] = 1;
        return st;
    }
    const char *op = n->op_type;
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity",
                                        "Dropout", "Cast", "Slice", NULL};
    for (int k = 0; views[k]; k++)
        if (strcmp(op, views[k]) == 0)
            return op_view(c, n);
    if (tok_is_op(n, "Expand"))
        return op_expand(c, n);
    if (tok_is_op(n, "LayerNormalization"))
        return op_layernorm(c, n);
    if ((tok_is_op(n, "MatMul") || tok_is_op(n, "Gemm")) && tok_kin(c, n, 1))
        return op_linear(c, n);
    if (tok_is_op(n, "MatMul"))
        return op_matmul2(c, n);
    if (tok_is_op(n, "Add") || tok_is_op(n, "Sub") || tok_is_op(n, "Mul") || tok_is_op(n, "Div"))
        return op_arith(c, n);
    nc_nonlinear_fn fn;
    if (nc_tok_elementwise_fn(n, &fn)) { /* ONNX's HardSigmoid defaults (0.2, 0.5) unless the node says otherwise */
        nc_nonlinear_params p = {.fn = fn, .alpha = nc_attr_float(n, "alpha", 0.2f),
                                 .beta = nc_attr_float(n, "beta", 0.5f)};
        return nonlinear1(c, n, n->inputs[0], n->outputs[0], p, -1);
    }
    if (tok_is_op(n, "Softmax")) {
        tview t = view_of(c, n->inputs[0]);
        int axis = (int)nc_attr_int(n, "axis", -1);
        axis = axis < 0 ? axis + t.ndim : axis;
        if (n->opset < 13 && axis != t.ndim - 1)
            return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "a Softmax of opset < 13 over axes other than the last");
        nc_nonlinear_params p = {.fn = NC_NL_SOFTMAX};
        return nonlinear1(c, n, n->inputs[0], n->outputs[0], p, axis);
    }
    if (tok_is_op(n, "Concat")) {
        int computed = 0;
        for (int k = 0; k < n->n_inputs; k++)
            computed += !c->g->values[n->inputs[k]].constant && !(c->tok->tv[n->inputs[k]].set && c->tok->tv[n->inputs[k]].k);
        return computed == n->n_inputs && computed > 1 ? op_concat_route(c, n) : op_concat(c, n);
    }
    if (tok_is_op(n, "Pad"))
        return op_pad_route(c, n);
    if (nc_tok_data_gather(c, n))
        return op_gather(c, n);
    if (tok_is_op(n, "ReduceMean"))
        return op_token_mean(c, n);
    return nc_cg_node_err(c, n, NC_ERR_UNSUPPORTED, "not convertible on token values (a transformer's (tokens, channels) "
                   "tensors)");
}
