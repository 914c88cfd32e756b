/* nc_snn_rate_limit: the network an SNN's rates converge to, run through the
 * training engine's QCFS view with the floor relaxed to the identity, where
 * each IF layer computes its spike value × clip(I/θ, 0, 1); and
 * nc_snn_quantised_readouts: the same view with each IF layer's output
 * quantised as T steps with bursts of B quantise it, at several B (how fine
 * a network's levels must be: convert/convert_bursts.c). */

#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"
#include "train.h"
#include "train_internal.h"

#define LIMIT_BATCH 256
/* quantised readouts: the engine's state (values and gradients of every
 * layer) kept to about this many floats, a batch of 1 at least */
#define QUANT_STATE_FLOATS (64ll << 20)

/* Checks x against s's input layer; its number of samples. */
static nc_status check_input(const nc_snn *s, const nc_tensor *x, const char *what, int64_t *N)
{
    int64_t in_size = nc_snn_layer_size(&s->layers[0]);
    /* each sample reshaped to the input layer's shape when the counts agree */
    if (x->dtype != NC_DTYPE_F32 || x->ndim < 1 || x->numel != x->shape[0] * in_size)
        return nc_errorf(NC_ERR_SHAPE, "%s: the input must be float32 (N, %lld values a sample)", what,
                         (long long)in_size);
    *N = x->shape[0];
    if (*N < 1 || *N > INT32_MAX)
        return nc_errorf(NC_ERR_SHAPE, "%s: %lld samples", what, (long long)*N);
    return NC_OK;
}

/* The engine's QCFS view of s for batches of up to `batch`, its error prefixed with `what`. */
static nc_status view_create(const nc_snn *s, int levels, int relaxed, int batch, const char *what,
                             nc_tr_net **net)
{
    nc_tr_config c = {.mode = NC_TRAIN_QCFS, .levels = levels, .relaxed = relaxed};
    nc_status st = nc_tr_net_create((nc_snn *)s, &c, batch, net);
    if (st != NC_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", nc_last_error());
        return nc_errorf(st, "%s: %s", what, msg);
    }
    return NC_OK;
}

/* The readout of rows [0, N) of x through net, batch by batch, into y (N × classes). */
static void view_run(nc_tr_net *net, const nc_tensor *x, int64_t N, float *y)
{
    int64_t in_size = x->numel / x->shape[0];
    for (int64_t n0 = 0; n0 < N; n0 += net->Nmax) {
        int nb = N - n0 < net->Nmax ? (int)(N - n0) : net->Nmax;
        nc_tr_forward(net, nc_f32(x) + n0 * in_size, nb);
        nc_tr_logits(net, y + n0 * net->classes);
    }
}

nc_status nc_snn_rate_limit(const nc_snn *s, const nc_tensor *x, nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "rate limit: NULL output");
    *out = NULL;
    if (!s || !x)
        return nc_errorf(NC_ERR_INVALID_ARG, "rate limit: NULL network or input");
    int64_t N = 0;
    nc_status st = check_input(s, x, "rate limit", &N);
    nc_tr_net *net = NULL;
    /* levels only size the QCFS grid, which the relaxed view does not use */
    if (st != NC_OK || (st = view_create(s, 1, 1, N < LIMIT_BATCH ? (int)N : LIMIT_BATCH, "rate limit",
                                         &net)) != NC_OK)
        return st;
    int64_t shape[2] = {N, net->classes};
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, 2, shape);
    if (!y) {
        nc_tr_net_free(net);
        return nc_tensor_new_failure(NC_DTYPE_F32, 2, shape);
    }
    view_run(net, x, N, nc_f32(y));
    nc_tr_net_free(net);
    *out = y;
    return NC_OK;
}

nc_status nc_snn_quantised_readouts(const nc_snn *s, const nc_tensor *x, int T, const int *bursts, int n,
                                    const char *single, nc_tensor **out)
{
    const char *what = "quantised readouts";
    *out = NULL;
    int64_t N = 0, state = 0;
    nc_status st = check_input(s, x, what, &N);
    if (st != NC_OK)
        return st;
    int out_id = nc_snn_output_id(s);
    for (int i = 0; i <= out_id; i++)
        state += 2 * nc_snn_layer_size(&s->layers[i]);
    int64_t batch = state > 0 ? QUANT_STATE_FLOATS / state : N;
    batch = batch < 1 ? 1 : batch > N ? N : batch;
    int *levels = nc_calloc((size_t)s->n_layers, sizeof *levels);
    nc_tr_net *net = NULL;
    if (!levels)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    if ((st = view_create(s, 1, 0, (int)batch, what, &net)) != NC_OK) {
        nc_free(levels);
        return st;
    }
    int64_t shape[3] = {n, N, net->classes};
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, 3, shape);
    if (!y) {
        nc_free(levels);
        nc_tr_net_free(net);
        return nc_tensor_new_failure(NC_DTYPE_F32, 3, shape);
    }
    net->c.layer_levels = levels;
    for (int k = 0; k < n; k++) {
        /* the view reads L and the relaxation at every forward */
        for (int i = 0; i < s->n_layers; i++)
            levels[i] = single && single[i] ? T : T * bursts[k];
        net->c.relaxed = bursts[k] == 0;
        view_run(net, x, N, nc_f32(y) + k * N * net->classes);
    }
    nc_tr_net_free(net);
    nc_free(levels);
    *out = y;
    return NC_OK;
}
