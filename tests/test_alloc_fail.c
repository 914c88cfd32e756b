/* Allocation-failure injection (nc_set_allocator): for every n, the n-th
 * allocation of a call fails. Each call must then fail cleanly: status
 * NC_ERR_NOMEM (not NC_OK with a silently different result, not a status
 * that blames the file), a message in nc_last_error(), its out pointers
 * NULL, and every allocation it made freed again (the injected allocator
 * counts live blocks). Swept: ONNX model load (mlp,
 * cnn), conversion with calibration (mlp), NIR load and save, session
 * creation and one run on the cpu and cpu-fast backends.
 * HDF5 allocates on its own (NIR), so only neuroc's side of NIR I/O is
 * swept; protobuf-c's allocations go through the injected allocator. */
#include "testutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_long g_calls, g_live;
static long g_fail_at; /* 1-based index of the allocation to fail; 0 = none */

static void *t_malloc(size_t n, void *user)
{
    (void)user;
    long k = atomic_fetch_add(&g_calls, 1) + 1;
    if (k == g_fail_at)
        return NULL;
    void *p = malloc(n);
    if (p)
        atomic_fetch_add(&g_live, 1);
    return p;
}

static void *t_realloc(void *p, size_t n, void *user)
{
    (void)user;
    long k = atomic_fetch_add(&g_calls, 1) + 1;
    if (k == g_fail_at)
        return NULL;
    void *q = realloc(p, n);
    if (q && !p)
        atomic_fetch_add(&g_live, 1);
    return q;
}

static void t_free(void *p, void *user)
{
    (void)user;
    atomic_fetch_sub(&g_live, 1);
    free(p);
}

/* A call under test: makes objects into out[0..3] (NULL on failure). */
typedef nc_status (*make_fn)(void *ctx, void *out[4]);
typedef void (*release_fn)(void *out[4]);

/* Runs make once to count its allocations, then once per allocation with
 * that one failing. make hands back n_out objects in out[0..n_out). */
static void sweep(const char *name, make_fn make, release_fn release, void *ctx, int n_out)
{
    void *out[4] = {0};
    g_fail_at = 0;
    long live0 = atomic_load(&g_live);
    atomic_store(&g_calls, 0);
    nc_status st = make(ctx, out);
    if (st != NC_OK)
        fail_msg("%s: fails without injection: %s: %s", name, nc_status_str(st), nc_last_error());
    release(out);
    long total = atomic_load(&g_calls);
    if (atomic_load(&g_live) != live0)
        fail_msg("%s: %ld blocks leaked without injection", name, atomic_load(&g_live) - live0);
    for (long n = 1; n <= total; n++) {
        memset(out, 0, sizeof out);
        for (int k = 0; k < n_out; k++)
            out[k] = (void *)1; /* the call must overwrite its out pointers */
        g_fail_at = n;
        atomic_store(&g_calls, 0);
        st = make(ctx, out);
        g_fail_at = 0;
        if (st == NC_OK) {
            /* a failed allocation must not give a silently different result
             * (a shape left unfolded, a value missing) */
            fail_msg("%s: allocation %ld of %ld failed but the call returned NC_OK", name, n, total);
        } else {
            if (st != NC_ERR_NOMEM)
                fail_msg("%s: allocation %ld of %ld failed but the status is %s (%s), not out of memory", name,
                         n, total, nc_status_str(st), nc_last_error());
            if (!nc_last_error()[0])
                fail_msg("%s: allocation %ld of %ld failed: %s with an empty nc_last_error()", name, n, total,
                         nc_status_str(st));
            for (int k = 0; k < 4; k++)
                if (out[k])
                    fail_msg("%s: allocation %ld of %ld failed (%s: %s) but out[%d] is not NULL", name, n,
                             total, nc_status_str(st), nc_last_error(), k);
        }
        release(out);
        if (atomic_load(&g_live) != live0)
            fail_msg("%s: allocation %ld of %ld failed (%s: %s): %ld blocks leaked", name, n, total,
                     nc_status_str(st), nc_last_error(), atomic_load(&g_live) - live0);
    }
    printf("  %s: %ld allocations, each failed once: all clean\n", name, total);
}

static const char *src(const char *rel) { return nc_test_src(rel); }

/* ---------------------------------------------------------------- scenarios */

static nc_status make_model(void *ctx, void *out[4])
{
    return nc_model_load_onnx(src(ctx), NULL, (nc_model **)&out[0]);
}

static void free_model(void *out[4]) { nc_model_free(out[0]); }

typedef struct conv_ctx {
    nc_model *m;
    nc_tensor *calib;
    nc_snn *snn;
    nc_tensor *input;
    const char *nir, *backend;
} conv_ctx;

static nc_status make_snn(void *ctx, void *out[4])
{
    conv_ctx *c = ctx;
    nc_convert_options opt = {.calib_samples = 8, .timesteps = 4};
    return nc_convert(c->m, c->calib, NULL, &opt, (nc_snn **)&out[0], (nc_convert_report **)&out[1]);
}

static void free_snn(void *out[4])
{
    nc_snn_free(out[0]);
    nc_convert_report_free(out[1]);
}

