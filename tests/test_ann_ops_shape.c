/* Element-wise, activation and shape ops of the reference forward pass,
 * called directly on hand-built nodes, with hand-worked values. */
#include "ann_op_testlib.h"

/* ---------------------------------------------------------------- arithmetic */

static void test_broadcast_add(void **state)
{
    (void)state;
    nc_node n = node("Add", 14, NULL, 0);
    int64_t sa[] = {2, 3}, sb[] = {3};
    nc_tensor *a = tf(2, sa, (float[]){1, 2, 3, 4, 5, 6});
    nc_tensor *b = tf(1, sb, (float[]){10, 20, 30});
    nc_tensor *o;
    NC_ASSERT_OK(run(nc_op_add, &n, (const nc_tensor *[]){a, b}, 2, &o));
    check_f32(o, 2, sa, (float[]){11, 22, 33, 14, 25, 36});
    nc_tensor_free(o);
    /* the broadcast side first */
    NC_ASSERT_OK(run(nc_op_sub, &n, (const nc_tensor *[]){b, a}, 2, &o));
    check_f32(o, 2, sa, (float[]){9, 18, 27, 6, 15, 24});
    nc_tensor_free(o);
    nc_tensor_free(a);
    nc_tensor_free(b);
}

static void test_broadcast_outer(void **state)
{
    (void)state;
    nc_node n = node("Mul", 14, NULL, 0);
    int64_t sa[] = {2, 1}, sb[] = {1, 3}, so[] = {2, 3};
    nc_tensor *a = tf(2, sa, (float[]){1, 2});
    nc_tensor *b = tf(2, sb, (float[]){1, 2, 3});
    nc_tensor *o;
    NC_ASSERT_OK(run(nc_op_mul, &n, (const nc_tensor *[]){a, b}, 2, &o));
    check_f32(o, 2, so, (float[]){1, 2, 3, 2, 4, 6});
    nc_tensor_free(o);
    nc_tensor_free(a);
    nc_tensor_free(b);
}

static void test_broadcast_scalar(void **state)
{
    (void)state;
    nc_node n = node("Div", 14, NULL, 0);
    int64_t sa[] = {3};
    nc_tensor *a = tf(1, sa, (float[]){1, 2, 4});
    nc_tensor *s = tf(0, NULL, (float[]){8});
    nc_tensor *o;
    NC_ASSERT_OK(run(nc_op_div, &n, (const nc_tensor *[]){s, a}, 2, &o));
    check_f32(o, 1, sa, (float[]){8, 4, 2});
    nc_tensor_free(o);
    NC_ASSERT_OK(run(nc_op_div, &n, (const nc_tensor *[]){a, s}, 2, &o));
    check_f32(o, 1, sa, (float[]){0.125f, 0.25f, 0.5f});
    nc_tensor_free(o);
    /* scalar with scalar stays 0-D */
    NC_ASSERT_OK(run(nc_op_add, &n, (const nc_tensor *[]){s, s}, 2, &o));
    check_f32(o, 0, NULL, (float[]){16});
    nc_tensor_free(o);
    nc_tensor_free(a);
    nc_tensor_free(s);
}

static void test_int64_arith(void **state)
{
    (void)state;
    nc_node n = node("Div", 14, NULL, 0);
    int64_t s4[] = {4};
    nc_tensor *a = ti(1, s4, (int64_t[]){7, -7, 7, -7});
    nc_tensor *b = ti(1, s4, (int64_t[]){2, 2, -2, -2});
    nc_tensor *z = ti(1, s4, (int64_t[]){1, 0, 1, 1});
    nc_tensor *o;
    /* truncation toward zero, as ONNX's reference casts numpy's quotient */
    NC_ASSERT_OK(run(nc_op_div, &n, (const nc_tensor *[]){a, b}, 2, &o));
    check_i64(o, 1, s4, (int64_t[]){3, -3, -3, 3});
    nc_tensor_free(o);
    NC_ASSERT_OK(run(nc_op_mul, &n, (const nc_tensor *[]){a, b}, 2, &o));
    check_i64(o, 1, s4, (int64_t[]){14, -14, -14, 14});
    nc_tensor_free(o);
    NC_ASSERT_OK(run(nc_op_sub, &n, (const nc_tensor *[]){a, b}, 2, &o));
    check_i64(o, 1, s4, (int64_t[]){5, -9, 9, -5});
    nc_tensor_free(o);
    check_error(run(nc_op_div, &n, (const nc_tensor *[]){a, z}, 2, &o), NC_ERR_INVALID_ARG,
                "division by zero");
    /* shape-only passes run on zero-filled inputs: a zero divisor is no error there */
    static const nc_exec_ctx shape_only = {.shape_only = 1};
    assert_int_equal(nc_op_div(&n, (const nc_tensor *[]){a, z}, 2, &o, 1, &shape_only), NC_OK);
    check_i64(o, 1, s4, (int64_t[]){7, 0, 7, -7});
    nc_tensor_free(o);
    nc_tensor_free(a);
    nc_tensor_free(b);
    nc_tensor_free(z);
}

