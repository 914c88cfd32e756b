/* Evaluation of a spiking network on labelled data: accuracy after every
 * step t ≤ T (one run per batch, the readout summed up to t), spikes and
 * synaptic operations per layer, the ANN's accuracy and MACs on the same
 * data, and an energy estimate with its source. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/base/finite.h"
#include "snn/base/alloc.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "eval.h"
#include "snn/base/json.h"
#include "snn/ir/snn_ir.h"
#include "snn/base/tensor.h"

#define DEFAULT_T 64
#define DEFAULT_BATCH 64
/* Horowitz, "Computing's energy problem (and what we can do about it)",
 * ISSCC 2014, 45 nm CMOS: a 32-bit float add 0.9 pJ, a 32-bit float
 * multiply 3.7 pJ (multiply-add 4.6 pJ). A synaptic op on a spike of
 * payload ±1 is an add of the weight (the spike selects it, its value
 * folded into the weights); one on a graded value (a burst of k spikes in a
 * step, the analog input, a current: nc_snn_mark_macs) is a multiply-add,
 * as on Loihi 2, whose graded spikes are multiplied at the synapse; an ANN
 * MAC is a multiply-add. */
#define DEFAULT_E_SYNOP 0.9e-12
#define DEFAULT_E_MAC 4.6e-12
#define ENERGY_SOURCE                                                                        \
    "M. Horowitz, \"Computing's energy problem (and what we can do about it)\", ISSCC 2014: " \
    "45 nm CMOS, 32-bit float add 0.9 pJ (a synaptic op on a spike), multiply-add 4.6 pJ (a MAC: "   \
    "a synaptic op on a graded value, an ANN MAC)"
#define ENERGY_CAVEAT                                                                           \
    "arithmetic energy only, from per-operation CMOS figures: no memory access, data movement, " \
    "neuron updates or static power; not a measurement on a chip"

void nc_eval_result_free(nc_eval_result *r)
{
    if (!r)
        return;
    for (int i = 0; r->layers && i < r->n_layers; i++)
        nc_free(r->layers[i].name);
    nc_free(r->layers);
    nc_free(r->correct);
    nc_free(r->adds_through);
    nc_free(r->macs_through);
    nc_free(r->json);
    nc_free(r);
}

int nc_eval_result_timesteps(const nc_eval_result *r) { return r ? r->T : 0; }
int64_t nc_eval_result_samples(const nc_eval_result *r) { return r ? r->n : 0; }

double nc_eval_result_accuracy_at(const nc_eval_result *r, int t)
{
    if (!r || t < 1 || t > r->T || r->n <= 0)
        return -1.0;
    return (double)r->correct[t - 1] / (double)r->n;
}

double nc_eval_result_ann_accuracy(const nc_eval_result *r)
{
    if (!r || r->ann_correct < 0 || r->n <= 0)
        return -1.0;
    return (double)r->ann_correct / (double)r->n;
}

const char *nc_eval_result_json(const nc_eval_result *r) { return r && r->json ? r->json : "{}"; }

/* counts[t - 1] per sample (cumulative counts: steps 1..t). */
static double per_sample_through(const nc_eval_result *r, const int64_t *counts, int t)
{
    return r->n > 0 && t >= 1 && t <= r->T ? (double)counts[t - 1] / (double)r->n : 0.0;
}

double nc_eval_adds_through(const nc_eval_result *r, int t) { return per_sample_through(r, r->adds_through, t); }
double nc_eval_macs_through(const nc_eval_result *r, int t) { return per_sample_through(r, r->macs_through, t); }

double nc_eval_joules_through(const nc_eval_result *r, int t)
{
    return nc_eval_adds_through(r, t) * r->e_synop + nc_eval_macs_through(r, t) * r->e_mac;
}

double nc_eval_spike_rate(const nc_eval_result *r, int i)
{
    const nc_eval_lrec *L = &r->layers[i];
    double denom = (double)L->neurons * (double)r->T * (double)r->n;
    return denom > 0 ? (double)L->spikes / denom : 0.0;
}

int nc_eval_result_num_layers(const nc_eval_result *r) { return r ? r->n_layers : 0; }

