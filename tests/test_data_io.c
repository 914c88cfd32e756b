/* npy and IDX reading and writing: round trips, hand-made files of other
 * versions and dtypes, the real Fashion-MNIST files, and broken files. */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FMNIST_DIR "/usr/share/datasets/fashion-mnist"

static char g_dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/nc_test_data_io.XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(g_dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
                unlink(p);
            }
        }
        closedir(d);
    }
    rmdir(g_dir);
    return 0;
}

static const char *tpath(const char *name)
{
    return nc_test_pathf("%s/%s", g_dir, name);
}

static const char *write_bytes(const char *name, const void *data, size_t n)
{
    const char *p = tpath(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return p;
}

/* An npy file of the given version with `dict` as its header, padded as
 * numpy pads it, followed by n data bytes. */
static const char *write_npy(const char *name, int major, const char *dict, const void *data,
                             size_t n)
{
    size_t lenbytes = major == 1 ? 2 : 4;
    size_t pre = 8 + lenbytes;
    size_t hl = strlen(dict) + 1;
    size_t total = (pre + hl + 63) / 64 * 64;
    hl = total - pre;
    unsigned char *buf = calloc(1, total + n);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t b = 0; b < lenbytes; b++)
        buf[8 + b] = (unsigned char)(hl >> (8 * b));
    memset(buf + pre, ' ', hl);
    memcpy(buf + pre, dict, strlen(dict));
    buf[total - 1] = '\n';
    if (n)
        memcpy(buf + total, data, n);
    const char *p = write_bytes(name, buf, total + n);
    free(buf);
    return p;
}

static void assert_shape(const nc_tensor *t, int ndim, const int64_t *shape)
{
    assert_int_equal(nc_tensor_ndim(t), ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(nc_tensor_shape(t)[i], shape[i]);
}

/* Loading must fail with `want_st` and a message naming the file and `frag`. */
static void expect_fail(const char *path, nc_dtype want, nc_status want_st, const char *frag)
{
    nc_tensor *t = (nc_tensor *)0x1;
    nc_status st = nc_data_load(path, want, &t);
    if (st != want_st)
        fail_msg("%s: expected %s, got %s: %s", path, nc_status_str(want_st), nc_status_str(st),
                 nc_last_error());
    assert_null(t);
    assert_non_null(strstr(nc_last_error(), path));
    if (!strstr(nc_last_error(), frag))
        fail_msg("message '%s' lacks '%s'", nc_last_error(), frag);
}

/* ---------------------------------------------------------------- round trips */

static void round_trip(nc_dtype dt, int ndim, const int64_t *shape, const void *data,
                       const char *name)
{
    nc_tensor *t = NULL, *back = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(dt, ndim, shape, data, &t));
    const char *p = tpath(name);
    NC_ASSERT_OK(nc_npy_save(p, t));
    NC_ASSERT_OK(nc_data_load(p, NC_DTYPE_NATIVE, &back));
    assert_int_equal(nc_tensor_dtype(back), dt);
    assert_shape(back, ndim, shape);
    size_t es = dt == NC_DTYPE_F32 ? 4 : dt == NC_DTYPE_U8 ? 1 : 8;
    assert_int_equal(nc_tensor_numel(back), nc_tensor_numel(t));
    if (nc_tensor_numel(t))
        assert_memory_equal(nc_tensor_data(back), data, (size_t)nc_tensor_numel(t) * es);
    nc_tensor_free(back);
    nc_tensor_free(t);
}

static void test_round_trips(void **state)
{
    (void)state;
    int64_t s2[] = {2, 3};
    float f[] = {0.5f, -1.25f, 3e38f, -0.0f, 1e-40f, 7.0f};
    round_trip(NC_DTYPE_F32, 2, s2, f, "f32.npy");

    int64_t s1[] = {5};
    uint8_t u[] = {0, 1, 127, 128, 255};
    round_trip(NC_DTYPE_U8, 1, s1, u, "u8.npy");

    int64_t s4[] = {2, 1, 3, 2};
    int64_t i[12];
    for (int k = 0; k < 12; k++)
        i[k] = (k % 2 ? -1 : 1) * ((int64_t)1 << (5 * k % 63));
    i[11] = INT64_MIN;
    round_trip(NC_DTYPE_I64, 4, s4, i, "i64_4d.npy");

    float scalar = 42.5f;
    round_trip(NC_DTYPE_F32, 0, NULL, &scalar, "scalar.npy");

    int64_t s0[] = {0, 3};
    round_trip(NC_DTYPE_F32, 2, s0, NULL, "empty.npy");
}