static void test_arith_errors(void **state)
{
    (void)state;
    nc_node n = node("Add", 14, NULL, 0);
    int64_t sa[] = {2, 3}, sb[] = {2};
    nc_tensor *a = tf(2, sa, (float[]){1, 2, 3, 4, 5, 6});
    nc_tensor *b = tf(1, sb, (float[]){1, 2});
    nc_tensor *c = ti(1, sb, (int64_t[]){1, 2});
    nc_tensor *o;
    check_error(run(nc_op_add, &n, (const nc_tensor *[]){a, b}, 2, &o), NC_ERR_SHAPE,
                "[2, 3] and [2] cannot be broadcast");
    check_error(run(nc_op_add, &n, (const nc_tensor *[]){b, c}, 2, &o), NC_ERR_UNSUPPORTED,
                "float32 and int64");
    nc_tensor_free(a);
    nc_tensor_free(b);
    nc_tensor_free(c);
}

/* ---------------------------------------------------------------- activations */

static void test_activations(void **state)
{
    (void)state;
    int64_t s4[] = {4};
    nc_tensor *x = tf(1, s4, (float[]){-2, -0.5f, 0.5f, 2.5f});
    nc_tensor *o;
    nc_node relu = node("Relu", 14, NULL, 0);
    NC_ASSERT_OK(run(nc_op_relu, &relu, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){0, 0, 0.5f, 2.5f});
    nc_tensor_free(o);

    nc_node leaky = node("LeakyRelu", 16, NULL, 0);
    NC_ASSERT_OK(run(nc_op_leakyrelu, &leaky, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-0.02f, -0.005f, 0.5f, 2.5f});
    nc_tensor_free(o);
    nc_attr alpha = attr_f("alpha", 0.5f);
    leaky = node("LeakyRelu", 16, &alpha, 1);
    NC_ASSERT_OK(run(nc_op_leakyrelu, &leaky, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-1, -0.25f, 0.5f, 2.5f});
    nc_tensor_free(o);

    nc_node fl = node("Floor", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_floor, &fl, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-2, -1, 0, 2});
    nc_tensor_free(o);

    nc_node id = node("Identity", 16, NULL, 0);
    NC_ASSERT_OK(run(nc_op_identity, &id, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-2, -0.5f, 0.5f, 2.5f});
    nc_tensor_free(o);

    nc_node dr = node("Dropout", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_dropout, &dr, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-2, -0.5f, 0.5f, 2.5f});
    nc_tensor_free(o);
    nc_tensor *outs[2] = {NULL, NULL};
    check_error(nc_op_dropout(&dr, (const nc_tensor *[]){x}, 1, outs, 2, &g_ctx),
                NC_ERR_UNSUPPORTED, "mask");
    assert_null(outs[0]);
    nc_tensor_free(x);

    nc_tensor *xi = ti(1, s4, (int64_t[]){-3, 0, 2, -1});
    NC_ASSERT_OK(run(nc_op_relu, &relu, (const nc_tensor *[]){xi}, 1, &o));
    check_i64(o, 1, s4, (int64_t[]){0, 0, 2, 0});
    nc_tensor_free(o);
    check_error(run(nc_op_floor, &fl, (const nc_tensor *[]){xi}, 1, &o), NC_ERR_UNSUPPORTED,
                "int64");
    nc_tensor_free(xi);
}

