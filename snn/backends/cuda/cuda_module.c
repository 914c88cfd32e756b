/* The CUDA modules' entry point, and their bridge to the core (module.h):
 * compiled into libneuroc_cuda.so (the backend) and, with
 * NC_CUDA_PROBE_ONLY, into libneuroc_cuda_probe.so (the device probe).
 *
 * The module's code calls the core's error, log, allocation and IR
 * functions by their usual names (snn/base/error.h, alloc.h, snn_ir.h);
 * here they are defined as calls through the host table the core passes
 * at load, so the last error, the allocator (limits, failure injection)
 * and the log callback are the core's own, never a copy. The module's
 * other symbols stay local to it (module.map exports only the entry). */
#include <string.h>

#include "snn/backends/module.h"
#include "snn/base/alloc.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "snn/ir/layer_kinds.h"
#include "snn/ir/snn_ir.h"

#ifndef NEUROC_VERSION
#define NEUROC_VERSION "0.0.0"
#endif

/* cuda_device.cu */
nc_status nc_cuda_probe(int *count);

static const nc_host_api *g_host; /* set once by nc_backend_module_init, before any other call */

nc_status nc_errorf(nc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = g_host->verrorf(st, fmt, ap);
    va_end(ap);
    return st;
}

const char *nc_last_error(void) { return g_host->last_error(); }

void nc_log(nc_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_host->vlog(level, fmt, ap);
    va_end(ap);
}

void *nc_malloc(size_t n) { return g_host->malloc(n); }
void *nc_calloc(size_t count, size_t size) { return g_host->calloc(count, size); }
void *nc_realloc(void *p, size_t n) { return g_host->realloc(p, n); }
void nc_free(void *p) { g_host->free(p); }

int nc_dist_device_for_process(int count) { return g_host->device_for_process(count); }

const char *nc_snn_kind_name(nc_snn_layer_kind k) { return g_host->snn_kind_name(k); }
int nc_snn_find_layer(const nc_snn *s, const char *name) { return g_host->snn_find_layer(s, name); }
int64_t nc_snn_layer_size(const nc_snn_layer *L) { return g_host->snn_layer_size(L); }
int nc_snn_output_id(const nc_snn *s) { return g_host->snn_output_id(s); }
float nc_snn_param(const nc_tensor *p, const nc_snn_layer *L, int64_t i, float dflt)
{
    return g_host->snn_param(p, L, i, dflt);
}
const nc_snn_kind_traits *nc_snn_kind(nc_snn_layer_kind k) { return g_host->snn_kind(k); }
float *nc_snn_param_expand(const nc_tensor *p, const nc_snn_layer *L, float dflt, int channel_last, int *fail)
{
    return g_host->snn_param_expand(p, L, dflt, channel_last, fail);
}
float *nc_snn_spike_values(const nc_snn_layer *L, int channel_last, int *fail)
{
    return g_host->snn_spike_values(L, channel_last, fail);
}
float *nc_snn_v_inits(const nc_snn_layer *L, int channel_last, int *fail)
{
    return g_host->snn_v_inits(L, channel_last, fail);
}
void nc_snn_mark_static(const nc_snn *s, int series, nc_encoding enc, char *is_static)
{
    g_host->snn_mark_static(s, series, enc, is_static);
}
void nc_snn_mark_signed(const nc_snn *s, char *is_signed) { g_host->snn_mark_signed(s, is_signed); }
void nc_nl_matmul_dims(const nc_snn_layer *L, const nc_snn_layer *X, const nc_snn_layer *Y, int64_t *m, int64_t *k,
                       int64_t *n)
{
    g_host->snn_nl_matmul_dims(L, X, Y, m, k, n);
}
void nc_snn_mark_macs(const nc_snn *s, int series, nc_encoding enc, char *macs)
{
    g_host->snn_mark_macs(s, series, enc, macs);
}
int32_t *nc_snn_event_fanout(const nc_snn *s, const char *macs, int l, int *fail)
{
    return g_host->snn_event_fanout(s, macs, l, fail);
}
float *nc_snn_spike_units(const nc_snn *s, int l, int *fail) { return g_host->snn_spike_units(s, l, fail); }

const nc_backend_module *nc_backend_module_init(const nc_host_api *host, uint32_t abi)
{
    static const nc_backend_module mod = {
        .abi = NC_BACKEND_ABI,
        .version = NEUROC_VERSION,
#ifdef NC_CUDA_PROBE_ONLY
        .backend = NULL,
#else
        .backend = &nc_backend_cuda,
#endif
        .probe = nc_cuda_probe,
    };
    /* a core from other sources: say who we are and let it refuse us */
    if (abi == NC_BACKEND_ABI && host && host->abi == NC_BACKEND_ABI && host->size == sizeof *host &&
        host->version && strcmp(host->version, NEUROC_VERSION) == 0)
        g_host = host;
    return &mod;
}
