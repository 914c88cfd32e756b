/* The ANN graph IR: what the ONNX importer produces and the reference
 * forward pass executes. ONNX attributes are kept as they came (a list per
 * node); each op reads and checks its own. */
#ifndef NC_SNN_GRAPH_H
#define NC_SNN_GRAPH_H

#include "neuroc/neuroc.h"
#include "snn/base/tensor.h"

typedef enum nc_attr_type {
    NC_ATTR_FLOAT,
    NC_ATTR_INT,
    NC_ATTR_STRING,
    NC_ATTR_FLOATS,
    NC_ATTR_INTS,
    NC_ATTR_TENSOR,
    NC_ATTR_OTHER /* a kind no supported op uses (graphs, sparse tensors, ...) */
} nc_attr_type;

typedef struct nc_attr {
    char *name;
    nc_attr_type type;
    float f;
    int64_t i;
    char *s;
    int n;          /* count of ints / floats */
    int64_t *ints;
    float *floats;
    nc_tensor *t;
} nc_attr;

typedef struct nc_value {
    char *name;
    nc_dtype dtype;
    int ndim;                     /* -1 when not known */
    int64_t shape[NC_MAX_DIMS];   /* -1 for a symbolic dimension */
    nc_tensor *constant;          /* owned; non-NULL for initialisers and folded values */
} nc_value;

struct nc_op_def;

typedef struct nc_node {
    char *name;
    char *op_type;                /* ONNX op type, e.g. "Conv" */
    const struct nc_op_def *def;  /* resolved implementation */
    int64_t opset;                /* opset of the node's domain */
    int n_inputs;
    int *inputs;                  /* value indices; -1 for an omitted optional input */
    int n_outputs;
    int *outputs;                 /* value indices; -1 for an omitted optional output */
    int n_attrs;
    nc_attr *attrs;
} nc_node;

typedef struct nc_graph {
    char *source;                 /* file or buffer name, for messages */
    int64_t opset;                /* default-domain opset */
    int n_values, cap_values;
    nc_value *values;
    int n_nodes, cap_nodes;
    nc_node *nodes;               /* topologically sorted once imported */
    int n_inputs;
    int *inputs;                  /* non-constant graph inputs */
    int n_outputs;
    int *outputs;
} nc_graph;

nc_graph *nc_graph_new(const char *source);
void nc_graph_free(nc_graph *g);
/* Index of the value named `name`, or -1. */
int nc_graph_find_value(const nc_graph *g, const char *name);
/* Appends a value (name copied); returns its index or -1 on allocation failure. */
int nc_graph_add_value(nc_graph *g, const char *name);
/* Appends a zeroed node and returns it (NULL on allocation failure). Pointers
 * into g->nodes are invalidated by the next call. */
nc_node *nc_graph_add_node(nc_graph *g);
void nc_node_clear(nc_node *n);
/* Makes value v the constant t (owned by the graph from now on). */
void nc_graph_set_constant(nc_graph *g, int v, nc_tensor *t);
void nc_attr_clear(nc_attr *a);

/* Attribute lookup. */
const nc_attr *nc_node_attr(const nc_node *n, const char *name);
int64_t nc_attr_int(const nc_node *n, const char *name, int64_t dflt);
float nc_attr_float(const nc_node *n, const char *name, float dflt);
/* The string, or dflt if absent. */
const char *nc_attr_str(const nc_node *n, const char *name, const char *dflt);
/* Number of ints (and *vals) or -1 if absent. */
int nc_attr_ints(const nc_node *n, const char *name, const int64_t **vals);

/* The input tensor i of a node, or NULL if omitted. */
static inline int nc_node_has_input(const nc_node *n, int i)
{
    return i < n->n_inputs && n->inputs[i] >= 0;
}

#endif
