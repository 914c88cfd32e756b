/* Input limits (nc_set_limits): every reader refuses a file that claims, or
 * would make neuroc build, more than a limit, with NC_ERR_LIMIT and a
 * message naming the file and what is too large, before allocating it.
 * Sizes that overflow int64 are refused as well. Hostile fixtures come from
 * scripts/make_bad_fixtures.py. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

static const char *src(const char *rel) { return nc_test_src(rel); }

static void expect_msg(nc_status st, nc_status want, const char *path, const char *what)
{
    const char *msg = nc_last_error();
    if (st != want)
        fail_msg("%s: got %s (%s), want %s", path, nc_status_str(st), msg, nc_status_str(want));
    if (!strstr(msg, path))
        fail_msg("%s: the message does not name the file: %s", path, msg);
    if (what && !strstr(msg, what))
        fail_msg("%s: the message lacks '%s': %s", path, what, msg);
}

static void expect_onnx(const char *rel, nc_status want, const char *what)
{
    nc_model *m = (nc_model *)0x1;
    const char *path = src(rel);
    expect_msg(nc_model_load_onnx(path, NULL, &m), want, path, what);
    assert_null(m);
}

static void expect_nir(const char *rel, nc_status want, const char *what)
{
    nc_snn *s = (nc_snn *)0x1;
    const char *path = src(rel);
    expect_msg(nc_snn_load_nir(path, NULL, &s), want, path, what);
    assert_null(s);
}

static void expect_data(const char *path, nc_status want, const char *what)
{
    nc_tensor *t = (nc_tensor *)0x1;
    expect_msg(nc_data_load(path, NC_DTYPE_NATIVE, &t), want, path, what);
    assert_null(t);
}

static int reset_limits(void **state)
{
    (void)state;
    nc_set_limits(NULL);
    return 0;
}

static const char *tmp_file(const char *name, const void *bytes, size_t n)
{
    const char *path = nc_test_pathf("%s/test_limits_%s", NC_BINARY_DIR, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
    return path;
}

/* ---------------------------------------------------------------- defaults */

static void test_defaults(void **state)
{
    (void)state;
    nc_limits l;
    nc_limits_current(&l);
    assert_true(l.max_tensor_bytes == (int64_t)4 << 30);
    assert_true(l.max_model_bytes == (int64_t)16 << 30);
    assert_int_equal(l.max_string_len, 65536);
    assert_int_equal(l.max_graph_depth, 64);
    nc_limits half = {.max_tensor_bytes = 1 << 20};
    nc_set_limits(&half);
    nc_limits_current(&l);
    assert_int_equal(l.max_tensor_bytes, 1 << 20);
    assert_int_equal(l.max_graph_depth, 64); /* 0 means default */
}

/* ---------------------------------------------------------------- ONNX */

static void test_onnx_declared_tensor(void **state)
{
    (void)state;
    /* 16 GiB declared in a 108-byte file */
    expect_onnx("tests/fixtures/bad/huge_tensor.onnx", NC_ERR_LIMIT, "tensor 'W'");
}

static void test_onnx_computed_tensor(void **state)
{
    (void)state;
    /* a Pad whose output would be 25.6 GB: shape inference must not build it */
    expect_onnx("tests/fixtures/bad/huge_pad.onnx", NC_ERR_LIMIT, "node 'pad'");
    assert_non_null(strstr(nc_last_error(), "tensor size limit"));
    /* and through ConstantOfShape and Expand, whose shapes are data */
    expect_onnx("tests/fixtures/bad/huge_constantofshape.onnx", NC_ERR_LIMIT, "node 'cos'");
    assert_non_null(strstr(nc_last_error(), "tensor size limit"));
    expect_onnx("tests/fixtures/bad/huge_expand.onnx", NC_ERR_LIMIT, "node 'expand'");
    assert_non_null(strstr(nc_last_error(), "tensor size limit"));
}

static void test_onnx_long_name(void **state)
{
    (void)state;
    expect_onnx("tests/fixtures/bad/long_name.onnx", NC_ERR_LIMIT, "node name");
    nc_limits big = {.max_string_len = 1 << 20};
    nc_set_limits(&big);
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(src("tests/fixtures/bad/long_name.onnx"), NULL, &m));
    nc_model_free(m);
}

static void test_onnx_tensor_limit_configurable(void **state)
{
    (void)state;
    nc_limits small = {.max_tensor_bytes = 1000};
    nc_set_limits(&small);
    expect_onnx("examples/models/mlp.onnx", NC_ERR_LIMIT, "tensor size limit of 1000 bytes");
    nc_set_limits(NULL);
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(src("examples/models/mlp.onnx"), NULL, &m));
    nc_model_free(m);
}

static void test_onnx_model_limit(void **state)
{
    (void)state;
    nc_limits small = {.max_model_bytes = 4096};
    nc_set_limits(&small);
    expect_onnx("examples/models/mlp.onnx", NC_ERR_LIMIT, "model size limit");
    /* the file fits, its weights together do not */
    small.max_model_bytes = 950000;
    nc_set_limits(&small);
    expect_onnx("examples/models/mlp.onnx", NC_ERR_LIMIT, "model size limit");
}

/* ---------------------------------------------------------------- NIR */

static void test_nir_depth(void **state)
{
    (void)state;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(src("tests/fixtures/bad/nested6.nir"), NULL, &s));
    nc_snn_free(s);
    nc_limits shallow = {.max_graph_depth = 4};
    nc_set_limits(&shallow);
    expect_nir("tests/fixtures/bad/nested6.nir", NC_ERR_LIMIT, "nested deeper than 4");
}

