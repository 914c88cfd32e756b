/* The cuda backend: time-batched SNN inference on an NVIDIA GPU.
 *
 * Time-batched: the steps are processed in chunks of up to `tc` steps (all
 * T when device memory allows), and within a chunk each layer processes all
 * tc·N frames of its input before the next layer runs; neuron kernels carry
 * their membrane through the steps of the chunk (and from one chunk to the
 * next), so there is no host round trip per step. A layer whose output is
 * constant over time (the analog input's first layers under direct
 * encoding) holds N frames, computed once in the first chunk, and readers
 * index it by sample.
 *
 * How an Affine or Conv2d layer is computed (its strategy, per layer):
 *  - event: the input's events (non-zero values) are compacted per frame by
 *    a warp-ballot kernel into a bitmask and ascending index lists; Affine
 *    gathers the weight rows of the active inputs in that order. Conv2d has
 *    two kernels over [C_in][kH][kW][C_out] weights, chosen per layer by a
 *    cost model on the first run's density (choose_conv_kernel): scatter,
 *    which walks the event lists into output rows held in shared memory
 *    (work follows the events), or output-stationary, which visits every
 *    tap and skips zero inputs (work of the dense layer). Every output sums
 *    bias then terms in the reference's order, so
 *    results equal the cpu backend's bit for bit (kernels/event_index.h, window_index.h).
 *  - dense: cuBLAS GEMM (im2col for Conv2d; groups 1). Sums in another
 *    order: results differ from the reference in the last bits (a few ulps
 *    of the largest partial sum), which can flip a spike near threshold.
 *  - sparse: cuSPARSE SpMM of the events in CSR × the weights (Affine only).
 *    Same caveat as dense; needs one host sync per layer and chunk (the
 *    CSR's size).
 *  - auto: dense where the input density measured in the plan's first run
 *    is at least the threshold, else event.
 * Synaptic operations and spike counts are counted by the same kernels for
 * every strategy (the compaction and kernels/window_index.h), as the
 * reference counts them.
 *
 * A Concat copies each input's frames to its channel offset (kernels/time_loop.h).
 * Signed IF neurons carry a net count beside the membrane; spiking max
 * pooling runs in two passes a chunk: every input's count after each step,
 * then every output's count following its window's max over the steps.
 * Not supported (supports_layer says why): LIF, CubaLIF, recurrent
 * edges. Every CUDA, cuBLAS and cuSPARSE failure is NC_ERR_DEVICE with the
 * library's own message; no device is NC_ERR_BACKEND_UNAVAILABLE. */
#ifdef NEUROC_HAVE_CUDA

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "snn/base/alloc.h"
#include "snn/run/backend.h"
#include "snn/base/error.h"
#include "cuda_kinds.h"
#include "cuda_glue.h"
#include "kernels/event_index.h"
#include "snn/backends/weight_layout.h"
#include "snn/ir/snn_ir.h"

_Static_assert(sizeof(((nc_cu_nl *)0)->xshape) == NC_MAX_DIMS * sizeof(int64_t), "nc_cu_nl holds a shape");

typedef enum { ST_AUTO, ST_EVENT, ST_DENSE, ST_SPARSE } cu_strategy;
static const char *const g_st_names[] = {"auto", "event", "dense", "sparse"};

#define DEFAULT_THRESHOLD 0.25f
#define CONV_COL_FLOATS (64ll << 20) /* im2col workspace: 256 MiB */

typedef struct cu_layer {
    int view;             /* whose buffer holds the value: itself, or for Flatten/Readout its input's */
    int64_t size;         /* per sample */
    float *val;           /* tc·N frames × size, when view is itself */
    int is_static;        /* set per run */
    /* Affine, Conv2d */
    float *wt, *bias;
    nc_win_geom g;
    cu_strategy want, use;
    double density;       /* measured in the first run */
    int scatter;          /* Conv2d, event: the event-driven kernel (else output-stationary) */
    uint32_t *mask;       /* events of the input, per frame */
    int32_t *cnt, *idx;
    float *ev;
    int32_t *row_off;     /* Conv2d, scatter: where each input row's events start, per frame */
    int32_t *rowptr, *col; /* sparse */
    float *cval;
    void *sp_buf;
    size_t sp_size;
    /* Pool2d scale; IF */
    float scale;
    float *v, *theta, *sval, *v0;
    int32_t *net;         /* SignedIF: net spike counts, N × size */
    int32_t *fan;         /* SignedIF of bursts: ops an event causes downstream (nc_snn_event_fanout) */
    /* SpikeMaxPool2d: the input's counts (N × input size), the outputs'
       (N × size), and the input's counts after each step of a chunk */
    uint32_t *in_cnt, *out_cnt, *cum;
    int signed_in;        /* its input's spikes may be negative (nc_snn_mark_signed) */
    float *unit;          /* of bursts: its input's single-spike values (nc_snn_spike_units); fan its events' */
    /* Nonlinear: its function and shapes; each input's sums (N × its size)
       and its sums after each step of a chunk; the last totals (N × size) */
    nc_cu_nl nl;
    float *nsum[2], *ncum[2], *nlast;
    float *rec_s, *rec_v; /* recorded spiking layers: one chunk's traces (rec_v: neurons only) */
} cu_layer;

typedef struct cu_plan {
    const nc_snn *s;
    int N, tc;
    cu_layer *L;
    cudaStream_t st;
    cublasHandle_t blas;
    cusparseHandle_t sparse;
    nc_cu_count *counters;   /* device: spikes, ops, events, burst ops (nc_cu_burst_ops), n_layers each */
    nc_cu_count *h_counters;
    float *analog;           /* Poisson input: the analog values of a chunk */
    float *out_acc;          /* N × output size: the readout sums */
    float *col, *ycl;        /* dense Conv2d workspace */
    int64_t col_floats, ycl_floats;
    float threshold;
    nc_cuda_precision prec;
    int decided;             /* strategies fixed after the first run */
    int sync_each;           /* NEUROC_CUDA_SYNC=1: wait for every kernel */
} cu_plan;

/* ------------------------------------------------------------ errors */

