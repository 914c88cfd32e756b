// Device discovery for the CUDA backend, in the CUDA module (built whenever
// CMake finds nvcc, so the CUDA build path is exercised in every build that
// can compile it). nc_cuda_probe is the module's probe (snn/backends/module.h):
// the core's nc_cuda_device_count and its backend listing call it.
#include <stdio.h>

#include <cuda_runtime.h>

extern "C" {
#include "neuroc/neuroc.h"
#include "snn/base/error.h"

extern "C" int nc_dist_device_for_process(int count);
extern "C" nc_status nc_cuda_probe(int *count);
}

// A kernel that must run correctly for a device to count as usable: a driver
// that reports devices but cannot launch is treated as no device.
__global__ static void nc_cuda_probe_kernel(int *flag) { *flag = 42; }

// The number of usable devices, with the bare reason when there is none
// ("no CUDA device (...)"); makes this process's device current.
extern "C" nc_status nc_cuda_probe(int *count)
{
    if (!count)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_cuda_device_count: count is NULL");
    *count = 0;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        const char *why = e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports none";
        cudaGetLastError(); // clear the sticky error for later calls
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "no CUDA device (%s)", why);
    }
    // under mpirun each rank of a node takes its own GPU (by local rank)
    int dev = nc_dist_device_for_process(n);
    if ((e = cudaSetDevice(dev)) != cudaSuccess)
        return nc_errorf(NC_ERR_DEVICE, "cudaSetDevice(%d) of %d devices: %s", dev, n, cudaGetErrorString(e));
    int *d_flag = nullptr, h_flag = 0;
    if ((e = cudaMalloc(&d_flag, sizeof(int))) != cudaSuccess)
        return nc_errorf(NC_ERR_DEVICE, "cudaMalloc: %s", cudaGetErrorString(e));
    nc_cuda_probe_kernel<<<1, 1>>>(d_flag);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpy(&h_flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d_flag);
    if (e != cudaSuccess)
        return nc_errorf(NC_ERR_DEVICE, "CUDA probe kernel: %s", cudaGetErrorString(e));
    if (h_flag != 42)
        return nc_errorf(NC_ERR_DEVICE, "CUDA probe kernel returned %d, expected 42", h_flag);
    *count = n;
    return NC_OK;
}

// The public function's message, as the core's nc_cuda_device_count gives it
// (the cuda backend's check() calls this one, inside the module).
extern "C" nc_status nc_cuda_device_count(int *count)
{
    nc_status st = nc_cuda_probe(count);
    if (st == NC_ERR_BACKEND_UNAVAILABLE) {
        char why[512];
        snprintf(why, sizeof why, "%s", nc_last_error());
        return nc_errorf(st, "CUDA backend unavailable: %s", why);
    }
    return st;
}
