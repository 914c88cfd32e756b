// The CPU harness's runtime state shared by its parts: device allocations
// (memory.cc), the stream queues (streams.cc), kernels (blocks.cc) and the
// cuBLAS / cuSPARSE stand-ins (blas.cc).
#ifndef NC_TESTS_CUDA_HOST_STATE_H
#define NC_TESTS_CUDA_HOST_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

namespace nc_host {

// ---- errors: a message on stderr (the harness's report), then the error
// that the CUDA call returns; sticky errors poison every later call, as a
// failed kernel does on a GPU.
void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void set_sticky(cudaError_t e);
cudaError_t sticky();
cudaError_t set_last(cudaError_t e); // returns e

// ---- device memory
struct allocation {
    char *data;
    size_t size;
};
// The allocation holding [p, p + n) (n = 0: p may be its end), or null.
const allocation *find_alloc(const void *p, size_t n = 1);
// Checks the canaries around a's data; false (reported) when one was overwritten.
bool check_canaries(const allocation *a, const char *when);
bool is_device(const void *p);

// ---- stream queues: every device operation is queued on its stream and
// runs later, at a synchronisation, in an order the stream rules allow
// (kernels on streams that do not wait for the legacy stream run before
// its pending copies), so missing ordering shows.
struct device_op {
    std::string what;                 // for reports: "kernel x (file:line)", "cudaMemcpy H2D"
    std::vector<const void *> uses;   // device pointers it reads or writes
    std::function<void()> run;
};
void enqueue(cudaStream_t s, device_op op);
// Runs the queued operations that `s`'s pending work depends on (all of
// them for s == null and all_streams).
void drain(cudaStream_t s, bool all_streams);

// ---- kernels (blocks.cc)
struct launch_info;
struct kernel_call;
void run_kernel(const launch_info &li, kernel_call *call);
extern const launch_info *g_running; // the kernel executing now, for reports

} // namespace nc_host

#endif
