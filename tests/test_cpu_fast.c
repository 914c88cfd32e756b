/* Conformance of the cpu-fast backend against the reference ("cpu"): on
 * random layers (convolutions with stride, padding, dilation and groups,
 * pooling of spikes and of currents, max pooling, residual Adds, Affine),
 * on networks with the example CNN's shapes, and on the example models
 * converted from ONNX. The fast backend sums every output in the
 * reference's order, so everything must be equal bit for bit: readout sums
 * (and per-step outputs), spike counts, synaptic-op counts, spike trains and
 * membrane traces, for each instruction set the CPU has, several batch
 * sizes and thread counts, direct, Poisson and time-series input. */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "snn/backends/cpu_fast/fast_kernels.h"
#include "snn/ir/snn_ir.h"

#define NET_OK(expr) NC_ASSERT_OK(expr)
#include "random_nets.h"

/* ---- the comparison ---- */

typedef struct run_out {
    nc_tensor *y;
    int64_t spikes[64], synops[64];
    int64_t *synops_step; /* T × layers (nc_session_synops_step) */
    int64_t *burst_step;  /* T × layers (nc_session_burst_ops_step) */
    int T;
    nc_tensor *spk[64], *mem[64];
} run_out;

static void run_out_free(run_out *r)
{
    nc_tensor_free(r->y);
    free(r->synops_step);
    free(r->burst_step);
    for (int i = 0; i < 64; i++) {
        nc_tensor_free(r->spk[i]);
        nc_tensor_free(r->mem[i]);
    }
}

static void run_backend(const nc_snn *s, const char *backend, const nc_tensor *x, int T, nc_encoding enc,
                        int per_step, run_out *r)
{
    int nl = (int)nc_snn_num_layers(s);
    assert_true(nl <= 64);
    const char *names[64];
    for (int i = 0; i < nl; i++) {
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(s, i, &L));
        names[i] = L.name;
    }
    nc_session_options o = {.backend = backend, .timesteps = T, .encoding = enc, .seed = 7,
                            .per_step = per_step, .record = names, .n_record = nl, .count_steps = 1};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    memset(r, 0, sizeof *r);
    NC_ASSERT_OK(nc_session_run(ss, x, &r->y));
    r->T = T;
    r->synops_step = malloc((size_t)T * (size_t)nl * sizeof *r->synops_step);
    r->burst_step = malloc((size_t)T * (size_t)nl * sizeof *r->burst_step);
    assert_non_null(r->synops_step);
    assert_non_null(r->burst_step);
    for (int i = 0; i < nl; i++) {
        NC_ASSERT_OK(nc_session_spike_count(ss, i, &r->spikes[i]));
        NC_ASSERT_OK(nc_session_synops(ss, i, &r->synops[i]));
        int64_t sum = 0;
        for (int t = 0; t < T; t++) {
            NC_ASSERT_OK(nc_session_synops_step(ss, i, t, &r->synops_step[t * nl + i]));
            NC_ASSERT_OK(nc_session_burst_ops_step(ss, i, t, &r->burst_step[t * nl + i]));
            sum += r->synops_step[t * nl + i];
        }
        if (sum != r->synops[i]) /* the steps' counts add up to the run's */
            fail_msg("%s: synaptic ops of layer %d: %lld over the run, %lld summed over its steps", backend, i,
                     (long long)r->synops[i], (long long)sum);
        NC_ASSERT_OK(nc_session_trace(ss, names[i], NC_TRACE_SPIKES, &r->spk[i]));
        NC_ASSERT_OK(nc_session_trace(ss, names[i], NC_TRACE_MEMBRANE, &r->mem[i]));
    }
    nc_session_free(ss);
}

static void assert_same_tensor(const nc_tensor *a, const nc_tensor *b, const char *what, int layer)
{
    assert_int_equal(nc_tensor_numel(a), nc_tensor_numel(b));
    const float *x = nc_tensor_data_const(a), *y = nc_tensor_data_const(b);
    for (int64_t k = 0; k < nc_tensor_numel(a); k++)
        if (memcmp(&x[k], &y[k], sizeof(float)) != 0 && !(x[k] == 0.0f && y[k] == 0.0f))
            fail_msg("%s of layer %d differs at %lld: cpu %.9g, cpu-fast %.9g", what, layer, (long long)k,
                     (double)x[k], (double)y[k]);
}

