/* Sessions: a network bound to a backend, with the buffers a run needs. */
#include <stdio.h>
#include <string.h>

#include "snn/base/finite.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "kernels/hash.h"
#include "registry.h"

struct nc_session {
    const nc_snn *snn;
    const nc_backend *be;
    void *plan;
    int plan_N;
    nc_session_options opt;
    char *rec_on;            /* per layer: 1 if recorded */
    float **rec_spikes, **rec_membrane;
    int last_T, last_N;
    int64_t *spikes;         /* per layer, last run */
    int64_t *synops;         /* per layer, last run */
    int64_t *synops_step;    /* last_T × n_layers, with opt.count_steps */
    int64_t *burst_ops_step; /* likewise: the ops each layer's bursts caused (nc_run_request) */
    int steps_T;             /* rows synops_step holds */
    double *seconds;         /* per layer, last run; NULL unless profiled */
    char *strategy;          /* copy of opt.cuda_strategy */
};

static void free_traces(nc_session *ss)
{
    for (int i = 0; i < ss->snn->n_layers; i++) {
        nc_free(ss->rec_spikes[i]);
        nc_free(ss->rec_membrane[i]);
        ss->rec_spikes[i] = ss->rec_membrane[i] = NULL;
    }
}

void nc_session_free(nc_session *ss)
{
    if (!ss)
        return;
    if (ss->rec_spikes && ss->rec_membrane)
        free_traces(ss);
    if (ss->plan)
        ss->be->plan_free(ss->plan);
    nc_free(ss->rec_on);
    nc_free(ss->rec_spikes);
    nc_free(ss->rec_membrane);
    nc_free(ss->spikes);
    nc_free(ss->synops);
    nc_free(ss->synops_step);
    nc_free(ss->burst_ops_step);
    nc_free(ss->seconds);
    nc_free(ss->strategy);
    nc_free(ss);
}

nc_status nc_session_create(const nc_snn *s, const nc_session_options *opt, nc_session **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_create: out is NULL");
    *out = NULL;
    if (!s)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_create: network is NULL");
    nc_session_options o = {0};
    if (opt)
        o = *opt;
    if (!o.backend)
        o.backend = "cpu";
    if (o.timesteps <= 0)
        o.timesteps = 1;
    /* "cuda:STRATEGY" is backend "cuda" with cuda_strategy STRATEGY */
    char name[64];
    const char *colon = strchr(o.backend, ':');
    snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - o.backend) : (int)strlen(o.backend), o.backend);
    if (colon && !o.cuda_strategy)
        o.cuda_strategy = colon + 1;
    const nc_backend *be;
    nc_status st = nc_backend_find(name, &be); /* the registry, registry.c */
    if (st != NC_OK)
        return st;
    if (o.encoding != NC_ENCODING_DIRECT && o.encoding != NC_ENCODING_POISSON)
        return nc_errorf(NC_ERR_INVALID_ARG, "unknown input encoding %d", (int)o.encoding);
    /* capability first, before any allocation */
    for (int i = 0; i < s->n_layers; i++) {
        char why[256] = "";
        if (!be->supports_layer(s, i, why, sizeof why))
            return nc_errorf(NC_ERR_UNSUPPORTED, "backend '%s' cannot run layer '%s' (%s): %s", be->name,
                             s->layers[i].name, nc_snn_kind_name(s->layers[i].kind), why);
    }
    if (be->check && (st = be->check(s, &o)) != NC_OK)
        return st;
    for (int k = 0; k < o.n_record; k++)
        if (!o.record || nc_snn_find_layer(s, o.record[k]) < 0)
            return nc_errorf(NC_ERR_INVALID_ARG, "no layer named '%s' to record",
                             o.record ? o.record[k] : "(null)");
    nc_session *ss = nc_calloc(1, sizeof *ss);
    if (!ss)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    ss->snn = s;
    ss->be = be;
    ss->rec_on = nc_calloc((size_t)s->n_layers, 1);
    ss->rec_spikes = nc_calloc((size_t)s->n_layers, sizeof(float *));
    ss->rec_membrane = nc_calloc((size_t)s->n_layers, sizeof(float *));
    ss->spikes = nc_calloc((size_t)s->n_layers, sizeof(int64_t));
    ss->synops = nc_calloc((size_t)s->n_layers, sizeof(int64_t));
    if (o.profile && be->profiles)
        ss->seconds = nc_calloc((size_t)s->n_layers, sizeof(double));
    if (!ss->rec_on || !ss->rec_spikes || !ss->rec_membrane || !ss->spikes || !ss->synops ||
        (o.profile && be->profiles && !ss->seconds)) {
        nc_session_free(ss);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < o.n_record; k++)
        ss->rec_on[nc_snn_find_layer(s, o.record[k])] = 1;
    o.record = NULL; /* the names are not kept */
    o.n_record = 0;
    if (o.cuda_strategy) { /* kept for plans made later: the session owns a copy */
        size_t len = strlen(o.cuda_strategy) + 1;
        if (!(ss->strategy = nc_malloc(len))) {
            nc_session_free(ss);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        o.cuda_strategy = memcpy(ss->strategy, o.cuda_strategy, len);
    }
    ss->opt = o;
    *out = ss;
    return NC_OK;
}

