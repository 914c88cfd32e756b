/* Graph preparation between import and nc_model_from_graph: structural
 * checks, topological order, dead-node removal and constant folding. */
#ifndef NC_CONVERT_GRAPH_PREPARE_H
#define NC_CONVERT_GRAPH_PREPARE_H

#include "graph.h"

/* Checks that every value read is produced exactly once (or is a graph
 * input or a constant) and that there is no cycle (NC_ERR_MODEL naming the
 * value / a node on the cycle); sorts the nodes topologically; then, until
 * nothing changes, drops nodes no graph output needs, runs nodes whose
 * inputs are all constant once and keeps their outputs as constants, and
 * turns int64 values that depend only on static shapes (Shape → Gather →
 * Concat → Reshape chains) into constants. Unreferenced values are removed
 * and the value indices renumbered. g stays owned by the caller; on failure
 * it may be partly prepared and should be freed. */
nc_status nc_graph_prepare(nc_graph *g);

#endif
