/* nc_sgemm (blas.h). */
#define _GNU_SOURCE

#include "blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         float, const float *, blasint, const float *, blasint, float, float *, blasint);

/* OpenBLAS's BUFFER_SIZE in Debian's build (blas_memory_alloc maps 128 MB
 * and a page), times two: room for it and for what neuroc allocates next. */
#define OPENBLAS_NEEDS ((size_t)256 << 20)

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static sgemm_fn g_sgemm;
static void (*g_set_threads)(int);
static int (*g_get_threads)(void);
static int g_serial_depth, g_threads_before;
static pthread_mutex_t g_serial_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_capped;     /* a finite RLIMIT_AS: serialise the calls */
static const char *g_name = "built-in";
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* C = alpha·op(A)·op(B) + beta·C, row-major. */
static void plain_sgemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * ldc;
        for (int j = 0; j < n; j++)
            ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
        for (int p = 0; p < k; p++) {
            float av = alpha * (ta == CblasNoTrans ? a[(size_t)i * lda + p] : a[(size_t)p * lda + i]);
            if (tb == CblasNoTrans) {
                const float *bp = b + (size_t)p * ldb;
                for (int j = 0; j < n; j++)
                    ci[j] += av * bp[j];
            } else {
                for (int j = 0; j < n; j++)
                    ci[j] += av * b[(size_t)j * ldb + p];
            }
        }
    }
}

static int address_space_left(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    munmap(p, bytes);
    return 1;
}

static void load(void)
{
    struct rlimit rl;
    g_capped = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
    if (g_capped) {
        if (!address_space_left(OPENBLAS_NEEDS)) {
            g_name = "built-in (the address-space limit leaves no room for OpenBLAS's buffer)";
            return;
        }
        /* its worker threads each map a buffer as they start: none, under a cap */
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
    }
    static const char *const names[] = {
#ifdef NC_OPENBLAS_LIBDIR
        NC_OPENBLAS_LIBDIR "/libopenblas.so.0",
#endif
        "libopenblas.so.0", "libopenblas.so"};
    void *h = NULL;
    for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    sgemm_fn f = h ? (sgemm_fn)dlsym(h, "cblas_sgemm") : NULL;
    if (!f) {
        g_name = "built-in (OpenBLAS could not be loaded)";
        return;
    }
    if (g_capped) { /* take the buffer now, while there is room for it */
        float one = 1.0f, r = 0.0f;
        f(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &r, 1);
    }
    g_sgemm = f;
    g_name = "OpenBLAS";
    g_set_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    g_get_threads = (int (*)(void))dlsym(h, "openblas_get_num_threads");
}

void nc_blas_serial_begin(void)
{
    pthread_once(&g_once, load);
    if (!g_set_threads || !g_get_threads)
        return;
    pthread_mutex_lock(&g_serial_lock);
    if (g_serial_depth++ == 0) {
        g_threads_before = g_get_threads();
        g_set_threads(1);
    }
    pthread_mutex_unlock(&g_serial_lock);
}

void nc_blas_serial_end(void)
{
    if (!g_set_threads || !g_get_threads)
        return;
    pthread_mutex_lock(&g_serial_lock);
    if (--g_serial_depth == 0)
        g_set_threads(g_threads_before);
    pthread_mutex_unlock(&g_serial_lock);
}

int nc_blas_threads(void)
{
    pthread_once(&g_once, load);
    return g_get_threads ? g_get_threads() : 1;
}

const char *nc_blas_name(void)
{
    pthread_once(&g_once, load);
    return g_name;
}

void nc_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
              float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    pthread_once(&g_once, load);
    if (!g_sgemm) {
        if (order == CblasRowMajor)
            plain_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        else /* column-major C = op(A)·op(B) is row-major Cᵀ = op(B)ᵀ·op(A)ᵀ */
            plain_sgemm(tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
        return;
    }
    if (g_capped)
        pthread_mutex_lock(&g_lock);
    g_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (g_capped)
        pthread_mutex_unlock(&g_lock);
}
