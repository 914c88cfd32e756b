/* STUB: to be replaced by the npy / IDX reader and writer. */
#include "neuroc/neuroc.h"
#include "error.h"

nc_status nc_data_load(const char *path, nc_dtype want, nc_tensor **out)
{
    (void)path; (void)want;
    if (out) *out = NULL;
    return nc_errorf(NC_ERR_UNSUPPORTED, "not implemented yet");
}

nc_status nc_npy_save(const char *path, const nc_tensor *t)
{
    (void)path; (void)t;
    return nc_errorf(NC_ERR_UNSUPPORTED, "not implemented yet");
}