static int64_t g_total_spikes; /* over the checks, so tests can see spikes happened */

/* Runs both backends with everything recorded and demands equality. */
static void check_same(const nc_snn *s, const nc_tensor *x, int T, nc_encoding enc, int per_step)
{
    run_out a, b;
    run_backend(s, "cpu", x, T, enc, per_step, &a);
    run_backend(s, "cpu-fast", x, T, enc, per_step, &b);
    assert_same_tensor(a.y, b.y, "output", -1);
    int nl = (int)nc_snn_num_layers(s);
    for (int i = 0; i < nl; i++) {
        if (a.spikes[i] != b.spikes[i])
            fail_msg("spike count of layer %d: cpu %lld, cpu-fast %lld", i, (long long)a.spikes[i],
                     (long long)b.spikes[i]);
        if (a.synops[i] != b.synops[i])
            fail_msg("synaptic ops of layer %d: cpu %lld, cpu-fast %lld", i, (long long)a.synops[i],
                     (long long)b.synops[i]);
        for (int t = 0; t < T; t++)
            if (a.burst_step[t * nl + i] != b.burst_step[t * nl + i])
                fail_msg("burst ops of layer %d at step %d: cpu %lld, cpu-fast %lld", i, t,
                         (long long)a.burst_step[t * nl + i], (long long)b.burst_step[t * nl + i]);
        for (int t = 0; t < T; t++)
            if (a.synops_step[t * nl + i] != b.synops_step[t * nl + i])
                fail_msg("synaptic ops of layer %d at step %d: cpu %lld, cpu-fast %lld", i, t,
                         (long long)a.synops_step[t * nl + i], (long long)b.synops_step[t * nl + i]);
        assert_same_tensor(a.spk[i], b.spk[i], "spike trace", i);
        assert_same_tensor(a.mem[i], b.mem[i], "membrane/value trace", i);
        g_total_spikes += a.spikes[i];
    }
    run_out_free(&a);
    run_out_free(&b);
}

/* Every kernel set this CPU runs, several batch sizes, thread counts and
 * input modes. */
static void check_all(const nc_snn *s, int T)
{
    static const char *isas[] = {"generic", "avx2", "avx512"};
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
        if (!nc_fast_kernels_select(isas[k]))
            continue;
        setenv("NEUROC_CPU_FAST_ISA", isas[k], 1);
        static const int batches[] = {1, 5};
        for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
            int N = batches[b];
            nc_tensor *x = net_rand_input(s, 0, N);
            check_same(s, x, T, NC_ENCODING_DIRECT, 0);
            check_same(s, x, T, NC_ENCODING_POISSON, 1);
            nc_tensor_free(x);
        }
        nc_tensor *xs = net_rand_input(s, T, 3); /* time series: nothing is static */
        check_same(s, xs, T, NC_ENCODING_DIRECT, 1);
        nc_tensor_free(xs);
    }
    unsetenv("NEUROC_CPU_FAST_ISA");
    /* steps in blocks of 3 (T not a multiple: a short last block), every
     * convolution merged over a block's steps */
    setenv("NEUROC_CPU_FAST_SLOTS", "3", 1);
    nc_tensor *xb = net_rand_input(s, 0, 5), *xbs = net_rand_input(s, T, 2);
    check_same(s, xb, T, NC_ENCODING_DIRECT, 0);
    check_same(s, xb, T, NC_ENCODING_POISSON, 1);
    check_same(s, xbs, T, NC_ENCODING_DIRECT, 1);
    nc_tensor_free(xb);
    nc_tensor_free(xbs);
    unsetenv("NEUROC_CPU_FAST_SLOTS");
