/* The activation, power, reduction, normalisation and Transpose ops of the
 * reference forward pass (ann_ops_math.c) on hand-built nodes with
 * hand-worked values: the cases ONNX's conformance data does not cover
 * (ReduceMean's opset-18 axes input, LayerNormalization's statistics
 * outputs, refusals). */
#include "ann_op_testlib.h"

/* ---------------------------------------------------------------- activations */

static void test_gates(void **state)
{
    (void)state;
    int64_t s5[] = {5};
    nc_tensor *x = tf(1, s5, (float[]){-4, -1, 0, 1, 4});
    nc_tensor *o;
    nc_node sg = node("Sigmoid", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_sigmoid, &sg, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s5, (float[]){0.01798621f, 0.26894142f, 0.5f, 0.73105858f, 0.98201379f});
    nc_tensor_free(o);
    /* HardSwish: x * clamp(x/6 + 1/2, 0, 1) */
    nc_node hs = node("HardSwish", 14, NULL, 0);
    NC_ASSERT_OK(run(nc_op_hardswish, &hs, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s5, (float[]){0, -1.0f / 3, 0, 2.0f / 3, 4});
    nc_tensor_free(o);
    nc_attr ab[] = {attr_f("alpha", 0.5f), attr_f("beta", 0.25f)};
    nc_node hg = node("HardSigmoid", 6, ab, 2);
    NC_ASSERT_OK(run(nc_op_hardsigmoid, &hg, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s5, (float[]){0, 0, 0.25f, 0.75f, 1});
    nc_tensor_free(o);
    /* integer inputs are refused by name */
    nc_tensor *xi = ti(1, s5, (int64_t[]){1, 2, 3, 4, 5});
    check_error(run(nc_op_sqrt, &sg, (const nc_tensor *[]){xi}, 1, &o), NC_ERR_UNSUPPORTED, "Sqrt");
    nc_tensor_free(xi);
    nc_tensor_free(x);
}

static void test_pow(void **state)
{
    (void)state;
    nc_node n = node("Pow", 15, NULL, 0);
    int64_t s23[] = {2, 3}, s3[] = {3};
    nc_tensor *x = tf(2, s23, (float[]){1, 2, 3, 4, 5, 6});
    nc_tensor *yf = tf(1, s3, (float[]){2, 0.5f, -1});
    nc_tensor *yi = ti(0, NULL, (int64_t[]){3});
    nc_tensor *o;
    NC_ASSERT_OK(run(nc_op_pow, &n, (const nc_tensor *[]){x, yf}, 2, &o));
    check_f32(o, 2, s23, (float[]){1, 1.41421356f, 1.0f / 3, 16, 2.23606798f, 1.0f / 6});
    nc_tensor_free(o);
    /* an int64 exponent; the result keeps X's type */
    NC_ASSERT_OK(run(nc_op_pow, &n, (const nc_tensor *[]){x, yi}, 2, &o));
    check_f32(o, 2, s23, (float[]){1, 8, 27, 64, 125, 216});
    nc_tensor_free(o);
    int64_t s2[] = {2};
    nc_tensor *bad = tf(1, s2, (float[]){1, 2});
    check_error(run(nc_op_pow, &n, (const nc_tensor *[]){x, bad}, 2, &o), NC_ERR_SHAPE, "broadcast");
    nc_tensor_free(bad);
    nc_tensor_free(x);
    nc_tensor_free(yf);
    nc_tensor_free(yi);
}

/* ---------------------------------------------------------------- reductions */

static void test_reduce_mean(void **state)
{
    (void)state;
    int64_t s[] = {2, 3};
    nc_tensor *x = tf(2, s, (float[]){1, 2, 3, 4, 5, 9});
    nc_tensor *o;
    /* opset 13: axes attribute */
    int64_t ax1[] = {-1};
    nc_attr a13[] = {attr_ints("axes", ax1, 1), attr_i("keepdims", 0)};
    nc_node n13 = node("ReduceMean", 13, a13, 2);
    NC_ASSERT_OK(run(nc_op_reducemean, &n13, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, (int64_t[]){2}, (float[]){2, 6});
    nc_tensor_free(o);
    /* no axes: everything, kept dims by default */
    nc_node nall = node("ReduceMean", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_reducemean, &nall, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 2, (int64_t[]){1, 1}, (float[]){4});
    nc_tensor_free(o);
    /* opset 18: axes as an input */
    nc_tensor *axes = ti(1, (int64_t[]){1}, (int64_t[]){0});
    nc_node n18 = node("ReduceMean", 18, NULL, 0);
    NC_ASSERT_OK(run(nc_op_reducemean, &n18, (const nc_tensor *[]){x, axes}, 2, &o));
    check_f32(o, 2, (int64_t[]){1, 3}, (float[]){2.5f, 3.5f, 6});
    nc_tensor_free(o);
    /* empty axes with noop_with_empty_axes: the input unchanged */
    nc_attr noop[] = {attr_i("noop_with_empty_axes", 1)};
    nc_node nnoop = node("ReduceMean", 18, noop, 1);
    NC_ASSERT_OK(run(nc_op_reducemean, &nnoop, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 2, s, (float[]){1, 2, 3, 4, 5, 9});
    nc_tensor_free(o);
    /* the attribute form at opset 18 and the input form before it are errors */
    nc_node bad18 = node("ReduceMean", 18, a13, 1);
    check_error(run(nc_op_reducemean, &bad18, (const nc_tensor *[]){x}, 1, &o), NC_ERR_MODEL, "input");
    check_error(run(nc_op_reducemean, &n13, (const nc_tensor *[]){x, axes}, 2, &o), NC_ERR_MODEL,
                "attribute");
    int64_t ax5[] = {5};
    nc_attr a5[] = {attr_ints("axes", ax5, 1)};
    nc_node n5 = node("ReduceMean", 13, a5, 1);
    check_error(run(nc_op_reducemean, &n5, (const nc_tensor *[]){x}, 1, &o), NC_ERR_MODEL, "range");
    nc_tensor_free(axes);
    nc_tensor_free(x);
}

static void test_layer_norm(void **state)
{
    (void)state;
    int64_t s[] = {2, 2, 2};
    nc_tensor *x = tf(3, s, (float[]){1, 3, 2, 2, 0, 4, 4, 4});
    nc_tensor *scale = tf(1, (int64_t[]){2}, (float[]){1, 2});
    nc_tensor *bias = tf(1, (int64_t[]){2}, (float[]){0, 10});
    nc_tensor *o[3] = {0};
    /* axis -1: rows (1,3) (2,2) (0,4) (4,4); mean 2 2 2 4, var 1 0 4 0 */
    nc_attr e[] = {attr_f("epsilon", 1e-5f)};
    nc_node n = node("LayerNormalization", 17, e, 1);
    NC_ASSERT_OK(nc_op_layernorm(&n, (const nc_tensor *[]){x, scale, bias}, 3, o, 3, &g_ctx));
    float k = 1.0f / sqrtf(1 + 1e-5f), k4 = 2.0f / sqrtf(4 + 1e-5f);
    check_f32(o[0], 3, s, (float[]){-k, 10 + 2 * k, 0, 10, -k4, 10 + 2 * k4, 0, 10});
    check_f32(o[1], 3, (int64_t[]){2, 2, 1}, (float[]){2, 2, 2, 4});
    for (int i = 0; i < 3; i++)
        nc_tensor_free(o[i]);
    /* axis 1: statistics over the last two dims; Scale of shape [2, 2] */
    nc_attr a1[] = {attr_i("axis", 1), attr_f("epsilon", 0.0f)};
    nc_node n1 = node("LayerNormalization", 17, a1, 2);
    nc_tensor *one = tf(2, (int64_t[]){2, 2}, (float[]){1, 1, 1, 1});
    NC_ASSERT_OK(nc_op_layernorm(&n1, (const nc_tensor *[]){x, one}, 2, o, 1, &g_ctx));
    /* first sample 1 3 2 2: mean 2, var 0.5 */
    float r = 1.0f / sqrtf(0.5f);
    check_f32(o[0], 3, s, (float[]){-r, r, 0, 0, -sqrtf(3), sqrtf(3) / 3, sqrtf(3) / 3, sqrtf(3) / 3});
    nc_tensor_free(o[0]);
    o[0] = NULL;
    /* a Scale that does not broadcast to X */
    nc_tensor *s3 = tf(1, (int64_t[]){3}, (float[]){1, 1, 1});
    check_error(nc_op_layernorm(&n, (const nc_tensor *[]){x, s3}, 2, o, 1, &g_ctx), NC_ERR_SHAPE,
                "Scale");
    assert_null(o[0]);
    nc_tensor_free(s3);
    nc_tensor_free(one);
    nc_tensor_free(x);
    nc_tensor_free(scale);
    nc_tensor_free(bias);
}

/* ---------------------------------------------------------------- Transpose */

static void test_transpose(void **state)
{
    (void)state;
    /* the channel shuffle: [N, g, C/g, H*W] -> [N, C/g, g, H*W] */
    int64_t s[] = {1, 2, 3, 2}, so[] = {1, 3, 2, 2}, perm[] = {0, 2, 1, 3};
    int64_t v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i;
    nc_tensor *x = ti(4, s, v);
    nc_attr ap[] = {attr_ints("perm", perm, 4)};
    nc_node n = node("Transpose", 13, ap, 1);
    nc_tensor *o;
    NC_ASSERT_OK(run(nc_op_transpose, &n, (const nc_tensor *[]){x}, 1, &o));
    check_i64(o, 4, so, (int64_t[]){0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11});
    nc_tensor_free(o);
    /* no perm: the dims reversed */
    nc_tensor *m = tf(2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    nc_node nd = node("Transpose", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_transpose, &nd, (const nc_tensor *[]){m}, 1, &o));
    check_f32(o, 2, (int64_t[]){3, 2}, (float[]){1, 4, 2, 5, 3, 6});
    nc_tensor_free(o);
    int64_t dup[] = {0, 0};
    nc_attr ad[] = {attr_ints("perm", dup, 2)};
    nc_node nb = node("Transpose", 13, ad, 1);
    check_error(run(nc_op_transpose, &nb, (const nc_tensor *[]){m}, 1, &o), NC_ERR_MODEL, "permutation");
    check_error(run(nc_op_transpose, &n, (const nc_tensor *[]){m}, 1, &o), NC_ERR_MODEL, "perm");
    nc_tensor_free(m);
    nc_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gates),       cmocka_unit_test(test_pow),
        cmocka_unit_test(test_reduce_mean), cmocka_unit_test(test_layer_norm),
        cmocka_unit_test(test_transpose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
