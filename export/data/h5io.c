/* HDF5 helpers shared by the NIR reader and writer (export/data/h5io.h). */
#include "h5io.h"

#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "data_io.h"
#include "snn/base/error.h"

void nc_h5_quiet_begin(nc_h5_quiet *q)
{
    q->fn = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void nc_h5_quiet_end(const nc_h5_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

static herr_t find_alloc_failure(unsigned n, const H5E_error2_t *e, void *found)
{
    (void)n;
    if (e->min_num == H5E_CANTALLOC || e->min_num == H5E_NOSPACE)
        *(int *)found = 1;
    return 0;
}

int nc_h5_out_of_memory(void)
{
    int found = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_alloc_failure, &found);
    return found;
}

static nc_status out_of_memory(const char *name)
{
    return nc_errorf(NC_ERR_NOMEM, "out of memory reading dataset '%s' (HDF5 could not allocate)", name);
}

/* The error of a failed H5Dread of dataset name: out of memory, or `why`. */
static nc_status read_failed(const char *name, const char *why)
{
    if (nc_h5_out_of_memory())
        return out_of_memory(name);
    return nc_errorf(NC_ERR_PARSE, "dataset '%s' could not be read%s", name, why);
}

int nc_h5_exists(hid_t loc, const char *name)
{
    return H5Lexists(loc, name, H5P_DEFAULT) > 0;
}

int nc_h5_is_group(hid_t loc, const char *name)
{
    if (!nc_h5_exists(loc, name))
        return 0;
    H5O_info_t info;
    if (H5Oget_info_by_name(loc, name, &info, H5P_DEFAULT) < 0)
        return 0;
    return info.type == H5O_TYPE_GROUP;
}

int nc_h5_is_string(hid_t loc, const char *name)
{
    if (!nc_h5_exists(loc, name))
        return 0;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0)
        return 0;
    hid_t t = H5Dget_type(ds);
    int r = t >= 0 && H5Tget_class(t) == H5T_STRING;
    if (t >= 0)
        H5Tclose(t);
    H5Dclose(ds);
    return r;
}

/* Opens a dataset and its dataspace; reads rank and shape, and checks that
 * numel elements of elem_size bytes are within the tensor size limit before
 * anyone allocates for them. */
static nc_status open_ds(hid_t loc, const char *name, size_t elem_size, hid_t *ds, hid_t *sp,
                         int *ndim, int64_t shape[NC_MAX_DIMS], int64_t *numel)
{
    *ds = *sp = H5I_INVALID_HID;
    if (!nc_h5_exists(loc, name))
        return nc_errorf(NC_ERR_PARSE, "dataset '%s' is missing", name);
    *ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (*ds < 0)
        return nc_h5_out_of_memory() ? out_of_memory(name) : nc_errorf(NC_ERR_PARSE, "'%s' is not a dataset", name);
    *sp = H5Dget_space(*ds);
    int r = *sp >= 0 ? H5Sget_simple_extent_ndims(*sp) : -1;
    if (r < 0 || H5Sget_simple_extent_type(*sp) == H5S_NULL) {
        H5Sclose(*sp);
        H5Dclose(*ds);
        *ds = *sp = H5I_INVALID_HID;
        return nc_errorf(NC_ERR_PARSE, "dataset '%s' has no readable dataspace", name);
    }
    if (r > NC_MAX_DIMS) {
        H5Sclose(*sp);
        H5Dclose(*ds);
        *ds = *sp = H5I_INVALID_HID;
        return nc_errorf(NC_ERR_LIMIT, "dataset '%s' has rank %d (at most %d supported)", name, r,
                         NC_MAX_DIMS);
    }
    hsize_t dims[NC_MAX_DIMS];
    H5Sget_simple_extent_dims(*sp, dims, NULL);
    *ndim = r;
    for (int d = 0; d < r; d++)
        shape[d] = (int64_t)dims[d];
    char what[160];
    snprintf(what, sizeof what, "dataset '%.120s'", name);
    nc_status st = nc_check_tensor_size(what, r, shape, elem_size, NULL);
    if (st == NC_OK && !nc_numel_checked(r, shape, numel))
        st = nc_errorf(NC_ERR_LIMIT, "dataset '%s' is too large", name);
    if (st == NC_OK) {
        hid_t ft = H5Dget_type(*ds);
        st = ft < 0 ? nc_errorf(NC_ERR_PARSE, "dataset '%s' has an unreadable type", name)
                    : nc_h5_check_storage(*ds, ft, *numel, name);
        if (ft >= 0)
            H5Tclose(ft);
    }
    if (st != NC_OK) {
        H5Sclose(*sp);
        H5Dclose(*ds);
        *ds = *sp = H5I_INVALID_HID;
    }
    return st;
}

