/* The public CUDA device probe. The CUDA backend lives in the module
 * libneuroc_cuda.so (snn/backends/cuda: backend_cuda.c, the kernels,
 * cuda_device.cu), which the registry (registry.c) loads on first use, so
 * that the core links no CUDA library; the probe asks the small probe
 * module (libneuroc_cuda_probe.so: cuda_device.cu alone) through the
 * registry. In a build without CUDA the registry says so. */
#include "neuroc/neuroc.h"
#include "registry.h"
#include "snn/base/error.h"

nc_status nc_cuda_device_count(int *count)
{
    if (!count)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_cuda_device_count: count is NULL");
    *count = 0;
    nc_status st = nc_backend_probe("cuda", count); /* libneuroc_cuda_probe.so: cudart only */
    if (st == NC_ERR_BACKEND_UNAVAILABLE)
        nc_error_prefix("CUDA backend unavailable");
    return st;
}
