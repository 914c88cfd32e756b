/* The non-linear patterns of today's CNNs (scripts/make_nonlinear_fixtures.py,
 * torchvision's own MBConv and MobileNetV3 blocks): SiLU as Sigmoid + Mul,
 * squeeze-excitation gates (Sigmoid, HardSigmoid) multiplied into the
 * feature map, HardSwish as the op (opset 17) and as x·HardSigmoid(x)
 * (opset 13), GELU in its Erf and Tanh forms, Tanh, a SiLU written with the constant first,
 * a squeeze-excitation of Linear layers whose flat gate is unsqueezed.
 * Each converts with the defaults into Nonlinear layers of the expected
 * functions, the two-sided SignedIF spikes before every synaptic layer that
 * reads them (none with nonlinear_graded), and the SNN's readout on the
 * reference backend approaches the ANN: centred cosine >= 0.95 at T = 256. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/ir/snn_ir.h"

static nc_tensor *run_snn(const nc_snn *s, const nc_tensor *x, int T) { return nc_test_run(s, "cpu", x, T); }

typedef struct expect {
    const char *model;
    int n_fn[NC_NL_COUNT]; /* Nonlinear layers of each function */
    int two_sided;         /* two-sided SignedIF layers with the default options */
    int graded_reads;      /* ... and synaptic layers reading a Nonlinear layer all the same (a scaling's 1×1 layer) */
} expect;

