/* A tiny net of the ops modern CNNs and transformer blocks export
 * (HardSwish, Hardsigmoid and Sigmoid gates, a channel-shuffle Transpose,
 * LayerNorm, attention with Softmax, GELU's Erf), at opset 13 (LayerNorm as
 * ReduceMean/Pow/Sqrt) and 17 (LayerNormalization): the reference forward
 * pass must match torch's output (scripts/make_ops_fixtures.py), and the
 * converter must refuse it naming every node no SNN layer computes. And
 * torchvision's VisionTransformer, whose class token expanded to the batch
 * exports as ConstantOfShape, Equal, Where and Expand. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static nc_tensor *load(const char *rel)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(nc_test_src(rel), NC_DTYPE_F32, &t));
    return t;
}

static nc_model *load_model(const char *rel)
{
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(rel), NULL, &m));
    return m;
}

static int has_op(const nc_model *m, const char *op)
{
    for (int i = 0; i < nc_model_num_layers(m); i++) {
        nc_layer_info L;
        if (nc_model_layer(m, i, &L) == NC_OK && strcmp(L.op, op) == 0)
            return 1;
    }
    return 0;
}

/* |got - want| <= 1e-5 of the output's scale (max |want|) */
static void check_matches_torch_y(const char *model, const char *ys, const char *const *ops)
{
    nc_model *m = load_model(model);
    for (; *ops; ops++)
        if (!has_op(m, *ops))
            fail_msg("%s has no %s node: the fixture does not test it", model, *ops);
    nc_tensor *x = load("tests/fixtures/ops/x.npy"), *want = load(ys), *y = NULL;
    const nc_tensor *in = x;
    NC_ASSERT_OK(nc_model_run(m, &in, 1, &y, 1));
    assert_int_equal(nc_tensor_numel(y), nc_tensor_numel(want));
    const float *a = nc_tensor_data_const(y), *b = nc_tensor_data_const(want);
    double scale = 0, err = 0;
    for (int64_t i = 0; i < nc_tensor_numel(want); i++)
        scale = fmax(scale, fabs(b[i]));
    for (int64_t i = 0; i < nc_tensor_numel(want); i++)
        err = fmax(err, fabs((double)a[i] - b[i]));
    assert_true(scale > 0.1); /* the output is not trivially zero */
    if (err > 1e-5 * scale)
        fail_msg("%s: max error %g against torch (output scale %g)", model, err, scale);
    nc_tensor_free(x);
    nc_tensor_free(want);
    nc_tensor_free(y);
    nc_model_free(m);
}

static void check_matches_torch(const char *model, const char *const *ops)
{
    check_matches_torch_y(model, "tests/fixtures/ops/y.npy", ops);
}

static void test_vit(void **state)
{
    (void)state;
    /* ConstantOfShape, Equal and Where compute the expanded shape from the input's: loading folds them
       into a constant, so they run then (the load fails without them) and Expand remains */
    static const char *const ops[] = {"Expand", "Transpose", "Softmax", "Erf", NULL};
    check_matches_torch_y("tests/fixtures/ops/vit13.onnx", "tests/fixtures/ops/y_vit.npy", ops);
    check_matches_torch_y("tests/fixtures/ops/vit17.onnx", "tests/fixtures/ops/y_vit.npy", ops);
    /* converted (convert/convert_tokens.c): class token, attention, LayerNorm
     * and GELU; its graded readout equals the ANN's logits at T = 1 */
    nc_model *m = load_model("tests/fixtures/ops/vit17.onnx");
    nc_tensor *x = load("tests/fixtures/ops/x.npy"), *ann = NULL, *y = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann, 1));
    nc_snn *s = NULL;
    nc_convert_options co;
    nc_convert_options_init(&co);
    co.nonlinear_graded = 1; /* exact at T = 1 (spikes: test_convert_vit) */
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, NULL));
    nc_session_options o = {.backend = "cpu", .timesteps = 1};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    assert_true(nc_test_mean_gap(y, ann, 1) < 1e-5);
    nc_session_free(ss);
    nc_snn_free(s);
    nc_tensor_free(y);
    nc_tensor_free(ann);
    nc_tensor_free(x);
    nc_model_free(m);
}

static void test_opset13(void **state)
{
    (void)state;
    static const char *const ops[] = {"HardSigmoid", "Sigmoid", "Transpose", "ReduceMean", "Pow", "Sqrt",
                                      "Softmax", "Erf", NULL};
    check_matches_torch("tests/fixtures/ops/tiny_ops13.onnx", ops);
}

static void test_opset17(void **state)
{
    (void)state;
    static const char *const ops[] = {"HardSwish", "HardSigmoid", "Sigmoid", "Transpose",
                                      "LayerNormalization", "Softmax", "Erf", NULL};
    check_matches_torch("tests/fixtures/ops/tiny_ops17.onnx", ops);
}