/* The saved bytes are what numpy writes: v1.0, header padded to 64 bytes. */
static void test_save_layout(void **state)
{
    (void)state;
    int64_t shape[] = {3};
    float v[] = {1.0f, 2.0f, -2.0f};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, shape, v, &t));
    const char *p = tpath("layout.npy");
    NC_ASSERT_OK(nc_npy_save(p, t));
    nc_tensor_free(t);
    unsigned char buf[256];
    FILE *fp = fopen(p, "rb");
    assert_non_null(fp);
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    /* byte for byte what numpy 1.x/2.x np.save writes for this array */
    assert_int_equal(n, 128 + 12);
    assert_memory_equal(buf, "\x93NUMPY\x01\x00", 8);
    assert_int_equal(buf[8] | buf[9] << 8, 128 - 10);
    assert_int_equal(buf[127], '\n');
    assert_memory_equal(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 57);
    /* -2.0f = 0xC0000000, little-endian */
    assert_memory_equal(buf + 128 + 8, "\x00\x00\x00\xc0", 4);
}

/* ---------------------------------------------------------------- other dtypes, versions */

static void test_float64_converted(void **state)
{
    (void)state;
    double d[] = {1.5, -2.25, 1e30, 0.1};
    const char *p = write_npy("f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
                              d, sizeof d);
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(p, NC_DTYPE_NATIVE, &t));
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_F32);
    int64_t shape[] = {2, 2};
    assert_shape(t, 2, shape);
    const float *v = nc_tensor_data(t);
    assert_true(v[0] == 1.5f && v[1] == -2.25f && v[3] == (float)0.1);
    assert_true(v[2] == 1e30f);
    nc_tensor_free(t);
    /* Float data is not labels. */
    expect_fail(p, NC_DTYPE_I64, NC_ERR_UNSUPPORTED, "floating-point");
    /* beyond float range is +inf: non-finite data is refused, naming the sample */
    double big[] = {1.5, -2.25, 1e300, 0.1};
    p = write_npy("f8big.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", big, sizeof big);
    expect_fail(p, NC_DTYPE_NATIVE, NC_ERR_INVALID_ARG, "sample 1 holds +inf at index 0 (of 2 values a sample)");
}

static void test_versions_and_int_types(void **state)
{
    (void)state;
    int32_t i4[] = {-3, 0, 2000000000};
    /* v2.0, keys reordered, no trailing comma, Python 2 style 3L */
    const char *p2 = write_npy("v2.npy", 2, "{'shape': (3L,), 'fortran_order': False, 'descr': '<i4'}",
                               i4, sizeof i4);
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(p2, NC_DTYPE_I64, &t));
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_I64);
    const int64_t *iv = nc_tensor_data(t);
    assert_true(iv[0] == -3 && iv[1] == 0 && iv[2] == 2000000000);
    nc_tensor_free(t);

    uint8_t u[] = {0, 200, 255, 7};
    const char *p3 = write_npy("v3.npy", 3, "{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (4,)}",
                               u, sizeof u);
    NC_ASSERT_OK(nc_data_load(p3, NC_DTYPE_F32, &t));
    const float *fv = nc_tensor_data(t);
    assert_true(fv[0] == 0.0f && fv[1] == 200.0f && fv[2] == 255.0f && fv[3] == 7.0f);
    nc_tensor_free(t);
    NC_ASSERT_OK(nc_data_load(p3, NC_DTYPE_NATIVE, &t));
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_U8);
    nc_tensor_free(t);

    int64_t i8[] = {9, -1};
    const char *p1 = write_npy("i8.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                               i8, sizeof i8);
    NC_ASSERT_OK(nc_data_load(p1, NC_DTYPE_NATIVE, &t));
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_I64);
    assert_memory_equal(nc_tensor_data(t), i8, sizeof i8);
    nc_tensor_free(t);
    expect_fail(p1, NC_DTYPE_U8, NC_ERR_UNSUPPORTED, "uint8 was expected");

    /* Fortran order of a 1-D array is the same bytes: accepted. */
    const char *pf = write_npy("f1d.npy", 1, "{'descr': '<i8', 'fortran_order': True, 'shape': (2,), }",
                               i8, sizeof i8);
    NC_ASSERT_OK(nc_data_load(pf, NC_DTYPE_NATIVE, &t));
    nc_tensor_free(t);
}

