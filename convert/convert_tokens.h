/* Token tensors of transformers in the ANN → SNN walk (convert_graph.c).
 *
 * A transformer's values are (batch, tokens, channels) and its heads
 * reshape and transpose them freely; the SNN keeps each as a view of one
 * layer: the ONNX value (at batch 1) is a strided view (shape, strides,
 * offset) of the layer's values, so Reshape, Transpose, Squeeze, Slice of
 * a contiguous range and the like move no data and add no layer. A layer
 * reading such a value gets it in the shape it needs through a Reshape
 * layer (NC_SNN_RESHAPE, a view too). Per-token Linear layers are 1×1
 * Conv2d layers over (C, 1, N) (channels first, tokens last); LayerNorm,
 * Softmax, GELU and the product of two activations (attention's Q·Kᵀ and
 * A·V) are Nonlinear layers (expectation compensation); the class token
 * and position embeddings are constant layers added in. */
#ifndef NC_CONVERT_CONVERT_TOKENS_H
#define NC_CONVERT_CONVERT_TOKENS_H

#include "convert_graph_int.h"

/* 1 if node i is converted here: it reads a token view, or it is an op
 * (or the start of a pattern: LayerNorm's ReduceMean chain, GELU's Erf
 * form) only this file converts. */
int nc_tok_takes(const cv *c, int i);
/* Converts node i (nc_tok_takes(c, i) == 1); the error names the node. */
nc_status nc_tok_convert(cv *c, int i);
/* 1 if node i, which convert_graph.c alone would refuse, may convert
 * here (the up-front check of every node: refuse_unconvertible). */
int nc_tok_convertible(const cv *c, int i);
void nc_tok_free(struct nc_tok *t);

#endif
