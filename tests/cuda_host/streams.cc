// Streams, copies, errors and the device of the CPU harness.
//
// Every device operation (kernel, copy, memset, GEMM, SpMM) is queued on its
// stream and runs at a synchronisation: cudaStreamSynchronize(s) runs what s
// waits for, cudaDeviceSynchronize and cudaFree everything, a synchronous
// copy to the host what the legacy stream waits for. The order follows the
// CUDA stream rules: a stream's operations in order; the legacy stream (0)
// waits for the earlier work of every blocking stream, and a blocking
// stream for the legacy stream's earlier work; a stream created with
// cudaStreamNonBlocking waits for no other. Among the operations allowed to
// run, those of other streams go before the legacy stream's, so a copy
// queued on the legacy stream that a non-blocking stream's kernel needs
// arrives too late; and an operation that runs while an earlier one touching
// the same allocation is still queued (unordered) is reported as a race.
// A host-to-device copy reads the host memory when it is called (it is
// staged, as pageable copies are); a device-to-host copy writes it when it
// runs, so reading it before a synchronisation reads stale memory.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <deque>

#include "cuda_host.h"
#include "host_state.h"

struct CUstream_st {
    bool non_blocking;
    int id;
};

namespace nc_host {

namespace {

cudaError_t g_sticky = cudaSuccess, g_last = cudaSuccess;
CUstream_st g_legacy = {false, 0};
int g_next_stream = 1;

struct queued {
    uint64_t seq;
    CUstream_st *s;
    device_op op;
    bool done, need;
};
std::deque<queued> g_queue; // issue order; done entries are popped from the front
uint64_t g_seq;

CUstream_st *resolve(cudaStream_t s)
{
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
        return &g_legacy;
    return s;
}

bool is_legacy(const CUstream_st *s) { return s == &g_legacy; }

// Whether b (issued after a) waits for a.
bool waits_for(const CUstream_st *b, const CUstream_st *a)
{
    if (a == b)
        return true;
    if (is_legacy(b))
        return !a->non_blocking;
    if (is_legacy(a))
        return !b->non_blocking;
    return false;
}

bool shares_allocation(const device_op &x, const device_op &y)
{
    for (const void *p : x.uses) {
        const allocation *a = find_alloc(p, 0);
        for (const void *q : y.uses)
            if (a && a == find_alloc(q, 0))
                return true;
    }
    return false;
}

void run_one(size_t k)
{
    queued &q = g_queue[k];
    q.done = true;
    if (g_sticky)
        return; // a failed device runs nothing more
    for (size_t j = 0; j < k; j++)
        if (!g_queue[j].done && shares_allocation(g_queue[j].op, q.op)) {
            report("cuda-host: race: %s (stream %d) runs before %s (stream %d), queued earlier on a stream it does "
                   "not wait for, and both use the same device allocation",
                   q.op.what.c_str(), q.s->id, g_queue[j].op.what.c_str(), g_queue[j].s->id);
            set_sticky(cudaErrorLaunchFailure);
            return;
        }
    device_op op = std::move(q.op);
    op.run();
}

} // namespace

void report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

void set_sticky(cudaError_t e)
{
    if (!g_sticky)
        g_sticky = e;
}
cudaError_t sticky() { return g_sticky; }
cudaError_t set_last(cudaError_t e)
{
    g_last = e;
    return e;
}

void enqueue(cudaStream_t s, device_op op)
{
    g_queue.push_back(queued{++g_seq, resolve(s), std::move(op), false, false});
    // NEUROC_CUDA_HOST_EAGER=1: run each operation as it is queued (the
    // order of one in-order stream), to tell an ordering fault from others
    static const bool eager = getenv("NEUROC_CUDA_HOST_EAGER") && atoi(getenv("NEUROC_CUDA_HOST_EAGER"));
    if (eager)
        drain(nullptr, true);
}

void drain(cudaStream_t s, bool all_streams)
{
    CUstream_st *target = all_streams ? nullptr : resolve(s);
    // the operations target's queued work waits for, directly or not:
    // walking back from the newest, each needed one pulls in what its
    // stream waits for (which depends on the streams only)
    std::vector<CUstream_st *> later; // the streams of the needed ops seen so far
    for (size_t k = g_queue.size(); k-- > 0;) {
        queued &q = g_queue[k];
        if (q.done)
            continue;
        q.need = all_streams || q.s == target;
        for (size_t j = 0; !q.need && j < later.size(); j++)
            q.need = waits_for(later[j], q.s);
        if (q.need && std::find(later.begin(), later.end(), q.s) == later.end())
            later.push_back(q.s);
    }
    for (;;) {
        while (!g_queue.empty() && g_queue.front().done)
            g_queue.pop_front();
        // the first runnable needed op, another stream's before the legacy one's
        size_t pick = SIZE_MAX;
        for (int pass = 0; pass < 2 && pick == SIZE_MAX; pass++) {
            std::vector<CUstream_st *> waiting; // streams with undone ops before k
            for (size_t k = 0; k < g_queue.size() && pick == SIZE_MAX; k++) {
                queued &q = g_queue[k];
                if (q.done)
                    continue;
                bool ready = true;
                for (size_t j = 0; j < waiting.size() && ready; j++)
                    ready = !waits_for(q.s, waiting[j]);
                if (q.need && ready && !(pass == 0 && is_legacy(q.s)))
                    pick = k;
                if (std::find(waiting.begin(), waiting.end(), q.s) == waiting.end())
                    waiting.push_back(q.s);
            }
        }
        if (pick == SIZE_MAX)
            break;
        run_one(pick);
    }
}

} // namespace nc_host