static void test_nir_long_string(void **state)
{
    (void)state;
    expect_nir("tests/fixtures/bad/long_string.nir", NC_ERR_LIMIT, "node 'input'");
}

static void test_nir_declared_tensor(void **state)
{
    (void)state;
    /* 4 TiB declared, a few bytes stored */
    expect_nir("tests/fixtures/bad/huge_weight.nir", NC_ERR_LIMIT, "dataset 'weight'");
    assert_non_null(strstr(nc_last_error(), "node 'lin'"));
}

static void test_nir_model_limit(void **state)
{
    (void)state;
    nc_limits small = {.max_model_bytes = 1000};
    nc_set_limits(&small);
    expect_nir("fuzz/corpus/nir/qcfs.nir", NC_ERR_LIMIT, "model size limit");
}

/* ---------------------------------------------------------------- data files */

/* A version-1.0 .npy file: header dict padded to 64 bytes, then data. */
static size_t npy_bytes(unsigned char *buf, const char *shape, size_t data_len)
{
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
    size_t hlen = ((size_t)(10 + n + 1) + 63) / 64 * 64 - 10;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memset(buf + 10, ' ', hlen);
    memcpy(buf + 10, dict, (size_t)n);
    buf[10 + hlen - 1] = '\n';
    memset(buf + 10 + hlen, 0, data_len);
    return 10 + hlen + data_len;
}

static void test_npy_limit(void **state)
{
    (void)state;
    unsigned char buf[1024];
    const char *path = tmp_file("100.npy", buf, npy_bytes(buf, "(100,)", 400));
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(path, NC_DTYPE_NATIVE, &t));
    nc_tensor_free(t);
    nc_limits small = {.max_tensor_bytes = 100};
    nc_set_limits(&small);
    expect_data(path, NC_ERR_LIMIT, "tensor size limit of 100 bytes");
}

static void test_npy_overflow(void **state)
{
    (void)state;
    unsigned char buf[1024];
    /* 2^96 elements: the product overflows int64 */
    const char *path = tmp_file("overflow.npy", buf,
                                npy_bytes(buf, "(4294967296, 4294967296, 4294967296)", 16));
    expect_data(path, NC_ERR_PARSE, "overflows");
}

static void test_idx_limit_and_overflow(void **state)
{
    (void)state;
    /* ubyte, 2 dims 3x4, 12 bytes of data */
    unsigned char ok[8 + 4 + 12] = {0, 0, 0x08, 2, 0, 0, 0, 3, 0, 0, 0, 4};
    const char *path = tmp_file("3x4-ubyte", ok, sizeof ok);
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(path, NC_DTYPE_F32, &t));
    nc_tensor_free(t);
    nc_limits small = {.max_tensor_bytes = 10}; /* 12 bytes */
    nc_set_limits(&small);
    expect_data(path, NC_ERR_LIMIT, "tensor size limit");
    nc_set_limits(NULL);
    /* four dimensions of 2^32 - 1: 2^128 elements */
    unsigned char big[4 + 16] = {0, 0, 0x08, 4, 255, 255, 255, 255, 255, 255, 255, 255,
                                 255, 255, 255, 255, 255, 255, 255, 255};
    path = tmp_file("overflow-ubyte", big, sizeof big);
    expect_data(path, NC_ERR_PARSE, "overflows");
}

static void test_h5_data_limit(void **state)
{
    (void)state;
    char spec[4200];
    snprintf(spec, sizeof spec, "%s:/node/nodes/input/shape", src("tests/fixtures/bad/huge_weight.nir"));
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(spec, NC_DTYPE_NATIVE, &t));
    nc_tensor_free(t);
    nc_limits small = {.max_tensor_bytes = 4}; /* one int64 */
    nc_set_limits(&small);
    t = (nc_tensor *)0x1;
    nc_status st = nc_data_load(spec, NC_DTYPE_NATIVE, &t);
    assert_null(t);
    if (st != NC_ERR_LIMIT || !strstr(nc_last_error(), "huge_weight.nir") ||
        !strstr(nc_last_error(), "tensor size limit"))
        fail_msg("got %s: %s", nc_status_str(st), nc_last_error());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_defaults, reset_limits),
        cmocka_unit_test_teardown(test_onnx_declared_tensor, reset_limits),
        cmocka_unit_test_teardown(test_onnx_computed_tensor, reset_limits),
        cmocka_unit_test_teardown(test_onnx_long_name, reset_limits),
        cmocka_unit_test_teardown(test_onnx_tensor_limit_configurable, reset_limits),
        cmocka_unit_test_teardown(test_onnx_model_limit, reset_limits),
        cmocka_unit_test_teardown(test_nir_depth, reset_limits),
        cmocka_unit_test_teardown(test_nir_long_string, reset_limits),
        cmocka_unit_test_teardown(test_nir_declared_tensor, reset_limits),
        cmocka_unit_test_teardown(test_nir_model_limit, reset_limits),
        cmocka_unit_test_teardown(test_npy_limit, reset_limits),
        cmocka_unit_test_teardown(test_npy_overflow, reset_limits),
        cmocka_unit_test_teardown(test_idx_limit_and_overflow, reset_limits),
        cmocka_unit_test_teardown(test_h5_data_limit, reset_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
