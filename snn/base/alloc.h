/* Every allocation in the library goes through these, so that a replaceable
 * allocator (nc_set_allocator) and allocation-failure injection need only
 * one place. The input limits (nc_set_limits) live here too: every reader
 * asks them before it allocates what a file claims. */
#ifndef NC_SNN_ALLOC_H
#define NC_SNN_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "neuroc/neuroc.h"

void *nc_malloc(size_t n);
void *nc_calloc(size_t count, size_t size);
void *nc_realloc(void *p, size_t n);
void nc_free(void *p);
char *nc_strdup(const char *s);

/* a*b into *out; returns 0 (and leaves *out alone) on overflow or a negative operand. */
int nc_mul_i64(int64_t a, int64_t b, int64_t *out);
/* Product of dims into *out; 0 on overflow or a negative dim. */
int nc_numel_checked(int ndim, const int64_t *shape, int64_t *out);

/* The limits in force, defaults filled in (never 0). */
nc_limits nc_limits_now(void);
/* NC_OK if a tensor of `shape` with elements of elem_size bytes fits the
 * tensor limit (and its size does not overflow); otherwise NC_ERR_LIMIT
 * with a message "<what> declares shape (...) ..." (the caller prefixes
 * the file). *bytes gets the size when not NULL. */
nc_status nc_check_tensor_size(const char *what, int ndim, const int64_t *shape, size_t elem_size,
                               int64_t *bytes);
/* NC_ERR_LIMIT naming `what` if a string of len bytes exceeds the limit. */
nc_status nc_check_string_len(const char *what, size_t len);

#endif