#ifdef _OPENMP
    int was = omp_get_max_threads();
    nc_tensor *x = net_rand_input(s, 0, 4);
    omp_set_num_threads(1);
    check_same(s, x, T, NC_ENCODING_DIRECT, 0);
    omp_set_num_threads(3);
    check_same(s, x, T, NC_ENCODING_DIRECT, 0);
    nc_tensor_free(x);
    /* fewer samples than threads: a team shares each sample, every layer
     * it can split split (bands of rows, ranges of elements; uneven among
     * three), also in blocks of merged steps */
    setenv("NEUROC_CPU_FAST_TEAM", "all", 1);
    nc_tensor *x1 = net_rand_input(s, 0, 1), *x2 = net_rand_input(s, 0, 2);
    omp_set_num_threads(2);
    check_same(s, x1, T, NC_ENCODING_DIRECT, 0);
    check_same(s, x1, T, NC_ENCODING_POISSON, 1);
    setenv("NEUROC_CPU_FAST_SLOTS", "3", 1); /* a state's traces between a block's steps */
    check_same(s, x1, T, NC_ENCODING_DIRECT, 0);
    unsetenv("NEUROC_CPU_FAST_SLOTS");
    omp_set_num_threads(3);
    check_same(s, x2, T, NC_ENCODING_DIRECT, 0);
    unsetenv("NEUROC_CPU_FAST_TEAM");
    omp_set_num_threads(was);
    nc_tensor_free(x1);
    nc_tensor_free(x2);
#endif
}

static void log_into(nc_log_level level, const char *msg, void *user)
{
    (void)level;
    char *buf = user;
    size_t used = strlen(buf);
    snprintf(buf + used, 4096 - used, "%s\n", msg);
}

/* ---- networks ---- */

/* Convolutions with stride, padding, dilation and groups, a pooling of
 * spikes folded into events (overlapping windows, padding), residual Adds
 * of spikes and currents, flatten, affine. */
static void test_random_conv_layers(void **state)
{
    (void)state;
    /* spike values θ: the pool after the second IF is folded into events;
     * 64 channels and 20 hidden outputs: whole vectors */
    nc_snn *s = net_random_layers((net_random_opts){.conv_out = 64, .hidden = 20, .out_wscale = 0.5f});
    g_total_spikes = 0;
    check_all(s, 6);
    assert_true(g_total_spikes > 0);
    nc_snn_free(s);
}

/* Pools the fast backend cannot fold (per-neuron spike values, a pool of a
 * pool, a pool of the input), max pooling of currents, an Add of two spike
 * layers feeding a neuron directly, and an IF reading the input itself. */
static void test_dense_fallbacks(void **state)
{
    (void)state;
    nc_snn *s = net_static_paths(1);
    g_total_spikes = 0;
    check_all(s, 5);
    assert_true(g_total_spikes > 0);
    nc_snn_free(s);
}

/* check_all with some spikes, then the reference's run of N random inputs
 * into *a, for a test's own checks of what the layers did. */
static void check_all_then_reference(const nc_snn *s, int T, int N, run_out *a)
{
    g_total_spikes = 0;
    check_all(s, T);
    assert_true(g_total_spikes > 0);
    nc_tensor *x = net_rand_input(s, 0, N);
    run_backend(s, "cpu", x, T, NC_ENCODING_DIRECT, 0, a);
    nc_tensor_free(x);
}

/* Spiking max pooling (net_spike_maxpool, plain and signed spikes; pools of
 * signed spikes held channel-last take cpu-fast's own loop, the others the
 * reference's on a copy of the input) and a pool of 70 channels
 * (net_spike_maxpool_wide: every vector width and tail). */
static void test_spike_maxpool(void **state)
{
    (void)state;
    for (int sgn = 0; sgn < 2; sgn++) {
        int m[4];
        nc_snn *s = net_spike_maxpool(sgn, m);
        run_out a; /* the pools spike: count them on the reference */
        check_all_then_reference(s, 7, 2, &a);
        assert_true(a.spikes[m[0]] > 0 && a.spikes[m[1]] > 0 && a.spikes[m[2]] > 0 && a.spikes[m[3]] > 0);
        run_out_free(&a);
        nc_snn_free(s);
    }
    int pool;
    nc_snn *s = net_spike_maxpool_wide(&pool);
    run_out a;
    check_all_then_reference(s, 7, 2, &a);
    assert_true(a.spikes[pool] > 0);
    run_out_free(&a);
    nc_snn_free(s);
}

/* Spiking max pools of bursts (net_spike_maxpool_bursts, B = 4): every
 * kernel set runs them as the reference does, bit for bit, counts and the
 * ops of their bursts too; the pools do send bursts (their burst ops). */
