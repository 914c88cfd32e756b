/* Shared by the NIR writer (nir_write.c) and reader (nir_read.c for the
 * graph and plain NIR, nir_read_neuroc.c for the lossless /neuroc group). */
#ifndef NC_EXPORT_NIR_INTERNAL_H
#define NC_EXPORT_NIR_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "export/data/h5io.h"
#include "snn/ir/snn_ir.h"

/* What `/version` says: the nir package release whose reader (nir.read,
 * 1.0.x) our files are checked against in tests/test_nir_interop.sh; nir
 * 1.0.x's own writer stores its package version there. */
#define NC_NIR_FILE_VERSION "1.0.8"

/* Version of the layout of the root-level `/neuroc` group (see nir_write.c).
 * A reader that finds another version ignores the group and reads plain NIR.
 * 2 added weight_xor and fold_factor (which a reader of 1 would miss, and
 * take the folded NIR weight for the original); 3 added v_reset, spike_gt,
 * exact and delay_steps (NIR semantics of other tools' neurons, which a
 * reader of 2 would run with DESIGN §3's) and the LI, CubaLI, Integrator,
 * Threshold, Scale, Delay and Reshape kinds; this reader still reads 1. */
/* 4 put the network's own graph in /neuroc/graph, /node holding its
 * standard form (snn_standard.c) instead, and added standard_loss (what
 * /node loses); a network that is its own standard form is still written
 * as format 3 (with standard_loss ""), which older readers read. */
#define NC_NIR_NEUROC_FORMAT 4
#define NC_NIR_NEUROC_FORMAT_SAME 3
#define NC_NIR_NEUROC_FORMAT_MIN 1

/* The /neuroc weight_xor of a folded layer (nir_write.c): dst ^= the bits
 * of n float32 values at src (word by word, whatever dst holds). */
static inline void nir_xor_words(void *dst, const void *src, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        uint32_t a, b;
        memcpy(&a, (const char *)dst + 4 * k, 4);
        memcpy(&b, (const char *)src + 4 * k, 4);
        a ^= b;
        memcpy((char *)dst + 4 * k, &a, 4);
    }
}

/* Kinds whose neuron fields (threshold, v_init, ..., reset, dt, and
 * v_reset, spike_gt, exact, delay_steps) /neuroc/layers/<i> records. */
static inline int nir_has_neuron_fields(nc_snn_layer_kind k)
{
    return nc_snn_kind_is_neuron(k) || k == NC_SNN_LI || k == NC_SNN_CUBALI || k == NC_SNN_INTEGRATOR ||
           k == NC_SNN_THRESHOLD || k == NC_SNN_DELAY;
}

/* Deepest chain of Add-of-Add layers the writer follows. (Subgraph nesting
 * on read is bounded by nc_limits.max_graph_depth.) */
#define NC_NIR_MAX_DEPTH 64

/* Type prefix of the extension nodes (nir_ext.c) that hold the layers NIR
 * cannot express: "neuroc.MaxPool2d", "neuroc.Concat", ... */
#define NC_NIR_EXT_PREFIX "neuroc."

/* nir_ext.c: 1 if a node type is an extension type; writes layer L's fields
 * into node group g; reads them back into L (kind and inputs set) from
 * node `node` of the graph whose nodes group is `nodes` in file f
 * ("node/nodes", or "neuroc/graph/nodes" from format 4). Errors name the
 * node. */
int nir_ext_type(const char *type);
/* *ext = 1 if node `node` is there and of an extension type; fails only
 * when its type cannot be read. */
nc_status nir_ext_node(hid_t f, const char *nodes, const char *node, int *ext);
nc_status nir_ext_write(const nc_snn_layer *L, hid_t g);
nc_status nir_ext_read(hid_t f, const char *nodes, const char *node, nc_snn_layer *L);

/* ---- reader internals ---- */

#define NC_NIR_MAX_NODES 1000000
#define NC_NIR_MAX_EDGES 4000000

typedef enum nkind {
    K_INPUT, K_OUTPUT, K_AFFINE, K_LINEAR, K_CONV2D, K_SUMPOOL, K_AVGPOOL, K_FLATTEN,
    K_IF, K_LIF, K_CUBALIF, K_SCALE, K_PASS, K_CONV1D, K_LI, K_CUBALI, K_I, K_THRESHOLD, K_DELAY
} nkind;

enum { MAXF = 7, MAXI = 5 };

/* A node type's datasets: float fields and integer fields, those with their
 * bit set in opt_f / opt_i may be absent. Other datasets are ignored. */
typedef struct nspec {
    const char *type;
    nkind kind;
    const char *f[MAXF];
    const char *i[MAXI];
    unsigned opt_f, opt_i;
} nspec;

