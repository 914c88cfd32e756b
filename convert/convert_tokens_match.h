/* Which ANN nodes the token converter (convert_tokens.c) takes: tests of
 * the graph's structure alone, which the up-front check of every node
 * (nc_tok_convertible) runs before any layer exists. */
#ifndef NC_CONVERT_CONVERT_TOKENS_MATCH_H
#define NC_CONVERT_CONVERT_TOKENS_MATCH_H

#include <string.h>

#include "convert_graph_int.h"

static inline int tok_is_op(const nc_node *n, const char *op) { return strcmp(n->op_type, op) == 0; }

/* Input i of n when it is a constant, else NULL. */
static inline const nc_tensor *tok_kin(const cv *c, const nc_node *n, int i)
{
    return nc_node_has_input(n, i) ? c->g->values[n->inputs[i]].constant : NULL;
}

#define NC_TOK_LN_NODES 7
#define NC_TOK_GELU_NODES 5

/* LayerNorm without its affine, as torch < 17 exports it, from its first node i:
 *   μ = ReduceMean(x, -1); d = x − μ; Div(d, Sqrt(ReduceMean(Pow(d, 2), -1) + ε))
 * nodes[] gets the chain, *eps ε; returns the output value or -1. */
int nc_tok_ln_match(const cv *c, int i, int nodes[NC_TOK_LN_NODES], double *eps);
/* GELU as torch exports it, from its first node i:
 *   Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), 0.5)
 * returns the output value or -1. */
int nc_tok_gelu_match(const cv *c, int i, int nodes[NC_TOK_GELU_NODES]);
/* A Softmax whose output is not the graph's one output read by nothing else. */
int nc_tok_inner_softmax(const cv *c, const nc_node *n);
/* A ReduceMean over one axis of a rank-3 value other than its last (a mean over the tokens). */
int nc_tok_token_mean(const cv *c, const nc_node *n);
/* A Gather of float values (not shape arithmetic). */
int nc_tok_data_gather(const cv *c, const nc_node *n);
/* A Reshape convert_graph.c refuses (not a flattening to (batch, features),
 * nor the identity), to a rank below a channel shuffle's 5, and from one
 * unless a Transpose made its input (the shuffle's). */
int nc_tok_token_reshape(const cv *c, const nc_node *n);
/* 1 if n is an element-wise function a Nonlinear layer computes (its fn in *fn, may be NULL). */
int nc_tok_elementwise_fn(const nc_node *n, nc_nonlinear_fn *fn);

#endif