static nc_status cu_err(cudaError_t e, const char *what)
{
    cudaGetLastError(); /* clear a non-sticky error so later calls can run */
    return nc_errorf(NC_ERR_DEVICE, "cuda: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
static nc_status blas_err(cublasStatus_t e, const char *what)
{
    return nc_errorf(NC_ERR_DEVICE, "cuBLAS: %s: %s (%s)", what, cublasGetStatusString(e), cublasGetStatusName(e));
}
static nc_status sparse_err(cusparseStatus_t e, const char *what)
{
    return nc_errorf(NC_ERR_DEVICE, "cuSPARSE: %s: %s (%s)", what, cusparseGetErrorString(e),
                     cusparseGetErrorName(e));
}
static cudaError_t launched(const cu_plan *P, cudaError_t e)
{
    return e == cudaSuccess && P->sync_each ? cudaStreamSynchronize(P->st) : e;
}
#define CU(call, what)                                  \
    do {                                                \
        cudaError_t e_ = (call);                        \
        if (e_ != cudaSuccess)                          \
            return cu_err(e_, what);                    \
    } while (0)
/* A kernel launch; with NEUROC_CUDA_SYNC=1 (the plan's sync_each) it is
 * also waited for, so an error it raises names it instead of surfacing at
 * the run's final synchronisation. */
#define KERNEL(call, what) CU(launched(P, (call)), what)
#define BLAS(call, what)                                \
    do {                                                \
        cublasStatus_t e_ = (call);                     \
        if (e_ != CUBLAS_STATUS_SUCCESS)                \
            return blas_err(e_, what);                  \
    } while (0)
#define SPARSE(call, what)                              \
    do {                                                \
        cusparseStatus_t e_ = (call);                   \
        if (e_ != CUSPARSE_STATUS_SUCCESS)              \
            return sparse_err(e_, what);                \
    } while (0)

/* ------------------------------------------------------------ capability and options */

static int cu_supports(const nc_snn *s, int id, char *why, size_t len)
{
    const nc_snn_layer *L = &s->layers[id];
    if (!nc_backend_runs_kind(&nc_backend_cuda, L->kind)) { /* refused, not skipped */
        snprintf(why, len, "the cuda backend runs feed-forward IF networks (what conversion produces), not %s "
                           "layers (the cpu backend runs them)", nc_snn_kind_name(L->kind));
        return 0;
    }
    if (L->kind == NC_SNN_IF && (L->spike_gt || L->v_reset || L->r)) {
        snprintf(why, len, "IF with NIR's neuron semantics (a spike when v > θ, v_reset or r, read from another "
                           "tool's NIR file) is not in the cuda kernels (the cpu and cpu-fast backends run it; or "
                           "load the file with --nir-reset subtract --nir-spike ge)");
        return 0;
    }
    for (int k = 0; k < L->n_inputs; k++)
        if (L->inputs[k] >= id) {
            snprintf(why, len, "it reads layer %d's previous step (a recurrent edge); the cuda backend runs "
                               "feed-forward networks only (the cpu backend runs it)", L->inputs[k]);
            return 0;
        }
    if (nc_snn_layer_size(L) > INT32_MAX / 2 || (L->kind == NC_SNN_AFFINE && L->shape[0] > NC_CU_FC_MAX_OUT)) {
        snprintf(why, len, "too large for the cuda kernels' 32-bit indices");
        return 0;
    }
    return 1;
}

static int parse_one(const char *w, size_t n, cu_strategy *out)
{
    for (int k = 0; k < 4; k++)
        if (strlen(g_st_names[k]) == n && strncmp(w, g_st_names[k], n) == 0) {
            *out = (cu_strategy)k;
            return 1;
        }
    return 0;
}

/* "S[,LAYER=S]..." into per-layer strategies (want may be NULL: check only). */
static nc_status parse_strategy(const nc_snn *s, const char *spec, cu_strategy *want)
{
    cu_strategy all = ST_AUTO;
    const char *p = spec ? spec : "auto";
    for (int first = 1; *p; first = 0) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        cu_strategy st;
        if (!eq) {
            if (!first || !parse_one(p, n, &all))
                return nc_errorf(NC_ERR_INVALID_ARG, "cuda strategy '%s': '%.*s' is not auto, event, dense or sparse "
                                 "(a global strategy comes first; then LAYER=STRATEGY)", spec, (int)n, p);
        } else {
            char name[256];
            size_t ln = (size_t)(eq - p);
            snprintf(name, sizeof name, "%.*s", (int)(ln < sizeof name ? ln : sizeof name - 1), p);
            int id = nc_snn_find_layer(s, name);
            if (!parse_one(eq + 1, n - ln - 1, &st))
                return nc_errorf(NC_ERR_INVALID_ARG, "cuda strategy '%s': '%.*s' is not auto, event, dense or sparse",
                                 spec, (int)(n - ln - 1), eq + 1);
            if (id < 0)
                return nc_errorf(NC_ERR_INVALID_ARG, "cuda strategy '%s': no layer named '%s'", spec, name);
            if (s->layers[id].kind != NC_SNN_AFFINE && s->layers[id].kind != NC_SNN_CONV2D)
                return nc_errorf(NC_ERR_INVALID_ARG, "cuda strategy '%s': layer '%s' is %s; strategies apply to "
                                 "Affine and Conv2d layers", spec, name, nc_snn_kind_name(s->layers[id].kind));
            if (want)
                want[id] = st;
        }
        if (first && want)
            for (int i = 0; i < s->n_layers; i++)
                want[i] = all;
        p += n + (end != NULL);
    }
    return NC_OK;
}

static nc_status cu_check(const nc_snn *s, const nc_session_options *o)
{
    if (!(o->cuda_dense_threshold >= 0.0f))
        return nc_errorf(NC_ERR_INVALID_ARG, "cuda dense threshold %g: must be a fraction >= 0",
                         (double)o->cuda_dense_threshold);
    if (o->cuda_precision != NC_CUDA_FP32 && o->cuda_precision != NC_CUDA_TF32 && o->cuda_precision != NC_CUDA_BF16)
        return nc_errorf(NC_ERR_INVALID_ARG, "unknown cuda precision %d", (int)o->cuda_precision);
    nc_status st = parse_strategy(s, o->cuda_strategy, NULL);
    int count = 0;
    if (st == NC_OK && (st = nc_cuda_device_count(&count)) != NC_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", nc_last_error());
        return nc_errorf(st, "%s (no usable GPU: use --backend cpu or cpu-fast)", msg);
    }
    return st;
}

/* ------------------------------------------------------------ plan */

static void cu_plan_free(void *p)
{
    cu_plan *P = p;
    if (!P)
        return;
    for (int i = 0; P->L && i < P->s->n_layers; i++) {
        cu_layer *C = &P->L[i];
        void *bufs[] = {C->val, C->wt,     C->bias,  C->mask,  C->cnt,   C->idx,  C->ev,   C->rowptr, C->col,
                        C->row_off, C->cval, C->sp_buf, C->v,     C->theta, C->sval,  C->v0,   C->rec_s, C->rec_v,
                        C->net,  C->in_cnt, C->out_cnt, C->cum, C->nsum[0], C->nsum[1], C->ncum[0], C->ncum[1],
                        C->nlast, C->fan, C->unit};
        for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
            cudaFree(bufs[b]);
    }
    cudaFree(P->counters);
    cudaFree(P->analog);
    cudaFree(P->out_acc);
    cudaFree(P->col);
    cudaFree(P->ycl);
    if (P->blas)
        cublasDestroy(P->blas);
    if (P->sparse)
        cusparseDestroy(P->sparse);
    if (P->st)
        cudaStreamDestroy(P->st);
    nc_free(P->h_counters);
    nc_free(P->L);
    nc_free(P);
}

static nc_status upload(void **dst, const void *src, size_t bytes, const char *what)
{
    CU(cudaMalloc(dst, bytes ? bytes : 1), what);
    if (bytes)
        CU(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice), what);
    return NC_OK;
}

/* The weights in the fan-out layout (weight_layout.h) and the bias. */
static nc_status upload_weights(const nc_snn_layer *L, cu_layer *C)
{
    int64_t n = L->weight->numel;
    float *T = nc_snn_fanout_weights(L);
    if (!T)
        return nc_errorf(NC_ERR_NOMEM, "out of memory for the weights of layer '%s'", L->name);
    nc_status st = upload((void **)&C->wt, T, (size_t)n * sizeof *T, "weights");
    nc_free(T);
    if (st == NC_OK)
        st = upload((void **)&C->bias, nc_f32(L->bias), (size_t)L->bias->numel * sizeof(float), "bias");
    return st;
}

/* θ, spike value and v(0) per neuron, defaults as the reference's. */
static nc_status upload_neuron(const nc_snn_layer *L, cu_layer *C)
{
    int fail = 0;
    float *th = nc_snn_param_expand(L->threshold, L, 1.0f, 0, &fail);
    float *sv = nc_snn_spike_values(L, 0, &fail), *v0 = nc_snn_v_inits(L, 0, &fail);
    nc_status st = fail ? nc_errorf(NC_ERR_NOMEM, "out of memory for the parameters of layer '%s'", L->name) : NC_OK;
    size_t b = (size_t)C->size * sizeof(float);
    if (st == NC_OK)
        st = upload((void **)&C->theta, th, b, "theta");
    if (st == NC_OK)
        st = upload((void **)&C->sval, sv, b, "spike values");
    if (st == NC_OK)
        st = upload((void **)&C->v0, v0, b, "v0");
    nc_free(th);
    nc_free(sv);
    nc_free(v0);
    return st;
}

