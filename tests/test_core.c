/* Status strings, error reporting, tensors and the CUDA probe. */
#include "testutil.h"

#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

static void test_status_strings(void **state)
{
    (void)state;
    for (int s = NC_OK; s <= NC_ERR_INTERNAL; s++) {
        const char *str = nc_status_str((nc_status)s);
        assert_non_null(str);
        assert_string_not_equal(str, "unknown status");
    }
    assert_string_equal(nc_status_str((nc_status)999), "unknown status");
}

static void test_error_prefix(void **state)
{
    (void)state;
    assert_int_equal(nc_errorf(NC_ERR_SHAPE, "bad %d", 3), NC_ERR_SHAPE);
    nc_error_prefix("file.onnx: node '%s'", "conv1");
    assert_string_equal(nc_last_error(), "file.onnx: node 'conv1': bad 3");
}

static void test_tensor_create(void **state)
{
    (void)state;
    int64_t shape[] = {2, 3};
    float data[] = {1, 2, 3, 4, 5, 6};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, shape, data, &t));
    assert_int_equal(nc_tensor_numel(t), 6);
    assert_int_equal(nc_tensor_ndim(t), 2);
    assert_int_equal(nc_tensor_shape(t)[1], 3);
    assert_memory_equal(nc_tensor_data(t), data, sizeof data);
    nc_tensor_free(t);
    nc_tensor_free(NULL);
}

/* nc_tensor_wrap borrows the caller's buffer: no copy, and freeing the
 * tensor leaves the buffer alone (ASan would report a free of the stack). */
static void test_tensor_wrap(void **state)
{
    (void)state;
    int64_t shape[] = {2, 3};
    float data[6] = {1, 2, 3, 4, 5, 6};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_wrap(NC_DTYPE_F32, 2, shape, data, &t));
    assert_ptr_equal(nc_tensor_data(t), data);
    assert_int_equal(nc_tensor_numel(t), 6);
    data[4] = 40;
    assert_true(((const float *)nc_tensor_data_const(t))[4] == 40.0f);
    nc_tensor *c = NULL; /* a copy made from it owns its own data */
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, shape, nc_tensor_data(t), &c));
    nc_tensor_free(t);
    assert_true(((const float *)nc_tensor_data_const(c))[4] == 40.0f);
    nc_tensor_free(c);
    data[0] = 7; /* still the caller's */
    int64_t none[] = {0, 3};
    NC_ASSERT_OK(nc_tensor_wrap(NC_DTYPE_I64, 2, none, NULL, &t));
    assert_int_equal(nc_tensor_numel(t), 0);
    nc_tensor_free(t);
    t = (nc_tensor *)0x1;
    assert_int_equal(nc_tensor_wrap(NC_DTYPE_F32, 2, shape, NULL, &t), NC_ERR_INVALID_ARG);
    assert_null(t);
    assert_int_equal(nc_tensor_wrap(NC_DTYPE_F32, 1, shape, (char *)data + 1, &t), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "aligned"));
    int64_t neg[] = {-1, 3};
    assert_int_equal(nc_tensor_wrap(NC_DTYPE_F32, 2, neg, data, &t), NC_ERR_LIMIT);
}

static void test_tensor_overflow(void **state)
{
    (void)state;
    int64_t huge[] = {INT64_MAX / 2, 4};
    nc_tensor *t = (nc_tensor *)0x1;
    assert_int_equal(nc_tensor_create(NC_DTYPE_F32, 2, huge, &t), NC_ERR_LIMIT);
    assert_null(t);
    int64_t neg[] = {-1, 4};
    assert_int_not_equal(nc_tensor_create(NC_DTYPE_F32, 2, neg, &t), NC_OK);
    assert_int_equal(nc_tensor_create(NC_DTYPE_F32, NC_MAX_DIMS + 1, neg, &t), NC_ERR_INVALID_ARG);
}

static void test_cuda_probe(void **state)
{
    (void)state;
    int count = -1;
    nc_status st = nc_cuda_device_count(&count);
    if (st == NC_OK) {
        assert_true(count > 0);
    } else {
        /* No device (or no CUDA build): a clean "unavailable", never a crash. */
        assert_int_equal(st, NC_ERR_BACKEND_UNAVAILABLE);
        assert_int_equal(count, 0);
        assert_non_null(strstr(nc_last_error(), "CUDA"));
    }
    if (strstr(nc_build_features(), "cuda"))
        print_message("built with CUDA; probe: %s\n", st == NC_OK ? "device found" : nc_last_error());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings), cmocka_unit_test(test_error_prefix),
        cmocka_unit_test(test_tensor_create), cmocka_unit_test(test_tensor_wrap),
        cmocka_unit_test(test_tensor_overflow),
        cmocka_unit_test(test_cuda_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
