/* STUB: to be replaced by the real implementations. */
#include "ann_ops.h"
#include "error.h"

nc_status nc_op_conv(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "conv not implemented yet");
}

nc_status nc_op_gemm(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "gemm not implemented yet");
}

nc_status nc_op_matmul(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "matmul not implemented yet");
}

nc_status nc_op_batchnorm(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)n_out; (void)ctx;
    return nc_errorf(NC_ERR_UNSUPPORTED, "batchnorm not implemented yet");
}

