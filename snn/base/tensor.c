#include "tensor.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

size_t nc_dtype_size(nc_dtype dt)
{
    switch (dt) {
    case NC_DTYPE_F32: return 4;
    case NC_DTYPE_U8: return 1;
    case NC_DTYPE_I64: return 8;
    }
    return 0;
}

const char *nc_dtype_name(nc_dtype dt)
{
    switch (dt) {
    case NC_DTYPE_F32: return "float32";
    case NC_DTYPE_U8: return "uint8";
    case NC_DTYPE_I64: return "int64";
    }
    return "unknown";
}

char *nc_shape_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    size_t off = 0;
    off += (size_t)snprintf(buf + off, len - off, "[");
    for (int i = 0; i < ndim && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (off < len)
        snprintf(buf + off, len - off, "]");
    return buf;
}

nc_tensor *nc_tensor_new(nc_dtype dt, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > NC_MAX_DIMS || nc_dtype_size(dt) == 0) {
        nc_errorf(NC_ERR_INVALID_ARG, "tensor with %d dimensions or unknown dtype %d", ndim, (int)dt);
        return NULL;
    }
    int64_t numel, bytes;
    if (!nc_numel_checked(ndim, shape, &numel) ||
        !nc_mul_i64(numel, (int64_t)nc_dtype_size(dt), &bytes) || (uint64_t)bytes > SIZE_MAX) {
        char b[160];
        nc_errorf(NC_ERR_LIMIT, "tensor shape %s is negative or too large",
                  nc_shape_str(ndim, shape, b, sizeof b));
        return NULL;
    }
    /* The one place every tensor is made: a shape computed from a hostile
     * file (a Pad, a Reshape) is bounded here too, not only what readers read. */
    int64_t max = nc_limits_now().max_tensor_bytes;
    if (bytes > max) {
        char b[160];
        nc_errorf(NC_ERR_LIMIT, "tensor shape %s (%lld bytes) exceeds the tensor size limit of %lld "
                  "bytes (nc_set_limits)", nc_shape_str(ndim, shape, b, sizeof b), (long long)bytes,
                  (long long)max);
        return NULL;
    }
    nc_tensor *t = nc_calloc(1, sizeof *t);
    if (!t) {
        nc_errorf(NC_ERR_NOMEM, "out of memory allocating a tensor");
        return NULL;
    }
    t->dtype = dt;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->numel = numel;
    if (numel) {
        t->data = nc_calloc((size_t)numel, nc_dtype_size(dt));
        if (!t->data) {
            nc_free(t);
            nc_errorf(NC_ERR_NOMEM, "out of memory allocating %lld bytes", (long long)bytes);
            return NULL;
        }
    }
    return t;
}

nc_status nc_tensor_new_failure(nc_dtype dt, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > NC_MAX_DIMS || nc_dtype_size(dt) == 0)
        return NC_ERR_INVALID_ARG;
    int64_t numel, bytes;
    if (!nc_numel_checked(ndim, shape, &numel) || !nc_mul_i64(numel, (int64_t)nc_dtype_size(dt), &bytes) ||
        bytes > nc_limits_now().max_tensor_bytes)
        return NC_ERR_LIMIT;
    return NC_ERR_NOMEM;
}

nc_tensor *nc_tensor_clone(const nc_tensor *s)
{
    nc_tensor *t = nc_tensor_new(s->dtype, s->ndim, s->shape);
    if (t && s->numel)
        memcpy(t->data, s->data, (size_t)s->numel * nc_dtype_size(s->dtype));
    return t;
}

int nc_tensor_reshape_inplace(nc_tensor *t, int ndim, const int64_t *shape)
{
    int64_t n;
    if (ndim < 0 || ndim > NC_MAX_DIMS || !nc_numel_checked(ndim, shape, &n) || n != t->numel)
        return 0;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    return 1;
}

/* ---- public API ---- */

nc_status nc_tensor_create(nc_dtype dtype, int ndim, const int64_t *shape, nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_create: out is NULL");
    *out = NULL;
    if (ndim > 0 && !shape)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_create: shape is NULL");
    nc_tensor *t = nc_tensor_new(dtype, ndim, shape);
    if (!t)
        return ndim < 0 || ndim > NC_MAX_DIMS ? NC_ERR_INVALID_ARG : NC_ERR_LIMIT;
    *out = t;
    return NC_OK;
}

nc_status nc_tensor_create_from(nc_dtype dtype, int ndim, const int64_t *shape, const void *data,
                                nc_tensor **out)
{
    nc_status st = nc_tensor_create(dtype, ndim, shape, out);
    if (st != NC_OK)
        return st;
    if ((*out)->numel) {
        if (!data) {
            nc_tensor_free(*out);
            *out = NULL;
            return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_create_from: data is NULL");
        }
        memcpy((*out)->data, data, (size_t)(*out)->numel * nc_dtype_size(dtype));
    }
    return NC_OK;
}

nc_status nc_tensor_wrap(nc_dtype dtype, int ndim, const int64_t *shape, void *data, nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_wrap: out is NULL");
    *out = NULL;
    if (ndim > 0 && !shape)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_wrap: shape is NULL");
    if (ndim < 0 || ndim > NC_MAX_DIMS || nc_dtype_size(dtype) == 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_wrap: %d dimensions or unknown dtype %d", ndim,
                         (int)dtype);
    int64_t numel, bytes;
    if (!nc_numel_checked(ndim, shape, &numel) || !nc_mul_i64(numel, (int64_t)nc_dtype_size(dtype), &bytes) ||
        (uint64_t)bytes > SIZE_MAX) {
        char b[160];
        return nc_errorf(NC_ERR_LIMIT, "nc_tensor_wrap: shape %s is negative or too large",
                         nc_shape_str(ndim, shape, b, sizeof b));
    }
    if (numel && !data)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_wrap: data is NULL");
    /* the kernels read elements of dtype through typed pointers */
    if ((uintptr_t)data % nc_dtype_size(dtype))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_tensor_wrap: data at %p is not aligned to its %s elements",
                         data, nc_dtype_name(dtype));
    nc_tensor *t = nc_calloc(1, sizeof *t);
    if (!t)
        return nc_errorf(NC_ERR_NOMEM, "out of memory allocating a tensor");
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->numel = numel;
    t->data = numel ? data : NULL;
    t->borrowed = 1;
    *out = t;
    return NC_OK;
}

void nc_tensor_free(nc_tensor *t)
{
    if (!t)
        return;
    if (!t->borrowed)
        nc_free(t->data);
    nc_free(t);
}

nc_dtype nc_tensor_dtype(const nc_tensor *t) { return t->dtype; }
int nc_tensor_ndim(const nc_tensor *t) { return t->ndim; }
const int64_t *nc_tensor_shape(const nc_tensor *t) { return t->shape; }
int64_t nc_tensor_numel(const nc_tensor *t) { return t->numel; }
void *nc_tensor_data(nc_tensor *t) { return t->data; }
const void *nc_tensor_data_const(const nc_tensor *t) { return t->data; }
