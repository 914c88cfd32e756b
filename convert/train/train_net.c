/* The network over one batch: checks what the engine can train, allocates
 * the activations of one batch, and runs the layer kernels forward and
 * backward in graph order (train_internal.h describes the layout). */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "train_internal.h"

static int has_weights(const nc_snn_layer *L)
{
    return nc_snn_kind_is_synaptic(L->kind);
}

void nc_tr_net_free(nc_tr_net *net)
{
    if (!net)
        return;
    for (int i = 0; net->l && i < net->n; i++) {
        nc_tr_layer *Y = &net->l[i];
        void *bufs[] = {Y->y,  Y->dy,  Y->m,   Y->dv, Y->arg, Y->dW,         Y->db,
                        Y->dth, Y->acc, Y->lam, Y->sv, Y->aux, Y->spike_cost, Y->cnt, Y->unit};
        for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
            nc_free(bufs[b]);
    }
    nc_free(net->l);
    nc_free(net->work);
    nc_free(net);
}

/* What the engine refuses, before anything is allocated. */
static nc_status check_graph(const nc_snn *s, int n, nc_train_mode mode, int relaxed)
{
    const char *mname = mode == NC_TRAIN_QCFS ? "QCFS" : "BPTT";
    if (s->layers[0].kind != NC_SNN_INPUT)
        return nc_errorf(NC_ERR_MODEL, "training: layer 0 ('%s') is not the input", s->layers[0].name);
    for (int i = 1; i < n; i++) {
        const nc_snn_layer *L = &s->layers[i];
        for (int k = 0; k < L->n_inputs; k++)
            if (L->inputs[k] >= i)
                return nc_errorf(NC_ERR_UNSUPPORTED,
                                 "%s training: layer '%s' has a recurrent input ('%s'); only feed-forward networks can be trained",
                                 mname, L->name, s->layers[L->inputs[k]].name);
        switch (L->kind) {
        case NC_SNN_INPUT:
            return nc_errorf(NC_ERR_UNSUPPORTED, "%s training: layer '%s' is a second input", mname, L->name);
        case NC_SNN_LIF: case NC_SNN_CUBALIF:
        case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR: case NC_SNN_THRESHOLD: case NC_SNN_SCALE:
        case NC_SNN_DELAY: case NC_SNN_RESHAPE:
            return nc_errorf(NC_ERR_UNSUPPORTED,
                             "%s training: layer '%s' is %s; the engine trains IF neurons only", mname, L->name,
                             nc_snn_kind_name(L->kind));
        case NC_SNN_NONLINEAR: {
            nc_status st = nc_tr_nonlinear_check(L, mname);
            if (st != NC_OK)
                return st;
            break;
        }
        case NC_SNN_SPIKEMAXPOOL2D: /* QCFS: the max of its inputs' rates; BPTT: its counts (train_spikemax.c) */
        case NC_SNN_CONV2D: case NC_SNN_POOL2D: case NC_SNN_MAXPOOL2D:
            if (L->ndim != 3 || s->layers[L->inputs[0]].ndim != 3)
                return nc_errorf(NC_ERR_SHAPE, "%s training: layer '%s' needs (C, H, W) input and output", mname,
                                 L->name);
            if (L->kind == NC_SNN_POOL2D && L->div_taps)
                return nc_errorf(NC_ERR_UNSUPPORTED, "%s training: pool '%s' has per-window divisors (partial "
                                 "windows), which the engine does not train", mname, L->name);
            break;
        case NC_SNN_SIGNED_IF: /* QCFS: rates, quantised as its count is; BPTT: both spikes' surrogates */
        case NC_SNN_IF:
            if (!L->threshold)
                return nc_errorf(NC_ERR_MODEL, "%s training: IF layer '%s' has no threshold", mname, L->name);
            if (L->two_sided && mode == NC_TRAIN_QCFS)
                return nc_errorf(NC_ERR_UNSUPPORTED, "QCFS training: SignedIF '%s' is two-sided (net counts below "
                                 "zero), whose rates QCFS's clip at zero does not model (BPTT trains it)", L->name);
            if (L->max_spikes > 1 && mode == NC_TRAIN_QCFS && !relaxed) /* the rate limit takes them */
                return nc_errorf(NC_ERR_UNSUPPORTED, "%s training: IF layer '%s' sends bursts of up to %d spikes a "
                                 "step, which QCFS training does not model (BPTT trains them)", mname,
                                 L->name, L->max_spikes);
            if (nc_snn_layer_nir_semantics(L)) {
                char what[160];
                return nc_errorf(NC_ERR_UNSUPPORTED, "%s training: IF layer '%s' has NIR neuron semantics (%s); the "
                                 "engine trains DESIGN §3's IF (load the file with --nir-reset subtract --nir-spike ge)",
                                 mname, L->name, nc_snn_nir_semantics_what(L, what, sizeof what));
            }
            break;
        default:
            break;
        }
        if (has_weights(L) && (!L->weight || !L->bias))
            return nc_errorf(NC_ERR_MODEL, "%s training: layer '%s' has no weight or bias", mname, L->name);
    }
    return NC_OK;
}

