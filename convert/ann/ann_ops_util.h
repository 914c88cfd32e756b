/* Helpers shared by the convolution and pooling ops (ann_ops_linear.c,
 * ann_ops_pool.c): spatial attribute parsing and small input checks. */
#ifndef NC_SNN_ANN_OPS_UTIL_H
#define NC_SNN_ANN_OPS_UTIL_H

#include "ann_ops.h"
#include "snn/base/error.h"

#define NC_SP_MAX 3 /* spatial dims handled: 1-D, 2-D and 3-D */

/* The geometry of a sliding-window op. Arrays are right-aligned in
 * NC_SP_MAX slots: the last `nsp` slots hold the real spatial dims and the
 * leading ones an identity dim (size 1, kernel 1, stride 1, no padding), so
 * the loops can always run in 3-D. */
typedef struct nc_spatial {
    int nsp;
    int64_t in[NC_SP_MAX], k[NC_SP_MAX], stride[NC_SP_MAX], dil[NC_SP_MAX];
    int64_t pad_b[NC_SP_MAX], pad_e[NC_SP_MAX], out[NC_SP_MAX];
} nc_spatial;

/* Reads strides, pads, dilations, auto_pad and (when allow_ceil) ceil_mode
 * of node `n` for input x = [N, C, spatial...] and computes the output size
 * by ONNX's rules. The kernel comes from `kernel` (a weight's spatial dims)
 * when non-NULL, checked against a kernel_shape attribute if one is given;
 * otherwise kernel_shape is required. Implemented in ann_ops_pool.c. */
nc_status nc_spatial_parse(const nc_node *n, const nc_tensor *x, const int64_t *kernel,
                           int allow_ceil, nc_spatial *sp);

/* Product of the NC_SP_MAX slots of a geometry array. */
static inline int64_t nc_sp_prod(const int64_t *v)
{
    return v[0] * v[1] * v[2];
}

static inline nc_status nc_require_f32(const nc_tensor *t, const char *what)
{
    if (t->dtype != NC_DTYPE_F32)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s has data type %s; only float32 is supported", what,
                         nc_dtype_name(t->dtype));
    return NC_OK;
}

/* Whether optional output o of the node is present and consumed (ops that
 * produce only output 0 refuse a used extra output). */
static inline int nc_output_used(const nc_node *n, int n_out, int o)
{
    return o < n_out && (!n->outputs || o >= n->n_outputs || n->outputs[o] >= 0);
}

#endif