#define BIT(k) (1u << (k))
static const nspec SPECS[] = {
    {"Input", K_INPUT, {NULL}, {"shape"}, 0, 0},
    {"Output", K_OUTPUT, {NULL}, {"shape"}, 0, 0},
    {"Affine", K_AFFINE, {"weight", "bias"}, {NULL}, 0, 0},
    {"Linear", K_LINEAR, {"weight"}, {NULL}, 0, 0},
    {"Conv2d", K_CONV2D, {"weight", "bias"}, {"stride", "padding", "dilation", "groups", "input_shape"}, 0, BIT(4)},
    {"SumPool2d", K_SUMPOOL, {NULL}, {"kernel_size", "stride", "padding"}, 0, 0},
    {"AvgPool2d", K_AVGPOOL, {NULL}, {"kernel_size", "stride", "padding"}, 0, 0},
    {"Flatten", K_FLATTEN, {NULL}, {"start_dim", "end_dim", "input_type"}, 0, BIT(2)},
    {"Conv1d", K_CONV1D, {"weight", "bias"}, {"stride", "padding", "dilation", "groups", "input_shape"}, 0, BIT(4)},
    {"IF", K_IF, {"r", "v_threshold", "v_reset"}, {NULL}, BIT(2), 0},
    {"LI", K_LI, {"tau", "r", "v_leak"}, {NULL}, 0, 0},
    {"CubaLI", K_CUBALI, {"tau_mem", "tau_syn", "r", "v_leak", "w_in"}, {NULL}, BIT(4), 0},
    {"I", K_I, {"r"}, {NULL}, 0, 0},
    {"Threshold", K_THRESHOLD, {"threshold"}, {NULL}, 0, 0},
    {"Delay", K_DELAY, {"delay"}, {NULL}, 0, 0},
    {"LIF", K_LIF, {"tau", "r", "v_leak", "v_threshold", "v_reset"}, {NULL}, BIT(4), 0},
    {"CubaLIF", K_CUBALIF, {"tau_mem", "tau_syn", "r", "v_leak", "v_threshold", "w_in", "v_reset"}, {NULL}, BIT(6), 0},
    {"Scale", K_SCALE, {"scale"}, {NULL}, 0, 0},
};

typedef struct nnode {
    char *name;            /* flattened name, "<graph>.<node>" inside subgraphs */
    const nspec *spec;     /* NULL for pass-throughs */
    nkind kind;
    nc_tensor *f[MAXF], *i[MAXI];
    int pad_same;          /* Conv2d / Conv1d padding given as the string "same" */
    int layer;             /* IR layer holding the node's output */
    int64_t in_off;        /* an Input node when there are several: where its values start in layer 0 */
} nnode;

typedef struct nedge {
    int a, b;
    int back;
} nedge;

typedef struct rd {
    const char *path;
    nc_nir_options opt;
    nnode *nodes;
    int n_nodes, cap_nodes;
    nedge *edges;
    int64_t n_edges, cap_edges;
    int64_t total_bytes;   /* of all node tensors read so far (model size limit) */
    int n_in;              /* Input nodes of the top-level graph: with several, layer 0 holds them all */
    int64_t in_total;      /* with several: their values in all, layer 0's size */
} rd;

void nir_node_clear(nnode *nd);
/* Opens node group `local` under gnodes and reads its type and fields. A
 * NIRGraph is reported through *is_graph and left to the caller. Errors
 * name the node (`full`). */
nc_status nir_load_node(hid_t gnodes, const char *local, const char *full, nnode *nd, int *is_graph);
/* The layer kind a node becomes, or -1 (a Conv1d: the Conv2d between two
 * Reshapes; a partial Flatten: a Reshape). */
nc_snn_layer_kind nir_layer_kind(nkind k);
/* The output shape of NIR's Flatten (start_dim..end_dim, negative from
 * the end, of a per-sample input of rank nd, shape in) into out; 0 for
 * bad dims. */
int nir_flatten_shape(int nd, const int64_t *in, int64_t start, int64_t end, int *ond, int64_t *out);
/* Moves node nd's fields into layer L (inputs already set), with plain NIR
 * semantics for neurons. */
nc_status nir_apply_node(const rd *R, nnode *nd, const nc_snn *s, nc_snn_layer *L);
/* Shape of layer id from its (forward) inputs, checking every field: the
 * invariants the public builders keep. `total` layers will exist. */
nc_status nir_finish_layer(nc_snn *s, int id, int total);
/* Recurrent inputs (into sums) must exist and match the sum's shape. */
nc_status nir_check_recurrent(const nc_snn *s);

/* nir_delay.c: a Delay node's different delays in steps of dt, ascending
 * (*steps, the caller frees; at most NC_NIR_MAX_DELAYS); how many (1 when
 * they cannot be read: the error comes where the node is applied); the
 * layers of a node of several, reading layer `from` (2 per delay and an
 * Add holding the node's output, appended to s). */
#define NC_NIR_MAX_DELAYS 256
nc_status nir_delay_steps(const nnode *nd, double dt, int64_t **steps, int64_t *n_steps);
int64_t nir_delay_count(const nnode *nd, double dt);
nc_status nir_delay_layers(nc_snn *s, const nnode *nd, double dt, int from, int total);

/* nir_read_neuroc.c: the format of f's /neuroc group if this reader knows
 * it, else 0; the network it describes. */
int nir_neuroc_usable(hid_t f);
nc_status nir_read_neuroc(rd *R, hid_t f, int format, nc_snn **out);

#endif
