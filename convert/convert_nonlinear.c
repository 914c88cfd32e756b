/* Non-linear layers in a converted network (convert_nonlinear.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convert_nonlinear.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"
#include "snn/ir/snn_ir.h"

/* ---- element-wise ops, evaluated on one number ---- */

typedef enum elem_op {
    E_NONE = 0, E_ADD, E_SUB, E_MUL, E_DIV, E_POW, E_NEG, E_SQRT, E_ERF, E_TANH, E_SIGMOID,
    E_HARDSIGMOID, E_HARDSWISH, E_GELU, E_RELU, E_CLIP
} elem_op;

static elem_op elem_of(const char *op)
{
    static const char *const names[] = {"", "Add", "Sub", "Mul", "Div", "Pow", "Neg", "Sqrt", "Erf", "Tanh",
                                        "Sigmoid", "HardSigmoid", "HardSwish", "Gelu", "Relu", "Clip"};
    for (int k = 1; k < (int)(sizeof names / sizeof *names); k++)
        if (strcmp(op, names[k]) == 0)
            return (elem_op)k;
    return E_NONE;
}

/* Ops an IF neuron or a synaptic layer computes anyway: a sub-graph of
 * these alone is no Nonlinear layer. */
static int is_piecewise_linear(elem_op e)
{
    return e == E_ADD || e == E_SUB || e == E_MUL || e == E_DIV || e == E_NEG || e == E_RELU || e == E_CLIP;
}

/* Node n applied to its inputs' numbers a[] (the node's input order). */
static double elem_eval(const nc_graph *g, const nc_node *n, elem_op e, const double *a)
{
    switch (e) {
    case E_ADD: return a[0] + a[1];
    case E_SUB: return a[0] - a[1];
    case E_MUL: return a[0] * a[1];
    case E_DIV: return a[0] / a[1];
    case E_POW: return pow(a[0], a[1]);
    case E_NEG: return -a[0];
    case E_SQRT: return sqrt(a[0]);
    case E_ERF: return erf(a[0]);
    case E_TANH: return tanh(a[0]);
    case E_SIGMOID: return 1.0 / (1.0 + exp(-a[0]));
    case E_HARDSIGMOID: {
        double y = nc_attr_float(n, "alpha", 0.2f) * a[0] + nc_attr_float(n, "beta", 0.5f);
        return fmin(fmax(y, 0.0), 1.0);
    }
    case E_HARDSWISH: return a[0] * fmin(fmax(a[0] / 6.0 + 0.5, 0.0), 1.0);
    case E_GELU:
        if (strcmp(nc_attr_str(n, "approximate", "none"), "tanh") == 0)
            return 0.5 * a[0] * (1.0 + tanh(0.79788456080286536 /* √(2/π) */ * (a[0] + 0.044715 * a[0] * a[0] * a[0])));
        return 0.5 * a[0] * (1.0 + erf(a[0] / sqrt(2.0)));
    case E_RELU: return fmax(a[0], 0.0);
    case E_CLIP: {
        double lo, hi;
        if (nc_clip_bounds(g, n, &lo, &hi) != NC_OK)
            return NAN;
        return fmin(fmax(a[0], lo), hi);
    }
    default: return NAN;
    }
}

/* The element-wise functions a sub-graph may compute, in double. */
static double fn_eval(nc_nonlinear_fn fn, double x, double alpha, double beta)
{
    switch (fn) {
    case NC_NL_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case NC_NL_SILU: return x / (1.0 + exp(-x));
    case NC_NL_TANH: return tanh(x);
    case NC_NL_HARDSIGMOID: return fmin(fmax(alpha * x + beta, 0.0), 1.0);
    case NC_NL_HARDSWISH: return x * fmin(fmax(x / 6.0 + 0.5, 0.0), 1.0);
    case NC_NL_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case NC_NL_GELU_TANH: return 0.5 * x * (1.0 + tanh(0.79788456080286536 /* √(2/π) */ * (x + 0.044715 * x * x * x)));
    default: return NAN;
    }
}

/* Sample points: both tails, the knees of the hard functions (±3), and
 * near 0, where the GELU forms differ by about 1e-4 and float constants
 * (√2, 1/6) by about 1e-7. */
static const double k_points[] = {-9.0, -6.5, -4.5, -3.1, -2.9, -2.4, -1.7, -1.0, -0.6, -0.3, -0.05, 0.0,
                                  0.1, 0.4, 0.8, 1.3, 2.0, 2.7, 3.05, 3.6, 5.0, 7.5};