static void test_spike_maxpool_bursts(void **state)
{
    (void)state;
    int m[3];
    nc_snn *s = net_spike_maxpool_bursts(4, m);
    run_out a;
    check_all_then_reference(s, 7, 2, &a);
    int nl = (int)nc_snn_num_layers(s);
    int64_t bursts = 0;
    for (int t = 0; t < a.T; t++)
        bursts += a.burst_step[t * nl + m[0]];
    assert_true(a.spikes[m[0]] > 0 && a.spikes[m[1]] > 0 && a.spikes[m[2]] > 0);
    assert_true(bursts > 0);
    run_out_free(&a);
    nc_snn_free(s);
}

/* Bursts (net_bursts, B = 2 and 3: 3·θ rounds where 2·θ does not): every
 * kernel set runs them as the reference does, and the layers do send
 * several spikes a step (the per-layer θ layer's trace holds values of at
 * least twice its smallest). */
static void test_bursts(void **state)
{
    (void)state;
    for (int B = 2; B <= 3; B++) {
        nc_snn *s = net_bursts(B);
        run_out a;
        check_all_then_reference(s, 7, 3, &a);
        int last = -1;
        for (int i = 0; i < (int)nc_snn_num_layers(s); i++) {
            nc_snn_layer_info L;
            NC_ASSERT_OK(nc_snn_layer_at(s, i, &L));
            last = L.kind == NC_SNN_SIGNED_IF ? i : last;
        }
        const float *sp = nc_tensor_data_const(a.spk[last]);
        float lo = INFINITY, hi = 0;
        for (int64_t k = 0; k < nc_tensor_numel(a.spk[last]); k++)
            if (sp[k] != 0.0f) {
                lo = fminf(lo, fabsf(sp[k]));
                hi = fmaxf(hi, fabsf(sp[k]));
            }
        assert_true(hi >= 1.99f * lo);
        run_out_free(&a);
        nc_snn_free(s);
    }
}

/* check_all_then_reference on N = 3 inputs, and every IF layer (plain or
 * signed) of s spiked on the reference. Frees s. */
static void check_all_every_if_spikes(nc_snn *s, int T)
{
    run_out a;
    check_all_then_reference(s, T, 3, &a);
    for (int i = 0; i < (int)nc_snn_num_layers(s); i++) {
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(s, i, &L));
        if (L.kind == NC_SNN_SIGNED_IF || L.kind == NC_SNN_IF)
            assert_true(a.spikes[i] > 0);
    }
    run_out_free(&a);
    nc_snn_free(s);
}

/* Depthwise and 1×1 convolutions of signed spikes (net_depthwise), which
 * cpu-fast gathers per output position. */
static void test_depthwise(void **state)
{
    (void)state;
    check_all_every_if_spikes(net_depthwise(), 7);
}

/* Strided and dilated 3×3 convolutions of 16 and 32 outputs (net_strided),
 * whose events reach accumulators at fixed distances from a base per
 * input position. */
static void test_strided_convs(void **state)
{
    (void)state;
    check_all_every_if_spikes(net_strided(), 6);
}

/* Channel selections (one-hot 1×1 convolutions, net_selections), which
 * cpu-fast copies. */
static void test_selections(void **state)
{
    (void)state;
    check_all_every_if_spikes(net_selections(), 6);
}

/* The example CNN's shapes (examples/train_fashion.py) with random weights:
 * conv 16 → IF → avgpool 2 → conv 32 → IF → avgpool 2 → fc 128 → IF → fc 10
 * (the converted examples have thresholds per layer; here per channel and
 * per neuron). */
static void test_example_cnn_shapes(void **state)
{
    (void)state;
    nc_snn *s = net_cnn_shapes();
    g_total_spikes = 0;
    check_all(s, 8);
    assert_true(g_total_spikes > 0);
    nc_snn_free(s);
}

/* Concat along channels of spikes, counts, currents and the input
 * (random_nets.h): as the reference, bit for bit. */
static void test_concat_layers(void **state)
{
    (void)state;
    nc_snn *s = net_concat_paths();
    g_total_spikes = 0;
    check_all(s, 6);
    assert_true(g_total_spikes > 0);
    nc_snn_free(s);
}

