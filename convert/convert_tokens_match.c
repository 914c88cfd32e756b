/* Which ANN nodes the token converter takes (convert_tokens_match.h). */
#include <math.h>

#include "convert_tokens.h"
#include "convert_tokens_match.h"
#include "snn/base/alloc.h"

/* The node reading value v alone (v no graph output), else -1. */
static int reader1(const cv *c, int v)
{
    if (v < 0 || c->cons.is_output[v] || nc_consumers_count(&c->cons, v) != 1)
        return -1;
    return c->cons.list[c->cons.start[v]];
}

static int const_is(const nc_tensor *t, double want, double tol)
{
    double v;
    return t && nc_const_scalar(t, &v) && fabs(v - want) <= tol;
}

/* The other input of binary node n than value v, as a constant (NULL if none). */
static const nc_tensor *other_const(const cv *c, const nc_node *n, int v)
{
    if (n->n_inputs != 2)
        return NULL;
    return n->inputs[0] == v ? tok_kin(c, n, 1) : n->inputs[1] == v ? tok_kin(c, n, 0) : NULL;
}

/* ---- patterns ---- */

/* ReduceMean over the last axis only (axes attribute, or input after opset 18). */
static int mean_last(const cv *c, const nc_node *n)
{
    if (!tok_is_op(n, "ReduceMean") || nc_attr_int(n, "keepdims", 1) != 1)
        return 0;
    const int64_t *ax = NULL;
    int na = nc_attr_ints(n, "axes", &ax);
    const nc_tensor *t = tok_kin(c, n, 1);
    if (na < 0 && t && t->dtype == NC_DTYPE_I64) {
        ax = nc_i64(t);
        na = (int)t->numel;
    }
    int rank = c->g->values[n->inputs[0]].ndim;
    return na == 1 && (ax[0] == -1 || ax[0] == rank - 1);
}

/* LayerNorm without its affine, as torch < 17 exports it, from its first node i:
 *   μ = ReduceMean(x, -1); d = x − μ; Div(d, Sqrt(ReduceMean(Pow(d, 2), -1) + ε))
 * nodes[] gets the chain, *eps ε; returns the output value or -1. */
int nc_tok_ln_match(const cv *c, int i, int nodes[NC_TOK_LN_NODES], double *eps)
{
    const nc_graph *g = c->g;
    const nc_node *m = &g->nodes[i];
    if (!mean_last(c, m) || m->outputs[0] < 0)
        return -1;
    int x = m->inputs[0], r = reader1(c, m->outputs[0]);
    if (r < 0 || !tok_is_op(&g->nodes[r], "Sub") || g->nodes[r].inputs[0] != x || g->nodes[r].outputs[0] < 0)
        return -1;
    int d = g->nodes[r].outputs[0];
    if (c->cons.is_output[d] || nc_consumers_count(&c->cons, d) != 2)
        return -1;
    int pw = -1, dv = -1;
    for (int k = c->cons.start[d]; k < c->cons.start[d + 1]; k++) {
        const nc_node *q = &g->nodes[c->cons.list[k]];
        if (tok_is_op(q, "Pow") && q->inputs[0] == d && const_is(tok_kin(c, q, 1), 2.0, 0))
            pw = c->cons.list[k];
        else if (tok_is_op(q, "Div") && q->inputs[0] == d)
            dv = c->cons.list[k];
    }
    if (pw < 0 || dv < 0)
        return -1;
    int m2 = reader1(c, g->nodes[pw].outputs[0]);
    if (m2 < 0 || !mean_last(c, &g->nodes[m2]))
        return -1;
    int ad = reader1(c, g->nodes[m2].outputs[0]);
    const nc_tensor *e = ad >= 0 && tok_is_op(&g->nodes[ad], "Add") ? other_const(c, &g->nodes[ad], g->nodes[m2].outputs[0])
                                                               : NULL;
    if (!e || !nc_const_scalar(e, eps) || !(*eps > 0))
        return -1;
    int sq = reader1(c, g->nodes[ad].outputs[0]);
    if (sq < 0 || !tok_is_op(&g->nodes[sq], "Sqrt") || reader1(c, g->nodes[sq].outputs[0]) != dv ||
        g->nodes[dv].inputs[1] != g->nodes[sq].outputs[0])
        return -1;
    int list[NC_TOK_LN_NODES] = {i, r, pw, m2, ad, sq, dv};
    memcpy(nodes, list, sizeof list);
    return g->nodes[dv].outputs[0];
}