static void close_ds(hid_t ds, hid_t sp)
{
    if (sp >= 0)
        H5Sclose(sp);
    if (ds >= 0)
        H5Dclose(ds);
}

nc_status nc_h5_shape(hid_t loc, const char *name, int *ndim, int64_t shape[NC_MAX_DIMS])
{
    hid_t ds, sp;
    int64_t n;
    nc_status st = open_ds(loc, name, 1, &ds, &sp, ndim, shape, &n);
    close_ds(ds, sp);
    return st;
}

void nc_h5_free_strings(char **s, int64_t n)
{
    if (!s)
        return;
    for (int64_t i = 0; i < n; i++)
        nc_free(s[i]);
    nc_free(s);
}

/* Copies up to len bytes of a fixed-length string, stopping at NUL and
 * dropping the trailing blanks of space-padded strings. */
static char *dup_fixed(const char *p, size_t len, int spacepad)
{
    size_t n = 0;
    while (n < len && p[n])
        n++;
    while (spacepad && n > 0 && p[n - 1] == ' ')
        n--;
    char *s = nc_malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

nc_status nc_h5_read_strings(hid_t loc, const char *name, int *ndim, int64_t shape[NC_MAX_DIMS],
                             int64_t *n_out, char ***out)
{
    *out = NULL;
    *n_out = 0;
    hid_t ds, sp, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    int64_t n;
    nc_status st = open_ds(loc, name, sizeof(char *), &ds, &sp, ndim, shape, &n);
    if (st != NC_OK)
        return st;
    char **res = NULL;
    void *buf = NULL;
    int var = 0;
    ft = H5Dget_type(ds);
    if (ft < 0 || H5Tget_class(ft) != H5T_STRING) {
        st = nc_errorf(NC_ERR_PARSE, "dataset '%s' does not hold strings", name);
        goto done;
    }
    res = nc_calloc((size_t)(n > 0 ? n : 1), sizeof *res);
    if (!res) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory reading '%s'", name);
        goto done;
    }
    if (n == 0)
        goto done;
    var = H5Tis_variable_str(ft) > 0;
    mt = H5Tcopy(H5T_C_S1);
    size_t size = var ? sizeof(char *) : H5Tget_size(ft);
    if (mt < 0 || size == 0 || H5Tset_size(mt, var ? H5T_VARIABLE : size) < 0 ||
        H5Tset_cset(mt, H5Tget_cset(ft)) < 0 || (!var && H5Tset_strpad(mt, H5Tget_strpad(ft)) < 0)) {
        st = nc_errorf(NC_ERR_PARSE, "dataset '%s': unreadable string type", name);
        goto done;
    }
    int64_t bytes;
    char what[160];
    snprintf(what, sizeof what, "string dataset '%.120s'", name);
    if ((!var && (st = nc_check_string_len(what, size)) != NC_OK) ||
        (st = nc_check_tensor_size(what, *ndim, shape, size, &bytes)) != NC_OK)
        goto done;
    buf = nc_calloc((size_t)bytes, 1);
    if (!buf) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory reading '%s'", name);
        goto done;
    }
    if (H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        st = read_failed(name, "");
        goto done;
    }
    int spacepad = !var && H5Tget_strpad(ft) == H5T_STR_SPACEPAD;
    for (int64_t i = 0; i < n; i++) {
        if (var) {
            char *p = ((char **)buf)[i];
            nc_status sl = nc_check_string_len(what, p ? strlen(p) : 0);
            if (sl != NC_OK) {
                st = sl;
                continue;
            }
            res[i] = nc_strdup(p ? p : "");
        } else {
            res[i] = dup_fixed((const char *)buf + i * (int64_t)size, size, spacepad);
        }
        if (!res[i] && st == NC_OK)
            st = nc_errorf(NC_ERR_NOMEM, "out of memory reading '%s'", name);
    }
