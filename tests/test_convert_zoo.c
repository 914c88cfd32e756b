/* The layer patterns of torchvision's DenseNet, GoogLeNet and Inception
 * that conversion used to refuse (scripts/make_zoo_fixtures.py): a
 * BatchNorm with no Conv/Gemm to fold into (after a pool, after a Concat,
 * before a zero-padded Conv), ceil-mode max pooling, average pooling with
 * partial windows (per-window divisors), a Pad before an AveragePool. For each: the ANN equals torch, conversion succeeds, and
 * the SNN's readout approaches the ANN's logits as T grows. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snn/ir/snn_ir.h"

static int count_kind(const nc_snn *s, nc_snn_layer_kind k)
{
    int n = 0;
    for (int i = 0; i < s->n_layers; i++)
        n += s->layers[i].kind == k;
    return n;
}

/* Mean |y − its mean over the samples| of logits y (N, K): how much the
 * output depends on the input, the scale the gaps are judged against. */
static double spread(const nc_tensor *y)
{
    int64_t N = nc_tensor_shape(y)[0], K = nc_tensor_numel(y) / N;
    const float *v = nc_tensor_data_const(y);
    double e = 0.0;
    for (int64_t k = 0; k < K; k++) {
        double m = 0.0;
        for (int64_t n = 0; n < N; n++)
            m += v[n * K + k] / (double)N;
        for (int64_t n = 0; n < N; n++)
            e += fabs(v[n * K + k] - m);
    }
    return e / (double)(N * K);
}

static double run_gap(const nc_snn *s, const char *backend, const nc_tensor *x, const nc_tensor *ref, int T)
{
    nc_session_options o = {.backend = backend, .timesteps = T};
    nc_session *ss = NULL;
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    assert_int_equal(nc_tensor_numel(y), nc_tensor_numel(ref));
    double g = nc_test_mean_gap(y, ref, T);
    nc_tensor_free(y);
    nc_session_free(ss);
    return g;
}

/* Converts fixture `name`; checks the ANN against torch and the SNN against
 * the ANN on both CPU backends. Returns the network (caller frees). */
static nc_snn *convert_check(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/zoo/%s.onnx", name);
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(path), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/zoo/x.npy");
    snprintf(path, sizeof path, "tests/fixtures/zoo/y_%s.npy", name);
    nc_tensor *torch_y = nc_test_load_f32(path), *ann_y = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann_y, 1));
    assert_true(nc_test_mean_gap(ann_y, torch_y, 1) < 1e-5); /* ANN == torch */
    nc_convert_options co;
    nc_convert_options_init(&co);
    co.percentile = 100.0; /* the maxima: an SNN rate can reach every ANN activation */
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, NULL));
    double g16 = run_gap(s, "cpu", x, ann_y, 16), g256 = run_gap(s, "cpu", x, ann_y, 256);
    double fast = run_gap(s, "cpu-fast", x, ann_y, 256);
    double scale = spread(ann_y);
    printf("%s: mean |SNN/T − ANN| at T = 16: %.4g, T = 256: %.4g (cpu-fast %.4g); ANN spread over samples %.4g\n",
           name, g16, g256, fast, scale);
    assert_true(g256 < g16);
    assert_true(g256 < 0.1 * scale);
    assert_true(fast == g256); /* cpu-fast runs it, bit for bit */
    nc_tensor_free(ann_y);
    nc_tensor_free(torch_y);
    nc_tensor_free(x);
    nc_model_free(m);
    return s;
}

/* Pool → BN → ReLU: the BN is a 1×1 depthwise Conv2d of its own; BN → padded
 * Conv: the same (its shift would make the zero border non-zero); ceil-mode
 * MaxPool: a partial window (6 × 4 × 4, not 3 × 3); Pad → AveragePool on a
 * 1 × 1 map: the Pad is the pool's padding. */