/* steps·Nmax·size floats, checked. */
static void *buf(int64_t rows, int64_t size, size_t elem, int *fail)
{
    int64_t n;
    if (!nc_mul_i64(rows, size, &n) || (uint64_t)n > SIZE_MAX / elem) {
        *fail = 1;
        return NULL;
    }
    void *p = nc_calloc(n > 0 ? (size_t)n : 1, elem);
    if (!p)
        *fail = 1;
    return p;
}

static void layer_steps(nc_tr_net *net, int i)
{
    const nc_snn_layer *L = &net->s->layers[i];
    nc_tr_layer *Y = &net->l[i];
    Y->steps = 1;
    if (net->c.mode != NC_TRAIN_BPTT)
        return;
    if (nc_snn_kind_is_if(L->kind) || L->kind == NC_SNN_SPIKEMAXPOOL2D) { /* state over time */
        Y->steps = net->c.T;
        return;
    }
    for (int k = 0; k < L->n_inputs; k++)
        if (net->l[L->inputs[k]].steps > Y->steps)
            Y->steps = net->l[L->inputs[k]].steps;
}

/* The energy term's gradient per spike of each IF neuron: λ × its fan-out
 * (the synaptic additions one spike causes, as the backends count them) ×
 * E_add/E_mac over the fan-out of all IF neurons (the ANN's multiply-adds
 * over the synapses spikes drive; the analog input layer's, paid by both,
 * left out). 0 on layers with no weighted reader of their events. */
#define ENERGY_ADD_OVER_MAC (0.9 / 4.6) /* the estimate's defaults (docs/energy.md) */
static int spike_costs(nc_tr_net *net)
{
    const nc_snn *s = net->s;
    char *macs = nc_calloc((size_t)s->n_layers, 1);
    int fail = !macs;
    double total = 0.0;
    if (macs)
        nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, macs);
    for (int i = 0; !fail && i < net->n; i++) {
        nc_tr_layer *Y = &net->l[i];
        if (!nc_snn_kind_is_if(s->layers[i].kind))
            continue;
        int32_t *fan = nc_snn_event_fanout(s, macs, i, &fail);
        if (fan && (Y->spike_cost = nc_malloc((size_t)Y->size * sizeof(float))) != NULL) {
            for (int64_t j = 0; j < Y->size; j++) {
                Y->spike_cost[j] = (float)fan[j];
                total += fan[j];
            }
        } else {
            fail = 1;
        }
        nc_free(fan);
    }
    for (int i = 0; !fail && i < net->n; i++)
        for (int64_t j = 0; net->l[i].spike_cost && j < net->l[i].size; j++)
            net->l[i].spike_cost[j] *= total > 0 ? (float)(net->c.energy_weight * ENERGY_ADD_OVER_MAC / total) : 0.0f;
    nc_free(macs);
    return !fail;
}

