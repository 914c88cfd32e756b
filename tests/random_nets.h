/* Random networks and inputs for the tests that compare a backend with the
 * cpu reference bit for bit: cpu-fast (test_cpu_fast.c), the cuda backend's
 * test (test_cuda.c, on a GPU and on the CPU harness; plain C so that
 * scripts/gpu-check can build it without cmocka), and the GPU benchmark
 * (bench/cuda_bench.c). Header-only: each program includes it once. One
 * generator seeded alike in each program, so a program draws the same
 * networks on every run. A failing library call prints the library's
 * message and exits 1, unless the includer defines NET_OK first (the cmocka
 * tests make it an assertion). */
#ifndef NC_TESTS_RANDOM_NETS_H
#define NC_TESTS_RANDOM_NETS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neuroc/neuroc.h"
#include "snn/ir/snn_ir.h" /* nc_snn_add_maxpool2d */

#ifndef NET_OK
#define NET_OK(expr)                                                                                 \
    do {                                                                                             \
        nc_status st_ = (expr);                                                                      \
        if (st_ != NC_OK) {                                                                          \
            fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr, nc_status_str(st_), \
                    nc_last_error());                                                                \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)
#endif

/* Every helper is static; a program may use only some of them. */
#define NET_FN static __attribute__((unused))

static uint64_t g_net_rng = 0x9E3779B97F4A7C15ull;

NET_FN float net_frand(void) /* uniform in [0, 1) */
{
    g_net_rng = g_net_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(g_net_rng >> 40) * (1.0f / 16777216.0f);
}

NET_FN nc_tensor *net_rand_tensor(int ndim, const int64_t *shape, float lo, float hi)
{
    nc_tensor *t = NULL;
    NET_OK(nc_tensor_create(NC_DTYPE_F32, ndim, shape, &t));
    float *d = nc_tensor_data(t);
    for (int64_t i = 0; i < nc_tensor_numel(t); i++)
        d[i] = lo + (hi - lo) * net_frand();
    return t;
}

/* Input samples in [0, 1) with some exact zeros, as images have: (N, ...),
 * or a time series (T, N, ...) when T > 0. */
NET_FN nc_tensor *net_rand_input(const nc_snn *s, int T, int N)
{
    nc_snn_layer_info in;
    NET_OK(nc_snn_layer_at(s, 0, &in));
    int64_t shape[NC_MAX_DIMS + 2];
    int nd = 0;
    if (T > 0)
        shape[nd++] = T;
    shape[nd++] = N;
    for (int d = 0; d < in.ndim; d++)
        shape[nd++] = in.shape[d];
    nc_tensor *x = net_rand_tensor(nd, shape, 0.0f, 1.0f);
    float *d = nc_tensor_data(x);
    for (int64_t i = 0; i < nc_tensor_numel(x); i++)
        if (d[i] < 0.3f)
            d[i] = 0.0f;
    return x;
}

NET_FN int net_conv(nc_snn *s, int from, int64_t cout, int64_t k, int64_t stride, int64_t pad, int64_t dil,
                    int64_t groups, float wscale)
{
    nc_snn_layer_info X;
    NET_OK(nc_snn_layer_at(s, from, &X));
    int64_t ws[4] = {cout, X.shape[0] / groups, k, k}, bs[1] = {cout};
    nc_tensor *w = net_rand_tensor(4, ws, -wscale, wscale), *b = net_rand_tensor(1, bs, -0.1f, 0.3f);
    nc_conv2d_params p = {{stride, stride}, {pad, pad}, {dil, dil}, groups};
    int id;
    NET_OK(nc_snn_add_conv2d(s, from, w, b, &p, NULL, &id));
    nc_tensor_free(w);
    nc_tensor_free(b);
    return id;
}

NET_FN int net_affine(nc_snn *s, int from, int64_t out, float wscale)
{
    nc_snn_layer_info X;
    NET_OK(nc_snn_layer_at(s, from, &X));
    int64_t in = 1;
    for (int d = 0; d < X.ndim; d++)
        in *= X.shape[d];
    int64_t ws[2] = {out, in}, bs[1] = {out};
    nc_tensor *w = net_rand_tensor(2, ws, -wscale, wscale), *b = net_rand_tensor(1, bs, -0.1f, 0.3f);
    int id;
    NET_OK(nc_snn_add_affine(s, from, w, b, NULL, &id));
    nc_tensor_free(w);
    nc_tensor_free(b);
    return id;
}

/* θ per layer (per = 0), per channel (1) or per neuron (2) of a layer
 * reading `from`, around `theta`; *size gets the layer's neurons. */
NET_FN nc_tensor *net_theta(nc_snn *s, int from, int per, float theta, int64_t *size)
{
    nc_snn_layer_info X;
    NET_OK(nc_snn_layer_at(s, from, &X));
    *size = 1;
    for (int d = 0; d < X.ndim; d++)
        *size *= X.shape[d];
    int64_t n[1] = {per == 0 ? 1 : per == 1 ? X.shape[0] : *size};
    return net_rand_tensor(1, n, theta * 0.7f, theta * 1.3f);
}

/* IF with θ as net_theta; spike values θ (default) or random per neuron
 * when sval_full. */
