/* The public nc_model: an imported, prepared ANN graph plus what `info` shows. */
#ifndef NC_SNN_MODEL_H
#define NC_SNN_MODEL_H

#include "graph.h"

struct nc_model {
    nc_graph *g;
    nc_value_info *inputs, *outputs; /* per graph input / output */
    int n_layers;
    nc_layer_info *layers;           /* per node; strings borrowed from g */
};

/* Wraps a prepared graph (topologically sorted, constants folded): runs shape
 * inference at batch sizes 1 and 2 to find every value's shape and which
 * dimensions are symbolic, and fills the layer table. Takes ownership of g in
 * every case (frees it on failure). */
nc_status nc_model_from_graph(nc_graph *g, nc_model **out);

/* Nodes kept without an implementation (loaded with describe_only). */
int nc_graph_n_unsupported(const nc_graph *g);
/* NC_ERR_UNSUPPORTED naming those nodes if there are any: such a graph can
 * be described but not run or converted. */
nc_status nc_graph_check_runnable(const nc_graph *g);

/* Shape-only run with symbolic dimensions of the inputs set to `sym`;
 * `all` receives every value's tensor (caller frees each). */
nc_status nc_graph_infer(const nc_graph *g, int64_t sym, nc_tensor **all);

#endif
