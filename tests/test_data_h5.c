/* HDF5 datasets through nc_data_load ("file.h5:/path"): files written here
 * with the HDF5 API in the types users store (float32/float64 images, uint8
 * images, int64/int32 labels, gzip-compressed chunks, nested groups), read
 * back and compared element by element; then the errors. */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

static char g_dir[256];

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[768];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
            rm_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/nc_test_data_h5.XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rm_tree(g_dir);
    return 0;
}

static const char *tpath(const char *name)
{
    return nc_test_pathf("%s/%s", g_dir, name);
}

/* "dir/file:dset" (a testutil.h ring buffer). */
static const char *spec(const char *file, const char *dset)
{
    return nc_test_pathf("%s:%s", tpath(file), dset);
}

static hid_t open_file(const char *name)
{
    const char *p = tpath(name);
    hid_t f = access(p, F_OK) == 0 ? H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT)
                                   : H5Fcreate(p, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    return f;
}

/* Writes dataset `dset` (intermediate groups created) of file type ftype
 * from memory of type mtype; chunked and gzip-compressed with `gzip` > 0. */
static void write_ds(const char *file, const char *dset, hid_t ftype, hid_t mtype, int ndim,
                     const hsize_t *dims, const void *data, int gzip)
{
    hid_t f = open_file(file);
    hid_t sp = ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(ndim, dims, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (gzip) {
        hsize_t chunk[H5S_MAX_RANK];
        for (int d = 0; d < ndim; d++)
            chunk[d] = d == 0 ? 1 : dims[d];
        H5Pset_chunk(dcpl, ndim, chunk);
        H5Pset_shuffle(dcpl);
        H5Pset_deflate(dcpl, (unsigned)gzip);
    }
    hid_t ds = H5Dcreate2(f, dset, ftype, sp, lcpl, dcpl, H5P_DEFAULT);
    assert_true(ds >= 0);
    if (data)
        assert_true(H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Pclose(lcpl);
    H5Sclose(sp);
    H5Fclose(f);
}

static nc_tensor *load_ok(const char *path, nc_dtype want)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(path, want, &t));
    assert_non_null(t);
    return t;
}

static void assert_shape(const nc_tensor *t, int ndim, const int64_t *shape)
{
    assert_int_equal(nc_tensor_ndim(t), ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(nc_tensor_shape(t)[d], shape[d]);
}

/* nc_data_load fails with st and a message holding every string in `parts`. */
static void assert_load_fails(const char *path, nc_dtype want, nc_status st, const char *const *parts)
{
    nc_tensor *t = (nc_tensor *)1;
    nc_status got = nc_data_load(path, want, &t);
    assert_null(t);
    if (got != st)
        fail_msg("%s: expected %s, got %s: %s", path, nc_status_str(st), nc_status_str(got),
                 nc_last_error());
    for (; *parts; parts++)
        if (!strstr(nc_last_error(), *parts))
            fail_msg("%s: message lacks '%s': %s", path, *parts, nc_last_error());
    print_message("%s\n", nc_last_error());
}

/* ------------------------------------------------------------------ reading */

static void test_float32_images(void **state)
{
    (void)state;
    float img[2][1][3][2];
    for (int i = 0; i < 12; i++)
        ((float *)img)[i] = (float)i * 0.25f - 1.0f;
    hsize_t dims[4] = {2, 1, 3, 2};
    write_ds("f32.h5", "/images", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 4, dims, img, 0);

    const int64_t shape[4] = {2, 1, 3, 2};
    nc_dtype wants[2] = {0, NC_DTYPE_F32};
    for (int w = 0; w < 2; w++) {
        nc_tensor *t = load_ok(spec("f32.h5", "/images"), wants[w]);
        assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_F32);
        assert_shape(t, 4, shape);
        assert_memory_equal(nc_tensor_data_const(t), img, sizeof img);
        nc_tensor_free(t);
    }
    /* floats are not labels */
    const char *const parts[] = {"f32.h5:/images", "float32", "integer", NULL};
    assert_load_fails(spec("f32.h5", "/images"), NC_DTYPE_I64, NC_ERR_UNSUPPORTED, parts);
}

static void test_float64_to_f32(void **state)
{
    (void)state;
    double v[5] = {0.5, -2.25, 1e-3, 3.0e5, 0.1};
    hsize_t dims[1] = {5};
    write_ds("f64.h5", "/x", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, 1, dims, v, 0);
    nc_tensor *t = load_ok(spec("f64.h5", "/x"), 0);
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_F32);
    const float *p = nc_tensor_data_const(t);
    for (int i = 0; i < 5; i++)
        assert_true(p[i] == (float)v[i]);
    nc_tensor_free(t);
}