nc_status nc_session_run(nc_session *ss, const nc_tensor *input, nc_tensor **output)
{
    if (!output)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_run: output is NULL");
    *output = NULL;
    if (!ss || !input)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_run: NULL argument");
    const nc_snn *s = ss->snn;
    const nc_snn_layer *In = &s->layers[0];
    int series = input->ndim == In->ndim + 2;
    int ok = input->dtype == NC_DTYPE_F32 && (series || input->ndim == In->ndim + 1);
    for (int d = 0; ok && d < In->ndim; d++)
        ok = input->shape[d + 1 + series] == In->shape[d];
    if (!ok) {
        char b1[160], b2[160];
        nc_shape_str(In->ndim, In->shape, b1, sizeof b1);
        size_t n1 = strlen(b1);
        if (n1 && b1[n1 - 1] == ']')
            b1[n1 - 1] = '\0'; /* "[1, 28, 28]" without its brackets, for "(N, 1, 28, 28)" */
        return nc_errorf(NC_ERR_SHAPE,
                         "input must be float32 (N, %s) or a time series (T, N, %s); got %s %s", b1 + 1, b1 + 1,
                         nc_dtype_name(input->dtype), nc_shape_str(input->ndim, input->shape, b2, sizeof b2));
    }
    nc_status fst = nc_check_finite(input, "input", NC_FINITE_SAMPLES);
    if (fst != NC_OK)
        return fst;
    int64_t T = series ? input->shape[0] : ss->opt.timesteps, N = input->shape[series];
    if (T <= 0 || N <= 0 || T > INT32_MAX || N > INT32_MAX)
        return nc_errorf(NC_ERR_SHAPE, "input has %lld steps and %lld samples; both must be positive",
                         (long long)T, (long long)N);
    nc_status st;
    if (!ss->plan || ss->plan_N != N) {
        if (ss->plan)
            ss->be->plan_free(ss->plan);
        ss->plan = NULL;
        st = ss->be->plan_create_opt ? ss->be->plan_create_opt(s, (int)N, &ss->opt, ss->rec_on, &ss->plan)
                                     : ss->be->plan_create(s, (int)N, &ss->plan);
        if (st != NC_OK)
            return st;
        ss->plan_N = (int)N;
    }
    int out_id = nc_snn_output_id(s);
    const nc_snn_layer *O = &s->layers[out_id];
    int64_t shape[NC_MAX_DIMS + 2];
    int nd = 0;
    if (ss->opt.per_step)
        shape[nd++] = T;
    shape[nd++] = N;
    for (int d = 0; d < O->ndim && nd < NC_MAX_DIMS; d++)
        shape[nd++] = O->shape[d];
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, nd, shape);
    if (!y)
        return NC_ERR_NOMEM;
    free_traces(ss);
    for (int i = 0; i < s->n_layers; i++) {
        if (!ss->rec_on[i])
            continue;
        int64_t n = T * N * nc_snn_layer_size(&s->layers[i]);
        ss->rec_spikes[i] = nc_calloc((size_t)n, sizeof(float));
        ss->rec_membrane[i] = nc_calloc((size_t)n, sizeof(float));
        if (!ss->rec_spikes[i] || !ss->rec_membrane[i]) {
            free_traces(ss);
            nc_tensor_free(y);
            return nc_errorf(NC_ERR_NOMEM, "out of memory for the traces of layer '%s'", s->layers[i].name);
        }
    }
    if (ss->opt.count_steps && ss->steps_T != (int)T) {
        nc_free(ss->synops_step);
        nc_free(ss->burst_ops_step);
        ss->steps_T = 0;
        ss->synops_step = nc_calloc((size_t)T * (size_t)s->n_layers, sizeof *ss->synops_step);
        ss->burst_ops_step = nc_calloc((size_t)T * (size_t)s->n_layers, sizeof *ss->burst_ops_step);
        if (!ss->synops_step || !ss->burst_ops_step) {
            free_traces(ss);
            nc_tensor_free(y);
            return nc_errorf(NC_ERR_NOMEM, "out of memory for the synaptic operations of %lld steps", (long long)T);
        }
        ss->steps_T = (int)T;
    }
    nc_run_request q = {
        .input = nc_f32(input), .series = series, .T = (int)T, .N = (int)N,
        .encoding = ss->opt.encoding, .seed = ss->opt.seed, .per_step = ss->opt.per_step,
        .output = nc_f32(y), .spike_counts = ss->spikes, .synops = ss->synops,
        .synops_step = ss->opt.count_steps ? ss->synops_step : NULL,
        .burst_ops_step = ss->opt.count_steps ? ss->burst_ops_step : NULL,
        .rec_spikes = ss->rec_spikes, .rec_membrane = ss->rec_membrane, .layer_seconds = ss->seconds,
    };
    if (ss->seconds)
        memset(ss->seconds, 0, (size_t)s->n_layers * sizeof *ss->seconds);
    if ((st = ss->be->run(ss->plan, &q)) != NC_OK) {
        nc_tensor_free(y);
        return st;
    }
    ss->last_T = (int)T;
    ss->last_N = (int)N;
    *output = y;
    return NC_OK;
}

