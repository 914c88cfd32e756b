/* Numeric HDF5 datasets as a data source ("file.h5:/path/to/dataset").
 *
 * HDF5 converts the stored type to the one we ask for and undoes compression
 * filters itself; what is left to us is choosing the target dtype with the
 * same rules as npy and IDX (nc_data_pick_dtype), bounding memory before
 * trusting a shape, and keeping HDF5's own error printing quiet. This file
 * uses the HDF5 API directly rather than export/data/h5io.h: snn/ sits below
 * export/ in the dependency order. */
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "snn/base/alloc.h"
#include "data_io.h"
#include "snn/base/isolate.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

/* Deflate cannot expand data by more than about 1032:1 (the bound the npy
 * and IDX readers use for gzip), so a dataset whose stored bytes are fewer
 * than its claimed size over this is refused before we allocate the claim. */
#define H5_MAX_RATIO 1032

int nc_h5_is_magic(const unsigned char magic[4])
{
    return magic[0] == 0x89 && magic[1] == 'H' && magic[2] == 'D' && magic[3] == 'F';
}

typedef struct root_names {
    char text[200];
    int count;
} root_names;

static herr_t add_name(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    root_names *r = data;
    H5O_info_t oi;
    if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0 ||
        oi.type != H5O_TYPE_DATASET)
        return 0;
    size_t len = strlen(r->text);
    if (r->count == 8) {
        snprintf(r->text + len, sizeof r->text - len, ", ...");
        return 1;
    }
    snprintf(r->text + len, sizeof r->text - len, "%s/%s", r->count ? ", " : "", name);
    r->count++;
    return 0;
}

/* "; datasets at its root: /x, /y" or "; no datasets at its root", for
 * messages that must tell the user what to name instead. */
static const char *root_hint(hid_t f, char *buf, size_t len)
{
    root_names r;
    memset(&r, 0, sizeof r);
    hsize_t idx = 0;
    H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, &idx, add_name, &r);
    if (r.count)
        snprintf(buf, len, "; datasets at its root: %s", r.text);
    else
        snprintf(buf, len, "; no datasets at its root");
    return buf;
}

/* How the dataset's type is stored, in nc_elem_format terms; an error for
 * strings and everything that is not a plain integer or float. */
static nc_status elem_format(hid_t ft, const char *dset, nc_elem_format *f)
{
    memset(f, 0, sizeof *f);
    H5T_class_t cls = H5Tget_class(ft);
    size_t size = H5Tget_size(ft);
    if (cls == H5T_STRING)
        return nc_errorf(NC_ERR_UNSUPPORTED, "dataset '%s' holds strings; a numeric array was "
                                             "expected", dset);
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || (size != 1 && size != 2 && size != 4 && size != 8))
        return nc_errorf(NC_ERR_UNSUPPORTED, "dataset '%s' holds an HDF5 type of class %d and "
                                             "%zu bytes; integer or float data was expected",
                         dset, (int)cls, size);
    f->size = (int)size;
    if (cls == H5T_FLOAT) {
        if (size < 4)
            return nc_errorf(NC_ERR_UNSUPPORTED, "dataset '%s' holds %zu-byte floats; float32 "
                                                 "or float64 was expected", dset, size);
        f->kind = NC_ELEM_FLOAT;
        snprintf(f->name, sizeof f->name, "float%zu", 8 * size);
    } else {
        int is_signed = H5Tget_sign(ft) == H5T_SGN_2;
        f->kind = is_signed ? NC_ELEM_INT : NC_ELEM_UINT;
        snprintf(f->name, sizeof f->name, "%sint%zu", is_signed ? "" : "u", 8 * size);
    }
    return NC_OK;
}

