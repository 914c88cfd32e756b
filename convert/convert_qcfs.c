/* Recognising the QCFS activation (Bu et al., ICLR 2022) in an exported
 * graph, and the small graph queries the converter shares. */
#include <math.h>
#include <string.h>

#include "convert_graph.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

nc_status nc_consumers_build(const nc_graph *g, nc_consumers *c)
{
    memset(c, 0, sizeof *c);
    int nv = g->n_values;
    c->start = nc_calloc((size_t)nv + 1, sizeof *c->start);
    c->is_output = nc_calloc((size_t)nv + 1, 1);
    int total = 0;
    for (int i = 0; i < g->n_nodes; i++)
        total += g->nodes[i].n_inputs;
    c->list = nc_calloc((size_t)total + 1, sizeof *c->list);
    int *fill = nc_calloc((size_t)nv + 1, sizeof *fill);
    if (!c->start || !c->is_output || !c->list || !fill) {
        nc_free(fill);
        nc_consumers_free(c);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_inputs; j++)
            if (g->nodes[i].inputs[j] >= 0)
                c->start[g->nodes[i].inputs[j] + 1]++;
    for (int v = 0; v < nv; v++)
        c->start[v + 1] += c->start[v];
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_inputs; j++) {
            int v = g->nodes[i].inputs[j];
            if (v >= 0)
                c->list[c->start[v] + fill[v]++] = i;
        }
    for (int k = 0; k < g->n_outputs; k++)
        c->is_output[g->outputs[k]] = 1;
    nc_free(fill);
    return NC_OK;
}

void nc_consumers_free(nc_consumers *c)
{
    nc_free(c->start);
    nc_free(c->list);
    nc_free(c->is_output);
    memset(c, 0, sizeof *c);
}

int nc_consumers_count(const nc_consumers *c, int v)
{
    return c->start[v + 1] - c->start[v] + c->is_output[v];
}

int nc_const_scalar(const nc_tensor *t, double *v)
{
    if (!t || t->numel != 1)
        return 0;
    if (t->dtype == NC_DTYPE_F32)
        *v = nc_f32(t)[0];
    else if (t->dtype == NC_DTYPE_I64)
        *v = (double)nc_i64(t)[0];
    else
        return 0;
    return 1;
}

static const nc_tensor *const_in(const nc_graph *g, const nc_node *n, int i)
{
    return nc_node_has_input(n, i) ? g->values[n->inputs[i]].constant : NULL;
}

nc_status nc_clip_bounds(const nc_graph *g, const nc_node *n, double *lo, double *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (n->opset < 11) {
        if (nc_node_attr(n, "min"))
            *lo = nc_attr_float(n, "min", 0.0f);
        if (nc_node_attr(n, "max"))
            *hi = nc_attr_float(n, "max", 0.0f);
        return NC_OK;
    }
    for (int i = 1; i <= 2; i++) {
        if (!nc_node_has_input(n, i))
            continue;
        const nc_tensor *t = const_in(g, n, i);
        if (!nc_const_scalar(t, i == 1 ? lo : hi))
            return nc_errorf(NC_ERR_UNSUPPORTED, "%s: node '%s' (Clip): its %s bound is not a constant scalar",
                             g->source, n->name, i == 1 ? "lower" : "upper");
    }
    return NC_OK;
}

/* ---- the matcher ---- */

typedef struct walk {
    const nc_graph *g;
    const nc_consumers *cons;
    nc_qcfs_match *m;
    int v; /* the value the chain has reached */
} walk;

/* The only reader of w->v, if it has exactly one and is not a graph output. */
static const nc_node *only_reader(const walk *w)
{
    if (nc_consumers_count(w->cons, w->v) != 1 || w->cons->is_output[w->v])
        return NULL;
    return &w->g->nodes[w->cons->list[w->cons->start[w->v]]];
}

static int is_op(const nc_node *n, const char *op)
{
    return n && strcmp(n->op_type, op) == 0 && n->n_outputs >= 1 && n->outputs[0] >= 0;
}

/* For a binary node reading w->v: the other input's constant, or NULL. With
 * `second_only` the chain value must be the first operand (Div). */
static const nc_tensor *other_const(const walk *w, const nc_node *n, int second_only)
{
    if (n->n_inputs != 2)
        return NULL;
    if (n->inputs[0] == w->v && n->inputs[1] != w->v)
        return const_in(w->g, n, 1);
    if (!second_only && n->inputs[1] == w->v && n->inputs[0] != w->v)
        return const_in(w->g, n, 0);
    return NULL;
}

static int take(walk *w, const nc_node *n)
{
    if (w->m->n_nodes >= NC_SITE_MAX_NODES)
        return 0;
    w->m->nodes[w->m->n_nodes++] = (int)(n - w->g->nodes);
    w->v = n->outputs[0];
    return 1;
}