nc_status nc_session_set_seed(nc_session *ss, uint64_t seed)
{
    if (!ss)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_set_seed: session is NULL");
    ss->opt.seed = seed;
    return NC_OK;
}

uint64_t nc_batch_seed(uint64_t seed, int64_t row0)
{
    return nc_splitmix_mix(seed ^ (0x9E3779B97F4A7C15ull * ((uint64_t)row0 + 1)));
}

nc_status nc_session_spike_count(const nc_session *ss, int id, int64_t *count)
{
    if (!ss || !count || id < 0 || id >= ss->snn->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_spike_count: no layer %d", id);
    *count = ss->spikes[id];
    return NC_OK;
}

nc_status nc_session_synops(const nc_session *ss, int id, int64_t *count)
{
    if (!ss || !count || id < 0 || id >= ss->snn->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_synops: no layer %d", id);
    *count = ss->synops[id];
    return NC_OK;
}

/* counts[step][id] of the last run, for the named per-step reader. */
static nc_status step_count(const nc_session *ss, const int64_t *counts, int id, int step, int64_t *count,
                            const char *fn)
{
    if (!ss || !count || id < 0 || id >= ss->snn->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: no layer %d", fn, id);
    if (!ss->opt.count_steps)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: the session was made without count_steps", fn);
    if (!counts || ss->steps_T != ss->last_T || step < 0 || step >= ss->last_T)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: no step %d in the last run (%d steps)", fn, step, ss->last_T);
    *count = counts[(int64_t)step * ss->snn->n_layers + id];
    return NC_OK;
}

nc_status nc_session_synops_step(const nc_session *ss, int id, int step, int64_t *count)
{
    return step_count(ss, ss ? ss->synops_step : NULL, id, step, count, "nc_session_synops_step");
}

nc_status nc_session_burst_ops_step(const nc_session *ss, int id, int step, int64_t *count)
{
    return step_count(ss, ss ? ss->burst_ops_step : NULL, id, step, count, "nc_session_burst_ops_step");
}

nc_status nc_session_layer_seconds(const nc_session *ss, int id, double *seconds)
{
    if (!ss || !seconds || id < 0 || id >= ss->snn->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_layer_seconds: no layer %d", id);
    if (!ss->seconds)
        return nc_errorf(NC_ERR_UNSUPPORTED, "layer times need a profiled session (nc_session_options.profile) "
                         "on a backend that times layers (cpu, cpu-fast; not %s)", ss->be->name);
    *seconds = ss->seconds[id];
    return NC_OK;
}

/* The trace of layer id (checked by the caller). */
static nc_status trace(const nc_session *ss, int id, nc_trace_kind kind, nc_tensor **out)
{
    if (kind != NC_TRACE_SPIKES && kind != NC_TRACE_MEMBRANE)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_trace: unknown trace kind %d", (int)kind);
    const float *src = kind == NC_TRACE_SPIKES ? ss->rec_spikes[id] : ss->rec_membrane[id];
    if (!src)
        return nc_errorf(NC_ERR_INVALID_ARG, "layer '%s' was not recorded in the last run (pass it in "
                         "nc_session_options.record)", ss->snn->layers[id].name);
    const nc_snn_layer *L = &ss->snn->layers[id];
    int64_t shape[NC_MAX_DIMS];
    int nd = 0;
    shape[nd++] = ss->last_T;
    shape[nd++] = ss->last_N;
    for (int d = 0; d < L->ndim && nd < NC_MAX_DIMS; d++)
        shape[nd++] = L->shape[d];
    nc_tensor *t = nc_tensor_new(NC_DTYPE_F32, nd, shape);
    if (!t)
        return NC_ERR_NOMEM;
    memcpy(t->data, src, (size_t)t->numel * sizeof(float));
    *out = t;
    return NC_OK;
}

nc_status nc_session_trace(const nc_session *ss, const char *layer, nc_trace_kind kind, nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_trace: out is NULL");
    *out = NULL;
    int id = ss ? nc_snn_find_layer(ss->snn, layer) : -1;
    if (id < 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "no layer named '%s'", layer ? layer : "(null)");
    return trace(ss, id, kind, out);
}

nc_status nc_session_trace_at(const nc_session *ss, int id, nc_trace_kind kind, nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_trace_at: out is NULL");
    *out = NULL;
    if (!ss || id < 0 || id >= ss->snn->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_session_trace_at: no layer with id %d", id);
    return trace(ss, id, kind, out);
}
