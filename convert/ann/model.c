#include "snn/base/finite.h"
#include "model.h"

#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "ann_exec.h"
#include "snn/base/error.h"

static void free_all(nc_tensor **all, int n)
{
    if (!all)
        return;
    for (int i = 0; i < n; i++)
        nc_tensor_free(all[i]);
    nc_free(all);
}

nc_status nc_graph_infer(const nc_graph *g, int64_t sym, nc_tensor **all)
{
    nc_status st = NC_OK;
    nc_tensor **in = nc_calloc((size_t)(g->n_inputs + g->n_outputs + 1), sizeof *in);
    if (!in)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_tensor **outs = in + g->n_inputs;
    for (int i = 0; i < g->n_inputs && st == NC_OK; i++) {
        const nc_value *v = &g->values[g->inputs[i]];
        int64_t shape[NC_MAX_DIMS];
        if (v->ndim < 0) {
            st = nc_errorf(NC_ERR_SHAPE, "%s: graph input '%s' has no declared shape", g->source, v->name);
            break;
        }
        for (int d = 0; d < v->ndim; d++)
            shape[d] = v->shape[d] < 0 ? sym : v->shape[d];
        in[i] = nc_tensor_new(v->dtype, v->ndim, shape);
        if (!in[i])
            st = NC_ERR_NOMEM;
    }
    if (st == NC_OK) {
        nc_exec_ctx ctx = {.shape_only = 1, .partial = nc_graph_n_unsupported(g) > 0};
        st = nc_graph_execute(g, (const nc_tensor *const *)in, outs, all, &ctx);
        for (int i = 0; i < g->n_outputs; i++)
            nc_tensor_free(outs[i]);
    }
    for (int i = 0; i < g->n_inputs; i++)
        nc_tensor_free(in[i]);
    nc_free(in);
    return st;
}

int nc_graph_n_unsupported(const nc_graph *g)
{
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++)
        k += !g->nodes[i].def;
    return k;
}

nc_status nc_graph_check_runnable(const nc_graph *g)
{
    int k = nc_graph_n_unsupported(g);
    if (!k)
        return NC_OK;
    char list[640];
    size_t off = 0;
    list[0] = '\0';
    for (int i = 0, shown = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        if (n->def)
            continue;
        int w = snprintf(list + off, sizeof list - off, "%s%s '%s'", shown++ ? ", " : "", n->op_type, n->name);
        if (w < 0 || (size_t)w >= sizeof list - off) {
            list[off] = '\0';
            break;
        }
        off += (size_t)w;
    }
    return nc_errorf(NC_ERR_UNSUPPORTED, "%s: loaded for description only: %d node(s) of ops neuroc cannot "
                     "run: %s", g->source, k, list);
}

static int64_t const_float_params(const nc_graph *g, const nc_node *n)
{
    int64_t p = 0;
    for (int j = 0; j < n->n_inputs; j++) {
        int v = n->inputs[j];
        if (v >= 0 && g->values[v].constant && g->values[v].constant->dtype == NC_DTYPE_F32)
            p += g->values[v].constant->numel;
    }
    return p;
}

static int64_t node_macs(const nc_node *n, nc_tensor *const *all)
{
    const nc_tensor *x = n->n_inputs > 0 && n->inputs[0] >= 0 ? all[n->inputs[0]] : NULL;
    const nc_tensor *w = n->n_inputs > 1 && n->inputs[1] >= 0 ? all[n->inputs[1]] : NULL;
    const nc_tensor *y = n->n_outputs > 0 && n->outputs[0] >= 0 ? all[n->outputs[0]] : NULL;
    if (!x || !w || !y)
        return 0;
    if (strcmp(n->op_type, "Conv") == 0) {
        int64_t k = 1; /* weight is [C_out, C_in/group, k...]: one output sums C_in/group·k */
        for (int d = 1; d < w->ndim; d++)
            k *= w->shape[d];
        return y->numel * k;
    }
    if (strcmp(n->op_type, "Gemm") == 0 || strcmp(n->op_type, "MatMul") == 0) {
        int64_t inner = x->ndim ? x->shape[x->ndim - 1] : 1;
        if (strcmp(n->op_type, "Gemm") == 0 && nc_attr_int(n, "transA", 0))
            inner = x->shape[0];
        return y->numel * inner;
    }
    return 0;
}

