/* The cuda backend on a GPU against the cpu reference backend. Plain C (no
 * cmocka) so that scripts/gpu-check can build it on a machine without
 * cmocka; exits 77 (skipped) when there is no usable CUDA device. The same
 * program runs the real kernels and backend on the CPU harness
 * (tests/cuda_host/) as test_cuda_host, with --short: one run of each kind,
 * smaller batches, one example model, and the TF32 / BF16 dense paths.
 *
 *  - strategy "event": outputs (summed and per step), spike counts,
 *    synaptic-op counts, spike trains and membrane/value traces equal the
 *    reference's bit for bit, on random networks (stride, padding, dilation,
 *    groups, residual Adds, static paths, max pooling, Poisson and
 *    time-series input), with the steps in one chunk or several, and on the
 *    converted example models (unless built without ONNX import);
 *  - "dense" (cuBLAS, fp32) and "sparse" (cuSPARSE): synaptic-op counts equal
 *    the reference's; outputs within a tolerance (their sums run in another
 *    order, so a spike near threshold can flip: the readout is compared
 *    relative to its scale, and the argmax must mostly agree);
 *  - Nonlinear layers of every function and the two-sided SignedIF
 *    (net_nonlinear): "event" bit for bit on the CPU harness, whose
 *    tanhf is the reference's (e^x and erf are kernels/nonlinear.h's own
 *    on every backend); on a GPU, whose tanhf rounds otherwise, within
 *    check_close's tolerance (the functions without tanh could be held to
 *    bit identity there once a GPU has shown it);
 *  - bad options and unsupported layers fail with a message. */
#define _GNU_SOURCE 1 /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neuroc/neuroc.h"
#include "random_nets.h"

static int g_failures;

#define CHECK(cond, ...)                                     \
    do {                                                     \
        if (!(cond)) {                                       \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                    \
            fputc('\n', stderr);                             \
            g_failures++;                                    \
        }                                                    \
    } while (0)

typedef struct result {
    nc_tensor *y;
    int64_t spikes[64], synops[64];
    int64_t *steps; /* with per-step output: T × layers × {synaptic ops, burst ops} (count_steps) */
    nc_tensor *tr[64][2];
} result;

static void result_free(result *r)
{
    nc_tensor_free(r->y);
    free(r->steps);
    for (int i = 0; i < 64; i++)
        for (int k = 0; k < 2; k++)
            nc_tensor_free(r->tr[i][k]);
}

static nc_cuda_precision g_prec; /* of the dense GEMMs in the next runs */

static void run(const nc_snn *s, const char *backend, const char *strategy, const nc_tensor *x, int T,
                nc_encoding enc, int per_step, int record, result *r)
{
    int nl = (int)nc_snn_num_layers(s);
    const char *names[64];
    for (int i = 0; i < nl; i++) {
        nc_snn_layer_info L;
        NET_OK(nc_snn_layer_at(s, i, &L));
        names[i] = L.name;
    }
    nc_session_options o = {.backend = backend, .timesteps = T, .encoding = enc, .seed = 3, .per_step = per_step,
                            .record = record ? names : NULL, .n_record = record ? nl : 0,
                            .cuda_strategy = strategy, .cuda_precision = g_prec, .count_steps = per_step};
    nc_session *ss = NULL;
    memset(r, 0, sizeof *r);
    NET_OK(nc_session_create(s, &o, &ss));
    NET_OK(nc_session_run(ss, x, &r->y));
    nc_tensor_free(r->y); /* a second run on the same plan: nothing may leak from the first */
    NET_OK(nc_session_run(ss, x, &r->y));
    for (int i = 0; i < nl; i++) {
        NET_OK(nc_session_spike_count(ss, i, &r->spikes[i]));
        NET_OK(nc_session_synops(ss, i, &r->synops[i]));
        for (int k = 0; record && k < 2; k++)
            NET_OK(nc_session_trace(ss, names[i], k, &r->tr[i][k]));
    }
    if (per_step && (r->steps = malloc((size_t)T * (size_t)nl * 2 * sizeof *r->steps)) != NULL)
        for (int t = 0; t < T; t++)
            for (int i = 0; i < nl; i++) {
                NET_OK(nc_session_synops_step(ss, i, t, &r->steps[(t * nl + i) * 2]));
                NET_OK(nc_session_burst_ops_step(ss, i, t, &r->steps[(t * nl + i) * 2 + 1]));
            }
    nc_session_free(ss);
}

