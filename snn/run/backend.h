/* The private backend interface (DESIGN §5). A backend says which layers it
 * can run before anything is allocated, builds a plan for a batch size, and
 * runs batches on that plan without allocating. */
#ifndef NC_SNN_BACKEND_H
#define NC_SNN_BACKEND_H

#include "snn/ir/snn_ir.h"

typedef struct nc_run_request {
    const float *input;     /* static: N × in_size; series: T × N × in_size */
    int series;             /* 1 when the input is a time series */
    int T, N;
    nc_encoding encoding;
    uint64_t seed;
    int per_step;
    float *output;          /* N × out_size, or T × N × out_size with per_step */
    int64_t *spike_counts;  /* per layer, summed over batch and time */
    /* Per layer, summed over batch and time: the synaptic operations done,
     * i.e. the multiply-accumulates (Affine, Conv2d) or additions (Pool2d)
     * whose input is non-zero, as an event-driven chip does them. A layer
     * whose output is static (fed by a direct-encoded input only) is counted
     * once per sample, because it is computed once; every backend counts
     * what the reference counts. */
    int64_t *synops;
    /* NULL, or T × n_layers: row t holds each layer's synaptic operations of
     * step t (a static layer's at step 0), summed over the batch; zeroed
     * by the backend, its columns sum to synops. */
    int64_t *synops_step;
    /* With synops_step, T × n_layers: row t holds the synaptic ops that
     * layer i's bursts (SignedIF events of k ≥ 2 spikes, SpikeMaxPool2d
     * events of k ≥ 2 units) caused at step t in
     * the layers that read them (nc_snn_event_fanout): a part of those
     * layers' synops_step that is multiply-adds, not additions. Zeroed by
     * the backend. The fan-out assumes a direct-encoded input (it differs
     * only for a Concat of the input and bursts). */
    int64_t *burst_ops_step;
    float **rec_spikes;     /* per layer: NULL, or T × N × size */
    float **rec_membrane;   /* per layer: NULL, or T × N × size */
    /* Per layer, zeroed by the session: the seconds each layer took, summed
     * over threads; NULL when not profiled (nc_backend.profiles). */
    double *layer_seconds;
} nc_run_request;

typedef struct nc_backend {
    const char *name;
    /* The layer kinds it runs, NC_KIND_BIT(kind) each: the backend's one
     * statement of what it supports (docs/layer-kinds.md is generated from
     * it, tests/layer_kinds_doc.c). supports_layer refuses every other kind,
     * and layers of these kinds it cannot run (parameters, size, recurrent
     * edges), saying why. */
    uint64_t kinds;
    /* 1 if layer `id` can run here; else 0 with the reason in why. */
    int (*supports_layer)(const nc_snn *s, int id, char *why, size_t why_len);
    nc_status (*plan_create)(const nc_snn *s, int batch, void **plan);
    nc_status (*run)(void *plan, const nc_run_request *req);
    void (*plan_free)(void *plan);
    /* Optional. Called by nc_session_create after supports_layer, before
     * anything is allocated: whether the backend can run now (a device is
     * present: else NC_ERR_BACKEND_UNAVAILABLE) and its options in opt are
     * valid for s. */
    nc_status (*check)(const nc_snn *s, const nc_session_options *opt);
    /* Optional: used instead of plan_create, for backends with settings of
     * their own in the session options; rec_on[i] is 1 for the layers the
     * session records (their trace buffers can be made here, not in run). */
    nc_status (*plan_create_opt)(const nc_snn *s, int batch, const nc_session_options *opt, const char *rec_on,
                                 void **plan);
    int profiles; /* 1: run() fills nc_run_request.layer_seconds */
} nc_backend;

extern const nc_backend nc_backend_cpu_ref;
extern const nc_backend nc_backend_cpu_fast;
/* In the CUDA module only (snn/backends/cuda/backend_cuda.c): the core
 * reaches it through the registry (snn/session/registry.h), never by this
 * name. */
extern const nc_backend nc_backend_cuda;

/* 1 if backend b runs layers of kind k (its kinds table). */
static inline int nc_backend_runs_kind(const nc_backend *b, nc_snn_layer_kind k)
{
    return (int)k >= 0 && (int)k < NC_SNN_N_KINDS && (b->kinds & NC_KIND_BIT(k)) != 0;
}

/* Deterministic uniform in [0,1) from (seed, step, index): Poisson coding
 * gives the same spikes on every backend and thread count. */
float nc_uniform_hash(uint64_t seed, uint64_t step, uint64_t index);

#endif
