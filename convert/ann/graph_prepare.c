#include "graph_prepare.h"

#include <string.h>

#include "snn/base/alloc.h"
#include "ann_exec.h"
#include "snn/base/error.h"
#include "model.h"

static nc_status nomem(const nc_graph *g)
{
    return nc_errorf(NC_ERR_NOMEM, "%s: out of memory preparing the graph", g->source);
}

/* ------------------------------------------------------------ checks, order */

/* A binary min-heap of node indices: Kahn's algorithm with it emits ready
 * nodes in file order, so an already sorted graph keeps its order. */
static void heap_push(int *h, int *n, int x)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > x) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static int heap_pop(int *h, int *n)
{
    int top = h[0], x = h[--(*n)], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= x)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = x;
    return top;
}

/* producer[v] = index of the node computing v, or -1. */
static nc_status find_producers(const nc_graph *g, int *producer)
{
    char *is_input = nc_calloc((size_t)g->n_values + 1, 1);
    if (!is_input)
        return nomem(g);
    for (int i = 0; i < g->n_inputs; i++)
        is_input[g->inputs[i]] = 1;
    for (int v = 0; v < g->n_values; v++)
        producer[v] = -1;
    nc_status st = NC_OK;
    for (int i = 0; i < g->n_nodes && st == NC_OK; i++) {
        const nc_node *n = &g->nodes[i];
        for (int o = 0; o < n->n_outputs && st == NC_OK; o++) {
            int v = n->outputs[o];
            if (v < 0)
                continue;
            if (producer[v] >= 0)
                st = nc_errorf(NC_ERR_MODEL, "%s: value '%s' is produced by both node '%s' and node '%s'",
                               g->source, g->values[v].name, g->nodes[producer[v]].name, n->name);
            else if (g->values[v].constant || is_input[v])
                st = nc_errorf(NC_ERR_MODEL, "%s: node '%s' (%s) writes '%s', which is already %s",
                               g->source, n->name, n->op_type, g->values[v].name,
                               is_input[v] ? "a graph input" : "a constant (initializer)");
            else
                producer[v] = i;
        }
    }
    for (int i = 0; i < g->n_nodes && st == NC_OK; i++) {
        const nc_node *n = &g->nodes[i];
        for (int j = 0; j < n->n_inputs && st == NC_OK; j++) {
            int v = n->inputs[j];
            if (v >= 0 && producer[v] < 0 && !g->values[v].constant && !is_input[v])
                st = nc_errorf(NC_ERR_MODEL,
                               "%s: node '%s' (%s) reads '%s', which is neither a graph input, an "
                               "initializer nor any node's output",
                               g->source, n->name, n->op_type, g->values[v].name);
        }
    }
    for (int i = 0; i < g->n_outputs && st == NC_OK; i++) {
        int v = g->outputs[i];
        if (producer[v] < 0 && !g->values[v].constant && !is_input[v])
            st = nc_errorf(NC_ERR_MODEL, "%s: graph output '%s' is not computed by any node", g->source,
                           g->values[v].name);
    }
    nc_free(is_input);
    return st;
}

/* Names a node on a cycle among the nodes Kahn could not emit. Each of them
 * has an unemitted producer, so walking producers n times lands on a cycle. */
static nc_status cycle_error(const nc_graph *g, const int *producer, const char *emitted)
{
    int cur = 0;
    while (emitted[cur])
        cur++;
    for (int step = 0; step < g->n_nodes; step++) {
        const nc_node *n = &g->nodes[cur];
        for (int j = 0; j < n->n_inputs; j++) {
            int v = n->inputs[j];
            if (v >= 0 && producer[v] >= 0 && !emitted[producer[v]]) {
                cur = producer[v];
                break;
            }
        }
    }
    return nc_errorf(NC_ERR_MODEL, "%s: the graph has a cycle through node '%s' (%s)", g->source,
                     g->nodes[cur].name, g->nodes[cur].op_type);
}