NET_FN int net_if(nc_snn *s, int from, int per, int sval_full, nc_reset_mode reset, float theta)
{
    int64_t size;
    nc_tensor *th = net_theta(s, from, per, theta, &size), *sv = NULL;
    if (sval_full)
        sv = net_rand_tensor(1, &size, 0.5f, 1.5f);
    nc_if_params p = {.threshold = th, .spike_value = sv, .reset = reset};
    int id;
    NET_OK(nc_snn_add_if(s, from, &p, NULL, &id));
    nc_tensor_free(th);
    nc_tensor_free(sv);
    return id;
}

NET_FN int net_pool(nc_snn *s, int from, int64_t k, int64_t stride, int64_t pad)
{
    int64_t kk[2] = {k, k}, st[2] = {stride, stride}, pd[2] = {pad, pad};
    int id;
    NET_OK(nc_snn_add_pool2d(s, from, kk, st, pd, 1.0f / (float)(k * k), NULL, &id));
    return id;
}

/* What the users of net_random_layers vary. cpu-fast folds a pool of spikes
 * into the events only when the spike values are θ; its kernels run vectors
 * of 8 and 16 floats. The cuda kernels run blocks of 256 threads. */
typedef struct net_random_opts {
    int spike_values;  /* random spike values per neuron on the second IF (its pool is not foldable) */
    int64_t conv_out;  /* output channels of the last convolution */
    int64_t hidden;    /* outputs of the first affine */
    float out_wscale;  /* weight scale of the last affine */
} net_random_opts;

/* What the cuda tests run: more outputs than a block of threads. */
#define NET_RANDOM_CUDA ((net_random_opts){.spike_values = 1, .conv_out = 40, .hidden = 300, .out_wscale = 0.2f})

/* Convolutions with stride, padding, dilation and groups, pooling with
 * overlapping windows and padding, residual Adds of currents and spikes,
 * both reset modes, flatten, affine, readout. */
NET_FN nc_snn *net_random_layers(net_random_opts o)
{
    int64_t in[3] = {3, 11, 9};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 0.6f);   /* 8 × 11 × 9 */
    int i1 = net_if(s, c1, 0, 0, NC_RESET_SUBTRACT, 1.0f);
    int c2 = net_conv(s, i1, 8, 3, 2, 1, 1, 2, 0.5f);  /* stride 2, groups 2: 8 × 6 × 5 */
    int i2 = net_if(s, c2, 1, o.spike_values, NC_RESET_SUBTRACT, 0.8f);
    int p2 = net_pool(s, i2, 3, 1, 1);                 /* overlapping windows, padding */
    int c3 = net_conv(s, p2, 8, 3, 1, 2, 2, 4, 0.8f);  /* dilation 2, groups 4 */
    int from[2] = {c3, i2}, add;
    NET_OK(nc_snn_add_add(s, 2, from, NULL, &add));    /* currents + spikes */
    int i3 = net_if(s, add, 2, 0, NC_RESET_ZERO, 0.9f);
    int c4 = net_conv(s, i3, o.conv_out, 2, 2, 0, 1, 1, 0.5f); /* kernel 2 stride 2: conv_out × 3 × 2 */
    int i4 = net_if(s, c4, 0, 0, NC_RESET_SUBTRACT, 0.7f);
    int fl, ro;
    NET_OK(nc_snn_add_flatten(s, i4, NULL, &fl));
    int f1 = net_affine(s, fl, o.hidden, 0.5f);
    int i5 = net_if(s, f1, 0, 0, NC_RESET_SUBTRACT, 0.5f);
    int f2 = net_affine(s, i5, 7, o.out_wscale);
    NET_OK(nc_snn_add_readout(s, f2, NULL, &ro));
    return s;
}

/* A pool and an IF on the input itself, max pooling of currents, two
 * readers of one layer. In the middle an Add of a static current and
 * spikes; or, with dense_pools, what cpu-fast cannot fold into events and
 * runs dense: a pool of spikes with per-neuron values, a pool of that pool,
 * and an Add of two spike layers. */
NET_FN nc_snn *net_static_paths(int dense_pools)
{
    int64_t in[3] = {2, 8, 8};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int p0 = net_pool(s, 0, 2, 2, 0);                              /* pool of the input: static */
    int c1 = net_conv(s, p0, 6, 3, 1, 1, 1, 1, 0.8f);
    int64_t k3[2] = {3, 3}, s1[2] = {1, 1}, pd1[2] = {1, 1};
    int mp;
    NET_OK(nc_snn_add_maxpool2d(s, c1, k3, s1, pd1, NULL, &mp));  /* 6 × 4 × 4 */
    int i1 = net_if(s, mp, 1, dense_pools, NC_RESET_SUBTRACT, 0.6f);
    int add, i2;
    if (dense_pools) {
        int p1 = net_pool(s, i1, 2, 2, 0);
        int p2 = net_pool(s, p1, 2, 1, 0);
        int a = net_if(s, p2, 0, 0, NC_RESET_SUBTRACT, 0.3f), b = net_if(s, p2, 1, 0, NC_RESET_ZERO, 0.4f);
        int from[2] = {a, b};
        NET_OK(nc_snn_add_add(s, 2, from, NULL, &add));            /* spikes + spikes */
        i2 = net_if(s, add, 0, 0, NC_RESET_SUBTRACT, 0.5f);
    } else {
        int from[2] = {mp, i1};
        NET_OK(nc_snn_add_add(s, 2, from, NULL, &add));            /* static + spikes */
        i2 = net_if(s, add, 0, 0, NC_RESET_SUBTRACT, 0.9f);
    }
    int iin = net_if(s, 0, 1, 0, NC_RESET_SUBTRACT, 1.5f);         /* IF on the input */
    int pin = net_pool(s, iin, 2, 2, 0);                           /* folded by cpu-fast */
    int fl1, fl2, ro;
    NET_OK(nc_snn_add_flatten(s, i2, NULL, &fl1));
    NET_OK(nc_snn_add_flatten(s, pin, NULL, &fl2));
    int f1 = net_affine(s, fl1, 5, 0.8f), f2 = net_affine(s, fl2, 5, 0.8f);
    int sum[2] = {f1, f2}, a2;
    NET_OK(nc_snn_add_add(s, 2, sum, NULL, &a2));
    NET_OK(nc_snn_add_readout(s, a2, NULL, &ro));
    return s;
}