/* A Nonlinear layer as its kernels see it (cuda_glue.h). */
static void plan_nonlinear(const nc_snn *s, const nc_snn_layer *L, nc_cu_nl *p)
{
    const nc_snn_layer *X = &s->layers[L->inputs[0]], *Y = L->n_inputs > 1 ? &s->layers[L->inputs[1]] : X;
    memset(p, 0, sizeof *p);
    p->fn = (int)L->nl.fn;
    p->alpha = L->nl.alpha;
    p->beta = L->nl.beta;
    p->eps = L->nl.eps;
    p->xnd = X->ndim;
    p->ynd = Y->ndim;
    memcpy(p->xshape, X->shape, sizeof X->shape);
    memcpy(p->yshape, Y->shape, sizeof Y->shape);
    p->size = nc_snn_layer_size(L);
    p->xsize = nc_snn_layer_size(X);
    p->ysize = L->n_inputs > 1 ? nc_snn_layer_size(Y) : 0;
    if (L->nl.fn == NC_NL_MATMUL) {
        nc_nl_matmul_dims(L, X, Y, &p->m, &p->k, &p->n);
        p->xi = L->nl.trans_x ? 1 : p->k;
        p->xq = L->nl.trans_x ? p->m : 1;
        p->yq = L->nl.trans_y ? 1 : p->n;
        p->yj = L->nl.trans_y ? p->k : 1;
    }
    if (L->nl.fn == NC_NL_LAYERNORM || L->nl.fn == NC_NL_SOFTMAX) {
        p->len = L->shape[L->nl.axis];
        p->inner = 1;
        for (int d = L->nl.axis + 1; d < L->ndim; d++)
            p->inner *= L->shape[d];
    }
}

/* Device bytes a step of the batch needs (the buffers that scale with tc). */
static int64_t bytes_per_step(const nc_snn *s, const cu_layer *CL, int N, const cu_strategy *want,
                              const char *rec_on)
{
    int64_t b = 0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        int64_t in = L->n_inputs > 0 ? CL[L->inputs[0]].size : 0;
        if (CL[i].view == i)
            b += CL[i].size * 4;
        if (nc_snn_kind_is_synaptic(L->kind))
            b += nc_bit_words(in) * 4 + 4;
        if (L->kind == NC_SNN_AFFINE)
            b += in * 8 * (want[i] == ST_SPARSE ? 2 : 1);
        if (L->kind == NC_SNN_CONV2D && want[i] != ST_DENSE) /* event lists and row offsets (scatter kernels) */
            b += in * 8 + nc_cu_scatter_offsets(nc_snn_win_geom(L, &s->layers[L->inputs[0]])) * 4;
        if (L->kind == NC_SNN_SPIKEMAXPOOL2D)
            b += in * 4;
        for (int k = 0; L->kind == NC_SNN_NONLINEAR && k < L->n_inputs; k++) /* the sums after each step */
            b += CL[L->inputs[k]].size * 4;
        if (rec_on && rec_on[i] && nc_snn_kind(L->kind)->spiking)
            b += CL[i].size * 8;
    }
    return b * N;
}

/* A SignedIF of bursts: the ops an event of each neuron causes downstream
 * (nc_snn_event_fanout), on the device. */
static nc_status upload_fanout(cu_plan *P, int i)
{
    const nc_snn *s = P->s;
    char *macs = nc_calloc((size_t)s->n_layers, 1);
    int fail = !macs;
    if (!fail)
        nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, macs);
    int32_t *fan = fail ? NULL : nc_snn_event_fanout(s, macs, i, &fail);
    nc_status st = fail ? nc_errorf(NC_ERR_NOMEM, "out of memory for the fan-out of layer '%s'", s->layers[i].name)
                        : upload((void **)&P->L[i].fan, fan, (size_t)P->L[i].size * sizeof *fan, "fan-out");
    nc_free(macs);
    nc_free(fan);
    return st;
}

/* A SpikeMaxPool2d of bursts: its input's single-spike values
 * (nc_snn_spike_units) and its events' fan-out, on the device; nothing for
 * a pool of single spikes. */
static nc_status upload_units(cu_plan *P, int i)
{
    const nc_snn *s = P->s;
    int fail = 0, from = s->layers[i].inputs[0];
    float *u = nc_snn_spike_units(s, from, &fail);
    if (!u)
        return fail ? nc_errorf(NC_ERR_NOMEM, "out of memory for layer '%s'", s->layers[i].name) : NC_OK;
    nc_status st = upload((void **)&P->L[i].unit, u, (size_t)nc_snn_layer_size(&s->layers[from]) * sizeof *u,
                          "spike units");
    nc_free(u);
    return st != NC_OK ? st : upload_fanout(P, i);
}