/* LIF and CubaLIF layers (as NIR files bring them), built through the IR. */
static void test_lif_layers(void **state)
{
    (void)state;
    int64_t in[3] = {2, 5, 5};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 8, 3, 1, 1, 1, 1, 1.0f);
    for (int k = 0; k < 2; k++) {
        int from = k == 0 ? c1 : s->n_layers - 1;
        nc_snn_layer *L = nc_snn_append(s, k == 0 ? NC_SNN_LIF : NC_SNN_CUBALIF, NULL, 1);
        assert_non_null(L);
        L->inputs[0] = from;
        L->ndim = 3;
        memcpy(L->shape, s->layers[from].shape, sizeof L->shape);
        int64_t one[1] = {1}, c[1] = {8};
        L->threshold = net_rand_tensor(1, c, 0.5f, 1.0f);
        L->tau = net_rand_tensor(1, one, 2e-3f, 3e-3f);
        L->r = net_rand_tensor(1, one, 5.0f, 6.0f);
        L->v_leak = net_rand_tensor(1, one, 0.0f, 0.1f);
        if (k == 1) {
            L->tau_syn = net_rand_tensor(1, c, 1e-3f, 2e-3f);
            L->w_in = net_rand_tensor(1, one, 1.0f, 2.0f);
        }
        L->dt = 1e-3;
        L->reset = k == 0 ? NC_RESET_ZERO : NC_RESET_SUBTRACT;
        if (k == 0) {
            int c2 = net_conv(s, s->n_layers - 1, 8, 3, 1, 1, 1, 1, 0.8f);
            (void)c2;
        }
    }
    int p = net_pool(s, s->n_layers - 1, 5, 5, 0), fl, ro;
    NC_ASSERT_OK(nc_snn_add_flatten(s, p, NULL, &fl));
    int f = net_affine(s, fl, 4, 1.0f);
    NC_ASSERT_OK(nc_snn_add_readout(s, f, NULL, &ro));
    g_total_spikes = 0;
    check_all(s, 6);
    assert_true(g_total_spikes > 0);
    nc_snn_free(s);
}

static void test_refuses_cleanly(void **state)
{
    (void)state;
    int64_t in[1] = {4};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    int a = net_affine(s, 0, 4, 1.0f), b = net_affine(s, a, 4, 1.0f);
    s->layers[a].inputs[0] = b; /* a recurrent edge: a reads b's previous step */
    nc_session_options o = {.backend = "cpu-fast", .timesteps = 2};
    nc_session *ss = NULL;
    assert_int_equal(nc_session_create(s, &o, &ss), NC_ERR_UNSUPPORTED);
    assert_null(ss);
    assert_non_null(strstr(nc_last_error(), s->layers[a].name));
    assert_non_null(strstr(nc_last_error(), "recurrent"));
    nc_snn_free(s);
    setenv("NEUROC_CPU_FAST_ISA", "vliw", 1);
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    net_affine(s, 0, 3, 1.0f);
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    nc_tensor *x = net_rand_input(s, 0, 2), *y = (nc_tensor *)1;
    assert_int_equal(nc_session_run(ss, x, &y), NC_ERR_BACKEND_UNAVAILABLE);
    assert_null(y);
    unsetenv("NEUROC_CPU_FAST_ISA");
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    nc_tensor_free(y);
    nc_tensor_free(x);
    nc_session_free(ss);
    nc_snn_free(s);
}

/* Nonlinear layers of every function (net_nonlinear: element-wise, Mul
 * with a broadcast gate, attention's MatMuls and Softmax, LayerNorm, on
 * spikes, pooled counts and currents) and the two-sided SignedIF after
 * them: bit for bit the reference's, also the synaptic ops of the
 * products; the two-sided IF sends negative spikes after the functions
 * that go below zero. */
static void test_nonlinear_layers(void **state)
{
    (void)state;
    for (int fn = 0; fn < NC_NL_COUNT; fn++) {
        nc_snn *s = net_nonlinear((nc_nonlinear_fn)fn);
        run_out a;
        check_all_then_reference(s, 6, 3, &a);
        int64_t products = 0, negative = 0;
        for (int i = 0; i < (int)nc_snn_num_layers(s); i++) {
            nc_snn_layer_info L;
            NC_ASSERT_OK(nc_snn_layer_at(s, i, &L));
            if (L.kind == NC_SNN_NONLINEAR)
                products += a.synops[i];
            for (int64_t k = 0; L.kind == NC_SNN_SIGNED_IF && k < nc_tensor_numel(a.spk[i]); k++)
                negative += ((const float *)nc_tensor_data_const(a.spk[i]))[k] < 0.0f;
        }
        assert_true((products > 0) == (fn == NC_NL_MUL || fn == NC_NL_MATMUL));
        int positive = fn == NC_NL_SIGMOID || fn == NC_NL_HARDSIGMOID || fn == NC_NL_SOFTMAX; /* f > 0 */
        if (!positive && negative == 0)
            fail_msg("%s: the two-sided SignedIF sent no negative spike", nc_nonlinear_fn_name((nc_nonlinear_fn)fn));
        run_out_free(&a);
        nc_snn_free(s);
    }
}

