/* Backends built as loadable modules (DESIGN §5): a backend with heavy
 * dependencies (CUDA) lives in a shared object of its own that the core
 * opens with dlopen on first use, so the core library and the neuroc
 * program link none of its libraries.
 *
 * The module holds no copy of the core's state: the thread-local last
 * error, the log callback, the allocator (its limits, failure injection)
 * and the process's device choice stay in the core, and the module reaches
 * them through the host table it is given at load. It compiles only
 * stateless code of its own (its kernels, snn/backends/weight_layout.c);
 * the IR helpers it needs come through the table too, so the IR's code is
 * never duplicated. Core and module must be built from the same sources:
 * the ABI number and the version are both checked. */
#ifndef NC_SNN_BACKENDS_MODULE_H
#define NC_SNN_BACKENDS_MODULE_H

#include <stdarg.h>
#include <stdint.h>

#include "snn/ir/layer_kinds.h"
#include "snn/run/backend.h"

/* Bump when nc_host_api, nc_backend_module, nc_backend, nc_run_request or
 * the IR structs (snn_ir.h) change layout. */
#define NC_BACKEND_ABI 9u /* 6: nc_backend.kinds; 7: nc_snn_layer's two_sided and nl, snn_nl_matmul_dims;
                             8: per-step synaptic ops (nc_run_request.synops_step, burst_ops_step);
                             9: snn_spike_units (spiking max pools of bursts) */

/* The symbol every module exports (and the only one). */
#define NC_BACKEND_MODULE_INIT "nc_backend_module_init"

/* Services of the core, passed to the module at load. */
typedef struct nc_host_api {
    uint32_t abi;        /* NC_BACKEND_ABI */
    uint32_t size;       /* sizeof(nc_host_api) */
    const char *version; /* NEUROC_VERSION of the core */
    /* snn/base/error.h: the core's thread-local last error and log callback */
    nc_status (*verrorf)(nc_status st, const char *fmt, va_list ap);
    const char *(*last_error)(void);
    void (*vlog)(nc_log_level level, const char *fmt, va_list ap);
    /* snn/base/alloc.h: the core's allocator, with its limits and failure injection */
    void *(*malloc)(size_t n);
    void *(*calloc)(size_t count, size_t size);
    void *(*realloc)(void *p, size_t n);
    void (*free)(void *p);
    /* snn/base/dist.h: the device this process takes (NEUROC_CUDA_DEVICE, the MPI local rank) */
    int (*device_for_process)(int count);
    /* snn/ir/snn_ir.h */
    const char *(*snn_kind_name)(nc_snn_layer_kind k);
    int (*snn_find_layer)(const nc_snn *s, const char *name);
    int64_t (*snn_layer_size)(const nc_snn_layer *L);
    int (*snn_output_id)(const nc_snn *s);
    float (*snn_param)(const nc_tensor *p, const nc_snn_layer *L, int64_t i, float dflt);
    /* snn/ir/layer_kinds.h and the IR's per-neuron expansions */
    const nc_snn_kind_traits *(*snn_kind)(nc_snn_layer_kind k);
    float *(*snn_param_expand)(const nc_tensor *p, const nc_snn_layer *L, float dflt, int channel_last, int *fail);
    float *(*snn_spike_values)(const nc_snn_layer *L, int channel_last, int *fail);
    float *(*snn_v_inits)(const nc_snn_layer *L, int channel_last, int *fail);
    void (*snn_mark_static)(const nc_snn *s, int series, nc_encoding enc, char *is_static);
    void (*snn_mark_signed)(const nc_snn *s, char *is_signed);
    void (*snn_nl_matmul_dims)(const nc_snn_layer *L, const nc_snn_layer *X, const nc_snn_layer *Y, int64_t *m,
                               int64_t *k, int64_t *n);
    void (*snn_mark_macs)(const nc_snn *s, int series, nc_encoding enc, char *macs);
    int32_t *(*snn_event_fanout)(const nc_snn *s, const char *macs, int l, int *fail);
    float *(*snn_spike_units)(const nc_snn *s, int l, int *fail);
} nc_host_api;

/* What a module gives back. */
typedef struct nc_backend_module {
    uint32_t abi;              /* NC_BACKEND_ABI the module was built with */
    const char *version;       /* NEUROC_VERSION the module was built from */
    const nc_backend *backend; /* NULL in a probe module */
    /* Optional in a backend module, set in a probe module: whether the backend can run on this machine now. NC_OK with
     * the number of devices in *devices, or NC_ERR_BACKEND_UNAVAILABLE /
     * NC_ERR_DEVICE with the bare reason ("no CUDA device (...)"). */
    nc_status (*probe)(int *devices);
} nc_backend_module;

/* The module's entry point, called once per process. The module keeps
 * `host` and uses it only when host's ABI, size and version are its own;
 * the core in turn refuses a module whose abi or version differ (these two
 * fields stay first in every ABI). */
typedef const nc_backend_module *(*nc_backend_module_init_fn)(const nc_host_api *host, uint32_t abi);
/* Defined by each module (e.g. snn/backends/cuda/cuda_module.c), its only export. */
NC_API const nc_backend_module *nc_backend_module_init(const nc_host_api *host, uint32_t abi);

/* Opens module `file` (e.g. "libneuroc_cuda.so") and initialises it. The
 * folders searched, in order: $NEUROC_BACKEND_PATH alone when it is set;
 * else the folder of the object holding the core (the library, or the
 * program it is linked into: the build tree), its "neuroc" subfolder (an
 * installed library), the install's lib/neuroc relative to it (an installed
 * program), and the configured install folder. On failure
 * NC_ERR_BACKEND_UNAVAILABLE saying why (the folders tried, or dlopen's
 * message). The module stays loaded for the life of the process. */
nc_status nc_backend_module_load(const char *file, const nc_backend_module **out);

#endif