static int64_t same_bits(const nc_tensor *a, const nc_tensor *b, const char *what, int layer)
{
    const float *x = nc_tensor_data_const(a), *y = nc_tensor_data_const(b);
    for (int64_t k = 0; k < nc_tensor_numel(a); k++)
        if (memcmp(&x[k], &y[k], sizeof(float)) != 0) {
            CHECK(0, "%s of layer %d differs at %lld: cpu %.9g, cuda %.9g", what, layer, (long long)k, (double)x[k],
                  (double)y[k]);
            return 0;
        }
    return 1;
}

static int64_t g_spikes;

/* The event strategy: everything bit for bit. */
static void check_event(const char *what, const nc_snn *s, const nc_tensor *x, int T, nc_encoding enc, int per_step)
{
    result a, b;
    int nl = (int)nc_snn_num_layers(s);
    run(s, "cpu", NULL, x, T, enc, per_step, 1, &a);
    run(s, "cuda", "event", x, T, enc, per_step, 1, &b);
    int before = g_failures;
    same_bits(a.y, b.y, "output", -1);
    for (int i = 0; i < nl; i++) {
        CHECK(a.spikes[i] == b.spikes[i], "%s: spikes of layer %d: cpu %lld, cuda %lld", what, i,
              (long long)a.spikes[i], (long long)b.spikes[i]);
        CHECK(a.synops[i] == b.synops[i], "%s: synaptic ops of layer %d: cpu %lld, cuda %lld", what, i,
              (long long)a.synops[i], (long long)b.synops[i]);
        for (int t = 0; a.steps && b.steps && t < T; t++)
            for (int k = 0; k < 2; k++)
                CHECK(a.steps[(t * nl + i) * 2 + k] == b.steps[(t * nl + i) * 2 + k],
                      "%s: %s of layer %d at step %d: cpu %lld, cuda %lld", what, k ? "burst ops" : "synaptic ops", i,
                      t, (long long)a.steps[(t * nl + i) * 2 + k], (long long)b.steps[(t * nl + i) * 2 + k]);
        same_bits(a.tr[i][0], b.tr[i][0], "spike trace", i);
        same_bits(a.tr[i][1], b.tr[i][1], "membrane/value trace", i);
        g_spikes += a.spikes[i];
    }
    printf("%-40s event  T=%d %s%s: %s\n", what, T, enc == NC_ENCODING_POISSON ? "poisson" : "direct",
           per_step ? " per-step" : "", g_failures == before ? "bit-identical" : "DIFFERENT");
    result_free(&a);
    result_free(&b);
}