/* The modern activations of tiny_ops17 (HardSwish, HardSigmoid and
 * Sigmoid gates, the transformer block after them), once refused together,
 * now all convert, and the readout converges to the ANN's (refusals
 * naming every node: test_convert_nonlinear's). */
static void test_modern_activations_convert(void **state)
{
    (void)state;
    nc_model *m = load_model("tests/fixtures/ops/tiny_ops17.onnx");
    nc_tensor *x = load("tests/fixtures/ops/x.npy"), *ann = NULL, *y = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann, 1));
    nc_convert_options co;
    nc_convert_options_init(&co);
    co.nonlinear_graded = 1;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, NULL));
    int nonlinear = 0;
    for (int i = 0; i < nc_snn_num_layers(s); i++) {
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(s, i, &L));
        nonlinear += L.kind == NC_SNN_NONLINEAR;
    }
    assert_true(nonlinear >= 4);
    /* its ReLU layers are IF neurons: the gap closes with T */
    double gap[2];
    for (int k = 0; k < 2; k++) {
        nc_session_options o = {.backend = "cpu", .timesteps = k ? 256 : 4};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &y));
        gap[k] = nc_test_mean_gap(y, ann, o.timesteps);
        printf("tiny_ops17: T = %d: mean gap %.4g\n", o.timesteps, gap[k]);
        nc_tensor_free(y);
        y = NULL;
        nc_session_free(ss);
    }
    assert_true(gap[1] < gap[0] / 4 && gap[1] < 0.05);
    nc_snn_free(s);
    nc_tensor_free(y);
    nc_tensor_free(ann);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* An op the oracle cannot run: refused at load by default; with
 * describe_only the graph is kept (marked, later shapes unknown) and running
 * or converting it is refused naming the node. */
static void test_describe_only(void **state)
{
    (void)state;
    const char *path = nc_test_src("tests/fixtures/ops/softplus.onnx");
    nc_model *m = NULL;
    assert_int_equal(nc_model_load_onnx(path, NULL, &m), NC_ERR_UNSUPPORTED);
    assert_null(m);
    nc_load_options lo;
    nc_load_options_init(&lo);
    assert_int_equal(lo.describe_only, 0);
    lo.describe_only = 1;
    NC_ASSERT_OK(nc_model_load_onnx(path, &lo, &m));
    assert_int_equal(nc_model_num_layers(m), 4);
    nc_layer_info L;
    NC_ASSERT_OK(nc_model_layer(m, 0, &L));
    assert_string_equal(L.op, "Conv");
    assert_int_equal(L.supported, 1);
    assert_int_equal(L.out_ndim, 4);
    assert_int_equal(L.out_shape[1], 2);
    NC_ASSERT_OK(nc_model_layer(m, 1, &L));
    assert_string_equal(L.op, "Softplus");
    assert_int_equal(L.supported, 0);
    assert_int_equal(L.in_ndim, 4); /* known: before the unsupported node */
    assert_int_equal(L.out_ndim, -1);
    NC_ASSERT_OK(nc_model_layer(m, 3, &L));
    assert_string_equal(L.op, "Gemm");
    assert_int_equal(L.supported, 1);
    assert_int_equal(L.in_ndim, -1);
    assert_true(L.params > 0);
    nc_tensor *x = load("tests/fixtures/ops/x.npy"), *y = (nc_tensor *)1;
    const nc_tensor *in = x;
    assert_int_equal(nc_model_run(m, &in, 1, &y, 1), NC_ERR_UNSUPPORTED);
    assert_null(y);
    assert_non_null(strstr(nc_last_error(), "Softplus '/1/Softplus'"));
    nc_snn *s = (nc_snn *)1;
    assert_int_equal(nc_convert(m, x, NULL, NULL, &s, NULL), NC_ERR_UNSUPPORTED);
    assert_null(s);
    assert_non_null(strstr(nc_last_error(), "Softplus '/1/Softplus'"));
    nc_tensor_free(x);
    nc_model_free(m);
    /* a model of supported ops loads the same with describe_only */
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/ops/tiny_ops17.onnx"), &lo, &m));
    for (int i = 0; i < nc_model_num_layers(m); i++) {
        NC_ASSERT_OK(nc_model_layer(m, i, &L));
        assert_int_equal(L.supported, 1);
        assert_true(L.out_ndim >= 0);
    }
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vit), cmocka_unit_test(test_opset13),
        cmocka_unit_test(test_opset17),
        cmocka_unit_test(test_modern_activations_convert),
        cmocka_unit_test(test_describe_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
