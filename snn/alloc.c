#include "alloc.h"

#include <stdlib.h>
#include <string.h>

void *nc_malloc(size_t n) { return malloc(n ? n : 1); }
void *nc_calloc(size_t count, size_t size) { return calloc(count ? count : 1, size ? size : 1); }
void *nc_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
void nc_free(void *p) { free(p); }

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