static nc_status check_and_sort(nc_graph *g)
{
    int n = g->n_nodes;
    int n_edges = 0;
    for (int i = 0; i < n; i++)
        n_edges += g->nodes[i].n_inputs;
    int *producer = nc_malloc(((size_t)g->n_values + 1) * sizeof *producer);
    int *indeg = nc_calloc((size_t)n + 1, sizeof *indeg);
    int *first = nc_calloc((size_t)n + 2, sizeof *first); /* CSR: consumers of node p */
    int *adj = nc_malloc(((size_t)n_edges + 1) * sizeof *adj);
    int *heap = nc_malloc(((size_t)n + 1) * sizeof *heap);
    int *order = nc_malloc(((size_t)n + 1) * sizeof *order);
    char *emitted = nc_calloc((size_t)n + 1, 1);
    nc_node *sorted = NULL;
    nc_status st = NC_OK;
    if (!producer || !indeg || !first || !adj || !heap || !order || !emitted) {
        st = nomem(g);
        goto done;
    }
    if ((st = find_producers(g, producer)) != NC_OK)
        goto done;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < g->nodes[i].n_inputs; j++) {
            int v = g->nodes[i].inputs[j];
            if (v >= 0 && producer[v] >= 0) {
                first[producer[v] + 1]++;
                indeg[i]++;
            }
        }
    for (int p = 0; p < n; p++)
        first[p + 1] += first[p];
    int *fill = heap; /* reused as a cursor before the sort starts */
    for (int p = 0; p < n; p++)
        fill[p] = first[p];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < g->nodes[i].n_inputs; j++) {
            int v = g->nodes[i].inputs[j];
            if (v >= 0 && producer[v] >= 0)
                adj[fill[producer[v]]++] = i;
        }
    int hn = 0, n_order = 0;
    for (int i = 0; i < n; i++)
        if (indeg[i] == 0)
            heap_push(heap, &hn, i);
    while (hn > 0) {
        int p = heap_pop(heap, &hn);
        order[n_order++] = p;
        emitted[p] = 1;
        for (int e = first[p]; e < first[p + 1]; e++)
            if (--indeg[adj[e]] == 0)
                heap_push(heap, &hn, adj[e]);
    }
    if (n_order < n) {
        st = cycle_error(g, producer, emitted);
        goto done;
    }
    sorted = nc_malloc(((size_t)n + 1) * sizeof *sorted);
    if (!sorted) {
        st = nomem(g);
        goto done;
    }
    for (int i = 0; i < n; i++)
        sorted[i] = g->nodes[order[i]];
    if (n)
        memcpy(g->nodes, sorted, (size_t)n * sizeof *sorted);
done:
    nc_free(producer);
    nc_free(indeg);
    nc_free(first);
    nc_free(adj);
    nc_free(heap);
    nc_free(order);
    nc_free(emitted);
    nc_free(sorted);
    return st;
}

/* ------------------------------------------------------------ removal */

/* Drops nodes marked in `drop` (clearing them), keeping the order. */
static void remove_nodes(nc_graph *g, const char *drop)
{
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (drop[i])
            nc_node_clear(&g->nodes[i]);
        else
            g->nodes[k++] = g->nodes[i];
    }
    g->n_nodes = k;
}

static nc_status remove_dead(nc_graph *g, int *changed)
{
    char *needed = nc_calloc((size_t)g->n_values + 1, 1);
    char *drop = nc_calloc((size_t)g->n_nodes + 1, 1);
    if (!needed || !drop) {
        nc_free(needed);
        nc_free(drop);
        return nomem(g);
    }
    for (int i = 0; i < g->n_outputs; i++)
        needed[g->outputs[i]] = 1;
    int n_drop = 0;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const nc_node *n = &g->nodes[i];
        int live = 0;
        for (int o = 0; o < n->n_outputs; o++)
            live |= n->outputs[o] >= 0 && needed[n->outputs[o]];
        if (!live) {
            drop[i] = 1;
            n_drop++;
            continue;
        }
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] >= 0)
                needed[n->inputs[j]] = 1;
    }
    if (n_drop) {
        remove_nodes(g, drop);
        *changed = 1;
    }
    nc_free(needed);
    nc_free(drop);
    return NC_OK;
}

/* ------------------------------------------------------------ folding */

/* Runs every node whose inputs are all constant (in order, so chains fold
 * in one pass) and keeps its outputs as constants. */
static nc_status fold_constants(nc_graph *g, int *changed)
{
    int max_io = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].n_inputs > max_io)
            max_io = g->nodes[i].n_inputs;
        if (g->nodes[i].n_outputs > max_io)
            max_io = g->nodes[i].n_outputs;
    }
    const nc_tensor **in = nc_calloc((size_t)max_io, sizeof *in);
    nc_tensor **out = nc_calloc((size_t)max_io, sizeof *out);
    char *drop = nc_calloc((size_t)g->n_nodes + 1, 1);
    nc_status st = NC_OK;
    int n_drop = 0;
    if (!in || !out || !drop) {
        st = nomem(g);
        goto done;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        int all_const = n->def != NULL; /* an unsupported node (describe_only) cannot run */
        for (int j = 0; j < n->n_inputs && all_const; j++) {
            int v = n->inputs[j];
            all_const = v < 0 || g->values[v].constant;
            in[j] = v >= 0 ? g->values[v].constant : NULL;
        }
        if (!all_const)
            continue;
        nc_exec_ctx ctx = {.shape_only = 0};
        if ((st = nc_node_execute(g, n, in, out, &ctx)) != NC_OK)
            goto done;
        for (int o = 0; o < n->n_outputs; o++) {
            if (n->outputs[o] >= 0 && out[o])
                nc_graph_set_constant(g, n->outputs[o], out[o]);
            else
                nc_tensor_free(out[o]);
            out[o] = NULL;
        }
        drop[i] = 1;
        n_drop++;
    }
