/* Stands in for the CUDA unit in builds without nvcc. */
#include "neuroc/neuroc.h"
#include "snn/error.h"

nc_status nc_cuda_device_count(int *count)
{
    if (count)
        *count = 0;
    return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE,
                     "CUDA backend unavailable: neuroc was built without CUDA (no nvcc found)");
}