/* dense / sparse: counts exact, outputs close. */
static void check_close(const char *what, const nc_snn *s, const nc_tensor *x, int T, const char *strategy)
{
    result a, b;
    int nl = (int)nc_snn_num_layers(s);
    run(s, "cpu", NULL, x, T, NC_ENCODING_DIRECT, 0, 0, &a);
    run(s, "cuda", strategy, x, T, NC_ENCODING_DIRECT, 0, 0, &b);
    const float *p = nc_tensor_data_const(a.y), *q = nc_tensor_data_const(b.y);
    int64_t n = nc_tensor_numel(a.y), N = nc_tensor_shape(a.y)[0], C = n / N, agree = 0;
    double scale = 0, err = 0;
    for (int64_t k = 0; k < n; k++) {
        scale = fmax(scale, fabs(p[k]));
        err = fmax(err, fabs((double)p[k] - q[k]));
    }
    for (int64_t r = 0; r < N; r++) {
        int64_t ba = 0, bb = 0;
        for (int64_t c = 1; c < C; c++) {
            ba = p[r * C + c] > p[r * C + ba] ? c : ba;
            bb = q[r * C + c] > q[r * C + bb] ? c : bb;
        }
        agree += ba == bb;
    }
    int64_t spikes_a = 0, spikes_b = 0;
    for (int i = 0; i < nl; i++) {
        spikes_a += a.spikes[i];
        spikes_b += b.spikes[i];
    }
    /* A flipped spike moves the readout by about one spike's worth; allow a
     * few percent of the readout's range and one sample in ten to differ.
     * TF32 (11 significant bits) and BF16 (8) products flip more spikes: the
     * readout within 15 % and 25 % of its range, BF16's argmax on 8 samples
     * in ten. */
    double loose = g_prec == NC_CUDA_BF16 ? 5.0 : g_prec == NC_CUDA_TF32 ? 3.0 : 1.0;
    CHECK(err <= 0.05 * loose * scale + 1e-5, "%s %s: max |cpu - cuda| %.3g, readout scale %.3g", what, strategy, err, scale);
    CHECK(agree * 10 >= N * (g_prec == NC_CUDA_BF16 ? 8 : 9), "%s %s: argmax agrees on %lld of %lld samples", what, strategy, (long long)agree,
          (long long)N);
    CHECK(llabs(spikes_a - spikes_b) <= (int64_t)(loose * (double)spikes_a / 50) + 2, "%s %s: spikes cpu %lld, cuda %lld", what, strategy,
          (long long)spikes_a, (long long)spikes_b);
    printf("%-40s %-6s%s T=%d: max |diff| %.3g of scale %.3g, argmax agrees %lld/%lld, spikes %lld vs %lld\n", what,
           strategy, g_prec == NC_CUDA_TF32 ? " tf32" : g_prec == NC_CUDA_BF16 ? " bf16" : "", T, err, scale,
           (long long)agree, (long long)N, (long long)spikes_a, (long long)spikes_b);
    result_free(&a);
    result_free(&b);
}

static int g_short; /* --short: the form the default test suite runs on the CPU harness */

/* The event strategy in every input mode, the steps in one chunk and in
 * several; dense (fp32, and with --short on the harness tf32 and bf16),
 * sparse and auto against a tolerance. --short keeps one of each kind of
 * run and smaller batches. */
static void check_net(const char *what, nc_snn *s, int T)
{
    nc_tensor *x1 = net_rand_input(s, 0, 1), *x5 = net_rand_input(s, 0, g_short ? 3 : 5),
              *xs = net_rand_input(s, T, 3);
    check_event(what, s, x1, T, NC_ENCODING_DIRECT, 0);
    if (!g_short) {
        check_event(what, s, x5, T, NC_ENCODING_DIRECT, 1);
        check_event(what, s, x5, T, NC_ENCODING_POISSON, 0);
        check_event(what, s, xs, T, NC_ENCODING_DIRECT, 1);
    }
    setenv("NEUROC_CUDA_CHUNK_STEPS", "3", 1); /* the steps in several chunks */
    setenv("NEUROC_CUDA_CONV", "scatter", 1); /* each event Conv2d kernel, whatever the cost model says */
    check_event(what, s, x5, T, NC_ENCODING_DIRECT, 1);
    setenv("NEUROC_CUDA_CONV", "stationary", 1);
    setenv("NEUROC_CUDA_SYNC", "1", 1); /* every kernel waited for */
    check_event(what, s, xs, T, NC_ENCODING_POISSON, 0);
    unsetenv("NEUROC_CUDA_SYNC");
    unsetenv("NEUROC_CUDA_CONV");
    unsetenv("NEUROC_CUDA_CHUNK_STEPS");
    nc_tensor *big = net_rand_input(s, 0, g_short ? 20 : 64);
    check_close(what, s, big, T, "dense");
    check_close(what, s, big, T, "sparse");
    check_close(what, s, big, T, "auto");
    for (int p = NC_CUDA_TF32; g_short && p <= NC_CUDA_BF16; p++) {
        g_prec = (nc_cuda_precision)p;
        check_close(what, s, big, T, "dense");
    }
    g_prec = NC_CUDA_FP32;
    nc_tensor_free(big);
    nc_tensor_free(x1);
    nc_tensor_free(x5);
    nc_tensor_free(xs);
    nc_snn_free(s);
}