static nc_status plan_layers(cu_plan *P, const cu_strategy *want, const char *rec_on)
{
    const nc_snn *s = P->s;
    int N = P->N;
    int64_t fr = (int64_t)P->tc * N;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        cu_layer *C = &P->L[i];
        int64_t in = L->n_inputs > 0 ? P->L[L->inputs[0]].size : 0;
        nc_status st = NC_OK;
        C->want = want[i];
        if (C->view == i)
            CU(cudaMalloc((void **)&C->val, (size_t)(fr * C->size) * sizeof(float)), "layer values");
        switch (L->kind) {
        case NC_SNN_AFFINE: case NC_SNN_CONV2D:
            if ((st = upload_weights(L, C)) != NC_OK)
                return st;
            CU(cudaMalloc((void **)&C->mask, (size_t)(fr * nc_bit_words(in)) * 4), "event masks");
            CU(cudaMalloc((void **)&C->cnt, (size_t)fr * 4), "event counts");
            if (L->kind == NC_SNN_CONV2D)
                C->g = nc_snn_win_geom(L, &s->layers[L->inputs[0]]);
            if (L->kind == NC_SNN_AFFINE || (C->want != ST_DENSE && nc_cu_scatter_offsets(C->g) > 0)) {
                CU(cudaMalloc((void **)&C->idx, (size_t)(fr * in) * 4), "event lists");
                CU(cudaMalloc((void **)&C->ev, (size_t)(fr * in) * 4), "event lists");
            }
            if (L->kind == NC_SNN_CONV2D && C->idx)
                CU(cudaMalloc((void **)&C->row_off, (size_t)(fr * nc_cu_scatter_offsets(C->g)) * 4),
                   "event row offsets");
            if (L->kind == NC_SNN_AFFINE && C->want == ST_SPARSE) {
                int64_t out = L->shape[0];
                CU(cudaMalloc((void **)&C->rowptr, (size_t)(fr + 1) * 4), "CSR rows");
                CU(cudaMalloc((void **)&C->col, (size_t)(fr * in) * 4), "CSR columns");
                CU(cudaMalloc((void **)&C->cval, (size_t)(fr * in) * 4), "CSR values");
                /* the workspace for the largest CSR (every input active) */
                cusparseSpMatDescr_t A;
                cusparseDnMatDescr_t B, Y;
                float one = 1.0f;
                SPARSE(cusparseCreateCsr(&A, fr, in, fr * in, C->rowptr, C->col, C->cval, CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F), "CSR");
                SPARSE(cusparseCreateDnMat(&B, in, out, out, C->wt, CUDA_R_32F, CUSPARSE_ORDER_ROW), "weights");
                SPARSE(cusparseCreateDnMat(&Y, fr, out, out, C->val, CUDA_R_32F, CUSPARSE_ORDER_ROW), "output");
                cusparseStatus_t e = cusparseSpMM_bufferSize(P->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                             CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B, &one, Y,
                                                             CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &C->sp_size);
                cusparseDestroySpMat(A);
                cusparseDestroyDnMat(B);
                cusparseDestroyDnMat(Y);
                if (e != CUSPARSE_STATUS_SUCCESS)
                    return sparse_err(e, "SpMM workspace size");
                CU(cudaMalloc(&C->sp_buf, C->sp_size ? C->sp_size : 1), "SpMM workspace");
            }
            if (L->kind == NC_SNN_CONV2D && C->want != ST_EVENT && C->want != ST_SPARSE && C->g.groups == 1) {
                int64_t P_ = (int64_t)C->g.OH * C->g.OW, ckk = (int64_t)C->g.C * C->g.kh * C->g.kw;
                int64_t nf = CONV_COL_FLOATS / (P_ * ckk);
                nf = nf < 1 ? 1 : (nf > fr ? fr : nf);
                if (nf * P_ * ckk > P->col_floats)
                    P->col_floats = nf * P_ * ckk;
                if (nf * P_ * C->g.K > P->ycl_floats)
                    P->ycl_floats = nf * P_ * C->g.K;
            }
            break;
        case NC_SNN_POOL2D: case NC_SNN_MAXPOOL2D:
            C->g = nc_snn_win_geom(L, &s->layers[L->inputs[0]]);
            C->scale = L->scale;
            break;
        case NC_SNN_SPIKEMAXPOOL2D:
            C->g = nc_snn_win_geom(L, &s->layers[L->inputs[0]]);
            CU(cudaMalloc((void **)&C->in_cnt, (size_t)(N * in) * 4), "spike counts");
            CU(cudaMalloc((void **)&C->out_cnt, (size_t)(N * C->size) * 4), "spike counts");
            CU(cudaMalloc((void **)&C->cum, (size_t)(fr * in) * 4), "spike counts");
            if ((st = upload_units(P, i)) != NC_OK)
                return st;
            if (rec_on && rec_on[i])
                CU(cudaMalloc((void **)&C->rec_s, (size_t)(fr * C->size) * sizeof(float)), "spike traces");
            break;
        case NC_SNN_NONLINEAR:
            plan_nonlinear(s, L, &C->nl);
            for (int k = 0; k < L->n_inputs; k++) {
                int64_t xs = P->L[L->inputs[k]].size;
                CU(cudaMalloc((void **)&C->nsum[k], (size_t)(N * xs) * sizeof(float)), "input sums");
                CU(cudaMalloc((void **)&C->ncum[k], (size_t)(fr * xs) * sizeof(float)), "input sums");
            }
            CU(cudaMalloc((void **)&C->nlast, (size_t)(N * C->size) * sizeof(float)), "totals");
            break;
        case NC_SNN_IF: case NC_SNN_SIGNED_IF:
            if ((st = upload_neuron(L, C)) != NC_OK)
                return st;
            CU(cudaMalloc((void **)&C->v, (size_t)(N * C->size) * sizeof(float)), "membranes");
            if (L->kind == NC_SNN_SIGNED_IF)
                CU(cudaMalloc((void **)&C->net, (size_t)(N * C->size) * sizeof(int32_t)), "net spike counts");
            if (L->kind == NC_SNN_SIGNED_IF && nc_snn_layer_burst(L) > 1 && (st = upload_fanout(P, i)) != NC_OK)
                return st;
            if (rec_on && rec_on[i]) {
                CU(cudaMalloc((void **)&C->rec_s, (size_t)(fr * C->size) * sizeof(float)), "spike traces");
                CU(cudaMalloc((void **)&C->rec_v, (size_t)(fr * C->size) * sizeof(float)), "membrane traces");
            }
            break;
        default: break;
        }
    }
    if (P->col_floats) {
        CU(cudaMalloc((void **)&P->col, (size_t)P->col_floats * sizeof(float)), "im2col workspace");
        CU(cudaMalloc((void **)&P->ycl, (size_t)P->ycl_floats * sizeof(float)), "im2col output");
    }
    return NC_OK;
}

static nc_status cu_plan_create_opt(const nc_snn *s, int N, const nc_session_options *o, const char *rec_on,
                                    void **out)
{
    *out = NULL;
    cu_strategy *want = nc_calloc((size_t)s->n_layers, sizeof *want);
    cu_plan *P = nc_calloc(1, sizeof *P);
    nc_status st = NC_OK;
    if (!want || !P || !(P->L = nc_calloc((size_t)s->n_layers, sizeof *P->L)) ||
        !(P->h_counters = nc_calloc((size_t)(4 * s->n_layers), sizeof *P->h_counters))) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory creating the cuda plan");
        goto done;
    }
    P->s = s;
    P->N = N;
    P->threshold = o->cuda_dense_threshold > 0.0f ? o->cuda_dense_threshold : DEFAULT_THRESHOLD;
    P->prec = o->cuda_precision;
    const char *sync = getenv("NEUROC_CUDA_SYNC");
    P->sync_each = sync && atoi(sync) > 0;
    if ((st = parse_strategy(s, o->cuda_strategy, want)) != NC_OK)
        goto done;
    char *is_signed = nc_malloc((size_t)s->n_layers);
    if (!is_signed) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory creating the cuda plan");
        goto done;
    }
    nc_snn_mark_signed(s, is_signed);
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        P->L[i].size = nc_snn_layer_size(L);
        P->L[i].view = nc_snn_kind(L->kind)->view ? P->L[L->inputs[0]].view : i;
        P->L[i].signed_in = L->n_inputs > 0 && is_signed[L->inputs[0]];
    }
    nc_free(is_signed);
    /* Steps per chunk: all T when at most half the free memory holds them. */
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) {
        st = cu_err(e, "cudaMemGetInfo");
        goto done;
    }
    int64_t per_step = bytes_per_step(s, P->L, N, want, rec_on), tc = o->timesteps > 0 ? o->timesteps : 1;
    if (per_step > 0 && tc > (int64_t)(free_b / 2) / per_step)
        tc = (int64_t)(free_b / 2) / per_step;
    const char *cap = getenv("NEUROC_CUDA_CHUNK_STEPS"); /* tests: force several chunks */
    if (cap && atoi(cap) > 0 && tc > atoi(cap))
        tc = atoi(cap);
    if (tc > INT32_MAX / N)
        tc = INT32_MAX / N;
    /* cuSPARSE's CSR has 32-bit offsets: at most INT32_MAX events a chunk */
    for (int i = 0; i < s->n_layers; i++)
        if (want[i] == ST_SPARSE && s->layers[i].kind == NC_SNN_AFFINE) {
            int64_t in = P->L[s->layers[i].inputs[0]].size;
            if (tc > INT32_MAX / ((int64_t)N * in))
                tc = INT32_MAX / ((int64_t)N * in);
            if (tc < 1) {
                st = nc_errorf(NC_ERR_LIMIT, "cuda: layer '%s': batch %d × %lld inputs passes the 32-bit indices of "
                               "cuSPARSE's CSR (use the event or dense strategy, or a smaller batch)",
                               s->layers[i].name, N, (long long)in);
                goto done;
            }
        }
    if (tc < 1) {
        st = nc_errorf(NC_ERR_LIMIT, "cuda: batch %d needs %lld MiB of device memory a step; %zu MiB are free "
                       "(use a smaller batch)", N, (long long)(per_step >> 20), free_b >> 20);
        goto done;
    }
    P->tc = (int)tc;
    if ((e = cudaStreamCreateWithFlags(&P->st, cudaStreamNonBlocking)) != cudaSuccess) {
        st = cu_err(e, "cudaStreamCreate");
        goto done;
    }
    cublasStatus_t be = cublasCreate(&P->blas);
    if (be == CUBLAS_STATUS_SUCCESS)
        be = cublasSetStream(P->blas, P->st);
    if (be != CUBLAS_STATUS_SUCCESS) {
        st = blas_err(be, "cublasCreate");
        goto done;
    }
    cusparseStatus_t se = cusparseCreate(&P->sparse);
    if (se == CUSPARSE_STATUS_SUCCESS)
        se = cusparseSetStream(P->sparse, P->st);
    if (se != CUSPARSE_STATUS_SUCCESS) {
        st = sparse_err(se, "cusparseCreate");
        goto done;
    }
    if ((e = cudaMalloc((void **)&P->counters, (size_t)(4 * s->n_layers) * sizeof(nc_cu_count))) != cudaSuccess ||
        (e = cudaMalloc((void **)&P->analog, (size_t)(tc * N * P->L[0].size) * sizeof(float))) != cudaSuccess ||
        (e = cudaMalloc((void **)&P->out_acc, (size_t)(N * P->L[nc_snn_output_id(s)].size) * sizeof(float))) !=
            cudaSuccess) {
        st = cu_err(e, "cudaMalloc");
        goto done;
    }
    st = plan_layers(P, want, rec_on);
    /* The uploads went on the legacy stream (cudaMemcpy returns once the
       host memory is staged, not copied), which the run's non-blocking
       stream does not wait for: wait here, once. */
    if (st == NC_OK && (e = cudaDeviceSynchronize()) != cudaSuccess)
        st = cu_err(e, "uploading the weights");
    if (st == NC_OK)
        nc_log(NC_LOG_INFO, "cuda: batch %d, %d step%s a chunk, %zu of %zu MiB free before the plan", N, P->tc,
               P->tc == 1 ? "" : "s", free_b >> 20, total_b >> 20);