static void test_clip(void **state)
{
    (void)state;
    int64_t s4[] = {4};
    nc_tensor *x = tf(1, s4, (float[]){-2, -0.5f, 0.5f, 2});
    nc_tensor *o;
    /* opset 6: attributes */
    nc_attr at[] = {attr_f("min", -1), attr_f("max", 1)};
    nc_node old = node("Clip", 6, at, 2);
    NC_ASSERT_OK(run(nc_op_clip, &old, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-1, -0.5f, 0.5f, 1});
    nc_tensor_free(o);
    nc_node old_max = node("Clip", 6, &at[1], 1); /* min defaults to -inf */
    NC_ASSERT_OK(run(nc_op_clip, &old_max, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-2, -0.5f, 0.5f, 1});
    nc_tensor_free(o);

    /* opset 11+: optional inputs, an omitted one is NULL */
    nc_node nw = node("Clip", 13, NULL, 0);
    nc_tensor *zero = tf(0, NULL, (float[]){0});
    nc_tensor *one = tf(0, NULL, (float[]){1});
    nc_tensor *two = tf(0, NULL, (float[]){2});
    NC_ASSERT_OK(run(nc_op_clip, &nw, (const nc_tensor *[]){x, NULL, zero}, 3, &o));
    check_f32(o, 1, s4, (float[]){-2, -0.5f, 0, 0});
    nc_tensor_free(o);
    NC_ASSERT_OK(run(nc_op_clip, &nw, (const nc_tensor *[]){x, zero}, 2, &o));
    check_f32(o, 1, s4, (float[]){0, 0, 0.5f, 2});
    nc_tensor_free(o);
    NC_ASSERT_OK(run(nc_op_clip, &nw, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 1, s4, (float[]){-2, -0.5f, 0.5f, 2});
    nc_tensor_free(o);
    /* min > max: everything becomes max */
    NC_ASSERT_OK(run(nc_op_clip, &nw, (const nc_tensor *[]){x, two, one}, 3, &o));
    check_f32(o, 1, s4, (float[]){1, 1, 1, 1});
    nc_tensor_free(o);
    nc_tensor_free(x);
    nc_tensor_free(zero);
    nc_tensor_free(one);
    nc_tensor_free(two);
}

static void test_softmax_opsets(void **state)
{
    (void)state;
    /* rows [0, ln 3]: along the last axis each row is [1/4, 3/4]; coerced to
     * 2-D at axis 1 (opset < 13) all four share one sum of 8. */
    int64_t s[] = {1, 2, 2};
    float l3 = logf(3.0f);
    nc_tensor *x = tf(3, s, (float[]){0, l3, 0, l3});
    nc_tensor *o;
    nc_node new_dflt = node("Softmax", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_softmax, &new_dflt, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 3, s, (float[]){0.25f, 0.75f, 0.25f, 0.75f});
    nc_tensor_free(o);
    nc_node old_dflt = node("Softmax", 11, NULL, 0);
    NC_ASSERT_OK(run(nc_op_softmax, &old_dflt, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 3, s, (float[]){0.125f, 0.375f, 0.125f, 0.375f});
    nc_tensor_free(o);
    /* the same axis=1 means different things in the two versions */
    nc_attr ax = attr_i("axis", 1);
    nc_node new_ax1 = node("Softmax", 13, &ax, 1);
    NC_ASSERT_OK(run(nc_op_softmax, &new_ax1, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 3, s, (float[]){0.5f, 0.5f, 0.5f, 0.5f});
    nc_tensor_free(o);
    nc_node old_ax1 = node("Softmax", 11, &ax, 1);
    NC_ASSERT_OK(run(nc_op_softmax, &old_ax1, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 3, s, (float[]){0.125f, 0.375f, 0.125f, 0.375f});
    nc_tensor_free(o);

    nc_node lnew = node("LogSoftmax", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_logsoftmax, &lnew, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 3, s, (float[]){logf(0.25f), logf(0.75f), logf(0.25f), logf(0.75f)});
    nc_tensor_free(o);
    nc_node lold = node("LogSoftmax", 11, NULL, 0);
    NC_ASSERT_OK(run(nc_op_logsoftmax, &lold, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 3, s, (float[]){logf(0.125f), logf(0.375f), logf(0.125f), logf(0.375f)});
    nc_tensor_free(o);
    nc_tensor_free(x);

    /* large inputs stay finite thanks to the max subtraction */
    int64_t s2[] = {2};
    nc_tensor *big = tf(1, s2, (float[]){1000, 1000});
    NC_ASSERT_OK(run(nc_op_softmax, &new_dflt, (const nc_tensor *[]){big}, 1, &o));
    check_f32(o, 1, s2, (float[]){0.5f, 0.5f});
    nc_tensor_free(o);
    nc_attr bad = attr_i("axis", 1);
    nc_node nb = node("Softmax", 13, &bad, 1);
    check_error(run(nc_op_softmax, &nb, (const nc_tensor *[]){big}, 1, &o), NC_ERR_MODEL,
                "axis 1");
    nc_tensor_free(big);
}

/* ---------------------------------------------------------------- shape ops */

static void test_flatten(void **state)
{
    (void)state;
    int64_t s[] = {2, 3, 4};
    nc_tensor *x = tf(3, s, NULL);
    nc_tensor *o;
    nc_attr a = attr_i("axis", -1);
    nc_node n = node("Flatten", 13, &a, 1);
    NC_ASSERT_OK(run(nc_op_flatten, &n, (const nc_tensor *[]){x}, 1, &o));
    check_shape(o, 2, (int64_t[]){6, 4});
    nc_tensor_free(o);
    a.i = 0;
    NC_ASSERT_OK(run(nc_op_flatten, &n, (const nc_tensor *[]){x}, 1, &o));
    check_shape(o, 2, (int64_t[]){1, 24});
    nc_tensor_free(o);
    nc_node dflt = node("Flatten", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_flatten, &dflt, (const nc_tensor *[]){x}, 1, &o));
    check_shape(o, 2, (int64_t[]){2, 12});
    nc_tensor_free(o);
    a.i = 4;
    check_error(run(nc_op_flatten, &n, (const nc_tensor *[]){x}, 1, &o), NC_ERR_MODEL, "axis 4");
    nc_tensor_free(x);
}

static void test_reshape(void **state)
{
    (void)state;
    int64_t s[] = {2, 3, 4}, s2[] = {2};
    float v[24];
    for (int i = 0; i < 24; i++)
        v[i] = (float)i;
    nc_tensor *x = tf(3, s, v);
    nc_tensor *shape = ti(1, s2, (int64_t[]){0, -1});
    nc_tensor *o;
    nc_node n = node("Reshape", 14, NULL, 0);
    NC_ASSERT_OK(run(nc_op_reshape, &n, (const nc_tensor *[]){x, shape}, 2, &o));
    check_f32(o, 2, (int64_t[]){2, 12}, v);
    nc_tensor_free(o);
    nc_tensor_free(shape);

    shape = ti(1, s2, (int64_t[]){4, 2});
    check_error(run(nc_op_reshape, &n, (const nc_tensor *[]){x, shape}, 2, &o), NC_ERR_SHAPE,
                "cannot reshape [2, 3, 4] (24 elements) to [4, 2]");
    nc_tensor_free(shape);
    shape = ti(1, s2, (int64_t[]){-1, -1});
    check_error(run(nc_op_reshape, &n, (const nc_tensor *[]){x, shape}, 2, &o), NC_ERR_SHAPE,
                "more than one -1");
    nc_tensor_free(shape);
    shape = ti(1, s2, (int64_t[]){5, -1});
    check_error(run(nc_op_reshape, &n, (const nc_tensor *[]){x, shape}, 2, &o), NC_ERR_SHAPE,
                "[5, -1]");
    nc_tensor_free(shape);
    nc_tensor_free(x);

    /* allowzero: a 0 is a real zero-size dimension, not a copy */
    int64_t se[] = {0, 3};
    nc_tensor *e = tf(2, se, NULL);
    shape = ti(1, s2, (int64_t[]){3, 0});
    nc_attr az = attr_i("allowzero", 1);
    nc_node nz = node("Reshape", 14, &az, 1);
    NC_ASSERT_OK(run(nc_op_reshape, &nz, (const nc_tensor *[]){e, shape}, 2, &o));
    check_shape(o, 2, (int64_t[]){3, 0});
    nc_tensor_free(o);
    check_error(run(nc_op_reshape, &n, (const nc_tensor *[]){e, shape}, 2, &o), NC_ERR_SHAPE,
                "element counts");
    nc_tensor_free(shape);
    nc_tensor_free(e);
}

static void test_squeeze_unsqueeze(void **state)
{
    (void)state;
    int64_t s[] = {1, 3, 1, 2};
    nc_tensor *x = tf(4, s, (float[]){1, 2, 3, 4, 5, 6});
    nc_tensor *o;
    int64_t ax[] = {0, 2};
    nc_attr a = attr_ints("axes", ax, 2);
    nc_node sq11 = node("Squeeze", 11, &a, 1);
    NC_ASSERT_OK(run(nc_op_squeeze, &sq11, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 2, (int64_t[]){3, 2}, (float[]){1, 2, 3, 4, 5, 6});
    nc_tensor_free(o);
    nc_node sq13 = node("Squeeze", 13, NULL, 0);
    nc_tensor *axes = ti(1, (int64_t[]){1}, (int64_t[]){-2});
    NC_ASSERT_OK(run(nc_op_squeeze, &sq13, (const nc_tensor *[]){x, axes}, 2, &o));
    check_shape(o, 3, (int64_t[]){1, 3, 2});
    nc_tensor_free(o);
    NC_ASSERT_OK(run(nc_op_squeeze, &sq13, (const nc_tensor *[]){x}, 1, &o));
    check_shape(o, 2, (int64_t[]){3, 2});
    nc_tensor_free(o);
    nc_tensor_free(axes);
    axes = ti(1, (int64_t[]){1}, (int64_t[]){1});
    check_error(run(nc_op_squeeze, &sq13, (const nc_tensor *[]){x, axes}, 2, &o), NC_ERR_SHAPE,
                "not 1");
    nc_tensor_free(axes);

    int64_t ux[] = {0, 3};
    nc_attr ua = attr_ints("axes", ux, 2);
    nc_node us11 = node("Unsqueeze", 11, &ua, 1);
    int64_t s34[] = {3, 4};
    nc_tensor *y = tf(2, s34, NULL);
    NC_ASSERT_OK(run(nc_op_unsqueeze, &us11, (const nc_tensor *[]){y}, 1, &o));
    check_shape(o, 4, (int64_t[]){1, 3, 4, 1});
    nc_tensor_free(o);
    nc_node us13 = node("Unsqueeze", 13, NULL, 0);
    axes = ti(1, (int64_t[]){1}, (int64_t[]){-1});
    NC_ASSERT_OK(run(nc_op_unsqueeze, &us13, (const nc_tensor *[]){y, axes}, 2, &o));
    check_shape(o, 3, (int64_t[]){3, 4, 1});
    nc_tensor_free(o);
    nc_tensor *sc = ti(0, NULL, (int64_t[]){7});
    NC_ASSERT_OK(run(nc_op_unsqueeze, &us13, (const nc_tensor *[]){sc, axes}, 2, &o));
    check_i64(o, 1, (int64_t[]){1}, (int64_t[]){7});
    nc_tensor_free(o);
    check_error(run(nc_op_unsqueeze, &us13, (const nc_tensor *[]){y}, 1, &o), NC_ERR_MODEL,
                "axes");
    nc_tensor_free(axes);
    nc_tensor_free(sc);
    nc_tensor_free(y);
    nc_tensor_free(x);
}

static void test_concat(void **state)
{
    (void)state;
    nc_tensor *a = tf(2, (int64_t[]){2, 1}, (float[]){1, 2});
    nc_tensor *b = tf(2, (int64_t[]){2, 2}, (float[]){3, 4, 5, 6});
    nc_tensor *o;
    nc_attr ax = attr_i("axis", -1);
    nc_node n = node("Concat", 13, &ax, 1);
    NC_ASSERT_OK(run(nc_op_concat, &n, (const nc_tensor *[]){a, b, a}, 3, &o));
    check_f32(o, 2, (int64_t[]){2, 4}, (float[]){1, 3, 4, 1, 2, 5, 6, 2});
    nc_tensor_free(o);
    ax.i = 0;
    check_error(run(nc_op_concat, &n, (const nc_tensor *[]){a, b}, 2, &o), NC_ERR_SHAPE,
                "input 1 has shape [2, 2]");
    NC_ASSERT_OK(run(nc_op_concat, &n, (const nc_tensor *[]){b, b}, 2, &o));
    check_f32(o, 2, (int64_t[]){4, 2}, (float[]){3, 4, 5, 6, 3, 4, 5, 6});
    nc_tensor_free(o);
    nc_tensor_free(a);
    nc_tensor_free(b);
}

/* PyTorch's x.view(x.size(0), -1): Shape → Gather(0) → Unsqueeze → Concat →
 * Reshape, computed even in a shape-only pass. */
static void test_view_chain(void **state)
{
    (void)state;
    static const nc_exec_ctx shape_only = {.shape_only = 1};
    int64_t s[] = {4, 2, 3};
    nc_tensor *x = tf(3, s, NULL);
    nc_tensor *shp, *batch, *b1, *cat, *y;
    nc_node nshape = node("Shape", 13, NULL, 0);
    assert_int_equal(nc_op_shape(&nshape, (const nc_tensor *[]){x}, 1, &shp, 1, &shape_only),
                     NC_OK);
    check_i64(shp, 1, (int64_t[]){3}, (int64_t[]){4, 2, 3});

    nc_tensor *zero = ti(0, NULL, (int64_t[]){0});
    nc_attr ga = attr_i("axis", 0);
    nc_node ngather = node("Gather", 13, &ga, 1);
    assert_int_equal(nc_op_gather(&ngather, (const nc_tensor *[]){shp, zero}, 2, &batch, 1,
                                  &shape_only), NC_OK);
    check_i64(batch, 0, NULL, (int64_t[]){4});

    int64_t ax0[] = {0};
    nc_attr ua = attr_ints("axes", ax0, 1);
    nc_node nun = node("Unsqueeze", 11, &ua, 1);
    assert_int_equal(nc_op_unsqueeze(&nun, (const nc_tensor *[]){batch}, 1, &b1, 1, &shape_only),
                     NC_OK);
    check_i64(b1, 1, (int64_t[]){1}, (int64_t[]){4});

    nc_tensor *minus1 = ti(1, (int64_t[]){1}, (int64_t[]){-1});
    nc_attr ca = attr_i("axis", 0);
    nc_node ncat = node("Concat", 11, &ca, 1);
    assert_int_equal(nc_op_concat(&ncat, (const nc_tensor *[]){b1, minus1}, 2, &cat, 1,
                                  &shape_only), NC_OK);
    check_i64(cat, 1, (int64_t[]){2}, (int64_t[]){4, -1});

    nc_node nres = node("Reshape", 13, NULL, 0);
    assert_int_equal(nc_op_reshape(&nres, (const nc_tensor *[]){x, cat}, 2, &y, 1, &shape_only),
                     NC_OK);
    check_shape(y, 2, (int64_t[]){4, 6});
    nc_tensor *all[] = {x, shp, batch, b1, cat, y, zero, minus1};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        nc_tensor_free(all[i]);
}

static void test_shape_window(void **state)
{
    (void)state;
    nc_tensor *x = tf(3, (int64_t[]){4, 2, 3}, NULL);
    nc_tensor *o;
    nc_attr at[] = {attr_i("start", 1), attr_i("end", -1)};
    nc_node n = node("Shape", 15, at, 2);
    NC_ASSERT_OK(run(nc_op_shape, &n, (const nc_tensor *[]){x}, 1, &o));
    check_i64(o, 1, (int64_t[]){1}, (int64_t[]){2});
    nc_tensor_free(o);
    at[0].i = -10; /* clamped */
    at[1].i = 10;
    NC_ASSERT_OK(run(nc_op_shape, &n, (const nc_tensor *[]){x}, 1, &o));
    check_i64(o, 1, (int64_t[]){3}, (int64_t[]){4, 2, 3});
    nc_tensor_free(o);
    nc_tensor_free(x);
}

static void test_gather(void **state)
{
    (void)state;
    nc_tensor *x = tf(2, (int64_t[]){3, 2}, (float[]){1, 2, 3, 4, 5, 6});
    nc_tensor *ix = ti(2, (int64_t[]){2, 2}, (int64_t[]){0, -1, 1, 0});
    nc_tensor *o;
    nc_node n0 = node("Gather", 13, NULL, 0);
    NC_ASSERT_OK(run(nc_op_gather, &n0, (const nc_tensor *[]){x, ix}, 2, &o));
    check_f32(o, 3, (int64_t[]){2, 2, 2}, (float[]){1, 2, 5, 6, 3, 4, 1, 2});
    nc_tensor_free(o);

    nc_attr ax = attr_i("axis", -1);
    nc_node n1 = node("Gather", 13, &ax, 1);
    nc_tensor *last = ti(0, NULL, (int64_t[]){-1});
    NC_ASSERT_OK(run(nc_op_gather, &n1, (const nc_tensor *[]){x, last}, 2, &o));
    check_f32(o, 1, (int64_t[]){3}, (float[]){2, 4, 6});
    nc_tensor_free(o);
    NC_ASSERT_OK(run(nc_op_gather, &n1, (const nc_tensor *[]){x, ix}, 2, &o));
    check_f32(o, 3, (int64_t[]){3, 2, 2}, (float[]){1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 6, 5});
    nc_tensor_free(o);

    nc_tensor *bad = ti(1, (int64_t[]){2}, (int64_t[]){0, 3});
    check_error(run(nc_op_gather, &n0, (const nc_tensor *[]){x, bad}, 2, &o), NC_ERR_INVALID_ARG,
                "index 3 is out of range");
    nc_tensor_free(bad);
    bad = ti(1, (int64_t[]){1}, (int64_t[]){-4});
    check_error(run(nc_op_gather, &n0, (const nc_tensor *[]){x, bad}, 2, &o), NC_ERR_INVALID_ARG,
                "index -4");
    nc_tensor_free(bad);
    nc_tensor_free(last);
    nc_tensor_free(ix);
    nc_tensor_free(x);
}

static void test_slice(void **state)
{
    (void)state;
    float v[12];
    for (int i = 0; i < 12; i++)
        v[i] = (float)i;
    nc_tensor *x = tf(1, (int64_t[]){10}, v);
    nc_tensor *o;
    int64_t one[] = {1};
    nc_node n = node("Slice", 13, NULL, 0);
    /* negative step from the end down past the start: 9, 6, 3, 0 */
    nc_tensor *st = ti(1, one, (int64_t[]){-1}), *en = ti(1, one, (int64_t[]){INT64_MIN});
    nc_tensor *ax = ti(1, one, (int64_t[]){0}), *sp = ti(1, one, (int64_t[]){-3});
    NC_ASSERT_OK(run(nc_op_slice, &n, (const nc_tensor *[]){x, st, en, ax, sp}, 5, &o));
    check_f32(o, 1, (int64_t[]){4}, (float[]){9, 6, 3, 0});
    nc_tensor_free(o);
    nc_tensor_free(st);
    nc_tensor_free(en);
    /* ends clamped to the dim, axes and steps omitted */
    st = ti(1, one, (int64_t[]){7});
    en = ti(1, one, (int64_t[]){1000});
    NC_ASSERT_OK(run(nc_op_slice, &n, (const nc_tensor *[]){x, st, en}, 3, &o));
    check_f32(o, 1, (int64_t[]){3}, (float[]){7, 8, 9});
    nc_tensor_free(o);
    nc_tensor_free(st);
    nc_tensor_free(en);
    /* a start past the end gives an empty slice */
    st = ti(1, one, (int64_t[]){12});
    en = ti(1, one, (int64_t[]){20});
    NC_ASSERT_OK(run(nc_op_slice, &n, (const nc_tensor *[]){x, st, en, NULL, NULL}, 5, &o));
    check_shape(o, 1, (int64_t[]){0});
    nc_tensor_free(o);
    nc_tensor_free(st);
    nc_tensor_free(en);
    nc_tensor_free(ax);
    nc_tensor_free(sp);
    nc_tensor_free(x);

    /* 2-D: rows 0..1 (end -1), columns 3 down to 1 */
    x = tf(2, (int64_t[]){3, 4}, v);
    int64_t two[] = {2};
    st = ti(1, two, (int64_t[]){0, 3});
    en = ti(1, two, (int64_t[]){-1, 0});
    ax = ti(1, two, (int64_t[]){0, -1});
    sp = ti(1, two, (int64_t[]){1, -1});
    NC_ASSERT_OK(run(nc_op_slice, &n, (const nc_tensor *[]){x, st, en, ax, sp}, 5, &o));
    check_f32(o, 2, (int64_t[]){2, 3}, (float[]){3, 2, 1, 7, 6, 5});
    nc_tensor_free(o);
    nc_tensor_free(sp);
    sp = ti(1, two, (int64_t[]){1, 0});
    check_error(run(nc_op_slice, &n, (const nc_tensor *[]){x, st, en, ax, sp}, 5, &o),
                NC_ERR_MODEL, "step 0");
    nc_tensor_free(sp);
    nc_tensor_free(st);
    nc_tensor_free(en);
    nc_tensor_free(ax);

    /* opset 9: attributes */
    int64_t a_st[] = {1}, a_en[] = {3}, a_ax[] = {1};
    nc_attr at[] = {attr_ints("starts", a_st, 1), attr_ints("ends", a_en, 1),
                    attr_ints("axes", a_ax, 1)};
    nc_node old = node("Slice", 9, at, 3);
    NC_ASSERT_OK(run(nc_op_slice, &old, (const nc_tensor *[]){x}, 1, &o));
    check_f32(o, 2, (int64_t[]){3, 2}, (float[]){1, 2, 5, 6, 9, 10});
    nc_tensor_free(o);
    nc_tensor_free(x);
}

static void test_cast(void **state)
{
    (void)state;
    int64_t s4[] = {4};
    nc_tensor *x = tf(1, s4, (float[]){1.7f, -1.7f, 300, 0});
    nc_tensor *o;
    nc_attr to = attr_i("to", 7); /* INT64 */
    nc_node n = node("Cast", 13, &to, 1);
    NC_ASSERT_OK(run(nc_op_cast, &n, (const nc_tensor *[]){x}, 1, &o));
    check_i64(o, 1, s4, (int64_t[]){1, -1, 300, 0});
    nc_tensor_free(o);
    to.i = 2; /* UINT8 wraps */
    NC_ASSERT_OK(run(nc_op_cast, &n, (const nc_tensor *[]){x}, 1, &o));
    check_i64(o, 1, s4, (int64_t[]){1, 255, 44, 0});
    nc_tensor_free(o);
    to.i = 9; /* BOOL */
    NC_ASSERT_OK(run(nc_op_cast, &n, (const nc_tensor *[]){x}, 1, &o));
    check_i64(o, 1, s4, (int64_t[]){1, 1, 1, 0});
    nc_tensor_free(o);
    to.i = 10; /* FLOAT16 */
    check_error(run(nc_op_cast, &n, (const nc_tensor *[]){x}, 1, &o), NC_ERR_UNSUPPORTED,
                "FLOAT16");
    nc_tensor *xi = ti(1, s4, (int64_t[]){-3, 0, 5, 1 << 20});
    to.i = 1; /* FLOAT */
    NC_ASSERT_OK(run(nc_op_cast, &n, (const nc_tensor *[]){xi}, 1, &o));
    check_f32(o, 1, s4, (float[]){-3, 0, 5, 1 << 20});
    nc_tensor_free(o);
    to.i = 3; /* INT8 */
    NC_ASSERT_OK(run(nc_op_cast, &n, (const nc_tensor *[]){xi}, 1, &o));
    check_i64(o, 1, s4, (int64_t[]){-3, 0, 5, 0});
    nc_tensor_free(o);
    nc_tensor_free(xi);
    nc_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast_add),   cmocka_unit_test(test_broadcast_outer),
        cmocka_unit_test(test_broadcast_scalar), cmocka_unit_test(test_int64_arith),
        cmocka_unit_test(test_arith_errors),    cmocka_unit_test(test_activations),
        cmocka_unit_test(test_clip),            cmocka_unit_test(test_softmax_opsets),
        cmocka_unit_test(test_flatten),         cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_squeeze_unsqueeze), cmocka_unit_test(test_concat),
        cmocka_unit_test(test_view_chain),      cmocka_unit_test(test_shape_window),
        cmocka_unit_test(test_gather),          cmocka_unit_test(test_slice),
        cmocka_unit_test(test_cast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
