/* The state of the ANN graph walk (convert_graph.c) and the helpers it
 * shares with the pattern converters beside it (convert_tokens.c): how each
 * ANN value is held, and the calls that append what is pending on one. */
#ifndef NC_CONVERT_CONVERT_GRAPH_INT_H
#define NC_CONVERT_CONVERT_GRAPH_INT_H

#include <stdarg.h>

#include "convert_graph.h"
#include "snn/base/error.h"

enum { VS_NONE = 0, VS_LAYER, VS_LINEAR };

/* A synaptic layer not appended yet, so that what follows can fold into it. */
typedef struct lin {
    nc_snn_layer_kind kind; /* NC_SNN_AFFINE or NC_SNN_CONV2D */
    nc_tensor *w, *b;       /* b always present, [out] */
    nc_conv2d_params cp;
    const char *name;       /* the ANN node */
    int64_t channels;       /* outputs (Affine) or output channels (Conv2d) */
} lin;

/* An average pooling of spikes not appended yet (vst.pool, convert_poolfold.c):
 * the Conv, or the Gemm after a flattening, that reads it folds it into its
 * weights and reads the spikes directly; any other reader gets it as a
 * Pool2d layer (then a Flatten, where one is pending too). */
typedef struct pend_pool {
    int64_t k[2], s[2], p[2]; /* kernel, stride, zero padding (a Pad node's included); divisor k[0]·k[1] */
    int64_t out[2];           /* the pooled H, W */
    const char *name;         /* the pooling node */
    int flat;                 /* a flattening follows: a Gemm reads it as (batch, features) */
    const char *flat_name;    /* the Flatten/Reshape node whose Flatten layer is pending too (NULL: none) */
} pend_pool;

typedef struct vst {
    int kind;
    int layer;          /* VS_LAYER: the layer holding the value; VS_LINEAR: the layer it reads */
    int64_t pad[2];     /* VS_LAYER: zero padding (H, W) of a Pad node, not applied yet */
    double *pa, *pb;    /* VS_LAYER: pending a·x + b per channel (pn elements), NULL = none */
    int64_t pn;
    lin *ln;            /* VS_LINEAR */
    /* VS_LAYER: the value is channels sel[0..sn) of the layer (a channel
     * shuffle or slice not applied yet, NULL = none; never with pa): the
     * next Conv folds it into its weights, other readers get a 1×1
     * selection layer (flush_select) */
    int64_t *sel, sn;
    const char *sel_name; /* the ANN node of the selection */
    pend_pool *pool;      /* VS_LAYER: an average pooling of the layer not appended yet (never with pa, sel, pad) */
} vst;

typedef struct cv {
    const nc_graph *g;
    const nc_convert_options *o;
    nc_cgraph *cg;
    nc_snn *s;
    vst *vs;
    nc_consumers cons;
    unsigned char *done; /* per node: already taken by a pattern */
    int n_shuffles;      /* channel shuffles met (one note for all) */
    struct nc_tok *tok;  /* token tensors of transformers (convert_tokens.c), NULL until one is met */
} cv;


/* An error naming the node: "<file>: node '<name>' (<op>): <message>" (the
 * walk's one message shape, for convert_graph.c and convert_tokens.c). */
nc_status nc_cg_node_err(const cv *c, const nc_node *n, nc_status st, const char *fmt, ...) NC_PRINTF(4, 5);
/* The same with a va_list. */
nc_status nc_cg_node_verr(const cv *c, const nc_node *n, nc_status st, const char *fmt, va_list ap);
/* After a failed builder call: names the node in front of its message. */
nc_status nc_cg_node_prefix(const cv *c, const nc_node *n, nc_status st);
/* A layer name not used yet, from `base`, in buf. */
const char *nc_cg_uniq(const cv *c, const char *base, char *buf, size_t len);
/* Appends value v's pending synaptic layer or channel selection, if any. */
nc_status nc_cg_materialise(cv *c, int v);
/* Value v's pending per-channel a·x + b as a 1×1 depthwise layer of its own. */
nc_status nc_cg_flush_pending(cv *c, const nc_node *n, int v);
/* vout takes vin's state (moved when vin has no other reader). */
nc_status nc_cg_pass(cv *c, const nc_node *n, int vin, int vout);
/* vout = a ⊙ vin + b per channel of vin's layer (folded or kept pending). */
nc_status nc_cg_apply_affine(cv *c, const nc_node *n, int vin, int vout, const double *a, const double *b,
                             int64_t C);
/* Value v becomes the output of layer id, nothing pending. */
vst *nc_cg_set_layer(cv *c, int v, int id);
/* vout = a Conv2d (weight w, bias b, both taken over, freed on failure too)
 * of vin's layer (materialised, a (C, H, W) layer), kept pending so that
 * what follows folds into it; vin's pending a·x + b folds into w and b. */
nc_status nc_cg_pending_conv(cv *c, const nc_node *n, int vin, int vout, nc_tensor *w, nc_tensor *b,
                             const nc_conv2d_params *cp);

/* 1 if layer id's value is spikes alone (an IF layer, or a Concat of such). */
int nc_cg_is_spike_train(const nc_snn *s, int id);
/* 1 if node n only computes shapes (int64 outputs), which the walk skips. */
int nc_cg_shape_only_node(const nc_graph *g, const nc_node *n);

/* ---- average poolings folded into the synaptic layer reading them (convert_poolfold.c) ---- */

/* The pooling node n (kernel k, stride s, padding p incl. a Pad node's, a
 * divisor of k[0]·k[1] for every window) reading layer `from`: vout
 * becomes a pending pooling (vst.pool) where the fold is on, `from` sends
 * spikes, the window is small enough for the fold to save energy and the
 * pooling's sole reader is a Conv or a flattening before a Gemm; *pending
 * says whether it did. */
nc_status nc_pf_try_pending(cv *c, const nc_node *n, int from, int vout, const int64_t k[2], const int64_t s[2],
                            const int64_t p[2], int *pending);
/* Appends value v's pending pooling (and its Flatten) as layers. */
nc_status nc_pf_flush(cv *c, int v);
/* Reshape node n flattens value vin (a pending pooling, no flattening yet)
 * for a Gemm: vout takes the pooling with the flattening pending; *done 0
 * where it does not apply (the caller materialises). */
nc_status nc_pf_flatten(cv *c, const nc_node *n, int vin, int vout, int *done);
/* The Conv l (node n, pending weights over the pooled value) reads value v,
 * a pending pooling: where the composition is exactly one convolution of
 * the spikes, l becomes it and the pooling is gone; else a note says why
 * and the pooling is appended. */
nc_status nc_pf_into_conv(cv *c, const nc_node *n, int v, lin *l);
/* The Affine l (node n, weight [out, C·H'·W'] over the flattened pooled
 * value) reads value v, a pending pooling with its flattening: its weight
 * spreads over the unpooled spikes, the Flatten is appended. */
nc_status nc_pf_into_affine(cv *c, const nc_node *n, int v, lin *l);

#endif