/* GELU as torch exports it, from its first node i:
 *   Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), 0.5)
 * returns the output value or -1. */
int nc_tok_gelu_match(const cv *c, int i, int nodes[NC_TOK_GELU_NODES])
{
    const nc_graph *g = c->g;
    const nc_node *dv = &g->nodes[i];
    if (!tok_is_op(dv, "Div") || dv->outputs[0] < 0 || !const_is(tok_kin(c, dv, 1), sqrt(2.0), 1e-4))
        return -1;
    int x = dv->inputs[0];
    int e = reader1(c, dv->outputs[0]);
    if (e < 0 || !tok_is_op(&g->nodes[e], "Erf"))
        return -1;
    int a = reader1(c, g->nodes[e].outputs[0]);
    if (a < 0 || !tok_is_op(&g->nodes[a], "Add") || !const_is(other_const(c, &g->nodes[a], g->nodes[e].outputs[0]), 1.0, 1e-6))
        return -1;
    int m = reader1(c, g->nodes[a].outputs[0]);
    if (m < 0 || !tok_is_op(&g->nodes[m], "Mul"))
        return -1;
    const nc_node *mn = &g->nodes[m];
    int av = g->nodes[a].outputs[0];
    if (!((mn->inputs[0] == x && mn->inputs[1] == av) || (mn->inputs[1] == x && mn->inputs[0] == av)))
        return -1;
    int h = reader1(c, mn->outputs[0]);
    if (h < 0 || !tok_is_op(&g->nodes[h], "Mul") || !const_is(other_const(c, &g->nodes[h], mn->outputs[0]), 0.5, 1e-6))
        return -1;
    int list[NC_TOK_GELU_NODES] = {i, e, a, m, h};
    memcpy(nodes, list, sizeof list);
    return g->nodes[h].outputs[0];
}

/* 1 if node i lies inside a LayerNorm or GELU chain. */
static int in_pattern(const cv *c, int i)
{
    int nodes[NC_TOK_LN_NODES];
    double eps;
    for (int j = 0; j < c->g->n_nodes; j++) {
        int n = nc_tok_ln_match(c, j, nodes, &eps) >= 0 ? NC_TOK_LN_NODES : nc_tok_gelu_match(c, j, nodes) >= 0 ? NC_TOK_GELU_NODES : 0;
        for (int k = 0; k < n; k++)
            if (nodes[k] == i)
                return 1;
    }
    return 0;
}

/* A Softmax whose output is not the graph's one output read by nothing else. */
int nc_tok_inner_softmax(const cv *c, const nc_node *n)
{
    int v = n->outputs[0];
    return (tok_is_op(n, "Softmax") || tok_is_op(n, "LogSoftmax")) && v >= 0 &&
           (!c->cons.is_output[v] || nc_consumers_count(&c->cons, v) != 1);
}

/* A ReduceMean over one axis of a rank-3 value other than its last (a mean over the tokens). */
int nc_tok_token_mean(const cv *c, const nc_node *n)
{
    const int64_t *ax = NULL;
    int rank = c->g->values[n->inputs[0]].ndim;
    if (!tok_is_op(n, "ReduceMean") || rank != 3 || nc_attr_ints(n, "axes", &ax) != 1)
        return 0;
    return ax[0] == 1 || ax[0] == -2;
}

int nc_tok_data_gather(const cv *c, const nc_node *n)
{
    return tok_is_op(n, "Gather") && c->g->values[n->inputs[0]].dtype == NC_DTYPE_F32;
}

