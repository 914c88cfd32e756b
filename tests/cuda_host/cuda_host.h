// The CUDA device side for kernels compiled as host C++ (the CPU harness,
// tests/cuda_host/README.md): the qualifiers, the built-in indices, barriers,
// warp collectives and atomics, and the launch that replaces <<<...>>> (the
// build rewrites `k<<<cfg>>>(args)` into `NC_HOST_LAUNCH(k, cfg)(args)`,
// launch_rewrite.cmake). Each block's threads run as fibers on one OS
// thread (cuda_host_runtime.cc), so atomics are plain read-modify-writes and
// every collective is checked for the whole warp or block.
#ifndef NC_TESTS_CUDA_HOST_H
#define NC_TESTS_CUDA_HOST_H

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// Every __shared__ variable lands in one section, which the runtime fills
// with 0xFF at each block's start: a thread that reads shared memory before
// anyone wrote it reads garbage, as on a GPU.
#define __shared__ static __attribute__((section("nc_host_shared")))

#include <stdint.h>
#include <string.h>

// all of it, before the macros below (its templates name blockDim and such)
#include <cuda_runtime.h>

#include <tuple>
#include <type_traits>
#include <utility>

namespace nc_host {

extern uint3 g_thread_idx, g_block_idx; // of the fiber running now
extern dim3 g_block_dim, g_grid_dim;
// The __shared__ section of a module (its bounds, from the linker), filled
// with 0xFF at each block's start.
void register_shared(char *begin, char *end);

enum class op { ballot, shfl, shfl_down, shfl_up, shfl_xor, any, all, syncwarp };
// A warp collective: suspends the calling thread until every lane of its
// warp reached the same call (site) with a full mask, then returns this
// lane's result (value bits in, bits out).
uint64_t warp_collective(const char *site, op o, uint32_t mask, uint64_t value, int arg);
// __syncthreads: suspends until every thread of the block reached this site.
void barrier(const char *site);

// An entry for the launch queue: the kernel's name and where it was launched,
// its configuration, its pointer arguments (checked to be device memory) and
// the call itself.
struct launch_info {
    const char *name, *file;
    int line;
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
};
struct kernel_call {
    virtual ~kernel_call() {}
    virtual void run() = 0;
};
void launch(const launch_info &li, const void *const *ptrs, int n_ptrs, kernel_call *call);

template <class T> inline void collect_ptr(const void **, int &, const T &) {}
template <class T> inline void collect_ptr(const void **out, int &n, T *const &p) { out[n++] = (const void *)p; }

template <class F> struct launcher;
template <class... A> struct launcher<void (*)(A...)> {
    void (*fn)(A...);
    launch_info li;
    launcher(void (*f)(A...), const char *name, const char *file, int line, dim3 g, dim3 b, size_t sh = 0,
             cudaStream_t st = 0)
        : fn(f), li{name, file, line, g, b, sh, st} {}
    struct call : kernel_call {
        void (*fn)(A...);
        std::tuple<A...> args;
        call(void (*f)(A...), A... a) : fn(f), args(a...) {}
        void run() override { std::apply(fn, args); }
    };
    void operator()(A... a)
    {
        const void *ptrs[sizeof...(A) + 1];
        int n = 0;
        (collect_ptr(ptrs, n, a), ...);
        launch(li, ptrs, n, new call(fn, a...));
    }
};

template <class T> inline uint64_t to_bits(T v)
{
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    return b;
}
template <class T> inline T from_bits(uint64_t b)
{
    T v;
    memcpy(&v, &b, sizeof v);
    return v;
}

} // namespace nc_host

#define NC_HOST_STR2(x) #x
#define NC_HOST_STR(x) NC_HOST_STR2(x)
#define NC_HOST_SITE __FILE__ ":" NC_HOST_STR(__LINE__)
// k: a kernel, or a variable holding one (a template's instantiation: its name is the launch's)
#define NC_HOST_LAUNCH(k, ...) \
    nc_host::launcher<std::decay_t<decltype(k)>>(k, #k, __FILE__, __LINE__, __VA_ARGS__)

// Work a kernel reports (cuda_kernels.cu: taps visited, events looked at),
// summed per kernel name (nc_host_work in blocks.cc).
namespace nc_host {
extern uint64_t g_work;
}
#define NC_HOST_WORK(n) (nc_host::g_work += (uint64_t)(n))

#define threadIdx (nc_host::g_thread_idx)
#define blockIdx (nc_host::g_block_idx)
#define blockDim (nc_host::g_block_dim)
#define gridDim (nc_host::g_grid_dim)
#define warpSize 32

#define __syncthreads() nc_host::barrier(NC_HOST_SITE)
#define __syncwarp(m) ((void)nc_host::warp_collective(NC_HOST_SITE, nc_host::op::syncwarp, (m), 0, 0))
#define __ballot_sync(m, p) \
    ((unsigned)nc_host::warp_collective(NC_HOST_SITE, nc_host::op::ballot, (m), (p) ? 1 : 0, 0))
#define __any_sync(m, p) ((int)nc_host::warp_collective(NC_HOST_SITE, nc_host::op::any, (m), (p) ? 1 : 0, 0))
#define __all_sync(m, p) ((int)nc_host::warp_collective(NC_HOST_SITE, nc_host::op::all, (m), (p) ? 1 : 0, 0))
#define NC_HOST_SHFL(o, m, v, a)                                                                             \
    nc_host::from_bits<decltype(+(v))>(                                                                      \
        nc_host::warp_collective(NC_HOST_SITE, nc_host::op::o, (m), nc_host::to_bits(+(v)), (int)(a)))
#define __shfl_sync(m, v, l) NC_HOST_SHFL(shfl, m, v, l)
#define __shfl_down_sync(m, v, d) NC_HOST_SHFL(shfl_down, m, v, d)
#define __shfl_up_sync(m, v, d) NC_HOST_SHFL(shfl_up, m, v, d)
#define __shfl_xor_sync(m, v, d) NC_HOST_SHFL(shfl_xor, m, v, d)

extern "C" char __start_nc_host_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_nc_host_shared[] __attribute__((weak, visibility("hidden")));
namespace {
struct nc_host_shared_registration {
    nc_host_shared_registration() { nc_host::register_shared(__start_nc_host_shared, __stop_nc_host_shared); }
} nc_host_shared_registration_;
} // namespace

template <class T> inline T atomicAdd(T *p, T v)
{
    T old = *p;
    *p = old + v;
    return old;
}
template <class T> inline T atomicMax(T *p, T v)
{
    T old = *p;
    *p = old > v ? old : v;
    return old;
}
inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }

#endif