done:
    /* HDF5 allocated the variable-length strings, also those of a read that
     * failed part way (buf was zeroed, so the rest are NULL). */
    if (var && buf)
        for (int64_t i = 0; i < n; i++)
            if (((char **)buf)[i])
                H5free_memory(((char **)buf)[i]);
    nc_free(buf);
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    close_ds(ds, sp);
    if (st != NC_OK) {
        nc_h5_free_strings(res, n);
        return st;
    }
    *out = res;
    *n_out = n;
    return NC_OK;
}

nc_status nc_h5_read_string(hid_t loc, const char *name, char **out)
{
    *out = NULL;
    int ndim;
    int64_t shape[NC_MAX_DIMS], n;
    char **s;
    nc_status st = nc_h5_read_strings(loc, name, &ndim, shape, &n, &s);
    if (st != NC_OK)
        return st;
    if (n != 1) {
        nc_h5_free_strings(s, n);
        return nc_errorf(NC_ERR_PARSE, "dataset '%s' holds %lld strings, expected one", name, (long long)n);
    }
    *out = s[0];
    nc_free(s);
    return NC_OK;
}

/* Opens a numeric dataset: integer class, or also float unless int_only. */
static nc_status open_numeric(hid_t loc, const char *name, size_t elem_size, int int_only, hid_t *ds, hid_t *sp,
                              int *ndim, int64_t shape[NC_MAX_DIMS], int64_t *n)
{
    nc_status st = open_ds(loc, name, elem_size, ds, sp, ndim, shape, n);
    if (st != NC_OK)
        return st;
    hid_t ft = H5Dget_type(*ds);
    H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if (ft >= 0)
        H5Tclose(ft);
    if (cls == H5T_INTEGER || (!int_only && cls == H5T_FLOAT))
        return NC_OK;
    close_ds(*ds, *sp);
    return nc_errorf(NC_ERR_PARSE, "dataset '%s' is not %s", name, int_only ? "an integer array" : "a numeric array");
}

static herr_t find_filter_failure(unsigned n, const H5E_error2_t *e, void *found)
{
    (void)n;
    if (e->maj_num == H5E_PLINE)
        *(int *)found = 1;
    return 0;
}

/* After a read that failed inside a filter (the error stack still
 * intact): 1 if the filter's working memory cannot be had now. HDF5's
 * deflate filter reports zlib's Z_MEM_ERROR (its window is allocated inside
 * inflate()) as any other inflate failure, so the stack cannot tell a
 * corrupt chunk from a lack of memory; an allocation of what the filter
 * holds at most (the stored chunk, an output buffer that doubles up to
 * twice the chunk, zlib's window and state: 3 chunks and 64 KB) can. */
static int filter_out_of_memory(hid_t ds)
{
    int in_filter = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_filter_failure, &in_filter);
    if (!in_filter)
        return 0;
    hid_t dcpl = H5Dget_create_plist(ds), ft = H5Dget_type(ds);
    hsize_t dims[NC_MAX_DIMS];
    int r = dcpl >= 0 ? H5Pget_chunk(dcpl, NC_MAX_DIMS, dims) : -1;
    double bytes = ft >= 0 ? (double)H5Tget_size(ft) : 0;
    for (int d = 0; d < r; d++)
        bytes *= (double)dims[d];
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (ft >= 0)
        H5Tclose(ft);
    if (r <= 0 || !(bytes > 0) || bytes > 4294967296.0) /* HDF5 chunks are under 4 GiB */
        return 0;
    void *probe = nc_malloc((size_t)(3 * bytes) + 65536);
    nc_free(probe);
    return probe == NULL;
}

/* Reads n elements of an open dataset as memory type mt into buf, and
 * closes it. */