#define N_POINTS ((int)(sizeof k_points / sizeof *k_points))
#define TOLERANCE 1e-5

/* ---- the sub-graph ---- */

typedef struct region {
    int root;
    int n;
    int nodes[NC_NL_MAX_NODES];
    elem_op ops[NC_NL_MAX_NODES];
} region;

/* Index in r of the node producing value v, -1 for the root, -2 if neither. */
static int region_source(const nc_graph *g, const region *r, int v)
{
    if (v == r->root)
        return -1;
    for (int k = 0; k < r->n; k++)
        if (g->nodes[r->nodes[k]].outputs[0] == v)
            return k;
    return -2;
}

/* Node n's data inputs (for Clip only the first: its bounds are read by
 * nc_clip_bounds). */
static int data_inputs(const nc_node *n, elem_op e)
{
    return e == E_CLIP ? 1 : n->n_inputs;
}

/* 1 if node n can join r: every input a constant scalar or a value of r
 * (its root or a node's output), at least one of them from r. */
static int joins(const nc_graph *g, const region *r, const nc_node *n, elem_op e)
{
    int from_r = 0;
    if (n->n_outputs < 1 || n->outputs[0] < 0 || g->values[n->outputs[0]].dtype != NC_DTYPE_F32)
        return 0;
    for (int k = 0; k < data_inputs(n, e); k++) {
        int v = n->inputs[k];
        if (v < 0)
            return 0;
        double s;
        if (g->values[v].constant) {
            if (!nc_const_scalar(g->values[v].constant, &s))
                return 0;
        } else if (region_source(g, r, v) == -2)
            return 0;
        else
            from_r = 1;
    }
    return from_r;
}

/* Marks in need[] (per node of r) the nodes the output of node `last` depends on. */
static void closure(const nc_graph *g, const region *r, int last, unsigned char *need)
{
    memset(need, 0, NC_NL_MAX_NODES);
    need[last] = 1;
    for (int k = last; k >= 0; k--) {
        if (!need[k])
            continue;
        const nc_node *n = &g->nodes[r->nodes[k]];
        for (int j = 0; j < data_inputs(n, r->ops[k]); j++) {
            int s = region_source(g, r, n->inputs[j]);
            if (s >= 0)
                need[s] = 1;
        }
    }
}

/* 1 if the needed nodes form a sub-graph whose inner values nobody else reads. */
static int closed(const nc_graph *g, const nc_consumers *cons, const region *r, int last, const unsigned char *need)
{
    for (int k = 0; k < last; k++) {
        if (!need[k])
            continue;
        int v = g->nodes[r->nodes[k]].outputs[0];
        if (cons->is_output[v])
            return 0;
        for (int q = cons->start[v]; q < cons->start[v + 1]; q++) {
            int reader = -1;
            for (int j = 0; j <= last; j++)
                if (need[j] && r->nodes[j] == cons->list[q])
                    reader = j;
            if (reader < 0)
                return 0;
        }
    }
    return 1;
}

/* The needed nodes of r evaluated at x: the output of node `last`. */
static double region_eval(const nc_graph *g, const region *r, int last, const unsigned char *need, double x)
{
    double val[NC_NL_MAX_NODES];
    for (int k = 0; k <= last; k++) {
        if (!need[k])
            continue;
        const nc_node *n = &g->nodes[r->nodes[k]];
        double a[4] = {0, 0, 0, 0};
        int na = data_inputs(n, r->ops[k]);
        for (int j = 0; j < na && j < 4; j++) {
            int v = n->inputs[j], s = region_source(g, r, v);
            if (s == -1)
                a[j] = x;
            else if (s >= 0)
                a[j] = val[s];
            else
                nc_const_scalar(g->values[v].constant, &a[j]);
        }
        val[k] = na > 4 ? NAN : elem_eval(g, n, r->ops[k], a);
    }
    return val[last];
}

