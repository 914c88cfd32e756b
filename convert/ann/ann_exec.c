#include "ann_exec.h"

#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"

nc_status nc_node_execute(const nc_graph *g, const nc_node *n, const nc_tensor *const *in,
                          nc_tensor **out, const nc_exec_ctx *ctx)
{
    for (int o = 0; o < n->n_outputs; o++)
        out[o] = NULL;
    nc_status st;
    if (!n->def)
        st = nc_errorf(NC_ERR_UNSUPPORTED, "op type is not supported");
    else
        st = n->def->run(n, in, n->n_inputs, out, n->n_outputs, ctx);
    if (st != NC_OK) {
        for (int o = 0; o < n->n_outputs; o++) {
            nc_tensor_free(out[o]);
            out[o] = NULL;
        }
        nc_error_prefix("%s: node '%s' (%s, opset %lld)", g->source, n->name, n->op_type,
                        (long long)n->opset);
    }
    return st;
}

nc_status nc_graph_execute(const nc_graph *g, const nc_tensor *const *inputs, nc_tensor **outputs,
                           nc_tensor **all, const nc_exec_ctx *ctx)
{
    static const nc_exec_ctx dflt = {0};
    if (!ctx)
        ctx = &dflt;
    for (int i = 0; i < g->n_outputs; i++)
        outputs[i] = NULL;

    nc_status st = NC_OK;
    int n_in_max = 1, n_out_max = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].n_inputs > n_in_max)
            n_in_max = g->nodes[i].n_inputs;
        if (g->nodes[i].n_outputs > n_out_max)
            n_out_max = g->nodes[i].n_outputs;
    }
    nc_tensor **val = nc_calloc((size_t)g->n_values, sizeof *val);
    char *owned = nc_calloc((size_t)g->n_values, 1);
    int *last_use = nc_calloc((size_t)g->n_values, sizeof *last_use);
    const nc_tensor **in = nc_calloc((size_t)n_in_max, sizeof *in);
    nc_tensor **out = nc_calloc((size_t)n_out_max, sizeof *out);
    if (!val || !owned || !last_use || !in || !out) {
        st = nc_errorf(NC_ERR_NOMEM, "%s: out of memory preparing the forward pass", g->source);
        goto done;
    }

    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].constant)
            val[v] = g->values[v].constant;
    for (int i = 0; i < g->n_inputs; i++)
        val[g->inputs[i]] = (nc_tensor *)inputs[i];
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_inputs; j++)
            if (g->nodes[i].inputs[j] >= 0)
                last_use[g->nodes[i].inputs[j]] = i;
    for (int i = 0; i < g->n_outputs; i++)
        last_use[g->outputs[i]] = g->n_nodes;

    for (int i = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        int skip = ctx->partial && !n->def;
        for (int j = 0; j < n->n_inputs; j++) {
            int v = n->inputs[j];
            in[j] = v >= 0 ? val[v] : NULL;
            skip |= ctx->partial && v >= 0 && !val[v];
        }
        if (skip)
            continue;
        for (int j = 0; j < n->n_inputs; j++) {
            int v = n->inputs[j];
            if (v >= 0 && !val[v]) {
                st = nc_errorf(NC_ERR_MODEL, "%s: node '%s' (%s) reads '%s', which nothing computes",
                               g->source, n->name, n->op_type, g->values[v].name);
                goto done;
            }
        }
        st = nc_node_execute(g, n, in, out, ctx);
        if (st != NC_OK)
            goto done;
        for (int o = 0; o < n->n_outputs; o++) {
            int v = n->outputs[o];
            if (v < 0 || val[v]) { /* an unused optional output, or a value written twice */
                nc_tensor_free(out[o]);
                continue;
            }
            val[v] = out[o];
            owned[v] = 1;
        }
        if (!all)
            for (int j = 0; j < n->n_inputs; j++) {
                int v = n->inputs[j];
                if (v >= 0 && owned[v] && last_use[v] == i) {
                    nc_tensor_free(val[v]);
                    val[v] = NULL;
                    owned[v] = 0;
                }
            }
    }

    for (int i = 0; i < g->n_outputs; i++) {
        int v = g->outputs[i];
        if (!val[v] && !ctx->partial) {
            st = nc_errorf(NC_ERR_MODEL, "%s: graph output '%s' is never computed", g->source,
                           g->values[v].name);
            goto done;
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        /* cloned: an output may also be a constant, an input or another output */
        if (!val[g->outputs[i]])
            continue; /* unknown in a partial pass */
        outputs[i] = nc_tensor_clone(val[g->outputs[i]]);
        if (!outputs[i]) {
            st = NC_ERR_NOMEM;
            goto done;
        }
    }
    if (all)
        for (int v = 0; v < g->n_values; v++) {
            all[v] = owned[v] ? val[v] : (val[v] ? nc_tensor_clone(val[v]) : NULL);
            owned[v] = 0;
            if (val[v] && !all[v] && st == NC_OK)
                st = nc_errorf(NC_ERR_NOMEM, "%s: out of memory copying '%s'", g->source, g->values[v].name);
        }

done:
    if (st != NC_OK)
        for (int i = 0; i < g->n_outputs; i++) {
            nc_tensor_free(outputs[i]);
            outputs[i] = NULL;
        }
    if (val && owned)
        for (int v = 0; v < g->n_values; v++)
            if (owned[v])
                nc_tensor_free(val[v]);
    nc_free(val);
    nc_free(owned);
    nc_free(last_use);
    nc_free(in);
    nc_free(out);
    return st;
}