done:
    if (n_drop) {
        remove_nodes(g, drop);
        *changed = 1;
    }
    nc_free(in);
    nc_free(out);
    nc_free(drop);
    return st;
}

static int same_tensor(const nc_tensor *a, const nc_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->numel != b->numel)
        return 0;
    if (a->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]) != 0)
        return 0;
    return a->numel == 0 || memcmp(a->data, b->data, (size_t)a->numel * nc_dtype_size(a->dtype)) == 0;
}

/* Folds int64 values computed only from static shapes and constants.
 *
 * Shape inference runs with symbolic input dimensions set to 1 and to 2; an
 * int64 value equal in both does not depend on them. It must also not depend
 * on the inputs' data, which shape-only runs do not see (zeros there): `dd`
 * marks values whose data depends on runtime data, `sd` values whose shape
 * does. Shape cuts data dependence; an int64 input with runtime data may
 * decide any output's shape (Reshape, Slice, Gather indices). */
static nc_status fold_shapes(nc_graph *g, int *changed)
{
    int has_shape = 0;
    for (int i = 0; i < g->n_nodes && !has_shape; i++)
        has_shape = strcmp(g->nodes[i].op_type, "Shape") == 0;
    if (!has_shape) /* without Shape, every int64 value free of input data is already constant */
        return NC_OK;

    nc_status st = NC_OK;
    size_t nv = (size_t)g->n_values + 1;
    char *dd = nc_calloc(nv, 1), *sd = nc_calloc(nv, 1), *drop = nc_calloc((size_t)g->n_nodes + 1, 1);
    nc_tensor **a1 = nc_calloc(nv, sizeof *a1), **a2 = nc_calloc(nv, sizeof *a2);
    if (!dd || !sd || !drop || !a1 || !a2) {
        st = nomem(g);
        goto done;
    }
    /* Inference failing here (missing shapes, an op refusing its input) is
     * reported by nc_model_from_graph with full context; just fold nothing.
     * Running out of memory is no reason to load the model differently. */
    nc_status ist = nc_graph_infer(g, 1, a1);
    if (ist == NC_OK)
        ist = nc_graph_infer(g, 2, a2);
    if (ist == NC_ERR_NOMEM) {
        st = ist;
        goto done;
    }
    if (ist != NC_OK) {
        nc_error_clear();
        goto done;
    }
    for (int i = 0; i < g->n_inputs; i++)
        dd[g->inputs[i]] = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        char d = 0, s = 0;
        int is_shape = strcmp(n->op_type, "Shape") == 0;
        for (int j = 0; j < n->n_inputs; j++) {
            int v = n->inputs[j];
            if (v < 0)
                continue;
            s |= sd[v];
            d |= is_shape ? sd[v] : dd[v];
            if (dd[v] && a1[v] && a1[v]->dtype == NC_DTYPE_I64)
                s = 1;
        }
        for (int o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] >= 0) {
                int v = n->outputs[o];
                /* a shape-only pass computes no float data (zeros stand for it), so
                 * what is computed from float values is unknown there, like input
                 * data: Swin's attention mask (ScatterND of floats, then Equal) */
                dd[v] = d || (a1[v] && a1[v]->dtype == NC_DTYPE_F32);
                sd[v] = is_shape ? 0 : s;
            }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        int all = 1;
        for (int o = 0; o < n->n_outputs; o++) {
            int v = n->outputs[o];
            if (v < 0 || g->values[v].constant)
                continue;
            if (!dd[v] && a1[v] && a2[v] && a1[v]->dtype == NC_DTYPE_I64 && same_tensor(a1[v], a2[v])) {
                nc_graph_set_constant(g, v, a1[v]);
                a1[v] = NULL;
            } else {
                all = 0;
            }
        }
        if (all) {
            drop[i] = 1;
            *changed = 1;
        }
    }
    remove_nodes(g, drop);
done:
    for (size_t v = 0; v + 1 < nv; v++) {
        if (a1)
            nc_tensor_free(a1[v]);
        if (a2)
            nc_tensor_free(a2[v]);
    }
    nc_free(a1);
    nc_free(a2);
    nc_free(dd);
    nc_free(sd);
    nc_free(drop);
    return st;
}

/* ------------------------------------------------------------ load-time inputs */