static void check_model(const expect *e)
{
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/nonlinear/%s.onnx", e->model);
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(path), NULL, &m));
    snprintf(path, sizeof path, "tests/fixtures/nonlinear/y_%s.npy", e->model);
    nc_tensor *x = nc_test_load_f32("tests/fixtures/nonlinear/x.npy"), *torch_y = nc_test_load_f32(path);
    nc_tensor *ann_y = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann_y, 1));
    assert_true(nc_test_mean_gap(ann_y, torch_y, 1) < 1e-5); /* ANN == torch */

    for (int graded = 0; graded < 2; graded++) {
        nc_convert_options co;
        nc_convert_options_init(&co);
        co.nonlinear_graded = graded;
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, NULL));
        int n_fn[NC_NL_COUNT] = {0}, n_two = 0, graded_reads = 0;
        for (int i = 0; i < s->n_layers; i++) {
            const nc_snn_layer *L = &s->layers[i];
            if (L->kind == NC_SNN_NONLINEAR)
                n_fn[L->nl.fn]++;
            if (L->kind == NC_SNN_SIGNED_IF && L->two_sided) {
                n_two++;
                assert_int_equal(L->max_spikes, NC_NONLINEAR_BURST); /* finer than the ReLUs' bursts */
            }
            graded_reads += nc_snn_kind_is_synaptic(L->kind) && s->layers[L->inputs[0]].kind == NC_SNN_NONLINEAR;
        }
        /* with spikes, the ANN's Conv/Gemm layers read spikes (or the input), never a Nonlinear */
        if (!graded)
            assert_int_equal(graded_reads, e->graded_reads);
        for (int f = 0; f < NC_NL_COUNT; f++)
            if (n_fn[f] != e->n_fn[f])
                fail_msg("%s: %d %s layers, expected %d", e->model, n_fn[f], nc_nonlinear_fn_name(f), e->n_fn[f]);
        assert_int_equal(n_two, graded ? 0 : e->two_sided);
        nc_tensor *y32 = run_snn(s, x, 32), *y256 = run_snn(s, x, 256);
        double c32 = nc_test_centred_cosine(y32, ann_y, 32), c256 = nc_test_centred_cosine(y256, ann_y, 256);
        printf("%s (%s): centred cosine at T = 32: %.4f, T = 256: %.4f\n", e->model,
               graded ? "graded" : "two-sided spikes", c32, c256);
        assert_true(c256 >= 0.95);
        nc_tensor_free(y32);
        nc_tensor_free(y256);
        nc_snn_free(s);
    }
    nc_tensor_free(ann_y);
    nc_tensor_free(torch_y);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* SiLU at the stem, the head and per MBConv three times (expand,
 * depthwise, the SE's), a Sigmoid gate and its Mul per SE; spikes per MBConv
 * of the expand SiLU (the depthwise Conv reads them), the pooled SiLU (the
 * SE's reduce Conv), the SE's SiLU, the gated map (the project Conv), and
 * of the stem (the first expand Conv) and the flattened head (the
 * classifier): 10 */
static void test_effnet(void **state)
{
    (void)state;
    expect e = {"effnet", {0}, 10, 0};
    e.n_fn[NC_NL_SILU] = 8;
    e.n_fn[NC_NL_SIGMOID] = 2;
    e.n_fn[NC_NL_MUL] = 2;
    check_model(&e);
}

/* HardSwish three times (stem, the HS block, the classifier), HardSigmoid
 * gates and their Muls in the two SE blocks; the same layers whether
 * HardSwish is the op (17) or x·HardSigmoid(x) (13) */
static void test_mobilenet_v3(void **state)
{
    (void)state;
    static const char *const models[] = {"mnv3_13", "mnv3_17"};
    for (int k = 0; k < 2; k++) {
        expect e = {models[k], {0}, 6, 0};
        e.n_fn[NC_NL_HARDSWISH] = 4;
        e.n_fn[NC_NL_HARDSIGMOID] = 2;
        e.n_fn[NC_NL_MUL] = 2;
        check_model(&e);
    }
}

/* GELU (Erf form, 5 nodes), a HardSigmoid gate times the map, SiLU as
 * 0.5 * (sigmoid(x) * x) */
static void test_gelu(void **state)
{
    (void)state;
    expect e = {"gelu", {0}, 3, 1};
    e.n_fn[NC_NL_GELU] = 1;
    e.n_fn[NC_NL_HARDSIGMOID] = 1;
    e.n_fn[NC_NL_MUL] = 1;
    e.n_fn[NC_NL_SILU] = 1;
    check_model(&e);
}

/* GELU's Tanh form written out with Pow, and a Tanh */
static void test_gelu_tanh(void **state)
{
    (void)state;
    expect e = {"gelu_tanh", {0}, 2, 0};
    e.n_fn[NC_NL_GELU_TANH] = 1;
    e.n_fn[NC_NL_TANH] = 1;
    check_model(&e);
}

/* squeeze-excitation by Linear layers: the flat Sigmoid gate, unsqueezed
 * twice to (N, C, 1, 1), becomes (C, 1, 1) through two Reshape layers and
 * multiplies the map */
static void test_linear_se(void **state)
{
    (void)state;
    expect e = {"linear_se", {0}, 1, 0};
    e.n_fn[NC_NL_SIGMOID] = 1;
    e.n_fn[NC_NL_MUL] = 1;
    check_model(&e);
}

/* Heavy tails: calibration data with one outlier, an input scaled by
 * OUTLIER, sets every two-sided layer's clip (the max of |x|) far above
 * its typical values, as a deep residual stream with random weights does
 * (efficientnet_v2_s: |x| up to 10⁴, median 1). Those layers send larger
 * bursts (θ = clip / B at most 4 × the median |x|, B up to NC_MAX_BURST), so
 * the clip stays where calibration put it and the typical inputs are
 * still resolved. With 32 levels they were silent: centred cosine 0.00 at
 * T = 32 and 0.22 at T = 256 (0.54 and 0.99 with the larger bursts). */
#define OUTLIER 3000.0f
static void test_heavy_tails(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/nonlinear/effnet.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/nonlinear/x.npy"), *ann_y = NULL;
    int64_t per = x->numel / x->shape[0], cs[4] = {x->shape[0] + 1, x->shape[1], x->shape[2], x->shape[3]};
    nc_tensor *calib = nc_tensor_new(NC_DTYPE_F32, 4, cs);
    assert_non_null(calib);
    memcpy(nc_f32(calib), nc_f32(x), (size_t)x->numel * sizeof(float));
    for (int64_t e = 0; e < per; e++)
        nc_f32(calib)[x->numel + e] = OUTLIER * nc_f32(x)[e];
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann_y, 1));
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, calib, NULL, NULL, &s, NULL));
    int larger = 0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind != NC_SNN_SIGNED_IF || !L->two_sided)
            continue;
        assert_true(L->max_spikes >= NC_NONLINEAR_BURST && L->max_spikes <= NC_MAX_BURST);
        larger += L->max_spikes > NC_NONLINEAR_BURST;
    }
    nc_tensor *y = run_snn(s, x, 256), *y32 = run_snn(s, x, 32);
    double c = nc_test_centred_cosine(y, ann_y, 256), c32 = nc_test_centred_cosine(y32, ann_y, 32);
    printf("heavy tails: %d of 10 two-sided layers send larger bursts; centred cosine at T = 32: %.4f, T = 256: "
           "%.4f\n", larger, c32, c);
    nc_tensor_free(y32);
    assert_true(larger > 0);
    assert_true(c >= 0.95);
    nc_tensor_free(y);
    nc_snn_free(s);
    nc_tensor_free(calib);
    nc_tensor_free(ann_y);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* Erf(x) + x·x is no function a Nonlinear layer computes: refused as
 * before, naming the Erf; the product x·x alone would convert */
static void test_refused(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/nonlinear/not_gelu.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/nonlinear/x.npy");
    nc_snn *s = (nc_snn *)1;
    assert_int_equal(nc_convert(m, x, NULL, NULL, &s, NULL), NC_ERR_UNSUPPORTED);
    assert_null(s);
    const char *e = nc_last_error();
    assert_non_null(strstr(e, "not_gelu.onnx: node '/Erf' (Erf)"));
    assert_non_null(strstr(e, "Nonlinear layers compute Sigmoid, SiLU"));
    nc_tensor_free(x);
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_effnet),
        cmocka_unit_test(test_mobilenet_v3),
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_gelu_tanh),
        cmocka_unit_test(test_linear_se),
        cmocka_unit_test(test_heavy_tails),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
