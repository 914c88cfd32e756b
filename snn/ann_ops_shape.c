/* STUB: to be replaced by the real implementations. */
#include "ann_ops.h"
#include "error.h"

nc_status nc_op_flatten(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "flatten not implemented yet");
}

nc_status nc_op_reshape(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "reshape not implemented yet");
}

nc_status nc_op_squeeze(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "squeeze not implemented yet");
}

nc_status nc_op_unsqueeze(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "unsqueeze not implemented yet");
}

nc_status nc_op_concat(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "concat not implemented yet");
}

nc_status nc_op_shape(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "shape not implemented yet");
}

nc_status nc_op_gather(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "gather not implemented yet");
}

nc_status nc_op_slice(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "slice not implemented yet");
}

nc_status nc_op_cast(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "cast not implemented yet");
}

