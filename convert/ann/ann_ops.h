/* ANN operators of the CPU reference forward pass: one function per ONNX op.
 *
 * Contract for every nc_op_run_fn:
 *  - in[i] is the i-th input tensor, or NULL when that optional input is
 *    omitted; n_in is the node's input count (already checked against the
 *    def's min/max).
 *  - The function allocates out[0..n_out-1] (n_out = the node's output count)
 *    with nc_tensor_new, and on failure frees what it allocated, leaves the
 *    out[] entries NULL and returns a status with nc_errorf (the executor
 *    prefixes file, node, op and opset).
 *  - It checks its own attributes (nc_attr_*) and refuses values it does not
 *    implement with NC_ERR_UNSUPPORTED, naming the attribute.
 *  - With ctx->shape_only, float outputs only need the right shape (their data
 *    may stay zero), but int64 outputs must be computed: shape arithmetic
 *    (Shape, Gather, Concat, ...) is evaluated in that mode.
 */
#ifndef NC_SNN_ANN_OPS_H
#define NC_SNN_ANN_OPS_H

#include "graph.h"

typedef struct nc_exec_ctx {
    int shape_only;
    /* Skip nodes neuroc cannot run (def NULL) and those reading a value
     * nothing computed, leaving their outputs unknown (NULL), rather than
     * fail: shape inference of a model loaded with describe_only. */
    int partial;
} nc_exec_ctx;

typedef nc_status (*nc_op_run_fn)(const nc_node *n, const nc_tensor *const *in, int n_in,
                                  nc_tensor **out, int n_out, const nc_exec_ctx *ctx);

typedef struct nc_op_def {
    const char *name;   /* ONNX op type */
    int min_inputs, max_inputs;
    int max_outputs;    /* outputs the implementation produces */
    nc_op_run_fn run;
} nc_op_def;

/* The implementation of an ONNX op type (default domain), or NULL. */
const nc_op_def *nc_op_lookup(const char *op_type);
/* Comma-separated list of supported op types into buf, for messages; returns buf. */
char *nc_op_supported_list(char *buf, size_t len);

/* Linear and normalisation (ann_ops_linear.c) */
nc_status nc_op_conv(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_gemm(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_matmul(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_batchnorm(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
/* Pooling and padding (ann_ops_pool.c) */
nc_status nc_op_averagepool(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_maxpool(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_globalaveragepool(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_pad(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
/* Element-wise and activations (ann_ops_elementwise.c) */
nc_status nc_op_add(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_sub(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_mul(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_div(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_relu(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_clip(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_leakyrelu(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_floor(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_softmax(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_logsoftmax(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_identity(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_dropout(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
/* Shape manipulation (ann_ops_shape.c) */
nc_status nc_op_flatten(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_reshape(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_squeeze(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_unsqueeze(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_concat(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_shape(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_gather(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_slice(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_cast(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
/* Activations, powers, reductions, layer norm and Transpose (ann_ops_math.c) */
nc_status nc_op_sigmoid(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_hardsigmoid(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_hardswish(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_erf(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_tanh(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_sqrt(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_pow(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_reducemean(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_layernorm(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_transpose(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
/* Broadcasting selections (ann_ops_select.c) */
nc_status nc_op_equal(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_where(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_expand(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_constantofshape(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int,
                                const nc_exec_ctx *);
/* Index arithmetic of Swin's window masks (ann_ops_index.c) */
nc_status nc_op_mod(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_range(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_scatternd(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);
nc_status nc_op_not(const nc_node *, const nc_tensor *const *, int, nc_tensor **, int, const nc_exec_ctx *);

#endif
