/* Conv, Gemm, MatMul, BatchNormalization, pooling and Pad on hand-built
 * nodes, against hand-worked values (the ceil_mode pooling values were also
 * checked with PyTorch's avg_pool1d). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "convert/ann/ann_ops.h"
#include "snn/base/error.h"
#include "convert/ann/graph.h"
#include "snn/base/tensor.h"

/* ---- node and tensor builders ---- */

#define INTS(nm, ...)                                                                        \
    (nc_attr)                                                                                \
    {                                                                                        \
        .name = (char *)(nm), .type = NC_ATTR_INTS,                                          \
        .n = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),                      \
        .ints = (int64_t[]){__VA_ARGS__}                                                     \
    }
#define INT(nm, v) (nc_attr){.name = (char *)(nm), .type = NC_ATTR_INT, .i = (v)}
#define FLT(nm, v) (nc_attr){.name = (char *)(nm), .type = NC_ATTR_FLOAT, .f = (v)}
#define STR(nm, v) (nc_attr){.name = (char *)(nm), .type = NC_ATTR_STRING, .s = (char *)(v)}

static nc_node node(const char *op, int64_t opset, nc_attr *attrs, int n_attrs)
{
    nc_node n = {0};
    n.name = (char *)"t";
    n.op_type = (char *)op;
    n.opset = opset;
    n.attrs = attrs;
    n.n_attrs = n_attrs;
    return n;
}
#define NODE(op, opset, ...)                                                                 \
    node(op, opset, (nc_attr[]){__VA_ARGS__},                                                \
         (int)(sizeof((nc_attr[]){__VA_ARGS__}) / sizeof(nc_attr)))
#define NODE0(op, opset) node(op, opset, NULL, 0)

static nc_tensor *tf(int ndim, const int64_t *shape, const float *data)
{
    nc_tensor *t = nc_tensor_new(NC_DTYPE_F32, ndim, shape);
    assert_non_null(t);
    if (data)
        memcpy(t->data, data, (size_t)t->numel * sizeof(float));
    return t;
}
#define TF(data, ...)                                                                        \
    tf((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}, data)

/* a scalar (rank 0) */
#define TF0(data) tf(0, (int64_t[]){1}, data)

static nc_tensor *ti(int ndim, const int64_t *shape, const int64_t *data)
{
    nc_tensor *t = nc_tensor_new(NC_DTYPE_I64, ndim, shape);
    assert_non_null(t);
    memcpy(t->data, data, (size_t)t->numel * sizeof(int64_t));
    return t;
}
#define TI(data, ...)                                                                        \
    ti((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}, data)
#define TI0(data) ti(0, (int64_t[]){1}, data)

/* Runs op with n_in inputs (NULL entries allowed) and returns its status;
 * *y is the output (NULL on failure). */
static nc_status run_op(nc_op_run_fn fn, const nc_node *n, nc_tensor **in, int n_in, int n_out,
                        nc_tensor **y, int shape_only)
{
    nc_tensor *out[2] = {NULL, NULL};
    nc_exec_ctx ctx = {.shape_only = shape_only};
    nc_status st = fn(n, (const nc_tensor *const *)in, n_in, out, n_out, &ctx);
    if (st != NC_OK) {
        assert_null(out[0]);
        assert_null(out[1]);
    }
    *y = out[0];
    return st;
}

static void free_all(nc_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        nc_tensor_free(t[i]);
}

static void expect_shape(const nc_tensor *y, int ndim, const int64_t *shape)
{
    assert_non_null(y);
    assert_int_equal(y->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(y->shape[d], shape[d]);
}
#define EXPECT_SHAPE(y, ...)                                                                 \
    expect_shape(y, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),              \
                 (int64_t[]){__VA_ARGS__})

static void expect_f32(const nc_tensor *y, const float *want, int64_t n)
{
    assert_int_equal(y->numel, n);
    for (int64_t i = 0; i < n; i++)
        if (fabsf(nc_f32(y)[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i])))
            fail_msg("element %lld: got %g, want %g", (long long)i, nc_f32(y)[i], want[i]);
}
#define EXPECT_F32(y, ...)                                                                   \
    expect_f32(y, (float[]){__VA_ARGS__}, (int64_t)(sizeof((float[]){__VA_ARGS__}) / sizeof(float)))

