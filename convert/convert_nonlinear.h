/* Non-linear layers in a converted network (convert_nonlinear.c): the
 * element-wise functions of today's CNNs (SiLU, Sigmoid, HardSwish,
 * HardSigmoid, Tanh, GELU in its Erf and Tanh forms) recognised by what a
 * small sub-graph computes, the product of two computed values (squeeze-
 * excitation gates), and the two-sided SignedIF that turns their graded
 * outputs back into spikes before a synaptic layer reads them. */
#ifndef NC_CONVERT_CONVERT_NONLINEAR_H
#define NC_CONVERT_CONVERT_NONLINEAR_H

#include "convert_graph.h"

#define NC_NL_MAX_NODES 16

/* An element-wise function f of one ANN value computed by a sub-graph. */
typedef struct nc_nl_match {
    int root;                     /* the value f reads */
    int out;                      /* the value f(root) */
    int n_nodes;
    int nodes[NC_NL_MAX_NODES];   /* node indices of the sub-graph, in graph order */
    nc_nonlinear_params p;
} nc_nl_match;

/* 1 if node i is the first node of a sub-graph of element-wise ops (Add,
 * Sub, Mul, Div, Pow, Neg, Sqrt, Erf, Tanh, Sigmoid, HardSigmoid,
 * HardSwish, Gelu, Relu, Clip; constants scalars) that reads one computed
 * value x, whose inner values have no reader outside it, and which
 * computes one of the element-wise nc_nonlinear_fn of x: found by
 * evaluating the sub-graph at sample points, so any order or arrangement
 * of the ops an exporter writes matches. The largest such sub-graph
 * starting at i wins (Sigmoid then Mul by x is SiLU, not Sigmoid). A
 * sub-graph of ReLU/Clip and affine ops alone never matches: those are IF
 * neurons. */
int nc_nl_match_at(const nc_graph *g, const nc_consumers *cons, int i, nc_nl_match *m);

/* The walk's state (convert_graph.c), opaque here, and what this file
 * needs of it. */
struct cv;
const nc_graph *nc_cv_graph(const struct cv *c);
const nc_consumers *nc_cv_consumers(const struct cv *c);
const nc_convert_options *nc_cv_options(const struct cv *c);
nc_snn *nc_cv_snn(struct cv *c);
void nc_cv_mark_done(struct cv *c, int node);
/* Input i of n as a plain SNN layer (convert_graph.c's plain_input). */
nc_status nc_cv_plain_input(struct cv *c, const nc_node *n, int i, int *layer);
/* Value v becomes the output of layer id. */
void nc_cv_set_layer(struct cv *c, int v, int id);
/* The layer holding value v, with no selection, scaling or padding left
 * pending on it (those applied), or -1 when v has no such layer (a pending
 * synaptic layer, a padded value). */
nc_status nc_cv_value_layer(struct cv *c, const nc_node *n, int v, int *layer);
/* The layer holding value v, pending state aside; -1 as above. */
int nc_cv_peek_layer(const struct cv *c, int v);
/* Value v is now held by layer id (its pending state kept). */
void nc_cv_replace_layer(struct cv *c, int v, int id);
nc_status nc_cv_add_site(struct cv *c, const nc_if_site *site);
/* A layer name not used yet, from an ANN node name. */
const char *nc_cv_uniq(const struct cv *c, const char *base, char *buf, size_t len);

/* convert_node's hook: converts node i if it starts an element-wise
 * function (nc_nl_match_at) or is a Mul of two computed values (a
 * Nonlinear Mul layer), setting *handled. */
nc_status nc_convert_nonlinear(struct cv *c, int i, int *handled);

/* Before a synaptic layer (node n) reads its input i: when that value is
 * the graded output of Nonlinear layers (through pooling, flattening,
 * adding or concatenating), a two-sided SignedIF (NC_SIGNED_TWO_SIDED)
 * with a calibrated threshold turns it into spikes, unless the options
 * keep it graded (nc_convert_options.nonlinear_graded). */
nc_status nc_nl_spike_input(struct cv *c, const nc_node *n, int i);

#endif