/* Concats along channels of every kind of value: spikes with per-neuron
 * values, a pool of spikes (counts in cpu-fast), a channel-last convolution's
 * currents and the input itself; read by a convolution, an IF, a pool and an
 * Add; a Concat of a Concat; a Concat of flat layers before the readout.
 * Beside them average pools with per-window divisors (ceil mode, padding
 * not counted) of spikes and of a Concat. */
NET_FN nc_snn *net_concat_paths(void)
{
    int64_t in[3] = {2, 6, 6};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 6, 3, 1, 1, 1, 1, 0.8f);               /* 6 × 6 × 6 */
    int i1 = net_if(s, c1, 1, 0, NC_RESET_SUBTRACT, 0.6f);
    int p1 = net_pool(s, i1, 3, 1, 1);                             /* counts */
    int i1b = net_if(s, c1, 0, 1, NC_RESET_ZERO, 0.5f);            /* per-neuron spike values */
    int c2 = net_conv(s, i1, 5, 3, 1, 1, 1, 1, 0.5f);              /* currents */
    int f1[5] = {i1b, p1, c2, 0, i1}, cat1;
    NET_OK(nc_snn_add_concat(s, 5, f1, NULL, &cat1));              /* 25 × 6 × 6 */
    int i2 = net_if(s, cat1, 1, 0, NC_RESET_SUBTRACT, 0.7f);       /* IF reading a Concat */
    int c3 = net_conv(s, i2, 4, 3, 2, 1, 1, 1, 0.4f);              /* 4 × 3 × 3 */
    int c4 = net_conv(s, cat1, 4, 3, 2, 1, 1, 1, 0.2f);            /* conv of a Concat */
    int pc = net_pool(s, cat1, 2, 2, 0);                           /* pool of a Concat: 25 × 3 × 3 */
    int i4 = net_if(s, pc, 0, 0, NC_RESET_SUBTRACT, 0.5f);
    int f2[2] = {c3, c4}, add, f3[3] = {0, 0, 0}, cat2, cat3;
    NET_OK(nc_snn_add_add(s, 2, f2, NULL, &add));
    int i3 = net_if(s, add, 1, 0, NC_RESET_SUBTRACT, 0.6f);
    f3[0] = i3;
    f3[1] = i4;
    f3[2] = add;
    NET_OK(nc_snn_add_concat(s, 3, f3, NULL, &cat2));              /* 33 × 3 × 3 */
    int f4[2] = {cat2, i3};
    NET_OK(nc_snn_add_concat(s, 2, f4, NULL, &cat3));              /* a Concat of a Concat */
    int i5 = net_if(s, cat3, 0, 0, NC_RESET_SUBTRACT, 0.8f);
    int fl, ro;
    NET_OK(nc_snn_add_flatten(s, i5, NULL, &fl));
    int a1 = net_affine(s, fl, 6, 0.3f), ia = net_if(s, a1, 0, 0, NC_RESET_SUBTRACT, 0.4f);
    int a2 = net_affine(s, fl, 3, 0.3f);
    int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, q1[2] = {1, 1}, pe[2] = {1, 1}, none[2] = {0, 0};
    int pdv;
    NET_OK(nc_snn_add_pool2d_div(s, i1, k3, s2, q1, pe, none, NULL, &pdv));       /* 6 × 4 × 4, partial windows */
    int idv = net_if(s, pdv, 1, 0, NC_RESET_SUBTRACT, 0.3f), pd2, fd;
    NET_OK(nc_snn_add_pool2d_div(s, cat1, k3, s2, q1, none, q1, NULL, &pd2));   /* padding counted */
    int64_t k2[2] = {2, 2}, one[2] = {1, 1};
    int pd3;
    NET_OK(nc_snn_add_pool2d_div(s, idv, k2, k2, one, pe, none, NULL, &pd3));      /* 6 × 3 × 3 */
    NET_OK(nc_snn_add_flatten(s, pd3, NULL, &fd));
    int a4 = net_affine(s, fd, 4, 0.3f), fd2;
    NET_OK(nc_snn_add_flatten(s, pd2, NULL, &fd2));
    int a5 = net_affine(s, fd2, 2, 0.1f);
    int f5[4] = {ia, a2, a4, a5}, cat4;
    NET_OK(nc_snn_add_concat(s, 4, f5, NULL, &cat4));              /* flat: 15 */
    int a3 = net_affine(s, cat4, 5, 0.5f);
    NET_OK(nc_snn_add_readout(s, a3, NULL, &ro));
    return s;
}