/* Options the session refuses before running. */
static void check_errors(void)
{
    nc_snn *s = net_cnn_shapes();
    nc_session *ss = NULL;
    const char *bad[] = {"fast", "event,nosuchlayer=dense", "event,input=dense", "event,dense"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        nc_session_options o = {.backend = "cuda", .timesteps = 2, .cuda_strategy = bad[k]};
        nc_status st = nc_session_create(s, &o, &ss);
        CHECK(st == NC_ERR_INVALID_ARG && !ss, "strategy '%s' accepted (%s)", bad[k], nc_last_error());
    }
    int64_t in[1] = {4};
    nc_snn *c = NULL;
    NET_OK(nc_snn_create(1, in, &c));
    int a = net_affine(c, 0, 3, 1.0f);
    nc_snn_layer *L = nc_snn_append(c, NC_SNN_LIF, "lif", 1); /* LIF: the cuda backend runs IF only */
    CHECK(L != NULL, "append failed");
    L->inputs[0] = a;
    L->ndim = 1;
    L->shape[0] = 3;
    nc_session_options o = {.backend = "cuda", .timesteps = 2};
    CHECK(nc_session_create(c, &o, &ss) == NC_ERR_UNSUPPORTED && strstr(nc_last_error(), "lif"),
          "LIF accepted: %s", nc_last_error());
    nc_snn_free(c);
    /* 2^24 outputs need 65536 blocks of 256 on grid.y, one past its limit */
    int64_t one[1] = {1};
    NET_OK(nc_snn_create(1, one, &c));
    net_affine(c, 0, (int64_t)1 << 24, 1.0f);
    CHECK(nc_session_create(c, &o, &ss) == NC_ERR_UNSUPPORTED && strstr(nc_last_error(), "too large"),
          "an Affine of 2^24 outputs accepted: %s", nc_last_error());
    nc_snn_free(c);
    nc_snn_free(s);
}

/* The work `kernel` reports (the harness's count since the reset) for one
 * run of s on the cuda event strategy, the conv kernel forced to `conv`,
 * on an input of pct events every 100 values. */
static unsigned long long kernel_work(nc_snn *s, int pct, const char *conv, const char *kernel,
                                      unsigned long long (*work)(const char *), void (*reset)(void))
{
    nc_tensor *x = net_rand_input(s, 0, 2);
    float *v = nc_tensor_data(x);
    for (int64_t i = 0; i < nc_tensor_numel(x); i++)
        v[i] = (i * 37) % 100 < pct ? 1.0f : 0.0f;
    setenv("NEUROC_CUDA_CONV", conv, 1);
    nc_session_options o = {.backend = "cuda", .timesteps = 2, .cuda_strategy = "event"};
    nc_session *ss = NULL;
    nc_tensor *y = NULL;
    NET_OK(nc_session_create(s, &o, &ss));
    reset();
    NET_OK(nc_session_run(ss, x, &y));
    unsigned long long w = work(kernel);
    unsetenv("NEUROC_CUDA_CONV");
    nc_tensor_free(y);
    nc_tensor_free(x);
    nc_session_free(ss);
    return w;
}

/* 1 on the CPU harness: its runtime is loaded (by the cuda module, once a
 * session has run). */
static int on_harness(void)
{
    void *rt = dlopen("libnc_cuda_host_rt.so", RTLD_NOW | RTLD_NOLOAD);
    if (rt)
        dlclose(rt);
    return rt != NULL;
}