using namespace nc_host;

namespace {

const char *kind_name(cudaMemcpyKind k)
{
    switch (k) {
    case cudaMemcpyHostToDevice: return "host to device";
    case cudaMemcpyDeviceToHost: return "device to host";
    case cudaMemcpyDeviceToDevice: return "device to device";
    case cudaMemcpyHostToHost: return "host to host";
    default: return "default";
    }
}

// Checks a copy's pointers against its kind; queues it.
cudaError_t copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s, bool sync)
{
    if (sticky())
        return sticky();
    if (n == 0)
        return cudaSuccess;
    bool dd = is_device(dst), sd = is_device(src);
    if (kind == cudaMemcpyDefault)
        kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                  : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    bool want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if ((want_dd && !find_alloc(dst, n)) || (want_sd && !find_alloc(src, n)) || (!want_dd && dd) ||
        (!want_sd && sd)) {
        report("cuda-host: cudaMemcpy%s %s of %zu bytes from %p to %p: %s", s || !sync ? "Async" : "", kind_name(kind),
               n, src, dst,
               want_dd && !find_alloc(dst, n)   ? "the destination is not that much device memory"
               : want_sd && !find_alloc(src, n) ? "the source is not that much device memory"
                                                : "a host pointer is device memory");
        return set_last(cudaErrorInvalidValue);
    }
    device_op op;
    op.what = std::string("cudaMemcpy ") + kind_name(kind);
    if (want_dd)
        op.uses.push_back(dst);
    if (want_sd)
        op.uses.push_back(src);
    if (!want_sd) { // staged now
        std::vector<char> staged((const char *)src, (const char *)src + n);
        op.run = [dst, staged]() { memcpy(dst, staged.data(), staged.size()); };
    } else {
        op.run = [dst, src, n]() { memcpy(dst, src, n); };
    }
    enqueue(s, std::move(op));
    if (sync && !want_dd) // a synchronous copy to the host returns with the data
        drain(s, false);
    return sticky();
}

} // namespace

extern "C" {

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    return copy(dst, src, n, kind, nullptr, true);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s)
{
    return copy(dst, src, n, kind, s, false);
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s)
{
    if (sticky())
        return sticky();
    if (n == 0)
        return cudaSuccess;
    if (!find_alloc(dst, n)) {
        report("cuda-host: cudaMemsetAsync of %zu bytes at %p: not that much device memory", n, dst);
        return set_last(cudaErrorInvalidValue);
    }
    device_op op;
    op.what = "cudaMemsetAsync";
    op.uses.push_back(dst);
    op.run = [dst, value, n]() { memset(dst, value, n); };
    enqueue(s, std::move(op));
    return cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t n) { return cudaMemsetAsync(dst, value, n, nullptr); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    if (sticky())
        return sticky();
    *s = new CUstream_st{(flags & cudaStreamNonBlocking) != 0, nc_host::g_next_stream++};
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    drain(s, false); // its queued work still runs; then the stream can go
    delete s;
    return sticky();
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    drain(s, false);
    return sticky();
}

cudaError_t cudaDeviceSynchronize(void)
{
    drain(nullptr, true);
    return sticky();
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = g_last ? g_last : sticky();
    g_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return g_last ? g_last : sticky(); }

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d) { return d == 0 ? sticky() : set_last(cudaErrorInvalidDevice); }

cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return sticky();
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorIllegalInstruction: return "cudaErrorIllegalInstruction";
    default: return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered (CPU harness: see its report)";
    case cudaErrorLaunchFailure: return "unspecified launch failure (CPU harness: see its report)";
    case cudaErrorIllegalInstruction: return "an illegal instruction was encountered (CPU harness: see its report)";
    default: return "unknown error";
    }
}

} // extern "C"
