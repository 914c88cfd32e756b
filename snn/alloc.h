/* Every allocation in the library goes through these, so that a replaceable
 * allocator and allocation-failure injection need only one place. */
#ifndef NC_SNN_ALLOC_H
#define NC_SNN_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *nc_malloc(size_t n);
void *nc_calloc(size_t count, size_t size);
void *nc_realloc(void *p, size_t n);
void nc_free(void *p);
char *nc_strdup(const char *s);

/* a*b into *out; returns 0 (and leaves *out alone) on overflow or a negative operand. */
int nc_mul_i64(int64_t a, int64_t b, int64_t *out);
/* Product of dims into *out; 0 on overflow or a negative dim. */
int nc_numel_checked(int ndim, const int64_t *shape, int64_t *out);

#endif