/* Inputs whose values decide an output's shape (or, for Dropout, training
 * mode): neuroc fixes shapes when a model loads, so these must not come from
 * the graph inputs' data. Derived from input shapes (Shape → ...) is fine. */
static const struct {
    const char *op;
    unsigned mask; /* bit j: input j */
} k_static_inputs[] = {
    {"Reshape", 1u << 1},
    {"Squeeze", 1u << 1},
    {"Unsqueeze", 1u << 1},
    {"Slice", (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4)},
    {"Pad", (1u << 1) | (1u << 3)},
    {"Dropout", (1u << 1) | (1u << 2)}, /* in training mode a ratio of 0 is the identity */
    {"ReduceMean", 1u << 1}, /* axes, an input from opset 18 */
    {"Expand", 1u << 1},
    {"ConstantOfShape", 1u << 0},
    {"Range", (1u << 0) | (1u << 1) | (1u << 2)},
};

static nc_status check_static_inputs(const nc_graph *g)
{
    char *dd = nc_calloc((size_t)g->n_values + 1, 1); /* data depends on the inputs' data */
    if (!dd)
        return nomem(g);
    for (int i = 0; i < g->n_inputs; i++)
        dd[g->inputs[i]] = 1;
    nc_status st = NC_OK;
    for (int i = 0; i < g->n_nodes && st == NC_OK; i++) {
        const nc_node *n = &g->nodes[i];
        unsigned mask = 0;
        for (size_t k = 0; k < sizeof k_static_inputs / sizeof k_static_inputs[0]; k++)
            if (strcmp(n->op_type, k_static_inputs[k].op) == 0)
                mask = k_static_inputs[k].mask;
        if (strcmp(n->op_type, "Dropout") == 0 && (n->n_inputs < 3 || n->inputs[2] < 0))
            mask = 0; /* without training_mode the ratio is unused */
        char d = 0;
        for (int j = 0; j < n->n_inputs; j++) {
            int v = n->inputs[j];
            if (v < 0)
                continue;
            d |= dd[v];
            if (j < 32 && (mask >> j & 1u) && dd[v])
                st = nc_errorf(NC_ERR_UNSUPPORTED,
                               "%s: node '%s' (%s, opset %lld): input %d ('%s') comes from graph "
                               "input data at run time; neuroc needs it fixed when the model loads "
                               "(make it an initializer or a Constant)",
                               g->source, n->name, n->op_type, (long long)n->opset, j,
                               g->values[v].name);
        }
        if (strcmp(n->op_type, "Shape") == 0)
            d = 0; /* a shape, not data: static shapes are checked node by node */
        for (int o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] >= 0)
                dd[n->outputs[o]] = d;
    }
    nc_free(dd);
    return st;
}

/* ------------------------------------------------------------ compaction */

static nc_status compact_values(nc_graph *g)
{
    int *map = nc_malloc(((size_t)g->n_values + 1) * sizeof *map);
    if (!map)
        return nomem(g);
    for (int v = 0; v < g->n_values; v++)
        map[v] = -1;
    for (int i = 0; i < g->n_inputs; i++)
        map[g->inputs[i]] = 0;
    for (int i = 0; i < g->n_outputs; i++)
        map[g->outputs[i]] = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] >= 0)
                map[n->inputs[j]] = 0;
        for (int o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] >= 0)
                map[n->outputs[o]] = 0;
    }
    int k = 0;
    for (int v = 0; v < g->n_values; v++) {
        if (map[v] < 0) {
            nc_free(g->values[v].name);
            nc_tensor_free(g->values[v].constant);
            continue;
        }
        map[v] = k;
        g->values[k++] = g->values[v];
    }
    g->n_values = k;
    for (int i = 0; i < g->n_inputs; i++)
        g->inputs[i] = map[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++)
        g->outputs[i] = map[g->outputs[i]];
    for (int i = 0; i < g->n_nodes; i++) {
        nc_node *n = &g->nodes[i];
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] >= 0)
                n->inputs[j] = map[n->inputs[j]];
        for (int o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] >= 0)
                n->outputs[o] = map[n->outputs[o]];
    }
    nc_free(map);
    return NC_OK;
}

nc_status nc_graph_prepare(nc_graph *g)
{
    nc_status st = check_and_sort(g);
    int changed = 1;
    while (st == NC_OK && changed) {
        changed = 0;
        if ((st = remove_dead(g, &changed)) != NC_OK || (st = fold_constants(g, &changed)) != NC_OK)
            break;
        /* Shape folding needs inference, the costly step: only when plain
         * folding has settled. */
        if (!changed)
            st = fold_shapes(g, &changed);
    }
    if (st == NC_OK)
        st = check_static_inputs(g);
    if (st == NC_OK)
        st = compact_values(g);
    return st;
}
