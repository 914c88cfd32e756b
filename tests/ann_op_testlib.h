/* Helpers of the ANN reference-op unit tests (test_ann_ops_shape.c,
 * test_ann_ops_math.c): build a node and its inputs by hand, run one op,
 * check its outputs. Static: each test executable includes it once. */
#ifndef NC_TESTS_ANN_OP_TESTLIB_H
#define NC_TESTS_ANN_OP_TESTLIB_H

#include "testutil.h"

#include <math.h>
#include <string.h>

#include "convert/ann/ann_ops.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

static inline nc_attr attr_i(const char *name, int64_t v)
{
    nc_attr a = {0};
    a.name = (char *)name;
    a.type = NC_ATTR_INT;
    a.i = v;
    return a;
}

static inline nc_attr attr_f(const char *name, float v)
{
    nc_attr a = {0};
    a.name = (char *)name;
    a.type = NC_ATTR_FLOAT;
    a.f = v;
    return a;
}

static inline nc_attr attr_ints(const char *name, int64_t *v, int n)
{
    nc_attr a = {0};
    a.name = (char *)name;
    a.type = NC_ATTR_INTS;
    a.ints = v;
    a.n = n;
    return a;
}

static inline nc_node node(const char *op, int64_t opset, nc_attr *attrs, int n_attrs)
{
    nc_node n = {0};
    n.name = (char *)"n";
    n.op_type = (char *)op;
    n.opset = opset;
    n.attrs = attrs;
    n.n_attrs = n_attrs;
    return n;
}

/* data NULL: zero-filled */
static inline nc_tensor *tf(int ndim, const int64_t *shape, const float *data)
{
    nc_tensor *t = NULL;
    if (!data)
        return nc_tensor_new(NC_DTYPE_F32, ndim, shape);
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, ndim, shape, data, &t));
    return t;
}

static inline nc_tensor *ti(int ndim, const int64_t *shape, const int64_t *data)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, ndim, shape, data, &t));
    return t;
}

static const nc_exec_ctx g_ctx = {0};

/* Runs an op with one output; on failure checks that the output stayed NULL. */
static inline nc_status run(nc_op_run_fn fn, const nc_node *n, const nc_tensor *const *in, int n_in,
                     nc_tensor **out)
{
    *out = NULL;
    nc_status st = fn(n, in, n_in, out, 1, &g_ctx);
    if (st != NC_OK)
        assert_null(*out);
    return st;
}

static inline void check_shape(const nc_tensor *t, int ndim, const int64_t *shape)
{
    assert_non_null(t);
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(t->shape[d], shape[d]);
}

static inline void check_f32(const nc_tensor *t, int ndim, const int64_t *shape, const float *want)
{
    check_shape(t, ndim, shape);
    assert_int_equal(t->dtype, NC_DTYPE_F32);
    for (int64_t i = 0; i < t->numel; i++)
        if (fabsf(nc_f32(t)[i] - want[i]) > 1e-5f)
            fail_msg("element %lld: got %g, want %g", (long long)i, nc_f32(t)[i], want[i]);
}

static inline void check_i64(const nc_tensor *t, int ndim, const int64_t *shape, const int64_t *want)
{
    check_shape(t, ndim, shape);
    assert_int_equal(t->dtype, NC_DTYPE_I64);
    for (int64_t i = 0; i < t->numel; i++)
        if (nc_i64(t)[i] != want[i])
            fail_msg("element %lld: got %lld, want %lld", (long long)i, (long long)nc_i64(t)[i],
                     (long long)want[i]);
}

static inline void check_error(nc_status got, nc_status want, const char *needle)
{
    assert_int_equal(got, want);
    if (!strstr(nc_last_error(), needle))
        fail_msg("message '%s' does not mention '%s'", nc_last_error(), needle);
}

#endif