/* Clip(0, 1) reading the chain value. */
static int step_clip01(walk *w)
{
    const nc_node *n = only_reader(w);
    double lo, hi;
    if (!is_op(n, "Clip") || n->inputs[0] != w->v)
        return 0;
    nc_status st = nc_clip_bounds(w->g, n, &lo, &hi);
    nc_error_clear();
    return st == NC_OK && lo == 0.0 && hi == 1.0 && take(w, n);
}

/* Mul by a constant scalar; its value in *c. */
static int step_mul_scalar(walk *w, double *c)
{
    const nc_node *n = only_reader(w);
    return is_op(n, "Mul") && nc_const_scalar(other_const(w, n, 0), c) && take(w, n);
}

static int step_floor(walk *w)
{
    int y = w->v;
    const nc_consumers *cs = w->cons;
    const nc_node *n = only_reader(w);
    if (is_op(n, "Floor"))
        return take(w, n);
    /* straight-through: f = y + (Floor(y) − y); y has exactly these three readers */
    if (cs->is_output[y] || cs->start[y + 1] - cs->start[y] != 3)
        return 0;
    const nc_node *fl = NULL;
    for (int k = cs->start[y]; k < cs->start[y + 1]; k++)
        if (is_op(&w->g->nodes[cs->list[k]], "Floor"))
            fl = &w->g->nodes[cs->list[k]];
    if (!fl)
        return 0;
    walk t = *w;
    t.v = fl->outputs[0];
    const nc_node *sub = only_reader(&t);
    if (!is_op(sub, "Sub") || sub->n_inputs != 2 || sub->inputs[0] != t.v || sub->inputs[1] != y)
        return 0;
    t.v = sub->outputs[0];
    const nc_node *add = only_reader(&t);
    if (!is_op(add, "Add") || add->n_inputs != 2 ||
        !((add->inputs[0] == y && add->inputs[1] == t.v) || (add->inputs[1] == y && add->inputs[0] == t.v)))
        return 0;
    /* the three readers of y must be exactly Floor, Sub and Add */
    for (int k = cs->start[y]; k < cs->start[y + 1]; k++) {
        const nc_node *r = &w->g->nodes[cs->list[k]];
        if (r != fl && r != sub && r != add)
            return 0;
    }
    return take(w, fl) && take(w, sub) && take(w, add);
}

static int same_values(const nc_tensor *a, const nc_tensor *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->numel != b->numel || a->dtype != NC_DTYPE_F32 || b->dtype != NC_DTYPE_F32)
        return 0;
    return memcmp(a->data, b->data, (size_t)a->numel * sizeof(float)) == 0;
}

int nc_qcfs_match_at(const nc_graph *g, const nc_consumers *cons, int i, nc_qcfs_match *m)
{
    memset(m, 0, sizeof *m);
    const nc_node *n0 = &g->nodes[i];
    int is_div = is_op(n0, "Div"), is_mul = is_op(n0, "Mul");
    if ((!is_div && !is_mul) || n0->n_inputs != 2)
        return 0;
    int x = n0->inputs[0];
    if (is_mul && x >= 0 && g->values[x].constant)
        x = n0->inputs[1]; /* Mul(1/λ, x) */
    if (x < 0 || g->values[x].constant)
        return 0;
    walk w = {g, cons, m, x};
    const nc_tensor *lam_in = other_const(&w, n0, is_div);
    if (!lam_in || lam_in->dtype != NC_DTYPE_F32)
        return 0;
    m->in_value = x;
    take(&w, n0);

    int clip_before = step_clip01(&w);
    double L, add, l2;
    if (!step_mul_scalar(&w, &L) || !(L >= 1.0 && L <= 65536.0 && L == floor(L)))
        return 0;
    const nc_node *na = only_reader(&w);
    if (!is_op(na, "Add") || !nc_const_scalar(other_const(&w, na, 0), &add) || add != 0.5 || !take(&w, na))
        return 0;
    if (!step_floor(&w))
        return 0;
    const nc_node *nd = only_reader(&w);
    if (is_op(nd, "Div")) {
        if (!nc_const_scalar(other_const(&w, nd, 1), &l2) || l2 != L || !take(&w, nd))
            return 0;
    } else if (!step_mul_scalar(&w, &l2) || fabs(l2 * L - 1.0) > 1e-6) {
        return 0;
    }
    if (!clip_before && !step_clip01(&w))
        return 0;
    const nc_node *nl = only_reader(&w);
    if (!is_op(nl, "Mul"))
        return 0;
    const nc_tensor *lam_out = other_const(&w, nl, 0);
    if (!lam_out || lam_out->dtype != NC_DTYPE_F32 || lam_out->numel != lam_in->numel)
        return 0;
    if (is_div) {
        if (!same_values(lam_in, lam_out))
            return 0;
    } else {
        for (int64_t k = 0; k < lam_in->numel; k++)
            if (!(fabs((double)nc_f32(lam_in)[k] * nc_f32(lam_out)[k] - 1.0) <= 1e-5))
                return 0;
    }
    if (!take(&w, nl))
        return 0;
    m->out_value = w.v;
    m->lambda = lam_out;
    m->levels = (int)L;
    return 1;
}
