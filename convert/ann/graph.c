#include "graph.h"

#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"

nc_graph *nc_graph_new(const char *source)
{
    nc_graph *g = nc_calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->source = nc_strdup(source ? source : "<memory>");
    if (!g->source) {
        nc_free(g);
        return NULL;
    }
    return g;
}

void nc_attr_clear(nc_attr *a)
{
    nc_free(a->name);
    nc_free(a->s);
    nc_free(a->ints);
    nc_free(a->floats);
    nc_tensor_free(a->t);
    memset(a, 0, sizeof *a);
}

void nc_node_clear(nc_node *n)
{
    nc_free(n->name);
    nc_free(n->op_type);
    nc_free(n->inputs);
    nc_free(n->outputs);
    for (int i = 0; i < n->n_attrs; i++)
        nc_attr_clear(&n->attrs[i]);
    nc_free(n->attrs);
    memset(n, 0, sizeof *n);
}

void nc_graph_free(nc_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_values; i++) {
        nc_free(g->values[i].name);
        nc_tensor_free(g->values[i].constant);
    }
    nc_free(g->values);
    for (int i = 0; i < g->n_nodes; i++)
        nc_node_clear(&g->nodes[i]);
    nc_free(g->nodes);
    nc_free(g->inputs);
    nc_free(g->outputs);
    nc_free(g->source);
    nc_free(g);
}

int nc_graph_find_value(const nc_graph *g, const char *name)
{
    for (int i = 0; i < g->n_values; i++)
        if (strcmp(g->values[i].name, name) == 0)
            return i;
    return -1;
}

int nc_graph_add_value(nc_graph *g, const char *name)
{
    if (g->n_values == g->cap_values) {
        int cap = g->cap_values ? g->cap_values * 2 : 64;
        nc_value *v = nc_realloc(g->values, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        g->values = v;
        g->cap_values = cap;
    }
    nc_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = nc_strdup(name);
    if (!v->name)
        return -1;
    v->ndim = -1;
    v->dtype = NC_DTYPE_F32;
    return g->n_values++;
}

nc_node *nc_graph_add_node(nc_graph *g)
{
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 32;
        nc_node *n = nc_realloc(g->nodes, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        g->nodes = n;
        g->cap_nodes = cap;
    }
    nc_node *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    return n;
}

void nc_graph_set_constant(nc_graph *g, int v, nc_tensor *t)
{
    nc_value *val = &g->values[v];
    val->constant = t;
    val->dtype = t->dtype;
    val->ndim = t->ndim;
    memcpy(val->shape, t->shape, sizeof val->shape);
}

const nc_attr *nc_node_attr(const nc_node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t nc_attr_int(const nc_node *n, const char *name, int64_t dflt)
{
    const nc_attr *a = nc_node_attr(n, name);
    return a && a->type == NC_ATTR_INT ? a->i : dflt;
}

float nc_attr_float(const nc_node *n, const char *name, float dflt)
{
    const nc_attr *a = nc_node_attr(n, name);
    if (!a)
        return dflt;
    if (a->type == NC_ATTR_FLOAT)
        return a->f;
    if (a->type == NC_ATTR_INT)
        return (float)a->i;
    return dflt;
}

const char *nc_attr_str(const nc_node *n, const char *name, const char *dflt)
{
    const nc_attr *a = nc_node_attr(n, name);
    return a && a->type == NC_ATTR_STRING && a->s ? a->s : dflt;
}

int nc_attr_ints(const nc_node *n, const char *name, const int64_t **vals)
{
    const nc_attr *a = nc_node_attr(n, name);
    if (!a || a->type != NC_ATTR_INTS)
        return -1;
    *vals = a->ints;
    return a->n;
}