/* 1 if node i reads a value computed after a Transpose, a token Reshape
 * or an Expand: a token value (or, after ConvNeXt's permutes back, one
 * that was), which convert_graph.c does not see. */
static int on_tokens(const cv *c, int i)
{
    const nc_graph *g = c->g;
    char *tok = nc_calloc((size_t)g->n_values + 1, 1);
    if (!tok)
        return 0;
    for (int j = 0; j <= i; j++) {
        const nc_node *n = &g->nodes[j];
        /* (a channel shuffle's Transpose is of rank 5) */
        int starts = (tok_is_op(n, "Transpose") && g->values[n->inputs[0]].ndim < 5) || tok_is_op(n, "Expand") ||
                     nc_tok_token_reshape(c, n);
        int t = starts;
        for (int k = 0; k < n->n_inputs; k++)
            t |= n->inputs[k] >= 0 && tok[n->inputs[k]];
        if (j == i) {
            nc_free(tok);
            return t && !starts;
        }
        for (int k = 0; t && k < n->n_outputs; k++)
            if (n->outputs[k] >= 0)
                tok[n->outputs[k]] = 1;
    }
    nc_free(tok);
    return 0;
}

int nc_tok_elementwise_fn(const nc_node *n, nc_nonlinear_fn *fn)
{
    static const struct {
        const char *op;
        nc_nonlinear_fn fn;
    } k[] = {{"Sigmoid", NC_NL_SIGMOID}, {"Tanh", NC_NL_TANH}, {"HardSwish", NC_NL_HARDSWISH},
             {"HardSigmoid", NC_NL_HARDSIGMOID}};
    for (size_t j = 0; j < sizeof k / sizeof k[0]; j++)
        if (tok_is_op(n, k[j].op)) {
            if (fn)
                *fn = k[j].fn;
            return 1;
        }
    return 0;
}

int nc_tok_convertible(const cv *c, int i)
{
    const nc_node *n = &c->g->nodes[i];
    if (tok_is_op(n, "Transpose") || tok_is_op(n, "Expand") || tok_is_op(n, "LayerNormalization") || nc_tok_data_gather(c, n) ||
        nc_tok_inner_softmax(c, n))
        return 1;
    if ((tok_is_op(n, "MatMul") || tok_is_op(n, "Gemm")) && !tok_kin(c, n, 1))
        return 1;
    if (nc_tok_token_mean(c, n) || (nc_tok_elementwise_fn(n, NULL) && on_tokens(c, i)))
        return 1;
    /* of the chains' ops, these alone are refused up front (the others convert or are refused later) */
    static const char *const chain_ops[] = {"ReduceMean", "Pow", "Sqrt", "Erf"};
    for (size_t k = 0; k < sizeof chain_ops / sizeof chain_ops[0]; k++)
        if (tok_is_op(n, chain_ops[k]))
            return in_pattern(c, i);
    return 0;
}

/* A Reshape convert_graph.c refuses (not a flattening to (batch, features),
 * nor the identity), to a rank below a channel shuffle's 5, and from one
 * unless a Transpose made its input (the shuffle's last Reshape; Swin's
 * attention mask is added over (batch, windows, heads, N, N)). */
int nc_tok_token_reshape(const cv *c, const nc_node *n)
{
    if (!tok_is_op(n, "Reshape"))
        return 0;
    const nc_value *in = &c->g->values[n->inputs[0]], *out = &c->g->values[n->outputs[0]];
    if (out->ndim == 2 || out->ndim >= 5)
        return 0;
    for (int j = 0; in->ndim >= 5 && j < c->g->n_nodes; j++)
        if (c->g->nodes[j].n_outputs > 0 && c->g->nodes[j].outputs[0] == n->inputs[0] &&
            tok_is_op(&c->g->nodes[j], "Transpose"))
            return 0;
    int same = in->ndim == out->ndim;
    for (int d = 1; same && d < in->ndim; d++)
        same = in->shape[d] == out->shape[d];
    return !same;
}

