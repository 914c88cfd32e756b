// Kernels on the CPU harness: a launch is checked (configuration, pointer
// arguments in device memory) and queued on its stream; when it runs, its
// blocks run one after another and each block's threads run as fibers on
// this OS thread. A thread runs until it reaches a barrier or a warp
// collective, or ends; when no thread can run,
//  - a warp whose 32 lanes all wait at the same collective (full mask) gets
//    its results; a warp only partly there is divergence, an error;
//  - otherwise every thread of the block must wait at the same
//    __syncthreads, which then releases them; a thread that ended, or waits
//    at another barrier, is divergence, an error.
// Threads run in thread order up to the first barrier, in reverse order up
// to the second, and so on (NEUROC_CUDA_HOST_ORDER=forward|reverse fixes
// one order), so a missing barrier between a write and a read by another
// thread shows whichever comes first. Shared memory is refilled with 0xFF at
// each block's start; after the kernel, the canaries of every allocation it
// got a pointer to are checked.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cuda_host.h"
#include "fiber.h"
#include "host_state.h"

namespace nc_host {

uint3 g_thread_idx, g_block_idx;
dim3 g_block_dim, g_grid_dim;
const launch_info *g_running;
uint64_t g_work;
static std::map<std::string, uint64_t> g_work_by_kernel;

namespace {

constexpr size_t kStack = 128 << 10;

enum class state { ready, at_barrier, at_warp, done };

struct thread_state {
    fiber f;
    uint3 idx;
    state st;
    const char *site;
    op o;
    uint32_t mask;
    uint64_t in, out;
    int arg;
};

std::vector<thread_state> g_th;
thread_state *g_cur;
fiber g_sched;
kernel_call *g_call;
char *g_stacks;
size_t g_n_stacks;
std::vector<std::pair<char *, char *>> g_shared;
bool g_block_failed;
uint64_t g_threads_run, g_switches;

int order_mode() // 0 alternate, 1 forward, 2 reverse
{
    static int m = [] {
        const char *e = getenv("NEUROC_CUDA_HOST_ORDER");
        return !e ? 0 : !strcmp(e, "forward") ? 1 : !strcmp(e, "reverse") ? 2 : 0;
    }();
    return m;
}

// Stacks with a guard page below each, made once for the largest block.
char *stack_of(size_t t)
{
    size_t each = kStack + 4096;
    if (t >= g_n_stacks) {
        size_t n = 1024;
        g_stacks = (char *)mmap(nullptr, n * each, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                                -1, 0);
        if (g_stacks == MAP_FAILED) {
            report("cuda-host: no memory for fiber stacks");
            abort();
        }
        for (size_t k = 0; k < n; k++)
            mprotect(g_stacks + k * each, 4096, PROT_NONE);
        g_n_stacks = n;
    }
    return g_stacks + t * each + 4096;
}

void fiber_main()
{
    g_call->run();
    g_cur->st = state::done;
    fiber_switch(&g_cur->f, &g_sched);
    abort(); // a finished fiber is never resumed
}

void suspend()
{
    g_switches++;
    fiber_switch(&g_cur->f, &g_sched);
}

const char *state_name(const thread_state &t)
{
    switch (t.st) {
    case state::done: return "ended";
    case state::at_barrier: return "waits at __syncthreads";
    case state::at_warp: return "waits at a warp collective";
    default: return "runs";
    }
}

void fail(const launch_info &li, const char *why, const thread_state &a, const thread_state &b)
{
    report("cuda-host: kernel %s (launched at %s:%d), block (%u,%u,%u): %s: thread (%u,%u,%u) %s%s%s, thread "
           "(%u,%u,%u) %s%s%s",
           li.name, li.file, li.line, g_block_idx.x, g_block_idx.y, g_block_idx.z, why, a.idx.x, a.idx.y, a.idx.z,
           state_name(a), a.st == state::done ? "" : " at ", a.st == state::done ? "" : a.site, b.idx.x, b.idx.y,
           b.idx.z, state_name(b), b.st == state::done ? "" : " at ", b.st == state::done ? "" : b.site);
    set_sticky(cudaErrorLaunchFailure);
    g_block_failed = true;
}

void warp_results(thread_state *w)
{
    uint32_t bits = 0;
    for (int l = 0; l < 32; l++)
        bits |= (w[l].in != 0 ? 1u : 0u) << l;
    for (int l = 0; l < 32; l++) {
        thread_state &t = w[l];
        int src = l;
        switch (t.o) {
        case op::ballot: t.out = bits; break;
        case op::any: t.out = bits != 0; break;
        case op::all: t.out = bits == 0xffffffffu; break;
        case op::shfl: src = t.arg & 31; break;
        case op::shfl_down: src = l + t.arg < 32 ? l + t.arg : l; break;
        case op::shfl_up: src = l - t.arg >= 0 ? l - t.arg : l; break;
        case op::shfl_xor: src = (l ^ t.arg) & 31; break;
        case op::syncwarp: break;
        }
        if (t.o == op::shfl || t.o == op::shfl_down || t.o == op::shfl_up || t.o == op::shfl_xor)
            t.out = w[src].in;
    }
}

// Resolves the warps waiting at a collective; returns whether any was.
bool resolve_warps(const launch_info &li, int n)
{
    bool any = false;
    for (int w0 = 0; w0 < n; w0 += 32) {
        thread_state *w = &g_th[w0];
        int lanes = std::min(32, n - w0), first = -1;
        for (int l = 0; l < lanes && first < 0; l++)
            if (w[l].st == state::at_warp)
                first = l;
        if (first < 0)
            continue;
        for (int l = 0; l < lanes; l++) {
            if (w[l].st != state::at_warp || w[l].site != w[first].site) {
                fail(li, "divergent warp collective", w[first], w[l]);
                return false;
            }
            if (w[l].mask != 0xffffffffu) {
                fail(li, "a warp collective's mask is not 0xffffffff (the harness checks full-warp masks)", w[l],
                     w[l]);
                return false;
            }
        }
        if (lanes < 32) {
            fail(li, "a full-mask warp collective in a warp of fewer than 32 threads", w[first], w[first]);
            return false;
        }
        warp_results(w);
        for (int l = 0; l < 32; l++)
            w[l].st = state::ready;
        any = true;
    }
    return any;
}

void poison_shared()
{
    for (auto &r : g_shared)
        memset(r.first, 0xFF, (size_t)(r.second - r.first));
}

void run_block(const launch_info &li, int n)
{
    poison_shared();
    for (int t = 0; t < n; t++) {
        thread_state &th = g_th[t];
        th.idx = uint3{(unsigned)(t % li.block.x), (unsigned)(t / li.block.x % li.block.y),
                       (unsigned)(t / (li.block.x * li.block.y))};
        th.st = state::ready;
        fiber_init(&th.f, stack_of((size_t)t), kStack, fiber_main);
    }
    g_threads_run += (uint64_t)n;
    for (int segment = 0;; segment++) {
        for (;;) { // run every thread until it waits or ends; resolve warps
            bool fwd = order_mode() == 1 || (order_mode() == 0 && segment % 2 == 0);
            for (int k = 0; k < n; k++) {
                int t = fwd ? k : n - 1 - k;
                if (g_th[t].st != state::ready)
                    continue;
                g_cur = &g_th[t];
                g_thread_idx = g_cur->idx;
                fiber_switch(&g_sched, &g_cur->f);
            }
            if (!resolve_warps(li, n))
                break;
        }
        if (g_block_failed)
            return;
        int waiting = -1, ended = -1;
        for (int t = 0; t < n; t++) {
            if (g_th[t].st == state::done)
                ended = t;
            else if (waiting < 0)
                waiting = t;
            else if (g_th[t].site != g_th[waiting].site)
                return fail(li, "threads wait at different __syncthreads", g_th[waiting], g_th[t]);
        }
        if (waiting < 0)
            return; // every thread ended
        if (ended >= 0)
            return fail(li, "a thread ended while others wait at __syncthreads", g_th[waiting], g_th[ended]);
        for (int t = 0; t < n; t++)
            g_th[t].st = state::ready;
    }
}

} // namespace

uint64_t warp_collective(const char *site, op o, uint32_t mask, uint64_t value, int arg)
{
    thread_state *t = g_cur;
    t->st = state::at_warp;
    t->site = site;
    t->o = o;
    t->mask = mask;
    t->in = value;
    t->arg = arg;
    suspend();
    return t->out;
}

void barrier(const char *site)
{
    g_cur->st = state::at_barrier;
    g_cur->site = site;
    suspend();
}

void register_shared(char *begin, char *end)
{
    if (!begin || !end || begin == end)
        return;
    for (auto &r : g_shared)
        if (r.first == begin)
            return;
    g_shared.push_back({begin, end});
}

void run_kernel(const launch_info &li, kernel_call *call)
{
    int n = (int)(li.block.x * li.block.y * li.block.z);
    if ((size_t)n > g_th.size())
        g_th.resize((size_t)n);
    g_call = call;
    g_running = &li;
    g_block_dim = li.block;
    g_grid_dim = li.grid;
    g_block_failed = false;
    uint64_t work0 = g_work;
    for (unsigned z = 0; z < li.grid.z && !g_block_failed; z++)
        for (unsigned y = 0; y < li.grid.y && !g_block_failed; y++)
            for (unsigned x = 0; x < li.grid.x && !g_block_failed; x++) {
                g_block_idx = uint3{x, y, z};
                run_block(li, n);
            }
    g_work_by_kernel[li.name] += g_work - work0;
    g_running = nullptr;
}

void launch(const launch_info &li, const void *const *ptrs, int n_ptrs, kernel_call *call)
{
    const dim3 &b = li.block, &g = li.grid;
    if (sticky()) {
        delete call;
        return;
    }
    if (!b.x || !b.y || !b.z || b.x > 1024 || b.y > 1024 || b.z > 64 || (uint64_t)b.x * b.y * b.z > 1024 || !g.x ||
        !g.y || !g.z || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535 || li.shmem > 48 * 1024) {
        report("cuda-host: kernel %s launched at %s:%d with grid (%u,%u,%u), block (%u,%u,%u), %zu bytes of dynamic "
               "shared memory: invalid configuration", li.name, li.file, li.line, g.x, g.y, g.z, b.x, b.y, b.z,
               li.shmem);
        set_last(cudaErrorInvalidConfiguration);
        delete call;
        return;
    }
    device_op op;
    char what[512];
    snprintf(what, sizeof what, "kernel %s (%s:%d)", li.name, li.file, li.line);
    op.what = what;
    for (int k = 0; k < n_ptrs; k++) {
        if (!ptrs[k])
            continue;
        if (!find_alloc(ptrs[k], 0)) {
            report("cuda-host: kernel %s launched at %s:%d: pointer argument %p is not device memory", li.name,
                   li.file, li.line, ptrs[k]);
            set_sticky(cudaErrorIllegalAddress);
            delete call;
            return;
        }
        op.uses.push_back(ptrs[k]);
    }
    launch_info info = li;
    std::vector<const void *> uses = op.uses;
    op.run = [info, call, uses]() {
        run_kernel(info, call);
        delete call;
        for (const void *p : uses)
            if (const allocation *a = find_alloc(p, 0)) {
                char when[400];
                snprintf(when, sizeof when, "by kernel %s (launched at %s:%d)", info.name, info.file, info.line);
                if (!check_canaries(a, when))
                    break;
            }
    };
    enqueue(li.stream, std::move(op));
}

} // namespace nc_host

// For tests (dlsym): the work reported by the kernels named `kernel` since
// the last reset (NC_HOST_WORK), and the reset.
extern "C" __attribute__((visibility("default"))) unsigned long long nc_host_work(const char *kernel)
{
    auto it = nc_host::g_work_by_kernel.find(kernel);
    return it == nc_host::g_work_by_kernel.end() ? 0 : it->second;
}
extern "C" __attribute__((visibility("default"))) void nc_host_work_reset(void) { nc_host::g_work_by_kernel.clear(); }