static const float k_1to16[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* ---- Conv ---- */

static void test_conv_stride_pad_bias(void **state)
{
    (void)state;
    nc_node n = NODE("Conv", 13, INTS("strides", 2, 2), INTS("pads", 1, 1, 1, 1));
    nc_tensor *in[3] = {TF(k_1to16, 1, 1, 3, 3), TF(((float[]){1, 2, 3, 4}), 1, 1, 2, 2),
                        TF(((float[]){1}), 1)};
    nc_tensor *y;
    NC_ASSERT_OK(run_op(nc_op_conv, &n, in, 3, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 2, 2);
    EXPECT_F32(y, 5, 19, 37, 78);
    nc_tensor_free(y);
    /* shape inference gives the shape without computing */
    NC_ASSERT_OK(run_op(nc_op_conv, &n, in, 3, 1, &y, 1));
    EXPECT_SHAPE(y, 1, 1, 2, 2);
    nc_tensor_free(y);
    free_all(in, 3);
}

static void test_conv_groups(void **state)
{
    (void)state;
    nc_node n = NODE("Conv", 13, INT("group", 2));
    /* 1x1 kernels take the no-im2col path */
    nc_tensor *in[2] = {TF(k_1to16, 1, 2, 2, 2), TF(((float[]){2, 3}), 2, 1, 1, 1)};
    nc_tensor *y;
    NC_ASSERT_OK(run_op(nc_op_conv, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 2, 2, 2);
    EXPECT_F32(y, 2, 4, 6, 8, 15, 18, 21, 24);
    nc_tensor_free(y);
    nc_tensor_free(in[1]);
    /* depthwise 2x2, and two output channels per group */
    in[1] = TF(((float[]){1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1}), 4, 1, 2, 2);
    NC_ASSERT_OK(run_op(nc_op_conv, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 4, 1, 1);
    EXPECT_F32(y, 10, 1, 8, 26);
    nc_tensor_free(y);
    free_all(in, 2);
}

static void test_conv_dilation(void **state)
{
    (void)state;
    nc_node n = NODE("Conv", 13, INTS("dilations", 2, 2), INTS("kernel_shape", 2, 2));
    nc_tensor *in[2] = {TF(k_1to16, 1, 1, 3, 3), TF(((float[]){1, 1, 1, 1}), 1, 1, 2, 2)};
    nc_tensor *y;
    NC_ASSERT_OK(run_op(nc_op_conv, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 1, 1);
    EXPECT_F32(y, 1 + 3 + 7 + 9);
    nc_tensor_free(y);
    free_all(in, 2);
}

static void test_conv_1d_auto_pad(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_node up = NODE("Conv", 13, STR("auto_pad", "SAME_UPPER"), INTS("strides", 2));
    nc_tensor *in[2] = {TF(k_1to16, 1, 1, 5), TF(((float[]){1, 0, -1}), 1, 1, 3)};
    NC_ASSERT_OK(run_op(nc_op_conv, &up, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 3);
    EXPECT_F32(y, -2, -2, 4);
    nc_tensor_free(y);
    free_all(in, 2);

    /* an odd total padding goes to the end (UPPER) or the start (LOWER) */
    in[0] = TF(k_1to16, 1, 1, 3);
    in[1] = TF(((float[]){1, 10}), 1, 1, 2);
    nc_node upper = NODE("Conv", 13, STR("auto_pad", "SAME_UPPER"));
    NC_ASSERT_OK(run_op(nc_op_conv, &upper, in, 2, 1, &y, 0));
    EXPECT_F32(y, 21, 32, 3);
    nc_tensor_free(y);
    nc_node lower = NODE("Conv", 13, STR("auto_pad", "SAME_LOWER"));
    NC_ASSERT_OK(run_op(nc_op_conv, &lower, in, 2, 1, &y, 0));
    EXPECT_F32(y, 10, 21, 32);
    nc_tensor_free(y);
    nc_node valid = NODE("Conv", 13, STR("auto_pad", "VALID"));
    NC_ASSERT_OK(run_op(nc_op_conv, &valid, in, 2, 1, &y, 0));
    EXPECT_F32(y, 21, 32);
    nc_tensor_free(y);
    free_all(in, 2);
}

static void test_conv_errors(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_node n = NODE0("Conv", 13);
    nc_tensor *in[2] = {TF(NULL, 1, 3, 4, 4), TF(NULL, 2, 2, 3, 3)};
    assert_int_equal(run_op(nc_op_conv, &n, in, 2, 1, &y, 0), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "[1, 3, 4, 4]"));
    assert_non_null(strstr(nc_last_error(), "[2, 2, 3, 3]"));
    nc_tensor_free(in[1]);
    in[1] = TF(NULL, 2, 3, 3, 3);
    nc_node bad = NODE("Conv", 13, STR("auto_pad", "SAME_MIDDLE"));
    assert_int_equal(run_op(nc_op_conv, &bad, in, 2, 1, &y, 0), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "auto_pad"));
    assert_non_null(strstr(nc_last_error(), "SAME_MIDDLE"));
    nc_node ks = NODE("Conv", 13, INTS("kernel_shape", 2, 2));
    assert_int_equal(run_op(nc_op_conv, &ks, in, 2, 1, &y, 0), NC_ERR_SHAPE);
    nc_node st0 = NODE("Conv", 13, INTS("strides", 0, 1));
    assert_int_equal(run_op(nc_op_conv, &st0, in, 2, 1, &y, 0), NC_ERR_MODEL);
    nc_node pads = NODE("Conv", 13, INTS("pads", 1, 1));
    assert_int_equal(run_op(nc_op_conv, &pads, in, 2, 1, &y, 0), NC_ERR_MODEL);
    free_all(in, 2);
    /* a kernel larger than the padded input */
    in[0] = TF(NULL, 1, 1, 2, 2);
    in[1] = TF(NULL, 1, 1, 3, 3);
    assert_int_equal(run_op(nc_op_conv, &n, in, 2, 1, &y, 0), NC_ERR_SHAPE);
    free_all(in, 2);
}

/* ---- Gemm and MatMul ---- */

static void test_gemm(void **state)
{
    (void)state;
    nc_tensor *y;
    /* A = [[1,2,3],[4,5,6]] stored transposed, B = [[1,0],[0,1],[1,1]] stored
     * transposed: A·B = [[4,5],[10,11]] */
    nc_tensor *in[3] = {TF(((float[]){1, 4, 2, 5, 3, 6}), 3, 2), TF(((float[]){1, 0, 1, 0, 1, 1}), 2, 3),
                        TF(((float[]){2, 4}), 2)};
    nc_node n = NODE("Gemm", 13, INT("transA", 1), INT("transB", 1), FLT("alpha", 2.0f),
                     FLT("beta", 0.5f));
    NC_ASSERT_OK(run_op(nc_op_gemm, &n, in, 3, 1, &y, 0));
    EXPECT_SHAPE(y, 2, 2);
    EXPECT_F32(y, 9, 12, 21, 24);
    nc_tensor_free(y);

    nc_tensor_free(in[2]);
    in[2] = TF(((float[]){1, 2}), 2, 1); /* [M, 1] */
    nc_node n1 = NODE("Gemm", 13, INT("transA", 1), INT("transB", 1), FLT("alpha", 2.0f));
    NC_ASSERT_OK(run_op(nc_op_gemm, &n1, in, 3, 1, &y, 0));
    EXPECT_F32(y, 9, 11, 22, 24);
    nc_tensor_free(y);

    nc_tensor_free(in[2]);
    in[2] = TF0(((float[]){3})); /* scalar */
    NC_ASSERT_OK(run_op(nc_op_gemm, &n1, in, 3, 1, &y, 0));
    EXPECT_F32(y, 11, 13, 23, 25);
    nc_tensor_free(y);
    /* C omitted (opset 11+) */
    nc_tensor *no_c[3] = {in[0], in[1], NULL};
    NC_ASSERT_OK(run_op(nc_op_gemm, &n1, no_c, 3, 1, &y, 0));
    EXPECT_F32(y, 8, 10, 20, 22);
    nc_tensor_free(y);

    /* C [M, N] where the shape is wrong for the output */
    nc_tensor_free(in[2]);
    in[2] = TF(NULL, 3, 2);
    assert_int_equal(run_op(nc_op_gemm, &n1, in, 3, 1, &y, 0), NC_ERR_SHAPE);
    /* inner dims that do not match (transB off) */
    nc_node plain = NODE("Gemm", 13, INT("transA", 1));
    assert_int_equal(run_op(nc_op_gemm, &plain, in, 2, 1, &y, 0), NC_ERR_SHAPE);
    free_all(in, 3);
}

static void test_matmul(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_node n = NODE0("MatMul", 13);
    const float bm[] = {1, 0, 0, 1, 1, 1};
    /* one B shared by a batch of A */
    nc_tensor *in[2] = {TF(k_1to16, 2, 2, 3), TF(bm, 3, 2)};
    NC_ASSERT_OK(run_op(nc_op_matmul, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 2, 2, 2);
    EXPECT_F32(y, 4, 5, 10, 11, 16, 17, 22, 23);
    nc_tensor_free(y);
    free_all(in, 2);

    /* batch dims broadcast both ways: [1,2,2] x [3,2,1] */
    in[0] = TF(k_1to16, 1, 2, 2);
    in[1] = TF(((float[]){1, 1, 1, 0, 0, 2}), 3, 2, 1);
    NC_ASSERT_OK(run_op(nc_op_matmul, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 3, 2, 1);
    EXPECT_F32(y, 3, 7, 1, 3, 4, 8);
    nc_tensor_free(y);
    free_all(in, 2);

    /* [2,1,2,2] x [3,2,1]: output [2,3,2,1] */
    in[0] = TF(((float[]){1, 2, 3, 4, -1, -2, -3, -4}), 2, 1, 2, 2);
    in[1] = TF(((float[]){1, 1, 1, 0, 0, 2}), 3, 2, 1);
    NC_ASSERT_OK(run_op(nc_op_matmul, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 2, 3, 2, 1);
    EXPECT_F32(y, 3, 7, 1, 3, 4, 8, -3, -7, -1, -3, -4, -8);
    nc_tensor_free(y);
    free_all(in, 2);

    /* 1-D operands lose their added dim */
    in[0] = TF(k_1to16, 3);
    in[1] = TF(bm, 3, 2);
    NC_ASSERT_OK(run_op(nc_op_matmul, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 2);
    EXPECT_F32(y, 4, 5);
    nc_tensor_free(y);
    free_all(in, 2);
    in[0] = TF(k_1to16, 2, 3);
    in[1] = TF(k_1to16, 3);
    NC_ASSERT_OK(run_op(nc_op_matmul, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 2);
    EXPECT_F32(y, 14, 32);
    nc_tensor_free(y);
    nc_tensor_free(in[1]);

    in[1] = TF(NULL, 2, 2);
    assert_int_equal(run_op(nc_op_matmul, &n, in, 2, 1, &y, 0), NC_ERR_SHAPE);
    free_all(in, 2);
    in[0] = TF(NULL, 2, 2, 3);
    in[1] = TF(NULL, 3, 3, 2);
    assert_int_equal(run_op(nc_op_matmul, &n, in, 2, 1, &y, 0), NC_ERR_SHAPE);
    free_all(in, 2);
}

/* ---- BatchNormalization ---- */

static void test_batchnorm(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_node n = NODE("BatchNormalization", 15, FLT("epsilon", 1.0f));
    nc_tensor *in[5] = {TF(((float[]){3, 6, 5, 10}), 2, 2), TF(((float[]){2, 3}), 2),
                        TF(((float[]){1, -1}), 2), TF(((float[]){1, 2}), 2), TF(((float[]){3, 15}), 2)};
    NC_ASSERT_OK(run_op(nc_op_batchnorm, &n, in, 5, 1, &y, 0));
    EXPECT_SHAPE(y, 2, 2);
    EXPECT_F32(y, 3, 2, 5, 5);
    nc_tensor_free(y);
    /* the same statistics over [N, C, L] */
    nc_tensor_free(in[0]);
    in[0] = TF(((float[]){3, 5, 6, 10}), 1, 2, 2);
    NC_ASSERT_OK(run_op(nc_op_batchnorm, &n, in, 5, 1, &y, 0));
    EXPECT_F32(y, 3, 5, 2, 5);
    nc_tensor_free(y);

    nc_node tm = NODE("BatchNormalization", 15, INT("training_mode", 1));
    assert_int_equal(run_op(nc_op_batchnorm, &tm, in, 5, 1, &y, 0), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "training_mode"));
    nc_tensor_free(in[4]);
    in[4] = TF(NULL, 3);
    assert_int_equal(run_op(nc_op_batchnorm, &n, in, 5, 1, &y, 0), NC_ERR_SHAPE);
    free_all(in, 5);
}

/* ---- pooling ---- */

static void test_averagepool_ceil(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_tensor *x = TF(k_1to16, 1, 1, 4);
    /* windows start at -1, 1, 3; the last one reaches past the end padding */
    nc_node ex = NODE("AveragePool", 19, INTS("kernel_shape", 3), INTS("strides", 2), INTS("pads", 1, 1),
                      INT("ceil_mode", 1));
    NC_ASSERT_OK(run_op(nc_op_averagepool, &ex, &x, 1, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 3);
    EXPECT_F32(y, 1.5f, 3, 4);
    nc_tensor_free(y);
    nc_node inc = NODE("AveragePool", 19, INTS("kernel_shape", 3), INTS("strides", 2), INTS("pads", 1, 1),
                       INT("ceil_mode", 1), INT("count_include_pad", 1));
    NC_ASSERT_OK(run_op(nc_op_averagepool, &inc, &x, 1, 1, &y, 0));
    EXPECT_F32(y, 1, 3, 2);
    nc_tensor_free(y);
    nc_tensor_free(x);

    /* a window that would start in the end padding is dropped */
    x = TF(k_1to16, 1, 1, 3);
    nc_node drop = NODE("AveragePool", 19, INTS("kernel_shape", 2), INTS("strides", 2), INTS("pads", 1, 1),
                        INT("ceil_mode", 1), INT("count_include_pad", 1));
    NC_ASSERT_OK(run_op(nc_op_averagepool, &drop, &x, 1, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 2);
    EXPECT_F32(y, 0.5f, 2.5f);
    nc_tensor_free(y);
    nc_tensor_free(x);
}

static void test_averagepool_2d(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_tensor *x = TF(k_1to16, 1, 1, 3, 3);
    nc_node n = NODE("AveragePool", 11, INTS("kernel_shape", 2, 2), INTS("strides", 2, 2),
                     INTS("pads", 0, 0, 1, 1));
    NC_ASSERT_OK(run_op(nc_op_averagepool, &n, &x, 1, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 2, 2);
    EXPECT_F32(y, 3, 4.5f, 7.5f, 9);
    nc_tensor_free(y);
    nc_node bad = NODE("AveragePool", 11, INTS("kernel_shape", 2, 2), INT("count_include_pad", 2));
    assert_int_equal(run_op(nc_op_averagepool, &bad, &x, 1, 1, &y, 0), NC_ERR_UNSUPPORTED);
    nc_node nok = NODE0("AveragePool", 11);
    assert_int_equal(run_op(nc_op_averagepool, &nok, &x, 1, 1, &y, 0), NC_ERR_MODEL);
    assert_non_null(strstr(nc_last_error(), "kernel_shape"));
    nc_tensor_free(x);
}

static void test_maxpool(void **state)
{
    (void)state;
    nc_tensor *y;
    const float neg[] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
    nc_tensor *x = TF(neg, 1, 1, 3, 3);
    /* padding never wins, even against negative values */
    nc_node n = NODE("MaxPool", 12, INTS("kernel_shape", 3, 3), INTS("strides", 2, 2),
                     INTS("pads", 1, 1, 1, 1));
    NC_ASSERT_OK(run_op(nc_op_maxpool, &n, &x, 1, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 2, 2);
    EXPECT_F32(y, -1, -2, -4, -5);
    nc_tensor_free(y);
    /* the Indices output is refused */
    assert_int_equal(run_op(nc_op_maxpool, &n, &x, 1, 2, &y, 0), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "Indices"));
    nc_tensor_free(x);

    x = TF(k_1to16, 1, 1, 4, 4);
    nc_node dil = NODE("MaxPool", 12, INTS("kernel_shape", 2, 2), INTS("dilations", 2, 2));
    NC_ASSERT_OK(run_op(nc_op_maxpool, &dil, &x, 1, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 1, 2, 2);
    EXPECT_F32(y, 11, 12, 15, 16);
    nc_tensor_free(y);
    nc_tensor_free(x);

    /* uint8 data pools exactly */
    int64_t shape[] = {1, 1, 2, 2};
    x = nc_tensor_new(NC_DTYPE_U8, 4, shape);
    memcpy(x->data, (uint8_t[]){7, 255, 3, 0}, 4);
    nc_node all = NODE("MaxPool", 12, INTS("kernel_shape", 2, 2));
    NC_ASSERT_OK(run_op(nc_op_maxpool, &all, &x, 1, 1, &y, 0));
    assert_int_equal(y->dtype, NC_DTYPE_U8);
    assert_int_equal(((uint8_t *)y->data)[0], 255);
    nc_tensor_free(y);
    nc_tensor_free(x);
}

static void test_globalaveragepool(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_tensor *x = TF(k_1to16, 1, 2, 2, 2);
    nc_node n = NODE0("GlobalAveragePool", 13);
    NC_ASSERT_OK(run_op(nc_op_globalaveragepool, &n, &x, 1, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 2, 1, 1);
    EXPECT_F32(y, 2.5f, 6.5f);
    nc_tensor_free(y);
    nc_tensor_free(x);
}

/* ---- Pad ---- */

static void test_pad_constant(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_node n = NODE0("Pad", 13);
    nc_tensor *in[3] = {TF(k_1to16, 2, 2), TI(((int64_t[]){1, 0, 0, 1}), 4), TF0(((float[]){9}))};
    NC_ASSERT_OK(run_op(nc_op_pad, &n, in, 3, 1, &y, 0));
    EXPECT_SHAPE(y, 3, 3);
    EXPECT_F32(y, 9, 9, 9, 1, 2, 9, 3, 4, 9);
    nc_tensor_free(y);
    free_all(in, 3);

    /* negative pads crop */
    in[0] = TF(k_1to16, 2, 3);
    in[1] = TI(((int64_t[]){0, -1, -1, 1}), 4);
    NC_ASSERT_OK(run_op(nc_op_pad, &n, in, 2, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 3);
    EXPECT_F32(y, 2, 3, 0);
    nc_tensor_free(y);
    nc_tensor_free(in[1]);
    in[1] = TI(((int64_t[]){0, -4, 0, 0}), 4);
    assert_int_equal(run_op(nc_op_pad, &n, in, 2, 1, &y, 0), NC_ERR_SHAPE);
    nc_tensor_free(in[1]);

    /* opset 18 axes */
    nc_node n18 = NODE0("Pad", 18);
    in[1] = TI(((int64_t[]){1, 1}), 2);
    in[2] = NULL;
    nc_tensor *axes = TI(((int64_t[]){-1}), 1);
    nc_tensor *in4[4] = {in[0], in[1], NULL, axes};
    NC_ASSERT_OK(run_op(nc_op_pad, &n18, in4, 4, 1, &y, 0));
    EXPECT_SHAPE(y, 2, 5);
    EXPECT_F32(y, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0);
    nc_tensor_free(y);
    nc_tensor_free(axes);
    free_all(in, 2);

    /* opset 2: pads and value are attributes */
    nc_node n2 = NODE("Pad", 2, INTS("pads", 0, 1, 0, 0), FLT("value", -1.0f));
    in[0] = TF(k_1to16, 1, 2);
    NC_ASSERT_OK(run_op(nc_op_pad, &n2, in, 1, 1, &y, 0));
    EXPECT_SHAPE(y, 1, 3);
    EXPECT_F32(y, -1, 1, 2);
    nc_tensor_free(y);
    nc_tensor_free(in[0]);
}

static void test_pad_int64_and_errors(void **state)
{
    (void)state;
    nc_tensor *y;
    nc_node n = NODE0("Pad", 13);
    nc_tensor *in[3] = {TI(((int64_t[]){5, 6}), 2), TI(((int64_t[]){2, 1}), 2), TI0(((int64_t[]){-7}))};
    NC_ASSERT_OK(run_op(nc_op_pad, &n, in, 3, 1, &y, 1)); /* int64: computed even for shapes */
    assert_int_equal(y->dtype, NC_DTYPE_I64);
    EXPECT_SHAPE(y, 5);
    const int64_t want[] = {-7, -7, 5, 6, -7};
    assert_memory_equal(y->data, want, sizeof want);
    nc_tensor_free(y);

    nc_node refl = NODE("Pad", 13, STR("mode", "reflect"));
    assert_int_equal(run_op(nc_op_pad, &refl, in, 2, 1, &y, 0), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "reflect"));
    nc_tensor_free(in[1]);
    in[1] = TI(((int64_t[]){1, 1, 1}), 3);
    assert_int_equal(run_op(nc_op_pad, &n, in, 2, 1, &y, 0), NC_ERR_MODEL);
    free_all(in, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_stride_pad_bias), cmocka_unit_test(test_conv_groups),
        cmocka_unit_test(test_conv_dilation),        cmocka_unit_test(test_conv_1d_auto_pad),
        cmocka_unit_test(test_conv_errors),          cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_matmul),               cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_averagepool_ceil),     cmocka_unit_test(test_averagepool_2d),
        cmocka_unit_test(test_maxpool),              cmocka_unit_test(test_globalaveragepool),
        cmocka_unit_test(test_pad_constant),         cmocka_unit_test(test_pad_int64_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