static nc_status read_all(hid_t ds, hid_t sp, hid_t mt, int64_t n, void *buf, const char *name)
{
    herr_t e = n > 0 ? H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : 0;
    nc_status st = NC_OK;
    if (e < 0 && !nc_h5_out_of_memory() && filter_out_of_memory(ds))
        st = out_of_memory(name);
    else if (e < 0) /* (the stack is only cleared where it held no allocation failure) */
        st = read_failed(name, " (corrupt, or a compression filter this HDF5 lacks)");
    close_ds(ds, sp);
    return st;
}

static nc_status read_numeric(hid_t loc, const char *name, nc_dtype dt, nc_tensor **out)
{
    *out = NULL;
    hid_t ds, sp;
    int ndim;
    int64_t shape[NC_MAX_DIMS], n;
    nc_status st = open_numeric(loc, name, nc_dtype_size(dt), dt == NC_DTYPE_I64, &ds, &sp, &ndim, shape, &n);
    if (st != NC_OK)
        return st;
    nc_tensor *t = nc_tensor_new(dt, ndim, shape);
    if (!t) {
        close_ds(ds, sp);
        return nc_errorf(NC_ERR_NOMEM, "out of memory reading '%s'", name);
    }
    st = read_all(ds, sp, dt == NC_DTYPE_I64 ? H5T_NATIVE_INT64 : H5T_NATIVE_FLOAT, n, t->data, name);
    if (st != NC_OK) {
        nc_tensor_free(t);
        return st;
    }
    *out = t;
    return NC_OK;
}

nc_status nc_h5_read_f32(hid_t loc, const char *name, nc_tensor **out)
{
    return read_numeric(loc, name, NC_DTYPE_F32, out);
}

nc_status nc_h5_read_i64(hid_t loc, const char *name, nc_tensor **out)
{
    return read_numeric(loc, name, NC_DTYPE_I64, out);
}

nc_status nc_h5_read_u32(hid_t loc, const char *name, int *ndim, int64_t shape[NC_MAX_DIMS], uint32_t **out)
{
    *out = NULL;
    hid_t ds, sp;
    int64_t n;
    nc_status st = open_numeric(loc, name, sizeof **out, 1, &ds, &sp, ndim, shape, &n);
    if (st != NC_OK)
        return st;
    uint32_t *buf = nc_malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    if (!buf) {
        close_ds(ds, sp);
        return nc_errorf(NC_ERR_NOMEM, "out of memory reading '%s'", name);
    }
    if ((st = read_all(ds, sp, H5T_NATIVE_UINT32, n, buf, name)) != NC_OK) {
        nc_free(buf);
        return st;
    }
    *out = buf;
    return NC_OK;
}

nc_status nc_h5_read_f64_scalar(hid_t loc, const char *name, double *out)
{
    hid_t ds, sp;
    int ndim;
    int64_t shape[NC_MAX_DIMS], n;
    nc_status st = open_ds(loc, name, sizeof(double), &ds, &sp, &ndim, shape, &n);
    if (st != NC_OK)
        return st;
    hid_t ft = H5Dget_type(ds);
    H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if (ft >= 0)
        H5Tclose(ft);
    if (n != 1 || (cls != H5T_INTEGER && cls != H5T_FLOAT)) {
        close_ds(ds, sp);
        return nc_errorf(NC_ERR_PARSE, "dataset '%s' is not a numeric scalar", name);
    }
    herr_t e = H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
    st = e < 0 ? read_failed(name, "") : NC_OK;
    close_ds(ds, sp);
    return st;
}

/* ---- writing ---- */

static nc_status write_ds(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hid_t dcpl, int ndim,
                          const int64_t *shape, const void *data)
{
    hsize_t dims[NC_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        dims[d] = (hsize_t)shape[d];
    hid_t sp = ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(ndim, dims, NULL);
    /* no modification times in the file: the same network gives the same bytes */
    hid_t own = dcpl == H5P_DEFAULT ? H5Pcreate(H5P_DATASET_CREATE) : H5I_INVALID_HID;
    if (own >= 0)
        dcpl = own;
    if (dcpl == H5P_DEFAULT || H5Pset_obj_track_times(dcpl, 0) < 0) {
        if (own >= 0)
            H5Pclose(own);
        if (sp >= 0)
            H5Sclose(sp);
        return nc_errorf(NC_ERR_IO, "dataset '%s': could not set up its creation properties", name);
    }
    hid_t ds = sp >= 0 ? H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)
                       : H5I_INVALID_HID;
    if (own >= 0)
        H5Pclose(own);
    herr_t e = ds >= 0 ? H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : -1;
    if (ds >= 0 && H5Dclose(ds) < 0)
        e = -1;
    if (sp >= 0)
        H5Sclose(sp);
    return e < 0 ? nc_errorf(NC_ERR_IO, "could not write dataset '%s'", name) : NC_OK;
}