done:
    nc_free(want);
    if (st != NC_OK)
        cu_plan_free(P);
    else
        *out = P;
    return st;
}

static nc_status cu_plan_create(const nc_snn *s, int N, void **out)
{
    nc_session_options o = {.timesteps = 1};
    return cu_plan_create_opt(s, N, &o, NULL, out);
}

/* ------------------------------------------------------------ run */

/* The layers whose output cannot change over time (nc_snn_mark_static). A
 * Flatten or Readout is static exactly when the layer it views is, so a
 * reader of a static view indexes the N frames that layer holds. */
static nc_status mark_static(const nc_snn *s, cu_layer *C, const nc_run_request *q)
{
    char *is_static = nc_malloc((size_t)s->n_layers);
    if (!is_static)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_snn_mark_static(s, q->series, q->encoding, is_static);
    for (int i = 0; i < s->n_layers; i++)
        C[i].is_static = is_static[i];
    nc_free(is_static);
    return NC_OK;
}

/* C = A·B (+ C when beta is 1), column-major, in the plan's precision. */
static nc_status gemm(cu_plan *P, int m, int n, int k, const float *A, int lda, const float *B, int ldb, float beta,
                      float *Cm, int ldc)
{
    static const cublasComputeType_t ct[] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32,
                                             CUBLAS_COMPUTE_32F_FAST_16BF};
    float one = 1.0f;
    BLAS(cublasGemmEx(P->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta,
                      Cm, CUDA_R_32F, ldc, ct[P->prec], CUBLAS_GEMM_DEFAULT),
         "cublasGemmEx");
    return NC_OK;
}

static const char *prec_name(nc_cuda_precision p) { return p == NC_CUDA_TF32 ? "tf32" : p == NC_CUDA_BF16 ? "bf16" : "fp32"; }

/* Lane instructions of the event Conv2d kernels' loops, from their sm_90
 * SASS (bench/cuda_model.py prints them): a channel-tap of the
 * output-stationary kernel (by the channels a thread holds), a thread step (event
 * looked at or tap) of the shared-memory scatter kernel, and of the
 * register-tile kernel an event looked at (its adds aside: CPT a tap, for
 * each output row its input row lands on) and an input channel of a tile
 * (its rows' segment look-ups and the products recomputed once). */
#define NC_CU_COST_STATIONARY(g) \
    ((g).K / (g).groups % 8 == 0 ? 4.9 : (g).K / (g).groups % 4 == 0 ? 7.3 : 23.3) /* 8, 4 or 1 channels a thread */
#define NC_CU_COST_SCATTER 19.0
#define NC_CU_COST_TILE_EVENT 22.0  /* 18-24 by instantiation */
#define NC_CU_COST_TILE_CHANNEL 300.0 /* 106-385 */

/* The event Conv2d's kernel, by a cost model in lane instructions a frame
 * (the constants above; E = density · inputs, cg = C/groups):
 * - output-stationary: every output visits its window, K·P·cg·kh·kw taps;
 * - register tile (nc_cu_conv_tile_cpt > 0, CPT channels, TR rows and TW
 *   columns a lane, nc_cu_conv_tile_rows / _w): each of the K/CPT lanes of
 *   a tile (⌈OH/TR⌉ · ⌈OW/TW⌉ tiles) goes through cg input channels, in
 *   each min((TR − 1)·sh + kh, TR·kh) input rows, and looks at their
 *   events in its reach ((TW − 1)·sw + kw columns), density · reach of
 *   them a row; the adds: each output row gets kh tap rows (1 where kh = 1),
 *   CPT·kw/sw a tap row on average;
 * - shared-memory scatter (where the tile kernel does not fit): thread
 *   steps, every thread of a band's block looking at the events of the
 *   input rows that reach the band, E·reach/H·K over all bands (reach: the
 *   input rows of every band together, overlaps counted), a row-offset
 *   look-up per input channel of its groups, bands·K·C_block, and its taps,
 *   E·(kh/sh)·(kw/sw)·K/groups on average (a stride s leaves an input 1/s
 *   of the taps a dimension).
 * NEUROC_CUDA_CONV=scatter|stationary forces one (tests). Appends the
 * choice to why. */