/* A signed IF layer (nc_if_params.signed_spikes: θ as spike values, reset
 * by subtraction) sending up to `burst` spikes a step, θ as net_theta. */
NET_FN int net_signed_burst(nc_snn *s, int from, int per, float theta, int burst)
{
    int64_t size;
    nc_tensor *th = net_theta(s, from, per, theta, &size);
    nc_if_params p = {.threshold = th, .signed_spikes = 1, .max_spikes = burst};
    int id;
    NET_OK(nc_snn_add_if(s, from, &p, NULL, &id));
    nc_tensor_free(th);
    return id;
}

NET_FN int net_signed_if(nc_snn *s, int from, int per, float theta)
{
    return net_signed_burst(s, from, per, theta, 1);
}

/* Bursts: conv 8 (3×3) → signed IF, θ per channel → conv 6, stride 2 →
 * signed IF, θ per neuron → affine 12 → signed IF, θ per layer → affine 4
 * → readout, every IF layer sending up to `burst` spikes a step with
 * thresholds low enough that many send several. */
NET_FN nc_snn *net_bursts(int burst)
{
    int64_t in[3] = {3, 9, 9};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 0.8f);
    int i1 = net_signed_burst(s, c1, 1, 0.2f, burst);
    int c2 = net_conv(s, i1, 6, 3, 2, 1, 1, 1, 0.6f);
    int i2 = net_signed_burst(s, c2, 2, 0.15f, burst), fl, ro;
    NET_OK(nc_snn_add_flatten(s, i2, NULL, &fl));
    int a1 = net_affine(s, fl, 12, 0.4f);
    int i3 = net_signed_burst(s, a1, 0, 0.1f, burst);
    int a2 = net_affine(s, i3, 4, 0.5f);
    NET_OK(nc_snn_add_readout(s, a2, NULL, &ro));
    return s;
}

/* One stage of a chain of convolutions (net_chain): a convolution (as
 * net_conv) and the IF layer after it: signed with up to `burst` spikes
 * (0 or 1: one), or with `plain` an IF resetting by subtraction; θ as
 * net_theta (per, theta). */
typedef struct net_stage {
    int64_t cout, k, stride, pad, dil, groups;
    float wscale;
    int per;
    float theta;
    int burst, plain;
} net_stage;

/* The stages one after another from layer `from`; returns the last IF. */
NET_FN int net_chain(nc_snn *s, int from, const net_stage *st, int n)
{
    for (int k = 0; k < n; k++) {
        const net_stage *g = &st[k];
        int c = net_conv(s, from, g->cout, g->k, g->stride, g->pad, g->dil, g->groups, g->wscale);
        from = g->plain ? net_if(s, c, g->per, 0, NC_RESET_SUBTRACT, g->theta)
                        : net_signed_burst(s, c, g->per, g->theta, g->burst > 1 ? g->burst : 1);
    }
    return from;
}

/* Flatten → affine `out` → readout after layer `from`; returns s. */
NET_FN nc_snn *net_finish(nc_snn *s, int from, int64_t out, float wscale)
{
    int fl, ro;
    NET_OK(nc_snn_add_flatten(s, from, NULL, &fl));
    int a = net_affine(s, fl, out, wscale);
    NET_OK(nc_snn_add_readout(s, a, NULL, &ro));
    return s;
}

/* Depthwise and 1×1 convolutions (MobileNet's) of signed spikes: conv 20
 * → signed IF → depthwise 3×3 → signed IF, bursts of 2 → depthwise 3×3,
 * stride 2, padding 2, dilation 2 (6×6) → signed IF, θ per neuron →
 * depthwise 5×5, padding 1 (4×4) → signed IF → 1×1 conv 36, stride 2,
 * padding 1 (3×3, a padded row and column) → signed IF → 1×1 conv 40 →
 * signed IF → affine 4 → readout. 20 channels: whole vectors and a tail. */
NET_FN nc_snn *net_depthwise(void)
{
    static const net_stage st[] = {
        {20, 3, 1, 1, 1, 1, 0.8f, 1, 0.3f, 1, 0},   {20, 3, 1, 1, 1, 20, 0.9f, 1, 0.2f, 2, 0},
        {20, 3, 2, 2, 2, 20, 0.9f, 2, 0.2f, 1, 0},  {20, 5, 1, 1, 1, 20, 0.7f, 0, 0.15f, 1, 0},
        {36, 1, 2, 1, 1, 1, 0.6f, 1, 0.15f, 1, 0},  {40, 1, 1, 0, 1, 1, 0.5f, 1, 0.15f, 1, 0},
    };
    int64_t in[3] = {3, 11, 11};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    return net_finish(s, net_chain(s, 0, st, 6), 4, 0.5f);
}

/* A channel selection as conversion writes a shuffle or a Slice: a 1×1
 * convolution of one-hot weights and zero bias, out[o] = in[src[o]], or
 * zero where src[o] < 0. */