/* Whether layer l's spikes may be negative (nc_snn_mark_signed). */
static int signed_input(const nc_snn *s, int l, int *fail)
{
    char *sg = nc_calloc((size_t)s->n_layers, 1);
    if (!sg) {
        *fail = 1;
        return 0;
    }
    nc_snn_mark_signed(s, sg);
    int r = sg[l];
    nc_free(sg);
    return r;
}

static nc_tr_spikemax spikemax_params(const nc_tr_net *net, const nc_tr_layer *Y)
{
    return (nc_tr_spikemax){.g = Y->g, .unit = Y->unit, .signed_in = Y->signed_in, .T = net->c.T, .cnt = Y->cnt};
}

nc_status nc_tr_net_create(nc_snn *s, const nc_tr_config *c, int Nmax, nc_tr_net **out)
{
    *out = NULL;
    if (!s || s->n_layers < 2 || Nmax < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "training: needs a network with layers and a batch of at least 1");
    if (c->mode != NC_TRAIN_QCFS && c->mode != NC_TRAIN_BPTT)
        return nc_errorf(NC_ERR_INVALID_ARG, "training: unknown mode %d", (int)c->mode);
    if (c->mode == NC_TRAIN_QCFS && c->levels < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "QCFS training: levels must be at least 1 (got %d)", c->levels);
    if (c->mode == NC_TRAIN_BPTT && (c->T < 1 || c->T > 100000 || !(c->sg_width > 0.0f)))
        return nc_errorf(NC_ERR_INVALID_ARG, "BPTT training: needs T >= 1 and a positive surrogate width");
    int out_id = nc_snn_output_id(s);
    nc_status st = check_graph(s, out_id + 1, c->mode, c->relaxed);
    if (st != NC_OK)
        return st;

    nc_tr_net *net = nc_calloc(1, sizeof *net);
    if (!net)
        return nc_errorf(NC_ERR_NOMEM, "out of memory creating the training state");
    net->s = s;
    net->c = *c;
    net->Nmax = Nmax;
    net->n = out_id + 1;
    net->out_id = out_id;
    net->classes = nc_snn_layer_size(&s->layers[out_id]);
    net->l = nc_calloc((size_t)net->n, sizeof *net->l);
    int fail = !net->l;
    for (int i = 0; !fail && i < net->n; i++) {
        const nc_snn_layer *L = &s->layers[i];
        nc_tr_layer *Y = &net->l[i];
        layer_steps(net, i);
        Y->size = nc_snn_layer_size(L);
        int64_t rows = (int64_t)Y->steps * Nmax;
        /* BLAS takes int dimensions; buf() checks the products */
        if (Y->size > INT_MAX || rows > INT_MAX) {
            nc_tr_net_free(net);
            return nc_errorf(NC_ERR_LIMIT, "training: layer '%s' is too large for a batch of %d", L->name, Nmax);
        }
        int trainable = has_weights(L) || (nc_snn_kind_is_if(L->kind) && c->train_thresholds);
        Y->need_grad = i == 0 ? c->input_grad : trainable;
        for (int k = 0; k < L->n_inputs; k++)
            Y->need_grad |= net->l[L->inputs[k]].need_grad;
        Y->y = buf(rows, Y->size, sizeof(float), &fail);
        if (Y->need_grad)
            Y->dy = buf(rows, Y->size, sizeof(float), &fail);
        if (has_weights(L)) {
            Y->dW = buf(1, L->weight->numel, sizeof(float), &fail);
            Y->db = buf(1, L->bias->numel, sizeof(float), &fail);
        }
        if (L->kind == NC_SNN_CONV2D || L->kind == NC_SNN_POOL2D || L->kind == NC_SNN_MAXPOOL2D ||
            L->kind == NC_SNN_SPIKEMAXPOOL2D)
            nc_tr_geom_of(L, &s->layers[L->inputs[0]], &Y->g);
        if (L->kind == NC_SNN_CONV2D) {
            int64_t w = nc_tr_conv_work(&Y->g, rows);
            if (w > net->work_n)
                net->work_n = w;
        }
        if (L->kind == NC_SNN_MAXPOOL2D || L->kind == NC_SNN_SPIKEMAXPOOL2D)
            Y->arg = buf(rows, Y->size, sizeof(int32_t), &fail);
        if (L->kind == NC_SNN_SPIKEMAXPOOL2D && c->mode == NC_TRAIN_BPTT && !fail) { /* per-sample counts */
            Y->cnt = buf(Nmax, nc_snn_layer_size(&s->layers[L->inputs[0]]) + Y->size, sizeof(uint32_t), &fail);
            Y->unit = nc_snn_spike_units(s, L->inputs[0], &fail);
            Y->signed_in = signed_input(s, L->inputs[0], &fail);
        }
        if (L->kind == NC_SNN_NONLINEAR) { /* the means at every step (train_nonlinear.c) */
            Y->m = buf(rows, Y->size, sizeof(float), &fail);
            if (L->nl.fn == NC_NL_MUL)
                Y->aux = buf(rows, Y->size, sizeof(float), &fail);
        }
        if (nc_snn_kind_is_if(L->kind)) {
            Y->lam = buf(1, Y->size, sizeof(float), &fail);
            Y->sv = buf(1, Y->size, sizeof(float), &fail);
            Y->aux = buf(1, Y->size, sizeof(float), &fail);
            if (c->train_thresholds) {
                Y->acc = buf(1, Y->size, sizeof(double), &fail);
                Y->dth = buf(1, L->threshold->numel, sizeof(float), &fail);
            }
            if (c->mode == NC_TRAIN_BPTT) {
                Y->m = buf(rows, Y->size, sizeof(float), &fail);
                Y->dv = buf(Nmax, Y->size, sizeof(float), &fail);
                double mean = 0.0;
                for (int64_t e = 0; e < L->threshold->numel; e++)
                    mean += nc_f32(L->threshold)[e];
                Y->gamma = (float)(c->sg_width * mean / (double)L->threshold->numel);
                if (!(Y->gamma > 0.0f))
                    Y->gamma = c->sg_width;
            }
        }
    }
    if (!fail && net->work_n > 0)
        net->work = buf(1, net->work_n, sizeof(float), &fail);
    if (!fail && c->energy_weight > 0.0f)
        fail = !spike_costs(net);
    if (fail) {
        nc_tr_net_free(net);
        return nc_errorf(NC_ERR_NOMEM, "out of memory allocating the training state for a batch of %d", Nmax);
    }
    *out = net;
    return NC_OK;
}