static void choose_conv_kernel(cu_layer *C, int64_t in, char *why, size_t len)
{
    nc_win_geom g = C->g;
    int band = nc_cu_scatter_band(g), cpt = nc_cu_conv_tile_cpt(g);
    double E = C->density * (double)in, P = (double)g.OH * g.OW, cg = g.C / g.groups;
    double stationary = NC_CU_COST_STATIONARY(g) * g.K * P * cg * g.kh * g.kw, scatter = INFINITY;
    if (C->idx && cpt) {
        int tr = nc_cu_conv_tile_rows(cpt), tw = nc_cu_conv_tile_w(cpt);
        double lanes = (double)g.K / cpt * ((g.OH + tr - 1) / tr) * ((g.OW + tw - 1) / tw),
               reach = (tw - 1) * g.sw + g.kw, rows = (tr - 1) * g.sh + g.kh;
        rows = rows < tr * g.kh ? rows : tr * g.kh; /* the rows some output row lands on (sh > kh skips some) */
        reach = reach < g.W ? reach : g.W;
        rows = rows < g.H ? rows : g.H;
        scatter = lanes * cg *
                  (NC_CU_COST_TILE_CHANNEL + C->density * reach *
                                                 (rows * NC_CU_COST_TILE_EVENT + tr * g.kh * cpt * (double)g.kw / g.sw));
    } else if (C->idx && band >= 1) {
        double reach = 0; /* input rows read, summed over the bands */
        for (int b0 = 0; b0 < g.OH; b0 += band) {
            int last = b0 + band < g.OH ? b0 + band - 1 : g.OH - 1;
            int lo = b0 * g.sh - g.ph, hi = last * g.sh - g.ph + (g.kh - 1) * g.dh;
            lo = lo < 0 ? 0 : lo;
            hi = hi >= g.H ? g.H - 1 : hi;
            reach += hi >= lo ? hi - lo + 1 : 0;
        }
        int kg = g.K / g.groups, kc = NC_CU_SCATTER_K < g.K ? NC_CU_SCATTER_K : g.K;
        double c_block = cg * ((kc + kg - 1) / kg); /* a block's groups' input channels */
        scatter = NC_CU_COST_SCATTER * (E * reach / g.H * (double)g.K +
                                        ((g.OH + band - 1) / band) * (double)g.K * c_block +
                                        E * ((double)g.kh / g.sh) * ((double)g.kw / g.sw) * kg);
    }
    const char *force = getenv("NEUROC_CUDA_CONV");
    C->scatter = force && strcmp(force, "scatter") == 0      ? scatter < INFINITY
                 : force && strcmp(force, "stationary") == 0 ? 0
                                                             : scatter < stationary;
    size_t n = strlen(why);
    snprintf(why + n, len - n, "; model: %s %.3g, stationary %.3g lane instructions a frame",
             cpt ? "register tile" : "scatter", scatter, stationary);
}

/* Fixes a layer's strategy in the plan's first run, from what was asked,
 * what the layer allows, and the density of its input just compacted (one
 * device-to-host read, in the first run only), and says so in the log. */
static nc_status decide(cu_plan *P, int i, int frames, int64_t in)
{
    const nc_snn_layer *L = &P->s->layers[i];
    cu_layer *C = &P->L[i];
    nc_cu_count n = 0;
    CU(cudaMemcpyAsync(&n, P->counters + 2 * P->s->n_layers + i, sizeof n, cudaMemcpyDeviceToHost, P->st),
       "reading the event count");
    CU(cudaStreamSynchronize(P->st), "reading the event count");
    C->density = (double)n / ((double)frames * (double)in);
    char why[256];
    C->use = C->want;
    if (C->want == ST_AUTO) {
        C->use = C->density >= P->threshold ? ST_DENSE : ST_EVENT;
        snprintf(why, sizeof why, "auto: input density %.4f %s threshold %.4g", C->density,
                 C->use == ST_DENSE ? ">=" : "<", (double)P->threshold);
    } else {
        snprintf(why, sizeof why, "forced; input density %.4f", C->density);
    }
    if (L->kind == NC_SNN_CONV2D && C->use == ST_SPARSE) {
        C->use = ST_EVENT;
        snprintf(why + strlen(why), sizeof why - strlen(why), "; sparse is for Affine layers");
    }
    if (L->kind == NC_SNN_CONV2D && C->use == ST_DENSE && C->g.groups != 1) {
        C->use = ST_EVENT;
        snprintf(why + strlen(why), sizeof why - strlen(why), "; dense needs groups = 1");
    }
    if (L->kind == NC_SNN_CONV2D && C->use == ST_EVENT)
        choose_conv_kernel(C, in, why, sizeof why);
    const char *how = C->use == ST_EVENT ? (L->kind == NC_SNN_AFFINE ? "event gather, bit-exact"
                                            : C->scatter           ? "event scatter, bit-exact"
                                                                   : "event output-stationary, bit-exact")
                      : C->use == ST_SPARSE ? "cuSPARSE SpMM"
                                            : "cuBLAS GEMM";
    nc_log(NC_LOG_INFO, "cuda: layer '%s' (%s): %s (%s%s%s; %s)", L->name, nc_snn_kind_name(L->kind),
           g_st_names[C->use], how, C->use == ST_DENSE ? " " : "", C->use == ST_DENSE ? prec_name(P->prec) : "", why);
    return NC_OK;
}