nc_status nc_h5_check_storage(hid_t ds, hid_t ft, int64_t numel, const char *dset)
{
    hid_t dcpl = H5Dget_create_plist(ds);
    if (dcpl < 0)
        return nc_errorf(NC_ERR_PARSE, "dataset '%s' has an unreadable layout", dset);
    H5D_layout_t layout = H5Pget_layout(dcpl);
    int filtered = H5Pget_nfilters(dcpl) > 0;
    H5Pclose(dcpl);
    H5T_class_t cls = H5Tget_class(ft);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT && !(cls == H5T_STRING && H5Tis_variable_str(ft) == 0))
        return NC_OK;
    uint64_t want = (uint64_t)numel * (uint64_t)H5Tget_size(ft);
    uint64_t have = (uint64_t)H5Dget_storage_size(ds);
    if (layout == H5D_CHUNKED) {
        /* the most the stored chunks can hold; edge chunks only add to it */
        uint64_t can = filtered ? have * NC_DEFLATE_MAX_RATIO : have;
        if (want <= can)
            return NC_OK;
        return nc_errorf(NC_ERR_PARSE, "dataset '%s' declares %lld elements (%llu bytes) but stores %llu bytes "
                         "in %s chunks, which cannot hold them (a corrupt or hostile file)", dset,
                         (long long)numel, (unsigned long long)want, (unsigned long long)have,
                         filtered ? "compressed" : "uncompressed");
    }
    if (layout != H5D_COMPACT && layout != H5D_CONTIGUOUS)
        return NC_OK;
    /* a contiguous dataset never written has no storage: HDF5 reads the fill value */
    if (have == want || (have == 0 && layout == H5D_CONTIGUOUS))
        return NC_OK;
    return nc_errorf(NC_ERR_PARSE, "dataset '%s' stores %llu bytes, but its shape and type need %llu "
                     "(a corrupt file)", dset, (unsigned long long)have, (unsigned long long)want);
}

/* h5py's lzf and other plugin filters are not in the C library: say which
 * filter is missing, rather than that the read failed. */
static nc_status check_filters(hid_t ds, const char *dset)
{
    hid_t dcpl = H5Dget_create_plist(ds);
    if (dcpl < 0)
        return NC_OK; /* the read itself will report the problem */
    nc_status st = NC_OK;
    int n = H5Pget_nfilters(dcpl);
    for (int i = 0; i < n && st == NC_OK; i++) {
        unsigned flags = 0, cd[8];
        size_t ncd = sizeof cd / sizeof cd[0];
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        if (id >= 0 && H5Zfilter_avail(id) <= 0)
            st = nc_errorf(NC_ERR_UNSUPPORTED, "dataset '%s' is compressed with HDF5 filter %d%s%s%s, "
                                               "which this HDF5 library lacks; store it with gzip "
                                               "(h5py: compression='gzip') or uncompressed",
                           dset, (int)id, name[0] ? " (" : "", name, name[0] ? ")" : "");
    }
    H5Pclose(dcpl);
    return st;
}

static nc_status read_dataset(hid_t f, const char *dset, nc_dtype want, nc_tensor **out)
{
    char hint[260];
    /* H5Lexists fails (rather than answering 0) when a group on the way is
     * missing, so anything but a plain yes counts as absent. */
    if (strcmp(dset, "/") == 0 || H5Lexists(f, dset, H5P_DEFAULT) <= 0)
        return nc_errorf(NC_ERR_IO, "the file has no dataset '%s'%s", dset,
                         root_hint(f, hint, sizeof hint));
    H5O_info_t oi;
    if (H5Oget_info_by_name(f, dset, &oi, H5P_DEFAULT) < 0)
        return nc_errorf(NC_ERR_IO, "'%s' cannot be opened (a dangling link?)", dset);
    if (oi.type != H5O_TYPE_DATASET)
        return nc_errorf(NC_ERR_INVALID_ARG, "'%s' is %s, not a dataset%s", dset,
                         oi.type == H5O_TYPE_GROUP ? "a group" : "a named type",
                         root_hint(f, hint, sizeof hint));

    nc_status st = NC_OK;
    nc_tensor *t = NULL;
    hid_t ft = H5I_INVALID_HID, sp = H5I_INVALID_HID;
    hid_t ds = H5Dopen2(f, dset, H5P_DEFAULT);
    if (ds < 0)
        return nc_errorf(NC_ERR_PARSE, "dataset '%s' cannot be opened", dset);
    ft = H5Dget_type(ds);
    sp = H5Dget_space(ds);
    nc_elem_format fmt;
    if (ft < 0 || sp < 0) {
        st = nc_errorf(NC_ERR_PARSE, "dataset '%s' has an unreadable type or shape", dset);
        goto done;
    }
    if ((st = elem_format(ft, dset, &fmt)) != NC_OK)
        goto done;
    H5S_class_t scls = H5Sget_simple_extent_type(sp);
    int ndim = H5Sget_simple_extent_ndims(sp);
    if (scls == H5S_NULL || ndim < 0) {
        st = nc_errorf(NC_ERR_PARSE, "dataset '%s' has no data (a null dataspace)", dset);
        goto done;
    }
    if (ndim > NC_MAX_DIMS) {
        st = nc_errorf(NC_ERR_LIMIT, "dataset '%s' has rank %d; at most %d dimensions are "
                                     "supported", dset, ndim, NC_MAX_DIMS);
        goto done;
    }
    hsize_t dims[NC_MAX_DIMS];
    int64_t shape[NC_MAX_DIMS];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    for (int d = 0; d < ndim; d++)
        shape[d] = dims[d] > (hsize_t)INT64_MAX ? -1 : (int64_t)dims[d];
    char sb[200];
    nc_shape_str(ndim, shape, sb, sizeof sb);
    int64_t numel, bytes;
    if (!nc_numel_checked(ndim, shape, &numel) || !nc_mul_i64(numel, fmt.size, &bytes)) {
        st = nc_errorf(NC_ERR_LIMIT, "dataset '%s' declares shape %s, whose size overflows", dset, sb);
        goto done;
    }
    int64_t stored = (int64_t)H5Dget_storage_size(ds);
    if (bytes / H5_MAX_RATIO > stored) {
        st = nc_errorf(NC_ERR_PARSE, "dataset '%s' declares shape %s of %s (%lld bytes) but "
                                     "stores only %lld bytes", dset, sb, fmt.name,
                       (long long)bytes, (long long)stored);
        goto done;
    }
    if ((st = check_filters(ds, dset)) != NC_OK || (st = nc_h5_check_storage(ds, ft, numel, dset)) != NC_OK)
        goto done;
    nc_dtype to;
    if ((st = nc_data_pick_dtype(&fmt, want, &to)) != NC_OK) {
        nc_error_prefix("dataset '%s'", dset);
        goto done;
    }
    char what[160];
    snprintf(what, sizeof what, "dataset '%.120s'", dset);
    if ((st = nc_check_tensor_size(what, ndim, shape, nc_dtype_size(to), NULL)) != NC_OK)
        goto done;
    if (!(t = nc_tensor_new(to, ndim, shape))) {
        st = NC_ERR_NOMEM;
        goto done;
    }
    hid_t mt = to == NC_DTYPE_F32 ? H5T_NATIVE_FLOAT
               : to == NC_DTYPE_U8 ? H5T_NATIVE_UINT8 : H5T_NATIVE_INT64;
    if (numel > 0 && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0)
        st = nc_errorf(NC_ERR_PARSE, "dataset '%s' (shape %s of %s) could not be read: the file "
                                     "is corrupt, or it needs a compression filter this HDF5 "
                                     "lacks", dset, sb, fmt.name);
done:
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    H5Dclose(ds);
    if (st != NC_OK) {
        nc_tensor_free(t);
        return st;
    }
    *out = t;
    return NC_OK;
}