/* Nonlinear layers of every function (the file comment). */
static void check_nonlinear(void)
{
    for (int fn = 0; fn < NC_NL_COUNT; fn++) {
        char what[64];
        snprintf(what, sizeof what, "Nonlinear %s", nc_nonlinear_fn_name((nc_nonlinear_fn)fn));
        nc_snn *s = net_nonlinear((nc_nonlinear_fn)fn);
        if (on_harness() || fn == NC_NL_MUL || fn == NC_NL_LAYERNORM) {
            check_net(what, s, 6); /* no exponential: bit for bit on a GPU too */
            continue;
        }
        nc_tensor *x = net_rand_input(s, 0, 20);
        check_close(what, s, x, 6, "event");
        nc_tensor_free(x);
        nc_snn_free(s);
    }
}

/* On the CPU harness (its runtime loaded by the cuda module): the work the
 * event kernels report (taps visited, events looked at) at input densities
 * 0.05 and 0.2, exactly (every 100 inputs hold 5 or 20 events; padding
 * k − 1 gives every input all its taps): the scatter conv kernels' (shared
 * memory and register tiles) and the Affine event kernel's work follows the
 * events, at most a quarter at 0.05 of what it is at 0.2; the
 * output-stationary conv kernel's does not. */
static void check_work(void)
{
    void *rt = dlopen("libnc_cuda_host_rt.so", RTLD_NOW | RTLD_NOLOAD);
    if (!rt) {
        printf("not on the CPU harness: kernel work not measured\n");
        return;
    }
    unsigned long long (*work)(const char *) = (unsigned long long (*)(const char *))dlsym(rt, "nc_host_work");
    void (*reset)(void) = (void (*)(void))dlsym(rt, "nc_host_work_reset");
    CHECK(work && reset, "the harness's work counters are missing");
    if (!work || !reset)
        return;
    uint64_t rng = g_net_rng; /* the later checks' random nets stay those of a run on a GPU */
    int64_t in[3] = {4, 25, 25}, flat[1] = {400};
    nc_snn *conv = NULL, *tile = NULL, *fc = NULL;
    int fl, ro;
    for (int t = 0; t < 2; t++) { /* 16 channels, 2 groups: the shared-memory kernel; 32: the register tiles */
        nc_snn **net = t ? &tile : &conv;
        NET_OK(nc_snn_create(3, in, net));
        int c = net_conv(*net, 0, t ? 32 : 16, 3, 1, 2, 1, t ? 1 : 2, 0.5f);
        NET_OK(nc_snn_add_flatten(*net, net_if(*net, c, 1, 0, NC_RESET_SUBTRACT, 1.0f), NULL, &fl));
        NET_OK(nc_snn_add_readout(*net, net_affine(*net, fl, 10, 0.3f), NULL, &ro));
    }
    NET_OK(nc_snn_create(1, flat, &fc));
    NET_OK(nc_snn_add_readout(fc, net_affine(fc, 0, 10, 0.3f), NULL, &ro));
    const struct {
        nc_snn *net;
        const char *conv, *kernel;
    } runs[4] = {{conv, "scatter", "conv_scatter_kernel"}, {conv, "stationary", "conv_event_kernel"},
                 {fc, "scatter", "fc_event_kernel"}, {tile, "scatter", "conv_tile_kernel"}};
    unsigned long long w[4][2];
    for (int k = 0; k < 4; k++) {
        for (int d = 0; d < 2; d++)
            w[k][d] = kernel_work(runs[k].net, d ? 20 : 5, runs[k].conv, runs[k].kernel, work, reset);
        printf("%-20s work at input density 0.05: %llu, at 0.2: %llu (%.3f)\n", runs[k].kernel, w[k][0], w[k][1],
               (double)w[k][0] / (double)w[k][1]);
        CHECK(w[k][0] > 0 && w[k][1] > 0, "%s: no work counted", runs[k].kernel);
        if (k != 1)
            CHECK(w[k][0] * 4 <= w[k][1], "the %s's work at density 0.05 (%llu) is more than a quarter of its "
                  "work at 0.2 (%llu)", runs[k].kernel, w[k][0], w[k][1]);
    }
    /* 25 input rows, output bands of 5 rows (27 × 64 floats of shared
     * memory each), 3×3 taps: with the row offsets a band reads the 7 input
     * rows that reach it (5 and 2 at the edges), 35 of 6 × 25 row reads;
     * the scatter kernel's work at 0.2 is 0.225 of the stationary kernel's
     * (0.40 when every band read every event). */
    CHECK(w[0][1] * 3 < w[1][1], "the scatter kernel's work at density 0.2 (%llu) is a third or more of the "
          "output-stationary kernel's (%llu): do its bands read events outside their rows?", w[0][1], w[1][1]);
    nc_snn_free(conv);
    nc_snn_free(tile);
    nc_snn_free(fc);
    g_net_rng = rng;
}