static void fill_value_info(const nc_graph *g, int v, nc_value_info *info)
{
    const nc_value *val = &g->values[v];
    info->name = val->name;
    info->dtype = val->dtype;
    info->ndim = val->ndim < 0 ? 0 : val->ndim;
    memcpy(info->shape, val->shape, sizeof info->shape);
}

nc_status nc_model_from_graph(nc_graph *g, nc_model **out)
{
    *out = NULL;
    nc_status st;
    nc_tensor **a1 = nc_calloc((size_t)g->n_values, sizeof *a1);
    nc_tensor **a2 = nc_calloc((size_t)g->n_values, sizeof *a2);
    nc_model *m = nc_calloc(1, sizeof *m);
    if (!a1 || !a2 || !m) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = nc_graph_infer(g, 1, a1)) != NC_OK || (st = nc_graph_infer(g, 2, a2)) != NC_OK)
        goto fail;
    /* A dimension that changes with the symbolic input size is symbolic itself. */
    for (int v = 0; v < g->n_values; v++) {
        nc_value *val = &g->values[v];
        if (!a1[v] || val->constant)
            continue;
        if (val->ndim >= 0 && val->ndim != a1[v]->ndim) {
            char b1[160], b2[160];
            st = nc_errorf(NC_ERR_SHAPE, "%s: value '%s' is declared with shape %s but computes to %s",
                           g->source, val->name, nc_shape_str(val->ndim, val->shape, b1, sizeof b1),
                           nc_shape_str(a1[v]->ndim, a1[v]->shape, b2, sizeof b2));
            goto fail;
        }
        val->ndim = a1[v]->ndim;
        val->dtype = a1[v]->dtype;
        for (int d = 0; d < val->ndim; d++)
            val->shape[d] = a2[v] && a2[v]->ndim == val->ndim && a2[v]->shape[d] != a1[v]->shape[d]
                                ? -1 : a1[v]->shape[d];
    }
    m->g = g;
    m->inputs = nc_calloc((size_t)g->n_inputs + 1, sizeof *m->inputs);
    m->outputs = nc_calloc((size_t)g->n_outputs + 1, sizeof *m->outputs);
    m->layers = nc_calloc((size_t)g->n_nodes + 1, sizeof *m->layers);
    if (!m->inputs || !m->outputs || !m->layers) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < g->n_inputs; i++)
        fill_value_info(g, g->inputs[i], &m->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++)
        fill_value_info(g, g->outputs[i], &m->outputs[i]);
    m->n_layers = g->n_nodes;
    for (int i = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        nc_layer_info *L = &m->layers[i];
        L->name = n->name;
        L->op = n->op_type;
        const nc_tensor *x = n->n_inputs > 0 && n->inputs[0] >= 0 ? a1[n->inputs[0]] : NULL;
        const nc_tensor *y = n->n_outputs > 0 && n->outputs[0] >= 0 ? a1[n->outputs[0]] : NULL;
        L->supported = n->def != NULL;
        if (x) {
            L->in_ndim = x->ndim;
            memcpy(L->in_shape, x->shape, sizeof L->in_shape);
        } else if (n->n_inputs > 0 && n->inputs[0] >= 0) {
            L->in_ndim = -1; /* after an unsupported node */
        }
        if (y) {
            L->out_ndim = y->ndim;
            memcpy(L->out_shape, y->shape, sizeof L->out_shape);
        } else if (n->n_outputs > 0 && n->outputs[0] >= 0) {
            L->out_ndim = -1;
        }
        L->params = const_float_params(g, n);
        L->macs = node_macs(n, a1);
    }
    free_all(a1, g->n_values);
    free_all(a2, g->n_values);
    *out = m;
    return NC_OK;

fail:
    if (a1)
        free_all(a1, g->n_values);
    else
        nc_free(a1);
    if (a2)
        free_all(a2, g->n_values);
    if (m) {
        nc_free(m->inputs);
        nc_free(m->outputs);
        nc_free(m->layers);
        nc_free(m);
    }
    nc_graph_free(g);
    return st;
}