typedef struct preflight_args {
    const char *file, *dset;
    nc_dtype want;
} preflight_args;

/* The whole read, in the isolating child (isolate.h). */
static nc_status preflight_load(void *arg)
{
    const preflight_args *a = arg;
    nc_tensor *t = NULL;
    return nc_data_load_h5(a->file, a->dset, a->want, &t);
}

nc_status nc_data_load_h5(const char *file, const char *dset, nc_dtype want, nc_tensor **out)
{
    preflight_args pa = {file, dset, want};
    nc_status pst = nc_isolated_preflight(file, preflight_load, &pa);
    if (pst != NC_OK)
        return pst;
    H5E_auto2_t efn = NULL;
    void *edata = NULL;
    H5Eget_auto2(H5E_DEFAULT, &efn, &edata);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    nc_status st;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* Strong close: closing the file closes anything an error path left open. */
    if (fapl >= 0)
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    htri_t is = H5Fis_hdf5(file);
    hid_t f = is > 0 ? H5Fopen(file, H5F_ACC_RDONLY, fapl) : H5I_INVALID_HID;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (is < 0) {
        st = nc_errorf(NC_ERR_IO, "cannot open the file");
    } else if (is == 0) {
        st = nc_errorf(NC_ERR_PARSE, "not an HDF5 file, so ':%s' cannot name a dataset in it", dset);
    } else if (f < 0) {
        st = nc_errorf(NC_ERR_PARSE, "the HDF5 file cannot be opened (corrupt or truncated?)");
    } else {
        st = read_dataset(f, dset, want, out);
        H5Fclose(f);
    }
    H5Eset_auto2(H5E_DEFAULT, efn, edata);
    return st;
}

nc_status nc_data_h5_hint(const char *file)
{
    H5E_auto2_t efn = NULL;
    void *edata = NULL;
    H5Eget_auto2(H5E_DEFAULT, &efn, &edata);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char hint[260] = "";
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
        root_hint(f, hint, sizeof hint);
        H5Fclose(f);
    }
    H5Eset_auto2(H5E_DEFAULT, efn, edata);
    return nc_errorf(NC_ERR_INVALID_ARG, "an HDF5 file: name the dataset to read as "
                                         "FILE:/path/to/dataset%s", hint);
}
