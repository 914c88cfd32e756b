/* nc_snn_rate_limit: the network an SNN's rates converge to, run through the
 * training engine's QCFS view with the floor relaxed to the identity, where
 * each IF layer computes its spike value × clip(I/θ, 0, 1). */

#include <stdio.h>
#include <string.h>

#include "snn/base/error.h"
#include "snn/base/tensor.h"
#include "train_internal.h"

#define LIMIT_BATCH 256

nc_status nc_snn_rate_limit(const nc_snn *s, const nc_tensor *x, nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "rate limit: NULL output");
    *out = NULL;
    if (!s || !x)
        return nc_errorf(NC_ERR_INVALID_ARG, "rate limit: NULL network or input");
    const nc_snn_layer *in = &s->layers[0];
    int64_t in_size = nc_snn_layer_size(in);
    /* each sample reshaped to the input layer's shape when the counts agree */
    if (x->dtype != NC_DTYPE_F32 || x->ndim < 1 || x->numel != x->shape[0] * in_size)
        return nc_errorf(NC_ERR_SHAPE, "rate limit: the input must be float32 (N, %lld values a sample)",
                         (long long)in_size);
    int64_t N = x->shape[0];
    if (N < 1 || N > INT32_MAX)
        return nc_errorf(NC_ERR_SHAPE, "rate limit: %lld samples", (long long)N);
    /* levels only size the QCFS grid, which the relaxed view does not use */
    nc_tr_config c = {.mode = NC_TRAIN_QCFS, .levels = 1, .relaxed = 1};
    nc_tr_net *net = NULL;
    int batch = N < LIMIT_BATCH ? (int)N : LIMIT_BATCH;
    nc_status st = nc_tr_net_create((nc_snn *)s, &c, batch, &net);
    if (st != NC_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", nc_last_error());
        return nc_errorf(st, "rate limit: %s", msg);
    }
    int64_t classes = net->classes, shape[2] = {N, classes};
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, 2, shape);
    if (!y) {
        nc_tr_net_free(net);
        return nc_tensor_new_failure(NC_DTYPE_F32, 2, shape);
    }
    for (int64_t n0 = 0; n0 < N; n0 += batch) {
        int nb = N - n0 < batch ? (int)(N - n0) : batch;
        nc_tr_forward(net, nc_f32(x) + n0 * in_size, nb);
        nc_tr_logits(net, nc_f32(y) + n0 * classes);
    }
    nc_tr_net_free(net);
    *out = y;
    return NC_OK;
}
