#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Thread-local: two rank threads building paths at once once garbled each
 * other's (a static buffer), and one rank then failed alone. */
static _Thread_local char ring[NC_TEST_PATH_RING][4096];
static _Thread_local unsigned next;

const char *nc_test_pathf(const char *fmt, ...)
{
    char *buf = ring[next++ % NC_TEST_PATH_RING];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof ring[0], fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof ring[0]) {
        /* not fail_msg: it may run on a thread that is not cmocka's */
        fprintf(stderr, "nc_test_pathf: path longer than %zu bytes (%s...)\n", sizeof ring[0], fmt);
        abort();
    }
    return buf;
}

const char *nc_test_src(const char *rel) { return nc_test_pathf("%s/%s", NC_SOURCE_DIR, rel); }

int nc_test_file_exists(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0;
}

const char *nc_test_shared(const char *rel)
{
    return nc_test_file_exists(NC_SHARED_DIR) ? nc_test_pathf("%s/%s", NC_SHARED_DIR, rel) : NULL;
}

nc_tensor *nc_test_load_f32(const char *rel)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(nc_test_src(rel), NC_DTYPE_F32, &t));
    return t;
}

double nc_test_mean_gap(const nc_tensor *a, const nc_tensor *b, int T)
{
    const float *x = nc_tensor_data_const(a), *y = nc_tensor_data_const(b);
    double e = 0.0;
    for (int64_t k = 0; k < nc_tensor_numel(b); k++)
        e += fabs((double)x[k] / T - (double)y[k]);
    return e / (double)nc_tensor_numel(b);
}

double nc_test_centred_cosine(const nc_tensor *snn, const nc_tensor *ann, int T)
{
    int64_t N = nc_tensor_shape(ann)[0], K = nc_tensor_numel(ann) / N;
    const float *a = nc_tensor_data_const(ann), *s = nc_tensor_data_const(snn);
    double dot = 0, na = 0, ns = 0;
    for (int64_t k = 0; k < K; k++) {
        double ma = 0, ms = 0;
        for (int64_t i = 0; i < N; i++) {
            ma += a[i * K + k] / (double)N;
            ms += s[i * K + k] / (double)T / (double)N;
        }
        for (int64_t i = 0; i < N; i++) {
            double da = a[i * K + k] - ma, ds = s[i * K + k] / (double)T - ms;
            dot += da * ds;
            na += da * da;
            ns += ds * ds;
        }
    }
    return dot / sqrt(na * ns + 1e-300);
}

void nc_test_select_cases(void)
{
    if (getenv("NC_TEST_FILTER") && *getenv("NC_TEST_FILTER"))
        cmocka_set_test_filter(getenv("NC_TEST_FILTER"));
    if (getenv("NC_TEST_SKIP") && *getenv("NC_TEST_SKIP"))
        cmocka_set_skip_filter(getenv("NC_TEST_SKIP"));
}

nc_tensor *nc_test_run(const nc_snn *s, const char *backend, const nc_tensor *x, int T)
{
    nc_session_options o = {.backend = backend, .timesteps = T};
    nc_session *ss = NULL;
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    nc_session_free(ss);
    return y;
}