int main(int argc, char **argv)
{
    g_short = argc > 1 && strcmp(argv[1], "--short") == 0;
    int count = 0;
    if (nc_cuda_device_count(&count) != NC_OK || count < 1) {
        printf("no usable CUDA device: %s; skipped\n", nc_last_error());
        return 77;
    }
    printf("%d CUDA device(s)\n", count);
    check_errors();
    check_work();
    g_spikes = 0;
    check_net("random layers", net_random_layers(NET_RANDOM_CUDA), 7);
    check_net("static paths", net_static_paths(0), 5);
    check_net("example CNN shapes", net_cnn_shapes(), 8);
    check_net("concat paths", net_concat_paths(), 6);
    check_net("spiking max pools", net_spike_maxpool(0, NULL), 7);
    check_net("spiking max pools, signed spikes", net_spike_maxpool(1, NULL), 7);
    check_net("depthwise and grouped convolutions", net_depthwise(), 5);
    check_net("strided convolutions", net_strided(), 5);
    check_net("register-tile convolutions", net_tile_convs(), 5);
    check_nonlinear();
#ifndef NC_TESTS_NO_ONNX
    /* vgg: max pools of spikes; squeezenet: Concat, ceil-mode max pools; the last four with signed
       spikes, the last two of them with bursts */
    static const char *models[] = {"cnn.onnx", "cnn_qcfs.onnx", "resnet.onnx",     "mlp.onnx",
                                   "vgg.onnx", "squeezenet.onnx", "resnet.onnx", "vgg.onnx",
                                   "resnet.onnx", "squeezenet.onnx"};
    for (size_t k = 0; k < (g_short ? 1 : sizeof models / sizeof models[0]); k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/examples/models/%s", NC_SOURCE_DIR, models[k]);
        nc_tensor *x = NULL;
        nc_convert_options co;
        nc_convert_options_init(&co);
        co.spikes = k >= 6 ? NC_SPIKES_SIGNED : NC_SPIKES_PLAIN;
        co.burst = k == 8 ? 2 : k == 9 ? 3 : 1;
        nc_snn *s = net_example(path, g_short ? 4 : 16, &x, &co);
        check_event(models[k], s, x, 8, NC_ENCODING_DIRECT, 0);
        check_event(models[k], s, x, 8, NC_ENCODING_DIRECT, 1);
        check_event(models[k], s, x, 4, NC_ENCODING_POISSON, 0);
        check_close(models[k], s, x, 8, "dense");
        check_close(models[k], s, x, 8, "sparse");
        nc_tensor_free(x);
        nc_snn_free(s);
    }
#else
    printf("built without ONNX import: the example models are not checked here\n");
#endif
    /* last: the random draws of the checks before it stay as they were */
    check_net("spiking max pools of bursts", net_spike_maxpool_bursts(4, NULL), 7);
    CHECK(g_spikes > 0, "no spikes in any check");
    printf("%s (%d failure%s)\n", g_failures ? "FAILED" : "PASSED", g_failures, g_failures == 1 ? "" : "s");
    return g_failures ? 1 : 0;
}