/* Which element-wise function the needed nodes compute, if any. */
static int identify(const nc_graph *g, const region *r, int last, const unsigned char *need, nc_nonlinear_params *p)
{
    double y[N_POINTS];
    for (int k = 0; k < N_POINTS; k++)
        if (!isfinite(y[k] = region_eval(g, r, last, need, k_points[k])))
            return 0;
    /* HardSigmoid's alpha and beta from the values at 0 and just above */
    double h = 1e-3, beta = region_eval(g, r, last, need, 0.0);
    double alpha = (region_eval(g, r, last, need, h) - beta) / h;
    static const nc_nonlinear_fn fns[] = {NC_NL_SIGMOID, NC_NL_SILU, NC_NL_TANH, NC_NL_HARDSWISH,
                                          NC_NL_GELU, NC_NL_GELU_TANH, NC_NL_HARDSIGMOID};
    for (int f = 0; f < (int)(sizeof fns / sizeof *fns); f++) {
        if (fns[f] == NC_NL_HARDSIGMOID && !(alpha > 0.0 && beta > 0.0 && beta < 1.0))
            continue;
        int ok = 1;
        for (int k = 0; ok && k < N_POINTS; k++) {
            double want = fn_eval(fns[f], k_points[k], alpha, beta);
            ok = fabs(y[k] - want) <= TOLERANCE * (1.0 + fabs(want));
        }
        if (ok) {
            memset(p, 0, sizeof *p);
            p->fn = fns[f];
            if (fns[f] == NC_NL_HARDSIGMOID) {
                p->alpha = (float)alpha;
                p->beta = (float)beta;
            }
            return 1;
        }
    }
    return 0;
}

/* How far past node i the sub-graph's nodes may lie (an exporter may put
 * other branches' nodes in between). */
#define SCAN_AHEAD 64

int nc_nl_match_at(const nc_graph *g, const nc_consumers *cons, int i, nc_nl_match *m)
{
    const nc_node *first = &g->nodes[i];
    region r = {-1, 0, {0}, {0}};
    elem_op e = elem_of(first->op_type);
    if (e == E_NONE)
        return 0;
    for (int k = 0; k < data_inputs(first, e); k++) { /* the root: its one computed input */
        int v = first->inputs[k];
        if (v < 0 || g->values[v].constant)
            continue;
        if (r.root >= 0 && r.root != v)
            return 0;
        r.root = v;
    }
    if (r.root < 0)
        return 0;
    for (int j = i; j < g->n_nodes && j < i + SCAN_AHEAD && r.n < NC_NL_MAX_NODES; j++) {
        const nc_node *n = &g->nodes[j];
        elem_op ej = elem_of(n->op_type);
        if (ej == E_NONE || !joins(g, &r, n, ej)) {
            if (j == i)
                return 0;
            continue;
        }
        r.ops[r.n] = ej;
        r.nodes[r.n++] = j;
    }
    /* the latest output that closes a sub-graph containing node i and computing a known f */
    unsigned char need[NC_NL_MAX_NODES];
    for (int last = r.n - 1; last >= 0; last--) {
        closure(g, &r, last, need);
        int smooth = 0;
        for (int k = 0; k <= last; k++) {
            if (!need[k])
                continue;
            const nc_node *n = &g->nodes[r.nodes[k]];
            int products = 0; /* a product or quotient of two values of the sub-graph (x·sigmoid(x)) */
            for (int j = 0; j < data_inputs(n, r.ops[k]); j++)
                products += !g->values[n->inputs[j]].constant;
            smooth |= !is_piecewise_linear(r.ops[k]) || (products > 1 && r.ops[k] != E_ADD && r.ops[k] != E_SUB);
        }
        if (!need[0] || !smooth || !closed(g, cons, &r, last, need) || !identify(g, &r, last, need, &m->p))
            continue;
        m->root = r.root;
        m->out = g->nodes[r.nodes[last]].outputs[0];
        m->n_nodes = 0;
        for (int k = 0; k <= last; k++)
            if (need[k])
                m->nodes[m->n_nodes++] = r.nodes[k];
        return 1;
    }
    return 0;
}

/* ---- the layers ---- */

static nc_status nl_err(const struct cv *c, const nc_node *n, const char *msg)
{
    return nc_errorf(NC_ERR_UNSUPPORTED, "%s: node '%s' (%s): %s", nc_cv_graph(c)->source, n->name, n->op_type,
                     msg);
}

static nc_status add_nonlinear(struct cv *c, const nc_node *n, int n_from, const int *from,
                               const nc_nonlinear_params *p, int out)
{
    char buf[320];
    int id;
    nc_status st = nc_snn_add_nonlinear(nc_cv_snn(c), n_from, from, p, nc_cv_uniq(c, n->name, buf, sizeof buf), &id);
    if (st != NC_OK) {
        if (st != NC_ERR_NOMEM)
            nc_error_prefix("%s: node '%s' (%s)", nc_cv_graph(c)->source, n->name, n->op_type);
        return st;
    }
    nc_cv_set_layer(c, out, id);
    return NC_OK;
}