NET_FN int net_select(nc_snn *s, int from, int64_t cout, const int *src)
{
    nc_snn_layer_info X;
    NET_OK(nc_snn_layer_at(s, from, &X));
    int64_t ws[4] = {cout, X.shape[0], 1, 1}, bs[1] = {cout};
    nc_tensor *w = NULL, *b = NULL;
    NET_OK(nc_tensor_create(NC_DTYPE_F32, 4, ws, &w));
    NET_OK(nc_tensor_create(NC_DTYPE_F32, 1, bs, &b));
    float *wd = nc_tensor_data(w);
    memset(wd, 0, (size_t)nc_tensor_numel(w) * sizeof *wd);
    memset(nc_tensor_data(b), 0, (size_t)cout * sizeof(float));
    for (int64_t o = 0; o < cout; o++)
        if (src[o] >= 0)
            wd[o * X.shape[0] + src[o]] = 1.0f;
    nc_conv2d_params p = {{1, 1}, {0, 0}, {1, 1}, 1};
    int id;
    NET_OK(nc_snn_add_conv2d(s, from, w, b, &p, NULL, &id));
    nc_tensor_free(w);
    nc_tensor_free(b);
    return id;
}

/* Channel selections (net_select): conv 12 → signed IF → a shuffle with
 * one output left empty (9 of 12, of channel-last spikes) → signed IF →
 * Concat of both IF layers (21 channels, NCHW) → a Slice-like selection of
 * 10 → signed IF → conv 8 → signed IF → affine 4 → readout. */
NET_FN nc_snn *net_selections(void)
{
    int64_t in[3] = {3, 6, 6};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    static const net_stage first = {12, 3, 1, 1, 1, 1, 0.8f, 1, 0.3f, 1, 0};
    int i1 = net_chain(s, 0, &first, 1);
    static const int src1[9] = {0, 4, 8, 1, 5, -1, 2, 6, 10}, src2[10] = {12, 13, 14, 15, 16, 17, 18, 19, 20, 3};
    int sl1 = net_select(s, i1, 9, src1);
    int i2 = net_signed_if(s, sl1, 1, 0.2f), parts[2] = {i1, i2}, cat;
    NET_OK(nc_snn_add_concat(s, 2, parts, NULL, &cat));
    int sl2 = net_select(s, cat, 10, src2);
    int i3 = net_signed_if(s, sl2, 1, 0.2f);
    static const net_stage last = {8, 3, 1, 1, 1, 1, 0.6f, 1, 0.2f, 1, 0};
    return net_finish(s, net_chain(s, i3, &last, 1), 4, 0.5f);
}

/* Strided 3×3 convolutions of 16 and 32 outputs (cpu-fast's register
 * kernels): conv 16 → signed IF → conv 32, stride 2, padding 1 → IF →
 * conv 16, stride 2, padding 2, dilation 2 → signed IF → conv 32, stride 3
 * → signed IF → affine 4 → readout. */
NET_FN nc_snn *net_strided(void)
{
    static const net_stage st[] = {
        {16, 3, 1, 1, 1, 1, 0.8f, 1, 0.3f, 1, 0}, {32, 3, 2, 1, 1, 1, 0.5f, 1, 0.3f, 1, 1}, /* 7 × 7 */
        {16, 3, 2, 2, 2, 1, 0.5f, 1, 0.2f, 1, 0}, /* 4 × 4 */
        {32, 3, 3, 1, 1, 1, 0.5f, 0, 0.2f, 1, 0}, /* 2 × 2 */
    };
    int64_t in[3] = {3, 13, 13};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    return net_finish(s, net_chain(s, 0, st, 4), 4, 0.5f);
}

/* The cuda backend's register-tile conv kernel's shapes (32, 64, 128 and
 * 256 channels a group: 1, 2, 4 and 8 a lane; 3×3 and 1×1, stride 1 and 2;
 * rows wider than its 16-column tiles, heights not a multiple of its row
 * groups): conv 32 3×3 (7 × 37, three tiles, the last partial) → IF →
 * conv 64 3×3 stride 2 → signed IF, bursts of 2 (the spike value changes
 * within a row) → 1×1 conv 128 stride 2, 2 groups → signed IF, θ per
 * neuron → 3×3 conv 128 padding 2 → IF → 1×1 conv 128 → IF → 3×3 conv 256
 * → IF → 3×3 conv 256 stride 2 → IF → affine 4. */
NET_FN nc_snn *net_tile_convs(void)
{
    static const net_stage st[] = {
        {32, 3, 1, 1, 1, 1, 0.8f, 1, 0.3f, 1, 1},  {64, 3, 2, 1, 1, 1, 0.5f, 1, 0.2f, 2, 0}, /* 4 × 19 */
        {128, 1, 2, 0, 1, 2, 0.6f, 0, 0.2f, 1, 0}, /* 2 × 10 */
        {128, 3, 1, 2, 1, 1, 0.4f, 1, 0.2f, 1, 1}, /* 4 × 12 */
        {128, 1, 1, 0, 1, 1, 0.4f, 1, 0.2f, 1, 1}, {256, 3, 1, 1, 1, 1, 0.3f, 1, 0.2f, 1, 1},
        {256, 3, 2, 1, 1, 1, 0.3f, 1, 0.2f, 1, 1}, /* 2 × 6 */
    };
    int64_t in[3] = {3, 7, 37};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    return net_finish(s, net_chain(s, 0, st, 7), 4, 0.3f);
}

/* A wide spiking max pool of signed spikes: conv 70 (whole vectors of
 * every width, a tail, and more than 64 channels) → signed IF, θ per
 * channel → spiking max pool 3×3, stride 2, padding 1 → affine 4. */