/* Per-neuron λ/θ, spike value and shift or v(0), from the layer's current tensors. */
static void refresh_if(const nc_tr_net *net, const nc_snn_layer *L, nc_tr_layer *Y)
{
    for (int64_t j = 0; j < Y->size; j++) {
        float th = nc_snn_param(L->threshold, L, j, 1.0f);
        Y->lam[j] = th;
        Y->sv[j] = L->spike_value ? nc_snn_param(L->spike_value, L, j, th) : th;
        float v0 = L->v_init ? nc_snn_param(L->v_init, L, j, 0.5f * th) : 0.5f * th;
        /* QCFS: an SNN started at v(0) counts floor((T·z + v0)/θ) spikes, so
         * the quantiser's offset is v0/θ (1/2 by default). */
        Y->aux[j] = net->c.mode == NC_TRAIN_QCFS ? v0 / th : v0;
    }
}

static void if_params(const nc_tr_net *net, const nc_snn_layer *L, const nc_tr_layer *Y, nc_tr_qcfs *q,
                      nc_tr_if *p)
{
    if (q) {
        const int *ll = net->c.layer_levels;
        int levels = ll && ll[Y - net->l] > 0 ? ll[Y - net->l] : net->c.levels;
        *q = (nc_tr_qcfs){.size = Y->size, .lam = Y->lam, .sv = Y->sv, .shift = Y->aux,
                          .sv_is_lam = !L->spike_value, .levels = levels, .relaxed = net->c.relaxed,
                          .top = (float)nc_snn_layer_burst(L)};
    }
    if (p) {
        *p = (nc_tr_if){.size = Y->size, .T = net->c.T, .theta = Y->lam, .v0 = Y->aux, .sv = Y->sv,
                        .sv_is_theta = !L->spike_value, .v0_is_half = !L->v_init,
                        .reset_zero = L->reset == NC_RESET_ZERO, .detach_reset = net->c.detach_reset,
                        .sg = net->c.sg, .width = Y->gamma, .relaxed = net->c.relaxed,
                        .signed_spikes = L->kind == NC_SNN_SIGNED_IF, .two_sided = L->two_sided,
                        .count = Y->dv, .y = Y->y,
                        .burst = nc_snn_layer_burst(L), .spike_cost = Y->spike_cost,
                        .cost_scale = net->N > 0 ? 1.0f / (float)net->N : 0.0f};
    }
}

