/* STUB: to be replaced by the real implementations. */
#include "ann_ops.h"
#include "error.h"

nc_status nc_op_averagepool(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "averagepool not implemented yet");
}

nc_status nc_op_maxpool(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "maxpool not implemented yet");
}

nc_status nc_op_globalaveragepool(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "globalaveragepool not implemented yet");
}

nc_status nc_op_pad(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "pad not implemented yet");
}

