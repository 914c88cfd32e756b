/* The library's allocator (replaceable, nc_set_allocator) and its input
 * limits (nc_set_limits). Both are process-wide settings read on every
 * call without locking: set them before using the library from several
 * threads (neuroc.h says so). */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tensor.h"

static void *sys_malloc(size_t n, void *user) { (void)user; return malloc(n); }
static void *sys_realloc(void *p, size_t n, void *user) { (void)user; return realloc(p, n); }
static void sys_free(void *p, void *user) { (void)user; free(p); }

static nc_allocator g_alloc = {sys_malloc, sys_realloc, sys_free, NULL};

void nc_set_allocator(const nc_allocator *a)
{
    if (a && a->malloc_fn && a->realloc_fn && a->free_fn)
        g_alloc = *a;
    else
        g_alloc = (nc_allocator){sys_malloc, sys_realloc, sys_free, NULL};
}

/* Zero-size requests get one byte, so that NULL always means failure. */
void *nc_malloc(size_t n) { return g_alloc.malloc_fn(n ? n : 1, g_alloc.user); }

void *nc_calloc(size_t count, size_t size)
{
    if (!count)
        count = 1;
    if (!size)
        size = 1;
    if (count > SIZE_MAX / size)
        return NULL;
    /* calloc's zero pages cost nothing until touched: keep them when the
     * allocator is the system's */
    if (g_alloc.malloc_fn == sys_malloc)
        return calloc(count, size);
    void *p = g_alloc.malloc_fn(count * size, g_alloc.user);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *nc_realloc(void *p, size_t n) { return g_alloc.realloc_fn(p, n ? n : 1, g_alloc.user); }

void nc_free(void *p)
{
    if (p)
        g_alloc.free_fn(p, g_alloc.user);
}

char *nc_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = nc_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int nc_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0)
        return 0;
    if (a != 0 && b > INT64_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

int nc_numel_checked(int ndim, const int64_t *shape, int64_t *out)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (!nc_mul_i64(n, shape[i], &n))
            return 0;
    *out = n;
    return 1;
}

/* ---------------------------------------------------------------- limits */

#define DEFAULT_TENSOR_BYTES ((int64_t)4 << 30)
#define DEFAULT_MODEL_BYTES ((int64_t)16 << 30)
#define DEFAULT_STRING_LEN ((int64_t)1 << 16)
#define DEFAULT_GRAPH_DEPTH 64

static nc_limits g_limits;

void nc_set_limits(const nc_limits *lim)
{
    if (lim)
        g_limits = *lim;
    else
        memset(&g_limits, 0, sizeof g_limits);
}

/* `l` with every field <= 0 given its default. */
static nc_limits limits_filled(nc_limits l)
{
    if (l.max_tensor_bytes <= 0)
        l.max_tensor_bytes = DEFAULT_TENSOR_BYTES;
    if (l.max_model_bytes <= 0)
        l.max_model_bytes = DEFAULT_MODEL_BYTES;
    if (l.max_string_len <= 0)
        l.max_string_len = DEFAULT_STRING_LEN;
    if (l.max_graph_depth <= 0)
        l.max_graph_depth = DEFAULT_GRAPH_DEPTH;
    if (l.hdf5_timeout_s <= 0)
        l.hdf5_timeout_s = 60;
    return l;
}

nc_limits nc_limits_now(void)
{
    return limits_filled(g_limits);
}

void nc_limits_current(nc_limits *out)
{
    if (out)
        *out = nc_limits_now();
}

void nc_limits_init(nc_limits *out)
{
    static const nc_limits none;
    if (out)
        *out = limits_filled(none);
}

nc_status nc_check_tensor_size(const char *what, int ndim, const int64_t *shape, size_t elem_size,
                               int64_t *bytes)
{
    char sb[200];
    int64_t numel, b;
    if (ndim < 0 || ndim > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_LIMIT, "%s has %d dimensions (at most %d)", what, ndim, NC_MAX_DIMS);
    if (!nc_numel_checked(ndim, shape, &numel) || !nc_mul_i64(numel, (int64_t)elem_size, &b))
        return nc_errorf(NC_ERR_LIMIT, "%s declares shape %s, negative or overflowing", what,
                         nc_shape_str(ndim, shape, sb, sizeof sb));
    int64_t max = nc_limits_now().max_tensor_bytes;
    if (b > max)
        return nc_errorf(NC_ERR_LIMIT,
                         "%s declares shape %s (%lld bytes), more than the tensor size limit of "
                         "%lld bytes (nc_set_limits, neuroc --max-tensor-size)",
                         what, nc_shape_str(ndim, shape, sb, sizeof sb), (long long)b, (long long)max);
    if (bytes)
        *bytes = b;
    return NC_OK;
}

nc_status nc_check_string_len(const char *what, size_t len)
{
    int64_t max = nc_limits_now().max_string_len;
    if ((uint64_t)len > (uint64_t)max)
        return nc_errorf(NC_ERR_LIMIT, "%s is a string of %zu bytes, more than the limit of %lld "
                                       "(nc_set_limits)", what, len, (long long)max);
    return NC_OK;
}