/* x ⊙ y of two computed values: the larger first, the other broadcast over
 * it (a squeeze-excitation gate of (C, 1, 1) over (C, H, W)). */
static nc_status op_mul(struct cv *c, const nc_node *n)
{
    int from[2];
    nc_status st;
    if ((st = nc_cv_plain_input(c, n, 0, &from[0])) != NC_OK || (st = nc_cv_plain_input(c, n, 1, &from[1])) != NC_OK)
        return st;
    const nc_snn *s = nc_cv_snn(c);
    const nc_snn_layer *A = &s->layers[from[0]], *B = &s->layers[from[1]];
    if (nc_snn_layer_size(A) < nc_snn_layer_size(B)) {
        int t = from[0];
        from[0] = from[1];
        from[1] = t;
        const nc_snn_layer *T = A;
        A = B;
        B = T;
    }
    int fits = A->ndim == B->ndim;
    for (int d = 0; fits && d < A->ndim; d++)
        fits = B->shape[d] == A->shape[d] || B->shape[d] == 1;
    if (!fits) {
        char b1[160], b2[160], msg[480];
        snprintf(msg, sizeof msg, "a product of values of shapes %s and %s: only equal shapes, or the second "
                 "of size 1 along some axes (a gate broadcast over a feature map), are convertible",
                 nc_shape_str(A->ndim, A->shape, b1, sizeof b1), nc_shape_str(B->ndim, B->shape, b2, sizeof b2));
        return nl_err(c, n, msg);
    }
    nc_nonlinear_params p = {.fn = NC_NL_MUL};
    return add_nonlinear(c, n, 2, from, &p, n->outputs[0]);
}

/* A value of C elements, (C) or (C, 1, ...), reshaped to (N, C, 1, ..., 1):
 * a squeeze-excitation gate computed by Gemm layers (Linear after a
 * flattening pool), about to be broadcast over a (C, H, W) map. A Reshape
 * layer (the values as they are, in another shape); 0 in *handled for any
 * other reshaping. */
static nc_status unflatten_gate(struct cv *c, const nc_node *n, int *handled)
{
    const nc_graph *g = nc_cv_graph(c);
    nc_snn *s = nc_cv_snn(c);
    int layer = n->inputs[0] >= 0 ? nc_cv_peek_layer(c, n->inputs[0]) : -1;
    const nc_value *ov = &g->values[n->outputs[0]];
    if (layer < 0 || ov->ndim < 3 || ov->ndim - 1 == s->layers[layer].ndim ||
        ov->shape[1] != s->layers[layer].shape[0] || ov->shape[1] != nc_snn_layer_size(&s->layers[layer]))
        return NC_OK;
    for (int d = 2; d < ov->ndim; d++)
        if (ov->shape[d] != 1)
            return NC_OK;
    *handled = 1;
    nc_status st = nc_cv_plain_input(c, n, 0, &layer);
    if (st != NC_OK)
        return st;
    nc_snn_layer *L = nc_snn_append_unique(s, NC_SNN_RESHAPE, n->name, 1);
    if (!L)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    L->inputs[0] = layer;
    L->ndim = ov->ndim - 1;
    for (int d = 0; d < L->ndim; d++)
        L->shape[d] = ov->shape[d + 1];
    if ((st = nc_snn_layer_validate(s, s->n_layers - 1, s->n_layers)) != NC_OK) {
        nc_snn_pop(s);
        return st;
    }
    nc_cv_set_layer(c, n->outputs[0], s->n_layers - 1);
    return NC_OK;
}

nc_status nc_convert_nonlinear(struct cv *c, int i, int *handled)
{
    const nc_graph *g = nc_cv_graph(c);
    const nc_node *n = &g->nodes[i];
    nc_nl_match m;
    *handled = 0;
    if (nc_nl_match_at(g, nc_cv_consumers(c), i, &m)) {
        *handled = 1;
        int slot = 0, from;
        while (n->inputs[slot] != m.root) /* node i reads the root (nc_nl_match_at) */
            slot++;
        nc_status st = nc_cv_plain_input(c, n, slot, &from);
        if (st != NC_OK)
            return st;
        /* named after the last node, the one whose value it holds */
        if ((st = add_nonlinear(c, &g->nodes[m.nodes[m.n_nodes - 1]], 1, &from, &m.p, m.out)) != NC_OK)
            return st;
        for (int k = 0; k < m.n_nodes; k++)
            nc_cv_mark_done(c, m.nodes[k]);
        return NC_OK;
    }
    if (strcmp(n->op_type, "Reshape") == 0 || strcmp(n->op_type, "Unsqueeze") == 0)
        return unflatten_gate(c, n, handled);
    if (strcmp(n->op_type, "Mul") == 0 && n->n_inputs == 2 && n->inputs[0] >= 0 && n->inputs[1] >= 0 &&
        !g->values[n->inputs[0]].constant && !g->values[n->inputs[1]].constant) {
        *handled = 1;
        return op_mul(c, n);
    }
    return NC_OK;
}