NET_FN nc_snn *net_spike_maxpool_wide(int *pool)
{
    int64_t in[3] = {2, 7, 7}, k3[2] = {3, 3}, s2[2] = {2, 2}, p1[2] = {1, 1};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    static const net_stage st = {70, 3, 1, 1, 1, 1, 0.8f, 1, 0.4f, 1, 0};
    NET_OK(nc_snn_add_spike_maxpool2d(s, net_chain(s, 0, &st, 1), k3, s2, p1, NULL, pool)); /* 70 × 4 × 4 */
    return net_finish(s, *pool, 4, 0.3f);
}

/* Spiking max pooling (SpikeMaxPool2d): of IF spikes with per-channel θ
 * (overlapping padded windows), of IF spikes with per-neuron values and
 * reset to zero, of a pool of its own, and of the input itself (static
 * under direct encoding). With signed_if the two IF layers send signed
 * spikes (per channel and per neuron θ), so the pools' counts also fall,
 * a Concat of signed and plain spikes feeds a fifth pool, and an average
 * pool reads signed spikes. pools (may
 * be NULL) gets the ids of the first four pools. */
NET_FN nc_snn *net_spike_maxpool(int signed_if, int pools[4])
{
    int64_t in[3] = {3, 10, 10}, k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2}, p1[2] = {1, 1};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 0.8f);
    int i1 = signed_if ? net_signed_if(s, c1, 1, 0.5f) : net_if(s, c1, 1, 0, NC_RESET_SUBTRACT, 0.5f);
    int m1, m2, m3, m0, fl, fl0, ro, sum;
    NET_OK(nc_snn_add_spike_maxpool2d(s, i1, k3, s2, p1, NULL, &m1));  /* 8 × 5 × 5 */
    int c2 = net_conv(s, m1, 6, 3, 1, 1, 1, 1, 0.6f);
    int i2 = signed_if ? net_signed_if(s, c2, 2, 0.4f) : net_if(s, c2, 2, 1, NC_RESET_ZERO, 0.4f);
    NET_OK(nc_snn_add_spike_maxpool2d(s, i2, k2, s2, NULL, NULL, &m2)); /* 6 × 2 × 2 */
    NET_OK(nc_snn_add_spike_maxpool2d(s, m2, k2, k2, NULL, NULL, &m3)); /* 6 × 1 × 1 */
    NET_OK(nc_snn_add_spike_maxpool2d(s, 0, k3, s2, p1, NULL, &m0));   /* of the input: 3 × 5 × 5 */
    NET_OK(nc_snn_add_flatten(s, m3, NULL, &fl));
    NET_OK(nc_snn_add_flatten(s, m0, NULL, &fl0));
    int f1 = net_affine(s, fl, 4, 0.8f), f0 = net_affine(s, fl0, 4, 0.3f), from[4] = {f1, f0, 0, 0};
    int n_sum = 2;
    if (signed_if) {
        int c3 = net_conv(s, m1, 6, 3, 1, 1, 1, 1, 0.6f), i3 = net_if(s, c3, 1, 0, NC_RESET_SUBTRACT, 0.4f);
        int parts[2] = {i2, i3}, cat, mc, flc;
        NET_OK(nc_snn_add_concat(s, 2, parts, NULL, &cat));             /* 12 × 5 × 5 */
        NET_OK(nc_snn_add_spike_maxpool2d(s, cat, k3, s2, p1, NULL, &mc)); /* 12 × 3 × 3 */
        NET_OK(nc_snn_add_flatten(s, mc, NULL, &flc));
        from[n_sum++] = net_affine(s, flc, 4, 0.4f);
        int pa = net_pool(s, i1, 3, 2, 1), fla; /* average pooling of signed spikes: 8 × 5 × 5 */
        NET_OK(nc_snn_add_flatten(s, pa, NULL, &fla));
        from[n_sum++] = net_affine(s, fla, 4, 0.4f);
    }
    NET_OK(nc_snn_add_add(s, n_sum, from, NULL, &sum));
    NET_OK(nc_snn_add_readout(s, sum, NULL, &ro));
    if (pools) {
        pools[0] = m1;
        pools[1] = m2;
        pools[2] = m3;
        pools[3] = m0;
    }
    return s;
}

/* Spiking max pooling of bursts: conv 8 → signed IF of bursts of up to
 * `burst`, θ per channel (low: many bursts) → spiking max pool 3×3, stride
 * 2, padding 1 (8 × 5 × 5) → conv 6 → signed IF of bursts, θ per neuron →
 * pool 2×2 (6 × 2 × 2) → pool of that pool 2×2 (6 × 1 × 1) → affine; and a
 * Concat of the first burst layer and a plain IF (its windows: one spike a
 * step) → pool 3×3, stride 2 (16 × 4 × 4) → conv 1×1 → affine; summed into
 * the readout. pools (may be NULL) gets the first pool's id, the pool of a
 * pool's and the Concat pool's. */
