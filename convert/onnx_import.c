/* STUB: to be replaced by the ONNX importer. */
#include "neuroc/neuroc.h"
#include "snn/error.h"

nc_status nc_model_load_onnx(const char *path, const nc_load_options *opt, nc_model **out)
{
    (void)path; (void)opt;
    if (out) *out = NULL;
    return nc_errorf(NC_ERR_UNSUPPORTED, "not implemented yet");
}

nc_status nc_model_load_onnx_memory(const void *data, size_t size, const char *name,
                                    const nc_load_options *opt, nc_model **out)
{
    (void)data; (void)size; (void)name; (void)opt;
    if (out) *out = NULL;
    return nc_errorf(NC_ERR_UNSUPPORTED, "not implemented yet");
}