/* ---- spikes after the non-linear layers ---- */

/* 1 if layer id's value is the graded output of a Nonlinear layer, passed
 * on by layers that fire no spikes (pooling, flattening, sums,
 * concatenation, the 1×1 layer of a scaling with nothing to fold into);
 * memo[] (per layer: 0 unknown, 1 yes, 2 no) keeps a residual network's
 * shared paths from being walked once per path. */
static int nonlinear_graded(const nc_snn *s, int id, unsigned char *memo)
{
    if (memo[id])
        return memo[id] == 1;
    const nc_snn_layer *L = &s->layers[id];
    int graded = L->kind == NC_SNN_NONLINEAR;
    switch (L->kind) {
    case NC_SNN_POOL2D: case NC_SNN_FLATTEN: case NC_SNN_RESHAPE: case NC_SNN_ADD: case NC_SNN_CONCAT: case NC_SNN_GATHER:
    case NC_SNN_CONV2D: case NC_SNN_AFFINE:
        for (int k = 0; k < L->n_inputs && !graded; k++)
            graded = L->inputs[k] < id && nonlinear_graded(s, L->inputs[k], memo);
        break;
    default: break;
    }
    memo[id] = graded ? 1 : 2;
    return graded;
}

nc_status nc_nl_spike_input(struct cv *c, const nc_node *n, int i)
{
    const nc_convert_options *o = nc_cv_options(c);
    const nc_graph *g = nc_cv_graph(c);
    nc_snn *s = nc_cv_snn(c);
    int v = n->inputs[i], layer = nc_cv_peek_layer(c, v);
    if (o->nonlinear_graded || o->reset == NC_RESET_ZERO || layer < 0) /* a SignedIF needs the subtractive reset */
        return NC_OK;
    unsigned char *memo = nc_calloc((size_t)s->n_layers, 1);
    if (!memo)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    int graded = nonlinear_graded(s, layer, memo);
    nc_free(memo);
    if (!graded)
        return NC_OK;
    nc_status st = nc_cv_value_layer(c, n, v, &layer);
    if (st != NC_OK || layer < 0)
        return st;
    float one = 1.0f, zero = 0.0f;
    int64_t one_shape = 1;
    nc_tensor *th = NULL, *v0 = NULL;
    if (nc_tensor_create_from(NC_DTYPE_F32, 1, &one_shape, &one, &th) != NC_OK ||
        (o->v_init_zero && nc_tensor_create_from(NC_DTYPE_F32, 1, &one_shape, &zero, &v0) != NC_OK)) {
        nc_tensor_free(th);
        return NC_ERR_NOMEM;
    }
    /* θ from calibration (a statistic of |x|), bursts after it like every SignedIF */
    nc_if_params p = {th, v0, NULL, NC_RESET_SUBTRACT, NC_SIGNED_TWO_SIDED, 0};
    char base[300], buf[320];
    snprintf(base, sizeof base, "%.280s_spikes", g->values[v].name);
    int id;
    st = nc_snn_add_if(s, layer, &p, nc_cv_uniq(c, base, buf, sizeof buf), &id);
    nc_tensor_free(th);
    nc_tensor_free(v0);
    if (st != NC_OK) {
        if (st != NC_ERR_NOMEM)
            nc_error_prefix("%s: node '%s' (%s)", g->source, n->name, n->op_type);
        return st;
    }
    nc_if_site site = {0};
    site.layer = id;
    site.rule = NC_THETA_CALIB;
    site.value = site.out_value = v;
    site.cap = INFINITY;
    site.two_sided = 1;
    site.bias_shift = site.v0_shift = NAN;
    site.n_nodes = 1;
    site.nodes[0] = n->name; /* the node computing v, else the one reading it */
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].n_outputs > 0 && g->nodes[k].outputs[0] == v)
            site.nodes[0] = g->nodes[k].name;
    if ((st = nc_cv_add_site(c, &site)) != NC_OK)
        return st;
    /* later readers of v (another synaptic layer) share the spikes */
    nc_cv_replace_layer(c, v, id);
    return NC_OK;
}