static void test_uint8_images(void **state)
{
    (void)state;
    uint8_t img[3][4][4];
    for (int i = 0; i < 48; i++)
        ((uint8_t *)img)[i] = (uint8_t)(i * 5 + 7);
    hsize_t dims[3] = {3, 4, 4};
    write_ds("u8.h5", "/x_test", H5T_STD_U8LE, H5T_NATIVE_UINT8, 3, dims, img, 0);
    const int64_t shape[3] = {3, 4, 4};

    /* kept as uint8 (the CLI scales it to [0,1]) */
    nc_tensor *t = load_ok(spec("u8.h5", "/x_test"), 0);
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_U8);
    assert_shape(t, 3, shape);
    assert_memory_equal(nc_tensor_data_const(t), img, sizeof img);
    nc_tensor_free(t);

    /* F32 converts values unchanged (no scaling in the library) */
    t = load_ok(spec("u8.h5", "/x_test"), NC_DTYPE_F32);
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_F32);
    const float *f = nc_tensor_data_const(t);
    assert_true(f[0] == 7.0f && f[47] == 242.0f);
    nc_tensor_free(t);

    t = load_ok(spec("u8.h5", "/x_test"), NC_DTYPE_U8);
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_U8);
    nc_tensor_free(t);
}

static void test_integer_labels(void **state)
{
    (void)state;
    int64_t lab64[6] = {9, 0, 3, 2, 1, 7};
    int32_t lab32[6] = {4, 5, -1, 2, 1000000, 7};
    hsize_t dims[1] = {6};
    write_ds("labels.h5", "/y64", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, dims, lab64, 0);
    write_ds("labels.h5", "/y32", H5T_STD_I32BE, H5T_NATIVE_INT32, 1, dims, lab32, 0);

    nc_tensor *t = load_ok(spec("labels.h5", "/y64"), 0);
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_I64);
    assert_memory_equal(nc_tensor_data_const(t), lab64, sizeof lab64);
    nc_tensor_free(t);

    t = load_ok(spec("labels.h5", "/y32"), NC_DTYPE_I64);
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_I64);
    const int64_t *p = nc_tensor_data_const(t);
    for (int i = 0; i < 6; i++)
        assert_int_equal(p[i], lab32[i]);
    nc_tensor_free(t);

    t = load_ok(spec("labels.h5", "/y64"), NC_DTYPE_F32);
    assert_true(((const float *)nc_tensor_data_const(t))[0] == 9.0f);
    nc_tensor_free(t);

    const char *const parts[] = {"labels.h5:/y32", "int32", "uint8", NULL};
    assert_load_fails(spec("labels.h5", "/y32"), NC_DTYPE_U8, NC_ERR_UNSUPPORTED, parts);
}

static void test_gzip_nested(void **state)
{
    (void)state;
    enum { N = 20, C = 1, H = 28, W = 28 };
    static float img[N * C * H * W];
    for (int i = 0; i < N * C * H * W; i++)
        img[i] = (float)((i * 37) % 256) / 255.0f;
    hsize_t dims[4] = {N, C, H, W};
    write_ds("gz.h5", "/data/test/images", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 4, dims, img, 6);
    uint8_t lab[N];
    for (int i = 0; i < N; i++)
        lab[i] = (uint8_t)(i % 10);
    hsize_t ldims[1] = {N};
    write_ds("gz.h5", "/data/test/labels", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, ldims, lab, 9);

    /* the file really is compressed */
    struct stat sb;
    assert_int_equal(stat(tpath("gz.h5"), &sb), 0);
    assert_true(sb.st_size < (off_t)sizeof img);

    const int64_t shape[4] = {N, C, H, W};
    nc_tensor *t = load_ok(spec("gz.h5", "/data/test/images"), 0);
    assert_shape(t, 4, shape);
    assert_memory_equal(nc_tensor_data_const(t), img, sizeof img);
    nc_tensor_free(t);

    t = load_ok(spec("gz.h5", "/data/test/labels"), NC_DTYPE_I64);
    const int64_t *p = nc_tensor_data_const(t);
    for (int i = 0; i < N; i++)
        assert_int_equal(p[i], i % 10);
    nc_tensor_free(t);
}

static void test_scalar_and_rank8(void **state)
{
    (void)state;
    double v = 2.5;
    write_ds("misc.h5", "/scalar", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, &v, 0);
    nc_tensor *t = load_ok(spec("misc.h5", "/scalar"), 0);
    assert_int_equal(nc_tensor_ndim(t), 0);
    assert_int_equal(nc_tensor_numel(t), 1);
    assert_true(*(const float *)nc_tensor_data_const(t) == 2.5f);
    nc_tensor_free(t);

    hsize_t d8[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    float x8[16];
    for (int i = 0; i < 16; i++)
        x8[i] = (float)i;
    write_ds("misc.h5", "/rank8", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 8, d8, x8, 0);
    t = load_ok(spec("misc.h5", "/rank8"), 0);
    assert_int_equal(nc_tensor_ndim(t), 8);
    assert_memory_equal(nc_tensor_data_const(t), x8, sizeof x8);
    nc_tensor_free(t);
}

/* A path that exists is read as a file even when it holds ":/". */
static void test_existing_path_with_colon(void **state)
{
    (void)state;
    assert_int_equal(mkdir(tpath("odd:"), 0700), 0);
    int64_t shape[1] = {3};
    float v[3] = {1, 2, 3};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, shape, v, &t));
    NC_ASSERT_OK(nc_npy_save(tpath("odd:/v.npy"), t));
    nc_tensor_free(t);
    t = load_ok(tpath("odd:/v.npy"), 0);
    assert_memory_equal(nc_tensor_data_const(t), v, sizeof v);
    nc_tensor_free(t);
}

