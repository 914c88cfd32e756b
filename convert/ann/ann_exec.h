/* The reference forward pass over an nc_graph. */
#ifndef NC_SNN_ANN_EXEC_H
#define NC_SNN_ANN_EXEC_H

#include "ann_ops.h"

/* Runs g's nodes in order. `inputs` has one tensor per g->inputs (borrowed).
 * `outputs` receives one new tensor per g->outputs (owned by the caller).
 * If `all` is non-NULL it has g->n_values slots and receives every value's
 * tensor (owned by the caller, constants cloned) instead of freeing
 * intermediates: shape inference and calibration read it. */
nc_status nc_graph_execute(const nc_graph *g, const nc_tensor *const *inputs, nc_tensor **outputs,
                           nc_tensor **all, const nc_exec_ctx *ctx);

/* Runs one node on given inputs, prefixing any error with its context. */
nc_status nc_node_execute(const nc_graph *g, const nc_node *n, const nc_tensor *const *in,
                          nc_tensor **out, const nc_exec_ctx *ctx);

#endif