/* Row r of a layer of `steps` steps reads row r of an input of the same
 * steps, or row r mod N of a constant one. */
static const float *in_row(const nc_tr_layer *X, int64_t r, int N)
{
    return X->y + (X->steps == 1 ? r % N : r) * X->size;
}

void nc_tr_forward(nc_tr_net *net, const float *x, int N)
{
    nc_snn *s = net->s;
    net->N = N;
    for (int i = 0; i < net->n; i++) {
        const nc_snn_layer *L = &s->layers[i];
        nc_tr_layer *Y = &net->l[i];
        const nc_tr_layer *X = L->n_inputs > 0 ? &net->l[L->inputs[0]] : NULL;
        int64_t rows = (int64_t)Y->steps * N;
        switch (L->kind) {
        case NC_SNN_INPUT:
            memcpy(Y->y, x, (size_t)(rows * Y->size) * sizeof(float));
            break;
        case NC_SNN_AFFINE:
            nc_tr_affine_fwd(nc_f32(L->weight), nc_f32(L->bias), X->y, Y->y, rows, X->size, Y->size);
            break;
        case NC_SNN_CONV2D:
            nc_tr_conv_fwd(&Y->g, nc_f32(L->weight), nc_f32(L->bias), X->y, Y->y, rows, net->work, net->work_n);
            break;
        case NC_SNN_POOL2D:
            nc_tr_pool_fwd(&Y->g, L->scale, X->y, Y->y, rows);
            break;
        case NC_SNN_MAXPOOL2D: case NC_SNN_SPIKEMAXPOOL2D:
            if (Y->cnt) { /* BPTT: spikes over time */
                nc_tr_spikemax p = spikemax_params(net, Y);
                nc_tr_spikemax_fwd(&p, X->y, X->steps == 1, Y->y, Y->arg, N);
            } else { /* QCFS: a max of rates; MaxPool2d: of currents */
                nc_tr_maxpool_fwd(&Y->g, X->y, Y->y, Y->arg, rows);
            }
            break;
        case NC_SNN_FLATTEN: case NC_SNN_READOUT:
            memcpy(Y->y, X->y, (size_t)(rows * Y->size) * sizeof(float));
            break;
        case NC_SNN_ADD:
            memset(Y->y, 0, (size_t)(rows * Y->size) * sizeof(float));
            for (int k = 0; k < L->n_inputs; k++)
                NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * Y->size))")
                for (int64_t r = 0; r < rows; r++) {
                    const float *a = in_row(&net->l[L->inputs[k]], r, N);
                    float *o = Y->y + r * Y->size;
                    for (int64_t e = 0; e < Y->size; e++)
                        o[e] += a[e];
                }
            break;
        case NC_SNN_GATHER: { /* routing: element e is input index[e], or 0 */
            const int64_t *ix = nc_i64(L->index);
            for (int64_t r = 0; r < rows; r++) {
                const float *a = in_row(X, r, N);
                float *o = Y->y + r * Y->size;
                for (int64_t e = 0; e < Y->size; e++)
                    o[e] = ix[e] < 0 ? 0.0f : a[ix[e]];
            }
            break;
        }
        case NC_SNN_CONCAT:
            for (int64_t r = 0; r < rows; r++) {
                int64_t off = 0;
                for (int k = 0; k < L->n_inputs; k++) {
                    const nc_tr_layer *A = &net->l[L->inputs[k]];
                    memcpy(Y->y + r * Y->size + off, in_row(A, r, N), (size_t)A->size * sizeof(float));
                    off += A->size;
                }
            }
            break;
        case NC_SNN_IF: case NC_SNN_SIGNED_IF:
            refresh_if(net, L, Y);
            if (net->c.mode == NC_TRAIN_QCFS) {
                nc_tr_qcfs q;
                if_params(net, L, Y, &q, NULL);
                nc_tr_qcfs_fwd(&q, X->y, Y->y, rows);
            } else {
                nc_tr_if p;
                if_params(net, L, Y, NULL, &p);
                nc_tr_if_fwd(&p, X->y, X->steps == 1, Y->m, Y->y, N);
            }
            break;
        case NC_SNN_LIF: case NC_SNN_CUBALIF:
        case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR: case NC_SNN_THRESHOLD: case NC_SNN_SCALE:
        case NC_SNN_NONLINEAR: nc_tr_nonlinear_fwd(net, i); break;
        case NC_SNN_DELAY: case NC_SNN_RESHAPE: case NC_SNN_KIND_COUNT:
            break; /* refused by nc_tr_net_create */
        }
    }
}

