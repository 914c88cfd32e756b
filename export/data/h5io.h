/* Small HDF5 helpers for the NIR reader and writer: strings stored as
 * datasets (fixed- or variable-length on read, variable-length UTF-8 on
 * write), float32 / int64 arrays, and scalars. HDF5 converts float64 to
 * float32 and narrower integers to int64 on read and decompresses deflate
 * chunks transparently, so callers never see the stored type.
 *
 * Every failure sets nc_last_error() naming the dataset; callers add the
 * file and node with nc_error_prefix(). Nothing here prints: wrap calls in
 * nc_h5_quiet_begin/end so HDF5's own error stack stays silent. */
#ifndef NC_EXPORT_H5IO_H
#define NC_EXPORT_H5IO_H

#include <hdf5.h>

#include "snn/base/tensor.h"

/* A dataset read is bounded by nc_limits' max_tensor_bytes (a compressed
 * dataset can claim far more than the file size) and strings by its
 * max_string_len, both checked before allocating. */

typedef struct nc_h5_quiet {
    H5E_auto2_t fn;
    void *data;
} nc_h5_quiet;
/* Turns HDF5's automatic error printing off; end restores what was there. */
void nc_h5_quiet_begin(nc_h5_quiet *q);
void nc_h5_quiet_end(const nc_h5_quiet *q);

/* 1 if loc has a link called name (no error set otherwise). */
int nc_h5_exists(hid_t loc, const char *name);
/* 1 if name under loc is a group. */
int nc_h5_is_group(hid_t loc, const char *name);

/* 1 if name under loc is a dataset of strings. */
int nc_h5_is_string(hid_t loc, const char *name);

/* Rank and shape of a dataset; rank > NC_MAX_DIMS is an error. */
nc_status nc_h5_shape(hid_t loc, const char *name, int *ndim, int64_t shape[NC_MAX_DIMS]);

/* A scalar (or 1-element) string dataset, fixed- or variable-length. The
 * caller frees *out with nc_free. */
nc_status nc_h5_read_string(hid_t loc, const char *name, char **out);
/* An array of strings of any rank: *n strings in C order, shape in
 * ndim/shape. Free with nc_h5_free_strings. */
nc_status nc_h5_read_strings(hid_t loc, const char *name, int *ndim, int64_t shape[NC_MAX_DIMS],
                             int64_t *n, char ***out);
void nc_h5_free_strings(char **s, int64_t n);

/* Numeric dataset (integer or float class) as a float32 tensor of the same
 * shape (rank 0 for a scalar). The caller owns *out. */
nc_status nc_h5_read_f32(hid_t loc, const char *name, nc_tensor **out);
/* Integer dataset as int64 tensor. */
nc_status nc_h5_read_i64(hid_t loc, const char *name, nc_tensor **out);
/* Integer dataset as uint32 words (HDF5 converts other integer types), in
 * C order with rank and shape in ndim/shape. The caller frees *out with
 * nc_free. */
nc_status nc_h5_read_u32(hid_t loc, const char *name, int *ndim, int64_t shape[NC_MAX_DIMS], uint32_t **out);
/* Integer or float dataset as doubles (for scalar options). */
nc_status nc_h5_read_f64_scalar(hid_t loc, const char *name, double *out);

nc_status nc_h5_write_string(hid_t loc, const char *name, const char *s);
/* A (rows, cols) dataset of variable-length UTF-8 strings, row-major. */
nc_status nc_h5_write_strings(hid_t loc, const char *name, int64_t rows, int64_t cols,
                              const char *const *s);
nc_status nc_h5_write_f32(hid_t loc, const char *name, int ndim, const int64_t *shape,
                          const float *data);
nc_status nc_h5_write_i64(hid_t loc, const char *name, int ndim, const int64_t *shape,
                          const int64_t *data);
/* 1 if this HDF5 library has the deflate and shuffle filters that
 * nc_h5_write_u32_deflate uses. */
int nc_h5_deflate_avail(void);
/* A uint32 array of rank >= 1, stored in chunks of about 1 MiB through the
 * shuffle and deflate filters: for data that is mostly zero words. */
nc_status nc_h5_write_u32_deflate(hid_t loc, const char *name, int ndim, const int64_t *shape,
                                  const uint32_t *data);
/* The same for float32 (weights that are mostly zero: spelled-out groups,
 * placement convolutions of the standard NIR graph). */
nc_status nc_h5_write_f32_deflate(hid_t loc, const char *name, int ndim, const int64_t *shape, const float *data);
nc_status nc_h5_write_i64_scalar(hid_t loc, const char *name, int64_t v);
nc_status nc_h5_write_f64_scalar(hid_t loc, const char *name, double v);

#endif