NET_FN nc_snn *net_spike_maxpool_bursts(int burst, int pools[3])
{
    int64_t in[3] = {3, 10, 10}, k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2}, p1[2] = {1, 1};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 0.8f);
    int i1 = net_signed_burst(s, c1, 1, 0.15f, burst);
    int m1, m2, m3, fl, cat, mc, sum, ro;
    NET_OK(nc_snn_add_spike_maxpool2d(s, i1, k3, s2, p1, NULL, &m1)); /* 8 × 5 × 5 */
    int c2 = net_conv(s, m1, 6, 3, 1, 1, 1, 1, 0.6f);
    int i2 = net_signed_burst(s, c2, 2, 0.1f, burst);
    NET_OK(nc_snn_add_spike_maxpool2d(s, i2, k2, s2, NULL, NULL, &m2)); /* 6 × 2 × 2 */
    NET_OK(nc_snn_add_spike_maxpool2d(s, m2, k2, k2, NULL, NULL, &m3)); /* 6 × 1 × 1 */
    NET_OK(nc_snn_add_flatten(s, m3, NULL, &fl));
    int c3 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 0.8f), i3 = net_if(s, c3, 1, 0, NC_RESET_SUBTRACT, 0.4f);
    int parts[2] = {i1, i3};
    NET_OK(nc_snn_add_concat(s, 2, parts, NULL, &cat));               /* 16 × 10 × 10 */
    NET_OK(nc_snn_add_spike_maxpool2d(s, cat, k3, s2, NULL, NULL, &mc)); /* 16 × 4 × 4 */
    int c4 = net_conv(s, mc, 5, 1, 1, 0, 1, 1, 0.5f), fl4;
    NET_OK(nc_snn_add_flatten(s, c4, NULL, &fl4));
    int from[2] = {net_affine(s, fl, 4, 0.8f), net_affine(s, fl4, 4, 0.3f)};
    NET_OK(nc_snn_add_add(s, 2, from, NULL, &sum));
    NET_OK(nc_snn_add_readout(s, sum, NULL, &ro));
    if (pools) {
        pools[0] = m1;
        pools[1] = m3;
        pools[2] = mc;
    }
    return s;
}

/* A Nonlinear layer of function fn (nc_snn_add_nonlinear) from the inputs
 * a (and b: Mul, MatMul); HardSigmoid with PyTorch's 1/6, 1/2. */
NET_FN int net_nl(nc_snn *s, nc_nonlinear_fn fn, int a, int b, int axis, int trans_x, int trans_y)
{
    nc_nonlinear_params p = {.fn = fn, .alpha = 1.0f / 6.0f, .beta = 0.5f, .eps = 1e-5f, .axis = axis,
                             .trans_x = trans_x, .trans_y = trans_y};
    int from[2] = {a, b}, id;
    NET_OK(nc_snn_add_nonlinear(s, fn == NC_NL_MUL || fn == NC_NL_MATMUL ? 2 : 1, from, &p, NULL, &id));
    return id;
}

/* Nonlinear layers of function fn on every kind of value: conv 8 (3×3) →
 * IF spikes and the conv's currents (8, 6, 6) (channel-last where a
 * backend keeps them so), read by
 *   element-wise fn: fn(spikes) + fn(currents);
 *   Mul: a second conv's currents ⊙ the spikes' 6×6 mean pool (8, 1, 1),
 *     a gate, ⊙ spikes (currents of another conv than the spikes' own, so
 *     that a spike meets a negative current whatever the random draws: a
 *     constant input's own current is positive wherever its IF fires);
 *   MatMul: attention, softmax(spikes·currentsᵀ)·currents, then ·spikes
 *     read transposed;
 *   LayerNorm over the channels of the currents, Softmax along the rows
 *     of the spikes;
 * → a two-sided SignedIF (θ per channel) → conv 4 (3×3, stride 2) → IF
 * → affine 5 → readout. */
NET_FN nc_snn *net_nonlinear(nc_nonlinear_fn fn)
{
    int64_t in[3] = {3, 6, 6};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 0.8f);
    int i1 = net_if(s, c1, 1, 0, NC_RESET_SUBTRACT, 0.6f), z, fl, ro;
    switch (fn) {
    case NC_NL_MUL: {
        int g = net_pool(s, i1, 6, 6, 0), c2 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 0.8f);
        z = net_nl(s, NC_NL_MUL, net_nl(s, NC_NL_MUL, c2, g, 0, 0, 0), i1, 0, 0, 0);
        break;
    }
    case NC_NL_MATMUL: {
        int sc = net_nl(s, NC_NL_MATMUL, i1, c1, 0, 0, 1);
        int a = net_nl(s, NC_NL_MATMUL, net_nl(s, NC_NL_SOFTMAX, sc, 0, -1, 0, 0), c1, 0, 0, 0);
        z = net_nl(s, NC_NL_MATMUL, a, i1, 0, 1, 0);
        break;
    }
    case NC_NL_LAYERNORM: z = net_nl(s, fn, c1, 0, 0, 0, 0); break;
    case NC_NL_SOFTMAX: z = net_nl(s, fn, i1, 0, 1, 0, 0); break;
    default: {
        int both[2] = {net_nl(s, fn, i1, 0, 0, 0, 0), net_nl(s, fn, c1, 0, 0, 0, 0)};
        NET_OK(nc_snn_add_add(s, 2, both, NULL, &z));
        break;
    }
    }
    int64_t size;
    nc_tensor *th = net_theta(s, z, 1, 0.3f, &size);
    nc_if_params p = {.threshold = th, .signed_spikes = NC_SIGNED_TWO_SIDED};
    int sif;
    NET_OK(nc_snn_add_if(s, z, &p, NULL, &sif));
    nc_tensor_free(th);
    int c3 = net_conv(s, sif, 4, 3, 2, 1, 1, 1, 0.6f);
    int i3 = net_if(s, c3, 0, 0, NC_RESET_SUBTRACT, 0.5f);
    NET_OK(nc_snn_add_flatten(s, i3, NULL, &fl));
    NET_OK(nc_snn_add_readout(s, net_affine(s, fl, 5, 0.5f), NULL, &ro));
    return s;
}