static void test_pool_bn(void **state)
{
    (void)state;
    nc_snn *s = convert_check("pool_bn");
    int dw = 0, mp = -1;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        dw += L->kind == NC_SNN_CONV2D && L->groups == L->shape[0] && L->weight->shape[2] == 1;
        if (L->kind == NC_SNN_MAXPOOL2D)
            mp = i;
    }
    assert_int_equal(dw, 2);
    assert_true(mp >= 0);
    assert_int_equal(s->layers[mp].shape[1], 4);
    assert_int_equal(s->layers[mp].shape[2], 4);
    assert_int_equal(count_kind(s, NC_SNN_POOL2D), 1);
    nc_snn_free(s);

    /* binary spikes rebuild the network: the ceil-mode pool keeps its partial window */
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/zoo/pool_bn.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/zoo/x.npy");
    nc_convert_options co;
    nc_convert_options_init(&co);
    co.binary_spikes = 1;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, NULL));
    for (int i = 0; i < s->n_layers; i++)
        if (s->layers[i].kind == NC_SNN_MAXPOOL2D)
            assert_int_equal(s->layers[i].shape[1], 4);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* Concat → BN → ReLU (DenseNet's pre-activation): a depthwise layer after the
 * Concat; the Concat runs on both CPU backends. */
static void test_cat_bn(void **state)
{
    (void)state;
    nc_snn *s = convert_check("cat_bn");
    assert_int_equal(count_kind(s, NC_SNN_CONCAT), 1);
    int cat = -1;
    for (int i = 0; i < s->n_layers; i++)
        if (s->layers[i].kind == NC_SNN_CONCAT)
            cat = i;
    const nc_snn_layer *A = &s->layers[cat + 1];
    assert_int_equal(A->kind, NC_SNN_CONV2D);
    assert_int_equal(A->inputs[0], cat);
    assert_int_equal(A->groups, 5);
    nc_snn_free(s);
}

/* Average pools with partial windows (ceil mode; count_include_pad=False):
 * per-window divisors, as the ANN divides. */
static void test_avg_ceil(void **state)
{
    (void)state;
    nc_snn *s = convert_check("avg_ceil");
    int div = 0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        div += L->kind == NC_SNN_POOL2D && L->div_taps;
        if (L->kind == NC_SNN_POOL2D && L->div_taps && L->stride[0] == 2)
            assert_int_equal(L->shape[1], 3); /* floor mode: 2 */
        if (L->kind == NC_SNN_MAXPOOL2D)
            assert_int_equal(L->shape[1], 4);
    }
    assert_int_equal(div, 2);
    char path[4096];
    snprintf(path, sizeof path, "%s/test_convert_zoo.nir", NC_BINARY_DIR);
    nc_snn *a = NULL;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/zoo/avg_ceil.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/zoo/x.npy");
    nc_convert_options co;
    nc_convert_options_init(&co);
    co.maxpool = NC_MAXPOOL_AVERAGE; /* the ceil-mode MaxPool as an average: a third partial pool */
    co.spikes = NC_SPIKES_PLAIN;     /* what strict mode writes: the pools are what it refuses */
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &a, NULL));
    assert_int_equal(count_kind(a, NC_SNN_MAXPOOL2D), 0);
    int div3 = 0;
    for (int i = 0; i < a->n_layers; i++)
        div3 += a->layers[i].kind == NC_SNN_POOL2D && a->layers[i].div_taps;
    assert_int_equal(div3, 3);
    /* NIR's SumPool2d has one scale: neuroc.Pool2d extension nodes, read
       back as they were; strict mode refuses them (tests/test_nir.c) */
    NC_ASSERT_OK(nc_snn_save_nir(a, path));
    nc_snn *b = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &b));
    assert_true(nc_hash_snn(a) == nc_hash_snn(b));
    nc_snn_free(b);
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = 1;
    assert_int_equal(nc_snn_save_nir_with(a, path, &so), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "divisors"));
    nc_snn_free(a);
    nc_tensor_free(x);
    nc_model_free(m);
    nc_snn_free(s);
}

/* The IR's ceil-mode max pool: the partial window and its limits. */
/* A ceil-mode MaxPool of spikes: a SpikeMaxPool2d with the partial window
 * (its windows clip to the input like MaxPool2d's), converging to the ANN. */
static void test_spike_ceil(void **state)
{
    (void)state;
    nc_snn *s = convert_check("spike_ceil");
    int sp = -1;
    for (int i = 0; i < s->n_layers; i++)
        if (s->layers[i].kind == NC_SNN_SPIKEMAXPOOL2D)
            sp = i;
    assert_true(sp >= 0);
    assert_int_equal(s->layers[sp].shape[1], 4); /* floor mode: 3 */
    assert_int_equal(s->layers[sp].shape[2], 4);
    nc_snn_free(s);
}

static void test_maxpool_ceil_ir(void **state)
{
    (void)state;
    int64_t in[3] = {1, 5, 5}, k[2] = {2, 2}, st[2] = {2, 2}, p0[2] = {0, 0}, pe[2] = {1, 1}, bad[2] = {2, 0};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    int id;
    NC_ASSERT_OK(nc_snn_add_maxpool2d_ceil(s, 0, k, st, p0, pe, "mp", &id));
    assert_int_equal(s->layers[id].shape[1], 3);
    assert_int_equal(s->layers[id].shape[2], 3);
    assert_int_equal(nc_snn_add_maxpool2d_ceil(s, 0, k, st, p0, bad, "mp2", &id), NC_ERR_INVALID_ARG);
    int ro;
    NC_ASSERT_OK(nc_snn_add_readout(s, 1, NULL, &ro));
    /* a 5 × 5 ramp: the last row and column of windows see one input row/column */
    int64_t xs[4] = {1, 1, 5, 5};
    nc_tensor *x = NULL, *y = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 4, xs, &x));
    float *d = nc_tensor_data(x);
    for (int i = 0; i < 25; i++)
        d[i] = (float)i - 30.0f; /* all negative: a zero pad would win */
    static const char *backends[] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++) {
        nc_session_options o = {.backend = backends[b], .timesteps = 1};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &y));
        const float *o9 = nc_tensor_data_const(y);
        static const float want[9] = {-24, -22, -21, -14, -12, -11, -9, -7, -6};
        for (int i = 0; i < 9; i++)
            assert_float_equal(o9[i], want[i], 0);
        nc_tensor_free(y);
        nc_session_free(ss);
    }
    nc_tensor_free(x);
    nc_snn_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_bn),
        cmocka_unit_test(test_cat_bn),
        cmocka_unit_test(test_avg_ceil),
        cmocka_unit_test(test_spike_ceil),
        cmocka_unit_test(test_maxpool_ceil_ir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