void nc_tr_logits(const nc_tr_net *net, float *out)
{
    const nc_tr_layer *O = &net->l[net->out_id];
    int64_t NC = (int64_t)net->N * net->classes;
    memcpy(out, O->y, (size_t)NC * sizeof *out);
    for (int t = 1; t < O->steps; t++)
        for (int64_t k = 0; k < NC; k++)
            out[k] += O->y[t * NC + k];
    if (O->steps > 1)
        for (int64_t k = 0; k < NC; k++)
            out[k] /= (float)O->steps;
}

/* dX (rows of X) += dY (rows of Y), summing over time when X is constant. */
static void add_back(const nc_tr_layer *X, float *dx, const float *dy, int64_t rows_y, int N, int64_t off,
                     int64_t stride_y)
{
    /* a thread per sample: the rows of a constant input's sample sum in t order */
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows_y * X->size))")
    for (int64_t n = 0; n < N; n++)
        for (int64_t r = n; r < rows_y; r += N) {
            float *d = dx + (X->steps == 1 ? n : r) * X->size;
            const float *g = dy + r * stride_y + off;
            for (int64_t e = 0; e < X->size; e++)
                d[e] += g[e];
        }
}

static void reduce_threshold(const nc_snn_layer *L, nc_tr_layer *Y)
{
    int64_t n = L->threshold->numel, per = n == 1 ? Y->size : (n == Y->size ? 1 : Y->size / n);
    for (int64_t p = 0; p < n; p++) {
        double acc = 0.0;
        for (int64_t j = p * per; j < (p + 1) * per; j++)
            acc += Y->acc[j];
        Y->dth[p] = (float)acc;
    }
}