/* The string type h5py writes: variable length, UTF-8. */
static hid_t vlen_utf8(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

nc_status nc_h5_write_string(hid_t loc, const char *name, const char *s)
{
    hid_t t = vlen_utf8();
    if (t < 0)
        return nc_errorf(NC_ERR_IO, "could not make a string type for '%s'", name);
    nc_status st = write_ds(loc, name, t, t, H5P_DEFAULT, 0, NULL, &s);
    H5Tclose(t);
    return st;
}

nc_status nc_h5_write_strings(hid_t loc, const char *name, int64_t rows, int64_t cols,
                              const char *const *s)
{
    hid_t t = vlen_utf8();
    if (t < 0)
        return nc_errorf(NC_ERR_IO, "could not make a string type for '%s'", name);
    int64_t shape[2] = {rows, cols};
    /* HDF5 wants a buffer even for zero rows */
    const char *empty = "";
    nc_status st = write_ds(loc, name, t, t, H5P_DEFAULT, 2, shape, rows > 0 ? (const void *)s : (const void *)&empty);
    H5Tclose(t);
    return st;
}

nc_status nc_h5_write_f32(hid_t loc, const char *name, int ndim, const int64_t *shape,
                          const float *data)
{
    return write_ds(loc, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, H5P_DEFAULT, ndim, shape, data);
}

nc_status nc_h5_write_i64(hid_t loc, const char *name, int ndim, const int64_t *shape,
                          const int64_t *data)
{
    return write_ds(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, H5P_DEFAULT, ndim, shape, data);
}

nc_status nc_h5_write_i64_scalar(hid_t loc, const char *name, int64_t v)
{
    return write_ds(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, H5P_DEFAULT, 0, NULL, &v);
}

nc_status nc_h5_write_f64_scalar(hid_t loc, const char *name, double v)
{
    return write_ds(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, H5P_DEFAULT, 0, NULL, &v);
}

int nc_h5_deflate_avail(void)
{
    return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 && H5Zfilter_avail(H5Z_FILTER_SHUFFLE) > 0;
}

/* A chunked dataset of 4-byte words, shuffled and deflated. */
static nc_status write_deflate(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int ndim, const int64_t *shape,
                               const void *data)
{
    if (ndim < 1 || ndim > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_INVALID_ARG, "dataset '%s': a chunked dataset needs rank 1 to %d", name, NC_MAX_DIMS);
    /* chunks of about 1 MiB: whole trailing dimensions, then a part of the next */
    hsize_t chunk[NC_MAX_DIMS];
    int64_t room = ((int64_t)1 << 20) / 4;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t n = shape[d] > 0 ? shape[d] : 1, c = n < room ? n : room > 0 ? room : 1;
        chunk[d] = (hsize_t)c;
        room /= c;
    }
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0 || H5Pset_chunk(dcpl, ndim, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 6) < 0) {
        if (dcpl >= 0)
            H5Pclose(dcpl);
        return nc_errorf(NC_ERR_IO, "dataset '%s': could not set up chunking and compression", name);
    }
    nc_status st = write_ds(loc, name, ftype, mtype, dcpl, ndim, shape, data);
    H5Pclose(dcpl);
    return st;
}

nc_status nc_h5_write_u32_deflate(hid_t loc, const char *name, int ndim, const int64_t *shape, const uint32_t *data)
{
    return write_deflate(loc, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, ndim, shape, data);
}

nc_status nc_h5_write_f32_deflate(hid_t loc, const char *name, int ndim, const int64_t *shape, const float *data)
{
    return write_deflate(loc, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, ndim, shape, data);
}