/* The text of file path (at most cap - 1 bytes) into buf. */
static void read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
}

/* `neuroc info` names each Nonlinear layer's function and the two-sided
 * SignedIF; `neuroc bench --verbose` times them on both backends. */
static void test_nonlinear_commands(void **state)
{
    (void)state;
    char dir[] = "/tmp/nc_fast_XXXXXX", nir[64], cmd[512], text[16384];
    assert_non_null(mkdtemp(dir));
    snprintf(nir, sizeof nir, "%s/attn.nir", dir);
    nc_snn *s = net_nonlinear(NC_NL_MATMUL);
    NC_ASSERT_OK(nc_snn_save_nir(s, nir));
    nc_snn_free(s);
    const char *neuroc = NC_BINARY_DIR "/neuroc";
    snprintf(cmd, sizeof cmd, "%s info %s > %s/info.txt 2>&1", neuroc, nir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/info.txt", dir);
    read_text(cmd, text, sizeof text);
    assert_non_null(strstr(text, "Nonlinear MatMul"));
    assert_non_null(strstr(text, "Nonlinear Softmax"));
    assert_non_null(strstr(text, "SignedIF two-sided"));
    snprintf(cmd, sizeof cmd, "%s bench %s --batch 2 -T 3 --min-time 0 --threads 1 --verbose > %s/bench.txt 2>&1",
             neuroc, nir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/bench.txt", dir);
    read_text(cmd, text, sizeof text);
    const char *fast = strstr(text, "CPU time per layer, cpu-fast");
    assert_non_null(fast);
    assert_non_null(strstr(fast, "Nonlinear MatMul"));
    assert_non_null(strstr(fast, "Nonlinear Softmax"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* The shipped example models, converted (calibrated on 64 test images). */
static void convert_and_check(const char *onnx)
{
    nc_tensor *batch = NULL;
    nc_snn *s = net_example(nc_test_src(onnx), 6, &batch, NULL);
    g_total_spikes = 0;
    check_same(s, batch, 8, NC_ENCODING_DIRECT, 0);
    check_same(s, batch, 4, NC_ENCODING_POISSON, 1);
    assert_true(g_total_spikes > 0);
    nc_snn_free(s);
    nc_tensor_free(batch);
}

static void test_example_models(void **state)
{
    (void)state;
    convert_and_check("examples/models/cnn.onnx");
    convert_and_check("examples/models/cnn_qcfs.onnx");
    convert_and_check("examples/models/resnet.onnx");
    convert_and_check("examples/models/mlp.onnx");
}

/* Transformers as conversion makes them (default options: spikes after
 * the Nonlinear layers that synaptic layers read): the one-block ViT, the
 * ConvNeXt and the token-mixing MLP of tests/fixtures/vit. Their 1×1 and
 * depthwise convolutions read Nonlinear layers' graded NCHW values
 * (attention's Q/K/V and score scale, LayerNorm's γ, the readout token's
 * Gather: run_conv1x1 over NCHW, run_dwconv_nchw), which the random
 * networks do not; every kernel set, batch size, thread count and team. */
static void test_converted_transformers(void **state)
{
    (void)state;
    static const char *models[] = {"vit1", "convnext", "tokmix"};
    nc_tensor *x = nc_test_load_f32("tests/fixtures/vit/x.npy");
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/vit/%s.onnx", models[k]);
        nc_model *m = NULL;
        NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(path), NULL, &m));
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
        g_total_spikes = 0;
        check_all(s, 5);
        assert_true(g_total_spikes > 0);
        nc_snn_free(s);
        nc_model_free(m);
    }
    nc_tensor_free(x);
}

/* Profiled sessions (nc_session_options.profile) time every layer on both
 * CPU backends: the synaptic layers take time, and the times are refused
 * without the option. */
/* Every kernel set compacts like the scalar loop: strided and not, lengths
 * around the vector width, zeros of both signs (not events) and NaN (one). */
static void test_compact_kernels(void **state)
{
    (void)state;
    static const char *isas[] = {"generic", "avx2", "avx512"};
    float x[3 * 53];
    for (int k = 0; k < 3 * 53; k++)
        x[k] = k % 3 == 0 ? 0.0f : k % 7 == 0 ? -0.0f : k % 11 == 0 ? NAN : (float)k - 40.0f;
    for (size_t a = 0; a < sizeof isas / sizeof isas[0]; a++) {
        const nc_fast_kernels *K = nc_fast_kernels_select(isas[a]);
        if (!K)
            continue;
        for (int stride = 1; stride <= 3; stride += 2)
            for (int n = 0; n <= 53; n += n < 20 ? 1 : 11) {
                int32_t idx[53 + 16], ridx[53];
                float val[53 + 16], rval[53];
                int64_t m = K->compact(x + 1, stride, n, 100, idx, val);
                int64_t r = nc_fast_compact_scalar(x + 1, stride, n, 100, ridx, rval, 0);
                assert_int_equal(m, r);
                for (int64_t e = 0; e < m; e++) {
                    assert_int_equal(idx[e], ridx[e]);
                    assert_memory_equal(&val[e], &rval[e], sizeof(float));
                }
            }
    }
}

/* One sample on two threads: they share it as a team, first running
 * samples with its candidate layers split and with none to see which
 * pay (the log says how many it keeps split), every result the
 * reference's whichever way a sample ran. */
static void test_team_shares_a_sample(void **state)
{
    (void)state;
#ifdef _OPENMP
    nc_snn *s = net_random_layers((net_random_opts){.conv_out = 64, .hidden = 20, .out_wscale = 0.5f});
    int was = omp_get_max_threads();
    omp_set_num_threads(2);
    static char log[4096];
    log[0] = 0;
    nc_set_log_callback(log_into, log);
    nc_tensor *x = net_rand_input(s, 0, 1);
    nc_session_options fo = {.backend = "cpu-fast", .timesteps = 5}, ro = {.backend = "cpu", .timesteps = 5};
    nc_session *fast = NULL, *ref = NULL;
    NC_ASSERT_OK(nc_session_create(s, &fo, &fast));
    NC_ASSERT_OK(nc_session_create(s, &ro, &ref));
    for (int r = 0; r < 10; r++) { /* a warm-up, three trials each way, then decided */
        nc_tensor *a = NULL, *b = NULL;
        NC_ASSERT_OK(nc_session_run(ref, x, &a));
        NC_ASSERT_OK(nc_session_run(fast, x, &b));
        assert_same_tensor(a, b, "output", -1);
        nc_tensor_free(a);
        nc_tensor_free(b);
    }
    nc_set_log_callback(NULL, NULL);
    assert_non_null(strstr(log, "cpu-fast: a team of 2 threads splits"));
    nc_session_free(fast);
    nc_session_free(ref);
    nc_tensor_free(x);
    omp_set_num_threads(was);
    nc_snn_free(s);
#else
    skip();
#endif
}

static void test_layer_seconds(void **state)
{
    (void)state;
    nc_snn *s = net_cnn_shapes();
    nc_tensor *x = net_rand_input(s, 0, 4), *y = NULL;
    static const char *backends[] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++)
        for (int profile = 0; profile < 2; profile++) {
            nc_session_options o = {.backend = backends[b], .timesteps = 4, .profile = profile};
            nc_session *ss = NULL;
            NC_ASSERT_OK(nc_session_create(s, &o, &ss));
            NC_ASSERT_OK(nc_session_run(ss, x, &y));
            nc_tensor_free(y);
            double sec = -1, conv = 0;
            if (!profile) {
                assert_int_equal(nc_session_layer_seconds(ss, 1, &sec), NC_ERR_UNSUPPORTED);
                assert_non_null(strstr(nc_last_error(), "nc_session_options.profile"));
            }
            for (int i = 0; profile && i < nc_snn_num_layers(s); i++) {
                nc_snn_layer_info L;
                NC_ASSERT_OK(nc_snn_layer_at(s, i, &L));
                NC_ASSERT_OK(nc_session_layer_seconds(ss, i, &sec));
                assert_true(sec >= 0.0);
                conv += L.kind == NC_SNN_CONV2D ? sec : 0.0;
            }
            assert_true(profile ? conv > 0.0 : conv == 0.0);
            assert_int_equal(nc_session_layer_seconds(ss, 99, &sec), NC_ERR_INVALID_ARG);
            nc_session_free(ss);
        }
    nc_tensor_free(x);
    nc_snn_free(s);
}

/* `neuroc bench` end to end on a small network: both backends, JSON out,
 * and the usage errors. */
static void test_bench_command(void **state)
{
    (void)state;
    char dir[] = "/tmp/nc_fast_XXXXXX", nir[64], js[64], cmd[512];
    assert_non_null(mkdtemp(dir));
    snprintf(nir, sizeof nir, "%s/net.nir", dir);
    snprintf(js, sizeof js, "%s/b.json", dir);
    int64_t in[3] = {1, 12, 12};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 16, 3, 1, 1, 1, 1, 0.6f), i1 = net_if(s, c1, 0, 0, NC_RESET_SUBTRACT, 1.0f);
    int p1 = net_pool(s, i1, 2, 2, 0), fl, ro;
    NC_ASSERT_OK(nc_snn_add_flatten(s, p1, NULL, &fl));
    NC_ASSERT_OK(nc_snn_add_readout(s, net_affine(s, fl, 4, 0.3f), NULL, &ro));
    NC_ASSERT_OK(nc_snn_save_nir(s, nir));
    nc_snn_free(s);
    const char *neuroc = NC_BINARY_DIR "/neuroc";
    snprintf(cmd, sizeof cmd, "%s bench %s --backend cpu,cpu-fast --batch 1,3 -T 3 --min-time 0 --threads 2 "
             "--json %s --verbose > %s/out.txt 2>&1", neuroc, nir, js, dir);
    assert_int_equal(system(cmd), 0);
    char text[8192] = "";
    FILE *f = fopen(js, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "\"backend\": \"cpu-fast\", \"batch\": 3"));
    assert_non_null(strstr(text, "\"backend\": \"cpu\", \"batch\": 1"));
    assert_non_null(strstr(text, "\"synaptic_events_per_s\""));
    assert_non_null(strstr(text, "\"spike_density\": {\""));
    assert_non_null(strstr(text, "\"layer_cpu_s_per_image\": {\""));
    snprintf(cmd, sizeof cmd, "%s/out.txt", dir);
    f = fopen(cmd, "r");
    assert_non_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "images/s"));
    assert_non_null(strstr(text, "speed-up over cpu"));
    assert_non_null(strstr(text, "CPU time per layer, cpu-fast, batch 3"));
    /* an unknown backend fails (1); a .onnx without data is a usage error (2) */
    snprintf(cmd, sizeof cmd, "%s bench %s --backend tpu --min-time 0 > /dev/null 2>&1", neuroc, nir);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
    snprintf(cmd, sizeof cmd, "%s bench %s > /dev/null 2>&1", neuroc, nc_test_src("examples/models/mlp.onnx"));
    rc = system(cmd);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_conv_layers), cmocka_unit_test(test_dense_fallbacks),
        cmocka_unit_test(test_spike_maxpool),      cmocka_unit_test(test_bursts),
        cmocka_unit_test(test_example_cnn_shapes), cmocka_unit_test(test_lif_layers),
        cmocka_unit_test(test_depthwise),          cmocka_unit_test(test_strided_convs),
        cmocka_unit_test(test_selections),
        cmocka_unit_test(test_concat_layers),      cmocka_unit_test(test_nonlinear_layers),
        cmocka_unit_test(test_nonlinear_commands),
        cmocka_unit_test(test_refuses_cleanly),    cmocka_unit_test(test_example_models),
        cmocka_unit_test(test_converted_transformers),
        cmocka_unit_test(test_bench_command),     cmocka_unit_test(test_layer_seconds),
        cmocka_unit_test(test_team_shares_a_sample),
        cmocka_unit_test(test_compact_kernels),
        /* last: the random draws of the tests before it stay as they were */
        cmocka_unit_test(test_spike_maxpool_bursts),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