nc_status nc_eval_result_layer(const nc_eval_result *r, int i, nc_eval_layer_stats *out)
{
    if (!r || !out || i < 0 || i >= r->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_eval_result_layer: no layer %d", i);
    const nc_eval_lrec *L = &r->layers[i];
    out->name = L->name;
    out->kind = L->kind;
    out->neurons = L->neurons;
    out->spikes = L->spikes;
    out->spike_rate = nc_eval_spike_rate(r, i);
    out->synops = r->n > 0 ? (double)L->synops / (double)r->n : 0.0;
    out->macs = L->macs;
    out->burst_synops = r->n > 0 ? (double)L->burst_ops / (double)r->n : 0.0;
    return NC_OK;
}

nc_status nc_eval_result_cost_at(const nc_eval_result *r, int t, nc_eval_cost *out)
{
    if (!r || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_eval_result_cost_at: NULL argument");
    if (t < 1 || t > r->T)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_eval_result_cost_at: no step %d (the evaluation ran 1..%d)", t,
                         r->T);
    out->synaptic_adds = nc_eval_adds_through(r, t);
    out->synaptic_macs = nc_eval_macs_through(r, t);
    out->ann_macs = r->ann_macs >= 0 ? (double)r->ann_macs : -1.0;
    out->energy_per_synop = r->e_synop;
    out->energy_per_mac = r->e_mac;
    out->snn_joules = nc_eval_joules_through(r, t);
    out->ann_joules = r->ann_macs >= 0 ? (double)r->ann_macs * r->e_mac : -1.0;
    out->energy_source = ENERGY_SOURCE;
    return NC_OK;
}

nc_status nc_eval_result_cost(const nc_eval_result *r, nc_eval_cost *out)
{
    if (!r || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_eval_result_cost: NULL argument");
    return nc_eval_result_cost_at(r, r->T, out);
}

/* ---------------------------------------------------------------- layers */

/* The layers, and which do multiply-accumulates rather than additions
 * (nc_snn_mark_macs: those that read graded values). */
static nc_status init_layers(const nc_snn *s, nc_encoding enc, nc_eval_result *r)
{
    r->n_layers = s->n_layers;
    r->layers = nc_calloc((size_t)s->n_layers, sizeof *r->layers);
    char *macs = nc_calloc((size_t)s->n_layers, 1);
    if (!r->layers || !macs) {
        nc_free(macs);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    nc_snn_mark_macs(s, 0, enc, macs);
    for (int i = 0; i < s->n_layers; i++)
        r->layers[i].macs = macs[i];
    nc_free(macs);
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        nc_eval_lrec *E = &r->layers[i];
        E->name = nc_strdup(L->name);
        if (!E->name)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        E->kind = L->kind;
        E->spiking = nc_snn_kind_is_spiking(L->kind);
        E->neurons = nc_snn_layer_size(L);
    }
    return NC_OK;
}

/* ---------------------------------------------------------------- scoring */

int64_t nc_eval_argmax(const float *v, int64_t n)
{
    int64_t best = 0;
    for (int64_t j = 1; j < n; j++)
        if (v[j] > v[best])
            best = j;
    return best;
}

/* y is (T, n, classes), the readout's current at each step. The prediction
 * after t steps is the argmax of the sum up to t, summed in step order in
 * float, as a session without per_step sums it. */
static void score_steps(const float *y, int T, int64_t n, int64_t classes, const int64_t *labels,
                        float *acc, int64_t *correct)
{
    for (int64_t i = 0; i < n; i++) {
        memset(acc, 0, (size_t)classes * sizeof *acc);
        for (int t = 0; t < T; t++) {
            const float *yt = y + ((int64_t)t * n + i) * classes;
            for (int64_t c = 0; c < classes; c++)
                acc[c] += yt[c];
            correct[t] += nc_eval_argmax(acc, classes) == labels[i];
        }
    }
}

static nc_status check_labels(const nc_tensor *labels, int64_t n, int64_t classes)
{
    if (labels->dtype != NC_DTYPE_I64 || labels->numel != n)
        return nc_errorf(NC_ERR_SHAPE, "labels must be %lld int64 values (one per sample); got %s with "
                         "%lld values", (long long)n, nc_dtype_name(labels->dtype),
                         (long long)labels->numel);
    const int64_t *l = nc_i64(labels);
    for (int64_t i = 0; i < n; i++)
        if (l[i] < 0 || l[i] >= classes)
            return nc_errorf(NC_ERR_INVALID_ARG, "label %lld of sample %lld is outside the %lld classes "
                             "of the network's output", (long long)l[i], (long long)i,
                             (long long)classes);
    return NC_OK;
}

/* Sums the counts of every rank's share, after the ranks agree on their
 * statuses: every rank returns the same (a failure anywhere fails
 * everywhere, before a sum whose length a half-built r could get wrong). */
static nc_status reduce_counts(const nc_eval_options *o, nc_eval_result *r, nc_status st, int ann)
{
    if (nc_dist_size(o->dist) <= 1)
        return st;
    int64_t n = st != NC_OK ? 0 : ann ? 1 : 3 * (int64_t)r->T + 3 * (int64_t)r->n_layers;
    int64_t *v = st == NC_OK ? nc_calloc((size_t)n, sizeof *v) : NULL;
    if (st == NC_OK && !v)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    if ((st = nc_dist_agree_status(o->dist, st, ann ? "the ANN's evaluation" : "evaluation")) != NC_OK) {
        nc_free(v);
        return st;
    }
    if (ann) {
        v[0] = r->ann_correct;
    } else {
        memcpy(v, r->correct, (size_t)r->T * sizeof *v);
        memcpy(v + r->T, r->adds_through, (size_t)r->T * sizeof *v);
        memcpy(v + 2 * r->T, r->macs_through, (size_t)r->T * sizeof *v);
        for (int i = 0; i < r->n_layers; i++) {
            v[3 * r->T + 3 * i] = r->layers[i].spikes;
            v[3 * r->T + 3 * i + 1] = r->layers[i].synops;
            v[3 * r->T + 3 * i + 2] = r->layers[i].burst_ops;
        }
    }
    if ((st = nc_dist_sum_i64(o->dist, v, n)) == NC_OK) {
        if (ann) {
            r->ann_correct = v[0];
        } else {
            memcpy(r->correct, v, (size_t)r->T * sizeof *v);
            memcpy(r->adds_through, v + r->T, (size_t)r->T * sizeof *v);
            memcpy(r->macs_through, v + 2 * r->T, (size_t)r->T * sizeof *v);
            for (int i = 0; i < r->n_layers; i++) {
                r->layers[i].spikes = v[3 * r->T + 3 * i];
                r->layers[i].synops = v[3 * r->T + 3 * i + 1];
                r->layers[i].burst_ops = v[3 * r->T + 3 * i + 2];
            }
        }
    }
    nc_free(v);
    return st;
}

/* ---------------------------------------------------------------- SNN */

static nc_status run_snn(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels,
                         const nc_eval_options *o, nc_eval_result *r)
{
    const nc_snn_layer *In = &s->layers[0];
    int64_t classes = nc_snn_layer_size(&s->layers[nc_snn_output_id(s)]);
    nc_session_options so = {.backend = o->backend, .timesteps = r->T, .encoding = o->encoding,
                             .seed = o->seed, .per_step = 1, .count_steps = 1};
    nc_session *ss = NULL;
    nc_status st = nc_session_create(s, &so, &ss);
    if (st != NC_OK)
        return st;
    float *acc = nc_malloc((size_t)classes * sizeof *acc);
    if (!acc) {
        nc_session_free(ss);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    /* a process group: this rank's run of whole batches (batches.h) */
    nc_batches_options bo = {.batch = r->batch, .dist = o->dist, .progress = o->progress, .what = "evaluation",
                             .progress_user = o->progress_user};
    nc_batches *it = NULL;
    nc_batch b;
    st = nc_batches_create(x, labels, &bo, &it);
    while (st == NC_OK && nc_batches_next(it, &b)) {
        nc_tensor *bx = NULL, *y = NULL;
        if ((st = nc_batches_tensor(it, &b, In->ndim, In->shape, &bx)) != NC_OK)
            break;
        nc_session_set_seed(ss, nc_batch_seed(o->seed, b.first));
        st = nc_session_run(ss, bx, &y);
        nc_tensor_free(bx);
        if (st != NC_OK)
            break;
        score_steps(nc_f32(y), r->T, b.count, classes, b.labels, acc, r->correct);
        nc_tensor_free(y);
        for (int i = 0; i < r->n_layers; i++) {
            int64_t c = 0, ops = 0;
            nc_session_spike_count(ss, i, &c);
            nc_session_synops(ss, i, &ops);
            r->layers[i].spikes += c;
            r->layers[i].synops += ops;
            for (int t = 0; ops && t < r->T; t++) {
                int64_t at = 0;
                nc_session_synops_step(ss, i, t, &at);
                *(r->layers[i].macs ? &r->macs_through[t] : &r->adds_through[t]) += at;
            }
            /* a burst's operations (a SignedIF's or a spiking max pool's), counted by its readers as
               additions, are multiply-adds */
            for (int t = 0; t < r->T; t++) {
                int64_t at = 0;
                nc_session_burst_ops_step(ss, i, t, &at);
                r->layers[i].burst_ops += at;
                r->adds_through[t] -= at;
                r->macs_through[t] += at;
            }
        }
    }
    nc_batches_free(it);
    nc_free(acc);
    nc_session_free(ss);
    return st;
}

/* ---------------------------------------------------------------- JSON */

static const char *encoding_name(nc_encoding e) { return e == NC_ENCODING_POISSON ? "poisson" : "direct"; }

static nc_status build_json(nc_eval_result *r)
{
    nc_json j;
    nc_json_init(&j);
    double n = (double)r->n;
    nc_json_begin_object(&j, NULL);
    nc_json_int(&j, "samples", r->n);
    nc_json_int(&j, "timesteps", r->T);
    nc_json_begin_object(&j, "options");
    nc_json_string(&j, "backend", r->backend);
    nc_json_int(&j, "batch", r->batch);
    nc_json_string(&j, "encoding", encoding_name(r->encoding));
    nc_json_int(&j, "seed", (int64_t)r->seed);
    nc_json_end_object(&j);

    nc_json_begin_object(&j, "accuracy");
    nc_json_string(&j, "prediction", "argmax of the readout summed over steps 1..t (ties: lowest class)");
    nc_json_begin_array(&j, "t");
    for (int t = 1; t <= r->T; t++)
        nc_json_int(&j, NULL, t);
    nc_json_end_array(&j);
    nc_json_begin_array(&j, "snn");
    for (int t = 1; t <= r->T; t++)
        nc_json_number(&j, NULL, nc_eval_result_accuracy_at(r, t));
    nc_json_end_array(&j);
    nc_json_begin_array(&j, "snn_correct");
    for (int t = 0; t < r->T; t++)
        nc_json_int(&j, NULL, r->correct[t]);
    nc_json_end_array(&j);
    if (r->ann_correct >= 0) {
        nc_json_number(&j, "ann", nc_eval_result_ann_accuracy(r));
        nc_json_int(&j, "ann_correct", r->ann_correct);
    } else {
        nc_json_null(&j, "ann");
    }
    nc_json_end_object(&j);

    nc_json_begin_array(&j, "layers");
    for (int i = 0; i < r->n_layers; i++) {
        const nc_eval_lrec *L = &r->layers[i];
        nc_json_begin_object(&j, NULL);
        nc_json_string(&j, "name", L->name);
        nc_json_string(&j, "kind", nc_snn_kind_name(L->kind));
        nc_json_int(&j, "neurons", L->neurons);
        if (L->spiking) {
            nc_json_int(&j, "spikes", L->spikes);
            nc_json_number(&j, "spike_rate", nc_eval_spike_rate(r, i));
            nc_json_number(&j, "spikes_per_inference", (double)L->spikes / n);
        }
        /* its bursts' share of its readers' synops (a SignedIF's, a spiking max pool's): multiply-adds */
        if (L->kind == NC_SNN_SIGNED_IF || L->kind == NC_SNN_SPIKEMAXPOOL2D)
            nc_json_number(&j, "burst_synops_per_inference", (double)L->burst_ops / n);
        if (L->synops || nc_snn_kind(L->kind)->counts_synops) {
            nc_json_string(&j, "ops", L->macs ? "multiply-adds" : "additions");
            nc_json_int(&j, "synops", L->synops);
            nc_json_number(&j, "synops_per_inference", (double)L->synops / n);
        }
        nc_json_end_object(&j);
    }
    nc_json_end_array(&j);

    int64_t spikes = 0, neurons = 0;
    for (int i = 0; i < r->n_layers; i++)
        if (r->layers[i].spiking) {
            spikes += r->layers[i].spikes;
            neurons += r->layers[i].neurons;
        }
    double adds = nc_eval_adds_through(r, r->T), macs = nc_eval_macs_through(r, r->T), syn = adds + macs;
    nc_json_begin_object(&j, "totals");
    nc_json_int(&j, "spiking_neurons", neurons);
    nc_json_number(&j, "spikes_per_inference", (double)spikes / n);
    nc_json_number(&j, "spike_rate", neurons ? (double)spikes / ((double)neurons * r->T * n) : 0.0);
    nc_json_number(&j, "synops_per_inference", syn);
    nc_json_number(&j, "synaptic_adds_per_inference", adds);
    nc_json_number(&j, "synaptic_macs_per_inference", macs);
    if (r->ann_macs >= 0) {
        nc_json_int(&j, "ann_macs_per_inference", r->ann_macs);
        nc_json_number(&j, "synops_over_ann_macs", r->ann_macs ? syn / (double)r->ann_macs : NAN);
    } else {
        nc_json_null(&j, "ann_macs_per_inference");
    }
    nc_json_end_object(&j);

    nc_json_begin_object(&j, "energy");
    nc_json_string(&j, "evidence", "estimate");
    nc_json_string(&j, "source", ENERGY_SOURCE);
    nc_json_string(&j, "caveat", ENERGY_CAVEAT);
    nc_json_string(&j, "model", "SNN = synaptic additions x energy_per_synop + synaptic multiply-adds x "
                                "energy_per_mac; a synaptic op is an addition when its event is a spike of "
                                "payload +-1 times a value folded into the weights (IF, LIF, a SignedIF's single "
                                "spike), a multiply-add when it reads a graded value (a burst of k spikes in a "
                                "step, the analog input, a current); pooling sums are additions; "
                                "ANN = MACs x energy_per_mac");
    nc_json_number(&j, "energy_per_synop_joules", r->e_synop);
    nc_json_number(&j, "energy_per_mac_joules", r->e_mac);
    double e_snn = nc_eval_joules_through(r, r->T);
    nc_json_number(&j, "snn_joules_per_inference", e_snn);
    if (r->ann_macs >= 0) {
        double e_ann = (double)r->ann_macs * r->e_mac;
        nc_json_number(&j, "ann_joules_per_inference", e_ann);
        nc_json_number(&j, "ann_j", e_ann);
        nc_json_number(&j, "snn_over_ann", e_ann > 0 ? e_snn / e_ann : NAN);
    } else {
        nc_json_null(&j, "ann_joules_per_inference");
        nc_json_null(&j, "ann_j");
    }
    nc_json_end_object(&j);

    /* the cost of stopping after t steps, beside accuracy.t */
    nc_json_begin_object(&j, "per_t");
    nc_json_string(&j, "note", "per inference, summed over steps 1..t, one entry per accuracy.t");
    nc_json_begin_array(&j, "synaptic_adds");
    for (int t = 1; t <= r->T; t++)
        nc_json_number(&j, NULL, nc_eval_adds_through(r, t));
    nc_json_end_array(&j);
    nc_json_begin_array(&j, "synaptic_macs");
    for (int t = 1; t <= r->T; t++)
        nc_json_number(&j, NULL, nc_eval_macs_through(r, t));
    nc_json_end_array(&j);
    nc_json_begin_array(&j, "energy_j");
    for (int t = 1; t <= r->T; t++)
        nc_json_number(&j, NULL, nc_eval_joules_through(r, t));
    nc_json_end_array(&j);
    nc_json_end_object(&j);
    nc_json_end_object(&j);
    r->json = nc_json_take(&j);
    return r->json ? NC_OK : nc_errorf(NC_ERR_NOMEM, "out of memory writing the evaluation report");
}

/* ---------------------------------------------------------------- entry */

/* Options with their defaults, and the data checked against the network. */
static nc_status check_args(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, nc_eval_options *o,
                            int64_t *per)
{
    if (!s || !x || !labels)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_evaluate: NULL network, data or labels");
    nc_status fst = nc_check_finite(x, "data", NC_FINITE_SAMPLES);
    if (fst != NC_OK)
        return fst;
    if (!o->backend)
        o->backend = "cpu";
    if (o->timesteps == 0)
        o->timesteps = DEFAULT_T;
    if (o->batch == 0)
        o->batch = DEFAULT_BATCH;
    if (o->energy_per_synop == 0)
        o->energy_per_synop = DEFAULT_E_SYNOP;
    if (o->energy_per_mac == 0)
        o->energy_per_mac = DEFAULT_E_MAC;
    if (o->timesteps < 0 || o->timesteps > (1 << 20) || o->batch < 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_evaluate: %d steps, batch %d: both must be positive "
                         "(steps at most 2^20)", o->timesteps, o->batch);
    if (!(o->energy_per_synop > 0) || !(o->energy_per_mac > 0) || isinf(o->energy_per_synop) ||
        isinf(o->energy_per_mac))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_evaluate: energies per operation must be positive");

    const nc_snn_layer *In = &s->layers[0];
    *per = nc_snn_layer_size(In);
    if (x->dtype != NC_DTYPE_F32 || x->ndim < 1 || x->shape[0] < 1 || *per < 1 ||
        x->numel / x->shape[0] != *per) {
        char xs[160], is[160];
        return nc_errorf(NC_ERR_SHAPE, "data must be float32 (N, %s) with N > 0; got %s %s",
                         nc_shape_str(In->ndim, In->shape, is, sizeof is) + 1, nc_dtype_name(x->dtype),
                         nc_shape_str(x->ndim, x->shape, xs, sizeof xs));
    }
    return check_labels(labels, x->shape[0], nc_snn_layer_size(&s->layers[nc_snn_output_id(s)]));
}

/* With a process group: every rank must evaluate the same network on the
 * same data with the same options, or the sums mean nothing. */
static nc_status check_ranks(const nc_snn *s, const void *ann, const nc_tensor *x, const nc_tensor *labels,
                             const nc_eval_options *o)
{
    if (nc_dist_size(o->dist) <= 1)
        return NC_OK;
    int64_t opts[5] = {o->timesteps, o->batch, (int64_t)o->encoding, (int64_t)o->seed, ann != NULL};
    uint64_t h[3] = {nc_hash_snn(s), nc_hash_tensor(nc_hash_tensor(NC_HASH_INIT, x), labels),
                     nc_hash_bytes(NC_HASH_INIT, opts, sizeof opts)};
    static const char *const what[3] = {"the spiking network", "the evaluation data or labels",
                                        "the evaluation options (T, batch, encoding, seed, ANN given)"};
    return nc_dist_check_same(o->dist, h, what, 3);
}

nc_status nc_eval_run(const nc_snn *s, const void *ann, nc_eval_ann_fn run_ann, const nc_tensor *x,
                      const nc_tensor *labels, const nc_eval_options *opt, nc_eval_result **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_evaluate: out is NULL");
    *out = NULL;
    nc_eval_options o = {0};
    if (opt)
        o = *opt;
    int64_t per = 0;
    nc_status st = check_args(s, x, labels, &o, &per);
    /* every rank reaches this point, so a bad argument on one ends all */
    if ((st = nc_dist_agree_status(o.dist, st, "checking the evaluation's arguments")) != NC_OK ||
        (st = check_ranks(s, ann, x, labels, &o)) != NC_OK)
        return st;
    int64_t n = x->shape[0];

    nc_eval_result *r = nc_calloc(1, sizeof *r);
    if (!r) /* the others meet this in reduce_counts */
        return reduce_counts(&o, NULL, nc_errorf(NC_ERR_NOMEM, "out of memory"), 0);
    r->T = o.timesteps;
    r->n = n;
    r->batch = o.batch;
    r->ann_correct = -1;
    r->ann_macs = -1;
    r->encoding = o.encoding;
    r->seed = o.seed;
    r->e_synop = o.energy_per_synop;
    r->e_mac = o.energy_per_mac;
    snprintf(r->backend, sizeof r->backend, "%s", o.backend);
    r->correct = nc_calloc((size_t)r->T, sizeof *r->correct);
    r->adds_through = nc_calloc((size_t)r->T, sizeof *r->adds_through);
    r->macs_through = nc_calloc((size_t)r->T, sizeof *r->macs_through);
    if (!r->correct || !r->adds_through || !r->macs_through)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (st == NC_OK)
        st = init_layers(s, o.encoding, r);
    if (st == NC_OK)
        st = run_snn(s, x, labels, &o, r);
    st = reduce_counts(&o, r, st, 0);
    for (int t = 1; st == NC_OK && t < r->T; t++) { /* each step's counts become those of steps 1..t */
        r->adds_through[t] += r->adds_through[t - 1];
        r->macs_through[t] += r->macs_through[t - 1];
    }
    if (st == NC_OK && ann) {
        if ((st = run_ann(ann, x, labels, &o, per, r)) != NC_OK)
            nc_error_prefix("evaluating the ANN");
        st = reduce_counts(&o, r, st, 1);
    }
    if (st == NC_OK)
        st = build_json(r);
    if (st != NC_OK) {
        nc_eval_result_free(r);
        return st;
    }
    *out = r;
    return NC_OK;
}
