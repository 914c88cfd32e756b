// Device memory of the CPU harness: each allocation gets its own pages,
// filled with 0xFF (a float reads NaN, an index -1) and placed so that its
// 256-byte-rounded end meets an inaccessible guard page; the slack around
// the data holds canaries, checked after every kernel that got a pointer
// into the allocation and at cudaFree. A read or write past the guard page
// stops the program with the kernel, block and thread named (SIGSEGV
// handler below).
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>

#include "cuda_host.h"
#include "host_state.h"

namespace nc_host {

namespace {

constexpr unsigned char kCanary = 0xA5;
constexpr size_t kAlign = 256; // cudaMalloc's alignment

struct mapping {
    allocation a;
    char *base; // the mapping: guard page, data pages, guard page
    size_t len;
};
std::map<uintptr_t, mapping> g_allocs; // by data address
size_t g_used;
size_t g_page;

size_t capacity()
{
    static size_t cap = [] {
        const char *e = getenv("NEUROC_CUDA_HOST_MEMORY_MB");
        long mb = e ? atol(e) : 0;
        return (size_t)(mb > 0 ? mb : 2048) << 20;
    }();
    return cap;
}

// The mapping whose pages (guards included) hold p.
const mapping *find_mapping(uintptr_t p)
{
    for (auto &kv : g_allocs)
        if (p >= (uintptr_t)kv.second.base && p < (uintptr_t)kv.second.base + kv.second.len)
            return &kv.second;
    return nullptr;
}

void on_segv(int sig, siginfo_t *si, void *)
{
    uintptr_t p = (uintptr_t)si->si_addr;
    const mapping *m = find_mapping(p);
    char msg[512];
    if (m) {
        long off = (long)(p - (uintptr_t)m->a.data);
        snprintf(msg, sizeof msg, "cuda-host: out-of-bounds device access at %p: byte %ld of a %zu-byte allocation "
                 "(%s its end)", (void *)p, off, m->a.size, off < 0 ? "before" : "past");
    } else {
        snprintf(msg, sizeof msg, "cuda-host: invalid memory access at %p (not near any device allocation)", (void *)p);
    }
    fprintf(stderr, "%s", msg);
    if (g_running)
        fprintf(stderr, " in kernel %s launched at %s:%d, block (%u,%u,%u), thread (%u,%u,%u)", g_running->name,
                g_running->file, g_running->line, g_block_idx.x, g_block_idx.y, g_block_idx.z, g_thread_idx.x,
                g_thread_idx.y, g_thread_idx.z);
    fprintf(stderr, "\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

void install_handler()
{
    static bool done = false;
    if (done)
        return;
    done = true;
    g_page = (size_t)sysconf(_SC_PAGESIZE);
    static char alt[1 << 16];
    stack_t ss = {};
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    sigaltstack(&ss, nullptr);
    struct sigaction sa = {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
}

// The first overwritten canary's offset from the data (negative: before it).
bool canaries_ok(const mapping &m, long *where)
{
    char *lo = m.base + g_page, *hi = m.base + m.len - g_page;
    for (char *c = lo; c < m.a.data; c++)
        if ((unsigned char)*c != kCanary) {
            *where = (long)(c - m.a.data);
            return false;
        }
    for (char *c = m.a.data + m.a.size; c < hi; c++)
        if ((unsigned char)*c != kCanary) {
            *where = (long)(c - m.a.data);
            return false;
        }
    return true;
}

} // namespace

const allocation *find_alloc(const void *p, size_t n)
{
    uintptr_t q = (uintptr_t)p;
    auto it = g_allocs.upper_bound(q);
    if (it == g_allocs.begin())
        return nullptr;
    --it;
    const allocation &a = it->second.a;
    if (q < (uintptr_t)a.data || q - (uintptr_t)a.data > a.size || a.size - (q - (uintptr_t)a.data) < n)
        return nullptr;
    return &a;
}

bool is_device(const void *p) { return find_alloc(p, 0) != nullptr; }

bool check_canaries(const allocation *a, const char *when)
{
    auto it = g_allocs.find((uintptr_t)a->data);
    long where = 0;
    if (it == g_allocs.end() || canaries_ok(it->second, &where))
        return true;
    report("cuda-host: out-of-bounds write %s: byte %ld of the %zu-byte allocation at %p (%s it) was written",
           when, where, a->size, (void *)a->data, where < 0 ? "before" : "past the end of");
    set_sticky(cudaErrorIllegalAddress);
    return false;
}

} // namespace nc_host

using namespace nc_host;

extern "C" {

cudaError_t cudaMalloc(void **p, size_t size)
{
    install_handler();
    if (!p)
        return set_last(cudaErrorInvalidValue);
    *p = nullptr;
    if (sticky())
        return sticky();
    if (size > capacity() - g_used)
        return set_last(cudaErrorMemoryAllocation);
    size_t span = (size + kAlign - 1) / kAlign * kAlign, pages = (span + g_page - 1) / g_page * g_page;
    if (pages == 0)
        pages = g_page;
    size_t len = pages + 2 * g_page;
    char *base = (char *)mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return set_last(cudaErrorMemoryAllocation);
    if (mprotect(base + g_page, pages, PROT_READ | PROT_WRITE) != 0) {
        munmap(base, len);
        return set_last(cudaErrorMemoryAllocation);
    }
    char *data = base + g_page + pages - span;
    memset(base + g_page, kCanary, pages);
    memset(data, 0xFF, size);
    g_allocs[(uintptr_t)data] = mapping{{data, size}, base, len};
    g_used += size;
    *p = data;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (!p)
        return sticky();
    drain(nullptr, true); // cudaFree waits for the device, as on a GPU
    auto it = g_allocs.find((uintptr_t)p);
    if (it == g_allocs.end()) {
        report("cuda-host: cudaFree(%p): not the start of a device allocation", p);
        return set_last(cudaErrorInvalidValue);
    }
    check_canaries(&it->second.a, "found at cudaFree");
    g_used -= it->second.a.size;
    munmap(it->second.base, it->second.len);
    g_allocs.erase(it);
    return sticky();
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    if (sticky())
        return sticky();
    *free_b = capacity() - g_used;
    *total_b = capacity();
    return cudaSuccess;
}

} // extern "C"