/* ------------------------------------------------------------------ errors */

static void test_missing(void **state)
{
    (void)state;
    float v[2] = {1, 2};
    hsize_t dims[1] = {2};
    write_ds("m.h5", "/train_x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1, dims, v, 0);
    write_ds("m.h5", "/train_y", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1, dims, v, 0);
    write_ds("m.h5", "/grp/inner", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1, dims, v, 0);

    /* the message names the file, the dataset, and what the root holds */
    const char *const missing[] = {"m.h5", "'/test_x'", "/train_x, /train_y", NULL};
    assert_load_fails(spec("m.h5", "/test_x"), 0, NC_ERR_IO, missing);
    /* a group missing on the way */
    const char *const deep[] = {"m.h5", "'/no/such/x'", NULL};
    assert_load_fails(spec("m.h5", "/no/such/x"), 0, NC_ERR_IO, deep);
    /* a group is not a dataset */
    const char *const grp[] = {"m.h5:/grp", "a group", NULL};
    assert_load_fails(spec("m.h5", "/grp"), 0, NC_ERR_INVALID_ARG, grp);
    /* the file itself is missing */
    const char *const nofile[] = {"nope.h5", "cannot open", NULL};
    assert_load_fails(spec("nope.h5", "/x"), 0, NC_ERR_IO, nofile);
    /* a bare HDF5 file: say how to name a dataset */
    const char *const bare[] = {"FILE:/path/to/dataset", "/train_x", NULL};
    assert_load_fails(tpath("m.h5"), 0, NC_ERR_INVALID_ARG, bare);
}

static void test_not_hdf5(void **state)
{
    (void)state;
    int64_t shape[1] = {2};
    float v[2] = {1, 2};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, shape, v, &t));
    NC_ASSERT_OK(nc_npy_save(tpath("plain.npy"), t));
    nc_tensor_free(t);
    const char *const parts[] = {"plain.npy:/x", "not an HDF5 file", NULL};
    assert_load_fails(spec("plain.npy", "/x"), 0, NC_ERR_PARSE, parts);
}

static void test_string_dataset(void **state)
{
    (void)state;
    hid_t f = open_file("s.h5");
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, H5T_VARIABLE);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t ds = H5Dcreate2(f, "/version", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char *s = "0.2";
    assert_true(H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(st);
    H5Fclose(f);
    const char *const parts[] = {"s.h5:/version", "strings", NULL};
    assert_load_fails(spec("s.h5", "/version"), 0, NC_ERR_UNSUPPORTED, parts);
}

static void test_rank9(void **state)
{
    (void)state;
    hsize_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
    float v[2] = {1, 2};
    write_ds("r9.h5", "/x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 9, d9, v, 0);
    const char *const parts[] = {"r9.h5:/x", "rank 9", "at most 8", NULL};
    assert_load_fails(spec("r9.h5", "/x"), 0, NC_ERR_LIMIT, parts);
}

/* A chunked dataset that claims 2^40 elements but was never written: refused
 * before anything that size is allocated. */
static void test_claims_more_than_stored(void **state)
{
    (void)state;
    hsize_t dims[2] = {(hsize_t)1 << 20, (hsize_t)1 << 20};
    write_ds("big.h5", "/x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, dims, NULL, 1);
    const char *const parts[] = {"big.h5:/x", "[1048576, 1048576]", "stores only", NULL};
    assert_load_fails(spec("big.h5", "/x"), 0, NC_ERR_PARSE, parts);
}

int main(void)
{
    /* the tests print HDF5's own error stack only if something is wrong */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float32_images),
        cmocka_unit_test(test_float64_to_f32),
        cmocka_unit_test(test_uint8_images),
        cmocka_unit_test(test_integer_labels),
        cmocka_unit_test(test_gzip_nested),
        cmocka_unit_test(test_scalar_and_rank8),
        cmocka_unit_test(test_existing_path_with_colon),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_not_hdf5),
        cmocka_unit_test(test_string_dataset),
        cmocka_unit_test(test_rank9),
        cmocka_unit_test(test_claims_more_than_stored),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