/* A small big-endian IDX file of 32-bit ints, plain and gzip-compressed. */
static void test_idx_small(void **state)
{
    (void)state;
    unsigned char idx[] = {0, 0, 0x0C, 2, 0, 0, 0, 2, 0, 0, 0, 2,
                           0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0x01, 0x2c, 0, 0x01, 0x11, 0x70};
    const char *p = write_bytes("ints.idx", idx, sizeof idx);
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(p, NC_DTYPE_NATIVE, &t));
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_I64);
    const int64_t *v = nc_tensor_data(t);
    assert_true(v[0] == 1 && v[1] == -2 && v[2] == 300 && v[3] == 70000);
    nc_tensor_free(t);

    const char *gzp = tpath("ints.idx.gz");
    gzFile gz = gzopen(gzp, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, idx, sizeof idx), (int)sizeof idx);
    gzclose(gz);
    NC_ASSERT_OK(nc_data_load(gzp, NC_DTYPE_F32, &t));
    const float *f = nc_tensor_data(t);
    assert_true(f[0] == 1.0f && f[1] == -2.0f && f[2] == 300.0f && f[3] == 70000.0f);
    nc_tensor_free(t);

    /* gzip file cut short: truncated data */
    gz = gzopen(gzp, "wb");
    assert_int_equal(gzwrite(gz, idx, sizeof idx - 3), (int)sizeof idx - 3);
    gzclose(gz);
    expect_fail(gzp, 0, NC_ERR_PARSE, "truncated");
}

static void test_fashion_mnist(void **state)
{
    (void)state;
    if (!nc_test_file_exists(FMNIST_DIR "/t10k-images-idx3-ubyte.gz")) {
        print_message("Fashion-MNIST not installed at " FMNIST_DIR "; skipping\n");
        skip();
    }
    nc_tensor *img = NULL, *lab = NULL;
    NC_ASSERT_OK(nc_data_load(FMNIST_DIR "/t10k-images-idx3-ubyte.gz", NC_DTYPE_NATIVE, &img));
    int64_t shape[] = {10000, 28, 28};
    assert_shape(img, 3, shape);
    assert_int_equal(nc_tensor_dtype(img), NC_DTYPE_U8);
    const uint8_t *px = nc_tensor_data(img);
    int max = 0;
    for (int64_t i = 0; i < nc_tensor_numel(img); i++)
        max = px[i] > max ? px[i] : max;
    assert_int_equal(max, 255);
    nc_tensor_free(img);

    NC_ASSERT_OK(nc_data_load(FMNIST_DIR "/t10k-images-idx3-ubyte.gz", NC_DTYPE_F32, &img));
    const float *fx = nc_tensor_data(img);
    for (int64_t i = 0; i < nc_tensor_numel(img); i++)
        if (!(fx[i] >= 0.0f && fx[i] <= 255.0f && fx[i] == (float)(int)fx[i]))
            fail_msg("pixel %lld = %g", (long long)i, fx[i]);
    nc_tensor_free(img);

    NC_ASSERT_OK(nc_data_load(FMNIST_DIR "/t10k-labels-idx1-ubyte.gz", NC_DTYPE_I64, &lab));
    int64_t lshape[] = {10000};
    assert_shape(lab, 1, lshape);
    const int64_t *l = nc_tensor_data(lab);
    assert_int_equal(l[0], 9); /* "Ankle boot" */
    int64_t counts[10] = {0};
    for (int i = 0; i < 10000; i++) {
        assert_true(l[i] >= 0 && l[i] < 10);
        counts[l[i]]++;
    }
    for (int c = 0; c < 10; c++)
        assert_int_equal(counts[c], 1000); /* the test set is balanced */
    nc_tensor_free(lab);
}

/* ---------------------------------------------------------------- broken files */