/* The example CNN's shapes (examples/train_fashion.py) with random weights. */
NET_FN nc_snn *net_cnn_shapes(void)
{
    int64_t in[3] = {1, 28, 28};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 16, 3, 1, 1, 1, 1, 0.6f);
    int i1 = net_if(s, c1, 1, 0, NC_RESET_SUBTRACT, 1.0f);
    int p1 = net_pool(s, i1, 2, 2, 0);
    int c2 = net_conv(s, p1, 32, 3, 1, 1, 1, 1, 0.3f);
    int i2 = net_if(s, c2, 2, 0, NC_RESET_SUBTRACT, 1.0f);
    int p2 = net_pool(s, i2, 2, 2, 0);
    int fl, ro;
    NET_OK(nc_snn_add_flatten(s, p2, NULL, &fl));
    int f1 = net_affine(s, fl, 128, 0.1f);
    int i3 = net_if(s, f1, 0, 0, NC_RESET_SUBTRACT, 1.0f);
    int f2 = net_affine(s, i3, 10, 0.3f);
    NET_OK(nc_snn_add_readout(s, f2, NULL, &ro));
    return s;
}

/* IF neurons after a conv whose weights scale as 1/√(fan-in): spike
 * densities about 0.3 in net_resnet18_shapes (measured at 32 px). */
NET_FN int net_conv_if(nc_snn *s, int from, int64_t cout, int64_t k, int64_t stride, int64_t pad)
{
    nc_snn_layer_info X;
    NET_OK(nc_snn_layer_at(s, from, &X));
    float fan_in = (float)(X.shape[0] * k * k);
    int c = net_conv(s, from, cout, k, stride, pad, 1, 1, 1.0f / sqrtf(fan_in * 0.15f));
    return net_if(s, c, 1, 0, NC_RESET_SUBTRACT, 1.0f);
}

/* ResNet-18's layer shapes at px × px (224: the ImageNet model; px a
 * multiple of 32), random weights: conv 7×7/2, a 2×2 pool, four stages of
 * two basic blocks (3×3 convs; a 1×1 stride-2 conv on the shortcut where a
 * stage halves the size), a global average pool and fc 1000. */
NET_FN nc_snn *net_resnet18_shapes(int64_t px)
{
    int64_t in[3] = {3, px, px};
    nc_snn *s = NULL;
    NET_OK(nc_snn_create(3, in, &s));
    int x = net_pool(s, net_conv_if(s, 0, 64, 7, 2, 3), 2, 2, 0);
    static const int64_t width[4] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; stage++)
        for (int b = 0; b < 2; b++) {
            int64_t stride = stage > 0 && b == 0 ? 2 : 1;
            int h = net_conv_if(s, x, width[stage], 3, stride, 1);
            nc_snn_layer_info H;
            NET_OK(nc_snn_layer_at(s, h, &H));
            int c = net_conv(s, h, width[stage], 3, 1, 1, 1, 1, 1.0f / sqrtf((float)(H.shape[0] * 9) * 0.15f));
            int sc = stride == 2 ? net_conv(s, x, width[stage], 1, 2, 0, 1, 1, 0.3f) : x;
            int from[2] = {c, sc}, add;
            NET_OK(nc_snn_add_add(s, 2, from, NULL, &add));
            x = net_if(s, add, 1, 0, NC_RESET_SUBTRACT, 1.0f);
        }
    int fl, ro;
    NET_OK(nc_snn_add_flatten(s, net_pool(s, x, px / 32, px / 32, 0), NULL, &fl));
    NET_OK(nc_snn_add_readout(s, net_affine(s, fl, 1000, 0.05f), NULL, &ro));
    return s;
}

#ifndef NC_TESTS_NO_ONNX
/* A shipped example model (path under the source tree) converted on 64 test
 * images with options co (NULL: the defaults); *batch gets the next n
 * images. */
NET_FN nc_snn *net_example(const char *path, int n, nc_tensor **batch, const nc_convert_options *co)
{
    nc_model *m = NULL;
    NET_OK(nc_model_load_onnx(path, NULL, &m));
    nc_tensor *x = NULL, *calib = NULL;
    char data[1024];
    snprintf(data, sizeof data, "%s/examples/data/fmnist_test_x.npy", NC_SOURCE_DIR);
    NET_OK(nc_data_load(data, NC_DTYPE_F32, &x));
    int64_t shape[4];
    memcpy(shape, nc_tensor_shape(x), sizeof shape);
    if (shape[0] < 64 + n) {
        fprintf(stderr, "%s: %lld images, %d needed\n", data, (long long)shape[0], 64 + n);
        exit(1);
    }
    shape[0] = 64;
    NET_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, shape, nc_tensor_data(x), &calib));
    shape[0] = n;
    NET_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, shape, (float *)nc_tensor_data(x) + 64 * 784, batch));
    nc_convert_options o;
    if (co)
        o = *co;
    else
        nc_convert_options_init(&o);
    o.calib_samples = 64;
    nc_snn *s = NULL;
    NET_OK(nc_convert(m, calib, NULL, &o, &s, NULL));
    nc_tensor_free(calib);
    nc_tensor_free(x);
    nc_model_free(m);
    return s;
}
#endif

#endif