void nc_tr_backward(nc_tr_net *net, const float *dlogits)
{
    nc_snn *s = net->s;
    int N = net->N;
    for (int i = 0; i < net->n; i++) {
        nc_tr_layer *Y = &net->l[i];
        const nc_snn_layer *L = &s->layers[i];
        if (Y->dy)
            memset(Y->dy, 0, (size_t)((int64_t)Y->steps * N * Y->size) * sizeof(float));
        if (Y->dW) {
            memset(Y->dW, 0, (size_t)L->weight->numel * sizeof(float));
            memset(Y->db, 0, (size_t)L->bias->numel * sizeof(float));
        }
        if (Y->acc)
            memset(Y->acc, 0, (size_t)Y->size * sizeof(double));
        if (Y->dth)
            memset(Y->dth, 0, (size_t)L->threshold->numel * sizeof(float));
    }
    nc_tr_layer *O = &net->l[net->out_id];
    if (!O->dy)
        return; /* nothing trainable */
    int64_t NC = (int64_t)N * net->classes;
    for (int t = 0; t < O->steps; t++)
        for (int64_t k = 0; k < NC; k++)
            O->dy[t * NC + k] = dlogits[k] / (float)O->steps;

    for (int i = net->n - 1; i >= 1; i--) {
        const nc_snn_layer *L = &s->layers[i];
        nc_tr_layer *Y = &net->l[i];
        if (!Y->need_grad)
            continue;
        nc_tr_layer *X = &net->l[L->inputs[0]];
        float *dx = X->dy; /* NULL when nothing before needs a gradient */
        int64_t rows = (int64_t)Y->steps * N;
        switch (L->kind) {
        case NC_SNN_AFFINE:
            nc_tr_affine_bwd(nc_f32(L->weight), X->y, Y->dy, dx, Y->dW, Y->db, rows, X->size, Y->size);
            break;
        case NC_SNN_CONV2D:
            nc_tr_conv_bwd(&Y->g, nc_f32(L->weight), X->y, Y->dy, dx, Y->dW, Y->db, rows, net->work,
                           net->work_n);
            break;
        case NC_SNN_POOL2D:
            if (dx)
                nc_tr_pool_bwd(&Y->g, L->scale, Y->dy, dx, rows);
            break;
        case NC_SNN_MAXPOOL2D: case NC_SNN_SPIKEMAXPOOL2D:
            if (dx && Y->cnt) {
                nc_tr_spikemax p = spikemax_params(net, Y);
                nc_tr_spikemax_bwd(&p, Y->arg, Y->dy, dx, X->steps == 1, N);
            } else if (dx) {
                nc_tr_maxpool_bwd(&Y->g, Y->arg, Y->dy, dx, rows);
            }
            break;
        case NC_SNN_FLATTEN: case NC_SNN_READOUT: case NC_SNN_ADD:
            for (int k = 0; k < L->n_inputs; k++) {
                nc_tr_layer *A = &net->l[L->inputs[k]];
                if (A->dy)
                    add_back(A, A->dy, Y->dy, rows, N, 0, Y->size);
            }
            break;
        case NC_SNN_GATHER: /* the gradient routed back: summed where an input feeds several outputs */
            for (int64_t n = 0; dx && n < N; n++)
                for (int64_t r = n; r < rows; r += N) {
                    float *d = dx + (X->steps == 1 ? n : r) * X->size;
                    const float *g = Y->dy + r * Y->size;
                    for (int64_t e = 0; e < Y->size; e++)
                        if (nc_i64(L->index)[e] >= 0)
                            d[nc_i64(L->index)[e]] += g[e];
                }
            break;
        case NC_SNN_CONCAT: {
            int64_t off = 0;
            for (int k = 0; k < L->n_inputs; k++) {
                nc_tr_layer *A = &net->l[L->inputs[k]];
                if (A->dy)
                    add_back(A, A->dy, Y->dy, rows, N, off, Y->size);
                off += A->size;
            }
            break;
        }
        case NC_SNN_IF: case NC_SNN_SIGNED_IF:
            if (net->c.mode == NC_TRAIN_QCFS) {
                nc_tr_qcfs q;
                if_params(net, L, Y, &q, NULL);
                nc_tr_qcfs_bwd(&q, X->y, Y->y, Y->dy, dx, Y->acc, rows);
            } else {
                nc_tr_if p;
                if_params(net, L, Y, NULL, &p);
                nc_tr_if_bwd(&p, Y->m, Y->dy, dx, X->steps == 1, Y->acc, Y->dv, N);
            }
            if (Y->dth)
                reduce_threshold(L, Y);
            break;
        case NC_SNN_NONLINEAR: nc_tr_nonlinear_bwd(net, i); break;
        case NC_SNN_INPUT: case NC_SNN_LIF: case NC_SNN_CUBALIF:
        case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR: case NC_SNN_THRESHOLD: case NC_SNN_SCALE:
        case NC_SNN_DELAY: case NC_SNN_RESHAPE: case NC_SNN_KIND_COUNT:
            break;
        }
    }
}