void nc_model_free(nc_model *m)
{
    if (!m)
        return;
    nc_graph_free(m->g);
    nc_free(m->inputs);
    nc_free(m->outputs);
    nc_free(m->layers);
    nc_free(m);
}

size_t nc_model_num_inputs(const nc_model *m) { return m ? (size_t)m->g->n_inputs : 0; }
size_t nc_model_num_outputs(const nc_model *m) { return m ? (size_t)m->g->n_outputs : 0; }
int nc_model_num_layers(const nc_model *m) { return m ? m->n_layers : 0; }

void nc_load_options_init(nc_load_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->max_tensor_elems = INT64_C(1) << 31; /* onnx_import.c's default for 0 */
}

nc_status nc_model_input(const nc_model *m, size_t i, nc_value_info *out)
{
    if (!m || !out || i >= (size_t)m->g->n_inputs)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_input: no input %zu", i);
    *out = m->inputs[i];
    return NC_OK;
}

nc_status nc_model_output(const nc_model *m, size_t i, nc_value_info *out)
{
    if (!m || !out || i >= (size_t)m->g->n_outputs)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_output: no output %zu", i);
    *out = m->outputs[i];
    return NC_OK;
}

nc_status nc_model_layer(const nc_model *m, int i, nc_layer_info *out)
{
    if (!m || !out || i < 0 || i >= m->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_layer: no layer %d", i);
    *out = m->layers[i];
    return NC_OK;
}

nc_status nc_model_run(const nc_model *m, const nc_tensor *const *inputs, size_t n_inputs,
                       nc_tensor **outputs, size_t n_outputs)
{
    if (outputs)
        for (size_t i = 0; i < n_outputs; i++)
            outputs[i] = NULL;
    if (!m || !inputs || (n_outputs && !outputs))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_run: NULL argument");
    const nc_graph *g = m->g;
    if (n_inputs != (size_t)g->n_inputs)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: the model takes %d input(s), %zu given", g->source,
                         g->n_inputs, n_inputs);
    if (n_outputs > (size_t)g->n_outputs)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: the model has %d output(s), %zu requested",
                         g->source, g->n_outputs, n_outputs);
    for (int i = 0; i < g->n_inputs; i++) {
        const nc_value_info *want = &m->inputs[i];
        const nc_tensor *x = inputs[i];
        char b1[160], b2[160];
        if (!x)
            return nc_errorf(NC_ERR_INVALID_ARG, "%s: input '%s' is NULL", g->source, want->name);
        snprintf(b1, sizeof b1, "input '%.100s'", want->name);
        nc_status fst = nc_check_finite(x, b1, NC_FINITE_SAMPLES);
        if (fst != NC_OK)
            return fst;
        int ok = x->dtype == want->dtype && x->ndim == want->ndim;
        for (int d = 0; ok && d < want->ndim; d++)
            ok = want->shape[d] < 0 || want->shape[d] == x->shape[d];
        if (!ok) {
            char wb[160];
            nc_shape_str(want->ndim, want->shape, wb, sizeof wb);
            return nc_errorf(NC_ERR_SHAPE,
                             "%s: input '%s' must be %s %s (-1 = any size), got %s %s", g->source,
                             want->name, nc_dtype_name(want->dtype), wb, nc_dtype_name(x->dtype),
                             nc_shape_str(x->ndim, x->shape, b2, sizeof b2));
        }
        (void)b1;
    }
    nc_status rst = nc_graph_check_runnable(g);
    if (rst != NC_OK)
        return rst;
    nc_tensor **all_out = nc_calloc((size_t)g->n_outputs + 1, sizeof *all_out);
    if (!all_out)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_status st = nc_graph_execute(g, inputs, all_out, NULL, NULL);
    if (st == NC_OK) {
        for (size_t i = 0; i < n_outputs; i++)
            outputs[i] = all_out[i];
        for (int i = (int)n_outputs; i < g->n_outputs; i++)
            nc_tensor_free(all_out[i]);
    }
    nc_free(all_out);
    return st;
}
