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

#endif