static void test_bad_files(void **state)
{
    (void)state;
    float four[4] = {1, 2, 3, 4};
    const char *d22 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";

    expect_fail(tpath("missing.npy"), 0, NC_ERR_IO, "cannot open");
    expect_fail(g_dir, 0, NC_ERR_IO, "is a directory; a file was expected");
    expect_fail(write_bytes("empty.npy", "", 0), 0, NC_ERR_PARSE, "not a .npy or IDX");
    expect_fail(write_bytes("magic.npy", "\x93NUMPX\x01\x00\x10\x00", 10), 0, NC_ERR_PARSE,
                "magic");
    expect_fail(write_bytes("text.npy", "hello world", 11), 0, NC_ERR_PARSE, "not a .npy or IDX");
    expect_fail(write_npy("trunc.npy", 1, d22, four, 10), 0, NC_ERR_PARSE, "truncated");
    expect_fail(write_npy("extra.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                          four, sizeof four),
                NC_DTYPE_F32, NC_ERR_PARSE, "16 bytes follow");
}

static void test_bad_headers(void **state)
{
    (void)state;
    float four[4] = {1, 2, 3, 4};
    expect_fail(write_npy("fortran.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                          four, sizeof four),
                0, NC_ERR_UNSUPPORTED, "Fortran");
    expect_fail(write_npy("object.npy", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
                          four, 16),
                0, NC_ERR_UNSUPPORTED, "object");
    expect_fail(write_npy("bigend.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",
                          four, sizeof four),
                0, NC_ERR_UNSUPPORTED, "little-endian");
    expect_fail(write_npy("c64.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
                          four, sizeof four),
                0, NC_ERR_UNSUPPORTED, "'<c8'");
    expect_fail(write_npy("record.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",
                          four, sizeof four),
                0, NC_ERR_UNSUPPORTED, "structured");
    /* Claims more than the file holds, without overflowing. */
    expect_fail(write_npy("claims.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }",
                          four, sizeof four),
                0, NC_ERR_PARSE, "truncated");
    /* Product overflows int64. */
    expect_fail(write_npy("huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, "
                                         "'shape': (4611686018427387904, 4611686018427387904), }",
                          four, sizeof four),
                0, NC_ERR_PARSE, "overflows");
    expect_fail(write_npy("hugedim.npy", 1, "{'descr': '<f4', 'fortran_order': False, "
                                            "'shape': (99999999999999999999,), }",
                          four, sizeof four),
                0, NC_ERR_PARSE, "overflows");
    expect_fail(write_npy("ndim.npy", 1, "{'descr': '<f4', 'fortran_order': False, "
                                         "'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }",
                          four, 4),
                0, NC_ERR_LIMIT, "dimensions");
    expect_fail(write_npy("negdim.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }",
                          four, sizeof four),
                0, NC_ERR_PARSE, "shape");
    expect_fail(write_npy("nokey.npy", 1, "{'descr': '<f4', 'shape': (4,), }", four, sizeof four), 0,
                NC_ERR_PARSE, "fortran_order");
    expect_fail(write_npy("garbage.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } x",
                          four, sizeof four),
                0, NC_ERR_PARSE, "after the dict");
    expect_fail(write_npy("version.npy", 9, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                          four, sizeof four),
                0, NC_ERR_UNSUPPORTED, "version 9");
    /* Header length pointing past the end of the file. */
    expect_fail(write_bytes("hdrlen.npy", "\x93NUMPY\x01\x00\xff\x7f{'descr'", 17), 0, NC_ERR_PARSE,
                "truncated npy header");
    /* File ends inside the length field. */
    expect_fail(write_bytes("short.npy", "\x93NUMPY\x01\x00\xff", 9), 0, NC_ERR_PARSE, "truncated");
    /* IDX claiming 60000 images but holding 2 bytes; and >8 dims. */
    expect_fail(write_bytes("trunc.idx", "\0\0\x08\x03\0\0\xea\x60\0\0\0\x1c\0\0\0\x1c\x01\x02", 18),
                0, NC_ERR_PARSE, "truncated");
    expect_fail(write_bytes("dims.idx", "\0\0\x08\x09", 4), 0, NC_ERR_LIMIT, "dimensions");
}

/* A gzip file whose header claims far more than it could decompress to. */
static void test_gzip_bomb_claim(void **state)
{
    (void)state;
    unsigned char idx[] = {0, 0, 0x08, 2, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 1, 2, 3};
    const char *p = tpath("claim.idx.gz");
    gzFile gz = gzopen(p, "wb");
    assert_non_null(gz);
    gzwrite(gz, idx, sizeof idx);
    gzclose(gz);
    expect_fail(p, 0, NC_ERR_PARSE, "gzip file can hold");
}

/* A failed save leaves no temporary file and nothing at the target. */
static void test_save_failure(void **state)
{
    (void)state;
    int64_t shape[] = {2};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_U8, 1, shape, &t));
    char p[600];
    snprintf(p, sizeof p, "%s/no/such/dir/x.npy", g_dir);
    assert_int_equal(nc_npy_save(p, t), NC_ERR_IO);
    assert_non_null(strstr(nc_last_error(), p));

    /* Renaming onto a non-empty directory fails after the temp file is written. */
    const char *dir = tpath("adir");
    assert_int_equal(mkdir(dir, 0700), 0);
    char inner[600];
    snprintf(inner, sizeof inner, "%s/keep", dir);
    FILE *f = fopen(inner, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(nc_npy_save(dir, t), NC_ERR_IO);
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        assert_null(strstr(e->d_name, ".tmp."));
    closedir(d);
    unlink(inner);
    rmdir(dir);

    /* Overwriting an existing file replaces it whole. */
    const char *q = tpath("over.npy");
    write_bytes("over.npy", "old", 3);
    NC_ASSERT_OK(nc_npy_save(q, t));
    nc_tensor *back = NULL;
    NC_ASSERT_OK(nc_data_load(q, NC_DTYPE_NATIVE, &back));
    assert_int_equal(nc_tensor_numel(back), 2);
    nc_tensor_free(back);
    nc_tensor_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),      cmocka_unit_test(test_save_layout),
        cmocka_unit_test(test_float64_converted), cmocka_unit_test(test_versions_and_int_types),
        cmocka_unit_test(test_idx_small),        cmocka_unit_test(test_fashion_mnist),
        cmocka_unit_test(test_bad_files),        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_gzip_bomb_claim),  cmocka_unit_test(test_save_failure),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
