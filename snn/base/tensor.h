/* The host tensor behind the public nc_tensor handle. */
#ifndef NC_SNN_TENSOR_H
#define NC_SNN_TENSOR_H

#include "neuroc/neuroc.h"

struct nc_tensor {
    nc_dtype dtype;
    int ndim;
    int64_t shape[NC_MAX_DIMS];
    int64_t numel;
    void *data; /* numel elements of dtype, C order */
    int borrowed; /* data is the caller's (nc_tensor_wrap): never freed here */
};

size_t nc_dtype_size(nc_dtype dt);
const char *nc_dtype_name(nc_dtype dt);

/* Internal shorthands: new zero-filled tensors; errors set nc_last_error. */
nc_tensor *nc_tensor_new(nc_dtype dt, int ndim, const int64_t *shape);
/* Why nc_tensor_new(dt, ndim, shape) returned NULL (its message is set):
 * NC_ERR_LIMIT for a shape that overflows or exceeds the tensor size limit,
 * NC_ERR_INVALID_ARG for a bad rank or dtype, else NC_ERR_NOMEM. */
nc_status nc_tensor_new_failure(nc_dtype dt, int ndim, const int64_t *shape);
nc_tensor *nc_tensor_clone(const nc_tensor *t);
/* Reinterprets `t` with a new shape of the same numel (in place). */
int nc_tensor_reshape_inplace(nc_tensor *t, int ndim, const int64_t *shape);

static inline float *nc_f32(const nc_tensor *t) { return (float *)t->data; }
static inline int64_t *nc_i64(const nc_tensor *t) { return (int64_t *)t->data; }

/* "[1, 3, 28, 28]" into buf; returns buf. */
char *nc_shape_str(int ndim, const int64_t *shape, char *buf, size_t len);

#endif