static nc_status make_nir(void *ctx, void *out[4])
{
    return nc_snn_load_nir(((conv_ctx *)ctx)->nir, NULL, (nc_snn **)&out[0]);
}

static void free_nir(void *out[4]) { nc_snn_free(out[0]); }

static nc_status save_nir(void *ctx, void *out[4])
{
    (void)out;
    return nc_snn_save_nir(((conv_ctx *)ctx)->snn, ((conv_ctx *)ctx)->nir);
}

static void free_nothing(void *out[4]) { (void)out; }

static nc_status make_session(void *ctx, void *out[4])
{
    conv_ctx *c = ctx;
    nc_session_options so = {.backend = c->backend, .timesteps = 4};
    out[1] = NULL; /* nc_session_run is not reached if the session fails */
    nc_status st = nc_session_create(c->snn, &so, (nc_session **)&out[0]);
    if (st != NC_OK)
        return st;
    st = nc_session_run(out[0], c->input, (nc_tensor **)&out[1]);
    if (st != NC_OK) {
        /* the session itself was made: free it here, so out[] only holds
         * what the failing call handed back */
        nc_session_free(out[0]);
        out[0] = NULL;
    }
    return st;
}

static void free_session(void *out[4])
{
    nc_tensor_free(out[1]);
    nc_session_free(out[0]);
}

/* ---------------------------------------------------------------- tests */

static void test_onnx_load(void **state)
{
    (void)state;
    sweep("load mlp.onnx", make_model, free_model, "examples/models/mlp.onnx", 1);
    sweep("load cnn.onnx", make_model, free_model, "examples/models/cnn.onnx", 1);
}

/* The first n samples of the shipped test images (N, 1, 28, 28). */
static nc_tensor *first_images(int64_t n)
{
    nc_tensor *all = NULL, *t = NULL;
    NC_ASSERT_OK(nc_data_load(src("examples/data/fmnist_test_x.npy"), NC_DTYPE_F32, &all));
    int64_t shape[NC_MAX_DIMS];
    int nd = nc_tensor_ndim(all);
    memcpy(shape, nc_tensor_shape(all), (size_t)nd * sizeof *shape);
    int64_t per = nc_tensor_numel(all) / shape[0];
    shape[0] = n;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, nd, shape, nc_tensor_data(all), &t));
    (void)per;
    nc_tensor_free(all);
    return t;
}

static void test_convert_nir_session(void **state)
{
    (void)state;
    char nir[4096];
    snprintf(nir, sizeof nir, "%s/test_alloc_fail_mlp.nir", NC_BINARY_DIR);
    conv_ctx c = {.nir = nir};
    NC_ASSERT_OK(nc_model_load_onnx(src("examples/models/mlp.onnx"), NULL, &c.m));
    c.calib = first_images(8);
    c.input = first_images(2);
    sweep("convert mlp (8 calibration images)", make_snn, free_snn, &c, 2);

    nc_convert_options opt = {.calib_samples = 8, .timesteps = 4};
    NC_ASSERT_OK(nc_convert(c.m, c.calib, NULL, &opt, &c.snn, NULL));
    sweep("save mlp.nir", save_nir, free_nothing, &c, 0);
    NC_ASSERT_OK(nc_snn_save_nir(c.snn, nir));
    sweep("load mlp.nir", make_nir, free_nir, &c, 1);
    c.backend = "cpu";
    sweep("session cpu: create + run", make_session, free_session, &c, 2);
    c.backend = "cpu-fast";
    sweep("session cpu-fast: create + run", make_session, free_session, &c, 2);

    nc_snn_free(c.snn);
    nc_tensor_free(c.calib);
    nc_tensor_free(c.input);
    nc_model_free(c.m);
    remove(nir);
}

/* Average pools folded into the Conv and the Gemm after them, and one kept
 * (a padded pool whose Conv reads a row it drops): convert_poolfold.c's paths. */
static void test_convert_poolfold(void **state)
{
    (void)state;
    static const char *const models[][2] = {{"overlap", "x12"}, {"gap", "x8"}, {"odd", "x7"}};
    for (int k = 0; k < 3; k++) {
        conv_ctx c = {0};
        char path[128], name[160];
        snprintf(path, sizeof path, "tests/fixtures/poolfold/%s.onnx", models[k][0]);
        NC_ASSERT_OK(nc_model_load_onnx(src(path), NULL, &c.m));
        snprintf(path, sizeof path, "tests/fixtures/poolfold/%s.npy", models[k][1]);
        NC_ASSERT_OK(nc_data_load(src(path), NC_DTYPE_F32, &c.calib));
        snprintf(name, sizeof name, "convert %s.onnx (pool folds)", models[k][0]);
        sweep(name, make_snn, free_snn, &c, 2);
        nc_tensor_free(c.calib);
        nc_model_free(c.m);
    }
}

int main(void)
{
    nc_allocator a = {t_malloc, t_realloc, t_free, NULL};
    nc_set_allocator(&a);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onnx_load),
        cmocka_unit_test(test_convert_nir_session),
        cmocka_unit_test(test_convert_poolfold),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    long live = atomic_load(&g_live);
    nc_set_allocator(NULL);
    if (live != 0) {
        fprintf(stderr, "test_alloc_fail: %ld blocks still allocated at exit\n", live);
        return 1;
    }
    return r;
}