static nc_status run_affine(cu_plan *P, int i, const float *x, int frames, int first_run)
{
    const nc_snn_layer *L = &P->s->layers[i];
    cu_layer *C = &P->L[i];
    int in = (int)P->L[L->inputs[0]].size, out = (int)L->shape[0];
    nc_cu_count *events = P->counters + 2 * P->s->n_layers + i;
    int lists = C->want != ST_DENSE; /* auto may go either way: lists are cheap next to the layer */
    KERNEL(nc_cu_compact(P->st, x, frames, in, C->mask, C->cnt, lists ? C->idx : NULL, C->ev, events), "event compaction");
    nc_status st;
    if (first_run && (st = decide(P, i, frames, in)) != NC_OK)
        return st;
    if (C->use == ST_EVENT) {
        KERNEL(nc_cu_fc_event(P->st, C->idx, C->ev, C->cnt, in, C->wt, C->bias, frames, out, C->val), "fc event kernel");
        return NC_OK;
    }
    KERNEL(nc_cu_fill_rows(P->st, C->val, C->bias, frames, out), "bias");
    if (C->use == ST_DENSE) /* Y(out × frames) = Wt(out × in) · X(in × frames), column-major */
        return gemm(P, out, frames, in, C->wt, out, x, in, 1.0f, C->val, out);
    /* sparse: Y(frames × out) += CSR(frames × in) · Wt(in × out), row-major */
    KERNEL(nc_cu_csr_pack(P->st, C->idx, C->ev, C->cnt, in, frames, C->rowptr, C->col, C->cval), "CSR packing");
    int32_t nnz = 0;
    CU(cudaMemcpyAsync(&nnz, C->rowptr + frames, sizeof nnz, cudaMemcpyDeviceToHost, P->st), "reading the CSR size");
    CU(cudaStreamSynchronize(P->st), "reading the CSR size");
    if (nnz == 0)
        return NC_OK;
    cusparseSpMatDescr_t A;
    cusparseDnMatDescr_t B, Y;
    float one = 1.0f;
    size_t need = 0;
    SPARSE(cusparseCreateCsr(&A, frames, in, nnz, C->rowptr, C->col, C->cval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                             CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F), "CSR");
    cusparseStatus_t e = cusparseCreateDnMat(&B, in, out, out, C->wt, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    if (e == CUSPARSE_STATUS_SUCCESS)
        e = cusparseCreateDnMat(&Y, frames, out, out, C->val, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    else
        Y = NULL;
    if (e == CUSPARSE_STATUS_SUCCESS)
        e = cusparseSpMM_bufferSize(P->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                    &one, A, B, &one, Y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &need);
    if (e == CUSPARSE_STATUS_SUCCESS && need <= C->sp_size)
        e = cusparseSpMM(P->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B,
                         &one, Y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, C->sp_buf);
    cusparseDestroySpMat(A);
    cusparseDestroyDnMat(B);
    if (Y)
        cusparseDestroyDnMat(Y);
    if (e != CUSPARSE_STATUS_SUCCESS)
        return sparse_err(e, "cusparseSpMM");
    if (need > C->sp_size)
        return nc_errorf(NC_ERR_INTERNAL, "cuSPARSE SpMM of layer '%s' wants a %zu-byte workspace; the plan made %zu",
                         L->name, need, C->sp_size);
    return NC_OK;
}

static nc_status run_conv(cu_plan *P, int i, const float *x, int frames, int first_run)
{
    cu_layer *C = &P->L[i];
    nc_win_geom g = C->g;
    int64_t in = (int64_t)g.C * g.H * g.W;
    KERNEL(nc_cu_compact(P->st, x, frames, (int)in, C->mask, C->cnt, C->idx, C->ev,
                         P->counters + 2 * P->s->n_layers + i),
           "event compaction");
    KERNEL(nc_cu_conv_ops(P->st, C->mask, frames, g, P->counters + P->s->n_layers + i), "conv operation count");
    nc_status st;
    if (first_run && (st = decide(P, i, frames, in)) != NC_OK)
        return st;
    if (C->use != ST_DENSE) {
        if (C->scatter)
            KERNEL(nc_cu_conv_scatter(P->st, C->idx, C->ev, C->cnt, C->row_off, frames, g, C->wt, C->bias, C->val),
                   "conv scatter kernel");
        else
            KERNEL(nc_cu_conv_event(P->st, x, frames, g, C->wt, C->bias, C->val), "conv event kernel");
        return NC_OK;
    }
    /* im2col GEMM, nf frames at a time: Ycl(K × rows) = Wt(K × CKK) · col(CKK × rows) */
    int64_t Pn = (int64_t)g.OH * g.OW, ckk = (int64_t)g.C * g.kh * g.kw;
    int64_t nf_max = P->col_floats / (Pn * ckk);
    if (nf_max < 1 || P->ycl_floats < Pn * g.K)
        return nc_errorf(NC_ERR_INTERNAL, "cuda: no im2col workspace for layer '%s'", P->s->layers[i].name);
    for (int f0 = 0; f0 < frames; f0 += (int)nf_max) {
        int nf = frames - f0 < nf_max ? frames - f0 : (int)nf_max;
        KERNEL(nc_cu_im2col(P->st, x + (int64_t)f0 * in, g, nf, P->col), "im2col");
        if ((st = gemm(P, g.K, (int)(nf * Pn), (int)ckk, C->wt, g.K, P->col, (int)ckk, 0.0f, P->ycl, g.K)) != NC_OK)
            return st;
        KERNEL(nc_cu_cl_to_nchw_bias(P->st, P->ycl, C->bias, nf, g.K, (int)Pn, C->val + (int64_t)f0 * g.K * Pn),
           "conv output layout");
    }
    return NC_OK;
}

/* Copies `steps` steps of layer i's value (N frames repeated when static)
 * to host rows dst + t·N·size. */
static nc_status download_steps(cu_plan *P, const float *src, int is_static, int64_t size, int steps, float *dst)
{
    int64_t step = (int64_t)P->N * size;
    if (!is_static) {
        CU(cudaMemcpyAsync(dst, src, (size_t)(steps * step) * sizeof(float), cudaMemcpyDeviceToHost, P->st),
           "copying values to the host");
        return NC_OK;
    }
    for (int t = 0; t < steps; t++)
        CU(cudaMemcpyAsync(dst + t * step, src, (size_t)step * sizeof(float), cudaMemcpyDeviceToHost, P->st),
           "copying values to the host");
    return NC_OK;
}

static nc_status run_input(cu_plan *P, const nc_run_request *q, int t0, int steps)
{
    cu_layer *C = &P->L[0];
    int64_t step = (int64_t)P->N * C->size;
    const float *src = q->input + (q->series ? t0 * step : 0);
    size_t n = (size_t)((q->series ? steps : 1) * step) * sizeof(float);
    if (q->encoding == NC_ENCODING_DIRECT) {
        CU(cudaMemcpyAsync(C->val, src, n, cudaMemcpyHostToDevice, P->st), "copying the input");
        return NC_OK;
    }
    if (q->series || t0 == 0) /* a static image is copied once */
        CU(cudaMemcpyAsync(P->analog, src, n, cudaMemcpyHostToDevice, P->st), "copying the input");
    KERNEL(nc_cu_poisson(P->st, P->analog, !q->series, P->N, (int)C->size, t0, steps, q->seed, C->val), "poisson input");
    return NC_OK;
}

static nc_status run_chunk(cu_plan *P, const nc_run_request *q, int t0, int steps, int first_run)
{
    const nc_snn *s = P->s;
    int N = P->N, nl = s->n_layers;
    nc_status st = NC_OK;
    for (int i = 0; i < nl; i++) {
        const nc_snn_layer *L = &s->layers[i];
        cu_layer *C = &P->L[i];
        if (C->is_static && t0 > 0)
            continue;
        int frames = C->is_static ? N : steps * N;
        int xi = L->n_inputs > 0 ? L->inputs[0] : -1;
        const float *x = xi >= 0 ? P->L[P->L[xi].view].val : NULL;
        switch (L->kind) {
        case NC_SNN_INPUT: st = run_input(P, q, t0, steps); break;
        case NC_SNN_AFFINE: st = run_affine(P, i, x, frames, first_run); break;
        case NC_SNN_CONV2D: st = run_conv(P, i, x, frames, first_run); break;
        case NC_SNN_POOL2D:
            KERNEL(nc_cu_pool(P->st, x, frames, C->g, C->scale, C->val, P->counters + nl + i), "pool kernel");
            break;
        case NC_SNN_MAXPOOL2D: KERNEL(nc_cu_maxpool(P->st, x, frames, C->g, C->val), "max pool kernel"); break;
        case NC_SNN_ADD:
            for (int k = 0; k < L->n_inputs; k++) {
                const cu_layer *X = &P->L[L->inputs[k]];
                KERNEL(nc_cu_add(P->st, C->val, P->L[X->view].val, X->is_static ? N : frames, frames, C->size, k == 0),
                   "add kernel");
            }
            break;
        case NC_SNN_CONCAT: {
            int64_t off = 0;
            for (int k = 0; k < L->n_inputs; k++) {
                const cu_layer *X = &P->L[L->inputs[k]];
                KERNEL(nc_cu_concat(P->st, C->val, P->L[X->view].val, X->is_static ? N : frames, frames, X->size,
                                C->size, off),
                   "concat kernel");
                off += X->size;
            }
            break;
        }
        case NC_SNN_SPIKEMAXPOOL2D:
            KERNEL(nc_cu_spikemax(P->st, x, P->L[xi].is_static, N, C->g, steps, C->signed_in, C->unit, C->in_cnt,
                                  C->cum, C->out_cnt, C->val, C->rec_s, C->fan, P->counters + i,
                                  C->fan && q->synops_step && q->burst_ops_step ? P->counters + 3 * nl + i : NULL),
                   "spiking max pool kernel");
            if (C->rec_s && q->rec_spikes && q->rec_spikes[i] &&
                (st = download_steps(P, C->rec_s, 0, C->size, steps, q->rec_spikes[i] + t0 * N * C->size)) != NC_OK)
                return st;
            break;
        case NC_SNN_NONLINEAR:
            for (int k = 0; k < L->n_inputs; k++) {
                const cu_layer *X = &P->L[L->inputs[k]];
                KERNEL(nc_cu_nl_sums(P->st, P->L[X->view].val, X->is_static, N, X->size, steps, C->nsum[k], C->ncum[k]),
                       "nonlinear sums");
            }
            KERNEL(nc_cu_nonlinear(P->st, &C->nl, C->ncum[0], C->ncum[1], N, t0, steps, C->nlast, C->val),
                   "nonlinear kernel");
            break;
        case NC_SNN_IF: case NC_SNN_SIGNED_IF:
            KERNEL(nc_cu_if(P->st, x, P->L[xi].is_static, N, (int)C->size, steps, C->v, C->net, C->theta, C->sval,
                        L->reset == NC_RESET_ZERO, nc_snn_layer_burst(L), C->val, C->rec_s, C->rec_v,
                        P->counters + i),
               "IF kernel");
            if (C->fan && q->synops_step && q->burst_ops_step)
                KERNEL(nc_cu_burst_ops(P->st, C->val, steps * N, (int)C->size, C->sval, C->fan, P->counters + 3 * nl + i),
                       "burst count kernel");
            if (C->rec_s && q->rec_spikes && q->rec_spikes[i] &&
                ((st = download_steps(P, C->rec_s, 0, C->size, steps, q->rec_spikes[i] + t0 * N * C->size)) != NC_OK ||
                 (st = download_steps(P, C->rec_v, 0, C->size, steps, q->rec_membrane[i] + t0 * N * C->size)) != NC_OK))
                return st;
            continue;
        default: break; /* Flatten, Readout: views of their input */
        }
        if (st != NC_OK)
            return st;
    }
    /* value traces of the other layers (a static one repeats its value) */
    for (int i = 0; q->rec_membrane && i < nl; i++) {
        const cu_layer *C = &P->L[i];
        if (q->rec_membrane[i] && !nc_snn_kind(s->layers[i].kind)->neuron &&
            (st = download_steps(P, P->L[C->view].val, C->is_static, C->size, steps,
                                 q->rec_membrane[i] + t0 * N * C->size)) != NC_OK)
            return st;
    }
    /* the output layer: every step, or summed over the steps on the device */
    int o = nc_snn_output_id(s);
    const cu_layer *O = &P->L[o];
    const float *ov = P->L[O->view].val;
    if (q->per_step)
        return download_steps(P, ov, O->is_static, O->size, steps, q->output + t0 * N * O->size);
    KERNEL(nc_cu_sum_steps(P->st, P->out_acc, ov, O->is_static, N, (int)O->size, steps), "readout sum");
    return NC_OK;
}

/* Layer i's synaptic ops in the counters last copied to the host. */
static int64_t host_synops(const cu_plan *P, int i, int steps)
{
    const nc_snn_layer *L = &P->s->layers[i];
    int nl = P->s->n_layers;
    if (L->kind == NC_SNN_AFFINE) /* every event meets every output */
        return (int64_t)P->h_counters[2 * nl + i] * L->shape[0];
    if (L->kind == NC_SNN_NONLINEAR) /* the reference's: a multiply for each term of a product, each step */
        return L->nl.fn == NC_NL_MUL      ? (int64_t)steps * P->N * P->L[i].size
               : L->nl.fn == NC_NL_MATMUL ? (int64_t)steps * P->N * P->L[i].size * P->L[i].nl.k
                                          : 0;
    return (int64_t)P->h_counters[nl + i];
}

/* Per-step synaptic ops: a chunk is one step, and the counters, summed
 * since the run's start, are read after each (a copy and a wait a step: a
 * cost only runs that ask for these counts pay). Row t holds the sums up to
 * t until the last step, then each row less the one before. */
static nc_status cu_step_counts(cu_plan *P, const nc_run_request *q, int t)
{
    int nl = P->s->n_layers;
    CU(cudaMemcpyAsync(P->h_counters, P->counters, (size_t)(4 * nl) * sizeof(nc_cu_count), cudaMemcpyDeviceToHost,
                       P->st), "copying the counters");
    CU(cudaStreamSynchronize(P->st), "running the network");
    for (int i = 0; i < nl; i++) {
        q->synops_step[(int64_t)t * nl + i] = host_synops(P, i, t + 1);
        if (q->burst_ops_step)
            q->burst_ops_step[(int64_t)t * nl + i] = (int64_t)P->h_counters[3 * nl + i];
    }
    if (t == q->T - 1)
        for (int64_t r = t; r > 0; r--)
            for (int i = 0; i < nl; i++) {
                q->synops_step[r * nl + i] -= q->synops_step[(r - 1) * nl + i];
                if (q->burst_ops_step)
                    q->burst_ops_step[r * nl + i] -= q->burst_ops_step[(r - 1) * nl + i];
            }
    return NC_OK;
}

static nc_status cu_run(void *plan, const nc_run_request *q)
{
    cu_plan *P = plan;
    const nc_snn *s = P->s;
    int N = q->N, nl = s->n_layers;
    if (N != P->N)
        return nc_errorf(NC_ERR_INTERNAL, "cuda plan made for batch %d run with %d", P->N, N);
    nc_status st = mark_static(s, P->L, q);
    if (st != NC_OK)
        return st;
    int o = nc_snn_output_id(s);
    int64_t out_size = P->L[o].size;
    CU(cudaMemsetAsync(P->counters, 0, (size_t)(4 * nl) * sizeof(nc_cu_count), P->st), "clearing counters");
    CU(cudaMemsetAsync(P->out_acc, 0, (size_t)(N * out_size) * sizeof(float), P->st), "clearing the output");
    for (int i = 0; i < nl; i++) {
        cu_layer *C = &P->L[i];
        if (C->v)
            KERNEL(nc_cu_fill_rows(P->st, C->v, C->v0, N, (int)C->size), "membrane reset");
        if (C->net) /* from nc_snn_net0: 0, or 2^30 for a two-sided SignedIF */
            KERNEL(nc_cu_fill_i32(P->st, C->net, nc_snn_net0(&s->layers[i]), (int64_t)N * C->size), "net count reset");
        for (int k = 0; k < 2; k++)
            if (C->nsum[k])
                CU(cudaMemsetAsync(C->nsum[k], 0, (size_t)(N * P->L[s->layers[i].inputs[k]].size) * sizeof(float),
                                   P->st), "sum reset");
        if (C->nlast)
            CU(cudaMemsetAsync(C->nlast, 0, (size_t)(N * C->size) * sizeof(float), P->st), "total reset");
        if (C->in_cnt) {
            int64_t in = P->L[s->layers[i].inputs[0]].size;
            CU(cudaMemsetAsync(C->in_cnt, 0, (size_t)(N * in) * 4, P->st), "spike count reset");
            CU(cudaMemsetAsync(C->out_cnt, 0, (size_t)(N * C->size) * 4, P->st), "spike count reset");
        }
    }
    int first_run = !P->decided;
    int tc = q->synops_step ? 1 : P->tc;
    for (int t0 = 0; st == NC_OK && t0 < q->T; t0 += tc) {
        st = run_chunk(P, q, t0, q->T - t0 < tc ? q->T - t0 : tc, first_run && t0 == 0);
        if (st == NC_OK && q->synops_step)
            st = cu_step_counts(P, q, t0);
    }
    if (st != NC_OK) {
        cudaStreamSynchronize(P->st);
        return st;
    }
    P->decided = 1;
    if (!q->per_step)
        CU(cudaMemcpyAsync(q->output, P->out_acc, (size_t)(N * out_size) * sizeof(float), cudaMemcpyDeviceToHost,
                           P->st), "copying the output");
    CU(cudaMemcpyAsync(P->h_counters, P->counters, (size_t)(4 * nl) * sizeof(nc_cu_count), cudaMemcpyDeviceToHost,
                       P->st), "copying the counters");
    CU(cudaStreamSynchronize(P->st), "running the network");
    for (int i = 0; i < nl; i++) {
        q->spike_counts[i] = (int64_t)P->h_counters[i];
        if (q->synops)
            q->synops[i] = host_synops(P, i, q->T);
    }
    return NC_OK;
}

const nc_backend nc_backend_cuda = {
    .name = "cuda",
    .kinds = NC_CUDA_KINDS,
    .supports_layer = cu_supports,
    .plan_create = cu_plan_create,
    .run = cu_run,
    .plan_free = cu_plan_free,
    .check = cu_check,
    .plan_create_opt = cu_plan_create_opt,
};

#else
typedef int nc_backend_cuda_not_built; /* built only into the CUDA module (snn/session/registry.c) */
#endif
