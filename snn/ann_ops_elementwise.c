/* STUB: to be replaced by the real implementations. */
#include "ann_ops.h"
#include "error.h"

nc_status nc_op_add(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "add not implemented yet");
}

nc_status nc_op_sub(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "sub not implemented yet");
}

nc_status nc_op_mul(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "mul not implemented yet");
}

nc_status nc_op_div(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "div not implemented yet");
}

nc_status nc_op_relu(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "relu not implemented yet");
}

nc_status nc_op_clip(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "clip not implemented yet");
}

nc_status nc_op_leakyrelu(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "leakyrelu not implemented yet");
}

nc_status nc_op_floor(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "floor not implemented yet");
}

nc_status nc_op_softmax(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "softmax not implemented yet");
}

nc_status nc_op_logsoftmax(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "logsoftmax not implemented yet");
}

nc_status nc_op_identity(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "identity not implemented yet");
}

nc_status nc_op_dropout(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "dropout not implemented yet");
}

